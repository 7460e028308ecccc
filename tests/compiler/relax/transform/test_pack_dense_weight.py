"""pack_dense_weight: on a CPU, a product by a constant weight with enough rows reads the weight
packed in the GEMM's column panels (nn.contrib_dense_pack). A weight nothing else reads is
packed now (the file holds it packed, padded to whole panels); a weight something else reads
is packed by a kernel that the graph executor runs once at load (and stays per call in a VM
build); small products, GPU and bare-metal targets are left alone. Results against numpy on
the interpreter, the graph executor (llvm and c) and the VM."""
import json

import numpy as np
import pytest

import microruntime
from compiler import build, relax, relay, te, topi
from compiler.relax import expr as X
from compiler.relax import interpreter, op
from compiler.relax.testing.models import _build
from compiler.relax.transform import bind_params
from compiler.relax.transform.pack_dense_weight import pack_dense_weight
from compiler.relax.transform.transpose_dense_weight import transpose_dense_weight
from compiler.topi.nn.dense import dense_pack_weight_numpy
from compiler.topi.x86.gemm import register_tile
from microruntime import graph_executor
from microruntime.relax_vm import VirtualMachine

TOL = dict(rtol=1e-4, atol=1e-4)
ROWS = 40          # at least topi.x86.gemm.PACKED_MIN_ROWS: the packed GEMM applies


def _dense_model(rows=ROWS, units=100):
    """relu(x @ W.T + b) with a weight of `units` rows (not whole panels), and x3 @ B with a
    3-d x3 (its leading dimensions are the GEMM's rows)."""
    def body(bb, w, x, x3):
        h = op.nn.relu(op.add(op.nn.dense(x, w("w", (units, 24), 0.2)), w("b", (units,), 0.1)))
        m = op.matmul(x3, w("bmat", (24, 70), 0.2))
        return op.concat([op.reshape(h, (rows * units,)), op.reshape(m, (rows * 70,))], axis=0)

    def ref(inp, p):
        h = np.maximum(inp["x"] @ p["w"].T + p["b"], 0)
        return np.concatenate([h.ravel(), (inp["x3"] @ p["bmat"]).ravel()])

    return _build("dense", {"x": (rows, 24), "x3": (1, rows, 24)}, body, ref)


def _tied_model():
    """dense(x, W) where W is also read by a multiply with an input (a tied weight)."""
    def body(bb, w, x, y):
        wt = w("w", (100, 24), 0.2)
        h = op.nn.dense(x, wt)
        return op.concat([op.reshape(h, (ROWS * 100,)), op.reshape(op.multiply(y, wt), (2400,))],
                         axis=0)

    def ref(inp, p):
        return np.concatenate([(inp["x"] @ p["w"].T).ravel(), (inp["y"] * p["w"]).ravel()])

    return _build("tied", {"x": (ROWS, 24), "y": (100, 24)}, body, ref)


def _calls(mod, name):
    return [b.value for block in mod["main"].body.blocks for b in block.bindings
            if X.is_op_call(b.value, name)]


def _prepared(m):
    return transpose_dense_weight(bind_params(m.mod, m.params))


