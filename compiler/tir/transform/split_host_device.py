"""split_host_device: move each GPU thread-bound loop nest into its own device kernel, as TVM's
tir.transform.SplitHostDevice.

Before: functions carry attr "target" (a Target; a device target has a `host`); a region of a
device function is a loop `For(kind=THREAD_BINDING, thread_binding=IterVar("blockIdx.x"))` and
everything under it (`s[C].bind(axis, te.thread_axis(...))` lowers to such loops):

    def add(A: Buffer(float32, [n]), B: ..., C: ...):                  # target: cuda, host llvm
      for i.outer in range((n + 63) // 64):  # thread_binding blockIdx.x
        for i.inner in range(64):  # thread_binding threadIdx.x
          C[...] = A[...] + B[...]

After: the region is a new PrimFunc `add_kernel` (`add_kernel_1`, ... for the next regions)
whose params are the region's free variables (buffer data handles first, then scalars; each
group sorted by name) and whose body is the region unchanged, with attrs "calling_conv":
"device_kernel", "target": the device target without its host, "global_symbol",
"tir.is_global_func": True, "tir.noalias", and "tir.kernel_launch_params": the launch tags
(blockIdx.x/y/z then threadIdx.x/y/z, those the region binds). The host function calls it in
place of the region and gets attr "target": the device target's host:

    def add(A, B, C):                                                    # target: llvm
      tir.call_packed("add_kernel", A, B, C, n, (n + 63) // 64, 64)

i.e. `call_packed(name, *params, *launch extents)`, an extent per launch tag in the order of
"tir.kernel_launch_params" (the first loop's extent when a tag is bound twice). Extents may be
symbolic. A function without thread-bound loops is returned as the same object.

The host function also gets attr "tir.device_type" (the device target's DLPack device type):
make_packed_api checks its tensor arguments against it and starts the function with
`__tvm_set_device(device_type, device_id)`. A host function of a device target must not touch
buffer memory itself (TVM's VerifyMemory): what it still loads or stores after the split ran
on no GPU thread, a ScheduleError asking "did you forget to bind?".

A thread-bound loop in a function whose target is a CPU kind ("llvm", "c") is a user mistake:
ScheduleError naming the loop, the thread tag and the fix.
"""
from __future__ import annotations

from typing import Dict, List, Tuple

from ...arith import can_prove
from ...ir.dtype import int32
from ...ir.errors import InternalError, ScheduleError, TargetError
from ...ir.module import IRModule
from ...target import Target
from ..expr import EQ, LE, BufferLoad, Call, PrimExpr, StringImm, Var
from ..function import PrimFunc
from ..functor import IRMutator, collect_vars, free_vars, post_order_visit
from ..stmt import BufferStore, Evaluate, For, ForKind, Stmt

# Thread tags that are launch dimensions, in launch order (grid, then block).
LAUNCH_TAGS = ("blockIdx.x", "blockIdx.y", "blockIdx.z",
               "threadIdx.x", "threadIdx.y", "threadIdx.z")


def split_host_device(mod: IRModule) -> IRModule:
    """Each function's thread-bound regions -> device kernels plus launches from the host;
    the same module comes back when no function has a thread-bound loop."""
    out: Dict[str, object] = {}
    kernels: Dict[str, PrimFunc] = {}
    changed = False
    for gname, func in mod.items():
        if not isinstance(func, PrimFunc) or not _bound_loops(func.body):
            if isinstance(func, PrimFunc) and func.attrs.get("calling_conv") != "device_kernel":
                _verify_host_memory(func, gname, func.body)
            out[gname] = func
            continue
        taken = set(mod) | set(kernels)
        host, new = _split(func, gname, taken)
        out[gname] = host
        kernels.update(new)
        changed = True
    if not changed:
        return mod
    out.update(kernels)
    return mod.with_functions(out)


def _bound_loops(stmt: Stmt) -> List[For]:
    """The thread-bound loops under `stmt`, in pre-order."""
    found: List[For] = []

    def fn(node):
        if isinstance(node, For) and node.kind == ForKind.THREAD_BINDING:
            found.append(node)

    post_order_visit(stmt, fn)
    found.reverse()  # post-order lists inner loops first; the outermost first is pre-order
    return found


def _tag(loop: For) -> str:
    if loop.thread_binding is None or not loop.thread_binding.thread_tag:
        raise InternalError(f"thread-bound loop '{loop.loop_var.name}' has no thread IterVar")
    return loop.thread_binding.thread_tag


def _func_target(func: PrimFunc, gname: str, loop: For) -> Target:
    target = func.attrs.get("target") or Target.current()
    if target is None:
        raise TargetError(f"function '{gname}' binds loop '{loop.loop_var.name}' to "
                          f"'{_tag(loop)}' but has no target: build it with target='cuda' (or "
                          "another GPU target)")
    target = Target(target)
    if target.kind.is_host:
        raise ScheduleError(
            f"loop '{loop.loop_var.name}' of function '{gname}' is bound to the GPU thread axis "
            f"'{_tag(loop)}', but target '{target.kind.name}' has no GPU threads: bind is for "
            "GPU targets; build with target='cuda' (or remove the bind)")
    return target


