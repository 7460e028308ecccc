"""Compiles every exported zoo model with Kiln, runs it on the microruntime and compares.

    .venv/bin/python bench/zoo/check.py [--zoo build/zoo] [--only resnet18,bert] [--target llvm]
    .venv/bin/python bench/zoo/check.py --dynamic        # the exports of export.py --dynamic

Runs in Kiln's environment, as a user would: `python -m compiler compile model.onnx -o
model.so`, then `python -m microruntime run model.so --inputs inputs.npz --output out.npz` (a
process that imports only the runtime). Per model it prints one line: the compile time, the
agreement with ONNX Runtime (`np.allclose(kiln, ort, rtol=1e-3, atol=1e-4)`, and the largest
error as a share of that tolerance), the accuracy margin (Kiln's largest error from the float64
torch reference over ONNX Runtime's; the goal is <= 1.5), the file sizes, or the one-line
reason it failed. The last line is `zoo: P/N compiled+matched`; models the exporter could not
export are listed apart, since that failure is not Kiln's. A model exported with a symbolic
sequence axis (`--dynamic`, build/zoo_dyn) is compiled once, with no input shape (for the
Relax VM), and run at each of its lengths (`inputs_<len>.npz`), matching at every one; its
line gives the largest |Kiln - ONNX Runtime| at each.
"""
import argparse
import json
import os
import subprocess
import sys
import time

import numpy as np

from compiler.target import Target

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
RTOL, ATOL = 1e-3, 1e-4


def _last_line(text):
    lines = [ln for ln in text.strip().splitlines() if ln.strip()]
    return lines[-1][:300] if lines else "(no output)"


def _share_of_tolerance(got, want):
    """The largest |got - want| / (atol + rtol |want|): <= 1 is np.allclose."""
    return float(np.max(np.abs(got - want) / (ATOL + RTOL * np.abs(want)))) if got.size else 0.0


def check_one(model_dir, target, timeout):
    meta = json.load(open(os.path.join(model_dir, "meta.json")))
    row = {"name": meta["name"]}
    if "export_error" in meta:
        row["status"] = "export failed"
        row["reason"] = meta["export_error"].splitlines()[0][:300]
        return row
    onnx_path = os.path.join(model_dir, "model.onnx")
    so = os.path.join(model_dir, "kiln.so")
    out = os.path.join(model_dir, "kiln_out.npz")
    for stale in (so, out):
        if os.path.exists(stale):
            os.remove(stale)
    py = sys.executable
    start = time.perf_counter()
    try:
        res = subprocess.run([py, "-m", "compiler", "compile", onnx_path, "-o", so, "--quiet",
                              "--target", target], capture_output=True, text=True,
                             timeout=timeout, cwd=ROOT)
    except subprocess.TimeoutExpired:
        return {**row, "status": "compile failed", "reason": f"timed out after {timeout} s"}
    row["compile_s"] = time.perf_counter() - start
    if res.returncode != 0:
        return {**row, "status": "compile failed", "reason": _last_line(res.stderr)}
    row["onnx_mb"] = meta["onnx_bytes"] / 1e6
    row["so_mb"] = os.path.getsize(so) / 1e6
    # a dynamic export runs at each of its sequence lengths, one library for all
    suffixes = [f"_{n}" for n in meta["seq_lengths"]] if "seq_lengths" in meta else [""]
    row["tol_share"] = row["margin"] = 0.0
    for suffix in suffixes:
        failed = _run_once(row, model_dir, so, out, suffix, timeout, _device_of(target))
        if failed:
            return failed
    if "seq_lengths" in meta:
        row["seq"] = meta["seq_lengths"]
    return row


def _device_of(target):
    """The microruntime device a library built for `target` runs on: the device kind of a GPU
    target ("cuda -arch=sm_90" -> "cuda"), cpu for a host target."""
    kind = Target(target).kind
    return "cpu" if kind.is_host else kind.name