def test_weights_read_only_by_products_are_packed_now():
    m = _dense_model()
    block = register_tile(None, "float32")[1]
    mod = pack_dense_weight(_prepared(m), "llvm")
    packs = _calls(mod, "relax.nn.contrib_dense_pack")
    assert sorted(c.attrs.units for c in packs) == [70, 100]
    assert not _calls(mod, "relax.matmul") and not _calls(mod, "relax.nn.dense")
    by_units = {c.attrs.units: c.args[1] for c in packs}
    assert by_units[100].data.shape == (-(-100 // block), 24, block)
    np.testing.assert_array_equal(by_units[100].data,
                                  dense_pack_weight_numpy(m.params["w"], block, "NK"))
    np.testing.assert_array_equal(by_units[70].data,
                                  dense_pack_weight_numpy(m.params["bmat"], block, "KN"))
    inputs = m.inputs(seed=1)
    np.testing.assert_allclose(np.asarray(interpreter.run(mod, *[inputs[k] for k in ("x", "x3")])),
                               m.reference(inputs), **TOL)


def test_small_products_gpu_and_bare_metal_targets_are_left_alone():
    small = _prepared(_dense_model(rows=8))
    assert not _calls(pack_dense_weight(small, "llvm"), "relax.nn.contrib_dense_pack")
    mod = _prepared(_dense_model())
    for target in ("cuda", "llvm -mtriple=thumbv7em-none-eabihf -mcpu=cortex-m4"):
        assert not _calls(pack_dense_weight(mod, target), "relax.nn.contrib_dense_pack")


def test_a_tied_weight_is_packed_at_load_or_left():
    mod = _prepared(_tied_model())
    at_load = pack_dense_weight(mod, "llvm", at_load=True)
    transforms = _calls(at_load, "relax.nn.contrib_dense_pack_weight_transform")
    assert len(transforms) == 1 and isinstance(transforms[0].args[0], X.Constant)
    assert transforms[0].attrs.weight_layout == "NK"
    assert len(_calls(at_load, "relax.nn.contrib_dense_pack")) == 1
    now = pack_dense_weight(mod, "llvm", at_load=False)
    assert not _calls(now, "relax.nn.contrib_dense_pack") and _calls(now, "relax.nn.dense")


@pytest.mark.parametrize("target", ["llvm", "c"])
def test_graph_executor(target):
    m = _dense_model()
    inputs = m.inputs(seed=2)
    lib = relay.build(m.mod, target=target, params=m.params)
    assert any("contrib_dense_pack" in n["name"] for n in json.loads(lib.get_graph_json())["nodes"])
    gm = graph_executor.GraphModule(lib["default"](microruntime.cpu()))
    gm.run(**inputs)
    np.testing.assert_allclose(gm.get_output(0).numpy(), m.reference(inputs), **TOL)


def test_graph_executor_packs_a_tied_weight_once_at_load():
    m = _tied_model()
    lib = relay.build(m.mod, target="llvm", params=m.params)
    nodes = [n["name"] for n in json.loads(lib.get_graph_json())["nodes"]]
    assert sum("dense_pack_weight_transform" in n for n in nodes) == 1
    # the file keeps one copy of the weight, unpacked
    assert sum(p.size for p in lib.get_params().values()) == m.params["w"].size
    gm = graph_executor.GraphModule(lib["default"](microruntime.cpu()))
    for seed in (3, 4):
        inputs = m.inputs(seed=seed)
        gm.run(**inputs)
        np.testing.assert_allclose(gm.get_output(0).numpy(), m.reference(inputs), **TOL)


@pytest.mark.parametrize("make", [_dense_model, _tied_model])
def test_vm(make):
    m = make()
    inputs = m.inputs(seed=5)
    vm = VirtualMachine(relax.build(m.mod, "llvm", params=m.params), microruntime.cpu())
    got = vm["main"](*[microruntime.nd.array(inputs[k]) for k in m.input_names])
    np.testing.assert_allclose(got.numpy(), m.reference(inputs), **TOL)


@pytest.mark.parametrize("layout", ["NK", "KN"])
def test_topi_pack_and_product(layout):
    """topi.nn.dense_pack_weight and dense_packed (the generic computes) against numpy."""
    rng = np.random.default_rng(6)
    wn = rng.standard_normal((50, 16) if layout == "NK" else (16, 50)).astype("float32")
    xn = rng.standard_normal((3, 16)).astype("float32")
    w = te.placeholder(wn.shape, name="w")
    x = te.placeholder(xn.shape, name="x")
    packed = topi.nn.dense_pack_weight(w, 8, layout)
    out = topi.nn.dense_packed(x, packed, 50)
    s = te.create_schedule([packed.op, out.op])
    fn = build(s, [x, w, packed, out], "llvm")
    dev = microruntime.cpu()
    args = [microruntime.nd.array(xn, dev), microruntime.nd.array(wn, dev),
            microruntime.nd.empty((7, 16, 8), "float32", dev),
            microruntime.nd.empty((3, 50), "float32", dev)]
    fn(*args)
    np.testing.assert_array_equal(args[2].numpy(), dense_pack_weight_numpy(wn, 8, layout))
    full = wn if layout == "NK" else wn.T
    np.testing.assert_allclose(args[3].numpy(), xn @ full.T, **TOL)
