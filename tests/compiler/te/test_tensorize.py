"""tensorize with te.decl_tensor_intrin: the intrinsic's compute matched against the scheduled
region (ScheduleError naming the mismatch), its buffers bound to the region (strides, element
offset), body vs reset/update placement, and the micro-kernel supplied as C source
(pragma "import_c") or LLVM IR (pragma "import_llvm"), both targets, against numpy."""
import numpy as np
import pytest

import microruntime as runtime
from compiler import build, lower, te, tir
from compiler.contrib import clang
from compiler.ir.errors import ScheduleError
from compiler.tir.functor import post_order_visit

GEMV_C = """
int gemv_update(float *cc, float *aa, float *bb, int m, int l, int stride) {
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < l; ++j)
      cc[i] += aa[j] * bb[i * stride + j];
  return 0;
}
int gemv_reset(float *cc, int m) {
  for (int i = 0; i < m; ++i) cc[i] = 0.0f;
  return 0;
}
"""


def _matmul(n=32, m=32, l=32, dtype="float32"):
    A = te.placeholder((n, l), dtype=dtype, name="A")
    B = te.placeholder((m, l), dtype=dtype, name="B")
    k = te.reduce_axis((0, l), name="k")
    C = te.compute((n, m), lambda i, j: te.sum(A[i, k] * B[j, k], axis=k), name="C")
    return A, B, C


def intrin_gemv(m, l, reset=True, strides_b=True, offset_factor=1, combine=None):
    a = te.placeholder((l,), name="a")
    b = te.placeholder((m, l), name="b")
    k = te.reduce_axis((0, l), name="k")
    combine = combine or (lambda x, y: x * y)
    c = te.compute((m,), lambda i: te.sum(combine(a[k], b[i, k]), axis=k), name="c")
    Ab = tir.decl_buffer(a.shape, a.dtype, name="A", offset_factor=offset_factor, strides=[1])
    Bb = tir.decl_buffer(b.shape, b.dtype, name="B", offset_factor=offset_factor,
                         strides=[te.var("s1"), 1] if strides_b else ())
    Cb = tir.decl_buffer(c.shape, c.dtype, name="C", offset_factor=offset_factor, strides=[1])

    def intrin_func(ins, outs):
        aa, bb = ins
        cc = outs[0]

        def body():
            ib = tir.ir_builder.create()
            ib.emit(tir.call_extern("int32", "gemv_update", cc.access_ptr("w"),
                                    aa.access_ptr("r"), bb.access_ptr("r"), m, l,
                                    bb.strides[0] if strides_b else l))
            return ib.get()

        def reduce_reset():
            ib = tir.ir_builder.create()
            ib.emit(tir.call_extern("int32", "gemv_reset", cc.access_ptr("w"), m))
            return ib.get()

        if not reset:
            return body(), None, body()
        return body(), reduce_reset(), body()

    return te.decl_tensor_intrin(c.op, intrin_func, binds={a: Ab, b: Bb, c: Cb})


def _calls(mod, name):
    found = []
    post_order_visit(mod["main"].body, lambda n: found.append(n) if isinstance(n, tir.Call)
                     and n.op == "tir.call_extern" and n.args[0].value == name else None)
    return found


def _run(f, A, B, C, init=0.0):
    """Runs with C filled with `init` first (what is left there unless a reset zeroes it)."""
    a = np.random.rand(*[s.value for s in A.shape]).astype(A.dtype)
    b = np.random.rand(*[s.value for s in B.shape]).astype(B.dtype)
    c = runtime.nd.array(np.full([s.value for s in C.shape], init, C.dtype))
    f(runtime.nd.array(a), runtime.nd.array(b), c)
    np.testing.assert_allclose(c.numpy(), a @ b.T, rtol=1e-4)


# ---- lowering ---------------------------------------------------------------------------------
def test_whole_reduction_uses_the_body():
    A, B, C = _matmul()
    s = te.create_schedule(C.op)
    x, y = C.op.axis
    yo, yi = s[C].split(y, factor=16)
    s[C].tensorize(yi, intrin_gemv(16, 32))
    mod = lower(s, [A, B, C])
    (call,) = _calls(mod, "gemv_update")
    assert not _calls(mod, "gemv_reset")
    # the region of B starts at row yo * 16; its row stride (s1) is bound to 32
    assert call.args[-1].value == 32 and call.args[-3].value == 16
    text = str(mod)
    assert "B[j.outer * 512]" in text and "C[i * 32 + j.outer * 16]" in text


