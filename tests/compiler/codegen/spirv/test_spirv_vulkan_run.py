"""The kernels of GPUs part 1 built for target "vulkan" (host c and llvm) run on the
microruntime's Vulkan device (Mesa's lavapipe here) and match numpy; every shader passes
spirv-val; the exported library (one .so, SPIR-V in its blob) loads and runs, and one whose
SPIR-V is corrupt fails at load with a clean error."""
import math

import numpy as np
import pytest
from spirv_check import (
    bool_select,
    conv2d,
    matmul,
    row_reduce,
    softmax,
    validate_module,
    vector_add,
    vulkan_module,
)

import microruntime as mr
from compiler import te

pytestmark = pytest.mark.skipif(not mr.enabled("vulkan"),
                                reason="no Vulkan loader with a compute device")


def _arrays(*xs):
    return [mr.nd.array(x, mr.vulkan(0)) for x in xs]


def _threads(t, factor):
    """A schedule of the 1-d stage `t`: blocks of `factor` threads, one element each."""
    s = te.create_schedule(t.op)
    bx, tx = s[t].split(t.op.axis[0], factor=factor)
    s[t].bind(bx, te.thread_axis("blockIdx.x"))
    s[t].bind(tx, te.thread_axis("threadIdx.x"))
    return s


def test_vector_add(target):
    m, dev = vulkan_module(*vector_add(), "vadd", target)
    validate_module(dev)
    a, b = np.arange(1000, dtype="float32"), np.ones(1000, "float32")
    A, B, C = _arrays(a, b, np.zeros(1000, "float32"))
    m["vadd"](A, B, C)
    np.testing.assert_allclose(C.numpy(), a + b)


def test_matmul_shared_and_exported_library(target, tmp_path):
    m, dev = vulkan_module(*matmul(), "mm", target)
    validate_module(dev)
    rng = np.random.default_rng(5)
    a = rng.standard_normal((32, 40)).astype("float32")
    b = rng.standard_normal((40, 24)).astype("float32")
    A, B, C = _arrays(a, b, np.zeros((32, 24), "float32"))
    m["mm"](A, B, C)
    np.testing.assert_allclose(C.numpy(), a @ b, rtol=1e-4, atol=1e-4)
    path = str(tmp_path / "mm.so")
    m.export_library(path)
    loaded = mr.load_module(path)
    assert [i.type_key for i in loaded.imported_modules] == ["vulkan"]
    C2, = _arrays(np.zeros((32, 24), "float32"))
    loaded["mm"](A, B, C2)
    np.testing.assert_allclose(C2.numpy(), a @ b, rtol=1e-4, atol=1e-4)


def test_bool_tensors(target):
    m, dev = vulkan_module(*bool_select(), "bsel", target)
    mask = np.random.default_rng(4).random(100) < 0.5
    a = np.arange(100, dtype="float32") + 1
    M, A, O, V = _arrays(mask, a, np.zeros(100, "bool"), np.zeros(100, "float32"))
    m["bsel"](M, A, O, V)
    np.testing.assert_array_equal(O.numpy(), ~mask)
    np.testing.assert_array_equal(V.numpy(), np.where(mask, a, 0))


def test_erf(target):
    n = 512
    A = te.placeholder((n,), name="A")
    B = te.compute((n,), lambda i: te.erf(A[i]), name="B")
    s = _threads(B, 64)
    m, dev = vulkan_module(s, [A, B], "erf", target)
    validate_module(dev)
    a = np.concatenate([np.linspace(-6, 6, n - 4), [0.0, 1e-8, -30.0, 30.0]]).astype("float32")
    A_, B_ = _arrays(a, np.zeros(n, "float32"))
    m["erf"](A_, B_)
    want = np.array([math.erf(v) for v in a.astype("float64")])
    np.testing.assert_allclose(B_.numpy(), want, rtol=0, atol=3e-7)


