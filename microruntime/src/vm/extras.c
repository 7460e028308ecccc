/* TVM's packed-function methods of the relax.VirtualMachine module (vm_initialization,
 * invoke_closure, save_function, set_input, invoke_stateful, get_output_arity, get_output,
 * set_instrument, get_function_arity, get_function_param_name, profile), which Python and
 * TVM's API call. A static app that runs functions through the C API (mr_vm_create,
 * mr_vm_call) never calls mr_vm_register_extras(), so none of this is linked into it. */
#include <stdlib.h>
#include <string.h>

#include "vm.h"

#define MR_ERROR_FILE kMrFileVmExtras

static int name_arg(const char* f, const TVMFFIAny* a, int32_t n, int i, char* buf) {
  const char* s;
  size_t len;
  if (i >= n || mr_any_get_str(&a[i], &s, &len) != 0 || len >= MR_MAX_NAME) {
    mr_error_clear();
    return MR_RAISE(kMrErrorType, "%s: argument %d must be a function name", f, i);
  }
  memcpy(buf, s, len);
  buf[len] = '\0';
  return 0;
}

static int int_arg(const char* f, const TVMFFIAny* a, int32_t n, int i, int64_t* out) {
  *out = 0;
  if (i >= n || (a[i].type_index != kTVMFFIInt && a[i].type_index != kTVMFFIBool))
    return MR_RAISE(kMrErrorType, "%s: argument %d must be an int", f, i);
  *out = a[i].v_int64;
  return 0;
}

/* The bytecode function named by a[i]. */
static int func_arg(mr_vm_t* vm, const char* f, const TVMFFIAny* a, int32_t n, int i,
                    int64_t* out) {
  char name[MR_MAX_NAME];
  *out = -1;
  if (name_arg(f, a, n, i, name) != 0) return -1;
  *out = mr_vm_exec_find(vm->exec, name);
  if (*out < 0 || vm->exec->funcs[*out].kind != MR_VM_FUNC_BYTECODE)
    return MR_VALUE_ERROR("%s: unknown function '%s'", f, name);
  return 0;
}

static int m_init(mr_vm_t* vm, const TVMFFIAny* a, int32_t n, TVMFFIAny* out) {
  DLDevice devs[MR_VM_MAX_DEVICES];
  int kinds[MR_VM_MAX_DEVICES], i;
  int64_t v[3];
  (void)out;
  if (n % 3 != 0 || n == 0 || n / 3 > MR_VM_MAX_DEVICES)
    return MR_VALUE_ERROR("vm_initialization takes (device_type, device_id, allocator) for "
                          "each of 1 to %d devices, got %d arguments", MR_VM_MAX_DEVICES, (int)n);
  for (i = 0; i < n / 3; ++i) {
    if (int_arg("vm_initialization", a, n, 3 * i, &v[0]) != 0 ||
        int_arg("vm_initialization", a, n, 3 * i + 1, &v[1]) != 0 ||
        int_arg("vm_initialization", a, n, 3 * i + 2, &v[2]) != 0)
      return -1;
    devs[i].device_type = (int32_t)v[0];
    devs[i].device_id = (int32_t)v[1];
    kinds[i] = (int)v[2];
  }
  return mr_vm_init(vm, devs, kinds, n / 3);
}

static int m_invoke_closure(mr_vm_t* vm, const TVMFFIAny* a, int32_t n, TVMFFIAny* out) {
  if (n < 1) return MR_RAISE(kMrErrorType, "invoke_closure(closure, *args)");
  return mr_vm_invoke_value(vm, &a[0], a + 1, n - 1, out);
}

