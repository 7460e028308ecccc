"""Latency of int8 models (onnxruntime.quantization of float CNNs at opset 13: QDQ static
per channel and QOperator, calibrated on fixed random inputs) compiled by Kiln (the graph
executor), beside ONNX Runtime running the same int8 model with its default optimizations, and
beside Kiln's float build of the float model, measured in the same run with 1 and 2 threads
(MR_NUM_THREADS for Kiln, intra_op_num_threads for ONNX Runtime), each thread count in its own
process. Models: `resnet_cnn` (below: a ResNet-style CNN, 3x64x64, stages of 32, 64 and 128
channels), `mobilenet_cnn` (below: depthwise-separable blocks, 3x64x64, 32 to 128
channels), `mlp_tokens` (below: a transformer's feed-forward stack on 64 tokens, MatMul-heavy)
and the ONNX model builders' small models (compiler/frontend/testing/onnx_models.py); with
--zoo, models of the zoo too (bench/zoo: torchvision architectures as torch exports them,
quantized as they are, calibrated on their saved inputs with noise).

    python bench/int8.py [--repeat 10] [--target llvm] [--batches 1,8] [--threads 1,2]
                         [--models resnet_cnn] [--zoo resnet18,mobilenet_v2]

max|diff| is Kiln's int8 output against ONNX Runtime's with graph optimizations off (its
reference semantics), in units of the last DequantizeLinear's scale; `ort steps` is the same
for ONNX Runtime with its default optimizations (its fused int8 kernels), beside it. In deep
models one-step differences inside the network (a float32 rounding crossing a half) grow on
the way to the output, for both. Sizes are of the exported
libraries (code and weights in one file), int8 against float, and their parts: code,
graph + weights, the argument checks' message templates, the rest.
"""
import argparse
import os
import sys
import tempfile
import time

from bench_common import run_per_thread_count

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

MODELS = ("resnet_cnn", "mobilenet_cnn", "mlp_tokens")
KINDS = ("qdq", "qop")

# Runs in a process per thread count; imports no compiler module.
CHILD = r"""
import json, sys, time
import numpy as np
import onnxruntime as ort
import microruntime as mr
from microruntime import graph_executor
spec, threads = json.loads(sys.argv[1]), int(sys.argv[2])

def kiln_ms(so, inputs, repeat, number):
    gm = graph_executor.GraphModule(mr.load_module(so)["default"](mr.cpu()))
    gm.set_input(**inputs)
    return gm.benchmark(mr.cpu(), repeat=repeat, number=number).median * 1e3

# Kiln first, before any ONNX Runtime session exists: its intra-op threads spin after each
# run and would compete with Kiln's on the same cores; each session is closed after use.
out = {}
for key, item in spec.items():
    inputs = {k: np.load(v) for k, v in item["inputs"].items()}
    out[key] = {"kiln_ms": kiln_ms(item["so"], inputs, item["repeat"], item["number"]),
                "float_ms": kiln_ms(item["float_so"], inputs, item["repeat"], item["number"])}
for key, item in spec.items():
    inputs = {k: np.load(v) for k, v in item["inputs"].items()}
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = threads
    opts.inter_op_num_threads = 1
    sess = ort.InferenceSession(item["onnx"], opts, providers=["CPUExecutionProvider"])
    sess.run(None, inputs)
    times = []
    for _ in range(item["repeat"]):
        t = time.perf_counter()
        for _ in range(item["number"]):
            sess.run(None, inputs)
        times.append((time.perf_counter() - t) / item["number"])
    out[key]["ort_ms"] = float(np.median(times)) * 1e3
    del sess
print(json.dumps(out))
"""


