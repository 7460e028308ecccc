"""The AOT executor's C: the header `tvmgen_<name>.h` and the run function's file.

The header (TVM's C interface API): `struct tvmgen_<name>_inputs` / `_outputs` (one `void*`
per tensor, named after it), `struct tvmgen_<name>_workspace_pools { void* global_workspace; }`,
`TVMGEN_<NAME>_WORKSPACE_SIZE` and `TVMGEN_<NAME>_<TENSOR>_SIZE` (bytes), and
    int32_t tvmgen_<name>_run(struct tvmgen_<name>_inputs* inputs,
                              struct tvmgen_<name>_outputs* outputs,
                              struct tvmgen_<name>_workspace_pools* workspace_pools);
Every buffer is 64-byte aligned (kernels assume it). Kiln adds, for code generic over models,
`TVMGEN_<NAME>_NUM_INPUTS/_NUM_OUTPUTS`, `_INPUT_SIZES/_OUTPUT_SIZES` (array initializers) and
`_INPUTS_INIT(p)/_OUTPUTS_INIT(p)` (a struct's initializer from an array of pointers).

The run file holds the header's text, the weights as constant data (passed to kernels in
place), a static table of tensor types, and `tvmgen_<name>_run`: it points a DLTensor at each
tensor's memory (an input, an output, a weight or its workspace offset), hands the rest of the
workspace to the runtime's kernel workspace while it runs (`mr_aot_workspace_begin`, a weak
reference: a runtime without it serves kernel workspaces itself), calls each kernel's
`__tvm_ffi_<kernel>` in order and copies the outputs no kernel writes. It returns 0, or the
failing kernel's status with its error raised. Besides, for callers through the packed ABI:
`tvmgen_<name>___tvm_main__(inputs..., outputs..., workspace)`, `tvmgen_<name>_get_metadata()`
(JSON: inputs, outputs, workspace bytes) and, outside a system library, `<name>(device)`,
which returns the library's module (TVM's `lib["default"](dev)`).
"""
from __future__ import annotations

import json
from typing import Dict, List

import numpy as np

from microruntime.abi import TypeIndex

from ....codegen.templates import render
from ....ir.dtype import as_dtype
from .plan import ALIGNMENT, AotPlan, Port


def _dtype_triple(dtype: str):
    dt = as_dtype(dtype)
    return int(dt.code), int(dt.bits), int(dt.lanes)


def _macro(plan: AotPlan, *parts: str) -> str:
    return "_".join(["TVMGEN", plan.mod_name] + list(parts)).upper()


def _struct(prefix: str, kind: str, ports: List[Port]) -> List[str]:
    lines = [f"/* The {kind} of the model, each {ALIGNMENT}-byte aligned. */",
             f"struct {prefix}_{kind} {{"]
    for p in ports:
        lines.append(f"  void* {p.c_name};  /* '{_comment(p.name)}': {p.dtype}"
                     f"{list(p.shape)}, {p.nbytes} bytes */")
    if not ports:
        lines.append("  void* unused;  /* the model has none */")
    return lines + ["};"]


def _comment(text: str) -> str:
    return text.replace("*/", "* /").replace("\n", " ")


