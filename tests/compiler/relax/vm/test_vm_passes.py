"""The VM passes, each on a small module: what holds after lambda_lift, plan_memory_vm and
lower_shapes_vm (IR checked by walking it), and the bytecode the VM back end emits."""
from types import SimpleNamespace

import numpy as np
import pytest

import microruntime
from compiler import relax, tir
from compiler.ir.errors import CompilerError
from compiler.relax import op
from compiler.relax import script as R
from compiler.relax.backend.vm.plan_memory import storage_bytes
from compiler.relax.expr import Call, Function
from compiler.relax.functor import post_order_visit
from compiler.relax.testing import vm_models
from compiler.relax.transform.lambda_lift import lambda_lift
from compiler.relax.vm_build import lower_for_vm
from compiler.relax.vm_format import VMExecutableBytes
from microruntime.relax_vm import VirtualMachine


def _calls(func, name):
    """The calls of builtin / operator `name` in func, in order."""
    found = []

    def visit(e):
        if isinstance(e, Call):
            callee = getattr(e.op, "global_symbol", None) or getattr(e.op, "name", None)
            if callee == "relax.call_builtin_with_ctx":
                callee = e.args[0].global_symbol
            if callee == name:
                found.append(e)
    post_order_visit(func.body, visit)
    return found


def _softmax_chain(shape, k=4):
    x = relax.Var("x", R.Tensor(shape, "float32"))
    bb = relax.BlockBuilder()
    with bb.function("main", [x]):
        v = x
        for _ in range(k):
            v = bb.emit(op.nn.softmax(v))
        bb.emit_func_output(v)
    return bb.get()


def test_lambda_lift_makes_closures_and_module_functions():
    mod = lambda_lift(vm_models.closures().mod)
    assert "main_add_y" in mod
    lifted = mod["main_add_y"]
    assert [p.name_hint for p in lifted.params] == ["y", "z"]   # captured first
    main = mod["main"]
    nested = []
    post_order_visit(main.body, lambda e: nested.append(e) if isinstance(e, Function) else None)
    assert not nested
    assert len(_calls(main, "relax.make_closure")) == 1
    assert len(_calls(main, "relax.invoke_closure")) == 2


def test_storage_reused_along_a_static_chain():
    low = lower_for_vm(_softmax_chain((8, 16)))
    sizes = storage_bytes(low["main"])
    # 4 kernel outputs: the third reuses the first's storage, the result keeps its own
    assert sizes == [512, 512, 512]
    assert len(_calls(low["main"], "vm.builtin.alloc_tensor")) == 4
    assert len(_calls(low["main"], "relax.vm.kill_object")) >= 3


def test_storage_reused_with_symbolic_sizes():
    n = tir.Var("n", "int64")
    low = lower_for_vm(_softmax_chain((n, 16), k=5))
    sizes = storage_bytes(low["main"])
    assert len(sizes) == 3
    assert all(not isinstance(s, int) for s in sizes)


def test_entry_checks_name_each_parameter():
    low = lower_for_vm(vm_models.nested_tuple().mod)
    main = low["main"]
    checks = _calls(main, "vm.builtin.check_tensor_info")
    assert [c.args[-1].value.split("param=")[1].split(",")[0] for c in checks] == ["x", "y"]
    matches = _calls(main, "vm.builtin.match_shape")
    codes = [[a.value for a in m.args[3:-1]] for m in matches]
    assert codes == [[1, 0, 0, 3], [3, 0, 0, 3]]   # n stored by x, asserted for y


def test_compound_dim_is_computed_by_a_shape_function():
    n = tir.Var("n", "int64")
    x = relax.Var("x", R.Tensor((n, 4), "float32"))
    bb = relax.BlockBuilder()
    with bb.function("main", [x]):
        bb.emit_func_output(bb.emit(op.reshape(x, (n * 4,))))
    low = lower_for_vm(bb.get())
    assert "shape_func_main" in low
    assert _calls(low["main"], "vm.builtin.make_shape")


