"""HybridOp: an operation whose outputs a statement computes (what a hybrid script parses to,
`compiler/te/hybrid/`).

The statement stores into the tensors `output_placeholders` (one placeholder per
`output_tensor` of the script) with ProducerStore, reads tensors with TensorLoad (the kind of
ProducerLoad) and holds its own scratch tensors in ProducerRealize. Every loop of the statement
is an axis of the operation (outermost first, in source order), so a schedule can split, fuse,
reorder, annotate and bind them; lowering (`hybrid_stmt.py`) applies that schedule to the loops
and gives the tensors their buffers. Like an extern stage, a hybrid stage is computed whole at
the root and reads its inputs whole.
"""
from __future__ import annotations

from typing import Any, Dict, List, Optional, Sequence, Tuple

from ..tir import expr as E
from ..tir.functor import IRVisitor
from ..tir.stmt import For, Stmt
from .tensor import Operation, Tensor, TensorLoad, op_attrs

# Primitives a hybrid stage refuses, and why.
_REFUSED = {
    "compute_at": "a hybrid stage is one statement computed whole at the root",
    "compute_inline": "a hybrid stage is a statement, not an expression to inline",
    "storage_align": "a hybrid stage's outputs are stored whole as the script declares them",
    "double_buffer": "a hybrid stage's outputs are stored whole as the script declares them",
    "tensorize": "a hybrid stage's loops are the script's own statements",
}


class _Loops(IRVisitor):
    def __init__(self):
        self.loops: List[For] = []

    def visit_For(self, s: For) -> None:
        self.loops.append(s)
        self.generic_visit(s)


def gather_loops(body: Stmt) -> List[For]:
    """Every For of `body`, outermost first and in source order."""
    v = _Loops()
    v.visit(body)
    return v.loops


class _Reads(IRVisitor):
    def __init__(self):
        self.tensors: List[Tensor] = []

    def visit_TensorLoad(self, e: TensorLoad) -> None:
        if e.tensor not in self.tensors:
            self.tensors.append(e.tensor)
        self.generic_visit(e)


class HybridOp(Operation):
    """Outputs `output_placeholders` computed by `body`; `inputs` are the tensors given to the
    script (those the body reads are `input_tensors`)."""

    def __init__(self, name: str, tag: str, attrs: Optional[Dict[str, Any]],
                 inputs: Sequence[Tensor], output_placeholders: Sequence[Tensor], body: Stmt):
        self.name, self.tag, self.attrs = name, tag, op_attrs(attrs)
        self.inputs = list(inputs)
        self.output_placeholders = list(output_placeholders)
        self.body = body
        self.axis: Tuple[E.IterVar, ...] = tuple(
            E.IterVar(E.Range(s.min, s.extent), s.loop_var) for s in gather_loops(body))
        self.reduce_axis: Tuple[E.IterVar, ...] = ()
        n = len(self.output_placeholders)
        names = [name] if n == 1 else [f"{name}.v{i}" for i in range(n)]
        self.outputs = [Tensor(self, i, p.shape, p.dtype, names[i])
                        for i, p in enumerate(self.output_placeholders)]

    @property
    def input_tensors(self) -> List[Tensor]:
        """The inputs the body reads, in the order it first reads them."""
        reads = _Reads()
        reads.visit(self.body)
        return [t for t in reads.tensors if t in self.inputs]

    def refuses(self, prim: str) -> Optional[str]:
        return _REFUSED.get(prim)
