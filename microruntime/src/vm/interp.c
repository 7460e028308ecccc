/* The interpreter: a VM over a validated executable. Each call of a bytecode function gets a
 * frame of registers (TVMFFIAny values the registers own: overwriting a register releases
 * its old value, leaving the function releases them all); Call passes borrowed views of
 * registers, immediates (Int), constants and function-pool entries; a call to a bytecode
 * function runs it directly (TVM passes it the VM pointer first); Ret moves the register
 * into the caller's result. Nothing is checked while running that the loader checked. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vm.h"

#define MR_ERROR_FILE kMrFileVmInterp

#ifndef MR_CONFIG_SMALL
int mr_vm_error(const char* fmt, ...) {
  char buf[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof(buf), fmt, ap);
  va_end(ap);
  return mr_error_set("VMError", buf);
}
#endif

void mr_vm_error_keep(mr_vm_kept_error_t* k, int failed) {
  const char *kind = mr_last_error_kind(), *message = mr_last_error();
  k->kind = k->message = NULL;
  k->serial = mr_last_error_serial();
  if (!failed || mr_last_error_kind_id() == kMrErrorNone) return;
  k->kind = mr_strndup(kind, strlen(kind));
  k->message = mr_strndup(message, strlen(message));
}

void mr_vm_error_restore(mr_vm_kept_error_t* k) {
  if (k->kind && k->message &&
      (mr_last_error_serial() != k->serial || mr_last_error_kind_id() == kMrErrorNone))
    (void)mr_error_set(k->kind, k->message);
  free(k->kind);
  free(k->message);
  k->kind = k->message = NULL;
}

/* ---- closures ---- */
static void closure_deleter(void* self, int flags) {
  mr_vm_closure_t* c = (mr_vm_closure_t*)self;
  int32_t i;
  if (flags & kTVMFFIObjectDeleterFlagBitMaskStrong) {
    for (i = 0; i < c->num_bound; ++i) mr_any_clear(&c->bound[i]);
    c->num_bound = 0;
  }
  if (flags & kTVMFFIObjectDeleterFlagBitMaskWeak) free(self);
}

int mr_vm_closure_new(int64_t fidx, const TVMFFIAny* bound, int32_t nbound,
                      TVMFFIObject** out) {
  mr_vm_closure_t* c;
  int32_t i;
  if (nbound < 0 || nbound > MR_VM_MAX_CALL_ARGS)
    return MR_VALUE_ERROR("a closure binds %d arguments", (int)nbound);
  c = (mr_vm_closure_t*)mr_object_alloc(sizeof(*c) + (size_t)nbound * sizeof(TVMFFIAny),
                                        MR_VM_CLOSURE_TYPE, closure_deleter, "a VM closure");
  if (!c) return -1;
  c->func_index = fidx;
  for (i = 0; i < nbound; ++i) {
    if (mr_any_copy(&bound[i], &c->bound[i]) != 0) {
      mr_object_release(&c->header);
      return -1;
    }
    c->num_bound = i + 1;
  }
  *out = &c->header;
  return 0;
}

/* ---- the VM module object ---- */
static void vm_free(void* self) {
  mr_vm_t* vm = (mr_vm_t*)self;
  int64_t i;
  size_t k;
  int d;
  if (!vm) return;
  if (vm->exec) {
    for (i = 0; vm->consts && i < vm->exec->num_consts; ++i) mr_any_clear(&vm->consts[i]);
    for (i = 0; vm->func_pool && i < vm->exec->num_funcs; ++i) mr_any_clear(&vm->func_pool[i]);
    for (i = 0; vm->inputs && i < vm->exec->num_funcs; ++i) mr_object_release(vm->inputs[i]);
    for (i = 0; vm->outputs && i < vm->exec->num_funcs; ++i) mr_any_clear(&vm->outputs[i]);
  }
  free(vm->consts);
  free(vm->func_pool);
  free(vm->inputs);
  free(vm->outputs);
  for (k = 0; k < vm->num_saved; ++k) {
    free(vm->saved_names[k]);
    mr_object_release(vm->saved[k]);
  }
  free(vm->saved_names);
  free(vm->saved);
  for (d = 0; d < vm->num_devices; ++d) mr_vm_pool_release(vm->pools[d]);
  mr_object_release(vm->instrument);
  mr_object_release(vm->exec_mod);
  free(vm->prof);
  vm->magic = 0;
  free(vm);
}

