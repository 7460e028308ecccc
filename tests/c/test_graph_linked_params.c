/* Linked params (a link-params build): the payload holds no weights, the manifest lists them
 * as "linked_params", and the kernel library's "kiln_linked_param"(storage_id) returns each
 * one's DLTensor. The executor reads the weight where it lies (no copy, no arena slot: the
 * arena holds the other slots only), refuses to set it, and checks the library's tensor
 * against the graph at load. Kernels and lookup: hand-written, in the system library. */
#include <stdlib.h>

#include "check.h"
#include "graph/graph.h"
#include "microruntime/graph_executor.h"

static float* data(const TVMFFIAny* a) { return (float*)((DLTensor*)a->v_ptr)->data; }

/* out = 2 x + w */
static int axpy(void* h, const TVMFFIAny* a, int32_t n, TVMFFIAny* r) {
  int i;
  (void)h, (void)n, (void)r;
  for (i = 0; i < 4; ++i) data(&a[2])[i] = 2.0f * data(&a[0])[i] + data(&a[1])[i];
  return 0;
}

/* ---- the weight, as a link-params library holds it ---- */
static const float k_w[4] __attribute__((aligned(64))) = {0.5f, 1, -7, 9};
static int64_t g_shape[1] = {4};
static DLTensor g_w = {(void*)k_w, {kDLCPU, 0}, 1, {kDLFloat, 32, 1}, g_shape, NULL, 0};
static int g_lookup_sid = 1; /* the slot the lookup answers for (another: None) */

static int linked_param(void* h, const TVMFFIAny* a, int32_t n, TVMFFIAny* r) {
  (void)h;
  if (n != 1 || a[0].type_index != kTVMFFIInt) return -1;
  if (a[0].v_int64 == g_lookup_sid) {
    r->type_index = kTVMFFIDLTensorPtr;
    r->v_ptr = &g_w;
  }
  return 0;
}

/* ---- the model: x (input), w (linked param) -> 2 x + w ---- */
static const char* k_graph =
    "{\"nodes\": [{\"op\": \"null\", \"name\": \"x\", \"inputs\": []},"
    "{\"op\": \"null\", \"name\": \"w\", \"inputs\": []},"
    "{\"op\": \"tvm_op\", \"name\": \"mix\", \"inputs\": [[0, 0, 0], [1, 0, 0]], \"attrs\":"
    " {\"func_name\": \"lp_axpy\", \"num_inputs\": \"2\", \"num_outputs\": \"1\","
    " \"flatten_data\": \"0\"}}],"
    "\"arg_nodes\": [0, 1], \"heads\": [[2, 0, 0]], \"node_row_ptr\": [0, 1, 2, 3],"
    "\"attrs\": {\"shape\": [\"list_shape\", [[4], [4], [4]]],"
    " \"dltype\": [\"list_str\", [\"float32\", \"float32\", \"float32\"]],"
    " \"storage_id\": [\"list_int\", [0, 1, 2]]}}";

#define MANIFEST_HEAD                                                                        \
  "{\"format\":\"kiln.manifest\",\"version\":1,"                                             \
  "\"inputs\":[{\"name\":\"x\",\"shape\":[4],\"dtype\":\"float32\"}],"                       \
  "\"outputs\":[{\"shape\":[4],\"dtype\":\"float32\"}],\"params\":[],"                       \
  "\"storage_bytes\":[16,16,16],\"total_bytes\":48,\"kernels\":[\"lp_axpy\"],"
/* Two slots of 16 bytes at 64-byte boundaries: w's slot is the library's. */
#define ARENA_BYTES 128

static size_t put_str(unsigned char* p, const char* s, size_t n) {
  size_t i;
  for (i = 0; i < 8; ++i) p[i] = (unsigned char)((uint64_t)n >> (8 * i));
  memcpy(p + 8, s, n);
  return 8 + n;
}

/* The factory's payload; a factory loaded as the system library's module reads it in place. */
static unsigned char g_payload[4096];

/* The factory with this manifest (no params in its payload), importing the system library;
 * in_place: loaded as a module of the library's blob (the payload then the library's, read
 * in place). */
static int make_model_in(const char* manifest, int in_place, TVMFFIObject** out) {
  unsigned char* buf = g_payload;
  size_t n = 0;
  TVMFFIObject* lib = NULL;
  int status = -1;
  if (TVMFFIEnvModRegisterSystemLibSymbol("__tvm_ffi_lp_axpy", (void*)axpy) != 0 ||
      TVMFFIEnvModRegisterSystemLibSymbol("__tvm_ffi_kiln_linked_param", (void*)linked_param) ||
      mr_module_system_lib("", &lib) != 0)
    return -1;
  n += put_str(buf + n, k_graph, strlen(k_graph));
  memset(buf + n, 0, 16); /* 0 params, 0 names */
  n += 16;
  n += put_str(buf + n, "default", 7);
  n += put_str(buf + n, manifest, strlen(manifest));
  if ((in_place ? mr_module_load_from_library("GraphExecutorFactory", (const char*)buf, n, lib,
                                               out)
                : mr_graph_factory_load((const char*)buf, n, out)) == 0) {
    status = mr_module_import(*out, lib);
    if (status != 0) mr_object_release(*out);
  }
  mr_object_release(lib);
  return status;
}

