"""Classic TVM's runtime corners (v0.12 behaviour): `convert` of dicts to Map and of functions
kept inside Array/Map, IR nodes and devices through registered callbacks, functions returned
by functions, save_json/load_json round trips of IR, two built modules combined by
import_module into one library, and a library saved by one build loaded with load_module."""
import os
import subprocess
import sys

import numpy as np
import pytest

import compiler
import microruntime as runtime
from compiler import ir, te, tir
from compiler.contrib import cc
from compiler.ir.errors import IRError


# ---- convert: Map, functions in containers ----------------------------------------------------
def test_convert_dict_gives_a_map_of_converted_values():
    amap = runtime.convert({"a": 2, "b": 3})
    assert isinstance(amap, runtime.Map) and amap.type_key == "Map"
    assert len(amap) == 2 and "a" in amap and "c" not in amap
    assert amap["a"].value == 2 and isinstance(amap["b"], tir.IntImm)
    assert sorted(amap.keys()) == ["a", "b"] and dict(amap.items()).keys() == {"a", "b"}
    with pytest.raises(KeyError):
        amap["c"]


def test_map_keyed_by_variables_finds_the_same_variable_only():
    a, b = te.var("a"), te.var("b")
    amap = runtime.convert({a: 2, b: 3})
    assert a in amap and b in amap and len(amap) == 2
    assert a + 1 not in amap and te.var("a") not in amap
    assert {id(k) for k in amap} == {id(a), id(b)}
    assert [v.value for v in amap.values()] == [2, 3]
    assert amap[b].value == 3


def test_convert_numbers_and_lists_as_ir_constants():
    arr = runtime.convert([1, 2, 3])
    assert isinstance(arr, runtime.Array) and arr.type_key == "Array"
    assert [x.value for x in arr] == [1, 2, 3] and arr[-1].value == 3
    assert (arr[-3:-1][0].value, arr[-3:-1][1].value) == (1, 2)
    assert runtime.convert(2.5).dtype == "float32" and runtime.convert(True).dtype == "bool"
    assert tuple(runtime.convert(())) == ()


def test_functions_inside_map_and_array_stay_callable():
    funcs = runtime.convert({"add": lambda x, y: x + y, "neg": lambda x: -x})
    add = funcs["add"]
    assert isinstance(add, runtime.PackedFunc)
    a, b = tir.Var("a", "float32"), tir.Var("b", "float32")
    ir.assert_structural_equal(add(a, b), tir.Add(a, b))
    arr = runtime.convert([lambda: 7, funcs["neg"]])
    assert isinstance(arr[0], runtime.PackedFunc) and arr[0]() == 7 and arr[1](3) == -3

    # a Map of functions handed to a function: the callee calls them through the C ABI
    apply = runtime.convert(lambda table, key, x: table[key](x))
    assert apply(funcs, "neg", 5) == -5
    assert apply({"twice": lambda x: 2 * x}, "twice", 21) == 42


# ---- IR nodes and devices through registered callbacks ------------------------------------------
def test_registered_callback_receives_and_returns_ir_nodes(registered):
    x = tir.Var("x", "int32")
    seen = []

    def scale(expr, factor):
        seen.append(expr)
        return expr * factor

    registered("parity.scale", scale)
    f = runtime.get_global_func("parity.scale")
    assert isinstance(f, runtime.PackedFunc)
    out = f(x + 1, tir.const(3))
    assert seen[0].a is x  # the callee got the node itself
    assert isinstance(out, tir.Mul) and out.a.a is x
    ir.assert_structural_equal(out, (x + 1) * 3)


def test_callback_with_node_and_function_arguments(registered):
    x = runtime.convert(10)
    echo = runtime.convert(lambda y: y)
    registered("parity.call_with", lambda y, f: f(y))
    y = runtime.get_global_func("parity.call_with")(x, echo)
    assert y.value == 10 and y.same_as(x)


def test_function_returned_from_a_function():
    def addy(y):
        def add(x):
            return runtime.convert(x + y)
        return add

    make_adder = runtime.convert(addy)
    add10 = make_adder(10)
    assert isinstance(add10, runtime.PackedFunc)
    assert add10(11).value == 21
    assert runtime.convert(lambda: make_adder)()(1)(2).value == 3


