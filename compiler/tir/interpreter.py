"""A reference evaluator of the loop IR: runs a PrimFunc on numpy arrays.

    from compiler.tir import interpreter
    interpreter.run(func, a, b, c)        # numpy arrays for buffer params, ints for scalars

It is the oracle for pass tests: every statement and expression kind is supported, vectors
(Ramp/Broadcast) are numpy vectors, every access is bounds-checked (an out-of-range index
raises IndexError naming the buffer), and integer arithmetic wraps as in C. Buffer params are
bound like the packed API would: symbolic shapes, strides (in elements) and elem_offset Vars
take their values from the arrays; a strided buffer reads a non-contiguous numpy view in place.
Outputs are written in place. Expressions are compiled once to Python closures.
"""
from __future__ import annotations

import math
from typing import Any, Callable, Dict

import numpy as np

from ..ir.dtype import DType
from ..ir.errors import IRError
from .function import PrimFunc
from .interpreter_bind import bind_args
from .interpreter_ops import BINARY, CALLS, np_dtype

Fn = Callable[[Dict[int, Any]], Any]


class _Return(Exception):
    pass


class InterpreterAssert(RuntimeError):
    """An AssertStmt failed while interpreting."""


def _cast(dtype: DType, v):
    nd = np_dtype(dtype)
    if isinstance(v, np.ndarray):
        return v.astype(nd)
    return np.asarray(v).astype(nd)[()]


