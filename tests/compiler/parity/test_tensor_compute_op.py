"""Tensor intrinsics called inside te.compute on tensor regions (TVM's TensorComputeOp):
`te.compute((m // 16, 16), lambda i: vadd(A[i, 0:16], B[i, 0:16]))` computes each row with the
intrinsic; with `reduce_axis=k` the intrinsic's reset/update statements run around the loop over
k. The micro-kernels are C functions compiled into the kernel (llvm and c targets), so the
results are checked against numpy."""
import numpy as np
import pytest

import compiler
import microruntime as runtime
from compiler import te, tir
from compiler.ir.errors import IRError
from compiler.tir.functor import post_order_visit

KERNELS_C = """
int kiln_vadd16(float* x, float* y, float* z) {
  for (int k = 0; k < 16; ++k) z[k] = x[k] + y[k];
  return 0;
}
int kiln_dot_reset(float* z, int n) {
  for (int k = 0; k < n; ++k) z[k] = 0.0f;
  return 0;
}
int kiln_dot_update(float* w, float* x, float* z, int m, int l, int ldw) {
  for (int i = 0; i < m; ++i)
    for (int k = 0; k < l; ++k) z[i] += w[i * ldw + k] * x[k];
  return 0;
}
"""


def _vadd(n=16):
    x = te.placeholder((n,), name="x")
    y = te.placeholder((n,), name="y")
    z = te.compute((n,), lambda i: x[i] + y[i], name="z")

    def body(ins, outs):
        return tir.call_extern("int32", "kiln_vadd16", ins[0].access_ptr("r"),
                               ins[1].access_ptr("r"), outs[0].access_ptr("w"))

    return te.decl_tensor_intrin(z.op, body, default_buffer_params={"offset_factor": n})


def _gemv(m, l):
    w = te.placeholder((m, l), name="w")
    x = te.placeholder((l,), name="x")
    k = te.reduce_axis((0, l), name="k")
    z = te.compute((m,), lambda i: te.sum(w[i, k] * x[k], axis=k), name="z")
    wb = tir.decl_buffer(w.shape, w.dtype, name="W", offset_factor=1,
                         strides=[te.var("ldw"), 1])

    def body(ins, outs):
        ww, xx = ins
        zz = outs[0]
        update = tir.call_extern("int32", "kiln_dot_update", ww.access_ptr("r"),
                                 xx.access_ptr("r"), zz.access_ptr("rw"), m, l, ww.strides[0])
        reset = tir.call_extern("int32", "kiln_dot_reset", zz.access_ptr("w"), m)
        return None, reset, update

    return te.decl_tensor_intrin(z.op, body, binds={w: wb},
                                 default_buffer_params={"offset_factor": 1})


def _build_with_kernels(s, C, args, target):
    """Builds with the micro-kernels compiled from C source into the module (pragma
    "import_c" on the outer loop)."""
    s[C].pragma(s[C].leaf_iter_vars[0], "import_c", KERNELS_C)
    return compiler.build(s, args, target)


def test_rows_computed_by_the_intrinsic_lower_to_one_call_per_row():
    vadd = _vadd()
    A = te.placeholder((8, 16), name="A")
    B = te.placeholder((8, 16), name="B")
    C = te.compute((8, 16), lambda i: vadd(A[i, 0:16], B[i, 0:16]), name="C")
    assert isinstance(C.op, te.tensor_compute.TensorComputeOp)
    assert [iv.dom.extent.value for iv in C.op.axis] == [8, 16]
    s = te.create_schedule(C.op)
    func = compiler.lower(s, [A, B, C])["main"]
    assert isinstance(func.body, tir.For) and isinstance(func.body.body, tir.Evaluate)
    call = func.body.body.value
    assert call.args[0].value == "kiln_vadd16"


