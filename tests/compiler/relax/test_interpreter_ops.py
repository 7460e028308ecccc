"""The reference interpreter's kernel of every operator against direct numpy (float32 results
within 1e-5 relative unless stated); the result's shape and dtype must also be what struct-info
inference says. Convolutions, pools, lrn and resize are checked against onnxruntime as an
independent oracle."""
import math

import numpy as np
import pytest

from compiler import relax
from compiler.relax import interpreter, op
from compiler.relax import script as R

rng = np.random.default_rng(0)


def rand(*shape, dtype="float32"):
    return rng.standard_normal(shape).astype(dtype)


def run(build, *arrays, rtol=1e-5, atol=1e-6, expected=None):
    """Builds main(*arrays) = build(*vars), runs it, checks against `expected`."""
    params = [relax.Var(f"p{i}", R.Tensor(a.shape, str(a.dtype))) for i, a in enumerate(arrays)]
    bb = relax.BlockBuilder()
    with bb.function("main", params):
        out = bb.emit(build(*params))
        bb.emit_func_output(out)
    mod = bb.get()
    result = interpreter.run(mod, *arrays)
    sinfo = mod["main"].ret_struct_info
    if isinstance(result, tuple):
        results, infos = result, sinfo.fields
    else:
        results, infos = (result,), (sinfo,)
    for r, s in zip(results, infos):
        assert tuple(r.shape) == tuple(s.shape), (r.shape, s.shape)
        assert str(r.dtype) == s.dtype, (r.dtype, s.dtype)
    if expected is not None:
        exp = expected if isinstance(result, tuple) else (expected,)
        for r, e in zip(results, exp):
            np.testing.assert_allclose(r, e, rtol=rtol, atol=atol)
    return result


# ---- elementwise ----------------------------------------------------------------------------
BINARY = [("add", np.add), ("subtract", np.subtract), ("multiply", np.multiply),
          ("divide", np.divide), ("power", None), ("maximum", np.maximum),
          ("minimum", np.minimum), ("floor_divide", np.floor_divide), ("floor_mod", np.mod)]


@pytest.mark.parametrize("name,fn", BINARY)
def test_binary(name, fn):
    a, b = rand(2, 1, 4), rand(3, 1) + 3.0
    if name == "power":
        a, fn = np.abs(a), np.power
    run(getattr(op, name), a, b, expected=fn(a, b))


def test_integer_division_truncates():
    a = np.array([7, -7, 7, -7], "int32")
    b = np.array([2, 2, -2, -2], "int32")
    run(op.divide, a, b, expected=np.array([3, -3, -3, 3], "int32"))
    run(op.floor_divide, a, b, expected=np.floor_divide(a, b))
    run(op.mod, a, b, expected=np.fmod(a, b))


@pytest.mark.parametrize("name", ["equal", "not_equal", "less", "less_equal", "greater",
                                  "greater_equal"])
def test_comparison(name):
    a, b = rand(3, 4).round(), rand(4).round()
    run(getattr(op, name), a, b, expected=getattr(np, name)(a, b))


def _erf(x):
    return np.vectorize(math.erf)(x.astype(np.float64))


UNARY = [("exp", np.exp), ("log", np.log), ("sqrt", np.sqrt), ("rsqrt", lambda x: 1 / np.sqrt(x)),
         ("abs", np.abs), ("negative", np.negative), ("floor", np.floor), ("ceil", np.ceil),
         ("round", np.round), ("sigmoid", lambda x: 1 / (1 + np.exp(-x))), ("tanh", np.tanh),
         ("erf", _erf), ("sin", np.sin), ("cos", np.cos), ("sign", np.sign),
         ("square", np.square)]


@pytest.mark.parametrize("name,fn", UNARY)
def test_unary(name, fn):
    x = rand(3, 5) * 2
    if name in ("log", "sqrt", "rsqrt"):
        x = np.abs(x) + 0.1
    run(getattr(op, name), x, expected=fn(x), rtol=1e-5, atol=1e-6)


def test_clip_astype_where():
    x = rand(4, 4) * 5
    run(lambda v: op.clip(v, -1.0, 2.0), x, expected=np.clip(x, -1, 2))
    out = run(lambda v: op.astype(v, "int32"), x, expected=x.astype("int32"))
    assert out.dtype == np.int32
    c = rand(4, 4) > 0
    y = rand(4)
    run(op.where, c, x, y, expected=np.where(c, x, y))


