"""make_packed_api: the packed form of a one-tensor function written out in full (IR expected
after), then each kind of check and binding on its own: scalars, symbolic shapes, strides,
elem_offset / byte_offset, device ids; functions that are packed already are left alone."""
import pytest

from compiler.ir import IRModule
from compiler.ir.dtype import DType
from compiler.ir.structural_equal import assert_structural_equal
from compiler.target import Target
from compiler.tir import (
    EQ,
    And,
    AssertStmt,
    BufferLoad,
    BufferStore,
    Call,
    Cast,
    Evaluate,
    FloorDiv,
    FloorMod,
    For,
    ForKind,
    IntImm,
    LetStmt,
    Mul,
    Not,
    Or,
    PrimFunc,
    Return,
    Select,
    SeqStmt,
    StringImm,
    Var,
    decl_buffer,
)
from compiler.tir.transform.make_packed_api import make_packed_api

I32, I64, F64, HANDLE, BOOL = (DType.parse(t)
                               for t in ("int32", "int64", "float64", "handle", "bool"))


def _i32(v):
    return IntImm(I32, v)


def _i64(v):
    return IntImm(I64, v)


def _mod(params, body, symbol="f", **attrs):
    attrs = {"global_symbol": symbol, "target": Target("c"), **attrs}
    return IRModule({symbol: PrimFunc(tuple(params), body, {}, attrs)})


def _get(h, field, dtype=I32):
    return Call(dtype, "tir.dltensor_get", (h, StringImm(field)))


def _mismatch(what, i, sig, expected, got):
    return (f"Mismatched {what} on argument #{i} when calling:\n  `", sig, "`,\n  expected ",
            *expected, ", but got ", *got)


def _chain(body):
    """The LetStmt/AssertStmt prologue of a packed body, outermost first, and what follows."""
    out = []
    while isinstance(body, (LetStmt, AssertStmt)):
        out.append(body)
        body = body.body
    return out, body


def _lets(func):
    return {s.var.name: s for s in _chain(func.body)[0] if isinstance(s, LetStmt)}


def _asserts(func):
    """AssertStmts by the subject of their message ("A.byte_offset", "type", ...)."""
    out = {}
    for s in _chain(func.body)[0]:
        if isinstance(s, AssertStmt):
            head = s.message[0]
            key = head.split(" on argument")[0].removeprefix("Mismatched ")
            out[key] = s
    return out


