"""The graph-level passes before legalization: bind_params, fold_constant, fold_batch_norm,
eliminate_dead_code, fuse_ops. Each keeps the model's value (reference interpreter vs the
model's own numpy reference) and does what its docstring says."""
import numpy as np
import pytest

import microruntime
from compiler import relay
from compiler.ir.errors import IRError, TypeInferenceError
from compiler.relax import BlockBuilder, Var, interpreter
from compiler.relax import expr as X
from compiler.relax import op as R
from compiler.relax.struct_info import TensorStructInfo
from compiler.relax.testing import models
from compiler.relax.transform.bind_params import bind_params
from compiler.relax.transform.eliminate_dead_code import eliminate_dead_code
from compiler.relax.transform.fold_batch_norm import fold_batch_norm
from compiler.relax.transform.fold_constant import fold_constant
from compiler.relax.transform.fuse_ops import fuse_ops
from microruntime import graph_executor


def _calls(func):
    return [b.value for blk in func.body.blocks for b in blk.bindings
            if isinstance(b.value, X.Call)]


def _op_names(func):
    return [c.op.name for c in _calls(func) if isinstance(c.op, X.Op)]


def _prepare(m):
    return fold_batch_norm(fold_constant(bind_params(m.mod, m.params)))


@pytest.mark.parametrize("make", models.ALL, ids=lambda f: f.__name__)
def test_passes_keep_the_model_value(make):
    m = make()
    inp = m.inputs(seed=3)
    mod = _prepare(m)
    assert [p.name_hint for p in mod["main"].params] == m.input_names
    fused = fuse_ops(mod)
    args = [inp[k] for k in m.input_names]
    ref = m.reference(inp)
    np.testing.assert_allclose(interpreter.run(mod, *args), ref, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(interpreter.run(fused, *args), ref, rtol=1e-4, atol=1e-5)


def test_bind_params_checks_names_shapes_and_dtypes():
    m = models.mlp()
    with pytest.raises(IRError, match="not parameters of main"):
        bind_params(m.mod, {"nope": np.zeros(3, "float32")})
    name, value = next(iter(m.params.items()))
    with pytest.raises(TypeInferenceError, match=f"{name}.*shape"):
        bind_params(m.mod, {name: np.zeros(value.shape + (1,), "float32")})
    with pytest.raises(TypeInferenceError, match=f"{name}.*float64"):
        bind_params(m.mod, {name: value.astype("float64")})


def test_fold_constant_computes_constant_subgraphs():
    bb = BlockBuilder()
    x = Var("x", TensorStructInfo((4,), "float32"))
    with bb.function("main", [x]):
        with bb.dataflow():
            c = bb.emit(R.exp(X.const(np.ones(4, "float32"))))
            d = bb.emit(R.multiply(c, X.const(np.float32(2.0))))
            out = bb.emit_output(R.add(x, d))
        bb.emit_func_output(out)
    mod = fold_constant(bb.get())
    assert _op_names(mod["main"]) == ["relax.add"]
    (call,) = _calls(mod["main"])
    np.testing.assert_allclose(call.args[1].data, 2 * np.e * np.ones(4), rtol=1e-6)


def test_batch_norm_folds_into_the_convolution_weights():
    m = models.conv_bn_relu_pool_dense()
    before = _op_names(bind_params(m.mod, m.params)["main"])
    assert "relax.nn.batch_norm" in before
    after = _op_names(_prepare(m)["main"])
    assert "relax.nn.batch_norm" not in after and "relax.multiply" not in after
    # conv2d, then the shift as a bias add
    assert after[:2] == ["relax.nn.conv2d", "relax.add"]


def test_dead_code_goes():
    bb = BlockBuilder()
    x = Var("x", TensorStructInfo((4,), "float32"))
    with bb.function("main", [x]):
        with bb.dataflow():
            bb.emit(R.exp(x))
            out = bb.emit_output(R.nn.relu(x))
        bb.emit_func_output(out)
    assert _op_names(eliminate_dead_code(bb.get())["main"]) == ["relax.nn.relu"]


@pytest.mark.parametrize("name, kernels", [
    ("mlp", ["fused_nn_dense_add_nn_relu", "fused_nn_dense_add", "fused_nn_softmax"]),
    ("conv_bn_relu_pool_dense", ["fused_nn_conv2d_add_nn_relu", "fused_nn_max_pool2d",
                                 "fused_reshape", "fused_nn_dense_add", "fused_nn_softmax"]),
    ("residual_block", ["fused_nn_conv2d_add_nn_relu", "fused_nn_conv2d_add_add_nn_relu"]),
])
def test_fusion_groups(name, kernels):
    m = getattr(models, name)()
    fused = fuse_ops(_prepare(m))
    calls = _calls(fused["main"])
    assert [c.op.name_hint for c in calls] == kernels
    for k in kernels:
        assert fused[k].attrs["Primitive"] == 1


def _exp_read_twice(tail):
    """main(x) = tail(a, relu(a)) with a = exp(x), fused."""
    bb = BlockBuilder()
    x = Var("x", TensorStructInfo((4,), "float32"))
    with bb.function("main", [x]):
        with bb.dataflow():
            a = bb.emit(R.exp(x))
            b = bb.emit(R.nn.relu(a))
            out = bb.emit_output(tail(bb, a, b))
        bb.emit_func_output(out)
    return fuse_ops(bb.get())


def test_fusion_joins_a_diamond_that_closes():
    fused = _exp_read_twice(lambda bb, a, b: R.add(a, b))
    # exp has two readers that meet again in add: one kernel
    assert [c.op.name_hint for c in _calls(fused["main"])] == ["fused_exp_nn_relu_add"]
    v = np.linspace(-1, 1, 4).astype("float32")
    np.testing.assert_allclose(interpreter.run(fused, v), np.exp(v) + np.exp(v), rtol=1e-6)


def test_fusion_leaves_values_with_two_uses_alone_when_they_do_not_meet():
    fused = _exp_read_twice(lambda bb, a, b: X.Tuple((b, bb.emit(R.sigmoid(a)))))
    # exp's readers are both used outside: exp stays a kernel of its own
    assert [c.op.name_hint for c in _calls(fused["main"])] == ["fused_exp", "fused_nn_relu",
                                                               "fused_sigmoid"]
    v = np.linspace(-1, 1, 4).astype("float32")
    got = interpreter.run(fused, v)
    np.testing.assert_allclose(got[1], 1 / (1 + np.exp(-np.exp(v))), rtol=1e-6)


def test_fusion_puts_gelu_after_matmul_in_its_kernel():
    """GELU as ONNX writes it (x * (1 + erf(x / sqrt 2)) * 0.5) reads the matmul's result
    twice; the diamond closes, so matmul + bias + GELU is one kernel."""
    bb = BlockBuilder()
    x = Var("x", TensorStructInfo((4, 8), "float32"))
    w = X.const(np.linspace(-1, 1, 48).reshape(8, 6).astype("float32"))
    bias = X.const(np.linspace(0, 1, 6).astype("float32"))
    with bb.function("main", [x]):
        with bb.dataflow():
            y = bb.emit(R.add(R.matmul(x, w), bias))
            e = bb.emit(R.erf(R.divide(y, X.const(np.float32(np.sqrt(2))))))
            g = bb.emit(R.multiply(R.multiply(y, R.add(e, X.const(np.float32(1)))),
                                   X.const(np.float32(0.5))))
            out = bb.emit_output(R.nn.relu(g))
        bb.emit_func_output(out)
    mod = fold_constant(bb.get())
    fused = fuse_ops(mod)
    (call,) = _calls(fused["main"])
    assert call.op.name_hint.startswith("fused_matmul_add_divide_erf")
    v = np.linspace(-2, 2, 32).reshape(4, 8).astype("float32")
    np.testing.assert_allclose(interpreter.run(fused, v), interpreter.run(mod, v), rtol=1e-6)


def test_fusion_concat_joins_its_largest_injective_producer():
    """ShuffleNet's join: concat of a slice of x and of a branch brought back by a
    transpose + reshape chain; concat (injective) joins the longer chain's kernel, the slice
    stays a kernel of its own."""
    bb = BlockBuilder()
    x = Var("x", TensorStructInfo((1, 8, 4, 4), "float32"))
    y = Var("y", TensorStructInfo((1, 4, 4, 2), "float32"))
    with bb.function("main", [x, y]):
        with bb.dataflow():
            half = bb.emit(R.strided_slice(x, [1], [0], [2]))
            t = bb.emit(R.permute_dims(y, [0, 3, 1, 2]))
            branch = bb.emit(R.multiply(t, X.const(np.float32(2))))
            out = bb.emit_output(R.concat((half, branch), axis=1))
        bb.emit_func_output(out)
    fused = fuse_ops(bb.get())
    assert [c.op.name_hint for c in _calls(fused["main"])] == [
        "fused_strided_slice", "fused_permute_dims_multiply_concat"]
    a = np.linspace(-1, 1, 128).reshape(1, 8, 4, 4).astype("float32")
    b = np.linspace(0, 1, 32).reshape(1, 4, 4, 2).astype("float32")
    want = np.concatenate([a[:, :2], 2 * b.transpose(0, 3, 1, 2)], axis=1)
    np.testing.assert_allclose(interpreter.run(fused, a, b), want, rtol=1e-6)


def test_fusion_keeps_scalars_inside_and_lifts_tensors():
    bb = BlockBuilder()
    x = Var("x", TensorStructInfo((2, 3), "float32"))
    w = X.const(np.ones((2, 3), "float32"))
    with bb.function("main", [x]):
        with bb.dataflow():
            a = bb.emit(R.multiply(x, X.const(np.float32(0.5))))
            out = bb.emit_output(R.add(a, w))
        bb.emit_func_output(out)
    fused = fuse_ops(bb.get())
    (call,) = _calls(fused["main"])
    assert len(call.args) == 2 and isinstance(call.args[1], X.Constant)
    prim = fused[call.op.name_hint]
    assert len(prim.params) == 2


def _conv_plus_side(side):
    """main(x, r) = relu(conv2d(x, W) + side(r))."""
    bb = BlockBuilder()
    x = Var("x", TensorStructInfo((1, 3, 6, 6), "float32"))
    r = Var("r", TensorStructInfo((1, 4, 6, 6), "float32"))
    w = X.const(np.linspace(-1, 1, 108).reshape(4, 3, 3, 3).astype("float32"))
    with bb.function("main", [x, r]):
        with bb.dataflow():
            y = bb.emit(R.nn.conv2d(x, w, padding=1))
            s = bb.emit(side(r))
            out = bb.emit_output(R.nn.relu(R.add(y, s)))
        bb.emit_func_output(out)
    return bb.get()


def test_fusion_takes_an_elementwise_side_input_into_the_epilogue():
    """A residual input's short elementwise chain (here exp then * 2, as a dequantize would
    be) joins the convolution's kernel instead of being a kernel of its own; a longer chain,
    or one of another shape, stays apart."""
    mod = _conv_plus_side(lambda r: R.multiply(R.exp(r), X.const(np.float32(2))))
    fused = fuse_ops(mod)
    (call,) = _calls(fused["main"])
    assert call.op.name_hint == "fused_nn_conv2d_exp_multiply_add_nn_relu"
    rng = np.random.default_rng(0)
    x = rng.standard_normal((1, 3, 6, 6)).astype("float32")
    r = rng.standard_normal((1, 4, 6, 6)).astype("float32")
    np.testing.assert_allclose(interpreter.run(fused, x, r), interpreter.run(mod, x, r),
                               rtol=1e-5)
    # built (blocked layout, the x86 convolution schedule inlining the side input)
    lib = relay.build(mod, target="llvm")
    g = graph_executor.GraphModule(lib["default"](microruntime.cpu()))
    g.set_input("x", x)
    g.set_input("r", r)
    g.run()
    np.testing.assert_allclose(g.get_output(0).numpy(), interpreter.run(mod, x, r), rtol=1e-5,
                               atol=1e-5)
    longer = _conv_plus_side(lambda r: R.exp(R.sigmoid(R.exp(r))))
    assert len(_calls(fuse_ops(longer)["main"])) == 2
