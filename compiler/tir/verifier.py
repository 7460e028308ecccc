"""The IR verifier: invariants every pass must keep. The pass runner calls `verify` after every
pass in tests; a failure is an InternalError (a compiler bug), naming the function and problem.

Checked: every Var used is defined (a param, the data/shape/stride vars of a param's buffer, a
loop variable, a Let/LetStmt, an Allocate's data, a thread IterVar of an AttrStmt, a reduction
axis); the operands of a binary operator share one dtype; conditions are booleans; logical
operators take booleans; a load or store has as many indices as its buffer has dimensions (or
one, after flattening) and integer indices; a stored value has the buffer's element type; Call
names are intrinsics of compiler/ir/op.py or start with "extern:" / "extern."; only
tir.call_packed takes Buffer arguments, whose data var is defined there; vector lanes agree.
"""
from __future__ import annotations

from typing import Any, List, Optional, Set

from ..ir.errors import InternalError
from ..ir.module import IRModule
from . import expr as E
from . import intrinsics as OP
from . import stmt as S
from .block import Block
from .buffer import Buffer
from .function import PrimFunc
from .functor import IRVisitor, chain_of, free_vars


def _short(node: Any) -> str:
    try:
        text = str(node)
    except Exception:  # never let printing hide the real problem
        text = repr(node)
    return text if len(text) <= 200 else text[:200] + " ..."


