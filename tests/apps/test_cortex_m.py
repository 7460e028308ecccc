"""apps/cortex_m: the MLP and the LeNet-style CNN (conv, relu, pools, dense, softmax) compiled for
Cortex-M4F and Cortex-M7 (and M55 with MVE), linked with the bare-metal runtime
(MR_PLATFORM_BAREMETAL, MR_CONFIG_SMALL) into one ELF, run under qemu-system-arm with
semihosting; the same app source built for this machine and for AArch64 (qemu-user); and the
MLPerf Tiny DS-CNN (apps/cortex_m/mlperf_tiny.py) on the M4F with the AOT executor (the run
function, kernels and weights linked with the AOT runtime only); and its int8 version (quantized
by ONNX Runtime, QDQ per channel) on the M4F (c target and AOT: SMLAD through GCC's builtin;
llvm target and the graph executor: through LLVM's intrinsic) and on the M55 (its own code).

Each run must exit with status 0 and print "PASS" (the app compares its output with the test
vectors of a reference run, within atol 1e-5 + rtol 1e-4); the printed output is also compared
here with onnxruntime's on the same input (same tolerance; for an int8 model the same int8
values as onnxruntime's with graph optimizations off: atol half a step of the output's scale,
and the model's code holds the SMLAD instruction). Neither the runtime nor the model
references dlopen; on bare metal the runtime references no pthread function and the model no
C library function beyond memcpy/memset/libm. The executor runs in a static arena of the
manifest's size (tests/c/test_graph_arena.c proves nothing is allocated after init). Skipped
when the tools are missing (.ci/run installs them: gcc-arm-none-eabi libnewlib-arm-none-eabi
qemu-system-arm; gcc-aarch64-linux-gnu qemu-user). About a minute of builds in all.
"""
import os
import re
import shutil
import subprocess
import sys

import numpy as np
import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
APP = os.path.join(ROOT, "apps", "cortex_m")
ATOL, RTOL = 1e-5, 1e-4

TOOLS = {"m4": ("arm-none-eabi-gcc", "qemu-system-arm"),
         "m7": ("arm-none-eabi-gcc", "qemu-system-arm"),
         "m55": ("arm-none-eabi-gcc", "qemu-system-arm"),
         "aarch64": ("aarch64-linux-gnu-gcc", "qemu-aarch64"),
         "host": ("cc",)}
PACKAGES = {"m4": "gcc-arm-none-eabi libnewlib-arm-none-eabi qemu-system-arm",
            "aarch64": "gcc-aarch64-linux-gnu libc6-dev-arm64-cross qemu-user", "host": "gcc"}
PACKAGES["m7"] = PACKAGES["m55"] = PACKAGES["m4"]


def _newlib_missing():
    """Whether arm-none-eabi-gcc lacks newlib's semihosting library (librdimon)."""
    if shutil.which("arm-none-eabi-gcc") is None:
        return False
    out = subprocess.run(["arm-none-eabi-gcc", "-print-file-name=librdimon.a"],
                         stdout=subprocess.PIPE, text=True, check=False).stdout.strip()
    return not os.path.isabs(out)


def _skip_reason(board):
    missing = [t for t in TOOLS[board] if shutil.which(t) is None]
    if board in ("m4", "m7", "m55") and _newlib_missing():
        missing.append("newlib (librdimon.a)")
    if missing:
        return (f"{', '.join(missing)} not installed (apt-get install {PACKAGES[board]})")
    return None


@pytest.fixture(scope="module")
def build_dir(tmp_path_factory):
    return str(tmp_path_factory.mktemp("cortex_m"))


def _onnx_reference(model_name, inputs):
    """(onnxruntime's output, atol, rtol): an int8 model's with graph optimizations off, to
    half a step of its output's scale."""
    sys.path.insert(0, APP)
    import build_model
    import onnxruntime as ort

    model, _ = build_model.onnx_model(model_name)
    step = build_model.output_step(model)
    opts = ort.SessionOptions()
    if step:
        opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    sess = ort.InferenceSession(model.SerializeToString(), opts,
                                providers=["CPUExecutionProvider"])
    tol = (step / 2, 0.0) if step else (ATOL, RTOL)
    return (sess.run(None, dict(inputs))[0],) + tol


# What generated code may take from the C library: memcpy/memset and libm.
ALLOWED_LIBC = {"memcpy", "memset", "memmove", "expf", "exp", "logf", "log", "tanhf", "tanh",
                "sqrtf", "sqrt", "powf", "pow", "erff", "erf", "fabsf", "floorf", "ceilf",
                "roundf", "fmodf", "sinf", "cosf", "nearbyintf", "nearbyint"}


