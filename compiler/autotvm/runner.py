"""The timing run of one trial, in a process of its own (`python runner.py SPEC_JSON`), so a
kernel that crashes takes down only this process: `measure` reads the signal from the exit
status.

Remote mode (`python -c "$(cat runner.py)" -`, the payload on stdin: what remote.RemoteRunner
sends a worker of another machine): the payload is one JSON header line (the SPEC without
paths, plus "kernel_size", "reference_size", "timeout_s", "lock", "runner": this file's
text) then the candidate's and the reference's library bytes. The libraries are written to
a temporary directory, and under the machine's timing lock the run goes to a child process
as above; prints one JSON line: {"costs"} / {"wrong"} / {"crash": signal} / {"timeout": s} /
{"run_error": message}.

SPEC: {"kernel": path of the candidate's library, "reference": path of the default config's
library or null, "func": function name, "args": [[shape, dtype, is_output], ...], "seed",
"number", "repeat", "min_repeat_ms", "rtol", "atol"}. Inputs are random (a fixed seed), the
candidate's outputs are compared with the reference's, then the candidate is timed with
time_evaluator. Prints one JSON line: {"costs": [seconds per repeat]} or {"wrong": message}.

Imports only numpy and the microruntime (no compiler): it starts fast.
"""
import fcntl
import json
import os
import signal
import subprocess
import sys
import tempfile

import numpy as np

import microruntime


def _random(rng, shape, dtype):
    if np.dtype(dtype).kind == "f":
        return rng.uniform(-1.0, 1.0, size=shape).astype(dtype)
    if np.dtype(dtype).kind == "b":
        return rng.integers(0, 2, size=shape).astype(dtype)
    return rng.integers(0, 8, size=shape).astype(dtype)


def _arrays(spec, inputs):
    out, k = [], 0
    for shape, dtype, is_output in spec["args"]:
        if is_output:
            out.append(microruntime.nd.array(np.zeros(shape, dtype)))
        else:
            out.append(microruntime.nd.array(inputs[k]))
            k += 1
    return out


def _outputs(spec, arrays):
    return [a.numpy() for a, (_, _, is_output) in zip(arrays, spec["args"]) if is_output]


def _check(spec, got, want):
    for k, (g, w) in enumerate(zip(got, want)):
        if g.dtype.kind == "f":
            scale = float(np.max(np.abs(w))) if w.size else 0.0
            ok = np.allclose(g, w, rtol=spec["rtol"], atol=spec["atol"] * max(scale, 1.0))
        else:
            ok = np.array_equal(g, w)
        if not ok:
            err = float(np.max(np.abs(g.astype("float64") - w.astype("float64"))))
            return f"output {k} differs from the default config's by up to {err:g}"
    return None


def run(spec) -> dict:
    rng = np.random.default_rng(spec["seed"])
    inputs = [_random(rng, shape, dtype) for shape, dtype, is_out in spec["args"]
              if not is_out]
    dev = microruntime.cpu()
    cand = microruntime.load_module(spec["kernel"])
    args = _arrays(spec, inputs)
    cand[spec["func"]](*args)
    if spec.get("reference"):
        ref = microruntime.load_module(spec["reference"])
        ref_args = _arrays(spec, inputs)
        ref[spec["func"]](*ref_args)
        wrong = _check(spec, _outputs(spec, args), _outputs(spec, ref_args))
        if wrong:
            return {"wrong": wrong}
    timer = cand.time_evaluator(spec["func"], dev, number=spec["number"],
                                repeat=spec["repeat"], min_repeat_ms=spec["min_repeat_ms"])
    return {"costs": list(timer(*args).results)}


def _signal_name(rc: int) -> str:
    try:
        return signal.Signals(-rc).name
    except ValueError:
        return f"signal {-rc}"


def _locked(fn):
    """`fn()` holding the machine-wide timing lock (a file lock in the temp directory)."""
    path = os.path.join(tempfile.gettempdir(), f"kiln-timing-{os.getuid()}.lock")
    with open(path, "a") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            return fn()
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def serve(payload: bytes) -> dict:
    """Remote mode (see the module docstring): the outcome of the payload's trial."""
    head, _, blobs = payload.partition(b"\n")
    spec = json.loads(head)
    nk, nr = spec.pop("kernel_size"), spec.pop("reference_size")
    source, timeout_s = spec.pop("runner"), spec.pop("timeout_s")
    with tempfile.TemporaryDirectory(prefix="kiln_remote_") as d:
        spec["kernel"] = os.path.join(d, "kernel.so")
        with open(spec["kernel"], "wb") as f:
            f.write(blobs[:nk])
        spec["reference"] = None
        if nr:
            spec["reference"] = os.path.join(d, "reference.so")
            with open(spec["reference"], "wb") as f:
                f.write(blobs[nk:nk + nr])

        def child():
            return subprocess.run([sys.executable, "-c", source, json.dumps(spec)],
                                  capture_output=True, text=True, timeout=timeout_s)
        try:
            proc = _locked(child) if spec.pop("lock", True) else child()
        except subprocess.TimeoutExpired:
            return {"timeout": timeout_s}
    if proc.returncode < 0:
        return {"crash": _signal_name(proc.returncode)}
    if proc.returncode != 0:
        return {"run_error": " | ".join(proc.stderr.strip().splitlines()[-3:])}
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main(argv) -> int:
    if argv[1] == "-":
        out = serve(sys.stdin.buffer.read())
    else:
        out = run(json.loads(argv[1]))
    print(json.dumps(out), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
