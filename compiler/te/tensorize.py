"""The loop nest of a tensorized stage (`s[C].tensorize(axis, intrin)`), as TVM's tensorize:
the loops from `axis` inwards are replaced by the intrinsic's statement.

1. Region: with the outer loops fixed at their current values and the tensorized loops over
   their whole range, every root axis covers a range; the trailing axes (data and reduction)
   must cover exactly the intrinsic's axes, the leading ones a single point.
2. Match: the stage's expression, its root axes remapped to the intrinsic's axes (plus the
   region's start) and its reads to the intrinsic's placeholders (indices less the region's
   start), must equal the intrinsic's declared compute; otherwise a ScheduleError shows both.
3. Bind: each buffer the intrinsic's statements use stands for the region of the real tensor:
   its data is the tensor's storage, its elem_offset the region's first element, its strides
   the storage's strides (symbolic strides and offsets of the declared buffer are bound to
   those values; constant ones must agree, a compact buffer needs a contiguous region).
4. Emit: the outer loops, and at the tensorized point the intrinsic's body; when a reduction
   loop stays outside, `reduce_reset` before the outermost such loop and `reduce_update` in
   it (without a reset, the body on the first reduction iteration and the update after).
"""
from __future__ import annotations

from typing import Callable, Dict, List, Tuple

from microruntime import register_func
from microruntime.object_generic import make_map

from ..arith import can_prove, covered_ranges, relax, simplify
from ..ir.errors import ScheduleError
from ..ir.structural_equal import structural_equal
from ..tir import expr as E
from ..tir.buffer import Buffer
from ..tir.functor import IRMutator, substitute
from ..tir.stmt import AttrStmt, IfThenElse, Stmt, seq
from ..tir.transform.storage_flatten import strides_of
from .bound import Bounds
from .compute_stmt import _make_for
from .iter_relation import pass_up_ranges
from .stage import Stage
from .tensor import Tensor, TensorLoad, tensor_loads
from .tensor_compute import TensorComputeOp
from .tensor_intrin import TensorIntrin


def _fail(stage: Stage, intrin: TensorIntrin, msg: str):
    raise ScheduleError(f"tensorize on stage '{stage.name}' with '{intrin.name}': {msg}")


def _equal(a, b) -> bool:
    return can_prove(E.EQ(*E.unify(E.convert(a), E.convert(b))))


# ---- 1. the region of the tensorized loops ---------------------------------------------------
def _region(stage: Stage, bounds: Bounds, outer, inner) -> Dict[E.IterVar, E.Range]:
    dom = bounds.dom
    leaf = {iv: E.Range(iv.var, E.const(1)) for iv in outer}
    leaf.update({iv: E.Range(E.const(0), dom[iv].extent) for iv in inner})
    rng = pass_up_ranges(stage.relations, dom, leaf)
    out = {}
    for iv in list(stage.op.axis) + list(stage.op.reduce_axis):
        r = rng[iv]
        out[iv] = E.Range(simplify(dom[iv].min + r.min), simplify(r.extent))
    return out


def _axis_map(stage, intrin, mine, theirs, region, what: str):
    """Remap of the stage's root axes `mine` onto the intrinsic's `theirs` (trailing)."""
    if len(mine) < len(theirs):
        _fail(stage, intrin, f"the intrinsic has {len(theirs)} {what} axes, the stage only "
                             f"{len(mine)}")
    start = len(mine) - len(theirs)
    vmap: Dict[E.Var, E.PrimExpr] = {}
    for iv in mine[:start]:
        if not _equal(region[iv].extent, 1):
            _fail(stage, intrin, f"{what} axis '{iv.name}' covers {region[iv].extent} elements "
                                 "inside the tensorized loops, but the intrinsic has no axis "
                                 "for it (it must be a single point there)")
        vmap[iv.var] = region[iv].min
    for iv, tv in zip(mine[start:], theirs):
        if not _equal(region[iv].extent, tv.dom.extent):
            _fail(stage, intrin, f"{what} axis '{iv.name}' covers {region[iv].extent} elements "
                                 f"inside the tensorized loops, but the intrinsic's axis "
                                 f"'{tv.name}' has {tv.dom.extent}; split so that the loops "
                                 "from the tensorized one inwards match the intrinsic")
        vmap[iv.var] = tv.var + region[iv].min
    return vmap


