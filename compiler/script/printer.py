"""A PrimFunc as TVMScript text (`func.script()`), in the subset parser.py reads, so that
`T.prim_func` of the text is structurally equal to the function. A plain root block is left
implicit (its allocations print as `T.alloc_buffer` at the top of the body).

Tensor parameters print as `A: T.Buffer(shape, dtype)` (as `a: T.handle` with a
`T.match_buffer` when the buffer has strides or an element offset), buffers over another's
memory as `T.Buffer(..., data=...)` at the top of the body, allocations as `T.decl_buffer`.
Statements or expressions outside that subset raise ScriptError naming them.
"""
from __future__ import annotations

from typing import Dict, List, Set

from ..arith import simplify
from ..ir.dtype import int32
from ..tir import expr as E
from ..tir.block import Block, BlockRealize, BufferRegion, is_true
from ..tir.buffer import Buffer
from ..tir.function import PrimFunc
from ..tir.functor import post_order_visit
from ..tir.stmt import (
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
    While,
)
from .frames import ScriptError

_INFIX = {E.Add: "+", E.Sub: "-", E.Mul: "*", E.FloorDiv: "//", E.FloorMod: "%",
          E.EQ: "==", E.NE: "!=", E.LT: "<", E.LE: "<=", E.GT: ">", E.GE: ">="}
_CALLS = {E.Min: "T.min", E.Max: "T.max", E.Mod: "T.truncmod"}
_LOOPS = {ForKind.SERIAL: "T.serial", ForKind.PARALLEL: "T.parallel",
          ForKind.VECTORIZED: "T.vectorized", ForKind.UNROLLED: "T.unroll"}


def script(func: PrimFunc, name: str = "") -> str:
    """The TVMScript text of `func` (its name is the function's global_symbol, else `name`,
    else "main")."""
    return _Printer(func).function(name or func.attrs.get("global_symbol") or "main")


