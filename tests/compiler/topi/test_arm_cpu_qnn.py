"""topi.arm_cpu: the integer convolution over 16-bit pairs (SMLAD), the grouped convolution's
schedule and requantize in single precision, for Cortex-M targets.

- qnn_conv2d_nchw_smlad's compute (dot2: SMLAD's sum in plain arithmetic) equals numpy's integer
  convolution bit for bit, built for this machine: int8 and uint8 data and weights, zero points
  per tensor and per channel, odd and even channel counts, padding, strides, dilation.
- Scheduled for a Cortex-M target with the DSP extension, each step of the reduction is SMLAD:
  `llvm.arm.smlad` in the llvm target's IR, `__builtin_arm_smlad` (no prototype: the C compiler
  knows it) in the c target's source, and the SMLAD instruction in the object GCC makes of it;
  that C source, compiled here with SMLAD written out as a macro, equals numpy (tiles of
  output channels and of pixels). (tests/apps/test_cortex_m.py runs it under QEMU against
  ONNX Runtime.)
- Scheduled for a c target with MVE (-mcpu=cortex-m55), each step of the reduction is four words
  (eight 16-bit values) by `kiln_mve_dot16`, which the prelude defines by `vmladavaq_s16` under
  `__ARM_FEATURE_MVE` (GCC's assembly for the M55 has VMLADAVA.S16; the M4 build neither the
  call nor the instruction); the same source compiled here (the plain-C definition) equals
  numpy, word counts that are not a multiple of four padded with zero words.
- requantize_cortex_m equals topi.nn.qnn.requantize (the double formula) bit for bit, on values
  placed at and beside half-integers, large values, per-channel multipliers, int8 and uint8;
  quantize_cortex_m equals topi.nn.qnn.quantize likewise.
- which targets are Cortex-M and have the DSP extension; -mattr stays off GCC's command line on
  Arm (GCC spells extensions on the CPU name).
"""
import os
import shutil
import subprocess

import numpy as np
import pytest

import compiler
import microruntime as runtime
from compiler import build, te
from compiler.build import host_passes
from compiler.codegen.c_family.c import compile_flags, generate_c
from compiler.target import Target
from compiler.topi.arm_cpu import (
    has_dsp,
    has_mve,
    is_cortex_m,
    qnn_conv2d_nchw_smlad,
    quantize_cortex_m,
    requantize_cortex_m,
    schedule_qnn_conv2d_nchw_smlad,
    schedule_qnn_group_conv2d_nchw,
)
from compiler.topi.nn.qnn import qnn_conv2d_nchw, quantize, requantize
from compiler.topi.utils import get_const_tuple

M4_C = "c -mtriple=thumbv7em-none-eabihf -mcpu=cortex-m4"
M4_LLVM = "llvm -mtriple=thumbv7em-none-eabihf -mcpu=cortex-m4"
M55_C = "c -mtriple=thumbv8.1m.main-none-eabihf -mcpu=cortex-m55"


