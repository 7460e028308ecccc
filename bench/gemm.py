"""float32 GEMM (C = A @ B, M x K x N): GFLOP/s of Kiln beside numpy (OpenBLAS) in the same
process, at 1 and 2 threads (MR_NUM_THREADS / OPENBLAS_NUM_THREADS; each count in its own
subprocess), for each size and target. Kiln and numpy are timed alternately, call by call, so
both see the same load, each sample after an idle gap (--gap seconds): an idle thread pool keeps
spinning for a while after a call (OpenBLAS's workers for about 0.1 s, Kiln's for 2 ms) and
would otherwise take a core from the other library's next sample at 2 threads. After the gap,
--warmup untimed calls wake the cores: on this VM the first call after an idle gap runs both
libraries at about half their 2-thread speed (a 1024^2 GEMM with 0.2 s idle before every
call: ~100 GFLOP/s for both, against 170-186 back to back), which would measure the wake-up
rather than the kernel. Each sample is at least --gflop of work. The table gives
medians, the ratio Kiln / numpy, and the spread of the
ratio over the repeats (max / min of per-repeat ratios) as a noise figure. Also: the compile
time of each target and the FMA instructions (`vfmadd*`) in the llvm assembly.

The measuring process runs without OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE (a workplace may
set them to pin OpenBLAS to a slower kernel), and the table names the BLAS numpy used and its
kernel as threadpoolctl reports them (pip install threadpoolctl; "unknown" without it).

Two paths (--paths): `topi`, the packed GEMM template itself (`topi.x86.gemm_packed` +
`schedule_gemm_packed`, default knobs; B an argument); `model`, the GEMM as a user's model has
it: an ONNX MatMul whose B is a weight, compiled by the frontend and `relay.build` (the
strategy picks the kernel: the packed GEMM, a GEMV for one row...) and run by the graph
executor. Shapes: --sizes n (n x n x n) and --shapes MxKxN (transformer and CNN layers:
196x1536x384 is a ViT-S/DeiT MLP, 3136x96x384 ConvNeXt's first stage, 50x768x3072 a ViT-B
MLP at 50 tokens, 1x512x1000 a classifier).

    python bench/gemm.py [--sizes 512 1024 2048] [--shapes 196x1536x384 ...] [--paths topi model]
                         [--repeat 9] [--targets llvm c] [--gap 0.2] [--warmup 1] [--gflop 4]
"""
import argparse
import json
import os
import re
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


SHAPES = ["196x1536x384", "3136x96x384", "50x768x3072", "1x512x1000"]


def schedule(m, k, n):
    """The schedule measured on the topi path: the packed GEMM with its default knobs."""
    from compiler import te, topi

    A = te.placeholder((m, k), name="A")
    B = te.placeholder((k, n), name="B")
    C = topi.x86.gemm_packed(A, B)
    return topi.x86.schedule_gemm_packed(C), [A, B, C]


def model_function(target, b):
    """The model path: an ONNX MatMul by the weight `b`, through the frontend and relay.build;
    a function of A that writes C through the graph executor."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    import microruntime
    from compiler import relay
    from compiler.frontend import from_onnx
    from microruntime import graph_executor

    k, n = b.shape
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["a", "b"], ["c"])], "gemm",
        [helper.make_tensor_value_info("a", TensorProto.FLOAT, ["m", k])],
        [helper.make_tensor_value_info("c", TensorProto.FLOAT, ["m", n])],
        [numpy_helper.from_array(b, "b")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    onnx.checker.check_model(model)
    return model, lambda m: _graph_module(relay, from_onnx, graph_executor, microruntime,
                                          model, target, m)


def _graph_module(relay, from_onnx, graph_executor, microruntime, model, target, m):
    mod, params = from_onnx(model, shape={"a": (m, model.graph.input[0].type.tensor_type
                                                .shape.dim[1].dim_value)})
    lib = relay.build(mod, target=target, params=params)
    return graph_executor.GraphModule(lib["default"](microruntime.cpu()))


def fma_count(asm: str) -> int:
    """FMA instructions (vfmadd*, x86) in assembly text."""
    return len(re.findall(r"^\s*vfmadd\w*\s", asm, re.MULTILINE))


def blas_kernel() -> str:
    """numpy's BLAS and the kernel it runs (e.g. "openblas 0.3.27 SkylakeX"), by threadpoolctl."""
    try:
        from threadpoolctl import threadpool_info
    except ImportError:
        return "unknown (threadpoolctl not installed)"
    blas = [i for i in threadpool_info() if i.get("user_api") == "blas"]
    return ", ".join(f"{i.get('internal_api')} {i.get('version')} {i.get('architecture', '')}"
                     .strip() for i in blas) or "none found"


