"""The GPU kernel printer: what CUDA, OpenCL and Metal share over the C-family printer
(cuda.py, opencl.py and metal.py override the hooks marked "dialect").

Input: a device kernel of split_host_device after the device passes (compiler/tir/pipeline.py
`device_passes`): a PrimFunc with attrs "calling_conv" = "device_kernel" and
"tir.kernel_launch_params", whose params are buffer data handles and scalars, whose body holds
the thread-bound loops, 1-D buffer accesses, Allocates ("shared" or "local") and barriers
(`tir.storage_sync`).

- A loop bound to a launch tag (blockIdx.*, threadIdx.*) is the hardware index, not a loop. The
  first such loop of a tag (pre-order) fixes the launch extent (`launch_extents`, as
  split_host_device). A later loop of the same tag reads the same index: as it is when its
  extent is provably the launch extent, guarded by `if (i < extent)` when provably smaller, and
  otherwise a loop striding by the launch extent (`for (i = idx; i < extent; i += launch)`).
- A loop bound to a virtual thread (vthread, cthread) is a serial loop.
- "shared" allocations are declared once at the top of the kernel (OpenCL and Metal require
  it), in the dialect's address space; "local" ones are arrays where they are allocated.
- Buffer indices stay in their own (32-bit) arithmetic; there is no GCC vector form: vector
  statements print in the lane form (a loop over lanes).
- float16 / bfloat16 elements are loaded into and computed in float (dialect conversions).
"""
from __future__ import annotations

from typing import List, Optional, Tuple

from ...ir.dtype import DType
from ...ir.errors import InternalError, UnsupportedOpError
from ...tir import expr as E
from ...tir import stmt as S
from ...tir.transform.split_host_device import launch_extents, loop_form
from .printer import CFamilyPrinter
from .printer_expr import NotVectorForm

_AXIS = {"x": 0, "y": 1, "z": 2}


