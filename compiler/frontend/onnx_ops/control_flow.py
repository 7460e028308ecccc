"""Control flow: If and Loop. Their subgraphs may read any value of the enclosing graphs.

If: with a condition known while importing, the importer converts the branch taken in place
(Importer.take_branch; the model stays a plain graph, which the graph executor runs too, and
what is known of the branch's outputs stays known); with a condition computed at
run time, the node becomes a graph-level If whose branches are the converted subgraphs, which
only the Relax VM runs (compiler.relax.build). When the two branches give tensors of the same
rank but different dims, the result is cast to a shape with a fresh symbolic dim where they
differ, so the operators after it still know its rank and dims.

Loop: a module-level function that runs the body once and calls itself for the next
iteration (the VM compiles that call as a jump, so any number of iterations runs in one
frame); the run-time values and weights the body reads from the enclosing graphs are passed
to it. A loop-carried value whose dims the body changes (a concatenation that grows) gets
symbolic dims there. Scan outputs are not supported.
"""
from __future__ import annotations

import re

import numpy as np
import onnx

from ...relax import expr as X
from ...relax import op as R
from ...relax import shape_util as su
from ...relax.struct_info import FuncStructInfo, TensorStructInfo, TupleStructInfo
from ...tir import expr as E
from .common import converter


@converter("If")
def _if(ctx):
    then_graph, else_graph = ctx.graph_attr("then_branch"), ctx.graph_attr("else_branch")
    if len(then_graph.output) != len(else_graph.output):
        raise ctx.error(f"the branches have {len(then_graph.output)} and "
                        f"{len(else_graph.output)} outputs; they must have the same number")
    if len(then_graph.output) != ctx.num_outputs:
        raise ctx.error(f"the node has {ctx.num_outputs} outputs but its branches "
                        f"{len(then_graph.output)}")
    # (a condition known while importing: the importer takes the branch, Importer.take_branch)
    cond = _scalar_condition(ctx)
    then_seq, else_seq = ctx.subgraph(then_graph), ctx.subgraph(else_graph)
    result = ctx.emit(X.If(cond, then_seq, else_seq))
    n = len(then_graph.output)
    outs = [result] if n == 1 else [ctx.emit(X.TupleGetItem(result, i)) for i in range(n)]
    then_si, else_si = _fields(then_seq.body.struct_info, n), _fields(else_seq.body.struct_info, n)
    return [_refined(ctx, o, a, b, i) for i, (o, a, b) in enumerate(zip(outs, then_si, else_si))]


def _scalar_condition(ctx) -> X.Expr:
    s = ctx.sinfo(0)
    if s.dtype != "bool":
        raise ctx.error(f"the condition must be a bool tensor, got {s.dtype}")
    shape = ctx.shape(0)
    if not all(isinstance(d, int) for d in shape) or int(np.prod(shape, dtype=np.int64)) != 1:
        dims = ", ".join(su.dim_str(d) for d in shape)
        raise ctx.error(f"the condition must have exactly one element, got shape ({dims})")
    cond = ctx.input(0)
    return cond if not shape else ctx.emit(R.reshape(cond, ()))


def _fields(sinfo, n: int) -> list:
    if n == 1:
        return [sinfo]
    return list(sinfo.fields) if isinstance(sinfo, TupleStructInfo) else [None] * n


def _refined(ctx, value: X.Expr, a, b, index: int) -> X.Expr:
    """`value` (output `index` of the If) cast to the dims both branches agree on, with a
    fresh symbolic dim where they differ, when merging the branches lost its shape."""
    s = value.struct_info
    if not (isinstance(s, TensorStructInfo) and s.shape is None and
            isinstance(a, TensorStructInfo) and isinstance(b, TensorStructInfo)):
        return value
    if a.dtype != b.dtype:
        raise ctx.error(f"output {index}: the branches give {a.dtype} and {b.dtype}; they must "
                        "give one type")
    if a.shape is None or b.shape is None or a.ndim != b.ndim:
        return value
    dims = []
    for k, (da, db) in enumerate(zip(a.shape, b.shape)):
        same = da == db if isinstance(da, int) and isinstance(db, int) else su.equal(da, db)
        dims.append(da if same else E.Var(_ident("if", f"{ctx.name}_out{index}_dim{k}"), "int64"))
    return ctx.match_cast(value, TensorStructInfo(tuple(dims), a.dtype))


