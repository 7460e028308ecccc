"""Visitors and mutators see through `a == b` / `a != b` (EqualOp / NotEqualOp) objects."""
from compiler.tir import AssertStmt, Evaluate, IfThenElse, IRMutator, Var, const
from compiler.tir.functor import free_vars, substitute


def test_free_vars_of_python_comparisons():
    x, y = Var("x", "int32"), Var("y", "int32")
    s = AssertStmt(x == 0, "ValueError", ("x",), IfThenElse(y != 1, Evaluate(const(0))))
    assert free_vars(s) == [x, y]


def test_mutator_rewrites_inside_comparisons_and_keeps_unchanged_ones():
    x, y = Var("x", "int32"), Var("y", "int32")
    s = IfThenElse(x == 0, Evaluate(const(0)))
    assert IRMutator().visit(s) is s
    out = substitute(s, {x: y})
    assert free_vars(out) == [y]


def test_seq_stmt_from_a_list_is_walked_and_rewritten():
    from compiler import tir
    from compiler.tir.stmt_functor import post_order_visit, substitute
    x = tir.Var("x", "int32")
    body = tir.SeqStmt([tir.Evaluate(x + 1), tir.Evaluate(x * 2)])   # a list, as TVM takes
    seen = []
    post_order_visit(body, lambda n: seen.append(type(n).__name__))
    assert seen.count("Evaluate") == 2
    replaced = substitute(body, {x: tir.const(3, "int32")})
    assert [str(s.value) for s in replaced.seq] == ["3 + 1", "3 * 2"]
