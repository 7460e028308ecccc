"""Linked params: a model's weights as constant data in its library, read where they lie.

`emit_linked_params(params, target, workdir)` writes one object for the target (C compiled by
the C compiler for target "c", LLVM IR through llvmlite for "llvm") that holds, per weight,
    a 64-byte aligned `static const` byte array of its data (little-endian), and
    a `static const DLTensor` over it (its shape, dtype, CPU device, no strides),
and one packed function (the TVM-FFI safe-call ABI; TVM's `_lookup_linked_param`):
    __tvm_ffi_<prefix>kiln_linked_param(storage_id: int) -> DLTensor* (type index 7) of the
    weight whose graph entry has that storage id, or None when no weight does.
For a `--system-lib` target the object registers that function at start-up
(`TVMFFIEnvModRegisterSystemLibSymbol`, from a constructor), as the kernels register theirs.
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Optional, Sequence

import numpy as np

from microruntime.abi import TypeIndex

from ..contrib import cc
from ..ir.dtype import as_dtype
from . import HostArtifact
from .c_family.c import compile_flags
from .templates import render

LOOKUP = "kiln_linked_param"   # the packed function's name (without __tvm_ffi_ / prefix)
ALIGNMENT = 64                 # what kernels assume of every buffer (DESIGN.md §2)


@dataclass
class LinkedParam:
    """One weight: its storage id in the graph, its dtype and shape, its bytes."""
    storage_id: int
    dtype: str
    shape: tuple
    data: bytes


def linked_param(storage_id: int, value) -> LinkedParam:
    """`value` (numpy array or NDArray) as a LinkedParam of slot `storage_id`."""
    arr = value.numpy() if hasattr(value, "numpy") else np.asarray(value)
    arr = np.ascontiguousarray(arr)
    return LinkedParam(int(storage_id), str(arr.dtype), tuple(int(d) for d in arr.shape),
                       arr.astype(arr.dtype.newbyteorder("<"), copy=False).tobytes())


def lookup_symbol(prefix: Optional[str]) -> str:
    """The lookup function's symbol in a library with system-lib `prefix` (None: none)."""
    return f"__tvm_ffi_{prefix or ''}{LOOKUP}"


def emit_linked_params(params: Sequence[LinkedParam], target, workdir: str) -> HostArtifact:
    """The object of `params` for `target` (kind "c" or "llvm") in `workdir`; see the module
    doc. Sources: {"c": ...} or {"ll": ...}."""
    os.makedirs(workdir, exist_ok=True)
    prefix = target.system_lib_prefix
    if target.kind.name == "llvm":
        return _llvm_object(params, target, prefix, workdir)

    source = c_source(params, prefix)
    path = os.path.join(workdir, "linked_params.c")
    with open(path, "w") as f:
        f.write(source)
    obj = cc.compile_source(path, os.path.join(workdir, "linked_params.o"),
                            compile_flags(target))
    return HostArtifact(obj, {"c": source})


def _dtype_triple(dtype: str):
    dt = as_dtype(dtype)
    return int(dt.code), int(dt.bits), int(dt.lanes)


def _c_bytes(data: bytes) -> str:
    rows = ["".join(f"\\x{b:02x}" for b in data[i:i + 32]) for i in range(0, len(data), 32)]
    return "\n  ".join(f'"{r}"' for r in rows) if rows else "{0}"


