"""split_host_device: the IR before, the IR expected after; the kernel computes what the
original function did (interpreter against numpy)."""
import numpy as np
import pytest

from compiler import te
from compiler.ir import IRModule
from compiler.ir.dtype import int32
from compiler.ir.errors import ScheduleError
from compiler.ir.structural_equal import assert_structural_equal
from compiler.lower import lower
from compiler.target import Target
from compiler.tir import (
    BufferStore,
    Evaluate,
    For,
    ForKind,
    PrimFunc,
    Var,
    decl_buffer,
    interpreter,
    verifier,
)
from compiler.tir import expr as E
from compiler.tir.transform.split_host_device import split_host_device

CUDA = Target("cuda", host="llvm")


def _thread_loop(var, extent, tag, body):
    iv = E.IterVar(None, Var(tag), E.IterKind.THREAD, tag)
    return For(var, E.const(0), E.convert(extent), ForKind.THREAD_BINDING, body, iv)


def _with_target(mod, target=CUDA):
    return IRModule({g: f.with_attr("target", target) for g, f in mod.items()})


def _lowered(s, args, name="f"):
    return _with_target(lower(s, args, name=name))


def _run_kernel(mod, kernel, arrays, scalars=()):
    """Runs the kernel with the host's launch arguments: arrays for handles, ints for scalars."""
    func = mod[kernel]
    by_name = {**arrays, **dict(scalars)}
    interpreter.run(func, *[by_name[p.name] for p in func.params])


def test_one_bound_loop_nest_before_after():
    A = decl_buffer((256,), "float32", "A")
    B = decl_buffer((256,), "float32", "B")
    bx, tx = Var("bx"), Var("tx")
    idx = bx * 64 + tx
    region = _thread_loop(bx, 4, "blockIdx.x",
                          _thread_loop(tx, 64, "threadIdx.x",
                                       BufferStore(B, A[idx] * 2.0, (idx,))))
    params = (Var("A", A.data.dtype), Var("B", B.data.dtype))
    before = PrimFunc(params, region, tuple(zip(params, (A, B))),
                      {"global_symbol": "f", "target": CUDA})
    after = split_host_device(IRModule({"f": before}))
    verifier.verify(after)

    launch = E.Call(int32, "tir.call_packed",
                    (E.StringImm("f_kernel"), A.data, B.data, E.const(4), E.const(64)))
    assert_structural_equal(after["f"].body, Evaluate(launch))
    assert after["f"].attrs["target"] == Target("llvm")
    kernel = after["f_kernel"]
    assert kernel.params == (A.data, B.data) and kernel.buffer_map == ()
    assert kernel.body is region
    assert kernel.attrs["calling_conv"] == "device_kernel"
    assert kernel.attrs["global_symbol"] == "f_kernel"
    assert kernel.attrs["tir.is_global_func"] is True
    assert kernel.attrs["tir.kernel_launch_params"] == ("blockIdx.x", "threadIdx.x")
    assert kernel.attrs["target"] == Target("cuda") and kernel.attrs["target"].host is None

    a = np.arange(256, dtype="float32")
    b = np.zeros(256, dtype="float32")
    _run_kernel(after, "f_kernel", {"A": a, "B": b})
    np.testing.assert_array_equal(b, a * 2)


def test_two_dim_binding_launches_grid_then_block():
    A = te.placeholder((32, 48), name="A")
    C = te.compute((32, 48), lambda i, j: A[i, j] + 1.0, name="C")
    s = te.create_schedule(C.op)
    i, j = C.op.axis
    io, ii = s[C].split(i, factor=8)
    jo, ji = s[C].split(j, factor=16)
    s[C].reorder(io, jo, ii, ji)
    s[C].bind(io, te.thread_axis("blockIdx.y"))
    s[C].bind(jo, te.thread_axis("blockIdx.x"))
    s[C].bind(ii, te.thread_axis("threadIdx.y"))
    s[C].bind(ji, te.thread_axis("threadIdx.x"))
    after = split_host_device(_lowered(s, [A, C]))
    verifier.verify(after)
    kernel = after["f_kernel"]
    assert kernel.attrs["tir.kernel_launch_params"] == (
        "blockIdx.x", "blockIdx.y", "threadIdx.x", "threadIdx.y")
    call = after["f"].body.value
    assert call.op == "tir.call_packed" and call.args[0].value == "f_kernel"
    assert [a.name for a in call.args[1:3]] == ["A", "C"]
    assert [a.value for a in call.args[3:]] == [3, 4, 16, 8]

    a = np.random.default_rng(0).standard_normal((32, 48)).astype("float32")
    c = np.zeros_like(a)
    _run_kernel(after, "f_kernel", {"A": a, "C": c})
    np.testing.assert_allclose(c, a + 1.0)