int mr_vm_module_get_function(void* self, const char* name, TVMFFIObject** out);

mr_vm_t* mr_vm_of(TVMFFIObject* module) {
  mr_module_obj_t* m = mr_module_cast(module);
  if (!m || m->get_function != mr_vm_module_get_function) {
    MR_RAISE(kMrErrorType, "not a relax.VirtualMachine module");
    return NULL;
  }
  return (mr_vm_t*)m->self;
}

int mr_vm_new(TVMFFIObject* exec_mod, int profile, TVMFFIObject** out) {
  mr_vm_exec_t* e = mr_vm_exec_of(exec_mod);
  mr_vm_t* vm;
  if (!e) return -1;
  if (!(vm = (mr_vm_t*)calloc(1, sizeof(*vm)))) return MR_OOM("a VM");
  vm->magic = MR_VM_STATE_MAGIC;
  vm->exec = e;
  vm->exec_mod = exec_mod;
  mr_object_retain(exec_mod);
  vm->profiling = profile ? 0 : -1; /* -1: profiling not available */
  vm->inputs = (TVMFFIObject**)calloc((size_t)e->num_funcs + 1, sizeof(TVMFFIObject*));
  vm->outputs = (TVMFFIAny*)calloc((size_t)e->num_funcs + 1, sizeof(TVMFFIAny));
  if (!vm->inputs || !vm->outputs) {
    vm_free(vm);
    return MR_OOM("a VM");
  }
  if (mr_module_create("relax.VirtualMachine", vm, mr_vm_module_get_function, vm_free,
                       &vm->module) != 0) {
    vm_free(vm);
    return -1;
  }
  *out = vm->module;
  return 0;
}

/* The function a kind-0 name resolves to: the imports of the executable first, then the
 * global registry. */
static int resolve(mr_vm_t* vm, const char* name, TVMFFIObject** out) {
  TVMFFIObject* f = NULL;
  TVMFFIByteArray n;
  int64_t i, k = mr_module_num_imports(vm->exec_mod);
  for (i = 0; i < k && !f; ++i)
    if (mr_module_get_function(mr_module_import_at(vm->exec_mod, i), name, 1, &f) != 0)
      return -1;
  if (!f) {
    n.data = name;
    n.size = strlen(name);
    if (TVMFFIFunctionGetGlobal(&n, (TVMFFIObjectHandle*)&f) != 0) return -1;
  }
  if (!f)
    return MR_VM_ERROR("cannot find function '%s' in the kernel library of the VM executable "
                       "(%lld imported modules) nor among the global functions", name,
                       (long long)k);
  *out = f;
  return 0;
}

