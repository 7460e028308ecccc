"""Random schedules of multi-stage kernels agree with numpy in the IR interpreter and on every
host target: three-stage pipelines with compute_at at any level (split and fused axes
included; the producer also at the consumer's loop holding the middle stage, or one enclosing
it) or inline; cache_read / cache_write with the cache stage attached anywhere; tile +
reorder by non-dividing factors; reductions with split / reordered reduce axes, where=,
max / min over integers and a two-output (argmax) reducer; vectorize after non-dividing splits,
unroll of small constant axes; symbolic shapes bound at call time.

A schedule the compiler refuses with a ScheduleError is fine; wrong values, a crash, an
InternalError or a C / LLVM compile failure is not."""
import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import compiler
import microruntime
from compiler import te
from compiler.ir.errors import ScheduleError
from compiler.tir import interpreter

DTYPES = ["float32", "int32", "int8", "uint8"]
SETTINGS = dict(deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
REDUCE = compiler.tir.IterKind.REDUCE
NO_INDEX = 1 << 30  # argmax's identity index: loses every tie against a real element


def _targets():
    from compiler.codegen import host_codegen_available

    return ["c"] + (["llvm"] if host_codegen_available("llvm") else [])


def _c(v, dtype):
    return np.asarray(v, dtype)


def _input(rng, shape, dtype):
    if dtype.startswith("float"):
        return rng.integers(-4, 5, shape).astype(dtype)
    info = np.iinfo(dtype)
    return rng.integers(info.min, info.max, shape, endpoint=True, dtype=dtype)


# ---- schedule moves shared by every kernel -------------------------------------------------
_moves = st.lists(st.tuples(st.sampled_from(["split", "fuse", "reorder", "tile"]),
                            st.integers(0, 10), st.integers(1, 5), st.booleans()), max_size=3)


def _apply(stage, moves):
    for op, pick, factor, by_nparts in moves:
        leaves = stage.leaf_iter_vars
        if op == "split":
            iv = leaves[pick % len(leaves)]
            stage.split(iv, nparts=factor) if by_nparts else stage.split(iv, factor=factor)
        elif op == "fuse" and len(leaves) >= 2:
            k = pick % (len(leaves) - 1)
            if (leaves[k].kind == REDUCE) == (leaves[k + 1].kind == REDUCE):
                stage.fuse(leaves[k], leaves[k + 1])
        elif op == "reorder" and len(leaves) >= 2:
            order = list(leaves)
            order.append(order.pop(pick % len(order)))
            stage.reorder(*order)
        elif op == "tile" and len(leaves) >= 2:
            k = pick % (len(leaves) - 1)
            stage.tile(leaves[k], leaves[k + 1], factor, 1 + (factor + pick) % 4)


def _annotate(stage, how, pick):
    leaves = stage.leaf_iter_vars
    data = [iv for iv in leaves if iv.kind != REDUCE]
    if how == "parallel" and data:
        stage.parallel(data[pick % len(data)])
    elif how == "vectorize" and leaves[-1] in data:
        stage.vectorize(leaves[-1])
    elif how == "unroll":
        stage.unroll(leaves[pick % len(leaves)])


_annotations = st.tuples(st.sampled_from(["none", "parallel", "vectorize", "unroll"]),
                         st.integers(0, 10))


def _at(stage, parent, pick):
    leaves = parent.leaf_iter_vars
    stage.compute_at(parent, leaves[pick % len(leaves)])


def _check(s, args, inputs, expected, label=""):
    """Lower `s` over `args` (inputs then outputs), run it everywhere, compare with numpy."""
    try:
        mod = compiler.lower(s, args, name="f")
    except ScheduleError:
        return
    outs = [np.zeros(e.shape, e.dtype) for e in expected]
    interpreter.run(mod["f"], *[a.copy() for a in inputs], *outs)
    for o, e in zip(outs, expected):
        np.testing.assert_array_equal(o, e, err_msg=f"interpreter {label}\n{mod}")
    for target in _targets():
        f = compiler.build(mod, target=target)["f"]
        nd_outs = [microruntime.nd.array(np.zeros(e.shape, e.dtype)) for e in expected]
        f(*[microruntime.nd.array(a) for a in inputs], *nd_outs)
        for o, e in zip(nd_outs, expected):
            np.testing.assert_array_equal(o.numpy(), e, err_msg=f"{target} {label}\n{mod}")


def _shape(symbolic, n, m):
    return (te.var("n"), te.var("m")) if symbolic else (n, m)


# ---- (a) three-stage pipelines -------------------------------------------------------------
@settings(max_examples=30, **SETTINGS)
@given(dtype=st.sampled_from(DTYPES), n=st.integers(1, 7), m=st.integers(1, 7),
       symbolic=st.booleans(), shape_kind=st.sampled_from(["same", "stencil", "reversed"]),
       moves=_moves, middle_moves=_moves, ann=_annotations,
       middle=st.tuples(st.sampled_from(["root", "inline", "at"]), st.integers(0, 10)),
       producer=st.tuples(st.sampled_from(["root", "inline", "at_consumer", "at_middle",
                                           "around_middle"]), st.integers(0, 10)))
def test_pipeline_matches_numpy(dtype, n, m, symbolic, shape_kind, moves, middle_moves, ann,
                                middle, producer):
    N, M_ = _shape(symbolic, n, m)
    A = te.placeholder((N, M_), dtype, name="A")
    P = te.compute((N, M_), lambda i, j: A[i, j] * 3 + 1, name="P")
    if shape_kind == "stencil":  # the middle stage reads a window of the producer
        Mid = te.compute((N, M_), lambda i, j: P[i, j] + P[i, te.min(j + 1, M_ - 1)], name="M")
    elif shape_kind == "reversed":
        Mid = te.compute((N, M_), lambda i, j: P[N - 1 - i, j] - A[i, j], name="M")
    else:
        Mid = te.compute((N, M_), lambda i, j: P[i, j] * 2 - A[i, j], name="M")
    C = te.compute((N, M_), lambda i, j: Mid[i, j] + Mid[i, M_ - 1 - j], name="C")

    a = _input(np.random.default_rng(n * 8 + m), (n, m), dtype)
    p = (a * _c(3, dtype) + _c(1, dtype)).astype(dtype)
    if shape_kind == "stencil":
        mid = (p + p[:, np.minimum(np.arange(m) + 1, m - 1)]).astype(dtype)
    elif shape_kind == "reversed":
        mid = (p[::-1, :] - a).astype(dtype)
    else:
        mid = (p * _c(2, dtype) - a).astype(dtype)
    expected = (mid + mid[:, ::-1]).astype(dtype)

    s = te.create_schedule(C.op)
    _apply(s[C], moves)
    _apply(s[Mid], middle_moves)
    _annotate(s[C], *ann)
    if producer[0] == "around_middle":  # the middle is then always inside the consumer
        middle = ("at", middle[1])
    if middle[0] == "inline":
        s[Mid].compute_inline()
    elif middle[0] == "at":
        _at(s[Mid], s[C], middle[1])
    if producer[0] == "inline":
        s[P].compute_inline()
    elif producer[0] == "at_consumer":
        _at(s[P], s[C], producer[1])
    elif producer[0] == "around_middle":  # at the middle's loop of C or one enclosing it
        leaves = s[C].leaf_iter_vars
        s[P].compute_at(s[C], leaves[producer[1] % (leaves.index(s[Mid].attach_ivar) + 1)])
    elif producer[0] == "at_middle":
        try:
            _at(s[P], s[Mid], producer[1])
        except ScheduleError:
            return
    _check(s, [A, C], [a], [expected], f"{middle} {producer}")


# ---- (b) cache_read / cache_write ----------------------------------------------------------
@settings(max_examples=20, **SETTINGS)
@given(dtype=st.sampled_from(DTYPES), n=st.integers(1, 7), m=st.integers(1, 7),
       symbolic=st.booleans(), kind=st.sampled_from(["elementwise", "reduction", "two_outputs"]),
       read_scope=st.sampled_from([None, "local", "global"]),
       write_scope=st.sampled_from([None, "local", "global"]),
       moves=_moves, ann=_annotations,
       read_at=st.tuples(st.sampled_from(["root", "consumer", "cache"]), st.integers(0, 10)),
       write_at=st.tuples(st.sampled_from(["root", "consumer"]), st.integers(0, 10)))
def test_cache_stages_match_numpy(dtype, n, m, symbolic, kind, read_scope, write_scope,
                                  moves, ann, read_at, write_at):
    N, M_ = _shape(symbolic, n, m)
    A = te.placeholder((N, M_), dtype, name="A")
    a = _input(np.random.default_rng(n * 8 + m), (n, m), dtype)
    if kind == "reduction":
        k = te.reduce_axis((0, M_), name="k")
        C = te.compute((N, M_), lambda i, j: te.sum(A[i, k] * 2 + A[N - 1 - i, j], axis=k),
                       name="C")
        terms = (a[:, None, :] * _c(2, dtype) + a[::-1, :, None]).astype(dtype)
        expected = [terms.sum(axis=2, dtype=dtype).astype(dtype)]
        outputs = [C]
    elif kind == "two_outputs":
        outputs = te.compute((N, M_), lambda i, j: (A[i, j] * 2 + A[N - 1 - i, M_ - 1 - j],
                                                    A[i, M_ - 1 - j] - 1), name="C")
        C = outputs[0]
        expected = [(a * _c(2, dtype) + a[::-1, ::-1]).astype(dtype),
                    (a[:, ::-1] - _c(1, dtype)).astype(dtype)]
    else:
        C = te.compute((N, M_), lambda i, j: A[i, j] * 2 + A[N - 1 - i, M_ - 1 - j], name="C")
        expected = [(a * _c(2, dtype) + a[::-1, ::-1]).astype(dtype)]
        outputs = [C]

    s = te.create_schedule(C.op)
    AA = s.cache_read(A, read_scope, [C]) if read_scope else None
    CC = s.cache_write(C, write_scope) if write_scope else None
    _apply(s[C], moves)
    if CC is not None:
        _apply(s[CC], moves[::-1])
    _annotate(s[C], *ann)
    if CC is not None and write_at[0] == "consumer":
        _at(s[CC], s[C], write_at[1])
    if AA is not None and read_at[0] != "root":
        parent = s[CC] if read_at[0] == "cache" and CC is not None else s[C]
        _at(s[AA], parent, read_at[1])
    _check(s, [A, *outputs], [a], expected, f"{read_scope} {write_scope} {read_at} {write_at}")


# ---- (c, d) reductions ---------------------------------------------------------------------
def _reducer(name, dtype):
    if name == "sum":
        return te.sum, (lambda x, axis: x.sum(axis=axis, dtype=dtype).astype(dtype)), 0
    info = np.iinfo(dtype) if not dtype.startswith("float") else None
    if name == "max":
        ident = info.min if info else -np.inf
        return te.max, (lambda x, axis: x.max(axis=axis)), ident
    ident = info.max if info else np.inf
    return te.min, (lambda x, axis: x.min(axis=axis)), ident


@settings(max_examples=20, **SETTINGS)
@given(dtype=st.sampled_from(DTYPES), n=st.integers(1, 6), m=st.integers(1, 5),
       r=st.integers(1, 6), symbolic=st.booleans(),
       reducer=st.sampled_from(["sum", "max", "min", "argmax"]),
       where=st.sampled_from(["none", "k<=i", "odd"]), moves=_moves, ann=_annotations,
       outer_reduce=st.booleans(),
       producer=st.tuples(st.sampled_from(["none", "root", "inline", "at"]),
                          st.integers(0, 10)))
def test_reduction_matches_numpy(dtype, n, m, r, symbolic, reducer, where, moves, ann,
                                 outer_reduce, producer):
    N, M_ = _shape(symbolic, n, m)
    R = te.var("r") if symbolic else r
    A = te.placeholder((N, R), dtype, name="A")
    W = te.placeholder((R, M_), dtype, name="W")
    src = A
    if producer[0] != "none":
        src = te.compute((N, R), lambda i, k: A[i, k] + 1, name="B")
    k = te.reduce_axis((0, R), name="k")
    rng = np.random.default_rng(n * 64 + m * 8 + r)
    a, w = _input(rng, (n, r), dtype), _input(rng, (r, m), dtype)
    b = a if producer[0] == "none" else (a + _c(1, dtype)).astype(dtype)
    terms = (b[:, :, None] + w[None, :, :]).astype(dtype)  # [n, r, m]
    mask = np.ones((n, r, m), bool)

    def make_cond(i, j):
        if where == "k<=i":
            return k <= i
        if where == "odd":
            return (i + j + k) % 2 == 1
        return None
    if where == "k<=i":
        mask = np.arange(r)[None, :, None] <= np.arange(n)[:, None, None]
    elif where == "odd":
        ii, kk, jj = np.meshgrid(np.arange(n), np.arange(r), np.arange(m), indexing="ij")
        mask = (ii + jj + kk) % 2 == 1

    if reducer == "argmax":
        def fcombine(x, y):
            (x0, x1), (y0, y1) = x, y
            keep = te.any(x1 > y1, te.all(x1 == y1, x0 <= y0))
            return te.select(keep, x0, y0), te.select(keep, x1, y1)

        def fidentity(t0, t1):
            return te.const(NO_INDEX, t0), te.min_value(t1)
        argmax = te.comm_reducer(fcombine, fidentity, name="argmax")
        outs = te.compute((N, M_), lambda i, j: argmax(
            (k, src[i, k] + W[k, j]), axis=k, where=make_cond(i, j)), name="C")
        C = outs[0]
        ident_val = np.iinfo(dtype).min if not dtype.startswith("float") else -np.inf
        vals = np.where(mask, terms, np.asarray(ident_val).astype(dtype))
        best = vals.max(axis=1)
        idx = np.where(mask & (vals == best[:, None, :]), np.arange(r)[None, :, None], r)
        idx = idx.min(axis=1)
        idx = np.where(idx == r, NO_INDEX, idx).astype("int32")
        expected = [idx, best.astype(dtype)]
        out_tensors = outs
    else:
        te_red, np_red, ident = _reducer(reducer, dtype)
        C = te.compute((N, M_), lambda i, j: te_red(src[i, k] + W[k, j], axis=k,
                                                      where=make_cond(i, j)), name="C")
        vals = np.where(mask, terms, np.asarray(ident).astype(dtype))
        expected = [np_red(vals, 1).astype(dtype)]
        out_tensors = [C]

    s = te.create_schedule(C.op)
    stage = s[C]
    if outer_reduce:  # the reduce axis outside a data axis
        i, j = stage.leaf_iter_vars[:2]
        stage.reorder(i, stage.leaf_iter_vars[2], j)
    _apply(stage, moves)
    _annotate(stage, *ann)
    if producer[0] == "inline":
        s[src].compute_inline()
    elif producer[0] == "at":
        _at(s[src], stage, producer[1])
    _check(s, [A, W, *out_tensors], [a, w], expected, f"{reducer} {where} {producer}")
