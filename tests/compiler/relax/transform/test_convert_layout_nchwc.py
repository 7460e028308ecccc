"""convert_layout_nchwc: a convolution region (odd input channels, conv + bias + relu, a max
pool, a residual add, a depthwise conv with a clip, a 1x1 conv with a block that is not the
vector width, a global pool) runs blocked; channel counts a few zero channels make whole
vectors (58, 116) run padded with one layout transform in and one out; grouped convs run
blocked when their groups are whole vectors (ResNeXt's), else in NCHW; the
converted module, the graph executor's and the VM's results match the reference interpreter
on the original module (rtol 1e-4); a GPU target keeps NCHW."""
import numpy as np
import pytest

import microruntime
from compiler import relax, relay
from compiler.relax import expr as X
from compiler.relax import interpreter, op
from compiler.relax.testing.models import _build
from compiler.relax.transform import bind_params
from compiler.relax.transform.convert_layout_nchwc import (
    channel_block,
    convert_layout_nchwc,
    output_block,
)
from compiler.relay.build_module import optimize
from compiler.target import Target
from microruntime import graph_executor
from microruntime.relax_vm import VirtualMachine

TOL = dict(rtol=1e-4, atol=1e-4)


def _region():
    def body(bb, w, x):
        y = op.nn.conv2d(x, w("c1_w", (16, 3, 3, 3), 0.3), padding=1)
        y = op.nn.relu(op.add(y, w("c1_b", (1, 16, 1, 1), 0.1)))
        p = bb.emit(op.nn.max_pool2d(y, 3, 2, 1))
        r = op.nn.conv2d(p, w("c2_w", (16, 16, 3, 3), 0.2), padding=1)
        r = op.nn.relu(op.add(op.multiply(r, w("c2_s", (16, 1, 1), 0.5)), p))
        d = op.nn.conv2d(r, w("dw_w", (16, 1, 3, 3), 0.3), strides=2, padding=1, groups=16)
        d = op.clip(d, 0.0, 6.0)
        e = op.nn.relu(op.nn.conv2d(d, w("pw_w", (12, 16, 1, 1), 0.3)))
        g = op.nn.adaptive_avg_pool2d(e, (1, 1))
        return op.nn.dense(op.reshape(g, (1, 12)), w("fc_w", (5, 12), 0.3))

    return _build("region", {"x": (1, 3, 11, 10)}, body, None)


def _calls(func):
    out = []
    for block in func.body.blocks:
        for b in block.bindings:
            if isinstance(b.value, X.Call) and isinstance(b.value.op, X.Op):
                out.append(b.value)
    return out


def _expected(m, inputs):
    return np.asarray(interpreter.run(m.mod, *m.args(inputs)))


def test_region_is_blocked_once():
    m = _region()
    mod = convert_layout_nchwc(bind_params(m.mod, m.params), "llvm -mcpu=haswell")
    calls = _calls(mod["main"])
    transforms = [(c.attrs.src_layout, c.attrs.dst_layout) for c in calls
                  if c.op.name == "relax.layout_transform"]
    # in before the first conv (3 channels: block 3), 8c -> 8c between convs needs nothing,
    # the 1x1 conv's 12 channels are in blocks of 4 (a whole power of two, not 6), out before
    # flatten
    assert transforms == [("NCHW", "NCHW3c"), ("NCHW4c", "NCHW")]
    convs = [c for c in calls if c.op.name == "relax.nn.conv2d"]
    assert [c.attrs.kernel_layout for c in convs] == ["OIHW3i8o", "OIHW8i8o", "OIHW1i8o",
                                                      "OIHW8i4o"]
    for c in convs:   # weights were blocked at compile time
        assert isinstance(c.args[1], X.Constant) and c.args[1].data.ndim == 6
    pools = [c for c in calls if "pool" in c.op.name]
    assert [c.attrs.layout for c in pools] == ["NCHW8c", "NCHW4c"]
    inputs = m.inputs(seed=1)
    np.testing.assert_allclose(np.asarray(interpreter.run(mod, inputs["x"])),
                               _expected(m, inputs), **TOL)


def test_gpu_target_keeps_nchw():
    m = _region()
    mod = bind_params(m.mod, m.params)
    assert convert_layout_nchwc(mod, "opencl") is mod
    fused = optimize(m.mod, m.params, Target("cuda"))
    assert not any("layout_transform" in name for name, _ in fused.items())


def test_region_graph_executor(target):
    m = _region()
    inputs = m.inputs(seed=2)
    lib = relay.build(m.mod, target=target, params=m.params)
    gm = graph_executor.GraphModule(lib["default"](microruntime.cpu()))
    gm.run(**inputs)
    np.testing.assert_allclose(gm.get_output(0).numpy(), _expected(m, inputs), **TOL)


@pytest.mark.parametrize("target", ["llvm"])
def test_region_vm(target):
    m = _region()
    inputs = m.inputs(seed=3)
    vm = VirtualMachine(relax.build(m.mod, target, params=m.params), microruntime.cpu())
    got = vm["main"](microruntime.nd.array(inputs["x"]))
    np.testing.assert_allclose(got.numpy(), _expected(m, inputs), **TOL)