int mr_vm_init(mr_vm_t* vm, const DLDevice* devs, const int* kinds, int n) {
  const mr_vm_exec_t* e = vm->exec;
  int64_t i;
  int d;
  if (vm->initialized) return MR_VM_ERROR("vm_initialization: the VM is already initialised");
  if (n < 1 || n > MR_VM_MAX_DEVICES)
    return MR_VALUE_ERROR("vm_initialization: %d devices (1 to %d)", n, MR_VM_MAX_DEVICES);
  for (d = 0; d < n; ++d) {
    if (kinds[d] != MR_VM_ALLOC_NAIVE && kinds[d] != MR_VM_ALLOC_POOLED)
      return MR_VALUE_ERROR("vm_initialization: allocator kind %d (1 naive, 2 pooled)",
                            kinds[d]);
    if (mr_vm_pool_create(devs[d], kinds[d] == MR_VM_ALLOC_POOLED, &vm->pools[d]) != 0)
      return -1;
    vm->devices[d] = devs[d];
    vm->num_devices = d + 1;
  }
  vm->consts = (TVMFFIAny*)calloc((size_t)e->num_consts + 1, sizeof(TVMFFIAny));
  vm->func_pool = (TVMFFIAny*)calloc((size_t)e->num_funcs + 1, sizeof(TVMFFIAny));
  if (!vm->consts || !vm->func_pool) return MR_OOM("the VM's pools");
  for (i = 0; i < e->num_consts; ++i)
    if (mr_vm_arg_to_device(vm, &e->consts[i], &vm->consts[i]) != 0) return -1;
  for (i = 0; i < e->num_funcs; ++i) {
    TVMFFIObject* f = NULL;
    if (e->funcs[i].kind == MR_VM_FUNC_PACKED) {
      if (resolve(vm, e->funcs[i].name, &f) != 0) return -1;
    } else if (mr_vm_closure_new(i, NULL, 0, &f) != 0) {
      return -1;
    }
    mr_any_set_object(&vm->func_pool[i], f);
  }
  vm->initialized = 1;
  return 0;
}

mr_vm_t* mr_vm_from_arg(const TVMFFIAny* arg, const char* func) {
  mr_vm_t* vm = arg->type_index == kTVMFFIOpaquePtr ? (mr_vm_t*)arg->v_ptr : NULL;
  if (!vm || vm->magic != MR_VM_STATE_MAGIC) {
    MR_RAISE(kMrErrorType, "%s: the first argument must be the VM (register %%vm)", func);
    return NULL;
  }
  return vm;
}

int mr_vm_arg_to_device(mr_vm_t* vm, const TVMFFIAny* in, TVMFFIAny* out) {
  const DLTensor* t = NULL;
  TVMFFIObject* copy;
  DLDevice dev = vm->devices[0];
  if (in->type_index == kTVMFFITensor) t = mr_tensor_dl(in->v_obj);
  if (in->type_index == kTVMFFIDLTensorPtr) t = (const DLTensor*)in->v_ptr;
  if (!t || (in->type_index == kTVMFFITensor && t->device.device_type == dev.device_type &&
             t->device.device_id == dev.device_id))
    return mr_any_copy(in, out);
  if (mr_tensor_create(t->ndim, t->shape, t->dtype, dev, &copy) != 0) return -1;
  if (mr_tensor_copy(t, mr_tensor_dl(copy), NULL) != 0) {
    mr_object_release(copy);
    return -1;
  }
  mr_any_set_object(out, copy);
  return 0;
}

/* ---- running ---- */
static void describe_args(const TVMFFIAny* a, int32_t n, char* buf, size_t size) {
  size_t len = 0;
  int32_t i, k;
  buf[0] = '\0';
  for (i = 0; i < n && len + 40 < size; ++i) {
    const DLTensor* t = a[i].type_index == kTVMFFITensor ? mr_tensor_dl(a[i].v_obj)
                        : a[i].type_index == kTVMFFIDLTensorPtr ? (const DLTensor*)a[i].v_ptr
                                                                : NULL;
    char dt[32];
    if (!t) continue;
    (void)mr_dtype_format(t->dtype, dt, sizeof(dt));
    len += (size_t)snprintf(buf + len, size - len, "%s%s[", len ? ", " : "", dt);
    for (k = 0; k < t->ndim && len + 24 < size; ++k)
      len += (size_t)snprintf(buf + len, size - len, "%s%lld", k ? ", " : "",
                              (long long)t->shape[k]);
    if (len + 2 < size) len += (size_t)snprintf(buf + len, size - len, "]");
  }
}

