"""annotate_entry: the single PrimFunc of a module is marked "tir.is_entry_func"; modules of
several functions, a function already exported as "main" and a function already marked are
left alone (the very same module comes back)."""
from compiler.ir import IRModule
from compiler.ir.structural_equal import assert_structural_equal
from compiler.tir import BufferStore, PrimFunc, decl_buffer
from compiler.tir.transform.annotate_entry import annotate_entry

ENTRY = "tir.is_entry_func"


def _func(symbol, **attrs):
    A = decl_buffer((4,), "float32", "A")
    body = BufferStore(A, A[0] + 1.0, (0,))
    return PrimFunc((A,), body, {}, {"global_symbol": symbol, **attrs})


def test_single_function_is_marked_and_nothing_else_changes():
    f = _func("add")
    before = IRModule({"add": f}, {"system_lib_prefix": "lib_"})
    after = annotate_entry(before)
    assert after is not before
    assert list(after) == ["add"]
    assert after.attrs == {"system_lib_prefix": "lib_"}
    g = after["add"]
    assert g.attrs == {"global_symbol": "add", ENTRY: True}
    assert g.body is f.body
    assert all(x is y for x, y in zip(g.params, f.params))
    assert all(x is y for x, y in zip(sum(g.buffer_map, ()), sum(f.buffer_map, ())))
    assert_structural_equal(g, f.with_attr(ENTRY, True))
    assert before["add"] is f and ENTRY not in f.attrs  # the input is not touched


def test_marked_module_comes_back_unchanged():
    once = annotate_entry(IRModule({"add": _func("add")}))
    assert annotate_entry(once) is once


def test_function_exported_as_main_is_not_marked():
    # Its own symbol already is __tvm_ffi_main; its name in the module does not matter.
    for name in ("main", "f"):
        mod = IRModule({name: _func("main")})
        assert annotate_entry(mod) is mod


def test_name_stands_in_for_a_missing_global_symbol():
    f = _func("x")
    f = PrimFunc(f.params, f.body, f.buffer_map, {})
    main = IRModule({"main": f})
    assert annotate_entry(main) is main
    other = annotate_entry(IRModule({"other": f}))
    assert other["other"].attrs == {ENTRY: True}


def test_several_functions_are_not_marked():
    mod = IRModule({"a": _func("a"), "b": _func("b")})
    assert annotate_entry(mod) is mod
    assert all(ENTRY not in f.attrs for _, f in mod.items())


def test_empty_module_is_unchanged():
    mod = IRModule({})
    assert annotate_entry(mod) is mod
