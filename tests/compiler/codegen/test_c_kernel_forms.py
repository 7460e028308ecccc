"""The forms the C target prints compute code in, checked against numpy: bodies outlined with
`restrict` tensor-pointer parameters (parallel task bodies and the packed function's compute
part), buffer indices in 64-bit arithmetic, and vector statements as straight-line chunks of
the target's vector width (narrower chunks where that width does not divide the lanes, a loop
over chunks for very wide vectors, the lane form alone where no chunk fits). Each kernel also
compiles with -DKILN_NO_VECTOR_EXT (the portable lane form) to the same results, and
warning-free."""
import platform
import re

import numpy as np
import pytest

import compiler
import microruntime
from compiler import te, topi
from compiler.build import host_passes
from compiler.codegen.c_family import c as c_codegen
from compiler.contrib.cc import compile_source
from compiler.ir import IRModule
from compiler.ir.dtype import handle
from compiler.target import Target
from compiler.tir import (
    Broadcast,
    BufferLoad,
    BufferStore,
    For,
    ForKind,
    LetStmt,
    PrimFunc,
    Ramp,
    Var,
    cast,
    const,
    decl_buffer,
)


@pytest.fixture
def vector_bytes(monkeypatch):
    """Sets the vector register width (bytes) the C target prints chunks for."""
    def use(width):
        monkeypatch.setattr(c_codegen, "target_vector_bytes", lambda target, cc=None: width)
    return use


def lane_form_module(mod, tmp_path, name):
    """`mod` (lowered) compiled by the C target with -DKILN_NO_VECTOR_EXT, loaded."""
    tgt = Target("c")
    path = tmp_path / f"{name}.c"
    path.write_text(c_codegen.generate_c(host_passes(mod, tgt), tgt))
    obj = str(tmp_path / f"{name}.o")
    compile_source(str(path), obj, c_codegen.compile_flags(tgt) + ["-DKILN_NO_VECTOR_EXT"])
    return microruntime.load_module(obj)


def compiles_warning_free(src, tmp_path, *defines):
    path = tmp_path / "k.c"
    path.write_text(src)
    compile_source(str(path), str(tmp_path / "k.o"),
                   c_codegen.compile_flags(Target("c")) + ["-Wall", "-Wextra", "-Werror"]
                   + list(defines))


def run(mod, name, arrays):
    nd = [microruntime.nd.array(a) for a in arrays]
    mod[name](*nd)
    return nd[-1].numpy()


# ---- topi.x86.blocked_gemm (bench/gemm.py): register block, 32-lane vectors ----------------
def gemm(n, parallel):
    A = te.placeholder((n, n), name="A")
    B = te.placeholder((n, n), name="B")
    k = te.reduce_axis((0, n), name="k")
    C = te.compute((n, n), lambda i, j: te.sum(A[i, k] * B[k, j], axis=k), name="C")
    s = te.create_schedule(C.op)
    topi.x86.blocked_gemm(s, C, rows=4, cols=32, row_block=32, parallel=parallel)
    return compiler.lower(s, [A, B, C], name="mm")


@pytest.mark.parametrize("width", [16, 32, 64])
@pytest.mark.parametrize("parallel", [True, False], ids=["parallel", "serial"])
def test_gemm_chunks_match_numpy(tmp_path, vector_bytes, width, parallel):
    vector_bytes(width)
    n = 64
    rng = np.random.default_rng(0)
    a, b = rng.random((n, n), dtype="float32"), rng.random((n, n), dtype="float32")
    mod = compiler.build(gemm(n, parallel), target="c")
    src = mod.get_source("c")
    chunk = width // 4
    # 32 lanes: 32 / chunk straight-line statements per vector statement, no loop over chunks.
    assert f"kiln_float32x{chunk}_store(&C[" in src
    assert not re.search(r"lane\w* \+= ", src)
    assert all(f" + {offset})], " in src for offset in range(chunk, 32, chunk))
    np.testing.assert_allclose(run(mod, "mm", [a, b, np.zeros((n, n), "float32")]), a @ b,
                               rtol=1e-4)
    compiles_warning_free(src, tmp_path)
    compiles_warning_free(src, tmp_path, "-DKILN_NO_VECTOR_EXT")


@pytest.mark.parametrize("parallel", [True, False], ids=["parallel", "serial"])
def test_gemm_lane_form_matches_numpy(tmp_path, parallel):
    n = 64
    rng = np.random.default_rng(1)
    a, b = rng.random((n, n), dtype="float32"), rng.random((n, n), dtype="float32")
    mod = lane_form_module(gemm(n, parallel), tmp_path, "mm")
    np.testing.assert_allclose(run(mod, "mm", [a, b, np.zeros((n, n), "float32")]), a @ b,
                               rtol=1e-4)


