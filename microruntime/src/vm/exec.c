/* The relax.VMExecutable module: loads Apache TVM 0.27's executable bytes (magic 0x...1E
 * with the memory-scope section, or the older 0x...1D without it; version "0.14"; constants
 * tagged 70/69/65/1/3/5) and validates everything the interpreter relies on, once, so that
 * running needs no checks: every register index against its function's register file (or
 * one of the two special registers), every constant and function index, each function's
 * instruction range, the instruction offsets (each instruction decodes exactly up to the
 * next), jump targets and fall-through inside the function, and the arity of calls to
 * bytecode functions. Its functions: vm_load_executable and vm_profiler_load_executable
 * (a new relax.VirtualMachine). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../params_format.h"
#include "vm.h"

#define MR_ERROR_FILE kMrFileVmExec

static int read_i32(mr_reader_t* r, const char* field, int32_t* out) {
  uint64_t v;
  if (mr_read_le(r, 4, field, &v) != 0) return -1;
  *out = (int32_t)(uint32_t)v;
  return 0;
}

static int read_i64(mr_reader_t* r, const char* field, int64_t* out) {
  uint64_t v;
  if (mr_read_le(r, 8, field, &v) != 0) return -1;
  *out = (int64_t)v;
  return 0;
}

/* A u64 count of items of at least `item` bytes each, that the data left can hold. */
static int read_count(mr_reader_t* r, const char* field, uint64_t item, uint64_t max,
                      uint64_t* out) {
  if (mr_read_le(r, 8, field, out) != 0) return -1;
  if (*out > max || *out > (r->size - r->pos) / (item ? item : 1))
    return MR_READER_BAD(r, field, *out, "exceeds the data or the limit");
  return 0;
}

static int read_name(mr_reader_t* r, const char* field, char** out) {
  const char* s;
  uint64_t len;
  if (mr_read_bytes(r, field, &s, &len) != 0) return -1;
  if (len >= MR_MAX_NAME || memchr(s, 0, (size_t)len))
    return MR_READER_BAD(r, field, len, "is too long or holds a NUL");
  *out = mr_strndup(s, (size_t)len);
  return *out ? 0 : MR_OOM(field);
}

void mr_vm_exec_free(mr_vm_exec_t* e) {
  int64_t i, j;
  if (!e) return;
  for (i = 0; e->funcs && i < e->num_funcs; ++i) {
    free(e->funcs[i].name);
    for (j = 0; e->funcs[i].params && j < e->funcs[i].num_params; ++j) free(e->funcs[i].params[j]);
    free(e->funcs[i].params);
  }
  free(e->funcs);
  for (i = 0; e->consts && i < e->num_consts; ++i) mr_any_clear(&e->consts[i]);
  free(e->consts);
  free(e->instr_offset);
  free(e->instr_data);
  free(e);
}

static int parse_funcs(mr_reader_t* r, mr_vm_exec_t* e) {
  uint64_t n, np, i, j;
  if (read_count(r, "function count", 44, MR_VM_MAX_FUNCS, &n) != 0) return -1;
  e->funcs = (mr_vm_func_t*)calloc(n ? n : 1, sizeof(mr_vm_func_t));
  if (!e->funcs) return MR_OOM("the function table");
  for (i = 0; i < n; ++i) {
    mr_vm_func_t* f = &e->funcs[i];
    e->num_funcs = (int64_t)i + 1;
    if (read_i32(r, "function kind", &f->kind) != 0 || read_name(r, "function name", &f->name) != 0 ||
        read_i64(r, "start_instr", &f->start) != 0 || read_i64(r, "end_instr", &f->end) != 0 ||
        read_i64(r, "num_args", &f->num_args) != 0 ||
        read_i64(r, "register_file_size", &f->num_regs) != 0 ||
        read_count(r, "param name count", 8, MR_VM_MAX_REGISTERS, &np) != 0)
      return -1;
    if (f->kind < 0 || f->kind > 2)
      return MR_READER_FAIL(r, "function %llu ('%s') has kind %d; kinds are 0 (packed), "
                            "1 (bytecode), 2 (TIR)", (unsigned long long)i, f->name, (int)f->kind);
    f->params = (char**)calloc(np ? np : 1, sizeof(char*));
    if (!f->params) return MR_OOM("parameter names");
    for (j = 0; j < np; ++j) {
      f->num_params = (int64_t)j + 1;
      if (read_name(r, "parameter name", &f->params[j]) != 0) return -1;
    }
  }
  return 0;
}

