"""Helpers for te tests: lower a schedule and run it in the IR interpreter."""
import numpy as np
import pytest

from compiler import lower
from compiler.tir import interpreter


def _run(s, args, arrays, name="f", **kw):
    """Lower `s` with `args`, run it on `arrays` (outputs written in place), return the text."""
    mod = lower(s, args, name=name, **kw)
    interpreter.run(mod[name], *arrays)
    return str(mod)


@pytest.fixture
def run():
    return _run


@pytest.fixture
def rng():
    return np.random.default_rng(0)
