"""Buffers at a non-zero elem_offset: element i of a flattened buffer is data[elem_offset + i].

storage_flatten folds constant and symbolic offsets into the index (IR before and after, and
the interpreter against numpy); make_packed_api binds a symbolic elem_offset from a DLTensor's
byte_offset (byte_offset / itemsize, a multiple of offset_factor) and requires byte_offset 0 of
a default buffer; built for "c" and "llvm", kernels read and write tensor views whose
byte_offset is not 0, passed as raw DLTensor* and as Tensor objects."""
import numpy as np
import pytest

import compiler
import microruntime
from compiler import te
from compiler.arith import simplify
from compiler.ir import IRModule
from compiler.ir.dtype import DType
from compiler.ir.structural_equal import assert_structural_equal
from compiler.target import Target
from compiler.tir import (
    EQ,
    AssertStmt,
    BufferLoad,
    BufferStore,
    Call,
    FloorMod,
    For,
    ForKind,
    IntImm,
    LetStmt,
    PrimFunc,
    StringImm,
    Var,
    decl_buffer,
    interpreter,
    post_order_visit,
)
from compiler.tir.transform.make_packed_api import make_packed_api
from compiler.tir.transform.storage_flatten import storage_flatten
from microruntime._loader import ffi, lib
from microruntime.base import check_call
from microruntime.ndarray import NDArray, NDArrayView

I32, I64 = DType.parse("int32"), DType.parse("int64")


def _loops(shape, body_fn):
    """for i in range(shape[0]): for j in range(shape[1]): body_fn(i, j)"""
    i, j = Var("i"), Var("j")
    return i, j, For(i, IntImm(I32, 0), IntImm(I32, shape[0]), ForKind.SERIAL,
                     For(j, IntImm(I32, 0), IntImm(I32, shape[1]), ForKind.SERIAL,
                         body_fn(i, j)))


def _mod(params, body):
    return IRModule({"f": PrimFunc(tuple(params), body, {}, {"global_symbol": "f"})})


def _run(mod, *args):
    args = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    (func,) = mod.functions.values()
    interpreter.run(func, *args)
    return args


# ---- storage_flatten --------------------------------------------------------------------------
def test_flatten_folds_a_constant_elem_offset_into_the_index():
    # B[i, j] = V[i, j] * 2 where V is a 2x3 view at element 5 of the flat argument A.
    A, B = decl_buffer((24,), "float32", "A"), decl_buffer((2, 3), "float32", "B")
    V = decl_buffer((2, 3), "float32", "V", data=A.data, elem_offset=5)
    i, j, body = _loops((2, 3), lambda i, j: BufferStore(B, V[i, j] * 2.0, (i, j)))
    before = _mod([A, B], body)
    after = storage_flatten(before)

    flat_v = decl_buffer((6,), "float32", "V", data=A.data)
    flat_b = decl_buffer((6,), "float32", "B", data=B.data)
    expected = For(i, IntImm(I32, 0), IntImm(I32, 2), ForKind.SERIAL,
                   For(j, IntImm(I32, 0), IntImm(I32, 3), ForKind.SERIAL,
                       BufferStore(flat_b, flat_v[5 + i * 3 + j] * 2.0, (i * 3 + j,))))
    assert_structural_equal(after["f"].body, expected, map_free_vars=True)
    assert storage_flatten(after) is after

    a = np.arange(24, dtype="float32")
    want = a[5:11].reshape(2, 3) * 2
    for mod in (before, after):
        np.testing.assert_array_equal(_run(mod, a, np.zeros((2, 3), "float32"))[1], want)


def test_flatten_folds_a_symbolic_elem_offset_into_loads_and_stores():
    # V[i, j] = A[i, j] + 1 where V is a view of B at element `off` (a scalar argument).
    off = Var("off")
    A, B = decl_buffer((2, 3), "float32", "A"), decl_buffer((16,), "float32", "B")
    V = decl_buffer((2, 3), "float32", "V", data=B.data, elem_offset=off)
    i, j, body = _loops((2, 3), lambda i, j: BufferStore(V, A[i, j] + 1.0, (i, j)))
    before = _mod([off, A, B], body)
    after = storage_flatten(before)

    flat_v = decl_buffer((6,), "float32", "V", data=B.data)
    flat_a = decl_buffer((6,), "float32", "A", data=A.data)
    expected = For(i, IntImm(I32, 0), IntImm(I32, 2), ForKind.SERIAL,
                   For(j, IntImm(I32, 0), IntImm(I32, 3), ForKind.SERIAL,
                       BufferStore(flat_v, flat_a[i * 3 + j] + 1.0, (off + i * 3 + j,))))
    assert_structural_equal(after["f"].body, expected, map_free_vars=True)

    a = np.arange(6, dtype="float32").reshape(2, 3)
    for k in (0, 1, 7, 10):
        want = np.full(16, -1, "float32")
        want[k:k + 6] = a.reshape(-1) + 1
        for mod in (before, after):
            got = _run(mod, k, a, np.full(16, -1, "float32"))[2]
            np.testing.assert_array_equal(got, want)


