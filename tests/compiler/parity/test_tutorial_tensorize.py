"""TVM's tutorial "Use Tensorize to Leverage Hardware Intrinsics" (tensorize.py) with `import
tvm` replaced by Kiln's packages, on both host targets: the gemv intrinsic declared with
te.decl_tensor_intrin (a tir.call_extern of "gemv_update"), `s[C].tensorize(yi, gemv)`, the
micro-kernel written in C++ turned into LLVM IR by contrib.clang.create_llvm and imported with
`pragma "import_llvm"` (linked into the module on llvm, compiled by clang on c), then the
reduce-update variant (reset + update) on a split reduction. The C-source route
(`pragma "import_c"`) is checked on the same schedule."""
import numpy as np
import pytest

import compiler as tvm_compiler
import microruntime as tvm
from compiler import te, tir
from compiler.contrib import clang, utils
from compiler.tir.functor import post_order_visit

N, M, L = 1024, 512, 64
factor = 16


def get_const_tuple(shape):
    return tuple(int(x) for x in shape)


def _matmul():
    A = te.placeholder((N, L), name="A")
    B = te.placeholder((M, L), name="B")
    k = te.reduce_axis((0, L), name="k")
    C = te.compute((N, M), lambda i, j: te.sum(A[i, k] * B[j, k], axis=k), name="C")
    return A, B, C


def intrin_gemv(m, l):
    a = te.placeholder((l,), name="a")
    b = te.placeholder((m, l), name="b")
    k = te.reduce_axis((0, l), name="k")
    c = te.compute((m,), lambda i: te.sum(a[k] * b[i, k], axis=k), name="c")
    Ab = tir.decl_buffer(a.shape, a.dtype, name="A", offset_factor=1, strides=[1])
    Bb = tir.decl_buffer(b.shape, b.dtype, name="B", offset_factor=1, strides=[te.var("s1"), 1])
    Cb = tir.decl_buffer(c.shape, c.dtype, name="C", offset_factor=1, strides=[1])

    def intrin_func(ins, outs):
        ib = tir.ir_builder.create()
        aa, bb = ins
        cc = outs[0]
        ib.emit(
            tir.call_extern(
                "int32",
                "gemv_update",
                cc.access_ptr("w"),
                aa.access_ptr("r"),
                bb.access_ptr("r"),
                m,
                l,
                bb.strides[0],
            )
        )
        return ib.get()

    return te.decl_tensor_intrin(c.op, intrin_func, binds={a: Ab, b: Bb, c: Cb})


GEMV_UPDATE = """
  extern "C" int gemv_update(float *cc, float *aa, float *bb, int m, int l, int stride) {
    for (int i = 0; i < m; ++i) {
        for (int j = 0; j < l; ++j) {
            cc[i] += aa[j] * bb[i * stride + j];
        }
    }
    return 0;
  }
"""
GEMV_RESET = """
  extern "C" int gemv_reset(float *cc, int m) {
    for (int i = 0; i < m; ++i) {
        cc[i] = 0.0;
    }
    return 0;
  }
"""


def gemv_impl(cc_code=GEMV_UPDATE):
    temp = utils.tempdir()
    ll_path = temp.relpath("temp.ll")
    # Create LLVM ir from c source code
    ll_code = clang.create_llvm(cc_code, output=ll_path)
    return ll_code


def _check(func, A, B, C):
    dtype = A.dtype
    dev = tvm.device("cpu", 0)
    a = np.random.uniform(size=get_const_tuple(A.shape)).astype(dtype)
    b = np.random.uniform(size=get_const_tuple(B.shape)).astype(dtype)
    c = tvm.nd.array(np.zeros(get_const_tuple(C.shape), dtype=dtype), dev)
    func(tvm.nd.array(a, dev), tvm.nd.array(b, dev), c)
    np.testing.assert_allclose(c.numpy(), np.dot(a, b.T), rtol=1e-3)


def _find_calls(s, args):
    found = []
    post_order_visit(tvm_compiler.lower(s, args)["main"].body,
                     lambda n: found.append(n) if isinstance(n, tir.Call)
                     and n.op == "tir.call_extern" else None)
    return found


