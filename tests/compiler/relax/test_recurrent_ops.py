"""nn.gru_sequence / nn.lstm_sequence: struct-info inference (shapes, the errors), and the
reference interpreter's kernels against a step-by-step numpy GRU / LSTM written from the ONNX
equations (weights in ONNX's [gates * hidden, hidden] form, transposed for the operator)."""
import numpy as np
import pytest

from compiler import TypeInferenceError, relax
from compiler.relax import interpreter, op
from compiler.relax import script as R
from compiler.relax.struct_info import TupleStructInfo

SEQ, BATCH, HID = 4, 2, 5
rng = np.random.default_rng(0)


def T(shape):  # noqa: N802
    return relax.Var("t", R.Tensor(shape, "float32"))


def _shapes(call):
    s = call.struct_info
    assert isinstance(s, TupleStructInfo), s
    return [tuple(f.shape) for f in s.fields]


def test_inference_gives_y_and_the_last_states():
    nd, g = 2, 3
    call = op.nn.gru_sequence(T((SEQ, BATCH, nd, g * HID)), T((nd, HID, g * HID)),
                              T((nd, g * HID)), T((nd, BATCH, HID)), "bidirectional", 1)
    assert _shapes(call) == [(SEQ, nd, BATCH, HID), (nd, BATCH, HID)]
    call = op.nn.lstm_sequence(T((SEQ, BATCH, 1, 4 * HID)), T((1, HID, 4 * HID)),
                               T((1, BATCH, HID)), T((1, BATCH, HID)), T((1, 3 * HID)),
                               "reverse", clip=0.5)
    assert _shapes(call) == [(SEQ, 1, BATCH, HID)] + [(1, BATCH, HID)] * 2


@pytest.mark.parametrize("make,phrase", [
    (lambda: op.nn.gru_sequence(T((SEQ, BATCH, 1, 3 * HID)), T((1, HID, 3 * HID)),
                                T((1, 3 * HID)), T((1, BATCH, HID)), "bidirectional"),
     "gates has 1 directions but direction 'bidirectional' has 2"),
    (lambda: op.nn.gru_sequence(T((SEQ, BATCH, 1, 3 * HID)), T((1, 3 * HID, HID)),
                                T((1, 3 * HID)), T((1, BATCH, HID))),
     "weight has shape (1, 15, 5)"),
    (lambda: op.nn.lstm_sequence(T((SEQ, BATCH, 1, 4 * HID)), T((1, HID, 4 * HID)),
                                 T((1, BATCH + 1, HID)), T((1, BATCH, HID))),
     "h0 has shape (1, 3, 5)"),
    (lambda: op.nn.gru_sequence(T((SEQ, BATCH, 1, 3 * HID)), T((1, HID, 3 * HID)),
                                T((1, 3 * HID)), T((1, BATCH, HID)), "sideways"),
     "direction 'sideways'"),
])
def test_inference_errors_name_the_argument(make, phrase):
    with pytest.raises(TypeInferenceError) as e:
        make().struct_info  # noqa: B018
    assert phrase in str(e.value) and "relax.nn." in str(e.value), str(e.value)


def _sig(x):
    return 1 / (1 + np.exp(-x))


def onnx_gru(x, r, rb, h0, reverse, before_reset, clip):
    """ONNX's GRU equations on the projected input x [seq, batch, 3h] of one direction,
    R [3h, h], Rb [3h]."""
    h = h0.shape[-1]
    cl = (lambda v: v) if clip is None else (lambda v: np.clip(v, -clip, clip))
    rz, rr, rh = r[:h], r[h:2 * h], r[2 * h:]
    bz, br, bh = rb[:h], rb[h:2 * h], rb[2 * h:]
    hs, y = h0, np.zeros(x.shape[:2] + (h,))
    for t in (range(len(x) - 1, -1, -1) if reverse else range(len(x))):
        xz, xr, xh = x[t, :, :h], x[t, :, h:2 * h], x[t, :, 2 * h:]
        z = _sig(cl(xz + hs @ rz.T + bz))
        rg = _sig(cl(xr + hs @ rr.T + br))
        if before_reset:
            cand = np.tanh(cl(xh + rg * (hs @ rh.T + bh)))
        else:
            cand = np.tanh(cl(xh + (rg * hs) @ rh.T + bh))
        hs = (1 - z) * cand + z * hs
        y[t] = hs
    return y, hs