def test_one_tensor_argument_in_full():
    """A tensor of symbolic shape: every check written out."""
    n = Var("n", I32)
    A = decl_buffer((n,), "float32", "A")
    i = Var("i")
    body = For(i, _i32(0), _i32(4), ForKind.SERIAL, BufferStore(A, A[i] + 1.0, (i,)))
    after = make_packed_api(_mod([A], body))["f"]

    self_handle, args, num_args, result = (Var("self_handle", HANDLE), Var("args", HANDLE),
                                           Var("num_args", I32), Var("result", HANDLE))
    t, h, dev_id = Var("A.type_index", I32), Var("A.handle", HANDLE), Var("dev_id", I32)
    shape = decl_buffer((1,), "int64", "A.shape", data=Var("A.shape", HANDLE))
    strides = decl_buffer((1,), "int64", "A.strides", data=Var("A.strides", HANDLE))
    dim0, stride0 = BufferLoad(shape, (_i32(0),)), BufferLoad(strides, (_i32(0),))
    code, bits, lanes = _get(h, "dtype_code"), _get(h, "dtype_bits"), _get(h, "dtype_lanes")
    byte_offset, dev_type = _get(h, "byte_offset", I64), _get(h, "device_type")
    sig = "f(A)"

    def check(cond, kind, what, expected, got):
        return lambda rest: AssertStmt(cond, kind, _mismatch(what, 0, sig, expected, got), rest)

    def let(var, value):
        return lambda rest: LetStmt(var, value, rest)

    steps = [
        lambda rest: AssertStmt(EQ(num_args, _i32(1)), "TypeError", (
            "Expected 1 arguments when calling:\n  `", "f(A)", "`,\n  but got ", num_args), rest),
        let(t, Call(I32, "tir.any_type_index", (args, _i32(0)))),
        check(Or(EQ(t, _i32(7)), EQ(t, _i32(70))), "TypeError", "type", ["Tensor"],
              ["type index ", t]),
        let(h, Call(HANDLE, "tir.any_tensor", (args, _i32(0)))),
        check(EQ(_get(h, "ndim"), _i32(1)), "ValueError", "A.ndim", ["1"], [_get(h, "ndim")]),
        check(And(And(EQ(code, _i32(2)), EQ(bits, _i32(32))), EQ(lanes, _i32(1))), "TypeError",
              "A.dtype", ["float32"], [Call(HANDLE, "tir.dtype_name", (code, bits, lanes))]),
        let(shape.data, _get(h, "shape", HANDLE)),
        let(n, Cast(I32, dim0)),
        let(strides.data, _get(h, "strides", HANDLE)),
        check(Or(Or(Call(BOOL, "tir.handle_is_null", (strides.data,)), EQ(stride0, _i64(1))),
                 EQ(dim0, _i64(1))), "ValueError", "A.strides[0]",
              ["compact stride ", _i64(1)], [stride0]),
        check(EQ(byte_offset, _i64(0)), "ValueError", "A.byte_offset", ["0"], [byte_offset]),
        check(EQ(dev_type, _i32(1)), "ValueError", "A.device_type", ["cpu (1)"], [dev_type]),
        let(dev_id, _get(h, "device_id")),
        let(A.data, _get(h, "data", HANDLE)),
        lambda rest: AssertStmt(
            Or(Not(Call(BOOL, "tir.handle_is_null", (A.data,))), EQ(dim0, _i64(0))),
            "ValueError", ("A.data is NULL on argument #0 when calling:\n  `", "f(A)", "`"), rest),
    ]
    expected_body = SeqStmt((body, Return(_i32(0))))
    for step in reversed(steps):
        expected_body = step(expected_body)
    expected = PrimFunc((self_handle, args, num_args, result), expected_body, {}, {
        "global_symbol": "f", "target": Target("c"), "calling_conv": "packed",
        "tir.device_id": dev_id, "tir.arg_names": ("A",)})

    assert [p.name for p in after.params] == ["self_handle", "args", "num_args", "result"]
    assert after.buffer_map == ()
    assert after.attrs["tir.arg_names"] == ("A",)
    assert_structural_equal(after.body, expected.body, map_free_vars=True)
    assert_structural_equal(after, expected, map_free_vars=True)


def test_scalars_are_type_checked_and_converted():
    n, x, flag, p = Var("n", I32), Var("x", "float32"), Var("flag", BOOL), Var("p", HANDLE)
    after = make_packed_api(_mod([n, x, flag, p], Evaluate(_i32(0))))["f"]
    args = after.params[1]
    lets, asserts = _lets(after), _asserts(after)

    def t(name):
        return lets[f"{name}.type_index"].var

    def raw(op, i, dtype=I64):
        return Call(dtype, op, (args, _i32(i)))

    # int32: Int or Bool, cast from int64
    assert_structural_equal(lets["n"].value, Cast(I32, raw("tir.any_int64", 0)),
                            map_free_vars=True)
    # float32: Int, Bool or Float; Float read as float64, the others converted
    tx = t("x")
    assert_structural_equal(lets["x"].value, Cast(DType.parse("float32"), Select(
        EQ(tx, _i32(3)), raw("tir.any_float64", 1, F64), Cast(F64, raw("tir.any_int64", 1)))),
        map_free_vars=True)
    # bool: non-zero
    assert_structural_equal(lets["flag"].value,
                            EQ(Cast(I32, EQ(raw("tir.any_int64", 2), _i64(0))), _i32(0)),
                            map_free_vars=True)
    assert_structural_equal(lets["p"].value, raw("tir.any_handle", 3, HANDLE),
                            map_free_vars=True)
    # the type checks, in argument order, all TypeErrors
    type_checks = [s for s in _chain(after.body)[0]
                   if isinstance(s, AssertStmt) and s.message[0].startswith("Mismatched type")]
    assert [s.kind for s in type_checks] == ["TypeError"] * 4
    assert [s.message[3] for s in type_checks] == ["int32", "float", "bool", "a pointer"]
    assert "argument #3" in type_checks[3].message[0]
    tp = t("p")
    assert_structural_equal(type_checks[3].condition, Or(Or(Or(
        EQ(tp, _i32(0)), EQ(tp, _i32(4))), EQ(tp, _i32(7))), tp >= _i32(64)),
        map_free_vars=True)
    assert_structural_equal(type_checks[0].condition,
                            Or(EQ(t("n"), _i32(1)), EQ(t("n"), _i32(2))), map_free_vars=True)
    assert "tir.device_id" in after.attrs and after.attrs["tir.device_id"] is None
    assert "num_args" not in asserts


