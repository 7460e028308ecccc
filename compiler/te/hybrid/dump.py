"""Loop IR -> hybrid script source: what `te.hybrid.build` writes for a scheduled function.

The function takes the inputs (buffers of the input tensors and the variables), declares each
output with `output_tensor`, and returns them. Loops print as their kind's iterator (`range`,
`parallel`, `vectorize`, `unroll`, `bind(tag, extent)` for a thread-binding loop), an Allocate
as `allocate(shape, dtype, scope)`, stores and loads as subscripts, intrinsics by their hybrid
names. Names are made valid Python identifiers, distinct from each other, from Python's
keywords and from the hybrid intrinsics. Attributes (pragmas) are dropped.
"""
from __future__ import annotations

import keyword
import re
from typing import Dict, List, Sequence

from ...ir.errors import HybridScriptError
from ...tir import expr as E
from ...tir.buffer import Buffer
from ...tir.function import PrimFunc
from ...tir.stmt import (
    Allocate,
    AssertStmt,
    AttrStmt,
    BufferStore,
    Evaluate,
    For,
    ForKind,
    IfThenElse,
    LetStmt,
    SeqStmt,
    Stmt,
)
from .calls import CALLS, LOOP_KINDS
from .runtime import HYBRID_GLOBALS

_LOOPS = {ForKind.SERIAL: "range", ForKind.PARALLEL: "parallel",
          ForKind.VECTORIZED: "vectorize", ForKind.UNROLLED: "unroll"}
_BINARY = {E.Add: "+", E.Sub: "-", E.Mul: "*", E.FloorMod: "%", E.Mod: "%", E.LT: "<",
           E.LE: "<=", E.GT: ">", E.GE: ">=", E.EQ: "==", E.NE: "!=", E.And: "and",
           E.Or: "or"}
_BITWISE = {"tir.bitwise_and": "&", "tir.bitwise_or": "|", "tir.bitwise_xor": "^",
            "tir.shift_left": "<<", "tir.shift_right": ">>"}
_RESERVED = set(keyword.kwlist) | set(HYBRID_GLOBALS) | set(CALLS) | set(LOOP_KINDS) | \
    {"bind", "True", "False", "None"}