def header_source(plan: AotPlan) -> str:
    """The text of `tvmgen_<name>.h`."""
    prefix = f"tvmgen_{plan.mod_name}"
    guard = f"{prefix.upper()}_H_"
    lines = [f"/* The entry point of the model '{plan.mod_name}' compiled by Kiln for the AOT "
             "executor. Generated; do not edit. */",
             f"#ifndef {guard}", f"#define {guard}", "", "#include <stdint.h>", "",
             "#ifdef __cplusplus", 'extern "C" {', "#endif", ""]
    for p in plan.inputs + plan.outputs:
        lines.append(f"#define {_macro(plan, p.c_name, 'SIZE')} {p.nbytes}")
    lines += [f"/* Bytes of the workspace tvmgen_{plan.mod_name}_run needs ({ALIGNMENT}-byte "
              "aligned): tensors, then kernel workspace. */",
              f"#define {_macro(plan, 'WORKSPACE_SIZE')} {plan.workspace_bytes}",
              f"#define {_macro(plan, 'WORKSPACE_ALIGNMENT')} {ALIGNMENT}",
              f"#define {_macro(plan, 'NUM_INPUTS')} {len(plan.inputs)}",
              f"#define {_macro(plan, 'NUM_OUTPUTS')} {len(plan.outputs)}",
              f"#define {_macro(plan, 'INPUT_SIZES')} "
              f"{{{', '.join(str(p.nbytes) for p in plan.inputs) or '0'}}}",
              f"#define {_macro(plan, 'OUTPUT_SIZES')} "
              f"{{{', '.join(str(p.nbytes) for p in plan.outputs) or '0'}}}",
              f"#define {_macro(plan, 'INPUTS_INIT')}(p) "
              f"{{{', '.join(f'(p)[{k}]' for k in range(len(plan.inputs))) or '0'}}}",
              f"#define {_macro(plan, 'OUTPUTS_INIT')}(p) "
              f"{{{', '.join(f'(p)[{k}]' for k in range(len(plan.outputs))) or '0'}}}", ""]
    lines += _struct(prefix, "inputs", plan.inputs) + [""]
    lines += _struct(prefix, "outputs", plan.outputs) + [""]
    lines += [f"/* The caller's memory: {_macro(plan, 'WORKSPACE_SIZE')} bytes. */",
              f"struct {prefix}_workspace_pools {{", "  void* global_workspace;", "};", "",
              "/* Runs the model: reads the inputs, writes the outputs, uses the workspace and",
              " * allocates nothing. 0 on success; else nonzero, the message raised as",
              " * TVMFFIErrorSetRaisedFromCStrParts (mr_last_error()). */",
              f"int32_t {prefix}_run(struct {prefix}_inputs* inputs, struct {prefix}_outputs* "
              "outputs,",
              f"    struct {prefix}_workspace_pools* workspace_pools);", "",
              "#ifdef __cplusplus", "}", "#endif", f"#endif /* {guard} */", ""]
    return "\n".join(lines)


def _bytes_literal(data: bytes) -> str:
    """`data` as adjacent C string literals of hex escapes (fast to compile)."""
    if not data:
        return '""'
    rows = ["".join(f"\\x{b:02x}" for b in data[i:i + 32]) for i in range(0, len(data), 32)]
    return "\n  ".join(f'"{r}"' for r in rows)


def _weights(plan: AotPlan) -> Dict[str, str]:
    return {name: f"kiln_param_{k}" for k, name in enumerate(plan.params)}


