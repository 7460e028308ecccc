"""Wrong arguments at call time raise Python errors naming the argument, the expected and the
actual value; bad targets raise TargetError."""
import numpy as np
import pytest
from sample_kernels import matmul, vector_add

import compiler
import microruntime
from compiler import ScheduleError, TargetError


@pytest.fixture
def add(target):
    s, args = vector_add()
    return compiler.build(s, args, target=target, name="test_add")["test_add"]


def nd(shape, dtype="float32"):
    return microruntime.nd.array(np.zeros(shape, dtype))


def test_wrong_argument_count(add):
    with pytest.raises(TypeError, match=r"Expected 3 arguments when calling:\n  `test_add\(A, "
                                        r"B, C\)`,\n  but got 2"):
        add(nd(4), nd(4))


def test_wrong_dtype(add):
    with pytest.raises(TypeError, match=r"Mismatched C.dtype on argument #2 when calling:\n  "
                                        r"`test_add\(A, B, C\)`,\n  expected float32, but got "
                                        r"int32"):
        add(nd(4), nd(4), nd(4, "int32"))


def test_wrong_shape(add):
    with pytest.raises(ValueError, match=r"(?s)Mismatched B.shape\[0\] on argument #1 .*expected "
                                         r"n = 4, but got 5"):
        add(nd(4), nd(5), nd(4))


def test_wrong_ndim(add):
    with pytest.raises(ValueError, match=r"(?s)Mismatched A.ndim on argument #0.*expected 1, but "
                                         r"got 2"):
        add(nd((2, 2)), nd(4), nd(4))


@pytest.mark.parametrize("value", [3, None, "a string object, not a tensor", 2.5])
def test_wrong_type(add, value):
    # An object of another kind (a Str here) must not be misread as a DLTensor.
    with pytest.raises(TypeError, match=r"(?s)Mismatched type on argument #1.*expected Tensor, "
                                        r"but got type index \d+"):
        add(nd(4), value, nd(4))


def test_wrong_device(add):
    if not microruntime.enabled("opencl"):
        pytest.skip("no second device kind to pass a tensor from")
    a = microruntime.nd.array(np.zeros(4, "float32"), device=microruntime.opencl(0))
    with pytest.raises(ValueError, match=r"(?s)Mismatched A.device_type.*expected cpu \(1\)"):
        add(a, nd(4), nd(4))


def test_non_compact_strides_rejected(target):
    s, args = matmul(8, parallel=False, vectorize=False)
    mm = compiler.build(s, args, target=target, name="mm")["mm"]
    view = microruntime.nd.from_dlpack(np.zeros((8, 16), "float32")[:, ::2])  # zero-copy, strided
    with pytest.raises(ValueError, match=r"(?s)Mismatched A.strides\[0\] on argument #0.*expected "
                                         r"compact stride 8, but got 16"):
        mm(view, nd((8, 8)), nd((8, 8)))


def test_unknown_target_kind():
    s, args = vector_add()
    with pytest.raises(TargetError, match="unknown target kind 'fpga'.*valid kinds: c, cuda"):
        compiler.build(s, args, target="fpga")


def test_unknown_target_option():
    with pytest.raises(TargetError, match="unknown option 'mfoo' for target kind 'c'"):
        compiler.build(*vector_add(), target="c -mfoo=1")


def test_gpu_target_without_binds_asks_for_a_bind():
    with pytest.raises(ScheduleError, match="Did you forget to bind"):
        compiler.build(*vector_add(), target="cuda")


def test_gpu_target_builds_the_kernels_it_split():
    from compiler import te

    A = te.placeholder((64,), name="A")
    B = te.compute((64,), lambda i: A[i] * 2.0, name="B")
    s = te.create_schedule(B.op)
    bx, tx = s[B].split(B.op.axis[0], factor=16)
    s[B].bind(bx, te.thread_axis("blockIdx.x"))
    s[B].bind(tx, te.thread_axis("threadIdx.x"))
    m = compiler.build(s, [A, B], target="opencl", target_host="c", name="scale")
    assert [i.name for i in m.imported_modules[0].function_infos] == ["scale_kernel"]


def test_thread_bind_in_a_host_build_is_a_schedule_error(target):
    from compiler import te

    A = te.placeholder((64,), name="A")
    B = te.compute((64,), lambda i: A[i] * 2.0, name="B")
    s = te.create_schedule(B.op)
    s[B].bind(B.op.axis[0], te.thread_axis("threadIdx.x"))
    with pytest.raises(ScheduleError, match=r"'threadIdx.x'.*target='cuda'"):
        compiler.build(s, [A, B], target=target, name="scale")