class _Printer:
    def __init__(self, func: PrimFunc):
        self.func = func
        self.names: Dict[int, str] = {}
        self.taken: Set[str] = set()
        self.lines: List[str] = []
        self.depth = 0

    # ---- names -----------------------------------------------------------------------------
    def name(self, obj, hint: str) -> str:
        key = id(obj)
        if key not in self.names:
            base = "".join(c if c.isalnum() or c == "_" else "_" for c in hint) or "v"
            if base[0].isdigit():
                base = "v_" + base
            candidate, k = base, 0
            while candidate in self.taken or candidate in ("T", "range"):
                k += 1
                candidate = f"{base}_{k}"
            self.taken.add(candidate)
            self.names[key] = candidate
        return self.names[key]

    def emit(self, text: str) -> None:
        self.lines.append("    " * self.depth + text)

    # ---- the function ----------------------------------------------------------------------
    def function(self, fname: str) -> str:
        func = self.func
        bmap = dict(func.buffer_map)
        params, matches = [], []
        declared: Set[int] = set()
        for p in func.params:
            buf = bmap.get(p)
            if buf is None:
                params.append(f"{self.name(p, p.name)}: {_dtype_name(p.dtype)}")
            elif buf.strides or not E.is_const_int(buf.elem_offset, 0) or \
                    not all(E.is_const_int(d) for d in buf.shape):
                handle = self.name(p, p.name)
                params.append(f"{handle}: T.handle")
                matches.append((handle, buf))
                declared.add(id(buf))
            else:
                params.append(f"{self.name(buf, buf.name)}: T.Buffer({self.buffer_args(buf)})")
                declared.add(id(buf))
            if buf is not None:
                self.names.setdefault(id(buf.data), f"{self.name(buf, buf.name)}.data")
        self.emit(f"def {fname}({', '.join(params)}):")
        self.depth += 1
        attrs = {k: v for k, v in func.attrs.items() if _plain(v)}
        if attrs:
            self.emit(f"T.func_attr({_py(attrs)})")
        for var in _buffer_vars(list(bmap.values()) + _buffers(func.body)):
            if id(var) not in self.names:
                self.emit(f"{self.name(var, var.name)} = {_dtype_name(var.dtype)}()")
        for handle, buf in matches:
            self.emit(f"{self.name(buf, buf.name)} = T.match_buffer({handle}, "
                      f"{self.buffer_args(buf)})")
        block_allocs = _block_allocs(func.body)
        for buf in _buffers(func.body):
            if id(buf) in declared or _allocated(func.body, buf) or id(buf) in block_allocs:
                continue
            if id(buf.data) not in self.names:
                raise ScriptError(f"buffer '{buf.name}' uses memory that no parameter or "
                                  "allocation of the function defines")
            self.emit(f"{self.name(buf, buf.name)} = T.Buffer({self.buffer_args(buf)}, "
                      f"data={self.names[id(buf.data)]})")
            declared.add(id(buf))
        body = func.body
        if _implicit_root(body):  # the root block is left for the parser to make again
            for buf in body.block.alloc_buffers:
                self.emit(f"{self.name(buf, buf.name)} = T.alloc_buffer("
                          f"{self.buffer_args(buf)})")
                self.names.setdefault(id(buf.data), f"{self.name(buf, buf.name)}.data")
            body = body.block.body
        self.stmt(body)
        return "# from tvm.script import tir as T\n@T.prim_func\n" + "\n".join(self.lines) + "\n"

    def buffer_args(self, buf: Buffer) -> str:
        text = f"{self.tuple(buf.shape)}, \"{buf.dtype}\""
        if buf.strides:
            text += f", strides={self.tuple(buf.strides)}"
        if not E.is_const_int(buf.elem_offset, 0):
            text += f", elem_offset={self.expr(buf.elem_offset)}"
        if buf.scope != "global":
            text += f", scope=\"{buf.scope}\""
        if buf.offset_factor > 1:
            text += f", offset_factor={buf.offset_factor}"
        return text

    def tuple(self, items) -> str:
        parts = [self.expr(x) for x in items]
        return f"({parts[0]},)" if len(parts) == 1 else f"({', '.join(parts)})"

    # ---- statements ------------------------------------------------------------------------
    def stmt(self, s) -> None:
        method = getattr(self, f"stmt_{type(s).__name__}", None)
        if method is None:
            raise ScriptError(f"TVMScript printing does not support {type(s).__name__}")
        method(s)

    def stmt_SeqStmt(self, s: SeqStmt) -> None:
        for part in s.seq:
            self.stmt(part)

    def stmt_For(self, s: For) -> None:
        var = self.name(s.loop_var, s.loop_var.name)
        start = self.expr(s.min)
        end = self.expr(s.extent) if E.is_const_int(s.min, 0) else self.expr(
            simplify(s.min + s.extent))
        bounds = end if E.is_const_int(s.min, 0) else f"{start}, {end}"
        if s.kind == ForKind.THREAD_BINDING:
            tag = s.thread_binding.thread_tag if s.thread_binding is not None else ""
            self.emit(f"for {var} in T.thread_binding({bounds}, thread=\"{tag}\"):")
        elif s.kind == ForKind.SERIAL and s.loop_var.dtype == int32:
            self.emit(f"for {var} in range({bounds}):")
        else:
            self.emit(f"for {var} in {_LOOPS[s.kind]}({bounds}):")
        self.block(s.body)

    def block(self, body) -> None:
        self.depth += 1
        self.stmt(body)
        self.depth -= 1

    def stmt_BufferStore(self, s: BufferStore) -> None:
        self.emit(f"{self.load_text(s.buffer, s.indices)} = {self.expr(s.value)}")

    def stmt_LetStmt(self, s: LetStmt) -> None:
        self.emit(f"{self.name(s.var, s.var.name)}: {_dtype_name(s.var.dtype)} = "
                  f"{self.expr(s.value)}")
        self.stmt(s.body)

    def stmt_IfThenElse(self, s: IfThenElse) -> None:
        self.emit(f"if {self.expr(s.condition)}:")
        self.block(s.then_case)
        if s.else_case is not None:
            self.emit("else:")
            self.block(s.else_case)

    def stmt_While(self, s: While) -> None:
        self.emit(f"while {self.expr(s.condition)}:")
        self.block(s.body)

    def stmt_Evaluate(self, s: Evaluate) -> None:
        self.emit(f"T.evaluate({self.expr(s.value)})")

    def stmt_AssertStmt(self, s: AssertStmt) -> None:
        if not all(isinstance(p, str) for p in s.message):
            raise ScriptError("TVMScript printing supports asserts with text messages only")
        self.emit(f"assert {self.expr(s.condition)}, {_py(''.join(s.message))}")
        self.stmt(s.body)

    def stmt_Allocate(self, s: Allocate) -> None:
        if s.condition is not None:
            raise ScriptError("TVMScript printing does not support conditional allocations")
        buf = s.buffer
        self.emit(f"{self.name(buf, buf.name)} = T.decl_buffer({self.buffer_args(buf)})")
        self.names.setdefault(id(buf.data), f"{self.name(buf, buf.name)}.data")
        self.stmt(s.body)

    def stmt_BlockRealize(self, s: BlockRealize) -> None:
        b = s.block
        self.emit(f"with T.block({_py(b.name_hint)}):")
        self.depth += 1
        for iv, value in zip(b.iter_vars, s.iter_values):
            kind = _AXES.get(iv.kind)
            if kind is None:
                raise ScriptError(f"TVMScript printing does not support {iv.kind} block axes")
            dom = self.expr(iv.dom.extent) if E.is_const_int(iv.dom.min, 0) else \
                f"({self.expr(iv.dom.min)}, {self.expr(simplify(iv.dom.min + iv.dom.extent))})"
            dtype = "" if iv.var.dtype == int32 else f", dtype=\"{iv.var.dtype}\""
            self.emit(f"{self.name(iv.var, iv.var.name)} = T.axis.{kind}({dom}, "
                      f"{self.expr(value)}{dtype})")
        if not is_true(s.predicate):
            self.emit(f"T.where({self.expr(s.predicate)})")
        self.emit(f"T.reads({', '.join(self.region(r) for r in b.reads)})")
        self.emit(f"T.writes({', '.join(self.region(r) for r in b.writes)})")
        if b.annotations:
            items = ", ".join(f"{_py(k)}: {self.annotation(v)}" for k, v in b.annotations.items())
            self.emit(f"T.block_attr({{{items}}})")
        for buf in b.alloc_buffers:
            self.emit(f"{self.name(buf, buf.name)} = T.alloc_buffer({self.buffer_args(buf)})")
            self.names.setdefault(id(buf.data), f"{self.name(buf, buf.name)}.data")
        if b.match_buffers:
            raise ScriptError("TVMScript printing does not support T.match_buffer in a block")
        if b.init is not None:
            self.emit("with T.init():")
            self.block(b.init)
        self.stmt(b.body)
        self.depth -= 1

    def region(self, r: BufferRegion) -> str:
        parts = []
        for rng in r.region:
            if E.is_const_int(rng.extent, 1):
                parts.append(self.expr(rng.min))
            else:
                end = simplify(rng.min + rng.extent)
                parts.append(f"{self.expr(rng.min)}:{self.expr(end)}")
        return f"{self.name(r.buffer, r.buffer.name)}[{', '.join(parts) or '()'}]"

    def annotation(self, value) -> str:
        if isinstance(value, Buffer):
            return self.name(value, value.name)
        if isinstance(value, (list, tuple)):
            return "[" + ", ".join(self.annotation(v) for v in value) + "]"
        if isinstance(value, E.PrimExpr):
            return self.expr(value)
        if isinstance(value, (str, bool, int, float)):
            return _py(value)
        raise ScriptError(f"TVMScript printing does not support the annotation {value!r}")

    def stmt_AttrStmt(self, s: AttrStmt) -> None:
        node = s.node
        if isinstance(node, E.StringImm):
            text = _py(node.value)
        elif isinstance(node, E.PrimExpr):
            text = self.expr(node)
        else:
            raise ScriptError(f"TVMScript printing does not support an attribute on {node!r}")
        self.emit(f"with T.attr({text}, {_py(s.key)}, {self.expr(s.value)}):")
        self.block(s.body)

    # ---- expressions -----------------------------------------------------------------------
    def load_text(self, buf: Buffer, indices) -> str:
        return f"{self.name(buf, buf.name)}[{', '.join(self.expr(i) for i in indices)}]"

    def expr(self, e) -> str:
        if isinstance(e, E.IntImm):
            if e.dtype == int32:
                return str(e.value)
            return f"{_dtype_name(e.dtype)}({_py(bool(e.value)) if e.dtype.is_bool else e.value})"
        if isinstance(e, E.FloatImm):
            return f"{_dtype_name(e.dtype)}({e.value!r})"
        if isinstance(e, E.StringImm):
            return _py(e.value)
        if isinstance(e, E.Var):
            if id(e) not in self.names:
                raise ScriptError(f"variable '{e.name}' is not defined where it is printed")
            return self.names[id(e)]
        if type(e) in _INFIX:
            return f"({self.expr(e.a)} {_INFIX[type(e)]} {self.expr(e.b)})"
        if isinstance(e, E.Div):
            if e.dtype.is_float:
                return f"({self.expr(e.a)} / {self.expr(e.b)})"
            return f"T.truncdiv({self.expr(e.a)}, {self.expr(e.b)})"
        if type(e) in _CALLS:
            return f"{_CALLS[type(e)]}({self.expr(e.a)}, {self.expr(e.b)})"
        if isinstance(e, E.And):
            return f"({self.expr(e.a)} and {self.expr(e.b)})"
        if isinstance(e, E.Or):
            return f"({self.expr(e.a)} or {self.expr(e.b)})"
        if isinstance(e, E.Not):
            return f"(not {self.expr(e.a)})"
        if isinstance(e, E.Select):
            return (f"T.Select({self.expr(e.condition)}, {self.expr(e.true_value)}, "
                    f"{self.expr(e.false_value)})")
        if isinstance(e, E.Cast):
            return f"T.Cast(\"{e.dtype}\", {self.expr(e.value)})"
        if isinstance(e, E.BufferLoad):
            return self.load_text(e.buffer, e.indices)
        if isinstance(e, E.Ramp):
            return f"T.Ramp({self.expr(e.base)}, {self.expr(e.stride)}, {e.lanes})"
        if isinstance(e, E.Broadcast):
            return f"T.Broadcast({self.expr(e.value)}, {e.lanes})"
        if isinstance(e, E.Call):
            args = ", ".join(self.expr(a) for a in e.args)
            if e.op == "tir.if_then_else":
                return f"T.if_then_else({args})"
            if e.op in ("tir.call_extern", "tir.call_pure_extern"):
                fn = "T.call_extern" if e.op == "tir.call_extern" else "T.call_pure_extern"
                return f"{fn}(\"{e.dtype}\", {args})"
            return f"T.call_intrin(\"{e.dtype}\", \"{e.op}\"{', ' if args else ''}{args})"
        raise ScriptError(f"TVMScript printing does not support the expression "
                          f"{type(e).__name__}")