static int make_model(const char* manifest, TVMFFIObject** out) {
  return make_model_in(manifest, 0, out);
}

static int run_once(TVMFFIObject* ex) {
  static const float x[4] = {1, -2, 3, -4}, want[4] = {2.5f, -3, -1, 1};
  float y[4];
  return mr_graph_executor_set_input(ex, "x", x, sizeof(x)) || mr_graph_executor_run(ex) ||
         mr_graph_executor_get_output(ex, 0, y, sizeof(y)) || memcmp(y, want, sizeof(y)) != 0;
}

static unsigned char g_arena[ARENA_BYTES] __attribute__((aligned(64)));

/* A model whose library's tensor for w is wrong in one way: the factory check names it. */
static void check_refused(const char* why) {
  TVMFFIObject* model = NULL;
  CHECK_OK(make_model(MANIFEST_HEAD "\"linked_params\":[\"w\"]}", &model));
  CHECK_FAIL(mr_graph_factory_check(model), why);
  mr_object_release(model);
}

int main(void) {
  DLDevice cpu = {kDLCPU, 0};
  TVMFFIObject *model = NULL, *ex = NULL;
  float w[4] = {0};

  /* Graph JSON and manifest are copied from a caller's buffer, read in place in a library's;
   * either way the executors of the factory share its graph. */
  {
    const mr_graph_t* g;
    const char* manifest;
    size_t size;
    const DLTensor* const* linked;
    int in_place;
    CHECK_OK(mr_graph_register());
    for (in_place = 0; in_place < 2; ++in_place) {
      CHECK_OK(make_model_in(MANIFEST_HEAD "\"linked_params\":[\"w\"]}", in_place, &model));
      CHECK_OK(mr_graph_factory_plan(model, &g, &manifest, &size, &linked));
      CHECK((manifest > (const char*)g_payload &&
             manifest < (const char*)g_payload + sizeof(g_payload)) == in_place);
      CHECK_OK(mr_graph_executor_create_in_arena(model, g_arena, ARENA_BYTES, &ex));
      CHECK(mr_graph_executor_graph(mr_graph_executor_of(ex)) == g);
      mr_object_release(model); /* the executor holds the factory (and so the library) */
      CHECK_OK(run_once(ex));
      mr_object_release(ex);
    }
  }

  CHECK_OK(make_model(MANIFEST_HEAD "\"linked_params\":[\"w\"]}", &model));
  CHECK(mr_graph_model_arena_bytes(model) == ARENA_BYTES);
  CHECK_OK(mr_graph_executor_create_in_arena(model, g_arena, ARENA_BYTES, &ex));
  CHECK_OK(run_once(ex));
  CHECK_FAIL(mr_graph_executor_set_input(ex, "w", w, sizeof(w)),
             "set_input: parameter 'w' is linked into the kernel library");
  CHECK_OK(run_once(ex)); /* unchanged */
  mr_object_release(ex);
  CHECK_OK(mr_graph_executor_create(model, cpu, &ex)); /* on the heap too */
  CHECK_OK(run_once(ex));
  mr_object_release(ex);
  mr_object_release(model);

  /* The manifest's list is checked against the graph and the payload. */
  CHECK_FAIL(make_model(MANIFEST_HEAD "\"linked_params\":[\"v\"]}", &model),
             "linked param 'v' is not an input of the graph");
  CHECK_FAIL(make_model(MANIFEST_HEAD "\"linked_params\":[\"w\",\"w\"]}", &model),
             "linked param 'w' is listed twice");
  CHECK_FAIL(make_model(MANIFEST_HEAD "\"linked_params\":\"w\"}", &model),
             "'linked_params' must be a list");
  CHECK_FAIL(make_model(MANIFEST_HEAD "\"linked_params\":[]}", &model),
             "lists 1 inputs, the graph has more (input 'w')");

  /* The library's tensor is checked against the graph's entry. */
  g_lookup_sid = 2;
  check_refused("the library holds no tensor for storage slot 1");
  g_lookup_sid = 1;
  g_shape[0] = 5;
  check_refused("linked param 'w' expects [4] float32, got [5] float32");
  g_shape[0] = 4;
  g_w.data = (char*)k_w + 4;
  check_refused("is not compact CPU data at a 64-byte boundary");
  g_w.data = (void*)k_w;
  return CHECK_RESULT();
}
