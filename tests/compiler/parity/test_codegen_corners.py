"""Code generation corners of classic TVM (v0.12's test_target_codegen_llvm and its pass tests):
LLVM intrinsics by ID, the tir.noalias / tir.instrument_bound_checkers / tir.disable_assert
configs, Shuffle, atomic_add, bfloat16, alignment, DWARF, several functions in one build,
target-cpu/target-features, and one `likely` guard per uneven split."""
import re
import shutil
import subprocess

import numpy as np
import pytest

import microruntime as runtime
from compiler import build, lower, te, tir
from compiler.ir.errors import BuildError, UnsupportedOpError
from compiler.target import Target, codegen
from compiler.tir.functor import post_order_visit
from compiler.tir.transform.skip_assert import skip_assert
from compiler.transform import PassContext

llvm = pytest.importorskip("llvmlite.binding")
TARGETS = ["llvm", "c"]


def _calls(stmt, op):
    found = []
    post_order_visit(stmt, lambda n: found.append(n) if isinstance(n, tir.Call)
                     and n.op == op else None)
    return found


def _elementwise(f, dtype="int32", n=8):
    """te.extern computing B[i] = f(A[i]) with the ir_builder."""
    def body(ins, outs):
        ib = tir.ir_builder.create()
        a, b = ib.buffer_ptr(ins[0]), ib.buffer_ptr(outs[0])
        with ib.for_range(0, n, name="i") as i:
            b[i] = f(a[i])
        return ib.get()

    A = te.placeholder((n,), dtype=dtype, name="A")
    B = te.extern((n,), [A], body, name="B", dtype=dtype)
    return te.create_schedule(B.op), [A, B]


# ---- intrinsic IDs --------------------------------------------------------------------------
def test_intrinsic_ids_round_trip():
    name = "llvm.x86.sse2.pmadd.wd"
    ident = codegen.llvm_lookup_intrinsic_id(name)
    assert ident > 0 and codegen.llvm_get_intrinsic_name(ident) == name
    # a type suffix names the overloaded base intrinsic
    assert codegen.llvm_lookup_intrinsic_id("llvm.ctpop.v8i8") == \
        codegen.llvm_lookup_intrinsic_id("llvm.ctpop") > 0
    assert codegen.llvm_get_intrinsic_name(codegen.llvm_lookup_intrinsic_id("llvm.fma")) \
        == "llvm.fma"
    assert codegen.llvm_lookup_intrinsic_id("llvm.no.such.intrinsic") == 0
    assert codegen.llvm_version_major() == llvm.llvm_version_info[0] >= 5


def test_call_llvm_intrin_builds_a_call_node():
    x = tir.Var("x", "int32")
    call = tir.call_llvm_pure_intrin("int32", "llvm.ctlz", tir.const(2, "uint32"), x,
                                     tir.const(0, "int1"))
    assert call.op == "tir.call_llvm_pure_intrin" and call.dtype == "int32"
    assert call.args[0].value == codegen.llvm_lookup_intrinsic_id("llvm.ctlz")
    assert call.args[1].value == 2 and call.args[2] is x
    with pytest.raises(Exception, match="not an intrinsic"):
        tir.call_llvm_intrin("int32", "llvm.no.such.intrinsic", tir.const(1, "uint32"), x)


def test_overloaded_ctpop_and_ctlz_run():
    s, args = _elementwise(lambda v: tir.call_llvm_pure_intrin(
        "int32", "llvm.ctpop", tir.const(1, "uint32"), v) * 100 + tir.call_llvm_pure_intrin(
        "int32", "llvm.ctlz", tir.const(2, "uint32"), v, tir.const(0, "int1")))
    f = build(s, args, target="llvm")
    a = np.array([0, 1, 3, 7, 255, 1 << 20, -1, 12345], "int32")
    b = runtime.nd.empty((8,), "int32")
    f(runtime.nd.array(a), b)
    pop = [bin(int(v) & 0xFFFFFFFF).count("1") for v in a]
    clz = [32 - (int(v) & 0xFFFFFFFF).bit_length() for v in a]
    np.testing.assert_array_equal(b.numpy(), np.array(pop) * 100 + np.array(clz))
    ll = f.get_source("ll")
    assert re.search(r"@llvm\.ctpop\.(v\d+)?i32", ll) and re.search(r"@llvm\.ctlz\.", ll)