def _undefined(nm, path):
    out = subprocess.run([nm, "-u", path], stdout=subprocess.PIPE, text=True, check=True).stdout
    return {line.split()[-1] for line in out.splitlines() if line.strip().startswith("U ")}


def _printed_output(stdout):
    values = re.findall(r"^output 0 \[\d+\] = (\S+) ", stdout, re.M)
    return np.array([float(v) for v in values], "float32")


# Cortex-M4F and M7, both models, both host code generators; M55 with MVE (DS-CNN int8: its
# convolutions by VMLADAVA); the same app on
# this machine and on AArch64 Linux (graph executor); DS-CNN on the M4F with the AOT executor.
CASES = [("m4", "mlp", "llvm", "graph"), ("m4", "lenet", "llvm", "graph"),
         ("m4", "lenet", "c", "graph"), ("m7", "lenet", "llvm", "graph"),
         ("m7", "mlp", "c", "graph"), ("m55", "lenet", "llvm", "graph"),
         ("host", "mlp", "llvm", "graph"), ("aarch64", "mlp", "llvm", "graph"),
         ("m4", "kws", "c", "aot"), ("m4", "kws_int8", "c", "aot"),
         ("m4", "kws_int8", "llvm", "graph"), ("m55", "kws_int8", "c", "aot")]


