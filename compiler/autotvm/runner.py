"""The timing run of one trial, in a process of its own (`python runner.py SPEC_JSON`), so a
kernel that crashes takes down only this process: `measure` reads the signal from the exit
status.

SPEC: {"kernel": path of the candidate's library, "reference": path of the default config's
library or null, "func": function name, "args": [[shape, dtype, is_output], ...], "seed",
"number", "repeat", "min_repeat_ms", "rtol", "atol"}. Inputs are random (a fixed seed), the
candidate's outputs are compared with the reference's, then the candidate is timed with
time_evaluator. Prints one JSON line: {"costs": [seconds per repeat]} or {"wrong": message}.

Imports only numpy and the microruntime (no compiler): it starts fast.
"""
import json
import sys

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


def main(argv) -> int:
    print(json.dumps(run(json.loads(argv[1]))), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