def test_vector_ctpop_by_suffixed_name():
    """As classic test_llvm_lookup_intrin: the v8i8 overload from a uint8x8 pointer."""
    ib = tir.ir_builder.create()
    A = ib.pointer("uint8x8", name="A")
    z = tir.const(0, "int32")
    A[z] = tir.call_llvm_pure_intrin("uint8x8", "llvm.ctpop.v8i8", tir.const(1, "uint32"),
                                     A[z])
    mod = _module(tir.PrimFunc([A], ib.get()).with_attr("global_symbol", "main"))
    m = build(mod, None, "llvm")
    a = runtime.nd.array(np.array([0, 1, 3, 7, 15, 31, 63, 255], "uint8"))
    m["main"](a)
    np.testing.assert_array_equal(a.numpy(), [0, 1, 2, 3, 4, 5, 6, 8])


def _module(func):
    from compiler.ir import IRModule

    return IRModule.from_expr(func)


def test_fma_on_vectors():
    n = 16
    A = te.placeholder((n,), name="A")
    B = te.compute((n,), lambda i: tir.call_llvm_pure_intrin(
        "float32", "llvm.fma", tir.const(3, "uint32"), A[i], A[i], tir.const(1.0, "float32")),
        name="B")
    s = te.create_schedule(B.op)
    _, inner = s[B].split(B.op.axis[0], factor=4)
    s[B].vectorize(inner)
    f = build(s, [A, B], target="llvm")
    a = np.arange(n, dtype="float32")
    b = runtime.nd.empty((n,), "float32")
    f(runtime.nd.array(a), b)
    np.testing.assert_allclose(b.numpy(), a * a + 1)
    assert re.search(r"llvm\.fma\.(v4f32|f32)|fmuladd|vfmadd", f.get_source("ll") +
                     f.get_source("asm"))


def test_intrinsic_with_types_it_does_not_take_is_a_build_error():
    s, args = _elementwise(lambda v: tir.call_llvm_pure_intrin(
        "int32", "llvm.ctpop", tir.const(1, "uint32"), tir.cast("int64", v)))
    with pytest.raises(BuildError, match="types it does not take"):
        build(s, args, target="llvm")


def test_llvm_intrinsic_on_the_c_target_is_unsupported():
    s, args = _elementwise(lambda v: tir.call_llvm_pure_intrin(
        "int32", "llvm.ctpop", tir.const(1, "uint32"), v))
    with pytest.raises(UnsupportedOpError, match="only the llvm target"):
        build(s, args, target="c")


def test_prefetch_of_a_pointer_parameter():
    ib = tir.ir_builder.create()
    A = ib.pointer("float32", name="A")
    address = tir.call_intrin("handle", "tir.address_of", A[0])
    ib.emit(tir.Evaluate(tir.Call("int32", "tir.prefetch", [address, 0, 3, 1])))
    m = build(_module(tir.PrimFunc([A], ib.get()).with_attr("global_symbol", "prefetch")),
              None, "llvm")
    m["prefetch"](runtime.nd.array(np.zeros(4, "float32")))
    assert "llvm.prefetch" in m.get_source("ll")


