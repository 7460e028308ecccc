"""Blocks lowered to loop IR: lower_init_block, convert_blocks_to_opaque and lower_opaque_block
each stated as IR before and after, a hand-written block function built for llvm and c, and
the TVMScript block mistakes that are named."""
import numpy as np
import pytest

import compiler
import microruntime
from compiler.ir.module import IRModule
from compiler.ir.structural_equal import assert_structural_equal
from compiler.script import tir as T
from compiler.script.frames import ScriptError
from compiler.tir import Block, BlockRealize
from compiler.tir.functor import post_order_visit
from compiler.tir.transform.convert_blocks_to_opaque import convert_blocks_to_opaque
from compiler.tir.transform.lower_init_block import lower_init_block
from compiler.tir.transform.lower_opaque_block import lower_opaque_block


@T.prim_func
def _row_sum(A: T.Buffer((4, 8), "float32"), B: T.Buffer((4,), "float32")) -> None:
    for i0, k0 in T.grid(4, 8):
        with T.block("B"):
            i, k = T.axis.remap("SR", [i0, k0])
            with T.init():
                B[i] = 0.0
            B[i] = B[i] + A[i, k]


def _blocks(func):
    found = []
    post_order_visit(func.body, lambda n: found.append(n) if isinstance(n, Block) else None)
    return found


def _block(func, name):
    return next(b for b in _blocks(func) if b.name_hint == name)


def test_lower_init_block_guards_the_init_by_the_first_reduction_iteration():
    after = lower_init_block(IRModule({"main": _row_sum}))["main"]

    @T.prim_func
    def expected(A: T.Buffer((4, 8), "float32"), B: T.Buffer((4,), "float32")) -> None:
        for i0, k0 in T.grid(4, 8):
            with T.block("B"):
                i, k = T.axis.remap("SR", [i0, k0])
                T.reads(A[i, k], B[i])
                T.writes(B[i])
                if k == 0:
                    B[i] = 0.0
                B[i] = B[i] + A[i, k]

    blk = _block(after, "B")
    assert blk.init is None
    # the regions were found before the init became part of the body: B is not read there
    assert [r.buffer.name for r in blk.reads] == ["A"]
    assert_structural_equal(blk.body, _block(expected, "B").body, map_free_vars=True)


def test_convert_and_lower_give_plain_loops():
    mod = convert_blocks_to_opaque(lower_init_block(IRModule({"main": _row_sum})))
    assert all(not b.iter_vars for b in _blocks(mod["main"]))
    lowered = lower_opaque_block(mod)["main"]
    assert not _blocks(lowered)

    @T.prim_func
    def expected(A: T.Buffer((4, 8), "float32"), B: T.Buffer((4,), "float32")) -> None:
        for i0 in range(4):
            for k0 in range(8):
                if k0 == 0:
                    B[i0] = T.float32(0)
                B[i0] = B[i0] + A[i0, k0]

    assert_structural_equal(lowered.body, expected.body, map_free_vars=True)


@T.prim_func
def _guarded_scale(A: T.Buffer((10,), "float32"), C: T.Buffer((10,), "float32")) -> None:
    for io, ii in T.grid(3, 4):
        with T.block("outer"):
            vi = T.axis.spatial(10, io * 4 + ii)
            T.where(io * 4 + ii < 10)
            T.reads(A[vi])
            T.writes(C[vi])
            tmp = T.alloc_buffer((1,))
            with T.block("inner"):
                tmp[0] = A[vi] * 3.0
            C[vi] = tmp[0] + 1.0


@pytest.mark.parametrize("target", ["llvm", "c"])
def test_predicate_and_block_allocation_run(target):
    inner = _block(_guarded_scale, "inner")
    assert [r.buffer.name for r in inner.writes] == ["tmp"]
    f = compiler.build(_guarded_scale, target=target)
    a = np.random.default_rng(0).random(10, dtype="float32")
    c = microruntime.nd.array(np.zeros(10, "float32"))
    f(microruntime.nd.array(a), c)
    np.testing.assert_allclose(c.numpy(), a * 3 + 1, rtol=1e-6)


def test_block_realize_checks_its_bindings():
    blk = _block(_row_sum, "B")
    with pytest.raises(Exception, match="2 iteration variables but is realized with 1"):
        BlockRealize((0,), True, blk)


def test_block_statements_outside_a_block_are_named():
    with pytest.raises(ScriptError, match="T.reads is only allowed inside a T.block"):
        @T.prim_func
        def f(A: T.Buffer((4,), "float32")) -> None:
            T.reads(A[0])
            A[0] = 1.0

    with pytest.raises(ScriptError, match="not the variable of an enclosing loop"):
        @T.prim_func
        def g(A: T.Buffer((4,), "float32")) -> None:
            n = T.int32()
            with T.block("b"):
                i = T.axis.remap("S", [n])
                A[i] = 1.0


def test_data_pointer_use_needs_explicit_regions():
    with pytest.raises(ScriptError, match="give them with T.reads"):
        @T.prim_func
        def f(A: T.Buffer((4,), "float32")) -> None:
            with T.block("b"):
                T.evaluate(T.call_extern("int32", "g", A.data))
