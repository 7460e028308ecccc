"""Random search: unvisited configs in a random order (a baseline)."""
from __future__ import annotations

import random
from typing import List, Optional

from ..task import Task
from .tuner import Tuner

# Spaces up to this size are shuffled whole; larger ones are sampled (rejecting visited).
SHUFFLE_LIMIT = 1 << 16


class RandomTuner(Tuner):
    def __init__(self, task: Task, seed: Optional[int] = None):
        super().__init__(task)
        self.rng = random.Random(seed)
        self._order = None
        if len(self.space) <= SHUFFLE_LIMIT:
            self._order = list(range(len(self.space)))
            self.rng.shuffle(self._order)

    def next_batch(self, n: int) -> List[int]:
        out: List[int] = []
        if self._order is not None:
            while self._order and len(out) < n:
                i = self._order.pop()
                if i not in self.visited:
                    out.append(i)
            return out
        tries = 0
        while len(out) < n and tries < 64 * n:
            i = self.rng.randrange(len(self.space))
            tries += 1
            if i not in self.visited and i not in out:
                out.append(i)
        return out


__all__ = ["RandomTuner"]