def _ident(prefix: str, name: str) -> str:
    """`prefix` and the node's name as an identifier."""
    return "_".join(p for p in [prefix] + re.split(r"[^0-9A-Za-z]+", name) if p)


# ---- Loop ----------------------------------------------------------------------------------
def _graph_reads(graph) -> list:
    """The names a graph's nodes (and their subgraphs') read that the graph does not define,
    in first-read order: what it takes from the enclosing graphs."""
    defined = {i.name for i in graph.input} | {t.name for t in graph.initializer}
    out, seen = [], set()
    for node in graph.node:
        reads = [n for n in node.input if n]
        for a in node.attribute:
            subs = [a.g] if a.type == onnx.AttributeProto.GRAPH else \
                list(a.graphs) if a.type == onnx.AttributeProto.GRAPHS else []
            for sub in subs:
                reads += _graph_reads(sub)
        for n in reads:
            if n not in defined and n not in seen:
                seen.add(n)
                out.append(n)
        defined.update(o for o in node.output if o)
    return out


def _counter_sinfo(dtype: str) -> TensorStructInfo:
    return TensorStructInfo((1,), dtype)


@converter("Loop")
def _loop(ctx):
    """Loop(M, cond, v...) with body(i, cond, v...) -> (cond, v..., scans...): a module-level
    function `loop(i, cond, v..., captured...)` that runs the body and calls itself while
    `cond and i < M`, returning the loop-carried values; the values the body reads from the
    enclosing graphs are passed to it (captured). The counter, the condition and M travel as
    1-element tensors (the body sees them 0-d). Scan outputs are not supported."""
    body = ctx.graph_attr("body")
    n_carried = ctx.num_inputs - 2
    if n_carried < 1:
        raise ctx.unsupported("a loop without loop-carried values")
    if len(body.input) != n_carried + 2 or len(body.output) < n_carried + 1:
        raise ctx.error(f"the body has {len(body.input)} inputs and {len(body.output)} outputs "
                        f"for {n_carried} loop-carried values; it must take (iteration, "
                        "condition, values...) and give (condition, values..., scans...)")
    if len(body.output) > n_carried + 1:
        raise ctx.unsupported(f"{len(body.output) - n_carried - 1} scan output(s) (outputs "
                              "stacked over the iterations)")
    carried = [ctx.input(2 + k) for k in range(n_carried)]
    sinfos = [_carried_sinfo(ctx, v, k) for k, v in enumerate(carried)]
    captured = _captured(ctx, body)
    trip = _trip_count(ctx)
    if trip is not None and not isinstance(trip, X.Constant):
        captured.append(("", trip))
    gv = ctx.add_function(_ident("loop", ctx.name))
    rets = sinfos
    func, changed = _loop_function(ctx, gv, body, sinfos, rets, captured, trip)
    if changed is not None:
        # again, the dims the body changes symbolic in the parameters and unknown in the
        # result (each iteration has its own)
        rets = [c if c is s else TensorStructInfo(None, c.dtype, c.ndim)
                for s, c in zip(sinfos, changed)]
        gv = X.GlobalVar(gv.name_hint)   # the same function, its new signature
        func, _ = _loop_function(ctx, gv, body, changed, rets, captured, trip, relaxed=True)
        sinfos = changed
    ctx.define(gv, func)
    cond = ctx.input(1) if ctx.has(1) else X.const(np.asarray([True]), "bool")
    cond = _as_counter(ctx, cond, "the initial condition")
    args = [X.const(np.asarray([0], dtype=np.int64), "int64"), cond] + carried + \
        [e for _, e in captured]
    result = ctx.emit(X.Call(gv, tuple(args)))
    outs = [result] if n_carried == 1 else \
        [ctx.emit(X.TupleGetItem(result, k)) for k in range(n_carried)]
    return [o if r.shape is not None else _cast_result(ctx, o, s, k)
            for k, (o, r, s) in enumerate(zip(outs, rets, sinfos))]


