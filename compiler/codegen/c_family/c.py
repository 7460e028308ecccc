"""Host C codegen: packed-form PrimFuncs -> one C99 file (rendered from codegen_templates/c/)
-> a position-independent object compiled with the system C compiler.

`codegen_host(mod, target, workdir)` implements the host-codegen interface of
compiler/codegen/__init__.py. `generate_c(mod, target)` returns the C text alone (golden tests).
The parallel launches made by lower_parallel print as task functions launched with
TVMBackendParallelLaunch (num_task 0 = all workers); workspace, parallel and function-call
services go through the context slots described in compiler/codegen/__init__.py.
`tir.call_packed` fills a TVMFFIAny array and calls `kiln_call_packed`
(codegen_templates/c/services.h.j2) with a static handle per call site, filled once
(thread-safely, inside parallel loops too) by TVMFFIHandleInitOnce with a lookup through the
library context; `tir.make_dltensor` is a DLTensor compound literal.
`tir.throw_last_error` (a failed workspace service) returns -1 without recording an error.

Compute bodies are outlined into static functions that receive the tensor pointers as
parameters: the packed function unpacks its arguments and returns `<symbol>_compute(...)`, and
each parallel task function unpacks its closure into `<task>_body(..., task_id, penv)`. C
compilers honour `restrict` on parameters (not on block-scope locals), so with the PrimFunc's
"tir.noalias" (default true) the pointers the llvm target marks noalias (a tensor argument's
data, a workspace) are `restrict` parameters, which lets gcc keep accumulators in registers.
Vector chunks are as wide as the target CPU's vector registers (`target_vector_bytes`: what the
C compiler defines with the target's flags).
"""
from __future__ import annotations

import functools
import os
import platform
from typing import Dict, List, Optional, Set, Tuple

from microruntime.abi import TypeIndex

from ...contrib.cc import compile_source, get_cc, run_command
from ...ir.errors import BuildError, InternalError, TargetError, UnsupportedOpError
from ...target.target import check_system_lib_prefix
from ...target.triple import is_bare_metal, is_hard_float_arm
from ...tir import expr as E
from ...tir import stmt as S
from ...tir.buffer import Buffer
from ...tir.functor import post_order_visit
from ...tir.transform.lower_call_packed import is_dltensor
from ...tir.transform.lower_parallel import PARALLEL_LAUNCH, captured_vars
from ...tir.transform.make_packed_api import check_tensor_table
from ...transform import PassContext
from .. import HostArtifact, system_lib_entry_symbol
from ..imports import collect_imports, compile_imports, link_imports
from ..templates import render
from .printer import CFamilyPrinter

_DLTENSOR_FIELDS = {"data": "data", "ndim": "ndim", "dtype_code": "dtype.code",
                    "dtype_bits": "dtype.bits", "dtype_lanes": "dtype.lanes", "shape": "shape",
                    "strides": "strides", "byte_offset": "byte_offset",
                    "device_type": "device.device_type", "device_id": "device.device_id"}
# File-scope names a function body must not shadow.
_RESERVED = {"kiln_parts", "closure", "task_id", "penv", "cdata"}
_ANY_FIELDS = {"tir.any_int64": "u.v_int64", "tir.any_float64": "u.v_float64",
               "tir.any_handle": "u.v_ptr"}
# Extern functions the prelude defines (static inline) when the code calls them: name -> the
# prelude's helper key (codegen_templates/c/prelude.h.j2).
PRELUDE_EXTERNS = {"kiln_mve_dot16": "mve_dot16"}

