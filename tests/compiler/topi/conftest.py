"""Helpers for topi tests: build a schedule for a target, run it on numpy arrays, and numpy
references for the convolution and pooling operators."""
import numpy as np
import pytest

import compiler
import microruntime


def build_run(s, args, arrays, target, name="f"):
    """Build `s` over `args` for `target` as ONE function, call it on `arrays` (inputs, then
    zero-filled outputs of the given shapes/dtypes as arrays) and return the outputs."""
    mod = compiler.build(s, args, target=target, name=name)
    nd = [microruntime.nd.array(a) for a in arrays]
    mod[name](*nd)
    n_in = len(arrays) - sum(1 for a in args if a.op.__class__.__name__ != "PlaceholderOp")
    return [x.numpy() for x in nd[n_in:]]


@pytest.fixture
def rng():
    return np.random.default_rng(0)


@pytest.fixture
def run(target):
    """run(s, inputs (tensors), outputs (tensors), input arrays) -> output arrays."""

    def _run(s, ins, outs, arrays):
        outs = outs if isinstance(outs, (list, tuple)) else [outs]
        zeros = [np.zeros([int(d) for d in o.shape], str(o.dtype)) for o in outs]
        return build_run(s, list(ins) + list(outs), list(arrays) + zeros, target)

    return _run


def pad_nchw(x, top, left, bottom, right, value=0.0):
    return np.pad(x, ((0, 0), (0, 0), (top, bottom), (left, right)), constant_values=value)


def conv2d_ref(x, w, stride=1, padding=(0, 0, 0, 0), dilation=1, groups=1):
    """NCHW x OIHW (I = C / groups) convolution in numpy."""
    sh, sw = (stride, stride) if isinstance(stride, int) else stride
    dh, dw = (dilation, dilation) if isinstance(dilation, int) else dilation
    xp = pad_nchw(x, *padding).astype("float64")
    n, c, h, wd = xp.shape
    f, cg, kh, kw = w.shape
    oh = (h - (kh - 1) * dh - 1) // sh + 1
    ow = (wd - (kw - 1) * dw - 1) // sw + 1
    out = np.zeros((n, f, oh, ow))
    fg = f // groups
    for g in range(groups):
        xs = xp[:, g * cg:(g + 1) * cg]
        ws = w[g * fg:(g + 1) * fg].astype("float64")
        for ry in range(kh):
            for rx in range(kw):
                patch = xs[:, :, ry * dh: ry * dh + (oh - 1) * sh + 1: sh,
                           rx * dw: rx * dw + (ow - 1) * sw + 1: sw]
                out[:, g * fg:(g + 1) * fg] += np.einsum("nchw,fc->nfhw", patch, ws[:, :, ry, rx])
    return out
