"""tir.call_packed from compiled kernels: arguments as the callee sees them, Buffers passed as
DLTensor*, one cached lookup per call site, and errors (missing function, failing callee)."""
import subprocess

import numpy as np
import pytest

import compiler
import microruntime
from compiler.build import host_passes
from compiler.codegen.c_family.c import compile_flags, generate_c
from compiler.tir import (BufferStore, Evaluate, For, ForKind, PrimFunc, Var, const, decl_buffer, seq)
from compiler.ir.dtype import handle
from compiler.target import Target
from compiler.tir import call_packed


def _kernel(name, body_of, scalars=()):
    """A PrimFunc `name(*scalars, A: float32[4])` whose body is `body_of(A)`."""
    A = decl_buffer((4,), "float32", "A")
    param = Var("A", handle)
    return PrimFunc(tuple(scalars) + (param,), body_of(A), ((param, A),),
                    {"global_symbol": name})


def test_int_float_tensor_and_string_arguments(target, registered):
    seen = []
    registered("kiln_test.record", lambda i, f, t, s: seen.append(
        (i, f, t.shape, str(t.dtype), t.numpy().copy(), s)))
    x = Var("x", "int32")
    func = _kernel("cp", lambda A: seq(
        Evaluate(call_packed("kiln_test.record", x, 2.5, A, "text")),
        BufferStore(A, const(9.0), (const(0),))), scalars=[x])
    m = compiler.build(func, target=target)
    a = microruntime.nd.array(np.arange(4, dtype="float32") + 1)
    m["cp"](42, a)
    m["cp"](-7, a)
    assert [s[0] for s in seen] == [42, -7]
    i, f, shape, dtype, data, s = seen[0]
    assert f == 2.5 and tuple(shape) == (4,) and dtype == "float32" and s == "text"
    np.testing.assert_array_equal(data, [1, 2, 3, 4])
    np.testing.assert_array_equal(seen[1][4], [9, 2, 3, 4])  # the store after the first call
    assert a.numpy()[0] == 9.0


def test_call_in_a_loop_sees_the_loop_variable(target, registered):
    seen = []
    registered("kiln_test.index", lambda i, t: seen.append(i))
    i = Var("i", "int32")
    func = _kernel("loop", lambda A: For(i, const(0), const(5), ForKind.SERIAL,
                                          Evaluate(call_packed("kiln_test.index", i, A))))
    m = compiler.build(func, target=target)
    m["loop"](microruntime.nd.array(np.zeros(4, "float32")))
    assert seen == [0, 1, 2, 3, 4]


def test_callee_writes_the_buffer(target, registered):
    def fill(t, v):
        t.copyfrom(np.full(4, v, "float32"))  # returns nothing: a view must not escape

    registered("kiln_test.fill", fill)
    func = _kernel("fill", lambda A: Evaluate(call_packed("kiln_test.fill", A, 3.0)))
    m = compiler.build(func, target=target)
    a = microruntime.nd.array(np.zeros(4, "float32"))
    m["fill"](a)
    np.testing.assert_array_equal(a.numpy(), np.full(4, 3.0))


def test_missing_function_raises_naming_it(target):
    func = _kernel("missing", lambda A: seq(
        Evaluate(call_packed("kiln_test.no_such_function", A)),
        BufferStore(A, const(1.0), (const(0),))))
    m = compiler.build(func, target=target)
    a = microruntime.nd.array(np.zeros(4, "float32"))
    with pytest.raises(Exception, match="kiln_test.no_such_function"):
        m["missing"](a)
    assert a.numpy()[0] == 0.0  # the kernel returned at the failing call


def test_failing_callee_status_returns_at_once(target, registered):
    def fail(t):
        raise ValueError("the callee refuses")

    registered("kiln_test.fail", fail)
    func = _kernel("fails", lambda A: seq(Evaluate(call_packed("kiln_test.fail", A)),
                                          BufferStore(A, const(1.0), (const(0),))))
    m = compiler.build(func, target=target)
    a = microruntime.nd.array(np.zeros(4, "float32"))
    with pytest.raises(ValueError, match="the callee refuses"):
        m["fails"](a)
    assert a.numpy()[0] == 0.0