# Runtime services: key -> (name, return type, parameter types, wrapper). What each does when no
# runtime provides it is written in codegen_templates/c/services.h.j2 (`fallback`).
_SERVICES = {
    "alloc": ("TVMBackendAllocWorkspace", "void*", ["int", "int", "uint64_t", "int", "int"],
              "kiln_alloc_workspace"),
    "free": ("TVMBackendFreeWorkspace", "int", ["int", "int", "void*"], "kiln_free_workspace"),
    "parallel": ("TVMBackendParallelLaunch", "int", ["FTVMParallelLambda", "void*", "int"],
                 "kiln_parallel_launch"),
    "lookup": ("TVMFFIEnvModLookupFromImports", "int", ["void*", "const char*", "void**"],
               "kiln_lookup_function"),
    "init_once": ("TVMFFIHandleInitOnce", "int", ["void**", "kiln_handle_init_t"],
                  "kiln_handle_init_once"),
    "call": ("TVMFFIFunctionCall", "int", ["void*", "TVMFFIAny*", "int32_t", "TVMFFIAny*"],
             "kiln_function_call"),
}
# TVMFFIAny type indices of call_packed arguments (as compiler/codegen/llvm_packed.py).
_ANY_INT, _ANY_BOOL, _ANY_FLOAT = TypeIndex.INT, TypeIndex.BOOL, TypeIndex.FLOAT
_ANY_DLTENSOR_PTR, _ANY_RAW_STR = TypeIndex.DLTENSOR_PTR, TypeIndex.RAW_STR


