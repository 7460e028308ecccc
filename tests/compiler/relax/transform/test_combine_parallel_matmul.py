"""combine_parallel_matmul: the query/key/value projections of one value (dense layers made
matmuls, with and without a bias, one scaled) become one matmul sliced by columns; a matmul
whose weight something else reads, and one of another value, stay apart. The interpreter, the
graph executor and the VM give the original module's results; fewer kernels are made."""
import numpy as np
import pytest

import microruntime
from compiler import relax, relay
from compiler.relax import expr as X
from compiler.relax import interpreter, op
from compiler.relax.testing.models import _build
from compiler.relax.transform import bind_params
from compiler.relax.transform.combine_parallel_matmul import combine_parallel_matmul
from compiler.relax.transform.transpose_dense_weight import transpose_dense_weight
from compiler.relay.build_module import optimize
from compiler.transform import PassContext
from microruntime import graph_executor
from microruntime.relax_vm import VirtualMachine

TOL = dict(rtol=1e-4, atol=1e-4)


def _attention_inputs():
    def body(bb, w, x):
        h = bb.emit(op.nn.relu(x))
        q = op.multiply(op.add(op.nn.dense(h, w("wq", (16, 24), 0.2)), w("bq", (16,), 0.1)),
                        X.const(np.float32(0.25)))
        k = op.nn.dense(h, w("wk", (16, 24), 0.2))
        v = op.add(op.nn.dense(h, w("wv", (8, 24), 0.2)), w("bv", (8,), 0.1))
        shared = w("ws", (8, 24), 0.2)
        s1 = op.nn.dense(h, shared)                       # its weight is read twice
        s2 = op.nn.dense(x, shared)
        other = op.nn.dense(x, w("wo", (8, 24), 0.2))      # another value: one matmul of x
        scores = op.matmul(q, op.permute_dims(k, (1, 0)))
        return op.concat([scores, v, s1, s2, other], axis=1)

    return _build("qkv", {"x": (5, 24)}, body, None)


def _matmuls(func):
    return [b.value for block in func.body.blocks for b in block.bindings
            if isinstance(b.value, X.Call) and isinstance(b.value.op, X.Op)
            and b.value.op.name == "relax.matmul"]


def _expected(m, inputs):
    return np.asarray(interpreter.run(m.mod, *m.args(inputs)))


def test_projections_of_one_value_are_one_matmul():
    m = _attention_inputs()
    mod = transpose_dense_weight(bind_params(m.mod, m.params))
    before = _matmuls(mod["main"])
    mod = combine_parallel_matmul(mod)
    after = _matmuls(mod["main"])
    widths = sorted(int(c.args[1].data.shape[1]) for c in after
                    if isinstance(c.args[1], X.Constant))
    # q, k, v (16 + 16 + 8 columns) in one; the two matmuls by the one transposed shared
    # weight stay, and so does x's other matmul (alone once the shared one is out)
    assert widths == [8, 8, 8, 40]
    assert len(after) == len(before) - 2
    slices = [b.value for block in mod["main"].body.blocks for b in block.bindings
              if isinstance(b.value, X.Call) and b.value.op.name == "relax.strided_slice"]
    assert sorted((int(s.attrs.begin[0]), int(s.attrs.end[0])) for s in slices) == \
        [(0, 16), (16, 32), (32, 40)]
    inputs = m.inputs(seed=1)
    np.testing.assert_allclose(np.asarray(interpreter.run(mod, inputs["x"])),
                               _expected(m, inputs), **TOL)


def test_fewer_gemm_kernels():
    m = _attention_inputs()
    combined = optimize(m.mod, m.params)
    with PassContext(disabled_pass=["CombineParallelDense"]):
        apart = optimize(m.mod, m.params)

    def gemm_kernels(mod):
        return sorted(name for name, _ in mod.items() if "matmul" in name)

    # q, k and v were three kernels: one now (the scores, s1, s2 and x's other are the rest)
    assert len(gemm_kernels(apart)) == 7 and len(gemm_kernels(combined)) == 5


@pytest.mark.parametrize("target", ["llvm", "c"])
def test_graph_executor(target):
    m = _attention_inputs()
    inputs = m.inputs(seed=2)
    lib = relay.build(m.mod, target=target, params=m.params)
    gm = graph_executor.GraphModule(lib["default"](microruntime.cpu()))
    gm.run(**inputs)
    np.testing.assert_allclose(gm.get_output(0).numpy(), _expected(m, inputs), **TOL)


def test_vm():
    m = _attention_inputs()
    inputs = m.inputs(seed=3)
    vm = VirtualMachine(relax.build(m.mod, "llvm", params=m.params), microruntime.cpu())
    got = vm["main"](microruntime.nd.array(inputs["x"]))
    np.testing.assert_allclose(got.numpy(), _expected(m, inputs), **TOL)
