"""Vector loads whose lanes sit at constant offsets around one address (`tir.lanes`): the
vectorizer keeps such a loop as vector code, and the LLVM codegen loads one window and
shuffles it (no per-lane gather). Results match numpy on both host targets."""
import numpy as np
import pytest

import compiler
import microruntime
from compiler import te
from compiler.tir import Broadcast, Call, FloorDiv, Mul, Ramp, Var, const
from compiler.tir.lanes import lane_offsets

N = 4 * 7 * 16


def _arranged(g: int, r: int, lanes: int = 16):
    """out[i] = A[lane i's block + the r-th channel of its group of g]."""
    A = te.placeholder((N,), name="A")
    B = te.compute((N,), lambda i: A[(i // lanes) * lanes + (i % lanes) // g * g + r] * 2.0,
                   name="B")
    s = te.create_schedule(B.op)
    _, inner = s[B].split(B.op.axis[0], factor=lanes)
    s[B].vectorize(inner)
    idx = np.arange(N)
    return s, [A, B], lambda a: a[(idx // lanes) * lanes + (idx % lanes) // g * g + r] * 2


def _strided():
    """out[i] = A[2 i + 1] for the first half: lanes two apart (the aligned block of 32
    around them)."""
    A = te.placeholder((N,), name="A")
    B = te.compute((N // 2,), lambda i: A[2 * i + 1], name="B")
    s = te.create_schedule(B.op)
    _, inner = s[B].split(B.op.axis[0], factor=16)
    s[B].vectorize(inner)
    return s, [A, B], lambda a: a[1::2]


def _run(s, args, want, target):
    f = compiler.build(s, args, target, name="f")
    a = np.random.default_rng(0).random(N, dtype="float32")
    out = microruntime.nd.array(np.zeros([int(d) for d in args[1].shape], "float32"))
    f["f"](microruntime.nd.array(a), out)
    np.testing.assert_array_equal(out.numpy(), want(a))
    return f


@pytest.mark.parametrize("g,r", [(2, 1), (4, 0), (8, 7)])
def test_group_arrangement_is_a_load_and_a_shuffle(g, r):
    s, args, want = _arranged(g, r)
    assert "for " not in str(compiler.lower(s, args, simple_mode=True)).split("\n", 2)[2]
    ll = _run(s, args, want, "llvm").get_source("ll")
    # a gather would take each lane's index out of a <16 x i32>
    assert "shufflevector <16 x float>" in ll and "extractelement <16 x i32>" not in ll
    _run(s, args, want, "c")


def test_strided_lanes_load_one_window():
    s, args, want = _strided()
    ll = _run(s, args, want, "llvm").get_source("ll")
    assert "shufflevector <32 x float>" in ll and "extractelement <16 x i32>" not in ll
    _run(s, args, want, "c")


def test_lane_offsets():
    i = Var("i", "int32")
    ramp = Ramp(const(0, "int32"), const(1, "int32"), 16)
    groups = Mul(FloorDiv(ramp, Broadcast(const(8, "int32"), 16)), Broadcast(const(8, "int32"), 16))
    scalar, offsets = lane_offsets(Broadcast(i * 16, 16) + groups)
    assert offsets == [0] * 8 + [8] * 8 and str(scalar) == str(i * 16)
    # lower_intrin's form of the same quotient
    shifted = Call(ramp.dtype, "tir.shift_right", (ramp, Broadcast(const(3, "int32"), 16)))
    assert lane_offsets(shifted)[1] == [0] * 8 + [1] * 8
    # a quotient of a value not known to be a multiple of the divisor is not constant per lane
    assert lane_offsets(FloorDiv(Ramp(i, const(1, "int32"), 16),
                                 Broadcast(const(8, "int32"), 16))) is None
