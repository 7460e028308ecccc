"""Struct-info inference of the 3-D (NCDHW) operators: conv3d (also in the blocked layouts
NCDHW[x]c / OIDHW[i]i[o]o) and the 3-D pools, with symbolic batch dims, padding forms, groups,
ceil mode, and their errors."""
import pytest

from compiler import TypeInferenceError, relax, tir
from compiler.ir.errors import IRError
from compiler.relax import op
from compiler.relax import script as R
from compiler.relax.struct_info import TensorStructInfo

n = tir.Var("n", "int64")


def T(shape, dtype="float32"):  # noqa: N802
    return relax.Var("t", R.Tensor(shape, dtype))


def check(call, shape, dtype="float32"):
    s = call.struct_info
    assert isinstance(s, TensorStructInfo), s
    assert s.dtype == dtype
    assert len(s.shape) == len(shape), s
    for a, b in zip(s.shape, shape):
        assert a == b if isinstance(b, int) else relax.shape_util.equal(a, b), (s.shape, shape)


def raises(call, *phrases):
    with pytest.raises(TypeInferenceError) as e:
        call.struct_info  # noqa: B018
    for p in phrases:
        assert p in str(e.value), str(e.value)


def test_conv3d():
    x = T((n, 3, 8, 112, 112))
    check(op.nn.conv3d(x, T((64, 3, 3, 7, 7)), strides=(1, 2, 2), padding=(1, 3, 3)),
          (n, 64, 8, 56, 56))
    check(op.nn.conv3d(T((1, 4, 5, 6, 7)), T((6, 2, 2, 3, 2)), strides=(2, 1, 3),
                       padding=(0, 1, 1, 1, 0, 0), dilation=(1, 2, 1), groups=2),
          (1, 6, 3, 3, 3))
    check(op.nn.conv3d(T((1, 3, 4, 4, 4), "int8"), T((2, 3, 1, 1, 1), "int8"),
                       out_dtype="int32"), (1, 2, 4, 4, 4), "int32")


def test_conv3d_errors():
    raises(op.nn.conv3d(T((1, 3, 4, 8, 8)), T((16, 4, 3, 3, 3))),
           "relax.nn.conv3d: data has 3 channels but weight expects 4 (groups=1)")
    raises(op.nn.conv3d(T((1, 8, 4, 8, 8)), T((6, 2, 3, 3, 3)), groups=4), "6 output channels")
    raises(op.nn.conv3d(T((1, 3, 8, 8)), T((4, 3, 3, 3, 3))), "data must be 5-D")
    raises(op.nn.conv3d(T((1, 3, 2, 8, 8)), T((4, 3, 3, 3, 3))), "output depth would be 0")
    raises(op.nn.conv3d(T((1, 3, 4, 8, 8)), T((4, 3, 3, 3, 3)), data_layout="NDHWC"),
           "only data_layout='NCDHW'")
    with pytest.raises(IRError, match="padding must have 1, 3 or 6 values"):
        op.nn.conv3d(T((1, 3, 4, 8, 8)), T((4, 3, 3, 3, 3)), padding=(1, 1))


def test_conv3d_blocked():
    x = T((n, 1, 8, 112, 112, 3))
    check(op.nn.conv3d(x, T((4, 1, 3, 7, 7, 3, 16)), strides=(1, 2, 2), padding=(1, 3, 3),
                       data_layout="NCDHW3c", kernel_layout="OIDHW3i16o",
                       out_layout="NCDHW16c"), (n, 4, 8, 56, 56, 16))
    raises(op.nn.conv3d(x, T((4, 1, 3, 7, 7, 3, 16)), data_layout="NCDHW3c",
                        kernel_layout="OIDHW3i8o", out_layout="NCDHW16c"), "do not agree")
    raises(op.nn.conv3d(x, T((4, 2, 3, 7, 7, 3, 16)), data_layout="NCDHW3c",
                        kernel_layout="OIDHW3i16o", out_layout="NCDHW16c"), "do not match")


def test_pool3d():
    x = T((n, 4, 6, 7, 8))
    check(op.nn.max_pool3d(x, 2, 2), (n, 4, 3, 3, 4))
    check(op.nn.avg_pool3d(x, 3, 2, padding=1, ceil_mode=True), (n, 4, 4, 4, 5))
    check(op.nn.max_pool3d(x, (1, 3, 3), (1, 2, 2), padding=(0, 1, 1), dilation=(1, 2, 1)),
          (n, 4, 6, 3, 4))
    check(op.nn.adaptive_avg_pool3d(x, (1, 1, 1)), (n, 4, 1, 1, 1))
    check(op.nn.adaptive_max_pool3d(x, (2, 3, 4)), (n, 4, 2, 3, 4))
    check(op.nn.adaptive_avg_pool3d(x), (n, 4, 6, 7, 8))


def test_pool3d_errors():
    raises(op.nn.max_pool3d(T((1, 4, 6, 7)), 2), "data must be 5-D (NCDHW)")
    raises(op.nn.avg_pool3d(T((1, 4, 6, 7, 8)), 2, padding=2), "must be smaller than the window")
    raises(op.nn.max_pool3d(T((1, 4, 2, 7, 8)), 3), "output depth would be 0")
    raises(op.nn.max_pool3d(T((1, 4, 6, 7, 8)), 2, layout="NDHWC"), "only layout='NCDHW'")
