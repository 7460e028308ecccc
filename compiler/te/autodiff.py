"""Reverse-mode differentiation of tensor expressions, as TVM's `te.gradient`.

    grads = te.gradient(out, [A, B], head=ones)   # d(sum(head * out)) / dA, ... / dB

`head` has the shape `prefix + out.shape` (default: the identity of shape `out.shape +
out.shape`, so the result is the full Jacobian); each gradient has the shape `prefix +
input.shape`. The adjoint of every tensor between the inputs and `out` is a new te.compute,
made from the consumers' adjoints (the vector-Jacobian product of each consumer), newest
consumer first:

    adj_T[p, t] = sum over c (and the consumer's own reduction axes k) of
                  adj_C[p, c] * d body_C(c, k) / d T[t]

The derivative of a read `T[f(c)]` with respect to `T[t]` is `f(c) == t ? 1 : 0`, so the
product is never materialised as a Jacobian tensor. A sum reduction differentiates term by
term; a max (min) reduction through the element that won, found by an extra arg-max (arg-min)
stage; a product by the product rule, the product of the other terms from an extra stage;
other reductions, scans and extern operations raise IRError. Derivatives of the math
intrinsics follow calculus (floor, ceil, round, trunc and comparisons are flat: 0).
"""
from __future__ import annotations

from typing import Dict, List, Optional, Sequence

from ..ir.errors import IRError
from ..tir import expr as E
from ..tir.functor import substitute
from .operation import compute, reduce_axis
from .reduction import comm_reducer
from .tensor import ComputeOp, PlaceholderOp, Tensor, TensorLoad

_FLAT = ("tir.floor", "tir.ceil", "tir.round", "tir.trunc", "tir.nearbyint", "tir.isnan",
         "tir.isinf", "tir.isfinite")


def gradient(output: Tensor, inputs, head: Optional[Tensor] = None) -> List[Tensor]:
    """The gradients of `output` with respect to each tensor of `inputs` (see the module
    docstring)."""
    inputs = [inputs] if isinstance(inputs, Tensor) else list(inputs)
    if head is None:
        n = output.ndim
        head = compute(tuple(output.shape) * 2,
                       lambda *i: E.Select(_all_equal(i[:n], i[n:]),
                                           E.make_const(output.dtype, 1),
                                           E.make_const(output.dtype, 0)),
                       name=f"{output.name}.identity")
    prefix = tuple(head.shape[:head.ndim - output.ndim])
    order = _post_order(output)
    reached = _depending_on(order, inputs)
    adjoints: Dict[Tensor, List[Tensor]] = {output: [head]}
    total: Dict[Tensor, Tensor] = {}
    for op in reversed(order):
        if isinstance(op, PlaceholderOp):
            continue
        for t in op.outputs:
            if t in adjoints:
                total[t] = _sum_of(adjoints[t], f"{t.name}.adjoint")
        if not any(t in total for t in op.outputs):
            continue
        if not isinstance(op, ComputeOp):
            raise IRError(f"te.gradient: cannot differentiate through '{op.name}' "
                          f"({type(op).__name__}); only te.compute operations")
        for src in op.input_tensors:
            if src not in reached:
                continue
            for t in op.outputs:
                if t in total:
                    adjoints.setdefault(src, []).append(
                        _vjp(op, t.value_index, src, total[t], prefix))
    grads = []
    for x in inputs:
        if x in adjoints and x not in total:
            total[x] = _sum_of(adjoints[x], f"{x.name}.grad")
        if x in total:
            grads.append(total[x])
        else:
            grads.append(compute(prefix + tuple(x.shape),
                                 lambda *i, x=x: E.make_const(x.dtype, 0),
                                 name=f"{x.name}.grad"))
    return grads


# ---- the graph -----------------------------------------------------------------------------
def _post_order(output: Tensor):
    order, seen = [], set()

    def visit(op):
        if op in seen:
            return
        seen.add(op)
        for t in op.input_tensors:
            visit(t.op)
        order.append(op)

    visit(output.op)
    return order


