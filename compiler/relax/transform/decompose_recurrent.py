"""decompose_recurrent: for a GPU target, the recurrent layers' time loops become graph-level
operators, one step after another (their kernels, topi.nn.gru_sequence / lstm_sequence, are
loops for a CPU thread).

before: any graph-level module; the target is known.
after:  for a target that is not the host (cuda, opencl, vulkan, metal), no call of
        relax.nn.gru_sequence or relax.nn.lstm_sequence is left: each is its steps unrolled
        (per direction and step: a matmul of the previous state by the direction's weight
        slice, the gates as elementwise operators, the state reshaped into the outputs, which
        concat gathers), the same values in the same (float32) arithmetic up to the order of
        the sums. Its arguments need static shapes (the ONNX frontend's have). For a CPU
        target (or none) the module is unchanged.
"""
from __future__ import annotations

from typing import List, Optional

import numpy as np

from ...ir.errors import UnsupportedOpError
from ...ir.module import IRModule
from ...target import Target
from .. import expr as X
from .. import op as R
from ..functor import ExprMutator
from ..struct_info import TensorStructInfo
from .graph_functions import map_graph_functions

_OPS = ("relax.nn.gru_sequence", "relax.nn.lstm_sequence")


class _Unroll(ExprMutator):
    def visit_var_binding_(self, b: X.VarBinding) -> None:
        value = self.visit_expr(b.value)
        self.append_rebound(b, self._rewrite(value) or value)

    def _rewrite(self, e: X.Expr) -> Optional[X.Expr]:
        if not (isinstance(e, X.Call) and isinstance(e.op, X.Op) and e.op.name in _OPS):
            return None
        for a in e.args:
            s = a.struct_info
            if not (isinstance(s, TensorStructInfo) and s.is_static):
                raise UnsupportedOpError(f"{e.op.name} for a GPU target needs static shapes; "
                                         f"an argument has struct info {s}")
        return _Steps(self, e).run()


