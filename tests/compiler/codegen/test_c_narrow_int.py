"""C computes int8/int16 arithmetic in int: the printed expression wraps each +, -, * back to
its own type, so a comparison sees the wrapped value (as the interpreter and LLVM do)."""
import numpy as np

import compiler
import microruntime
from compiler import te


def test_narrow_int_sum_wraps_before_comparison(target):
    A = te.placeholder((3,), "int8", name="A")
    B = te.placeholder((3,), "int8", name="B")
    C = te.compute((3,), lambda i: te.select(A[i] + B[i] == te.const(-128, "int8"),
                                             te.const(1, "int8"), te.const(0, "int8")), name="C")
    mod = compiler.lower(te.create_schedule(C.op), [A, B, C], name="f")
    f = compiler.build(mod, target=target)["f"]
    a, b = np.array([127, 1, -128], "int8"), np.array([1, 1, 0], "int8")
    c = microruntime.nd.array(np.zeros(3, "int8"))
    f(microruntime.nd.array(a), microruntime.nd.array(b), c)
    np.testing.assert_array_equal(c.numpy(), [1, 0, 1])  # 127 + 1 wraps to -128