def test_parallel_task_body_takes_restrict_pointers():
    src = compiler.build(gemm(64, True), target="c").get_source("c")
    body = re.search(r"static int32_t mm_compute_0_body\(([^)]*)\)", src).group(1)
    assert sorted(body.split(", ")) == sorted([
        "float* restrict C", "float* restrict A", "float* restrict B", "int task_id",
        "TVMParallelGroupEnv* penv"])
    assert "return mm_compute_0_body(closure->C, closure->A, closure->B, task_id, penv);" in src
    assert "return mm_compute(" in src  # the launch sits in the outlined compute part


def test_serial_compute_part_takes_restrict_pointers():
    src = compiler.build(gemm(64, False), target="c").get_source("c")
    params = re.search(r"static int32_t mm_compute\(([^)]*)\)", src).group(1)
    assert sorted(params.split(", ")) == ["float* restrict A", "float* restrict B",
                                          "float* restrict C"]
    assert re.search(r"return mm_compute\([ABC], [ABC], [ABC]\);", src)
    assert "_closure" not in src


def test_index_arithmetic_is_64_bit():
    src = compiler.build(gemm(64, False), target="c").get_source("c")
    compute = src[src.index("static int32_t mm_compute("):]
    indices = re.findall(r"&C\[(.*?)\], ", compute)
    assert indices and all("((int64_t)i_outer)" in ix for ix in indices)


# ---- tir.noalias -----------------------------------------------------------------------------
def scale(n=64, lanes=8):
    A = te.placeholder((n,), name="A")
    B = te.compute((n,), lambda i: A[i] * 2.0 + 1.0, name="B")
    s = te.create_schedule(B.op)
    _, inner = s[B].split(B.op.axis[0], factor=lanes)
    s[B].vectorize(inner)
    return compiler.lower(s, [A, B], name="scale")


def test_without_noalias_no_pointer_is_restrict():
    mod = scale()
    mod = IRModule({"scale": mod["scale"].with_attr("tir.noalias", False)})
    built = compiler.build(mod, target="c")
    assert "restrict" not in built.get_source("c")
    a = np.arange(64, dtype="float32")
    inplace = microruntime.nd.array(a)
    built["scale"](inplace, inplace)  # the output is the input: allowed without noalias
    np.testing.assert_array_equal(inplace.numpy(), a * 2 + 1)


def test_with_noalias_only_tensor_data_is_restrict():
    src = compiler.build(scale(), target="c").get_source("c")
    declared = re.findall(r"(\w+\*) restrict (\w+)", src)
    assert declared and {name for _, name in declared} == {"A", "B"}


# ---- vector widths that do and do not divide the lanes --------------------------------------
def vector_kernel(n, lanes, dtype):
    A = te.placeholder((n,), dtype, name="A")
    B = te.placeholder((n,), dtype, name="B")
    C = te.compute((n,), lambda i: A[i] * B[i] + A[i] - B[i], name="C")
    s = te.create_schedule(C.op)
    _, inner = s[C].split(C.op.axis[0], factor=lanes)
    s[C].vectorize(inner)
    return compiler.lower(s, [A, B, C], name="vk")


# (lanes, dtype, width) -> the chunk the C target prints (0: the lane form only)
CHUNKS = [
    (8, "float32", 32, 8),     # one register
    (32, "float32", 32, 8),    # four registers, straight-line
    (4, "float32", 64, 4),     # fewer lanes than a register holds
    (12, "float32", 32, 4),    # the width does not divide the lanes: gcd
    (6, "float32", 16, 2),
    (3, "float32", 32, 0),     # no chunk of two lanes or more divides 3
    (256, "float32", 32, 8),   # 32 chunks: a loop over the chunks
    (12, "float64", 32, 4),
    (6, "float64", 64, 2),
    (24, "int32", 32, 8),
    (10, "int64", 16, 2),
]


@pytest.mark.parametrize("lanes,dtype,width,chunk", CHUNKS,
                         ids=[f"{d}x{n}-w{w}" for n, d, w, _ in CHUNKS])
def test_vector_chunks_match_numpy(tmp_path, vector_bytes, lanes, dtype, width, chunk):
    vector_bytes(width)
    n = lanes * 8
    rng = np.random.default_rng(2)
    if dtype.startswith("int"):
        a = rng.integers(-1000, 1000, n).astype(dtype)
        b = rng.integers(-1000, 1000, n).astype(dtype)
    else:
        a, b = rng.random(n).astype(dtype), rng.random(n).astype(dtype)
    expected = a * b + a - b
    mod = compiler.build(vector_kernel(n, lanes, dtype), target="c")
    src = mod.get_source("c")
    if chunk:
        statements = re.findall(rf"kiln_{dtype}x{chunk}_store\(&C", src)
        if lanes // chunk > 16:
            assert len(statements) == 1 and f"+= {chunk})" in src
        else:
            assert len(statements) == lanes // chunk
    else:
        assert "KILN_VECTOR_EXT" not in src
    tol = {"float32": 1e-5, "float64": 1e-12}.get(dtype, 0)  # a*b + a may fuse into an fma
    np.testing.assert_allclose(run(mod, "vk", [a, b, np.zeros(n, dtype)]), expected, rtol=tol,
                               atol=tol)
    lanes_only = lane_form_module(vector_kernel(n, lanes, dtype), tmp_path, "vk")
    np.testing.assert_allclose(run(lanes_only, "vk", [a, b, np.zeros(n, dtype)]), expected,
                               rtol=tol, atol=tol)
    compiles_warning_free(src, tmp_path)


