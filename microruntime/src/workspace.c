/* TVMBackendAllocWorkspace / TVMBackendFreeWorkspace. On CPU: a thread-local
 * LIFO stack of 64-byte aligned blocks; the block at each depth is kept and
 * reused (grown when too small). Or, while a thread has a workspace region
 * (mr_workspace_set_region: a graph executor's arena, graph/arena.c), the region
 * serves them and nothing is allocated. Other devices go through
 * their device API. */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

#define MR_ERROR_FILE kMrFileWorkspace

#define MR_WS_PAGE 4096

typedef struct {
  void* ptr;
  size_t size;
} mr_ws_block_t;

typedef struct {
  mr_ws_block_t* blocks; /* blocks[0..depth) are in use; the rest are cached */
  size_t depth, count, cap;
  mr_ws_region_t* region; /* serves the thread's workspaces instead, or NULL */
} mr_ws_pool_t;

static mr_tls_key_t g_ws_key;
static mr_once_t g_ws_once = MR_ONCE_INIT;
static int g_ws_ready; /* the key exists */

static void pool_destroy(void* p) {
  mr_ws_pool_t* pool = (mr_ws_pool_t*)p;
  size_t i;
  for (i = 0; i < pool->count; ++i) mr_aligned_free(pool->blocks[i].ptr);
  free(pool->blocks);
  free(pool);
}

static void ws_key_init(void) {
  if (mr_tls_key_create(&g_ws_key, pool_destroy) == 0) mr_atomic_store_int(&g_ws_ready, 1);
}

static mr_ws_pool_t* get_pool(void) {
  mr_ws_pool_t* pool;
  mr_once(&g_ws_once, ws_key_init);
  pool = (mr_ws_pool_t*)mr_tls_get(g_ws_key);
  if (!pool) {
    pool = (mr_ws_pool_t*)calloc(1, sizeof(*pool));
    if (pool && mr_tls_set(g_ws_key, pool) != 0) {
      free(pool);
      pool = NULL;
    }
  }
  return pool;
}

static void* workspace_oom(uint64_t nbytes) {
  MR_RAISE(kMrErrorMemory, "cannot allocate a workspace of %llu bytes",
                (unsigned long long)nbytes);
  return NULL;
}

int mr_workspace_set_region(mr_ws_region_t* region) {
  mr_ws_pool_t* pool = get_pool();
  if (!pool) return MR_OOM("the workspace pool");
  if (pool->depth) return MR_RAISE(kMrErrorRuntime, "workspaces are in use on this thread");
  pool->region = region;
  return 0;
}

mr_ws_region_t* mr_workspace_region(void) {
  mr_ws_pool_t* pool =
      (mr_ws_pool_t*)(mr_atomic_load_int(&g_ws_ready) ? mr_tls_get(g_ws_key) : NULL);
  return pool ? pool->region : NULL;
}

static void* cpu_alloc(uint64_t nbytes) {
  mr_ws_pool_t* pool = get_pool();
  mr_ws_block_t* b;
  if (!pool) {
    MR_OOM("the workspace pool");
    return NULL;
  }
  if (pool->region) return pool->region->alloc(pool->region, nbytes);
  /* Blocks are whole pages: the rounding below must not wrap around. */
  if (nbytes > SIZE_MAX - MR_WS_PAGE) return workspace_oom(nbytes);
  if (pool->depth >= MR_MAX_WORKSPACE_DEPTH) {
    MR_RAISE(kMrErrorRuntime, "too many live workspaces on this thread");
    return NULL;
  }
  if (pool->depth == pool->count) {
    if (mr_grow(&pool->blocks, &pool->cap, pool->count, sizeof(*pool->blocks),
                "the workspace pool") != 0)
      return NULL;
    pool->blocks[pool->count].ptr = NULL;
    pool->blocks[pool->count].size = 0;
    ++pool->count;
  }
  b = &pool->blocks[pool->depth];
  if (b->size < nbytes || !b->ptr) {
    /* Round up to whole pages so that slowly growing requests reuse blocks. */
    size_t size = ((size_t)nbytes + MR_WS_PAGE - 1) & ~(size_t)(MR_WS_PAGE - 1);
    void* p = mr_aligned_alloc(MR_DATA_ALIGNMENT, size ? size : MR_DATA_ALIGNMENT);
    if (!p) return workspace_oom(nbytes);
    mr_aligned_free(b->ptr);
    b->ptr = p;
    b->size = size;
  }
  ++pool->depth;
  return b->ptr;
}

static int cpu_free(void* ptr) {
  mr_ws_pool_t* pool = get_pool();
  if (pool && pool->region) return pool->region->free(pool->region, ptr);
  if (!pool || pool->depth == 0)
    return MR_RAISE(kMrErrorRuntime, "no workspace to free on this thread");
  if (pool->blocks[pool->depth - 1].ptr != ptr)
    return MR_RAISE(kMrErrorRuntime, "workspace freed out of order (not LIFO)");
  --pool->depth;
  return 0;
}

void* TVMBackendAllocWorkspace(int device_type, int device_id, uint64_t nbytes,
                               int dtype_code_hint, int dtype_bits_hint) {
  const mr_device_api_t* api;
  DLDevice dev;
  DLDataType hint;
  void* p = NULL;
  if (device_type == kDLCPU) return cpu_alloc(nbytes);
  api = mr_device_api_get(device_type);
  if (!api) return NULL;
  if (nbytes > SIZE_MAX) return workspace_oom(nbytes);
  dev.device_type = device_type;
  dev.device_id = device_id;
  hint.code = (uint8_t)dtype_code_hint;
  hint.bits = (uint8_t)dtype_bits_hint;
  hint.lanes = 1;
  if (api->alloc_workspace) {
    p = api->alloc_workspace(dev, (size_t)nbytes, hint);
  } else if (api->alloc_data(dev, (size_t)nbytes, MR_DATA_ALIGNMENT, hint, &p) != 0) {
    p = NULL;
  }
  return p;
}

int TVMBackendFreeWorkspace(int device_type, int device_id, void* ptr) {
  const mr_device_api_t* api;
  DLDevice dev;
  if (device_type == kDLCPU) return cpu_free(ptr);
  api = mr_device_api_get(device_type);
  if (!api) return -1;
  dev.device_type = device_type;
  dev.device_id = device_id;
  return api->free_workspace ? api->free_workspace(dev, ptr) : api->free_data(dev, ptr);
}
