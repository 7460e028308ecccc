"""legalize + the graph executor codegen on the model zoo: every kernel is built (llvm and c)
and the lowered `main` — run here binding by binding, calling the kernels — matches the model's
numpy reference; the graph JSON is consistent; fusion and memory planning show in the figures."""
import json

import numpy as np
import pytest

import microruntime as mr
from compiler import build
from compiler.ir.errors import UnsupportedOpError
from compiler.ir.module import IRModule
from compiler.relax import BlockBuilder, Var
from compiler.relax import expr as X
from compiler.relax import op as R
from compiler.relax.backend.graph.codegen import codegen
from compiler.relax.struct_info import TensorStructInfo
from compiler.relax.testing import models
from compiler.relax.transform import (
    bind_params,
    eliminate_dead_code,
    fold_batch_norm,
    fold_constant,
    fuse_ops,
)
from compiler.relax.transform.legalize import legalize


def _lower(mod, params):
    mod = fold_batch_norm(fold_constant(bind_params(mod, params)))
    return legalize(fuse_ops(eliminate_dead_code(mod)))


def _run_lowered(mod, lib, inputs):
    """Runs the call_tir bindings of main in order (an executor written out in Python)."""
    main = mod["main"]
    env = {id(p): inputs[p.name_hint] for p in main.params}

    def value(e):
        return e.data if isinstance(e, X.Constant) else env[id(e)]
    for block in main.body.blocks:
        for b in block.bindings:
            v = b.value
            if isinstance(v, X.TupleGetItem):
                env[id(b.var)] = env[id(v.tuple_value)][v.index]
                continue
            args = [mr.nd.array(np.ascontiguousarray(value(a))) for a in v.args[1].fields]
            s = v.sinfo_args[0]
            outs = [mr.nd.empty(tuple(f.shape), f.dtype) for f in getattr(s, "fields", [s])]
            lib[v.args[0].name_hint](*args, *outs)
            got = [o.numpy() for o in outs]
            env[id(b.var)] = got if hasattr(s, "fields") else got[0]
    return value(main.body.body)


@pytest.mark.parametrize("make", [models.mlp, models.conv_bn_relu_pool_dense,
                                  models.residual_block, models.depthwise_separable_block],
                         ids=lambda f: f.__name__)
def test_models_run_from_their_kernels(make, target):
    m = make()
    mod = _lower(m.mod, m.params)
    graph = codegen(mod["main"])
    lib = build(IRModule({k: mod[k] for k in graph.kernels}), target=target)
    inputs = m.inputs(seed=5)
    np.testing.assert_allclose(_run_lowered(mod, lib, inputs), m.reference(inputs),
                               rtol=1e-4, atol=1e-5)


def test_attention_block_shares_identical_kernels():
    m = models.attention_block()
    mod = _lower(m.mod, m.params)
    graph = codegen(mod["main"])
    calls = [b.value.args[0].name_hint for blk in mod["main"].body.blocks
             for b in blk.bindings]
    # the q, k and v projections are the same kernel, built once
    assert len(calls) == 12 and len(set(calls)) == graph.num_kernels == 9
    lib = build(IRModule({k: mod[k] for k in graph.kernels}), target="llvm")
    inputs = m.inputs(seed=2)
    np.testing.assert_allclose(_run_lowered(mod, lib, inputs), m.reference(inputs),
                               rtol=1e-4, atol=1e-5)
    assert graph.planned_bytes < graph.intermediate_bytes


def test_graph_json_is_consistent():
    m = models.conv_bn_relu_pool_dense()
    graph = codegen(_lower(m.mod, m.params)["main"])
    g = json.loads(graph.graph_json)
    nodes, row = g["nodes"], g["node_row_ptr"]
    n_entries = row[-1]
    assert len(row) == len(nodes) + 1
    for key in ("shape", "dltype", "storage_id"):
        assert len(g["attrs"][key][1]) == n_entries
    assert [nodes[i]["name"] for i in g["arg_nodes"]] == ["x"] + sorted(graph.params,
                                                                        key=lambda p: int(p[1:]))
    ops = [n for n in nodes if n["op"] == "tvm_op"]
    assert [n["attrs"]["func_name"] for n in ops] == [
        "fused_nn_conv2d_add_nn_relu", "fused_nn_max_pool2d", "fused_reshape",
        "fused_nn_dense_add", "fused_nn_softmax"]
    for n in ops:
        for nid, idx, _ in n["inputs"]:
            assert nid < nodes.index(n) and idx < row[nid + 1] - row[nid]
    assert [n["name"] for n in nodes if n["op"] == "null"][0] == "x"
    assert g["attrs"]["shape"][1][0] == [2, 3, 16, 16]
    assert g["attrs"]["shape"][1][row[g["heads"][0][0]]] == [2, 10]
    assert len(graph.memory.slot_bytes) == max(g["attrs"]["storage_id"][1]) + 1
    # reuse: the five kernel outputs fit in fewer bytes than their sum
    assert graph.planned_bytes < graph.intermediate_bytes


def test_an_operator_without_kernel_is_named():
    bb = BlockBuilder()
    x = Var("x", TensorStructInfo((4,), "float32"))
    with bb.function("main", [x]):
        with bb.dataflow():
            out = bb.emit_output(R.nn.gelu_tanh(x))
        bb.emit_func_output(out)
    with pytest.raises(UnsupportedOpError, match="gelu_tanh"):
        legalize(fuse_ops(bb.get()))