# ---- 2. matching the compute --------------------------------------------------------------------
def _input_regions(stage, intrin, expr, region) -> List[Tuple[Tensor, List[E.Range]]]:
    var_ranges = {iv.var: r for iv, r in region.items()}
    order: List[Tensor] = []
    ranges: Dict[Tensor, List[E.Range]] = {}
    for load in tensor_loads(expr):
        t = load.tensor
        cover = covered_ranges(load.indices, var_ranges)
        if any(c is None for c in cover):
            _fail(stage, intrin, f"the region of '{t.name}' read by {load!r} cannot be bounded")
        if t not in ranges:
            order.append(t)
            ranges[t] = cover
        else:
            ranges[t] = [_union(a, b) or _fail(stage, intrin, f"'{t.name}' is read at regions "
                                                              f"{a} and {b}")
                         for a, b in zip(ranges[t], cover)]
    if len(order) != len(intrin.inputs):
        _fail(stage, intrin, f"the stage reads {len(order)} tensors "
                             f"({', '.join(t.name for t in order)}) in the tensorized loops, the "
                             f"intrinsic {len(intrin.inputs)} "
                             f"({', '.join(t.name for t in intrin.inputs)})")
    return [(t, ranges[t]) for t in order]


def _union(a: E.Range, b: E.Range):
    lo = a.min if can_prove(a.min <= b.min) else b.min if can_prove(b.min <= a.min) else None
    ea, eb = simplify(a.min + a.extent), simplify(b.min + b.extent)
    hi = eb if can_prove(ea <= eb) else ea if can_prove(eb <= ea) else None
    if lo is None or hi is None:
        return None
    return E.Range(lo, simplify(hi - lo))


class _ToIntrinsic(IRMutator):
    """Reads of the stage's inputs -> reads of the intrinsic's placeholders, shifted to the
    region's start; root axis variables -> the intrinsic's axes."""

    def __init__(self, inputs: Dict[Tensor, Tuple[Tensor, List[E.Range]]], vmap):
        self.inputs, self.vmap = inputs, vmap

    def visit_Var(self, v):
        return self.vmap.get(v, v)

    visit_SizeVar = visit_Var

    def visit_TensorLoad(self, e: TensorLoad):
        target, rng = self.inputs[e.tensor]
        start = len(rng) - target.ndim
        idx = [self.visit(i - r.min) for i, r in zip(e.indices[start:], rng[start:])]
        return TensorLoad(target, tuple(simplify(i) for i in idx))


def _match(stage, intrin, expr, inputs, vmap) -> None:
    mine = _in_intrinsic_terms(stage, intrin, expr, inputs, vmap)
    # the intrinsic's compute may read the stage's own outer axes (a tail guard): at their
    # values here
    theirs = substitute(intrin.op.body[0], vmap)
    a, b = _simplified(mine), _simplified(theirs)
    if not structural_equal(a, b):
        _fail(stage, intrin, f"the stage computes {a} over the tensorized loops, but the "
                             f"intrinsic declares {b}")


