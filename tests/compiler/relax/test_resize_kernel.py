"""A bilinear upsampling fused after a layout transform (the blocked layout of the convolution
before it) anchors its kernel, so the kernel gets the separable resize schedule (the rows
stage per plane), and the graph executor matches the reference interpreter."""
import numpy as np

import microruntime
from compiler import relay
from compiler.relax import expr as X
from compiler.relax import interpreter, op
from compiler.relax.strategy import anchor_of, strategy_of
from compiler.relax.testing.models import _build
from compiler.relay.build_module import optimize
from microruntime import graph_executor


def _segmentation_head():
    def body(bb, w, x):
        y = op.nn.relu(op.nn.conv2d(x, w("w", (21, 16, 1, 1), 0.3)))
        return op.image.resize2d(y, (64, 48), method="linear")

    return _build("head", {"x": (1, 16, 8, 6)}, body, None)


def test_resize_anchors_its_kernel():
    m = _segmentation_head()
    mod = optimize(m.mod, m.params)
    name, func = next((n, f) for n, f in mod.items() if "resize2d" in n)
    calls = [b.value for block in func.body.blocks for b in block.bindings
             if isinstance(b.value, X.Call)]
    assert calls[0].op.name == "relax.layout_transform"      # first, the same pattern
    assert anchor_of(calls).op.name == "relax.image.resize2d"
    assert strategy_of(anchor_of(calls)).name == "resize2d"


def test_upsampled_head_matches_the_interpreter():
    m = _segmentation_head()
    inputs = m.inputs(seed=1)
    want = np.asarray(interpreter.run(m.mod, *m.args(inputs)))
    lib = relay.build(m.mod, target="llvm", params=m.params)
    gm = graph_executor.GraphModule(lib["default"](microruntime.cpu()))
    gm.run(**inputs)
    np.testing.assert_allclose(gm.get_output(0).numpy(), want, rtol=1e-5, atol=1e-6)