def c_source(params: Sequence[LinkedParam], prefix: Optional[str]) -> str:
    """The C file of the linked params (see the module doc)."""
    fn = lookup_symbol(prefix)
    out = [render("c/prelude.h.j2", helpers=set(), typed_helpers=(), bitcasts=()),
           f"#define KILN_ALIGNED __attribute__((aligned({ALIGNMENT})))", "",
           "/* the weights, read in place */"]
    for k, p in enumerate(params):
        code, bits, lanes = _dtype_triple(p.dtype)
        dims = ", ".join(str(d) for d in p.shape) or "1"
        out += [f"static const unsigned char kiln_param_{k}[{max(len(p.data), 1)}] KILN_ALIGNED "
                f"= {_c_bytes(p.data)};",
                f"static const int64_t kiln_param_shape_{k}[{max(len(p.shape), 1)}] = {{{dims}}};",
                f"static const DLTensor kiln_param_tensor_{k} = {{(void*)kiln_param_{k}, {{1, 0}}, "
                f"{len(p.shape)}, {{{code}, {bits}, {lanes}}}, (int64_t*)kiln_param_shape_{k}, "
                "NULL, 0};"]
    n = max(len(params), 1)
    sids = ", ".join(str(p.storage_id) for p in params) or "-1"
    tensors = ", ".join(f"&kiln_param_tensor_{k}" for k in range(len(params))) or "NULL"
    out += ["", f"static const int64_t kiln_param_sids[{n}] = {{{sids}}};",
            f"static const DLTensor* const kiln_param_tensors[{n}] = {{{tensors}}};", "",
            f"/* {LOOKUP}(storage_id): the weight of that slot as a DLTensor*, or None. */",
            f"KILN_EXPORT int32_t {fn}(void* self, const TVMFFIAny* args, int32_t num_args, "
            "TVMFFIAny* result) {",
            "  int32_t i;", "  (void)self;",
            f"  if (num_args != 1 || args[0].type_index != {int(TypeIndex.INT)}) {{",
            "    const char* parts[1];",
            f'    parts[0] = "{LOOKUP}(storage_id) takes one int";',
            '    TVMFFIErrorSetRaisedFromCStrParts("TypeError", parts, 1);',
            "    return -1;", "  }",
            "  result->zero_padding = 0;", "  result->u.v_int64 = 0;",
            f"  result->type_index = {int(TypeIndex.NONE)};",
            f"  for (i = 0; i < {len(params)}; ++i)",
            "    if (kiln_param_sids[i] == args[0].u.v_int64) {",
            f"      result->type_index = {int(TypeIndex.DLTENSOR_PTR)};",
            "      result->u.v_ptr = (void*)kiln_param_tensors[i];", "      break;", "    }",
            "  return 0;", "}"]
    if prefix is not None:
        out += ["", "extern int TVMFFIEnvModRegisterSystemLibSymbol(const char* name, "
                "void* symbol);",
                "__attribute__((constructor)) static void kiln_linked_params_register(void) {",
                f'  (void)TVMFFIEnvModRegisterSystemLibSymbol("{fn}", (void*)&{fn});', "}"]
    return "\n".join(out) + "\n"


def _llvm_object(params: Sequence[LinkedParam], target, prefix, workdir: str) -> HostArtifact:
    from .llvm.codegen import create_target_machine, emit, parsed

    tm = create_target_machine(target)
    text = llvm_ir(params, prefix, tm.triple, str(tm.target_data))
    ref = parsed(text, "the linked params")
    path = os.path.join(workdir, "linked_params.o")
    with open(path, "wb") as f:
        f.write(emit(tm, ref))
    return HostArtifact(path, {"ll": text})