def resnet_cnn(batch: int = 1, size: int = 64, classes: int = 10, seed: int = 7):
    """A ResNet-style CNN on 3 x size x size: a 3x3 stem to 32 channels, a basic residual
    block at 32, strided blocks (1x1 projection shortcut) to 64 and 128, global average pool,
    fully connected."""
    from compiler.frontend.testing import onnx_models as om
    g = om._Graph(seed)
    y = g.node("Relu", [g.conv_bn("x", "stem", 3, 32, 3)])
    r = g.node("Relu", [g.conv_bn(y, "b1c1", 32, 32, 3)])
    y = g.node("Relu", [g.node("Add", [g.conv_bn(r, "b1c2", 32, 32, 3), y])])
    cin = 32
    for i, cout in enumerate((64, 128)):
        r = g.node("Relu", [g.conv_bn(y, f"b{i + 2}c1", cin, cout, 3, stride=2)])
        r = g.conv_bn(r, f"b{i + 2}c2", cout, cout, 3)
        s = g.conv_bn(y, f"b{i + 2}proj", cin, cout, 1, stride=2)
        y = g.node("Relu", [g.node("Add", [r, s])])
        cin = cout
    y = g.node("Flatten", [g.node("GlobalAveragePool", [y])])
    out = g.dense(y, "fc", cin, classes)
    return om._finish(g, "resnet_cnn", {"x": (batch, 3, size, size)}, out, 13)


def mobilenet_cnn(batch: int = 1, size: int = 64, classes: int = 10, seed: int = 9):
    """A MobileNet-style CNN on 3 x size x size: a strided 3x3 stem to 32 channels, then
    depthwise-separable blocks (3x3 depthwise + BN + ReLU6, 1x1 pointwise + BN + ReLU6) to 64,
    128 (strided) and 128 channels, global average pool, fully connected."""
    from compiler.frontend.testing import onnx_models as om
    g = om._Graph(seed)
    lo, hi = g.const("relu6_min", 0.0), g.const("relu6_max", 6.0)

    def relu6(v):
        return g.node("Clip", [v, lo, hi])

    y = relu6(g.conv_bn("x", "stem", 3, 32, 3, stride=2))
    cin = 32
    for i, (cout, stride) in enumerate(((64, 1), (128, 2), (128, 1))):
        y = relu6(g.conv_bn(y, f"dw{i}", cin, cin, 3, stride=stride, group=cin))
        y = relu6(g.conv_bn(y, f"pw{i}", cin, cout, 1))
        cin = cout
    y = g.node("Flatten", [g.node("GlobalAveragePool", [y])])
    out = g.dense(y, "fc", cin, classes)
    return om._finish(g, "mobilenet_cnn", {"x": (batch, 3, size, size)}, out, 13)


def mlp_tokens(batch: int = 1, tokens: int = 64, dim: int = 256, hidden: int = 1024,
               layers: int = 2, seed: int = 11):
    """A transformer's feed-forward layers on batch x tokens x dim: `layers` times
    x + MatMul(Relu(MatMul(x, W1) + b1), W2) + b2 (3-D by 2-D MatMuls)."""
    from compiler.frontend.testing import onnx_models as om
    g = om._Graph(seed)
    y = "x"
    for i in range(layers):
        h = g.node("MatMul", [y, g.weight(f"ff{i}a_w", (dim, hidden), dim ** -0.5)])
        h = g.node("Relu", [g.node("Add", [h, g.weight(f"ff{i}a_b", (hidden,), 0.1)])])
        h = g.node("MatMul", [h, g.weight(f"ff{i}b_w", (hidden, dim), hidden ** -0.5)])
        y = g.node("Add", [g.node("Add", [h, g.weight(f"ff{i}b_b", (dim,), 0.1)]), y])
    return om._finish(g, "mlp_tokens", {"x": (batch, tokens, dim)}, y, 13)


def _model(name: str, batch: int):
    from compiler.frontend.testing import onnx_models
    own = {"resnet_cnn": resnet_cnn, "mobilenet_cnn": mobilenet_cnn, "mlp_tokens": mlp_tokens}
    return own[name](batch) if name in own else getattr(onnx_models, name)(batch=batch)


class _ZooModel:
    """A zoo model (bench/zoo: exported by torch, nobody here wrote it) with the interface of
    the builders' models: its ONNX model, input shapes, and inputs(seed): the zoo's saved
    inputs for seed 0, those plus N(0, 0.1) noise for other seeds (the calibration set)."""

    def __init__(self, name: str, zoo: str):
        import numpy as np
        import onnx
        d = os.path.join(zoo, name)
        if not os.path.exists(os.path.join(d, "model.onnx")):
            raise SystemExit(f"{d}/model.onnx is missing: export it first "
                             f"(make zoo ZOO_ONLY={name})")
        self.model = onnx.load(os.path.join(d, "model.onnx"))
        self.saved = dict(np.load(os.path.join(d, "inputs.npz")))
        self.input_shapes = {k: v.shape for k, v in self.saved.items()}

    def inputs(self, seed: int = 0):
        import numpy as np
        if seed == 0:
            return dict(self.saved)
        rng = np.random.default_rng(seed)
        return {k: (v + 0.1 * rng.standard_normal(v.shape)).astype(v.dtype)
                for k, v in self.saved.items()}


