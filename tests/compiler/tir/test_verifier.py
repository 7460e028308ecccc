"""The verifier catches each class of defect, naming the function and the problem."""
import pytest

from compiler.ir import IRModule
from compiler.ir.errors import InternalError
from compiler.tir import (
    Add,
    And,
    BufferStore,
    Call,
    Evaluate,
    For,
    ForKind,
    IfThenElse,
    LetStmt,
    PrimFunc,
    Ramp,
    Select,
    Var,
    const,
    decl_buffer,
    verify,
)

n = Var("n")
A = decl_buffer((n,), "float32", "A")
A2 = decl_buffer((n, n), "float32", "A2")


def func(body, bufs=(A,)):
    return PrimFunc(tuple(b.data for b in bufs), body, tuple((b.data, b) for b in bufs),
                    {"global_symbol": "kernel"})


def loop(body_fn):
    i = Var("i")
    return For(i, const(0), n, ForKind.SERIAL, body_fn(i))


def test_well_formed_function_passes():
    f = func(loop(lambda i: BufferStore(A, A[i] + 1.0, (i,))))
    assert verify(f) is None
    assert verify(IRModule({"kernel": f})) is None


def bad(body, phrase, bufs=(A,)):
    with pytest.raises(InternalError) as info:
        verify(func(body, bufs))
    assert "'kernel'" in str(info.value) and phrase in str(info.value), str(info.value)


def test_undefined_var():
    j = Var("j")
    bad(loop(lambda i: BufferStore(A, const(1.0), (j,))), "variable 'j' is used but not defined")


def test_loop_var_out_of_scope():
    i = Var("i")
    body = For(i, const(0), n, ForKind.SERIAL, Evaluate(const(0)))
    bad(IfThenElse(const(True), body, BufferStore(A, const(1.0), (i,))), "'i' is used")


def test_operand_dtypes_differ():
    bad(loop(lambda i: BufferStore(A, const(1.0), (Add(i, const(1, "int64")),))),
        "different dtypes int32 and int64")


def test_condition_not_bool():
    bad(IfThenElse(n, Evaluate(const(0))), "condition of dtype int32")
    bad(loop(lambda i: BufferStore(A, Select(i, const(1.0), const(2.0)), (i,))),
        "select condition")
    bad(loop(lambda i: Evaluate(And(i, i))), "non-boolean")


def test_index_count():
    bad(loop(lambda i: BufferStore(A2, const(1.0), (i, i, i))), "3 indices into the 2-d",
        bufs=(A2,))
    # one index into an N-d buffer is fine (flattened)
    verify(func(loop(lambda i: BufferStore(A2, const(1.0), (i,))), (A2,)))


def test_unknown_call():
    bad(Evaluate(Call(const(0).dtype, "tir.no_such_op", ())), "unknown intrinsic 'tir.no_such_op'")
    verify(func(Evaluate(Call(const(0).dtype, "extern.my_func", ()))))
    verify(func(Evaluate(Call(const(0).dtype, "extern:my_func", ()))))
    bad(Evaluate(Call(const(0.0).dtype, "tir.exp", ())), "takes 1 arguments")


def test_vector_lanes():
    bad(loop(lambda i: BufferStore(A, const(1.0), (Ramp(i, const(1), 4),))),
        "store of a float32 value")
    verify(func(loop(lambda i: BufferStore(A, A[Ramp(i, const(1), 4)], (Ramp(i, const(1), 4),)))))


def test_unallocated_buffer():
    B = decl_buffer((4,), "float32", "B")
    bad(BufferStore(B, const(1.0), (const(0),)), "buffer 'B' is accessed")


def test_let_dtype():
    bad(LetStmt(Var("t", "int64"), n, Evaluate(const(0))), "let binds int64")
