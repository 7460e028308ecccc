"""Structural equality and hashing of graph-level functions: variables by binding place,
symbolic dims by first definition, constants by value, attrs by value; the first mismatch is
named by its path."""
import numpy as np
import pytest

from compiler import relax, tir
from compiler.ir import assert_structural_equal, structural_equal, structural_hash
from compiler.relax import op
from compiler.relax import script as R


def build(pad=1, const=1.0, sym=True, name="x"):
    n = tir.Var("n", "int64") if sym else 2
    x = relax.Var(name, R.Tensor((n, 3, 8, 8)))
    w = relax.Var("w", R.Tensor((4, 3, 3, 3)))
    bb = relax.BlockBuilder()
    with bb.function("main", [x, w]):
        with bb.dataflow():
            y = bb.emit(op.nn.conv2d(x, w, padding=pad))
            y = bb.emit(op.add(y, relax.const(np.full((4, 1, 1), const, "float32"))))
            gv = bb.emit_output(op.nn.relu(y))
        bb.emit_func_output(gv)
    return bb.get()


def test_equal_builds_are_equal_and_hash_equal():
    a, b = build(), build(name="other")  # names never matter; fresh vars and fresh n
    assert structural_equal(a, b)
    assert structural_hash(a["main"]) == structural_hash(b["main"])
    assert_structural_equal(a, b)


@pytest.mark.parametrize("kw,path", [({"pad": (2, 0, 0, 2)}, "value.attrs"),
                                     ({"pad": 0}, "ret_struct_info"),
                                     ({"const": 2.0}, "args[1]"),
                                     ({"sym": False}, "params[0]")])
def test_differences_are_found(kw, path):
    a, b = build(), build(**kw)
    assert not structural_equal(a, b)
    with pytest.raises(ValueError, match="StructuralEqual check failed") as e:
        assert_structural_equal(a["main"], b["main"])
    assert path in str(e.value)


def test_free_variables_and_bindings():
    x, y = relax.Var("x", R.Tensor((2,))), relax.Var("y", R.Tensor((2,)))
    assert not structural_equal(op.add(x, x), op.add(x, y))
    assert structural_equal(op.add(x, x), op.add(x, x))
    assert structural_equal(op.add(x, x), op.add(y, y), map_free_vars=True)
    assert not structural_equal(op.add(x, y), op.add(y, y), map_free_vars=True)
    f1 = relax.Function([x], op.add(x, x))
    f2 = relax.Function([y], op.add(y, y))
    assert structural_equal(f1, f2)
    z = relax.Var("z", R.Tensor((3,)))
    assert not structural_equal(f1, relax.Function([z], op.add(z, z)))