def _depending_on(order, inputs) -> set:
    """The tensors of `order` that depend on one of `inputs` (the inputs included)."""
    reached = set(inputs)
    for op in order:
        if any(t in reached for t in op.input_tensors):
            reached.update(op.outputs)
    return reached


def _sum_of(tensors: Sequence[Tensor], name: str) -> Tensor:
    if len(tensors) == 1:
        return tensors[0]
    first = tensors[0]

    def add(*i):
        value = first(*i)
        for t in tensors[1:]:
            value = value + t(*i)
        return value

    return compute(first.shape, add, name=name)


def _all_equal(a, b) -> E.PrimExpr:
    cond = E.const(True)
    for x, y in zip(a, b):
        cond = E.logical_and(cond, E.EQ(*E.unify(E.convert(x), E.convert(y))))
    return cond


# ---- one vector-Jacobian product -------------------------------------------------------------
def _vjp(op: ComputeOp, index: int, src: Tensor, adj: Tensor, prefix) -> Tensor:
    """The contribution of output `index` of `op` to the adjoint of `src`."""
    body = op.body[index]
    c_axes = [reduce_axis((iv.dom.min, iv.dom.min + iv.dom.extent), f"{iv.var.name}.c")
              for iv in op.axis]
    cmap = {iv.var: rc.var for iv, rc in zip(op.axis, c_axes)}

    def contribution(*idx):
        p, t = idx[:len(prefix)], idx[len(prefix):]
        adj_value = adj(*(tuple(p) + tuple(rc.var for rc in c_axes)))
        if isinstance(body, E.Reduce):
            term, axes = _reduce_term(op, body, src, t, cmap)
        else:
            term, axes = _derivative(substitute(body, cmap), src, t), []
        if term is None:
            return E.make_const(src.dtype, 0)
        return _sum(adj_value * term, c_axes + axes)

    return compute(prefix + tuple(src.shape), contribution,
                   name=f"{op.name}.d_{src.name}")


def _sum(value, axes):
    return E.Reduce(_SUM(value.dtype), (value,), tuple(axes), E.const(True), 0, (),
                    value.dtype)


def _SUM(dtype) -> E.CommReducer:  # noqa: N802
    x, y = E.Var("x", dtype), E.Var("y", dtype)
    return E.CommReducer((x,), (y,), (x + y,), (E.make_const(dtype, 0),))


def _reducer_kind(comb: E.CommReducer) -> str:
    if len(comb.result) != 1:
        return "tuple"
    r, x, y = comb.result[0], comb.lhs[0], comb.rhs[0]
    pair = {id(getattr(r, "a", None)), id(getattr(r, "b", None))}
    if pair != {id(x), id(y)}:
        return "other"
    return {E.Add: "sum", E.Max: "max", E.Min: "min", E.Mul: "prod"}.get(type(r), "other")


def _reduce_term(op, body: E.Reduce, src, t, cmap):
    kind = _reducer_kind(body.combiner)
    source = substitute(body.source[body.value_index], cmap)
    cond = substitute(body.condition, cmap)
    if kind == "sum":
        k_axes = [reduce_axis((substitute(iv.dom.min, cmap),
                               substitute(iv.dom.min + iv.dom.extent, cmap)),
                              f"{iv.var.name}.k") for iv in body.axis]
        kmap = {iv.var: nk.var for iv, nk in zip(body.axis, k_axes)}
        d = _derivative(substitute(source, kmap), src, t)
        if d is None:
            return None, []
        if not E.is_const_int(cond, 1):
            d = E.Select(substitute(cond, kmap), d, E.make_const(d.dtype, 0))
        return d, k_axes
    if kind == "prod":
        # d prod_k g_k = sum_j dg_j * prod_{k != j} g_k, the product of the others from a stage
        # of its own (indexed by the output element and j)
        others = _exclusive_product(op, body)
        j_axes = [reduce_axis((substitute(iv.dom.min, cmap),
                               substitute(iv.dom.min + iv.dom.extent, cmap)),
                              f"{iv.var.name}.j") for iv in body.axis]
        jmap = {iv.var: nj.var for iv, nj in zip(body.axis, j_axes)}
        d = _derivative(substitute(source, jmap), src, t)
        if d is None:
            return None, []
        d = d * others(*(list(cmap.values()) + [nj.var - substitute(iv.dom.min, cmap)
                                                 for iv, nj in zip(body.axis, j_axes)]))
        if not E.is_const_int(cond, 1):
            d = E.Select(substitute(cond, jmap), d, E.make_const(d.dtype, 0))
        return d, j_axes
    if kind in ("max", "min"):
        winner = _arg_extreme(op, body, kind)
        kmap = {iv.var: winner[j](*cmap.values()) for j, iv in enumerate(body.axis)}
        return _derivative(substitute(source, kmap), src, t), []
    raise IRError(f"te.gradient: cannot differentiate the reduction of '{op.name}' "
                  "(only sum, max and min reductions)")


