/*
 * vm_deploy: run a Relax VM model (Kiln's or Apache TVM's `relax.build(...).export_library`)
 * from C with the VM's C API (microruntime/vm.h). The VM handles what a graph cannot, e.g. a
 * symbolic batch: the same model runs for any batch size given here.
 *
 *   app MODEL FUNCTION FILE:D0xD1x... ...
 *
 * MODEL is a shared library (model.so, loaded with dlopen) or "-" for the model linked into
 * the program (a `--system-lib` model.a; build with -DVM_DEPLOY_SYSTEM_LIB). Each further
 * argument is a float32 tensor argument of FUNCTION: the raw bytes of FILE with shape
 * D0xD1x... Every tensor of the result (the fields of a tuple in order) is printed as a line
 * "shape D0xD1..." followed by its values, one per line.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "microruntime/vm.h"

#ifdef VM_DEPLOY_SYSTEM_LIB
/* Referencing the model's registration function pulls its object out of the archive. */
extern int kiln_system_lib_register(void);
#endif

#define MAX_ARGS 16
#define MAX_DIMS 8

static int fail(const char* what) {
  fprintf(stderr, "vm_deploy: %s: %s: %s\n", what, mr_last_error_kind(), mr_last_error());
  return 1;
}

/* A float32 tensor of the shape after ':' in `spec`, filled from the file before it. */
static int read_tensor(char* spec, TVMFFIObject** out) {
  char* colon = strrchr(spec, ':');
  char* p;
  int64_t shape[MAX_DIMS], count = 1;
  int32_t ndim = 0;
  DLDevice cpu = {kDLCPU, 0};
  DLDataType f32 = {kDLFloat, 32, 1};
  FILE* f;
  long n;
  if (!colon) return mr_error_set("ValueError", "an argument is FILE:D0xD1x...");
  *colon = '\0';
  for (p = colon + 1; *p && ndim < MAX_DIMS; ++ndim) {
    shape[ndim] = strtoll(p, &p, 10);
    count *= shape[ndim];
    if (*p == 'x') ++p;
  }
  if (!(f = fopen(spec, "rb"))) return mr_error_set("OSError", spec);
  if (fseek(f, 0, SEEK_END) != 0 || (n = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) != 0 ||
      n != count * 4) {
    fclose(f);
    return mr_error_set("ValueError", "the file's size does not match the shape");
  }
  if (mr_tensor_create(ndim, shape, f32, cpu, out) != 0) {
    fclose(f);
    return -1;
  }
  if (fread(mr_tensor_dl(*out)->data, 1, (size_t)n, f) != (size_t)n) {
    fclose(f);
    mr_object_release(*out);
    *out = NULL;
    return mr_error_set("OSError", spec);
  }
  fclose(f);
  return 0;
}

static void print_tensor(TVMFFIObject* t) {
  const DLTensor* d = mr_tensor_dl(t);
  size_t i, n = mr_tensor_nbytes(d) / sizeof(float);
  int k;
  printf("shape ");
  for (k = 0; k < d->ndim; ++k) printf(k ? "x%lld" : "%lld", (long long)d->shape[k]);
  printf("\n");
  for (i = 0; i < n; ++i) printf("%.9g\n", ((const float*)d->data)[i]);
}

int main(int argc, char** argv) {
  TVMFFIObject *exec = NULL, *vm = NULL, *result = NULL, *args[MAX_ARGS];
  DLDevice cpu = {kDLCPU, 0};
  int nargs = 0, a, status = 0;
  int64_t i, count;
  if (argc < 3 || argc - 3 > MAX_ARGS) {
    fprintf(stderr, "usage: %s MODEL|- FUNCTION FILE:D0xD1x... (up to %d)\n", argv[0],
            MAX_ARGS);
    return 2;
  }
#ifdef VM_DEPLOY_SYSTEM_LIB
  if (kiln_system_lib_register() != 0) return fail("registering the model");
#endif
  if (mr_vm_executable_open(strcmp(argv[1], "-") ? argv[1] : NULL, &exec) != 0)
    return fail("opening the model");
  if (mr_vm_create(exec, &cpu, 1, MR_VM_ALLOC_POOLED, &vm) != 0) status = fail("creating the VM");
  for (a = 3; status == 0 && a < argc; ++a) {
    if (read_tensor(argv[a], &args[nargs]) != 0)
      status = fail("reading an argument");
    else
      ++nargs;
  }
  if (status == 0 && mr_vm_call_tensors(vm, argv[2], args, nargs, &result) != 0)
    status = fail("running");
  if (status == 0 && result) {
    count = mr_vm_result_count(result);
    if (count < 0) print_tensor(result);
    for (i = 0; i < count; ++i) {
      TVMFFIObject* field = mr_vm_result_at(result, i);
      if (!field || !mr_tensor_dl(field)) {
        status = fail("a result field that is no tensor");
        break;
      }
      print_tensor(field);
    }
  }
  mr_object_release(result);
  for (a = 0; a < nargs; ++a) mr_object_release(args[a]);
  mr_object_release(vm);
  mr_object_release(exec);
  return status;
}
