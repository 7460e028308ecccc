"""Grid search: configs in index order (the first knob varying slowest)."""
from __future__ import annotations

from typing import List

from ..task import Task
from .tuner import Tuner


class GridSearchTuner(Tuner):
    def __init__(self, task: Task):
        super().__init__(task)
        self._next = 0

    def next_batch(self, n: int) -> List[int]:
        out: List[int] = []
        while len(out) < n and self._next < len(self.space):
            if self._next not in self.visited:
                out.append(self._next)
            self._next += 1
        return out


__all__ = ["GridSearchTuner"]