def test_output_block_prefers_whole_vectors():
    # the largest divisor up to the lanes, unless a power of two at least half as wide exists
    assert [output_block(c, 16) for c in (64, 1000, 24, 40, 88, 120, 12, 10, 3, 116)] == \
        [16, 8, 8, 8, 8, 8, 12, 10, 3, 4]
    assert [output_block(c, 8) for c in (12, 24, 6, 5)] == [4, 8, 6, 5]


def _fire():
    """A fire module (SqueezeNet: squeeze 1x1, two expands, concat over the channels, a max
    pool, a conv after) and a squeeze-and-excitation scale (a per-channel product of two
    computed values), then out to a dense layer."""
    def body(bb, w, x):
        s = op.nn.relu(op.nn.conv2d(x, w("sq_w", (8, 16, 1, 1), 0.3)))
        e1 = op.nn.relu(op.nn.conv2d(s, w("e1_w", (16, 8, 1, 1), 0.3)))
        e3 = op.nn.relu(op.nn.conv2d(s, w("e3_w", (16, 8, 3, 3), 0.2), padding=1))
        c = bb.emit(op.concat([e1, e3], axis=1))
        c = op.nn.max_pool2d(c, 2, 2)
        g = op.nn.adaptive_avg_pool2d(c, (1, 1))
        scale = op.sigmoid(op.nn.conv2d(g, w("se_w", (32, 32, 1, 1), 0.3)))
        y = op.multiply(c, scale)
        y = op.nn.conv2d(y, w("out_w", (24, 32, 1, 1), 0.3))
        g = op.nn.adaptive_avg_pool2d(y, (1, 1))
        return op.nn.dense(op.reshape(g, (1, 24)), w("fc_w", (5, 24), 0.3))

    return _build("fire", {"x": (1, 16, 8, 8)}, body, None)


def test_concat_and_channel_scale_stay_blocked():
    m = _fire()
    mod = convert_layout_nchwc(bind_params(m.mod, m.params), "llvm -mcpu=haswell")
    calls = _calls(mod["main"])
    transforms = [(c.attrs.src_layout, c.attrs.dst_layout) for c in calls
                  if c.op.name == "relax.layout_transform"]
    # in once, out once before the dense layer: the concat and the scale run blocked
    assert transforms == [("NCHW", "NCHW8c"), ("NCHW8c", "NCHW")]
    concat = next(c for c in calls if c.op.name == "relax.concat")
    assert concat.attrs.axis == 1 and all(f.struct_info.ndim == 5
                                          for f in concat.args[0].fields)
    mul = next(c for c in calls if c.op.name == "relax.multiply")
    assert [tuple(a.struct_info.shape) for a in mul.args] == [(1, 4, 4, 4, 8), (1, 4, 1, 1, 8)]
    inputs = m.inputs(seed=4)
    np.testing.assert_allclose(np.asarray(interpreter.run(mod, inputs["x"])),
                               _expected(m, inputs), **TOL)
    lib = relay.build(m.mod, target="llvm", params=m.params)
    gm = graph_executor.GraphModule(lib["default"](microruntime.cpu()))
    gm.run(**inputs)
    np.testing.assert_allclose(gm.get_output(0).numpy(), _expected(m, inputs), **TOL)


def test_concat_of_partial_blocks_stays_nchw():
    # a 16-channel value (blocks of 8) and a 6-channel one (blocks of 6): not whole blocks of
    # the first one's, so the concat reads both in NCHW
    def body(bb, w, x):
        a = op.nn.conv2d(x, w("a_w", (16, 8, 1, 1), 0.3))
        b = op.nn.conv2d(x, w("b_w", (6, 8, 1, 1), 0.3))
        return op.concat([a, b], axis=1)

    m = _build("odd", {"x": (1, 8, 5, 5)}, body, None)
    mod = convert_layout_nchwc(bind_params(m.mod, m.params), "llvm -mcpu=haswell")
    concat = next(c for c in _calls(mod["main"]) if c.op.name == "relax.concat")
    assert all(f.struct_info.ndim == 4 for f in concat.args[0].fields)
    inputs = m.inputs(seed=5)
    np.testing.assert_allclose(np.asarray(interpreter.run(mod, inputs["x"])),
                               _expected(m, inputs), **TOL)


def test_channel_block_pads_to_whole_vectors():
    # 58 = 2 * 29, 116 = 4 * 29 and SqueezeNet's 1000 classes gain at most 1/8 zeros to whole
    # vectors of 16; 24 and 40 would gain a third and a fifth: they keep their blocks of 8
    assert [channel_block(c, 16) for c in (58, 116, 232, 104, 64, 24, 40, 3, 1000)] == \
        [(16, 64), (16, 128), (16, 240), (16, 112), (16, 64), (8, 24), (8, 40), (3, 3),
         (16, 1008)]


