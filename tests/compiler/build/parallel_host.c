/* Loads a kernel library with dlopen, fills its __TVMBackendParallelLaunch context slot with a
 * launcher that records each launch and runs the tasks (num_task = 2, both task ids), and calls
 * `__tvm_ffi_<name>(A, C)` on float32 tensors of length N. Prints "launches=<k> tasks=<ids>"
 * and the sum of C. Usage: parallel_host lib.so name N */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

typedef struct { int32_t device_type, device_id; } DLDevice;
typedef struct { uint8_t code, bits; uint16_t lanes; } DLDataType;
typedef struct {
  void* data; DLDevice device; int32_t ndim; DLDataType dtype;
  int64_t* shape; int64_t* strides; uint64_t byte_offset;
} DLTensor;
typedef struct { int32_t type_index; uint32_t pad; union { int64_t i; void* p; } u; } Any;
typedef struct { void* sync_handle; int32_t num_task; } Env;
typedef int (*Lambda)(int, Env*, void*);
typedef int (*SafeCall)(void*, const Any*, int32_t, Any*);

static int launches = 0;
static char task_log[64];
static int log_len = 0;

void TVMFFIErrorSetRaisedFromCStrParts(const char* kind, const char** parts, int32_t n) {
  int32_t i;
  fprintf(stderr, "%s: ", kind);
  for (i = 0; i < n; ++i) if (parts[i]) fputs(parts[i], stderr);
  fputc('\n', stderr);
}

static int counting_launch(Lambda f, void* cdata, int num_task) {
  Env env = {NULL, 2};
  int t, rc;
  (void)num_task;
  ++launches;
  for (t = 1; t >= 0; --t) {  /* run the tasks out of order, as threads may */
    if (log_len < 60) task_log[log_len++] = (char)('0' + t);
    rc = f(t, &env, cdata);
    if (rc != 0) return rc;
  }
  return 0;
}

int main(int argc, char** argv) {
  char symbol[256];
  void* lib;
  void** slot;
  SafeCall fn;
  int64_t n = argc > 3 ? atoll(argv[3]) : 100, i;
  float *a, *c;
  double sum = 0;
  DLTensor ta, tc;
  Any args[2], result;
  if (argc < 3) return 2;
  lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  if (!lib) { fprintf(stderr, "%s\n", dlerror()); return 1; }
  slot = (void**)dlsym(lib, "__TVMBackendParallelLaunch");
  if (!slot) { fprintf(stderr, "no __TVMBackendParallelLaunch slot\n"); return 1; }
  *slot = (void*)counting_launch;
  snprintf(symbol, sizeof symbol, "__tvm_ffi_%s", argv[2]);
  fn = (SafeCall)dlsym(lib, symbol);
  if (!fn) { fprintf(stderr, "no %s\n", symbol); return 1; }
  /* aligned_alloc needs a size that is a multiple of the alignment */
  a = (float*)aligned_alloc(64, (size_t)((n * 4 + 63) / 64 * 64 + 64));
  c = (float*)aligned_alloc(64, (size_t)((n * 4 + 63) / 64 * 64 + 64));
  for (i = 0; i < n; ++i) { a[i] = (float)i; c[i] = 0; }
  ta = (DLTensor){a, {1, 0}, 1, {2, 32, 1}, &n, NULL, 0};
  tc = (DLTensor){c, {1, 0}, 1, {2, 32, 1}, &n, NULL, 0};
  args[0].type_index = 7; args[0].pad = 0; args[0].u.p = &ta;
  args[1].type_index = 7; args[1].pad = 0; args[1].u.p = &tc;
  result.type_index = 0;
  if (fn(NULL, args, 2, &result) != 0) return 1;
  for (i = 0; i < n; ++i) sum += c[i];
  task_log[log_len] = '\0';
  printf("launches=%d tasks=%s sum=%.1f\n", launches, task_log, sum);
  return 0;
}
