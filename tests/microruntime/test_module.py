import ctypes
import os

import numpy as np
import pytest

import microruntime as mr
from microruntime import nd


def vectors(n, *, dtype="float32"):
    rng = np.random.default_rng(n)
    a = rng.standard_normal(n).astype(dtype)
    b = rng.standard_normal(n).astype(dtype)
    return a, b, nd.array(a), nd.array(b), nd.empty((n,), dtype)


@pytest.mark.parametrize("kind", ["so", "obj", "tar"])
def test_load_and_run_add(kernels, kind):
    path = getattr(kernels, kind)("add")
    mod = mr.load_module(path)
    a, b, A, B, C = vectors(17)
    mod["add"](A, B, C)
    np.testing.assert_allclose(C.numpy(), a + b)
    mod(A, B, C)  # the entry function (__tvm_ffi_main)
    mod.entry_func(A, B, C)
    np.testing.assert_allclose(C.numpy(), a + b)
    assert mod.get_function("add") is not None and mod["add"] is mod["add"]
    assert mod.implements_function("add") and not mod.implements_function("nope")
    assert mod.type_key and isinstance(mod.imported_modules, list)


def test_function_keeps_its_module_alive(kernels):
    """A function taken from a module works after the module object is gone: the library
    context its code reads belongs to the module, which the function holds."""
    import gc

    f = mr.load_module(kernels.so("callpy"))["call_global"]
    gc.collect()
    mr.register_func("test.keepalive_target", lambda x: x + 1, override=True)
    assert f("test.keepalive_target", 41) == 42


def test_numpy_arguments_to_kernel(kernels):
    add = mr.load_module(kernels.so("add"))["add"]
    a, b = np.arange(5, dtype="float32"), np.ones(5, "float32")
    c = np.zeros(5, "float32")
    add(a, b, c)
    np.testing.assert_array_equal(c, a + b)


def test_read_only_numpy_output_is_refused(kernels):
    """Before, a read-only output was copied in and the kernel's result silently dropped."""
    add = mr.load_module(kernels.so("add"))["add"]
    a, b = np.arange(5, dtype="float32"), np.ones(5, "float32")
    c = np.zeros(5, "float32")
    c.flags.writeable = False
    with pytest.raises(BufferError, match="read-only numpy array"):
        add(a, b, c)
    a.flags.writeable = False  # read-only inputs too: the runtime cannot tell them apart
    with pytest.raises(BufferError, match="pass a writeable array"):
        add(a, b, np.zeros(5, "float32"))


def test_kernel_errors_name_the_type_given(tmp_path):
    """Compiled kernels report "got type index <n>"; the runtime adds the type's name."""
    compiler = pytest.importorskip("compiler")
    from compiler import te

    n = te.var("n")
    A = te.placeholder((n,), name="A")
    B = te.compute(A.shape, lambda i: A[i] * 2.0, name="B")
    f = compiler.build(te.create_schedule(B.op), [A, B], target="llvm", name="double")
    out = nd.empty((3,), "float32")
    for value, name in [(None, "None"), (3, "int"), (2.5, "float"), ("text", "str"),
                        ([1, 2], "Array"), (f, "Module"), (f["double"], "Function")]:
        with pytest.raises(TypeError, match=rf"expected Tensor, but got type index \d+ "
                                            rf"\({name}\)"):
            f["double"](value, out)


def test_kernel_errors(kernels):
    add = mr.load_module(kernels.so("add"))["add"]
    _, _, A, B, _ = vectors(4)
    with pytest.raises(ValueError, match="Mismatched shape"):
        add(A, B, nd.empty((5,), "float32"))
    with pytest.raises(TypeError, match="Mismatched dtype on argument, expected float32: B"):
        add(A, nd.empty((4,), "float16"), nd.empty((4,), "float32"))
    with pytest.raises(ValueError, match="Mismatched ndim on argument C"):
        add(A, B, nd.empty((2, 2), "float32"))
    with pytest.raises(TypeError, match="expected 3 arguments"):
        add(A, B)
    with pytest.raises(TypeError, match="Expect argument to be a tensor: A"):
        add(1, B, B)
    # the function still works after errors
    C = nd.empty((4,), "float32")
    add(A, B, C)


def test_missing_function_and_file(kernels, tmp_path):
    mod = mr.load_module(kernels.so("add"))
    with pytest.raises(AttributeError, match="no function 'nope'"):
        mod["nope"]
    with pytest.raises(AttributeError, match="no function 'nope'"):
        mod.get_function("nope", query_imports=True)
    missing = str(tmp_path / "missing.so")
    with pytest.raises(FileNotFoundError, match="missing.so"):
        mr.load_module(missing)
    weird = tmp_path / "x.weird"
    weird.write_text("hello")
    with pytest.raises(ValueError, match="unknown format 'weird'"):
        mr.load_module(str(weird))
    bad = tmp_path / "bad.so"
    bad.write_text("not a library")
    with pytest.raises(Exception, match="bad.so"):
        mr.load_module(str(bad))


