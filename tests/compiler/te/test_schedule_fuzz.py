"""Random schedules of small kernels, compiled for every host target and run in the IR
interpreter, agree with numpy: splits that do not divide, fuse + split + reorder, compute_at
at every level or inline, parallel / vectorize / unroll annotations, reductions with where=,
narrow and float16 dtypes, extents of 1."""
import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import compiler
import microruntime
from compiler import te
from compiler.ir.errors import CompilerError
from compiler.tir import interpreter

DTYPES = ["float32", "int32", "int8", "uint8", "float16"]


def _kernel(kind, dtype, n, m):
    """(schedule pieces, numpy reference) of a two-stage kernel over A: dtype[n, m]."""
    A = te.placeholder((n, m), dtype, name="A")
    B = te.compute((n, m), lambda i, j: A[i, j] * 3 + 1, name="B")
    if kind == "elementwise":
        C = te.compute((n, m), lambda i, j: B[i, j] - A[i, j], name="C")

        def ref(a):
            b = (a * np.asarray(3, dtype) + np.asarray(1, dtype)).astype(dtype)
            return (b - a).astype(dtype)
    else:  # a row reduction over the columns k <= i (where=)
        k = te.reduce_axis((0, m), name="k")
        C = te.compute((n,), lambda i: te.sum(B[i, k], axis=k, where=k <= i), name="C")

        def ref(a):
            b = (a * np.asarray(3, dtype) + np.asarray(1, dtype)).astype(dtype)
            mask = np.arange(m)[None, :] <= np.arange(n)[:, None]
            return np.where(mask, b, np.zeros((), dtype)).sum(axis=1, dtype=dtype).astype(dtype)
    return A, B, C, ref


@st.composite
def _schedules(draw):
    kind = draw(st.sampled_from(["elementwise", "reduction"]))
    dtype = draw(st.sampled_from(DTYPES))
    n, m = draw(st.integers(1, 7)), draw(st.integers(1, 7))
    ops = []
    for _ in range(draw(st.integers(0, 3))):
        ops.append(draw(st.sampled_from(["split", "fuse", "reorder"])))
        ops.append((draw(st.integers(0, 10)), draw(st.integers(1, 5)), draw(st.booleans())))
    annotate = draw(st.sampled_from(["none", "parallel", "vectorize", "unroll"]))
    attach = draw(st.sampled_from(["root", "inline", "at"]))
    return kind, dtype, n, m, ops, annotate, attach, draw(st.integers(0, 10))


def _apply(s, C, ops):
    stage = s[C]
    for op, (pick, factor, by_nparts) in zip(ops[::2], ops[1::2]):
        leaves = stage.leaf_iter_vars
        if op == "split":
            iv = leaves[pick % len(leaves)]
            stage.split(iv, nparts=factor) if by_nparts else stage.split(iv, factor=factor)
        elif op == "fuse" and len(leaves) >= 2:
            k = pick % (len(leaves) - 1)
            if leaves[k].kind == leaves[k + 1].kind:
                stage.fuse(leaves[k], leaves[k + 1])
        elif op == "reorder" and len(leaves) >= 2:
            order = list(leaves)
            k = pick % len(order)
            order.append(order.pop(k))
            stage.reorder(*order)


def _annotate(stage, how):
    leaves = stage.leaf_iter_vars
    data = [iv for iv in leaves if iv.kind != compiler.tir.IterKind.REDUCE]
    if how == "parallel" and data:
        stage.parallel(data[0])
    elif how == "vectorize" and leaves[-1] in data:
        stage.vectorize(leaves[-1])
    elif how == "unroll":
        stage.unroll(leaves[-1])


@settings(max_examples=25, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow])
@given(_schedules())
def test_random_schedule_matches_numpy(case):
    kind, dtype, n, m, ops, annotate, attach, at = case
    A, B, C, ref = _kernel(kind, dtype, n, m)
    s = te.create_schedule(C.op)
    _apply(s, C, ops)
    _annotate(s[C], annotate)
    if attach == "inline":
        s[B].compute_inline()
    elif attach == "at":
        leaves = s[C].leaf_iter_vars
        s[B].compute_at(s[C], leaves[at % len(leaves)])
    rng = np.random.default_rng(n * 8 + m)
    if dtype.startswith("float"):
        a = rng.integers(-4, 5, (n, m)).astype(dtype)  # exact in float16 sums
    else:
        a = rng.integers(np.iinfo(dtype).min, np.iinfo(dtype).max, (n, m), endpoint=True,
                         dtype=dtype)
    expected = ref(a)
    try:
        mod = compiler.lower(s, [A, C], name="f")
    except CompilerError as e:  # a schedule the compiler refuses with a user error is fine
        assert "Internal" not in type(e).__name__, e
        return
    out = np.zeros(expected.shape, dtype)
    interpreter.run(mod["f"], a.copy(), out)
    np.testing.assert_array_equal(out, expected, err_msg=f"interpreter\n{mod}")
    for target in _targets():
        f = compiler.build(mod, target=target)["f"]
        c = microruntime.nd.array(np.zeros(expected.shape, dtype))
        f(microruntime.nd.array(a), c)
        np.testing.assert_array_equal(c.numpy(), expected, err_msg=f"{target}\n{mod}")


def _targets():
    from compiler.codegen import host_codegen_available

    return ["c"] + (["llvm"] if host_codegen_available("llvm") else [])
