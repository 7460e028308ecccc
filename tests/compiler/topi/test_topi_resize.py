"""image.resize2d against numpy (rtol 1e-5): nearest and linear, coordinate modes
half_pixel, asymmetric, align_corners, up and down."""
import numpy as np
import pytest

from compiler import te, topi


def _coord(o, n_in, n_out, mode):
    if mode == "align_corners":
        return o * ((n_in - 1) / (n_out - 1) if n_out > 1 else 0.0)
    if mode == "asymmetric":
        return o * n_in / n_out
    return (o + 0.5) * n_in / n_out - 0.5


def resize_ref(x, size, method, mode):
    h, w = x.shape[2:]
    oh, ow = size
    ys = _coord(np.arange(oh, dtype="float64"), h, oh, mode)
    xs = _coord(np.arange(ow, dtype="float64"), w, ow, mode)
    if method == "nearest_neighbor":
        rnd = (lambda v: np.floor(v + 0.5)) if mode == "align_corners" else np.floor
        yi = np.clip(rnd(ys).astype(int), 0, h - 1)
        xi = np.clip(rnd(xs).astype(int), 0, w - 1)
        return x[:, :, yi][:, :, :, xi]
    y0, x0 = np.floor(ys).astype(int), np.floor(xs).astype(int)
    wy, wx = (ys - y0)[:, None], (xs - x0)[None, :]

    def px(yy, xx):
        return x[:, :, np.clip(yy, 0, h - 1)][:, :, :, np.clip(xx, 0, w - 1)]

    top = px(y0, x0) * (1 - wx) + px(y0, x0 + 1) * wx
    bot = px(y0 + 1, x0) * (1 - wx) + px(y0 + 1, x0 + 1) * wx
    return top * (1 - wy) + bot * wy


@pytest.mark.parametrize("method", ["nearest_neighbor", "linear"])
def test_resize2d(run, rng, method):
    x = te.placeholder((1, 2, 5, 6), name="x")
    a = rng.random((1, 2, 5, 6), dtype="float32")
    cases = [((9, 13), "half_pixel"), ((3, 4), "asymmetric"), ((8, 11), "align_corners")]
    outs = [topi.image.resize2d(x, None, size, method=method,
                                coordinate_transformation_mode=mode) for size, mode in cases]
    got = run(topi.x86.schedule_injective(outs), [x], outs, [a])
    for (size, mode), g in zip(cases, got):
        np.testing.assert_allclose(g, resize_ref(a, size, method, mode), rtol=1e-5, atol=1e-6,
                                   err_msg=mode)


@pytest.mark.parametrize("mode", ["half_pixel", "align_corners", "asymmetric",
                                  "pytorch_half_pixel"])
def test_separable_bilinear_equals_one_stage(run, rng, mode):
    # the rows stage (computed per plane by schedule_resize2d) gives the one-stage result: the
    # same products and sums in the same order (to rounding: a compiler may contract a product
    # and a sum into one FMA on one side and not the other); a producer is inlined into it
    x = te.placeholder((1, 3, 7, 5), name="x")
    a = rng.random((1, 3, 7, 5), dtype="float32")
    y = topi.nn.relu(x)
    size = (29, 12)
    one = topi.image.resize2d(y, None, size, coordinate_transformation_mode=mode)
    two = topi.image.resize2d(y, None, size, coordinate_transformation_mode=mode,
                              separable=True)
    assert any(t.op.tag == topi.image.resize.ROWS_TAG for t in two.op.input_tensors)
    want, = run(topi.x86.schedule_injective([one]), [x], [one], [a])
    got, = run(topi.x86.schedule_resize2d([two]), [x], [two], [a])
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(got, resize_ref(np.maximum(a, 0), size, "linear", mode),
                               rtol=1e-5, atol=1e-6)
    # with an output in another layout (the rows stage inlined): the same values, to rounding
    transposed = topi.transpose(two, (0, 2, 3, 1))
    got, = run(topi.x86.schedule_resize2d([transposed]), [x], [transposed], [a])
    np.testing.assert_allclose(got.transpose(0, 3, 1, 2), want, rtol=1e-6, atol=1e-7)


def test_separable_only_when_taller():
    x = te.placeholder((1, 2, 8, 8), name="x")
    down = topi.image.resize2d(x, None, (4, 16), separable=True)
    assert all(t.op.tag != topi.image.resize.ROWS_TAG for t in down.op.input_tensors)
