"""Every pass of the pipeline returns the very same IRModule object when it changes nothing (the
runner then prints "unchanged"): each is run on its own output, after `lower` and after the
host passes."""
import pytest

import compiler
from compiler import te
from compiler.build import host_passes
from compiler.target import Target
from compiler.tir import pipeline

PASSES = list({id(p): p for p in pipeline.lower_passes() + pipeline.host_passes()}.values())


def _lowered():
    """A schedule with a parallel loop, a vectorized loop and a large temporary."""
    n = te.var("n")
    A = te.placeholder((n, 512), name="A")
    B = te.compute((n, 512), lambda i, j: A[i, j] * 2.0, name="B")
    C = te.compute((n, 512), lambda i, j: B[i, j] + 1.0, name="C")
    s = te.create_schedule(C.op)
    s[C].parallel(C.op.axis[0])
    _, inner = s[C].split(C.op.axis[1], factor=4)
    s[C].vectorize(inner)
    return compiler.lower(s, [A, C], name="f")


@pytest.mark.parametrize("p", PASSES, ids=[p.__name__ for p in PASSES])
@pytest.mark.parametrize("form", ["lowered", "packed"])
def test_pass_returns_same_module_when_unchanged(p, form):
    """`p` applied to its own output (a module it has nothing left to do on) returns it."""
    mod = _lowered()
    if form == "packed":
        mod = host_passes(mod, Target("c"))
    once = p(mod)
    assert p(once) is once