class _Calibration:
    """Fixed random inputs of the float model (seeds 100..103)."""

    def __init__(self, m):
        self.feeds = iter([m.inputs(seed=100 + i) for i in range(4)])

    def get_next(self):
        return next(self.feeds, None)


def _quantize(src: str, dst: str, m, kind: str) -> None:
    from onnxruntime.quantization import QuantFormat, QuantType, quantize_static
    fmt = QuantFormat.QDQ if kind == "qdq" else QuantFormat.QOperator
    quantize_static(src, dst, _Calibration(m), quant_format=fmt, per_channel=True,
                    activation_type=QuantType.QUInt8, weight_type=QuantType.QInt8)


def _breakdown(so: str):
    """{part: bytes} of an exported library: "code" (.text), "blob" (the graph and weights,
    `__tvm_ffi__library_bin`), "rodata" (the rest of .rodata: the argument checks' message
    templates), "other" (ELF tables, debug sections); None without binutils' size and nm."""
    import shutil
    import subprocess
    if shutil.which("size") is None or shutil.which("nm") is None:
        return None
    sections = {}
    for line in subprocess.run(["size", "-A", so], capture_output=True, text=True).stdout.split(
            "\n"):
        f = line.split()
        if len(f) >= 2 and f[0].startswith(".") and f[1].isdigit():
            sections[f[0]] = int(f[1])
    blob = 0
    for line in subprocess.run(["nm", "-S", so], capture_output=True, text=True).stdout.split(
            "\n"):
        f = line.split()
        if len(f) == 4 and f[3] == "__tvm_ffi__library_bin":
            blob = int(f[1], 16)
    code = sections.get(".text", 0)
    rodata = sections.get(".rodata", 0) - blob
    return {"code": code, "blob": blob, "rodata": rodata,
            "other": os.path.getsize(so) - code - blob - rodata}


