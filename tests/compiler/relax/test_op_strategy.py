"""Op strategies: each operator call gets its compute, its kernel's schedule and its tuning
workload from its operator's strategy for the target, in one place (compiler/relax/strategy)."""
import numpy as np
import pytest

import microruntime
from compiler import build, relax, te, topi
from compiler.ir.errors import UnsupportedOpError
from compiler.relax import op
from compiler.relax import script as R
from compiler.relax.strategy import (
    OpStrategy,
    register_strategy,
    schedule_of,
    strategy_of,
    workload_of,
)
from compiler.relax.strategy.op_strategy import STRATEGY_ATTR
from compiler.target import Target

CUDA = Target("cuda")


def T(shape, dtype="float32"):  # noqa: N802
    return relax.Var("t", R.Tensor(shape, dtype))


def test_conv2d_compute_and_schedule_follow_layout_and_groups():
    plain = strategy_of(op.nn.conv2d(T((1, 8, 10, 10)), T((16, 8, 3, 3))))
    assert plain.name == "conv2d_nchw" and plain.schedule is topi.x86.schedule_conv2d_nchw
    assert plain.workload is None
    grouped = strategy_of(op.nn.conv2d(T((1, 8, 10, 10)), T((8, 2, 3, 3)), groups=4))
    assert grouped.name == "group_conv2d_nchw"
    assert grouped.schedule is topi.x86.schedule_group_conv2d_nchw
    on_gpu = strategy_of(op.nn.conv2d(T((1, 8, 10, 10)), T((16, 8, 3, 3))), CUDA)
    assert on_gpu.schedule is topi.cuda.schedule_conv2d_nchw


def test_conv2d_blocked_layout_names_its_template_and_runs_on_a_cpu_only():
    call = op.nn.conv2d(T((1, 2, 10, 10, 4)), T((4, 2, 3, 3, 4, 4)), padding=1,
                        data_layout="NCHW4c", kernel_layout="OIHW4i4o")
    s = strategy_of(call)
    assert s.name == "conv2d_NCHWc" and s.schedule is topi.x86.schedule_conv2d_NCHWc
    assert s.workload == ("conv2d_NCHWc.x86", (1, 2, 10, 10, 4), (4, 2, 3, 3, 4, 4), (1, 1),
                          (1, 1, 1, 1), (1, 1), "float32", "float32")
    with pytest.raises(UnsupportedOpError, match="CPU targets only"):
        strategy_of(call, CUDA)


def test_conv2d_compute_is_the_one_the_strategy_names():
    call = op.nn.conv2d(T((1, 3, 6, 6)), T((4, 3, 3, 3)), padding=1)
    s = strategy_of(call)
    data = te.placeholder((1, 3, 6, 6), name="data")
    weight = te.placeholder((4, 3, 3, 3), name="weight")
    out = s.compute(call, [data, weight])
    lib = build(s.schedule([out]), [data, weight, out], "llvm")
    rng = np.random.default_rng(0)
    x = rng.standard_normal((1, 3, 6, 6)).astype("float32")
    w = rng.standard_normal((4, 3, 3, 3)).astype("float32")
    y = microruntime.nd.empty((1, 4, 6, 6), "float32")
    lib(microruntime.nd.array(x), microruntime.nd.array(w), y)
    xp = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)))
    want = np.zeros((1, 4, 6, 6), "float32")
    for i in range(3):
        for j in range(3):
            want += np.einsum("nchw,oc->nohw", xp[:, :, i:i + 6, j:j + 6], w[:, :, i, j])
    np.testing.assert_allclose(y.numpy(), want, rtol=1e-5, atol=1e-5)


def test_conv2d_unknown_kernel_layout_is_a_clear_error():
    call = op.nn.conv2d(T((1, 8, 10, 10)), T((3, 3, 8, 16)), kernel_layout="HWIO")
    with pytest.raises(UnsupportedOpError, match="HWIO"):
        strategy_of(call)


