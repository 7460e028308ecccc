"""split_args and fuse_ops under a target's max_function_args: for Vulkan (32 arguments by
default) a concat of 40 tensors becomes concats of at most 31 with the same value (reference
interpreter), every kernel of the build takes at most 32 arguments, and the model runs on the
Vulkan device where there is one; targets without the limit are unchanged."""
import json

import numpy as np
import pytest

import microruntime
from compiler import relax, relay
from compiler.relax import expr as X
from compiler.relax import interpreter, op
from compiler.relax import script as R
from compiler.relax.transform.fuse_ops import fuse_ops
from compiler.relax.transform.split_args import max_function_args, split_args
from microruntime import graph_executor

N = 40
rng = np.random.default_rng(3)
ARRAYS = [rng.standard_normal((2, 3)).astype("float32") for _ in range(N)]


def _module(make):
    params = [relax.Var(f"p{i}", R.Tensor(a.shape, "float32")) for i, a in enumerate(ARRAYS)]
    bb = relax.BlockBuilder()
    with bb.function("main", params):
        with bb.dataflow():
            out = bb.emit_output(bb.emit(make(params)))
        bb.emit_func_output(out)
    return bb.get()


def _concat(params):
    return op.concat(params, axis=1)


def _sum_chain(params):
    acc = params[0]
    for p in params[1:]:
        acc = op.add(acc, p)
    return acc


def _concat_widths(mod):
    return [len(b.value.args[0].fields) for block in mod["main"].body.blocks
            for b in block.bindings if isinstance(b.value, X.Call)
            and isinstance(b.value.op, X.Op) and b.value.op.name == "relax.concat"]


def test_limits_of_the_targets():
    assert max_function_args("vulkan") == 32
    assert max_function_args("vulkan -max_function_args=8") == 8
    assert max_function_args("metal") == 31
    assert max_function_args("cuda") is None and max_function_args("llvm") is None
    assert max_function_args(None) is None


def test_concat_is_split_with_the_same_value():
    mod = _module(_concat)
    split = split_args(mod, "vulkan -max_function_args=8")
    widths = _concat_widths(split)
    assert max(widths) <= 7 and len(widths) > 1
    np.testing.assert_array_equal(np.asarray(interpreter.run(split, *ARRAYS)),
                                  np.concatenate(ARRAYS, axis=1))
    assert _concat_widths(split_args(mod, "cuda")) == [N]
    assert _concat_widths(split_args(mod, "llvm")) == [N]


def test_fused_kernels_take_at_most_the_limit():
    mod = fuse_ops(_module(_sum_chain), target="vulkan -max_function_args=8")
    kernels = [f for f in mod.functions.values()
               if isinstance(f, X.Function) and f.attrs.get("Primitive")]
    assert len(kernels) > 1
    assert max(len(f.params) for f in kernels) + 1 <= 8
    unlimited = fuse_ops(_module(_sum_chain), target="cuda")
    assert sum(1 for f in unlimited.functions.values()
               if isinstance(f, X.Function) and f.attrs.get("Primitive")) < len(kernels)


@pytest.mark.parametrize("make", [_concat, _sum_chain], ids=["concat", "sum"])
def test_vulkan_build_runs(make):
    lib = relay.build(_module(make), target="vulkan", target_host="llvm")
    graph = json.loads(lib.get_graph_json())
    calls = [n for n in graph["nodes"] if n["op"] == "tvm_op"]
    assert max(len(n["inputs"]) for n in calls) + 1 <= 32
    if not microruntime.enabled("vulkan"):
        pytest.skip("no Vulkan device (microruntime.enabled('vulkan') is False)")
    g = graph_executor.GraphModule(lib["default"](microruntime.vulkan(0)))
    g.set_input(**{f"p{i}": a for i, a in enumerate(ARRAYS)})
    g.run()
    want = np.concatenate(ARRAYS, axis=1) if make is _concat else np.sum(ARRAYS, axis=0)
    np.testing.assert_allclose(g.get_output(0).numpy(), want, rtol=1e-5, atol=1e-5)
