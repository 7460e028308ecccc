"""image.resize2d with method "cubic" against a float64 numpy reference of ONNX's Resize
(Keys' kernel with parameter A, edge taps clamped or, with exclude, dropped and the weights
renormalized), for each coordinate mode, up and down, on each host target."""
import numpy as np
import pytest

from compiler import te, topi


def _coord(o, n_in, n_out, mode):
    scale = n_out / n_in
    if mode == "align_corners":
        return o * ((n_in - 1) / (n_out - 1) if n_out > 1 else 0.0)
    if mode == "asymmetric":
        return o / scale
    if mode == "tf_half_pixel_for_nn":
        return (o + 0.5) / scale
    if mode == "pytorch_half_pixel" and n_out == 1:
        return np.zeros_like(o)
    return (o + 0.5) / scale - 0.5


def _keys(d, a):
    d = abs(d)
    if d <= 1:
        return ((a + 2) * d - (a + 3)) * d * d + 1
    if d < 2:
        return ((a * d - 5 * a) * d + 8 * a) * d - 4 * a
    return 0.0


def _axis_matrix(n_in, n_out, mode, a, exclude):
    """m[o, i]: the weight of input i in output o along one axis."""
    m = np.zeros((n_out, n_in))
    for o in range(n_out):
        s = _coord(float(o), n_in, n_out, mode)
        base = int(np.floor(s))
        taps = [(base + k, _keys(s - (base + k), a)) for k in (-1, 0, 1, 2)]
        if exclude:
            taps = [(i, w) for i, w in taps if 0 <= i < n_in]
            total = sum(w for _, w in taps)
            taps = [(i, w / total) for i, w in taps]
        for i, w in taps:
            m[o, min(max(i, 0), n_in - 1)] += w
    return m


def cubic_ref(x, size, mode, a, exclude):
    my = _axis_matrix(x.shape[2], size[0], mode, a, exclude)
    mx = _axis_matrix(x.shape[3], size[1], mode, a, exclude)
    return np.einsum("yh,nchw,xw->ncyx", my, x.astype("float64"), mx)


@pytest.mark.parametrize("mode,size", [
    ("half_pixel", (9, 13)), ("half_pixel", (3, 4)), ("pytorch_half_pixel", (1, 7)),
    ("align_corners", (8, 11)), ("align_corners", (3, 2)), ("asymmetric", (10, 12)),
    ("tf_half_pixel_for_nn", (7, 9)),
])
@pytest.mark.parametrize("a,exclude", [(-0.75, 0), (-0.5, 1)])
def test_resize2d_cubic(run, rng, mode, size, a, exclude):
    x = te.placeholder((1, 2, 5, 6), name="x")
    arr = rng.random((1, 2, 5, 6), dtype="float32")
    y = topi.image.resize2d(x, None, size, method="cubic", coordinate_transformation_mode=mode,
                            bicubic_alpha=a, bicubic_exclude=exclude)
    (got,) = run(topi.x86.schedule_injective([y]), [x], [y], [arr])
    np.testing.assert_allclose(got, cubic_ref(arr, size, mode, a, exclude), rtol=1e-5,
                               atol=1e-5)
