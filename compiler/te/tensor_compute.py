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
from ..tir.functor import IRMutator, substitute
from .tensor import ComputeOp, Tensor, TensorLoad, TensorRegion


class TensorIntrinCall:
    """`intrin(*regions, reduce_axis=...)` inside te.compute. `binding` gives the value of
    each variable of the intrinsic's declaration that the call fixes: a symbolic extent of an
    input (the region's extent there) and each scalar parameter (the scalar input given)."""

    def __init__(self, intrin, regions: Sequence[TensorRegion], reduce_axis, scalar_inputs,
                 binding=None):
        self.intrin = intrin
        self.regions = list(regions)
        self.reduce_axis = tuple(reduce_axis)
        self.scalar_inputs = tuple(scalar_inputs)
        self.binding = dict(binding or {})

    def __repr__(self) -> str:
        return f"{self.intrin.name}({', '.join(map(repr, self.regions))})"


def _as_region(arg):
    """A tensor argument as a region (`T[i, j]` with every index given is the region of that
    one element, as TVM's TensorSlice); None for a scalar argument."""
    if isinstance(arg, TensorRegion):
        return arg
    if isinstance(arg, Tensor):
        return TensorRegion.whole(arg)
    if isinstance(arg, TensorLoad) and len(arg.indices) == arg.tensor.ndim:
        return TensorRegion.of(arg.tensor, list(arg.indices))
    return None


def intrin_call(intrin, args, reduce_axis=None, scalar_inputs=None) -> TensorIntrinCall:
    """What calling a TensorIntrin makes: one region (or whole tensor) per input of the
    intrinsic, in order; the other arguments (or `scalar_inputs`) are the values of its
    scalar parameters, in order."""
    regions, scalars = [], []
    for a in args:
        region = _as_region(a)
        if region is not None:
            regions.append(region)
        elif isinstance(a, (int, float, E.PrimExpr)):
            scalars.append(E.convert(a))
        else:
            _bad_region(intrin, a)
    if scalar_inputs is not None:
        scalars = [E.convert(v) for v in scalar_inputs]
    if len(regions) != len(intrin.inputs):
        raise IRError(f"tensor intrinsic '{intrin.name}' takes {len(intrin.inputs)} tensor "
                      f"regions, got {len(regions)}")
    params = list(intrin.scalar_params)
    if len(scalars) != len(params):
        raise IRError(f"tensor intrinsic '{intrin.name}' takes {len(params)} scalar inputs "
                      f"({', '.join(str(p) for p in params) or 'none'}), got {len(scalars)}")
    binding = dict(zip(params, scalars))
    for region, placeholder in zip(regions, intrin.inputs):
        if len(region.ranges) < placeholder.ndim:
            raise IRError(f"tensor intrinsic '{intrin.name}': the region {region!r} has fewer "
                          f"dimensions than its input '{placeholder.name}' "
                          f"({placeholder.ndim})")
        trailing = region.ranges[len(region.ranges) - placeholder.ndim:]
        for r, extent in zip(trailing, placeholder.shape):
            if isinstance(extent, E.Var) and extent not in binding:
                binding[extent] = r.extent  # a symbolic extent takes the region's
            elif not _same(r.extent, substitute(extent, binding)):
                raise IRError(f"tensor intrinsic '{intrin.name}': the region {region!r} does "
                              f"not match the shape of its input '{placeholder.name}' "
                              f"({[str(s) for s in placeholder.shape]})")
    axes = reduce_axis if isinstance(reduce_axis, (list, tuple)) else \
        ([] if reduce_axis is None else [reduce_axis])
    return TensorIntrinCall(intrin, regions, axes, scalars, binding)


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

    def __init__(self, name, tag, attrs, axis, body, intrin, outer: int, call_reduce_axis,
                 regions=(), binding=None):
        super().__init__(name, tag, attrs, axis, body)
        self.intrin = intrin
        self.outer = outer
        self.call_reduce_axis = tuple(call_reduce_axis)
        self.regions = tuple(regions)  # the regions of the call, one per intrinsic input
        self.binding = dict(binding or {})  # the intrinsic's variables the call fixes

    def bound_loads(self) -> List[TensorLoad]:
        """What bound inference reads: the first and last element of each region of the call
        (as TVM, the regions, not the intrinsic's own reads, say what is needed)."""
        loads = []
        for region in self.regions:
            first = [r.min for r in region.ranges]
            last = [simplify(r.min + r.extent - 1) for r in region.ranges]
            loads += [TensorLoad(region.tensor, tuple(first)),
                      TensorLoad(region.tensor, tuple(last))]
        return loads

    def schedule_stage(self, stage) -> None:
        """Orders the call's reduction axes before the intrinsic's axes and tensorizes the
        stage at the first of those (after the innermost loop when the intrinsic's axes are
        all points of the leading ones)."""
        inner = list(self.axis[self.outer:])
        inner_reduce = [iv for iv in self.reduce_axis if iv not in self.call_reduce_axis]
        order = list(self.axis[:self.outer]) + list(self.call_reduce_axis) + inner + inner_reduce
        if len(order) > 1:
            stage.reorder(*order)
        if inner + inner_reduce:
            stage.tensorize((inner + inner_reduce)[0], self.intrin)
        else:
            stage.tensorized = (None, self.intrin)


class _ThroughRegions(IRMutator):
    """The intrinsic's compute over the real tensors: its axis variables replaced, its
    placeholder reads made reads of the regions."""

    def __init__(self, vmap, regions):
        self.vmap, self.regions = vmap, regions

    def visit_Var(self, v):
        return self.vmap.get(v, v)

    visit_SizeVar = visit_Var

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
    binding = dict(call.binding)
    inner_count = len(shape) - len(outer_axis)
    points = len(op.axis) - inner_count  # leading intrinsic axes held by outer axes
    if inner_count < 0 or points < 0 or points > len(outer_axis):
        raise IRError(f"compute {name}: the shape has {len(shape)} dimensions; the fcompute "
                      f"names {len(outer_axis)} and the intrinsic '{intrin.name}' computes "
                      f"{len(op.axis)}")
    vmap = dict(binding)
    inner: List[E.IterVar] = []
    for k, iv in enumerate(op.axis):
        want = E.const(1) if k < points else shape[len(outer_axis) + k - points]
        if isinstance(iv.dom.extent, E.Var) and iv.dom.extent not in binding:
            binding[iv.dom.extent] = vmap[iv.dom.extent] = want
        if not _same(substitute(iv.dom.extent, binding), want):
            raise IRError(f"compute {name}: dimension {len(outer_axis) + k - points} has "
                          f"extent {want}, the intrinsic's axis '{iv.name}' {iv.dom.extent}")
        if k < points:
            vmap[iv.var] = E.make_const(iv.var.dtype, 0)
            continue
        new = E.IterVar(E.Range(E.make_const(iv.var.dtype, 0), want),
                        E.Var(iv.var.name, iv.var.dtype))
        inner.append(new)
        vmap[iv.var] = new.var
    for iv in op.reduce_axis:
        dom = E.Range(substitute(iv.dom.min, binding), substitute(iv.dom.extent, binding))
        new = E.IterVar(dom, E.Var(iv.var.name, iv.var.dtype), iv.kind)
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
                          call.reduce_axis, call.regions, binding)
    return top.output(0)