static int parse_consts(mr_reader_t* r, mr_vm_exec_t* e) {
  uint64_t n, i, v, nd, k;
  if (read_count(r, "constant count", 4, MR_VM_MAX_CONSTANTS, &n) != 0) return -1;
  e->consts = (TVMFFIAny*)calloc(n ? n : 1, sizeof(TVMFFIAny));
  if (!e->consts) return MR_OOM("the constant pool");
  e->num_consts = (int64_t)n;
  for (i = 0; i < n; ++i) {
    TVMFFIAny* c = &e->consts[i];
    TVMFFIObject* obj = NULL;
    int32_t tag;
    if (read_i32(r, "constant tag", &tag) != 0) return -1;
    switch (tag) {
      case kTVMFFITensor:
        if (mr_params_read_tensor(r, &obj) != 0) return -1;
        mr_any_set_object(c, obj);
        break;
      case kTVMFFIShape: {
        int64_t* dims;
        if (read_count(r, "shape ndim", 8, MR_MAX_NDIM * 1024, &nd) != 0) return -1;
        dims = (int64_t*)malloc((nd ? nd : 1) * sizeof(int64_t));
        if (!dims) return MR_OOM("a shape constant");
        for (k = 0; k < nd; ++k)
          if (read_i64(r, "shape dim", &dims[k]) != 0) {
            free(dims);
            return -1;
          }
        if (mr_shape_create(dims, (size_t)nd, &obj) != 0) {
          free(dims);
          return -1;
        }
        free(dims);
        mr_any_set_object(c, obj);
        break;
      }
      case kTVMFFIStr: {
        const char* s;
        uint64_t len;
        if (mr_read_bytes(r, "string constant", &s, &len) != 0 ||
            mr_str_create(s, (size_t)len, &obj) != 0)
          return -1;
        mr_any_set_object(c, obj);
        break;
      }
      case kTVMFFIInt:
        if (mr_read_le(r, 8, "int constant", &v) != 0) return -1;
        c->type_index = kTVMFFIInt;
        c->v_int64 = (int64_t)v;
        break;
      case kTVMFFIFloat:
        if (mr_read_le(r, 8, "float constant", &v) != 0) return -1;
        c->type_index = kTVMFFIFloat;
        memcpy(&c->v_float64, &v, 8);
        break;
      case kTVMFFIDataType:
        if (mr_read_le(r, 4, "DataType constant", &v) != 0) return -1;
        c->type_index = kTVMFFIDataType;
        c->v_dtype.code = (uint8_t)(v & 0xFF);
        c->v_dtype.bits = (uint8_t)((v >> 8) & 0xFF);
        c->v_dtype.lanes = (uint16_t)(v >> 16);
        break;
      default:
        return MR_READER_FAIL(r, "constant %llu has tag %d at offset %llu; supported tags are 70 "
                              "(Tensor), 69 (Shape), 65 (Str), 1 (Int), 3 (Float), 5 (DataType) "
                              "as written by TVM 0.22-0.27 (older TVM used other tags)",
                              (unsigned long long)i, (int)tag, (unsigned long long)r->at);
    }
  }
  return 0;
}

static int parse_words(mr_reader_t* r, const char* field, int64_t** out, int64_t* count) {
  uint64_t n, i;
  if (read_count(r, field, 8, (uint64_t)1 << 40, &n) != 0) return -1;
  *out = (int64_t*)malloc((n ? n : 1) * sizeof(int64_t));
  if (!*out) return MR_OOM(field);
  for (i = 0; i < n; ++i)
    if (read_i64(r, field, &(*out)[i]) != 0) return -1;
  *count = (int64_t)n;
  return 0;
}

/* ---- validation ---- */
/* BAD(e, f, pc, fmt, ...): ValueError "VM executable: function '<name>', instruction <pc>:
 * <formatted>" (f NULL: no function). */
#ifdef MR_CONFIG_SMALL
#define BAD(e, f, pc, ...) \
  ((void)sizeof(e), (void)sizeof(f), (void)sizeof(pc), MR_VALUE_ERROR(__VA_ARGS__))
#else
#define BAD bad
static int bad(const mr_vm_exec_t* e, const mr_vm_func_t* f, int64_t pc, const char* fmt, ...)
    MR_PRINTF_LIKE(4, 5);
static int bad(const mr_vm_exec_t* e, const mr_vm_func_t* f, int64_t pc, const char* fmt, ...) {
  char ctx[MR_MAX_NAME + 96];
  va_list ap;
  (void)e;
  if (f)
    snprintf(ctx, sizeof(ctx), "VM executable: function '%s', instruction %lld", f->name,
             (long long)pc);
  else
    snprintf(ctx, sizeof(ctx), "VM executable: instruction %lld", (long long)pc);
  va_start(ap, fmt);
  mr_error_setv_in(kMrErrorValue, ctx, fmt, ap);
  va_end(ap);
  return -1;
}
#endif

