"""Device kernels -> SPIR-V compute shaders (one module per kernel, entry point = its name),
for Vulkan 1.1 (SPIR-V 1.3, GLSL450 memory model, Logical addressing).

Input: a device kernel of split_host_device after the device passes (compiler/tir/pipeline.py
`device_passes`), as the C-family GPU printers take it (see c_family/device.py).

How the kernel meets the runtime (the layout of TVM's Vulkan runtime, so modules interoperate):
- buffer parameter k (the k-th handle parameter) is a storage buffer at descriptor set 0,
  binding k: a Block struct holding one runtime array of the element type (ArrayStride = its
  size);
- the scalar parameters, in order, are the members of one push-constant block, 8 bytes apart
  (scalar j at offset 8*j; a value narrower than 8 bytes sits in the low bytes);
- blockIdx.* / threadIdx.* are WorkgroupId / LocalInvocationId; the workgroup size is an
  execution mode, so the thread extents of a kernel must be constants;
- "shared" allocations are Workgroup arrays, "local" ones Function arrays; `tir.storage_sync`
  is OpControlBarrier(Workgroup, Workgroup, AcquireRelease | WorkgroupMemory).

Control flow is structured: a loop is header (OpLoopMerge) / body / continue / merge, an `if`
is OpSelectionMerge; loop variables live in Function variables, everything else is SSA
(`tir.if_then_else` is a selection with an OpPhi, so an out-of-range load it guards is never
executed). Vectors are not generated: a vectorized kernel is refused with the fix.
"""
from __future__ import annotations

from typing import Dict, List, Optional, Tuple

from ...ir.dtype import DType
from ...ir.errors import InternalError, UnsupportedOpError
from ...tir import expr as E
from ...tir import stmt as S
from ...tir.functor import post_order_visit
from ...tir.transform.split_host_device import launch_extents, loop_form
from . import builder as B

_AXIS = {"x": 0, "y": 1, "z": 2}
_UNARY_GLSL = {"exp": "Exp", "exp2": "Exp2", "log": "Log", "log2": "Log2", "sqrt": "Sqrt",
               "rsqrt": "InverseSqrt", "tanh": "Tanh", "sin": "Sin", "cos": "Cos", "tan": "Tan",
               "asin": "Asin", "acos": "Acos", "atan": "Atan", "sinh": "Sinh", "cosh": "Cosh",
               "asinh": "Asinh", "acosh": "Acosh", "atanh": "Atanh", "fabs": "FAbs",
               "floor": "Floor", "ceil": "Ceil", "round": "Round", "trunc": "Trunc",
               "nearbyint": "RoundEven"}
_BINARY_GLSL = {"pow": "Pow", "atan2": "Atan2"}
# erf(x) ~ x P(x^2) / Q(x^2) on [-4, 4], coefficients from the highest power down
_ERF_P = (-2.72614225801306e-10, 2.77068142495902e-08, -2.10102402082508e-06,
          -5.69250639462346e-05, -7.34990630326855e-04, -2.95459980854025e-03,
          -1.60960333262415e-02)
_ERF_Q = (-1.45660718464996e-05, -2.13374055278905e-04, -1.68282697438203e-03,
          -7.37332916720468e-03, -1.42647390514189e-02)
# GLSL.std.450 instructions that also take 64-bit floats (the others are 16/32-bit only)
_F64_OK = {"FAbs", "Floor", "Ceil", "Round", "Trunc", "RoundEven", "Sqrt", "InverseSqrt"}


def _refuse_vector(e) -> None:
    if e.dtype.lanes > 1:
        raise UnsupportedOpError(
            f"the SPIR-V codegen does not generate vectors ({e.dtype} in {type(e).__name__}); "
            "do not vectorize loops of Vulkan kernels (use a plain or unrolled loop)")


