"""The pass qnn_layout_nchwc: integer convolutions become blocked ones (qnn.conv2d_NCHWc) with
their zero-point correction a constant, the blocked values flowing through the requantize and
the relu's clamp into the next convolution, and back to NCHW (the padded channels sliced off)
at the end. int8 activations (the +128 compensation), per-channel uint8 weight zero points,
channel counts that pad to their blocks (3 -> 4 in, 6 and 5 -> 16 out); the interpreted and the
built results (llvm with VNNI where the host has it, c portable; graph executor and VM) equal
the unconverted module's bit for bit. Weights whose centered values do not fit int8 stay.
In the pipeline, the fused kernels of the blocked convolutions take the blocked schedule (the
convolution their anchor; vpdpbusd in their code where the host has VNNI), also when forked
workers lower them."""
import sys

import numpy as np
import pytest

import microruntime
from compiler import relax, relay
from compiler.relax import expr as X
from compiler.relax import interpreter, op, pipeline
from compiler.relax.block_builder import BlockBuilder
from compiler.relax.strategy import anchor_of, strategy_of
from compiler.relax.struct_info import TensorStructInfo
from compiler.relax.transform import bind_params
from compiler.relax.transform.qnn_layout_nchwc import qnn_layout_nchwc
from compiler.target import Target
from compiler.topi.x86.qnn_vnni import vnni_kind
from microruntime import graph_executor
from microruntime.relax_vm import VirtualMachine


def c(value, dtype):
    return X.const(np.asarray(value, dtype=dtype), dtype)


def _module(w2_zero=None, alias=False):
    rng = np.random.default_rng(11)
    w1 = rng.integers(-127, 128, (6, 3, 3, 3)).astype("int8")
    wz2 = rng.integers(100, 156, 5).astype("int32") if w2_zero is None else w2_zero
    center = wz2 if w2_zero is None else np.full(5, 128)     # the weights' middle
    w2 = np.clip(center.reshape(-1, 1, 1, 1) + rng.integers(-127, 128, (5, 6, 3, 3)), 0,
                 255).astype("uint8")
    b1 = rng.integers(-3000, 3000, 6).astype("int32")
    bb = BlockBuilder()
    x = X.Var("x", TensorStructInfo((2, 3, 9, 9), "int8"))
    bb.begin_function("main", None, {"global_symbol": "main", "num_input": 1})
    with bb.dataflow():
        acc = bb.emit(op.qnn.conv2d(x, c(w1, "int8"), c(-3, "int32"), c([0] * 6, "int32"),
                                    padding=1))
        acc = bb.emit(op.add(acc, c(b1.reshape(1, -1, 1, 1), "int32")))
        y = bb.emit(op.qnn.requantize(acc, c(rng.random(6) * 2e-4 + 1e-4, "float64"),
                                      c(-7, "int32"), 1, "int8"))
        y = bb.emit(op.maximum(y, c(-7, "int8")))
        if alias:
            y = bb.emit(y, "alias")
        acc = bb.emit(op.qnn.conv2d(y, c(w2, "uint8"), c(-7, "int32"), c(wz2, "int32"),
                                    padding=1, strides=2))
        out = bb.emit_output(op.qnn.requantize(acc, c(rng.random(5) * 1e-4 + 1e-5, "float64"),
                                               c(100, "int32"), 1, "uint8"))
    bb.emit_func_output(out, [x])
    return bb.get()


def _ops(mod):
    return [b.value.op.name for block in mod["main"].body.blocks for b in block.bindings
            if isinstance(b.value, X.Call) and isinstance(b.value.op, X.Op)]


def _input(seed):
    return np.random.default_rng(seed).integers(-128, 128, (2, 3, 9, 9)).astype("int8")


def test_blocks_and_keeps_every_integer():
    mod = _module()
    after = qnn_layout_nchwc(mod)
    ops = _ops(after)
    assert ops.count("relax.qnn.conv2d_NCHWc") == 2 and "relax.qnn.conv2d" not in ops, ops
    assert ops[-2:] == ["relax.layout_transform", "relax.strided_slice"], ops
    assert ops.count("relax.layout_transform") == 1, ops
    for seed in range(2):
        x = _input(seed)
        np.testing.assert_array_equal(np.asarray(interpreter.run(after, x)),
                                      np.asarray(interpreter.run(mod, x)))