def test_flatten_combines_elem_offset_and_strides():
    # A 2x3 window at element `off` of a buffer whose rows are 8 elements apart, columns 2.
    off = Var("off")
    A, B = decl_buffer((40,), "float32", "A"), decl_buffer((2, 3), "float32", "B")
    V = decl_buffer((2, 3), "float32", "V", data=A.data, strides=[8, 2], elem_offset=off)
    i, j, body = _loops((2, 3), lambda i, j: BufferStore(B, V[i, j], (i, j)))
    before = _mod([off, A, B], body)
    after = storage_flatten(before)
    (store,) = [after["f"].body.body.body]
    assert_structural_equal(store.value.indices[0], off + i * 8 + j * 2, map_free_vars=True)
    assert store.value.buffer.shape[0].value == 1 + 1 * 8 + 2 * 2  # span of the view

    a = np.arange(40, dtype="float32")
    for k in (0, 3, 27):
        want = np.lib.stride_tricks.as_strided(a[k:], (2, 3), (32, 8))
        for mod in (before, after):
            got = _run(mod, k, a, np.zeros((2, 3), "float32"))[2]
            np.testing.assert_array_equal(got, want)


def test_flatten_keeps_the_offset_argument_buffer_in_buffer_map():
    # An argument declared at a symbolic offset: its accesses carry the offset, its declared
    # buffer (what make_packed_api binds) stays as it is.
    off = Var("A_elem_offset")
    A = decl_buffer((4,), "float32", "A", elem_offset=off)
    B = decl_buffer((4,), "float32", "B")
    i = Var("i")
    body = For(i, IntImm(I32, 0), IntImm(I32, 4), ForKind.SERIAL,
               BufferStore(B, A[i], (i,)))
    after = storage_flatten(_mod([A, B], body))
    f = after["f"]
    assert f.buffer_map[0][1] is A and f.buffer_map[1][1] is B
    load = f.body.body.value
    assert load.buffer is not A and load.buffer.data is A.data
    assert_structural_equal(load.indices[0], off + i, map_free_vars=True)
    assert f.body.body.buffer is B  # flat at offset 0: kept as it is
    a = np.arange(4, dtype="float32")  # the interpreter binds the offset of an array to 0
    np.testing.assert_array_equal(_run(after, a, np.zeros(4, "float32"))[1], a)


def test_lower_with_an_offset_factor_bind():
    A = te.placeholder((4, 8), name="A")
    B = te.compute((4, 8), lambda i, j: A[i, j] * 2.0, name="B")
    s = te.create_schedule(B.op)
    a_buf = decl_buffer((4, 8), "float32", "A", offset_factor=4)
    assert isinstance(a_buf.elem_offset, Var) and a_buf.elem_offset.name == "A_elem_offset"
    assert a_buf.offset_factor == 4
    mod = compiler.lower(s, [A, B], binds={A: a_buf})
    f = mod["main"]
    assert f.buffer_map[0][1] is a_buf
    loads = []
    post_order_visit(f.body, lambda n: loads.append(n) if isinstance(n, BufferLoad) else None)
    (load,) = loads
    assert load.buffer.data is a_buf.data
    loops = []
    post_order_visit(f.body, lambda n: loops.append(n.loop_var) if isinstance(n, For) else None)
    j, i = loops  # post order: inner loop first
    diff = simplify(load.indices[0] - (a_buf.elem_offset + i * 8 + j))
    assert isinstance(diff, IntImm) and diff.value == 0, load.indices[0]
    a = np.arange(32, dtype="float32").reshape(4, 8)
    np.testing.assert_array_equal(_run(mod, a, np.zeros_like(a))[1], a * 2)


