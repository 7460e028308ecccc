"""The quantized operators (relax.qnn.*) and the quantize_to_integer pass.

Inference: dtypes and shapes, per-channel parameters of the wrong length rejected. The reference
interpreter: quantize rounds halves to even and saturates, requantize in the multiplier's float
type. The pass: DQ -> conv2d (+ bias) -> relu -> Q over constants becomes qnn.conv2d + add +
requantize + a clamp at the zero point, and the rewritten module's int8 output equals the float
module's (up to 1 where float32 rounding crosses a half, interpreted); DQ -> max_pool2d -> Q
with one set of parameters becomes max_pool2d on int8; a pattern it does not take stays. Built:
the kernels (graph executor and VM, each host target; a zero point known only at run time
included) equal the reference interpreter bit for bit, a dequantize of a requantize in one kernel
included."""
import numpy as np
import pytest

import microruntime
from compiler import TypeInferenceError, relax, relay
from compiler.relax import expr as X
from compiler.relax import interpreter, op
from compiler.relax.block_builder import BlockBuilder
from compiler.relax.struct_info import TensorStructInfo
from compiler.relax.transform import bind_params
from compiler.relax.transform.quantize_to_integer import quantize_to_integer
from microruntime import graph_executor
from microruntime.relax_vm import VirtualMachine


def c(value, dtype):
    return X.const(np.asarray(value, dtype=dtype), dtype)


def _function(inputs, body):
    bb = BlockBuilder()
    xs = [X.Var(n, TensorStructInfo(s, d)) for n, (s, d) in inputs.items()]
    bb.begin_function("main", None, {"global_symbol": "main", "num_input": len(xs)})
    with bb.dataflow():
        out = bb.emit_output(body(bb, *xs))
    bb.emit_func_output(out, xs)
    return bb.get()


def _ops(mod):
    return [b.value.op.name for block in mod["main"].body.blocks for b in block.bindings
            if isinstance(b.value, X.Call) and isinstance(b.value.op, X.Op)]


# ---- inference and the interpreter ------------------------------------------------------------
def test_inference():
    x = X.Var("x", TensorStructInfo((2, 3, 4, 4), "float32"))
    q = op.qnn.quantize(x, c([0.1, 0.2, 0.3], "float32"), c([0, 1, 2], "int32"), 1, "uint8")
    assert (q.struct_info.shape, q.struct_info.dtype) == ((2, 3, 4, 4), "uint8")
    w = X.Var("w", TensorStructInfo((5, 3, 3, 3), "int8"))
    qi = X.Var("q", TensorStructInfo((2, 3, 4, 4), "uint8"))
    acc = op.qnn.conv2d(qi, w, c(3, "int32"), c([0] * 5, "int32"), padding=1, strides=2)
    assert (acc.struct_info.shape, acc.struct_info.dtype) == ((2, 5, 2, 2), "int32")
    with pytest.raises(TypeInferenceError, match="scale has 4 values but x has 3 along axis 1"):
        _ = op.qnn.quantize(x, c([0.1] * 4, "float32"), c(0, "int32")).struct_info
    with pytest.raises(TypeInferenceError, match="must be int8 or uint8"):
        _ = op.qnn.matmul(X.Var("a", TensorStructInfo((2, 3), "float32")),
                          X.Var("b", TensorStructInfo((3, 4), "int8")), c(0, "int32"),
                          c(0, "int32")).struct_info


def test_inference_of_the_packed_and_blocked_ops():
    a = X.Var("a", TensorStructInfo((2, 5, 30), "int8"))
    w = X.Var("w", TensorStructInfo((8, 48, 4), "int8"))
    wsum = X.Var("s", TensorStructInfo((48,), "int32"))
    mm = op.qnn.matmul_packed(a, w, c(0, "int32"), wsum)
    assert (mm.struct_info.shape, mm.struct_info.dtype) == ((2, 5, 48), "int32")
    with pytest.raises(TypeInferenceError, match=r"weight \(7, 48, 4\) does not fit a"):
        _ = op.qnn.matmul_packed(a, X.Var("w", TensorStructInfo((7, 48, 4), "int8")),
                                 c(0, "int32"), wsum).struct_info
    with pytest.raises(TypeInferenceError, match="weight_sum has 40 values for 48 columns"):
        _ = op.qnn.matmul_packed(a, w, c(0, "int32"),
                                 X.Var("s", TensorStructInfo((40,), "int32"))).struct_info
    x = X.Var("x", TensorStructInfo((1, 2, 9, 9, 16), "uint8"))
    dw = op.qnn.depthwise_conv2d_NCHWc(x, X.Var("k", TensorStructInfo((2, 3, 3, 16), "int8")),
                                       3, 32, strides=2, padding=1)
    assert (dw.struct_info.shape, dw.struct_info.dtype) == ((1, 2, 5, 5, 16), "int32")
    with pytest.raises(TypeInferenceError, match=r"does not fit data \(1, 2, 9, 9, 16\)"):
        _ = op.qnn.depthwise_conv2d_NCHWc(
            x, X.Var("k", TensorStructInfo((4, 3, 3, 8), "int8")), 3, 32).struct_info
    with pytest.raises(TypeInferenceError, match="does not split into 3 groups"):
        _ = op.qnn.conv2d_NCHWc(x, X.Var("k", TensorStructInfo((2, 1, 3, 3, 4, 16, 4), "int8")),
                                3, 32, groups=3).struct_info