class CHostPrinter(CFamilyPrinter):
    """The host dialect: packed-API intrinsics, runtime services, outlined parallel loops."""

    def __init__(self, name: str, noalias: bool = True, vector_bytes: int = 16) -> None:
        super().__init__(vector_bytes)
        self.symbol = name  # the global symbol; names the outlined functions
        self.noalias = noalias  # the PrimFunc's tir.noalias: tensor arguments do not overlap
        self.restrict_vars: Set[int] = set()  # pointers to memory nothing else points to
        self.services: Set[str] = set()
        self.lambdas: List[str] = []  # file-scope helpers: outlined bodies, tasks, lookups
        self.lookups: Dict[str, str] = {}  # call_packed name -> its lookup function
        self.tasks = 0  # parallel launches so far
        # call_packed name -> the file-scope handle cache its call sites share (module-wide)
        self.packed_caches: Dict[str, str] = {}
        self.in_parallel = False
        self.last_packed_stack = ""  # the argument array of the last call_packed emitted

    # ---- the packed function: prologue here, compute body outlined ---------------------------
    def print_function(self, func) -> None:
        """The packed function's body: the argument unpacking (its LetStmt / AssertStmt chain)
        inline, then a call of the rest outlined as `<symbol>_compute`, whose tensor pointers
        are `restrict` parameters (C compilers honour `restrict` on parameters, not on
        locals). The rest stays inline when it reads what a parameter cannot carry."""
        self.error_frees = []
        self.prepare(func.body)
        rest = self.chain(func.body)
        captured = captured_vars(rest)
        own = {id(p) for p in func.params}
        if not _ends_in_return(rest) or any(id(v) in own or v.dtype.lanes > 1 for v in captured):
            self.stmt(rest)
            return
        name = f"{self.symbol}_compute"
        self.outline(name, rest, captured)
        self.emit(f"return {name}({', '.join(self.name_of(v) for v in captured)});")

    def outline(self, name: str, body: S.Stmt, captured: List[E.Var],
                extra: Tuple[Tuple[str, str], ...] = ()) -> None:
        """Prints `body` as the file-scope `static int32_t name(<captured>, <extra>)`, which
        must end in a return; `extra` are (C type, name) parameters the body may not read."""
        saved = (self.lines, self.level, self.error_frees)
        self.lines, self.level, self.error_frees = [], 1, []
        self.stmt(body)
        text = self.text()
        self.lines, self.level, self.error_frees = saved
        params = [f"{self.param_type(v)} {self.name_of(v)}" for v in captured]
        params += [f"{ctype} {name}" for ctype, name in extra]
        self.lambdas.append(render("c/compute_function.c.j2", name=name, body=text,
                                   params=", ".join(params) or "void",
                                   unused=[name for _, name in extra]))

    def param_type(self, var: E.Var) -> str:
        decl = self.decl_type(var)
        return f"{decl} {self.restrict}" if self.is_restrict(var) else decl

    def is_restrict(self, var: E.Var) -> bool:
        return id(var) in self.restrict_vars

    def let_head(self, s: S.LetStmt) -> None:
        # As the llvm target's noalias: a tensor argument's data (under tir.noalias), a workspace.
        if self.noalias and id(s.var) in self.pointer_types and _distinct_memory(s.value):
            self.restrict_vars.add(id(s.var))
        super().let_head(s)

    def call_extra(self, e: E.Call) -> str:
        op, args = e.op, e.args
        if op == "tir.prefetch":  # a hint: (address, rw, locality, cache type) -> 0
            flags = ", ".join(str(getattr(a, "value", a)) for a in args[1:3])
            return f"(__builtin_prefetch({self.expr(args[0])}, {flags}), 0)"
        if op == "tir.atomic_add":
            t = args[1].dtype
            if not t.is_integer or t.is_bool:
                raise UnsupportedOpError(f"the C target has atomic_add for integers only, got "
                                         f"{t}; use the llvm target for floats")
            ctype = self.value_type(t)
            return (f"__atomic_fetch_add(({ctype}*){self.expr(args[0])}, {self.expr(args[1])}, "
                    "__ATOMIC_SEQ_CST)")
        if op in ("tir.call_llvm_intrin", "tir.call_llvm_pure_intrin"):
            raise UnsupportedOpError(f"{op} calls an LLVM intrinsic: only the llvm target "
                                     "compiles it")
        if op == "tir.any_type_index":
            return f"{self.expr(args[0])}[{self.expr(args[1])}].type_index"
        if op in _ANY_FIELDS:
            return f"{self.expr(args[0])}[{self.expr(args[1])}].{_ANY_FIELDS[op]}"
        if op == "tir.check_tensor_arg":
            return self.check_tensor_arg(e)
        if op == "tir.any_tensor":
            return f"((void*)kiln_any_tensor(&{self.expr(args[0])}[{self.expr(args[1])}]))"
        if op == "tir.dltensor_get":
            field = _DLTENSOR_FIELDS.get(getattr(args[1], "value", None))
            if field is None:
                raise InternalError(f"tir.dltensor_get of unknown field {args[1]}")
            value = f"((DLTensor*){self.expr(args[0])})->{field}"
            return value if e.dtype.is_handle else f"(({self.value_type(e.dtype)}){value})"
        if op == "tir.alloc_workspace":
            self.services.add("alloc")
            dt, dev, nbytes, code, bits = (self.expr(a) for a in args)
            return f"kiln_alloc_workspace({dt}, {dev}, (uint64_t)({nbytes}), {code}, {bits})"
        if op == "tir.free_workspace":
            self.services.add("free")
            return f"kiln_free_workspace({', '.join(self.expr(a) for a in args)})"
        if op == "tir.make_dltensor":
            return self.make_dltensor(args)
        if op == "tir.call_packed":
            return self.call_packed(e)
        if op == "tir.call_trace_packed":
            return self.call_trace_packed(e)
        if op in ("tir.call_extern", "tir.call_pure_extern"):
            return self.call_extern(e)
        if op == "tir.parallel_task_id":
            return "task_id"
        if op == "tir.parallel_num_task":
            return "penv->num_task"
        if op == "tir.dtype_name":
            raise InternalError("tir.dtype_name may only appear in AssertStmt messages")
        if op == "tir.throw_last_error":
            raise InternalError("tir.throw_last_error may only appear as a statement")
        raise UnsupportedOpError(f"the C host codegen does not implement {op!r}")

    def check_tensor_arg(self, e: E.Call) -> str:
        """`kiln_check_tensor` (prelude) with the table of what the tensor must be."""
        t, h, dev_id, name, sig, device = e.args[:6]
        table = check_tensor_table(e)
        self.helpers.update(("check_tensor", "i64_to_str", "dtype_name"))
        words = ", ".join(f"INT64_C({v})" for v in table)
        return (f"kiln_check_tensor({self.expr(t)}, (const DLTensor*)({self.expr(h)}), "
                f"{self.expr(dev_id)}, (const int64_t[]){{{words}}}, "
                f"{self.expr(name)}, {self.expr(device)}, {self.expr(sig)})")

    def call_extern(self, e: E.Call) -> str:
        """`name(args)`, with a file-scope prototype from the argument and result types (the
        name in parentheses, so that a function-like macro of that name is left alone); a
        compiler builtin (`__builtin_*`) is declared by the C compiler itself, not here, and a
        helper of the prelude (`kiln_mve_dot16`: PRELUDE_EXTERNS) is defined there."""
        name = e.args[0].value if isinstance(e.args[0], E.Broadcast) else e.args[0]
        if not isinstance(name, E.StringImm):
            raise InternalError(f"{e} needs the function name as a StringImm")
        args = e.args[1:]
        if name.value in PRELUDE_EXTERNS:
            self.helpers.add(PRELUDE_EXTERNS[name.value])
            return f"{name.value}({', '.join(self.expr(a) for a in args)})"
        params = ", ".join(self.value_type(a.dtype.element_of()) for a in args) or "void"
        decl = f"extern {self.value_type(e.dtype.element_of())} ({name.value})({params});"
        if decl not in self.lambdas and not name.value.startswith("__builtin_"):
            self.lambdas.append(decl)
        return f"{name.value}({', '.join(self.expr(a) for a in args)})"

    # ---- call_packed -------------------------------------------------------------------------
    def stmt_Evaluate(self, s: S.Evaluate) -> None:
        if isinstance(s.value, E.Call) and s.value.op == "tir.call_packed":
            self.call_packed(s.value)  # the status needs no statement of its own
            return
        if isinstance(s.value, E.Call) and s.value.op == "tir.throw_last_error":
            self.emit_error_return()  # the failed runtime service recorded the error
            return
        super().stmt_Evaluate(s)

    def call_packed(self, e: E.Call) -> str:
        """Fills a TVMFFIAny array, calls through `kiln_call_packed` (one file-scope handle
        `static void* <name>_packed` per function name, shared by the module's call sites and
        filled once through TVMFFIHandleInitOnce by a lookup function) and returns from the
        function on failure; the value is the status (0)."""
        if not e.args or not isinstance(e.args[0], E.StringImm):
            raise InternalError(f"{e} needs the function name as a StringImm")
        args = e.args[1:]
        if any(isinstance(a, Buffer) for a in args):
            raise InternalError(f"{e} still takes a Buffer; run lower_call_packed first")
        self.services |= {"lookup", "init_once", "call", "packed"}
        init = self.lookup_function(e.args[0].value)
        cache = self.packed_caches.get(e.args[0].value)
        if cache is None:
            raise InternalError(f"no handle cache for call_packed {e.args[0].value!r}; "
                                "generate_c names them before printing")
        stack, rc = self.fresh("kiln_args"), self.fresh("kiln_rc")
        self.emit(f"TVMFFIAny {stack}[{len(args) + 1}];")
        self.emit(f"int32_t {rc};")
        for i, a in enumerate(args):
            index, field, value = self._any_value(a)
            self.emit(f"{stack}[{i}].type_index = {index};")
            self.emit(f"{stack}[{i}].zero_padding = 0;")
            self.emit(f"{stack}[{i}].u.{field} = {value};")
        self.last_packed_stack = stack
        self.emit(f"{rc} = kiln_call_packed(&{cache}, {init}, {stack}, {len(args)});")
        if self.error_frees:
            self.emit(f"if ({rc} != 0) {{")
            self.level += 1
            self.emit_error_return(rc)
            self.level -= 1
            self.emit("}")
        else:
            self.emit(f"if ({rc} != 0) return {rc};")
        return rc

    def call_trace_packed(self, e: E.Call) -> str:
        """`tir.call_trace_packed(name, args..., value)`: calls `name` as call_packed does;
        the value is what the function returned (an Int, Bool or Float, converted to the
        call's dtype), or `value` when it returned anything else (None)."""
        self.call_packed(e)
        result = f"{self.last_packed_stack}[{len(e.args) - 1}]"
        ctype = self.value_type(e.dtype)
        index = self.fresh("kiln_ret")
        self.emit(f"int32_t {index} = {result}.type_index;")
        return (f"(({index} == {_ANY_INT} || {index} == {_ANY_BOOL}) ? ({ctype})"
                f"{result}.u.v_int64 : ({index} == {_ANY_FLOAT} ? ({ctype}){result}.u.v_float64"
                f" : ({self.expr(e.args[-1])})))")

    def lookup_function(self, name: str) -> str:
        """The `int f(void** out)` that looks `name` up through the library context (one per
        name in this function; emitted before it)."""
        if name not in self.lookups:
            fn = f"{self.symbol}_lookup_{len(self.lookups)}"
            self.lookups[name] = fn
            self.lambdas.append(render("c/lookup_function.c.j2", name=fn,
                                       target=self.expr(E.StringImm(name))))
        return self.lookups[name]

    def _any_value(self, a):
        """(type index, union field, C value) of a call_packed argument."""
        if isinstance(a, E.StringImm):
            return _ANY_RAW_STR, "v_c_str", self.expr(a)
        dt = a.dtype
        if dt.lanes > 1:
            raise UnsupportedOpError(f"call_packed cannot pass the vector {a}")
        if dt.is_handle:
            # A DLTensor made on the stack is a DLTensor*; any other handle (a buffer's data
            # pointer, as a kernel launch passes) is an opaque pointer, as TVM's host code.
            index = _ANY_DLTENSOR_PTR if is_dltensor(a) else TypeIndex.OPAQUE_PTR
            return index, "v_ptr", f"(void*)({self.expr(a)})"
        if dt.is_float:
            return _ANY_FLOAT, "v_float64", f"(double)({self.expr(a)})"
        if dt.is_bool:
            return _ANY_BOOL, "v_int64", f"(int64_t)({self.expr(a)} != 0)"
        return _ANY_INT, "v_int64", f"(int64_t)({self.expr(a)})"

    def make_dltensor(self, args) -> str:
        """A DLTensor compound literal (automatic storage in the enclosing block)."""
        if len(args) < 6:
            raise InternalError(f"tir.make_dltensor takes at least 6 arguments, got {len(args)}")
        data, dev_type, dev_id, code, bits, lanes = (self.expr(a) for a in args[:6])
        shape = [f"(int64_t)({self.expr(a)})" for a in args[6:]]
        shape_ptr = f"(int64_t[]){{{', '.join(shape)}}}" if shape else "NULL"
        return (f"((void*)&(DLTensor){{(void*)({data}), {{(int32_t)({dev_type}), "
                f"(int32_t)({dev_id})}}, {len(shape)}, {{(uint8_t)({code}), (uint8_t)({bits}), "
                f"(uint16_t)({lanes})}}, {shape_ptr}, NULL, 0}})")

    # ---- parallel launches (made by lower_parallel) ------------------------------------------
    def stmt_AttrStmt(self, s: S.AttrStmt) -> None:
        if s.key == PARALLEL_LAUNCH:
            self.parallel_launch(s)
        else:
            super().stmt_AttrStmt(s)

    def for_parallel(self, s: S.For) -> None:
        raise InternalError(f"parallel loop {s.loop_var.name} reached the C codegen; run "
                            "lower_parallel first")

    def parallel_launch(self, s: S.AttrStmt) -> None:
        """The task function (closure struct of the node's Vars, unpacked into the arguments
        of the task's body, outlined as `<task>_body` with `restrict` tensor pointers) as
        file-scope helpers, and here the launch, returning its status on failure."""
        if self.in_parallel:
            raise InternalError("a parallel launch inside a parallel launch; lower_parallel "
                                "makes nested parallel loops serial")
        self.services.add("parallel")
        name = f"{self.symbol}_compute_{self.tasks}"
        self.tasks += 1
        fields = [(self.decl_type(v), self.name_of(v)) for v in s.node]
        # The task function frees only its own workspaces on error (on its own thread); the
        # caller frees those live around the launch when it fails.
        self.in_parallel = True
        self.outline(f"{name}_body", S.SeqStmt((s.body, S.Return(E.const(0)))), list(s.node),
                     (("int", "task_id"), ("TVMParallelGroupEnv*", "penv")))
        self.in_parallel = False
        self.last_packed_stack = ""  # the argument array of the last call_packed emitted
        self.lambdas.append(render("c/parallel_lambda.c.j2", name=name, fields=fields))
        closure, rc = self.fresh("kiln_closure"), self.fresh("kiln_rc")
        values = ", ".join(f for _, f in fields) or "0"
        self.emit(f"{name}_closure {closure} = {{{values}}};")
        # A failed task recorded its error; the runtime passes it on to this thread.
        self.emit(f"int32_t {rc} = kiln_parallel_launch({name}, &{closure}, "
                  f"{self.expr(s.value)});")
        self.emit(f"if ({rc} != 0) {{")
        self.level += 1
        self.emit_error_return(rc)
        self.level -= 1
        self.emit("}")

    def decl_type(self, var: E.Var) -> str:
        if var.dtype.lanes > 1:
            raise UnsupportedOpError(f"parallel loop captures the vector {var.name}; compute it "
                                     "inside the loop")
        if var.dtype.is_handle and id(var) in self.pointer_types:
            return self.storage_type(self.pointer_types[id(var)]) + "*"
        return self.value_type(var.dtype)