/* Every instruction decodes exactly from its offset to the next one. */
static int check_instructions(const mr_vm_exec_t* e) {
  int64_t pc;
  for (pc = 0; pc < e->num_instrs; ++pc) {
    int64_t off = e->instr_offset[pc], next = pc + 1 < e->num_instrs ? e->instr_offset[pc + 1]
                                                                       : e->num_words;
    int64_t len;
    if (off < 0 || off >= e->num_words || next > e->num_words || next <= off)
      return BAD(e, NULL, pc, "offset %lld is outside instr_data (%lld words) or not increasing",
                 (long long)off, (long long)e->num_words);
    switch (e->instr_data[off]) {
      case MR_VM_OP_CALL:
        if (next - off < 4) return BAD(e, NULL, pc, "call is truncated");
        len = e->instr_data[off + 3];
        if (len < 0 || len > MR_VM_MAX_CALL_ARGS)
          return BAD(e, NULL, pc, "call has %lld arguments", (long long)len);
        len += 4;
        break;
      case MR_VM_OP_RET:
      case MR_VM_OP_GOTO:
        len = 2;
        break;
      case MR_VM_OP_IF:
        len = 3;
        break;
      default:
        return BAD(e, NULL, pc, "unknown opcode %lld (1 call, 2 ret, 3 goto, 4 if)",
                   (long long)e->instr_data[off]);
    }
    if (next - off != len)
      return BAD(e, NULL, pc, "is %lld words long but the next instruction starts %lld words "
                 "later", (long long)len, (long long)(next - off));
  }
  return 0;
}

static int check_reg(const mr_vm_exec_t* e, const mr_vm_func_t* f, int64_t pc, int64_t reg,
                     const char* what) {
  if ((reg >= 0 && reg < f->num_regs) || reg == MR_VM_VOID_REG || reg == MR_VM_STATE_REG)
    return 0;
  return BAD(e, f, pc, "%s register %lld is outside the register file (%lld registers)", what,
             (long long)reg, (long long)f->num_regs);
}

static int check_target(const mr_vm_exec_t* e, const mr_vm_func_t* f, int64_t pc, int64_t off,
                        const char* what) {
  int64_t t;
  if (off > f->end || off < -f->end || (t = pc + off) < f->start || t >= f->end)
    return BAD(e, f, pc, "%s offset %lld leaves the function (instructions %lld..%lld)", what,
               (long long)off, (long long)f->start, (long long)f->end - 1);
  return 0;
}

