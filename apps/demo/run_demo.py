"""`make demo`: an ONNX model → one file → run from Python and from C, checked against ONNX
Runtime.

1. write a small CNN as ONNX with deterministic weights (apps/demo/make_model.py);
2. compile it with the command line to one shared library and to one static library:
       python -m compiler compile cnn.onnx --input-shape x:1,3,32,32 -o cnn.so
       python -m compiler compile cnn.onnx --input-shape x:1,3,32,32 --system-lib -o cnn.a
3. run cnn.so with the runtime's command line (a process that never imports the compiler):
       python -m microruntime run cnn.so --inputs input.npz --output out.npz --benchmark
4. link cnn.a with the dlopen-free runtime into apps/graph_deploy/main.c and run it;
5. compare both with ONNX Runtime, and the latency with ONNX Runtime's.

    python apps/demo/run_demo.py [--out build/demo]
"""
import argparse
import os
import re
import subprocess
import sys
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def sh(cmd, **kw):
    print("$ " + " ".join(cmd), flush=True)
    out = subprocess.run(cmd, cwd=ROOT, stdout=subprocess.PIPE, text=True, check=False,
                         env=dict(os.environ, PYTHONPATH=ROOT), **kw)
    print(out.stdout, end="", flush=True)
    if out.returncode != 0:
        sys.exit(f"demo: the command above failed (exit status {out.returncode})")
    return out.stdout


def onnxruntime_reference(model, x, repeat=100):
    import onnxruntime as ort

    opts = ort.SessionOptions()
    threads = os.environ.get("MR_NUM_THREADS")
    if threads:
        opts.intra_op_num_threads = int(threads)
    sess = ort.InferenceSession(model, opts, providers=["CPUExecutionProvider"])
    want, = sess.run(None, {"x": x})
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        sess.run(None, {"x": x})
        times.append(time.perf_counter() - t)
    return want, float(np.median(times)) * 1e3


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=os.path.join(ROOT, "build", "demo"))
    out = os.path.abspath(ap.parse_args().out)
    py = sys.executable
    t_start = time.perf_counter()

    print("== 1. the model: a small CNN written as ONNX (deterministic weights)")
    sh([py, "apps/demo/make_model.py", out])
    model, shape = os.path.join(out, "cnn.onnx"), "x:1,3,32,32"

    print("\n== 2. compile it to ONE file: a shared library, and a static system library")
    from compiler.codegen import host_codegen_available  # noqa: E402  (after ROOT on the path)

    target = "llvm" if host_codegen_available("llvm") else "c"
    so, a = os.path.join(out, "cnn.so"), os.path.join(out, "cnn.a")
    sh([py, "-m", "compiler", "compile", model, "--target", target, "--input-shape", shape,
        "-o", so, "--quiet"])
    sh([py, "-m", "compiler", "compile", model, "--target", target, "--system-lib",
        "--input-shape", shape, "-o", a, "--quiet"])

    print("\n== 3. run cnn.so from Python with the runtime only (no compiler import)")
    text = sh([py, "-m", "microruntime", "run", so, "--inputs", os.path.join(out, "input.npz"),
               "--output", os.path.join(out, "out.npz"), "--print-top", "3", "--benchmark",
               "--repeat", "10", "--number", "20"])
    kiln_ms = float(re.search(r"median ([0-9.]+) ms", text).group(1))
    got_py = np.load(os.path.join(out, "out.npz"))["output_0"]

    print("\n== 4. link cnn.a into the C app (apps/graph_deploy, no dlopen) and run it")
    app = os.path.join(out, "graph_deploy_static")
    sh(["cc", "-std=c99", "-O2", "-DGRAPH_DEPLOY_SYSTEM_LIB", "-Imicroruntime/include",
        "apps/graph_deploy/main.c", a, "build/libmicroruntime_nodl.a", "-lpthread", "-lm",
        "-o", app])
    undefined = subprocess.run(["nm", "-u", app], stdout=subprocess.PIPE, text=True,
                               check=True).stdout
    print(f"  {app}: {os.path.getsize(app)} bytes, "
          f"{'calls dlopen' if 'dlopen' in undefined else 'no dlopen'}")
    c_out = subprocess.run([app, "-", "x=" + os.path.join(out, "x.bin")], cwd=ROOT,
                           stdout=subprocess.PIPE, text=True, check=True).stdout
    got_c = np.array([float(v) for v in c_out.split()], "float32").reshape(got_py.shape)
    print(f"  output: {' '.join(f'{v:.4f}' for v in got_c.ravel())}")

    print("\n== 5. against ONNX Runtime")
    x = np.load(os.path.join(out, "input.npz"))["x"]
    want, ort_ms = onnxruntime_reference(model, x)
    d_py, d_c = float(np.abs(got_py - want).max()), float(np.abs(got_c - want).max())
    ok = d_py < 1e-4 and d_c < 1e-4
    threads = os.environ.get("MR_NUM_THREADS", "default")
    print(f"  agreement (max |diff| vs ONNX Runtime): Python {d_py:.2e}, C {d_c:.2e}  "
          f"-> {'OK' if ok else 'MISMATCH'}")
    print(f"  latency, batch 1 (median; threads: {threads}): Kiln {kiln_ms:.4f} ms, "
          f"ONNX Runtime {ort_ms:.4f} ms ({ort_ms / kiln_ms:.2f}x)")
    print(f"  demo took {time.perf_counter() - t_start:.1f} s; files in {out}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.path.insert(0, ROOT)
    sys.exit(main())
