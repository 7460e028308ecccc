"""GPU targets beside the CPU in one run: a 1024² float32 matmul (GFLOP/s and ms) and the small
CNN of compiler/relax/testing/models.py (conv_bn_relu_pool_dense, batch 1 and 8: ms per
inference) built with relay.build for OpenCL (PoCL here: OpenCL on the CPU's cores), Vulkan
(SPIR-V; lavapipe here: Vulkan on the CPU's cores) and llvm. The CUDA column runs only where a
CUDA GPU is present ("no GPU" otherwise; the PTX is still compiled, so the build is checked);
so does each other GPU column ("no device"). Every result is checked against numpy first.

GPU schedules: topi.cuda (matmul: tiled_gemm, 64x64 block tiles, 4x4 per thread, 16-deep
shared tiles); CPU: topi.x86 (matmul: gemm_packed).

    python bench/gpu.py [--n 1024] [--repeat 5] [--number 3]
"""
import argparse
import time

import numpy as np

import compiler
import microruntime
from compiler import relay, te, topi
from compiler.relax.testing import models
from compiler.target import Target
from microruntime import graph_executor

TARGETS = [("llvm", "cpu"), ("opencl", "opencl"), ("vulkan", "vulkan"), ("cuda", "cuda")]


def _device(kind):
    return getattr(microruntime, kind)(0)


def _runnable(kind) -> bool:
    return kind == "cpu" or microruntime.enabled(kind)


def _not_run(kind, compile_s):
    what = "no GPU (PTX" if kind == "cuda" else "no device (code"
    return f"{what} compiled in {compile_s:.1f} s)"


def matmul(target_name, n):
    A = te.placeholder((n, n), name="A")
    B = te.placeholder((n, n), name="B")
    if target_name == "llvm":
        C = topi.x86.gemm_packed(A, B)
        s = topi.x86.schedule_gemm_packed(C)
        return compiler.build(s, [A, B, C], target="llvm", name="mm")
    C = topi.nn.matmul(A, B)
    tgt = Target(target_name, host="llvm")
    with tgt:
        s = topi.cuda.schedule_dense_large_batch([C])
    return compiler.build(s, [A, B, C], target=tgt, name="mm")


def bench_matmul(n, number, repeat):
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((n, n), "float32"), rng.standard_normal((n, n), "float32")
    want = a @ b
    rows = {}
    for target_name, kind in TARGETS:
        t0 = time.perf_counter()
        mod = matmul(target_name, n)
        compile_s = time.perf_counter() - t0
        if not _runnable(kind):
            rows[target_name] = _not_run(kind, compile_s)
            continue
        dev = _device(kind)
        nd = [microruntime.nd.array(x, dev) for x in (a, b, np.zeros((n, n), "float32"))]
        mod["mm"](*nd)
        np.testing.assert_allclose(nd[2].numpy(), want, rtol=1e-3, atol=1e-2)
        sec = mod.time_evaluator("mm", dev, number=number, repeat=repeat)(*nd).mean
        rows[target_name] = f"{2 * n ** 3 / sec / 1e9:8.2f} GFLOP/s {sec * 1e3:9.2f} ms " \
                            f"(compile {compile_s:.1f} s)"
    return rows


def bench_cnn(batch, number, repeat):
    m = models.conv_bn_relu_pool_dense(batch=batch, channels=3, size=32, filters=16)
    inputs = m.inputs()
    want = m.reference(inputs)
    rows = {}
    for target_name, kind in TARGETS:
        t0 = time.perf_counter()
        host = {} if target_name == "llvm" else {"target_host": "llvm"}
        lib = relay.build(m.mod, target=target_name, params=m.params, **host)
        compile_s = time.perf_counter() - t0
        if not _runnable(kind):
            rows[target_name] = _not_run(kind, compile_s)
            continue
        dev = _device(kind)
        g = graph_executor.GraphModule(lib["default"](dev))
        g.set_input("x", inputs["x"])
        g.run()
        np.testing.assert_allclose(g.get_output(0).numpy(), want, rtol=1e-3, atol=1e-4)
        times = []
        for _ in range(repeat):
            t0 = time.perf_counter()
            for _ in range(number):
                g.run()
            dev.sync()
            times.append((time.perf_counter() - t0) / number)
        rows[target_name] = f"{np.median(times) * 1e3:9.3f} ms/inference " \
                            f"(compile {compile_s:.1f} s)"
    return rows


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--n", type=int, default=1024)
    p.add_argument("--repeat", type=int, default=5)
    p.add_argument("--number", type=int, default=3)
    args = p.parse_args()
    print(f"OpenCL: {'yes' if microruntime.enabled('opencl') else 'no device'}; "
          f"Vulkan: {'yes' if microruntime.enabled('vulkan') else 'no device'}; "
          f"CUDA: {'yes' if microruntime.enabled('cuda') else 'no GPU'}; "
          f"threads (CPU runtime): {microruntime.num_threads()}")
    print(f"\nmatmul {args.n}x{args.n}x{args.n} float32")
    for t, r in bench_matmul(args.n, args.number, args.repeat).items():
        print(f"  {t:7s} {r}")
    for batch in (1, 8):
        print(f"\nCNN conv_bn_relu_pool_dense, 3x32x32 input, 16 filters, batch {batch}")
        for t, r in bench_cnn(batch, args.number * 3, args.repeat).items():
            print(f"  {t:7s} {r}")


if __name__ == "__main__":
    main()