static int check_function(const mr_vm_exec_t* e, const mr_vm_func_t* f) {
  int64_t pc, i;
  if (f->start < 0 || f->end > e->num_instrs || f->start >= f->end)
    return BAD(e, f, f->start, "instruction range %lld..%lld is empty or outside the %lld "
               "instructions", (long long)f->start, (long long)f->end, (long long)e->num_instrs);
  if (f->num_args < 0 || f->num_regs < f->num_args || f->num_regs > MR_VM_MAX_REGISTERS)
    return BAD(e, f, f->start, "has %lld arguments and %lld registers", (long long)f->num_args,
               (long long)f->num_regs);
  if (f->num_params != 0 && f->num_params != f->num_args)
    return BAD(e, f, f->start, "has %lld arguments but %lld parameter names",
               (long long)f->num_args, (long long)f->num_params);
  for (pc = f->start; pc < f->end; ++pc) {
    const int64_t* w = &e->instr_data[e->instr_offset[pc]];
    switch (w[0]) {
      case MR_VM_OP_CALL: {
        int64_t dst = w[1], callee = w[2], n = w[3];
        if (dst != MR_VM_VOID_REG && (dst < 0 || dst >= f->num_regs))
          return BAD(e, f, pc, "call writes register %lld outside the register file (%lld "
                     "registers)", (long long)dst, (long long)f->num_regs);
        if (callee < 0 || callee >= e->num_funcs)
          return BAD(e, f, pc, "calls function index %lld of %lld", (long long)callee,
                     (long long)e->num_funcs);
        if (e->funcs[callee].kind == MR_VM_FUNC_BYTECODE && n != e->funcs[callee].num_args)
          return BAD(e, f, pc, "calls '%s' with %lld arguments; it takes %lld",
                     e->funcs[callee].name, (long long)n, (long long)e->funcs[callee].num_args);
        for (i = 0; i < n; ++i) {
          int64_t a = w[4 + i], v = mr_vm_arg_value(a);
          switch (mr_vm_arg_kind(a)) {
            case MR_VM_ARG_REG:
              if (check_reg(e, f, pc, v, "argument") != 0) return -1;
              break;
            case MR_VM_ARG_IMM:
              break;
            case MR_VM_ARG_CONST:
              if (v < 0 || v >= e->num_consts)
                return BAD(e, f, pc, "argument %lld names constant %lld of %lld", (long long)i,
                           (long long)v, (long long)e->num_consts);
              break;
            case MR_VM_ARG_FUNC:
              if (v < 0 || v >= e->num_funcs)
                return BAD(e, f, pc, "argument %lld names function %lld of %lld", (long long)i,
                           (long long)v, (long long)e->num_funcs);
              break;
            default:
              return BAD(e, f, pc, "argument %lld has unknown kind %d", (long long)i,
                         mr_vm_arg_kind(a));
          }
        }
        if (pc + 1 >= f->end) return BAD(e, f, pc, "the function ends without a return");
        break;
      }
      case MR_VM_OP_RET:
        if (check_reg(e, f, pc, w[1], "returned") != 0) return -1;
        break;
      case MR_VM_OP_GOTO:
        if (w[1] == 0) return BAD(e, f, pc, "goto with offset 0 never ends");
        if (check_target(e, f, pc, w[1], "goto") != 0) return -1;
        break;
      default: /* MR_VM_OP_IF */
        if (w[1] == MR_VM_STATE_REG || check_reg(e, f, pc, w[1], "condition") != 0)
          return w[1] == MR_VM_STATE_REG ? BAD(e, f, pc, "the condition is the VM register") : -1;
        if (w[2] <= 1) return BAD(e, f, pc, "if has false offset %lld (must be > 1)",
                                  (long long)w[2]);
        if (check_target(e, f, pc, w[2], "if") != 0) return -1;
        if (pc + 1 >= f->end) return BAD(e, f, pc, "the function ends without a return");
        break;
    }
  }
  return 0;
}

static int validate(const mr_vm_exec_t* e) {
  int64_t i, j;
  if (check_instructions(e) != 0) return -1;
  for (i = 0; i < e->num_funcs; ++i) {
    const mr_vm_func_t* f = &e->funcs[i];
    for (j = 0; j < i; ++j)
      if (strcmp(e->funcs[j].name, f->name) == 0)
        return MR_VALUE_ERROR("VM executable: function '%s' appears twice in the function "
                              "table", f->name);
    if (f->kind == MR_VM_FUNC_TIR)
      return MR_VALUE_ERROR("VM executable: function '%s' is a compiled TIR function (kind 2), "
                            "which the microruntime does not support", f->name);
    if (f->kind == MR_VM_FUNC_BYTECODE && check_function(e, f) != 0) return -1;
  }
  return 0;
}

int mr_vm_exec_parse(const char* data, size_t size, mr_vm_exec_t** out) {
  mr_reader_t r = {NULL, 0, 0, 0, "VM executable"};
  mr_vm_exec_t* e;
  uint64_t magic, n, i;
  const char* version;
  uint64_t vlen;
  r.p = (const unsigned char*)data;
  r.size = size;
  if (!data && size) return MR_VALUE_ERROR("VM executable: data is NULL");
  if (mr_read_le(&r, 8, "magic", &magic) != 0) return -1;
  if (magic != MR_VM_MAGIC && magic != MR_VM_MAGIC_NO_SCOPE)
    return MR_READER_FAIL(&r, "magic 0x%llX is not a Relax VM executable's (0x%llX, or 0x%llX "
                          "before TVM 0.23)", (unsigned long long)magic,
                          (unsigned long long)MR_VM_MAGIC,
                          (unsigned long long)MR_VM_MAGIC_NO_SCOPE);
  if (mr_read_bytes(&r, "version", &version, &vlen) != 0) return -1;
  if (vlen != strlen(MR_VM_VERSION) || memcmp(version, MR_VM_VERSION, (size_t)vlen) != 0)
    return MR_READER_FAIL(&r, "version '%.*s' is not supported (only '%s')",
                          (int)(vlen > 32 ? 32 : vlen), version, MR_VM_VERSION);
  e = (mr_vm_exec_t*)calloc(1, sizeof(*e));
  if (!e) return MR_OOM("a VM executable");
  if (parse_funcs(&r, e) != 0) goto fail;
  if (magic == MR_VM_MAGIC) {
    if (read_count(&r, "memory scope count", 16, MR_VM_MAX_CONSTANTS, &n) != 0) goto fail;
    for (i = 0; i < n; ++i) {
      const char* s;
      uint64_t len;
      int64_t idx;
      if (read_i64(&r, "memory scope constant", &idx) != 0 ||
          mr_read_bytes(&r, "memory scope", &s, &len) != 0)
        goto fail;
    }
  }
  if (parse_consts(&r, e) != 0 || parse_words(&r, "instr_offset", &e->instr_offset,
                                              &e->num_instrs) != 0 ||
      parse_words(&r, "instr_data", &e->instr_data, &e->num_words) != 0 ||
      mr_reader_end(&r) != 0 || validate(e) != 0)
    goto fail;
  *out = e;
  return 0;
fail:
  mr_vm_exec_free(e);
  return -1;
}

