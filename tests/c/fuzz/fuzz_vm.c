/* Fuzz target: Relax VM executables (mr_vm_executable_load, then a VM over what loads: the
 * function pool resolved and the constants placed). Bytecode is not run: a valid program may
 * loop forever. */
#include <stdint.h>
#include <stdlib.h>

#include "internal.h"
#include "microruntime/vm.h"

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  TVMFFIObject *ex = NULL, *vm = NULL;
  DLDevice cpu = {kDLCPU, 0};
  if (mr_vm_executable_load(data, size, &ex) == 0) {
    if (mr_vm_create(ex, &cpu, 1, MR_VM_ALLOC_POOLED, &vm) == 0) mr_object_release(vm);
    mr_object_release(ex);
  }
  mr_error_clear();
  return 0;
}