/* Arguments kept by the VM: tensors moved to its first device, as TVM does. */
static int keep_args(mr_vm_t* vm, const TVMFFIAny* a, int32_t n, TVMFFIObject** out_array) {
  TVMFFIAny* kept = (TVMFFIAny*)calloc((size_t)n + 1, sizeof(TVMFFIAny));
  mr_vm_kept_error_t error;
  int32_t i;
  int status = 0;
  if (!kept) return MR_OOM("arguments");
  if (!vm->initialized) status = MR_VM_ERROR("the VM is not initialised");
  for (i = 0; i < n && status == 0; ++i) status = mr_vm_arg_to_device(vm, &a[i], &kept[i]);
  if (status == 0) status = mr_array_create(kept, n, out_array);
  mr_vm_error_keep(&error, status != 0);
  for (i = 0; i < n; ++i) mr_any_clear(&kept[i]);
  mr_vm_error_restore(&error);
  free(kept);
  return status;
}

static int m_save_function(mr_vm_t* vm, const TVMFFIAny* a, int32_t n, TVMFFIAny* out) {
  static const char f[] = "save_function";
  char saved[MR_MAX_NAME];
  int64_t fidx, include_return;
  TVMFFIObject *args, *clo;
  const TVMFFISeqCell* s;
  size_t k;
  char* copy;
  (void)out;
  if (func_arg(vm, f, a, n, 0, &fidx) != 0 || name_arg(f, a, n, 1, saved) != 0 ||
      int_arg(f, a, n, 2, &include_return) != 0)
    return -1;
  if (mr_vm_exec_find(vm->exec, saved) >= 0)
    return MR_VALUE_ERROR("save_function: '%s' is a function of the executable", saved);
  if (vm->exec->funcs[fidx].num_args != n - 3)
    return MR_VALUE_ERROR("save_function: '%s' takes %lld arguments, %d were given",
                          vm->exec->funcs[fidx].name, (long long)vm->exec->funcs[fidx].num_args,
                          (int)n - 3);
  if (keep_args(vm, a + 3, n - 3, &args) != 0) return -1;
  s = mr_array_view(args);
  k = (size_t)mr_vm_closure_new(fidx, (const TVMFFIAny*)s->data, (int32_t)s->size, &clo);
  mr_object_release(args);
  if (k != 0) return -1;
  ((mr_vm_closure_t*)clo)->discard_result = include_return == 0;
  for (k = 0; k < vm->num_saved; ++k)
    if (strcmp(vm->saved_names[k], saved) == 0) {
      mr_object_release(vm->saved[k]);
      vm->saved[k] = clo;
      return 0;
    }
  if (mr_grow(&vm->saved, &vm->cap_saved, vm->num_saved, sizeof(void*), "saved functions") != 0 ||
      !(copy = mr_strndup(saved, strlen(saved)))) {
    mr_object_release(clo);
    return MR_OOM("saved functions");
  }
  /* saved_names grows alongside (same capacity) */
  {
    char** names = (char**)realloc(vm->saved_names, vm->cap_saved * sizeof(char*));
    if (!names) {
      free(copy);
      mr_object_release(clo);
      return MR_OOM("saved functions");
    }
    vm->saved_names = names;
  }
  vm->saved_names[vm->num_saved] = copy;
  vm->saved[vm->num_saved++] = clo;
  return 0;
}

static int m_set_input(mr_vm_t* vm, const TVMFFIAny* a, int32_t n, TVMFFIAny* out) {
  int64_t fidx;
  TVMFFIObject* args;
  (void)out;
  if (func_arg(vm, "set_input", a, n, 0, &fidx) != 0) return -1;
  if (vm->exec->funcs[fidx].num_args != n - 1)
    return MR_VALUE_ERROR("set_input: '%s' takes %lld arguments, %d were given",
                          vm->exec->funcs[fidx].name, (long long)vm->exec->funcs[fidx].num_args,
                          (int)n - 1);
  if (keep_args(vm, a + 1, n - 1, &args) != 0) return -1;
  mr_object_release(vm->inputs[fidx]);
  vm->inputs[fidx] = args;
  return 0;
}

