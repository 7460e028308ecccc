"""BlockBuilder: normalization to A-normal form, dataflow blocks and their variables, struct
info on every expression, functions added to the module, errors for misuse; ModelBuilder."""
import numpy as np
import pytest

from compiler import TypeInferenceError, relax, tir
from compiler.ir import IRError
from compiler.relax import op
from compiler.relax import script as R


def test_nested_calls_are_bound_first():
    x = relax.Var("x", R.Tensor((2, 3)))
    bb = relax.BlockBuilder()
    with bb.function("main", [x]):
        with bb.dataflow():
            lv = bb.emit(op.nn.relu(op.add(op.exp(x), x)))
            gv = bb.emit_output(lv)
        bb.emit_func_output(gv)
    f = bb.get()["main"]
    block, = f.body.blocks
    assert isinstance(block, relax.DataflowBlock)
    values = [b.value for b in block.bindings]
    assert [v.op.name for v in values[:3]] == ["relax.exp", "relax.add", "relax.nn.relu"]
    for b in block.bindings:
        for a in b.value.args if isinstance(b.value, relax.Call) else ():
            assert relax.expr.is_leaf(a)
    assert all(isinstance(b.var, relax.DataflowVar) for b in block.bindings[:3])
    assert type(block.bindings[3].var) is relax.Var
    assert f.attrs["global_symbol"] == "main"
    assert f.ret_struct_info.shape == (2, 3)


def test_struct_info_everywhere_and_symbolic_dims():
    n = tir.Var("n", "int64")
    x = relax.Var("x", R.Tensor((n, 4)))
    bb = relax.BlockBuilder()
    with bb.function("f", [x]):
        t = bb.emit(relax.Tuple([x, op.sum(x, axis=1)]))
        y = bb.emit(t[1])
        bb.emit_func_output([y, t[0]])
    f = bb.get()["f"]
    assert y.struct_info.shape[0] is n
    ret = f.ret_struct_info
    assert isinstance(ret, relax.TupleStructInfo) and ret.fields[1].shape == (n, 4)
    assert isinstance(f.struct_info, relax.FuncStructInfo)


def test_inference_errors_raise_at_emit():
    x = relax.Var("x", R.Tensor((1, 3, 8, 8)))
    w = relax.Var("w", R.Tensor((4, 2, 3, 3)))
    bb = relax.BlockBuilder()
    with pytest.raises(TypeInferenceError, match="data has 3 channels but weight expects 2"):
        with bb.function("main", [x, w]):
            bb.emit(op.nn.relu(op.nn.conv2d(x, w)))


def test_misuse_errors():
    x = relax.Var("x", R.Tensor((2,)))
    bb = relax.BlockBuilder()
    with pytest.raises(IRError, match="emit_output is only for dataflow blocks"):
        with bb.function("main", [x]):
            bb.emit_output(x)
    with pytest.raises(IRError, match="not visible outside its dataflow block"):
        with bb.function("main", [x]):
            with bb.dataflow():
                lv = bb.emit(op.exp(x))
            bb.emit_func_output(lv)
    with pytest.raises(IRError, match="without emit_func_output"):
        with bb.function("main", [x]):
            bb.emit(op.exp(x))
    with pytest.raises(IRError, match="emit outside a function"):
        bb.emit(op.exp(x))


def test_module_functions_and_calls():
    x = relax.Var("x", R.Tensor((3,)))
    bb = relax.BlockBuilder()
    with bb.function("double", [x], private=True):
        bb.emit_func_output(bb.emit(op.add(x, x)))
    gv = bb.get_global_var("double")
    y = relax.Var("y", R.Tensor((3,)))
    with bb.function("main", [y]):
        out = bb.emit(relax.Call(gv, [y]))
        bb.emit_func_output(out)
    mod = bb.get()
    assert set(mod.functions) == {"double", "main"}
    assert "global_symbol" not in mod["double"].attrs
    assert out.struct_info.shape == (3,)
    np.testing.assert_allclose(relax.interpreter.run(mod, np.arange(3, dtype="float32")),
                               [0, 2, 4])
    assert bb.add_func(mod["double"], "double").name_hint == "double1"


def test_if_branches_are_normalized_inside():
    c = relax.Var("c", R.Tensor((), "bool"))
    x = relax.Var("x", R.Tensor((2,)))
    bb = relax.BlockBuilder()
    with bb.function("main", [c, x]):
        out = bb.emit(relax.If(c, op.exp(op.negative(x)), x))
        bb.emit_func_output(out)
    f = bb.get()["main"]
    (binding,), = [b.bindings for b in f.body.blocks]
    tb = binding.value.true_branch
    assert len(tb.blocks[0].bindings) == 1 and isinstance(tb.body, relax.Call)
    assert out.struct_info.shape == (2,)
    mod = bb.get()
    a = np.array([1.0, 2.0], "float32")
    np.testing.assert_allclose(relax.interpreter.run(mod, np.array(True), a), np.exp(-a),
                               rtol=1e-6)
    np.testing.assert_allclose(relax.interpreter.run(mod, np.array(False), a), a)


def test_model_builder():
    mb = relax.ModelBuilder("main")
    x = mb.input("x", (2, 4))
    w = mb.weight("w", np.ones((3, 4), "float32"))
    y = mb.emit(op.nn.relu(op.linear(x, w, mb.const(np.full(3, -1.0, "float32")))))
    mod, params = mb.build(y)
    f = mod["main"]
    assert [p.name_hint for p in f.params] == ["x", "w"] and f.attrs["num_input"] == 1
    assert set(params) == {"w"}
    xs = np.arange(8, dtype="float32").reshape(2, 4) / 8
    np.testing.assert_allclose(relax.interpreter.run(mod, xs, params["w"]),
                               np.maximum(xs @ np.ones((4, 3)) - 1, 0), rtol=1e-6)
    with pytest.raises(IRError, match="used twice"):
        mb2 = relax.ModelBuilder()
        mb2.weight("a", np.ones(1))
        mb2.weight("a", np.ones(1))
