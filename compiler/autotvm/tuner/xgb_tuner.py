"""Model-guided search (after AutoTVM's XGBTuner): a gradient-boosted regressor (xgboost, CPU)
learns throughput from features of the loop nest (features.py), and each round measures the
configs it ranks best: all of a small space are ranked; a large one is searched by simulated
annealing (sa.py) on the model's predictions. A few random configs start it, and a share of
each round stays random (exploration). Records of other tasks of the same template (from
earlier logs) train the model before the first trial: transfer.
"""
from __future__ import annotations

import random
from typing import Dict, List, Optional, Sequence

import numpy as np

from ...ir.errors import CompilerError
from ..measure import MeasureInput, MeasureResult
from ..task import Task
from .features import config_features
from .sa import simulated_annealing
from .tuner import Tuner


class CostModelError(CompilerError):
    """The model-based tuner cannot run: its model library is missing."""


def _xgboost():
    try:
        import xgboost
    except ImportError:
        raise CostModelError("the model-based tuner needs xgboost: pip install 'kiln[tune]' "
                             "(or use --tuner random / grid)") from None
    return xgboost


# Spaces up to this size are ranked whole (features of every point, cached).
RANK_ALL_LIMIT = 1024


class XGBTuner(Tuner):
    """`plan_size` configs per round; `n_random` random configs before the model leads;
    `epsilon` the random share of each round."""

    def __init__(self, task: Task, plan_size: int = 16, n_random: int = 8,
                 epsilon: float = 0.1, seed: Optional[int] = None, n_sa_chains: int = 16,
                 n_sa_iter: int = 40):
        super().__init__(task)
        self.xgb = _xgboost()
        self.rng = random.Random(seed)
        self.plan_size, self.n_random, self.epsilon = plan_size, n_random, epsilon
        self.n_sa_chains, self.n_sa_iter = n_sa_chains, n_sa_iter
        self._features: Dict[int, np.ndarray] = {}
        self._xs: List[np.ndarray] = []
        self._ys: List[float] = []
        self._base_x: List[np.ndarray] = []      # transferred rows (normalized per task)
        self._base_y: List[float] = []
        self._plan: List[int] = []
        self._model = None
        self._fitted_at = -1

    # ---- features and the model ----
    def features(self, index: int) -> np.ndarray:
        f = self._features.get(index)
        if f is None:
            f = self._features[index] = config_features(self.task, index)
        return f

    def predict(self, indices: Sequence[int]) -> np.ndarray:
        x = np.stack([self.features(i) for i in indices])
        return self._model.predict(self.xgb.DMatrix(x))

    def _fit(self) -> bool:
        own = len(self._ys)
        best = max(self._ys, default=0.0)
        xs = self._base_x + self._xs
        ys = self._base_y + [y / best if best > 0 else 0.0 for y in self._ys]
        if own + len(self._base_y) < 4 or max(ys, default=0.0) <= 0:
            return False
        params = {"max_depth": 5, "eta": 0.3, "objective": "reg:squarederror", "nthread": 1,
                  "verbosity": 0, "tree_method": "hist", "seed": self.rng.randrange(1 << 30)}
        data = self.xgb.DMatrix(np.stack(xs), label=np.asarray(ys, dtype="float32"))
        model = self.xgb.train(params, data, num_boost_round=60)
        self._model, self._fitted_at = model, own
        return True

    # ---- the search ----
    def _random_unvisited(self, n: int, exclude=()) -> List[int]:
        out: List[int] = []
        size = len(self.space)
        for _ in range(64 * max(n, 1)):
            if len(out) >= n:
                break
            i = self.rng.randrange(size)
            if i not in self.visited and i not in out and i not in exclude:
                out.append(i)
        return out

    def _replan(self) -> None:
        if not self._fit():
            self._plan = []
            return
        exclude = set(self.visited)
        if len(self.space) <= RANK_ALL_LIMIT:
            todo = [i for i in range(len(self.space)) if i not in exclude]
            ranked = [todo[k] for k in np.argsort(-self.predict(todo), kind="stable")] \
                if todo else []
            plan = ranked[:self.plan_size]
        else:
            plan = simulated_annealing(self.space.dims(), self.predict, self.plan_size,
                                       exclude, self.rng, self.n_sa_chains, self.n_sa_iter)
        n_explore = int(round(self.epsilon * len(plan)))
        if n_explore:
            plan = plan[:len(plan) - n_explore] + self._random_unvisited(n_explore, plan)
        self._plan = plan

    def next_batch(self, n: int) -> List[int]:
        out: List[int] = []
        if len(self._ys) < self.n_random and not self._base_y:
            return self._random_unvisited(n)
        while len(out) < n:
            while self._plan and self._plan[0] in self.visited:
                self._plan.pop(0)
            if not self._plan:
                if self._fitted_at == len(self._ys) and out:
                    break
                self._replan()
                self._plan = [i for i in self._plan if i not in self.visited and i not in out]
                if not self._plan:
                    out += self._random_unvisited(n - len(out), out)
                    break
            out.append(self._plan.pop(0))
        return out

    def update(self, inputs: Sequence[MeasureInput], results: Sequence[MeasureResult]) -> None:
        for inp, res in zip(inputs, results):
            if inp.config.is_fallback:
                continue
            self._xs.append(self.features(inp.config.index))
            self._ys.append(res.gflops(self.task.flop))

    def transfer(self, records) -> None:
        by_task: Dict[str, list] = {}
        for r in records:
            by_task.setdefault(r.task.key, []).append(r)
        for rows in by_task.values():
            best = max((r.gflops for r in rows), default=0.0)
            if best <= 0:
                continue
            for r in rows:
                self._base_x.append(config_features(r.task, r.config.index))
                self._base_y.append(r.gflops / best)


__all__ = ["CostModelError", "XGBTuner"]
