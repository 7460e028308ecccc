import pytest

from compiler import lower, te, tir
from compiler.ir.errors import IRError, ScheduleError


def _extern(inputs, name="E"):
    return te.extern(inputs[0].shape, inputs, lambda ins, outs: tir.call_packed(
        "f", *ins, *outs), name=name)


def test_extern_input_inlined():
    A = te.placeholder((8,), name="A")
    T = te.compute((8,), lambda i: A[i] * 2.0, name="T")
    E = _extern([T])
    s = te.create_schedule(E.op)
    s[T].compute_inline()
    with pytest.raises(ScheduleError, match=r"stage 'T' is inlined, but the extern stage 'E'"):
        lower(s, [A, E])


def test_compute_at_of_an_extern_stage():
    A = te.placeholder((8,), name="A")
    E = _extern([A])
    B = te.compute((8,), lambda i: E[i] + 1.0, name="B")
    s = te.create_schedule(B.op)
    with pytest.raises(ScheduleError, match=r"compute_at on stage 'E': an extern stage"):
        s[E].compute_at(s[B], B.op.axis[0])
    with pytest.raises(ScheduleError, match=r"compute_inline on stage 'E': an extern stage"):
        s[E].compute_inline()


def test_extern_without_dtype_or_inputs():
    with pytest.raises(IRError, match=r"extern E: give dtype="):
        te.extern((4,), [], lambda ins, outs: tir.call_packed("f", *outs), name="E")


def test_extern_fcompute_returns_nothing():
    A = te.placeholder((4,), name="A")
    with pytest.raises(IRError, match=r"extern E: fcompute must return a statement or an "
                                      "expression, got NoneType"):
        te.extern((4,), [A], lambda ins, outs: None, name="E")
