"""The Relax VM from Python: per-call overhead of a trivial VM function, and model latency on
the VM beside the graph executor, with Apache TVM's VM in the same run when it is installed.

Kiln builds four programs with `compiler.relax.build` and exports them: `ident` (main(x)
returns x after the entry checks: 3 instructions, no kernel), an MLP with a symbolic batch
(784-128-10; run at n = 1 and 64), a small CNN (conv + bn + relu + pool + dense, static
shapes) and ResNet-18 at 224x224, batch 1 (bench/models.py's ONNX model through the frontend;
static shapes: the VM gets the graph executor's kernels, so vm/graph is the VM's own cost).
Figures, each the median over 7 repeats of the mean time per call:
- Kiln's VM (microruntime.relax_vm, when the runtime has it): ident, MLP, CNN;
- Kiln's graph executor (relay.build of the same models with static shapes): MLP, CNN;
- TVM 0.27's relax.VirtualMachine (subprocess) running the SAME exported Kiln libraries.
The last column is Kiln's VM time over the graph executor's (the cost of the symbolic batch and
the VM); the header names the thread count (TVM_NUM_THREADS, all cores when unset).

    python bench/vm_overhead.py [--tvm-python PATH] [--calls N] [--no-resnet18]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, HERE)

from bench_common import find_tvm_python  # noqa: E402

TVM_SIDE = r"""
import json, sys, statistics, time
import numpy as np
import tvm
from tvm import relax
spec = json.loads(sys.argv[1])
out = {}
def tensor(a):
    return tvm.runtime.tensor(a) if hasattr(tvm.runtime, "tensor") else tvm.nd.array(a)
for name, (lib, shapes, calls) in spec.items():
    vm = relax.VirtualMachine(tvm.runtime.load_module(lib), tvm.cpu())
    f = vm["main"]
    args = [tensor(np.random.rand(*s).astype("float32")) for s in shapes]
    f(*args)
    reps = []
    for _ in range(7):
        t = time.perf_counter()
        for _ in range(calls):
            f(*args)
        reps.append((time.perf_counter() - t) / calls * 1e6)
    out[name] = statistics.median(reps)
print(json.dumps(out))
"""


def per_call_us(f, args, calls):
    f(*args)
    reps = []
    for _ in range(7):
        t = time.perf_counter()
        for _ in range(calls):
            f(*args)
        reps.append((time.perf_counter() - t) / calls * 1e6)
    return statistics.median(reps)


def resnet18():
    """(mod, params, input shape) of bench/models.py's ResNet-18 (ONNX, random weights)."""
    import importlib.util

    from compiler.frontend import from_onnx

    spec = importlib.util.spec_from_file_location("bench_models", os.path.join(HERE, "models.py"))
    bench_models = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench_models)
    m = bench_models.resnet18()
    mod, params = from_onnx(m.model, shape=m.input_shapes)
    return mod, params, m.input_shapes["x"]


def build_programs(workdir, with_resnet18=True):
    from compiler import relax
    from compiler.relax import script as R
    from compiler.relax.testing import models, vm_models

    x = relax.Var("x", R.Tensor((4,), "float32"))
    bb = relax.BlockBuilder()
    with bb.function("main", [x]):
        bb.emit_func_output(x)
    progs = {}
    ident = relax.build(bb.get(), "llvm")
    progs["ident"] = (ident, [(4,)])
    mlp = vm_models.mlp()
    progs["mlp"] = (relax.build(mlp.mod, "llvm", params=mlp.params), None)
    cnn = models.conv_bn_relu_pool_dense()
    progs["cnn"] = (relax.build(cnn.mod, "llvm", params=cnn.params),
                    [cnn.input_shapes[k] for k in cnn.input_names])
    resnet = resnet18() if with_resnet18 else None
    if resnet is not None:
        progs["resnet18"] = (relax.build(resnet[0], "llvm", params=resnet[1]), [resnet[2]])
    paths = {}
    for name, (ex, _) in progs.items():
        paths[name] = os.path.join(workdir, f"{name}.so")
        ex.export_library(paths[name])
    return progs, paths, mlp, cnn, resnet