def reference_conv(x, w, zx, zw, stride, pad, dilation=1, groups=1):
    """int64 sum((x - zx) * (w - zw)), the padding holding zx; zw scalar or per channel."""
    n, c, h, wd = x.shape
    o, cg, kh, kw = w.shape
    zw = np.broadcast_to(np.asarray(zw, np.int64), (o,))
    xc = np.pad(x.astype(np.int64) - zx, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    wc = w.astype(np.int64) - zw[:, None, None, None]
    oh = (h + 2 * pad - dilation * (kh - 1) - 1) // stride + 1
    ow = (wd + 2 * pad - dilation * (kw - 1) - 1) // stride + 1
    out = np.zeros((n, o, oh, ow), np.int64)
    og = o // groups
    for i in range(kh):
        for j in range(kw):
            y0, x0 = i * dilation, j * dilation
            patch = xc[:, :, y0:y0 + stride * (oh - 1) + 1:stride,
                       x0:x0 + stride * (ow - 1) + 1:stride]
            for g in range(groups):
                out[:, g * og:(g + 1) * og] += np.einsum(
                    "nchw,oc->nohw", patch[:, g * cg:(g + 1) * cg],
                    wc[g * og:(g + 1) * og, :, i, j])
    return out


# (data shape, weight shape, stride, pad, dilation, data dtype, weight dtype, zx, zw per channel)
CONVS = [
    ((1, 4, 7, 7), (8, 4, 3, 3), 1, 1, 1, "int8", "int8", -5, False),
    ((1, 3, 9, 8), (6, 3, 3, 3), 2, 1, 1, "int8", "int8", 7, True),      # odd channels
    ((1, 1, 12, 6), (4, 1, 4, 2), 2, 0, 1, "uint8", "uint8", 128, True),  # one channel
    ((2, 6, 8, 8), (5, 6, 1, 1), 1, 0, 1, "int8", "int8", 0, False),      # 1x1, batch 2
    ((1, 5, 9, 9), (4, 5, 3, 3), 1, 2, 2, "uint8", "int8", 3, True),      # dilation
]


def _inputs(xshape, wshape, xdtype, wdtype, per_channel, seed):
    rng = np.random.default_rng(seed)
    lo, hi = (-128, 128) if xdtype == "int8" else (0, 256)
    x = rng.integers(lo, hi, xshape).astype(xdtype)
    lo, hi = (-128, 128) if wdtype == "int8" else (0, 256)
    w = rng.integers(lo, hi, wshape).astype(wdtype)
    zw = rng.integers(lo, hi, wshape[0]).astype("int32") if per_channel else np.int32(0)
    return x, w, zw


@pytest.mark.parametrize("case", CONVS, ids=[f"conv{i}" for i in range(len(CONVS))])
def test_smlad_conv_compute_equals_numpy(case):
    xshape, wshape, stride, pad, dil, xdtype, wdtype, zx, per_channel = case
    x, w, zw = _inputs(xshape, wshape, xdtype, wdtype, per_channel, sum(xshape))
    X = te.placeholder(xshape, xdtype, name="X")
    W = te.placeholder(wshape, wdtype, name="W")
    ZW = te.placeholder((wshape[0],), "int32", name="ZW") if per_channel else 0
    C = qnn_conv2d_nchw_smlad(X, W, zx, ZW, stride, pad, dil)
    args = [X, W] + ([ZW] if per_channel else []) + [C]
    f = build(te.create_schedule(C.op), args, target="llvm")
    out = runtime.nd.empty(get_const_tuple(C.shape), "int32")
    f(*[runtime.nd.array(a) for a in ([x, w] + ([zw] if per_channel else []))], out)
    np.testing.assert_array_equal(out.numpy(), reference_conv(x, w, zx, zw, stride, pad, dil))


def test_smlad_conv_rejects_wrong_inputs():
    X = te.placeholder((1, 4, 6, 6), "float32", name="X")
    W = te.placeholder((8, 4, 3, 3), "int8", name="W")
    with pytest.raises(compiler.ir.errors.IRError, match="int8 or uint8"):
        qnn_conv2d_nchw_smlad(X, W, 0, 0, 1, 1, 1)
    X = te.placeholder((1, 4, 6, 6), "int8", name="X")
    W = te.placeholder((8, 2, 3, 3), "int8", name="W")
    with pytest.raises(compiler.ir.errors.IRError, match="groups 1 only"):
        qnn_conv2d_nchw_smlad(X, W, 0, 0, 1, 1, 1)


def _smlad_kernel(target, oc=8):
    X = te.placeholder((1, 4, 6, 6), "int8", name="X")
    W = te.placeholder((oc, 4, 3, 3), "int8", name="W")
    # 18 words: padded to 20 for MVE (as the strategy does)
    C = qnn_conv2d_nchw_smlad(X, W, 5, 0, 1, 1, 1, 4 if has_mve(target) else 1)
    out = requantize(C, 0.01, 3)
    with Target(target):
        s = schedule_qnn_conv2d_nchw_smlad(out, Target(target))
    return s, [X, W, out]


def test_smlad_schedule_llvm_calls_the_intrinsic():
    s, args = _smlad_kernel(M4_LLVM)
    src = build(s, args, target=M4_LLVM).get_source()
    assert "@llvm.arm.smlad(" in src
    # 8 output channels in tiles of 4: four SMLADs per column word, two tiles per pixel
    assert src.count("call i32 @llvm.arm.smlad(") >= 4


def test_smlad_schedule_c_calls_the_builtin(tmp_path):
    s, args = _smlad_kernel(M4_C, oc=6)   # 6 output channels: tiles of 3
    tgt = Target(M4_C)
    src = generate_c(host_passes(compiler.lower(s, args), tgt), tgt)
    assert "__builtin_arm_smlad(" in src
    assert "(__builtin_arm_smlad)" not in src   # no prototype of a builtin
    if shutil.which("arm-none-eabi-gcc") is None:
        pytest.skip("arm-none-eabi-gcc not installed (apt-get install gcc-arm-none-eabi)")
    path = tmp_path / "kernel.c"
    path.write_text(src)
    inc = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(
        os.path.abspath(__file__))))), "microruntime", "include")
    obj = tmp_path / "kernel.o"
    subprocess.run(["arm-none-eabi-gcc"] + compile_flags(tgt, "arm-none-eabi-gcc") +
                   ["-std=c99", "-I", inc, "-c", str(path), "-o", str(obj)], check=True)
    dis = subprocess.run(["arm-none-eabi-objdump", "-d", str(obj)], stdout=subprocess.PIPE,
                         text=True, check=True).stdout
    assert "\tsmlad\t" in dis
    assert "__builtin_arm_smlad" not in dis   # inlined, no call