static int m_invoke_stateful(mr_vm_t* vm, const TVMFFIAny* a, int32_t n, TVMFFIAny* out) {
  int64_t fidx;
  const TVMFFISeqCell* s;
  TVMFFIAny result;
  (void)out;
  if (func_arg(vm, "invoke_stateful", a, n, 0, &fidx) != 0) return -1;
  if (!vm->inputs[fidx])
    return MR_VALUE_ERROR("invoke_stateful: no inputs set for '%s'; use set_input first",
                          vm->exec->funcs[fidx].name);
  s = mr_array_view(vm->inputs[fidx]);
  memset(&result, 0, sizeof(result));
  if (mr_vm_invoke(vm, fidx, (const TVMFFIAny*)s->data, (int32_t)s->size, &result) != 0)
    return -1;
  mr_any_clear(&vm->outputs[fidx]);
  vm->outputs[fidx] = result;
  return 0;
}

/* The output of func a[0] indexed by a[1:] (borrowed). */
static int output_at(mr_vm_t* vm, const char* f, const TVMFFIAny* a, int32_t n,
                     const TVMFFIAny** out) {
  int64_t fidx, idx;
  const TVMFFIAny* v;
  int32_t i;
  if (func_arg(vm, f, a, n, 0, &fidx) != 0) return -1;
  v = &vm->outputs[fidx];
  if (v->type_index == kTVMFFINone)
    return MR_VALUE_ERROR("%s: no output saved for '%s'; use invoke_stateful first", f,
                          vm->exec->funcs[fidx].name);
  for (i = 1; i < n; ++i) {
    const TVMFFISeqCell* s;
    if (int_arg(f, a, n, i, &idx) != 0) return -1;
    if (v->type_index != kTVMFFIArray)
      return MR_RAISE(kMrErrorIndex, "%s: index %d goes into a value that is no tuple", f,
                           (int)i);
    s = mr_array_view(v->v_obj);
    if (idx < 0 || idx >= s->size)
      return MR_RAISE(kMrErrorIndex, "%s: index %lld of a tuple of %lld", f,
                           (long long)idx, (long long)s->size);
    v = &((const TVMFFIAny*)s->data)[idx];
  }
  *out = v;
  return 0;
}

static int m_get_output_arity(mr_vm_t* vm, const TVMFFIAny* a, int32_t n, TVMFFIAny* out) {
  const TVMFFIAny* v;
  if (output_at(vm, "get_output_arity", a, n, &v) != 0) return -1;
  out->type_index = kTVMFFIInt;
  out->v_int64 = v->type_index == kTVMFFIArray ? mr_array_view(v->v_obj)->size : -1;
  return 0;
}

static int m_get_output(mr_vm_t* vm, const TVMFFIAny* a, int32_t n, TVMFFIAny* out) {
  const TVMFFIAny* v;
  if (output_at(vm, "get_output", a, n, &v) != 0) return -1;
  if (v->type_index == kTVMFFIArray)
    return MR_VALUE_ERROR("get_output cannot return a tuple; give the index of a field");
  return mr_any_copy(v, out);
}

static int m_set_instrument(mr_vm_t* vm, const TVMFFIAny* a, int32_t n, TVMFFIAny* out) {
  TVMFFIObject* f = NULL;
  (void)out;
  if (n != 1 || (a[0].type_index != kTVMFFIFunction && a[0].type_index != kTVMFFINone))
    return MR_RAISE(kMrErrorType, "set_instrument takes a Function (or None)");
  if (a[0].type_index == kTVMFFIFunction) {
    f = a[0].v_obj;
    mr_object_retain(f);
  }
  mr_object_release(vm->instrument);
  vm->instrument = f;
  return 0;
}

static int m_get_function_arity(mr_vm_t* vm, const TVMFFIAny* a, int32_t n, TVMFFIAny* out) {
  int64_t fidx;
  if (func_arg(vm, "get_function_arity", a, n, 0, &fidx) != 0) return -1;
  out->type_index = kTVMFFIInt;
  out->v_int64 = vm->exec->funcs[fidx].num_args;
  return 0;
}

