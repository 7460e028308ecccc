"""The LLVM host codegen's runtime-facing parts: parallel loops on several threads, call_packed,
system-lib registration, library symbols, and cross compilation."""
import shutil
import subprocess

import numpy as np
import pytest

pytest.importorskip("llvmlite")

from llvm_host import compile_host  # noqa: E402

from compiler.ir.dtype import handle  # noqa: E402
from compiler.ir.errors import TargetError  # noqa: E402
from compiler.tir import (
    BufferStore,
    Call,
    Evaluate,
    For,
    ForKind,
    Ramp,
    StringImm,
    Var,
    const,
    decl_buffer,
    seq,
)


def _func(bufs, body, scalars=()):
    params = [Var(b.name, handle) for b in bufs]
    return list(scalars) + params, list(zip(params, bufs)), body


def _parallel_scale():
    n, m = Var("n", "int32"), Var("m", "int32")
    A = decl_buffer((n * m,), "float32", "A")
    C = decl_buffer((n * m,), "float32", "C")
    s = Var("s", "float32")
    i, j = Var("i", "int32"), Var("j", "int32")
    body = For(i, const(0), n, ForKind.PARALLEL,
               For(j, const(0), m, ForKind.SERIAL,
                   BufferStore(C, A[i * m + j] * s, (i * m + j,))))
    return _func([A, C], body, scalars=[n, m, s])


@pytest.mark.parametrize("threads", [1, 2, 3])
def test_parallel_loop_runs_on_threads(tmp_path, threads):
    lib, art = compile_host(tmp_path, {"scale": _parallel_scale()}, threads=threads)
    assert "__TVMBackendParallelLaunch" in art.sources["ll"]
    a = np.random.rand(7 * 5).astype("float32")
    c = np.zeros_like(a)
    lib.run("scale", 7, 5, 2.0, a, c)
    np.testing.assert_allclose(c, a * 2)
    assert lib.counter("stub_launches") == 1
    assert lib.lib.stub_distinct_task_threads() == threads


def test_parallel_error_inside_task_and_nested_parallel(tmp_path):
    n = Var("n", "int32")
    A = decl_buffer((n * 4,), "int32", "A")
    i, j = Var("i", "int32"), Var("j", "int32")
    body = For(i, const(0), n, ForKind.PARALLEL,
               For(j, const(0), const(4), ForKind.PARALLEL,
                   BufferStore(A, i * 4 + j, (i * 4 + j,))))
    lib, _ = compile_host(tmp_path, {"fill": _func([A], body, scalars=[n])}, threads=2)
    a = np.zeros(4 * 9, "int32")
    lib.run("fill", 9, a)
    np.testing.assert_array_equal(a, np.arange(36))
    assert lib.counter("stub_launches") == 1  # the inner loop runs serially in each task


def test_call_packed_with_int_float_and_tensor_args(tmp_path):
    A = decl_buffer((4,), "float32", "A")
    x = Var("x", "int32")
    calls = []

    def record(args):
        calls.append([(a.type_index, a.v_int64) for a in args])
        return 0

    body = seq(Evaluate(Call(x.dtype, "tir.call_packed",
                             (StringImm("test.record"), x, const(1.5, "float64"),
                              StringImm("hi")))),
               BufferStore(A, const(1.0), (const(0),)))
    lib, _ = compile_host(tmp_path, {"cp": _func([A], body, scalars=[x])})
    lib.register("test.record", record)
    a = np.zeros(4, "float32")
    lib.run("cp", 42, a)
    lib.run("cp", 43, a)
    assert [c[0] for c in calls] == [(1, 42), (1, 43)]
    assert calls[0][1][0] == 3 and calls[0][2][0] == 8
    assert a[0] == 1.0

    missing = {"m": _func([A], Evaluate(Call(x.dtype, "tir.call_packed",
                                             (StringImm("no.such"),))))}
    lib2, _ = compile_host(tmp_path / "missing", missing)
    rc, err = lib2.call("m", a)
    assert rc == -1 and "no.such" in err


def _symbols(path):
    return subprocess.run(["nm", path], capture_output=True, text=True, check=True).stdout


@pytest.mark.parametrize("prefix", ["", "mylib_"])
def test_system_lib_registration(tmp_path, prefix):
    funcs = {"scale": _parallel_scale(),
             "twice": _func([decl_buffer((4,), "float32", "B")], Evaluate(const(0)))}
    lib, art = compile_host(tmp_path, funcs, target=f"llvm --system-lib-prefix={prefix}",
                            attrs={"system_lib_prefix": prefix})
    names = [lib.lib.stub_symbol_name(i) for i in range(lib.counter("stub_num_symbols"))]
    import ctypes
    lib.lib.stub_symbol_name.restype = ctypes.c_char_p
    names = [lib.lib.stub_symbol_name(i).decode()
             for i in range(lib.counter("stub_num_symbols"))]
    assert sorted(names) == sorted([f"{prefix}__tvm_ffi__library_ctx", "__tvm_ffi_scale",
                                    "__tvm_ffi_twice"])
    entry = getattr(lib.lib, f"kiln_system_lib_{prefix}register")
    assert entry() == 0 and lib.counter("stub_num_symbols") == 3  # idempotent
    syms = _symbols(art.object_file)
    assert " U TVMBackendParallelLaunch" in syms  # direct calls, no context slots
    assert "__TVMBackendParallelLaunch" not in syms
    assert "__tvm_ffi_main" not in syms  # two functions: no entry
    a = np.random.rand(6).astype("float32")
    c = np.zeros_like(a)
    lib.run("scale", 2, 3, 3.0, a, c)
    np.testing.assert_allclose(c, a * 3)


def test_shared_library_symbols(tmp_path):
    _, art = compile_host(tmp_path, {"scale": _parallel_scale()})
    syms = _symbols(art.object_file)
    assert " T __tvm_ffi_scale" in syms and " W __tvm_ffi_main" in syms
    assert "__tvm_ffi__library_ctx" in syms
    assert " V __TVMBackendParallelLaunch" in syms  # a weak slot the loader fills
    assert "kiln_system_lib" not in syms


@pytest.mark.parametrize("triple,machine,arch", [
    ("aarch64-linux-gnu", "AArch64", "aarch64"),
    ("x86_64-linux-gnu", "Advanced Micro Devices X86-64", "x86-64")])
def test_cross_compile(tmp_path, triple, machine, arch):
    n = Var("n", "int32")
    A = decl_buffer((n,), "float32", "A")
    i = Var("i", "int32")
    body = For(i, const(0), n // 4, ForKind.SERIAL,
               BufferStore(A, A[Ramp(i * 4, const(1), 4)] * 2.0, (Ramp(i * 4, const(1), 4),)))
    from llvm_host import packed_module

    from compiler.codegen.llvm import codegen_host
    from compiler.target import Target

    art = codegen_host(packed_module({"k": _func([A], body, scalars=[n])}),
                       Target(f"llvm -mtriple={triple}"), str(tmp_path))
    header = subprocess.run(["readelf", "-h", art.object_file], capture_output=True,
                            text=True, check=True).stdout
    assert machine in header and "REL (Relocatable file)" in header
    if shutil.which("file"):
        out = subprocess.run(["file", art.object_file], capture_output=True, text=True).stdout
        assert arch in out.lower().replace("_", "-")
    assert triple.split("-")[0] in art.sources["ll"]


def test_bad_options_are_target_errors():
    from compiler.codegen.llvm import create_target_machine
    from compiler.target import Target

    with pytest.raises(TargetError, match="mtriple"):
        create_target_machine(Target("llvm -mtriple=nonsense-cpu-none"))