# SMLAD's semantics for this machine's C compiler, so the tensorized kernels run here.
SMLAD_ON_HOST = ("-D__builtin_arm_smlad(a,b,c)=((c) + (int32_t)(int16_t)(a) * (int16_t)(b)"
                 " + ((int32_t)(a) >> 16) * ((int32_t)(b) >> 16))")


@pytest.mark.parametrize("case", CONVS, ids=[f"conv{i}" for i in range(len(CONVS))])
def test_smlad_schedule_equals_numpy(case, tmp_path):
    """The kernel scheduled for the Cortex-M4 (tiles of output channels and pixels, SMLAD per
    word), its C source compiled here with SMLAD written out, and the requantize fused."""
    from compiler.contrib.cc import compile_source

    xshape, wshape, stride, pad, dil, xdtype, wdtype, zx, per_channel = case
    x, w, zw = _inputs(xshape, wshape, xdtype, wdtype, per_channel, sum(wshape))
    X = te.placeholder(xshape, xdtype, name="X")
    W = te.placeholder(wshape, wdtype, name="W")
    ZW = te.placeholder((wshape[0],), "int32", name="ZW") if per_channel else 0
    C = qnn_conv2d_nchw_smlad(X, W, zx, ZW, stride, pad, dil)
    out_t = requantize(C, 0.01, 3)
    with Target(M4_C):
        s = schedule_qnn_conv2d_nchw_smlad(out_t, Target(M4_C))
    args = [X, W] + ([ZW] if per_channel else []) + [out_t]
    host = Target("c")
    path = tmp_path / "kernel.c"
    path.write_text(generate_c(host_passes(compiler.lower(s, args), host), host))
    assert "__builtin_arm_smlad(" in path.read_text()
    obj = str(tmp_path / "kernel.o")
    compile_source(str(path), obj, compile_flags(host) + [SMLAD_ON_HOST])
    f = runtime.load_module(obj)
    out = runtime.nd.empty(get_const_tuple(out_t.shape), "int8")
    f(*[runtime.nd.array(a) for a in ([x, w] + ([zw] if per_channel else []))], out)
    acc = reference_conv(x, w, zx, zw, stride, pad, dil)
    want = np.clip(np.rint(acc.astype(np.float32) * np.float32(0.01)) + 3, -128, 127)
    np.testing.assert_array_equal(out.numpy(), want.astype("int8"))


def _scheduled_c(target, case, word_multiple):
    """The C source of CONVS' `case` with requantize fused, scheduled for `target` and printed
    for this machine's c target, and its arguments' arrays."""
    xshape, wshape, stride, pad, dil, xdtype, wdtype, zx, per_channel = case
    x, w, zw = _inputs(xshape, wshape, xdtype, wdtype, per_channel, sum(wshape))
    X = te.placeholder(xshape, xdtype, name="X")
    W = te.placeholder(wshape, wdtype, name="W")
    ZW = te.placeholder((wshape[0],), "int32", name="ZW") if per_channel else 0
    C = qnn_conv2d_nchw_smlad(X, W, zx, ZW, stride, pad, dil, word_multiple)
    out_t = requantize(C, 0.01, 3)
    with Target(target):
        s = schedule_qnn_conv2d_nchw_smlad(out_t, Target(target))
    args = [X, W] + ([ZW] if per_channel else []) + [out_t]
    host = Target("c")
    src = generate_c(host_passes(compiler.lower(s, args), host), host)
    arrays = [x, w] + ([zw] if per_channel else [])
    want = reference_conv(x, w, zx, zw, stride, pad, dil)
    want = np.clip(np.rint(want.astype(np.float32) * np.float32(0.01)) + 3, -128, 127)
    return src, arrays, want.astype("int8"), get_const_tuple(out_t.shape)