def _reference_diff(path: str, so: str, inputs):
    """(max |Kiln - ONNX Runtime (optimizations off)|, max |ONNX Runtime (default
    optimizations) - ONNX Runtime (optimizations off)|) in steps of the output's scale: the
    second is how far ONNX Runtime's own fused int8 kernels land from its reference."""
    import numpy as np
    import onnx
    import onnxruntime as ort
    from onnx import numpy_helper

    import microruntime as mr
    from microruntime import graph_executor
    model = onnx.load(path)
    inits = {t.name: numpy_helper.to_array(t) for t in model.graph.initializer}
    last = [n for n in model.graph.node if n.op_type == "DequantizeLinear"][-1]
    step = float(inits[last.input[1]])
    opts = ort.SessionOptions()
    opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    want = ort.InferenceSession(path, opts, providers=["CPUExecutionProvider"]).run(
        None, inputs)[0]
    fused = ort.InferenceSession(path, providers=["CPUExecutionProvider"]).run(None, inputs)[0]
    gm = graph_executor.GraphModule(mr.load_module(so)["default"](mr.cpu()))
    gm.set_input(**inputs)
    gm.run()
    return (float(np.abs(gm.get_output(0).numpy() - want).max()) / step,
            float(np.abs(fused - want).max()) / step)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=10)
    ap.add_argument("--target", default="llvm")
    ap.add_argument("--batches", default="1,8")
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--models", default=",".join(MODELS),
                    help="resnet_cnn and/or onnx_models builders (lenet, resnet_style, ...)")
    ap.add_argument("--zoo", default="",
                    help="zoo models too (bench/zoo, batch 1), e.g. resnet18,mobilenet_v2")
    ap.add_argument("--zoo-dir", default=os.path.join(ROOT, "build", "zoo"))
    args = ap.parse_args()
    import numpy as np
    import onnx
    import onnx.version_converter

    from compiler import relay
    from compiler.frontend import from_onnx

    batches = [int(b) for b in args.batches.split(",")]
    threads = [int(t) for t in args.threads.split(",")]
    work = tempfile.mkdtemp(prefix="kiln_bench_int8_")
    spec, compile_s, diffs, sizes = {}, {}, {}, {}

    def build(model, m, so):
        t0 = time.perf_counter()
        mod, params = from_onnx(model, shape=m.input_shapes)
        relay.build(mod, target=args.target, params=params).export_library(so)
        return time.perf_counter() - t0

    runs = [(name, batch) for name in args.models.split(",") if name for batch in batches]
    runs += [(name, 1) for name in args.zoo.split(",") if name]
    zoo = {name for name in args.zoo.split(",") if name}
    for name, batch in runs:
        m = _ZooModel(name, args.zoo_dir) if name in zoo else _model(name, batch)
        base = os.path.join(work, f"{name}_{batch}")
        onnx.save(m.model if name in zoo else
                  onnx.version_converter.convert_version(m.model, 13), base + ".onnx")
        build(onnx.load(base + ".onnx"), m, base + "_float.so")
        files = {}
        for k, x in m.inputs(seed=0).items():
            files[k] = f"{base}_{k}.npy"
            np.save(files[k], x)
        for kind in KINDS:
            key = f"{name} b{batch} {kind}"
            path = f"{base}_{kind}"
            _quantize(base + ".onnx", path + ".onnx", m, kind)
            compile_s[key] = build(onnx.load(path + ".onnx"), m, path + ".so")
            diffs[key] = _reference_diff(path + ".onnx", path + ".so", m.inputs(seed=0))
            sizes[key] = (os.path.getsize(path + ".so"), os.path.getsize(base + "_float.so"))
            spec[key] = {"so": path + ".so", "float_so": base + "_float.so",
                         "onnx": path + ".onnx", "inputs": files, "repeat": args.repeat,
                         "number": 20 if batch == 1 else 5}
            print(f"compiled {key} in {compile_s[key]:.1f} s", file=sys.stderr, flush=True)
    results = run_per_thread_count(CHILD, spec, threads, ROOT)
    head = f"{'model':<28}{'compile s':>10}"
    for t in threads:
        head += f"{f'int8 {t}T ms':>13}{f'ort {t}T ms':>12}{f'f32 {t}T ms':>12}"
    print(head + f"{'max|diff| steps':>17}{'ort steps':>11}")
    for key in spec:
        row = f"{key:<28}{compile_s[key]:>10.1f}"
        for t in threads:
            r = results[t][key]
            row += f"{r['kiln_ms']:>13.4f}{r['ort_ms']:>12.4f}{r['float_ms']:>12.4f}"
        print(row + f"{diffs[key][0]:>17.2f}{diffs[key][1]:>11.2f}")
    print()
    head = f"{'model':<28}"
    for t in threads:
        head += f"{f'int8/ort {t}T':>14}{f'f32/int8 {t}T':>14}"
    print(head + f"{'int8 KiB':>10}{'f32 KiB':>10}{'f32/int8':>10}")
    for key in spec:
        row = f"{key:<28}"
        for t in threads:
            r = results[t][key]
            row += f"{r['kiln_ms'] / r['ort_ms']:>14.2f}{r['float_ms'] / r['kiln_ms']:>14.2f}"
        q, f = sizes[key]
        print(row + f"{q / 1024:>10.0f}{f / 1024:>10.0f}{f / q:>10.2f}")
    print()
    print(f"{'library KiB':<28}{'code':>8}{'graph+weights':>15}{'messages':>10}{'other':>8}"
          f"{'total':>8}")
    for key in spec:
        for what, so in (("int8", spec[key]["so"]), ("f32", spec[key]["float_so"])):
            parts = _breakdown(so)
            if parts is None:
                break
            print(f"{key + ' ' + what:<28}{parts['code'] / 1024:>8.0f}"
                  f"{parts['blob'] / 1024:>15.0f}{parts['rodata'] / 1024:>10.0f}"
                  f"{parts['other'] / 1024:>8.0f}{os.path.getsize(so) / 1024:>8.0f}")
    print(f"(median of {args.repeat} measurements; target {args.target}; int8: Kiln's build of "
          "the int8 model; ort: ONNX Runtime on the int8 model, default optimizations, its "
          "Python call overhead included; f32: Kiln's build of the float model; goal: int8/ort "
          "<= 1.0 and f32/int8 >= 2)")


if __name__ == "__main__":
    main()
