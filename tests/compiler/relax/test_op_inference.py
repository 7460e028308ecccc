"""Struct-info inference of every operator family: shapes and dtypes (broadcasting included),
symbolic dims, attributes, and an error per family whose message names the operator, the
argument and the mismatch."""
import pytest

from compiler import TypeInferenceError, relax, tir
from compiler.relax import op
from compiler.relax import script as R
from compiler.relax.struct_info import TensorStructInfo, TupleStructInfo

n = tir.Var("n", "int64")
m = tir.Var("m", "int64")


def T(shape, dtype="float32"):  # noqa: N802
    return relax.Var("t", R.Tensor(shape, dtype))


def sinfo(call):
    return call.struct_info


def check(call, shape, dtype="float32"):
    s = call.struct_info
    assert isinstance(s, TensorStructInfo), s
    assert s.dtype == dtype
    assert s.shape is not None and len(s.shape) == len(shape), s
    for a, b in zip(s.shape, shape):
        if isinstance(b, int):
            assert a == b, (s.shape, shape)
        else:
            assert relax.shape_util.equal(a, b), (s.shape, shape)


def raises(call, *phrases):
    with pytest.raises(TypeInferenceError) as e:
        call.struct_info  # noqa: B018
    for p in phrases:
        assert p in str(e.value), str(e.value)
    return str(e.value)


# ---- elementwise ----------------------------------------------------------------------------
@pytest.mark.parametrize("a,b,out", [
    ((2, 3), (2, 3), (2, 3)),
    ((2, 1, 4), (3, 1), (2, 3, 4)),
    ((), (5,), (5,)),
    ((n, 4), (4,), (n, 4)),
    ((n, 1), (1, m), (n, m)),
])
def test_binary_broadcast(a, b, out):
    check(op.add(T(a), T(b)), out)
    check(op.multiply(T(a), T(b)), out)
    check(op.less(T(a), T(b)), out, "bool")


def test_binary_dtype_and_errors():
    check(op.maximum(T((2,), "int32"), T((2,), "int32")), (2,), "int32")
    raises(op.add(T((2, 3)), T((4,))), "relax.add", "x1", "(2, 3)", "x2", "(4,)", "3 vs 4")
    raises(op.subtract(T((2,)), T((2,), "int32")), "relax.subtract", "x1 has dtype float32",
           "x2 has dtype int32", "astype")
    # symbolic vs a different static dim: rank known, dims not
    s = op.add(T((n,)), T((4,))).struct_info
    assert s.ndim == 1 and s.shape is None


def test_python_operators_and_scalars():
    x = T((2, 3))
    check(x + 1.0, (2, 3))
    check(2.0 * x, (2, 3))
    c = x - 1
    assert c.args[1].data.dtype == "float32"
    check(-x, (2, 3))
    check(op.where(op.greater(x, 0.0), x, T((3,))), (2, 3))


def test_unary():
    for f in (op.exp, op.log, op.sqrt, op.rsqrt, op.sigmoid, op.tanh, op.erf, op.abs,
              op.negative, op.floor, op.ceil, op.round):
        check(f(T((n, 3))), (n, 3))
    check(op.abs(T((3,), "int32")), (3,), "int32")
    check(op.clip(T((2, 2)), 0.0, 6.0), (2, 2))
    raises(op.exp(T((3,), "int32")), "relax.exp", "x has dtype int32", "float")
    check(op.astype(T((2, 3)), "float16"), (2, 3), "float16")


# ---- nn -------------------------------------------------------------------------------------
def test_conv2d():
    x, w = T((n, 3, 32, 32)), T((16, 3, 3, 3))
    check(op.nn.conv2d(x, w), (n, 16, 30, 30))
    check(op.nn.conv2d(x, w, strides=2, padding=1), (n, 16, 16, 16))
    check(op.nn.conv2d(x, w, padding=(1, 2, 0, 3), dilation=2), (n, 16, 29, 33))
    c = op.nn.conv2d(x, w, strides=(2, 1), padding=1)
    assert c.attrs.strides == (2, 1) and c.attrs.padding == (1, 1, 1, 1)
    # depthwise and grouped
    check(op.nn.conv2d(T((1, 8, 10, 10)), T((8, 1, 3, 3)), groups=8, padding=1), (1, 8, 10, 10))
    check(op.nn.conv2d(T((1, 8, 10, 10)), T((4, 4, 1, 1)), groups=2), (1, 4, 10, 10))
    check(op.nn.conv2d(T((1, 3, 8, 8), "int8"), T((4, 3, 1, 1), "int8"), out_dtype="int32"),
          (1, 4, 8, 8), "int32")