def _cast_result(ctx, value, sinfo, k):
    """A loop result whose dims changed over the iterations, cast to fresh symbolic dims
    there (the dims the iterations keep stay)."""
    dims = [d if isinstance(d, int) or not d.name.startswith(_CHANGED) else
            E.Var(_ident("loop", f"{ctx.name}_out{k}_dim{j}"), "int64")
            for j, d in enumerate(sinfo.shape)]
    return ctx.match_cast(value, TensorStructInfo(tuple(dims), sinfo.dtype))


def _carried_sinfo(ctx, value, k) -> TensorStructInfo:
    s = value.struct_info
    if not isinstance(s, TensorStructInfo) or s.shape is None:
        raise ctx.unsupported(f"loop-carried value {k} of struct info {s} (a tensor of known "
                              "rank is needed)")
    return s


def _captured(ctx, body) -> list:
    """(name, expression) of the run-time values (and weights) the body reads from the
    enclosing graphs; constants and symbolic shape values are read as they are."""
    out = []
    for name in _graph_reads(body):
        value = ctx.outer_value(name)
        if value is None:
            raise ctx.error(f"the body reads {name!r}, which no enclosing graph defines")
        if value.sym is not None or (not value.weight and (
                value.known is not None or isinstance(value.expr, X.Constant))):
            continue
        expr = ctx.outer_expr(name)
        if isinstance(expr, X.Constant):
            continue
        out.append((name, expr))
    return out


def _trip_count(ctx):
    """M as a [1] int64 expression (a constant when known), or None when absent."""
    if not ctx.has(0):
        return None
    if ctx.is_known(0):
        m = np.asarray(ctx.const(0)).reshape(-1)
        if m.size != 1:
            raise ctx.error(f"the trip count must have one element, got {m.size}")
        return X.const(np.asarray([int(m[0])], dtype=np.int64), "int64")
    m = _as_counter(ctx, ctx.input(0), "the trip count")
    if m.struct_info.dtype != "int64":
        raise ctx.error(f"the trip count must be int64, got {m.struct_info.dtype}")
    return m


def _as_counter(ctx, value, what: str):
    """`value` (one element) as a [1] tensor."""
    s = value.struct_info
    if not _one_element(s):
        raise ctx.error(f"{what} must be a tensor of one element, got {s}")
    return value if tuple(s.shape) == (1,) else ctx.emit(R.reshape(value, (1,)))


def _one_element(s) -> bool:
    return isinstance(s, TensorStructInfo) and s.shape is not None and \
        all(isinstance(d, int) for d in s.shape) and int(np.prod(s.shape, dtype=np.int64)) == 1