def test_devices_in_and_out_of_functions(registered):
    def on_device(dev):
        assert dev == runtime.cuda(7) and isinstance(dev, runtime.Device)
        return runtime.cpu(0)

    registered("parity.device", on_device)
    out = runtime.get_global_func("parity.device")(runtime.cuda(7))
    assert out == runtime.cpu(0) and isinstance(out, runtime.Device)
    echo = runtime.convert(lambda d: d)
    assert echo(runtime.opencl(10)) == runtime.opencl(10)
    assert echo([runtime.vulkan(1)]) == [runtime.vulkan(1)]
    assert echo({"dev": runtime.cpu(3)})["dev"] == runtime.cpu(3)


def test_nodes_kept_alive_by_a_map():
    def make():
        return runtime.convert({tir.Var("kept", "int32"): tir.Var("value", "float32")})

    amap = make()  # nothing else refers to the variables
    ((key, value),) = amap.items()
    assert key.name == "kept" and value.dtype == "float32" and amap[key] is value


# ---- save_json / load_json ----------------------------------------------------------------------
def _round_trip(value):
    text = ir.save_json(value)
    assert isinstance(text, str)
    return ir.load_json(text)


def test_json_round_trip_of_expressions():
    x, y = tir.const(1, "int32"), tir.const(10, "int32")
    z = x + y
    z = z + z
    ir.assert_structural_equal(_round_trip(z), z, map_free_vars=True)
    n = te.var("n")
    k = te.reduce_axis((0, n), "k")
    expr = te.max(n * 2, te.var("m")) + te.sum(k.var * 2, axis=k)
    loaded = _round_trip(expr)
    ir.assert_structural_equal(loaded, expr, map_free_vars=True)
    assert not ir.structural_equal(loaded, expr)  # free variables are new objects


def test_json_keeps_shared_variables_shared():
    v = te.var("v")
    loaded = _round_trip(v * v + v)
    assert loaded.a.a is loaded.a.b is loaded.b and loaded.b.name == "v"


@pytest.mark.parametrize("value,dtype", [(float("inf"), "float64"), (float("-inf"), "float64"),
                                         (float("inf"), "float32"), (float("-inf"), "float32")])
def test_json_round_trip_of_infinite_constants(value, dtype):
    c = tir.const(value, dtype)
    ir.assert_structural_equal(c, _round_trip(c))
    assert _round_trip(c).value == value


def test_json_round_trip_of_containers_and_arrays():
    a, b = te.var("a"), te.var("b")
    loaded = _round_trip(runtime.convert({a: 2, b: 3}))
    assert isinstance(loaded, runtime.Map) and len(loaded) == 2
    assert {k.name: v.value for k, v in loaded.items()} == {"a": 2, "b": 3}
    arr = _round_trip(runtime.convert([1, 2, 3]))
    assert isinstance(arr, runtime.Array) and arr[1].value == 2
    smap = runtime.convert({"z": tir.Add(tir.const(1), tir.const(10)), "x": tir.const(1)})
    back = _round_trip(runtime.convert([smap]))
    ir.assert_structural_equal(back, [smap], map_free_vars=True)
    nd = runtime.nd.array(np.arange(6, dtype="float32").reshape(2, 3))
    nd_back = _round_trip({"w": nd, "t": (1, "s", None)})
    np.testing.assert_array_equal(nd_back["w"].numpy(), nd.numpy())
    assert nd_back["t"] == (1, "s", None)
    assert _round_trip(runtime.String("xyz")) == "xyz"


def _lowered():
    n = te.var("n")
    A = te.placeholder((n,), name="A")
    k = te.reduce_axis((0, n), "k")
    B = te.compute((1,), lambda i: te.sum(A[k] * 2.0, axis=k), name="B")
    C = te.compute((n,), lambda i: te.if_then_else(A[i] > 0, A[i], 0.0), name="C")
    s = te.create_schedule([B.op, C.op])
    outer, inner = s[C].split(C.op.axis[0], factor=4)
    s[C].parallel(outer)
    s[C].vectorize(inner)
    return compiler.lower(s, [A, B, C], name="main")