@pytest.mark.parametrize("kind", ["c", "c --system-lib-prefix=cp_"])
def test_c_file_is_self_contained_and_uses_weak_slots(tmp_path, kind):
    """The C file compiles warning-free on its own; in a shared library the lookup and the call
    go through the weak context slots (so TVM's loader and the microruntime can both fill
    them) and no strong reference to a runtime function besides error raising remains."""
    tgt = Target(kind)
    func = _kernel("cp", lambda A: Evaluate(call_packed("kiln_test.f", A, 1)))
    src = generate_c(host_passes(compiler.lower(func), tgt), tgt)
    path = tmp_path / "k.c"
    path.write_text(src)
    subprocess.run(["cc", "-std=c99", "-Wall", "-Wextra", "-Werror", "-fPIC", "-c", str(path),
                    "-o", str(tmp_path / "k.o")] + compile_flags(tgt), check=True)
    lines = subprocess.run(["nm", "-u", str(tmp_path / "k.o")], capture_output=True,
                           text=True, check=True).stdout.splitlines()
    undefined = {line.split()[-1]: line.split()[0] for line in lines}  # name -> U (strong), w
    undefined.pop("_GLOBAL_OFFSET_TABLE_", None)
    if "system-lib" in kind:  # direct calls: statically linked against the runtime
        assert undefined["TVMFFIEnvModLookupFromImports"] == "U"
        assert undefined["TVMFFIFunctionCall"] == "U"
        assert "kiln_library_ctx" in src
    else:
        assert "void* __TVMFFIEnvModLookupFromImports = NULL;" in src
        assert "void* __TVMFFIFunctionCall = NULL;" in src
        assert undefined["TVMFFIEnvModLookupFromImports"] == "w"
        assert undefined["TVMFFIFunctionCall"] == "w"
        assert [n for n, how in undefined.items() if how == "U"] == [
            "TVMFFIErrorSetRaisedFromCStrParts"]


def test_a_tensor_kept_past_the_call_is_invalidated(target, registered):
    """The DLTensor a kernel lends to a callback lives on the kernel's stack: a reference kept
    after the call raises instead of reading freed memory."""
    kept = []
    registered("kiln_test.keep", lambda t: kept.append(t))
    func = _kernel("keep", lambda A: Evaluate(call_packed("kiln_test.keep", A)))
    compiler.build(func, target=target)["keep"](microruntime.nd.array(np.ones(4, "float32")))
    assert len(kept) == 1
    with pytest.raises(ValueError, match="lent to a Python callback for the duration of the call"):
        kept[0].numpy()
    with pytest.raises(ValueError, match="lent to a Python callback"):
        kept[0].shape
    assert "lent to a Python callback, no longer valid" in repr(kept)  # printing it is safe


def test_own_library_context_despite_a_global_one(target, registered, tmp_path):
    """A library loaded RTLD_GLOBAL that defines `__tvm_ffi__library_ctx` (a system library,
    say) must not capture the context of Kiln's libraries: each reads its own."""
    import ctypes

    src = tmp_path / "global_ctx.c"
    src.write_text("void* __tvm_ffi__library_ctx = 0;\nvoid* __TVMFFIFunctionCall = 0;\n")
    so = tmp_path / "global_ctx.so"
    subprocess.run(["cc", "-shared", "-fPIC", str(src), "-o", str(so)], check=True)
    ctypes.CDLL(str(so), mode=ctypes.RTLD_GLOBAL)
    registered("kiln_test.ctx_probe", lambda t: None)
    for round_ in range(2):  # each library must look the function up anew, in its own context
        seen = []
        microruntime.register_func("kiln_test.ctx_probe", lambda t, seen=seen, r=round_:
                                   seen.append(r), override=True)
        func = _kernel("probe", lambda A: Evaluate(call_packed("kiln_test.ctx_probe", A)))
        compiler.build(func, target=target)["probe"](microruntime.nd.array(np.ones(4, "float32")))
        assert seen == [round_]


def test_call_sites_of_one_name_share_one_file_scope_handle(registered):
    """Every call site of a name, in any function of the module, uses one
    `static void* <name>_packed`; names that would meet get distinct handles."""
    seen = []
    registered("kiln_test.share", lambda t: seen.append("dot"))
    registered("kiln_test_share", lambda t: seen.append("underscore"))
    f1 = _kernel("share1", lambda A: Evaluate(call_packed("kiln_test.share", A)))
    f2 = _kernel("share2", lambda A: seq(Evaluate(call_packed("kiln_test.share", A)),
                                         Evaluate(call_packed("kiln_test_share", A))))
    mod = compiler.ir.IRModule({"share1": f1, "share2": f2})
    tgt = Target("c")
    src = generate_c(host_passes(compiler.lower(mod), tgt), tgt)
    assert src.count("static void* kiln_test_share_packed = NULL;") == 1
    assert src.count("static void* kiln_test_share_packed_1 = NULL;") == 1
    assert src.count("&kiln_test_share_packed,") == 2
    assert src.count("&kiln_test_share_packed_1,") == 1
    m = compiler.build(mod, target="c")
    a = microruntime.nd.array(np.zeros(4, "float32"))
    m["share1"](a)
    m["share2"](a)
    m["share1"](a)
    assert seen == ["dot", "dot", "underscore", "dot"]