def test_interpreter_rounds_halves_to_even_and_saturates():
    def run(call):
        return interpreter.evaluate(call)

    x = c([0.5, 1.5, 2.5, -0.5, -1.5, 100.0, -100.0], "float32")
    got = run(op.qnn.quantize(x, c(1.0, "float32"), c(0, "int32"), 0, "int8"))
    np.testing.assert_array_equal(got, np.array([0, 2, 2, 0, -2, 100, -100], "int8"))
    got = run(op.qnn.quantize(x, c(0.5, "float32"), c(10, "int32"), 0, "uint8"))
    np.testing.assert_array_equal(got, np.array([11, 13, 15, 9, 7, 210, 0], "uint8"))
    acc = c([5, 15, 25, -5, 1000, -1000], "int32")
    got = run(op.qnn.requantize(acc, c(0.1, "float64"), c(-3, "int32"), 0, "int8"))
    np.testing.assert_array_equal(got, np.array([-3, -1, -1, -3, 97, -103], "int8"))
    got = run(op.qnn.dequantize(c([0, 255], "uint8"), c(0.5, "float32"), c(128, "int32"), 0))
    np.testing.assert_array_equal(got, np.array([-64.0, 63.5], "float32"))


# ---- the pass ---------------------------------------------------------------------------------
def _qdq_conv_module(rng):
    sx, sw, sy = np.float32(0.05), (rng.random(6) * 0.01 + 0.002).astype("float32"), \
        np.float32(0.1)
    w = rng.integers(-127, 128, (6, 4, 3, 3)).astype("int8")
    b = rng.integers(-500, 500, 6).astype("int32")

    def body(bb, x):
        xq = bb.emit(op.qnn.quantize(x, c(sx, "float32"), c(7, "int32"), 1, "uint8"))
        dx = bb.emit(op.qnn.dequantize(xq, c(sx, "float32"), c(7, "int32")))
        dw = bb.emit(op.qnn.dequantize(c(w, "int8"), c(sw, "float32"), c([0] * 6, "int32"), 0))
        db = bb.emit(op.qnn.dequantize(c(b, "int32"), c(sx * sw, "float32"),
                                       c([0] * 6, "int32"), 0))
        y = bb.emit(op.nn.conv2d(dx, dw, padding=1))
        y = bb.emit(op.nn.relu(op.add(y, op.reshape(db, (1, -1, 1, 1)))))
        yq = bb.emit(op.qnn.quantize(y, c(sy, "float32"), c(-20, "int32"), 1, "int8"))
        dy = bb.emit(op.qnn.dequantize(yq, c(sy, "float32"), c(-20, "int32")))
        p = bb.emit(op.nn.max_pool2d(dy, (2, 2), (2, 2)))
        return op.qnn.quantize(p, c(sy, "float32"), c(-20, "int32"), 1, "int8")

    return _function({"x": ((2, 4, 8, 8), "float32")}, body)


def test_pass_rewrites_conv_and_pool_on_integers():
    rng = np.random.default_rng(0)
    mod = _qdq_conv_module(rng)
    after = quantize_to_integer(mod)
    ops = _ops(after)
    for name in ("relax.qnn.conv2d", "relax.qnn.requantize", "relax.maximum"):
        assert name in ops, ops
    pools = [b.value for block in after["main"].body.blocks for b in block.bindings
             if isinstance(b.value, X.Call) and getattr(b.value.op, "name", "") ==
             "relax.nn.max_pool2d"]
    assert pools[-1].struct_info.dtype == "int8"
    assert after["main"].body.body.struct_info.dtype == "int8"
    for seed in range(3):
        x = (np.random.default_rng(seed).standard_normal((2, 4, 8, 8)) * 3).astype("float32")
        want = np.asarray(interpreter.run(mod, x)).astype(int)
        got = np.asarray(interpreter.run(after, x)).astype(int)
        assert np.abs(got - want).max() <= 1
        assert (got == want).mean() > 0.99