@pytest.mark.parametrize("threads,op", [(48, "sum"), (32, "max")])
def test_cross_thread_reduction(target, threads, op):
    m, dev = vulkan_module(*row_reduce(threads=threads, op=op), "rowred", target)
    validate_module(dev)
    a = np.random.default_rng(6).standard_normal((5, 300)).astype("float32")
    A, B = _arrays(a, np.zeros(5, "float32"))
    m["rowred"](A, B)
    ref = a.sum(axis=1) if op == "sum" else a.max(axis=1)
    np.testing.assert_allclose(B.numpy(), ref, rtol=1e-5, atol=1e-5)


def test_softmax(target):
    m, dev = vulkan_module(*softmax(), "softmax", target)
    validate_module(dev)
    x = np.random.default_rng(7).standard_normal((37, 19)).astype("float32")
    X, Y = _arrays(x, np.zeros_like(x))
    m["softmax"](X, Y)
    ref = np.exp(x - x.max(axis=1, keepdims=True))
    ref /= ref.sum(axis=1, keepdims=True)
    np.testing.assert_allclose(Y.numpy(), ref, rtol=1e-5, atol=1e-6)


def test_conv2d(target):
    m, dev = vulkan_module(*conv2d(), "conv", target)
    validate_module(dev)
    rng = np.random.default_rng(8)
    x = rng.standard_normal((1, 3, 10, 9)).astype("float32")
    w = rng.standard_normal((4, 3, 3, 3)).astype("float32")
    xp = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)))
    ref = np.zeros((1, 4, 10, 9), "float32")
    for i in range(10):
        for j in range(9):
            ref[0, :, i, j] = np.tensordot(w, xp[0, :, i:i + 3, j:j + 3], axes=3)
    X, W, Y = _arrays(x, w, np.zeros((1, 4, 10, 9), "float32"))
    m["conv"](X, W, Y)
    np.testing.assert_allclose(Y.numpy(), ref, rtol=1e-4, atol=1e-4)


