"""Readable text of the IR, Python-like:

    def test_add(A: Buffer(float32, [n]), B: Buffer(float32, [n]), C: Buffer(float32, [n])):
      for i in range(n):
        C[i] = A[i] + B[i]

Distinct variables that share a name are printed with a numeric suffix (`i`, `i_1`).
"""
from __future__ import annotations

import json
from typing import Any, Dict, List, Optional

from ..ir.module import IRModule
from ..ir.printer import register_printer
from ..ir.printer import to_text as _generic_text
from . import expr as E
from . import stmt as S
from .block import BlockRealize, BufferRegion, is_true
from .buffer import Buffer
from .function import PrimFunc

_BINOPS = {E.Add: "+", E.Sub: "-", E.Mul: "*", E.Div: "/", E.Mod: "%", E.FloorDiv: "//",
           E.FloorMod: "%%", E.EQ: "==", E.NE: "!=", E.LT: "<", E.LE: "<=", E.GT: ">",
           E.GE: ">=", E.And: "and", E.Or: "or"}
# Binding strength, higher binds tighter.
_PREC = {E.Or: 1, E.And: 2, E.EQ: 4, E.NE: 4, E.LT: 4, E.LE: 4, E.GT: 4, E.GE: 4,
         E.Add: 5, E.Sub: 5, E.Mul: 6, E.Div: 6, E.Mod: 6, E.FloorDiv: 6, E.FloorMod: 6}


