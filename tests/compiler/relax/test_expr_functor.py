"""ExprVisitor / ExprMutator: dispatch by node kind, untouched subtrees kept as the same object,
variables renamed when a rewrite changes their struct info, emit() of extra bindings."""
import numpy as np

from compiler import relax
from compiler.relax import interpreter, op
from compiler.relax import script as R


def model():
    x = relax.Var("x", R.Tensor((2, 3)))
    bb = relax.BlockBuilder()
    with bb.function("main", [x]):
        with bb.dataflow():
            a = bb.emit(op.nn.relu(x))
            b = bb.emit(op.sum(a, axis=1))
            gv = bb.emit_output(op.exp(b))
        bb.emit_func_output(gv)
    return bb.get()


def test_visitor_counts_calls():
    seen = []

    class Calls(relax.ExprVisitor):
        def visit_call_(self, call):
            seen.append(call.op.name)
            super().visit_call_(call)

    Calls().visit_expr(model()["main"])
    assert seen == ["relax.nn.relu", "relax.sum", "relax.exp"]
    kinds = []
    relax.post_order_visit(model()["main"], lambda e: kinds.append(type(e).__name__))
    assert kinds[-1] == "Function" and "Call" in kinds


def test_identity_mutator_returns_same_object():
    f = model()["main"]
    assert relax.ExprMutator().visit_expr(f) is f


def test_rewrite_keeps_untouched_and_renames_changed():
    f = model()["main"]

    class ReluToSigmoid(relax.ExprMutator):
        def visit_call_(self, call):
            call = super().visit_call_(call)
            if call.op.name == "relax.nn.relu":
                return op.sigmoid(call.args[0])
            return call

    g = ReluToSigmoid().visit_expr(f)
    assert g is not f
    old, new = f.body.blocks[0].bindings, g.body.blocks[0].bindings
    assert new[0].value.op.name == "relax.sigmoid"
    assert new[0].var is old[0].var  # same struct info: same variable
    assert new[1] is old[1]
    x = np.random.default_rng(0).standard_normal((2, 3)).astype("float32")
    np.testing.assert_allclose(interpreter.run(g, x), np.exp((1 / (1 + np.exp(-x))).sum(1)),
                               rtol=1e-5)


def test_struct_info_change_makes_new_var_and_emit_adds_bindings():
    f = model()["main"]

    class SumKeepdims(relax.ExprMutator):
        def visit_var_binding_(self, b):
            if isinstance(b.value, relax.Call) and b.value.op.name == "relax.sum":
                arg = self.visit_expr(b.value.args[0])
                kept = self.emit(op.sum(arg, axis=1, keepdims=True))
                value = op.multiply(kept, relax.const(2.0, "float32"))
                var = self._redefine(b.var, value.struct_info)
                self._append(relax.VarBinding(var, value))
                return
            super().visit_var_binding_(b)

    g = SumKeepdims().visit_expr(f)
    bindings = g.body.blocks[0].bindings
    assert len(bindings) == 4
    assert bindings[2].var is not f.body.blocks[0].bindings[1].var
    assert bindings[2].var.struct_info.shape == (2, 1)
    assert bindings[3].value.args[0] is bindings[2].var  # later uses renamed
    assert g.ret_struct_info.shape == (2, 1)
    x = np.ones((2, 3), "float32")
    np.testing.assert_allclose(interpreter.run(g, x), np.full((2, 1), np.exp(6.0)), rtol=1e-6)