def _shuffle_unit():
    """A ShuffleNet-like unit of 58 channels (padded to 64 when blocked): 1x1 conv, a bias,
    relu, a depthwise conv, a hard-swish (add, clip, divide by a constant, multiply), a
    squeeze-and-excitation sigmoid scale, a log (not safe on padding: NCHW), a channel split,
    concat and shuffle in NCHW, a residual add and out to a dense layer."""
    def body(bb, w, x):
        y = op.nn.conv2d(x, w("a_w", (58, 58, 1, 1), 0.2))
        y = op.nn.relu(op.add(y, w("a_b", (1, 58, 1, 1), 0.1)))
        d = bb.emit(op.nn.conv2d(y, w("dw_w", (58, 1, 3, 3), 0.3), padding=1, groups=58))
        three, six = X.const(np.float32(3.0)), X.const(np.float32(6.0))
        hs = op.divide(op.clip(op.add(d, three), 0.0, 6.0), six)
        d = bb.emit(op.multiply(d, hs))
        g = op.nn.adaptive_avg_pool2d(d, (1, 1))
        d = op.multiply(d, op.sigmoid(op.nn.conv2d(g, w("se_w", (58, 58, 1, 1), 0.2))))
        z = bb.emit(op.nn.conv2d(d, w("b_w", (58, 58, 1, 1), 0.2)))
        z = op.add(z, x)
        lg = op.log(op.add(op.abs(z), X.const(np.float32(1.0))))
        halves = bb.emit(op.split(lg, 2, axis=1))
        c = op.concat([X.TupleGetItem(halves, 1), X.TupleGetItem(halves, 0)], axis=1)
        c = op.nn.conv2d(c, w("c_w", (116, 58, 1, 1), 0.2))
        g = op.nn.adaptive_avg_pool2d(c, (1, 1))
        return op.nn.dense(op.reshape(g, (1, 116)), w("fc_w", (5, 116), 0.3))

    return _build("shuffle", {"x": (1, 58, 6, 6)}, body, None)


def test_padded_channels():
    m = _shuffle_unit()
    mod = convert_layout_nchwc(bind_params(m.mod, m.params), "llvm -mcpu=skylake-avx512")
    calls = _calls(mod["main"])
    convs = [c for c in calls if c.op.name == "relax.nn.conv2d"]
    assert [c.attrs.kernel_layout for c in convs] == ["OIHW16i16o", "OIHW1i16o",
                                                      "OIHW16i16o", "OIHW16i16o",
                                                      "OIHW16i16o"]
    assert [tuple(c.struct_info.shape)[1] for c in convs] == [4, 4, 4, 4, 8]   # 64, 128
    assert convs[1].attrs.groups == 64
    # the log is not safe on padded lanes: the value before it goes back to NCHW, cropped
    crops = [c for c in calls if c.op.name == "relax.strided_slice"]
    assert crops and all(tuple(c.struct_info.shape)[1] in (58, 116) for c in crops)
    _same_values(m, mod, seed=6)


def _same_values(m, converted, seed):
    """The converted module (interpreted) and the model built for llvm give the original
    module's values."""
    inputs = m.inputs(seed=seed)
    want = _expected(m, inputs)
    np.testing.assert_allclose(np.asarray(interpreter.run(converted, inputs["x"])), want, **TOL)
    lib = relay.build(m.mod, target="llvm", params=m.params)
    gm = graph_executor.GraphModule(lib["default"](microruntime.cpu()))
    gm.run(**inputs)
    np.testing.assert_allclose(gm.get_output(0).numpy(), want, **TOL)


def _resnext_unit():
    """A ResNeXt-like unit: a 1x1 conv to 64 channels, a grouped 3x3 conv (groups of 32 and
    of 16 channels, whole vectors of 16), a residual add, and a grouped conv of 8 channels
    per group (two groups in each block of 16), out to a dense layer."""
    def body(bb, w, x):
        y = op.nn.relu(op.nn.conv2d(x, w("a_w", (64, 32, 1, 1), 0.2)))
        g = op.nn.relu(op.nn.conv2d(y, w("g_w", (64, 32, 3, 3), 0.1), padding=1, groups=2))
        g = bb.emit(op.nn.conv2d(g, w("h_w", (64, 16, 3, 3), 0.1), strides=2, padding=1,
                                 groups=4))
        n = op.nn.conv2d(g, w("n_w", (64, 8, 3, 3), 0.1), padding=1, groups=8)
        p = op.nn.adaptive_avg_pool2d(op.add(n, g), (1, 1))
        return op.nn.dense(op.reshape(p, (1, 64)), w("fc_w", (5, 64), 0.3))

    return _build("resnext", {"x": (1, 32, 8, 9)}, body, None)


def test_grouped_conv_of_whole_vectors():
    m = _resnext_unit()
    mod = convert_layout_nchwc(bind_params(m.mod, m.params), "llvm -mcpu=skylake-avx512")
    convs = [c for c in _calls(mod["main"]) if c.op.name == "relax.nn.conv2d"]
    assert [(c.attrs.kernel_layout, c.attrs.groups) for c in convs] == [
        ("OIHW16i16o", 1), ("OIHW16i16o", 2), ("OIHW16i16o", 4), ("OIHW8i16o", 8)]
    _same_values(m, mod, seed=7)
