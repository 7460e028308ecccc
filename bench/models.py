"""Latency of whole ONNX models: Kiln (relay.build, the graph executor) beside ONNX Runtime
(default session options, intra_op_num_threads = the thread count) in the same run, batch 1, at
1 and 2 threads. Each runtime is timed alone in its own process (Kiln's loads the exported .so
and imports no compiler), in alternating rounds. Models: the builders of
compiler/frontend/testing/onnx_models.py at benchmark sizes (MLP, LeNet, ResNet-style,
MobileNet-style, a transformer block) and a ResNet-18 at 224² (onnx.helper, random weights).
Prints the table (kiln/ort < 1: Kiln is faster), the geometric mean of kiln/ort per thread
count, each model's compile time, and the per-kernel profile with GFLOP/s of ResNet-18 and of
the slowest model relative to ONNX Runtime.

    python bench/models.py [--repeat 7] [--target llvm] [--models resnet18,lenet,...]
"""
import argparse
import json
import math
import os
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

# builder name in onnx_models (or "resnet18" below) -> keyword arguments (benchmark sizes)
MODELS = {
    "mlp": dict(batch=1, features=784, hidden=256, classes=10),
    "lenet": dict(batch=1, size=32, classes=10),
    "resnet_style": dict(batch=1, size=56, classes=10),
    "mobilenet_style": dict(batch=1, size=112, classes=10),
    "transformer_block": dict(batch=1, seq=64, dim=128, heads=4, ffn=512),
    "resnet18": dict(batch=1, size=224, classes=1000),
}

# Each runtime is timed alone in its own process, as it would be deployed: two thread pools
# in one process (both spin while idle) would fight over the cores and slow each other down.
KILN_CHILD = r"""
import json, sys
import numpy as np
import microruntime as mr
from microruntime import graph_executor
spec = json.loads(sys.argv[1])
out = {}
for name, item in spec.items():
    gm = graph_executor.GraphModule(mr.load_module(item["so"])["default"](mr.cpu()))
    gm.set_input(**{k: np.load(v) for k, v in item["inputs"].items()})
    gm.run()
    np.save(item["kiln_out"], gm.get_output(0).numpy())
    once = gm.benchmark(mr.cpu(), repeat=1, number=1).median
    number = max(3, int(item["seconds"] / max(once, 1e-7)))
    out[name] = {"ms": gm.benchmark(mr.cpu(), repeat=1, number=number).median * 1e3}
    if item.get("profile"):
        rep = gm.profile(number=number)
        out[name]["profile"] = [
            {"name": c["Name"], "node": c["Node"], "us": c["Duration (us)"].microseconds}
            for c in rep.calls]
print(json.dumps(out))
"""

ORT_CHILD = r"""
import json, sys, time
import numpy as np
import onnxruntime as ort
spec, threads = json.loads(sys.argv[1]), int(sys.argv[2])
out = {}
for name, item in spec.items():
    inputs = {k: np.load(v) for k, v in item["inputs"].items()}
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = threads
    sess = ort.InferenceSession(item["onnx"], opts, providers=["CPUExecutionProvider"])
    np.save(item["ort_out"], sess.run(None, inputs)[0])
    t = time.perf_counter()
    sess.run(None, inputs)
    number = max(3, int(item["seconds"] / max(time.perf_counter() - t, 1e-7)))
    t = time.perf_counter()
    for _ in range(number):
        sess.run(None, inputs)
    out[name] = {"ms": (time.perf_counter() - t) / number * 1e3}
print(json.dumps(out))
"""