def test_symbolic_extent_is_a_kernel_param_and_launch_extent():
    n = te.var("n")
    A = te.placeholder((n,), name="A")
    B = te.placeholder((n,), name="B")
    C = te.compute((n,), lambda i: A[i] + B[i], name="C")
    s = te.create_schedule(C.op)
    bx, tx = s[C].split(C.op.axis[0], factor=64)
    s[C].bind(bx, te.thread_axis("blockIdx.x"))
    s[C].bind(tx, te.thread_axis("threadIdx.x"))
    after = split_host_device(_lowered(s, [A, B, C], name="add"))
    verifier.verify(after)
    kernel = after["add_kernel"]
    assert [p.name for p in kernel.params] == ["A", "B", "C", "n"]
    assert kernel.params[3] is n
    grid, block = after["add"].body.value.args[-2:]
    assert_structural_equal(grid, kernel.body.extent)
    assert n in _vars(grid) and block.value == 64

    a, b = np.arange(100, dtype="float32"), np.ones(100, dtype="float32")
    c = np.zeros(100, dtype="float32")
    _run_kernel(after, "add_kernel", {"A": a, "B": b, "C": c}, {"n": 100})
    np.testing.assert_array_equal(c, a + b)


def _vars(expr):
    from compiler.tir.functor import collect_vars

    return collect_vars(expr)


def test_no_bound_loops_returns_the_same_module_and_function():
    A = te.placeholder((8,), name="A")
    C = te.compute((8,), lambda i: A[i] * 3.0, name="C")
    mod = _with_target(lower(te.create_schedule(C.op), [A, C], name="f"), Target("llvm"))
    after = split_host_device(mod)
    assert after is mod and after["f"] is mod["f"]


def test_device_function_accessing_memory_on_the_host_asks_for_a_bind():
    A = te.placeholder((8,), name="A")
    C = te.compute((8,), lambda i: A[i] * 3.0, name="C")
    mod = _lowered(te.create_schedule(C.op), [A, C])
    with pytest.raises(ScheduleError, match=r"'A', 'C'.*Did you forget to bind\?"):
        split_host_device(mod)


def test_region_using_a_scalar_param():
    alpha = te.var("alpha", dtype="float32")
    A = te.placeholder((128,), name="A")
    C = te.compute((128,), lambda i: A[i] * alpha, name="C")
    s = te.create_schedule(C.op)
    bx, tx = s[C].split(C.op.axis[0], factor=32)
    s[C].bind(bx, te.thread_axis("blockIdx.x"))
    s[C].bind(tx, te.thread_axis("threadIdx.x"))
    after = split_host_device(_lowered(s, [A, C, alpha]))
    verifier.verify(after)
    kernel = after["f_kernel"]
    assert [p.name for p in kernel.params] == ["A", "C", "alpha"]
    assert kernel.params[2] is alpha
    assert after["f"].body.value.args[3] is alpha

    a = np.arange(128, dtype="float32")
    c = np.zeros(128, dtype="float32")
    _run_kernel(after, "f_kernel", {"A": a, "C": c}, {"alpha": 2.5})
    np.testing.assert_allclose(c, a * 2.5)


def test_two_regions_make_two_kernels():
    A = te.placeholder((64,), name="A")
    B = te.compute((64,), lambda i: A[i] + 1.0, name="B")
    C = te.compute((64,), lambda i: B[i] * 2.0, name="C")
    s = te.create_schedule(C.op)
    for T in (B, C):
        s[T].bind(T.op.axis[0], te.thread_axis("threadIdx.x"))
    after = split_host_device(_lowered(s, [A, C]))
    verifier.verify(after)
    assert {"f_kernel", "f_kernel_1"} <= set(after)


@pytest.mark.parametrize("kind", ["llvm", "c"])
def test_bound_loop_for_a_cpu_target_is_a_schedule_error(kind):
    A = te.placeholder((64,), name="A")
    C = te.compute((64,), lambda i: A[i] + 1.0, name="C")
    s = te.create_schedule(C.op)
    s[C].bind(C.op.axis[0], te.thread_axis("threadIdx.x"))
    mod = _with_target(lower(s, [A, C], name="f"), Target(kind))
    with pytest.raises(ScheduleError, match=r"bound to the GPU thread axis 'threadIdx.x'.*"
                                            r"build with target='cuda' \(or remove the bind\)"):
        split_host_device(mod)