def _split(func: PrimFunc, gname: str, taken) -> Tuple[PrimFunc, Dict[str, PrimFunc]]:
    target = _func_target(func, gname, _bound_loops(func.body)[0])
    symbol = func.attrs.get("global_symbol", gname)
    splitter = _Splitter(func, symbol, target.without_host(), taken)
    body = splitter.visit(func.body)
    _verify_host_memory(func, gname, body)
    host = PrimFunc(func.params, body, func.buffer_map,
                    {**func.attrs, "tir.device_type": target.device_type})
    if target.host is not None:
        host = host.with_attr("target", target.host)
    return host, splitter.kernels


def _verify_host_memory(func: PrimFunc, gname: str, body: Stmt) -> None:
    """A device target's host code may not load or store buffer elements (TVM's
    VerifyMemory): such an access runs outside every GPU thread."""
    target = func.attrs.get("target")
    if target is None or Target(target).kind.is_host:
        return
    touched: List[str] = []

    def fn(node):
        if isinstance(node, (BufferLoad, BufferStore)) and node.buffer.name not in touched:
            touched.append(node.buffer.name)

    post_order_visit(body, fn)
    if touched:
        raise ScheduleError(
            f"memory verification failed for function '{gname}' on target "
            f"'{Target(target).kind.name}': buffer(s) {', '.join(repr(t) for t in touched)} "
            "are accessed by host code (outside every loop bound to a GPU thread axis). Did you "
            "forget to bind? Bind the outer loops of every stage to blockIdx/threadIdx "
            "(s[C].bind(axis, te.thread_axis('threadIdx.x'))), or compute the stage at a "
            "bound loop")


class _Splitter(IRMutator):
    """Replaces each outermost thread-bound loop by a launch of a new kernel."""

    def __init__(self, func: PrimFunc, symbol: str, device: Target, taken):
        self.func, self.symbol, self.device = func, symbol, device
        self.taken = set(taken)
        self.kernels: Dict[str, PrimFunc] = {}

    def visit_For(self, s: For):
        if s.kind != ForKind.THREAD_BINDING:
            return self.generic_visit(s)
        name = self._kernel_name()
        params = _kernel_params(s)
        tags, extents = _launch(s, params)
        attrs = {"calling_conv": "device_kernel", "target": self.device,
                 "global_symbol": name, "tir.is_global_func": True,
                 "tir.kernel_launch_params": tags}
        if "tir.noalias" in self.func.attrs:
            attrs["tir.noalias"] = self.func.attrs["tir.noalias"]
        self.kernels[name] = PrimFunc(tuple(params), s, (), attrs)
        launch = Call(int32, "tir.call_packed", (StringImm(name), *params, *extents))
        return Evaluate(launch)

    def _kernel_name(self) -> str:
        base = f"{self.symbol}_kernel"
        name, k = base, 0
        while name in self.taken:
            k += 1
            name = f"{base}_{k}"
        self.taken.add(name)
        return name


def _kernel_params(region: For) -> List[Var]:
    """The region's free variables: data handles first, then scalars; by name in each group."""
    return sorted(free_vars(region), key=lambda v: (not v.dtype.is_handle, v.name))


def _launch(region: For, params: List[Var]) -> Tuple[Tuple[str, ...], List[PrimExpr]]:
    """The launch tags bound in `region` (grid then block) and their extents, which the host
    must be able to compute (they use only the kernel's params)."""
    outside = {id(v) for v in params}
    extent: Dict[str, PrimExpr] = {}
    for loop in _bound_loops(region):
        tag = _tag(loop)
        if tag in LAUNCH_TAGS and tag not in extent:
            inner = [v.name for v in collect_vars(loop.extent) if id(v) not in outside]
            if inner:
                raise ScheduleError(
                    f"the extent {loop.extent} of loop '{loop.loop_var.name}' bound to '{tag}' "
                    f"depends on {', '.join(inner)}, defined inside the kernel: a launch "
                    "dimension must be known before the launch; bind a loop of fixed extent")
            extent[tag] = loop.extent
    tags = tuple(t for t in LAUNCH_TAGS if t in extent)
    return tags, [extent[t] for t in tags]


# ---- thread-bound loops inside a kernel (the device passes and codegens read them so) ---------
def launch_extents(body: Stmt) -> Dict[str, PrimExpr]:
    """Launch tag -> the extent of its first (pre-order) bound loop in a kernel body."""
    out: Dict[str, PrimExpr] = {}

    def visit(node):
        if isinstance(node, For) and node.kind == ForKind.THREAD_BINDING:
            tag = node.thread_binding.thread_tag
            if tag in LAUNCH_TAGS:
                found.append((tag, node.extent))

    found: List[Tuple[str, PrimExpr]] = []
    post_order_visit(body, visit)
    for tag, extent in reversed(found):  # post-order lists inner loops first
        out.setdefault(tag, extent)
    return out


def loop_form(loop: For, launch: Dict[str, PrimExpr]) -> str:
    """How a thread-bound loop prints: "index" (the hardware index as it is), "guard" (the index
    when below the loop's extent), "stride" (a loop striding by the launch extent) or "serial"
    (a virtual thread)."""
    tag = loop.thread_binding.thread_tag
    if tag not in LAUNCH_TAGS:
        return "serial"
    full = launch[tag]
    if loop.extent is full or can_prove(EQ(loop.extent, full)):
        return "index"
    if can_prove(LE(loop.extent, full)):
        return "guard"
    return "stride"