def test_an_alias_of_a_blocked_value_stays_blocked():
    mod = _module(alias=True)
    after = qnn_layout_nchwc(mod)
    ops = _ops(after)
    assert ops.count("relax.layout_transform") == 1, ops
    x = _input(4)
    np.testing.assert_array_equal(np.asarray(interpreter.run(after, x)),
                                  np.asarray(interpreter.run(mod, x)))


def test_weights_that_do_not_fit_int8_stay():
    after = qnn_layout_nchwc(_module(w2_zero=np.zeros(5, "int32")))
    ops = _ops(after)
    assert ops.count("relax.qnn.conv2d_NCHWc") == 1 and "relax.qnn.conv2d" in ops, ops


def test_built_equals_the_interpreter(target):
    mod = _module()
    x = _input(5)
    want = np.asarray(interpreter.run(mod, x))
    factory = relay.build(bind_params(mod, {}), target=target)
    g = graph_executor.GraphModule(factory["default"](microruntime.cpu()))
    g.set_input("x", x)
    g.run()
    np.testing.assert_array_equal(g.get_output(0).numpy(), want)
    vm = VirtualMachine(relax.build(mod, target=target), microruntime.cpu())
    np.testing.assert_array_equal(vm["main"](x).numpy(), want)


def test_pipeline_kernels_take_the_blocked_schedule(monkeypatch):
    """The generic schedule would run a fused blocked convolution untiled and serial (tens of
    times slower); a kernel naming vpdpbusd lowered by a forked worker must compile here."""
    monkeypatch.setenv("KILN_BUILD_JOBS", "2")
    monkeypatch.setattr(sys.modules["compiler.relax.transform.legalize"],
                        "PARALLEL_MIN_KERNELS", 1)
    mod = bind_params(_module(), {})
    target = Target("llvm")
    optimized = pipeline.run(mod, pipeline.optimize_passes(target))
    anchors = []
    for func in optimized.functions.values():
        if isinstance(func, X.Function) and func.attrs.get("Primitive"):
            calls = [b.value for block in func.body.blocks for b in block.bindings]
            if any(c.op.name == "relax.qnn.conv2d_NCHWc" for c in calls):
                anchors.append(anchor_of(calls))
    assert len(anchors) == 2
    for anchor in anchors:
        assert anchor.op.name == "relax.qnn.conv2d_NCHWc"
        assert strategy_of(anchor, target).name == "qnn_conv2d_NCHWc"
    factory = relay.build(mod, target="llvm")
    if vnni_kind("llvm") is not None:
        assert "vpdpbusd" in factory.get_lib().get_source("asm")
    x = _input(3)
    g = graph_executor.GraphModule(factory["default"](microruntime.cpu()))
    g.set_input("x", x)
    g.run()
    np.testing.assert_array_equal(g.get_output(0).numpy(), np.asarray(interpreter.run(mod, x)))


# ---- the matmul by a constant weight ----------------------------------------------------------
def _matmul_module(n=32, zw=None, runtime_zp=False):
    """int8 a [2, 6, 30] by a uint8 weight [30, n] about per-column zero points (given: the
    weights about 128 whatever their zero points), requantized per column; the data zero point
    a constant or an input."""
    rng = np.random.default_rng(21)
    center = rng.integers(100, 156, n).astype("int32") if zw is None else np.full(n, 128)
    zw = center if zw is None else zw
    w = np.clip(center.reshape(1, -1) + rng.integers(-127, 128, (30, n)), 0, 255).astype("uint8")
    bb = BlockBuilder()
    a = X.Var("a", TensorStructInfo((2, 6, 30), "int8"))
    params = [a]
    if runtime_zp:
        za = X.Var("za", TensorStructInfo((), "int32"))
        params.append(za)
    else:
        za = c(-11, "int32")
    bb.begin_function("main", None, {"global_symbol": "main", "num_input": len(params)})
    with bb.dataflow():
        acc = bb.emit(op.qnn.matmul(a, c(w, "uint8"), za, c(zw, "int32")))
        out = bb.emit_output(op.qnn.requantize(acc, c(rng.random(n) * 1e-4 + 1e-4, "float64"),
                                               c(4, "int32"), 2, "int8"))
    bb.emit_func_output(out, params)
    return bb.get()


def _matmul_inputs(seed, runtime_zp):
    a = np.random.default_rng(seed).integers(-128, 128, (2, 6, 30)).astype("int8")
    return (a, np.asarray(-11, "int32")) if runtime_zp else (a,)


