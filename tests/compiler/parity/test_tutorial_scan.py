"""TVM's tutorial "Scan and Recurrent Kernel" (tutorials/language/scan.py), its code kept with
`import tvm` replaced: `tvm.te.scan` is `te.scan`, `tvm.lower`/`tvm.build` are `lower`/`build`,
`tvm.nd` is `runtime.nd`. The GPU build becomes a build for each host target (the GPU schedule
is lowered as in the tutorial; building it needs a GPU target)."""
import numpy as np
import pytest

import microruntime as runtime
from compiler import ScheduleError, build, lower, te


def _cumsum_decl():
    m = te.var("m")
    n = te.var("n")
    X = te.placeholder((m, n), name="X")
    s_state = te.placeholder((m, n))
    s_init = te.compute((1, n), lambda _, i: X[0, i])
    s_update = te.compute((m, n), lambda t, i: s_state[t - 1, i] + X[t, i])
    s_scan = te.scan(s_init, s_update, s_state, inputs=[X])
    return X, s_init, s_update, s_scan


def test_scan_cell_gpu_schedule_lowers():
    X, s_init, s_update, s_scan = _cumsum_decl()
    s = te.create_schedule(s_scan.op)
    num_thread = 256
    block_x = te.thread_axis("blockIdx.x")
    thread_x = te.thread_axis("threadIdx.x")
    xo, xi = s[s_init].split(s_init.op.axis[1], factor=num_thread)
    s[s_init].bind(xo, block_x)
    s[s_init].bind(xi, thread_x)
    xo, xi = s[s_update].split(s_update.op.axis[1], factor=num_thread)
    s[s_update].bind(xo, block_x)
    s[s_update].bind(xi, thread_x)
    text = str(lower(s, [X, s_scan], simple_mode=True))
    loop = text.index("for scan.idx in range(m - 1):")
    assert text.count("# thread_binding blockIdx.x") == 2
    assert text.index("thread_binding threadIdx.x", loop) > loop  # the update, in the loop
    with pytest.raises(ScheduleError, match=r"no GPU threads"):
        build(s, [X, s_scan], "c", name="myscan")


def test_build_and_verify(target):
    X, s_init, s_update, s_scan = _cumsum_decl()
    s = te.create_schedule(s_scan.op)
    xo, xi = s[s_update].split(s_update.op.axis[1], factor=16)
    s[s_update].vectorize(xi)
    fscan = build(s, [X, s_scan], target, name="myscan")
    dev = runtime.cpu(0)
    n = 1024
    m = 10
    a_np = np.random.uniform(size=(m, n)).astype(s_scan.dtype)
    a = runtime.nd.array(a_np, dev)
    b = runtime.nd.array(np.zeros((m, n), dtype=s_scan.dtype), dev)
    fscan(a, b)
    np.testing.assert_allclose(b.numpy(), np.cumsum(a_np, axis=0), rtol=1e-5)


def test_multi_stage_scan_cell(target):
    m = te.var("m")
    n = te.var("n")
    X = te.placeholder((m, n), name="X")
    s_state = te.placeholder((m, n))
    s_init = te.compute((1, n), lambda _, i: X[0, i])
    s_update_s1 = te.compute((m, n), lambda t, i: s_state[t - 1, i] * 2, name="s1")
    s_update_s2 = te.compute((m, n), lambda t, i: s_update_s1[t, i] + X[t, i], name="s2")
    s_scan = te.scan(s_init, s_update_s2, s_state, inputs=[X])

    s = te.create_schedule(s_scan.op)
    xo, xi = s[s_update_s2].split(s_update_s2.op.axis[1], factor=32)
    s[s_update_s1].compute_at(s[s_update_s2], xo)
    text = str(lower(s, [X, s_scan], simple_mode=True))
    assert text.index("for scan.idx") < text.index("s1 = allocate([32]")
    # the group constraint: s1 cannot leave the scan body
    with pytest.raises(ScheduleError, match=r"'s1': it belongs to group 'scan.body'"):
        s[s_update_s1].compute_at(s[s_init], s_init.op.axis[1])

    f = build(s, [X, s_scan], target)
    a_np = np.random.uniform(size=(8, 70)).astype("float32")
    b = runtime.nd.array(np.zeros((8, 70), "float32"))
    f(runtime.nd.array(a_np), b)
    ref = a_np.copy()
    for t in range(1, 8):
        ref[t] = ref[t - 1] * 2 + a_np[t]
    np.testing.assert_allclose(b.numpy(), ref, rtol=1e-5)


def test_multiple_states(target):
    m = te.var("m")
    n = te.var("n")
    l = te.var("l")  # noqa: E741 (the tutorial's name)
    X = te.placeholder((m, n), name="X")
    s_state1 = te.placeholder((m, n))
    s_state2 = te.placeholder((m, l))
    s_init1 = te.compute((1, n), lambda _, i: X[0, i])
    s_init2 = te.compute((1, l), lambda _, i: 0.0)
    s_update1 = te.compute((m, n), lambda t, i: s_state1[t - 1, i] + X[t, i])
    s_update2 = te.compute((m, l), lambda t, i: s_state2[t - 1, i] + s_state1[t - 1, 0])
    s_scan1, s_scan2 = te.scan(
        [s_init1, s_init2], [s_update1, s_update2], [s_state1, s_state2], inputs=[X]
    )
    s = te.create_schedule(s_scan1.op)
    text = str(lower(s, [X, s_scan1, s_scan2], simple_mode=True))
    assert text.count("for scan.idx") == 1  # both states advance in one time loop

    f = build(s, [X, s_scan1, s_scan2], target)
    a_np = np.random.uniform(size=(6, 4)).astype("float32")
    b1 = runtime.nd.array(np.zeros((6, 4), "float32"))
    b2 = runtime.nd.array(np.zeros((6, 3), "float32"))
    f(runtime.nd.array(a_np), b1, b2)
    r1 = np.cumsum(a_np, axis=0)
    r2 = np.zeros((6, 3), "float32")
    for t in range(1, 6):
        r2[t] = r2[t - 1] + r1[t - 1, 0]
    np.testing.assert_allclose(b1.numpy(), r1, rtol=1e-5)
    np.testing.assert_allclose(b2.numpy(), r2, rtol=1e-5)
