"""Computing with a tensor intrinsic directly, as TVM's TensorComputeOp:

    vadd = te.decl_tensor_intrin(z.op, intrin_func)      # z = x + y over (16,)
    C = te.compute((64, 16), lambda i: vadd(A[i, 0:16], B[i, 0:16]))

`A[i, 0:16]` is a TensorRegion (an index or a slice per dimension); calling a TensorIntrin on
regions (`reduce_axis=` naming the reduction axes the regions use) is a TensorIntrinCall. When
`fcompute` returns one, `compute` makes a TensorComputeOp: a ComputeOp whose axes are the named
leading ones followed by one per axis of the intrinsic's output, whose body is the intrinsic's
compute with its placeholders read through the regions (the call's reduction axes added to the
intrinsic's own), and whose stage is tensorized with the intrinsic at its first inner axis
(the call's reduction axes are ordered before the inner ones). Lowering then emits the
intrinsic's statements as `s[C].tensorize` does (compiler/te/tensorize.py).
"""
from __future__ import annotations

from typing import List, Sequence, Tuple

from ..arith import simplify
from ..ir.errors import IRError
from ..tir import expr as E
from ..tir.functor import IRMutator
from .tensor import ComputeOp, Tensor, TensorLoad, TensorRegion


class TensorIntrinCall:
    """`intrin(*regions, reduce_axis=...)` inside te.compute."""

    def __init__(self, intrin, regions: Sequence[TensorRegion], reduce_axis, scalar_inputs):
        self.intrin = intrin
        self.regions = list(regions)
        self.reduce_axis = tuple(reduce_axis)
        self.scalar_inputs = tuple(scalar_inputs)

    def __repr__(self) -> str:
        return f"{self.intrin.name}({', '.join(map(repr, self.regions))})"


def intrin_call(intrin, args, reduce_axis=None, scalar_inputs=None) -> TensorIntrinCall:
    """What calling a TensorIntrin makes: one region (or whole tensor) per input of the
    intrinsic."""
    if scalar_inputs:
        raise IRError(f"tensor intrinsic '{intrin.name}': scalar_inputs are not supported")
    regions = [a if isinstance(a, TensorRegion) else TensorRegion.whole(a) if
               isinstance(a, Tensor) else _bad_region(intrin, a) for a in args]
    if len(regions) != len(intrin.inputs):
        raise IRError(f"tensor intrinsic '{intrin.name}' takes {len(intrin.inputs)} tensor "
                      f"regions, got {len(regions)}")
    for region, placeholder in zip(regions, intrin.inputs):
        if len(region.ranges) < placeholder.ndim:
            raise IRError(f"tensor intrinsic '{intrin.name}': the region {region!r} has fewer "
                          f"dimensions than its input '{placeholder.name}' "
                          f"({placeholder.ndim})")
        trailing = region.ranges[len(region.ranges) - placeholder.ndim:]
        for r, extent in zip(trailing, placeholder.shape):
            if not _same(r.extent, extent):
                raise IRError(f"tensor intrinsic '{intrin.name}': the region {region!r} does "
                              f"not match the shape of its input '{placeholder.name}' "
                              f"({[str(s) for s in placeholder.shape]})")
    axes = reduce_axis if isinstance(reduce_axis, (list, tuple)) else \
        ([] if reduce_axis is None else [reduce_axis])
    return TensorIntrinCall(intrin, regions, axes, ())


def _bad_region(intrin, arg):
    raise IRError(f"tensor intrinsic '{intrin.name}': arguments are tensor regions "
                  f"(A[i, 0:16]), got {arg!r}")


def _same(a, b) -> bool:
    a, b = E.unify(E.convert(a), E.convert(b))
    d = simplify(a - b)
    return E.is_const_int(d, 0)


