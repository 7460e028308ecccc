/* The AOT runtime (microruntime/src/aot, build/libmicroruntime_aot.a) alone: kernel workspaces
 * come from the region a run function hands over, last in first out and 64-byte aligned, and
 * fail cleanly outside it or past its end; a parallel launch runs its one task; kernel errors
 * are kept for mr_last_error(); registration by name is accepted. This test links that runtime
 * only, with malloc, calloc, realloc and posix_memalign wrapped to fail: it allocates nothing. */
#include <errno.h>
#include <stdlib.h>

#include "check.h"
#include "microruntime/aot_runtime.h"

void* __real_malloc(size_t n);
void* __real_calloc(size_t n, size_t size);
void* __real_realloc(void* p, size_t n);
static int g_allocations;
void* __wrap_malloc(size_t n) { return ++g_allocations, (void*)NULL; }
void* __wrap_calloc(size_t n, size_t size) { return ++g_allocations, (void*)NULL; }
void* __wrap_realloc(void* p, size_t n) { return ++g_allocations, (void*)NULL; }
int __wrap_posix_memalign(void** out, size_t alignment, size_t n) {
  return ++g_allocations, ENOMEM;
}

static unsigned char g_region[512] __attribute__((aligned(64)));

static int task(int task_id, TVMParallelGroupEnv* penv, void* cdata) {
  int* seen = (int*)cdata;
  seen[0] = task_id;
  seen[1] = penv->num_task;
  return TVMBackendParallelBarrier(task_id, penv);
}

int main(void) {
  void *a, *b, *c;
  int seen[2] = {-1, -1};
  const char* parts[2] = {"kernel ", "failed"};

  /* No region: a clean failure. */
  CHECK(TVMBackendAllocWorkspace(kDLCPU, 0, 16, kDLFloat, 32) == NULL);
  CHECK(strstr(mr_last_error(), "no workspace region") != NULL);

  CHECK_OK(mr_aot_workspace_begin(g_region, sizeof(g_region)));
  a = TVMBackendAllocWorkspace(kDLCPU, 0, 100, kDLFloat, 32);
  b = TVMBackendAllocWorkspace(kDLCPU, 0, 1, kDLFloat, 32);
  CHECK(a == (void*)g_region && b == (void*)(g_region + 128));
  /* Past the end: refused, with a message; the stack is unchanged. */
  CHECK(TVMBackendAllocWorkspace(kDLCPU, 0, 400, kDLFloat, 32) == NULL);
  CHECK(strstr(mr_last_error(), "does not fit") != NULL);
  CHECK(strcmp(mr_last_error_kind(), "MemoryError") == 0);
  CHECK(TVMBackendAllocWorkspace(kDLCPU, 0, (uint64_t)-1, kDLFloat, 32) == NULL);
  CHECK(TVMBackendAllocWorkspace(kDLCUDA, 0, 4, kDLFloat, 32) == NULL);
  CHECK_OK(TVMBackendFreeWorkspace(kDLCPU, 0, b));
  c = TVMBackendAllocWorkspace(kDLCPU, 0, 384, kDLFloat, 32);
  CHECK(c == b);
  /* A region cannot change while workspaces are in use. */
  CHECK(mr_aot_workspace_begin(g_region, sizeof(g_region)) != 0);
  CHECK_OK(TVMBackendFreeWorkspace(kDLCPU, 0, c));
  CHECK_OK(TVMBackendFreeWorkspace(kDLCPU, 0, a));
  CHECK(TVMBackendFreeWorkspace(kDLCPU, 0, a) != 0);
  mr_aot_workspace_end();
  CHECK(TVMBackendAllocWorkspace(kDLCPU, 0, 16, kDLFloat, 32) == NULL);

  CHECK_OK(TVMBackendParallelLaunch(task, seen, 8));
  CHECK(seen[0] == 0 && seen[1] == 1);

  TVMFFIErrorSetRaisedFromCStrParts("ValueError", parts, 2);
  CHECK(strcmp(mr_last_error(), "kernel failed") == 0);
  CHECK(strcmp(mr_last_error_kind(), "ValueError") == 0);
  CHECK_OK(TVMFFIEnvModRegisterSystemLibSymbol("__tvm_ffi_f", (void*)task));
  CHECK(g_allocations == 0);
  return CHECK_RESULT();
}
