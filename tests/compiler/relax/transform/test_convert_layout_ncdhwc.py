"""convert_layout_ncdhwc: a video-ResNet-like region (3 input channels, conv3d + bias + relu,
a stride-2 conv3d with padding beside a stride-2 1x1x1 downsample, their residual add, a
conv3d to 12 channels times a scalar, a global pool, a dense layer) runs blocked with one
layout transform in and one out and its weights blocked at compile time; the converted module
(the reference interpreter on blocked conv3d), the graph executor's and the VM's results match
the reference interpreter on the original module (rtol 1e-4); a GPU target keeps NCDHW."""
import numpy as np
import pytest

import microruntime
from compiler import relax, relay
from compiler.relax import expr as X
from compiler.relax import interpreter, op
from compiler.relax.testing.models import _build
from compiler.relax.transform import bind_params
from compiler.relax.transform.convert_layout_ncdhwc import convert_layout_ncdhwc
from compiler.relay.build_module import optimize
from compiler.target import Target
from microruntime import graph_executor
from microruntime.relax_vm import VirtualMachine

TOL = dict(rtol=1e-4, atol=1e-4)


def _region():
    def body(bb, w, x):
        y = op.nn.conv3d(x, w("c1_w", (8, 3, 3, 3, 3), 0.3), padding=1)
        y = bb.emit(op.nn.relu(op.add(y, w("c1_b", (8, 1, 1, 1), 0.1))))
        r = op.nn.conv3d(y, w("c2_w", (8, 8, 3, 3, 3), 0.2), strides=2, padding=1)
        r = op.add(r, w("c2_b", (1, 8, 1, 1, 1), 0.1))
        d = op.nn.conv3d(y, w("ds_w", (8, 8, 1, 1, 1), 0.3), strides=2)
        r = op.nn.relu(op.add(r, d))
        z = op.nn.conv3d(r, w("c3_w", (12, 8, 3, 3, 3), 0.2), padding=(1, 0, 1))
        z = op.multiply(z, X.const(np.float32(0.5)))
        g = op.nn.adaptive_avg_pool3d(z, (1, 1, 1))
        return op.nn.dense(op.reshape(g, (1, 12)), w("fc_w", (5, 12), 0.3))

    return _build("region3d", {"x": (1, 3, 6, 9, 10)}, body, None)


def _calls(func):
    return [b.value for block in func.body.blocks for b in block.bindings
            if isinstance(b.value, X.Call) and isinstance(b.value.op, X.Op)]


def _expected(m, inputs):
    return np.asarray(interpreter.run(m.mod, *m.args(inputs)))


def test_region_is_blocked_once():
    m = _region()
    mod = convert_layout_ncdhwc(bind_params(m.mod, m.params), "llvm -mcpu=haswell")
    calls = _calls(mod["main"])
    transforms = [(c.attrs.src_layout, c.attrs.dst_layout) for c in calls
                  if c.op.name == "relax.layout_transform"]
    # in before the first conv (3 channels: a block of 3), nothing between the convs, the
    # residual add and the scalar product; 12 channels in blocks of 4, out before the pool
    assert transforms == [("NCDHW", "NCDHW3c"), ("NCDHW4c", "NCDHW")]
    convs = [c for c in calls if c.op.name == "relax.nn.conv3d"]
    assert [c.attrs.kernel_layout for c in convs] == ["OIDHW3i8o", "OIDHW8i8o", "OIDHW8i8o",
                                                      "OIDHW8i4o"]
    for c in convs:   # weights were blocked at compile time
        assert isinstance(c.args[1], X.Constant) and c.args[1].data.ndim == 7
    adds = [c for c in calls if c.op.name == "relax.add"]
    assert all(c.struct_info.ndim == 6 for c in adds)
    bias = adds[0].args[1]
    assert isinstance(bias, X.Constant) and bias.data.shape == (1, 1, 1, 1, 1, 8)
    inputs = m.inputs(seed=1)
    np.testing.assert_allclose(np.asarray(interpreter.run(mod, inputs["x"])),
                               _expected(m, inputs), **TOL)


def test_gpu_target_keeps_ncdhw():
    m = _region()
    mod = bind_params(m.mod, m.params)
    assert convert_layout_ncdhwc(mod, "opencl") is mod
    fused = optimize(m.mod, m.params, Target("cuda"))
    assert not any("layout_transform" in name for name, _ in fused.items())


def test_graph_executor_matches_reference():
    m = _region()
    inputs = m.inputs(seed=2)
    lib = relay.build(m.mod, target="llvm", params=m.params)
    gm = graph_executor.GraphModule(lib["default"](microruntime.cpu()))
    gm.run(**inputs)
    np.testing.assert_allclose(gm.get_output(0).numpy(), _expected(m, inputs), **TOL)


@pytest.mark.parametrize("target", ["llvm"])
def test_vm_matches_reference(target):
    m = _region()
    inputs = m.inputs(seed=3)
    vm = VirtualMachine(relax.build(m.mod, target, params=m.params), microruntime.cpu())
    got = vm["main"](microruntime.nd.array(inputs["x"]))
    np.testing.assert_allclose(got.numpy(), _expected(m, inputs), **TOL)


def test_grouped_and_computed_weights_stay_ncdhw():
    # a grouped conv3d has no blocked kernel; a weight computed at run time is transformed
    # by a layout_transform of its own
    def body(bb, w, x, k):
        g = op.nn.conv3d(x, w("g_w", (4, 2, 1, 1, 1), 0.3), groups=2)
        return op.nn.conv3d(g, k, padding=1)

    m = _build("grouped3d", {"x": (1, 4, 3, 4, 4), "k": (4, 4, 3, 3, 3)}, body, None)
    mod = convert_layout_ncdhwc(bind_params(m.mod, m.params), "llvm -mcpu=haswell")
    convs = [c for c in _calls(mod["main"]) if c.op.name == "relax.nn.conv3d"]
    assert [c.attrs.data_layout for c in convs] == ["NCDHW", "NCDHW4c"]
    transforms = [(c.attrs.src_layout, c.attrs.dst_layout) for c in _calls(mod["main"])
                  if c.op.name == "relax.layout_transform"]
    assert ("OIDHW", "OIDHW4i4o") in transforms
    inputs = m.inputs(seed=4)
    np.testing.assert_allclose(np.asarray(interpreter.run(mod, inputs["x"], inputs["k"])),
                               _expected(m, inputs), **TOL)
