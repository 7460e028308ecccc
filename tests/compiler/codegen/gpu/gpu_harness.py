"""Running Kiln's GPU kernels in tests without the microruntime's GPU side:

- `run_opencl(s, args, arrays, scalars)`: builds for target "opencl", then plays the host
  function's part: evaluates each kernel launch of the host code (split_host_device's
  `tir.call_packed(name, *params, *extents)`) with the shapes of `arrays`, and runs the kernels
  of the generated OpenCL C through pyopencl (PoCL here). Returns the arrays after the run.
- `ptx_of(s, args)`: the CUDA source of a build compiled to PTX by nvcc.
- `metal_source(s, args)`: the Metal source of a build.
Skips (pytest.skip) with a reason when pyopencl or an OpenCL device, or nvcc, is missing.
"""
from __future__ import annotations

from typing import Dict, List, Optional

import numpy as np
import pytest

import compiler
from compiler.arith import simplify
from compiler.ir.module import IRModule
from compiler.target import Target
from compiler.tir import expr as E
from compiler.tir import stmt as S
from compiler.tir.functor import substitute
from compiler.tir.transform.split_host_device import split_host_device

_NP = {(0, 8): np.int8, (0, 16): np.int16, (0, 32): np.int32, (0, 64): np.int64,
       (1, 8): np.uint8, (1, 32): np.uint32, (2, 32): np.float32, (2, 64): np.float64}


def opencl_context():
    """(context, queue) on the first OpenCL device, or pytest.skip."""
    try:
        import pyopencl as cl
    except ImportError:
        pytest.skip("pyopencl is not installed")
    try:
        platforms = cl.get_platforms()
        devices = [d for p in platforms for d in p.get_devices()]
    except cl.Error as err:
        pytest.skip(f"no OpenCL platform: {err}")
    if not devices:
        pytest.skip("no OpenCL device")
    ctx = cl.Context([devices[0]])
    return ctx, cl.CommandQueue(ctx)


def build(s, args, target: str, name: str = "kern"):
    return compiler.build(s, args, target=target, target_host="c", name=name)


def _launches(s, args, target: str, name: str):
    """(host PrimFunc, [(kernel name, args, extents)], allocations) of the split host code."""
    mod = compiler.lower(s, args, name=name)
    mod = IRModule({g: f.with_attr("target", Target(target, host="c")) for g, f in mod.items()})
    host = split_host_device(mod)[name]
    launches: List = []
    allocs: List[S.Allocate] = []
    stmt = host.body
    todo = [stmt]
    while todo:
        st = todo.pop(0)
        if isinstance(st, S.SeqStmt):
            todo[:0] = list(st.seq)
        elif isinstance(st, S.Allocate):
            allocs.append(st)
            todo.insert(0, st.body)
        elif isinstance(st, S.Evaluate) and isinstance(st.value, E.Call) and \
                st.value.op == "tir.call_packed":
            launches.append(st.value)
        elif isinstance(st, (S.AttrStmt, S.LetStmt)):
            todo.insert(0, st.body)
        else:
            raise AssertionError(f"the harness cannot play host statement {type(st).__name__}")
    return host, launches, allocs


def run_opencl(s, args, arrays: List[np.ndarray], scalars: Optional[Dict] = None,
               name: str = "kern") -> List[np.ndarray]:
    """Runs the schedule on OpenCL (see the module doc); `arrays` are the tensor arguments in
    `args` order, `scalars` maps scalar Vars of `args` to values."""
    ctx, queue = opencl_context()       # skips first where pyopencl or a device is missing
    import pyopencl as cl
    mod = build(s, args, "opencl", name)
    dev = mod.imported_modules[0]
    program = cl.Program(ctx, dev.get_source()).build()
    host, launches, allocs = _launches(s, args, "opencl", name)
    env: Dict[int, object] = {}
    values: Dict[E.Var, E.PrimExpr] = {}
    buffers = {}
    tensors = iter(arrays)
    mf = cl.mem_flags
    for p in host.params:
        buf = host.buffer_of(p)
        if buf is None:
            values[p] = E.const(scalars[p], p.dtype)
            continue
        arr = np.ascontiguousarray(next(tensors))
        for dim, extent in zip(buf.shape, arr.shape):
            if isinstance(dim, E.Var):
                values[dim] = E.const(extent, dim.dtype)
        buffers[id(buf.data)] = (cl.Buffer(ctx, mf.READ_WRITE | mf.COPY_HOST_PTR, hostbuf=arr),
                                 arr)
    for alloc in allocs:
        n = int(simplify(substitute(_size(alloc), values)).value)
        nbytes = max(n * alloc.buffer.dtype.bytes, 4)
        buffers[id(alloc.buffer.data)] = (cl.Buffer(ctx, mf.READ_WRITE, size=nbytes), None)
    infos = {i.name: i for i in dev.function_infos}
    for call in launches:
        kname = call.args[0].value
        info = infos[kname]
        nargs = len(info.arg_types)
        kargs = []
        for a, t in zip(call.args[1:1 + nargs], info.arg_types):
            if t == (3, 64, 1):
                kargs.append(buffers[id(a)][0])
            else:
                v = simplify(substitute(a, values))
                kargs.append(_NP[(t[0], t[1])](v.value))
        extents = [int(simplify(substitute(x, values)).value) for x in call.args[1 + nargs:]]
        grid, block = [1, 1, 1], [1, 1, 1]
        for tag, ext in zip(info.launch_param_tags, extents):
            (grid if tag.startswith("blockIdx") else block)["xyz".index(tag[-1])] = ext
        kernel = getattr(program, kname)
        kernel(queue, tuple(g * b for g, b in zip(grid, block)), tuple(block), *kargs)
    out = []
    for buf, arr in buffers.values():
        if arr is not None:
            cl.enqueue_copy(queue, arr, buf)
            out.append(arr)
    queue.finish()
    del env
    return out


def _size(alloc: S.Allocate):
    size = E.const(1)
    for e in alloc.buffer.shape:
        size = size * e
    return size


def ptx_of(s, args, name: str = "kern") -> str:
    """The build's CUDA code compiled to PTX (skips without nvcc)."""
    from compiler.contrib import nvcc

    if nvcc.find_nvcc() is None:
        pytest.skip("nvcc is not installed")
    dev = build(s, args, "cuda", name).imported_modules[0]
    assert dev.fmt == "ptx"
    return dev.get_source("ptx")


def metal_source(s, args, name: str = "kern") -> str:
    return build(s, args, "metal", name).imported_modules[0].get_source()
