"""The reference interpreter beyond single operators: functions calling functions, closures,
If, match_cast, symbolic shapes bound from arguments and checked, call_tir of a loop-IR
PrimFunc, and errors for arguments that do not fit."""
import numpy as np
import pytest

from compiler import lower, relax, te, tir
from compiler.ir import IRError
from compiler.relax import interpreter, op
from compiler.relax import script as R


def test_symbolic_dims_bind_and_check():
    n = tir.Var("n", "int64")
    x = relax.Var("x", R.Tensor((n, 2)))
    y = relax.Var("y", R.Tensor((n, 2)))
    f = relax.Function([x, y], op.concat([x, y], axis=0))
    a, b = np.ones((3, 2), "float32"), np.zeros((3, 2), "float32")
    assert interpreter.run(f, a, b).shape == (6, 2)
    with pytest.raises(IRError, match="argument 'y': dim 0 is 4 but n = 3 was expected"):
        interpreter.run(f, a, np.zeros((4, 2), "float32"))
    with pytest.raises(IRError, match="argument 'x': dtype is float64 but float32"):
        interpreter.run(f, a.astype("float64"), b)
    with pytest.raises(IRError, match="takes 2 arguments"):
        interpreter.run(f, a)


def test_shape_expr_of_symbolic_dims_and_match_cast():
    n = tir.Var("n", "int64")
    x = relax.Var("x", R.Tensor(dtype="float32", ndim=2))
    bb = relax.BlockBuilder()
    with bb.function("main", [x]):
        y = bb.match_cast(x, R.Tensor((n, 4), "float32"))
        z = bb.emit(op.reshape(y, relax.ShapeExpr([n * 2, 2])))
        s = bb.emit(op.shape_of(z))
        bb.emit_func_output(relax.Tuple([z, s]))
    mod = bb.get()
    z, s = interpreter.run(mod, np.arange(12, dtype="float32").reshape(3, 4))
    assert z.shape == (6, 2) and tuple(s) == (6, 2)
    with pytest.raises(IRError, match="match_cast"):
        interpreter.run(mod, np.zeros((3, 5), "float32"))


def test_closures_and_recursive_module_calls():
    x = relax.Var("x", R.Tensor((), "int64"))
    bb = relax.BlockBuilder()
    fact = relax.GlobalVar("fact")
    with bb.function("fact", [x]):
        done = bb.emit(op.less_equal(x, relax.const(1)))
        rest = relax.SeqExpr([], op.multiply(x, relax.Call(fact, [op.subtract(x, relax.const(1))],
                                                         sinfo_args=())))
        out = bb.emit(relax.If(done, relax.const(1), rest))
        bb.emit_func_output(out)
    assert int(interpreter.run(bb.get(), np.array(5), func_name="fact")) == 120

    y = relax.Var("y", R.Tensor((2,)))
    k = relax.Var("k", R.Tensor((2,)))
    inner = relax.Function([k], op.multiply(k, y))  # captures y
    g = relax.Var("g", inner.struct_info)
    body = relax.SeqExpr([relax.BindingBlock([relax.VarBinding(g, inner)])],
                         relax.Call(g, [op.add(y, y)]))
    f = relax.Function([y], body)
    assert f.ret_struct_info.shape == (2,)
    np.testing.assert_allclose(interpreter.run(f, np.array([1.0, 3.0], "float32")), [2, 18])


def test_call_tir_runs_the_loop_ir():
    n = te.var("n")
    A = te.placeholder((n, 4), name="A")
    B = te.compute((n, 4), lambda i, j: A[i, j] + 1.0, name="B")
    prim = lower(te.create_schedule(B.op), [A, B], name="add_one")["add_one"]
    m = tir.Var("m", "int64")
    x = relax.Var("x", R.Tensor((m, 4)))
    bb = relax.BlockBuilder()
    gv = bb.add_func(prim, "add_one")
    with bb.function("main", [x]):
        with bb.dataflow():
            y = bb.emit(relax.call_tir(gv, [x], R.Tensor((m, 4), "float32")))
            out = bb.emit_output(op.nn.relu(y))
        bb.emit_func_output(out)
    a = np.random.default_rng(0).standard_normal((3, 4)).astype("float32")
    np.testing.assert_allclose(interpreter.run(bb.get(), a), np.maximum(a + 1, 0), rtol=1e-6)


def test_evaluate_an_expression():
    x = relax.Var("x", R.Tensor((3,)))
    value = interpreter.evaluate(op.sum(op.multiply(x, x)), {x: np.array([1, 2, 3], "float32")})
    assert float(value) == 14.0
    assert interpreter.evaluate(op.add(relax.const(2.0), relax.const(3.0))) == 5.0