def graph_latency(mod, params, shapes, calls):
    import microruntime
    from compiler import relay
    from microruntime import graph_executor

    lib = relay.build(mod, target="llvm", params=params)
    gm = graph_executor.GraphModule(lib["default"](microruntime.cpu()))
    for k, s in shapes.items():
        gm.set_input(k, np.random.rand(*s).astype("float32"))
    return per_call_us(gm.run, [], calls)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tvm-python", default=None)
    ap.add_argument("--calls", type=int, default=2000)
    ap.add_argument("--no-resnet18", action="store_true", help="leave ResNet-18 out (faster)")
    args = ap.parse_args()
    workdir = tempfile.mkdtemp(prefix="kiln_vm_bench_")
    progs, paths, mlp, cnn, resnet = build_programs(workdir, not args.no_resnet18)
    cnn_shapes = [cnn.input_shapes[k] for k in cnn.input_names]
    cases = {"ident": (paths["ident"], [(4,)], args.calls),
             "mlp_n1": (paths["mlp"], [(1, 784)], max(args.calls // 10, 10)),
             "mlp_n64": (paths["mlp"], [(64, 784)], max(args.calls // 100, 5)),
             "cnn": (paths["cnn"], cnn_shapes, max(args.calls // 20, 10))}
    if resnet is not None:
        cases["resnet18"] = (paths["resnet18"], [resnet[2]], max(args.calls // 200, 5))
    rows = {}
    try:
        import microruntime
        from microruntime.relax_vm import VirtualMachine
        for name, (_lib, shapes, calls) in cases.items():
            key = name.split("_")[0]
            vm = VirtualMachine(progs[key][0], microruntime.cpu())
            a = [microruntime.nd.array(np.random.rand(*s).astype("float32")) for s in shapes]
            rows.setdefault(name, {})["kiln_vm"] = per_call_us(vm["main"], a, calls)
    except (ImportError, AttributeError) as err:
        print(f"(Kiln VM not measured: {err})")
    # the graph executor: the same models with static shapes
    from compiler import relax, tir  # noqa: F401
    from compiler.relax.testing import models
    for n, name in ((1, "mlp_n1"), (64, "mlp_n64")):
        static = _static_mlp(mlp, n)
        rows.setdefault(name, {})["kiln_graph"] = graph_latency(
            static, mlp.params, {"x": (n, 784)}, cases[name][2])
    rows.setdefault("cnn", {})["kiln_graph"] = graph_latency(
        cnn.mod, cnn.params, dict(cnn.input_shapes), cases["cnn"][2])
    if resnet is not None:
        rows.setdefault("resnet18", {})["kiln_graph"] = graph_latency(
            resnet[0], resnet[1], {"x": resnet[2]}, cases["resnet18"][2])
    del models
    tvm_python = find_tvm_python(args.tvm_python)
    if tvm_python:
        res = subprocess.run([tvm_python, "-c", TVM_SIDE, json.dumps(cases)],
                             capture_output=True, text=True, timeout=600)
        if res.returncode == 0:
            for name, us in json.loads(res.stdout.strip().splitlines()[-1]).items():
                rows.setdefault(name, {})["tvm_vm"] = us
        else:
            print("(TVM side failed: " + res.stderr.strip().splitlines()[-1] + ")")
    else:
        print("(TVM not found: give --tvm-python or set KILN_TVM_PYTHON)")
    cols = ["kiln_vm", "tvm_vm", "kiln_graph"]
    threads = os.environ.get("TVM_NUM_THREADS", f"all ({os.cpu_count()})")
    print(f"{'case':10s}" + "".join(f"{c:>14s}" for c in cols) + f"{'vm/graph':>10s}"
          + f"   (us per call, median; threads: {threads})")
    for name, r in rows.items():
        ratio = (f"{r['kiln_vm'] / r['kiln_graph']:10.2f}" if "kiln_vm" in r and "kiln_graph" in r
                 else f"{'-':>10s}")
        print(f"{name:10s}" + "".join(f"{r[c]:14.2f}" if c in r else f"{'-':>14s}"
                                      for c in cols) + ratio)


def _static_mlp(prog, n):
    """The MLP of `prog` with its batch bound to n (the graph executor needs static shapes)."""
    from compiler import relax
    from compiler.relax import op
    from compiler.relax import script as R

    x = relax.Var("x", R.Tensor((n, 784), "float32"))
    ws = [relax.Var(k, R.Tensor(v.shape, "float32")) for k, v in prog.params.items()]
    bb = relax.BlockBuilder()
    with bb.function("main", [x] + ws):
        h = bb.emit(op.nn.relu(op.add(op.nn.dense(x, ws[0]), ws[1])))
        bb.emit_func_output(bb.emit(op.nn.dense(h, ws[2])))
    return bb.get()


if __name__ == "__main__":
    main()
