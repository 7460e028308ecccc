/* The device API table: CPU built in, other backends registered at run time (the GPU
 * backends of src/device/ by mr_gpu_register), the mr_device_* wrappers, and the
 * thread-local current stream per device. */
#include <string.h>

#include "internal.h"

#define MR_ERROR_FILE kMrFileDevice

static const mr_device_api_t* g_apis[MR_MAX_DEVICE_TYPES];
static mr_mutex_t g_device_mutex = MR_MUTEX_INIT;
static MR_THREAD_LOCAL void* g_streams[MR_MAX_DEVICE_TYPES][MR_MAX_DEVICE_IDS];

/* Names by DLPack device type, NUL-separated; an empty name is unknown. */
static const char k_device_names[] =
    "\0cpu\0cuda\0cuda_host\0opencl\0\0\0vulkan\0metal\0vpi\0rocm\0rocm_host\0ext_dev\0"
    "cuda_managed\0oneapi\0webgpu\0hexagon";

const char* mr_device_type_name(int32_t device_type) {
  const char* p = k_device_names;
  int32_t i;
  if (device_type < 1 || device_type > kDLHexagon) return "unknown";
  for (i = 0; i < device_type; ++i) p += strlen(p) + 1;
  return *p ? p : "unknown";
}

int mr_device_api_register(int32_t device_type, const mr_device_api_t* api) {
  if (device_type <= 0 || device_type >= MR_MAX_DEVICE_TYPES)
    return MR_VALUE_ERROR("invalid device type %d", (int)device_type);
  mr_mutex_lock(&g_device_mutex);
  g_apis[device_type] = api;
  mr_mutex_unlock(&g_device_mutex);
  return 0;
}

/* The backend of a device type, or NULL. */
static const mr_device_api_t* find_api(int32_t device_type) {
  const mr_device_api_t* api = NULL;
  if (device_type == kDLCPU) return mr_device_cpu_api();
  if (device_type > 0 && device_type < MR_MAX_DEVICE_TYPES) {
    mr_mutex_lock(&g_device_mutex);
    api = g_apis[device_type];
    mr_mutex_unlock(&g_device_mutex);
  }
  return api;
}

const mr_device_api_t* mr_device_api_get(int32_t device_type) {
  const mr_device_api_t* api = find_api(device_type);
  if (!api)
    MR_RAISE(kMrErrorRuntime, "no backend for device '%s' (device type %d) in this runtime",
                  mr_device_type_name(device_type), (int)device_type);
  return api;
}

int mr_device_get_attr(DLDevice dev, mr_device_attr_t attr, TVMFFIAny* out_value) {
  const mr_device_api_t* api;
  TVMFFIAny v;
  if (attr == kMrDevExist && !find_api(dev.device_type)) {
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

/* The current-stream slot of a device, or NULL when out of range. */
static void** stream_slot(int32_t device_type, int32_t device_id) {
  if (device_type < 0 || device_type >= MR_MAX_DEVICE_TYPES || device_id < 0 ||
      device_id >= MR_MAX_DEVICE_IDS)
    return NULL;
  return &g_streams[device_type][device_id];
}

int mr_device_set_stream(DLDevice dev, void* stream) {
  return TVMFFIEnvSetStream(dev.device_type, dev.device_id, stream, NULL);
}

void* TVMFFIEnvGetStream(int32_t device_type, int32_t device_id) {
  void** slot = stream_slot(device_type, device_id);
  return slot ? *slot : NULL;
}

int TVMFFIEnvSetStream(int32_t device_type, int32_t device_id, void* stream,
                       void** opt_out_original_stream) {
  void** slot = stream_slot(device_type, device_id);
  if (!slot)
    return MR_VALUE_ERROR("device (%d, %d) out of range for streams", (int)device_type,
                          (int)device_id);
  if (opt_out_original_stream) *opt_out_original_stream = *slot;
  *slot = stream;
  return 0;
}

int TVMFFIEnvCheckSignals(void) { return 0; }