@pytest.mark.parametrize("case", CONVS, ids=[f"conv{i}" for i in range(len(CONVS))])
def test_mve_schedule_equals_numpy(case, tmp_path):
    """The kernel scheduled for the Cortex-M55 (four words per VMLADAVA), compiled here with
    the prelude's plain-C kiln_mve_dot16; CONVS hold word counts of 36, 18 (padded to 20), 8,
    3 (padded to 4) and 27 (padded to 28)."""
    from compiler.contrib.cc import compile_source

    src, arrays, want, shape = _scheduled_c(M55_C, case, 4)
    assert "kiln_mve_dot16(" in src
    assert "__builtin_arm_smlad(" not in src
    path = tmp_path / "kernel.c"
    path.write_text(src)
    obj = str(tmp_path / "kernel.o")
    compile_source(str(path), obj, compile_flags(Target("c")))
    f = runtime.load_module(obj)
    out = runtime.nd.empty(shape, "int8")
    f(*[runtime.nd.array(a) for a in arrays], out)
    np.testing.assert_array_equal(out.numpy(), want)


def _arm_asm(tmp_path, target, src):
    """GCC's assembly of C source `src` for `target` (skips without arm-none-eabi-gcc)."""
    if shutil.which("arm-none-eabi-gcc") is None:
        pytest.skip("arm-none-eabi-gcc not installed (apt-get install gcc-arm-none-eabi)")
    path = tmp_path / "kernel.c"
    path.write_text(src)
    asm = tmp_path / "kernel.s"
    subprocess.run(["arm-none-eabi-gcc"] + compile_flags(Target(target), "arm-none-eabi-gcc") +
                   ["-std=c99", "-S", str(path), "-o", str(asm)], check=True)
    return asm.read_text()


def test_mve_schedule_makes_vmladava_for_the_m55_only(tmp_path):
    """The c source for the M55 calls kiln_mve_dot16 and GCC makes VMLADAVA.S16 of it; the
    one for the M4 has SMLAD and no MVE instruction; -mattr=-mve takes the SMLAD kernels."""
    s, args = _smlad_kernel(M55_C)
    tgt = Target(M55_C)
    m55 = generate_c(host_passes(compiler.lower(s, args), tgt), tgt)
    assert "kiln_mve_dot16(" in m55 and "#include <arm_mve.h>" in m55
    assert "__builtin_arm_smlad(" not in m55
    s, args = _smlad_kernel(M4_C)
    tgt = Target(M4_C)
    m4 = generate_c(host_passes(compiler.lower(s, args), tgt), tgt)
    assert "kiln_mve_dot16" not in m4 and "arm_mve.h" not in m4
    s, args = _smlad_kernel(M55_C + " -mattr=-mve")
    tgt = Target(M55_C + " -mattr=-mve")
    no_mve = generate_c(host_passes(compiler.lower(s, args), tgt), tgt)
    assert "kiln_mve_dot16" not in no_mve and "__builtin_arm_smlad(" in no_mve
    asm = _arm_asm(tmp_path, M55_C, m55)
    assert "vmladava.s16" in asm and "vldrh.16" in asm
    assert "smlad" not in asm
    asm = _arm_asm(tmp_path, M4_C, m4)
    assert "vmladava" not in asm and "\tsmlad\t" in asm


def test_group_conv_schedule_equals_numpy():
    """The depthwise schedule (topi.nn.qnn's compute) on this machine's c target: the same
    loops a Cortex-M build gets."""
    x, w, _ = _inputs((1, 6, 7, 7), (6, 1, 3, 3), "int8", "int8", False, 3)
    X = te.placeholder(x.shape, "int8", name="X")
    W = te.placeholder(w.shape, "int8", name="W")
    C = qnn_conv2d_nchw(X, W, -7, 0, (1, 1), (1, 1, 1, 1), (1, 1), groups=6)
    f = build(schedule_qnn_group_conv2d_nchw([C]), [X, W, C], target="c")
    out = runtime.nd.empty(get_const_tuple(C.shape), "int32")
    f(runtime.nd.array(x), runtime.nd.array(w), out)
    np.testing.assert_array_equal(out.numpy(), reference_conv(x, w, -7, 0, 1, 1, groups=6))