def resnet18(batch=1, size=224, classes=1000, seed=7):
    """ResNet-18 (torchvision's layout: 7x7/2 stem, 3x3/2 max pool, 4 stages of 2 basic blocks,
    1x1/2 projections, global average pool, fc) with batch norms and random weights."""
    from compiler.frontend.testing.onnx_models import _finish, _Graph

    g = _Graph(seed)
    y = g.node("Relu", [g.conv_bn("x", "stem", 3, 64, 7, stride=2)])
    y = g.node("MaxPool", [y], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])
    cin = 64
    for stage, cout in enumerate((64, 128, 256, 512)):
        for block in range(2):
            stride = 2 if stage > 0 and block == 0 else 1
            tag = f"s{stage}b{block}"
            r = g.node("Relu", [g.conv_bn(y, tag + "c1", cin, cout, 3, stride)])
            r = g.conv_bn(r, tag + "c2", cout, cout, 3)
            s = g.conv_bn(y, tag + "proj", cin, cout, 1, stride) if stride != 1 or cin != cout \
                else y
            y = g.node("Relu", [g.node("Add", [r, s])])
            cin = cout
    y = g.node("Flatten", [g.node("GlobalAveragePool", [y])])
    out = g.dense(y, "fc", 512, classes)
    return _finish(g, "resnet18", {"x": (batch, 3, size, size)}, out, 13)


def _kernel_flops(mod):
    """{primitive function name: FLOPs of its convolutions and products (multiply-add = 2; a
    Winograd convolution counts as the direct one it replaces)}."""
    from compiler.relax import expr as X

    def prod(s):
        return math.prod(int(d) for d in s)

    flops = {}
    for name, func in mod.items():
        if not (isinstance(func, X.Function) and func.attrs.get("Primitive")):
            continue
        total = 0
        for block in func.body.blocks:
            for b in block.bindings:
                v = b.value
                if not (isinstance(v, X.Call) and isinstance(v.op, X.Op)):
                    continue
                op = v.op.name
                out = v.struct_info.shape
                if op == "relax.nn.conv2d":
                    w = v.args[1].struct_info.shape
                    oc = int(w[0]) * (int(w[5]) if len(w) == 6 else 1)
                    total += 2 * prod(out) * prod(w) // oc
                elif op == "relax.nn.contrib_conv2d_winograd_without_weight_transform":
                    # the direct 3x3 convolution's count (effective GFLOP/s)
                    total += 2 * prod(out) * int(v.args[1].struct_info.shape[2]) * 9
                elif op in ("relax.nn.dense", "relax.matmul", "relax.nn.contrib_dense_pack"):
                    k = int(v.args[0].struct_info.shape[-1])
                    total += 2 * prod(out) * k
        flops[name] = total
    return flops


def _build(name, kw, work, target):
    import numpy as np
    import onnx

    from compiler import relay
    from compiler.frontend import from_onnx
    from compiler.frontend.testing import onnx_models

    m = resnet18(**kw) if name == "resnet18" else getattr(onnx_models, name)(**kw)
    path = os.path.join(work, name)
    onnx.save(m.model, path + ".onnx")
    mod, params = from_onnx(m.model, shape=m.input_shapes)
    t0 = time.perf_counter()
    lib = relay.build(mod, target=target, params=params)
    compile_s = time.perf_counter() - t0
    lib.export_library(path + ".so")
    files = {}
    for k, x in m.inputs(seed=0).items():
        files[k] = f"{path}_{k}.npy"
        np.save(files[k], x)
    return {"so": path + ".so", "onnx": path + ".onnx", "inputs": files, "seconds": 0.2,
            "kiln_out": path + "_kiln_out.npy", "ort_out": path + "_ort_out.npy"}, \
        compile_s, (mod, params)


def _run(child, spec, threads):
    """{model: {"ms": ...}} from one child process (`child`) at `threads` threads."""
    env = dict(os.environ, MR_NUM_THREADS=str(threads), OMP_NUM_THREADS=str(threads),
               PYTHONPATH=ROOT)
    out = subprocess.run([sys.executable, "-c", child, json.dumps(spec), str(threads)],
                         env=env, capture_output=True, text=True, cwd=ROOT)
    if out.returncode != 0:
        sys.exit(f"benchmark child failed: {out.stderr[-3000:]}")
    return json.loads(out.stdout)