def _dtype_name(dtype) -> str:
    return "T.bool" if dtype.is_bool else f"T.{dtype}"


def _py(value) -> str:
    """A Python literal of a str, number, bool or dict of them."""
    if isinstance(value, dict):
        return "{" + ", ".join(f"{_py(k)}: {_py(v)}" for k, v in value.items()) + "}"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_py(v) for v in value) + "]"
    if isinstance(value, str):
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    return repr(value)


_AXES = {E.IterKind.DATA_PAR: "spatial", E.IterKind.REDUCE: "reduce",
          E.IterKind.ORDERED: "scan", E.IterKind.OPAQUE: "opaque"}


def _plain(value) -> bool:
    """Whether an attribute value prints as a Python literal (a scalar or a list of them)."""
    if isinstance(value, (list, tuple)):
        return all(isinstance(v, (str, bool, int, float)) for v in value)
    return isinstance(value, (str, bool, int, float))


def _implicit_root(body) -> bool:
    """Whether `body` is a root block the parser makes again from the text of what it holds
    (its allocations at the top of the function, then its body)."""
    if not isinstance(body, BlockRealize):
        return False
    b = body.block
    plain = b.name_hint == "root" and not b.iter_vars and not b.reads and not b.writes and \
        b.init is None and not b.match_buffers and not b.annotations and \
        is_true(body.predicate)
    return plain and (bool(b.alloc_buffers) or not isinstance(b.body, BlockRealize))


def _block_allocs(body) -> Set[int]:
    found: Set[int] = set()

    def visit(n):
        if isinstance(n, Block):
            found.update(id(b) for b in n.alloc_buffers)

    post_order_visit(body, visit)
    return found


def _buffers(body) -> List[Buffer]:
    """The buffers `body` loads from or stores to, in order of first use."""
    seen: Dict[int, Buffer] = {}

    def visit(n):
        if isinstance(n, (E.BufferLoad, BufferStore)) and id(n.buffer) not in seen:
            seen[id(n.buffer)] = n.buffer

    post_order_visit(body, visit)
    return list(seen.values())


def _buffer_vars(buffers) -> List[E.Var]:
    """The variables in the shapes, strides and offsets of `buffers`, in order."""
    found: Dict[int, E.Var] = {}
    for buf in buffers:
        for e in list(buf.shape) + list(buf.strides) + [buf.elem_offset]:
            post_order_visit(e, lambda n: found.setdefault(id(n), n)
                             if isinstance(n, E.Var) else None)
    return list(found.values())


def _allocated(body, buf: Buffer) -> bool:
    found = []
    post_order_visit(body, lambda n: found.append(n) if isinstance(n, Allocate)
                     and n.buffer is buf else None)
    return bool(found)
