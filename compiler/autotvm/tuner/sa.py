"""Simulated annealing over the points of a space, guided by a score (the cost model's
prediction): chains walk from point to neighbour (one knob changed), a worse neighbour is
taken with probability exp(delta / temperature), the temperature falls linearly to zero, and
the best unvisited points seen are kept."""
from __future__ import annotations

import heapq
import math
import random
from typing import Callable, List, Sequence, Set

import numpy as np


def _neighbour(point: List[int], dims: Sequence[int], rng: random.Random) -> List[int]:
    movable = [k for k, d in enumerate(dims) if d > 1]
    if not movable:
        return list(point)
    k = rng.choice(movable)
    new = list(point)
    new[k] = (point[k] + rng.randrange(1, dims[k])) % dims[k]
    return new


def _index(point: Sequence[int], dims: Sequence[int]) -> int:
    i = 0
    for p, d in zip(point, dims):
        i = i * d + p
    return i


def _point(index: int, dims: Sequence[int]) -> List[int]:
    out = []
    for d in reversed(dims):
        out.append(index % d)
        index //= d
    return out[::-1]


def simulated_annealing(dims: Sequence[int], score: Callable[[List[int]], np.ndarray],
                        n_keep: int, exclude: Set[int], rng: random.Random,
                        n_chains: int = 16, n_iter: int = 40, temperature: float = 1.0,
                        patience: int = 10) -> List[int]:
    """Up to `n_keep` point indices not in `exclude`, best score first. `score(indices)`
    scores a batch; `dims` are the knob sizes (mixed radix, first knob slowest). Stops
    early after `patience` rounds in which the kept set did not change."""
    size = math.prod(dims)
    chains = [_point(rng.randrange(size), dims) for _ in range(n_chains)]
    current = score([_index(p, dims) for p in chains])
    kept: List[tuple] = []          # min-heap of (score, index)
    seen: Set[int] = set()

    def offer(indices, scores):
        changed = False
        for i, s in zip(indices, scores):
            if i in exclude or i in seen:
                continue
            seen.add(i)
            if len(kept) < n_keep:
                heapq.heappush(kept, (float(s), i))
                changed = True
            elif s > kept[0][0]:
                heapq.heapreplace(kept, (float(s), i))
                changed = True
        return changed

    offer([_index(p, dims) for p in chains], current)
    still = 0
    for it in range(n_iter):
        t = temperature * (1.0 - it / n_iter)
        proposals = [_neighbour(p, dims, rng) for p in chains]
        indices = [_index(p, dims) for p in proposals]
        scores = score(indices)
        for k, (s_new, s_old) in enumerate(zip(scores, current)):
            if s_new >= s_old or (t > 0 and rng.random() < math.exp((s_new - s_old) / t)):
                chains[k], current[k] = proposals[k], s_new
        still = 0 if offer(indices, scores) else still + 1
        if still >= patience:
            break
    return [i for _, i in sorted(kept, reverse=True)]


__all__ = ["simulated_annealing"]
