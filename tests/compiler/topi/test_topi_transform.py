"""Index-mapping operators against numpy (exact): reshape, flatten, transpose, concatenate,
split, squeeze, expand_dims, strided_slice, take, pad."""
import numpy as np
import pytest

import compiler
from compiler import te, topi
from compiler.ir.errors import IRError


def test_layout_ops(run, rng):
    x = te.placeholder((2, 3, 4), name="x")
    a = rng.random((2, 3, 4), dtype="float32")
    ops = [
        (topi.reshape(x, (4, -1)), a.reshape(4, -1)),
        (topi.nn.flatten(x), a.reshape(2, -1)),
        (topi.transpose(x, (2, 0, 1)), a.transpose(2, 0, 1)),
        (topi.transpose(x), a.transpose()),
        (topi.expand_dims(x, 1, 2), a[:, None, None]),
        (topi.squeeze(topi.expand_dims(x, -1), axis=-1), a),
        (topi.strided_slice(x, [1, -1], [2, -4], [1, -2], axes=[0, 2]), a[1:2, :, -1:-4:-2]),
        (topi.strided_slice(x, [0, 1], [10, 3]), a[0:10, 1:3]),
        (topi.nn.pad(x, (0, 1, 2), (1, 0, 1), pad_value=-1.0),
         np.pad(a, ((0, 1), (1, 0), (2, 1)), constant_values=-1.0)),
    ]
    outs = [o for o, _ in ops]
    got = run(topi.x86.schedule_injective(outs), [x], outs, [a])
    for k, ((_, ref), g) in enumerate(zip(ops, got)):
        np.testing.assert_array_equal(g, ref, err_msg=f"op {k}")


def test_concatenate_and_split(run, rng):
    x = te.placeholder((2, 3, 5), name="x")
    y = te.placeholder((2, 4, 5), name="y")
    a, b = rng.random((2, 3, 5), dtype="float32"), rng.random((2, 4, 5), dtype="float32")
    cat1 = topi.concatenate([x, y, x], axis=1)
    cat2 = topi.concatenate([x, x], axis=-1)
    parts = topi.split(x, [1, 4], axis=2)
    outs = [cat1, cat2] + parts
    got = run(topi.x86.schedule_injective(outs), [x, y], outs, [a, b])
    np.testing.assert_array_equal(got[0], np.concatenate([a, b, a], 1))
    np.testing.assert_array_equal(got[1], np.concatenate([a, a], -1))
    for g, ref in zip(got[2:], np.split(a, [1, 4], axis=2)):
        np.testing.assert_array_equal(g, ref)


def test_blocked_concat_indexes_each_vector_once(run, rng):
    """A concat of NCHW16c tensors along the blocks: the loops fused by the injective schedule
    address each vector as fused * 16 (the fused index's digits merged back), not through a
    division and remainder per dimension."""
    x = te.placeholder((1, 2, 23, 29, 16), name="x")   # large enough to run in parallel
    y = te.placeholder((1, 3, 23, 29, 16), name="y")
    out = topi.concatenate([x, y], axis=1)
    s = topi.x86.schedule_injective([out])
    text = str(compiler.lower(s, [x, y, out], simple_mode=True))
    store = next(line for line in text.splitlines() if "T_concat[" in line)
    target = store.split("=")[0]
    assert "//" not in target and "%" not in target, store
    a = rng.random((1, 2, 23, 29, 16), dtype="float32")
    b = rng.random((1, 3, 23, 29, 16), dtype="float32")
    got, = run(s, [x, y], [out], [a, b])
    np.testing.assert_array_equal(got, np.concatenate([a, b], 1))


def test_injective_parallel_loop_fuses_only_enough_outer_axes(run, rng):
    """The injective schedule fuses outer axes into its parallel loop until it has
    PARALLEL_MIN_CHUNKS iterations; the inner axes stay loops of their own, so what indexes by
    the fused loop (a channel shuffle's channel arithmetic) is computed once per iteration of
    it, not per element. Static shapes of fewer iterations fuse every outer axis."""
    from compiler.topi.x86.injective import PARALLEL_MIN_CHUNKS
    assert PARALLEL_MIN_CHUNKS == 64
    x = te.placeholder((1, 116, 28, 28), name="x")      # NCHW -> NCHW16c, as ShuffleNet's
    shuffled = topi.reshape(topi.transpose(topi.reshape(x, (1, 2, 58, 28, 28)),
                                           (0, 2, 1, 3, 4)), (1, 116, 28, 28))
    out = topi.nn.layout_transform(topi.nn.pad(shuffled, (0, 0, 0, 0), (0, 12, 0, 0)),
                                   "NCHW", "NCHW16c")
    s = topi.x86.schedule_injective([out])
    loops = [line.strip() for line in str(compiler.lower(s, [x, out], simple_mode=True))
             .splitlines() if line.strip().startswith("for ")]
    assert "range(224)" in loops[0] and "parallel" in loops[0], loops   # 1 x 8 blocks x 28 rows
    assert "range(28)" in loops[1] and "parallel" not in loops[1], loops
    a = rng.random((1, 116, 28, 28), dtype="float32")
    got, = run(s, [x], [out], [a])
    want = np.zeros((1, 8, 28, 28, 16), "float32")
    shuffled = a.reshape(1, 2, 58, 28, 28).transpose(0, 2, 1, 3, 4).reshape(116, 28, 28)
    for c in range(116):
        want[0, c // 16, :, :, c % 16] = shuffled[c]
    np.testing.assert_array_equal(got, want)
    y = te.placeholder((2, 3, 4096), name="y")           # 6 outer iterations: all fused
    out = topi.add(y, y)
    text = str(compiler.lower(topi.x86.schedule_injective([out]), [y, out], simple_mode=True))
    assert "range(1536)" in text and "parallel" in text, text   # 2 x 3 x (4096 / 16)


def test_take(run, rng):
    x = te.placeholder((5, 6), name="x")
    i = te.placeholder((2, 3), dtype="int64", name="i")
    a = rng.random((5, 6), dtype="float32")
    idx = np.array([[0, 4, -1], [2, 7, 1]], "int64")
    outs = [topi.take(x, i, axis=0, mode="clip"), topi.take(x, i, axis=1, mode="wrap"),
            topi.take(x, i)]
    got = run(topi.x86.schedule_injective(outs), [x, i], outs, [a, idx])
    np.testing.assert_array_equal(got[0], np.take(a, np.clip(idx, 0, 4), axis=0))
    np.testing.assert_array_equal(got[1], np.take(a, idx, axis=1, mode="wrap"))
    np.testing.assert_array_equal(got[2], np.take(a, np.clip(idx, 0, 29)))


def test_bad_arguments_raise():
    x = te.placeholder((2, 3), name="x")
    with pytest.raises(IRError, match="cannot reshape"):
        topi.reshape(x, (4, -1))
    with pytest.raises(IRError, match="not a permutation"):
        topi.transpose(x, (0, 0))
    with pytest.raises(IRError, match="out of range"):
        topi.squeeze(x, axis=3)