def test_reduction_runs_reset_then_update_around_the_call_axis():
    gemv = _gemv(4, 8)
    A = te.placeholder((3, 5, 4, 8), name="A")  # 3 x 4 rows, reduced over 5 x 8
    X = te.placeholder((5, 8), name="X")
    k = te.reduce_axis((0, 5), name="k")
    C = te.compute((3, 4), lambda i: gemv(A[i, k, 0:4, 0:8], X[k, 0:8], reduce_axis=k),
                   name="C")
    s = te.create_schedule(C.op)
    body = compiler.lower(s, [A, X, C])["main"].body
    assert isinstance(body, tir.For)
    reset, loop = body.body[0], body.body[1]
    assert reset.value.args[0].value == "kiln_dot_reset"
    assert isinstance(loop, tir.For) and loop.extent.value == 5
    assert loop.body.value.args[0].value == "kiln_dot_update"


def test_reduction_computed_with_the_intrinsic_matches_numpy(target):
    gemv = _gemv(4, 8)
    A = te.placeholder((3, 5, 4, 8), name="A")
    X = te.placeholder((5, 8), name="X")
    k = te.reduce_axis((0, 5), name="k")
    C = te.compute((3, 4), lambda i: gemv(A[i, k, 0:4, 0:8], X[k, 0:8], reduce_axis=k),
                   name="C")
    s = te.create_schedule(C.op)
    f = _build_with_kernels(s, C, [A, X, C], target)
    a = np.random.rand(3, 5, 4, 8).astype("float32")
    x = np.random.rand(5, 8).astype("float32")
    c = runtime.nd.array(np.zeros((3, 4), "float32"))
    f(runtime.nd.array(a), runtime.nd.array(x), c)
    np.testing.assert_allclose(c.numpy(), np.einsum("ikjl,kl->ij", a, x), rtol=1e-5)


def test_elementwise_with_compute_at_matches_numpy(target):
    vadd = _vadd()
    A = te.placeholder((6, 16), name="A")
    B = te.placeholder((6, 16), name="B")
    Bi = te.compute((6, 16), lambda i, j: B[i, j] * 3.0, name="Bi")
    C = te.compute((6, 16), lambda i: vadd(A[i, 0:16], Bi[i, 0:16]), name="C")
    s = te.create_schedule(C.op)
    s[Bi].compute_at(s[C], C.op.axis[0])
    f = _build_with_kernels(s, C, [A, B, C], target)
    a, b = np.random.rand(6, 16).astype("float32"), np.random.rand(6, 16).astype("float32")
    c = runtime.nd.array(np.zeros((6, 16), "float32"))
    f(runtime.nd.array(a), runtime.nd.array(b), c)
    np.testing.assert_allclose(c.numpy(), a + 3 * b, rtol=1e-6)


def test_cache_write_moves_the_intrinsic_to_the_cache_stage():
    vadd = _vadd()
    A = te.placeholder((4, 16), name="A")
    B = te.placeholder((4, 16), name="B")
    C = te.compute((4, 16), lambda i: vadd(A[i, 0:16], B[i, 0:16]), name="C")
    s = te.create_schedule(C.op)
    CL = s.cache_write(C, "local")
    assert s[CL].tensorized is not None and s[C].tensorized is None
    calls = []
    post_order_visit(compiler.lower(s, [A, B, C])["main"].body,
                     lambda n: calls.append(n) if isinstance(n, tir.Call)
                     and n.op == "tir.call_extern" else None)
    assert len(calls) == 1


def test_regions_that_do_not_fit_the_intrinsic_are_rejected():
    vadd = _vadd()
    A = te.placeholder((4, 32), name="A")
    with pytest.raises(IRError, match="does not match the shape of its input"):
        te.compute((4, 16), lambda i: vadd(A[i, 0:8], A[i, 0:16]))
    with pytest.raises(IRError, match="takes 2 tensor regions"):
        te.compute((4, 16), lambda i: vadd(A[i, 0:16]))
    with pytest.raises(IRError, match="not a value"):
        te.compute((4,), lambda i: A[i, 0:2])


# ---- symbolic intrinsic shapes, scalar parameters, bounds from the call's regions ----------------
KERNELS_SCALAR_C = """
int kiln_axpb(float* x, float* z, int n, float a, float b) {
  for (int k = 0; k < n; ++k) z[k] = x[k] * a + b;
  return 0;
}
"""