# ---- nn activations and normalization -------------------------------------------------------
def test_activations():
    x = rand(2, 3, 4, 4)
    run(op.nn.relu, x, expected=np.maximum(x, 0))
    run(lambda v: op.nn.leakyrelu(v, 0.1), x, expected=np.where(x > 0, x, 0.1 * x))
    a = rand(3)
    run(op.nn.prelu, x, a, expected=np.where(x > 0, x, x * a.reshape(1, 3, 1, 1)))
    run(op.nn.gelu, x, expected=0.5 * x * (1 + _erf(x / np.sqrt(2))))
    run(op.nn.gelu_tanh, x, expected=0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) *
                                                           (x + 0.044715 * x ** 3))))
    run(op.nn.silu, x, expected=x / (1 + np.exp(-x)))
    e = np.exp(x - x.max(axis=1, keepdims=True))
    run(lambda v: op.nn.softmax(v, axis=1), x, expected=e / e.sum(axis=1, keepdims=True))
    run(lambda v: op.nn.log_softmax(v, axis=1), x,
        expected=np.log(e / e.sum(axis=1, keepdims=True)), atol=1e-5)


def test_batch_norm_layer_norm():
    x = rand(2, 3, 4, 4)
    g, b, m, v = rand(3), rand(3), rand(3), np.abs(rand(3)) + 0.5
    s = (1, 3, 1, 1)
    want = (x - m.reshape(s)) / np.sqrt(v.reshape(s) + 1e-3) * g.reshape(s) + b.reshape(s)
    run(lambda *a: op.nn.batch_norm(*a, epsilon=1e-3), x, g, b, m, v, expected=(want, m, v))
    y = rand(2, 5, 8)
    g2, b2 = rand(8), rand(8)
    mean, var = y.mean(-1, keepdims=True), y.var(-1, keepdims=True)
    run(op.nn.layer_norm, y, g2, b2, expected=(y - mean) / np.sqrt(var + 1e-5) * g2 + b2,
        atol=1e-5)
    g3, b3 = rand(5, 8), rand(5, 8)
    mean, var = y.mean((1, 2), keepdims=True), y.var((1, 2), keepdims=True)
    run(lambda *a: op.nn.layer_norm(*a, axes=(1, 2)), y, g3, b3,
        expected=(y - mean) / np.sqrt(var + 1e-5) * g3 + b3, atol=1e-5)


def test_pad():
    x = rand(1, 2, 3, 4)
    pw = (0, 0, 0, 0, 1, 2, 2, 1)
    pairs = ((0, 0), (0, 0), (1, 2), (2, 1))
    run(lambda v: op.nn.pad(v, pw, pad_value=1.5), x,
        expected=np.pad(x, pairs, constant_values=1.5))
    run(lambda v: op.nn.pad(v, pw, "edge"), x, expected=np.pad(x, pairs, mode="edge"))
    run(lambda v: op.nn.pad(v, pw, "reflect"), x, expected=np.pad(x, pairs, mode="reflect"))


def test_dense_matmul():
    x, w = rand(4, 6), rand(5, 6)
    run(op.nn.dense, x, w, expected=x @ w.T)
    run(op.linear, x, w, rand(5) * 0 + 1, expected=x @ w.T + 1)
    a, b = rand(2, 1, 3, 4), rand(5, 4, 2)
    run(op.matmul, a, b, expected=np.matmul(a, b))
    v = rand(4)
    run(op.matmul, a, v, expected=np.matmul(a, v))


# ---- reductions and search ------------------------------------------------------------------
@pytest.mark.parametrize("name,fn", [("sum", np.sum), ("mean", np.mean), ("max", np.max),
                                     ("min", np.min), ("prod", np.prod), ("variance", np.var),
                                     ("std", np.std)])
@pytest.mark.parametrize("axis,keepdims", [(None, False), ((1,), True), ((0, 2), False)])
def test_reductions(name, fn, axis, keepdims):
    x = rand(3, 4, 5)
    run(lambda v: getattr(op, name)(v, axis, keepdims), x,
        expected=fn(x, axis=axis, keepdims=keepdims), rtol=1e-4, atol=1e-5)


def test_integer_sum_keeps_dtype_and_arg_reductions():
    x = rng.integers(-5, 5, (3, 4)).astype("int32")
    out = run(lambda v: op.sum(v, axis=1), x, expected=x.sum(axis=1))
    assert out.dtype == np.int32
    y = rand(3, 4, 5)
    run(lambda v: op.argmax(v, axis=1), y, expected=y.argmax(axis=1))
    run(lambda v: op.argmin(v, axis=-1, keepdims=True), y,
        expected=y.argmin(axis=-1, keepdims=True))
    run(op.argmax, y, expected=np.asarray(y.argmax()))


