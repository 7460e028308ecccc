"""Features of a config for the cost model: its knob values, and the shape of the loop nest
its schedule makes (the loop IR right after schedule_ops, before the lowering passes, so
loop kinds are still marked: a few milliseconds per config).

The loop-nest part describes the hot store (the store run the most times): its enclosing
loops from the innermost out (log2 extent, parallel, vectorized, unrolled), then totals over
the whole nest. Every config of one template gets a vector of the same length, so records of
other tasks of the template can train the same model.
"""
from __future__ import annotations

import math
from typing import List

import numpy as np

from ...te.schedule_ops import schedule_to_primfunc
from ...tir.functor import IRVisitor
from ...tir.stmt import ForKind
from ..task import Task

# Loops of the hot store's nest described one by one (innermost first).
NEST_DEPTH = 6
_PER_LOOP = 4
NEST_FEATURES = NEST_DEPTH * _PER_LOOP + 8


def _log2(x: float) -> float:
    return math.log2(1.0 + max(0.0, float(x)))


def _extent(loop) -> float:
    v = getattr(loop.extent, "value", None)
    return float(v) if isinstance(v, (int, float)) else 1.0


class _Nest(IRVisitor):
    def __init__(self):
        self.chain = []
        self.stores = []            # enclosing loops of each store
        self.loops = 0
        self.allocs = 0

    def visit_For(self, loop):
        self.loops += 1
        self.chain.append(loop)
        self.generic_visit(loop)
        self.chain.pop()

    def visit_BufferStore(self, st):
        self.stores.append(list(self.chain))
        self.generic_visit(st)

    def visit_Allocate(self, a):
        self.allocs += 1
        self.generic_visit(a)


def loop_nest_features(func) -> List[float]:
    """The NEST_FEATURES numbers of a PrimFunc's loop nest."""
    nest = _Nest()
    nest.visit(func.body)
    if not nest.stores:
        return [0.0] * NEST_FEATURES

    def trips(chain):
        return math.prod(_extent(lp) for lp in chain)

    hot = max(nest.stores, key=lambda c: (trips(c), len(c)))
    out: List[float] = []
    for k in range(NEST_DEPTH):
        if k < len(hot):
            lp = hot[-1 - k]
            out += [_log2(_extent(lp)), float(lp.kind == ForKind.PARALLEL),
                    float(lp.kind == ForKind.VECTORIZED), float(lp.kind == ForKind.UNROLLED)]
        else:
            out += [0.0] * _PER_LOOP

    def product(kind):
        return math.prod(_extent(lp) for lp in hot if lp.kind == kind)

    inner = next((lp for lp in reversed(hot) if lp.kind != ForKind.UNROLLED), hot[-1])
    out += [_log2(product(ForKind.PARALLEL)), _log2(product(ForKind.VECTORIZED)),
            _log2(product(ForKind.UNROLLED)), float(len(hot)), float(nest.loops),
            float(len(nest.stores)), _log2(trips(hot)), _log2(_extent(inner))]
    return out


def _knob_value(v) -> List[float]:
    if isinstance(v, bool):
        return [float(v)]
    if isinstance(v, (int, float)):
        return [_log2(abs(v))]
    if isinstance(v, list):
        return [_log2(abs(x)) for x in v[1:]] if v and v[0] == -1 else [float(x) for x in v]
    return [float(hash(v) % 97) / 97.0]


def knob_features(cfg) -> List[float]:
    out: List[float] = []
    for value in cfg.values().values():
        out += _knob_value(value)
    return out


def config_features(task: Task, index: int) -> np.ndarray:
    """The feature vector of config `index` of `task`: knobs, then the loop nest (zeros
    when the template does not build at that config)."""
    cfg = task.config_space.get(index)
    try:
        s, tensors = task.instantiate(cfg)
        nest = loop_nest_features(schedule_to_primfunc(s, list(tensors), "features", None))
    except Exception:  # a config that does not build: its knobs alone describe it
        nest = [0.0] * NEST_FEATURES
    return np.asarray(knob_features(cfg) + nest, dtype="float32")


__all__ = ["NEST_FEATURES", "config_features", "knob_features", "loop_nest_features"]
