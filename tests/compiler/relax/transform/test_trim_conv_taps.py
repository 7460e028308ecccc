"""trim_conv_taps: kernel taps of a constant-weight convolution that read only padding are cut
(DeepLab's ASPP: dilation 24 and 36 on a 14 x 14 map leave the centre tap), the padding
lowered to match; taps that some output reads stay. The interpreter and the graph executor
give the original convolutions' results."""
import numpy as np

import microruntime
from compiler import relay
from compiler.relax import expr as X
from compiler.relax import interpreter, op
from compiler.relax.testing.models import _build
from compiler.relax.transform import bind_params
from compiler.relax.transform.trim_conv_taps import live_taps, trim_conv_taps
from microruntime import graph_executor

TOL = dict(rtol=1e-4, atol=1e-4)


def _model():
    def body(bb, w, x):
        outs = [op.nn.conv2d(x, w(f"d{d}", (8, 16, 3, 3), 0.2), padding=d, dilation=d)
                for d in (1, 12, 24, 36)]
        # strided, dilated along H only, 5 wide along W: the rows cut, the columns kept
        outs.append(op.nn.conv2d(x, w("mixed", (8, 16, 3, 5), 0.2), strides=(2, 1),
                                 padding=(20, 6, 20, 6), dilation=(20, 3)))
        return op.concat([op.reshape(o, (1, -1)) for o in outs], axis=1)

    return _build("aspp", {"x": (1, 16, 14, 13)}, body, None)


def _convs(func):
    return [b.value for block in func.body.blocks for b in block.bindings
            if isinstance(b.value, X.Call) and isinstance(b.value.op, X.Op)
            and b.value.op.name == "relax.nn.conv2d"]


def test_live_taps_of_one_axis():
    assert live_taps(14, 14, 3, 1, 1, 1) == (0, 2)
    assert live_taps(14, 14, 3, 1, 12, 12) == (0, 2)     # rows 12, 13 read the first tap
    assert live_taps(14, 14, 3, 1, 14, 14) == (1, 1)
    assert live_taps(14, 7, 3, 2, 20, 20) == (1, 1)


def test_taps_reading_only_padding_are_cut():
    m = _model()
    mod = trim_conv_taps(bind_params(m.mod, m.params))
    convs = _convs(mod["main"])
    shapes = [c.args[1].data.shape for c in convs]
    assert shapes == [(8, 16, 3, 3), (8, 16, 3, 3), (8, 16, 1, 1), (8, 16, 1, 1), (8, 16, 1, 5)]
    assert [tuple(c.attrs.padding) for c in convs[2:]] == [(0, 0, 0, 0)] * 2 + [(0, 6, 0, 6)]
    assert [tuple(c.attrs.dilation) for c in convs[2:]] == [(1, 1), (1, 1), (1, 3)]
    np.testing.assert_array_equal(convs[2].args[1].data, m.params["d24"][:, :, 1:2, 1:2])
    inputs = m.inputs(seed=3)
    want = np.asarray(interpreter.run(m.mod, *m.args(inputs)))
    np.testing.assert_allclose(np.asarray(interpreter.run(mod, inputs["x"])), want, **TOL)


def test_graph_executor(target):
    m = _model()
    inputs = m.inputs(seed=4)
    lib = relay.build(m.mod, target=target, params=m.params)
    gm = graph_executor.GraphModule(lib["default"](microruntime.cpu()))
    gm.run(**inputs)
    want = np.asarray(interpreter.run(m.mod, *m.args(inputs)))
    np.testing.assert_allclose(gm.get_output(0).numpy(), want, **TOL)


def test_nothing_to_cut_leaves_the_module():
    m = _model()
    mod = bind_params(m.mod, m.params)
    once = trim_conv_taps(mod)
    assert [c.args[1].data.shape for c in _convs(trim_conv_taps(once)["main"])] == \
        [c.args[1].data.shape for c in _convs(once["main"])]


def test_sparse_dilated_convolution_is_computed_tap_by_tap():
    """Dilation 12 on 14 x 13: each edge tap reaches the input for 2 rows (1 column), so the
    blocked convolution becomes 9 one-by-one convolutions over their rectangles of outputs,
    padded into place and summed; dilation 1 stays whole."""
    from compiler.relax.transform.convert_layout_nchwc import convert_layout_nchwc
    from compiler.relax.transform.split_dilated_conv import split_dilated_conv, tap_rectangle

    assert tap_rectangle(14, 14, 0, 12, 12) == (12, 14, 0)
    assert tap_rectangle(14, 14, 2, 12, 12) == (0, 2, 12)
    assert tap_rectangle(13, 13, 0, 12, 12) == (12, 13, 0)
    m = _model()
    blocked = convert_layout_nchwc(trim_conv_taps(bind_params(m.mod, m.params)),
                                   "llvm -mcpu=haswell")
    mod = split_dilated_conv(blocked)
    convs = _convs(mod["main"])
    kernels = [c.args[1].data.shape[2:4] for c in convs]
    assert kernels.count((3, 3)) == 1 and kernels.count((1, 5)) == 1   # dilation 1; mixed
    assert kernels.count((1, 1)) == 2 + 9                               # d24, d36; d12's taps
    inputs = m.inputs(seed=5)
    want = np.asarray(interpreter.run(m.mod, *m.args(inputs)))
    np.testing.assert_allclose(np.asarray(interpreter.run(mod, inputs["x"])), want, **TOL)