@pytest.mark.parametrize("board,model,kind,executor", CASES, ids=["-".join(c) for c in CASES])
def test_cortex_m_app(build_dir, board, model, kind, executor):
    reason = _skip_reason(board)
    if reason:
        pytest.skip(reason)
    make = ["make", "-s", "-j2", "-C", APP, f"PYTHON={sys.executable}", f"BOARD={board}",
            f"MODEL={model}", f"KIND={kind}", f"EXECUTOR={executor}", f"BUILD={build_dir}"]
    subprocess.run(make + ["all"], check=True, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    aot = executor == "aot"
    out_dir = os.path.join(build_dir, f"{board}-{kind}-{'aot-' if aot else ''}{model}")
    nm = {"aarch64": "aarch64-linux-gnu-nm", "host": "nm"}.get(board, "arm-none-eabi-nm")
    runtime = _undefined(nm, os.path.join(build_dir, f"runtime-{board}",
                                          "libmicroruntime_aot.a" if aot else
                                          "libmicroruntime.a"))
    assert not {s for s in runtime if s.startswith("dl")}, runtime
    if board not in ("host", "aarch64"):  # bare metal: no threads, no dynamic loading
        assert not {s for s in runtime if s.startswith("pthread")}, runtime
        # Generated code takes only the runtime's services, memcpy/memset, libm and libgcc.
        extra = {s for s in _undefined(nm, os.path.join(out_dir, "model.a"))
                 if not s.startswith(("TVM", "__aeabi_", "mr_aot_")) and s not in ALLOWED_LIBC}
        assert not extra, f"the model calls {sorted(extra)}"
    run = subprocess.run(make + ["run", "QEMU_TIMEOUT=120"], stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT, text=True, timeout=300, check=False)
    assert run.returncode == 0, run.stdout
    assert run.stdout.rstrip().endswith("PASS"), run.stdout
    arena = re.search(r"^arena: (\d+) bytes \(the model needs (\d+)\)", run.stdout, re.M)
    assert arena and arena.group(1) == arena.group(2), run.stdout
    if board in ("m4", "m7", "m55"):  # instructions counted by QEMU (-icount)
        cycles = re.search(r"^cycles: (\d+) ", run.stdout, re.M)
        assert cycles and int(cycles.group(1)) > 0, run.stdout
    got = _printed_output(run.stdout)
    inputs = dict(np.load(os.path.join(out_dir, "inputs.npz")))
    want, atol, rtol = _onnx_reference(model, inputs)
    assert got.shape == (want.size,), run.stdout
    np.testing.assert_allclose(got, want.ravel(), atol=atol, rtol=rtol)
    if model.endswith("_int8") and board in ("m4", "m7", "m55"):
        model_a = os.path.join(out_dir, "model.a")
        dis = subprocess.run(["arm-none-eabi-objdump", "-d", model_a],
                             stdout=subprocess.PIPE, text=True, check=True).stdout
        if board == "m55" and kind == "c":
            # MVE kernels (VMLADAVA: objdump 2.40 does not decode MVE, so the build
            # attributes and no SMLAD left; test_arm_cpu_qnn.py checks GCC's assembly)
            attrs = subprocess.run(["arm-none-eabi-readelf", "-A", model_a],
                                   stdout=subprocess.PIPE, text=True, check=True).stdout
            assert "Tag_MVE_arch: MVE Integer" in attrs, attrs
            assert not re.search(r"\tsmlad\t", dis), "SMLAD in the M55 int8 model's code"
        else:
            assert re.search(r"\tsmlad\t", dis), "no SMLAD in the int8 model's code"


def test_cortex_m_app_fails_on_mismatch(build_dir):
    """The app exits with 1 and prints FAIL when an expected value is off."""
    reason = _skip_reason("m4")
    if reason:
        pytest.skip(reason)
    make = ["make", "-s", "-C", APP, f"PYTHON={sys.executable}", "BOARD=m4", "MODEL=mlp",
            f"BUILD={build_dir}"]
    subprocess.run(make + ["model"], check=True, stdout=subprocess.PIPE,
                   stderr=subprocess.STDOUT)
    header = os.path.join(build_dir, "m4-llvm-mlp", "model_data.h")
    text = open(header).read()
    at = text.index("kiln_expected_0[")
    at = text.index("{", at) + 4  # the first expected value, changed in its first digit
    digit = text[at]
    bad = text[:at] + ("1" if digit != "1" else "2") + text[at + 1:]
    bad_dir = os.path.join(build_dir, "bad")
    os.makedirs(bad_dir, exist_ok=True)
    with open(os.path.join(bad_dir, "model_data.h"), "w") as f:
        f.write(bad)
    elf = os.path.join(bad_dir, "app.elf")
    subprocess.run(["arm-none-eabi-gcc", "-std=c99", "-O2", "-mcpu=cortex-m4", "-mthumb",
                    "-mfloat-abi=hard", "-mfpu=fpv4-sp-d16",
                    "-I" + os.path.join(ROOT, "microruntime", "include"), "-I" + bad_dir,
                    os.path.join(APP, "main.c"), os.path.join(APP, "check.c"),
                    os.path.join(APP, "measure.c"), "--specs=rdimon.specs",
                    "-nostartfiles", "-T", os.path.join(APP, "mps2.ld"),
                    os.path.join(APP, "startup.c"), "-Wl,--gc-sections,--no-warn-execstack",
                    os.path.join(build_dir, "m4-llvm-mlp", "model.a"),
                    os.path.join(build_dir, "runtime-m4", "libmicroruntime.a"), "-lm", "-o", elf],
                   check=True)
    run = subprocess.run(["timeout", "120", "qemu-system-arm", "-M", "mps2-an386", "-nographic",
                          "-semihosting-config", "enable=on,target=native", "-kernel", elf],
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, check=False)
    assert run.returncode == 1, run.stdout
    assert "MISMATCH" in run.stdout and run.stdout.rstrip().endswith("FAIL")


def test_mlperf_tiny_models():
    """The four models have their published layer shapes: parameter counts from the layers
    (batch norm folded) and the output shape of each, run by onnxruntime."""
    sys.path.insert(0, APP)
    import mlperf_tiny
    import onnxruntime as ort

    def count(model):
        return sum(int(np.prod(t.dims)) for t in model.graph.initializer)

    # DS-CNN: conv 10x4 1->64, four (3x3 depthwise 64, 1x1 64->64), dense 64->12, with biases.
    kws = (64 * 40 + 64) + 4 * ((64 * 9 + 64) + (64 * 64 + 64)) + (64 * 12 + 12)
    # The autoencoder: 640-128-128-128-128-8-128-128-128-128-640, dense with biases.
    widths = [640, 128, 128, 128, 128, 8, 128, 128, 128, 128, 640]
    ad = sum(a * b + b for a, b in zip(widths, widths[1:]))
    outputs = {"kws": (1, 12), "ic": (1, 10), "vww": (1, 2), "ad": (1, 640)}
    for name in mlperf_tiny.MODELS:
        model, shapes = mlperf_tiny.build(name)
        if name in ("kws", "ad"):
            assert count(model) == {"kws": kws, "ad": ad}[name], name
        sess = ort.InferenceSession(model.SerializeToString(),
                                    providers=["CPUExecutionProvider"])
        x = np.random.default_rng(0).standard_normal(shapes["input"]).astype("float32")
        (y,) = sess.run(None, {"input": x})
        assert y.shape == outputs[name], (name, y.shape)
        assert np.all(np.isfinite(y)) and 0 < np.abs(y).max() < 10, name
