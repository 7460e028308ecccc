/* A graph executor in a caller's memory: mr_graph_model_arena_bytes and
 * mr_graph_executor_create_in_arena (graph_executor.h).
 *
 * The arena holds the storage slots the compiler planned, each at a 64-byte aligned offset
 * (not those of linked params: they view the library's constant data), then the CPU workspace its kernels take at most (the manifest's "workspace_bytes"), which
 * becomes the creating thread's workspace region (workspace.c). What describes the executor
 * (graph, ops, tensor headers) is allocated while it is created; after that, set_input, run
 * and get_output allocate nothing. The compiler writes the same total into the manifest as
 * "arena_bytes", so an app can declare a static buffer of that size. */
#include <string.h>

#include "executor.h"
#include "json.h"

#define MR_ERROR_FILE kMrFileGraphArena

static uint64_t aligned(uint64_t n) {
  return (n + MR_DATA_ALIGNMENT - 1) & ~(uint64_t)(MR_DATA_ALIGNMENT - 1);
}

/* The manifest's "workspace_bytes" (0 when the manifest or the key is absent). */
static int manifest_workspace(const char* manifest, size_t size, uint64_t* out) {
  mr_json_t doc;
  uint32_t k;
  int64_t v = 0;
  int status = 0;
  *out = 0;
  if (!manifest) return 0;
  if (mr_json_parse(manifest, size, "manifest", &doc) != 0) return MR_GRAPH_REFAIL(NULL);
  k = mr_json_get(&doc, doc.root, "workspace_bytes");
  if (k && (mr_json_int(&doc, k, &v) != 0 || v < 0))
    status = MR_GRAPH_FAIL("manifest: 'workspace_bytes' is not a byte count");
  else
    *out = (uint64_t)v;
  return status;
}

/* The next block of the workspace stack. */
static void* ws_alloc(mr_ws_region_t* self, uint64_t nbytes) {
  mr_graph_arena_ws_t* w = (mr_graph_arena_ws_t*)self;
  void* p;
  if (nbytes > w->size - w->used) {
    MR_RAISE(kMrErrorMemory, "a workspace of %llu bytes does not fit in the %llu bytes "
                  "left of the arena's workspace (%llu bytes; the model's arena is too small)",
                  (unsigned long long)nbytes, (unsigned long long)(w->size - w->used),
                  (unsigned long long)w->size);
    return NULL;
  }
  p = w->mem + w->used;
  nbytes = aligned(nbytes);
  w->used += nbytes < w->size - w->used ? (size_t)nbytes : w->size - w->used;
  ++w->depth;
  return p;
}

static int ws_free(mr_ws_region_t* self, void* ptr) {
  mr_graph_arena_ws_t* w = (mr_graph_arena_ws_t*)self;
  unsigned char* p = (unsigned char*)ptr;
  if (w->depth == 0 || p < w->mem || p >= w->mem + w->used)
    return MR_RAISE(kMrErrorRuntime, "no such workspace to free on this thread");
  w->used = (size_t)(p - w->mem);
  --w->depth;
  return 0;
}

/* Bytes of the slots (but those of linked params, which stay in the library) and of the
 * workspace. */
static int plan(TVMFFIObject* model, uint64_t* out_slots, uint64_t* out_workspace) {
  const mr_graph_t* g;
  const char* manifest;
  const DLTensor* const* linked;
  size_t manifest_size;
  uint32_t s;
  uint64_t total = 0;
  if (mr_graph_factory_plan(model, &g, &manifest, &manifest_size, &linked) != 0 ||
      manifest_workspace(manifest, manifest_size, out_workspace) != 0)
    return -1;
  /* Checked sums: the arena's size is an int64 and must not wrap around. */
  for (s = 0; s < g->num_storage; ++s)
    if (!(linked && linked[s]) && mr_add_overflow_u64(total, aligned(g->storage_bytes[s]), &total))
      break;
  if (s < g->num_storage || aligned(*out_workspace) > (uint64_t)INT64_MAX ||
      total > (uint64_t)INT64_MAX - aligned(*out_workspace))
    return MR_GRAPH_FAIL("arena: the model's storage slots and workspace exceed %lld bytes",
                         (long long)INT64_MAX);
  *out_slots = total;
  return 0;
}

int64_t mr_graph_model_arena_bytes(TVMFFIObject* model) {
  uint64_t slots, workspace;
  if (plan(model, &slots, &workspace) != 0) return -1;
  return (int64_t)(slots + aligned(workspace));
}

int mr_graph_executor_create_in_arena(TVMFFIObject* model, void* arena, size_t arena_bytes,
                                      TVMFFIObject** out_executor) {
  DLDevice cpu = {kDLCPU, 0};
  uint64_t slots, workspace;
  TVMFFIObject* ex_module;
  mr_graph_executor_t* ex;
  if (plan(model, &slots, &workspace) != 0) return -1;
  if (!arena || ((uintptr_t)arena) % MR_DATA_ALIGNMENT)
    return MR_GRAPH_FAIL("create_in_arena: the arena must be %d-byte aligned",
                         MR_DATA_ALIGNMENT);
  if ((uint64_t)arena_bytes < slots + aligned(workspace))
    return MR_GRAPH_FAIL("create_in_arena: the arena holds %llu bytes; the model needs %llu "
                         "(%llu for tensors, %llu for kernel workspace): declare it with the "
                         "manifest's arena_bytes", (unsigned long long)arena_bytes,
                         (unsigned long long)(slots + aligned(workspace)),
                         (unsigned long long)slots, (unsigned long long)aligned(workspace));
  if (mr_workspace_region())
    return MR_GRAPH_FAIL("create_in_arena: this thread's workspace already comes from another "
                         "arena executor; release that one first");
  if (mr_graph_factory_create_executor_in(model, &cpu, 1, arena, (size_t)slots, &ex_module) != 0)
    return -1;
  ex = mr_graph_executor_of(ex_module);
  ex->ws.base.alloc = ws_alloc;
  ex->ws.base.free = ws_free;
  ex->ws.mem = (unsigned char*)arena + slots;
  ex->ws.size = (size_t)aligned(workspace);
  if (workspace && mr_workspace_set_region(&ex->ws.base) != 0) {
    mr_object_release(ex_module);
    return -1;
  }
  ex->arena_size = (size_t)(slots + aligned(workspace));
  *out_executor = ex_module;
  return 0;
}

int mr_graph_arena_slot(mr_graph_executor_t* ex, uint32_t s) {
  const mr_graph_t* g = ex->g;
  uint64_t need = aligned(g->storage_bytes[s]);
  if (g->storage_device[s] && g->storage_device[s] != kDLCPU)
    return MR_GRAPH_FAIL("create_in_arena: storage slot %u is on device type %d; an arena "
                         "holds CPU tensors only", (unsigned)s, (int)g->storage_device[s]);
  if (need > ex->arena_size - ex->arena_used)
    return MR_GRAPH_FAIL("create_in_arena: storage slot %u (%llu bytes) does not fit in the "
                         "arena", (unsigned)s, (unsigned long long)g->storage_bytes[s]);
  ex->slot_data[s] = ex->arena + ex->arena_used;
  ex->arena_used += (size_t)need;
  return 0;
}

void mr_graph_arena_release(mr_graph_executor_t* ex) {
  if (ex->arena && mr_workspace_region() == &ex->ws.base) (void)mr_workspace_set_region(NULL);
}
