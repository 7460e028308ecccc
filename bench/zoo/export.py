"""Exports the zoo's models to ONNX with their inputs and reference outputs.

    .venv-zoo/bin/python bench/zoo/export.py [--out build/zoo] [--only resnet18,bert] [--force]
    .venv-zoo/bin/python bench/zoo/export.py --dynamic [--only bert,gpt2]

Per model, into OUT/<name>/: `model.onnx` (TorchScript exporter at opset 17, falling back to
the dynamo exporter at opset 18), `inputs.npz` (by ONNX input name), `ort.npy` (ONNX Runtime
CPU, default optimizations, one thread), `f64.npy` (the same torch model in float64: the
reference both runtimes' errors are measured against) and `meta.json` (exporter, opset,
seconds, or the exporter's error). An existing export is kept unless --force.

With --dynamic (default OUT build/zoo_dyn; the text models of DYNAMIC only) the sequence axis
of every input and of the output is symbolic ("seq": `dynamic_axes` for the TorchScript
exporter, `dynamic_shapes` for the dynamo one), and each length of SEQ_LENGTHS gets its own
`inputs_<len>.npz` and `ort_<len>.npy` (the model is exported once, at the first length).
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
from models import (  # noqa: E402
    DYNAMIC,
    DYNAMO_FIRST,
    MODELS,
    input_names_of,
    prepare,
    tokens,
)

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
# the sequence lengths a --dynamic export is run at (the first is the one it is traced at)
SEQ_LENGTHS = (32, 17)


def _dynamic_args(exporter, input_names, dynamic):
    """The exporter's arguments that make axis 1 ("seq") of each input and the output
    symbolic; none when not `dynamic`."""
    if not dynamic:
        return {}
    if exporter == "dynamo":
        seq = torch.export.Dim("seq", min=2, max=128)
        # forward(*args): one entry, for `args`, holding one spec per input
        return {"dynamic_shapes": (tuple({1: seq} for _ in input_names),)}
    axes = {n: {1: "seq"} for n in input_names}
    axes["output"] = {1: "seq"}
    return {"dynamic_axes": axes}


def _export(model, inputs, path, name, input_names, dynamic=False):
    """Tries the exporters in order; returns (exporter, opset, the failures before it)."""
    tries = [("torchscript", 17), ("dynamo", 18)]
    if name in DYNAMO_FIRST:
        tries.reverse()
    errors = []
    for exporter, opset in tries:
        try:
            extra = {"external_data": False} if exporter == "dynamo" else {}
            extra.update(_dynamic_args(exporter, input_names, dynamic))
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


def _f64(model, inputs):
    """The model's output in float64 (a copy of it; inputs as given, floats widened)."""
    with torch.no_grad():
        wide = copy.deepcopy(model).double()
        out = wide(*[x.double() if x.is_floating_point() else x for x in inputs])
        return out.detach().numpy()


def export_one(name, out_dir, dynamic=False):
    os.makedirs(out_dir, exist_ok=True)
    meta = {"name": name}
    start = time.perf_counter()
    torch.manual_seed(0)
    model, inputs, calibration = MODELS[name]()
    model = prepare(model, calibration)
    path = os.path.join(out_dir, "model.onnx")
    input_names = input_names_of(name, len(inputs))
    meta["exporter"], meta["opset"], fallbacks = _export(model, inputs, path, name, input_names,
                                                         dynamic)
    if fallbacks:
        meta["fallback_from"] = fallbacks
    import onnx
    graph = onnx.load(path, load_external_data=False).graph
    given = {i.name for i in graph.initializer}
    # The exporter drops an input that the graph does not use (a mask of ones folded away).
    kept = {i.name for i in graph.input if i.name not in given}
    runs = [("", inputs)]
    if dynamic:
        runs = [(f"_{n}", tokens(n, len(inputs) == 2)) for n in SEQ_LENGTHS]
        meta["seq_lengths"] = list(SEQ_LENGTHS)
    for suffix, xs in runs:
        feeds = {n: x.numpy() for n, x in zip(input_names, xs) if n in kept}
        np.savez(os.path.join(out_dir, f"inputs{suffix}.npz"), **feeds)
        np.save(os.path.join(out_dir, f"ort{suffix}.npy"), _run_ort(path, feeds))
        np.save(os.path.join(out_dir, f"f64{suffix}.npy"), _f64(model, xs))
    meta["seconds"] = round(time.perf_counter() - start, 1)
    meta["onnx_bytes"] = os.path.getsize(path)
    with open(os.path.join(out_dir, "meta.json"), "w") as f:
        json.dump(meta, f, indent=1)
    return meta


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", help="default build/zoo (build/zoo_dyn with --dynamic)")
    ap.add_argument("--only", default="", help="comma-separated model names")
    ap.add_argument("--force", action="store_true")
    ap.add_argument("--dynamic", action="store_true",
                    help=f"a symbolic sequence axis ({', '.join(DYNAMIC)})")
    args = ap.parse_args()
    known = list(DYNAMIC) if args.dynamic else list(MODELS)
    names = [n for n in args.only.split(",") if n] or known
    unknown = sorted(set(names) - set(known))
    if unknown:
        sys.exit(f"error: unknown zoo model(s) {unknown}; known: {', '.join(known)}")
    out_root = args.out or os.path.join(ROOT, "build", "zoo_dyn" if args.dynamic else "zoo")
    torch.set_num_threads(2)
    for name in names:
        out_dir = os.path.join(out_root, name)
        if not args.force and os.path.exists(os.path.join(out_dir, "meta.json")):
            print(f"{name:30s} exported earlier", flush=True)
            continue
        try:
            meta = export_one(name, out_dir, args.dynamic)
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