def _measure(spec, threads, repeat):
    """{model: {"kiln_ms", "ort_ms", "diff"}}: medians over `repeat` rounds, each round a Kiln
    process then an ONNX Runtime process (so that both see the same drift in machine load)."""
    import numpy as np

    times = {name: {"kiln_ms": [], "ort_ms": []} for name in spec}
    for _ in range(repeat):
        for key, child in (("kiln_ms", KILN_CHILD), ("ort_ms", ORT_CHILD)):
            for name, r in _run(child, spec, threads).items():
                times[name][key].append(r["ms"])
    out = {}
    for name, item in spec.items():
        got, want = np.load(item["kiln_out"]), np.load(item["ort_out"])
        diff = float(np.abs(got - want).max() / (np.abs(want).max() + 1e-30))
        out[name] = {k: float(np.median(v)) for k, v in times[name].items()}
        out[name]["diff"] = diff
    return out


def _profile(name, item, graph_mod, target):
    from compiler.relay.build_module import optimize
    from compiler.target import Target

    mod, params = graph_mod
    flops = _kernel_flops(optimize(mod, params, Target(target)))
    prof = _run(KILN_CHILD, {name: dict(item, profile=True)}, 1)[name]["profile"]
    print(f"\nper-kernel profile of {name} (1 thread; GFLOP/s of convolutions and products):")
    print(f"{'node':<44}{'us':>10}{'GFLOP/s':>9}")
    total = 0.0
    for c in prof:
        f = flops.get(c["node"]) or flops.get(c["name"]) or 0
        total += c["us"]
        rate = f"{f / c['us'] / 1e3:>9.1f}" if f and c["us"] > 0 else f"{'':>9}"
        print(f"{c['node'][:43]:<44}{c['us']:>10.1f}{rate}")
    print(f"{'total':<44}{total:>10.1f}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--target", default="llvm")
    ap.add_argument("--models", default=",".join(MODELS))
    args = ap.parse_args()
    names = args.models.split(",")
    work = tempfile.mkdtemp(prefix="kiln_bench_models_")
    spec, compile_s, graphs = {}, {}, {}
    for name in names:
        spec[name], compile_s[name], graphs[name] = _build(name, MODELS[name], work,
                                                           args.target)
        print(f"compiled {name} in {compile_s[name]:.2f} s", file=sys.stderr, flush=True)
    results = {t: _measure(spec, t, args.repeat) for t in (1, 2)}
    print(f"{'model':<20}{'compile s':>10}" + "".join(
        f"{f'kiln {t}T ms':>12}{f'ort {t}T ms':>12}{'kiln/ort':>9}" for t in (1, 2))
        + f"{'rel diff':>10}")
    logs = {1: [], 2: []}
    for name in names:
        row = f"{name:<20}{compile_s[name]:>10.2f}"
        for t in (1, 2):
            r = results[t][name]
            ratio = r["kiln_ms"] / r["ort_ms"]
            logs[t].append(math.log(ratio))
            row += f"{r['kiln_ms']:>12.3f}{r['ort_ms']:>12.3f}{ratio:>9.2f}"
        print(row + f"{max(results[t][name]['diff'] for t in (1, 2)):>10.1e}")
    geo = "  ".join(f"{t} thread{'s' if t > 1 else ''} {math.exp(sum(v) / len(v)):.2f}"
                    for t, v in logs.items())
    print(f"geometric mean kiln/ort: {geo}")
    print(f"(median of {args.repeat} rounds, each runtime alone in its own process, ~0.2 s of "
          f"runs per measurement; target {args.target}; ONNX Runtime's time includes its Python "
          "call overhead)")
    slowest = max(names, key=lambda n: results[1][n]["kiln_ms"] / results[1][n]["ort_ms"])
    for name in dict.fromkeys(["resnet18", slowest]):
        if name in spec:
            _profile(name, spec[name], graphs[name], args.target)


if __name__ == "__main__":
    main()
