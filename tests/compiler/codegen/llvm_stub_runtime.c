/* A stand-in for the runtime services a host-compiled kernel library calls, linked into each
 * test library (with -Bsymbolic) so the LLVM codegen tests need neither the microruntime nor
 * TVM: errors, a pthread parallel launch that records which threads ran tasks, a counting
 * workspace allocator, a tiny function registry for call_packed, and a system-lib table. */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static __thread char last_error[4096];

void TVMFFIErrorSetRaisedFromCStrParts(const char* kind, const char** parts, int32_t n) {
  size_t len = (size_t)snprintf(last_error, sizeof(last_error), "%s: ", kind);
  for (int32_t i = 0; i < n && len < sizeof(last_error); ++i) {
    if (parts[i] == NULL) continue;
    len += (size_t)snprintf(last_error + len, sizeof(last_error) - len, "%s", parts[i]);
  }
}

void TVMFFIErrorSetRaisedFromCStr(const char* kind, const char* msg) {
  snprintf(last_error, sizeof(last_error), "%s: %s", kind, msg);
}

const char* stub_last_error(void) { return last_error; }

/* ---- parallel launch ---- */
typedef struct { void* sync_handle; int32_t num_task; } TVMParallelGroupEnv;
typedef int (*FTVMParallelLambda)(int task_id, TVMParallelGroupEnv* penv, void* cdata);

int stub_num_threads = 1;
int stub_launches = 0;
static pthread_t task_threads[64];
static int task_count = 0;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;

typedef struct { FTVMParallelLambda f; TVMParallelGroupEnv* env; void* cdata; int id; int rc; } Task;

static void* run_task(void* p) {
  Task* t = (Task*)p;
  pthread_mutex_lock(&mu);
  if (task_count < 64) task_threads[task_count++] = pthread_self();
  pthread_mutex_unlock(&mu);
  t->rc = t->f(t->id, t->env, t->cdata);
  return NULL;
}

int TVMBackendParallelLaunch(FTVMParallelLambda f, void* cdata, int num_task) {
  int n = num_task > 0 ? num_task : stub_num_threads;
  if (n > 64) n = 64;
  TVMParallelGroupEnv env = {NULL, n};
  Task tasks[64];
  pthread_t threads[64];
  stub_launches++;
  for (int i = 0; i < n; ++i) tasks[i] = (Task){f, &env, cdata, i, 0};
  for (int i = 1; i < n; ++i) pthread_create(&threads[i], NULL, run_task, &tasks[i]);
  run_task(&tasks[0]);
  int rc = tasks[0].rc;
  for (int i = 1; i < n; ++i) {
    pthread_join(threads[i], NULL);
    if (rc == 0) rc = tasks[i].rc;
  }
  return rc;
}

int stub_distinct_task_threads(void) {
  int distinct = 0;
  for (int i = 0; i < task_count; ++i) {
    int seen = 0;
    for (int j = 0; j < i; ++j) seen |= pthread_equal(task_threads[i], task_threads[j]);
    distinct += !seen;
  }
  return distinct;
}

/* ---- workspace ---- */
/* stub_workspace_fail: 1 makes allocations fail, 2 makes frees fail; either raises its reason. */
int stub_workspace_allocs = 0, stub_workspace_frees = 0, stub_workspace_fail = 0;

void* TVMBackendAllocWorkspace(int device_type, int device_id, uint64_t nbytes, int code, int bits) {
  (void)device_type; (void)device_id; (void)code; (void)bits;
  if (stub_workspace_fail == 1) {
    snprintf(last_error, sizeof(last_error), "MemoryError: stub pool refuses %llu bytes",
             (unsigned long long)nbytes);
    return NULL;
  }
  stub_workspace_allocs++;
  return aligned_alloc(64, (nbytes + 63) / 64 * 64 + 64);
}

int TVMBackendFreeWorkspace(int device_type, int device_id, void* ptr) {
  (void)device_type; (void)device_id;
  stub_workspace_frees++;
  free(ptr);
  if (stub_workspace_fail == 2) {
    snprintf(last_error, sizeof(last_error), "RuntimeError: stub free refused");
    return -1;
  }
  return 0;
}

/* ---- functions for call_packed ---- */
typedef int (*SafeCall)(void* self, const void* args, int32_t n, void* result);
typedef struct {
  uint64_t ref; int32_t type_index; uint32_t pad; void* deleter; SafeCall safe_call; void* cpp;
} FunctionObj;
static struct { char name[64]; FunctionObj obj; } registry[16];
static int registry_size = 0;

int stub_register_function(const char* name, SafeCall fn) {
  if (registry_size == 16) return -1;
  snprintf(registry[registry_size].name, 64, "%s", name);
  registry[registry_size].obj = (FunctionObj){1, 68, 0, NULL, fn, NULL};
  registry_size++;
  return 0;
}

int TVMFFIEnvModLookupFromImports(void* ctx, const char* name, void** out) {
  (void)ctx;
  for (int i = 0; i < registry_size; ++i) {
    if (strcmp(registry[i].name, name) == 0) { *out = &registry[i].obj; return 0; }
  }
  snprintf(last_error, sizeof(last_error), "RuntimeError: function %s not found", name);
  return -1;
}

int stub_init_once_calls = 0;

int TVMFFIHandleInitOnce(void** handle_addr, int (*init)(void** result)) {
  int rc = 0;
  void* result = NULL;
  pthread_mutex_lock(&mu);
  stub_init_once_calls++;
  if (*handle_addr == NULL) {
    rc = init(&result);
    if (rc == 0) *handle_addr = result;
  }
  pthread_mutex_unlock(&mu);
  return rc;
}

int TVMFFIFunctionCall(void* func, void* args, int32_t n, void* result) {
  return ((FunctionObj*)func)->safe_call(func, args, n, result);
}

/* ---- system library ---- */
static struct { char name[128]; void* ptr; } symbols[64];
int stub_num_symbols = 0;

int TVMFFIEnvModRegisterSystemLibSymbol(const char* name, void* ptr) {
  if (stub_num_symbols == 64) return -1;
  snprintf(symbols[stub_num_symbols].name, 128, "%s", name);
  symbols[stub_num_symbols].ptr = ptr;
  stub_num_symbols++;
  return 0;
}

const char* stub_symbol_name(int i) { return symbols[i].name; }
void* stub_symbol_ptr(int i) { return symbols[i].ptr; }
