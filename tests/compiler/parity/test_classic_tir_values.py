"""tir constructors and constants as classic TVM code uses them: index lists, Python-int loop
bounds, constants compared and hashed by value, StringImm against str."""
from compiler import te, tir


def test_buffer_load_and_store_take_index_lists():
    buf = tir.decl_buffer((8,), "int64", name="b")
    i = te.var("i")
    load = tir.BufferLoad(buf, [i])
    store = tir.BufferStore(buf, load + 1, [i + 1])
    assert isinstance(load.indices, tuple) and load.indices[0] is i
    assert isinstance(store.indices, tuple) and len(store.indices) == 1
    assert hash(load) == hash(load)  # usable as a key once built


def test_for_takes_python_int_bounds_in_the_loop_var_dtype():
    i = tir.Var("i", "int64")
    loop = tir.For(i, 0, 10, "serial", tir.Evaluate(tir.const(0)))
    assert isinstance(loop.min, tir.IntImm) and str(loop.min.dtype) == "int64"
    assert loop.extent.value == 10


def test_int_constants_compare_and_hash_by_value():
    two, three = tir.const(2), tir.const(3)
    assert set([two, three]) == {2, 3}
    assert two == 2 and bool(two != 3)
    assert bool(tir.const(2) == tir.const(2))
    i = te.var("i")
    assert isinstance(two == i, tir.PrimExpr) and not bool(two == i)


def test_string_imm_equals_its_text():
    s = tir.StringImm("a")
    assert s == "a" and s != "b"
    assert s == tir.StringImm("a")