def _in_intrinsic_terms(stage, intrin, expr, inputs, vmap):
    """The stage's expression over the intrinsic's axes and placeholders (a reduction with
    the intrinsic's combiner and axes once the combiners agree)."""
    mine = _ToIntrinsic(inputs, vmap).visit(expr)
    theirs = intrin.op.body[0]
    if mine.dtype != theirs.dtype:
        _fail(stage, intrin, f"the stage computes {mine.dtype}, the intrinsic {theirs.dtype}")
    if isinstance(mine, E.Reduce) != isinstance(theirs, E.Reduce):
        _fail(stage, intrin, f"the stage computes {mine}, the intrinsic declares {theirs}: one "
                             "is a reduction and the other is not")
    if isinstance(mine, E.Reduce):
        c1, c2 = mine.combiner, theirs.combiner
        same = len(c1.result) == len(c2.result) and all(
            structural_equal(substitute(r1, {**dict(zip(c1.lhs, c2.lhs)),
                                             **dict(zip(c1.rhs, c2.rhs))}), r2)
            for r1, r2 in zip(c1.result, c2.result)) and all(
            structural_equal(simplify(a), simplify(b)) for a, b in zip(c1.identity, c2.identity))
        if not same:
            _fail(stage, intrin, "the stage reduces with "
                                 f"{', '.join(str(r) for r in c1.result)}, the intrinsic with "
                                 f"{', '.join(str(r) for r in c2.result)}")
        mine = E.Reduce(c2, mine.source, theirs.axis, mine.condition, mine.value_index,
                        mine.init, mine.dtype)
    return mine


def _simplified(e):
    if isinstance(e, E.Reduce):
        return E.Reduce(e.combiner, tuple(simplify(s) for s in e.source), e.axis,
                        simplify(e.condition), e.value_index, e.init, e.dtype)
    return simplify(e)


# ---- 3. binding the intrinsic's buffers ----------------------------------------------------------
class _Bind(IRMutator):
    def __init__(self, vmap, bmap):
        self.vmap, self.bmap = vmap, bmap

    def visit_Var(self, v):
        return self.vmap.get(v, v)

    visit_SizeVar = visit_Var

    def visit_buffer(self, b):
        return self.bmap.get(b, b)


def _bind_buffer(stage, intrin, declared: Buffer, real: Buffer, begin, extents, vmap, bmap):
    """Binds `declared` (the intrinsic's buffer) to the region [begin, begin + extents) of
    `real`, adding to `vmap` (its symbolic vars) and `bmap` (the buffer -> a view)."""
    name = f"buffer '{declared.name}' of the intrinsic"
    if declared.dtype != real.dtype:
        _fail(stage, intrin, f"{name} is {declared.dtype}, the tensor '{real.name}' "
                             f"{real.dtype}")
    strides = strides_of(real)
    offset = real.elem_offset
    for b, s in zip(begin, strides):
        offset = offset + b * s
    offset = simplify(offset)
    start = len(extents) - declared.ndim
    for d in range(start):
        if not _equal(extents[d], 1):
            _fail(stage, intrin, f"{name} has {declared.ndim} dimensions but the region of "
                                 f"'{real.name}' spans {extents[d]} elements in dimension {d}")
    view_strides = [simplify(s) for s in strides[start:]]
    ext = extents[start:]

    def bind(expr, value, what):
        if isinstance(expr, E.Var):
            vmap[expr] = value
        elif not _equal(substitute(expr, vmap), value):
            _fail(stage, intrin, f"{name} declares {what} {expr} but the region of "
                                 f"'{real.name}' has {value}{_hint(what)}")

    for d, (s, e) in enumerate(zip(declared.shape, ext)):
        bind(s, e, f"the extent of dimension {d} as")
    if declared.strides:
        for d, (s, v) in enumerate(zip(declared.strides, view_strides)):
            bind(s, v, f"the stride of dimension {d} as")
    else:
        compact, acc = [], E.const(1)
        for e in reversed(ext):
            compact.append(acc)
            acc = simplify(acc * e)
        for d, (want, have) in enumerate(zip(reversed(compact), view_strides)):
            if not _equal(want, have):
                _fail(stage, intrin, f"{name} is compact, but the region of '{real.name}' has "
                                     f"the stride {have} in dimension {d} (not {want}); declare "
                                     "its strides with variables, e.g. strides=[te.var('s1'), "
                                     "1]")
    bind(declared.elem_offset, offset, "the element offset as")
    vmap[declared.data] = real.data
    bmap[declared] = Buffer(declared.name, real.data, real.dtype,
                            tuple(substitute(s, vmap) for s in declared.shape),
                            tuple(view_strides), offset, real.scope, real.data_alignment,
                            declared.offset_factor)