@pytest.mark.parametrize("target", TARGETS)
def test_prefetch_then_copy(target):
    def fetch_and_copy(v):
        return v  # the copy; the prefetch is emitted by the extern body below

    def body(ins, outs):
        ib = tir.ir_builder.create()
        a, b = ib.buffer_ptr(ins[0]), ib.buffer_ptr(outs[0])
        address = tir.call_intrin("handle", "tir.address_of", a[0])
        ib.emit(tir.Evaluate(tir.call_intrin("int32", "tir.prefetch", address, 0, 3, 1)))
        with ib.for_range(0, 8, name="i") as i:
            b[i] = fetch_and_copy(a[i])
        return ib.get()

    A = te.placeholder((8,), name="A")
    B = te.extern((8,), [A], body, name="B", dtype="float32")
    f = build(te.create_schedule(B.op), [A, B], target=target)
    a = np.arange(8, dtype="float32")
    b = runtime.nd.empty((8,), "float32")
    f(runtime.nd.array(a), b)
    np.testing.assert_array_equal(b.numpy(), a)
    text = f.get_source("ll") if target == "llvm" else f.get_source()
    assert ("llvm.prefetch" in text) if target == "llvm" else ("__builtin_prefetch" in text)


# ---- PassContext configs --------------------------------------------------------------------
def _add_one(n=16):
    A = te.placeholder((n,), name="A")
    B = te.compute((n,), lambda i: A[i] + 1.0, name="B")
    return te.create_schedule(B.op), [A, B]


@pytest.mark.parametrize("target", TARGETS)
def test_noalias_config(target):
    def source(noalias):
        s, args = _add_one()
        with PassContext(config={"tir.noalias": noalias}):
            f = build(s, args, target=target)
        a = np.arange(16, dtype="float32")
        b = runtime.nd.empty((16,), "float32")
        f(runtime.nd.array(a), b)
        np.testing.assert_allclose(b.numpy(), a + 1)
        return f.get_source("ll") if target == "llvm" else f.get_source()

    marker = "kiln buffers" if target == "llvm" else "restrict"
    assert marker in source(True)
    assert marker not in source(False)


@pytest.mark.parametrize("target", TARGETS)
def test_bound_checkers_raise_on_an_nd_access_out_of_range(target):
    n = te.size_var("n")
    A = te.placeholder((n, 4), name="A")
    B = te.compute((n, 4), lambda i, j: A[i, j + 1] * 2.0, name="B")
    s = te.create_schedule(B.op)
    with PassContext(config={"tir.instrument_bound_checkers": True}):
        f = build(s, [A, B], target=target)
        mod = lower(s, [A, B])
    assert "out of the bounds" in str(mod)
    a = runtime.nd.array(np.ones((3, 4), "float32"))
    with pytest.raises(RuntimeError, match=r"index 12 is out of the bounds \[0, 12\) of "
                                           r"buffer 'A'"):
        f(a, runtime.nd.empty((3, 4), "float32"))
    # without the config the same build has no check
    assert "out of the bounds" not in str(lower(s, [A, B]))


@pytest.mark.parametrize("target", TARGETS)
def test_bound_checkers_in_bounds_rank_zero(target):
    n = 64
    with PassContext(config={"tir.instrument_bound_checkers": True}):
        A = te.placeholder((n,), name="A")
        scale = te.placeholder((), name="scale")
        k = te.reduce_axis((0, n), name="k")
        C = te.compute((), lambda: te.sum(A[k] * scale(), axis=k), name="C")
        D = te.compute((), lambda: C() + 1)
        s = te.create_schedule(D.op)
        f = build(s, [A, scale, D], target=target)
    a = np.random.randint(0, 2, size=(n,)).astype("float32")
    d = runtime.nd.empty((), "float32")
    f(runtime.nd.array(a), runtime.nd.array(np.array(3, "float32")), d)
    np.testing.assert_allclose(d.numpy(), a.sum() * 3 + 1)


@pytest.mark.parametrize("target", TARGETS)
def test_bound_checkers_rank_zero_output_with_an_out_of_range_input(target):
    n = 64
    with PassContext(config={"tir.instrument_bound_checkers": True}):
        A = te.placeholder((n,), name="A")
        scale = te.placeholder((), name="scale")
        k = te.reduce_axis((0, n), name="k")
        C = te.compute((), lambda: te.sum(A[k + k + k] * scale(), axis=k), name="C")
        D = te.compute((), lambda: C() + 1)
        s = te.create_schedule(D.op)
        f = build(s, [A, scale, D], target=target)
    with pytest.raises(RuntimeError, match="out of the bounds .* of buffer 'A'"):
        f(runtime.nd.array(np.ones(n, "float32")), runtime.nd.array(np.array(1, "float32")),
          runtime.nd.empty((), "float32"))