def test_symbolic_shape_binds_once_then_is_checked():
    n = Var("n", I32)
    A, B = decl_buffer((n, 3), "float32", "A"), decl_buffer((n,), "float32", "B")
    after = make_packed_api(_mod([A, B], Evaluate(_i32(0))))["f"]
    lets, asserts = _lets(after), _asserts(after)
    a_shape = lets["A.shape"].var
    # The first occurrence binds n from A.shape[0] ...
    assert lets["n"].var is n
    a_dim0 = lets["n"].value
    assert isinstance(a_dim0, Cast) and a_dim0.dtype == I32
    assert a_dim0.value.buffer.data is a_shape and a_dim0.value.indices[0].value == 0
    # ... its constant dimension is checked, and B.shape[0] is checked against n.
    assert "A.shape[0]" not in asserts and "A.shape[1]" in asserts
    b_check = asserts["B.shape[0]"]
    assert b_check.kind == "ValueError"
    b_dim0 = b_check.condition.b
    assert b_dim0.buffer.data is lets["B.shape"].var
    assert_structural_equal(b_check.condition, EQ(Cast(I64, n), b_dim0), map_free_vars=True)
    assert b_check.message[3:5] == ("n = ", n)
    # the order: A's binding comes before B's check
    chain = _chain(after.body)[0]
    assert chain.index(lets["n"]) < chain.index(b_check)


def test_scalar_used_as_a_shape_is_bound_first_and_checked_on_the_tensor():
    n = Var("n", I32)
    A = decl_buffer((n,), "float32", "A")
    after = make_packed_api(_mod([A, n], Evaluate(_i32(0))))["f"]   # tensor first in params
    lets, asserts = _lets(after), _asserts(after)
    assert_structural_equal(lets["n"].value, Cast(I32, Call(I64, "tir.any_int64", (
        after.params[1], _i32(1)))), map_free_vars=True)
    assert "A.shape[0]" in asserts


def test_symbolic_strides_bind_from_the_tensor_or_the_compact_value():
    s0 = Var("s0", I32)
    A = decl_buffer((5, 7), "float32", "A", strides=[s0, 1])
    after = make_packed_api(_mod([A], Evaluate(_i32(0))))["f"]
    lets, asserts = _lets(after), _asserts(after)
    strides, shape = lets["A.strides"].var, lets["A.shape"].var
    value = lets["s0"].value
    assert isinstance(value, Cast) and value.dtype == I32
    call = value.value
    assert call.op == "tir.if_then_else"
    assert_structural_equal(call.args[0], Call(BOOL, "tir.handle_is_null", (strides,)),
                            map_free_vars=True)
    # compact stride of dimension 0 is shape[1]
    assert call.args[1].buffer.data is shape and call.args[1].indices[0].value == 1
    assert call.args[2].buffer.data is strides and call.args[2].indices[0].value == 0
    # the constant inner stride is checked against the same expression
    inner = asserts["A.strides[1]"].condition
    assert isinstance(inner, EQ) and inner.a.dtype == I64 and inner.a.value == 1
    assert inner.b.op == "tir.if_then_else" and inner.b.args[2].indices[0].value == 1


