"""decompose_recurrent: for a GPU target the sequence operators become per-step graph
operators with the same values (checked with the reference interpreter, so no GPU is
needed); for a CPU target the module is unchanged."""
import numpy as np
import pytest

from compiler import relax
from compiler.relax import expr as X
from compiler.relax import interpreter, op
from compiler.relax import script as R
from compiler.relax.transform.decompose_recurrent import decompose_recurrent

SEQ, BATCH, HID = 3, 2, 4
rng = np.random.default_rng(1)


def _module(make, arrays):
    params = [relax.Var(f"p{i}", R.Tensor(a.shape, "float32")) for i, a in enumerate(arrays)]
    bb = relax.BlockBuilder()
    with bb.function("main", params):
        with bb.dataflow():
            out = bb.emit_output(bb.emit(make(*params)))
        bb.emit_func_output(out)
    return bb.get()


def _ops(mod):
    return [b.value.op.name for block in mod["main"].body.blocks for b in block.bindings
            if isinstance(b.value, X.Call) and isinstance(b.value.op, X.Op)]


def rand(*shape):
    return rng.standard_normal(shape).astype("float32")


CASES = [
    ("gru", "bidirectional", {"linear_before_reset": 1}),
    ("gru", "reverse", {"linear_before_reset": 0, "clip": 0.6}),
    ("lstm", "forward", {"clip": 0.9}),
    ("lstm", "bidirectional", {"peephole": True}),
]


@pytest.mark.parametrize("kind,direction,attrs", CASES)
def test_gpu_target_unrolls_with_the_same_values(kind, direction, attrs):
    nd = 2 if direction == "bidirectional" else 1
    g = 3 if kind == "gru" else 4
    attrs = dict(attrs)
    gates, w = rand(SEQ, BATCH, nd, g * HID), rand(nd, HID, g * HID) * 0.5
    states = [rand(nd, BATCH, HID) for _ in range(1 if kind == "gru" else 2)]
    if kind == "gru":
        arrays = [gates, w, rand(nd, g * HID), *states]

        def make(*a):
            return op.nn.gru_sequence(*a, direction, **attrs)
    else:
        peephole = attrs.pop("peephole", False)
        arrays = [gates, w, *states] + ([rand(nd, 3 * HID)] if peephole else [])

        def make(*a):
            return op.nn.lstm_sequence(*a[:4], a[4] if peephole else None, direction, **attrs)
    mod = _module(make, arrays)
    name = f"relax.nn.{kind}_sequence"
    assert decompose_recurrent(mod, "llvm") is mod
    unrolled = decompose_recurrent(mod, "opencl")
    ops = _ops(unrolled)
    assert name not in ops and ops.count("relax.matmul") >= SEQ * nd, ops
    want, got = interpreter.run(mod, *arrays), interpreter.run(unrolled, *arrays)
    assert len(got) == len(want)
    for a, b in zip(got, want):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
