"""Readable TVMScript-like text of graph-level functions, expressions and struct info:

    @R.function
    def main(x: R.Tensor((n, 784), dtype="float32")) -> R.Tensor((n, 10), dtype="float32"):
        n = T.int64()
        with R.dataflow():
            lv: R.Tensor((n, 10), dtype="float32") = R.matmul(x, w, out_dtype="void")
            gv: R.Tensor((n, 10), dtype="float32") = R.nn.relu(lv)
            R.output(gv)
        return gv

Operators print as `R.<name without "relax.">(args, attr=value, ...)` with every attribute in
registration order; module functions are `cls.<name>`; non-scalar constants are
`metadata["relax.expr.Constant"][i]` (numbered per printed function). Distinct variables that
share a name get a numeric suffix (`lv`, `lv1`, ...).
"""
from __future__ import annotations

from typing import Any, Dict, List, Optional

from ..ir.printer import register_printer, to_text
from ..tir import expr as E
from . import expr as X
from .attrs import Attrs
from .struct_info import (
    FuncStructInfo,
    ObjectStructInfo,
    PrimStructInfo,
    ShapeStructInfo,
    StructInfo,
    TensorStructInfo,
    TupleStructInfo,
)
from .struct_info_analysis import symbolic_vars

INDENT = "    "


def _value(v: Any) -> str:
    """An attribute value."""
    if isinstance(v, str):
        return '"' + v.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if isinstance(v, tuple):
        return "[" + ", ".join(_value(x) for x in v) + "]"
    if isinstance(v, E.PrimExpr):
        return to_text(v)
    if isinstance(v, dict):
        return "{" + ", ".join(f"{_value(k)}: {_value(x)}" for k, x in v.items()) + "}"
    return repr(v)


