"""Every pass of the pipeline returns the very same IRModule object when it changes nothing (the
runner then prints "unchanged"): each is run on its own output, after `lower` and after the
host passes; and each pass of the pipeline, once it rewrote a module, returns its own output
unchanged."""
import pytest

import compiler
from compiler import te, tir
from compiler.build import host_passes
from compiler.ir import IRModule
from compiler.ir.dtype import float32
from compiler.target import Target
from compiler.te.schedule_ops import schedule_to_primfunc
from compiler.tir import pipeline
from compiler.tir.pipeline import run_passes

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


def _busy():
    """A function on which most passes have work: a sigmoid (lower_intrin), an unrolled and a
    vectorized loop, a call_packed on a buffer (lower_call_packed) that is a large dynamic
    temporary (lower_workspace), a parallel loop (lower_parallel), one function
    (annotate_entry), a split of the symbolic n marked for loop_partition, a read prefetched
    a row ahead (inject_prefetch); before storage_flatten."""
    n = te.var("n")
    A = te.placeholder((n, 512), name="A")
    B = te.compute((n, 512), lambda i, j: tir.Call(float32, "tir.sigmoid", (A[i, j],)),
                   name="B")
    C = te.extern((n, 512), [B], lambda ins, outs: tir.call_packed("g", ins[0], outs[0]),
                  name="C")
    D = te.compute((n, 512), lambda i, j: C[i, j] + 1.0, name="D")
    s = te.create_schedule(D.op)
    s[D].parallel(D.op.axis[0])
    s[D].vectorize(s[D].split(D.op.axis[1], factor=4)[1])
    s[D].prefetch(C, D.op.axis[0], 1)
    s[B].unroll(s[B].split(B.op.axis[1], factor=2)[1])
    s[B].pragma(s[B].split(B.op.axis[0], factor=4)[0], "loop_partition", 1)
    func = schedule_to_primfunc(s, [A, D], "f").with_attr("target", Target("c"))
    return IRModule({"f": func})


PIPELINE = pipeline.lower_passes() + pipeline.host_passes()
IDLE_ON_BUSY = {"storage_rewrite", "remove_no_op", "split_host_device", "inject_double_buffer",
                "lower_init_block", "convert_blocks_to_opaque", "lower_opaque_block",
                "lower_checked_index"}


@pytest.mark.parametrize("k", range(len(PIPELINE)),
                         ids=[f"{k}-{p.__name__}" for k, p in enumerate(PIPELINE)])
def test_pass_returns_its_own_output_after_rewriting(k):
    """After `p` rewrote a module, running `p` again on the result returns that very object."""
    mod = run_passes(_busy(), PIPELINE[:k])
    p = PIPELINE[k]
    once = p(mod)
    if p.__name__ in IDLE_ON_BUSY:
        assert once is mod
    else:
        assert once is not mod, f"{p.__name__} had nothing to do: the test lost its point"
    assert p(once) is once