class GPUPrinter(CFamilyPrinter):
    """Prints one kernel's body; dialects give types, qualifiers, indices and barriers."""

    restrict = ""
    shared_qualifier = ""   # dialect: address space of "shared" arrays
    helper_qualifier = "inline"  # dialect: how prelude helpers are declared

    def __init__(self, kernel) -> None:
        super().__init__(16)
        self.kernel = kernel
        self.launch = launch_extents(kernel.body)
        self.shared: List[str] = []  # declarations hoisted to the top of the kernel

    # ---- kernel ------------------------------------------------------------------------------
    def print_kernel(self) -> None:
        """Fills `self.lines` with the body (shared declarations first)."""
        self.error_frees = []
        self.prepare(self.kernel.body)
        self.stmt(self.kernel.body)
        if self.shared:
            self.lines[:0] = [self.indent_unit * self.level + d for d in self.shared]

    def param_decl(self, var: E.Var, index: int) -> str:
        """The declaration of kernel parameter `var` (dialect)."""
        return f"{self.param_type(var)} {self.name_of(var)}"

    def param_type(self, var: E.Var) -> str:
        if var.dtype.is_handle:
            elem = self.pointer_types.get(id(var))
            base = self.storage_type(elem) if elem is not None else "void"
            return f"{self.global_qualifier}{base}*{self.param_restrict}"
        return self.value_type(var.dtype)

    global_qualifier = ""   # dialect: address space of buffer parameters
    param_restrict = ""     # dialect: restrict qualifier of buffer parameters

    def block_threads(self) -> Optional[int]:
        """The number of threads of a block when it is a constant."""
        count = 1
        for tag in ("threadIdx.x", "threadIdx.y", "threadIdx.z"):
            extent = self.launch.get(tag)
            if extent is None:
                continue
            if not isinstance(extent, E.IntImm):
                return None
            count *= extent.value
        return count

    # ---- names and types ---------------------------------------------------------------------
    def expr_Var(self, e: E.Var) -> str:
        name = self.name_of(e)
        if id(e) in self.vector_vars:
            return f"{name}[{self.lane}]" if self.lane else name
        return name

    expr_SizeVar = expr_Var

    def vector_type(self, t: DType) -> str:
        raise NotVectorForm(str(t))

    def thread_index(self, tag: str) -> str:
        """The expression of a launch tag's hardware index, an int (dialect)."""
        raise NotImplementedError

    # ---- statements --------------------------------------------------------------------------
    def stmt_For(self, s: S.For) -> None:
        if s.kind == S.ForKind.PARALLEL:
            raise UnsupportedOpError(f"loop {s.loop_var.name} is parallel inside a GPU kernel; "
                                     "bind it to a thread axis instead")
        if s.kind != S.ForKind.THREAD_BINDING:
            if s.kind == S.ForKind.UNROLLED and isinstance(s.extent, E.IntImm):
                self.emit(self.unroll_pragma(s.extent.value))
            self.serial_loop(s.loop_var, s.min, s.extent, s.body)
            return
        form = loop_form(s, self.launch)
        if form == "serial":
            self.serial_loop(s.loop_var, s.min, s.extent, s.body)
            return
        tag = s.thread_binding.thread_tag
        name = self.name_of(s.loop_var)
        ctype = self.value_type(s.loop_var.dtype)
        index = self.thread_index(tag)
        if form == "stride":
            step = self.expr(self.launch[tag])
            self.emit(f"for ({ctype} {name} = {index}; {name} < {self.expr(s.extent)}; "
                      f"{name} += {step}) {{")
            self.block(s.body)
            self.emit("}")
            return
        self.emit(f"{ctype} {name} = {index};")  # names are unique: no block needed
        if form == "guard":
            self.emit(f"if ({name} < {self.expr(s.extent)}) {{")
            self.block(s.body)
            self.emit("}")
        else:
            self.stmt(s.body)

    def unroll_pragma(self, n: int) -> str:
        return f"#pragma unroll {n}"

    def stmt_Allocate(self, s: S.Allocate) -> None:
        buf = s.buffer
        scope = buf.scope or "global"
        size = 1
        for extent in buf.shape:
            if not isinstance(extent, E.IntImm):
                raise UnsupportedOpError(
                    f"allocation '{buf.name}' ({scope}) inside a GPU kernel has the "
                    f"non-constant size {extent}; a kernel's arrays need constant sizes "
                    "(split by a constant factor, or compute the stage at the root)")
            size *= extent.value
        self.pointer_types[id(buf.data)] = buf.dtype.element_of()
        decl = f"{self.storage_type(buf.dtype)} {self.name_of(buf.data)}[{size}];"
        if scope == "shared":
            self.shared.append(f"{self.shared_qualifier}{decl}")
        elif scope in ("local", "warp"):
            self.emit(decl)
        else:
            raise UnsupportedOpError(
                f"allocation '{buf.name}' in scope '{scope}' inside a GPU kernel; intermediate "
                "tensors of a kernel live in 'shared' or 'local' memory (cache_read/cache_write "
                "with compute_at), or are computed at the root in their own kernel")
        self.stmt(s.body)

    def stmt_Evaluate(self, s: S.Evaluate) -> None:
        if isinstance(s.value, E.Call) and s.value.op == "tir.storage_sync":
            scope = s.value.args[0]
            self.emit(self.barrier(getattr(scope, "value", "shared")))
            return
        super().stmt_Evaluate(s)

    def barrier(self, scope: str) -> str:
        """The barrier statement over `scope` memory (dialect)."""
        raise NotImplementedError

    def stmt_AssertStmt(self, s: S.AssertStmt) -> None:
        raise UnsupportedOpError("an assertion inside a GPU kernel cannot report an error")

    # ---- expressions -------------------------------------------------------------------------
    def expr_Min(self, e: E.Min) -> str:
        return f"{self.min_max('min', e.dtype)}({self.expr(e.a)}, {self.expr(e.b)})"

    def expr_Max(self, e: E.Max) -> str:
        return f"{self.min_max('max', e.dtype)}({self.expr(e.a)}, {self.expr(e.b)})"

    def min_max(self, op: str, dtype: DType) -> str:
        """The function computing min/max of two values of `dtype` (dialect)."""
        return op

    def expr_Cast(self, e: E.Cast) -> str:
        dst = e.dtype
        if dst.is_float and dst.bits == 16:
            # values are computed in float; a cast to a 16-bit float rounds through it
            kind = "bf16" if dst.is_bfloat else "f16"
            return self.from_half(self.to_half(f"(float)({self.expr(e.value)})", kind), kind)
        if dst.is_bool:
            return f"({self.expr(e.value)} != 0)"
        if e.value.dtype == dst:
            return self.expr(e.value)
        return f"(({self.value_type(dst.element_of())})({self.expr(e.value)}))"

    def expr_BufferLoad(self, e: E.BufferLoad) -> str:
        if e.dtype.lanes > 1:
            self._need_lane(e)
        t = e.buffer.dtype
        if t.is_float and t.bits == 16:
            kind = "bf16" if t.is_bfloat else "f16"
            return self.load_half(e.buffer, e.indices, kind)
        return self.element(e.buffer, e.indices)

    def load_half(self, buffer, indices, kind: str) -> str:
        return self.from_half(self.element(buffer, indices), kind)

    def stmt_BufferStore(self, s: S.BufferStore) -> None:
        t = s.buffer.dtype
        lanes = max([s.value.dtype.lanes] + [i.dtype.lanes for i in s.indices])
        if t.is_float and t.bits == 16 and lanes == 1:
            kind = "bf16" if t.is_bfloat else "f16"
            self.emit(self.store_half(s.buffer, s.indices, self.expr(s.value), kind))
            return
        super().stmt_BufferStore(s)

    def store_half(self, buffer, indices, value: str, kind: str) -> str:
        return f"{self.element(buffer, indices)} = {self.to_half(value, kind)};"

    def stored_value(self, buffer, value: str) -> str:
        t = buffer.dtype
        if t.is_float and t.bits == 16:
            return self.to_half(value, "bf16" if t.is_bfloat else "f16")
        return value

    def from_half(self, text: str, kind: str) -> str:
        """A float from a 16-bit float element `text` (dialect)."""
        raise UnsupportedOpError(f"this GPU dialect has no {kind} support")

    def to_half(self, value: str, kind: str) -> str:
        """A 16-bit float element from float `value` (dialect)."""
        raise UnsupportedOpError(f"this GPU dialect has no {kind} support")

    def call_extra(self, e: E.Call) -> str:
        op = e.op
        if op.startswith("tir.tvm_warp_"):
            return self.warp_call(e)
        if op in ("tir.call_extern", "tir.call_pure_extern"):
            name = e.args[0]
            if not isinstance(name, E.StringImm):
                raise InternalError(f"{e} needs the function name as a StringImm")
            return f"{name.value}({', '.join(self.expr(a) for a in e.args[1:])})"
        raise UnsupportedOpError(f"the {self.dialect} codegen does not implement the intrinsic "
                                 f"{op!r}")

    dialect = "GPU"

    def warp_call(self, e: E.Call) -> str:
        """Warp shuffles (dialect)."""
        raise UnsupportedOpError(f"the {self.dialect} codegen has no warp shuffles ({e.op})")


def typed_helpers(helpers) -> List[Tuple[str, str]]:
    """(op, C type) of the floordiv/floormod helpers a kernel uses."""
    return sorted(tuple(h.split(":")) for h in helpers if h.count(":") == 1)
