"""dtypes read as plain strings, as in TVM: `A.dtype == "float32"`, `np.zeros(n, A.dtype)`."""
import copy
import pickle

import numpy as np

import microruntime as runtime
from compiler import te, tir
from compiler.ir.dtype import DType


def test_tensor_var_buffer_expr_dtypes_are_str():
    n = te.var("n")
    A = te.placeholder((n,), name="A")
    B = tir.decl_buffer((4,), "int8", "B")
    for d, name in ((A.dtype, "float32"), (n.dtype, "int32"), (B.dtype, "int8"),
                    ((A[0] + 1.0).dtype, "float32"), (tir.const(3).dtype, "int32")):
        assert isinstance(d, str) and d == name and name == d and str(d) == name
        assert type(str(d)) is str and f"{d}" == name and hash(d) == hash(name)
        assert {name: 1}[d] == 1 and {d: 1}[name] == 1
    assert n.dtype != "int64" and A.dtype.startswith("float")


def test_numpy_and_runtime_accept_dtype():
    A = te.placeholder((3,), name="A", dtype="int16")
    assert np.zeros(3, dtype=A.dtype).dtype == np.int16
    assert runtime.nd.empty((3,), A.dtype).numpy().dtype == np.int16


def test_dtype_keeps_fields_and_is_a_value():
    d = DType.parse("float16x4")
    assert (d.code, d.bits, d.lanes) == (2, 16, 4) and d == "float16x4"
    assert d.element_of() == "float16" and DType("int8") == DType(0, 8)
    assert DType.parse("float") == "float32" and repr(d) == "DType('float16x4')"
    assert pickle.loads(pickle.dumps(d)).lanes == 4 and copy.deepcopy(d) is d
    try:
        d.bits = 8
    except AttributeError:
        pass
    else:
        raise AssertionError("DType must be immutable")


def test_int_float_bool_of_constants():
    assert int(tir.const(7)) == 7 and float(tir.const(2.5)) == 2.5
    assert bool(tir.const(1)) and not bool(tir.const(0))
    assert int(tir.IntImm("int64", 5)) == 5 and float(tir.const(3)) == 3.0


def test_input_tensors_is_a_property():
    A = te.placeholder((4,), name="A")
    B = te.placeholder((4,), name="B")
    C = te.compute((4,), lambda i: A[i] + B[i] * A[i], name="C")
    assert C.op.input_tensors == [A, B] and A.op.input_tensors == []