def _distinct_memory(value) -> bool:
    """Whether a handle bound to `value` is a tensor argument's data or a fresh workspace."""
    if not isinstance(value, E.Call):
        return False
    if value.op == "tir.alloc_workspace":
        return True
    return value.op == "tir.dltensor_get" and getattr(value.args[1], "value", None) == "data"


def _ends_in_return(s: S.Stmt) -> bool:
    while isinstance(s, S.SeqStmt) and s.seq:
        s = s.seq[-1]
    return isinstance(s, S.Return)


# ---- the file ---------------------------------------------------------------------------------
def _service_decls(names: Set[str], system_lib: bool):
    out = []
    for key in ("alloc", "free", "parallel", "lookup", "init_once", "call"):
        if key not in names:
            continue
        name, ret, params, wrapper = _SERVICES[key]
        out.append({"key": key, "name": name, "ret": ret, "params": ", ".join(params),
                    "wrapper": wrapper,
                    "params_named": ", ".join(f"{p} a{i}" for i, p in enumerate(params)),
                    "args": ", ".join(f"a{i}" for i in range(len(params)))})
    return out


def packed_handle_caches(mod) -> Dict[str, str]:
    """call_packed name -> the C identifier of its file-scope handle cache: the name with
    every character that cannot be in an identifier made `_`, then `_packed` ("fake.func" ->
    `fake_func_packed`); a number is appended where two names would meet."""
    names: List[str] = []

    def visit(node):
        if isinstance(node, E.Call) and node.op in ("tir.call_packed", "tir.call_trace_packed") \
                and node.args and isinstance(node.args[0], E.StringImm) \
                and node.args[0].value not in names:
            names.append(node.args[0].value)

    for _, func in mod.items():
        post_order_visit(func.body, visit)
    caches: Dict[str, str] = {}
    taken = set(_RESERVED)
    for name in names:
        base = "".join(c if c.isalnum() and c.isascii() or c == "_" else "_" for c in name)
        base = ("_" + base if base[:1].isdigit() else base) + "_packed"
        ident, n = base, 0
        while ident in taken:
            n += 1
            ident = f"{base}_{n}"
        taken.add(ident)
        caches[name] = ident
    return caches


