"""Compiles every exported zoo model with Kiln, runs it on the microruntime and compares.

    .venv/bin/python bench/zoo/check.py [--zoo build/zoo] [--only resnet18,bert] [--target llvm]

Runs in Kiln's environment, as a user would: `python -m compiler compile model.onnx -o
model.so`, then `python -m microruntime run model.so --inputs inputs.npz --output out.npz` (a
process that imports only the runtime). Per model it prints one line: the compile time, the
agreement with ONNX Runtime (`np.allclose(kiln, ort, rtol=1e-3, atol=1e-4)`, and the largest
error as a share of that tolerance), the accuracy margin (Kiln's largest error from the float64
torch reference over ONNX Runtime's; the goal is <= 1.5), the file sizes, or the one-line
reason it failed. The last line is `zoo: P/N compiled+matched`; models the exporter could not
export are listed apart, since that failure is not Kiln's.
"""
import argparse
import json
import os
import subprocess
import sys
import time

import numpy as np

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
    try:
        res = subprocess.run([py, "-m", "microruntime", "run", so, "--inputs",
                              os.path.join(model_dir, "inputs.npz"), "--output", out],
                             capture_output=True, text=True, timeout=timeout, cwd=ROOT,
                             env={**os.environ, "MR_NUM_THREADS": "1"})
    except subprocess.TimeoutExpired:
        return {**row, "status": "run failed", "reason": f"timed out after {timeout} s"}
    if res.returncode != 0 or not os.path.exists(out):
        return {**row, "status": "run failed",
                "reason": _last_line(res.stderr or res.stdout)}
    got = np.load(out)["output_0"]
    ort = np.load(os.path.join(model_dir, "ort.npy"))
    f64 = np.load(os.path.join(model_dir, "f64.npy"))
    row["onnx_mb"] = meta["onnx_bytes"] / 1e6
    row["so_mb"] = os.path.getsize(so) / 1e6
    if got.shape != ort.shape:
        return {**row, "status": "mismatch",
                "reason": f"output shape {got.shape}, ONNX Runtime {ort.shape}"}
    row["tol_share"] = _share_of_tolerance(got, ort)
    err_kiln = float(np.max(np.abs(got - f64)))
    err_ort = float(np.max(np.abs(ort - f64)))
    row["margin"] = err_kiln / err_ort if err_ort > 0 else (0.0 if err_kiln == 0 else float("inf"))
    matched = bool(np.allclose(got, ort, rtol=RTOL, atol=ATOL))
    row["status"] = "ok" if matched else "mismatch"
    if not matched:
        row["reason"] = f"max |kiln - ort| = {float(np.max(np.abs(got - ort))):.3g}"
    return row


def _format(row):
    name = f"{row['name']:30s}"
    if row["status"] in ("ok", "mismatch") and "tol_share" in row:
        line = (f"{name} {row['status']:8s} compile {row['compile_s']:6.1f} s  "
                f"tol {row['tol_share']:5.2f}  margin {row['margin']:5.2f}  "
                f"onnx {row['onnx_mb']:7.1f} MB  so {row['so_mb']:7.1f} MB "
                f"({row['so_mb'] / row['onnx_mb']:.2f}x)")
        return line + (f"  {row['reason']}" if row["status"] != "ok" else "")
    return f"{name} {row['status']}: {row.get('reason', '')}"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--zoo", default=os.path.join(ROOT, "build", "zoo"))
    ap.add_argument("--only", default="", help="comma-separated model names")
    ap.add_argument("--target", default="llvm")
    ap.add_argument("--timeout", type=int, default=900, help="seconds per compile or run")
    ap.add_argument("--json", help="also write the rows here")
    args = ap.parse_args()
    if not os.path.isdir(args.zoo):
        sys.exit(f"error: no exported zoo at {args.zoo}; run bench/zoo/export.py first "
                 "(make zoo does both)")
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