def test_conv2d_errors():
    raises(op.nn.conv2d(T((1, 3, 8, 8)), T((16, 4, 3, 3))),
           "relax.nn.conv2d: data has 3 channels but weight expects 4 (groups=1)")
    raises(op.nn.conv2d(T((1, 8, 8, 8)), T((6, 2, 3, 3)), groups=4),
           "relax.nn.conv2d", "6 output channels", "groups=4")
    raises(op.nn.conv2d(T((1, 3, 8)), T((4, 3, 3, 3))), "data must be 4-D")
    raises(op.nn.conv2d(T((1, 3, 2, 2)), T((4, 3, 3, 3))), "output height would be 0")
    raises(op.nn.conv2d(T((1, 8, 8, 3)), T((4, 3, 3, 3)), data_layout="NHWC"),
           "only data_layout='NCHW'")


def test_conv2d_transpose():
    check(op.nn.conv2d_transpose(T((n, 8, 7, 7)), T((8, 4, 3, 3)), strides=2, padding=1,
                                 output_padding=1), (n, 4, 14, 14))
    check(op.nn.conv2d_transpose(T((1, 4, 5, 5)), T((4, 2, 4, 4)), strides=2, groups=2),
          (1, 4, 12, 12))
    raises(op.nn.conv2d_transpose(T((1, 4, 5, 5)), T((3, 2, 3, 3))),
           "relax.nn.conv2d_transpose: data has 4 channels but weight expects 3")


def test_pools():
    x = T((n, 4, 7, 7))
    check(op.nn.max_pool2d(x, 2, 2), (n, 4, 3, 3))
    check(op.nn.max_pool2d(x, 2, 2, ceil_mode=True), (n, 4, 4, 4))
    check(op.nn.avg_pool2d(x, 3, 2, padding=1, count_include_pad=True), (n, 4, 4, 4))
    # ceil mode never starts a window past the input and its top/left padding
    check(op.nn.max_pool2d(T((1, 1, 5, 5)), 2, 2, padding=1, ceil_mode=True), (1, 1, 3, 3))
    check(op.nn.adaptive_avg_pool2d(x, 1), (n, 4, 1, 1))
    check(op.nn.adaptive_max_pool2d(x, (1, 1)), (n, 4, 1, 1))
    check(op.nn.adaptive_avg_pool2d(x), (n, 4, 7, 7))
    raises(op.nn.max_pool2d(T((1, 1, 2, 2)), 3), "relax.nn.max_pool2d", "output height")
    raises(op.nn.avg_pool2d(T((1, 2, 3)), 2), "relax.nn.avg_pool2d: data must be 4-D")
    raises(op.nn.max_pool2d(T((1, 1, 8, 8)), 2, padding=2), "padding", "smaller than the window")


def test_activations_and_norms():
    x = T((n, 8, 4, 4))
    for f in (op.nn.relu, op.nn.gelu, op.nn.silu, op.nn.softmax, op.nn.log_softmax):
        check(f(x), (n, 8, 4, 4))
    check(op.nn.leakyrelu(x, 0.2), (n, 8, 4, 4))
    check(op.nn.prelu(x, T((8,))), (n, 8, 4, 4))
    raises(op.nn.prelu(x, T((3,))), "relax.nn.prelu: alpha has 3 values but x has 8 channels")
    raises(op.nn.softmax(x, axis=4), "relax.nn.softmax: axis 4 is out of range")
    bn = op.nn.batch_norm(x, T((8,)), T((8,)), T((8,)), T((8,)))
    s = bn.struct_info
    assert isinstance(s, TupleStructInfo) and len(s.fields) == 3
    check(bn[0], (n, 8, 4, 4))
    check(bn[1], (8,))
    raises(op.nn.batch_norm(x, T((4,)), T((8,)), T((8,)), T((8,))),
           "relax.nn.batch_norm: gamma has shape (4,) but data needs (8,)")
    check(op.nn.layer_norm(T((n, 5, 16)), T((16,)), T((16,))), (n, 5, 16))
    check(op.nn.layer_norm(T((2, 5, 16)), T((5, 16)), T((5, 16)), axes=(1, 2)), (2, 5, 16))
    raises(op.nn.layer_norm(T((2, 5, 16)), T((5,)), T((16,))), "relax.nn.layer_norm", "gamma")
    check(op.nn.lrn(x, size=3), (n, 8, 4, 4))
    check(op.nn.pad(x, (0, 0, 0, 0, 1, 1, 2, 0)), (n, 8, 6, 6))
    raises(op.nn.pad(x, (1, 1)), "relax.nn.pad: pad_width has 2 values but data has 4 dims")
    raises(op.nn.pad(T((1, 2)), (0, 0, 2, 2), "reflect"), "reflect padding")