static int m_get_function_param_name(mr_vm_t* vm, const TVMFFIAny* a, int32_t n,
                                     TVMFFIAny* out) {
  int64_t fidx, i;
  const mr_vm_func_t* f;
  TVMFFIObject* s;
  if (func_arg(vm, "get_function_param_name", a, n, 0, &fidx) != 0 ||
      int_arg("get_function_param_name", a, n, 1, &i) != 0)
    return -1;
  f = &vm->exec->funcs[fidx];
  if (i < 0 || i >= f->num_params)
    return MR_VALUE_ERROR("get_function_param_name: index %lld of %lld names of '%s'",
                          (long long)i, (long long)f->num_params, f->name);
  if (mr_str_create(f->params[i], strlen(f->params[i]), &s) != 0) return -1;
  mr_any_set_object(out, s);
  return 0;
}

/* profile(func_name, *args): one warm-up call, then one call timing each kernel call; returns
 * an Array of [name, nanoseconds, argument shapes] per kernel call. */
static int m_profile(mr_vm_t* vm, const TVMFFIAny* a, int32_t n, TVMFFIAny* out) {
  int64_t fidx;
  TVMFFIAny result, row[3];
  TVMFFIAny* rows = NULL;
  const TVMFFIAny* args = a + 1;
  int32_t nargs = n - 1;
  size_t i;
  int status = -1;
  if (func_arg(vm, "profile", a, n, 0, &fidx) != 0) return -1;
  if (n == 1 && vm->inputs[fidx]) {
    args = (const TVMFFIAny*)mr_array_view(vm->inputs[fidx])->data;
    nargs = (int32_t)mr_array_view(vm->inputs[fidx])->size;
  }
  memset(&result, 0, sizeof(result));
  if (mr_vm_invoke(vm, fidx, args, nargs, &result) != 0) return -1;
  mr_any_clear(&result);
  vm->num_prof = 0;
  vm->profiling = 1;
  status = mr_vm_invoke(vm, fidx, args, nargs, &result);
  vm->profiling = 0;
  mr_any_clear(&result);
  if (status != 0) return -1;
  status = -1;
  if (!(rows = (TVMFFIAny*)calloc(vm->num_prof + 1, sizeof(TVMFFIAny))))
    return MR_OOM("the profile");
  for (i = 0; i < vm->num_prof; ++i) {
    const mr_vm_prof_t* p = &vm->prof[i];
    const char* name = vm->exec->funcs[p->func_index].name;
    TVMFFIObject *s0 = NULL, *s2 = NULL, *arr = NULL;
    memset(row, 0, sizeof(row));
    if (mr_str_create(name, strlen(name), &s0) != 0 ||
        mr_str_create(p->shapes, strlen(p->shapes), &s2) != 0) {
      mr_object_release(s0);
      goto done;
    }
    mr_any_set_object(&row[0], s0);
    row[1].type_index = kTVMFFIInt;
    row[1].v_int64 = p->ns;
    mr_any_set_object(&row[2], s2);
    status = mr_array_create(row, 3, &arr);
    mr_any_clear(&row[0]);
    mr_any_clear(&row[2]);
    if (status != 0) goto done;
    status = -1;
    mr_any_set_object(&rows[i], arr);
  }
  {
    TVMFFIObject* all;
    if (mr_array_create(rows, (int64_t)vm->num_prof, &all) != 0) goto done;
    mr_any_set_object(out, all);
  }
  status = 0;
done:
  for (i = 0; rows && i < vm->num_prof; ++i) mr_any_clear(&rows[i]);
  free(rows);
  vm->num_prof = 0;
  return status;
}

static const mr_vm_method_t k_methods[] = {
    {"vm_initialization", m_init},
    {"invoke_closure", m_invoke_closure},
    {"save_function", m_save_function},
    {"set_input", m_set_input},
    {"invoke_stateful", m_invoke_stateful},
    {"get_output_arity", m_get_output_arity},
    {"get_output", m_get_output},
    {"set_instrument", m_set_instrument},
    {"get_function_arity", m_get_function_arity},
    {"get_function_param_name", m_get_function_param_name},
    {"profile", m_profile},
    {NULL, NULL},
};

int mr_vm_register_extras(void) {
  if (mr_vm_register() != 0) return -1;
  mr_atomic_store_int(&mr_vm_extra_methods, k_methods);
  return 0;
}
