"""The printer's TVMScript-like text. The text of a small model is the contract (golden/,
regenerate after an intended change with KILN_UPDATE_GOLDEN=1 and review the diff); other
tests check phrases."""
import os

import numpy as np

from compiler import relax, tir
from compiler.ir import IRModule
from compiler.relax import op
from compiler.relax import script as R

GOLDEN = os.path.join(os.path.dirname(os.path.abspath(__file__)), "golden")


def check_golden(name: str, text: str) -> None:
    path = os.path.join(GOLDEN, name)
    if os.environ.get("KILN_UPDATE_GOLDEN") == "1":
        os.makedirs(GOLDEN, exist_ok=True)
        with open(path, "w") as f:
            f.write(text + "\n")
    with open(path) as f:
        expected = f.read()
    assert text + "\n" == expected, (f"printed text differs from {path}; if intended, "
                                     "regenerate with KILN_UPDATE_GOLDEN=1")


def small_model():
    n = tir.Var("n", "int64")
    x = relax.Var("x", R.Tensor((n, 3, 8, 8), "float32"))
    w = relax.Var("w", R.Tensor((4, 3, 3, 3), "float32"))
    bb = relax.BlockBuilder()
    with bb.function("main", [x, w], attrs={"num_input": 1}):
        with bb.dataflow():
            y = bb.emit(op.nn.relu(op.nn.conv2d(x, w, padding=1)))
            y = op.reshape(op.nn.adaptive_avg_pool2d(y, 1), (0, -1))
            y = op.add(op.nn.dense(y, relax.const(np.ones((10, 4), "float32"))),
                       relax.const(0.5, "float32"))
            gv = bb.emit_output(op.nn.softmax(y))
        bb.emit_func_output(gv)
    return bb.get()


def test_small_model_text():
    check_golden("small_model.txt", str(small_model()))


def test_struct_info_and_expr_text():
    n = tir.Var("n", "int64")
    assert str(R.Tensor((n, 2), "int8")) == 'R.Tensor((n, 2), dtype="int8")'
    assert str(R.Tensor(dtype="float32", ndim=3)) == 'R.Tensor(dtype="float32", ndim=3)'
    assert str(R.Tuple(R.Shape([1, n]), R.Object())) == "R.Tuple(R.Shape([1, n]), R.Object)"
    assert str(R.Prim("float32")) == 'R.Prim("float32")'
    assert str(R.Callable([R.Tensor((2,))], R.Tensor((2,)))) == \
        'R.Callable((R.Tensor((2,), dtype="float32"),), R.Tensor((2,), dtype="float32"))'
    x = relax.Var("x", R.Tensor((2,)))
    assert str(op.add(x, x)) == "R.add(x, x)"
    assert str(op.split(x, 2)) == "R.split(x, indices_or_sections=2, axis=0)"
    assert str(relax.TupleGetItem(relax.Tuple([x, x]), 1)) == "(x, x)[1]"


def test_module_with_primfunc_call_tir_if_and_match_cast():
    from compiler import lower, te
    A = te.placeholder((4,), name="A")
    B = te.compute((4,), lambda i: A[i] * 2.0, name="B")
    prim = lower(te.create_schedule(B.op), [A, B], name="twice")["twice"]
    bb = relax.BlockBuilder()
    gv = bb.add_func(prim, "twice")
    c = relax.Var("c", R.Tensor((), "bool"))
    x = relax.Var("x", R.Tensor(dtype="float32", ndim=1))
    with bb.function("main", [c, x]):
        y = bb.match_cast(x, R.Tensor((4,), "float32"))
        z = bb.emit(relax.call_tir(gv, [y], R.Tensor((4,), "float32")))
        out = bb.emit(relax.If(c, z, y))
        bb.emit_func_output(out)
    mod = bb.get()
    assert isinstance(mod, IRModule)
    text = str(mod)
    assert 'lv: R.Tensor((4,), dtype="float32") = R.match_cast(x, R.Tensor((4,), ' \
           'dtype="float32"))' in text
    assert 'R.call_tir(cls.twice, (lv,), out_sinfo=R.Tensor((4,), dtype="float32"))' in text
    assert "if c:" in text and "else:" in text
    assert "def twice(" in text
    a = np.arange(4, dtype="float32")
    np.testing.assert_allclose(relax.interpreter.run(mod, np.array(True), a), 2 * a)
    np.testing.assert_allclose(relax.interpreter.run(mod, np.array(False), a), a)