def test_dense_and_matmul():
    check(op.nn.dense(T((n, 32)), T((10, 32))), (n, 10))
    check(op.linear(T((4, 32)), T((10, 32)), T((10,))), (4, 10))
    raises(op.nn.dense(T((4, 32)), T((10, 31))), "relax.nn.dense", "32 features", "31")
    check(op.matmul(T((2, 3)), T((3, 4))), (2, 4))
    check(op.matmul(T((n, 1, 2, 3)), T((5, 3, 4))), (n, 5, 2, 4))
    check(op.matmul(T((3,)), T((3, 4))), (4,))
    check(op.matmul(T((2, 3)), T((3,))), (2,))
    check(op.matmul(T((3,)), T((3,))), ())
    raises(op.matmul(T((2, 3)), T((4, 5))),
           "relax.matmul: x1 of shape (2, 3) has 3 columns but x2 of shape (4, 5) has 4 rows")
    raises(op.matmul(T((2, 2, 3)), T((3, 3, 4))), "relax.matmul", "batch dims")


def test_dense_pack_and_its_weight_transform():
    check(op.nn.contrib_dense_pack(T((n, 7, 32)), T((4, 32, 32)), 100), (n, 7, 100))
    raises(op.nn.contrib_dense_pack(T((4, 32)), T((3, 32, 32)), 100),
           "relax.nn.contrib_dense_pack", "units=100", "(3, 32, 32)")
    raises(op.nn.contrib_dense_pack(T((4, 31)), T((4, 32, 32)), 100),
           "relax.nn.contrib_dense_pack", "31 features", "32")
    raises(op.nn.contrib_dense_pack(T((4, 32)), T((100, 32)), 100),
           "relax.nn.contrib_dense_pack", "3-D", "2 dims")
    check(op.nn.contrib_dense_pack_weight_transform(T((100, 24)), 32, "NK"), (4, 24, 32))
    check(op.nn.contrib_dense_pack_weight_transform(T((24, 70)), 32, "KN"), (3, 24, 32))
    raises(op.nn.contrib_dense_pack_weight_transform(T((24, 70)), 32, "OI"),
           "relax.nn.contrib_dense_pack_weight_transform", "NK or KN")


# ---- reductions, search ---------------------------------------------------------------------
def test_reductions():
    x = T((n, 3, 4))
    check(op.sum(x, axis=1), (n, 4))
    check(op.mean(x, axis=(1, 2), keepdims=True), (n, 1, 1))
    check(op.max(x), ())
    check(op.prod(x, axis=-1), (n, 3))
    check(op.argmax(x, axis=1), (n, 4), "int64")
    check(op.argmin(x, axis=1, keepdims=True), (n, 1, 4), "int64")
    check(op.argmax(x), (), "int64")
    raises(op.sum(x, axis=3), "relax.sum: axis 3 is out of range for a tensor of 3 dims")
    raises(op.mean(T((3,), "int32")), "relax.mean", "float")
    raises(op.where(T((2,)), T((2,)), T((2,))), "relax.where: condition must be a bool tensor")


# ---- manipulation, indexing -----------------------------------------------------------------
def test_reshape():
    x = T((n, 3, 4))
    check(op.reshape(x, (0, -1)), (n, 12))
    check(op.reshape(x, (n, 12)), (n, 12))
    check(op.reshape(T((2, 3, 4)), (-1, 4)), (6, 4))
    check(op.reshape(T((2, 3, 4)), (4, 0, 2)), (4, 3, 2))
    raises(op.reshape(T((2, 3)), (4, 2)),
           "relax.reshape: cannot reshape (2, 3) (6 elements) to (4, 2) (8 elements)")
    with pytest.raises(TypeInferenceError, match="at most one dim may be -1"):
        op.reshape(T((2, 3)), (-1, -1))
    with pytest.raises(TypeInferenceError, match="not a multiple of 4"):
        op.reshape(T((2, 3)), (4, -1))
    check(op.flatten(T((2, n))), (n * 2,))