class Printer:
    def __init__(self) -> None:
        self.names: Dict[int, str] = {}
        self.used: Dict[str, int] = {}
        self.constants: List[X.Constant] = []
        self.lines: List[str] = []

    # ---- names -------------------------------------------------------------------------------
    def name(self, obj: Any, base: str) -> str:
        key = id(obj)
        if key not in self.names:
            base = base or "v"
            n = self.used.get(base, 0)
            self.used[base] = n + 1
            self.names[key] = base if n == 0 else f"{base}{n}"
        return self.names[key]

    def dim(self, d: Any) -> str:
        if isinstance(d, int):
            return str(d)
        if isinstance(d, E.Var):
            return self.name(d, d.name)
        return _prim_text(d, self)

    # ---- struct info -------------------------------------------------------------------------
    def sinfo(self, s: StructInfo) -> str:
        if isinstance(s, TensorStructInfo):
            parts = []
            if s.shape is not None:
                dims = ", ".join(self.dim(d) for d in s.shape)
                parts.append(f"({dims}{',' if len(s.shape) == 1 else ''})")
            if s.dtype != "void":
                parts.append(f'dtype="{s.dtype}"')
            if s.shape is None and s.ndim >= 0:
                parts.append(f"ndim={s.ndim}")
            return "R.Tensor(" + ", ".join(parts) + ")"
        if isinstance(s, TupleStructInfo):
            return "R.Tuple(" + ", ".join(self.sinfo(f) for f in s.fields) + ")"
        if isinstance(s, ShapeStructInfo):
            if s.values is not None:
                return "R.Shape([" + ", ".join(self.dim(d) for d in s.values) + "])"
            return "R.Shape(ndim=%d)" % s.ndim if s.ndim >= 0 else "R.Shape"
        if isinstance(s, PrimStructInfo):
            if s.value is not None:
                v = self.dim(s.value) if isinstance(s.value, E.PrimExpr) else repr(s.value)
                return f'R.Prim(value={v})' if isinstance(s.value, E.PrimExpr) else \
                    f'R.Prim("{s.dtype}", value={v})'
            return f'R.Prim("{s.dtype}")'
        if isinstance(s, FuncStructInfo):
            ret = self.sinfo(s.ret)
            pure = "" if s.purity else ", purity=False"
            if s.params is None:
                return f"R.Callable(ret={ret}{pure})"
            params = ", ".join(self.sinfo(p) for p in s.params)
            return f"R.Callable(({params}{',' if len(s.params) == 1 else ''}), {ret}{pure})"
        if isinstance(s, ObjectStructInfo):
            return "R.Object"
        return repr(s)

    # ---- expressions -------------------------------------------------------------------------
    def expr(self, e: X.Expr) -> str:
        if isinstance(e, X.Var):
            return self.name(e, e.name_hint)
        if isinstance(e, X.Constant):
            if e.data.ndim == 0:
                v = e.data.item()
                return f'R.const({v!r}, "{e.data.dtype}")'
            self.constants.append(e)
            return f'metadata["relax.expr.Constant"][{len(self.constants) - 1}]'
        if isinstance(e, X.ShapeExpr):
            return "R.shape([" + ", ".join(self.dim(d) for d in e.values) + "])"
        if isinstance(e, X.PrimValue):
            v = self.dim(e.value) if isinstance(e.value, E.PrimExpr) else repr(e.value)
            return f"R.prim_value({v})" if e.dtype in ("int64", "float32", "bool") or \
                isinstance(e.value, E.PrimExpr) else f'R.prim_value(T.{e.dtype}({v}))'
        if isinstance(e, X.StringImm):
            return f"R.str({_value(e.value)})"
        if isinstance(e, X.DataTypeImm):
            return f"R.dtype({_value(e.value)})"
        if isinstance(e, X.GlobalVar):
            return f"cls.{e.name_hint}"
        if isinstance(e, X.ExternFunc):
            return f"R.ExternFunc({_value(e.global_symbol)})"
        if isinstance(e, X.Op):
            return "R." + e.name[len("relax."):] if e.name.startswith("relax.") else e.name
        if isinstance(e, X.Tuple):
            inner = ", ".join(self.expr(f) for f in e.fields)
            return f"({inner}{',' if len(e.fields) == 1 else ''})"
        if isinstance(e, X.TupleGetItem):
            return f"{self.expr(e.tuple_value)}[{e.index}]"
        if isinstance(e, X.Call):
            return self.call(e)
        if isinstance(e, X.Function):
            return f"<function {self.name(e, 'f')}>"
        if isinstance(e, (X.If, X.SeqExpr)):
            return f"<{type(e).__name__}>"
        return repr(e)

    def call(self, c: X.Call) -> str:
        args = [self.expr(a) for a in c.args]
        if isinstance(c.op, X.Op) and c.op.name in ("relax.call_tir", "relax.call_dps_packed"):
            args.append("out_sinfo=" + self.sinfo(c.sinfo_args[0]))
            if len(c.args) > 2:
                args[2] = "tir_vars=" + args[2]
            return f"{self.expr(c.op)}({', '.join(args)})"
        args += [f"{k}={_value(v)}" for k, v in (c.attrs or Attrs()).items()]
        if c.sinfo_args and not isinstance(c.op, X.Op):
            args.append("sinfo_args=(" + ", ".join(self.sinfo(s) for s in c.sinfo_args) + ",)")
        return f"{self.expr(c.op)}({', '.join(args)})"

    # ---- statements --------------------------------------------------------------------------
    def emit(self, depth: int, text: str) -> None:
        self.lines.append(INDENT * depth + text)

    def binding(self, b: X.Binding, depth: int) -> None:
        var = b.var
        value = b.value
        if isinstance(value, X.Function):
            self.function(value, self.name(var, var.name_hint), depth)
            return
        if isinstance(value, X.If):
            self.if_(value, var, depth)
            return
        lhs = f"{self.expr(var)}: {self.sinfo(var.struct_info)}"
        if isinstance(b, X.MatchCast):
            self.emit(depth, f"{lhs} = R.match_cast({self.expr(value)}, "
                             f"{self.sinfo(b.struct_info)})")
        else:
            self.emit(depth, f"{lhs} = {self.expr(value)}")

    def if_(self, e: X.If, var: X.Var, depth: int) -> None:
        self.emit(depth, f"if {self.expr(e.cond)}:")
        for branch in (e.true_branch, e.false_branch):
            self.blocks(branch.blocks, depth + 1)
            self.emit(depth + 1, f"{self.expr(var)}: {self.sinfo(var.struct_info)} = "
                                 f"{self.expr(branch.body)}")
            if branch is e.true_branch:
                self.emit(depth, "else:")

    def blocks(self, blocks, depth: int) -> None:
        for block in blocks:
            if isinstance(block, X.DataflowBlock):
                self.emit(depth, "with R.dataflow():")
                for b in block.bindings:
                    self.binding(b, depth + 1)
                outs = [self.expr(b.var) for b in block.bindings
                        if not isinstance(b.var, X.DataflowVar)]
                self.emit(depth + 1, f"R.output({', '.join(outs)})")
            else:
                for b in block.bindings:
                    self.binding(b, depth)

    def function(self, f: X.Function, name: Optional[str], depth: int = 0) -> None:
        params = ", ".join(f"{self.expr(p)}: {self.sinfo(p.struct_info)}" for p in f.params)
        pure = "" if f.is_pure else "(pure=False)"
        self.emit(depth, f"@R.function{pure}")
        self.emit(depth, f"def {name or 'func'}({params}) -> {self.sinfo(f.ret_struct_info)}:")
        seen = set()
        for p in f.params:
            for v in symbolic_vars(p.struct_info):
                if id(v) not in seen:
                    seen.add(id(v))
                    self.emit(depth + 1, f"{self.name(v, v.name)} = T.{v.dtype}()")
        attrs = {k: v for k, v in f.attrs.items() if k != "global_symbol" or v != name}
        if attrs:
            self.emit(depth + 1, f"R.func_attr({_value(attrs)})")
        self.blocks(f.body.blocks, depth + 1)
        self.emit(depth + 1, f"return {self.expr(f.body.body)}")