def test_split_reduction_uses_reset_and_update():
    A, B, C = _matmul()
    s = te.create_schedule(C.op)
    x, y = C.op.axis
    (z,) = C.op.reduce_axis
    yo, yi = s[C].split(y, factor=16)
    zo, zi = s[C].split(z, factor=16)
    s[C].reorder(x, yo, zo, yi, zi)
    s[C].tensorize(yi, intrin_gemv(16, 16))
    mod = lower(s, [A, B, C])
    assert len(_calls(mod, "gemv_reset")) == 1 and len(_calls(mod, "gemv_update")) == 1
    text = str(mod)
    reset, update = text.index("gemv_reset"), text.index("gemv_update")
    loop_k = text.index("for k.outer")
    assert reset < loop_k < update  # the reset before the reduction loop, the update in it


# ---- compiled, with the micro-kernel from the user --------------------------------------------
@pytest.mark.parametrize("kernel", ["import_c", "import_llvm"])
@pytest.mark.parametrize("split_k", [False, True])
def test_tensorized_matmul(target, kernel, split_k):
    A, B, C = _matmul(24, 32, 32)
    s = te.create_schedule(C.op)
    x, y = C.op.axis
    (z,) = C.op.reduce_axis
    yo, yi = s[C].split(y, factor=16)
    if split_k:
        zo, zi = s[C].split(z, factor=8)
        s[C].reorder(x, yo, zo, yi, zi)
        gemv = intrin_gemv(16, 8)
    else:
        gemv = intrin_gemv(16, 32)
    s[C].tensorize(yi, gemv)
    code = GEMV_C if kernel == "import_c" else \
        clang.create_llvm('extern "C" {' + GEMV_C + "}")
    s[C].pragma(yo, kernel, code)
    _run(build(s, [A, B, C], target=target), A, B, C, init=7.0 if split_k else 0.0)


def test_body_on_the_first_iteration_without_reset(target):
    A, B, C = _matmul(8, 16, 32)
    s = te.create_schedule(C.op)
    x, y = C.op.axis
    (z,) = C.op.reduce_axis
    yo, yi = s[C].split(y, factor=8)
    zo, zi = s[C].split(z, factor=8)
    s[C].reorder(x, yo, zo, yi, zi)
    s[C].tensorize(yi, intrin_gemv(8, 8, reset=False))
    s[C].pragma(x, "import_c", GEMV_C)
    mod = lower(s, [A, B, C])
    assert not _calls(mod, "gemv_reset") and len(_calls(mod, "gemv_update")) == 2
    # the body (first k.outer iteration) overwrites nothing here, so zero C first
    f = build(s, [A, B, C], target=target)
    a = np.random.rand(8, 32).astype("float32")
    b = np.random.rand(16, 32).astype("float32")
    c = runtime.nd.array(np.zeros((8, 16), "float32"))
    f(runtime.nd.array(a), runtime.nd.array(b), c)
    np.testing.assert_allclose(c.numpy(), a @ b.T, rtol=1e-4)


def test_tensorize_inside_a_cache_write_stage(target):
    """The intrinsic writes a local cache tile; its buffer is bound to the cache's storage."""
    A, B, C = _matmul(16, 32, 16)
    s = te.create_schedule(C.op)
    CL = s.cache_write(C, "local")
    x, y = C.op.axis
    yo, yi = s[C].split(y, factor=16)
    s[CL].compute_at(s[C], yo)
    xl, yl = CL.op.axis
    (zl,) = CL.op.reduce_axis
    zo, zi = s[CL].split(zl, factor=8)
    s[CL].reorder(xl, zo, yl, zi)
    s[CL].tensorize(yl, intrin_gemv(16, 8))  # the cache is not zeroed: reset, then update
    s[C].pragma(x, "import_c", GEMV_C)
    _run(build(s, [A, B, C], target=target), A, B, C)