class _Compiler:
    def __init__(self, mem: Dict[int, np.ndarray]):
        self.mem = mem

    # ---- expressions -------------------------------------------------------------------------
    def expr(self, e) -> Fn:
        m = getattr(self, "e_" + type(e).__name__, None)
        if m is None:
            for cls in type(e).__mro__[1:]:
                m = getattr(self, "e_" + cls.__name__, None)
                if m is not None:
                    break
        if m is None:
            raise IRError(f"interpreter: unsupported expression {type(e).__name__}")
        return m(e)

    def e_Var(self, e):
        key = id(e)

        def f(env):
            try:
                return env[key]
            except KeyError:
                raise IRError(f"interpreter: variable '{e.name}' is not defined") from None
        return f

    def e_IntImm(self, e):
        v = _cast(e.dtype, e.value)
        return lambda env: v

    e_FloatImm = e_IntImm

    def e_StringImm(self, e):
        return lambda env: e.value

    def e_Cast(self, e):
        f, dt = self.expr(e.value), e.dtype
        return lambda env: _cast(dt, f(env))

    def e_BinaryOp(self, e):
        fa, fb, op, dt = self.expr(e.a), self.expr(e.b), BINARY[type(e).__name__], e.a.dtype
        return lambda env: op(fa(env), fb(env), dt)

    def e_EqualOp(self, e):
        return self.expr(e.asobject())

    e_NotEqualOp = e_EqualOp

    def e_Not(self, e):
        f = self.expr(e.a)
        return lambda env: np.logical_not(f(env))

    def e_Select(self, e):
        c, t, f = self.expr(e.condition), self.expr(e.true_value), self.expr(e.false_value)
        return lambda env: np.where(c(env), t(env), f(env)) if e.dtype.lanes > 1 \
            else (t(env) if c(env) else f(env))

    def e_Ramp(self, e):
        b, s, n, nd = self.expr(e.base), self.expr(e.stride), e.lanes, np_dtype(e.dtype)
        return lambda env: (np.arange(n) * int(s(env)) + int(b(env))).astype(nd)

    def e_Broadcast(self, e):
        v, n, nd = self.expr(e.value), e.lanes, np_dtype(e.dtype)
        return lambda env: np.full(n, v(env), dtype=nd)

    def e_Let(self, e):
        v, b, key = self.expr(e.value), self.expr(e.body), id(e.var)

        def f(env):
            env[key] = v(env)
            return b(env)
        return f

    def e_Call(self, e):
        if e.op == "tir.prefetch":  # a hint: nothing to do, its address never read
            return lambda env: 0
        if e.op == "tir.if_then_else":
            c, t, f = (self.expr(a) for a in e.args)
            if e.dtype.lanes > 1:
                return lambda env: np.where(c(env), t(env), f(env))
            return lambda env: t(env) if c(env) else f(env)
        if e.op not in CALLS:
            raise IRError(f"interpreter: unsupported call {e.op}")
        fn, args, dt = CALLS[e.op], [self.expr(a) for a in e.args], e.dtype
        return lambda env: _cast(dt, fn(dt, *[a(env) for a in args]))

    def element(self, key, name, i):
        """The memory of the buffer whose data var has id `key`, and index `i` checked in it."""
        arr = self.mem.get(key)
        if arr is None:
            raise IRError(f"interpreter: buffer '{name}' is not allocated")
        _check(name, i, arr.shape[0])
        return arr, i

    def e_BufferLoad(self, e):
        index = self.flat_index(e.buffer, e.indices)
        key, name = id(e.buffer.data), e.buffer.name
        bdt = np_dtype(e.buffer.dtype)

        def f(env):
            arr, i = self.element(key, name, index(env))
            v = arr[i]
            return v if v.dtype == bdt else v.astype(bdt)
        return f

    def flat_index(self, buf, indices) -> Fn:
        """The element index of an access: elem_offset + sum(index_d * stride_d)."""
        idx = [self.expr(i) for i in indices]
        off = self.expr(buf.elem_offset)
        if buf.strides:
            strides = [self.expr(s) for s in buf.strides]
        else:
            shape = [self.expr(s) for s in buf.shape]
            strides = None

        def f(env):
            if strides is not None:
                st = [int(s(env)) for s in strides]
            else:
                st, acc = [], 1
                for s in reversed(shape):
                    st.append(acc)
                    acc *= int(s(env))
                st.reverse()
            total = int(off(env))
            for i, s in zip(idx, st):
                v = i(env)
                total = total + (v.astype(np.int64) if isinstance(v, np.ndarray) else int(v)) * s
            return total
        return f

    # ---- statements --------------------------------------------------------------------------
    def stmt(self, s) -> Fn:
        m = getattr(self, "s_" + type(s).__name__, None)
        if m is None:
            raise IRError(f"interpreter: unsupported statement {type(s).__name__}")
        return m(s)

    def s_SeqStmt(self, s):
        fs = [self.stmt(x) for x in s.seq]

        def f(env):
            for g in fs:
                g(env)
        return f

    def s_For(self, s):
        lo, ext, body, key = self.expr(s.min), self.expr(s.extent), self.stmt(s.body), \
            id(s.loop_var)
        t = np_dtype(s.loop_var.dtype).type

        def f(env):
            start = int(lo(env))
            for k in range(start, start + int(ext(env))):
                env[key] = t(k)
                body(env)
        return f

    def s_While(self, s):
        c, body = self.expr(s.condition), self.stmt(s.body)

        def f(env):
            while c(env):
                body(env)
        return f

    def s_LetStmt(self, s):
        v, body, key = self.expr(s.value), self.stmt(s.body), id(s.var)

        def f(env):
            env[key] = v(env)
            body(env)
        return f

    def s_AttrStmt(self, s):
        return self.stmt(s.body)

    def s_AssertStmt(self, s):
        c, body = self.expr(s.condition), self.stmt(s.body)
        parts = [p if isinstance(p, str) else self.expr(p) for p in s.message]

        def f(env):
            if not c(env):
                msg = "".join(p if isinstance(p, str) else str(p(env)) for p in parts)
                raise InterpreterAssert(f"{s.kind}: {msg}")
            body(env)
        return f

    def s_BufferStore(self, s):
        index, value = self.flat_index(s.buffer, s.indices), self.expr(s.value)
        key, name = id(s.buffer.data), s.buffer.name

        def f(env):
            arr, i = self.element(key, name, index(env))
            arr[i] = value(env)
        return f

    def s_Allocate(self, s):
        b = s.buffer
        shape, body, key, nd = [self.expr(x) for x in b.shape], self.stmt(s.body), \
            id(b.data), np_dtype(b.dtype)

        def f(env):
            size = math.prod(int(x(env)) for x in shape)
            prev = self.mem.get(key)
            # Fresh memory is filled with a sentinel so reads of unwritten data show up.
            self.mem[key] = np.full(size, _poison(nd), dtype=nd)
            try:
                body(env)
            finally:
                if prev is None:
                    self.mem.pop(key, None)
                else:
                    self.mem[key] = prev
        return f

    def s_IfThenElse(self, s):
        c, t = self.expr(s.condition), self.stmt(s.then_case)
        e = self.stmt(s.else_case) if s.else_case is not None else None

        def f(env):
            if c(env):
                t(env)
            elif e is not None:
                e(env)
        return f

    def s_Evaluate(self, s):
        v = self.expr(s.value)
        return lambda env: (v(env), None)[1]

    def s_Return(self, s):
        def f(env):
            raise _Return()
        return f


def _poison(nd):
    if np.issubdtype(nd, np.floating):
        return np.nan
    if nd == np.bool_:
        return False
    return np.iinfo(nd).max // 3


def _check(name, i, size):
    if isinstance(i, np.ndarray):
        bad = i.size and (i.min() < 0 or i.max() >= size)
    else:
        bad = i < 0 or i >= size
    if bad:
        raise IndexError(f"interpreter: access to '{name}' at {i} is out of bounds "
                         f"(it has {size} elements)")


def run(func: PrimFunc, *args) -> None:
    """Run `func`: a numpy array per buffer parameter (written in place), an int per scalar."""

    if len(args) != len(func.params):
        raise IRError(f"interpreter: {func.attrs.get('global_symbol', 'function')} takes "
                      f"{len(func.params)} arguments, got {len(args)}")
    mem: Dict[int, np.ndarray] = {}
    env: Dict[int, Any] = {}
    bind_args(func, args, env, mem)
    body = _Compiler(mem).stmt(func.body)
    with np.errstate(all="ignore"):
        try:
            body(env)
        except _Return:
            pass