def onnx_lstm(x, r, h0, c0, p, reverse, clip):
    """ONNX's LSTM equations (gates i, o, f, c) on the projected input of one direction."""
    h = h0.shape[-1]
    cl = (lambda v: v) if clip is None else (lambda v: np.clip(v, -clip, clip))
    hs, cs, y = h0, c0, np.zeros(x.shape[:2] + (h,))
    for t in (range(len(x) - 1, -1, -1) if reverse else range(len(x))):
        a = x[t] + hs @ r.T
        i, o, f, c = (a[:, k * h:(k + 1) * h] for k in range(4))
        if p is not None:
            i, f = i + p[:h] * cs, f + p[2 * h:] * cs
        cs = _sig(cl(f)) * cs + _sig(cl(i)) * np.tanh(cl(c))
        if p is not None:
            o = o + p[h:2 * h] * cs
        hs = _sig(cl(o)) * np.tanh(cs)
        y[t] = hs
    return y, hs, cs


def _run(call_of, *arrays):
    params = [relax.Var(f"p{i}", R.Tensor(a.shape, "float32")) for i, a in enumerate(arrays)]
    bb = relax.BlockBuilder()
    with bb.function("main", params):
        bb.emit_func_output(bb.emit(call_of(*params)))
    return interpreter.run(bb.get(), *arrays)


def rand(*shape):
    return rng.standard_normal(shape).astype("float32")


@pytest.mark.parametrize("direction", ["forward", "reverse", "bidirectional"])
@pytest.mark.parametrize("before_reset", [0, 1])
def test_gru_interpreter_follows_the_onnx_equations(direction, before_reset):
    nd = 2 if direction == "bidirectional" else 1
    gates, r, rb, h0 = rand(SEQ, BATCH, nd, 3 * HID), rand(nd, 3 * HID, HID), \
        rand(nd, 3 * HID), rand(nd, BATCH, HID)
    got = _run(lambda *a: op.nn.gru_sequence(*a, direction, before_reset, 0.8),
               gates, np.ascontiguousarray(r.transpose(0, 2, 1)), rb, h0)
    for d in range(nd):
        rev = direction == "reverse" or d == 1
        y, yh = onnx_gru(gates[:, :, d], r[d], rb[d], h0[d], rev, before_reset, 0.8)
        np.testing.assert_allclose(got[0][:, d], y, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(got[1][d], yh, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("peephole", [False, True])
def test_lstm_interpreter_follows_the_onnx_equations(peephole):
    nd = 2
    gates, r, h0, c0 = rand(SEQ, BATCH, nd, 4 * HID), rand(nd, 4 * HID, HID), \
        rand(nd, BATCH, HID), rand(nd, BATCH, HID)
    p = rand(nd, 3 * HID) if peephole else None
    args = [gates, np.ascontiguousarray(r.transpose(0, 2, 1)), h0, c0] + \
        ([p] if peephole else [])
    got = _run(lambda *a: op.nn.lstm_sequence(*a[:4], a[4] if peephole else None,
                                              "bidirectional"), *args)
    for d in range(nd):
        want = onnx_lstm(gates[:, :, d], r[d], h0[d], c0[d], None if p is None else p[d],
                         d == 1, None)
        np.testing.assert_allclose(got[0][:, d], want[0], rtol=1e-5, atol=1e-6)
        for k in (1, 2):
            np.testing.assert_allclose(got[k][d], want[k], rtol=1e-5, atol=1e-6)
