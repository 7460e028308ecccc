"""The compiler's errors are RuntimeErrors, as TVM's TVMError: `except RuntimeError` catches a
ScheduleError, a TargetError, ... and each keeps its own class."""
import pytest

from compiler import te
from compiler.ir import errors
from compiler.ir.errors import (
    BuildError,
    CompilerError,
    InternalError,
    IRError,
    ScheduleError,
    TargetError,
    UnsupportedOpError,
)
from compiler.target import Target


def test_hierarchy():
    assert issubclass(CompilerError, RuntimeError)
    for cls in (ScheduleError, TargetError, UnsupportedOpError, BuildError, IRError):
        assert issubclass(cls, CompilerError) and issubclass(cls, RuntimeError)
    assert issubclass(InternalError, RuntimeError)
    assert not issubclass(InternalError, CompilerError)
    assert errors.CompilerError is CompilerError


def test_except_runtime_error_catches_schedule_error():
    A = te.placeholder((8,), name="A")
    B = te.compute((8,), lambda i: A[i] + 1.0, name="B")
    C = te.compute((8,), lambda i: B[i] * 2.0, name="C")
    s = te.create_schedule(C.op)
    caught = None
    try:
        s[C].split(B.op.axis[0], factor=2)  # an axis of another stage
    except RuntimeError as err:
        caught = err
    assert isinstance(caught, ScheduleError)
    assert "stage 'C'" in str(caught)


def test_except_runtime_error_catches_target_error():
    caught = None
    try:
        Target("no-such-kind")
    except RuntimeError as err:
        caught = err
    assert isinstance(caught, TargetError)
    assert "no-such-kind" in str(caught)


def test_pytest_raises_runtime_error():
    with pytest.raises(RuntimeError, match="unknown option"):
        Target("llvm -no-such-option=1")