def test_scalar_results(kernels):
    mod = mr.load_module(kernels.so("add"))
    assert mod["sum_scalars"](1, 2, 3) == 6
    assert mod["sum_scalars"](1, 0.5) == 1.5
    with pytest.raises(TypeError, match="sum_scalars"):
        mod["sum_scalars"]("x")


def test_workspace_kernel(kernels):
    ws = mr.load_module(kernels.so("workspace"))["ws"]
    for n in (1, 100, 10000):
        x = np.arange(n, dtype="float32")
        out = nd.empty((n,), "float32")
        ws(nd.array(x), out)
        np.testing.assert_array_equal(out.numpy(), 2 * x + 1)


def test_parallel_kernel(kernels):
    mod = mr.load_module(kernels.so("parallel"))
    ids = nd.array(np.zeros(256, "int64"))
    num_task = mod["par_ids"](ids)
    assert 1 <= num_task <= 256
    got = ids.numpy()[:num_task]
    assert (got != 0).all(), "every task ran"
    assert (ids.numpy()[num_task:] == 0).all()
    if mr.num_threads() > 1 and os.cpu_count() > 1:
        assert num_task == mr.num_threads()
        assert len(set(got.tolist())) > 1, "tasks ran on distinct threads"
    a, b, A, B, C = vectors(1001)
    for _ in range(20):
        mod["par_add"](A, B, C)
        np.testing.assert_allclose(C.numpy(), a + b)


def test_system_lib(kernels):
    ctypes.CDLL(kernels.so("syslib"), mode=ctypes.RTLD_GLOBAL)
    lib = mr.system_lib()
    assert lib["syslib_mul2"](21) == 42
    a, b, A, B, C = vectors(8)
    lib.get_function("syslib_add")(A, B, C)
    np.testing.assert_allclose(C.numpy(), a + b)
    assert mr.system_lib().implements_function("syslib_mul2")
    with pytest.raises(AttributeError):
        lib["nope"]


def test_kernel_calls_python_through_c(kernels):
    mod = mr.load_module(kernels.so("callpy"))
    mr.register_func("test.kernel_target", lambda x, y: x * y, override=True)
    assert mod["call_global"]("test.kernel_target", 6, 7) == 42
    mr.register_func("test.kernel_raise", lambda: 1 / 0, override=True)
    with pytest.raises(ZeroDivisionError):
        mod["call_global"]("test.kernel_raise")
    with pytest.raises(Exception, match="test.not_registered"):
        mod["call_global"]("test.not_registered")


def test_export_library_copies_loaded_library(kernels, tmp_path):
    mod = mr.load_module(kernels.tar("add"))
    out = str(tmp_path / "copy.so")
    mod.export_library(out)
    again = mr.load_module(out)
    a, b, A, B, C = vectors(3)
    again["add"](A, B, C)
    np.testing.assert_allclose(C.numpy(), a + b)
    with pytest.raises(ValueError, match="shared library"):
        mod.export_library(str(tmp_path / "x.tar"))


def test_runtime_module_is_pure_runtime(tmp_path, kernels):
    """A runtime Module knows no source; it saves/exports only the library it was loaded from."""
    mod = mr.load_module(kernels.so("add"))
    assert mr.Module.entry_name == "main" and mod.entry_name == "main"
    assert not hasattr(mod, "_exporter") and not hasattr(mod, "_sources")
    assert mod.format == "so"
    with pytest.raises(ValueError, match="no source in format 'c'"):
        mod.get_source("c")
    mod.save(str(tmp_path / "k.so"))
    a, b, A, B, C = vectors(3)
    mr.load_module(str(tmp_path / "k.so"))["add"](A, B, C)
    np.testing.assert_allclose(C.numpy(), a + b)
    with pytest.raises(ValueError, match="cannot be saved"):
        mod.save(str(tmp_path / "k.c"))
    plain = mr.system_lib()
    with pytest.raises(RuntimeError, match="cannot be exported"):
        plain.export_library(str(tmp_path / "x.so"))


def test_static_library(kernels, tmp_path):
    mod = mr.load_static_library(kernels.obj("add"), ["add"])
    assert mod.type_key == "static_library" and mod.is_dso_exportable
    assert mod.implements_function("add") and not mod.implements_function("x")
    with pytest.raises(AttributeError):
        mod["add"]
    out = str(tmp_path / "static.so")
    mod.export_library(out)
    a, b, A, B, C = vectors(6)
    mr.load_module(out)["add"](A, B, C)
    np.testing.assert_allclose(C.numpy(), a + b)


def test_import_module(kernels):
    host = mr.load_module(kernels.so("callpy"))
    dep = mr.load_module(kernels.so("add"))
    host.import_module(dep)
    assert len(host.imported_modules) == 1
    assert host.imported_modules[0].implements_function("add")
    assert host.implements_function("add", query_imports=True)
    a, b, A, B, C = vectors(4)
    host.get_function("add", query_imports=True)(A, B, C)
    np.testing.assert_allclose(C.numpy(), a + b)