def function_symbol(name: str, func, prefix) -> str:
    return "__tvm_ffi_" + (prefix or "") + func.attrs.get("global_symbol", name)


def generate_c(mod, target, vector_bytes: Optional[int] = None) -> str:
    """The C source of a packed-form IRModule for `target`; vectors in chunks of
    `vector_bytes` (default: `target_vector_bytes(target)`)."""
    if vector_bytes is None:
        vector_bytes = target_vector_bytes(target)
    prefix = mod.attrs.get("system_lib_prefix")
    system_lib = prefix is not None
    if system_lib:  # it is written into symbol names and C string literals
        check_system_lib_prefix(prefix)
    functions, helpers, services, symbols, entry = [], set(), set(), [], None
    caches = packed_handle_caches(mod)
    for name, func in mod.items():
        if func.attrs.get("calling_conv") != "packed":
            raise InternalError(f"{name} is not in packed form; run make_packed_api first")
        symbol = function_symbol(name, func, prefix)
        noalias = bool(func.attrs.get("tir.noalias", True)) and \
            PassContext.current().get("tir.noalias", True)
        printer = CHostPrinter(func.attrs.get("global_symbol", name), noalias, vector_bytes)
        printer.taken.update(_RESERVED)
        printer.taken.update(caches.values())
        printer.packed_caches = caches
        params = [printer.name_of(p) for p in func.params]
        printer.print_function(func)
        text = render("c/function.c.j2", symbol=symbol, params=params, body=printer.text())
        functions.append({"text": text, "lambdas": printer.lambdas})
        helpers |= printer.helpers
        services |= printer.services
        symbols.append(symbol)
        if func.attrs.get("tir.is_entry_func"):
            entry = symbol
    typed = sorted(tuple(h.split(":")) for h in helpers if h.count(":") == 1)
    bitcasts = sorted(tuple(h.split(":")[1:]) for h in helpers if h.startswith("bitcast:"))
    # The target string goes into a comment: option values must not be able to end it.
    comment_target = str(target).replace("*/", "* /")
    return render("c/module.c.j2", target=comment_target, helpers=helpers, typed_helpers=typed,
                  bitcasts=bitcasts, services=_service_decls(services, system_lib),
                  call_packed="packed" in services, packed_caches=list(caches.values()),
                  functions=functions, entry=entry, system_lib=system_lib,
                  prefix=prefix or "", symbols=symbols,
                  entry_symbol=system_lib_entry_symbol(prefix or ""))


