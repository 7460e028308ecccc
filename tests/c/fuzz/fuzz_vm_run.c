/* Fuzz target: Relax VM bytecode that validates, run. An executable is loaded from the input
 * (mr_vm_executable_load); if it validates, a VM is made over it and each of its bytecode
 * functions is called twice, once with small float32 tensors and once with small ints for
 * all its arguments. Kernels (packed functions that are not vm.builtin.*) resolve to a stub
 * that does nothing, so the builtins, closures, control flow and registers are what runs.
 * The fuzz build limits the instructions a call may run (MR_VM_MAX_STEPS), so bytecode that
 * loops forever ends with an error. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "vm/vm.h"

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

#define MAX_ARGS 8

static int stub_kernel(void* self, const TVMFFIAny* args, int32_t n, TVMFFIAny* out) {
  (void)self, (void)args, (void)n, (void)out;
  return 0;
}

/* Every name but the runtime's vm.builtin.* (global functions) is a stub kernel. */
static int stub_get_function(void* self, const char* name, TVMFFIObject** out) {
  (void)self;
  *out = NULL;
  if (strncmp(name, "vm.builtin.", 11) == 0) return 0;
  return mr_function_create_closure(NULL, stub_kernel, NULL, out);
}

static TVMFFIObject* g_stubs;

/* The arguments of one call: tensors ([2, 3] float32, the same one) or ints (2). */
static void call_all(TVMFFIObject* vm, const mr_vm_exec_t* e, TVMFFIObject* tensor) {
  TVMFFIAny args[MAX_ARGS], result;
  int64_t f;
  int32_t i, round;
  for (round = 0; round < 2; ++round)
    for (f = 0; f < e->num_funcs && f < 16; ++f) {
      if (e->funcs[f].kind != MR_VM_FUNC_BYTECODE || e->funcs[f].num_args > MAX_ARGS) continue;
      memset(args, 0, sizeof(args));
      for (i = 0; i < (int32_t)e->funcs[f].num_args; ++i) {
        if (round == 0) {
          args[i].type_index = kTVMFFITensor;
          args[i].v_obj = tensor;
        } else {
          args[i].type_index = kTVMFFIInt;
          args[i].v_int64 = 2;
        }
      }
      memset(&result, 0, sizeof(result));
      if (mr_vm_call(vm, e->funcs[f].name, args, (int32_t)e->funcs[f].num_args, &result) == 0)
        mr_any_clear(&result);
      mr_error_clear();
    }
}

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  TVMFFIObject *ex = NULL, *vm = NULL, *tensor = NULL;
  DLDevice cpu = {kDLCPU, 0};
  DLDataType f32 = {kDLFloat, 32, 1};
  int64_t shape[2] = {2, 3};
  if (!g_stubs &&
      (mr_vm_register() != 0 ||
       mr_module_create("fuzz_stubs", NULL, stub_get_function, NULL, &g_stubs) != 0))
    abort();
  if (mr_vm_executable_load(data, size, &ex) == 0) {
    if (mr_module_import(ex, g_stubs) == 0 &&
        mr_vm_create(ex, &cpu, 1, MR_VM_ALLOC_POOLED, &vm) == 0 &&
        mr_tensor_create(2, shape, f32, cpu, &tensor) == 0) {
      memset(mr_tensor_dl(tensor)->data, 0, 6 * sizeof(float));
      call_all(vm, mr_vm_exec_of(ex), tensor);
    }
    mr_object_release(tensor);
    mr_object_release(vm);
    mr_object_release(ex);
  }
  mr_error_clear();
  return 0;
}