def test_json_round_trip_of_statements_prim_funcs_and_modules(target):
    mod = _lowered()
    func = mod["main"]
    ir.assert_structural_equal(_round_trip(func.body), func.body, map_free_vars=True)
    ir.assert_structural_equal(_round_trip(func), func)
    loaded = _round_trip(mod)
    assert isinstance(loaded, ir.IRModule)
    ir.assert_structural_equal(loaded, mod)
    assert ir.structural_hash(loaded) == ir.structural_hash(mod)

    built = compiler.build(loaded, target=target)  # the loaded module is a working one
    a = runtime.nd.array(np.arange(-4, 4, dtype="float32"))
    b, c = runtime.nd.empty((1,), "float32"), runtime.nd.empty((8,), "float32")
    built(a, b, c)
    np.testing.assert_allclose(b.numpy(), [2 * np.arange(-4, 4).sum()])
    np.testing.assert_array_equal(c.numpy(), np.maximum(np.arange(-4, 4), 0))


def test_json_round_trip_of_te_tensors():
    A = te.placeholder((8,), name="A")
    B = te.compute((8,), lambda i: A[i] + 1.0, name="B")
    B2 = _round_trip(B)
    assert B2.op.outputs[0] is B2 and B2.name == "B" and B2.op.input_tensors[0].name == "A"
    s = te.create_schedule(B2.op)
    f = compiler.build(s, [B2.op.input_tensors[0], B2], target="c")
    a, b = runtime.nd.array(np.arange(8, dtype="float32")), runtime.nd.empty((8,), "float32")
    f(a, b)
    np.testing.assert_array_equal(b.numpy(), np.arange(8) + 1)


def test_load_json_rejects_bad_input():
    with pytest.raises(IRError, match="not JSON"):
        ir.load_json("{")
    text = ir.save_json(tir.const(1))
    with pytest.raises(IRError, match="unknown type"):
        ir.load_json(text.replace("compiler.tir.expr:IntImm", "os:system"))
    with pytest.raises(IRError, match="format"):
        ir.load_json('{"root": 1, "nodes": []}')
    with pytest.raises(IRError, match="cannot save a value of type"):
        ir.save_json(object())


# ---- modules: import_module + export, a saved library loaded by name ----------------------------
def _add_one(name, target):
    A = te.placeholder((16,), name="A")
    B = te.compute(A.shape, lambda i: A[i] + 1.0, name="B")
    s = te.create_schedule(B.op)
    return compiler.build(s, [A, B], target, name=name)


@pytest.mark.parametrize("ext", ["so", "tar"])
def test_import_module_combines_two_builds_into_one_library(target, ext, tmp_path):
    mod0, mod1 = _add_one("myadd0", target), _add_one("myadd1", target)
    mod0.import_module(mod1)
    path = str(tmp_path / f"deploy_lib.{ext}")
    mod0.export_library(path)
    loaded = runtime.load_module(path)
    assert loaded.type_key == "library"
    assert len(loaded.imported_modules) == 0  # host code is linked into one library
    a = runtime.nd.array(np.arange(16, dtype="float32"))
    for name in ("myadd0", "myadd1"):
        assert loaded.implements_function(name)
        b = runtime.nd.empty((16,), "float32")
        loaded[name](a, b)
        np.testing.assert_array_equal(b.numpy(), np.arange(16) + 1)


_RUNTIME_ONLY = """
import sys
import numpy as np
import microruntime as runtime
lib = runtime.load_module(sys.argv[1])
a = runtime.nd.array(np.zeros(10, dtype=sys.argv[2]))
lib["main"](a)
np.testing.assert_equal(a.numpy(), np.arange(10))
assert "compiler" not in sys.modules
print("runtime only: ok")
"""


