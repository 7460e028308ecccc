"""lower_workspace: temporaries of at most 1 KiB stay on the stack; larger or dynamic ones become
TVMBackendAllocWorkspace/FreeWorkspace calls with an error check after each, a free-on-error
attribute around the body, and frees in LIFO order. The IR before and the IR expected after."""
import pytest

from compiler.ir import IRModule
from compiler.ir.dtype import DType
from compiler.ir.structural_equal import assert_structural_equal
from compiler.target import Target
from compiler.tir import (
    NE,
    Allocate,
    AttrStmt,
    BufferStore,
    Call,
    Cast,
    Evaluate,
    IfThenElse,
    IntImm,
    LetStmt,
    Mul,
    PrimFunc,
    SeqStmt,
    Var,
    decl_buffer,
)
from compiler.tir.transform.lower_workspace import MAX_STACK_BYTES, lower_workspace

I32, I64, HANDLE, BOOL = (DType.parse(t) for t in ("int32", "int64", "handle", "bool"))


def _i32(v):
    return IntImm(I32, v)


def _i64(v):
    return IntImm(I64, v)


def _packed(body, *scalars, device_id=None, calling_conv="packed"):
    attrs = {"global_symbol": "f", "target": Target("c"), "calling_conv": calling_conv,
             "tir.device_id": device_id}
    return IRModule({"f": PrimFunc(scalars, body, {}, attrs)})


def _touch(buf):
    """buf[0] = buf[0] (keeps the allocation used)."""
    zeros = tuple(_i32(0) for _ in buf.shape)
    return BufferStore(buf, buf[zeros], zeros)


def _throw():
    return Evaluate(Call(I32, "tir.throw_last_error", ()))


def _workspace(buf, nbytes, dev, body):
    """What lower_workspace makes of Allocate(buf, body) (its docstring, spelt out)."""
    dtype = buf.dtype
    alloc = Call(HANDLE, "tir.alloc_workspace",
                 (_i32(1), dev, nbytes, _i32(dtype.code), _i32(dtype.bits)))
    free = Call(I32, "tir.free_workspace", (_i32(1), dev, buf.data))
    return LetStmt(buf.data, alloc, SeqStmt((
        IfThenElse(Call(BOOL, "tir.handle_is_null", (buf.data,)), _throw()),
        AttrStmt(buf.data, "tir.free_on_error", free, body),
        IfThenElse(NE(free, _i32(0)), _throw()),
    )))


@pytest.mark.parametrize("shape, dtype", [((256,), "float32"), ((16, 16), "float32"),
                                          ((1024,), "int8"), ((64,), "float32x4")])
def test_constant_size_up_to_1024_bytes_stays_on_the_stack(shape, dtype):
    T = decl_buffer(shape, dtype, "T")
    mod = _packed(Allocate(T, _touch(T)))
    assert MAX_STACK_BYTES == 1024
    assert lower_workspace(mod) is mod


def test_constant_size_over_1024_bytes_becomes_a_workspace():
    T = decl_buffer((257,), "float32", "T")   # 1028 bytes
    dev = Var("dev_id")
    before = _packed(Allocate(T, _touch(T)), device_id=dev)
    after = lower_workspace(before)
    nbytes = Mul(_i64(4), _i64(257))
    expected = _packed(_workspace(T, nbytes, dev, _touch(T)), device_id=dev)
    assert_structural_equal(after["f"], expected["f"])
    assert lower_workspace(after) is after


def test_dynamic_size_becomes_a_workspace_sized_in_int64():
    n, m = Var("n"), Var("m")
    T = decl_buffer((n, m), "float64", "T")
    before = _packed(Allocate(T, _touch(T)), n, m)
    after = lower_workspace(before)
    # No tensor argument: device id 0.
    nbytes = Mul(Mul(_i64(8), Cast(I64, n)), Cast(I64, m))
    expected = _packed(_workspace(T, nbytes, _i32(0), _touch(T)), n, m)
    assert_structural_equal(after["f"], expected["f"])


def test_nested_workspaces_free_innermost_first():
    n = Var("n")
    outer = decl_buffer((n,), "float32", "outer")
    inner = decl_buffer((2048,), "int8", "inner")
    small = decl_buffer((4,), "float32", "small")
    dev = Var("dev_id")
    body = SeqStmt((_touch(outer), _touch(inner), _touch(small)))
    before = _packed(Allocate(outer, Allocate(small, Allocate(inner, body))), n,
                     device_id=dev)
    after = lower_workspace(before)
    inner_ws = _workspace(inner, Mul(_i64(1), _i64(2048)), dev, body)
    expected = _packed(
        _workspace(outer, Mul(_i64(4), Cast(I64, n)), dev, Allocate(small, inner_ws)), n,
        device_id=dev)
    assert_structural_equal(after["f"], expected["f"])


@pytest.mark.parametrize("conv", ["default", "device_kernel"])
def test_functions_that_are_not_packed_are_left_alone(conv):
    T = decl_buffer((4096,), "float32", "T")
    mod = _packed(Allocate(T, _touch(T)), calling_conv=conv)
    assert lower_workspace(mod) is mod