# ---- int32 index arithmetic near the int32 range --------------------------------------------
INT32_MAX = 2 ** 31 - 1


def shifted_copy(index_of):
    """B[i] = A[index_of(i, base)] for i < 64, with `base` an int32 argument; built by hand so
    no simplifier folds the index (the text reaches the C compiler as written)."""
    A, B = decl_buffer((64,), "float32", "A"), decl_buffer((64,), "float32", "B")
    pa, pb, base = Var("A", handle), Var("B", handle), Var("base", "int32")
    i = Var("i")
    body = For(i, const(0), const(64), ForKind.SERIAL,
               BufferStore(B, BufferLoad(A, (index_of(i, base),)), (i,)))
    func = PrimFunc((pa, pb, base), body, ((pa, A), (pb, B)),
                    {"global_symbol": "copy", "tir.noalias": True})
    return IRModule({"copy": func})


INDICES = {
    # i + base stays below INT32_MAX: int32 and int64 arithmetic agree
    "near_max": (lambda i, base: (i + base) - base, INT32_MAX - 64),
    # i - base stays above INT32_MIN
    "near_min": (lambda i, base: (i - base) + base, INT32_MAX - 64),
    # a product near the range, divided back (truncating division of non-negatives)
    "product": (lambda i, base: (i * base) // base, 2 ** 25 - 1),
    # uint32 arithmetic wraps by definition and is not widened: (i + 1 + base) mod 2^32 == i
    "uint32_wraps": (lambda i, base: cast("int32", cast("uint32", i + 1) + cast("uint32", base)),
                     -1),
}


@pytest.mark.parametrize("name", sorted(INDICES))
def test_int32_index_arithmetic_near_the_range(tmp_path, name):
    index_of, base = INDICES[name]
    mod = shifted_copy(index_of)
    a = np.arange(1, 65, dtype="float32")
    with compiler.transform.PassContext(disabled_pass=["tir.Simplify"]):  # keep it as written
        built = compiler.build(mod, target="c")
    assert "((int64_t)base)" in built.get_source("c")
    for m in (built, lane_form_module(mod, tmp_path, "copy")):
        B = microruntime.nd.array(np.zeros(64, "float32"))
        m["copy"](microruntime.nd.array(a), B, base)
        np.testing.assert_array_equal(B.numpy(), a)


# ---- the vector width of a target --------------------------------------------------------------
needs_x86 = pytest.mark.skipif(platform.machine().lower() not in ("x86_64", "amd64"),
                               reason="x86 CPU names")


@needs_x86
@pytest.mark.parametrize("target,width", [("c -mcpu=x86-64", 16), ("c -mcpu=haswell", 32),
                                          ("c -mcpu=skylake-avx512", 64),
                                          ("c -mcpu=haswell -mattr=-avx", 16)])
def test_target_vector_bytes_from_the_compiler(target, width):
    assert c_codegen.target_vector_bytes(Target(target)) == width


def test_target_vector_bytes_without_a_compiler():
    assert c_codegen.target_vector_bytes(Target("c"), cc="kiln-no-such-cc") == 16


def test_vector_variable_in_chunks(tmp_path, vector_bytes):
    """A vector LetStmt is an array of its lanes; its chunks load from constant offsets."""
    vector_bytes(32)
    A, B = decl_buffer((64,), "float32", "A"), decl_buffer((64,), "float32", "B")
    pa, pb = Var("A", handle), Var("B", handle)
    i, v = Var("i"), Var("v", "float32x16")
    idx = Ramp(i * 16, const(1), 16)
    body = For(i, const(0), const(4), ForKind.SERIAL,
               LetStmt(v, BufferLoad(A, (idx,)) * Broadcast(const(2.0), 16),
                       BufferStore(B, v + v, (idx,))))
    func = PrimFunc((pa, pb), body, ((pa, A), (pb, B)),
                    {"global_symbol": "twice", "tir.noalias": True})
    mod = IRModule({"twice": func})
    built = compiler.build(mod, target="c")
    assert "kiln_float32x8_load(&v[8])" in built.get_source("c")
    a = np.arange(64, dtype="float32")
    for m in (built, lane_form_module(mod, tmp_path, "twice")):
        np.testing.assert_array_equal(run(m, "twice", [a, np.zeros(64, "float32")]), a * 4)
