/* A graph executor in a caller's arena (mr_graph_executor_create_in_arena): its tensors and
 * its kernels' workspace live in the arena, sized as the manifest says, and once it is created
 * nothing is allocated: this program links with malloc, calloc, realloc and posix_memalign
 * wrapped (-Wl,--wrap=...), and they fail after initialisation. A heap executor of the same
 * model, run that way, fails (its kernel's first workspace comes from the heap): the check
 * can see an allocation. Kernels: hand-written, registered as a system library. */
#include <errno.h>
#include <stdlib.h>

#include "check.h"
#include "graph/graph.h"
#include "microruntime/graph_executor.h"

/* ---- allocations that fail on demand ---- */
void* __real_malloc(size_t n);
void* __real_calloc(size_t n, size_t size);
void* __real_realloc(void* p, size_t n);
int __real_posix_memalign(void** out, size_t alignment, size_t n);
static int g_refuse; /* allocations fail while set */
static int g_refused; /* how many were refused */

void* __wrap_malloc(size_t n) {
  if (g_refuse) return ++g_refused, (void*)NULL;
  return __real_malloc(n);
}
void* __wrap_calloc(size_t n, size_t size) {
  if (g_refuse) return ++g_refused, (void*)NULL;
  return __real_calloc(n, size);
}
void* __wrap_realloc(void* p, size_t n) {
  if (g_refuse) return ++g_refused, (void*)NULL;
  return __real_realloc(p, n);
}
int __wrap_posix_memalign(void** out, size_t alignment, size_t n) {
  if (g_refuse) return ++g_refused, ENOMEM;
  return __real_posix_memalign(out, alignment, n);
}

/* ---- kernels ---- */
#define WORKSPACE_BYTES 1000
static void* g_workspace; /* the last workspace ws_axpy got */

static float* data(const TVMFFIAny* a) { return (float*)((DLTensor*)a->v_ptr)->data; }

typedef struct {
  const float *x, *w;
  float* tmp;
} axpy_t;

static int axpy_task(int task, TVMParallelGroupEnv* env, void* cdata) {
  axpy_t* c = (axpy_t*)cdata;
  int i;
  for (i = task; i < 4; i += env->num_task) c->tmp[i] = 2.0f * c->x[i] + c->w[i];
  return 0;
}

/* out = 2 x + w, through a workspace and a parallel launch. */
static int ws_axpy(void* h, const TVMFFIAny* a, int32_t n, TVMFFIAny* r) {
  axpy_t c;
  int i;
  (void)h, (void)n, (void)r;
  c.x = data(&a[0]);
  c.w = data(&a[1]);
  c.tmp = (float*)TVMBackendAllocWorkspace(kDLCPU, 0, WORKSPACE_BYTES, kDLFloat, 32);
  if (!c.tmp) return -1;
  g_workspace = c.tmp;
  if (TVMBackendParallelLaunch(axpy_task, &c, 0) != 0) return -1;
  for (i = 0; i < 4; ++i) data(&a[2])[i] = c.tmp[i];
  return TVMBackendFreeWorkspace(kDLCPU, 0, c.tmp);
}

static int ws_relu(void* h, const TVMFFIAny* a, int32_t n, TVMFFIAny* r) {
  int i;
  (void)h, (void)n, (void)r;
  for (i = 0; i < 4; ++i) data(&a[1])[i] = data(&a[0])[i] > 0 ? data(&a[0])[i] : 0;
  return 0;
}

