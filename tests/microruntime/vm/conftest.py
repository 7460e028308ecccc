"""VM test programs: executables assembled with ExecBuilder whose kernels Kiln compiles."""
import numpy as np
import pytest

import microruntime as mr
from compiler.relax.exec_builder import ExecBuilder, VMFuncKind
from microruntime.relax_vm import Executable

F32 = mr.DataType("float32")


def _targets():
    from compiler.codegen import host_codegen_available

    return ["c"] + (["llvm"] if host_codegen_available("llvm") else [])


def build_kernels(target):
    """One library with add(A, B, C) and scale(A, C) = 2 * A, over 1-D float32 of any length."""
    import compiler
    from compiler import te

    n = te.var("n")
    a = te.placeholder((n,), "float32", name="A")
    b = te.placeholder((n,), "float32", name="B")
    add = te.compute((n,), lambda i: a[i] + b[i], name="C")
    scale = te.compute((n,), lambda i: a[i] * 2.0, name="D")
    mod = compiler.lower(te.create_schedule(add.op), [a, b, add], name="add")
    mod2 = compiler.lower(te.create_schedule(scale.op), [a, scale], name="scale")
    mod = mod.with_functions({**dict(mod.items()), **dict(mod2.items())})
    return compiler.build(mod, target=target)


@pytest.fixture(scope="module", params=_targets())
def kernels(request):
    return build_kernels(request.param)


def emit_alloc_like(eb, src, dst):
    """dst = a new float32 tensor of src's shape (shape_of, alloc_storage, alloc_tensor)."""
    eb.emit_call("vm.builtin.shape_of", args=[eb.r(src)], dst=eb.r(dst + 100))
    eb.emit_call("vm.builtin.alloc_storage", args=[eb.vm_state(), eb.r(dst + 100), eb.imm(0), F32,
                                                   eb.convert_constant("global")],
                 dst=eb.r(dst + 200))
    eb.emit_call("vm.builtin.alloc_tensor", args=[eb.r(dst + 200), eb.imm(0), eb.r(dst + 100), F32],
                 dst=eb.r(dst))


def emit_checks(eb, names):
    for i, name in enumerate(names):
        eb.emit_call("vm.builtin.check_tensor_info", args=[
            eb.r(i), eb.imm(1), F32,
            eb.convert_constant(f"ErrorContext(fn=main, loc=param[{i}], param={name})")])


def program():
    """main(x, y) = x + y; cond_main(c, x, y) = x + y if c else 2 * x;
    tuple_main(x, y) = ((x + y, shape(x)), x); helper(a, b) = a + b (a bytecode function);
    call_main(x, y) = helper(x, y) + y; closure_main(x, y) = invoke(make_closure(helper, y), x);
    get_closure(y) = make_closure(helper, y)."""
    eb = ExecBuilder()
    eb.declare_function("helper", VMFuncKind.VM_FUNC)
    with eb.function("main", num_inputs=2, param_names=["x", "y"]):
        emit_checks(eb, ["x", "y"])
        emit_alloc_like(eb, 0, 2)
        eb.emit_call("add", args=[eb.r(0), eb.r(1), eb.r(2)])
        eb.emit_ret(eb.r(2))
    with eb.function("cond_main", num_inputs=3, param_names=["c", "x", "y"]):
        eb.emit_call("vm.builtin.read_if_cond", args=[eb.r(0)], dst=eb.r(3))
        emit_alloc_like(eb, 1, 4)
        eb.emit_if(eb.r(3), 3)
        eb.emit_call("add", args=[eb.r(1), eb.r(2), eb.r(4)])
        eb.emit_goto(2)
        eb.emit_call("scale", args=[eb.r(1), eb.r(4)])
        eb.emit_ret(eb.r(4))
    with eb.function("tuple_main", num_inputs=2, param_names=["x", "y"]):
        emit_alloc_like(eb, 0, 2)
        eb.emit_call("add", args=[eb.r(0), eb.r(1), eb.r(2)])
        eb.emit_call("vm.builtin.shape_of", args=[eb.r(0)], dst=eb.r(3))
        eb.emit_call("vm.builtin.make_tuple", args=[eb.r(2), eb.r(3)], dst=eb.r(4))
        eb.emit_call("vm.builtin.make_tuple", args=[eb.r(4), eb.r(0)], dst=eb.r(5))
        eb.emit_ret(eb.r(5))
    with eb.function("helper", num_inputs=2, param_names=["a", "b"]):
        emit_alloc_like(eb, 0, 2)
        eb.emit_call("add", args=[eb.r(0), eb.r(1), eb.r(2)])
        eb.emit_ret(eb.r(2))
    with eb.function("call_main", num_inputs=2, param_names=["x", "y"]):
        eb.emit_call("helper", args=[eb.r(0), eb.r(1)], dst=eb.r(2))
        eb.emit_call("helper", args=[eb.r(2), eb.r(1)], dst=eb.r(3))
        eb.emit_call("vm.builtin.null_value", dst=eb.r(2))
        eb.emit_ret(eb.r(3))
    with eb.function("closure_main", num_inputs=2, param_names=["x", "y"]):
        eb.emit_call("vm.builtin.make_closure", args=[eb.f("helper"), eb.r(1)], dst=eb.r(2))
        eb.emit_call("vm.builtin.invoke_closure", args=[eb.vm_state(), eb.r(2), eb.r(0)],
                     dst=eb.r(3))
        eb.emit_ret(eb.r(3))
    with eb.function("get_closure", num_inputs=1, param_names=["y"]):
        eb.emit_call("vm.builtin.make_closure", args=[eb.f("helper"), eb.r(0)], dst=eb.r(1))
        eb.emit_ret(eb.r(1))
    with eb.function("trivial", num_inputs=1, param_names=["x"]):
        eb.emit_ret(eb.r(0))
    return eb.get()


@pytest.fixture(scope="module")
def exe_bytes():
    return program().to_bytes()


@pytest.fixture(scope="module")
def executable(exe_bytes, kernels):
    return Executable.from_bytes(exe_bytes, kernels=kernels)


def rand(n, seed=0):
    return np.random.default_rng(seed).standard_normal(n).astype("float32")