def test_bytecode_of_if_tuples_and_closures():
    for make, words in ((vm_models.branch, ["vm.builtin.read_if_cond", "if ", "goto"]),
                        (vm_models.nested_tuple, ["vm.builtin.make_tuple"]),
                        (vm_models.closures, ["vm.builtin.make_closure",
                                              "vm.builtin.invoke_closure", "call  scale"])):
        prog = make()
        ex = relax.build(prog.mod, "llvm", params=prog.params)
        text = ex.as_text()
        for w in words:
            assert w in text, (prog.name, w, text)
        again = VMExecutableBytes.from_bytes(ex.as_bytes())
        assert again.to_bytes() == ex.as_bytes()


def test_unknown_rank_kernel_argument_is_a_user_error():
    x = relax.Var("x", R.Tensor(None, "float32", ndim=-1))
    bb = relax.BlockBuilder()
    with bb.function("main", [x]):
        bb.emit_func_output(bb.emit(op.nn.relu(x)))
    with pytest.raises(CompilerError, match="match_cast"):
        relax.build(bb.get(), "llvm")


def test_export_writes_one_library(tmp_path):
    prog = vm_models.mlp(hidden=16)
    ex = relax.build(prog.mod, "llvm", params=prog.params)
    path = tmp_path / "mlp.so"
    ex.export_library(str(path))
    data = path.read_bytes()
    assert b"relax.VMExecutable" in data and b"fused_matmul" in data
    assert "Tensor([784, 16], float32)" in ex.stats()  # dense weights go transposed
    assert np.isfinite(prog.reference(*prog.args(n=2))).all()


def _branch_after_a_chain():
    """softmax x3, then If(sum > 0): softmax x3 of the chain's result, else the result - 1."""
    x = relax.Var("x", R.Tensor((8, 16), "float32"))
    bb = relax.BlockBuilder()
    with bb.function("main", [x]):
        c = bb.emit(op.nn.softmax(bb.emit(op.nn.softmax(bb.emit(op.nn.softmax(x))))))
        cond = bb.emit(op.greater(op.sum(x), relax.const(0.0, "float32")))
        y = bb.emit(relax.If(cond, op.nn.softmax(op.nn.softmax(op.nn.softmax(c))),
                             op.subtract(c, relax.const(1.0, "float32"))))
        bb.emit_func_output(y)
    return bb.get()


def _softmax_n(x, k):
    for _ in range(k):
        e = np.exp(x - x.max(axis=-1, keepdims=True))
        x = e / e.sum(axis=-1, keepdims=True)
    return x


def test_if_branch_reuses_storage_freed_before_the_if():
    """The branch's temporaries take the chain's dead storage instead of new allocations; the
    storage is killed after the If (and the program still computes the right thing)."""
    low = lower_for_vm(_branch_after_a_chain())
    main = low["main"]
    ifs = []
    post_order_visit(main.body, lambda e: ifs.append(e) if isinstance(e, relax.If) else None)
    assert len(ifs) == 1
    in_branch = len(_calls(SimpleNamespace(body=ifs[0].true_branch), "vm.builtin.alloc_storage"))
    # softmax x3 in the branch: two temporaries reuse the chain's storage, the result is new
    assert in_branch == 1, in_branch
    assert len(storage_bytes(main)) == 6    # 3 for the chain, the bool, each branch's result
    vm = VirtualMachine(relax.build(_branch_after_a_chain(), "llvm"), microruntime.cpu())
    for sign in (1.0, -1.0):
        x = (np.abs(np.random.default_rng(5).standard_normal((8, 16))) * sign).astype("float32")
        chain = _softmax_n(x, 3)
        want = _softmax_n(chain, 3) if x.sum() > 0 else chain - 1
        np.testing.assert_allclose(vm["main"](x).numpy(), want, rtol=1e-5, atol=1e-6)