# ---- decl_buffer and make_packed_api ----------------------------------------------------------
def test_decl_buffer_offset_factor_makes_the_offset_symbolic():
    plain = decl_buffer((4,), "float32", "P")
    assert isinstance(plain.elem_offset, IntImm) and plain.elem_offset.value == 0
    assert plain.offset_factor == 1
    given = decl_buffer((4,), "float32", "G", elem_offset=2, offset_factor=2)
    assert given.elem_offset.value == 2 and given.offset_factor == 2
    one = decl_buffer((4,), "float32", "O", offset_factor=1)
    assert isinstance(one.elem_offset, Var) and one.elem_offset.dtype == I32


def _prologue(func):
    out, body = [], func.body
    while isinstance(body, (LetStmt, AssertStmt)):
        out.append(body)
        body = body.body
    return out


@pytest.mark.parametrize("factor, unit", [(1, 4), (4, 16)])
def test_packed_api_checks_the_offset_factor_then_binds_elem_offset(factor, unit):
    A = decl_buffer((4,), "float32", "A", offset_factor=factor)
    i = Var("i")
    body = For(i, IntImm(I32, 0), IntImm(I32, 4), ForKind.SERIAL,
               BufferStore(A, A[i] + 1.0, (i,)))
    func = make_packed_api(IRModule({"f": PrimFunc((A,), body, {}, {
        "global_symbol": "f", "target": Target("c")})}))["f"]
    steps = _prologue(func)
    handle = next(s.var for s in steps if isinstance(s, LetStmt) and s.var.name == "A.handle")
    byte_offset = Call(I64, "tir.dltensor_get", (handle, StringImm("byte_offset")))
    (check,) = [s for s in steps if isinstance(s, AssertStmt)
                and s.message[0].startswith("Mismatched A.byte_offset")]
    assert check.kind == "ValueError"
    assert_structural_equal(check.condition,
                            EQ(FloorMod(byte_offset, IntImm(I64, unit)), IntImm(I64, 0)),
                            map_free_vars=True)
    assert check.message[3] == f"a multiple of {unit}"
    (bind,) = [s for s in steps if isinstance(s, LetStmt) and s.var is A.elem_offset]
    assert steps.index(check) < steps.index(bind)


def test_packed_api_needs_no_multiple_check_for_bytes():
    A = decl_buffer((4,), "int8", "A", offset_factor=1)
    func = make_packed_api(IRModule({"f": PrimFunc((A,), BufferStore(A, A[0], (0,)), {}, {
        "global_symbol": "f"})}))["f"]
    steps = _prologue(func)
    assert not [s for s in steps if isinstance(s, AssertStmt)
                and s.message[0].startswith("Mismatched A.byte_offset")]
    assert [s for s in steps if isinstance(s, LetStmt) and s.var is A.elem_offset]


# ---- built and run through the microruntime ---------------------------------------------------
def _dltensor_at(base, shape, byte_offset):
    """A raw DLTensor* (type index 7) over `base`'s memory: same data pointer, `byte_offset`."""
    dl = ffi.new("DLTensor*")
    dims = ffi.new("int64_t[]", list(shape))
    dl.data, dl.device, dl.dtype = base._dl.data, base._dl.device, base._dl.dtype
    dl.ndim, dl.shape, dl.strides, dl.byte_offset = len(shape), dims, ffi.NULL, byte_offset
    return NDArrayView(dl, keep=(dims, base))


def _tensor_at(base, shape, byte_offset):
    """A Tensor object (type index 70) imported through DLPack with a non-zero byte_offset."""
    managed = ffi.new("DLManagedTensor*")
    dims = ffi.new("int64_t[]", list(shape))
    dl = managed.dl_tensor
    dl.data, dl.device, dl.dtype = base._dl.data, base._dl.device, base._dl.dtype
    dl.ndim, dl.shape, dl.strides, dl.byte_offset = len(shape), dims, ffi.NULL, byte_offset
    managed.manager_ctx, managed.deleter = ffi.NULL, ffi.NULL
    out = ffi.new("TVMFFIObject**")
    check_call(lib.mr_tensor_from_dlpack(managed, out))
    nd = NDArray(out[0], keep=(managed, dims, base))
    assert nd.byte_offset == byte_offset
    return nd