def run_source(plan: AotPlan, system_lib: bool) -> str:
    """The text of the run function's C file (see the module doc)."""
    p = f"tvmgen_{plan.mod_name}"
    weights = _weights(plan)
    prelude = render("c/prelude.h.j2", helpers=set(), typed_helpers=(), bitcasts=())
    index_type = "uint16_t" if len(plan.tensors) < 65536 else "uint32_t"
    out = [header_source(plan), "#include <string.h>", prelude,
           "#define KILN_ALIGNED __attribute__((aligned(" + str(ALIGNMENT) + ")))",
           "typedef int32_t (*kiln_kernel_t)(void*, const TVMFFIAny*, int32_t, TVMFFIAny*);",
           "extern int32_t mr_aot_workspace_begin(void* mem, size_t nbytes) KILN_WEAK;",
           "extern void mr_aot_workspace_end(void) KILN_WEAK;", "", "/* the kernels */"]
    for k in plan.kernels:
        out.append(f"extern int32_t __tvm_ffi_{k}(void* self, const TVMFFIAny* args, "
                   "int32_t num_args, TVMFFIAny* result);")
    out += ["", "/* the weights, read in place */"]
    for name, sym in weights.items():
        data = np.ascontiguousarray(plan.params[name])
        raw = data.tobytes() if not hasattr(data, "numpy") else data.numpy().tobytes()
        out.append(f"static const unsigned char {sym}[{max(len(raw), 1)}] KILN_ALIGNED = "
                   f"{_bytes_literal(raw) if raw else '{0}'};")
    shapes: Dict[tuple, str] = {}
    for t in plan.tensors:
        if t.shape not in shapes:
            shapes[t.shape] = f"kiln_shape_{len(shapes)}"
    out += ["", "/* tensor shapes and types */"]
    for shape, sym in shapes.items():
        dims = ", ".join(str(d) for d in shape) or "1"
        out.append(f"static const int64_t {sym}[{max(len(shape), 1)}] = {{{dims}}};")
    out += ["typedef struct { const int64_t* shape; int32_t ndim; uint8_t code, bits; "
            "uint16_t lanes; } kiln_type_t;",
            f"static const kiln_type_t kiln_types[{len(plan.tensors)}] = {{"]
    for t in plan.tensors:
        code, bits, lanes = _dtype_triple(t.dtype)
        out.append(f"  {{{shapes[t.shape]}, {len(t.shape)}, {code}, {bits}, {lanes}}},")
    out.append("};")
    arity = max([len(c.args) for c in plan.calls] or [1])
    n_args = max(sum(len(c.args) for c in plan.calls), 1)
    out += ["", f"static {index_type} const kiln_args[{n_args}] = {{"]
    starts, pos = [], 0
    for c in plan.calls:
        starts.append(pos)
        out.append("  " + ", ".join(str(a) for a in c.args) + ",")
        pos += len(c.args)
    if not plan.calls:
        out.append("  0")
    out += ["};", "",
            f"static void kiln_tensor(DLTensor* t, void* data, {index_type} i) {{",
            "  const kiln_type_t* ty = &kiln_types[i];",
            "  t->data = data;", "  t->device.device_type = 1;", "  t->device.device_id = 0;",
            "  t->ndim = ty->ndim;", "  t->dtype.code = ty->code;", "  t->dtype.bits = ty->bits;",
            "  t->dtype.lanes = ty->lanes;", "  t->shape = (int64_t*)ty->shape;",
            "  t->strides = NULL;", "  t->byte_offset = 0;", "}", "",
            "static int32_t kiln_call(kiln_kernel_t f, DLTensor* t, int32_t first, int32_t n) {",
            f"  TVMFFIAny args[{arity}], result;", "  int32_t i;",
            "  for (i = 0; i < n; ++i) {",
            f"    args[i].type_index = {int(TypeIndex.DLTENSOR_PTR)};",
            "    args[i].zero_padding = 0;", "    args[i].u.v_ptr = &t[kiln_args[first + i]];",
            "  }", "  result.type_index = 0;", "  result.zero_padding = 0;",
            "  result.u.v_int64 = 0;", "  return f(NULL, args, n, &result);", "}", ""]
    out += [f"KILN_EXPORT int32_t {p}_run(struct {p}_inputs* inputs, struct {p}_outputs* "
            f"outputs, struct {p}_workspace_pools* workspace_pools) {{",
            "  unsigned char* ws = (unsigned char*)workspace_pools->global_workspace;",
            f"  DLTensor t[{max(len(plan.tensors), 1)}];", "  int32_t status = 0;"]
    if not plan.inputs:
        out.append("  (void)inputs;")
    if not plan.tensors or all(t.home[0] != "workspace" for t in plan.tensors) \
            and not plan.kernel_workspace_bytes:
        out.append("  (void)ws;")
    for i, t in enumerate(plan.tensors):
        kind, where = t.home
        if kind == "input":
            data = f"inputs->{plan.inputs[where].c_name}"
        elif kind == "output":
            data = f"outputs->{plan.outputs[where].c_name}"
        elif kind == "param":
            data = f"(void*){weights[where]}"
        else:
            data = f"ws + {where}"
        out.append(f"  kiln_tensor(&t[{i}], {data}, {i});")
    if plan.kernel_workspace_bytes:
        out += [f"  if (mr_aot_workspace_begin && mr_aot_workspace_begin(ws + {plan.slots_bytes}"
                f", {plan.workspace_bytes - plan.slots_bytes}) != 0) return -1;"]
    for c, start in zip(plan.calls, starts):
        out.append(f"  if (status == 0) status = kiln_call(__tvm_ffi_{c.kernel}, t, {start}, "
                   f"{len(c.args)});")
    if plan.kernel_workspace_bytes:
        out.append("  if (mr_aot_workspace_end) mr_aot_workspace_end();")
    for k, e in plan.copies:
        out.append(f"  if (status == 0) memcpy(outputs->{plan.outputs[k].c_name}, t[{e}].data, "
                   f"{plan.outputs[k].nbytes});")
    out += ["  return status;", "}", ""]
    out += _packed_entry(plan, system_lib)
    return "\n".join(out)


