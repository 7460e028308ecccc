"""GPU launch scopes in a scheduled loop nest (the last step of schedule → PrimFunc).

1. One launch axis per tag: a stage computed inside a thread-bound loop may bind its own axes
   to the same tag (a shared tile loaded cooperatively by the threads of the block computing
   it). The hardware index is one, so the inner loop is not a loop: its variable becomes the
   enclosing loop's variable. Equal extents: the body as it is; a smaller inner extent: the
   body runs on the first `extent` threads (`if tx < extent`); a larger one is a ScheduleError
   (split that axis by the enclosing extent first).

       for tx in range(64):  # threadIdx.x            for tx in range(64):  # threadIdx.x
         for k in range(32):  # threadIdx.x    →         if tx < 32: S[k := tx] = ...
           S[k] = ...

2. Loops of one threadIdx tag that follow each other in a kernel (stages computed one after
   another in a block) share the largest extent; a smaller one guards its body by `tx < ext`.

Barriers between the threads' shared-memory writes and reads are placed later, on the device
kernels (compiler/tir/transform/thread_sync.py).
"""
from __future__ import annotations

from typing import Dict, List, Tuple

from ..arith import can_prove, simplify
from ..ir.errors import ScheduleError
from ..tir import expr as E
from ..tir.functor import IRMutator, IRVisitor, substitute
from ..tir.stmt import For, ForKind, IfThenElse, Stmt


def _tag(loop: For) -> str:
    return loop.thread_binding.thread_tag if loop.thread_binding is not None else ""


class _MergeThreadLoops(IRMutator):
    def __init__(self):
        self.scope: Dict[str, Tuple[E.Var, E.PrimExpr]] = {}

    def visit_For(self, loop: For):
        tag = _tag(loop)
        if loop.kind == ForKind.SERIAL and E.is_const_int(simplify(loop.extent), 1):
            return self.visit(substitute(loop.body, {loop.loop_var: loop.min}))
        if loop.kind != ForKind.THREAD_BINDING or not tag or tag == "vthread":
            return self.generic_visit(loop)
        if tag in self.scope:
            outer_var, outer_ext = self.scope[tag]
            # an int64 axis (a symbolic dim fused in) bound to the int32 launch index reads it
            # widened
            index = outer_var if outer_var.dtype == loop.loop_var.dtype else \
                E.Cast(loop.loop_var.dtype, outer_var)
            body = self.visit(substitute(loop.body, {loop.loop_var: index}))
            ext = simplify(loop.extent)
            if ext.dtype != outer_var.dtype:
                ext = simplify(E.Cast(outer_var.dtype, ext))
            if can_prove(E.EQ(ext, E.convert(outer_ext))):
                return body
            if can_prove(E.LT(ext, E.convert(outer_ext))):
                return IfThenElse(E.LT(outer_var, ext), body)
            raise ScheduleError(f"loop '{loop.loop_var.name}' is bound to {tag} with extent "
                                f"{ext} inside a loop bound to {tag} with extent {outer_ext}; "
                                "the inner extent must not exceed the enclosing one (split the "
                                "axis by it before binding)")
        self.scope[tag] = (loop.loop_var, simplify(loop.extent))
        try:
            return self.generic_visit(loop)
        finally:
            del self.scope[tag]


def _thread_loops(stmt: Stmt, out: List[For]) -> None:
    """The outermost threadIdx loops under `stmt` (not those nested in another one)."""
    class V(IRVisitor):
        def visit_For(self, loop):
            if loop.kind == ForKind.THREAD_BINDING and _tag(loop).startswith("threadIdx"):
                out.append(loop)
                return
            self.generic_visit(loop)

    V().visit(stmt)


class _EvenSiblings(IRMutator):
    """In a kernel (under a blockIdx loop), loops of one threadIdx tag that follow each other
    (stages computed one after the other in the block) share one launch extent: the largest;
    a smaller one runs its body on the first `extent` threads."""

    def visit_For(self, loop: For):
        if loop.kind != ForKind.THREAD_BINDING or not _tag(loop).startswith("blockIdx"):
            return self.generic_visit(loop)
        loops: List[For] = []
        _thread_loops(loop.body, loops)
        widest: Dict[str, E.PrimExpr] = {}
        for t in loops:
            ext = simplify(t.extent)
            old = widest.get(_tag(t))
            if old is None or can_prove(E.LT(E.convert(old), ext)):
                widest[_tag(t)] = ext
        evened = {}
        for t in loops:
            ext, top = simplify(t.extent), widest[_tag(t)]
            if not can_prove(E.EQ(ext, E.convert(top))):
                if not can_prove(E.LT(ext, E.convert(top))):
                    raise ScheduleError(f"loops bound to {_tag(t)} in one kernel have extents "
                                        f"{ext} and {top}, which cannot be ordered; give "
                                        "them constant extents")
                evened[id(t)] = For(t.loop_var, t.min, top, t.kind,
                                    IfThenElse(E.LT(t.loop_var, ext), t.body),
                                    t.thread_binding, t.annotations)
        if not evened:
            return loop

        class R(IRMutator):
            def visit_For(self, f):
                return evened.get(id(f)) or self.generic_visit(f)

        return R().visit(loop)


def finish_thread_scopes(body: Stmt) -> Stmt:
    """`body` with nested loops of one launch tag merged and sibling ones given one extent (see
    the module doc); a body without thread-bound loops comes back unchanged."""
    body = _MergeThreadLoops().visit(body)
    return _EvenSiblings().visit(body)