def _exclusive_product(op, body: E.Reduce) -> Tensor:
    """others[c, j] = the product over the reduction axes k != j of the reduced expression of
    `op` at element c (indexed by the output's axes, then the reduction axes from 0)."""
    one = body.combiner.identity[0]

    def fcompute(*idx):
        c, j = idx[:len(op.axis)], idx[len(op.axis):]
        vmap = {iv.var: v for iv, v in zip(op.axis, c)}
        axes = [reduce_axis((substitute(iv.dom.min, vmap),
                             substitute(iv.dom.min + iv.dom.extent, vmap)),
                            f"{iv.var.name}.o") for iv in body.axis]
        kmap = {iv.var: a.var for iv, a in zip(body.axis, axes)}
        value = substitute(substitute(body.source[body.value_index], vmap), kmap)
        cond = substitute(substitute(body.condition, vmap), kmap)
        at_j = _all_equal([a.var for a in axes],
                          [jj + substitute(iv.dom.min, vmap) for jj, iv in zip(j, body.axis)])
        skip = at_j if E.is_const_int(cond, 1) else E.logical_or(at_j, E.logical_not(cond))
        return E.Reduce(body.combiner, (E.Select(skip, one, value),), tuple(axes),
                        E.const(True), 0, (), value.dtype)

    shape = tuple(iv.dom.extent for iv in op.axis) + tuple(iv.dom.extent for iv in body.axis)
    return compute(shape, fcompute, name=f"{op.name}.others")


def _arg_extreme(op, body: E.Reduce, kind: str) -> List[Tensor]:
    """Per element of `op`, the reduction indices where its max (min) reduction is reached."""
    better = E.GE if kind == "max" else E.LE

    def combine(lhs, rhs):
        take = better(lhs[0], rhs[0])
        return (E.Select(take, lhs[0], rhs[0]),) + tuple(
            E.Select(take, a, b) for a, b in zip(lhs[1:], rhs[1:]))

    def identity(*dtypes):
        ident = body.combiner.identity[0]
        return (ident,) + tuple(E.make_const(d, 0) for d in dtypes[1:])

    arg = comm_reducer(combine, identity, name=f"arg{kind}")
    n = len(op.axis)

    def fcompute(*c):
        vmap = {iv.var: v for iv, v in zip(op.axis, c)}
        axes = [reduce_axis((iv.dom.min, iv.dom.min + iv.dom.extent), f"{iv.var.name}.a")
                for iv in body.axis]
        kmap = {iv.var: a.var for iv, a in zip(body.axis, axes)}
        value = substitute(substitute(body.source[body.value_index], vmap), kmap)
        cond = substitute(substitute(body.condition, vmap), kmap)
        return arg((value,) + tuple(a.var for a in axes), axis=axes,
                   where=None if E.is_const_int(cond, 1) else cond)

    out = compute(tuple(iv.dom.extent for iv in op.axis[:n]), fcompute,
                  name=f"{op.name}.arg{kind}")
    return out[1:]


# ---- derivatives of expressions ------------------------------------------------------------
def _derivative(e, src: Tensor, t) -> Optional[E.PrimExpr]:
    """d e / d src[t], or None where it is 0."""
    return _Derivative(src, t).d(e)