def _run_once(row, model_dir, so, out, suffix, timeout, device):
    """Runs the library on inputs{suffix}.npz and folds the comparison with ONNX Runtime into
    `row`; the row of the failure, or None."""
    at = f" at seq {suffix[1:]}" if suffix else ""
    if os.path.exists(out):
        os.remove(out)
    try:
        res = subprocess.run([sys.executable, "-m", "microruntime", "run", so, "--inputs",
                              os.path.join(model_dir, f"inputs{suffix}.npz"), "--output", out,
                              "--device", device],
                             capture_output=True, text=True, timeout=timeout, cwd=ROOT,
                             env={**os.environ, "MR_NUM_THREADS": "1"})
    except subprocess.TimeoutExpired:
        return {**row, "status": "run failed", "reason": f"timed out after {timeout} s{at}"}
    if res.returncode != 0 or not os.path.exists(out):
        return {**row, "status": "run failed",
                "reason": _last_line(res.stderr or res.stdout) + at}
    got = np.load(out)["output_0"]
    ort = np.load(os.path.join(model_dir, f"ort{suffix}.npy"))
    f64 = np.load(os.path.join(model_dir, f"f64{suffix}.npy"))
    if got.shape != ort.shape:
        return {**row, "status": "mismatch",
                "reason": f"output shape {got.shape}, ONNX Runtime {ort.shape}{at}"}
    row["tol_share"] = max(row["tol_share"], _share_of_tolerance(got, ort))
    err_kiln = float(np.max(np.abs(got - f64)))
    err_ort = float(np.max(np.abs(ort - f64)))
    margin = err_kiln / err_ort if err_ort > 0 else (0.0 if err_kiln == 0 else float("inf"))
    row["margin"] = max(row["margin"], margin)
    row.setdefault("max_abs", {})[suffix[1:] or "-"] = float(np.max(np.abs(got - ort)))
    matched = bool(np.allclose(got, ort, rtol=RTOL, atol=ATOL))
    if not matched:
        row["status"] = "mismatch"
        row["reason"] = f"max |kiln - ort| = {float(np.max(np.abs(got - ort))):.3g}{at}"
    elif row.get("status") != "mismatch":
        row["status"] = "ok"
    return None


def _format(row):
    name = f"{row['name']:30s}"
    if row["status"] in ("ok", "mismatch") and "tol_share" in row:
        line = (f"{name} {row['status']:8s} compile {row['compile_s']:6.1f} s  "
                f"tol {row['tol_share']:5.2f}  margin {row['margin']:5.2f}  "
                f"onnx {row['onnx_mb']:7.1f} MB  so {row['so_mb']:7.1f} MB "
                f"({row['so_mb'] / row['onnx_mb']:.2f}x)")
        if "seq" in row:
            line += "  seq " + ", ".join(f"{n}: max abs {row['max_abs'][str(n)]:.2g}"
                                         for n in row["seq"])
        return line + (f"  {row['reason']}" if row["status"] != "ok" else "")
    return f"{name} {row['status']}: {row.get('reason', '')}"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--zoo", help="default build/zoo (build/zoo_dyn with --dynamic)")
    ap.add_argument("--dynamic", action="store_true",
                    help="the exports with a symbolic sequence axis (export.py --dynamic)")
    ap.add_argument("--only", default="", help="comma-separated model names")
    ap.add_argument("--target", default="llvm")
    ap.add_argument("--timeout", type=int, default=900, help="seconds per compile or run")
    ap.add_argument("--json", help="also write the rows here")
    args = ap.parse_args()
    args.zoo = args.zoo or os.path.join(ROOT, "build", "zoo_dyn" if args.dynamic else "zoo")
    if not os.path.isdir(args.zoo):
        sys.exit(f"error: no exported zoo at {args.zoo}; run bench/zoo/export.py "
                 f"{'--dynamic ' if args.dynamic else ''}first (make zoo does both)")
    names = [n for n in args.only.split(",") if n] or sorted(os.listdir(args.zoo))
    rows = []
    for name in names:
        model_dir = os.path.join(args.zoo, name)
        if not os.path.exists(os.path.join(model_dir, "meta.json")):
            print(f"{name:30s} not exported", flush=True)
            continue
        row = check_one(model_dir, args.target, args.timeout)
        rows.append(row)
        print(_format(row), flush=True)
    ok = sum(r["status"] == "ok" for r in rows)
    not_ours = [r["name"] for r in rows if r["status"] == "export failed"]
    if not_ours:
        print(f"exporter failures (not Kiln's): {', '.join(not_ours)}")
    margins = [r["margin"] for r in rows if "margin" in r]
    if margins:
        print(f"accuracy margin (Kiln error / ORT error vs float64): worst "
              f"{max(margins):.2f}, median {float(np.median(margins)):.2f}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)
    print(f"zoo: {ok}/{len(rows)} compiled+matched")
    return 0 if ok == len(rows) - len(not_ours) else 1


if __name__ == "__main__":
    sys.exit(main())