static int sync_devices(mr_vm_t* vm) {
  int d;
  for (d = 0; d < vm->num_devices; ++d)
    if (vm->devices[d].device_type != kDLCPU &&
        mr_device_stream_sync(vm->devices[d], TVMFFIEnvGetStream(vm->devices[d].device_type,
                                                                 vm->devices[d].device_id)) != 0)
      return -1;
  return 0;
}

/* Runs the callee of a Call: a bytecode function directly, anything else through its Function
 * (profiled when profiling: kernels, not the vm.builtin.* functions). */
static int call_callee(mr_vm_t* vm, int64_t fidx, const TVMFFIAny* args, int32_t n,
                       TVMFFIAny* ret) {
  const mr_vm_func_t* f = &vm->exec->funcs[fidx];
  int64_t t0;
  int status;
  if (f->kind == MR_VM_FUNC_BYTECODE) return mr_vm_invoke(vm, fidx, args, n, ret);
  if (vm->profiling <= 0 || strncmp(f->name, "vm.builtin.", 11) == 0)
    return mr_function_call(vm->func_pool[fidx].v_obj, (TVMFFIAny*)args, n, ret);
  if (sync_devices(vm) != 0) return -1;
  t0 = mr_now_ns();
  status = mr_function_call(vm->func_pool[fidx].v_obj, (TVMFFIAny*)args, n, ret);
  if (status == 0 && sync_devices(vm) != 0) status = -1;
  if (status == 0 &&
      mr_grow(&vm->prof, &vm->cap_prof, vm->num_prof, sizeof(mr_vm_prof_t), "profile") == 0) {
    mr_vm_prof_t* p = &vm->prof[vm->num_prof++];
    p->func_index = fidx;
    p->ns = mr_now_ns() - t0;
    describe_args(args, n, p->shapes, sizeof(p->shapes));
  }
  return status;
}

/* The instrument around a call: instrument(func, name, before, ret, *args); a return of 1
 * (SKIP_RUN) before the call skips it. */
static int call_instrumented(mr_vm_t* vm, int64_t fidx, const TVMFFIAny* args, int32_t n,
                             TVMFFIAny* ret) {
  TVMFFIAny* a = (TVMFFIAny*)calloc((size_t)n + 4, sizeof(TVMFFIAny));
  TVMFFIAny rv;
  TVMFFIObject* name = NULL;
  const char* fname = vm->exec->funcs[fidx].name;
  int status = -1, skip;
  if (!a) return MR_OOM("instrument arguments");
  if (mr_str_create(fname, strlen(fname), &name) != 0) goto done;
  a[0] = vm->func_pool[fidx];
  mr_any_set_object(&a[1], name);
  a[2].type_index = kTVMFFIBool;
  a[2].v_int64 = 1;
  if (n) memcpy(a + 4, args, (size_t)n * sizeof(TVMFFIAny));
  memset(&rv, 0, sizeof(rv));
  if (mr_function_call(vm->instrument, a, n + 4, &rv) != 0) goto done;
  skip = (rv.type_index == kTVMFFIInt || rv.type_index == kTVMFFIBool) && rv.v_int64 == 1;
  mr_any_clear(&rv);
  if (skip) {
    status = 0;
    goto done;
  }
  if (call_callee(vm, fidx, args, n, ret) != 0) goto done;
  a[2].v_int64 = 0;
  a[3] = *ret;
  if (mr_function_call(vm->instrument, a, n + 4, &rv) != 0) {
    mr_any_clear(ret);
    goto done;
  }
  mr_any_clear(&rv);
  status = 0;
done:
  mr_object_release(name);
  free(a);
  return status;
}

#define MR_VM_LOCAL_REGS 32
#define MR_VM_LOCAL_ARGS 16

/* Instructions that one call from outside the VM may run, the calls it makes included; more
 * is a VMError. 0 (the default): no limit. The fuzzer's build sets one, so that bytecode
 * that loops forever ends. */
