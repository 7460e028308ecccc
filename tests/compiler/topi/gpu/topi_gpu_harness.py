"""Helpers of the GPU schedule tests: lower a schedule and check every store runs on a GPU
thread, and build it for OpenCL (host llvm) and run it on PoCL, skipping with the reason when
OpenCL code generation or an OpenCL device is missing."""
import numpy as np
import pytest

import compiler
import microruntime
from compiler.ir.errors import TargetError
from compiler.target import Target
from compiler.tir.functor import IRVisitor
from compiler.tir.stmt import ForKind


def unbound_stores(func):
    """Names of the buffers stored outside every blockIdx-bound loop of `func`."""
    found = []

    class V(IRVisitor):
        depth = 0

        def visit_For(self, loop):
            bound = loop.kind == ForKind.THREAD_BINDING and \
                loop.thread_binding.thread_tag.startswith("blockIdx")
            V.depth += bound
            self.generic_visit(loop)
            V.depth -= bound

        def visit_BufferStore(self, s):
            if V.depth == 0:
                found.append(s.buffer.name)
            self.generic_visit(s)

    V().visit(func.body)
    return found


def lower_bound(s, args, name="f"):
    """`s` lowered; asserts every store is under a blockIdx loop. Returns the PrimFunc."""
    func = compiler.lower(s, args, name=name)[name]
    assert unbound_stores(func) == [], str(func)
    return func


def opencl_run(s, args, arrays, name="f"):
    """Build `s` for opencl (host llvm), run it on the OpenCL device with `arrays` (inputs, then
    outputs as zero arrays) and return the outputs as numpy arrays."""
    if not microruntime.enabled("opencl"):
        pytest.skip("no OpenCL device (microruntime.enabled('opencl') is False)")
    try:
        mod = compiler.build(s, args, target=Target("opencl", host="llvm"), name=name)
    except TargetError as err:
        if "not implemented" in str(err):
            pytest.skip(f"OpenCL code generation is not available: {err}")
        raise
    dev = microruntime.opencl(0)
    nd = [microruntime.nd.array(a, dev) for a in arrays]
    mod[name](*nd)
    dev.sync()
    n_in = len(arrays) - sum(1 for a in args if a.op.__class__.__name__ != "PlaceholderOp")
    return [np.asarray(x.numpy()) for x in nd[n_in:]]
