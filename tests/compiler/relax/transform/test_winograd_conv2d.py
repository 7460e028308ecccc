"""winograd_conv2d: the blocked 3x3 stride-1 convolutions with enough channels become Winograd
ones (tile 2, F(2, 3), at every size) with their weights transformed, the others stay;
the module, the graph executor's result and the reference interpreter's agree with the original
(rtol 1e-4); a GPU or bare-metal target, or a PassContext that disables the pass, changes
nothing."""
import numpy as np
import pytest

import microruntime
from compiler import TypeInferenceError, relay
from compiler.relax import expr as X
from compiler.relax import interpreter, op
from compiler.relax.testing.models import _build
from compiler.relax.transform import bind_params
from compiler.relax.transform.convert_layout_nchwc import convert_layout_nchwc
from compiler.relax.transform.winograd_conv2d import winograd_conv2d
from compiler.transform import PassContext
from microruntime import graph_executor

TOL = dict(rtol=1e-4, atol=1e-4)
WINO = "relax.nn.contrib_conv2d_winograd_without_weight_transform"


def _model():
    def body(bb, w, x):
        y = op.nn.relu(op.nn.conv2d(x, w("c0", (32, 3, 3, 3), 0.3), padding=1))  # 3 in: stays
        shared = w("c1", (32, 32, 3, 3), 0.1)
        y = op.nn.relu(op.add(op.nn.conv2d(y, shared, padding=1), w("b1", (1, 32, 1, 1), 0.1)))
        y = op.nn.relu(op.nn.conv2d(y, shared, padding=1))
        y = op.nn.conv2d(y, w("c2", (32, 32, 3, 3), 0.1), strides=2, padding=1)   # stays
        y = op.nn.relu(op.nn.conv2d(y, w("c3", (48, 32, 3, 3), 0.1), padding=1))  # 7 x 7
        g = op.nn.adaptive_avg_pool2d(y, (1, 1))
        return op.nn.dense(op.reshape(g, (1, 48)), w("fc", (5, 48), 0.3))

    return _build("wino", {"x": (1, 3, 14, 14)}, body, None)


def _convs(func):
    return [b.value for block in func.body.blocks for b in block.bindings
            if isinstance(b.value, X.Call) and isinstance(b.value.op, X.Op)
            and "conv2d" in b.value.op.name]


def _blocked(m, target="llvm -mcpu=haswell"):
    return convert_layout_nchwc(bind_params(m.mod, m.params), target)


def test_eligible_convolutions_become_winograd():
    m = _model()
    mod = winograd_conv2d(_blocked(m), "llvm -mcpu=haswell")
    convs = _convs(mod["main"])
    assert [c.op.name == WINO for c in convs] == [False, True, True, False, True]
    # F(2, 3) at every size: F(4, 3) rounds too coarsely (test_topi_winograd's error bound)
    assert [c.attrs.tile_size for c in convs if c.op.name == WINO] == [2, 2, 2]
    assert [c.args[1].data.shape for c in convs if c.op.name == WINO] == \
        [(16, 4, 32, 8), (16, 4, 32, 8), (16, 6, 32, 8)]
    inputs = m.inputs(seed=1)
    want = np.asarray(interpreter.run(m.mod, *m.args(inputs)))
    np.testing.assert_allclose(np.asarray(interpreter.run(mod, inputs["x"])), want, **TOL)


def test_graph_executor(target):
    m = _model()
    inputs = m.inputs(seed=2)
    lib = relay.build(m.mod, target=target, params=m.params)
    gm = graph_executor.GraphModule(lib["default"](microruntime.cpu()))
    gm.run(**inputs)
    want = np.asarray(interpreter.run(m.mod, *m.args(inputs)))
    np.testing.assert_allclose(gm.get_output(0).numpy(), want, **TOL)


def test_gpu_and_bare_metal_targets_change_nothing():
    m = _model()
    mod = _blocked(m)
    assert winograd_conv2d(mod, "opencl") is mod
    assert winograd_conv2d(mod, "llvm -mtriple=thumbv7em-none-eabihf -mcpu=cortex-m7") is mod


def _winograd_kernels(mod):
    return [k for k in mod.functions if "winograd" in k]


@pytest.mark.parametrize("name", ["winograd_conv2d", "AlterOpLayout"])
def test_disabled_pass_leaves_winograd_out(name):
    m = _model()
    assert _winograd_kernels(relay.optimize(m.mod, m.params, "llvm"))
    with PassContext(disabled_pass=[name]):
        assert not _winograd_kernels(relay.optimize(m.mod, m.params, "llvm"))


def test_weight_that_does_not_match():
    x = X.Var("x", X.TensorStructInfo((1, 4, 8, 8, 8), "float32"))
    u = X.Var("u", X.TensorStructInfo((16, 2, 24, 8), "float32"))
    call = op.nn.contrib_conv2d_winograd_without_weight_transform(x, u, 2, 1, "NCHW8c")
    with pytest.raises(TypeInferenceError, match="do not match a tile_size=2 transform"):
        call.struct_info  # noqa: B018