@pytest.mark.parametrize("runtime_zp", [False, True])
def test_matmul_packed_on_llvm_targets(runtime_zp):
    mod = _matmul_module(runtime_zp=runtime_zp)
    packed = qnn_layout_nchwc(mod, Target("llvm -mcpu=icelake-server"))
    assert "relax.qnn.matmul_packed" in _ops(packed) and "relax.qnn.matmul" not in _ops(packed)
    assert "relax.qnn.matmul_packed" in _ops(qnn_layout_nchwc(mod, Target("llvm -mcpu=haswell")))
    assert "relax.qnn.matmul" in _ops(qnn_layout_nchwc(mod, Target("c")))
    for seed in range(2):
        x = _matmul_inputs(seed, runtime_zp)
        np.testing.assert_array_equal(np.asarray(interpreter.run(packed, *x)),
                                      np.asarray(interpreter.run(mod, *x)))


def test_matmul_that_does_not_fit_stays():
    target = Target("llvm -mcpu=icelake-server")
    wide = _matmul_module(zw=np.zeros(32, "int32"))        # centered uint8 weights past 127
    assert "relax.qnn.matmul_packed" not in _ops(qnn_layout_nchwc(wide, target))
    odd = _matmul_module(n=10)                             # columns not a multiple of 4
    assert "relax.qnn.matmul_packed" not in _ops(qnn_layout_nchwc(odd, target))


@pytest.mark.parametrize("llvm", ["llvm", "llvm -mcpu=haswell"])
@pytest.mark.parametrize("runtime_zp", [False, True])
def test_matmul_packed_built_equals_the_interpreter(runtime_zp, llvm):
    """vpdpbusd where the host has VNNI (llvm), the portable multiply-add on haswell."""
    mod = _matmul_module(runtime_zp=runtime_zp)
    x = _matmul_inputs(7, runtime_zp)
    want = np.asarray(interpreter.run(mod, *x))
    factory = relay.build(bind_params(mod, {}), target=llvm)
    assert ("vpdpbusd" in factory.get_lib().get_source("asm")) == \
        (vnni_kind(llvm) is not None)
    g = graph_executor.GraphModule(factory["default"](microruntime.cpu()))
    g.set_input(**dict(zip(("a", "za"), x)))
    g.run()
    np.testing.assert_array_equal(g.get_output(0).numpy(), want)
    vm = VirtualMachine(relax.build(mod, target=llvm), microruntime.cpu())
    np.testing.assert_array_equal(vm["main"](*x).numpy(), want)


# ---- the depthwise convolution ----------------------------------------------------------------
def _depthwise_module(blocked_input=True):
    """(a blocked convolution, when blocked_input, then) a depthwise 3x3 convolution of 20
    channels (padded to 32 in the blocks) with uint8 weights about per-channel zero points,
    requantized, clamped, and a 1x1 convolution after it."""
    rng = np.random.default_rng(31)
    bb = BlockBuilder()
    x = X.Var("x", TensorStructInfo((1, 3 if blocked_input else 20, 10, 10), "int8"))
    bb.begin_function("main", None, {"global_symbol": "main", "num_input": 1})
    with bb.dataflow():
        y = x
        if blocked_input:
            acc = bb.emit(op.qnn.conv2d(x, c(rng.integers(-127, 128, (20, 3, 3, 3)), "int8"),
                                        c(2, "int32"), c([0] * 20, "int32"), padding=1))
            y = bb.emit(op.qnn.requantize(acc, c(rng.random(20) * 2e-4 + 1e-4, "float64"),
                                          c(-3, "int32"), 1, "int8"))
        zw = rng.integers(100, 156, 20).astype("int32")
        w = np.clip(zw.reshape(-1, 1, 1, 1) + rng.integers(-127, 128, (20, 1, 3, 3)), 0, 255)
        acc = bb.emit(op.qnn.conv2d(y, c(w, "uint8"), c(-3, "int32"), c(zw, "int32"),
                                    padding=1, strides=2, groups=20))
        y = bb.emit(op.qnn.requantize(acc, c(rng.random(20) * 1e-2 + 1e-3, "float64"),
                                      c(5, "int32"), 1, "int8"))
        y = bb.emit(op.maximum(y, c(5, "int8")))
        acc = bb.emit(op.qnn.conv2d(y, c(rng.integers(-127, 128, (8, 20, 1, 1)), "int8"),
                                    c(5, "int32"), c([0] * 8, "int32")))
        out = bb.emit_output(op.qnn.requantize(acc, c(rng.random(8) * 1e-4 + 1e-5, "float64"),
                                               c(0, "int32"), 1, "int8"))
    bb.emit_func_output(out, [x])
    return bb.get()