/* ---- the model: x (input), w (param) -> relu(2 x + w) ---- */
static const char* k_graph =
    "{\"nodes\": [{\"op\": \"null\", \"name\": \"x\", \"inputs\": []},"
    "{\"op\": \"null\", \"name\": \"w\", \"inputs\": []},"
    "{\"op\": \"tvm_op\", \"name\": \"mix\", \"inputs\": [[0, 0, 0], [1, 0, 0]], \"attrs\":"
    " {\"func_name\": \"ws_axpy\", \"num_inputs\": \"2\", \"num_outputs\": \"1\","
    " \"flatten_data\": \"0\"}},"
    "{\"op\": \"tvm_op\", \"name\": \"relu\", \"inputs\": [[2, 0, 0]], \"attrs\":"
    " {\"func_name\": \"ws_relu\", \"num_inputs\": \"1\", \"num_outputs\": \"1\","
    " \"flatten_data\": \"0\"}}],"
    "\"arg_nodes\": [0, 1], \"heads\": [[3, 0, 0]], \"node_row_ptr\": [0, 1, 2, 3, 4],"
    "\"attrs\": {\"shape\": [\"list_shape\", [[4], [4], [4], [4]]],"
    " \"dltype\": [\"list_str\", [\"float32\", \"float32\", \"float32\", \"float32\"]],"
    " \"storage_id\": [\"list_int\", [0, 1, 2, 3]]}}";

/* Four slots of 16 bytes at 64-byte boundaries (256), then 1000 bytes of workspace (1024). */
#define ARENA_BYTES 1280
static const char* k_manifest =
    "{\"format\":\"kiln.manifest\",\"version\":1,"
    "\"inputs\":[{\"name\":\"x\",\"shape\":[4],\"dtype\":\"float32\"}],"
    "\"outputs\":[{\"shape\":[4],\"dtype\":\"float32\"}],\"params\":[\"w\"],"
    "\"storage_bytes\":[16,16,16,16],\"total_bytes\":64,\"kernels\":[\"ws_axpy\",\"ws_relu\"],"
    "\"workspace_bytes\":1000,\"arena_bytes\":1280}";

/* The same with a workspace of INT64_MAX bytes. */
static const char* k_huge_manifest =
    "{\"format\":\"kiln.manifest\",\"version\":1,"
    "\"inputs\":[{\"name\":\"x\",\"shape\":[4],\"dtype\":\"float32\"}],"
    "\"outputs\":[{\"shape\":[4],\"dtype\":\"float32\"}],\"params\":[\"w\"],"
    "\"storage_bytes\":[16,16,16,16],\"total_bytes\":64,\"kernels\":[\"ws_axpy\",\"ws_relu\"],"
    "\"workspace_bytes\":9223372036854775807}";

static const float k_x[4] = {1, -2, 3, -4}, k_w[4] = {0.5f, 1, -7, 9};
static const float k_want[4] = {2.5f, 0, 0, 1};

static size_t put_str(unsigned char* p, const char* s, size_t n) {
  size_t i;
  for (i = 0; i < 8; ++i) p[i] = (unsigned char)((uint64_t)n >> (8 * i));
  memcpy(p + 8, s, n);
  return 8 + n;
}

/* The factory of the model with this manifest, importing the system library with the kernels. */
static int make_model(const char* manifest, TVMFFIObject** out) {
  DLDevice cpu = {kDLCPU, 0};
  DLDataType f32 = {kDLFloat, 32, 1};
  int64_t shape4 = 4;
  const char* name = "w";
  TVMFFIObject *t = NULL, *params = NULL, *lib = NULL;
  unsigned char* buf = (unsigned char*)malloc(4096);
  const TVMFFIByteArray* p;
  size_t n = 0, records = 16 + 8 + 9 + 8; /* magic, reserved, ["w"], count */
  int status = -1;
  if (TVMFFIEnvModRegisterSystemLibSymbol("__tvm_ffi_ws_axpy", (void*)ws_axpy) != 0 ||
      TVMFFIEnvModRegisterSystemLibSymbol("__tvm_ffi_ws_relu", (void*)ws_relu) != 0 ||
      mr_module_system_lib("", &lib) != 0 || mr_tensor_create(1, &shape4, f32, cpu, &t) != 0 ||
      mr_tensor_copy_from_bytes(mr_tensor_dl(t), k_w, sizeof(k_w)) != 0 ||
      mr_params_save(&name, &t, 1, &params) != 0)
    goto done;
  p = mr_bytes_view(params);
  n += put_str(buf + n, k_graph, strlen(k_graph));
  memcpy(buf + n, p->data + 16, 8); /* 1 param */
  memcpy(buf + n + 8, p->data + 16, 8 + 9); /* its name */
  n += 25;
  memcpy(buf + n, p->data + records, p->size - records);
  n += p->size - records;
  n += put_str(buf + n, "default", 7);
  n += put_str(buf + n, manifest, strlen(manifest));
  if (mr_graph_factory_load((const char*)buf, n, out) != 0) goto done;
  if (mr_module_import(*out, lib) != 0) {
    mr_object_release(*out);
    goto done;
  }
  status = 0;
done:
  mr_object_release(t);
  mr_object_release(params);
  mr_object_release(lib);
  free(buf);
  return status;
}

