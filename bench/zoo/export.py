"""Exports the zoo's models to ONNX with their inputs and reference outputs.

    .venv-zoo/bin/python bench/zoo/export.py [--out build/zoo] [--only resnet18,bert] [--force]

Per model, into OUT/<name>/: `model.onnx` (TorchScript exporter at opset 17, falling back to
the dynamo exporter at opset 18), `inputs.npz` (by ONNX input name), `ort.npy` (ONNX Runtime
CPU, default optimizations, one thread), `f64.npy` (the same torch model in float64: the
reference both runtimes' errors are measured against) and `meta.json` (exporter, opset,
seconds, or the exporter's error). An existing export is kept unless --force.
"""
import argparse
import copy
import json
import os
import sys
import time
import traceback

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from models import DYNAMO_FIRST, MODELS, input_names_of, prepare  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _export(model, inputs, path, name, input_names):
    """Tries the exporters in order; returns (exporter, opset, the failures before it)."""
    tries = [("torchscript", 17), ("dynamo", 18)]
    if name in DYNAMO_FIRST:
        tries.reverse()
    errors = []
    for exporter, opset in tries:
        try:
            extra = {"external_data": False} if exporter == "dynamo" else {}
            torch.onnx.export(model, inputs, path, opset_version=opset,
                              dynamo=exporter == "dynamo", do_constant_folding=True,
                              input_names=input_names, output_names=["output"], **extra)
            return exporter, opset, errors
        except Exception as err:  # an exporter failure is recorded, never Kiln's
            errors.append(f"{exporter}: {type(err).__name__}: {str(err).splitlines()[0][:300]}")
    raise RuntimeError("; ".join(errors))


def _run_ort(path, feeds):
    import onnxruntime as ort
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = 1
    sess = ort.InferenceSession(path, opts, providers=["CPUExecutionProvider"])
    return sess.run(None, feeds)[0]


def export_one(name, out_dir):
    os.makedirs(out_dir, exist_ok=True)
    meta = {"name": name}
    start = time.perf_counter()
    torch.manual_seed(0)
    model, inputs, calibration = MODELS[name]()
    model = prepare(model, calibration)
    with torch.no_grad():
        wide = copy.deepcopy(model).double()
        f64 = wide(*[x.double() if x.is_floating_point() else x for x in inputs])
        f64 = f64.detach().numpy()
    path = os.path.join(out_dir, "model.onnx")
    input_names = input_names_of(name, len(inputs))
    meta["exporter"], meta["opset"], fallbacks = _export(model, inputs, path, name, input_names)
    if fallbacks:
        meta["fallback_from"] = fallbacks
    import onnx
    graph = onnx.load(path, load_external_data=False).graph
    given = {i.name for i in graph.initializer}
    # The exporter drops an input that the graph does not use (a mask of ones folded away).
    kept = {i.name for i in graph.input if i.name not in given}
    feeds = {n: x.numpy() for n, x in zip(input_names, inputs) if n in kept}
    np.savez(os.path.join(out_dir, "inputs.npz"), **feeds)
    np.save(os.path.join(out_dir, "ort.npy"), _run_ort(path, feeds))
    np.save(os.path.join(out_dir, "f64.npy"), f64)
    meta["seconds"] = round(time.perf_counter() - start, 1)
    meta["onnx_bytes"] = os.path.getsize(path)
    with open(os.path.join(out_dir, "meta.json"), "w") as f:
        json.dump(meta, f, indent=1)
    return meta


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=os.path.join(ROOT, "build", "zoo"))
    ap.add_argument("--only", default="", help="comma-separated model names")
    ap.add_argument("--force", action="store_true")
    args = ap.parse_args()
    names = [n for n in args.only.split(",") if n] or list(MODELS)
    unknown = sorted(set(names) - set(MODELS))
    if unknown:
        sys.exit(f"error: unknown zoo model(s) {unknown}; known: {', '.join(MODELS)}")
    torch.set_num_threads(2)
    for name in names:
        out_dir = os.path.join(args.out, name)
        if not args.force and os.path.exists(os.path.join(out_dir, "meta.json")):
            print(f"{name:30s} exported earlier", flush=True)
            continue
        try:
            meta = export_one(name, out_dir)
            print(f"{name:30s} {meta['exporter']} opset {meta['opset']}, "
                  f"{meta['onnx_bytes'] / 1e6:.1f} MB, {meta['seconds']} s", flush=True)
        except Exception as err:
            os.makedirs(out_dir, exist_ok=True)
            with open(os.path.join(out_dir, "meta.json"), "w") as f:
                json.dump({"name": name, "export_error": f"{type(err).__name__}: {err}"[:2000],
                           "traceback": traceback.format_exc()[-4000:]}, f, indent=1)
            print(f"{name:30s} EXPORT FAILED: {str(err)[:200]}", flush=True)


if __name__ == "__main__":
    main()
