"""Programs that must fail: each asserts the error type and a phrase naming stage and axis."""
import pytest

from compiler import te


@pytest.fixture
def ew():
    A = te.placeholder((8, 8), name="A")
    B = te.compute((8, 8), lambda i, j: A[i, j] + 1.0, name="B")
    return A, B, te.create_schedule(B.op)