/* set_input, run and get_output twice with allocations refused; 0 when all succeed and the
 * output is right. */
static int run_refusing(TVMFFIObject* ex) {
  float y[4];
  int round, status = 0;
  g_refuse = 1;
  for (round = 0; round < 2 && status == 0; ++round) {
    memset(y, 0, sizeof(y));
    status = mr_graph_executor_set_input(ex, "x", k_x, sizeof(k_x)) ||
             mr_graph_executor_run(ex) || mr_graph_executor_get_output(ex, 0, y, sizeof(y)) ||
             memcmp(y, k_want, sizeof(y)) != 0;
  }
  g_refuse = 0;
  return status;
}

static unsigned char g_arena[ARENA_BYTES + 64] __attribute__((aligned(64)));

int main(void) {
  DLDevice cpu = {kDLCPU, 0};
  TVMFFIObject *model = NULL, *ex = NULL;
  CHECK_OK(make_model(k_manifest, &model));
  CHECK(mr_graph_model_arena_bytes(model) == ARENA_BYTES);
  /* A workspace so large that the arena's size would wrap around is refused. */
  CHECK_OK(make_model(k_huge_manifest, &ex));
  CHECK_FAIL(mr_graph_executor_create_in_arena(ex, g_arena, ARENA_BYTES, &model),
             "storage slots and workspace exceed 9223372036854775807 bytes");
  CHECK(mr_graph_model_arena_bytes(ex) == -1);
  mr_object_release(ex);
  ex = NULL;

  /* The arena executor: nothing allocated after it is created. */
  CHECK_FAIL(mr_graph_executor_create_in_arena(model, g_arena, ARENA_BYTES - 1, &ex),
             "the arena holds 1279 bytes; the model needs 1280 (256 for tensors, 1024");
  CHECK_FAIL(mr_graph_executor_create_in_arena(model, g_arena + 8, ARENA_BYTES, &ex),
             "must be 64-byte aligned");
  CHECK_OK(mr_graph_executor_create_in_arena(model, g_arena, ARENA_BYTES, &ex));
  CHECK_FAIL(mr_graph_executor_create_in_arena(model, g_arena, ARENA_BYTES, &ex),
             "already comes from another arena executor");
  g_refused = 0;
  CHECK_OK(run_refusing(ex));
  CHECK(g_refused == 0);
  CHECK((unsigned char*)g_workspace >= g_arena + 256 &&
        (unsigned char*)g_workspace + WORKSPACE_BYTES <= g_arena + ARENA_BYTES);
  CHECK(mr_workspace_region() != NULL);
  mr_object_release(ex);
  CHECK(mr_workspace_region() == NULL); /* released with the executor */

  /* A heap executor takes its kernel's workspace from the heap on first use: refused. */
  CHECK_OK(mr_graph_executor_create(model, cpu, &ex));
  g_refused = 0;
  CHECK(run_refusing(ex) != 0);
  CHECK(g_refused > 0);
  mr_object_release(ex);
  mr_object_release(model);
  return CHECK_RESULT();
}