VIEWS = {"dltensor": _dltensor_at, "tensor": _tensor_at}


def _scale(target, binds_for, vectorize=False):
    """B = A * 2 + 1 on 4x8 float32, with the given binds, built for `target`."""
    A = te.placeholder((4, 8), name="A")
    B = te.compute((4, 8), lambda i, j: A[i, j] * 2.0 + 1.0, name="B")
    s = te.create_schedule(B.op)
    if vectorize:
        _, inner = s[B].split(B.op.axis[1], factor=4)
        s[B].vectorize(inner)
    return compiler.build(s, [A, B], target=target, name="scale",
                          binds=binds_for(A, B))["scale"]


@pytest.mark.parametrize("view", sorted(VIEWS))
@pytest.mark.parametrize("vectorize", [False, True])
def test_offset_buffers_read_and_write_views_with_byte_offset(target, view, vectorize):
    def binds(A, B):
        return {A: decl_buffer((4, 8), "float32", "A", offset_factor=4),
                B: decl_buffer((4, 8), "float32", "B", elem_offset=3)}

    f = _scale(target, binds, vectorize)
    make = VIEWS[view]
    src = np.arange(48, dtype="float32")
    base_a = microruntime.nd.array(src)
    for k in (0, 4, 12):   # elements, multiples of offset_factor
        base_b = microruntime.nd.array(np.full(40, -1, "float32"))
        f(make(base_a, (4, 8), 4 * k), make(base_b, (4, 8), 12))
        want = np.full(40, -1, "float32")
        want[3:35] = src[k:k + 32] * 2 + 1
        np.testing.assert_array_equal(base_b.numpy(), want)


def test_default_buffer_rejects_a_view_with_byte_offset(target):
    f = _scale(target, lambda A, B: {})
    base = microruntime.nd.array(np.zeros(40, "float32"))
    out = microruntime.nd.empty((4, 8), "float32")
    for make in VIEWS.values():
        with pytest.raises(ValueError, match=r"(?s)Mismatched A.byte_offset on argument #0 "
                                             r"when calling:\n  `scale\(A, B\)`,\n  expected 0, "
                                             r"but got 16"):
            f(make(base, (4, 8), 16), out)
    f(_dltensor_at(base, (4, 8), 0), out)  # the same view at offset 0 is accepted


def test_offset_factor_rejects_a_byte_offset_between_multiples(target):
    def binds(A, B):
        return {A: decl_buffer((4, 8), "float32", "A", offset_factor=4)}

    f = _scale(target, binds)
    base = microruntime.nd.array(np.zeros(40, "float32"))
    out = microruntime.nd.empty((4, 8), "float32")
    for byte_offset in (4, 18):
        with pytest.raises(ValueError, match=r"(?s)Mismatched A.byte_offset on argument #0.*"
                                             rf"expected a multiple of 16, but got {byte_offset}"):
            f(_dltensor_at(base, (4, 8), byte_offset), out)


def test_constant_elem_offset_requires_its_byte_offset(target):
    def binds(A, B):
        return {B: decl_buffer((4, 8), "float32", "B", elem_offset=3)}

    f = _scale(target, binds)
    a = microruntime.nd.array(np.zeros((4, 8), "float32"))
    with pytest.raises(ValueError, match=r"(?s)Mismatched B.byte_offset on argument #1.*"
                                         r"expected 12, but got 0"):
        f(a, microruntime.nd.empty((4, 8), "float32"))


def test_elem_offset_given_by_a_scalar_argument(target):
    off = te.var("off")
    A = te.placeholder((6,), name="A")
    B = te.compute((6,), lambda i: A[i] + 10.0, name="B")
    s = te.create_schedule(B.op)
    a_buf = decl_buffer((6,), "float32", "A", elem_offset=off)
    f = compiler.build(s, [off, A, B], target=target, name="shift",
                       binds={A: a_buf})["shift"]
    src = np.arange(16, dtype="float32")
    base = microruntime.nd.array(src)
    out = microruntime.nd.empty((6,), "float32")
    f(5, _dltensor_at(base, (6,), 20), out)
    np.testing.assert_array_equal(out.numpy(), src[5:11] + 10)
    with pytest.raises(ValueError, match=r"(?s)Mismatched A.byte_offset on argument #1.*"
                                         r"but got 16"):
        f(5, _dltensor_at(base, (6,), 16), out)