def test_pass_leaves_other_patterns():
    def body(bb, x):
        xq = bb.emit(op.qnn.quantize(x, c(0.1, "float32"), c(0, "int32"), 1, "int8"))
        dx = bb.emit(op.qnn.dequantize(xq, c(0.1, "float32"), c(0, "int32")))
        y = bb.emit(op.nn.max_pool2d(dx, (2, 2), (2, 2)))   # quantized with other parameters
        return op.qnn.quantize(y, c(0.2, "float32"), c(0, "int32"), 1, "int8")

    mod = _function({"x": ((1, 2, 4, 4), "float32")}, body)
    assert _ops(quantize_to_integer(mod)) == _ops(mod)


# ---- built kernels ----------------------------------------------------------------------------
def _dynamic_module():
    """qnn.conv2d and qnn.matmul with the data zero point an input (as after
    DynamicQuantizeLinear), per-channel uint8 weight zero points, requantized in float32."""
    rng = np.random.default_rng(3)
    w = rng.integers(0, 256, (8, 3, 3, 3)).astype("uint8")
    wz = rng.integers(120, 136, 8).astype("int32")
    m = rng.integers(-128, 128, (8 * 6 * 4, 5)).astype("int8")

    def body(bb, x, zx):
        acc = bb.emit(op.qnn.conv2d(x, c(w, "uint8"), zx, c(wz, "int32"), padding=(1, 2),
                                    strides=(1, 2)))
        y = bb.emit(op.qnn.requantize(acc, c(rng.random(8) * 1e-3, "float32"), c(5, "int32"),
                                      1, "uint8"))
        flat = bb.emit(op.reshape(y, (2, -1)))
        prod = bb.emit(op.qnn.matmul(flat, c(m, "int8"), c(9, "int32"), c(0, "int32")))
        return op.qnn.requantize(prod, c(0.001, "float64"), c(0, "int32"), 1, "int8")

    return _function({"x": ((2, 3, 6, 6), "uint8"), "zx": ((), "int32")}, body)


def test_kernels_match_the_interpreter(target):
    mod = _dynamic_module()
    rng = np.random.default_rng(4)
    x = rng.integers(0, 256, (2, 3, 6, 6)).astype("uint8")
    zx = np.asarray(131, "int32")
    want = np.asarray(interpreter.run(mod, x, zx))
    factory = relay.build(bind_params(mod, {}), target=target)
    g = graph_executor.GraphModule(factory["default"](microruntime.cpu()))
    g.set_input("x", x)
    g.set_input("zx", zx)
    g.run()
    np.testing.assert_array_equal(g.get_output(0).numpy(), want)
    vm = VirtualMachine(relax.build(mod, target=target), microruntime.cpu())
    np.testing.assert_array_equal(vm["main"](x, zx).numpy(), want)


def test_dequantize_of_a_requantize_matches_the_interpreter(target):
    """A kernel that dequantizes what it requantized takes the rounded float as it is (the
    zero points cancelling where they are the same): the same numbers as the integer round
    trip, saturation included."""
    rng = np.random.default_rng(5)
    m = (rng.random(4) * 0.02).astype("float32")

    def body(bb, acc):
        outs = []
        for dtype, zr, zd in (("uint8", 5, 5), ("int8", -3, 4)):
            y = bb.emit(op.qnn.requantize(acc, c(m, "float32"), c(zr, "int32"), 1, dtype))
            outs.append(bb.emit(op.qnn.dequantize(y, c(0.25, "float32"), c(zd, "int32"))))
        return op.add(outs[0], outs[1])

    mod = _function({"acc": ((2, 4, 8, 8), "int32")}, body)
    acc = rng.integers(-40000, 40000, (2, 4, 8, 8)).astype("int32")
    want = np.asarray(interpreter.run(mod, acc))
    factory = relay.build(bind_params(mod, {}), target=target)
    g = graph_executor.GraphModule(factory["default"](microruntime.cpu()))
    g.set_input("acc", acc)
    g.run()
    np.testing.assert_array_equal(g.get_output(0).numpy(), want)