class KernelCodegen:
    """Generates the SPIR-V module of one kernel: `KernelCodegen(func, name, target).run()`."""

    def __init__(self, func, name: str, target=None) -> None:
        self.func, self.kname, self.target = func, name, target
        self.b = B.Builder()
        self.launch = launch_extents(func.body)
        self.values: Dict[int, Tuple[str, int, DType]] = {}   # Var -> ("ssa"|"ptr", id, dtype)
        self.buffers: Dict[Tuple[int, str], Tuple[int, str]] = {}  # (data var, dtype) -> var
        self.storage: Dict[int, Tuple[str, object]] = {}  # data var -> ("param", k) | alloc
        self.local_vars: List[int] = []                   # words of the entry block's variables
        self.interface: List[int] = []
        self.label = 0

    # ---- types -------------------------------------------------------------------------------
    def ty(self, t: DType) -> int:
        _refuse_vector_type(t)
        if t.is_bool:
            return self.b.type_bool()
        if t.is_float:
            if t.is_bfloat:
                raise UnsupportedOpError("the SPIR-V codegen has no bfloat16; use float16 or "
                                         "float32 on Vulkan")
            if t.bits == 16:
                self._check_support("supports_float16", "float16")
            if t.bits == 64:
                self._check_support("supports_float64", "float64")
            return self.b.type_float(t.bits)
        if t.is_integer:
            if t.bits == 64:
                self._check_support("supports_int64", "int64")
            return self.b.type_int(t.bits, t.is_int)
        raise UnsupportedOpError(f"the SPIR-V codegen has no value type for {t}")

    def _check_support(self, attr: str, what: str) -> None:
        if self.target is not None and self.target.get(attr) is False:
            raise UnsupportedOpError(f"kernel '{self.kname}' uses {what}, but the target says "
                                     f"{attr}=false; add -{attr}=1 to the target when the "
                                     "device has it, or compute in float32/int32")

    def storage_elem(self, t: DType, where: str, buffer: bool = True) -> int:
        """The element type of an array of `t`; 8- and 16-bit elements of a storage buffer
        need the StorageBuffer8BitAccess / StorageBuffer16BitAccess capabilities (the
        runtime enables the device features where the device has them)."""
        t = _stored(t)
        if buffer and t.bits == 8:
            self._check_support("supports_int8", str(t))
            self.b.require("StorageBuffer8BitAccess")
            self.b.extension("SPV_KHR_8bit_storage")
        elif buffer and t.bits == 16:
            if t.is_integer:
                self._check_support("supports_int16", str(t))
            self.b.require("StorageBuffer16BitAccess")
        return self.ty(t)

    def const(self, t: DType, value) -> int:
        tid = self.ty(t)
        if t.is_bool:
            return self.b.const(tid, "bool", 1, bool(value))
        if t.is_float:
            return self.b.const(tid, "float", t.bits, float(value))
        return self.b.const(tid, "int" if t.is_int else "uint", t.bits, int(value))

    # ---- blocks ------------------------------------------------------------------------------
    def start_block(self, label: int) -> None:
        self.b.emit("Label", label)
        self.label = label

    def new_label(self) -> int:
        return self.b.new_id()

    # ---- the kernel --------------------------------------------------------------------------
    def run(self) -> bytes:
        b = self.b
        body = self.func.body
        self._element_types(body)
        void = b.type_void()
        fn = b.new_id()
        b.name(fn, self.kname)
        entry = self.new_label()
        self.start_block(entry)
        head_at = len(b.functions)        # the entry block's variables go here
        self._declare_params()
        self._load_builtins()
        self.stmt(body)
        b.emit("Return")
        fn_words = B.instruction(B.OP["Function"], [void, fn, 0, b.type_function(void)])
        b.functions = fn_words + b.functions[:head_at] + self.local_vars + \
            b.functions[head_at:] + B.instruction(B.OP["FunctionEnd"], [])
        b.entry_point(fn, self.kname, self.interface, self._local_size())
        return b.binary()

    def _local_size(self) -> List[int]:
        sizes = []
        for axis in "xyz":
            extent = self.launch.get(f"threadIdx.{axis}")
            if extent is None:
                sizes.append(1)
            elif isinstance(extent, E.IntImm):
                sizes.append(extent.value)
            else:
                raise UnsupportedOpError(
                    f"kernel '{self.kname}' binds threadIdx.{axis} to the non-constant extent "
                    f"{extent}: a Vulkan workgroup size is fixed in the shader; split the loop "
                    "by a constant factor before binding it to threadIdx")
        return sizes

    def _element_types(self, body) -> None:
        """The element type(s) each buffer data var is accessed with."""
        self.elem_types: Dict[int, List[DType]] = {}

        def visit(node):
            if isinstance(node, (E.BufferLoad, S.BufferStore)):
                t = node.buffer.dtype.element_of()
                seen = self.elem_types.setdefault(id(node.buffer.data), [])
                if t not in seen:
                    seen.append(t)

        post_order_visit(body, visit)

    def _declare_params(self) -> None:
        b = self.b
        handles = [p for p in self.func.params if p.dtype.is_handle]
        scalars = [p for p in self.func.params if not p.dtype.is_handle]
        for k, p in enumerate(handles):
            self.storage[id(p)] = ("param", k)
            for t in self.elem_types.get(id(p), [DType("float32")]):
                self._buffer_variable(p, t, k)
        if not scalars:
            return
        members = [self._push_type(p.dtype) for p in scalars]
        block = b.type_struct(members, [8 * j for j in range(len(members))], "push")
        pc = b.global_variable("PushConstant", block, "args")
        for j, (p, mt) in enumerate(zip(scalars, members)):
            ptr = b.value("AccessChain", b.type_pointer("PushConstant", mt), pc,
                          b.const_int(j))
            raw = b.value("Load", mt, ptr)
            held = self._push_dtype(p.dtype)
            self.values[id(p)] = ("ssa", self.convert(raw, held, p.dtype), p.dtype)

    def _push_dtype(self, t: DType) -> DType:
        """The type a scalar of `t` is read as from its 8-byte push-constant slot."""
        if t.is_bool or (t.is_integer and t.bits < 32):
            return DType("int32")
        if t.is_float and t.bits == 16:
            raise UnsupportedOpError("a float16 scalar kernel argument on Vulkan; pass it as "
                                     "float32")
        return t

    def _push_type(self, t: DType) -> int:
        return self.ty(self._push_dtype(t))

    def _buffer_variable(self, data: E.Var, t: DType, binding: int) -> None:
        b = self.b
        elem = self.storage_elem(t, f"buffer '{data.name}'")
        arr = b.type_runtime_array(elem, t.bytes)
        block = b.type_struct([arr], [0], f"buf_{t}")
        var = b.global_variable("StorageBuffer", block, data.name)
        b.decorate(var, "DescriptorSet", 0)
        b.decorate(var, "Binding", binding)
        self.buffers[(id(data), str(t))] = (var, "StorageBuffer")

    def _load_builtins(self) -> None:
        b = self.b
        uint, int32 = b.type_int(32, False), DType("int32")
        v3 = b.type_vector(uint, 3)
        self.thread_ids: Dict[str, int] = {}
        for prefix, builtin in (("blockIdx", "WorkgroupId"), ("threadIdx", "LocalInvocationId")):
            tags = [t for t in self.launch if t.startswith(prefix)]
            if not tags:
                continue
            var = b.global_variable("Input", v3, f"gl_{builtin}")
            b.decorate(var, "BuiltIn", B.BUILTIN[builtin])
            self.interface.append(var)
            vec = b.value("Load", v3, var)
            for tag in tags:
                comp = b.value("CompositeExtract", uint, vec, _AXIS[tag[-1]])
                self.thread_ids[tag] = b.value("Bitcast", self.ty(int32), comp)

    # ---- statements --------------------------------------------------------------------------
    def stmt(self, s) -> None:
        fn = getattr(self, "stmt_" + type(s).__name__, None)
        if fn is None:
            raise UnsupportedOpError(f"the SPIR-V codegen does not handle {type(s).__name__} "
                                     "statements in a kernel")
        fn(s)

    def stmt_SeqStmt(self, s) -> None:
        for x in s.seq:
            self.stmt(x)

    def stmt_AttrStmt(self, s) -> None:
        self.stmt(s.body)

    def stmt_LetStmt(self, s) -> None:
        if s.var.dtype.is_handle:
            raise UnsupportedOpError(f"let-bound handle '{s.var.name}' in a Vulkan kernel")
        self.values[id(s.var)] = ("ssa", self.expr(s.value), s.var.dtype)
        self.stmt(s.body)

    def stmt_AssertStmt(self, s) -> None:
        raise UnsupportedOpError("an assertion inside a GPU kernel cannot report an error")

    def stmt_Evaluate(self, s) -> None:
        v = s.value
        if isinstance(v, E.Call) and v.op == "tir.storage_sync":
            scope = getattr(v.args[0], "value", "shared") if v.args else "shared"
            self.barrier(scope)
            return
        if isinstance(v, (E.IntImm, E.FloatImm)):
            return
        self.expr(v)

    def barrier(self, scope: str) -> None:
        b = self.b
        sem = B.SEMANTICS_ACQ_REL | (B.SEMANTICS_WORKGROUP_MEMORY if scope in ("shared", "warp")
                                     else B.SEMANTICS_UNIFORM_MEMORY)
        wg = b.const_uint(B.SCOPE_WORKGROUP)
        b.emit("ControlBarrier", wg, wg, b.const_uint(sem))

    def stmt_BufferStore(self, s) -> None:
        _refuse_vector(s.value)
        ptr, t = self.element_pointer(s.buffer, s.indices)
        value = self.expr(s.value)
        if s.value.dtype != t:
            value = self.convert(value, s.value.dtype, t)
        self.b.emit("Store", ptr, value)

    def stmt_Allocate(self, s) -> None:
        buf = s.buffer
        scope = buf.scope or "global"
        size = 1
        for extent in buf.shape:
            if not isinstance(extent, E.IntImm):
                raise UnsupportedOpError(
                    f"allocation '{buf.name}' ({scope}) inside a Vulkan kernel has the "
                    f"non-constant size {extent}; a kernel's arrays need constant sizes")
            size *= extent.value
        t = buf.dtype.element_of()
        b = self.b
        if scope == "shared":
            arr = b.type_array(self.storage_elem(t, f"shared array '{buf.name}'", False),
                               size)
            var = b.global_variable("Workgroup", arr, buf.name)
            self.buffers[(id(buf.data), str(t))] = (var, "Workgroup")
        elif scope in ("local", "warp"):
            arr = b.type_array(self.ty(t), size)
            var = b.new_id()
            self.local_vars += B.instruction(B.OP["Variable"], [
                b.type_pointer("Function", arr), var, B.STORAGE["Function"]])
            b.name(var, buf.name)
            self.buffers[(id(buf.data), str(t))] = (var, "Function")
        else:
            raise UnsupportedOpError(
                f"allocation '{buf.name}' in scope '{scope}' inside a Vulkan kernel; "
                "intermediate tensors of a kernel live in 'shared' or 'local' memory")
        self.stmt(s.body)

    def stmt_IfThenElse(self, s) -> None:
        b = self.b
        cond = self.as_bool(s.condition)
        then_l, merge = self.new_label(), self.new_label()
        else_l = self.new_label() if s.else_case is not None else merge
        b.emit("SelectionMerge", merge, 0)
        b.emit("BranchConditional", cond, then_l, else_l)
        self.start_block(then_l)
        self.stmt(s.then_case)
        b.emit("Branch", merge)
        if s.else_case is not None:
            self.start_block(else_l)
            self.stmt(s.else_case)
            b.emit("Branch", merge)
        self.start_block(merge)

    def stmt_While(self, s) -> None:
        b = self.b
        header, check, body, cont, merge = (self.new_label() for _ in range(5))
        b.emit("Branch", header)
        self.start_block(header)
        b.emit("LoopMerge", merge, cont, 0)
        b.emit("Branch", check)
        self.start_block(check)
        b.emit("BranchConditional", self.as_bool(s.condition), body, merge)
        self.start_block(body)
        self.stmt(s.body)
        b.emit("Branch", cont)
        self.start_block(cont)
        b.emit("Branch", header)
        self.start_block(merge)

    def stmt_For(self, s) -> None:
        if s.kind == S.ForKind.PARALLEL:
            raise UnsupportedOpError(f"loop {s.loop_var.name} is parallel inside a GPU kernel; "
                                     "bind it to a thread axis instead")
        if s.kind != S.ForKind.THREAD_BINDING:
            self.loop(s.loop_var, self.expr(s.min), self.expr(s.extent), None, s.body)
            return
        form = loop_form(s, self.launch)
        if form == "serial":
            self.loop(s.loop_var, self.expr(s.min), self.expr(s.extent), None, s.body)
            return
        tag = s.thread_binding.thread_tag
        t = s.loop_var.dtype
        index = self.convert(self.thread_ids[tag], DType("int32"), t)
        if form == "stride":
            self.loop(s.loop_var, index, self.expr(s.extent), self.expr(self.launch[tag]),
                      s.body, absolute_end=True)
            return
        self.values[id(s.loop_var)] = ("ssa", index, t)
        if form == "guard":
            self.stmt(S.IfThenElse(E.LT(s.loop_var, s.extent), s.body))
        else:
            self.stmt(s.body)

    def loop(self, var: E.Var, start: int, extent: int, step: Optional[int], body,
             absolute_end: bool = False) -> None:
        """`for (var = start; var < end; var += step)`, end = extent (absolute_end) or
        start + extent, step 1 when None."""
        b = self.b
        t = var.dtype
        tid = self.ty(t)
        end = extent if absolute_end else b.value("IAdd", tid, start, extent)
        ptr = b.new_id()
        self.local_vars += B.instruction(B.OP["Variable"], [b.type_pointer("Function", tid), ptr,
                                                            B.STORAGE["Function"]])
        b.name(ptr, var.name)
        b.emit("Store", ptr, start)
        self.values[id(var)] = ("ptr", ptr, t)
        header, body_l, cont, merge = (self.new_label() for _ in range(4))
        b.emit("Branch", header)
        self.start_block(header)
        cur = b.value("Load", tid, ptr)
        cond = b.value("SLessThan" if t.is_int else "ULessThan", self.ty(DType("bool")), cur, end)
        b.emit("LoopMerge", merge, cont, 0)
        b.emit("BranchConditional", cond, body_l, merge)
        self.start_block(body_l)
        self.stmt(body)
        b.emit("Branch", cont)
        self.start_block(cont)
        cur = b.value("Load", tid, ptr)
        b.emit("Store", ptr, b.value("IAdd", tid, cur, step if step is not None
                                     else self.const(t, 1)))
        b.emit("Branch", header)
        self.start_block(merge)

    # ---- memory ------------------------------------------------------------------------------
    def element_pointer(self, buffer, indices) -> Tuple[int, DType]:
        if len(indices) != 1:
            raise InternalError(f"buffer '{buffer.name}' is accessed with {len(indices)} "
                                "indices in a kernel; storage_flatten makes them 1-D")
        _refuse_vector(indices[0])
        t = buffer.dtype.element_of()
        key = (id(buffer.data), str(t))
        if key not in self.buffers:
            raise InternalError(f"buffer '{buffer.name}' ({t}) has no storage in kernel "
                                f"'{self.kname}'")
        var, storage = self.buffers[key]
        if storage != "Function":
            t = _stored(t)
        b = self.b
        elem = self.ty(t)
        index = self.expr(indices[0])
        chain = [b.const_int(0), index] if storage == "StorageBuffer" else [index]
        ptr = b.value("AccessChain", b.type_pointer(storage, elem), var, *chain)
        return ptr, t

    # ---- expressions -------------------------------------------------------------------------
    def expr(self, e) -> int:
        _refuse_vector(e)
        fn = getattr(self, "expr_" + type(e).__name__, None)
        if fn is None:
            raise UnsupportedOpError(f"the SPIR-V codegen does not handle {type(e).__name__} "
                                     "expressions")
        return fn(e)

    def as_bool(self, e) -> int:
        v = self.expr(e)
        return v if e.dtype.is_bool else self.convert(v, e.dtype, DType("bool"))

    def expr_Var(self, e) -> int:
        entry = self.values.get(id(e))
        if entry is None:
            raise InternalError(f"variable '{e.name}' is not defined in kernel '{self.kname}'")
        kind, vid, t = entry
        return vid if kind == "ssa" else self.b.value("Load", self.ty(t), vid)

    expr_SizeVar = expr_Var

    def expr_IntImm(self, e) -> int:
        return self.const(e.dtype, e.value)

    def expr_FloatImm(self, e) -> int:
        return self.const(e.dtype, e.value)

    def expr_Cast(self, e) -> int:
        return self.convert(self.expr(e.value), e.value.dtype, e.dtype)

    def expr_BufferLoad(self, e) -> int:
        ptr, t = self.element_pointer(e.buffer, e.indices)
        value = self.b.value("Load", self.ty(t), ptr)
        return value if t == e.dtype else self.convert(value, t, e.dtype)   # a stored bool

    def expr_Let(self, e) -> int:
        self.values[id(e.var)] = ("ssa", self.expr(e.value), e.var.dtype)
        return self.expr(e.body)

    def expr_Select(self, e) -> int:
        c = self.as_bool(e.condition)
        a, f = self.expr(e.true_value), self.expr(e.false_value)
        return self.b.value("Select", self.ty(e.dtype), c, a, f)

    def expr_Not(self, e) -> int:
        return self.b.value("LogicalNot", self.ty(DType("bool")), self.as_bool(e.a))

    def _arith(self, e, int_op: str, uint_op: str, float_op: str) -> int:
        t = e.dtype
        a, c = self.expr(e.a), self.expr(e.b)
        op = float_op if t.is_float else (uint_op if t.is_uint else int_op)
        return self.b.value(op, self.ty(t), a, c)

    def expr_Add(self, e):
        return self._arith(e, "IAdd", "IAdd", "FAdd")

    def expr_Sub(self, e):
        return self._arith(e, "ISub", "ISub", "FSub")

    def expr_Mul(self, e):
        return self._arith(e, "IMul", "IMul", "FMul")

    def expr_Div(self, e):
        return self._arith(e, "SDiv", "UDiv", "FDiv")

    def expr_Mod(self, e):
        return self._arith(e, "SRem", "UMod", "FRem")

    def expr_FloorMod(self, e):
        t = e.dtype
        if t.is_uint:
            return self._arith(e, "UMod", "UMod", "UMod")
        return self._floor_mod(t, self.expr(e.a), self.expr(e.b))

    def _floor_mod(self, t: DType, a: int, c: int) -> int:
        """a - floor(a / c) * c, the sign of the divisor. Written out rather than OpSMod /
        OpFMod, which some drivers (lavapipe) get wrong for negative operands."""
        b = self.b
        tid = self.ty(t)
        if t.is_float:
            q = self._glsl("Floor", t, b.value("FDiv", tid, a, c))
            return b.value("FSub", tid, a, b.value("FMul", tid, q, c))
        bt = self.ty(DType("bool"))
        zero = self.const(t, 0)
        rem = b.value("SRem", tid, a, c)
        fix = b.value("LogicalAnd", bt, b.value("INotEqual", bt, rem, zero),
                      b.value("LogicalNotEqual", bt, b.value("SLessThan", bt, rem, zero),
                              b.value("SLessThan", bt, c, zero)))
        return b.value("Select", tid, fix, b.value("IAdd", tid, rem, c), rem)

    def expr_FloorDiv(self, e):
        t = e.dtype
        b = self.b
        tid = self.ty(t)
        a, c = self.expr(e.a), self.expr(e.b)
        if t.is_float:
            return self._glsl("Floor", t, b.value("FDiv", tid, a, c))
        if t.is_uint:
            return b.value("UDiv", tid, a, c)
        rem = self._floor_mod(t, a, c)
        return b.value("SDiv", tid, b.value("ISub", tid, a, rem), c)  # exact division

    def expr_Min(self, e):
        t = e.dtype
        return self._glsl("FMin" if t.is_float else "UMin" if t.is_uint else "SMin", t,
                          self.expr(e.a), self.expr(e.b))

    def expr_Max(self, e):
        t = e.dtype
        return self._glsl("FMax" if t.is_float else "UMax" if t.is_uint else "SMax", t,
                          self.expr(e.a), self.expr(e.b))

    def _compare(self, e, sop: str, uop: str, fop: str, lop: Optional[str] = None) -> int:
        t = e.a.dtype
        a, c = self.expr(e.a), self.expr(e.b)
        if t.is_bool:
            if lop is None:
                a = self.convert(a, t, DType("int32"))
                c = self.convert(c, t, DType("int32"))
                op = sop
            else:
                op = lop
        else:
            op = fop if t.is_float else (uop if t.is_uint else sop)
        return self.b.value(op, self.ty(DType("bool")), a, c)

    def expr_EQ(self, e):
        return self._compare(e, "IEqual", "IEqual", "FOrdEqual", "LogicalEqual")

    def expr_NE(self, e):
        return self._compare(e, "INotEqual", "INotEqual", "FUnordNotEqual", "LogicalNotEqual")

    def expr_LT(self, e):
        return self._compare(e, "SLessThan", "ULessThan", "FOrdLessThan")

    def expr_LE(self, e):
        return self._compare(e, "SLessThanEqual", "ULessThanEqual", "FOrdLessThanEqual")

    def expr_GT(self, e):
        return self._compare(e, "SGreaterThan", "UGreaterThan", "FOrdGreaterThan")

    def expr_GE(self, e):
        return self._compare(e, "SGreaterThanEqual", "UGreaterThanEqual",
                             "FOrdGreaterThanEqual")

    def expr_And(self, e):
        return self.b.value("LogicalAnd", self.ty(DType("bool")), self.as_bool(e.a),
                            self.as_bool(e.b))

    def expr_Or(self, e):
        return self.b.value("LogicalOr", self.ty(DType("bool")), self.as_bool(e.a),
                            self.as_bool(e.b))

    def _glsl(self, inst: str, t: DType, *args: int) -> int:
        if t.is_float and t.bits == 64 and inst not in _F64_OK | {"FMin", "FMax", "Fma"}:
            raise UnsupportedOpError(f"GLSL.std.450 {inst} has no float64 form; compute it "
                                     "in float32 on Vulkan")
        return self.b.ext(self.ty(t), inst, *args)

    def expr_Call(self, e) -> int:
        op = e.op
        short = op[4:] if op.startswith("tir.") else op
        b = self.b
        t = e.dtype
        if short in _UNARY_GLSL:
            return self._glsl(_UNARY_GLSL[short], t, self.expr(e.args[0]))
        if short in _BINARY_GLSL:
            return self._glsl(_BINARY_GLSL[short], t, self.expr(e.args[0]),
                              self.expr(e.args[1]))
        if short == "log10":
            ln = self._glsl("Log2", t, self.expr(e.args[0]))
            return b.value("FMul", self.ty(t), ln, self.const(t, 0.30102999566398120))
        if short == "log1p":
            one = b.value("FAdd", self.ty(t), self.expr(e.args[0]), self.const(t, 1.0))
            return self._glsl("Log", t, one)
        if short == "expm1":
            ex = self._glsl("Exp", t, self.expr(e.args[0]))
            return b.value("FSub", self.ty(t), ex, self.const(t, 1.0))
        if short == "erf":
            return self._erf(t, self.expr(e.args[0]))
        if short == "fma":
            return self._glsl("Fma", t, *(self.expr(a) for a in e.args))
        if short == "abs":
            x = self.expr(e.args[0])
            if t.is_float:
                return self._glsl("FAbs", t, x)
            return x if t.is_uint else self._glsl("SAbs", t, x)
        if short in ("isnan", "isinf", "isfinite"):
            x = self.expr(e.args[0])
            bt = self.ty(DType("bool"))
            if short == "isnan":
                return b.value("IsNan", bt, x)
            if short == "isinf":
                return b.value("IsInf", bt, x)
            bad = b.value("LogicalOr", bt, b.value("IsNan", bt, x), b.value("IsInf", bt, x))
            return b.value("LogicalNot", bt, bad)
        if short == "likely":
            return self.expr(e.args[0])
        if short == "if_then_else":
            return self.if_then_else(e)
        if short in ("bitwise_and", "bitwise_or", "bitwise_xor", "shift_left", "shift_right"):
            name = {"bitwise_and": "BitwiseAnd", "bitwise_or": "BitwiseOr",
                    "bitwise_xor": "BitwiseXor", "shift_left": "ShiftLeftLogical",
                    "shift_right": "ShiftRightArithmetic" if t.is_int else
                    "ShiftRightLogical"}[short]
            return b.value(name, self.ty(t), self.expr(e.args[0]), self.expr(e.args[1]))
        if short == "bitwise_not":
            return b.value("Not", self.ty(t), self.expr(e.args[0]))
        if short == "reinterpret":
            return b.value("Bitcast", self.ty(t), self.expr(e.args[0]))
        raise UnsupportedOpError(f"the SPIR-V codegen does not implement the intrinsic {op!r}")

    def _erf(self, t: DType, x: int) -> int:
        """erf(x), which GLSL.std.450 lacks: x clamped to [-4, 4] (erf is +-1 to float32
        there), then the odd rational approximation p(x^2) x / q(x^2) of degrees 13 / 8
        (a few ulp in float32)."""
        b, ty = self.b, self.ty(t)
        x = self._glsl("FClamp", t, x, self.const(t, -4.0), self.const(t, 4.0))
        x2 = b.value("FMul", ty, x, x)

        def horner(coefs):
            acc = self.const(t, coefs[0])
            for c in coefs[1:]:
                acc = self._glsl("Fma", t, x2, acc, self.const(t, c))
            return acc

        p = b.value("FMul", ty, x, horner(_ERF_P))
        return b.value("FDiv", ty, p, horner(_ERF_Q))

    def if_then_else(self, e) -> int:
        """cond ? a : b evaluating only the side taken (a selection and an OpPhi)."""
        b = self.b
        cond = self.as_bool(e.args[0])
        then_l, else_l, merge = self.new_label(), self.new_label(), self.new_label()
        b.emit("SelectionMerge", merge, 0)
        b.emit("BranchConditional", cond, then_l, else_l)
        self.start_block(then_l)
        a = self.expr(e.args[1])
        a_from = self.label
        b.emit("Branch", merge)
        self.start_block(else_l)
        f = self.expr(e.args[2])
        f_from = self.label
        b.emit("Branch", merge)
        self.start_block(merge)
        return b.value("Phi", self.ty(e.dtype), a, a_from, f, f_from)

    # ---- conversions -------------------------------------------------------------------------
    def convert(self, v: int, src: DType, dst: DType) -> int:
        if src == dst:
            return v
        b = self.b
        if dst.is_bool:
            if src.is_float:
                return b.value("FUnordNotEqual", self.ty(dst), v, self.const(src, 0.0))
            return b.value("INotEqual", self.ty(dst), v, self.const(src, 0))
        if src.is_bool:
            return b.value("Select", self.ty(dst), v, self.const(dst, 1), self.const(dst, 0))
        if src.is_float and dst.is_float:
            return b.value("FConvert", self.ty(dst), v)
        if src.is_float:
            return b.value("ConvertFToS" if dst.is_int else "ConvertFToU", self.ty(dst), v)
        if dst.is_float:
            return b.value("ConvertSToF" if src.is_int else "ConvertUToF", self.ty(dst), v)
        # integer -> integer: change the width keeping the source's signedness, then bitcast
        if src.bits != dst.bits:
            mid = DType(src.code, dst.bits)
            v = b.value("SConvert" if src.is_int else "UConvert", self.ty(mid), v)
            src = mid
        if src != dst:
            v = b.value("Bitcast", self.ty(dst), v)
        return v


def _refuse_vector_type(t: DType) -> None:
    if t.lanes > 1:
        raise UnsupportedOpError(
            f"the SPIR-V codegen does not generate vectors ({t}); do not vectorize loops of "
            "Vulkan kernels (use a plain or unrolled loop)")


def kernel_spirv(func, name: str, target=None) -> bytes:
    """The SPIR-V binary of one device kernel (see the module doc)."""
    return KernelCodegen(func, name, target).run()


def _stored(t: DType) -> DType:
    """The type elements of `t` have in memory that threads share (storage buffers, workgroup
    arrays): a bool, which has no memory layout in SPIR-V, is a uint8 there (0 or 1), as a
    bool tensor is in the runtime's arrays; every other type is itself."""
    return DType("uint8") if t.is_bool else t
