"""Compile time of one ONNX model: Kiln (`python -m compiler compile model.onnx -o x.so`) beside
Apache TVM's `relax.build` of the same file (its ONNX frontend, target llvm, then
export_library), each in its own process, alternating, in the same run.

    python bench/compile_time.py [model.onnx] [--repeat 3] [--tvm-python .venv-tvm/bin/python]

The default model is the zoo's ResNet-18 (`make zoo ZOO_ONLY=resnet18` exports it). TVM runs
with the Python that imports it (--tvm-python, $KILN_TVM_PYTHON, or .venv-tvm's, made by
`make test-interop`); without one only Kiln is timed. Kiln is timed twice per round: cold,
with an empty build cache (compiler/build_cache.py), and warm, rebuilding with the cache the
cold build filled (as a user's second build of the model, or of one sharing its kernels).
Prints each run's wall time and the medians with their ratios (Kiln / TVM; below 1 is faster).
Kiln's modules are byte-compiled first (`compileall`), as pip does when it installs a wheel, so
that neither side compiles its Python at start: TVM's package was byte-compiled at install, and
an editable checkout under PYTHONDONTWRITEBYTECODE=1 would compile Kiln's at every start
(0.7 s of ResNet-18's).
"""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

from bench_common import find_tvm_python

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_MODEL = os.path.join(ROOT, "build", "zoo", "resnet18", "model.onnx")

TVM_SCRIPT = """
import sys, onnx
from tvm import relax
from tvm.relax.frontend.onnx import from_onnx
mod = from_onnx(onnx.load(sys.argv[1]), keep_params_in_input=False)
relax.build(mod, target="llvm").export_library(sys.argv[2])
"""


def timed(cmd, env=None) -> float:
    t0 = time.perf_counter()
    done = subprocess.run(cmd, capture_output=True, text=True, env=env)
    seconds = time.perf_counter() - t0
    if done.returncode != 0:
        raise SystemExit(f"failed: {' '.join(cmd)}\n{done.stderr[-2000:]}")
    return seconds


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("model", nargs="?", default=DEFAULT_MODEL)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--tvm-python", default=None)
    args = ap.parse_args()
    if not os.path.exists(args.model):
        raise SystemExit(f"{args.model} not found: export it first (make zoo ZOO_ONLY=resnet18)")
    venv_tvm = os.path.join(ROOT, ".venv-tvm", "bin", "python")
    tvm_py = find_tvm_python(args.tvm_python or (venv_tvm if os.path.exists(venv_tvm) else None))
    subprocess.run([sys.executable, "-m", "compileall", "-q", os.path.join(ROOT, "compiler"),
                    os.path.join(ROOT, "microruntime")], check=True, stdout=subprocess.DEVNULL)
    print(f"model: {args.model} ({os.path.getsize(args.model) / 2**20:.1f} MiB); "
          f"{os.cpu_count()} CPUs; TVM: {tvm_py or 'not found (Kiln only)'}")
    cold, warm, tvm = [], [], []
    with tempfile.TemporaryDirectory() as tmp:
        kiln_cmd = [sys.executable, "-m", "compiler", "compile", args.model,
                    "-o", os.path.join(tmp, "kiln.so")]
        for r in range(args.repeat):
            cache = os.path.join(tmp, f"cache{r}")
            env = dict(os.environ, KILN_CACHE_DIR=cache)
            cold.append(timed(kiln_cmd, env))
            warm.append(timed(kiln_cmd, env))
            line = f"run {r + 1}: Kiln cold {cold[-1]:.2f} s, warm {warm[-1]:.2f} s"
            if tvm_py:
                tvm.append(timed([tvm_py, "-c", TVM_SCRIPT, args.model,
                                  os.path.join(tmp, "tvm.so")]))
                line += f", TVM relax.build {tvm[-1]:.2f} s"
            print(line, flush=True)
    c, w = statistics.median(cold), statistics.median(warm)
    line = f"median: Kiln cold {c:.2f} s, warm {w:.2f} s"
    if tvm:
        t = statistics.median(tvm)
        line += f", TVM {t:.2f} s; Kiln / TVM = {c / t:.2f} cold, {w / t:.2f} warm"
    print(line)


if __name__ == "__main__":
    main()