def test_manipulate():
    x = T((n, 3, 4))
    check(op.permute_dims(x, (2, 0, 1)), (4, n, 3))
    check(op.permute_dims(x), (4, 3, n))
    raises(op.permute_dims(x, (0, 1)), "relax.permute_dims", "axes")
    check(op.concat([x, T((n, 5, 4))], axis=1), (n, 8, 4))
    check(op.concat([T((2, 3)), T((m, 3))], axis=0), (m + 2, 3))
    raises(op.concat([x, T((n, 5, 5))], axis=1), "relax.concat: tensors[1] has shape", "dim 2")
    s = op.split(T((6, n)), 3).struct_info
    assert [f.shape[0] for f in s.fields] == [2, 2, 2]
    s = op.split(T((10, 2)), [3, 7]).struct_info
    assert [f.shape[0] for f in s.fields] == [3, 4, 3]
    raises(op.split(T((10,)), 3), "relax.split", "does not split into 3 equal sections")
    check(op.squeeze(T((1, n, 1, 3)), axis=(0, 2)), (n, 3))
    check(op.squeeze(T((1, 2, 1, 3))), (2, 3))
    raises(op.squeeze(T((2, 3)), axis=0), "relax.squeeze: cannot squeeze axis 0 of size 2")
    check(op.expand_dims(x, (0, -1)), (1, n, 3, 4, 1))
    check(op.broadcast_to(T((1, 4)), (n, 4)), (n, 4))
    raises(op.broadcast_to(T((2, 4)), (3, 4)), "relax.broadcast_to", "dim -2 is 2 vs 3")


def test_indexing():
    x = T((n, 10, 8))
    check(op.take(x, T((5,), "int64"), axis=1), (n, 5, 8))
    check(op.take(x, T((2, 3), "int32"), axis=0), (2, 3, 10, 8))
    raises(op.take(x, T((5,)), axis=1), "relax.take: indices must be an integer tensor")
    check(op.strided_slice(T((10, 8)), [0, 1], [2, -1], [8, 0], [2, -1]), (3, 7))
    check(op.strided_slice(T((10, 8)), [1], [0], [100]), (10, 8))
    s = op.strided_slice(x, [0], [1], [2 ** 63 - 1]).struct_info
    assert s.ndim == 3 and s.shape[1:] == (10, 8) and isinstance(s.shape[0], tir.PrimExpr)
    raises(op.strided_slice(x, [0, 1], [0], [1]), "relax.strided_slice", "same length")


def test_image_create_and_call_tir():
    check(op.image.resize2d(T((n, 3, 8, 8)), (16, 12)), (n, 3, 16, 12))
    raises(op.image.resize2d(T((1, 3, 8, 8)), 4, method="area"), "relax.image.resize2d",
           "method must be one of")
    check(op.zeros((2, n), "int32"), (2, n), "int32")
    check(op.full((3,), 1.5), (3,))
    check(op.ones_like(T((n, 2))), (n, 2))
    check(op.arange(2, 11, 3), (3,), "int64")
    gv = relax.GlobalVar("add_one")
    c = relax.call_tir(gv, [T((n, 4))], R.Tensor((n, 4), "float32"))
    check(c, (n, 4))
    s = relax.call_tir(gv, [T((4,))], [R.Tensor((4,)), R.Tensor((2,), "int32")]).struct_info
    assert isinstance(s, TupleStructInfo) and s.fields[1].dtype == "int32"
    assert op.shape_of(T((n, 3))).struct_info.values[1] == 3


def test_unknown_shapes_keep_rank():
    x = relax.Var("x", R.Tensor(dtype="float32", ndim=4))
    s = op.nn.conv2d(x, T((8, 3, 3, 3))).struct_info
    assert s.ndim == 4 and s.shape is None
    s = op.add(x, T((3,))).struct_info
    assert s.ndim == 4 and s.shape is None
    assert op.sum(x, axis=(1, 2)).struct_info.ndim == 2
    obj = relax.Var("o")
    assert op.nn.relu(obj).struct_info.ndim == -1


def test_attrs_and_registry():
    c = op.nn.conv2d(T((1, 3, 8, 8)), T((4, 3, 3, 3)), padding=1)
    assert list(c.attrs.keys())[:4] == ["strides", "padding", "dilation", "groups"]
    assert c.attrs["groups"] == 1 and c.attrs.get("nope", 7) == 7
    conv = relax.Op.get("relax.nn.conv2d")
    assert conv is c.op and conv.get_attr("FInferStructInfo") is not None
    with pytest.raises(Exception, match="unknown operator 'relax.conv2d'.*relax.nn.conv2d"):
        relax.Op.get("relax.conv2d")
    with pytest.raises(Exception, match="unknown attribute"):
        relax.op.registry.make_call("relax.nn.relu", (T((1,)),), alpha=1)
    assert len(relax.Op.list_op_names()) > 90
