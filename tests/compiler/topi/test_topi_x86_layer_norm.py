"""topi.x86.schedule_layer_norm: rows in parallel, the row sums in vector lanes (rfactor), the
row vectorized; a layer norm over axes that are not innermost falls back to schedule_reduce.
Checked against numpy on "c" and "llvm" (odd widths, several kept axes, no beta)."""
import numpy as np
import pytest

from compiler import te, topi
from compiler.target import Target


def _ref(a, g, b, axes, eps):
    mu, var = a.mean(axes, keepdims=True), a.var(axes, keepdims=True)
    out = (a - mu) / np.sqrt(var + eps) * g
    return out if b is None else out + b


@pytest.mark.parametrize("shape, axis, beta", [
    ((1, 64, 128), [2], True),      # a transformer's rows: vector sums of 8 lanes
    ((3, 5, 20), [2], True),        # 20 = 4 lanes per partial sum
    ((2, 7, 13), [2], False),       # prime width: no lane split, no beta
    ((4, 6, 8), [1], True),         # not the innermost axis: schedule_reduce
])
def test_layer_norm_schedule_matches_numpy(run, rng, shape, axis, beta):
    x = te.placeholder(shape, name="x")
    gshape = tuple(shape[a] for a in axis)
    g = te.placeholder(gshape, name="g")
    b = te.placeholder(gshape, name="b") if beta else None
    out = topi.nn.layer_norm(x, g, b, axis=axis, epsilon=1e-5)
    with Target("llvm"):
        s = topi.x86.schedule_layer_norm(out)
    a = rng.standard_normal(shape, dtype="float32") * 3 + 1
    ga = rng.random(gshape, dtype="float32") + 0.5
    ba = rng.random(gshape, dtype="float32") if beta else None
    ins, arrays = [x, g] + ([b] if beta else []), [a, ga] + ([ba] if beta else [])
    (got,) = run(s, ins, out, arrays)
    idx = [slice(None) if k in axis else None for k in range(len(shape))]
    want = _ref(a.astype("float64"), ga[tuple(idx)], ba[tuple(idx)] if beta else None,
                tuple(axis), 1e-5)
    np.testing.assert_allclose(got, want, rtol=2e-5, atol=2e-5)