def test_disable_assert_drops_every_assert():
    s, args = _add_one()
    with PassContext(config={"tir.disable_assert": True}):
        f = build(s, args, target="c")
    assert "Mismatched" not in f.get_source() and "TypeError" not in f.get_source()
    assert "TypeError" in build(s, args, target="c").get_source()
    x = tir.Var("x", "int32")
    body = tir.AssertStmt(x > 0, "ValueError", ("x",), tir.AssertStmt(
        x < 9, "ValueError", ("y",), tir.Evaluate(x)))
    after = skip_assert(_module(tir.PrimFunc([x], body)))
    assert isinstance(after["main"].body, tir.Evaluate)


# ---- Shuffle --------------------------------------------------------------------------------
def _reverse_b(func, *_):
    """Phase-1 pass: the store loop becomes one vector store whose B index is a Shuffle."""
    def rewrite(stmt):
        if isinstance(stmt, tir.For):
            store = stmt.body
            idx = tir.Ramp(tir.const(0, "int32"), tir.const(1, "int32"), 8)
            rev = tir.Shuffle([idx], [tir.const(i, "int32") for i in range(7, -1, -1)])
            a = tir.BufferLoad(store.value.a.buffer, [idx])
            b = tir.BufferLoad(store.value.b.buffer, [rev])
            return tir.BufferStore(store.buffer, a + b, [idx])
        return stmt

    return func.with_body(rewrite(func.body))


@pytest.mark.parametrize("target", TARGETS)
def test_shuffle_reverses_an_index_vector(target):
    a = te.placeholder((8,), "int32", name="a")
    b = te.placeholder((8,), "int32", name="b")
    c = te.compute((8,), lambda x: a[x] + b[7 - x], name="c")
    s = te.create_schedule(c.op)
    pass_ = tir.transform.prim_func_pass(_reverse_b, opt_level=0, name="reverse_b")
    with PassContext(config={"tir.add_lower_pass": [(1, pass_)]}):
        assert "Shuffle" in str(lower(s, [a, b, c]))
        f = build(s, [a, b, c], target=target)
    out = runtime.nd.empty((8,), "int32")
    f(runtime.nd.array(np.arange(1, 9, dtype="int32")),
      runtime.nd.array(np.arange(8, 0, -1, dtype="int32")), out)
    np.testing.assert_array_equal(out.numpy(), np.arange(1, 9) * 2)


@pytest.mark.parametrize("target", TARGETS)
def test_scalars_concatenated_into_a_vector(target):
    x, y = tir.Var("x", "int32"), tir.Var("y", "int32")
    z = tir.decl_buffer((1,), "int32x2", name="z")
    s = tir.Shuffle([x, y], [0, 1])
    assert s.dtype == "int32x2"
    assert tir.shuffle.concat(x, y).dtype == "int32x2"
    func = tir.PrimFunc([x, y, z], tir.BufferStore(z, s, [tir.const(0, "int32")]))
    with PassContext(config={"tir.disable_assert": True}):
        m = build(_module(func.with_attr("global_symbol", "concat")), target=target)
    out = runtime.nd.empty((1,), "int32x2")
    m["concat"](3, 4, out)
    np.testing.assert_array_equal(out.numpy().reshape(-1), [3, 4])


def test_shuffle_rejects_an_index_out_of_range():
    x = tir.Var("x", "int32")
    with pytest.raises(Exception, match="not a constant lane"):
        tir.Shuffle([x], [1])