# ---- mistakes ------------------------------------------------------------------------------
def _scheduled(factor=16, l_intrin=32, **kw):
    A, B, C = _matmul()
    s = te.create_schedule(C.op)
    x, y = C.op.axis
    yo, yi = s[C].split(y, factor=factor)
    s[C].tensorize(yi, intrin_gemv(16, l_intrin, **kw))
    return s, [A, B, C]


def test_mismatched_compute_names_both_sides():
    s, args = _scheduled(combine=lambda x, y: x + y)
    with pytest.raises(ScheduleError, match=r"tensorize on stage 'C' with 'tensor_intrin': the "
                                            r"stage computes .*\* .* but the intrinsic declares"):
        lower(s, args)


def test_mismatched_extents():
    s, args = _scheduled(factor=8)
    with pytest.raises(ScheduleError, match="axis 'j' covers 8 elements .* intrinsic's axis 'i' "
                                            "has 16"):
        lower(s, args)
    s, args = _scheduled(l_intrin=16)
    with pytest.raises(ScheduleError, match="reduction axis 'k' covers 32 elements"):
        lower(s, args)


def test_compact_buffer_needs_a_contiguous_region():
    s, args = _scheduled(strides_b=False)
    lower(s, args)  # 16 whole rows of B: contiguous
    A, B, C = args
    s = te.create_schedule(C.op)
    x, y = C.op.axis
    (z,) = C.op.reduce_axis
    yo, yi = s[C].split(y, factor=16)
    zo, zi = s[C].split(z, factor=16)
    s[C].reorder(x, yo, zo, yi, zi)
    s[C].tensorize(yi, intrin_gemv(16, 16, strides_b=False))
    with pytest.raises(ScheduleError, match="buffer 'B' of the intrinsic is compact, but the "
                                            "region of 'B' has the stride 32"):
        lower(s, [A, B, C])


def test_constant_offset_needs_offset_factor():
    s, args = _scheduled(offset_factor=0)
    with pytest.raises(ScheduleError, match="offset_factor=1"):
        lower(s, args)


def test_split_reduction_needs_update():
    A, B, C = _matmul()
    s = te.create_schedule(C.op)
    x, y = C.op.axis
    (z,) = C.op.reduce_axis
    yo, yi = s[C].split(y, factor=16)
    zo, zi = s[C].split(z, factor=16)
    s[C].reorder(x, yo, zo, yi, zi)
    a = te.placeholder((16,), name="a")
    b = te.placeholder((16, 16), name="b")
    k = te.reduce_axis((0, 16), name="k")
    c = te.compute((16,), lambda i: te.sum(a[k] * b[i, k], axis=k), name="c")
    Bb = tir.decl_buffer(b.shape, b.dtype, name="B", offset_factor=1,
                         strides=[te.var("s1"), 1])
    only_body = te.decl_tensor_intrin(
        c.op, lambda ins, outs: tir.call_extern("int32", "f", outs[0].access_ptr("w")),
        name="only_body", binds={b: Bb}, default_buffer_params={"offset_factor": 1})
    s[C].tensorize(yi, only_body)
    with pytest.raises(ScheduleError, match="has no reduce_update"):
        lower(s, [A, B, C])


def test_declaration_mistakes():
    a = te.placeholder((4,), name="a")
    b = te.compute((4,), lambda i: a[i] * 2, name="b")
    c = te.compute((4,), lambda i: b[i] + 1, name="c")
    with pytest.raises(ScheduleError, match="must be placeholders"):
        te.decl_tensor_intrin(c.op, lambda ins, outs: tir.call_extern("int32", "f"))
    with pytest.raises(ScheduleError, match="must be a te.compute"):
        te.decl_tensor_intrin(a.op, lambda ins, outs: None)
    with pytest.raises(ScheduleError, match="returns 2 statements"):
        te.decl_tensor_intrin(b.op, lambda ins, outs: (None, None))
    A, B, C = _matmul()
    s = te.create_schedule(C.op)
    with pytest.raises(ScheduleError, match="not a TensorIntrin"):
        s[C].tensorize(C.op.axis[1], "gemv")