def _arch(triple: str) -> str:
    """The architecture of a triple or a machine name, normalised ("amd64" -> "x86_64")."""
    arch = triple.split("-")[0].lower()
    return {"amd64": "x86_64", "x64": "x86_64", "arm64": "aarch64", "i386": "x86",
            "i686": "x86"}.get(arch, arch)


def _is_cross_cc(cc: str) -> bool:
    """Whether a compiler command targets another architecture ("aarch64-linux-gnu-gcc",
    "clang --target=riscv64-linux-gnu")."""
    words = _listify_cc(cc)
    host = _arch(platform.machine())
    for word in words:
        if word.startswith("--target=") or word.startswith("-target="):
            return _arch(word.split("=", 1)[1]) != host
    name = os.path.basename(words[0]) if words else ""
    return name.count("-") >= 2 and _arch(name) != host


def _listify_cc(cc) -> List[str]:
    return cc.split() if isinstance(cc, str) else list(cc or [])


def compile_flags(target, cc=None, host: bool = True) -> List[str]:
    """cc flags that honour the target's options (gcc / clang spelling).

    CPU: `-mcpu=<name>` (or `-march=<name>`) picks the CPU (`-march=` on x86, `-mcpu=` elsewhere);
    `-mcpu=generic` is the compiler's portable baseline; with neither, a host build (no foreign
    `-mtriple`, a native `cc`, `host` true) uses `-march=native` like the llvm target's host CPU,
    and a cross build gets no CPU flag. `-mattr=+avx2,+fma` -> `-mavx2 -mfma` (`-x` -> `-mno-x`);
    not on Arm (thumb*/arm* triples), where GCC takes extensions only on the CPU name.
    FP contraction (`a*b + c` -> fma): `-ffp-contract=fast` unless `-fp-contract=off`
    (bit-exact results), as the llvm target. `-fast-math` -> `-ffast-math`. A bare-metal
    `-mtriple` (OS "none": `thumbv7em-none-eabihf`) adds `-fno-pic` (static code, as the llvm
    target), `-mthumb` for a Thumb arch and `-mfloat-abi=hard` for an "eabihf" one (the FPU
    follows `-mcpu`), so the objects link with the app built by `arm-none-eabi-gcc`.
    """
    # No -fwrapv: as in TVM, overflow of 32/64-bit signed arithmetic is undefined in generated
    # code, which lets the C compiler widen int32 index arithmetic (-fwrapv made the gemm bench
    # 4x slower). 8/16-bit results are wrapped explicitly by the printer.
    flags = [f"-O{target.get('opt-level', 2)}", "-ftree-vectorize", "-fno-math-errno"]
    triple = target.get("mtriple")
    arch = _arch(triple) if triple else _arch(platform.machine())
    cross = (triple and arch != _arch(platform.machine())) or _is_cross_cc(cc or get_cc())
    cpu = target.get("mcpu") or target.get("march")
    if triple and arch != _arch(platform.machine()) and not _is_cross_cc(cc or get_cc()):
        # The host compiler, given code for another architecture: it compiles it for this
        # machine (export_library compiles it again with the target's cc=...).
        return flags + [f"-ffp-contract={fp_contract(target)}"] + \
            (["-ffast-math"] if target.get("fast-math") else [])
    if cpu is None and host and not cross:
        cpu = "native"
    if cpu and cpu != "generic":
        x86 = arch in ("x86_64", "x86")
        flags.append(f"-march={cpu}" if x86 or target.get("march") else f"-mcpu={cpu}")
    # On Arm, GCC spells extensions on the CPU (-mcpu=cortex-m33+nodsp), not as -m<feature>
    # flags: there the -mcpu decides, and -mattr only steers Kiln's own kernel choice.
    arm = arch.startswith(("arm", "thumb"))
    for attr in [] if arm else target.get("mattr") or []:
        feature = attr.lstrip("+-")
        flags.append(f"-mno-{feature}" if attr.startswith("-") else f"-m{feature}")
    flags += bare_metal_flags(target)[1:]
    flags.append(f"-ffp-contract={fp_contract(target)}")
    if target.get("fast-math"):
        flags.append("-ffast-math")
    return flags