#ifndef MR_VM_MAX_STEPS
#define MR_VM_MAX_STEPS 0
#endif
#if MR_VM_MAX_STEPS > 0
static MR_THREAD_LOCAL int64_t g_steps;
#endif

int mr_vm_invoke(mr_vm_t* vm, int64_t fidx, const TVMFFIAny* args, int32_t nargs,
                 TVMFFIAny* result) {
  const mr_vm_exec_t* e = vm->exec;
  const mr_vm_func_t* f = &e->funcs[fidx];
  const int64_t* data = e->instr_data;
  const int64_t* offs = e->instr_offset;
  TVMFFIAny local_regs[MR_VM_LOCAL_REGS], local_args[MR_VM_LOCAL_ARGS];
  TVMFFIAny *regs = local_regs, *cargs = local_args, vm_arg;
  int64_t pc = f->start, i, nregs = f->num_regs;
  int32_t cap_args = MR_VM_LOCAL_ARGS;
  int status = -1;
  mr_vm_kept_error_t kept;
  if (!vm->initialized)
    return MR_VM_ERROR("the VM is not initialised (call vm_initialization with its devices)");
  if (nargs != f->num_args)
    return MR_VALUE_ERROR("function '%s' takes %lld arguments, %d were given", f->name,
                          (long long)f->num_args, (int)nargs);
  if (vm->depth >= MR_VM_MAX_DEPTH)
    return MR_VM_ERROR("calls nest deeper than %d frames (in '%s')", MR_VM_MAX_DEPTH, f->name);
  if (vm->live_regs + nregs > MR_VM_MAX_LIVE_REGISTERS)
    return MR_VM_ERROR("the frames of this call would hold more than %d registers (calling '%s' "
                       "with %lld registers at depth %d)", MR_VM_MAX_LIVE_REGISTERS, f->name,
                       (long long)nregs, vm->depth);
  if (nregs > MR_VM_LOCAL_REGS && !(regs = (TVMFFIAny*)malloc((size_t)nregs * sizeof(TVMFFIAny))))
    return MR_OOM("registers");
  memset(regs, 0, (size_t)nregs * sizeof(TVMFFIAny));
  memset(&vm_arg, 0, sizeof(vm_arg));
  vm_arg.type_index = kTVMFFIOpaquePtr;
  vm_arg.v_ptr = vm;
#if MR_VM_MAX_STEPS > 0
  if (vm->depth == 0) g_steps = 0;
#endif
  ++vm->depth;
  vm->live_regs += nregs;
  for (i = 0; i < nargs; ++i)
    if (mr_any_copy(&args[i], &regs[i]) != 0) goto done;
  for (;;) {
    const int64_t* w = data + offs[pc];
#if MR_VM_MAX_STEPS > 0
    if (++g_steps > MR_VM_MAX_STEPS) {
      MR_VM_ERROR("function '%s': more than %lld instructions run (MR_VM_MAX_STEPS)", f->name,
                  (long long)MR_VM_MAX_STEPS);
      goto done;
    }
#endif
    switch (w[0]) {
      case MR_VM_OP_CALL: {
        int32_t n = (int32_t)w[3], k;
        TVMFFIAny ret;
        if (n > cap_args) {
          TVMFFIAny* grown = (TVMFFIAny*)malloc((size_t)n * sizeof(TVMFFIAny));
          if (!grown) {
            MR_OOM("call arguments");
            goto done;
          }
          if (cargs != local_args) free(cargs);
          cargs = grown;
          cap_args = n;
        }
        for (k = 0; k < n; ++k) {
          int64_t a = w[4 + k], v = mr_vm_arg_value(a);
          TVMFFIAny* c = &cargs[k];
          switch (mr_vm_arg_kind(a)) {
            case MR_VM_ARG_REG:
              if (v < MR_VM_SPECIAL_REG) {
                *c = regs[v];
              } else if (v == MR_VM_STATE_REG) {
                *c = vm_arg;
              } else {
                memset(c, 0, sizeof(*c));
              }
              break;
            case MR_VM_ARG_IMM:
              c->type_index = kTVMFFIInt;
              c->zero_padding = 0;
              c->v_int64 = v;
              break;
            case MR_VM_ARG_CONST:
              *c = vm->consts[v];
              break;
            default:
              *c = vm->func_pool[v];
              break;
          }
        }
        memset(&ret, 0, sizeof(ret));
        if ((vm->instrument ? call_instrumented(vm, w[2], cargs, n, &ret)
                            : call_callee(vm, w[2], cargs, n, &ret)) != 0)
          goto done;
        if (w[1] < MR_VM_SPECIAL_REG) {
          mr_any_clear(&regs[w[1]]);
          regs[w[1]] = ret;
        } else {
          mr_any_clear(&ret);
        }
        ++pc;
        break;
      }
      case MR_VM_OP_RET:
        if (w[1] < MR_VM_SPECIAL_REG) {
          *result = regs[w[1]];
          memset(&regs[w[1]], 0, sizeof(TVMFFIAny));
        } else if (w[1] == MR_VM_STATE_REG) {
          *result = vm_arg;
        }
        status = 0;
        goto done;
      case MR_VM_OP_GOTO:
        pc += w[1];
        break;
      default: { /* MR_VM_OP_IF */
        const TVMFFIAny* c = w[1] < MR_VM_SPECIAL_REG ? &regs[w[1]] : NULL;
        int64_t cond;
        if (!c || c->type_index == kTVMFFINone) {
          cond = 0;
        } else if (c->type_index == kTVMFFIInt || c->type_index == kTVMFFIBool) {
          cond = c->v_int64;
        } else {
          MR_VM_ERROR("function '%s', instruction %lld: the condition of if is a %s, not an "
                      "int or bool (use vm.builtin.read_if_cond)", f->name, (long long)pc,
                      mr_type_index_name(c->type_index));
          goto done;
        }
        pc += cond != 0 ? 1 : w[2];
        break;
      }
    }
  }
done:
  --vm->depth;
  vm->live_regs -= nregs;
  mr_vm_error_keep(&kept, status != 0);
  for (i = 0; i < nregs; ++i) mr_any_clear(&regs[i]);
  mr_vm_error_restore(&kept);
  if (regs != local_regs) free(regs);
  if (cargs != local_args) free(cargs);
  return status;
}

