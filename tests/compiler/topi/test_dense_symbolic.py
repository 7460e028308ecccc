"""dense / matmul with a symbolic row count M and static K, N on the x86 schedule: one kernel
built per case, run at M = 1, 5, 17, 64 against numpy (float32, rtol 1e-4, atol 1e-5), with K
and N that do not divide the tile; the M-tile loop partitioned (a guard-free main loop); the
VM's dense layers with constant weights as matmuls by the transposed weight."""
import numpy as np
import pytest

import compiler
import microruntime
from compiler import relax, te, topi
from compiler.arith import simplify
from compiler.lower import lower
from compiler.relax import op
from compiler.relax import script as R
from compiler.relax.transform import bind_params
from compiler.relax.transform.transpose_dense_weight import transpose_dense_weight
from compiler.tir import expr as E
from compiler.tir.functor import post_order_visit, substitute
from compiler.tir.stmt import For, IfThenElse
from microruntime.relax_vm import VirtualMachine

ROWS = (1, 5, 17, 64)


def _run(mod, arrays, out_shape):
    nd = [microruntime.nd.array(a) for a in arrays]
    out = microruntime.nd.array(np.zeros(out_shape, "float32"))
    mod["f"](*nd, out)
    return out.numpy()


@pytest.mark.parametrize("k,n", [(37, 50), (64, 48), (19, 10), (8, 3)])
def test_dense_bias_relu_symbolic_rows(target, k, n):
    m = te.size_var("m", "int64")
    x = te.placeholder((m, k), name="x")
    w = te.placeholder((n, k), name="w")
    b = te.placeholder((n,), name="b")
    d = topi.nn.dense(x, w)
    y = te.compute(d.shape, lambda i, j: te.max(d[i, j] + b[j], 0.0), name="y",
                   tag="elemwise")
    mod = compiler.build(topi.x86.schedule_dense([y]), [x, w, b, y], target=target, name="f")
    rng = np.random.default_rng(k * n)
    wa = rng.standard_normal((n, k)).astype("float32")
    ba = rng.standard_normal(n).astype("float32")
    for rows in ROWS:
        xa = rng.standard_normal((rows, k)).astype("float32")
        got = _run(mod, [xa, wa, ba], (rows, n))
        np.testing.assert_allclose(got, np.maximum(xa @ wa.T + ba, 0), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("k,n", [(37, 50), (128, 10), (5, 16)])
def test_matmul_symbolic_rows(target, k, n):
    m = te.size_var("m", "int64")
    a = te.placeholder((m, k), name="a")
    bt = te.placeholder((k, n), name="bt")
    c = topi.nn.matmul(a, bt)
    mod = compiler.build(topi.x86.schedule_matmul([c]), [a, bt, c], target=target, name="f")
    rng = np.random.default_rng(k + n)
    ba = rng.standard_normal((k, n)).astype("float32")
    for rows in ROWS:
        aa = rng.standard_normal((rows, k)).astype("float32")
        got = _run(mod, [aa, ba], (rows, n))
        np.testing.assert_allclose(got, aa @ ba, rtol=1e-4, atol=1e-5)


def test_main_loop_has_no_guard():
    m = te.size_var("m", "int64")
    a = te.placeholder((m, 40), name="a")
    bt = te.placeholder((40, 32), name="bt")
    c = topi.nn.matmul(a, bt)
    f = lower(topi.x86.schedule_matmul([c]), [a, bt, c], name="f")["f"]
    loops = {}
    post_order_visit(f.body, lambda s: loops.setdefault(s.loop_var.name, s)
                     if isinstance(s, For) else None)
    assert "i.outer" in loops and "i.outer.tail" in loops, sorted(loops)
    guards = []
    post_order_visit(loops["i.outer"],
                     lambda s: guards.append(s) if isinstance(s, IfThenElse) else None)
    assert not guards, guards
    # the tail keeps its guards: it runs the last M % 4 rows
    post_order_visit(loops["i.outer.tail"],
                     lambda s: guards.append(s) if isinstance(s, IfThenElse) else None)
    assert guards
    # the main loop covers the whole tiles only
    ext = loops["i.outer"].extent
    for rows, tiles in ((0, 0), (3, 0), (4, 1), (17, 4)):
        assert simplify(substitute(ext, {m: E.const(rows, "int64")})).value == tiles


def test_vm_dense_becomes_matmul_by_the_transposed_weight():
    n = E.Var("n", "int64")
    x = relax.Var("x", R.Tensor((n, 6), "float32"))
    w = relax.Var("w", R.Tensor((5, 6), "float32"))
    bb = relax.BlockBuilder()
    with bb.function("main", [x, w]):
        bb.emit_func_output(bb.emit(op.nn.dense(x, w)))
    wa = np.arange(30, dtype="float32").reshape(5, 6)
    mod = transpose_dense_weight(bind_params(bb.get(), {"w": wa}))
    text = str(mod)
    assert "nn.dense" not in text and "matmul" in text, text
    ex = relax.build(bb.get(), "llvm", params={"w": wa})
    vm = VirtualMachine(ex, microruntime.cpu())
    for rows in (1, 5):
        xa = np.random.default_rng(rows).standard_normal((rows, 6)).astype("float32")
        got = vm["main"](microruntime.nd.array(xa)).numpy()
        np.testing.assert_allclose(got, xa @ wa.T, rtol=1e-5)
