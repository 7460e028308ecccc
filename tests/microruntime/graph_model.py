"""A small model for the graph executor tests: graph JSON written by hand (add, relu, dense,
relu; storage slots shared) over kernels that compiler.build makes from te, a param `w` in
TVM's params format, and the numpy reference."""
import json

import numpy as np

N, K, M = 2, 8, 4
FUNCS = ("add", "relu_nk", "dense", "relu_nm")


def kernels(target):
    """The four kernels, built into one module for `target` ("c", "llvm", "c --system-lib")."""
    import compiler
    from compiler import te
    from compiler.ir import IRModule

    def lowered(name, make):
        outs = make()
        return compiler.lower(te.create_schedule(outs[-1].op), outs, name=name)

    def add():
        a = te.placeholder((N, K), name="a")
        b = te.placeholder((N, K), name="b")
        return [a, b, te.compute((N, K), lambda i, j: a[i, j] + b[i, j], name="c")]

    def relu(shape):
        def make():
            a = te.placeholder(shape, name="a")
            return [a, te.compute(shape, lambda i, j: te.max(a[i, j], te.const(0.0, "float32")),
                                  name="r")]
        return make

    def dense():
        x = te.placeholder((N, K), name="x")
        w = te.placeholder((M, K), name="w")
        k = te.reduce_axis((0, K), name="k")
        return [x, w, te.compute((N, M), lambda i, j: te.sum(x[i, k] * w[j, k], axis=k),
                                 name="y")]

    funcs = {}
    for mod in (lowered("add", add), lowered("relu_nk", relu((N, K))), lowered("dense", dense),
                lowered("relu_nm", relu((N, M)))):
        funcs.update(mod.functions)
    return compiler.build(IRModule(funcs), target=target)


def _op(name, func, inputs, n_in):
    return {"op": "tvm_op", "name": name, "inputs": [[i, 0, 0] for i in inputs],
            "attrs": {"func_name": func, "num_inputs": str(n_in), "num_outputs": "1",
                      "flatten_data": "0"}}


def graph(**override):
    """The graph as a dict: x, y (inputs), w (param) -> add -> relu -> dense(w) -> relu.
    Slots: add and dense share slot 3, relu and the output share slot 4."""
    g = {
        "nodes": [
            {"op": "null", "name": "x", "inputs": []},
            {"op": "null", "name": "y", "inputs": []},
            {"op": "null", "name": "w", "inputs": []},
            _op("add0", "add", [0, 1], 2),
            _op("relu0", "relu_nk", [3], 1),
            _op("dense0", "dense", [4, 2], 2),
            _op("relu1", "relu_nm", [5], 1),
        ],
        "arg_nodes": [0, 1, 2],
        "heads": [[6, 0, 0]],
        "node_row_ptr": [0, 1, 2, 3, 4, 5, 6, 7],
        "attrs": {
            "shape": ["list_shape", [[N, K], [N, K], [M, K], [N, K], [N, K], [N, M], [N, M]]],
            "dltype": ["list_str", ["float32"] * 7],
            "storage_id": ["list_int", [0, 1, 2, 3, 4, 3, 4]],
        },
    }
    g.update(override)
    return g


def graph_json(**override):
    return json.dumps(graph(**override))


STORAGE_BYTES = [N * K * 4, N * K * 4, M * K * 4, N * K * 4, N * K * 4]


def data(seed=0):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((N, K)).astype("float32")
    y = rng.standard_normal((N, K)).astype("float32")
    w = rng.standard_normal((M, K)).astype("float32")
    return x, y, w


def reference(x, y, w):
    return np.maximum(np.maximum(x + y, 0) @ w.T, 0)


def manifest(params=("w",)):
    return {"format": "kiln.manifest", "version": 1,
            "inputs": [{"name": "x", "shape": [N, K], "dtype": "float32"},
                       {"name": "y", "shape": [N, K], "dtype": "float32"}],
            "outputs": [{"shape": [N, M], "dtype": "float32"}],
            "params": list(params), "storage_bytes": STORAGE_BYTES,
            "total_bytes": sum(STORAGE_BYTES), "kernels": list(FUNCS),
            # kernels without workspaces; each slot at a 64-byte boundary in an arena
            "workspace_bytes": 0, "arena_bytes": sum(-(-b // 64) * 64 for b in STORAGE_BYTES)}
