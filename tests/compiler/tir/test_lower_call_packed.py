"""lower_call_packed (Buffer arguments -> tir.make_dltensor) and storage_rewrite's treatment of
buffers handed whole to a call: the IR before and the IR expected after."""
from compiler.build import host_passes
from compiler.ir import IRModule
from compiler.ir.dtype import handle, int32
from compiler.ir.structural_equal import assert_structural_equal
from compiler.target import Target
from compiler.tir import (
    Allocate,
    BufferStore,
    Call,
    Evaluate,
    For,
    ForKind,
    PrimFunc,
    StringImm,
    Var,
    call_packed,
    const,
    decl_buffer,
    post_order_visit,
    seq,
)
from compiler.tir.transform.lower_call_packed import lower_call_packed
from compiler.tir.transform.make_packed_api import make_packed_api
from compiler.tir.transform.storage_rewrite import storage_rewrite


def _mod(bufs, body, scalars=()):
    params = tuple(Var(b.name, handle) for b in bufs)
    func = PrimFunc(tuple(scalars) + params, body, tuple(zip(params, bufs)),
                    {"global_symbol": "f", "target": Target("c")})
    return IRModule({"f": func})


def _calls(func, op):
    found = []
    post_order_visit(func.body, lambda n: found.append(n) if isinstance(n, Call)
                     and n.op == op else None)
    return found


def test_call_packed_api_keeps_buffers_and_converts_scalars():
    A = decl_buffer((4,), "float32", "A")
    call = call_packed("f", A, 1, 2.5, "s")
    assert call.dtype == int32 and call.op == "tir.call_packed"
    assert call.args[0].value == "f" and call.args[1] is A
    assert [str(a.dtype) for a in call.args[2:]] == ["int32", "float32", "handle"]


def test_buffer_argument_becomes_make_dltensor_on_the_function_device():
    n = Var("n", int32)
    A = decl_buffer((n, 3), "float32", "A")
    packed = make_packed_api(_mod([A], Evaluate(call_packed("g", A, n)), scalars=[n]))
    after = lower_call_packed(packed)["f"]
    dev = after.attrs["tir.device_id"]
    (call,) = _calls(after, "tir.call_packed")
    expected = Call(int32, "tir.call_packed", (
        StringImm("g"),
        Call(handle, "tir.make_dltensor", (A.data, const(1), dev, const(2), const(32), const(1),
                                           n.astype("int64"), const(3, "int64"))),
        n))
    assert_structural_equal(call, expected, map_free_vars=True)


def test_bool_buffer_is_described_with_8_bits_and_device_id_0_without_tensor_args():
    T = decl_buffer((2,), "bool", "T")
    body = Allocate(T, seq(BufferStore(T, const(True), (const(0),)),
                           Evaluate(call_packed("g", T))))
    after = lower_call_packed(make_packed_api(_mod([], body)))["f"]
    (tensor,) = _calls(after, "tir.make_dltensor")
    assert [a.value for a in tensor.args[1:6]] == [1, 0, 6, 8, 1]


def test_buffers_passed_to_a_call_are_not_merged():
    A = decl_buffer((4,), "float32", "A")
    T1, T2 = decl_buffer((4,), "float32", "T1"), decl_buffer((4,), "float32", "T2")

    def copy(dst, src):
        i = Var("i")
        return For(i, const(0), const(4), ForKind.SERIAL, BufferStore(dst, src[i], (i,)))

    body = seq(copy(T1, A), Evaluate(call_packed("g", T1)), copy(T2, A), copy(A, T2))
    before = _mod([A], Allocate(T1, Allocate(T2, body)))
    assert storage_rewrite(before) is before  # T1 is seen whole by g: T2 may not reuse it


def test_host_passes_leave_no_buffer_in_calls():
    A = decl_buffer((4,), "float32", "A")
    mod = host_passes(_mod([A], Evaluate(call_packed("g", A))), Target("c"))
    (call,) = _calls(mod["f"], "tir.call_packed")
    assert call.args[1].op == "tir.make_dltensor"