def _hint(what: str) -> str:
    if "offset" in what:
        return "; declare the buffer with offset_factor=1 (a symbolic element offset)"
    return ""


# ---- 4. the loop nest ----------------------------------------------------------------------
def make_tensorize_stmt(stage: Stage, exprs: tuple, bounds: Bounds, resolve: Callable,
                        attach: Callable[[Stage, E.IterVar, Stmt], Stmt]) -> Stmt:
    axis, intrin = stage.tensorized
    leaves = list(stage.leaf_iter_vars)
    if axis is None:  # a TensorComputeOp whose intrinsic's axes are points of its own
        axis = len(leaves)
    elif axis not in leaves:
        raise ScheduleError(f"tensorize on stage '{stage.name}': axis '{axis.name}' was split "
                            "or fused after tensorize; tensorize one of the axes that "
                            "split/fuse returned")
    if len(exprs) != 1:
        _fail(stage, intrin, f"the stage has {len(exprs)} outputs; tensorize supports one")
    t = axis if isinstance(axis, int) else leaves.index(axis)
    outer, inner = leaves[:t], leaves[t:]
    marker = seq()
    for iv in inner:
        if attach(stage, iv, marker) is not marker:
            _fail(stage, intrin, f"a stage is computed at loop '{iv.name}', which tensorize "
                                 "replaces; compute it at a loop outside the tensorized one")
    region = _region(stage, bounds, outer, inner)
    _check_in_bounds(stage, intrin, region, bounds)
    op = stage.op
    bvmap: Dict[E.Var, E.PrimExpr] = {}
    if isinstance(op, TensorComputeOp) and intrin is op.intrin and op.regions:
        # computed by its own intrinsic call (TVM's TensorComputeOp): nothing to match; the
        # buffers stand for the call's regions, the scalar parameters take the call's values
        points = {iv.var: region[iv].min for iv in region}
        reads = [(r.tensor, [E.Range(simplify(substitute(x.min, points)),
                                     simplify(substitute(x.extent, points)))
                             for x in r.ranges]) for r in op.regions]
        for param in intrin.scalar_params:
            bvmap[param] = simplify(substitute(op.binding[param], points))
    else:
        vmap = _axis_map(stage, intrin, list(op.axis), list(intrin.op.axis), region, "data")
        vmap.update(_axis_map(stage, intrin, list(op.reduce_axis),
                              list(intrin.op.reduce_axis), region, "reduction"))
        reads = _input_regions(stage, intrin, exprs[0], region)
        inputs = {t_: (p, rng) for (t_, rng), p in zip(reads, intrin.inputs)}
        _match(stage, intrin, exprs[0], inputs, vmap)

    bmap: Dict[Buffer, Buffer] = {}
    for (tensor, rng), declared in zip(reads, intrin.buffers):
        real, offsets = resolve(tensor)
        begin = [simplify(r.min - o) for r, o in zip(rng, offsets)]
        _bind_buffer(stage, intrin, declared, real, begin, [r.extent for r in rng], bvmap,
                     bmap)
    out_tensor = op.outputs[0]
    real, offsets = resolve(out_tensor)
    out_rng = [region[iv] for iv in op.axis]
    _bind_buffer(stage, intrin, intrin.buffers[-1], real,
                 [simplify(r.min - o) for r, o in zip(out_rng, offsets)],
                 [r.extent for r in out_rng], bvmap, bmap)
    binder = _Bind(bvmap, bmap)

    def bound_stmt(s: Stmt, what: str) -> Stmt:
        if s is None:
            _fail(stage, intrin, f"the intrinsic has no {what} (its function returns (body, "
                                 "reduce_reset, reduce_update))")
        return binder.visit(s)

    def loops(ivs, body, with_attach=True):
        for iv in reversed(ivs):
            if with_attach:
                body = attach(stage, iv, body)
            body = _make_for(stage, iv, bounds.dom[iv].extent, body)
        return body

    return _with_pragmas(stage, inner, _nest(stage, intrin, outer, bound_stmt, loops))