def _axpb():
    """z = x * a + b over a symbolic length n, a and b scalar parameters."""
    n = te.size_var("n")
    a, b = te.var("a", "float32"), te.var("b", "float32")
    x = te.placeholder((n,), name="x")
    z = te.compute((n,), lambda i: x[i] * a + b, name="z")

    def body(ins, outs, sp):
        assert ins[0].shape[0] is n and list(sp) == [a, b]
        return tir.call_extern("int32", "kiln_axpb", ins[0].access_ptr("r"),
                               outs[0].access_ptr("w"), ins[0].shape[0], sp[0], sp[1])

    intrin = te.decl_tensor_intrin(z.op, body, scalar_params=[a, b],
                                   default_buffer_params={"offset_factor": 1})
    assert list(intrin.scalar_params) == [a, b]
    return intrin


def test_scalar_inputs_and_symbolic_extents_reach_the_call():
    axpb = _axpb()
    A = te.placeholder((6, 12), name="A")
    C = te.compute((6, 12), lambda i: axpb(A[i, 0:12], (i + 1).astype("float32"), 2.0),
                   name="C")
    s = te.create_schedule(C.op)
    func = compiler.lower(s, [A, C])["main"]
    call = func.body.body.value
    assert call.args[0].value == "kiln_axpb"
    # n is the region's extent; a and b the call's scalar inputs
    assert [str(x) for x in call.args[3:]] == ["12", "float32(i + 1)", "2.0"]


def test_scalar_inputs_run(target):
    axpb = _axpb()
    A = te.placeholder((6, 12), name="A")
    C = te.compute((6, 12), lambda i: axpb(A[i, 0:12], (i + 1).astype("float32"), 2.0),
                   name="C")
    s = te.create_schedule(C.op)
    s[C].pragma(s[C].leaf_iter_vars[0], "import_c", KERNELS_SCALAR_C)
    f = compiler.build(s, [A, C], target)
    a = np.random.rand(6, 12).astype("float32")
    c = runtime.nd.array(np.zeros((6, 12), "float32"))
    f(runtime.nd.array(a), c)
    np.testing.assert_allclose(c.numpy(), a * np.arange(1, 7, dtype="float32")[:, None] + 2,
                               rtol=1e-6)


def test_a_full_index_is_a_one_element_region_and_other_arguments_are_scalars():
    axpb = _axpb()
    A = te.placeholder((5, 7), name="A")
    C = te.compute((5, 7), lambda i, j: axpb(A[i, j], 3.0, (i + j).astype("float32")),
                   name="C")
    s = te.create_schedule(C.op)
    body = compiler.lower(s, [A, C])["main"].body
    assert isinstance(body.body, tir.For) and isinstance(body.body.body, tir.Evaluate)
    args = body.body.body.value.args
    assert int(args[3]) == 1 and "i + j" in str(args[5])
    with pytest.raises(IRError, match="takes 2 scalar inputs"):
        te.compute((5, 7), lambda i, j: axpb(A[i, j], 3.0))


def test_inputs_are_sized_by_the_call_regions():
    """The intrinsic reads three rows of its (m, n) input, but the call hands it rows i..9:
    the producer is needed over the call's regions, rows 0..9."""
    m, n = te.var("m"), te.var("n")
    a = te.placeholder((m, n), name="a")
    c = te.compute((1, n), lambda i, j: a[0, j] + a[1, j] + a[2, j], name="c")
    ab = tir.decl_buffer(a.shape, name="ab", offset_factor=1)
    cb = tir.decl_buffer(c.shape, name="cb", offset_factor=1)
    intrin = te.decl_tensor_intrin(
        c.op, lambda ins, outs: tir.call_extern("int32", "f", outs[0].access_ptr("w"),
                                                ins[0].access_ptr("r")),
        binds={a: ab, c: cb})
    A = te.placeholder((20, 20), name="A")
    B = te.compute(A.shape, lambda i, j: A[i, j] + 1.0, name="B")
    C = te.compute((10, 20), lambda i: intrin(B[i:10, 0:20]), name="C")
    s = te.create_schedule(C.op)
    bounds = te.schedule.InferBound(s)
    assert int(bounds[B.op.axis[0]].extent) == 10
    assert int(bounds[B.op.axis[1]].extent) == 20
