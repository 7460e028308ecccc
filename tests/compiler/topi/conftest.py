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