def _near_halves(rng, mult, count):
    """int32 accumulators whose products with `mult` fall at, just below and just above
    half-integers, and large ones."""
    halves = rng.integers(-300, 300, count) + 0.5
    acc = np.round(halves / mult).astype(np.int64)
    acc = np.concatenate([acc, acc - 1, acc + 1, rng.integers(-2 ** 31, 2 ** 31 - 1, count)])
    return np.clip(acc, -2 ** 31, 2 ** 31 - 1).astype("int32")


@pytest.mark.parametrize("out_dtype,zp", [("int8", -3), ("uint8", 131)])
def test_requantize_cortex_m_equals_the_double_formula(out_dtype, zp):
    rng = np.random.default_rng(5)
    channels = 4
    mults = np.array([0.0123456789012345, 1.0 / 3.0, 2.5e-4, 0.5], "float64")
    acc = np.stack([_near_halves(rng, m, 64) for m in mults])[None]   # [1, C, 256]
    X = te.placeholder(acc.shape, "int32", name="X")
    M = te.placeholder((channels,), "float64", name="M")
    want_t = requantize(X, M, zp, 1, out_dtype, "float64")
    got_t = requantize_cortex_m(X, M, zp, 1, out_dtype, "float64")
    results = []
    for t in (want_t, got_t):
        f = build(te.create_schedule(t.op), [X, M, t], target="llvm")
        out = runtime.nd.empty(acc.shape, out_dtype)
        f(runtime.nd.array(acc), runtime.nd.array(mults), out)
        results.append(out.numpy())
    np.testing.assert_array_equal(results[1], results[0])
    # the reference formula in numpy: round half to even in double, saturate
    v = np.rint(acc.astype(np.float64) * mults[None, :, None]) + zp
    info = np.iinfo(out_dtype)
    np.testing.assert_array_equal(results[0], np.clip(v, info.min, info.max).astype(out_dtype))


def test_requantize_cortex_m_float32_multiplier():
    rng = np.random.default_rng(6)
    acc = rng.integers(-40000, 40000, (1, 3, 50)).astype("int32")
    X = te.placeholder(acc.shape, "int32", name="X")
    got_t = requantize_cortex_m(X, 0.0078125, 2, 1, "int8", "float32")   # 2**-7: exact halves
    want_t = requantize(X, 0.0078125, 2, 1, "int8", "float32")
    results = []
    for t in (want_t, got_t):
        f = build(te.create_schedule(t.op), [X, t], target="llvm")
        out = runtime.nd.empty(acc.shape, "int8")
        f(runtime.nd.array(acc), out)
        results.append(out.numpy())
    np.testing.assert_array_equal(results[1], results[0])


@pytest.mark.parametrize("out_dtype,zp", [("int8", 5), ("uint8", 128)])
def test_quantize_cortex_m_equals_the_portable_formula(out_dtype, zp):
    rng = np.random.default_rng(7)
    scales = np.array([0.05, 0.1, 1 / 3], "float32")
    halves = (rng.integers(-300, 300, (1, 3, 40)) + 0.5).astype("float32")
    x = np.concatenate([halves * scales[None, :, None],
                        rng.standard_normal((1, 3, 40)).astype("float32") * 1e4], axis=2)
    X = te.placeholder(x.shape, "float32", name="X")
    S = te.placeholder((3,), "float32", name="S")
    results = []
    for fn in (quantize, quantize_cortex_m):
        t = fn(X, S, zp, 1, out_dtype)
        f = build(te.create_schedule(t.op), [X, S, t], target="llvm")
        out = runtime.nd.empty(x.shape, out_dtype)
        f(runtime.nd.array(x), runtime.nd.array(scales), out)
        results.append(out.numpy())
    np.testing.assert_array_equal(results[1], results[0])
    with pytest.raises(compiler.ir.errors.IRError, match="float32 expected"):
        quantize_cortex_m(te.placeholder((2,), "float64", name="D"), 0.5, 0)


@pytest.mark.parametrize("target,cortex_m,dsp", [
    (M4_C, True, True),
    ("llvm -mtriple=thumbv7em-none-eabihf -mcpu=cortex-m7", True, True),
    ("llvm -mtriple=thumbv8.1m.main-none-eabihf -mcpu=cortex-m55 -mattr=+mve.fp", True, True),
    ("llvm -mtriple=thumbv8m.main-none-eabi -mcpu=cortex-m33", True, False),
    ("llvm -mtriple=thumbv8m.main-none-eabi -mcpu=cortex-m33 -mattr=+dsp", True, True),
    ("llvm -mtriple=thumbv6m-none-eabi -mcpu=cortex-m0", True, False),
    (M4_C + " -mattr=-dsp", True, False),
    ("llvm", False, False),
    ("c", False, False),
    ("llvm -mtriple=aarch64-linux-gnu", False, False),
])
def test_which_targets(target, cortex_m, dsp):
    assert is_cortex_m(target) == cortex_m
    assert has_dsp(target) == dsp