# ---- atomics --------------------------------------------------------------------------------
@pytest.mark.parametrize("target", TARGETS)
def test_atomic_add_from_a_parallel_loop(target):
    n = 100

    def body(ins, _):
        ib = tir.ir_builder.create()
        a = ib.buffer_ptr(ins[0])
        old = ib.allocate("int32", (1,), name="old", scope="local")
        with ib.for_range(0, n, name="i", kind="parallel"):
            address = tir.call_intrin("handle", "tir.address_of", a[0])
            old[0] = tir.call_intrin("int32", "tir.atomic_add", address, tir.const(1, "int32"))
        return ib.get()

    A = te.placeholder((n,), dtype="int32", name="A")
    C = te.extern((n,), [A], body, name="C", dtype="int32")
    s = te.create_schedule(C.op)
    f = build(s, [A, C], target=target)
    a = runtime.nd.array(np.zeros(n, "int32"))
    f(a, runtime.nd.empty((n,), "int32"))
    expected = np.zeros(n, "int32")
    expected[0] = n
    np.testing.assert_array_equal(a.numpy(), expected)
    if target == "llvm":
        assert "atomicrmw add" in f.get_source("ll")


# ---- bfloat16 -------------------------------------------------------------------------------
def _bf16(x):
    """float32 -> nearest bfloat16 (ties to even), as float32."""
    bits = x.astype("float32").view("uint32")
    bits = (bits + 0x7FFF + ((bits >> 16) & 1)) & 0xFFFF0000
    return bits.astype("uint32").view("float32")


@pytest.mark.parametrize("vectorize", [True, False])
def test_bfloat16_storage_float32_arithmetic(vectorize):
    A = te.placeholder((32,), dtype="bfloat16", name="A")
    B = te.placeholder((32,), dtype="bfloat16", name="B")
    d = te.compute((32,), lambda x: A[x] + B[x], name="d")
    s = te.create_schedule(d.op)
    if vectorize:
        s[d].vectorize(d.op.axis[0])
    f = build(s, [A, B, d], target="llvm")
    rng = np.random.default_rng(122)
    va, vb = _bf16(rng.random(32, dtype="float32")), _bf16(rng.random(32, dtype="float32"))
    a, b = runtime.nd.empty((32,), "bfloat16"), runtime.nd.empty((32,), "bfloat16")
    a.copyfrom(va)
    b.copyfrom(vb)
    c = runtime.nd.empty((32,), "bfloat16")
    f(a, b, c)
    np.testing.assert_array_equal(c.numpy().astype("float32"), _bf16(va + vb))
    ll = f.get_source("ll")
    assert re.search(r"fadd[^\n]*float", ll) and "i16" in ll  # bits in memory, f32 arithmetic


# ---- alignment, debug information, several functions, target attributes -----------------------
def test_alignment_of_vector_accesses():
    A = te.placeholder((1024,), name="A")
    B = te.compute(A.shape, lambda i: A[i] * 3, name="B")
    s = te.create_schedule(B.op)
    _, tx = s[B].split(B.op.axis[0], factor=8)
    s[B].vectorize(tx)
    ll = build(s, [A, B], "llvm", name="test_alignment").get_source("ll")
    vector = [line for line in ll.splitlines() if "x float>" in line and " align " in line]
    assert vector and all("align 32" in line for line in vector)

    def load_aligns(buffer):
        f = build(s, [A, B], "llvm", binds={A: buffer})
        a = np.arange(1024, dtype="float32")
        b = runtime.nd.empty((1024,), "float32")
        f(runtime.nd.array(a), b)
        np.testing.assert_allclose(b.numpy(), a * 3)
        return [int(m) for m in re.findall(r"load <8 x float>[^\n]*align (\d+)",
                                           f.get_source("ll"))]

    # a buffer of 16-byte data_alignment: no more than that
    aligns = load_aligns(tir.decl_buffer((1024,), "float32", name="A", data_alignment=16))
    assert aligns and set(aligns) == {16}
    # a symbolic offset, a multiple of 2 elements: no more than 8 bytes
    aligns = load_aligns(tir.decl_buffer((1024,), "float32", name="A", offset_factor=2))
    assert aligns and max(aligns) <= 8


