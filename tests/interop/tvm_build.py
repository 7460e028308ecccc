"""Run with a Python that has Apache TVM: builds the interop artifacts into argv[1].

Kernels (target llvm, exported with export_library): add.so (elementwise add, symbolic length),
par.so (the same with a parallel loop), ws.so (a dynamic-size intermediate: a workspace);
params.bin (tvm.runtime.save_param_dict) with params.npz holding the same arrays; and
errors.json: the messages TVM itself gives for a wrong dtype and a wrong shape.
"""
import json
import os
import sys

import numpy as np
import tvm
from tvm import te


def add_func(name):
    n = te.var("n")
    A = te.placeholder((n,), "float32", name="A")
    B = te.placeholder((n,), "float32", name="B")
    C = te.compute((n,), lambda i: A[i] + B[i], name="C")
    return te.create_prim_func([A, B, C]).with_attr("global_symbol", name)


def par_func():
    func = add_func("add_par")
    sch = tvm.s_tir.Schedule(func)
    (i,) = sch.get_loops(sch.get_sblock("C"))
    outer, _ = sch.split(i, factors=[None, 64])
    sch.parallel(outer)
    return sch.mod["main"].with_attr("global_symbol", "add_par")


def ws_func():
    n = te.var("n")
    A = te.placeholder((n,), "float32", name="A")
    T = te.compute((n,), lambda i: A[i] * 2.0, name="T")
    C = te.compute((n,), lambda i: T[n - 1 - i] + 1.0, name="C")
    return te.create_prim_func([A, C]).with_attr("global_symbol", "ws")


def main(out):
    for name, func in (("add", add_func("add")), ("par", par_func()), ("ws", ws_func())):
        tvm.compile(func, target="llvm").export_library(os.path.join(out, name + ".so"))

    params = {"w": np.arange(6, dtype="float32").reshape(2, 3),
              "b": np.array([1, -2, 3, -4], "int8"),
              "h": np.linspace(-1, 1, 5).astype("float16"),
              "i": np.array([[2**40, -5]], "int64"),
              "m": np.array([True, False, True])}
    blob = tvm.runtime.save_param_dict({k: tvm.runtime.tensor(v) for k, v in params.items()})
    with open(os.path.join(out, "params.bin"), "wb") as f:
        f.write(bytes(blob))
    np.savez(os.path.join(out, "params.npz"), **params)

    add = tvm.runtime.load_module(os.path.join(out, "add.so"))["add"]
    dev = tvm.cpu(0)
    errors = {}
    for key, args in (
        ("dtype", [np.zeros(4, "float64"), np.zeros(4, "float32"), np.zeros(4, "float32")]),
        ("shape", [np.zeros(4, "float32"), np.zeros(5, "float32"), np.zeros(4, "float32")]),
    ):
        try:
            add(*[tvm.runtime.tensor(a, dev) for a in args])
        except Exception as e:  # noqa: BLE001
            errors[key] = [type(e).__name__, str(e)]
    with open(os.path.join(out, "errors.json"), "w") as f:
        json.dump({"tvm_version": tvm.__version__, "errors": errors}, f)


if __name__ == "__main__":
    main(sys.argv[1])
