"""structural_equal / assert_structural_equal / structural_hash."""
import pytest

from compiler.ir import (
    IRModule,
    ObjectPath,
    assert_structural_equal,
    structural_equal,
    structural_hash,
)
from compiler.ir.structural_equal import first_mismatch
from compiler.tir import (
    Allocate,
    BufferStore,
    For,
    ForKind,
    LetStmt,
    PrimFunc,
    Var,
    const,
    decl_buffer,
    seq,
)


def make_func(n_name="n", value=1.0, loop_name="i"):
    n = Var(n_name)
    A = decl_buffer((n,), "float32", "A")
    i = Var(loop_name)
    body = For(i, const(0), n, ForKind.SERIAL,
               seq(BufferStore(A, A[i] + value, (i,)), BufferStore(A, A[i] * 2.0, (i,))))
    return PrimFunc((A.data,), body, ((A.data, A),), {"global_symbol": "f"})


def test_defined_vars_match_by_position_names_ignored():
    a, b = make_func(), make_func(n_name="m", loop_name="j")
    assert structural_equal(a, b)
    assert structural_hash(a) == structural_hash(b)
    assert structural_equal(IRModule({"f": a}), IRModule({"f": b}))


def test_free_vars_equal_only_if_identical_unless_mapped():
    x, y = Var("x"), Var("x")
    assert structural_equal(x + 1, x + 1)
    assert not structural_equal(x + 1, y + 1)
    assert structural_equal(x + 1, y + 1, map_free_vars=True)
    assert structural_hash(x + 1, map_free_vars=True) == structural_hash(y + 1, map_free_vars=True)
    # map_free_vars still needs a consistent mapping
    assert not structural_equal(x + x, x + y, map_free_vars=True)


def test_mismatch_path_and_message():
    a, b = make_func(), make_func(value=2.0)
    pair = first_mismatch(a, b)
    assert str(pair.lhs_path) == "<root>.body.body.seq[0].value.b.value"
    with pytest.raises(ValueError) as info:
        assert_structural_equal(a, b)
    msg = str(info.value)
    assert "<root>.body.body.seq[0].value.b" in msg
    assert "1.0" in msg and "2.0" in msg and "def f(" in msg


def test_dtype_and_node_type_mismatch():
    x = Var("x")
    assert not structural_equal(x + 1, x - 1)
    assert not structural_equal(const(1), const(1, "int64"))
    assert not structural_equal(Var("a", "int32"), Var("a", "int64"), map_free_vars=True)


def test_let_and_allocate_define_vars():
    k1, k2 = Var("k"), Var("q")
    A = decl_buffer((4,), "float32", "A")
    B = decl_buffer((4,), "float32", "B")
    s1 = LetStmt(k1, const(3), Allocate(A, BufferStore(A, const(1.0), (k1,))))
    s2 = LetStmt(k2, const(3), Allocate(B, BufferStore(B, const(1.0), (k2,))))
    assert structural_equal(s1, s2)
    s3 = LetStmt(k2, const(3), Allocate(B, BufferStore(B, const(1.0), (const(0),))))
    assert str(first_mismatch(s1, s3).lhs_path) == "<root>.body.body.indices[0]"


def test_object_path_text():
    p = ObjectPath.root().attr("body").attr("seq").array_index(1).attr("value").attr("a")
    assert str(p) == "<root>.body.seq[1].value.a"