def measure(target, shape, path, repeat, gap=0.2, warmup=1, gflop=4.0):
    """Runs in the subprocess: compile time, median GFLOP/s of Kiln and numpy, the ratio
    spread, and the FMA count (llvm, topi path)."""
    import numpy as np

    import compiler
    import microruntime
    from compiler.target import Target

    m, k, n = shape
    rng = np.random.default_rng(0)
    a = rng.random((m, k), dtype=np.float32)
    b = rng.random((k, n), dtype=np.float32)
    t0 = time.perf_counter()
    if path == "topi":
        with Target(target):
            s, args = schedule(m, k, n)
        mod = compiler.build(s, args, target=target, name="mm")
        A, B, C = (microruntime.nd.array(x) for x in (a, b, np.zeros((m, n), "float32")))

        def run():
            mod["mm"](A, B, C)

        def result():
            return C.numpy()
    else:
        _, make = model_function(target, b)
        gm = make(m)
        mod = None
        gm.set_input("a", a)
        run = gm.run

        def result():
            return gm.get_output(0).numpy()
    compile_s = time.perf_counter() - t0
    run()
    np.testing.assert_allclose(result(), a @ b, rtol=1e-3)
    a @ b
    flops = 2.0 * m * k * n
    calls = max(1, round(gflop * 1e9 / flops))     # ~gflop GFLOP per timed sample

    def timed(fn):
        time.sleep(gap)      # let the other library's pool threads stop spinning
        for _ in range(warmup):
            fn()             # wake the cores (see the module docstring)
        t = time.perf_counter()
        for _ in range(calls):
            fn()
        return (time.perf_counter() - t) / calls

    kiln, ref = [], []
    for _ in range(repeat):
        kiln.append(timed(run))
        ref.append(timed(lambda: a @ b))
    ratios = [r / t for t, r in zip(kiln, ref)]
    asm = mod.get_source("asm") if mod is not None and target.startswith("llvm") else ""
    return {"compile_s": compile_s, "gflops": flops / float(np.median(kiln)) / 1e9,
            "numpy_gflops": flops / float(np.median(ref)) / 1e9,
            "ratio": float(np.median(ratios)), "spread": max(ratios) / min(ratios),
            "fma": fma_count(asm), "blas": blas_kernel()}


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--sizes", type=int, nargs="*", default=[512, 1024, 2048])
    p.add_argument("--shapes", nargs="*", default=SHAPES, help="MxKxN")
    p.add_argument("--paths", nargs="+", default=["topi", "model"], choices=["topi", "model"])
    p.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    p.add_argument("--targets", nargs="+", default=["llvm", "c"])
    p.add_argument("--repeat", type=int, default=9)
    p.add_argument("--gap", type=float, default=0.2,
                   help="idle seconds before each timed sample (0: back to back)")
    p.add_argument("--warmup", type=int, default=1,
                   help="untimed calls after the gap, before each timed sample")
    p.add_argument("--gflop", type=float, default=4.0, help="work per timed sample, GFLOP")
    p.add_argument("--child", help=argparse.SUPPRESS)
    opts = p.parse_args()
    if opts.child:
        shape = tuple(int(d) for d in opts.shapes[0].split("x"))
        print(json.dumps(measure(opts.child, shape, opts.paths[0], opts.repeat, opts.gap,
                                 opts.warmup, opts.gflop)))
        return
    print(f"float32 GEMM M x K x N, Kiln (topi: topi.x86.gemm_packed; model: an ONNX MatMul "
          f"by a weight through relay.build) vs numpy, median of {opts.repeat} alternating "
          f"repeats, {opts.gap} s idle and {opts.warmup} untimed call(s) before each sample of "
          f"~{opts.gflop} GFLOP")
    print(f"{'M x K x N':>16} {'path':>5} {'threads':>7} {'target':>6} {'Kiln GF/s':>10} "
          f"{'numpy GF/s':>10} {'ratio':>6} {'spread':>6} {'compile s':>9} {'FMA':>4}")
    shapes = [f"{n}x{n}x{n}" for n in opts.sizes] + list(opts.shapes)
    for shape, path in ((sh, pa) for sh in shapes for pa in opts.paths):
        for threads in opts.threads:
            env = dict(os.environ, MR_NUM_THREADS=str(threads), TVM_NUM_THREADS=str(threads),
                       OMP_NUM_THREADS=str(threads), OPENBLAS_NUM_THREADS=str(threads),
                       MKL_NUM_THREADS=str(threads),
                       PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
            for pinned in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE"):
                env.pop(pinned, None)
            for target in opts.targets:
                out = subprocess.run([sys.executable, __file__, "--child", target, "--shapes",
                                      shape, "--paths", path, "--repeat", str(opts.repeat),
                                      "--gap", str(opts.gap), "--warmup", str(opts.warmup),
                                      "--gflop", str(opts.gflop)], env=env,
                                     capture_output=True, text=True)
                head = f"{shape:>16} {path:>5} {threads:>7} {target:>6}"
                if out.returncode != 0:
                    print(f"{head} failed: {out.stderr.strip()[-300:]}")
                    continue
                r = json.loads(out.stdout.strip().splitlines()[-1])
                print(f"{head} {r['gflops']:>10.1f} "
                      f"{r['numpy_gflops']:>10.1f} {r['ratio']:>6.2f} {r['spread']:>6.2f} "
                      f"{r['compile_s']:>9.2f} {r['fma']:>4}   numpy: {r['blas']}", flush=True)


if __name__ == "__main__":
    main()