def test_gemm_workloads_and_batched_matmul():
    dense = op.nn.dense(T((4, 64)), T((32, 64)))
    assert workload_of(dense) == ("dense.x86", (4, 64), (32, 64), "float32", "float32")
    assert strategy_of(dense).schedule is topi.x86.schedule_dense
    mm = op.matmul(T((4, 64)), T((64, 32)))
    assert workload_of(mm)[0] == "matmul.x86"
    batched = strategy_of(op.matmul(T((2, 4, 64)), T((2, 64, 32))))
    assert batched.name == "batch_matmul" and batched.workload is None
    assert batched.schedule is topi.x86.schedule_batch_matmul


def test_operators_without_a_strategy_are_scheduled_by_pattern():
    add = op.add(T((4, 4)), T((4, 4)))
    s = strategy_of(add)
    assert s.name == "injective" and s.schedule is topi.x86.schedule_injective
    assert s.compute is not None and s.workload is None
    assert strategy_of(add, CUDA).schedule is topi.cuda.schedule_injective
    assert strategy_of(op.sum(T((4, 4)), axis=[1])).name == "reduce"


def test_layer_norm_has_a_cpu_schedule_and_a_pattern_one_on_gpu():
    call = op.nn.layer_norm(T((2, 8)), T((8,)), T((8,)), axes=[-1])
    assert strategy_of(call).schedule is topi.x86.schedule_layer_norm
    assert strategy_of(call, CUDA).name != "layer_norm"


def test_a_registered_strategy_is_what_the_kernel_maker_uses():
    """Swapping an operator's strategy changes the schedule its kernels get, and nothing else
    has to know."""
    call = op.nn.softmax(T((4, 16)))
    before = strategy_of(call)
    used = []

    def traced(c, target, schedules):
        used.append(c.op.name)
        return OpStrategy("traced", before.compute, topi.generic.default_schedule)

    name = "relax.nn.softmax"
    original = call.op.get_attr(STRATEGY_ATTR)
    register_strategy(name, traced)
    try:
        assert schedule_of(call) is topi.generic.default_schedule
        assert used == [name]
    finally:
        register_strategy(name, original)
    assert strategy_of(call).name == before.name


def test_gemms_with_enough_rows_take_the_packed_gemm():
    for call in (op.matmul(T((1, 197, 768)), T((768, 3072))),
                 op.matmul(T((197, 1, 768)), T((768, 2304))),
                 op.matmul(T((1, 14, 14, 384)), T((384, 1536))),     # rows in two dims
                 op.matmul(T((2, 64, 64)), T((64, 32))),             # a batch by one B
                 op.nn.dense(T((64, 64)), T((32, 64)))):
        s = strategy_of(call)
        assert s.name == "matmul_packed" and s.schedule is topi.x86.schedule_gemm_packed
        assert strategy_of(call, CUDA).name != "matmul_packed"
    assert strategy_of(op.matmul(T((4, 64)), T((64, 32)))).name == "matmul"
    assert strategy_of(op.matmul(T((2, 64, 64)), T((2, 64, 32)))).name == "batch_matmul"
    # the packed compute gives the call's result
    a = np.random.default_rng(0).standard_normal((40, 16)).astype("float32")
    w = np.random.default_rng(1).standard_normal((24, 16)).astype("float32")
    call = op.nn.dense(T((40, 16)), T((24, 16)))
    s = strategy_of(call)
    A, B = te.placeholder((40, 16), name="A"), te.placeholder((24, 16), name="B")
    with Target("llvm"):
        C = s.compute(call, [A, B])
        f = build(s.schedule([C]), [A, B, C], target="llvm", name="f")
    out = microruntime.nd.array(np.zeros((40, 24), "float32"))
    f["f"](microruntime.nd.array(a), microruntime.nd.array(w), out)
    np.testing.assert_allclose(out.numpy(), a @ w.T, rtol=1e-4, atol=1e-4)