class TensorComputeOp(ComputeOp):
    """A ComputeOp computed by a tensor intrinsic (see the module docstring): `intrin`, the
    number of leading axes `outer` (the rest are the intrinsic's), and the reduction axes of
    the call `call_reduce_axis` (the rest are copies of the intrinsic's)."""

    def __init__(self, name, tag, attrs, axis, body, intrin, outer: int, call_reduce_axis):
        super().__init__(name, tag, attrs, axis, body)
        self.intrin = intrin
        self.outer = outer
        self.call_reduce_axis = tuple(call_reduce_axis)

    def schedule_stage(self, stage) -> None:
        """Orders the call's reduction axes before the intrinsic's axes and tensorizes the
        stage at the first of those."""
        inner = list(self.axis[self.outer:])
        inner_reduce = [iv for iv in self.reduce_axis if iv not in self.call_reduce_axis]
        order = list(self.axis[:self.outer]) + list(self.call_reduce_axis) + inner + inner_reduce
        stage.reorder(*order)
        first = (inner + inner_reduce)[0]
        stage.tensorize(first, self.intrin)


class _ThroughRegions(IRMutator):
    """The intrinsic's compute over the real tensors: its axis variables replaced, its
    placeholder reads made reads of the regions."""

    def __init__(self, vmap, regions):
        self.vmap, self.regions = vmap, regions

    def visit_Var(self, v):
        return self.vmap.get(v, v)

    def visit_TensorLoad(self, e: TensorLoad):
        indices = [self.visit(i) for i in e.indices]
        if e.tensor not in self.regions:
            raise IRError(f"the tensor intrinsic reads '{e.tensor.name}', which is not one of "
                          "its inputs")
        region = self.regions[e.tensor]
        lead = len(region.ranges) - len(indices)
        full = [r.min for r in region.ranges[:lead]] + \
            [simplify(r.min + i) for r, i in zip(region.ranges[lead:], indices)]
        return region.tensor(*full)

    def visit_Reduce(self, e: E.Reduce):
        source = tuple(self.visit(s) for s in e.source)
        axes = tuple(self.vmap.get(iv, iv) for iv in e.axis)
        return E.Reduce(e.combiner, source, axes, self.visit(e.condition), e.value_index,
                        tuple(self.visit(i) for i in e.init))


def make_tensor_compute(shape: Tuple[E.PrimExpr, ...], outer_axis: Tuple[E.IterVar, ...],
                        call: TensorIntrinCall, name: str, tag: str, attrs) -> Tensor:
    """The output of a TensorComputeOp of `shape` whose leading axes are `outer_axis`."""
    intrin = call.intrin
    op = intrin.op
    if len(op.outputs) != 1:
        raise IRError(f"tensor intrinsic '{intrin.name}' in compute {name}: intrinsics with "
                      f"{len(op.outputs)} outputs cannot be called in te.compute")
    inner_count = len(op.axis)
    if len(shape) != len(outer_axis) + inner_count:
        raise IRError(f"compute {name}: the shape has {len(shape)} dimensions; the fcompute "
                      f"names {len(outer_axis)} and the intrinsic '{intrin.name}' computes "
                      f"{inner_count} more")
    vmap = {}
    inner: List[E.IterVar] = []
    for iv, extent in zip(op.axis, shape[len(outer_axis):]):
        if not _same(iv.dom.extent, extent):
            raise IRError(f"compute {name}: dimension {len(outer_axis) + len(inner)} has "
                          f"extent {extent}, the intrinsic's axis '{iv.name}' {iv.dom.extent}")
        new = E.IterVar(E.Range(E.make_const(iv.var.dtype, 0), iv.dom.extent),
                        E.Var(iv.var.name, iv.var.dtype))
        inner.append(new)
        vmap[iv.var] = new.var
    for iv in op.reduce_axis:
        new = E.IterVar(iv.dom, E.Var(iv.var.name, iv.var.dtype), iv.kind)
        vmap[iv] = new
        vmap[iv.var] = new.var
    regions = dict(zip(intrin.inputs, call.regions))
    body = _ThroughRegions(vmap, regions).visit(op.body[0])
    if call.reduce_axis:
        if not isinstance(body, E.Reduce):
            raise IRError(f"compute {name}: reduce_axis is given but the intrinsic "
                          f"'{intrin.name}' does not reduce")
        body = E.Reduce(body.combiner, body.source, call.reduce_axis + body.axis,
                        body.condition, body.value_index, body.init)
    axis = tuple(outer_axis) + tuple(inner)
    top = TensorComputeOp(name, tag, attrs, axis, (body,), intrin, len(outer_axis),
                          call.reduce_axis)
    return top.output(0)