# ---- manipulation and indexing --------------------------------------------------------------
def test_manipulation():
    x = rand(2, 3, 4)
    run(lambda v: op.reshape(v, (0, -1)), x, expected=x.reshape(2, 12))
    run(lambda v: op.reshape(v, (4, 0, -1)), x, expected=x.reshape(4, 3, 2))
    run(op.flatten, x, expected=x.reshape(-1))
    run(lambda v: op.permute_dims(v, (2, 0, 1)), x, expected=x.transpose(2, 0, 1))
    run(op.permute_dims, x, expected=x.transpose())
    y = rand(2, 5, 4)
    run(lambda a, b: op.concat([a, b], axis=1), x, y, expected=np.concatenate([x, y], 1))
    run(lambda v: op.split(v, 2, axis=2), x, expected=tuple(np.split(x, 2, axis=2)))
    run(lambda v: op.split(v, [1, 3], axis=2), x, expected=tuple(np.split(x, [1, 3], axis=2)))
    z = rand(1, 3, 1, 2)
    run(op.squeeze, z, expected=z.squeeze())
    run(lambda v: op.squeeze(v, 2), z, expected=z.squeeze(2))
    run(lambda v: op.expand_dims(v, (0, 3)), x, expected=x.reshape(1, 2, 3, 1, 4))
    run(lambda v: op.broadcast_to(v, (5, 3, 4)), x[0], expected=np.broadcast_to(x[0], (5, 3, 4)))


def test_indexing():
    x = rand(5, 6, 7)
    idx = np.array([[4, 0], [-1, 2]], "int64")
    run(lambda v, i: op.take(v, i, axis=1), x, idx, expected=np.take(x, idx, axis=1))
    run(op.take, x, idx, expected=np.take(x.reshape(-1), idx))
    run(lambda v: op.strided_slice(v, [0, 2], [1, -1], [4, -6], [2, -2]), x,
        expected=x[1:4:2, :, -1:-6:-2])
    run(lambda v: op.strided_slice(v, [1], [-100], [100]), x, expected=x)


def test_creation():
    run(lambda v: op.add(v, op.zeros((2, 3), "float32")), rand(3), expected=None)
    out = run(lambda v: op.full_like(v, 2.5), rand(2, 2), expected=np.full((2, 2), 2.5))
    assert out.dtype == np.float32
    run(lambda v: op.add(op.astype(op.arange(1, 10, 4), "float32"), v), rand(3),
        expected=None)
    out = interpreter.run(relax.Function([], op.ones((2, 1), "int32")))
    np.testing.assert_array_equal(out, np.ones((2, 1), "int32"))
    out = interpreter.run(relax.Function([], op.arange(1, 10, 4)))
    np.testing.assert_array_equal(out, np.arange(1, 10, 4))


# ---- convolution, pooling, lrn and resize against onnxruntime ------------------------------
ort = pytest.importorskip("onnxruntime")
onnx = pytest.importorskip("onnx")
from onnx import TensorProto, helper  # noqa: E402


def onnx_run(op_type, inputs, out_rank, **attrs):
    names = [f"i{k}" for k in range(len(inputs))]
    node = helper.make_node(op_type, names, ["y"], **attrs)
    graph = helper.make_graph(
        [node], "g",
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, a.shape)
         for n, a in zip(names, inputs) if a is not None],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [None] * out_rank)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 7
    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return sess.run(None, {n: a for n, a in zip(names, inputs) if a is not None})[0]


@pytest.mark.parametrize("stride,pad,dil,groups", [(1, (0, 0, 0, 0), 1, 1),
                                                   (2, (1, 2, 0, 1), 1, 1),
                                                   (1, (1, 1, 1, 1), 2, 2),
                                                   (2, (1, 1, 1, 1), 1, 4)])