@pytest.mark.parametrize("blocked_input", [True, False])
def test_depthwise_blocked(blocked_input):
    mod = _depthwise_module(blocked_input)
    after = qnn_layout_nchwc(mod)
    ops = _ops(after)
    assert "relax.qnn.depthwise_conv2d_NCHWc" in ops and "relax.qnn.conv2d" not in ops, ops
    assert ops.count("relax.layout_transform") == 1, ops
    shape = (1, 3 if blocked_input else 20, 10, 10)
    for seed in range(2):
        x = np.random.default_rng(seed).integers(-128, 128, shape).astype("int8")
        np.testing.assert_array_equal(np.asarray(interpreter.run(after, x)),
                                      np.asarray(interpreter.run(mod, x)))


def test_depthwise_built_equals_the_interpreter(target):
    mod = _depthwise_module()
    x = np.random.default_rng(9).integers(-128, 128, (1, 3, 10, 10)).astype("int8")
    want = np.asarray(interpreter.run(mod, x))
    factory = relay.build(bind_params(mod, {}), target=target)
    g = graph_executor.GraphModule(factory["default"](microruntime.cpu()))
    g.set_input("x", x)
    g.run()
    np.testing.assert_array_equal(g.get_output(0).numpy(), want)


# ---- the grouped convolution ------------------------------------------------------------------
def _grouped_module():
    """A convolution to 32 channels, then a grouped 3x3 convolution of 4 groups (8 channels in
    and 16 out each; uint8 weights about per-channel zero points), requantized, and one of 2
    groups whose 3 channels per group are no whole block (it stays NCHW)."""
    rng = np.random.default_rng(41)
    bb = BlockBuilder()
    x = X.Var("x", TensorStructInfo((1, 3, 8, 8), "uint8"))
    bb.begin_function("main", None, {"global_symbol": "main", "num_input": 1})
    with bb.dataflow():
        acc = bb.emit(op.qnn.conv2d(x, c(rng.integers(-127, 128, (32, 3, 3, 3)), "int8"),
                                    c(120, "int32"), c([0] * 32, "int32"), padding=1))
        y = bb.emit(op.qnn.requantize(acc, c(rng.random(32) * 2e-4 + 1e-4, "float64"),
                                      c(-3, "int32"), 1, "int8"))
        zw = rng.integers(100, 156, 64).astype("int32")
        w = np.clip(zw.reshape(-1, 1, 1, 1) + rng.integers(-127, 128, (64, 8, 3, 3)), 0, 255)
        acc = bb.emit(op.qnn.conv2d(y, c(w, "uint8"), c(-3, "int32"), c(zw, "int32"),
                                    padding=1, groups=4))
        y = bb.emit(op.qnn.requantize(acc, c(rng.random(64) * 2e-4 + 1e-4, "float64"),
                                      c(7, "int32"), 1, "int8"))
        y = bb.emit(op.strided_slice(y, [1], [0], [6]))
        acc = bb.emit(op.qnn.conv2d(y, c(rng.integers(-127, 128, (4, 3, 1, 1)), "int8"),
                                    c(7, "int32"), c([0] * 4, "int32"), groups=2))
        out = bb.emit_output(op.qnn.requantize(acc, c(rng.random(4) * 1e-3 + 1e-4, "float64"),
                                               c(0, "int32"), 1, "int8"))
    bb.emit_func_output(out, [x])
    return bb.get()


def test_grouped_blocked(target):
    mod = _grouped_module()
    after = qnn_layout_nchwc(mod)
    calls = [b.value for block in after["main"].body.blocks for b in block.bindings
             if isinstance(b.value, X.Call) and isinstance(b.value.op, X.Op)]
    groups = [v.attrs.groups for v in calls if v.op.name == "relax.qnn.conv2d_NCHWc"]
    assert groups == [1, 4], groups
    assert [v.attrs.groups for v in calls if v.op.name == "relax.qnn.conv2d"] == [2]
    x = np.random.default_rng(2).integers(0, 256, (1, 3, 8, 8)).astype("uint8")
    want = np.asarray(interpreter.run(mod, x))
    np.testing.assert_array_equal(np.asarray(interpreter.run(after, x)), want)
    factory = relay.build(bind_params(mod, {}), target=target)
    g = graph_executor.GraphModule(factory["default"](microruntime.cpu()))
    g.set_input("x", x)
    g.run()
    np.testing.assert_array_equal(g.get_output(0).numpy(), want)
