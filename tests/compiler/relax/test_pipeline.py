"""The one graph pipeline (compiler/relax/pipeline.py): both executors run the same passes
through the shared runner (dump, timing, instruments, disabled_pass by TVM names), and a
static model gets the same kernels on the VM as on the graph executor."""
import numpy as np
import pytest

import microruntime
from compiler import relax, relay
from compiler.instrument import PassInstrument
from compiler.relax import expr as X
from compiler.relax.backend.kernel_library import HOST_FUNC
from compiler.relax.testing import models
from compiler.relax.vm_build import lower_for_vm
from compiler.tir.function import PrimFunc
from compiler.transform import PassContext, PassContextError
from microruntime import graph_executor
from microruntime.relax_vm import VirtualMachine

TOL = dict(rtol=1e-4, atol=1e-4)
GRAPH_PASSES = ["bind_params", "lambda_lift", "fold_constant", "fold_batch_norm",
                "eliminate_dead_code", "transpose_dense_weight", "convert_layout_nchwc",
                "winograd_conv2d", "fuse_ops", "legalize"]


def _model():
    return models.conv_bn_relu_pool_dense()


def _run_graph(m, lib):
    gm = graph_executor.GraphModule(lib["default"](microruntime.cpu()))
    inputs = m.inputs(seed=3)
    gm.run(**inputs)
    return gm.get_output(0).numpy(), inputs


def _timed_passes(err: str):
    return [line.split()[1].rstrip(":") for line in err.splitlines()
            if line.startswith("[pass] ")]


@pytest.mark.parametrize("executor", ["graph", "vm"])
def test_both_executors_run_the_graph_passes_through_the_runner(executor, monkeypatch, capsys):
    m = _model()
    monkeypatch.setenv("COMPILER_TIME_PASSES", "1")
    if executor == "graph":
        relay.build(m.mod, target="llvm", params=m.params)
    else:
        relax.build(m.mod, target="llvm", params=m.params)
    passes = _timed_passes(capsys.readouterr().err)
    graph = [p for p in passes if p in GRAPH_PASSES]
    assert graph == GRAPH_PASSES
    if executor == "vm":
        i = passes.index("legalize")
        assert passes[i + 1:i + 4] == ["device_copies_vm", "plan_memory_vm", "lower_shapes_vm"]


def test_dump_ir_prints_the_module_after_graph_passes(monkeypatch, capsys):
    m = _model()
    monkeypatch.setenv("COMPILER_DUMP_IR", "1")
    relay.optimize(m.mod, m.params, "llvm")
    err = capsys.readouterr().err
    assert "after fuse_ops:" in err
    assert "fused_" in err.split("after fuse_ops:")[1]


def test_instruments_see_graph_passes():
    seen = []

    class Record(PassInstrument):
        def run_before_pass(self, mod, info):
            seen.append(info.name)

    m = _model()
    with PassContext(instruments=[Record()]):
        relay.optimize(m.mod, m.params, "llvm")
    assert [p for p in seen if p in GRAPH_PASSES] == GRAPH_PASSES[:-1]


def _kernels(mod):
    return {k: f for k, f in mod.items() if isinstance(f, PrimFunc)
            and not f.attrs.get(HOST_FUNC)}


def _ops_per_kernel(mod):
    return [sum(len(b.bindings) for b in f.body.blocks) for _, f in mod.items()
            if isinstance(f, X.Function) and f.attrs.get("Primitive")]


def test_fuse_ops_disabled_by_tvm_name_makes_one_kernel_per_operator():
    m = _model()
    assert max(_ops_per_kernel(relay.optimize(m.mod, m.params, "llvm"))) > 1
    with PassContext(disabled_pass=["FuseOps"]):
        assert set(_ops_per_kernel(relay.optimize(m.mod, m.params, "llvm"))) == {1}
        lib = relay.build(m.mod, target="llvm", params=m.params)
    out, inputs = _run_graph(m, lib)
    np.testing.assert_allclose(out, m.reference_fn(inputs, m.params), **TOL)


def test_a_pass_kiln_needs_cannot_be_disabled():
    m = _model()
    with PassContext(disabled_pass=["LegalizeOps"]):
        with pytest.raises(PassContextError, match="LegalizeOps.*legalize"):
            relay.build(m.mod, target="llvm", params=m.params)


def test_static_model_gets_the_same_kernels_on_both_executors():
    m = models.residual_block()
    graph_mod, _ = relay.plan(m.mod, m.params, target="llvm")
    vm_mod = lower_for_vm(m.mod, m.params, target="llvm")
    assert sorted(_kernels(graph_mod)) == sorted(_kernels(vm_mod))
    ex = relax.build(m.mod, target="llvm", params=m.params)
    vm = VirtualMachine(ex, microruntime.cpu())
    inputs = m.inputs(seed=4)
    out = vm["main"](*[microruntime.nd.array(v) for v in inputs.values()])
    np.testing.assert_allclose(out.numpy(), m.reference_fn(inputs, m.params), **TOL)


def test_verifier_names_a_variable_used_out_of_scope():
    from compiler.ir.errors import InternalError
    from compiler.ir.module import IRModule
    from compiler.relax import op
    from compiler.relax.struct_info import TensorStructInfo
    from compiler.relax.well_formed import verify

    x = X.Var("x", TensorStructInfo((4,), "float32"))
    stray = X.Var("stray", TensorStructInfo((4,), "float32"))
    y = X.Var("y", TensorStructInfo((4,), "float32"))
    body = X.SeqExpr((X.BindingBlock((X.VarBinding(y, op.add(x, stray)),)),), y)
    mod = IRModule({"main": X.Function((x,), body, TensorStructInfo((4,), "float32"))})
    with pytest.raises(InternalError, match="'main'.*'stray' is used where it is not bound"):
        verify(mod)
    ok = X.SeqExpr((X.BindingBlock((X.VarBinding(y, op.add(x, x)),)),), y)
    verify(IRModule({"main": X.Function((x,), ok, TensorStructInfo((4,), "float32"))}))