def _extern_calls(s, args):
    return [c.args[0].value for c in _find_calls(s, args)]


def test_tensorize_gemv(target):
    A, B, C = _matmul()
    s = te.create_schedule(C.op)
    x, y = C.op.axis
    (z,) = C.op.reduce_axis
    yo, yi = s[C].split(y, factor=factor)
    s[C].reorder(x, yo, yi, z)
    text = str(tvm_compiler.lower(s, [A, B, C], simple_mode=True))
    assert "j.inner" in text and "gemv_update" not in text

    gemv = intrin_gemv(factor, L)
    s[C].tensorize(yi, gemv)
    text = str(tvm_compiler.lower(s, [A, B, C], simple_mode=True))
    assert "j.inner" not in text and "for k" not in text
    assert _extern_calls(s, [A, B, C]) == ["gemv_update"]

    s[C].pragma(x, "import_llvm", gemv_impl())
    assert "import_llvm" in str(tvm_compiler.lower(s, [A, B, C], simple_mode=True))
    func = tvm_compiler.build(s, [A, B, C], target=target, name="gemv")
    _check(func, A, B, C)


def intrin_gemv_reset_update(m, l):
    a = te.placeholder((l,), name="a")
    b = te.placeholder((m, l), name="b")
    k = te.reduce_axis((0, l), name="k")
    c = te.compute((m,), lambda i: te.sum(a[k] * b[i, k], axis=k), name="c")
    Ab = tir.decl_buffer(a.shape, a.dtype, name="A", offset_factor=1, strides=[1])
    Bb = tir.decl_buffer(b.shape, b.dtype, name="B", offset_factor=1, strides=[te.var("s1"), 1])
    Cb = tir.decl_buffer(c.shape, c.dtype, name="C", offset_factor=1, strides=[1])

    def intrin_func(ins, outs):
        aa, bb = ins
        cc = outs[0]

        def _body():
            ib = tir.ir_builder.create()
            ib.emit(
                tir.call_extern(
                    "int32",
                    "gemv_update",
                    cc.access_ptr("w"),
                    aa.access_ptr("r"),
                    bb.access_ptr("r"),
                    m,
                    l,
                    bb.strides[0],
                )
            )
            return ib.get()

        def _reduce_reset():
            ib = tir.ir_builder.create()
            ib.emit(tir.call_extern("int32", "gemv_reset", cc.access_ptr("w"), m))
            return ib.get()

        def _reduce_update():
            return _body()

        return _body(), _reduce_reset(), _reduce_update()

    return te.decl_tensor_intrin(c.op, intrin_func, binds={a: Ab, b: Bb, c: Cb})


@pytest.mark.parametrize("kernel", ["import_llvm", "import_c"])
def test_reduce_update(target, kernel):
    A, B, C = _matmul()
    s = te.create_schedule(C.op)
    x, y = C.op.axis
    (z,) = C.op.reduce_axis
    yo, yi = s[C].split(y, factor=factor)
    zo, zi = s[C].split(z, factor=factor)
    s[C].reorder(x, yo, zo, yi, zi)

    gemv = intrin_gemv_reset_update(factor, factor)
    s[C].tensorize(yi, gemv)
    assert sorted(_extern_calls(s, [A, B, C])) == ["gemv_reset", "gemv_update"]
    if kernel == "import_llvm":
        s[C].pragma(yo, "import_llvm", gemv_impl(GEMV_UPDATE + GEMV_RESET))
    else:  # the same micro-kernel as C source (no extern "C" in C)
        s[C].pragma(yo, "import_c", (GEMV_UPDATE + GEMV_RESET).replace('extern "C" ', ""))
    func = tvm_compiler.build(s, [A, B, C], target=target, name="gemv")
    _check(func, A, B, C)
    # bb.strides[0] differs from l here: the tile of B is 16 x 16 of rows of 64
    call = [c for c in _find_calls(s, [A, B, C]) if c.args[0].value == "gemv_update"][0]
    assert call.args[4].value == factor and call.args[6].value == L