def _loop_function(ctx, gv, body, sinfos, rets, captured, trip, relaxed=False):
    """The loop's function for loop-carried values of struct info `sinfos` (results `rets`),
    and None, or the struct infos to try again with when the body's results have other dims
    (`relaxed`: the dims are already symbolic where they change)."""
    i = X.Var("iteration", _counter_sinfo("int64"))
    cond = X.Var("cond", _counter_sinfo("bool"))
    vs = [X.Var(f"v{k}", s) for k, s in enumerate(sinfos)]
    caps = [X.Var(name or "trip_count", e.struct_info) for name, e in captured]
    ret = rets[0] if len(rets) == 1 else TupleStructInfo(rets)
    X.set_struct_info(gv, FuncStructInfo([v.struct_info for v in [i, cond] + vs + caps], ret))
    head = []

    def bind(name, value, dtype, shape=(1,)):
        var = X.Var(name, TensorStructInfo(shape, dtype))
        head.append(X.VarBinding(var, value))
        return var

    i0 = bind("iteration0", R.reshape(i, ()), "int64", ())
    c0 = bind("cond0", R.reshape(cond, ()), "bool", ())
    inputs = {body.input[0].name: i0, body.input[1].name: c0}
    inputs.update({body.input[2 + k].name: v for k, v in enumerate(vs)})
    inputs.update({name: c for (name, _), c in zip(captured, caps) if name})
    seq = ctx.subgraph(body, inputs)
    outs = list(seq.body.fields) if isinstance(seq.body, X.Tuple) else [seq.body]
    changed = _generalized(ctx, sinfos, [o.struct_info for o in outs[1:]])
    if changed is not None and not relaxed:
        return None, changed
    go = cond
    if trip is not None:
        m = caps[-1] if not isinstance(trip, X.Constant) else trip
        go = bind("go", R.logical_and(cond, bind("below", R.less(i, m), "bool")), "bool")
    go = bind("go_scalar", R.reshape(go, ()), "bool", ())
    if not _one_element(outs[0].struct_info) or outs[0].struct_info.dtype != "bool":
        raise ctx.error(f"the body's condition output must be one bool, got "
                        f"{outs[0].struct_info}")
    step = []
    nxt = X.Var("next_iteration", _counter_sinfo("int64"))
    step.append(X.VarBinding(nxt, R.add(i, X.const(np.asarray([1], dtype=np.int64), "int64"))))
    cond_out = outs[0]
    if isinstance(cond_out, X.Constant):     # a condition the body always gives
        cond_out = X.const(cond_out.data.reshape(1), "bool")
    if tuple(cond_out.struct_info.shape) != (1,):
        c1 = X.Var("next_cond", _counter_sinfo("bool"))
        step.append(X.VarBinding(c1, R.reshape(cond_out, (1,))))
        cond_out = c1
    again = X.Var("result", ret)
    step.append(X.VarBinding(again, X.Call(gv, tuple([nxt, cond_out] + outs[1:] + caps))))
    then_seq = X.SeqExpr(seq.blocks + (X.BindingBlock(tuple(step)),), again)
    else_seq = X.SeqExpr((), vs[0] if len(vs) == 1 else X.Tuple(tuple(vs)))
    res = X.Var("result", ret)
    head.append(X.VarBinding(res, X.If(go, then_seq, else_seq)))
    func = X.Function([i, cond] + vs + caps, X.SeqExpr((X.BindingBlock(tuple(head)),), res),
                      ret, True, {"global_symbol": gv.name_hint})
    return func, None


# the prefix of the symbolic dims a loop body changes
_CHANGED = "loop_changed"


def _generalized(ctx, sinfos, got):
    """None when the body gives each loop-carried value its struct info back; otherwise the
    struct infos with a fresh symbolic dim where the body changes one (rank and dtype must
    stay)."""
    out, changed = [], False
    for k, (s, g) in enumerate(zip(sinfos, got)):
        if not isinstance(g, TensorStructInfo) or g.shape is None or g.ndim != s.ndim or \
                g.dtype != s.dtype:
            raise ctx.unsupported(f"loop-carried value {k}: the body turns {s} into {g} (its "
                                  "rank and type must stay)")
        dims = []
        for j, (a, b) in enumerate(zip(s.shape, g.shape)):
            same = a == b if isinstance(a, int) and isinstance(b, int) else su.equal(a, b)
            if not same:
                changed = True
                a = E.Var(_ident(_CHANGED, f"{ctx.name}_v{k}_dim{j}"), "int64")
            dims.append(a)
        out.append(TensorStructInfo(tuple(dims), s.dtype))
    return out if changed else None