/* Whether `a` is a tensor (or an array holding one, at any depth) that is not on `dev`. */
static int off_device(const TVMFFIAny* a, DLDevice dev, int depth) {
  const DLTensor* t = NULL;
  const TVMFFISeqCell* s;
  int64_t i;
  if (a->type_index == kTVMFFITensor) t = mr_tensor_dl(a->v_obj);
  if (a->type_index == kTVMFFIDLTensorPtr) t = (const DLTensor*)a->v_ptr;
  if (t) return t->device.device_type != dev.device_type || t->device.device_id != dev.device_id;
  if (a->type_index != kTVMFFIArray || depth > MR_VM_MAX_DEPTH) return 0;
  s = mr_array_view(a->v_obj);
  for (i = 0; s && i < s->size; ++i)
    if (off_device(&((const TVMFFIAny*)s->data)[i], dev, depth + 1)) return 1;
  return 0;
}

/* `in` with its tensors off the first device copied there (arrays rebuilt), owned. */
static int move_value(mr_vm_t* vm, const TVMFFIAny* in, TVMFFIAny* out, int depth) {
  const TVMFFISeqCell* s;
  TVMFFIAny* items;
  TVMFFIObject* arr = NULL;
  int64_t i;
  int status = 0;
  mr_vm_kept_error_t kept;
  if (!off_device(in, vm->devices[0], depth)) return mr_any_copy(in, out);
  if (in->type_index != kTVMFFIArray) return mr_vm_arg_to_device(vm, in, out);
  s = mr_array_view(in->v_obj);
  if (!(items = (TVMFFIAny*)calloc((size_t)s->size + 1, sizeof(TVMFFIAny))))
    return MR_OOM("arguments");
  for (i = 0; i < s->size && status == 0; ++i)
    status = move_value(vm, &((const TVMFFIAny*)s->data)[i], &items[i], depth + 1);
  if (status == 0) status = mr_array_create(items, s->size, &arr);
  mr_vm_error_keep(&kept, status != 0);
  for (i = 0; i < s->size; ++i) mr_any_clear(&items[i]);
  mr_vm_error_restore(&kept);
  free(items);
  if (status == 0) mr_any_set_object(out, arr);
  return status;
}

