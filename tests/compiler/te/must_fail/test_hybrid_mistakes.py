"""Hybrid scripts and hybrid schedules that must fail, each with the error naming what is
wrong."""
# The scripts' own names (output_tensor, const_range, ...) are bound while they run.
# ruff: noqa: F821
import numpy as np
import pytest

from compiler import lower, te
from compiler.ir.errors import HybridScriptError, ScheduleError

A = te.placeholder((8,), name="A")


def test_an_undeclared_name():
    @te.hybrid.script
    def f(a):
        b = output_tensor((8,), "float32")
        for i in range(8):
            b[i] = a[i] + missing
        return b

    with pytest.raises(HybridScriptError, match=r"'missing' is used before it is assigned"):
        f(A)


def test_a_script_without_return():
    @te.hybrid.script
    def f(a):
        b = output_tensor((8,), "float32")
        for i in range(8):
            b[i] = a[i]

    with pytest.raises(HybridScriptError, match=r"f has no return statement"):
        f(A)


def test_returning_what_is_not_an_output():
    @te.hybrid.script
    def f(a):
        b = output_tensor((8,), "float32")
        t = allocate((8,), "float32")
        for i in range(8):
            t[i] = a[i]
            b[i] = t[i]
        return t

    with pytest.raises(HybridScriptError, match=r"'t' is returned but is not an output_tensor"):
        f(A)


def test_assigning_a_loop_variable():
    @te.hybrid.script
    def f(a):
        b = output_tensor((8,), "float32")
        for i in range(8):
            i = 2
            b[i] = a[i]
        return b

    with pytest.raises(HybridScriptError, match=r"the loop variable 'i' cannot be assigned"):
        f(A)


def test_calling_an_unknown_function():
    def helper(x):
        return x

    @te.hybrid.script
    def f(a):
        b = output_tensor((8,), "float32")
        for i in range(8):
            b[i] = helper(a[i])
        return b

    with pytest.raises(HybridScriptError,
                       match=r"'helper' is neither a hybrid intrinsic nor a hybrid script"):
        f(A)


def test_const_range_of_a_variable_extent():
    n = te.var("n")

    @te.hybrid.script
    def f(a, n):
        b = output_tensor((8,), "float32")
        for i in const_range(n):
            b[i] = a[i]
        return b

    with pytest.raises(HybridScriptError, match=r"const_range needs constant bounds"):
        f(A, n)


def test_indexing_with_too_few_indices():
    M = te.placeholder((4, 4), name="M")

    @te.hybrid.script
    def f(m):
        b = output_tensor((4,), "float32")
        for i in range(4):
            b[i] = m[i]
        return b

    with pytest.raises(HybridScriptError, match=r"tensor 'M' has 2 dimensions but is indexed "
                                                r"with 1 \(line"):
        f(M)


def test_tensors_mixed_with_numpy_arrays():
    @te.hybrid.script
    def f(a, b):
        c = output_tensor((8,), "float32")
        for i in range(8):
            c[i] = a[i] + b[i]
        return c

    with pytest.raises(HybridScriptError, match=r"called with tensors and with"):
        f(A, np.zeros(8, "float32"))


def test_capturing_a_value_that_is_no_constant():
    table = {"k": 1}

    @te.hybrid.script
    def f(a):
        b = output_tensor((8,), "float32")
        for i in range(8):
            b[i] = a[i] + table
        return b

    with pytest.raises(HybridScriptError, match=r"'table' is captured .* as a dict"):
        f(A)


@te.hybrid.script
def two_nests(a):
    b = output_tensor((8, 8), "float32")
    for i in range(8):
        b[i, 0] = a[i]
        for j in range(8):
            b[i, j] = a[j]
    return b


def test_hybrid_stage_refuses_compute_at():
    b = two_nests(A)
    c = te.compute((8, 8), lambda i, j: b[i, j] * 2.0, name="c")
    s = te.create_schedule(c.op)
    with pytest.raises(ScheduleError, match=r"compute_at on stage 'two_nests': a hybrid stage"):
        s[b].compute_at(s[c], c.op.axis[0])


def test_fusing_loops_that_are_not_perfectly_nested():
    b = two_nests(A)
    s = te.create_schedule(b.op)
    i, j = b.op.axis
    s[b].fuse(i, j)
    with pytest.raises(ScheduleError, match=r"fuse on hybrid stage 'two_nests': the loop of "
                                            r"axis 'j' is not the whole body"):
        lower(s, [A, b])


def test_reordering_loops_of_different_nests():
    b = two_nests(A)
    s = te.create_schedule(b.op)
    i, j = b.op.axis
    s[b].reorder(j, i)
    with pytest.raises(ScheduleError, match=r"reorder on hybrid stage 'two_nests': .* only "
                                            r"perfectly nested loops reorder"):
        lower(s, [A, b])