int64_t mr_vm_exec_find(const mr_vm_exec_t* e, const char* name) {
  int64_t i;
  for (i = 0; i < e->num_funcs; ++i)
    if (strcmp(e->funcs[i].name, name) == 0) return i;
  return -1;
}

/* ---- the module ---- */
static int exec_get_function(void* self, const char* name, TVMFFIObject** out);

mr_vm_exec_t* mr_vm_exec_of(TVMFFIObject* module) {
  mr_module_obj_t* m = mr_module_cast(module);
  if (!m || m->get_function != exec_get_function) {
    MR_RAISE(kMrErrorType, "not a relax.VMExecutable module");
    return NULL;
  }
  return (mr_vm_exec_t*)m->self;
}

typedef struct {
  TVMFFIObject* module;
  int profile;
} exec_fn_t;

static int call_load(void* self, const TVMFFIAny* a, int32_t n, TVMFFIAny* out) {
  exec_fn_t* f = (exec_fn_t*)self;
  TVMFFIObject* vm;
  (void)a, (void)n;
  if (mr_vm_new(f->module, f->profile, &vm) != 0) return -1;
  mr_any_set_object(out, vm);
  return 0;
}

static void free_fn(void* self) {
  mr_object_release(((exec_fn_t*)self)->module);
  free(self);
}

static int exec_get_function(void* self, const char* name, TVMFFIObject** out) {
  mr_vm_exec_t* e = (mr_vm_exec_t*)self;
  exec_fn_t* f;
  int profile = strcmp(name, "vm_profiler_load_executable") == 0;
  *out = NULL;
  if (!profile && strcmp(name, "vm_load_executable") != 0) return 0;
  if (!(f = (exec_fn_t*)malloc(sizeof(*f)))) return MR_OOM("a function");
  f->module = e->module;
  f->profile = profile;
  mr_object_retain(e->module);
  if (mr_function_create_closure(f, call_load, free_fn, out) != 0) {
    free_fn(f);
    return -1;
  }
  return 0;
}

static void exec_free(void* self) { mr_vm_exec_free((mr_vm_exec_t*)self); }

static int exec_load(const char* data, size_t size, TVMFFIObject** out_module) {
  mr_vm_exec_t* e;
  if (mr_vm_exec_parse(data, size, &e) != 0) return -1;
  if (mr_module_create("relax.VMExecutable", e, exec_get_function, exec_free, &e->module) != 0) {
    mr_vm_exec_free(e);
    return -1;
  }
  *out_module = e->module;
  return 0;
}

int mr_vm_executable_load(const void* data, size_t size, TVMFFIObject** out_executable) {
  if (mr_vm_register() != 0) return -1;
  return exec_load((const char*)data, size, out_executable);
}

int mr_vm_register(void) {
  /* The loader goes in last: once it is in the table, everything is registered. */
  if (mr_module_loader_find("relax.VMExecutable") == exec_load) return 0;
  if (mr_vm_register_builtins() != 0) return -1;
  return mr_module_loader_register("relax.VMExecutable", exec_load);
}

int mr_vm_executable_open(const char* path, TVMFFIObject** out_executable) {
  TVMFFIObject* m;
  const char* kind;
  if (mr_vm_register() != 0) return -1;
  if ((path && *path ? mr_module_load(path, &m) : mr_module_system_lib("", &m)) != 0) return -1;
  kind = mr_module_type_key(m);
  if (strcmp(kind, "relax.VMExecutable") != 0) {
    MR_VM_ERROR("'%s' holds no Relax VM executable (its root module is a '%s' module)",
                path && *path ? path : "the system library", kind);
    mr_object_release(m);
    return -1;
  }
  *out_executable = m;
  return 0;
}