def test_conv2d_vs_onnx(stride, pad, dil, groups):
    x, w = rand(2, 4, 9, 8), rand(8, 4 // groups, 3, 3)
    want = onnx_run("Conv", [x, w], 4, strides=[stride] * 2, dilations=[dil] * 2, group=groups,
                    pads=[pad[0], pad[1], pad[2], pad[3]])
    run(lambda a, b: op.nn.conv2d(a, b, strides=stride, padding=pad, dilation=dil,
                                  groups=groups), x, w, expected=want, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("stride,pad,outpad,dil,groups", [(1, 0, 0, 1, 1), (2, 1, 1, 1, 1),
                                                          (2, 0, 0, 2, 2), (3, 1, 2, 1, 1)])
def test_conv2d_transpose_vs_onnx(stride, pad, outpad, dil, groups):
    x, w = rand(1, 4, 5, 6), rand(4, 6 // groups, 3, 3)
    want = onnx_run("ConvTranspose", [x, w], 4, strides=[stride] * 2, pads=[pad] * 4,
                    output_padding=[outpad] * 2, dilations=[dil] * 2, group=groups)
    run(lambda a, b: op.nn.conv2d_transpose(a, b, strides=stride, padding=pad,
                                            output_padding=outpad, dilation=dil, groups=groups),
        x, w, expected=want, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("kind", ["MaxPool", "AveragePool"])
@pytest.mark.parametrize("k,s,pad,ceil,include", [(2, 2, 0, 0, 0), (3, 2, 1, 0, 0),
                                                  (3, 2, 1, 1, 0), (3, 2, 1, 1, 1),
                                                  (2, 2, 1, 1, 1), (3, 3, 0, 1, 0)])
def test_pool_vs_onnx(kind, k, s, pad, ceil, include):
    x = rand(2, 3, 7, 8)
    attrs = dict(kernel_shape=[k, k], strides=[s, s], pads=[pad] * 4, ceil_mode=ceil)
    if kind == "AveragePool":
        attrs["count_include_pad"] = include
    want = onnx_run(kind, [x], 4, **attrs)
    if kind == "MaxPool":
        build = lambda v: op.nn.max_pool2d(v, k, s, pad, ceil_mode=bool(ceil))  # noqa: E731
    else:
        build = lambda v: op.nn.avg_pool2d(v, k, s, pad, ceil_mode=bool(ceil),  # noqa: E731
                                           count_include_pad=bool(include))
    run(build, x, expected=want, rtol=1e-5, atol=1e-6)


def test_global_and_adaptive_pools():
    x = rand(2, 3, 7, 5)
    run(lambda v: op.nn.adaptive_avg_pool2d(v, 1), x,
        expected=onnx_run("GlobalAveragePool", [x], 4))
    run(lambda v: op.nn.adaptive_max_pool2d(v, 1), x, expected=onnx_run("GlobalMaxPool", [x], 4))
    want = np.stack([np.stack([x[:, :, (i * 7) // 3:-(-(i + 1) * 7 // 3),
                                 (j * 5) // 2:-(-(j + 1) * 5 // 2)].mean(axis=(2, 3))
                               for j in range(2)], -1) for i in range(3)], -2)
    run(lambda v: op.nn.adaptive_avg_pool2d(v, (3, 2)), x, expected=want)


def test_lrn_vs_onnx():
    x = rand(2, 7, 3, 3)
    for size in (3, 5):
        want = onnx_run("LRN", [x], 4, size=size, alpha=0.01, beta=0.75, bias=2.0)
        run(lambda v, size=size: op.nn.lrn(v, size=size, alpha=0.01, beta=0.75, bias=2.0), x,
            expected=want, rtol=1e-5)


@pytest.mark.parametrize("method,coord,rounding", [
    ("nearest", "asymmetric", "floor"), ("nearest", "half_pixel", "round_prefer_floor"),
    ("nearest", "align_corners", "round_prefer_ceil"), ("nearest", "asymmetric", "ceil"),
    ("linear", "half_pixel", ""), ("linear", "align_corners", ""), ("linear", "asymmetric", ""),
    ("linear", "pytorch_half_pixel", ""), ("cubic", "half_pixel", ""),
    ("cubic", "align_corners", "")])
@pytest.mark.parametrize("size", [(9, 14), (3, 2)])
def test_resize2d_vs_onnx(method, coord, rounding, size):
    x = rand(1, 2, 5, 6)
    attrs = dict(mode=method, coordinate_transformation_mode=coord)
    if method == "nearest":
        attrs["nearest_mode"] = rounding
    if method == "cubic":
        attrs["cubic_coeff_a"] = -0.75
    sizes = np.array([1, 2, *size], "int64")
    names = ["x", "roi", "scales", "sizes"]
    node = helper.make_node("Resize", names, ["y"], **attrs)
    graph = helper.make_graph(
        [node], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, x.shape)],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [None] * 4)],
        initializer=[helper.make_tensor("roi", TensorProto.FLOAT, [0], []),
                     helper.make_tensor("scales", TensorProto.FLOAT, [0], []),
                     helper.make_tensor("sizes", TensorProto.INT64, [4], sizes)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 7
    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    want = sess.run(None, {"x": x})[0]
    run(lambda v: op.image.resize2d(v, size, method=method, coordinate_transformation_mode=coord,
                                    rounding_method=rounding, cubic_alpha=-0.75),
        x, expected=want, rtol=1e-4, atol=1e-5)