def _packed_entry(plan: AotPlan, system_lib: bool) -> List[str]:
    """The packed-ABI functions (see the module doc)."""
    p = f"tvmgen_{plan.mod_name}"
    ports = plan.inputs + plan.outputs
    n = len(ports) + 1
    meta = json.dumps(plan.metadata(), separators=(",", ":"))
    meta_c = meta.replace("\\", "\\\\").replace('"', '\\"')
    sizes = ", ".join(str(q.nbytes) for q in ports) + (", " if ports else "") + \
        str(plan.workspace_bytes)
    out = [f"static const char kiln_metadata[] = \"{meta_c}\";",
           f"static const uint64_t kiln_port_bytes[{n}] = {{{sizes}}};", "",
           "static int32_t kiln_fail(const char* what, const char* detail) {",
           "  const char* parts[3];", "  parts[0] = what;", "  parts[1] = detail;",
           f"  parts[2] = \" (see {p}_get_metadata)\";",
           '  TVMFFIErrorSetRaisedFromCStrParts("ValueError", parts, 3);', "  return -1;", "}",
           "",
           "/* The bytes of a contiguous CPU tensor argument, or -1. */",
           "static int64_t kiln_arg_bytes(const TVMFFIAny* a, void** data) {",
           "  DLTensor* t;", "  int64_t n = 1;", "  int32_t i;",
           f"  if (a->type_index != {int(TypeIndex.DLTENSOR_PTR)} && a->type_index != "
           f"{int(TypeIndex.TENSOR)}) return -1;",
           "  t = kiln_any_tensor(a);",
           "  if (t->device.device_type != 1) return -1;",
           "  for (i = t->ndim - 1; i >= 0; --i) {",
           "    if (t->strides != NULL && t->shape[i] != 1 && t->strides[i] != n) return -1;",
           "    n *= t->shape[i];",
           "  }",
           "  *data = (char*)t->data + t->byte_offset;",
           "  return n * ((t->dtype.bits * t->dtype.lanes + 7) / 8);", "}", "",
           f"/* {p}___tvm_main__(inputs..., outputs..., workspace): {p}_run over tensors. */",
           f"KILN_EXPORT int32_t __tvm_ffi_{p}___tvm_main__(void* self, const TVMFFIAny* args, "
           "int32_t num_args, TVMFFIAny* result) {",
           f"  struct {p}_inputs in;", f"  struct {p}_outputs out;",
           f"  struct {p}_workspace_pools pools;", f"  void* data[{n}];", "  int32_t i;",
           "  (void)self;", "  (void)result;",
           f"  if (num_args != {n})",
           f"    return kiln_fail(\"{p}___tvm_main__ takes {len(plan.inputs)} inputs, "
           f"{len(plan.outputs)} outputs and the workspace\", \"\");",
           f"  for (i = 0; i < {n}; ++i) {{",
           "    int64_t got = kiln_arg_bytes(&args[i], &data[i]);",
           "    if (got < 0 || (uint64_t)got < kiln_port_bytes[i])",
           f"      return kiln_fail(\"{p}___tvm_main__: an argument is not a contiguous CPU "
           "tensor of the model's size\", \"\");",
           f"    if (((uintptr_t)data[i]) % {ALIGNMENT} != 0)",
           f"      return kiln_fail(\"{p}___tvm_main__: an argument is not {ALIGNMENT}-byte "
           "aligned\", \"\");", "  }"]
    for k, q in enumerate(plan.inputs):
        out.append(f"  in.{q.c_name} = data[{k}];")
    if not plan.inputs:
        out.append("  in.unused = NULL;")
    for k, q in enumerate(plan.outputs):
        out.append(f"  out.{q.c_name} = data[{len(plan.inputs) + k}];")
    out += [f"  pools.global_workspace = data[{n - 1}];", f"  return {p}_run(&in, &out, &pools);",
            "}", "",
            f"KILN_EXPORT int32_t __tvm_ffi_{p}_get_metadata(void* self, const TVMFFIAny* args, "
            "int32_t num_args, TVMFFIAny* result) {",
            "  (void)self;", "  (void)args;", "  (void)num_args;",
            f"  result->type_index = {int(TypeIndex.RAW_STR)};", "  result->zero_padding = 0;",
            "  result->u.v_c_str = kiln_metadata;", "  return 0;", "}", ""]
    if not system_lib:
        out += _factory(plan)
    return out


def _factory(plan: AotPlan) -> List[str]:
    """`<name>(device)`: the library's own module (a new reference), for a CPU device."""
    return ["extern void* __tvm_ffi__library_ctx;",
            "extern int TVMFFIObjectIncRef(void* obj);", "",
            f"KILN_EXPORT int32_t __tvm_ffi_{plan.mod_name}(void* self, const TVMFFIAny* args, "
            "int32_t num_args, TVMFFIAny* result) {",
            "  (void)self;",
            f"  if (num_args < 1 || args[0].type_index != {int(TypeIndex.DEVICE)} || "
            "((const int32_t*)&args[0].u)[0] != 1)",
            f"    return kiln_fail(\"{plan.mod_name}(device): the AOT executor runs on the CPU; "
            "pass microruntime.cpu()\", \"\");",
            "  if (__tvm_ffi__library_ctx == NULL || TVMFFIObjectIncRef(__tvm_ffi__library_ctx) "
            "!= 0)",
            f"    return kiln_fail(\"{plan.mod_name}(device): the library was not loaded by a "
            "runtime\", \"\");",
            f"  result->type_index = {int(TypeIndex.MODULE)};", "  result->zero_padding = 0;",
            "  result->u.v_ptr = __tvm_ffi__library_ctx;", "  return 0;", "}", ""]


__all__ = ["header_source", "run_source"]