def _prim_text(e: E.PrimExpr, p: Printer) -> str:
    """A loop-IR expression, its variables named by this printer."""
    if isinstance(e, E.Var):
        return p.name(e, e.name)
    if isinstance(e, E.IntImm):
        return str(e.value)
    if isinstance(e, E.BinaryOp) and type(e) in _OPS:
        return f"({_prim_text(e.a, p)} {_OPS[type(e)]} {_prim_text(e.b, p)})"
    if isinstance(e, (E.Min, E.Max)):
        return f"T.{type(e).__name__.lower()}({_prim_text(e.a, p)}, {_prim_text(e.b, p)})"
    return to_text(e)


_OPS = {E.Add: "+", E.Sub: "-", E.Mul: "*", E.FloorDiv: "//", E.FloorMod: "%"}


def script(node: Any, name: Optional[str] = None) -> str:
    """The text of a graph-level function, expression or struct info."""
    p = Printer()
    if isinstance(node, X.Function):
        p.function(node, name or node.attrs.get("global_symbol"))
        return "\n".join(p.lines)
    if isinstance(node, StructInfo):
        return p.sinfo(node)
    if isinstance(node, X.SeqExpr):
        p.blocks(node.blocks, 0)
        p.emit(0, p.expr(node.body))
        return "\n".join(p.lines)
    if isinstance(node, X.Binding):
        p.binding(node, 0)
        return "\n".join(p.lines)
    if isinstance(node, X.Expr):
        return p.expr(node)
    return repr(node)


register_printer(X.Expr, script)
register_printer(StructInfo, script)
register_printer(X.Binding, script)
