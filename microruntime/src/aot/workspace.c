/* Kernel workspaces in the AOT runtime: a stack over the region the run function hands over
 * (mr_aot_workspace_begin), each block at a 64-byte boundary; nothing is allocated. */
#include "microruntime/aot_runtime.h"

#define MR_AOT_ALIGNMENT 64

static unsigned char* g_mem;
static size_t g_size, g_used;
static unsigned g_depth;

static void fail(const char* message) { TVMFFIErrorSetRaisedFromCStr("MemoryError", message); }

int32_t mr_aot_workspace_begin(void* mem, size_t nbytes) {
  if (g_depth) {
    TVMFFIErrorSetRaisedFromCStr("RuntimeError", "workspaces of another run are in use");
    return -1;
  }
  g_mem = (unsigned char*)mem;
  g_size = nbytes;
  g_used = 0;
  return 0;
}

void mr_aot_workspace_end(void) {
  g_mem = NULL;
  g_size = g_used = 0;
  g_depth = 0;
}

void* TVMBackendAllocWorkspace(int device_type, int device_id, uint64_t nbytes,
                               int dtype_code_hint, int dtype_bits_hint) {
  uint64_t need = (nbytes + MR_AOT_ALIGNMENT - 1) & ~(uint64_t)(MR_AOT_ALIGNMENT - 1);
  void* p;
  (void)device_id, (void)dtype_code_hint, (void)dtype_bits_hint;
  if (device_type != kDLCPU) {
    fail("the AOT runtime has CPU workspaces only");
    return NULL;
  }
  if (!g_mem || need < nbytes || need > (uint64_t)(g_size - g_used)) {
    fail(g_mem ? "a kernel workspace does not fit in the rest of the model's workspace"
               : "no workspace region: kernels run inside tvmgen_<name>_run");
    return NULL;
  }
  p = g_mem + g_used;
  g_used += (size_t)need;
  ++g_depth;
  return p;
}

int TVMBackendFreeWorkspace(int device_type, int device_id, void* ptr) {
  unsigned char* p = (unsigned char*)ptr;
  (void)device_type, (void)device_id;
  if (!g_depth || p < g_mem || p >= g_mem + g_used) {
    TVMFFIErrorSetRaisedFromCStr("RuntimeError", "no such workspace to free");
    return -1;
  }
  g_used = (size_t)(p - g_mem);
  --g_depth;
  return 0;
}
