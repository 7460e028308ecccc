"""A packed function of many tensor arguments nests its argument checks (LetStmt / AssertStmt)
thousands deep: every traversal of the IR walks such chains in a loop, so none of them is
bounded by Python's recursion limit (run at its default here)."""
import sys

from compiler.arith import simplify
from compiler.ir import IRModule
from compiler.target import Target
from compiler.tir import (
    BufferLoad,
    BufferStore,
    IRMutator,
    IRVisitor,
    PrimFunc,
    Var,
    const,
    decl_buffer,
    post_order_visit,
    substitute,
)
from compiler.tir import stmt as S
from compiler.tir.functor import free_vars
from compiler.tir.printer import to_text
from compiler.tir.transform.common import freshen
from compiler.tir.transform.lower_call_packed import lower_call_packed
from compiler.tir.transform.make_packed_api import make_packed_api
from compiler.tir.verifier import verify

ARGS = 150   # about 20 nested checks each: some 3000 levels


def _packed():
    n = Var("n", "int32")   # a symbolic dimension: the checks written out, not a table
    bufs = [decl_buffer((2, 3, 4, n), "float32", name=f"A{i}") for i in range(ARGS)]
    zero = (const(0),) * 4
    body = BufferStore(bufs[-1], BufferLoad(bufs[0], zero), zero)
    params = tuple(Var(f"a{i}", "handle") for i in range(ARGS))
    f = PrimFunc(params, body, tuple(zip(params, bufs)),
                 {"global_symbol": "wide", "target": Target("llvm")})
    return make_packed_api(IRModule({"wide": f}))["wide"]


def _depth(s):
    n = 0
    while isinstance(s, (S.LetStmt, S.AssertStmt)):
        n, s = n + 1, s.body
    return n


def test_traversals_of_a_deep_argument_chain():
    assert sys.getrecursionlimit() <= 1000 + 100
    f = _packed()
    assert _depth(f.body) > 2 * sys.getrecursionlimit()
    verify(f)
    assert "A149.handle" in to_text(f)
    assert IRMutator().visit(f.body) is f.body             # unchanged: the same object
    IRVisitor().visit(f.body)
    seen = []
    post_order_visit(f.body, lambda n: seen.append(n)
                     if isinstance(n, (S.LetStmt, S.AssertStmt)) else None)
    assert len(seen) > ARGS and seen[-1] is f.body         # children first: the outermost last
    assert free_vars(f.body, list(f.params)) == []
    assert _depth(freshen(f.body)) == _depth(f.body)
    x = f.params[2]
    assert substitute(f.body, {x: Var("n", "int32")}) is not f.body
    simplified = simplify(f)
    verify(simplified)
    assert _depth(simplified.body) > ARGS
    lowered = lower_call_packed(IRModule({"wide": f}))
    verify(lowered)