class Printer:
    def __init__(self) -> None:
        self.names: Dict[int, str] = {}
        self.used: Dict[str, int] = {}
        self.lines: List[str] = []

    # ---- names -------------------------------------------------------------------------------
    def name(self, obj: Any, base: str) -> str:
        key = id(obj)
        if key not in self.names:
            n = self.used.get(base, 0)
            self.used[base] = n + 1
            self.names[key] = base if n == 0 else f"{base}_{n}"
        return self.names[key]

    def var(self, v: E.Var) -> str:
        return self.name(v, v.name or "v")

    def buf(self, b: Buffer) -> str:
        # Keyed by the data pointer: views of one memory (an N-d parameter and the 1-d buffer
        # storage_flatten makes of it) print under one name.
        return self.name(b.data, b.name or "buf")

    # ---- expressions -------------------------------------------------------------------------
    def expr(self, e: Any, parent_prec: int = 0) -> str:
        if isinstance(e, str):
            return repr(e)
        if isinstance(e, E.IterVar):
            return self.var(e.var)
        if isinstance(e, (E.EqualOp, E.NotEqualOp)):
            e = e.asobject()
        if isinstance(e, E.Var):
            return self.var(e)
        if isinstance(e, E.IntImm):
            if e.dtype.is_bool:
                return "True" if e.value else "False"
            return str(e.value) if str(e.dtype) in ("int32",) else f"{e.dtype}({e.value})"
        if isinstance(e, E.FloatImm):
            return repr(e.value) if str(e.dtype) == "float32" else f"{e.dtype}({e.value!r})"
        if isinstance(e, E.StringImm):
            return json.dumps(e.value)      # "vadd", as TVM prints a string
        if isinstance(e, E.Cast):
            return f"{e.dtype}({self.expr(e.value)})"
        op = _BINOPS.get(type(e))
        if op is not None:
            prec = _PREC[type(e)]
            op = "%" if op == "%%" else op
            text = f"{self.expr(e.a, prec)} {op} {self.expr(e.b, prec + 1)}"
            return f"({text})" if prec < parent_prec else text
        if isinstance(e, (E.Min, E.Max)):
            return f"{type(e).__name__.lower()}({self.expr(e.a)}, {self.expr(e.b)})"
        if isinstance(e, E.Not):
            return f"not {self.expr(e.a, 3)}"
        if isinstance(e, E.Select):
            return (f"select({self.expr(e.condition)}, {self.expr(e.true_value)}, "
                    f"{self.expr(e.false_value)})")
        if isinstance(e, E.BufferLoad):
            return f"{self.buf(e.buffer)}[{', '.join(self.expr(i) for i in e.indices)}]"
        if isinstance(e, E.Ramp):
            return f"ramp({self.expr(e.base)}, {self.expr(e.stride)}, {e.lanes})"
        if isinstance(e, E.Broadcast):
            return f"broadcast({self.expr(e.value)}, {e.lanes})"
        if isinstance(e, E.Let):
            return f"(let {self.var(e.var)} = {self.expr(e.value)} in {self.expr(e.body)})"
        if isinstance(e, E.Call):
            args = (self.buf(a) if isinstance(a, Buffer) else self.expr(a) for a in e.args)
            return f"{e.op}({', '.join(args)})"
        if isinstance(e, E.Reduce):
            axes = ", ".join(self.var(a.var) for a in e.axis)
            return f"reduce({', '.join(self.expr(s) for s in e.source)}, axis=[{axes}])"
        return repr(e)

    # ---- statements --------------------------------------------------------------------------
    def emit(self, depth: int, text: str) -> None:
        self.lines.append("  " * depth + text)

    def stmt(self, s: Any, depth: int) -> None:
        # Lets and asserts print at the depth of what they wrap: a loop, not a recursion, walks
        # their chains (a packed function's argument checks nest hundreds deep).
        while isinstance(s, (S.LetStmt, S.AssertStmt)):
            if isinstance(s, S.LetStmt):
                self.emit(depth, f"{self.var(s.var)}: {s.var.dtype} = {self.expr(s.value)}")
            else:
                parts = (s.message,) if isinstance(s.message, E.StringImm) else s.message
                msg = " + ".join(self.expr(p) for p in parts)
                self.emit(depth, f"assert {self.expr(s.condition)}, {s.kind}({msg})")
            s = s.body
        if isinstance(s, S.SeqStmt):
            for x in s.seq:
                self.stmt(x, depth)
        elif isinstance(s, S.For):
            kind = "" if s.kind == S.ForKind.SERIAL else f"  # {s.kind}"
            if s.thread_binding is not None:
                kind = f"  # thread_binding {s.thread_binding.thread_tag}"
            end = (E.IntImm(s.min.dtype, s.min.value + s.extent.value)
                   if E.is_const_int(s.min) and E.is_const_int(s.extent) else s.min + s.extent)
            rng = (self.expr(s.extent) if E.is_const_int(s.min, 0)
                   else f"{self.expr(s.min)}, {self.expr(end)}")
            self.emit(depth, f"for {self.var(s.loop_var)} in range({rng}):{kind}")
            self.stmt(s.body, depth + 1)
        elif isinstance(s, S.While):
            self.emit(depth, f"while {self.expr(s.condition)}:")
            self.stmt(s.body, depth + 1)
        elif isinstance(s, S.AttrStmt):
            node = self.var(s.node.var) if isinstance(s.node, E.IterVar) else (
                self.expr(s.node) if isinstance(s.node, E.PrimExpr) else repr(s.node))
            self.emit(depth, f"with attr({node}, {s.key!r}, {self.expr(s.value)}):")
            self.stmt(s.body, depth + 1)
        elif isinstance(s, S.BufferStore):
            idx = ", ".join(self.expr(i) for i in s.indices)
            self.emit(depth, f"{self.buf(s.buffer)}[{idx}] = {self.expr(s.value)}")
        elif isinstance(s, S.Allocate):
            b = s.buffer
            shape = ", ".join(self.expr(x) for x in b.shape)
            self.emit(depth, f"{self.buf(b)} = allocate([{shape}], {b.dtype}, {b.scope!r})")
            self.stmt(s.body, depth)
        elif isinstance(s, S.IfThenElse):
            self.emit(depth, f"if {self.expr(s.condition)}:")
            self.stmt(s.then_case, depth + 1)
            if s.else_case is not None:
                self.emit(depth, "else:")
                self.stmt(s.else_case, depth + 1)
        elif isinstance(s, S.Evaluate):
            self.emit(depth, self.expr(s.value))
        elif isinstance(s, S.ProducerStore):
            idx = ", ".join(self.expr(i) for i in s.indices)
            self.emit(depth, f"{s.producer.name}[{idx}] = {self.expr(s.value)}")
        elif isinstance(s, S.ProducerRealize):
            bounds = ", ".join(f"{self.expr(r.min)}:{self.expr(_end(r))}" for r in s.bounds)
            self.emit(depth, f"realize {s.producer.name}[{bounds}] in {s.storage_scope!r}:")
            self.stmt(s.body, depth + 1)
        elif isinstance(s, S.Return):
            self.emit(depth, f"return {self.expr(s.value)}")
        elif isinstance(s, BlockRealize):
            self.block(s, depth)
        else:
            self.emit(depth, repr(s))

    def region(self, r: BufferRegion) -> str:
        parts = [self.expr(x.min) if E.is_const_int(x.extent, 1)
                 else f"{self.expr(x.min)}:{self.expr(x.min + x.extent)}" for x in r.region]
        return f"{self.buf(r.buffer)}[{', '.join(parts)}]"

    def block(self, s: BlockRealize, depth: int) -> None:
        b = s.block
        self.emit(depth, f"block {b.name_hint!r}:")
        for iv, value in zip(b.iter_vars, s.iter_values):
            dom = f"{self.expr(iv.dom.min)}:{self.expr(iv.dom.min + iv.dom.extent)}"
            self.emit(depth + 1, f"{self.var(iv.var)} = axis.{iv.kind}({dom}, "
                                 f"{self.expr(value)})")
        if not is_true(s.predicate):
            self.emit(depth + 1, f"where({self.expr(s.predicate)})")
        self.emit(depth + 1, f"reads({', '.join(self.region(r) for r in b.reads)})")
        self.emit(depth + 1, f"writes({', '.join(self.region(r) for r in b.writes)})")
        for buf in b.alloc_buffers:
            self.emit(depth + 1, f"{self.buf(buf)} = alloc_buffer({self.buffer_decl(buf)})")
        for m in b.match_buffers:
            self.emit(depth + 1, f"{self.buf(m.buffer)} = match_buffer({self.region(m.source)})")
        if b.annotations:
            self.emit(depth + 1, f"block_attr({dict(b.annotations)!r})")
        if b.init is not None:
            self.emit(depth + 1, "with init():")
            self.stmt(b.init, depth + 2)
        self.stmt(b.body, depth + 1)

    def buffer_decl(self, b: Buffer) -> str:
        shape = ", ".join(self.expr(x) for x in b.shape)
        extra = ""
        if b.strides:
            extra = f", strides=[{', '.join(self.expr(x) for x in b.strides)}]"
        return f"Buffer({b.dtype}, [{shape}]{extra})"

    def func(self, name: str, f: PrimFunc) -> None:
        params = []
        for p in f.params:
            b = f.buffer_of(p)
            if b is not None:
                params.append(f"{self.buf(b)}: {self.buffer_decl(b)}")
            else:
                params.append(f"{self.var(p)}: {p.dtype}")
        self.emit(0, f"def {name}({', '.join(params)}):")
        self.stmt(f.body, 1)


def _end(r: E.Range) -> E.PrimExpr:
    """One past the last value of `r`, folded when both ends are constants."""
    if E.is_const_int(r.min) and E.is_const_int(r.extent):
        return E.IntImm(r.min.dtype, r.min.value + r.extent.value)
    return r.min + r.extent


def to_text(node: Any, name: Optional[str] = None) -> str:
    """The text of a loop-IR node; a PrimFunc prints under `name` (else its global_symbol)."""
    p = Printer()
    if isinstance(node, IRModule):
        return _generic_text(node)
    if isinstance(node, PrimFunc):
        p.func(name or node.attrs.get("global_symbol", "main"), node)
    elif isinstance(node, S.Stmt):
        p.stmt(node, 0)
    elif isinstance(node, Buffer):
        return f"{p.buf(node)}: {p.buffer_decl(node)}"
    else:
        return p.expr(node)
    return "\n".join(p.lines)


for _cls in (E.PrimExpr, S.Stmt, Buffer, PrimFunc, E.Range, E.IterVar, E.CommReducer):
    register_printer(_cls, to_text)