int mr_vm_invoke_entry(mr_vm_t* vm, int64_t fidx, const TVMFFIAny* args, int32_t nargs,
                       TVMFFIAny* result) {
  TVMFFIAny local[MR_VM_LOCAL_ARGS], *moved = local;
  int32_t i, k = 0;
  int status = 0;
  mr_vm_kept_error_t kept;
  if (!vm->initialized || nargs < 0) return mr_vm_invoke(vm, fidx, args, nargs, result);
  for (i = 0; i < nargs && !k; ++i) k = off_device(&args[i], vm->devices[0], 0);
  if (!k) return mr_vm_invoke(vm, fidx, args, nargs, result);
  if (nargs > MR_VM_LOCAL_ARGS &&
      !(moved = (TVMFFIAny*)malloc((size_t)nargs * sizeof(TVMFFIAny))))
    return MR_OOM("arguments");
  memset(moved, 0, (size_t)nargs * sizeof(TVMFFIAny));
  for (i = 0; i < nargs && status == 0; ++i) status = move_value(vm, &args[i], &moved[i], 0);
  if (status == 0) status = mr_vm_invoke(vm, fidx, moved, nargs, result);
  mr_vm_error_keep(&kept, status != 0);
  for (i = 0; i < nargs; ++i) mr_any_clear(&moved[i]);
  mr_vm_error_restore(&kept);
  if (moved != local) free(moved);
  return status;
}

int mr_vm_invoke_value(mr_vm_t* vm, const TVMFFIAny* callee, const TVMFFIAny* args,
                       int32_t nargs, TVMFFIAny* result) {
  const mr_vm_closure_t* c;
  TVMFFIAny local[MR_VM_LOCAL_ARGS], *all = local;
  int32_t total;
  int status;
  if (callee->type_index == kTVMFFIFunction)
    return mr_function_call(callee->v_obj, (TVMFFIAny*)args, nargs, result);
  if (callee->type_index != MR_VM_CLOSURE_TYPE)
    return MR_RAISE(kMrErrorType, "invoke_closure: expected a VM closure or a Function, "
                         "got a %s", mr_type_index_name(callee->type_index));
  c = (const mr_vm_closure_t*)callee->v_obj;
  if (c->func_index < 0 || c->func_index >= vm->exec->num_funcs ||
      vm->exec->funcs[c->func_index].kind != MR_VM_FUNC_BYTECODE)
    return MR_VM_ERROR("invoke_closure: the closure is not of this VM's executable");
  if (c->num_bound == 0) {
    status = mr_vm_invoke(vm, c->func_index, args, nargs, result);
  } else {
    total = nargs + c->num_bound;
    if (total > MR_VM_LOCAL_ARGS &&
        !(all = (TVMFFIAny*)malloc((size_t)total * sizeof(TVMFFIAny))))
      return MR_OOM("closure arguments");
    if (nargs) memcpy(all, args, (size_t)nargs * sizeof(TVMFFIAny));
    memcpy(all + nargs, c->bound, (size_t)c->num_bound * sizeof(TVMFFIAny));
    status = mr_vm_invoke(vm, c->func_index, all, total, result);
    if (all != local) free(all);
  }
  if (status == 0 && c->discard_result) mr_any_clear(result);
  return status;
}