class _Steps:
    """The unrolled steps of one call (see the module docstring)."""

    def __init__(self, mutator: _Unroll, call: X.Call):
        self.m = mutator
        self.call = call
        self.lstm = call.op.name == "relax.nn.lstm_sequence"
        gates = call.args[0].struct_info
        self.seq, self.batch, self.nd, gh = (int(d) for d in gates.shape)
        self.g = 4 if self.lstm else 3
        self.h = gh // self.g
        self.dtype = gates.dtype
        clip = call.attrs.clip
        self.clip = None if clip is None else float(clip)

    def emit(self, e: X.Expr) -> X.Expr:
        """`e` bound to a variable, the calls nested in it bound first (A-normal form)."""
        if isinstance(e, X.Call):
            args = tuple(self.emit(a) if isinstance(a, X.Call) else a for a in e.args)
            if any(n is not o for n, o in zip(args, e.args)):
                e = X.Call(e.op, args, e.attrs, e.sinfo_args)
        return self.m.emit(e, "step")

    def scalar(self, v) -> X.Constant:
        return X.const(np.asarray(v, dtype=self.dtype), self.dtype)

    def of_direction(self, arg: X.Expr, d: int, shape) -> X.Expr:
        """Argument `arg` (first dim: direction) of direction d, reshaped to `shape`."""
        return self.emit(R.reshape(R.strided_slice(arg, [0], [d], [d + 1]), shape))

    def cols(self, x: X.Expr, lo: int, hi: int) -> X.Expr:
        return R.strided_slice(x, [x.struct_info.ndim - 1], [lo], [hi])

    def act(self, fn, x: X.Expr) -> X.Expr:
        if self.clip is not None:
            x = R.clip(x, -self.clip, self.clip)
        return fn(x)

    def run(self) -> X.Expr:
        a, h, b = self.call.args, self.h, self.batch
        ys: List[List[X.Expr]] = []
        finals: List[List[X.Expr]] = []
        reverse = [False, True] if self.nd == 2 else \
            [self.call.attrs.direction == "reverse"]
        for d in range(self.nd):
            w = self.of_direction(a[1], d, (h, self.g * h))
            if self.lstm:
                state = [self.of_direction(a[2], d, (b, h)), self.of_direction(a[3], d, (b, h))]
                extra = self.of_direction(a[4], d, (3 * h,)) if len(a) > 4 else None
            else:
                state = [self.of_direction(a[3], d, (b, h))]
                extra = self.of_direction(a[2], d, (self.g * h,))
            y: List[Optional[X.Expr]] = [None] * self.seq
            for t in (range(self.seq - 1, -1, -1) if reverse[d] else range(self.seq)):
                x = self.emit(R.reshape(R.strided_slice(a[0], [0, 2], [t, d], [t + 1, d + 1]),
                                        (b, self.g * h)))
                state = self.lstm_step(x, w, extra, state) if self.lstm else \
                    self.gru_step(x, w, extra, state)
                y[t] = state[0]
            ys.append(y)
            finals.append(state)
        pieces = [self.emit(R.reshape(ys[d][t], (1, b, h)))
                  for t in range(self.seq) for d in range(self.nd)]
        y_all = self.emit(R.concat(pieces, axis=0)) if len(pieces) > 1 else pieces[0]
        outs = [self.emit(R.reshape(y_all, (self.seq, self.nd, b, h)))]
        for k in range(len(finals[0])):
            parts = [self.emit(R.reshape(f[k], (1, b, h))) for f in finals]
            outs.append(self.emit(R.concat(parts, axis=0)) if len(parts) > 1 else parts[0])
        return X.Tuple(tuple(outs))

    def gru_step(self, x, w, bias, state):
        h = self.h
        (hp,) = state
        one = self.scalar(1)
        if self.call.attrs.linear_before_reset:
            rec = self.emit(R.add(R.matmul(hp, w), bias))
        else:
            rec = self.emit(R.add(R.matmul(hp, self.cols(w, 0, 2 * h)), self.cols(bias, 0, 2 * h)))
        z = self.emit(self.act(R.sigmoid, R.add(self.cols(x, 0, h), self.cols(rec, 0, h))))
        r = self.act(R.sigmoid, R.add(self.cols(x, h, 2 * h), self.cols(rec, h, 2 * h)))
        if self.call.attrs.linear_before_reset:
            cand = R.add(self.cols(x, 2 * h, 3 * h), R.multiply(r, self.cols(rec, 2 * h, 3 * h)))
        else:
            rh = self.emit(R.multiply(r, hp))
            cand = R.add(self.cols(x, 2 * h, 3 * h),
                         R.add(R.matmul(rh, self.cols(w, 2 * h, 3 * h)),
                               self.cols(bias, 2 * h, 3 * h)))
        cand = self.act(R.tanh, cand)
        return [self.emit(R.add(R.multiply(R.subtract(one, z), cand), R.multiply(z, hp)))]

    def lstm_step(self, x, w, peephole, state):
        h = self.h
        hp, cp = state
        pre = self.emit(R.add(x, R.matmul(hp, w)))
        gi, go, gf, gc = (self.cols(pre, k * h, (k + 1) * h) for k in range(4))
        if peephole is not None:
            gi = R.add(gi, R.multiply(self.cols(peephole, 0, h), cp))
            gf = R.add(gf, R.multiply(self.cols(peephole, 2 * h, 3 * h), cp))
        c = self.emit(R.add(R.multiply(self.act(R.sigmoid, gf), cp),
                            R.multiply(self.act(R.sigmoid, gi), self.act(R.tanh, gc))))
        if peephole is not None:
            go = R.add(go, R.multiply(self.cols(peephole, h, 2 * h), c))
        return [self.emit(R.multiply(self.act(R.sigmoid, go), R.tanh(c))), c]


def decompose_recurrent(mod: IRModule, target=None) -> IRModule:
    """`mod` with its recurrent-layer calls unrolled for a GPU `target` (a Target or its
    string; None or a CPU: unchanged); see the module docstring."""
    target = Target(target) if isinstance(target, str) else target
    if target is None or target.kind.is_host:
        return mod
    return map_graph_functions(mod, lambda f: _Unroll().visit_expr(f))


__all__ = ["decompose_recurrent"]
