"""The IR interpreter: bounds checks, vectors, C integer semantics, strided arguments."""
import numpy as np
import pytest

from compiler.ir import IRModule
from compiler.ir.dtype import handle
from compiler.tir import BufferStore, For, ForKind, PrimFunc, Ramp, Var, decl_buffer, interpreter
from compiler.tir import expr as E


def _f(bufs, body, scalars=()):
    params = tuple(Var(b.name, handle) for b in bufs)
    return PrimFunc(params + tuple(scalars), body, tuple(zip(params, bufs)), {})


def test_out_of_bounds_access_raises():
    A = decl_buffer((4,), "float32", "A")
    i = Var("i")
    f = _f([A], For(i, E.const(0), E.const(5), ForKind.SERIAL, BufferStore(A, E.const(0.0), (i,))))
    with pytest.raises(IndexError, match="'A'"):
        interpreter.run(f, np.zeros(4, "float32"))


def test_vector_load_store():
    A, B = decl_buffer((8,), "int32", "A"), decl_buffer((8,), "int32", "B")
    r = Ramp(E.const(0), E.const(2), 4)
    f = _f([A, B], BufferStore(B, A[r] + E.Broadcast(E.const(1), 4), (Ramp(E.const(1),
                                                                         E.const(2), 4),)))
    a, b = np.arange(8, dtype="int32"), np.zeros(8, "int32")
    interpreter.run(f, a, b)
    np.testing.assert_array_equal(b[1::2], a[0::2] + 1)


def test_truncating_and_floor_division():
    A = decl_buffer((4,), "int32", "A")
    x = Var("x")
    body = BufferStore(A, E.Div(x, E.const(2)), (E.const(0),))
    body2 = BufferStore(A, E.FloorDiv(x, E.const(2)), (E.const(1),))
    body3 = BufferStore(A, E.Mod(x, E.const(2)), (E.const(2),))
    body4 = BufferStore(A, E.FloorMod(x, E.const(2)), (E.const(3),))
    from compiler.tir import seq
    f = _f([A], seq(body, body2, body3, body4), scalars=[x])
    a = np.zeros(4, "int32")
    interpreter.run(f, a, -7)
    np.testing.assert_array_equal(a, [-3, -4, -1, 1])


def test_symbolic_shape_binding_checks_consistency():
    n = Var("n")
    A, B = decl_buffer((n,), "float32", "A"), decl_buffer((n,), "float32", "B")
    f = _f([A, B], BufferStore(B, A[E.const(0)], (E.const(0),)))
    with pytest.raises(Exception, match="n"):
        interpreter.run(f, np.zeros(3, "float32"), np.zeros(4, "float32"))
    _ = IRModule
