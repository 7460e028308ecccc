"""topi.nn.gru_sequence / lstm_sequence (one kernel for a layer's time loop) against numpy on
the operator's tensors, on c and llvm: hidden sizes with and without a partial chunk of units,
batches, every direction, GRU's linear_before_reset, clip, LSTM peepholes; and the llvm
kernel's recurrent product is vector FMAs on registers."""
import numpy as np
import pytest

import compiler
from compiler import te, topi


def _sig(x):
    return 1 / (1 + np.exp(-x))


def _reference(kind, arrays, reverse, before_reset=0, clip=None):
    """Y, Y_h (and Y_c) in float64, the ONNX equations with weight [nd, h, G * h] = R^T."""
    gates, weight = arrays[0].astype(np.float64), arrays[1].astype(np.float64)
    seq, batch, nd, _ = gates.shape
    cl = (lambda v: v) if clip is None else (lambda v: np.clip(v, -clip, clip))
    if kind == "gru":
        bias, states, peep = arrays[2], [arrays[3]], None
    else:
        states, peep = [arrays[2], arrays[3]], (arrays[4] if len(arrays) > 4 else None)
    h = states[0].shape[-1]
    y = np.zeros((seq, nd, batch, h))
    finals = [np.zeros((nd, batch, h)) for _ in states]
    for d in range(nd):
        cur = [s[d].astype(np.float64) for s in states]
        w = weight[d]
        for t in (range(seq - 1, -1, -1) if reverse[d] else range(seq)):
            x = gates[t, :, d]
            if kind == "gru":
                (hp,) = cur
                b = bias[d]
                z = _sig(cl(x[:, :h] + hp @ w[:, :h] + b[:h]))
                r = _sig(cl(x[:, h:2 * h] + hp @ w[:, h:2 * h] + b[h:2 * h]))
                rec = r * (hp @ w[:, 2 * h:] + b[2 * h:]) if before_reset else \
                    (r * hp) @ w[:, 2 * h:] + b[2 * h:]
                cand = np.tanh(cl(x[:, 2 * h:] + rec))
                cur = [(1 - z) * cand + z * hp]
            else:
                hp, cp = cur
                a = x + hp @ w
                i, o, f, c = (a[:, k * h:(k + 1) * h] for k in range(4))
                if peep is not None:
                    i, f = i + peep[d, :h] * cp, f + peep[d, 2 * h:] * cp
                c = _sig(cl(f)) * cp + _sig(cl(i)) * np.tanh(cl(c))
                if peep is not None:
                    o = o + peep[d, h:2 * h] * c
                cur = [_sig(cl(o)) * np.tanh(c), c]
            y[t, d] = cur[0]
        for f, v in zip(finals, cur):
            f[d] = v
    return [y] + finals


def _tensors(kind, seq, batch, nd, h, peephole, rng):
    g = 3 if kind == "gru" else 4
    shapes = [(seq, batch, nd, g * h), (nd, h, g * h)]
    shapes += [(nd, g * h), (nd, batch, h)] if kind == "gru" else [(nd, batch, h)] * 2
    if peephole:
        shapes.append((nd, 3 * h))
    arrays = [rng.standard_normal(s).astype("float32") for s in shapes]
    arrays[1] *= 0.3
    return [te.placeholder(s, name=f"in{i}") for i, s in enumerate(shapes)], arrays


CASES = [  # kind, seq, batch, hidden, directions (reverse per direction), options
    ("gru", 5, 1, 64, [False, True], {"before_reset": 1}),
    ("gru", 4, 3, 13, [True], {"before_reset": 0, "clip": 0.8}),
    ("gru", 3, 2, 40, [False, True], {"before_reset": 0}),
    ("lstm", 5, 1, 64, [False, True], {}),
    ("lstm", 4, 3, 13, [True], {"peephole": True, "clip": 0.9}),
    ("lstm", 3, 2, 40, [False], {"peephole": True}),
]


@pytest.mark.parametrize("kind,seq,batch,hidden,reverse,opts", CASES)
def test_sequence_kernel_matches_numpy(run, rng, kind, seq, batch, hidden, reverse, opts):
    ins, arrays = _tensors(kind, seq, batch, len(reverse), hidden,
                           opts.get("peephole", False), rng)
    clip = opts.get("clip")
    if kind == "gru":
        outs = topi.nn.gru_sequence(*ins, reverse, opts["before_reset"], clip)
    else:
        outs = topi.nn.lstm_sequence(*ins[:4], ins[4] if len(ins) > 4 else None, reverse,
                                     clip)
    got = run(topi.generic.default_schedule(outs), ins, outs, arrays)
    want = _reference(kind, arrays, reverse, opts.get("before_reset", 0), clip)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-5)


def test_recurrent_product_is_vector_fmas_on_registers(rng):
    ins, _ = _tensors("gru", 4, 1, 2, 64, False, rng)
    target = compiler.target.Target("llvm -mcpu=skylake-avx512")
    with target:
        outs = topi.nn.gru_sequence(*ins, [False, True], 1)
        mod = compiler.build(topi.generic.default_schedule(outs), ins + outs, target=target,
                             name="gru")
    asm = mod.get_source("asm")
    # register-held accumulators: FMAs whose destination is a register and whose weight
    # operand comes from memory
    fmas = [line for line in asm.splitlines() if "vfmadd231ps" in line and "(%" in line]
    assert len(fmas) >= 3 * 2, asm[:2000]
    assert all(line.rstrip().endswith(tuple(f"%zmm{i}" for i in range(32))) for line in fmas)