def bare_metal_flags(target) -> List[str]:
    """The flags that make GCC's objects link with code for a bare-metal `-mtriple` (OS "none"):
    the CPU, `-fno-pic`, `-mthumb` for a Thumb arch, `-mfloat-abi=hard` for an "eabihf" one (the
    FPU follows the CPU); [] for other targets. Also for the library blob of an llvm target."""
    triple = target.get("mtriple")
    if not triple or not is_bare_metal(triple):
        return []
    cpu = target.get("mcpu")
    flags = [f"-mcpu={cpu}" if cpu and cpu != "generic" else "-mcpu=" + _arch(triple)[5:],
             "-fno-pic"]
    flags += ["-mthumb"] if _arch(triple).startswith("thumb") else []
    return flags + (["-mfloat-abi=hard"] if is_hard_float_arm(triple) else [])


def target_vector_bytes(target, cc=None) -> int:
    """The width in bytes of the widest vector register of the CPU the C source is compiled
    for: what the C compiler defines with the target's flags (`__AVX512F__`: 64, `__AVX__`:
    32), else 16 (SSE2, NEON; the width every GCC target can at least emulate). Also 16 when
    the compiler cannot be asked. Vectors wider than the CPU's still compute right."""
    return _vector_bytes(tuple(_listify_cc(cc or get_cc())), tuple(compile_flags(target, cc)))


