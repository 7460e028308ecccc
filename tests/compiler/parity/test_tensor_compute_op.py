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
