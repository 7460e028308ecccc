"""lower_parallel keeps a parallel loop too small to pay for a launch on the calling thread: a
serial loop when its work is known at compile time, a launch of one task when its extent is only
known at run time and small; loops whose work it cannot estimate launch as before."""
import numpy as np

import compiler
from compiler.build import host_passes
from compiler.ir import IRModule
from compiler.ir.dtype import handle
from compiler.target import Target
from compiler.tir import (
    AttrStmt,
    Broadcast,
    BufferLoad,
    BufferStore,
    Evaluate,
    For,
    ForKind,
    IntImm,
    PrimFunc,
    Ramp,
    Select,
    SeqStmt,
    SizeVar,
    Var,
    While,
    const,
    decl_buffer,
    post_order_visit,
)
from compiler.tir.op import call_extern
from compiler.tir.transform.lower_parallel import PARALLEL_LAUNCH, PARALLEL_MIN_WORK, stmt_work


def lowered(body_of, extent):
    """The host passes' result for a PARALLEL loop over `extent` (an int, or a SizeVar n: the
    loop then runs over n // 4) whose body is body_of(i, A, C), A and C of 4 * extent (or n)
    floats."""
    size = extent if not isinstance(extent, int) else const(extent * 4)
    A, C = decl_buffer((size,), "float32", "A"), decl_buffer((size,), "float32", "C")
    pa, pc = Var("A", handle), Var("C", handle)
    i = Var("i")
    loops = size // 4 if not isinstance(extent, int) else const(extent)
    body = For(i, const(0), loops, ForKind.PARALLEL, body_of(i, A, C))
    func = PrimFunc((pa, pc), body, ((pa, A), (pc, C)), {"global_symbol": "f"})
    return host_passes(IRModule({"f": func}), Target("llvm"))


def add_one(i, A, C):
    idx = Ramp(i * 4, const(1), 4)
    return BufferStore(C, A[idx] + Broadcast(const(1.0), 4), (idx,))


def launches(mod):
    found, loops = [], []

    def visit(node):
        if isinstance(node, AttrStmt) and node.key == PARALLEL_LAUNCH:
            found.append(node)
        elif isinstance(node, For):
            loops.append(node.kind)

    post_order_visit(mod["f"].body, visit)
    return found, loops


def test_small_constant_loop_stays_serial():
    found, loops = launches(lowered(add_one, PARALLEL_MIN_WORK // 4 - 1))
    assert found == [] and loops == [ForKind.SERIAL]


def test_large_constant_loop_launches_on_all_workers():
    found, loops = launches(lowered(add_one, PARALLEL_MIN_WORK // 4))
    assert len(found) == 1 and isinstance(found[0].value, IntImm) and found[0].value.value == 0
    assert ForKind.PARALLEL not in loops


def test_symbolic_extent_decides_at_run_time():
    n = SizeVar("n", "int32")
    found, _ = launches(lowered(add_one, n))
    assert len(found) == 1
    value = found[0].value
    assert isinstance(value, Select)
    # one store of 4 lanes per iteration: one task while n // 4 < PARALLEL_MIN_WORK / 4
    assert not isinstance(value.condition.a, IntImm)
    assert value.condition.b.value == PARALLEL_MIN_WORK // 4
    assert (value.true_value.value, value.false_value.value) == (1, 0)


def test_unknown_work_launches_as_before():
    def with_call(i, A, C):
        return SeqStmt((Evaluate(call_extern("int32", "abort_if", i)), add_one(i, A, C)))

    found, _ = launches(lowered(with_call, 8))
    assert len(found) == 1 and found[0].value.value == 0


def test_stmt_work():
    A = decl_buffer((64,), "float32", "A")
    i, j = Var("i"), Var("j")
    store = BufferStore(A, BufferLoad(A, (i,)) + 1.0, (i,))
    assert stmt_work(store) == 1
    assert stmt_work(For(j, const(0), const(16), ForKind.SERIAL, store)) == 16
    assert stmt_work(SeqStmt((store, store))) == 2
    assert stmt_work(For(j, const(0), SizeVar("m", "int32"), ForKind.SERIAL, store)) is None
    assert stmt_work(While(i < 3, store)) is None


def test_small_and_large_calls_compute_the_same(target):
    """The run-time choice gives the same results on either side of the threshold."""
    import microruntime

    n = compiler.te.var("n")
    A = compiler.te.placeholder((n,), name="A")
    C = compiler.te.compute((n,), lambda k: A[k] * 2.0 + 1.0, name="C")
    s = compiler.te.create_schedule(C.op)
    outer, _ = s[C].split(C.op.axis[0], factor=4)
    s[C].parallel(outer)
    f = compiler.build(s, [A, C], target=target, name="scale")["scale"]
    for size in (5, 4 * PARALLEL_MIN_WORK + 3):
        a = np.random.default_rng(size).random(size, dtype="float32")
        c = microruntime.nd.array(np.zeros(size, "float32"))
        f(microruntime.nd.array(a), c)
        np.testing.assert_allclose(c.numpy(), a * 2 + 1, rtol=1e-6)