@functools.lru_cache(maxsize=None)
def _vector_bytes(cc: Tuple[str, ...], flags: Tuple[str, ...]) -> int:
    try:
        macros = run_command(list(cc) + list(flags) + ["-dM", "-E", "-x", "c", os.devnull])
    except BuildError:
        return 16
    defined = {line.split()[1] for line in macros.splitlines()
               if line.startswith("#define ") and len(line.split()) > 1}
    if "__AVX512F__" in defined:
        return 64
    if "__AVX__" in defined:
        return 32
    return 16


def fp_contract(target) -> str:
    """The target's `-fp-contract` mode: "fast" (default: fuse `a*b + c` into fma where the CPU
    has one) or "off" (every product and sum rounded on its own, bit-exact across targets)."""
    mode = target.get("fp-contract") or "fast"
    if mode not in ("fast", "off"):
        raise TargetError(f"-fp-contract={mode} is not a contraction mode; use "
                          "-fp-contract=fast (the default) or -fp-contract=off")
    return mode


def codegen_host(mod, target, workdir: str) -> HostArtifact:
    source = generate_c(mod, target)
    path = os.path.join(workdir, "host.c")
    with open(path, "w") as f:
        f.write(source)
    # -save-temps=obj keeps the assembly (host.s) of the one compile for get_source("asm").
    obj = compile_source(path, os.path.join(workdir, "host.o"),
                         compile_flags(target) + ["-save-temps=obj"])
    # code imported with pragma "import_c" / "import_llvm" (compiler/codegen/imports.py)
    obj = link_imports(obj, compile_imports(collect_imports(mod), workdir,
                                            compile_flags(target)), workdir)
    sources = {"c": source}
    asm = os.path.join(workdir, "host.s")
    if os.path.exists(asm):
        with open(asm) as f:
            sources["asm"] = f.read()
    return HostArtifact(object_file=obj, sources=sources)
