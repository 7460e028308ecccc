"""Runs Kiln-built Relax VM libraries in Apache TVM 0.27 (a subprocess of
test_kiln_vm_in_tvm.py): `python tvm_run_kiln_vm.py cases.json` where each case names a library,
an .npz of arguments (a0, a1, ...) and of expected flattened outputs (e0, e1, ...), or an
expected error phrase. Prints one JSON object: case name -> {"ok": bool, "detail": str}."""
import json
import sys

import numpy as np
import tvm
from tvm import relax


def _flatten(v):
    if isinstance(v, (list, tuple)) or type(v).__name__ == "Array":
        return [x for item in v for x in _flatten(item)]
    return [v.numpy()]


def _tensor(a):
    return tvm.runtime.tensor(a) if hasattr(tvm.runtime, "tensor") else tvm.nd.array(a)


def run(case):
    lib = tvm.runtime.load_module(case["lib"])
    vm = relax.VirtualMachine(lib, tvm.cpu())
    data = np.load(case["data"])
    args = [_tensor(data[f"a{i}"]) for i in range(case["num_args"])]
    if case.get("error"):
        try:
            vm["main"](*args)
        except Exception as err:  # noqa: BLE001 - any TVM error is what is checked
            msg = str(err)
            return {"ok": case["error"] in msg, "detail": msg[-400:]}
        return {"ok": False, "detail": "no error raised"}
    got = _flatten(vm["main"](*args))
    want = [data[f"e{i}"] for i in range(case["num_outputs"])]
    if len(got) != len(want):
        return {"ok": False, "detail": f"{len(got)} outputs, expected {len(want)}"}
    for g, w in zip(got, want):
        if g.shape != w.shape or not np.allclose(g, w, rtol=1e-4, atol=1e-4):
            err = np.abs(g - w).max() if g.shape == w.shape else "-"
            return {"ok": False, "detail": f"mismatch: {g.shape} vs {w.shape}, max err {err}"}
    return {"ok": True, "detail": ""}


def main():
    cases = json.load(open(sys.argv[1]))
    print(json.dumps({c["name"]: run(c) for c in cases}))


if __name__ == "__main__":
    main()