class _Verifier(IRVisitor):
    def __init__(self, name: str):
        self.name = name
        self.defined: Set[int] = set()
        self.stmt_stack: List[Any] = []

    # ---- reporting ---------------------------------------------------------------------------
    def fail(self, problem: str, node: Any) -> None:
        where = f"\n  in statement: {_short(self.stmt_stack[-1])}" if self.stmt_stack else ""
        raise InternalError(f"IR verification failed in function '{self.name}': {problem}: "
                            f"{_short(node)}{where}")

    # ---- scopes ------------------------------------------------------------------------------
    def define(self, v: E.Var, node: Any) -> bool:
        """Defines `v`; returns whether it was new (callers undefine it at scope end)."""
        if not isinstance(v, E.Var):
            self.fail("a definition that is not a Var", node)
        if id(v) in self.defined:
            return False
        self.defined.add(id(v))
        return True

    def scoped(self, vars_: List[E.Var], node: Any, body_fn) -> None:
        new = [v for v in vars_ if self.define(v, node)]
        try:
            body_fn()
        finally:
            for v in new:
                self.defined.discard(id(v))

    def visit(self, node: Any) -> None:
        if isinstance(node, S.Stmt):
            self.stmt_stack.append(node)
            try:
                super().visit(node)
            finally:
                self.stmt_stack.pop()
        else:
            super().visit(node)

    # ---- expressions -------------------------------------------------------------------------
    def visit_Var(self, v: E.Var) -> None:
        if id(v) not in self.defined:
            self.fail(f"variable '{v.name}' is used but not defined", v)

    visit_SizeVar = visit_Var

    def generic_visit(self, node: Any) -> None:
        if isinstance(node, E.BinaryOp):
            self.check_binary(node)
        super().generic_visit(node)

    def check_binary(self, e: E.BinaryOp) -> None:
        if e.a.dtype != e.b.dtype:
            self.fail(f"operands of {type(e).__name__} have different dtypes "
                      f"{e.a.dtype} and {e.b.dtype}", e)
        if isinstance(e, (E.And, E.Or)) and not e.a.dtype.is_bool:
            self.fail(f"{type(e).__name__} of non-boolean operands ({e.a.dtype})", e)
        if isinstance(e, E.CmpOp) and not (e.dtype.is_bool and e.dtype.lanes == e.a.dtype.lanes):
            self.fail(f"comparison of dtype {e.dtype} from operands {e.a.dtype}", e)
        if not isinstance(e, E.CmpOp) and e.dtype != e.a.dtype:
            self.fail(f"{type(e).__name__} of dtype {e.dtype} from operands {e.a.dtype}", e)

    def visit_Not(self, e: E.Not) -> None:
        if not e.a.dtype.is_bool:
            self.fail(f"Not of a non-boolean ({e.a.dtype})", e)
        self.generic_visit(e)

    def visit_Select(self, e: E.Select) -> None:
        c = e.condition.dtype
        if not c.is_bool or c.lanes not in (1, e.dtype.lanes):
            self.fail(f"select condition of dtype {c} (expected bool)", e)
        if e.true_value.dtype != e.false_value.dtype:
            self.fail(f"select branches have different dtypes {e.true_value.dtype} and "
                      f"{e.false_value.dtype}", e)
        self.generic_visit(e)

    def visit_Cast(self, e: E.Cast) -> None:
        if e.dtype.lanes != e.value.dtype.lanes:
            self.fail(f"cast changes lanes {e.value.dtype} -> {e.dtype}", e)
        self.generic_visit(e)

    def visit_Ramp(self, e: E.Ramp) -> None:
        if e.base.dtype != e.stride.dtype or e.base.dtype.lanes != 1 or e.lanes < 1:
            self.fail(f"ramp of base {e.base.dtype}, stride {e.stride.dtype}, lanes {e.lanes}", e)
        if e.dtype != e.base.dtype.with_lanes(e.lanes):
            self.fail(f"ramp dtype {e.dtype} does not match its {e.lanes} lanes", e)
        self.generic_visit(e)

    def visit_Broadcast(self, e: E.Broadcast) -> None:
        if e.value.dtype.lanes != 1 or e.dtype != e.value.dtype.with_lanes(e.lanes):
            self.fail(f"broadcast of {e.value.dtype} to {e.dtype} ({e.lanes} lanes)", e)
        self.generic_visit(e)

    def visit_Let(self, e: E.Let) -> None:
        self.visit(e.value)
        self.scoped([e.var], e, lambda: self.visit(e.body))

    def visit_Call(self, e: E.Call) -> None:
        if not (OP.is_intrinsic(e.op) or e.op.startswith(("extern:", "extern."))):
            self.fail(f"call to unknown intrinsic '{e.op}' (not in compiler/ir/op.py)", e)
        if OP.is_intrinsic(e.op):
            n = OP.arity(e.op)
            if n is not None and n != len(e.args):
                self.fail(f"'{e.op}' takes {n} arguments, got {len(e.args)}", e)
        for a in e.args:
            if isinstance(a, Buffer) and e.op != "tir.call_packed":
                self.fail(f"buffer '{a.name}' is an argument of '{e.op}'; only "
                          "tir.call_packed takes buffers", e)
            if isinstance(a, Buffer) and id(a.data) not in self.defined:
                self.fail(f"buffer '{a.name}' is passed to a call but its data var is not "
                          "defined here", e)
        self.generic_visit(e)

    def visit_BufferLoad(self, e: E.BufferLoad) -> None:
        self.check_access(e.buffer, e.indices, e)
        self.generic_visit(e)

    def visit_Reduce(self, e: E.Reduce) -> None:
        for iv in e.axis:
            if iv.dom is not None:
                self.visit(iv.dom.min)
                self.visit(iv.dom.extent)

        def body():
            for s in e.source:
                self.visit(s)
            self.visit(e.condition)
            for s in e.init:
                self.visit(s)
        self.scoped([iv.var for iv in e.axis], e, body)

    def check_access(self, buf: Buffer, indices, node) -> None:
        if id(buf.data) not in self.defined:
            self.fail(f"buffer '{buf.name}' is accessed but its data var is not defined "
                      "(not a param's buffer nor allocated)", node)
        if len(indices) not in (buf.ndim, 1):
            self.fail(f"{len(indices)} indices into the {buf.ndim}-d buffer '{buf.name}'", node)
        for i in indices:
            if not i.dtype.is_integer:
                self.fail(f"index of dtype {i.dtype} into buffer '{buf.name}'", node)

    # ---- statements --------------------------------------------------------------------------
    def check_cond(self, cond: E.PrimExpr, node: Any) -> None:
        if not (cond.dtype.is_bool and cond.dtype.lanes == 1):
            self.fail(f"condition of dtype {cond.dtype} (expected bool)", node)

    def visit_For(self, s: S.For) -> None:
        self.visit(s.min)
        self.visit(s.extent)
        for what, x in (("min", s.min), ("extent", s.extent)):
            if not x.dtype.is_integer or x.dtype.lanes != 1:
                self.fail(f"loop {what} of dtype {x.dtype}", s)
        if not s.loop_var.dtype.is_integer:
            self.fail(f"loop variable of dtype {s.loop_var.dtype}", s)
        self.scoped([s.loop_var], s, lambda: self.visit(s.body))

    def visit_chain(self, s: S.Stmt) -> None:
        """A chain of LetStmt/AssertStmt/AttrStmt, walked in a loop (a packed function's
        argument checks nest hundreds deep): each head checked and its variable defined in
        turn, then the statement they wrap; the definitions end with the chain."""
        heads, tail = chain_of(s)
        new: List[E.Var] = []
        pushed = 0
        try:
            for h in heads:
                if h is not s:
                    self.stmt_stack.append(h)
                    pushed += 1
                new += self.head(h)
            self.visit(tail)
        finally:
            for v in new:
                self.defined.discard(id(v))
            del self.stmt_stack[len(self.stmt_stack) - pushed:]

    visit_LetStmt = visit_AssertStmt = visit_AttrStmt = visit_chain

    def head(self, s: S.Stmt) -> List[E.Var]:
        """Checks one head of a chain; returns the variables it newly defines."""
        if isinstance(s, S.LetStmt):
            self.visit(s.value)
            if s.var.dtype != s.value.dtype and not (s.var.dtype.is_handle
                                                     and s.value.dtype.is_handle):
                self.fail(f"let binds {s.var.dtype} variable '{s.var.name}' to a "
                          f"{s.value.dtype} value", s)
            vars_ = [s.var]
        elif isinstance(s, S.AttrStmt):
            self.visit(s.value)
            vars_ = [s.node.var] if isinstance(s.node, E.IterVar) else []
        else:
            self.check_cond(s.condition, s)
            self.visit(s.condition)
            for part in s.message:
                if isinstance(part, E.PrimExpr):
                    self.visit(part)
            vars_ = []
        return [v for v in vars_ if self.define(v, s)]

    def visit_Allocate(self, s: S.Allocate) -> None:
        for x in s.buffer.shape:
            self.visit(x)
        if s.condition is not None:
            self.visit(s.condition)
        self.scoped([s.buffer.data], s, lambda: self.visit(s.body))

    def visit_Block(self, b: Block) -> None:
        """A block defines its iteration variables and the data of the buffers it allocates
        or matches, for its regions, init and body."""
        for iv in b.iter_vars:
            self.visit(iv.dom.min)
            self.visit(iv.dom.extent)
        defined = [iv.var for iv in b.iter_vars] + [x.data for x in b.alloc_buffers] + \
            [m.buffer.data for m in b.match_buffers]
        self.scoped(defined, b, lambda: self.generic_visit(b))

    def visit_BufferStore(self, s: S.BufferStore) -> None:
        self.check_access(s.buffer, s.indices, s)
        vd, bd = s.value.dtype, s.buffer.dtype
        lanes = max([i.dtype.lanes for i in s.indices] or [1]) * bd.lanes
        if vd.code != bd.code or vd.bits != bd.bits or vd.lanes != lanes:
            self.fail(f"store of a {vd} value into buffer '{s.buffer.name}' of {bd} "
                      f"({lanes} lanes expected)", s)
        self.generic_visit(s)

    def visit_IfThenElse(self, s: S.IfThenElse) -> None:
        self.check_cond(s.condition, s)
        self.generic_visit(s)

    def visit_While(self, s: S.While) -> None:
        self.check_cond(s.condition, s)
        self.generic_visit(s)

    # ---- functions ---------------------------------------------------------------------------
    def func(self, f: PrimFunc) -> None:
        for p in f.params:
            self.define(p, f)
        for _, buf in f.buffer_map:
            self.define(buf.data, f)
            for x in (*buf.shape, *buf.strides, buf.elem_offset):
                if isinstance(x, E.Var):
                    self.define(x, f)
        self.visit(f.body)


def verify(node: Any, name: Optional[str] = None) -> None:
    """Checks an IRModule or PrimFunc (or a bare statement); raises InternalError on the first
    broken invariant. Returns None when the IR is well formed."""
    if isinstance(node, IRModule):
        for fname, f in node.items():
            verify(f, fname)
        return
    if isinstance(node, PrimFunc):
        _Verifier(name or node.attrs.get("global_symbol", "main")).func(node)
        return

    v = _Verifier(name or "<stmt>")
    for x in free_vars(node):  # a bare statement: its free variables count as defined
        v.define(x, node)
    v.visit(node)