def llvm_ir(params: Sequence[LinkedParam], prefix: Optional[str], triple: str,
            layout: str) -> str:
    """The LLVM IR of the linked params (see the module doc)."""
    from llvmlite import ir

    from .llvm.types import (
        ANY,
        DLTENSOR,
        I8,
        I32,
        I64,
        PTR,
        SAFE_CALL,
        VOID,
        global_variable,
        opaque,
    )

    m = ir.Module(name="linked_params")
    m.triple, m.data_layout = triple, layout

    def const_global(name: str, value: ir.Constant, align: int) -> ir.GlobalVariable:
        g = global_variable(m, value.type, name)
        g.global_constant, g.linkage, g.initializer, g.align = True, "internal", value, align
        return g

    tensors = []
    for k, p in enumerate(params):
        code, bits, lanes = _dtype_triple(p.dtype)
        data = p.data or b"\0"
        arr = const_global(f"kiln_param_{k}", ir.Constant(ir.ArrayType(I8, len(data)),
                                                          bytearray(data)), ALIGNMENT)
        dims = list(p.shape) or [1]
        shape = const_global(f"kiln_param_shape_{k}", ir.Constant(
            ir.ArrayType(I64, len(dims)), dims), 8)
        tensors.append(const_global(f"kiln_param_tensor_{k}", ir.Constant(DLTENSOR, [
            arr, ir.Constant(DLTENSOR.elements[1], [1, 0]), ir.Constant(I32, len(p.shape)),
            ir.Constant(DLTENSOR.elements[3], [code, bits, lanes]), shape,
            ir.Constant(PTR, None), ir.Constant(I64, 0)]), 8))
    n = len(params)
    sids = const_global("kiln_param_sids", ir.Constant(ir.ArrayType(I64, max(n, 1)),
                                                       [p.storage_id for p in params] or [-1]), 8)
    ptrs = const_global("kiln_param_tensors", ir.Constant(ir.ArrayType(PTR, max(n, 1)),
                                                          tensors or [ir.Constant(PTR, None)]), 8)

    def cstring(name: str, text: str) -> ir.GlobalVariable:
        raw = bytearray(text.encode() + b"\0")
        g = const_global(name, ir.Constant(ir.ArrayType(I8, len(raw)), raw), 1)
        g.linkage = "private"
        return g

    fn = ir.Function(m, SAFE_CALL, lookup_symbol(prefix))
    fn.attributes.add("nounwind")
    _, args, num_args, result = fn.args
    b = ir.IRBuilder(fn.append_basic_block("entry"))
    bad, find = fn.append_basic_block("bad"), fn.append_basic_block("find")
    loop, body = fn.append_basic_block("loop"), fn.append_basic_block("body")
    found, nxt, done = (fn.append_basic_block(x) for x in ("found", "next", "none"))
    type_index = b.load(b.gep(args, [I32(0), I32(0)], source_etype=ANY), typ=I32)
    ok = b.and_(b.icmp_signed("==", num_args, I32(1)),
                b.icmp_signed("==", type_index, I32(int(TypeIndex.INT))))
    b.cbranch(ok, find, bad)
    b.position_at_end(bad)
    err = ir.Function(m, ir.FunctionType(VOID, [PTR, PTR, I32]),
                      "TVMFFIErrorSetRaisedFromCStrParts")
    parts = opaque(b.alloca(ir.ArrayType(PTR, 1)))
    b.store(cstring("kiln_msg", f"{LOOKUP}(storage_id) takes one int"),
            b.gep(parts, [I32(0), I32(0)], source_etype=ir.ArrayType(PTR, 1)))
    b.call(err, [cstring("kiln_kind", "TypeError"), parts, I32(1)])
    b.ret(I32(-1))
    b.position_at_end(find)
    sid = b.load(b.gep(args, [I32(0), I32(2)], source_etype=ANY), typ=I64)
    rtype, rpad = (b.gep(result, [I32(0), I32(i)], source_etype=ANY) for i in (0, 1))
    rval = b.gep(result, [I32(0), I32(2)], source_etype=ANY)
    b.store(I32(0), rpad)
    b.store(I64(0), rval)
    b.store(I32(int(TypeIndex.NONE)), rtype)
    b.branch(loop)
    b.position_at_end(loop)
    i = b.phi(I64)
    i.add_incoming(I64(0), find)
    b.cbranch(b.icmp_signed("<", i, I64(n)), body, done)
    b.position_at_end(body)
    have = b.load(b.gep(sids, [I32(0), i], source_etype=sids.value_type), typ=I64)
    b.cbranch(b.icmp_signed("==", have, sid), found, nxt)
    b.position_at_end(nxt)
    i.add_incoming(b.add(i, I64(1)), nxt)
    b.branch(loop)
    b.position_at_end(found)
    b.store(b.load(b.gep(ptrs, [I32(0), i], source_etype=ptrs.value_type), typ=PTR), rval)
    b.store(I32(int(TypeIndex.DLTENSOR_PTR)), rtype)
    b.ret(I32(0))
    b.position_at_end(done)
    b.ret(I32(0))
    if prefix is not None:
        _register(m, fn, cstring("kiln_lookup_name", fn.name))
    return str(m)


def _register(m, fn, name) -> None:
    """A constructor that registers `fn` in the system library under `name`."""
    from llvmlite import ir

    from .llvm.types import I32, PTR, VOID, global_variable

    reg = ir.Function(m, ir.FunctionType(I32, [PTR, PTR]), "TVMFFIEnvModRegisterSystemLibSymbol")
    ctor = ir.Function(m, ir.FunctionType(VOID, []), "kiln_linked_params_register")
    ctor.linkage = "internal"
    b = ir.IRBuilder(ctor.append_basic_block("entry"))
    b.call(reg, [name, fn])
    b.ret_void()
    entry = ir.LiteralStructType([I32, PTR, PTR])
    ctors = global_variable(m, ir.ArrayType(entry, 1), "llvm.global_ctors")
    ctors.linkage = "appending"
    ctors.initializer = ir.Constant(ir.ArrayType(entry, 1), [
        ir.Constant(entry, [I32(65535), ctor, ir.Constant(PTR, None)])])


__all__ = ["ALIGNMENT", "LOOKUP", "LinkedParam", "c_source", "emit_linked_params",
           "linked_param", "llvm_ir", "lookup_symbol"]
