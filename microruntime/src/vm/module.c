/* The relax.VirtualMachine module: by name, each function of the executable, each saved
 * closure and (once mr_vm_register_extras() ran) TVM's packed-function methods of extras.c;
 * and the mr_vm_* C API (vm.h). Each Function holds the module. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vm.h"

#define MR_ERROR_FILE kMrFileVmModule

/* The packed-function methods, set by mr_vm_register_extras() (extras.c); NULL until then. */
const mr_vm_method_t* mr_vm_extra_methods;

typedef struct {
  TVMFFIObject* module;
  mr_vm_method_fn fn;  /* a method, or NULL */
  int64_t fidx;        /* a bytecode function (fn NULL, closure NULL) */
  TVMFFIObject* closure; /* a saved closure */
} bound_t;

static int call_bound(void* self, const TVMFFIAny* a, int32_t n, TVMFFIAny* out) {
  bound_t* b = (bound_t*)self;
  mr_vm_t* vm = (mr_vm_t*)mr_module_cast(b->module)->self;
  TVMFFIAny callee;
  if (b->fn) return b->fn(vm, a, n, out);
  if (b->closure) {
    mr_any_set_object(&callee, b->closure);
    return mr_vm_invoke_value(vm, &callee, a, n, out);
  }
  return mr_vm_invoke_entry(vm, b->fidx, a, n, out);
}

static void free_bound(void* self) {
  bound_t* b = (bound_t*)self;
  mr_object_release(b->closure);
  mr_object_release(b->module);
  free(b);
}

int mr_vm_module_get_function(void* self, const char* name, TVMFFIObject** out) {
  mr_vm_t* vm = (mr_vm_t*)self;
  bound_t b;
  bound_t* p;
  size_t i;
  const mr_vm_method_t* m = mr_atomic_load_int(&mr_vm_extra_methods);
  *out = NULL;
  memset(&b, 0, sizeof(b));
  b.fidx = -1;
  for (; m && m->name && !b.fn; ++m)
    if (strcmp(m->name, name) == 0) b.fn = m->fn;
  for (i = 0; i < vm->num_saved && !b.fn && !b.closure; ++i)
    if (strcmp(vm->saved_names[i], name) == 0) b.closure = vm->saved[i];
  if (!b.fn && !b.closure) {
    b.fidx = mr_vm_exec_find(vm->exec, name);
    if (b.fidx < 0 || vm->exec->funcs[b.fidx].kind != MR_VM_FUNC_BYTECODE) return 0;
  }
  if (!(p = (bound_t*)malloc(sizeof(*p)))) return MR_OOM("a function");
  *p = b;
  p->module = vm->module;
  mr_object_retain(p->module);
  if (p->closure) mr_object_retain(p->closure);
  if (mr_function_create_closure(p, call_bound, free_bound, out) != 0) {
    free_bound(p);
    return -1;
  }
  return 0;
}

/* ---- the C API ---- */
int mr_vm_create(TVMFFIObject* executable, const DLDevice* devices, int num_devices,
                 int alloc_kind, TVMFFIObject** out_vm) {
  DLDevice devs[MR_VM_MAX_DEVICES];
  int kinds[MR_VM_MAX_DEVICES], n = num_devices, i;
  TVMFFIObject* m;
  if (mr_vm_register() != 0) return -1;
  if (n < 1 || n >= MR_VM_MAX_DEVICES || !devices)
    return MR_VALUE_ERROR("mr_vm_create: %d devices (1 to %d)", n, MR_VM_MAX_DEVICES - 1);
  memcpy(devs, devices, (size_t)n * sizeof(DLDevice));
  if (devs[n - 1].device_type != kDLCPU) {
    devs[n].device_type = kDLCPU;
    devs[n++].device_id = 0;
  }
  for (i = 0; i < n; ++i) kinds[i] = alloc_kind;
  if (mr_vm_new(executable, 0, &m) != 0) return -1;
  if (mr_vm_init(mr_vm_of(m), devs, kinds, n) != 0) {
    mr_vm_kept_error_t kept;
    mr_vm_error_keep(&kept, 1);
    mr_object_release(m);
    mr_vm_error_restore(&kept);
    return -1;
  }
  *out_vm = m;
  return 0;
}

int mr_vm_call(TVMFFIObject* vm_module, const char* name, const TVMFFIAny* args,
               int32_t num_args, TVMFFIAny* out_result) {
  mr_vm_t* vm = mr_vm_of(vm_module);
  int64_t fidx;
  if (!vm) return -1;
  if (!name || (fidx = mr_vm_exec_find(vm->exec, name)) < 0 ||
      vm->exec->funcs[fidx].kind != MR_VM_FUNC_BYTECODE)
    return MR_VALUE_ERROR("the VM executable has no function '%s'", name ? name : "(NULL)");
  return mr_vm_invoke_entry(vm, fidx, args, num_args, out_result);
}

int mr_vm_call_tensors(TVMFFIObject* vm, const char* name, TVMFFIObject* const* inputs,
                       int32_t num_inputs, TVMFFIObject** out_result) {
  TVMFFIAny local[16], *args = local, result;
  int32_t i;
  int status;
  memset(local, 0, sizeof(local));
  if (num_inputs < 0 || (num_inputs && !inputs)) return MR_VALUE_ERROR("invalid inputs");
  if (num_inputs > 16 && !(args = (TVMFFIAny*)malloc((size_t)num_inputs * sizeof(TVMFFIAny))))
    return MR_OOM("arguments");
  for (i = 0; i < num_inputs; ++i) mr_any_set_object(&args[i], inputs[i]);
  memset(&result, 0, sizeof(result));
  status = mr_vm_call(vm, name, args, num_inputs, &result);
  if (args != local) free(args);
  if (status != 0) return -1;
  if (result.type_index != kTVMFFINone && result.type_index < kTVMFFIStaticObjectBegin) {
    mr_any_clear(&result);
    return MR_VALUE_ERROR("'%s' returned a %s, not an object", name,
                          mr_type_index_name(result.type_index));
  }
  *out_result = result.type_index == kTVMFFINone ? NULL : result.v_obj;
  return 0;
}

int64_t mr_vm_result_count(TVMFFIObject* result) {
  return result && result->type_index == kTVMFFIArray ? mr_array_view(result)->size : -1;
}

TVMFFIObject* mr_vm_result_at(TVMFFIObject* result, int64_t index) {
  const TVMFFISeqCell* s = mr_array_view(result);
  const TVMFFIAny* v;
  if (!s || index < 0 || index >= s->size) {
    MR_RAISE(kMrErrorIndex, "result field %lld does not exist", (long long)index);
    return NULL;
  }
  v = &((const TVMFFIAny*)s->data)[index];
  if (v->type_index < kTVMFFIStaticObjectBegin) {
    MR_RAISE(kMrErrorType, "result field %lld is a %s, not an object", (long long)index,
                  mr_type_index_name(v->type_index));
    return NULL;
  }
  return v->v_obj;
}