def test_saved_object_linked_and_loaded_by_name(target, tmp_path):
    dtype = "int64"
    n = te.size_var("n")
    Ab = tir.decl_buffer((n,), dtype)
    i = te.var("i")
    # for i in 0 .. n-2: A[i + 1] = A[i] + 1   (a running count: A = 0, 1, 2, ...)
    stmt = tir.For(i, tir.const(0), n - 1, tir.ForKind.SERIAL,
                   tir.BufferStore(Ab, tir.BufferLoad(Ab, (i,)) + 1, (i + 1,)))
    mod = ir.IRModule.from_expr(tir.PrimFunc([Ab], stmt).with_attr("global_symbol", "main"))
    built = compiler.build(mod, target=target)
    path_obj, path_so = str(tmp_path / "test.o"), str(tmp_path / "test.so")
    built.save(path_obj)
    cc.create_shared(path_so, [path_obj])

    lib = runtime.load_module(path_so)
    a = runtime.nd.array(np.zeros(10, dtype=dtype))
    lib(a)  # the entry function
    np.testing.assert_equal(a.numpy(), np.arange(10))
    a = runtime.nd.array(np.zeros(10, dtype=dtype))
    lib["main"](a)  # the same function, by name
    np.testing.assert_equal(a.numpy(), np.arange(10))
    with pytest.raises(AttributeError):
        lib["no_such_function"]

    exported = str(tmp_path / "exported.so")
    built.export_library(exported)
    script = tmp_path / "runtime_only.py"
    script.write_text(_RUNTIME_ONLY)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [
        os.path.dirname(os.path.dirname(runtime.__file__)), os.environ.get("PYTHONPATH")])))
    proc = subprocess.run([sys.executable, str(script), exported, dtype], env=env,
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    assert proc.returncode == 0, proc.stdout
    assert "runtime only: ok" in proc.stdout


def test_system_lib_objects_of_two_builds_link_into_one_library(target, tmp_path):
    """Runtime(system-lib) builds register their functions from constructors: two objects of
    the same (empty) prefix link into one .so, and both functions are in system_lib()."""
    import ctypes

    from compiler.relay.backend import Runtime

    def add_const(name, step):
        A = te.placeholder((12,), name="A")
        B = te.compute(A.shape, lambda j: A[j] + step, name="B")
        s = te.create_schedule(B.op)
        return compiler.build(s, [A, B], target, name=name,
                              runtime=Runtime("cpp", {"system-lib": True}))

    names = [f"corner_sys_{target}_{i}" for i in range(2)]
    paths = []
    for i, name in enumerate(names):
        paths.append(str(tmp_path / f"{name}.o"))
        add_const(name, float(i + 1)).save(paths[-1])
    so_path = str(tmp_path / "both.so")
    cc.create_shared(so_path, paths)
    dll = ctypes.CDLL(so_path)
    assert dll.kiln_system_lib_register() == 0  # the entry is defined once, and idempotent
    syslib = runtime.system_lib()
    a = runtime.nd.array(np.arange(12, dtype="float32"))
    for i, name in enumerate(names):
        b = runtime.nd.empty((12,), "float32")
        syslib[name](a, b)
        np.testing.assert_array_equal(b.numpy(), np.arange(12, dtype="float32") + i + 1)


def test_saved_llvm_ir_and_bitcode_load_as_modules(tmp_path):
    pytest.importorskip("llvmlite")
    built = _add_one("corner_ir_add", "llvm")
    assert built.get_source("bc")[:4] == b"BC\xc0\xde"
    a = runtime.nd.array(np.arange(16, dtype="float32"))
    for ext in ("ll", "bc"):
        path = str(tmp_path / f"add.{ext}")
        built.save(path)
        loaded = runtime.load_module(path)
        b = runtime.nd.empty((16,), "float32")
        loaded["corner_ir_add"](a, b)
        np.testing.assert_array_equal(b.numpy(), np.arange(16, dtype="float32") + 1)
    (tmp_path / "bad.ll").write_text("this is not LLVM IR")
    with pytest.raises(compiler.ir.errors.BuildError, match="not a valid LLVM IR module"):
        runtime.load_module(str(tmp_path / "bad.ll"))


def test_built_module_properties(target):
    built = _add_one("corner_props", target)
    assert built.is_runnable and built.is_dso_exportable and not built.is_binary_serializable
    assert built.get_property_mask() == 6