def _two_functions():
    n = 1024
    A = te.placeholder((n,), name="A")
    B = te.placeholder((n,), name="B")
    C = te.compute(A.shape, lambda *i: A(*i) + B(*i), name="C")
    s = te.create_schedule(C.op)
    xo, xi = s[C].split(C.op.axis[0], factor=4)
    s[C].parallel(xo)
    s[C].vectorize(xi)
    return [lower(s, [A, B, C], name="fadd1"), lower(s, [A, B, C], name="fadd2")]


@pytest.mark.parametrize("target", TARGETS)
def test_several_functions_in_one_build(target):
    m = build(_two_functions(), target)
    a, b = np.random.rand(1024).astype("float32"), np.random.rand(1024).astype("float32")
    for name in ("fadd1", "fadd2"):
        c = runtime.nd.empty((1024,), "float32")
        m[name](runtime.nd.array(a), runtime.nd.array(b), c)
        np.testing.assert_allclose(c.numpy(), a + b)


def test_dwarf_debug_information(tmp_path):
    tool = shutil.which("objdump") or pytest.skip("objdump is not installed")
    m = build(_two_functions(), "llvm")
    path = str(tmp_path / "lib.o")          # the object file carries the DWARF, as TVM's
    m.save(path)
    sections = subprocess.run([tool, "-h", path], capture_output=True, text=True).stdout
    assert ".debug_info" in sections
    dwarf = subprocess.run([tool, "--dwarf=info", path], capture_output=True, text=True).stdout
    assert re.search(r"DW_AT_name.*fadd1", dwarf) and re.search(r"DW_AT_name.*fadd2", dwarf)
    assert "!DISubprogram" in m.get_source("ll")
    lib = str(tmp_path / "lib.so")          # an exported library leaves it out
    m.export_library(lib)
    sections = subprocess.run([tool, "-h", lib], capture_output=True, text=True).stdout
    assert ".text" in sections and ".debug_info" not in sections


def test_target_cpu_and_features_on_every_emitted_function():
    n = te.var("n")
    A = te.placeholder((n,), name="A")
    B = te.compute((n,), lambda i: A[i], name="B")
    C = te.compute((n,), lambda i: B[i] + 1.0, name="C")
    s = te.create_schedule(C.op)
    xo, _ = s[C].split(C.op.axis[0], nparts=2)
    s[C].parallel(xo)
    spec = "llvm -mcpu=skylake -mattr=+avx512f"
    ll = build(s, [A, B, C, n], target=Target(spec, host=spec), name="test_func").get_source()
    groups = dict(re.findall(r"^attributes #(\d+) = \{(.*)\}", ll, re.MULTILINE))
    defined = re.findall(r"^define[^@]*@([\w.]+)\(.*#(\d+)", ll, re.MULTILINE)
    ours = [(f, g) for f, g in defined if not f.startswith("__kiln_")]
    names = [f for f, _ in ours]
    assert "__tvm_ffi_test_func" in names and any("compute" in f for f in names)
    for _, group in ours:
        assert '"target-cpu"="skylake"' in groups[group]
        assert re.search(r'"target-features"="[^"]*\+avx512f', groups[group])


# ---- uneven split ---------------------------------------------------------------------------
def test_split_uneven_unique_likely():
    a = te.placeholder((16, 16), name="a")
    b = te.placeholder((16, 16), name="b")
    c = te.compute((16, 16), lambda x, y: a[x, y] + b[x, y], name="c")
    x, _ = c.op.axis
    s = te.create_schedule(c.op)
    s[c].split(x, 5)
    body = lower(s, [a, b, c])["main"].body
    guard = body.body.body
    assert isinstance(guard, tir.stmt.IfThenElse) and isinstance(guard.then_case, tir.For)
    assert len(_calls(body, "tir.likely")) == 1
    assert guard.condition.op == "tir.likely"
    f = build(s, [a, b, c], target="llvm")
    av, bv = np.random.rand(16, 16).astype("float32"), np.random.rand(16, 16).astype("float32")
    out = runtime.nd.empty((16, 16), "float32")
    f(runtime.nd.array(av), runtime.nd.array(bv), out)
    np.testing.assert_allclose(out.numpy(), av + bv)
