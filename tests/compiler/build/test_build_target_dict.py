"""build({target: IRModule}) lowers each module first (as build of an IRModule does): a
PrimFunc over 2-d buffers builds and computes; a module already lowered builds as it is."""
import numpy as np

import compiler
import microruntime
from compiler.script import tir as T


def _scale_2d():
    @T.prim_func
    def scale2d(A: T.Buffer((4, 6), "float32"), B: T.Buffer((4, 6), "float32")) -> None:
        T.func_attr({"global_symbol": "scale2d", "tir.noalias": True})
        for i, j in T.grid(4, 6):
            B[i, j] = A[i, j] * 2.0 + 1.0
    return scale2d


def test_unlowered_module_in_a_target_dict(target):
    mod = compiler.ir.IRModule({"scale2d": _scale_2d()})
    built = compiler.build({target: mod})
    a = np.random.rand(4, 6).astype("float32")
    b = microruntime.nd.empty((4, 6), "float32")
    built["scale2d"](microruntime.nd.array(a), b)
    np.testing.assert_allclose(b.numpy(), a * 2 + 1, rtol=1e-6)


def test_lowered_module_in_a_target_dict(target):
    lowered = compiler.lower(compiler.ir.IRModule({"scale2d": _scale_2d()}))
    built = compiler.build({target: lowered})
    a = np.random.rand(4, 6).astype("float32")
    b = microruntime.nd.empty((4, 6), "float32")
    built["scale2d"](microruntime.nd.array(a), b)
    np.testing.assert_allclose(b.numpy(), a * 2 + 1, rtol=1e-6)
