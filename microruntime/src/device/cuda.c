/* The CUDA device through the driver API, found with dlopen (libcuda.so.1, or the library
 * named by MR_CUDA_LIBRARY): each device's primary context, memory (a CUdeviceptr is the
 * DLTensor's data), copies ordered on the stream, streams and device attributes.
 * Kernels are in cuda_module.c. */
#include <stdio.h>
#include <string.h>

#include "cuda.h"

static mr_mutex_t g_cu_mutex = MR_MUTEX_INIT; /* guards everything below */
static int g_state;                           /* 0 not tried, 1 loaded, -1 failed */
static char g_error[512];
static mr_cu_fns_t g_fns;
static int g_num_devices;
static CUcontext g_contexts[MR_MAX_DEVICE_IDS];

static const struct {
  const char* name;
  size_t offset;
} k_entries[] = {
#define MR_CU_ENTRY(f, sym) {sym, offsetof(mr_cu_fns_t, f)}
    MR_CU_ENTRY(Init, "cuInit"),
    MR_CU_ENTRY(DriverGetVersion, "cuDriverGetVersion"),
    MR_CU_ENTRY(DeviceGetCount, "cuDeviceGetCount"),
    MR_CU_ENTRY(DeviceGet, "cuDeviceGet"),
    MR_CU_ENTRY(DeviceGetAttribute, "cuDeviceGetAttribute"),
    MR_CU_ENTRY(DeviceGetName, "cuDeviceGetName"),
    MR_CU_ENTRY(DeviceTotalMem, "cuDeviceTotalMem_v2"),
    MR_CU_ENTRY(DevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain"),
    MR_CU_ENTRY(CtxSetCurrent, "cuCtxSetCurrent"),
    MR_CU_ENTRY(MemGetInfo, "cuMemGetInfo_v2"),
    MR_CU_ENTRY(MemAlloc, "cuMemAlloc_v2"),
    MR_CU_ENTRY(MemFree, "cuMemFree_v2"),
    MR_CU_ENTRY(MemcpyHtoDAsync, "cuMemcpyHtoDAsync_v2"),
    MR_CU_ENTRY(MemcpyDtoHAsync, "cuMemcpyDtoHAsync_v2"),
    MR_CU_ENTRY(MemcpyDtoDAsync, "cuMemcpyDtoDAsync_v2"),
    MR_CU_ENTRY(MemcpyPeerAsync, "cuMemcpyPeerAsync"),
    MR_CU_ENTRY(StreamCreate, "cuStreamCreate"),
    MR_CU_ENTRY(StreamDestroy, "cuStreamDestroy_v2"),
    MR_CU_ENTRY(StreamSynchronize, "cuStreamSynchronize"),
    MR_CU_ENTRY(ModuleLoadDataEx, "cuModuleLoadDataEx"),
    MR_CU_ENTRY(ModuleUnload, "cuModuleUnload"),
    MR_CU_ENTRY(ModuleGetFunction, "cuModuleGetFunction"),
    MR_CU_ENTRY(FuncSetAttribute, "cuFuncSetAttribute"),
    MR_CU_ENTRY(LaunchKernel, "cuLaunchKernel"),
    MR_CU_ENTRY(GetErrorName, "cuGetErrorName"),
    MR_CU_ENTRY(GetErrorString, "cuGetErrorString"),
#undef MR_CU_ENTRY
};

int mr_cu_fail(const char* what, CUresult err) {
  const char *name = NULL, *text = NULL;
  if (g_state == 1) {
    (void)g_fns.GetErrorName(err, &name);
    (void)g_fns.GetErrorString(err, &text);
  }
  return mr_error_setf(kMrErrorRuntime, "cuda: %s failed: %s (%d): %s", what,
                       name ? name : "CUDA error", (int)err, text ? text : "no description");
}

/* Caller holds the mutex. */
static void load_driver(void) {
  const char* name = mr_gpu_driver_name("MR_CUDA_LIBRARY", "libcuda.so.1");
  size_t i;
  CUresult err;
  void* lib = mr_dl_open(name);
  g_state = -1;
  if (!lib) {
    snprintf(g_error, sizeof(g_error), "%s not found: %s", name, mr_dl_error());
    return;
  }
  for (i = 0; i < sizeof(k_entries) / sizeof(k_entries[0]); ++i) {
    void* sym = mr_dl_sym(lib, k_entries[i].name);
    if (!sym) {
      snprintf(g_error, sizeof(g_error), "%s has no %s: the driver is too old", name,
               k_entries[i].name);
      return;
    }
    memcpy((char*)&g_fns + k_entries[i].offset, &sym, sizeof(sym));
  }
  err = g_fns.Init(0);
  if (err == MR_CUDA_ERROR_NO_DEVICE) { /* loaded, no device */
    g_state = 1;
    return;
  }
  if (err != MR_CUDA_SUCCESS || g_fns.DeviceGetCount(&g_num_devices) != MR_CUDA_SUCCESS) {
    snprintf(g_error, sizeof(g_error), "cuInit of %s failed with CUDA error %d", name, (int)err);
    g_num_devices = 0;
    return;
  }
  if (g_num_devices > MR_MAX_DEVICE_IDS) g_num_devices = MR_MAX_DEVICE_IDS;
  g_state = 1;
}

/* 1 when the driver is loaded; it is tried once per process. */
static int driver_loaded(void) { return mr_gpu_driver_once(&g_cu_mutex, &g_state, load_driver); }

const mr_cu_fns_t* mr_cu_driver(void) {
  if (driver_loaded()) return &g_fns;
  mr_error_setf(kMrErrorRuntime, "cuda: %s", g_error);
  return NULL;
}

static int has_device(int32_t device_id) {
  return driver_loaded() && device_id >= 0 && device_id < g_num_devices;
}

int mr_cu_enter(int32_t device_id, CUcontext* out_ctx) {
  CUresult err = MR_CUDA_SUCCESS;
  CUcontext ctx;
  CUdevice dev;
  if (!mr_cu_driver()) return -1;
  if (!has_device(device_id))
    return mr_error_setf(kMrErrorRuntime, "cuda: device %d does not exist (%d device%s found)",
                         (int)device_id, g_num_devices, g_num_devices == 1 ? "" : "s");
  mr_mutex_lock(&g_cu_mutex);
  if (!g_contexts[device_id]) {
    err = g_fns.DeviceGet(&dev, device_id);
    if (err == MR_CUDA_SUCCESS) err = g_fns.DevicePrimaryCtxRetain(&g_contexts[device_id], dev);
  }
  ctx = g_contexts[device_id];
  mr_mutex_unlock(&g_cu_mutex);
  if (err != MR_CUDA_SUCCESS) return mr_cu_fail("cuDevicePrimaryCtxRetain", err);
  if ((err = g_fns.CtxSetCurrent(ctx)) != MR_CUDA_SUCCESS) return mr_cu_fail("cuCtxSetCurrent", err);
  if (out_ctx) *out_ctx = ctx;
  return 0;
}

static int check(CUresult err, const char* what) {
  return err == MR_CUDA_SUCCESS ? 0 : mr_cu_fail(what, err);
}

/* ---- attributes ---- */
static int set_str(TVMFFIAny* out, const char* text) {
  TVMFFIObject* s;
  if (mr_str_create(text, strlen(text), &s) != 0) return -1;
  mr_any_set_object(out, s);
  return 0;
}

static int attr(CUdevice dev, int which, int* out) {
  return check(g_fns.DeviceGetAttribute(out, which, dev), "cuDeviceGetAttribute");
}

static int cu_get_attr(DLDevice d, mr_device_attr_t what, TVMFFIAny* out) {
  static const int k_simple[] = {-1, MR_CU_ATTR_MAX_THREADS_PER_BLOCK, MR_CU_ATTR_WARP_SIZE,
                                 MR_CU_ATTR_MAX_SHARED_MEMORY_PER_BLOCK, -1, -1,
                                 MR_CU_ATTR_CLOCK_RATE, MR_CU_ATTR_MULTIPROCESSOR_COUNT, -1,
                                 MR_CU_ATTR_MAX_REGISTERS_PER_BLOCK, -1, -1, -1,
                                 MR_CU_ATTR_L2_CACHE_SIZE};
  char buf[256];
  int a = 0, b = 0, c = 0;
  CUdevice dev;
  memset(out, 0, sizeof(*out));
  if (what == kMrDevExist) {
    out->type_index = kTVMFFIInt;
    out->v_int64 = has_device(d.device_id);
    return 0;
  }
  if (!has_device(d.device_id) || g_fns.DeviceGet(&dev, d.device_id) != MR_CUDA_SUCCESS)
    return 0; /* None */
  if ((size_t)what < sizeof(k_simple) / sizeof(k_simple[0]) && k_simple[what] >= 0) {
    if (attr(dev, k_simple[what], &a) != 0) return -1;
    out->type_index = kTVMFFIInt;
    out->v_int64 = a;
    return 0;
  }
  switch (what) {
    case kMrDevComputeVersion:
      if (attr(dev, MR_CU_ATTR_COMPUTE_CAPABILITY_MAJOR, &a) != 0 ||
          attr(dev, MR_CU_ATTR_COMPUTE_CAPABILITY_MINOR, &b) != 0)
        return -1;
      snprintf(buf, sizeof(buf), "%d.%d", a, b);
      return set_str(out, buf);
    case kMrDevDeviceName:
      memset(buf, 0, sizeof(buf));
      if (check(g_fns.DeviceGetName(buf, (int)sizeof(buf) - 1, dev), "cuDeviceGetName") != 0)
        return -1;
      return set_str(out, buf);
    case kMrDevMaxThreadDimensions:
      if (attr(dev, MR_CU_ATTR_MAX_BLOCK_DIM_X, &a) != 0 ||
          attr(dev, MR_CU_ATTR_MAX_BLOCK_DIM_Y, &b) != 0 ||
          attr(dev, MR_CU_ATTR_MAX_BLOCK_DIM_Z, &c) != 0)
        return -1;
      snprintf(buf, sizeof(buf), "[%d, %d, %d]", a, b, c);
      return set_str(out, buf);
    case kMrDevApiVersion: /* the CUDA version the driver implements, e.g. 12040 */
      if (check(g_fns.DriverGetVersion(&a), "cuDriverGetVersion") != 0) return -1;
      out->type_index = kTVMFFIInt;
      out->v_int64 = a;
      return 0;
    case kMrDevTotalGlobalMemory: {
      size_t total = 0;
      if (check(g_fns.DeviceTotalMem(&total, dev), "cuDeviceTotalMem") != 0) return -1;
      out->type_index = kTVMFFIInt;
      out->v_int64 = (int64_t)total;
      return 0;
    }
    case kMrDevAvailableGlobalMemory: {
      size_t free_bytes = 0, total = 0;
      if (mr_cu_enter(d.device_id, NULL) != 0 ||
          check(g_fns.MemGetInfo(&free_bytes, &total), "cuMemGetInfo") != 0)
        return -1;
      out->type_index = kTVMFFIInt;
      out->v_int64 = (int64_t)free_bytes;
      return 0;
    }
    default: return 0; /* None */
  }
}

/* ---- memory ---- */
static int cu_alloc(DLDevice dev, size_t nbytes, size_t alignment, DLDataType hint, void** out) {
  CUdeviceptr p = 0;
  CUresult err;
  (void)alignment; /* allocations are 256-byte aligned */
  (void)hint;
  if (mr_cu_enter(dev.device_id, NULL) != 0) return -1;
  err = g_fns.MemAlloc(&p, nbytes ? nbytes : 1);
  if (err != MR_CUDA_SUCCESS)
    return mr_error_setf(kMrErrorMemory, "cuda: cannot allocate %zu bytes on device %d (error %d)",
                         nbytes, (int)dev.device_id, (int)err);
  *out = (void*)(uintptr_t)p;
  return 0;
}

static int cu_free(DLDevice dev, void* ptr) {
  if (!ptr || mr_cu_enter(dev.device_id, NULL) != 0) return 0;
  (void)g_fns.MemFree((CUdeviceptr)(uintptr_t)ptr);
  return 0;
}

static CUdeviceptr dptr(const DLTensor* t) {
  return (CUdeviceptr)(uintptr_t)t->data + t->byte_offset;
}

/* Copies are queued on the stream (the thread's current one by default) and waited for,
 * so they follow the kernels launched there. */
static int cu_copy(const DLTensor* from, DLTensor* to, DLDevice dev, void* stream) {
  size_t n = mr_tensor_nbytes(from);
  int from_cu = from->device.device_type == kDLCUDA, to_cu = to->device.device_type == kDLCUDA;
  CUstream s = (CUstream)(stream ? stream : TVMFFIEnvGetStream(kDLCUDA, dev.device_id));
  CUcontext src_ctx, dst_ctx;
  CUresult err;
  if (from_cu && to_cu && from->device.device_id != to->device.device_id) {
    if (mr_cu_enter(to->device.device_id, &dst_ctx) != 0 ||
        mr_cu_enter(from->device.device_id, &src_ctx) != 0)
      return -1;
    err = g_fns.MemcpyPeerAsync(dptr(to), dst_ctx, dptr(from), src_ctx, n, s);
  } else {
    if (mr_cu_enter(dev.device_id, NULL) != 0) return -1;
    if (from_cu && to_cu) err = g_fns.MemcpyDtoDAsync(dptr(to), dptr(from), n, s);
    else if (to_cu) err = g_fns.MemcpyHtoDAsync(dptr(to), (const char*)from->data + from->byte_offset, n, s);
    else err = g_fns.MemcpyDtoHAsync((char*)to->data + to->byte_offset, dptr(from), n, s);
  }
  if (err != MR_CUDA_SUCCESS) return mr_cu_fail("cuMemcpy", err);
  return check(g_fns.StreamSynchronize(s), "cuStreamSynchronize");
}

/* ---- streams ---- */
static int cu_stream_create(DLDevice dev, void** out) {
  CUstream s = NULL;
  if (mr_cu_enter(dev.device_id, NULL) != 0 ||
      check(g_fns.StreamCreate(&s, 0), "cuStreamCreate") != 0)
    return -1;
  *out = s;
  return 0;
}

static int cu_stream_free(DLDevice dev, void* stream) {
  if (!stream) return 0;
  if (mr_cu_enter(dev.device_id, NULL) != 0) return -1;
  return check(g_fns.StreamDestroy((CUstream)stream), "cuStreamDestroy");
}

static int cu_stream_sync(DLDevice dev, void* stream) {
  void* s = stream ? stream : TVMFFIEnvGetStream(kDLCUDA, dev.device_id);
  if (mr_cu_enter(dev.device_id, NULL) != 0) return -1;
  return check(g_fns.StreamSynchronize((CUstream)s), "cuStreamSynchronize");
}

static const mr_device_api_t k_cuda_api = {
    "cuda",           cu_get_attr,    cu_alloc,       cu_free, cu_copy,
    cu_stream_create, cu_stream_free, cu_stream_sync, NULL,    NULL,
};

const mr_device_api_t* mr_device_cuda_api(void) { return &k_cuda_api; }