class _Derivative:
    def __init__(self, src: Tensor, t):
        self.src, self.t = src, t

    def d(self, e):
        method = getattr(self, f"d_{type(e).__name__}", None)
        if method is None:
            raise IRError(f"te.gradient: cannot differentiate {type(e).__name__} ({e})")
        return method(e)

    def _zero(self, e):
        return None

    d_IntImm = d_FloatImm = d_StringImm = d_Var = d_SizeVar = _zero
    d_EQ = d_NE = d_LT = d_LE = d_GT = d_GE = d_And = d_Or = d_Not = _zero
    d_FloorDiv = d_FloorMod = d_Mod = _zero  # integer index arithmetic

    def d_TensorLoad(self, e: TensorLoad):
        if e.tensor != self.src:
            return None
        return E.Select(_all_equal(e.indices, self.t), E.make_const(e.dtype, 1),
                        E.make_const(e.dtype, 0))

    def d_Cast(self, e: E.Cast):
        if not e.dtype.is_float:
            return None
        da = self.d(e.value)
        return None if da is None else E.cast(e.dtype, da)

    def d_Add(self, e):
        return _add(self.d(e.a), self.d(e.b))

    def d_Sub(self, e):
        da, db = self.d(e.a), self.d(e.b)
        return da if db is None else (-db if da is None else da - db)

    def d_Mul(self, e):
        da, db = self.d(e.a), self.d(e.b)
        return _add(None if da is None else da * e.b, None if db is None else e.a * db)

    def d_Div(self, e):
        if not e.dtype.is_float:
            return None
        da, db = self.d(e.a), self.d(e.b)
        left = None if da is None else da / e.b
        right = None if db is None else -(e.a * db) / (e.b * e.b)
        return _add(left, right)

    def d_Max(self, e):
        return self._choose(E.GE(e.a, e.b), e.a, e.b)

    def d_Min(self, e):
        return self._choose(E.LE(e.a, e.b), e.a, e.b)

    def _choose(self, cond, a, b):
        da, db = self.d(a), self.d(b)
        if da is None and db is None:
            return None
        zero = E.make_const(a.dtype, 0)
        return E.Select(cond, zero if da is None else da, zero if db is None else db)

    def d_Select(self, e):
        return self._choose(e.condition, e.true_value, e.false_value)

    def d_Let(self, e):
        return self.d(substitute(e.body, {e.var: e.value}))

    def d_Call(self, e: E.Call):
        if e.op in _FLAT:
            return None
        if e.op == "tir.if_then_else":
            return self._choose(e.args[0], e.args[1], e.args[2])
        a = e.args[0] if e.args else None
        da = self.d(a) if a is not None else None
        one = E.make_const(e.dtype, 1)
        rules = {
            "tir.exp": lambda: e,
            "tir.log": lambda: one / a,
            "tir.sqrt": lambda: one / (E.make_const(e.dtype, 2) * e),
            "tir.sigmoid": lambda: e * (one - e),
            "tir.tanh": lambda: one - e * e,
            "tir.fabs": lambda: E.Select(a >= E.make_const(a.dtype, 0), one, -one),
            "tir.abs": lambda: E.Select(a >= E.make_const(a.dtype, 0), one, -one),
            "tir.sin": lambda: E.Call(e.dtype, "tir.cos", (a,)),
            "tir.cos": lambda: -E.Call(e.dtype, "tir.sin", (a,)),
            "tir.rsqrt": lambda: E.make_const(e.dtype, -0.5) * e / a,
        }
        if e.op == "tir.pow":
            base, power = e.args
            db = self.d(power)
            left = None if da is None else e * power / base * da
            right = None if db is None else e * E.Call(e.dtype, "tir.log", (base,)) * db
            return _add(left, right)
        if e.op not in rules:
            raise IRError(f"te.gradient: cannot differentiate the call {e.op} ({e})")
        if not e.dtype.is_float or da is None:
            return None
        return rules[e.op]() * da

    def d_Reduce(self, e):
        raise IRError("te.gradient: a reduction nested in an expression cannot be "
                      "differentiated; compute it in a stage of its own")


def _add(a, b):
    if a is None:
        return b
    if b is None:
        return a
    return a + b