@pytest.mark.parametrize("target,mve", [
    (M55_C, True),
    ("c -mtriple=thumbv8.1m.main-none-eabihf -mcpu=cortex-m85", True),
    ("c -mtriple=thumbv8.1m.main-none-eabihf -mattr=+mve", True),
    ("c -mtriple=thumbv8.1m.main-none-eabihf", False),
    (M55_C + " -mattr=+mve.fp,-mve", False),
    (M55_C + " -mattr=-dsp", False),
    ("llvm -mtriple=thumbv8.1m.main-none-eabihf -mcpu=cortex-m55 -mattr=+mve.fp", False),
    (M4_C, False),
    ("c -mtriple=thumbv8m.main-none-eabi -mcpu=cortex-m33 -mattr=+dsp", False),
    ("c", False),
])
def test_which_targets_have_mve(target, mve):
    assert has_mve(target) == mve


def test_arm_mattr_stays_off_the_gcc_command_line():
    flags = compile_flags(Target(M4_C + " -mattr=-dsp"), "arm-none-eabi-gcc")
    assert "-mcpu=cortex-m4" in flags
    assert not [f for f in flags if "dsp" in f]
    flags = compile_flags(Target("c -mcpu=haswell -mattr=+avx2"), "cc")
    assert "-mavx2" in flags


def _qnn_module():
    """x (int8) -> qnn.conv2d 3x3 (groups 1) -> requantize -> depthwise qnn.conv2d ->
    requantize."""
    from compiler.relax import expr as X
    from compiler.relax import op
    from compiler.relax.block_builder import BlockBuilder
    from compiler.relax.struct_info import TensorStructInfo

    def c(value, dtype):
        return X.const(np.asarray(value, dtype=dtype), dtype)

    rng = np.random.default_rng(2)
    bb = BlockBuilder()
    x = X.Var("x", TensorStructInfo((1, 4, 8, 8), "int8"))
    bb.begin_function("main", None, {"global_symbol": "main", "num_input": 1})
    with bb.dataflow():
        acc = bb.emit(op.qnn.conv2d(x, c(rng.integers(-127, 128, (8, 4, 3, 3)), "int8"),
                                    c(-3, "int32"), c([0] * 8, "int32"), padding=1))
        y = bb.emit(op.qnn.requantize(acc, c(rng.random(8) * 1e-3, "float64"), c(2, "int32"),
                                      1, "int8"))
        acc = bb.emit(op.qnn.conv2d(y, c(rng.integers(-127, 128, (8, 1, 3, 3)), "int8"),
                                    c(2, "int32"), c([0] * 8, "int32"), padding=1, groups=8))
        out = bb.emit_output(op.qnn.requantize(acc, c(rng.random(8) * 1e-3, "float64"),
                                               c(0, "int32"), 1, "int8"))
    bb.emit_func_output(out, [x])
    return bb.get()


def test_cortex_m_strategies_and_no_blocked_layout():
    from compiler.relax import expr as X
    from compiler.relax.strategy import strategy_of
    from compiler.relax.transform.qnn_layout_nchwc import qnn_layout_nchwc

    mod = _qnn_module()
    assert qnn_layout_nchwc(mod, target=Target(M4_C)) is mod
    calls = [b.value for block in mod["main"].body.blocks for b in block.bindings
             if isinstance(b.value, X.Call) and isinstance(b.value.op, X.Op)]

    def names(target):
        return [strategy_of(call, Target(target)).name for call in calls]

    want = ["qnn_conv2d_nchw_smlad", "requantize_cortex_m", "qnn_group_conv2d_nchw_cortex_m",
            "requantize_cortex_m"]
    assert names(M4_C) == want
    assert names(M4_LLVM) == want
    assert names(M4_C + " -mattr=-dsp") == want   # the pair loops, without the intrinsic
    assert names(M55_C) == want   # the same kernel, by MVE (tested above)
    assert "qnn_conv2d_nchw_smlad" not in names("llvm")
    assert "requantize_cortex_m" not in names("llvm")
