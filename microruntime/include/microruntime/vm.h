/*
 * Running a Relax VM executable (Apache TVM 0.27's format) from C.
 *
 * A model is one file: the kernel library with the executable in it (`relax.build(...)
 * .export_library("model.so")`, by TVM or Kiln), or the system library linked into the
 * program (path NULL). In a few lines:
 *
 *   TVMFFIObject *ex = NULL, *vm = NULL, *x = NULL, *y = NULL;
 *   DLDevice cpu = {kDLCPU, 0};
 *   int64_t shape[2] = {1, 16};
 *   if (mr_vm_executable_open("model.so", &ex) != 0 ||
 *       mr_vm_create(ex, &cpu, 1, MR_VM_ALLOC_POOLED, &vm) != 0 ||
 *       mr_tensor_create(2, shape, (DLDataType){kDLFloat, 32, 1}, cpu, &x) != 0 ||
 *       mr_vm_call_tensors(vm, "main", &x, 1, &y) != 0)
 *     printf("error: %s\n", mr_last_error());
 *   // y: a Tensor, or an Array for a tuple (mr_vm_result_count / mr_vm_result_at)
 *   mr_object_release(y); mr_object_release(x); mr_object_release(vm); mr_object_release(ex);
 *
 * The executable and the VM are Module objects (the same ones the Python package uses; the
 * VM's functions are TVM's: vm_initialization, invoke_closure, save_function, set_input,
 * invoke_stateful, get_output_arity, get_output, set_instrument, get_function_arity,
 * get_function_param_name, profile, and each function of the executable by name).
 * Conventions are those of microruntime.h; mistakes in an executable or its inputs are
 * ValueErrors (check_* name the parameter), problems while running are "VMError".
 */
#ifndef MICRORUNTIME_VM_H_
#define MICRORUNTIME_VM_H_

#include "microruntime.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Allocator kinds (TVM's numbering). */
#define MR_VM_ALLOC_NAIVE 1
#define MR_VM_ALLOC_POOLED 2

/* Registers the "relax.VMExecutable" module loader, the global
 * ffi.Module.load_from_bytes.relax.VMExecutable and the vm.builtin.* functions. Idempotent;
 * the functions below call it. */
MR_DLL int mr_vm_register(void);
/* mr_vm_register() plus TVM's packed-function methods of the VM module (vm_initialization,
 * set_input, invoke_stateful, save_function, set_instrument, profile, ...) for Python and
 * TVM-style callers; apps calling only the functions below need not. */
MR_DLL int mr_vm_register_extras(void);

/* Opens the executable of the library at `path` (dlopen), or with path NULL or "" of the
 * system library linked into the program. */
MR_DLL int mr_vm_executable_open(const char* path, TVMFFIObject** out_executable);
/* An executable from its bytes (validated); its kernels come from modules imported into it
 * (mr_module_import) or from global functions. */
MR_DLL int mr_vm_executable_load(const void* data, size_t size, TVMFFIObject** out_executable);

/* A VM running `executable` on devices[0..n) (the CPU is appended as the host when the last
 * is not a CPU), with one allocator kind for all. Every external function is resolved here:
 * a name found nowhere is an error naming it. */
MR_DLL int mr_vm_create(TVMFFIObject* executable, const DLDevice* devices, int num_devices,
                        int alloc_kind, TVMFFIObject** out_vm);

/* Calls function `name` with args (borrowed); *out_result is owned (None before the call). */
MR_DLL int mr_vm_call(TVMFFIObject* vm, const char* name, const TVMFFIAny* args,
                      int32_t num_args, TVMFFIAny* out_result);
/* The same with tensor arguments; *out_result is a Tensor, an Array (a tuple), or NULL when
 * the function returns None. */
MR_DLL int mr_vm_call_tensors(TVMFFIObject* vm, const char* name, TVMFFIObject* const* inputs,
                              int32_t num_inputs, TVMFFIObject** out_result);
/* -1 for a value that is not a tuple, else the number of its fields. */
MR_DLL int64_t mr_vm_result_count(TVMFFIObject* result);
/* Field `index` of a tuple result (borrowed; NULL with an error set when out of range). */
MR_DLL TVMFFIObject* mr_vm_result_at(TVMFFIObject* result, int64_t index);

#ifdef __cplusplus
}
#endif
#endif /* MICRORUNTIME_VM_H_ */
