/* The device API table: CPU built in, other backends registered at run time,
 * the mr_device_* wrappers, and the thread-local current stream per device. */
#include <string.h>

#include "internal.h"

static const mr_device_api_t* g_apis[MR_MAX_DEVICE_TYPES];
static mr_mutex_t g_device_mutex = MR_MUTEX_INIT;
static MR_THREAD_LOCAL void* g_streams[MR_MAX_DEVICE_TYPES][MR_MAX_DEVICE_IDS];

const char* mr_device_type_name(int32_t device_type) {
  switch (device_type) {
    case kDLCPU: return "cpu";
    case kDLCUDA: return "cuda";
    case kDLCUDAHost: return "cuda_host";
    case kDLOpenCL: return "opencl";
    case kDLVulkan: return "vulkan";
    case kDLMetal: return "metal";
    case kDLVPI: return "vpi";
    case kDLROCM: return "rocm";
    case kDLROCMHost: return "rocm_host";
    case kDLExtDev: return "ext_dev";
    case kDLCUDAManaged: return "cuda_managed";
    case kDLOneAPI: return "oneapi";
    case kDLWebGPU: return "webgpu";
    case kDLHexagon: return "hexagon";
    default: return "unknown";
  }
}

int mr_device_api_register(int32_t device_type, const mr_device_api_t* api) {
  if (device_type <= 0 || device_type >= MR_MAX_DEVICE_TYPES)
    return mr_value_error("invalid device type %d", (int)device_type);
  mr_mutex_lock(&g_device_mutex);
  g_apis[device_type] = api;
  mr_mutex_unlock(&g_device_mutex);
  return 0;
}

const mr_device_api_t* mr_device_api_get(int32_t device_type) {
  const mr_device_api_t* api = NULL;
  if (device_type == kDLCPU) return mr_device_cpu_api();
  if (device_type > 0 && device_type < MR_MAX_DEVICE_TYPES) {
    mr_mutex_lock(&g_device_mutex);
    api = g_apis[device_type];
    mr_mutex_unlock(&g_device_mutex);
  }
  if (!api)
    mr_error_setf("RuntimeError", "no backend for device '%s' (device type %d) in this runtime",
                  mr_device_type_name(device_type), (int)device_type);
  return api;
}

int mr_device_get_attr(DLDevice dev, mr_device_attr_t attr, TVMFFIAny* out_value) {
  const mr_device_api_t* api;
  TVMFFIAny v;
  if (attr == kMrDevExist && (dev.device_type <= 0 || dev.device_type >= MR_MAX_DEVICE_TYPES ||
                              (dev.device_type != kDLCPU && !g_apis[dev.device_type]))) {
    memset(out_value, 0, sizeof(*out_value));
    out_value->type_index = kTVMFFIInt;
    return 0;
  }
  api = mr_device_api_get(dev.device_type);
  if (!api) return -1;
  memset(&v, 0, sizeof(v));
  if (api->get_attr(dev, attr, &v) != 0) return -1;
  *out_value = v;
  return 0;
}

int mr_device_stream_create(DLDevice dev, void** out_stream) {
  const mr_device_api_t* api = mr_device_api_get(dev.device_type);
  return api ? api->stream_create(dev, out_stream) : -1;
}

int mr_device_stream_free(DLDevice dev, void* stream) {
  const mr_device_api_t* api = mr_device_api_get(dev.device_type);
  return api ? api->stream_free(dev, stream) : -1;
}

int mr_device_stream_sync(DLDevice dev, void* stream) {
  const mr_device_api_t* api = mr_device_api_get(dev.device_type);
  return api ? api->stream_sync(dev, stream) : -1;
}

static int stream_slot_check(int32_t device_type, int32_t device_id) {
  if (device_type < 0 || device_type >= MR_MAX_DEVICE_TYPES || device_id < 0 ||
      device_id >= MR_MAX_DEVICE_IDS)
    return mr_value_error("device (%d, %d) out of range for streams",
                         (int)device_type, (int)device_id);
  return 0;
}

int mr_device_set_stream(DLDevice dev, void* stream) {
  return TVMFFIEnvSetStream(dev.device_type, dev.device_id, stream, NULL);
}

void* TVMFFIEnvGetStream(int32_t device_type, int32_t device_id) {
  if (device_type < 0 || device_type >= MR_MAX_DEVICE_TYPES || device_id < 0 ||
      device_id >= MR_MAX_DEVICE_IDS)
    return NULL;
  return g_streams[device_type][device_id];
}

int TVMFFIEnvSetStream(int32_t device_type, int32_t device_id, void* stream,
                       void** opt_out_original_stream) {
  if (stream_slot_check(device_type, device_id) != 0) return -1;
  if (opt_out_original_stream) *opt_out_original_stream = g_streams[device_type][device_id];
  g_streams[device_type][device_id] = stream;
  return 0;
}

int TVMFFIEnvCheckSignals(void) { return 0; }