def test_symbolic_size_scalars_and_int_math(target):
    # n is a push constant; floordiv/floormod of negative numbers, min/max, select
    n = te.var("n")
    A = te.placeholder((n,), name="A", dtype="int32")
    B = te.compute((n,), lambda i: te.max(te.min(A[i] // 3 + A[i] % 3, 7), -7), name="B")
    s = _threads(B, 32)
    m, dev = vulkan_module(s, [A, B], "imath", target)
    validate_module(dev)
    a = np.arange(-50, 50, dtype="int32")
    Ad, Bd = _arrays(a, np.zeros(100, "int32"))
    m["imath"](Ad, Bd)
    np.testing.assert_array_equal(Bd.numpy(), np.clip(a // 3 + a % 3, -7, 7))


def test_float_math(target):
    A = te.placeholder((256,), name="A")
    B = te.compute((256,), lambda i: te.tanh(A[i]) + te.sqrt(te.abs(A[i])) +
                   te.log(te.abs(A[i]) + 1.0) + te.power(te.abs(A[i]), 1.5) +
                   te.sigmoid(A[i]) + te.floor(A[i]), name="B")
    s = _threads(B, 64)
    m, dev = vulkan_module(s, [A, B], "fmath", target)
    validate_module(dev)
    a = np.random.default_rng(9).standard_normal(256).astype("float32") * 3
    Ad, Bd = _arrays(a, np.zeros(256, "float32"))
    m["fmath"](Ad, Bd)
    ref = (np.tanh(a) + np.sqrt(np.abs(a)) + np.log(np.abs(a) + 1) + np.abs(a) ** 1.5 +
           1 / (1 + np.exp(-a)) + np.floor(a))
    np.testing.assert_allclose(Bd.numpy(), ref, rtol=1e-4, atol=1e-4)


def test_cpu_tensor_passed_to_a_vulkan_kernel_is_refused():
    m, _ = vulkan_module(*vector_add(), "vadd")
    x = mr.nd.array(np.zeros(1000, "float32"))
    with pytest.raises(ValueError, match="device"):
        m["vadd"](x, x, x)


def test_corrupt_spirv_in_a_library_fails_at_load(tmp_path):
    m, _ = vulkan_module(*vector_add(), "vadd")
    path = tmp_path / "vadd.so"
    m.export_library(str(path))
    data = bytearray(path.read_bytes())
    magic = bytes.fromhex("03022307")
    at = data.find(magic)
    assert at > 0 and data.find(magic, at + 1) < 0  # one shader
    data[at:at + 4] = b"\xde\xad\xbe\xef"
    bad = tmp_path / "bad.so"
    bad.write_bytes(bytes(data))
    with pytest.raises(RuntimeError, match="imported module 1 of kind 'vulkan': vulkan module: "
                       "the SPIR-V of kernel 'vadd_kernel' has the magic number 0xefbeadde"):
        mr.load_module(str(bad))


def _add_one(n=256):
    a = te.placeholder((n,), name="a")
    b = te.compute((n,), lambda i: a[i] + 1.0, name="b")
    s = _threads(b, 64)
    return s, [a, b]


def test_recorded_launches_run_in_order_across_batches():
    """Launches are recorded and submitted in batches: 600 chained kernels (more than two
    batches), each reading what the one before wrote, then a copy to the host."""
    m, _ = vulkan_module(*_add_one(), "inc", "llvm")
    x, y = _arrays(np.zeros(256, "float32"), np.zeros(256, "float32"))
    for _ in range(300):
        m["inc"](x, y)
        m["inc"](y, x)
    np.testing.assert_array_equal(x.numpy(), np.full(256, 600, "float32"))


def test_buffers_freed_and_written_while_launches_are_recorded():
    """Freeing a buffer or writing it from the host waits for the launches recorded on it."""
    m, _ = vulkan_module(*_add_one(), "inc", "llvm")
    x, y = _arrays(np.zeros(256, "float32"), np.zeros(256, "float32"))
    tmp = mr.nd.empty((256,), "float32", mr.vulkan(0))
    m["inc"](x, tmp)
    m["inc"](tmp, y)
    del tmp                                   # its launches are still recorded
    x.copyfrom(np.full(256, 5, "float32"))    # the first launch read x: it ran before this
    np.testing.assert_array_equal(y.numpy(), np.full(256, 2, "float32"))
    m["inc"](x, y)
    mr.vulkan(0).sync()
    np.testing.assert_array_equal(y.numpy(), np.full(256, 6, "float32"))


@pytest.mark.parametrize("dtype", ["int8", "uint8", "int16", "float16"])
def test_narrow_element_types(dtype):
    """8- and 16-bit tensors: loaded, computed at their width, converted to float32."""
    n = 256
    a = te.placeholder((n,), name="a", dtype=dtype)
    b = te.compute((n,), lambda i: a[i] + a[i], name="b")
    c = te.compute((n,), lambda i: b[i].astype("float32") * 0.5, name="c")
    s = te.create_schedule([b.op, c.op])
    for t in (b, c):
        bx, tx = s[t].split(t.op.axis[0], factor=64)
        s[t].bind(bx, te.thread_axis("blockIdx.x"))
        s[t].bind(tx, te.thread_axis("threadIdx.x"))
    m, dev = vulkan_module(s, [a, b, c], "narrow", "llvm")
    validate_module(dev)
    x = (np.arange(n) % 60 - (0 if dtype.startswith("u") else 30)).astype(dtype)
    A, B, C = _arrays(x, np.zeros(n, dtype), np.zeros(n, "float32"))
    m["narrow"](A, B, C)
    np.testing.assert_array_equal(B.numpy(), x + x)
    np.testing.assert_array_equal(C.numpy(), (x + x).astype("float32") * 0.5)