def test_static_tensor_is_checked_by_one_table_call():
    """A tensor of static shape, compact, at a constant offset: every check in one call of
    tir.check_tensor_arg with the constants to compare (its helper raises the messages), whose
    AssertStmt has no message of its own; then the device id and data are bound."""
    A = decl_buffer((4, 6), "int8", "A", elem_offset=2)
    B = decl_buffer((3,), "bool", "B")
    after = make_packed_api(_mod([A, B], Evaluate(_i32(0)), symbol="g"))["g"]
    lets = _lets(after)
    checks = [s for s in _chain(after.body)[0]
              if isinstance(s, AssertStmt) and not s.message]
    assert len(checks) == 2 and all(c.kind == "" for c in checks)
    a, b = (c.condition for c in checks)
    assert a.op == b.op == "tir.check_tensor_arg" and a.dtype == BOOL
    assert a.args[0] is lets["A.type_index"].var and a.args[1] is lets["A.handle"].var
    assert [x.value for x in a.args[3:6]] == ["A", "g(A, B)", "cpu (1)"]
    # arg index, flags, dtype code / bits / lanes, device type, byte offset, shape
    assert [int(x.value) for x in a.args[6:]] == [0, 0, 0, 8, 1, 1, 2, 4, 6]
    dev = after.attrs["tir.device_id"]
    assert b.args[2] is dev and lets["dev_id"].value.args[0] is lets["A.handle"].var
    assert [int(x.value) for x in b.args[6:]] == [1, 1, 6, 8, 1, 1, 0, 3]   # bool: 8 bits
    chain = _chain(after.body)[0]
    assert chain.index(checks[0]) < chain.index(lets["dev_id"]) < chain.index(lets["A"])


def test_check_tensor_table_holds_the_shape_and_its_compact_strides():
    from compiler.tir.transform.make_packed_api import CHECK_HEADER, check_tensor_table
    A = decl_buffer((2, 3, 4), "float16", "A")
    after = make_packed_api(_mod([A], Evaluate(_i32(0))))["f"]
    (check,) = [s for s in _chain(after.body)[0] if isinstance(s, AssertStmt) and not s.message]
    table = check_tensor_table(check.condition)
    assert table[:CHECK_HEADER] == [0, 3, 0, 2 | 16 << 8 | 1 << 16, 1, 0]
    assert table[CHECK_HEADER:] == [2, 3, 4, 12, 4, 1]
    zero = decl_buffer((0, 5), "float32", "Z")     # empty: no data pointer needed (flag 2)
    (check,) = [s for s in _chain(make_packed_api(_mod([zero], Evaluate(_i32(0))))["f"].body)[0]
                if isinstance(s, AssertStmt) and not s.message]
    assert check_tensor_table(check.condition)[2] == 2


def test_default_buffer_requires_byte_offset_zero():
    A = decl_buffer((Var("n", I32),), "float32", "A")
    after = make_packed_api(_mod([A], Evaluate(_i32(0))))["f"]
    check, h = _asserts(after)["A.byte_offset"], _lets(after)["A.handle"].var
    assert check.kind == "ValueError"
    assert_structural_equal(check.condition, EQ(_get(h, "byte_offset", I64), _i64(0)),
                            map_free_vars=True)
    assert check.message[3] == "0"


def test_constant_elem_offset_requires_that_byte_offset():
    A = decl_buffer((Var("n", I32),), "float32", "A", elem_offset=3)
    check = _asserts(make_packed_api(_mod([A], Evaluate(_i32(0))))["f"])["A.byte_offset"]
    assert_structural_equal(check.condition.b, _i64(12))
    assert_structural_equal(check.message[3], _i64(12))