def _with_pragmas(stage: Stage, inner, stmt: Stmt) -> Stmt:
    """Pragmas of the replaced loops (e.g. "import_llvm") stay, around the whole nest."""
    for iv in reversed(inner):
        attr = stage.iter_attrs.get(iv)
        for key, value in reversed(attr.pragmas if attr else []):
            stmt = AttrStmt(iv, f"pragma_{key}", value, stmt)
    return stmt


def _nest(stage, intrin, outer, bound_stmt, loops) -> Stmt:
    reduce_outer = [k for k, iv in enumerate(outer) if iv.kind == E.IterKind.REDUCE]
    if not reduce_outer:
        return loops(outer, bound_stmt(intrin.body, "body"))
    p = reduce_outer[0]
    if intrin.reduce_init is not None:
        init_ivs = [iv for iv in outer[p:] if iv.kind != E.IterKind.REDUCE]
        fresh = {iv.var: E.Var(iv.var.name + ".init", iv.var.dtype) for iv in init_ivs}
        init = substitute(loops(init_ivs, bound_stmt(intrin.reduce_init, "reduce_reset"),
                                with_attach=False), fresh)
        update = bound_stmt(intrin.reduce_update, "reduce_update")
    else:
        first = None
        for k in reduce_outer:
            c = outer[k].var.equal(0)
            first = c if first is None else E.logical_and(first, c)
        init = None
        update = IfThenElse(first, bound_stmt(intrin.body, "body (used for the first "
                                                           "reduction iteration when there "
                                                           "is no reduce_reset)"),
                            bound_stmt(intrin.reduce_update, "reduce_update"))
    return loops(outer[:p], seq(init, loops(outer[p:], update)))


def _check_in_bounds(stage, intrin, region, bounds: Bounds) -> None:
    """The intrinsic computes whole tiles: no tile may pass its axis's extent."""
    for iv, r in region.items():
        hi = relax(simplify(r.min + r.extent - 1), bounds.loop_ranges)
        top = simplify(iv.dom.min + iv.dom.extent - 1)
        if hi is None or not can_prove(hi[1] <= top):
            _fail(stage, intrin, f"the tensorized region of axis '{iv.name}' may pass its "
                                 f"extent {iv.dom.extent} (split it by a factor that divides "
                                 "it)")


# ---- TVM's testing hooks of tensorize ----------------------------------------------------------
def infer_tensorize_region(stage: Stage, dom_map):
    """TVM's `test.op.InferTensorizeRegion`: (the range of each root axis of the tensorized
    `stage` inside its tensorized loops, the region each input tensor is read at there), with
    the axis ranges `dom_map` that InferBound gave."""
    if not stage.tensorized:
        raise ScheduleError(f"stage '{stage.name}' is not tensorized")
    axis, intrin = stage.tensorized
    bounds = Bounds()
    bounds.dom = dict(dom_map.items())
    leaves = list(stage.leaf_iter_vars)
    t = leaves.index(axis)
    region = _region(stage, bounds, leaves[:t], leaves[t:])
    reads = _input_regions(stage, intrin, stage.op.body[0], region)
    return make_map(region), make_map({tensor: list(rng) for tensor, rng in reads})


def match_tensorize_body(stage: Stage, out_dom, in_dom, intrin: TensorIntrin):
    """TVM's `test.op.MatchTensorizeBody`: the stage's expressions over the intrinsic's axes
    and placeholders, given the regions infer_tensorize_region found."""
    region = dict(out_dom.items())
    op = stage.op
    vmap = _axis_map(stage, intrin, list(op.axis), list(intrin.op.axis), region, "data")
    vmap.update(_axis_map(stage, intrin, list(op.reduce_axis), list(intrin.op.reduce_axis),
                          region, "reduction"))
    inputs = {tensor: (p, list(rng)) for (tensor, rng), p in zip(in_dom.items(), intrin.inputs)}
    return [_in_intrinsic_terms(stage, intrin, op.body[0], inputs, vmap)]


register_func("test.op.InferTensorizeRegion", infer_tensorize_region, override=True)
register_func("test.op.MatchTensorizeBody", match_tensorize_body, override=True)
