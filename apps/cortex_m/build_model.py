"""Builds a model for apps/cortex_m: one static library (`model.a`, a `--system-lib` build)
and the test vectors (`model_data.h`: an input, the outputs of a reference run on this machine:
onnxruntime, else a host build; the arena size from the compiler's memory plan; and
KILN_MAX_INPUT_BYTES). For the graph executor the library holds the kernels, graph and params;
for the AOT executor the run function, kernels and weights, with its header `tvmgen_default.h`.

    python apps/cortex_m/build_model.py MODEL TARGET OUTDIR [CC [EXECUTOR]]

MODEL: "mlp" (Gemm, Relu, MatMul, Add, Softmax) or "lenet" (Conv, Relu, MaxPool, AveragePool,
Flatten, Gemm, then Softmax), the ONNX models of compiler/frontend/testing/onnx_models.py, at
batch 1; or an MLPerf Tiny model of mlperf_tiny.py: "kws" (DS-CNN), "ic" (ResNet-8), "vww"
(MobileNetV1 0.25), "ad" (the autoencoder), or their int8 versions "kws_int8" and "ic_int8"
(quantized by ONNX Runtime's quantize_static, QDQ per channel). EXECUTOR: "graph" (default) or
"aot" (a "c" target). TARGET: a `--system-lib` target, e.g.
    "llvm -mtriple=thumbv7em-none-eabihf -mcpu=cortex-m4 --system-lib"   (Cortex-M4F)
    "llvm -mtriple=thumbv7em-none-eabihf -mcpu=cortex-m7 --system-lib"   (Cortex-M7)
    "c -mtriple=thumbv7em-none-eabihf -mcpu=cortex-m4 --system-lib"      (with CC arm-none-eabi-gcc)
    "llvm --system-lib"                                                  (this machine)
CC: the C compiler for the target (the library blob, and the kernels of target "c"), e.g.
arm-none-eabi-gcc or aarch64-linux-gnu-gcc; default (or "-") the host's.
Also writes reference.npy (the expected output) and inputs.npz.

The float models match within ATOL + RTOL * |expected| (float32 kernels built differently). An
int8 model's reference is ONNX Runtime with graph optimizations off (its reference semantics),
and its outputs (the last DequantizeLinear of int8 values) must be the same int8 values: atol
half a step of that DequantizeLinear's scale, rtol 0.
"""
import os
import sys

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, ROOT)
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import mlperf_tiny  # noqa: E402

ATOL, RTOL = 1e-5, 1e-4  # float32 kernels built differently (fma, vector widths) on each side


def onnx_model(name: str):
    """(ONNX model, input shapes) of the app's models, at batch 1."""
    from onnx import helper

    from compiler.frontend.testing import onnx_models

    if name in mlperf_tiny.MODELS or name in mlperf_tiny.INT8_MODELS:
        return mlperf_tiny.build(name)
    if name == "mlp":
        m = onnx_models.mlp(batch=1)
        return m.model, m.input_shapes
    if name == "lenet":
        m = onnx_models.lenet(batch=1)
        model = m.model
        graph = model.graph
        logits = graph.output[0].name
        graph.node.append(helper.make_node("Softmax", [logits], ["probabilities"], axis=1))
        out = helper.make_tensor_value_info("probabilities", graph.output[0].type.tensor_type
                                            .elem_type, None)
        del graph.output[:]
        graph.output.append(out)
        return model, m.input_shapes
    raise SystemExit(f"unknown model {name!r}: use mlp, lenet or one of "
                     f"{', '.join(mlperf_tiny.MODELS + tuple(mlperf_tiny.INT8_MODELS))}")


def output_step(model) -> float:
    """The scale of the DequantizeLinear that makes the (single) output of a QDQ model; 0.0
    when a float operator makes it."""
    from onnx import numpy_helper

    out = model.graph.output[0].name
    node = next((n for n in model.graph.node if out in n.output), None)
    if node is None or node.op_type != "DequantizeLinear":
        return 0.0
    inits = {t.name: t for t in model.graph.initializer}
    return float(numpy_helper.to_array(inits[node.input[1]]).reshape(-1)[0])


def reference(model, mod, params, inputs, exact: bool = False):
    """The reference run: onnxruntime on the ONNX model when it is installed (with graph
    optimizations off when `exact`: the reference semantics of quantized operators), else the
    model built for this machine and run with the graph executor (relay.reference_outputs)."""
    try:
        import onnxruntime as ort
    except ImportError:
        from compiler import relay

        return relay.reference_outputs(mod, params, inputs)
    opts = ort.SessionOptions()
    if exact:
        opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    sess = ort.InferenceSession(model.SerializeToString(), opts,
                                providers=["CPUExecutionProvider"])
    return sess.run(None, dict(inputs))


def main(model_name: str, target: str, outdir: str, cc: str = None,
         executor: str = "graph") -> dict:
    from compiler import relay
    from compiler.frontend import from_onnx
    from compiler.relay.backend import Executor

    model, shapes = onnx_model(model_name)
    mod, params = from_onnx(model, shape=shapes)
    rng = np.random.default_rng(0)
    inputs = {k: rng.standard_normal(s).astype("float32") for k, s in shapes.items()}
    step = output_step(model)
    expected = reference(model, mod, params, inputs, exact=step > 0)
    atol, rtol = (step / 2, 0.0) if step > 0 else (ATOL, RTOL)
    if executor not in ("graph", "aot"):
        raise SystemExit(f"unknown executor {executor!r}: use graph or aot")
    factory = relay.build(mod, target=target, params=params, executor=Executor(executor))
    os.makedirs(outdir, exist_ok=True)
    factory.export_library(os.path.join(outdir, "model.a"),
                           **({"cc": cc} if cc and cc != "-" else {}))
    if executor == "aot":
        factory.export_header(outdir)
    header = os.path.join(outdir, "model_data.h")
    relay.write_test_vectors(header, inputs, expected, factory.manifest, atol=atol, rtol=rtol)
    with open(header) as f:
        text = f.read()
    biggest = max(int(np.asarray(v).nbytes) for v in inputs.values())
    with open(header, "w") as f:
        f.write(text.replace("#define KILN_NUM_INPUTS",
                             f"#define KILN_MAX_INPUT_BYTES {biggest}\n#define KILN_NUM_INPUTS", 1))
    np.save(os.path.join(outdir, "reference.npy"), expected[0])
    np.savez(os.path.join(outdir, "inputs.npz"), **inputs)
    return factory.manifest


if __name__ == "__main__":
    if len(sys.argv) not in (4, 5, 6):
        raise SystemExit(__doc__)
    manifest = main(*sys.argv[1:])
    print(f"{sys.argv[1]}: arena {manifest['arena_bytes']} bytes (kernel workspace "
          f"{manifest['workspace_bytes']})")