class _Dumper:
    def __init__(self):
        self.names: Dict[int, str] = {}
        self.taken = set(_RESERVED)
        self.lines: List[str] = []

    def name(self, obj, hint: str) -> str:
        key = id(obj)
        if key in self.names:
            return self.names[key]
        base = re.sub(r"\W", "_", hint) or "v"
        if base[0].isdigit():
            base = "v_" + base
        name, k = base, 0
        while name in self.taken:
            k += 1
            name = f"{base}_{k}"
        self.taken.add(name)
        self.names[key] = name
        return name

    def emit(self, depth: int, text: str) -> None:
        self.lines.append("    " * depth + text)

    # ---- statements ------------------------------------------------------------------------
    def stmt(self, s: Stmt, depth: int) -> None:
        if isinstance(s, SeqStmt):
            for x in s.seq:
                self.stmt(x, depth)
        elif isinstance(s, For):
            self.loop(s, depth)
        elif isinstance(s, BufferStore):
            self.emit(depth, f"{self.access(s.buffer, s.indices)} = {self.expr(s.value)}")
        elif isinstance(s, Allocate):
            b = s.buffer
            shape = ", ".join(self.expr(x) for x in b.shape) + ("," if len(b.shape) == 1 else "")
            self.emit(depth, f"{self.name(b, b.name)} = allocate(({shape}), '{b.dtype}', "
                             f"'{b.scope}')")
            self.stmt(s.body, depth)
        elif isinstance(s, IfThenElse):
            self.emit(depth, f"if {self.expr(s.condition)}:")
            self.block(s.then_case, depth + 1)
            if s.else_case is not None and not _is_no_op(s.else_case):
                self.emit(depth, "else:")
                self.block(s.else_case, depth + 1)
        elif isinstance(s, AssertStmt):
            msg = "".join(p if isinstance(p, str) else str(p) for p in s.message)
            self.emit(depth, f"assert {self.expr(s.condition)}, {msg!r}")
            self.stmt(s.body, depth)
        elif isinstance(s, LetStmt):
            self.emit(depth, f"{self.name(s.var, s.var.name)} = {self.expr(s.value)}")
            self.stmt(s.body, depth)
        elif isinstance(s, AttrStmt):
            self.stmt(s.body, depth)
        elif isinstance(s, Evaluate):
            if not _is_no_op(s):
                self.emit(depth, self.expr(s.value))
        else:
            raise HybridScriptError(f"hybrid dump: a {type(s).__name__} statement has no "
                                    "hybrid form")

    def block(self, s: Stmt, depth: int) -> None:
        before = len(self.lines)
        self.stmt(s, depth)
        if len(self.lines) == before:
            self.emit(depth, "pass")

    def loop(self, s: For, depth: int) -> None:
        var = s.loop_var
        if s.kind == ForKind.THREAD_BINDING and s.thread_binding is not None:
            it = f"bind('{s.thread_binding.thread_tag}', {self.expr(s.extent)})"
        else:
            kind = _LOOPS.get(s.kind, "range")
            if E.is_const_int(s.min, 0):
                it = f"{kind}({self.expr(s.extent)})"
            else:
                it = f"{kind}({self.expr(s.min)}, {self.expr(s.min + s.extent)})"
        self.emit(depth, f"for {self.name(var, var.name)} in {it}:")
        self.block(s.body, depth + 1)

    # ---- expressions -----------------------------------------------------------------------
    def access(self, b: Buffer, indices) -> str:
        return f"{self.name(b, b.name)}[{', '.join(self.expr(i) for i in indices)}]"

    def expr(self, e) -> str:
        if isinstance(e, (E.EqualOp, E.NotEqualOp)):
            e = e.asobject()
        if isinstance(e, E.IntImm):
            if e.dtype.is_bool:
                return "True" if e.value else "False"
            return str(e.value) if str(e.dtype) == "int32" else f"{e.dtype}({e.value})"
        if isinstance(e, E.FloatImm):
            return f"{e.dtype}({e.value!r})"
        if isinstance(e, E.StringImm):
            return repr(e.value)
        if isinstance(e, E.Var):
            return self.name(e, e.name)
        if isinstance(e, E.BufferLoad):
            return self.access(e.buffer, e.indices)
        if isinstance(e, E.Cast):
            return f"{e.dtype}({self.expr(e.value)})"
        if isinstance(e, (E.Div, E.FloorDiv)):
            op = "/" if e.dtype.is_float else "//"
            return f"({self.expr(e.a)} {op} {self.expr(e.b)})"
        op = _BINARY.get(type(e))
        if op is not None:
            return f"({self.expr(e.a)} {op} {self.expr(e.b)})"
        if isinstance(e, (E.Min, E.Max)):
            return f"{type(e).__name__.lower()}({self.expr(e.a)}, {self.expr(e.b)})"
        if isinstance(e, E.Not):
            return f"(not {self.expr(e.a)})"
        if isinstance(e, E.Select):
            return (f"({self.expr(e.true_value)} if {self.expr(e.condition)} else "
                    f"{self.expr(e.false_value)})")
        if isinstance(e, E.Call):
            return self.call(e)
        raise HybridScriptError(f"hybrid dump: the expression {e!r} ({type(e).__name__}) has no "
                                "hybrid form")

    def call(self, e: E.Call) -> str:
        op = e.op if isinstance(e.op, str) else str(e.op)
        args = [self.expr(a) for a in e.args]
        if op in _BITWISE:
            return f"({args[0]} {_BITWISE[op]} {args[1]})"
        if op == "tir.bitwise_not":
            return f"(~{args[0]})"
        if op == "tir.if_then_else":
            return f"({args[1]} if {args[0]} else {args[2]})"
        name = {"tir.pow": "power"}.get(op, op[4:] if op.startswith("tir.") else op)
        if name not in CALLS:
            raise HybridScriptError(f"hybrid dump: the call {op} has no hybrid form")
        return f"{name}({', '.join(args)})"


def _is_no_op(s: Stmt) -> bool:
    return isinstance(s, Evaluate) and E.is_const_int(s.value)


def dump(func: PrimFunc, inputs: Sequence, outputs: Sequence, name: str) -> str:
    """The hybrid source of `func`, whose parameters are `inputs` then `outputs` (tensors and
    variables, as schedule_to_primfunc was given them)."""
    d = _Dumper()
    d.taken.add(name)
    params = list(func.params)
    if len(params) != len(inputs) + len(outputs):
        raise HybridScriptError(f"hybrid dump: the function has {len(params)} parameters, "
                                f"not {len(inputs) + len(outputs)} inputs and outputs")
    names = []
    for p, a in zip(params, inputs):
        b = func.buffer_of(p)
        names.append(d.name(b, a.name) if b is not None else d.name(p, p.name))
    out_bufs = [func.buffer_of(p) for p in params[len(inputs):]]
    d.emit(0, f"def {name}({', '.join(names)}):")
    for b in out_bufs:
        shape = ", ".join(d.expr(x) for x in b.shape) + ("," if len(b.shape) == 1 else "")
        d.emit(1, f"{d.name(b, b.name)} = output_tensor(({shape}), '{b.dtype}')")
    d.stmt(func.body, 1)
    d.emit(1, "return " + ", ".join(d.name(b, b.name) for b in out_bufs))
    return "\n".join(d.lines) + "\n"