def test_symbolic_elem_offset_binds_byte_offset_over_itemsize():
    off = Var("A_elem_offset", I32)
    A = decl_buffer((4,), "float64", "A", elem_offset=off)
    after = make_packed_api(_mod([A], Evaluate(_i32(0))))["f"]
    lets, asserts = _lets(after), _asserts(after)
    h = lets["A.handle"].var
    assert lets["A_elem_offset"].var is off
    assert_structural_equal(lets["A_elem_offset"].value,
                            Cast(I32, FloorDiv(_get(h, "byte_offset", I64), _i64(8))),
                            map_free_vars=True)
    # whole elements only: byte_offset % 8 == 0, checked before the binding
    check = asserts["A.byte_offset"]
    assert_structural_equal(check.condition, EQ(FloorMod(_get(h, "byte_offset", I64), _i64(8)),
                                                _i64(0)), map_free_vars=True)
    chain = _chain(after.body)[0]
    assert chain.index(check) < chain.index(lets["A_elem_offset"])


def test_elem_offset_shared_by_two_buffers_is_checked_on_the_second():
    off = Var("off", I32)
    A = decl_buffer((4,), "float32", "A", elem_offset=off)
    B = decl_buffer((4,), "float32", "B", elem_offset=off)
    after = make_packed_api(_mod([A, B], Evaluate(_i32(0))))["f"]
    lets, asserts = _lets(after), _asserts(after)
    assert lets["off"].var is off
    check = asserts["B.byte_offset"]
    assert_structural_equal(check.condition.b, Mul(Cast(I64, off), _i64(4)), map_free_vars=True)


def test_device_id_binds_from_the_first_tensor_and_is_checked_on_the_others():
    n = Var("n", I32)
    A, B = decl_buffer((n,), "float32", "A"), decl_buffer((n,), "float32", "B")
    after = make_packed_api(_mod([A, B], Evaluate(_i32(0))))["f"]
    lets, asserts = _lets(after), _asserts(after)
    dev = after.attrs["tir.device_id"]
    assert lets["dev_id"].var is dev
    assert lets["dev_id"].value.args[0] is lets["A.handle"].var
    assert "A.device_id" not in asserts
    check = asserts["B.device_id"]
    assert_structural_equal(check.condition, EQ(_get(lets["B.handle"].var, "device_id"), dev),
                            map_free_vars=True)


def test_body_ends_with_return_zero_and_arg_names_are_kept():
    A = decl_buffer((4,), "float32", "A")
    n = Var("n", I32)
    body = BufferStore(A, A[0] * 2.0, (0,))
    after = make_packed_api(_mod([n, A], body, symbol="scale"))
    assert list(after) == ["scale"]
    f = after["scale"]
    assert f.attrs["global_symbol"] == "scale" and f.attrs["calling_conv"] == "packed"
    assert f.attrs["target"] == Target("c")
    assert f.attrs["tir.arg_names"] == ("n", "A")
    _, rest = _chain(f.body)
    assert isinstance(rest, SeqStmt) and rest.seq[0] is body
    assert_structural_equal(rest.seq[1], Return(_i32(0)))
    assert "`scale(n, A)`" in "".join(p for p in _chain(f.body)[0][0].message if isinstance(p, str))


@pytest.mark.parametrize("conv", ["packed", "device_kernel"])
def test_functions_with_another_calling_convention_are_left_alone(conv):
    A = decl_buffer((4,), "float32", "A")
    mod = _mod([A], Evaluate(_i32(0)), calling_conv=conv)
    assert make_packed_api(mod) is mod


def test_packed_output_comes_back_unchanged():
    A = decl_buffer((4,), "float32", "A")
    once = make_packed_api(_mod([A], Evaluate(_i32(0))))
    assert make_packed_api(once) is once


def test_only_default_functions_of_a_module_are_packed():
    A = decl_buffer((4,), "float32", "A")
    kernel = PrimFunc((A,), Evaluate(_i32(0)), {}, {"global_symbol": "k",
                                                    "calling_conv": "device_kernel"})
    host = PrimFunc((A,), Evaluate(_i32(0)), {}, {"global_symbol": "h",
                                                  "calling_conv": "default"})
    after = make_packed_api(IRModule({"k": kernel, "h": host}))
    assert after["k"] is kernel
    assert after["h"].attrs["calling_conv"] == "packed"
