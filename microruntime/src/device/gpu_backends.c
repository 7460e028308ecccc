/* How the core finds the GPU backends (the two hooks of internal.h), the thread's
 * current device per device type, and the GPU side's global functions: the device
 * module loaders (kinds "opencl", "cuda", "vulkan"), __tvm_set_device (which generated host
 * code calls before launching kernels) and ffi.ModuleInspectSource.
 *
 * Why hooks called from the core, rather than constructors or weak symbols: an object
 * file in a static library is linked only when something references it, so a
 * constructor here would never run in an app linked against libmicroruntime.a, and a
 * weak reference does not pull the object in either. device.c and registry.c call the
 * hooks only when MR_NO_DLOPEN is undefined, so the dlopen-free library, which
 * leaves src/device/ out, references nothing here. */
#include <stdlib.h>
#include <string.h>

#include "gpu.h"

const mr_device_api_t* mr_device_gpu_api(int32_t device_type) {
  if (device_type == kDLOpenCL) return mr_device_opencl_api();
  if (device_type == kDLCUDA) return mr_device_cuda_api();
  if (device_type == kDLVulkan) return mr_device_vulkan_api();
  return NULL;
}

const char* mr_gpu_driver_name(const char* env, const char* fallback) {
  const char* name = getenv(env);
  return name && name[0] ? name : fallback;
}

/* ---- current device ---- */
static MR_THREAD_LOCAL int32_t t_current[MR_MAX_DEVICE_TYPES];

int mr_gpu_driver_once(mr_mutex_t* mutex, int* state, void (*load)(void)) {
  int now;
  mr_mutex_lock(mutex);
  if (*state == 0) load();
  now = *state;
  mr_mutex_unlock(mutex);
  return now == 1;
}

int32_t mr_gpu_current_device(int32_t device_type) {
  return device_type > 0 && device_type < MR_MAX_DEVICE_TYPES ? t_current[device_type] : 0;
}

static int int_arg(const char* func, const char* name, const TVMFFIAny* a, int64_t* out) {
  if (a->type_index != kTVMFFIInt && a->type_index != kTVMFFIBool)
    return mr_error_setf(kMrErrorType, "%s: argument '%s' must be an int, got %s", func, name,
                         mr_type_index_name(a->type_index));
  *out = a->v_int64;
  return 0;
}

static int set_device(void* self, const TVMFFIAny* args, int32_t n, TVMFFIAny* result) {
  static const char k_name[] = "__tvm_set_device";
  int64_t type = 0, id = 0;
  (void)self;
  (void)result;
  if (n != 2)
    return mr_error_setf(kMrErrorType, "%s(device_type, device_id) takes 2 arguments, got %d",
                         k_name, (int)n);
  if (int_arg(k_name, "device_type", &args[0], &type) != 0 ||
      int_arg(k_name, "device_id", &args[1], &id) != 0)
    return -1;
  if (type <= 0 || type >= MR_MAX_DEVICE_TYPES || id < 0 || id >= MR_MAX_DEVICE_IDS)
    return mr_value_error("%s: device (%lld, %lld) is out of range (device ids below %d)",
                          k_name, (long long)type, (long long)id, MR_MAX_DEVICE_IDS);
  t_current[type] = (int32_t)id;
  return 0;
}

/* ---- loaders ---- */
static int load_from_bytes(const mr_gpu_backend_t* be, const TVMFFIAny* args, int32_t n,
                           TVMFFIAny* result) {
  const char* data;
  size_t size;
  TVMFFIObject* mod;
  if (n != 1 || mr_any_get_str(&args[0], &data, &size) != 0)
    return mr_error_setf(kMrErrorType, "ffi.Module.load_from_bytes.%s takes one bytes argument",
                         be->kind);
  if (mr_gpu_module_load(be, data, size, &mod) != 0) return -1;
  mr_any_set_object(result, mod);
  return 0;
}

static int load_opencl(void* self, const TVMFFIAny* args, int32_t n, TVMFFIAny* result) {
  (void)self;
  return load_from_bytes(&mr_gpu_opencl_backend, args, n, result);
}

static int load_vulkan(void* self, const TVMFFIAny* args, int32_t n, TVMFFIAny* result) {
  (void)self;
  return load_from_bytes(&mr_gpu_vulkan_backend, args, n, result);
}

static int load_cuda(void* self, const TVMFFIAny* args, int32_t n, TVMFFIAny* result) {
  (void)self;
  return load_from_bytes(&mr_gpu_cuda_backend, args, n, result);
}

/* ffi.ModuleInspectSource(module, fmt): the code a device module holds. */
static int inspect_source(void* self, const TVMFFIAny* args, int32_t n, TVMFFIAny* result) {
  const mr_gpu_payload_t* p;
  TVMFFIObject* str;
  (void)self;
  if (n < 1 || n > 2 || args[0].type_index != kTVMFFIModule)
    return mr_error_setf(kMrErrorType, "ffi.ModuleInspectSource(module, fmt) takes a Module");
  p = mr_gpu_module_payload(args[0].v_obj);
  if (!p)
    return mr_value_error("Module[%s] has no source: only device modules (opencl, cuda) keep "
                          "their code", mr_module_type_key(args[0].v_obj));
  /* a vulkan module holds binary SPIR-V; like TVM's, it has no source text once loaded */
  if (mr_str_create(p->code, strcmp(p->fmt, "vulkan") == 0 ? 0 : p->code_size, &str) != 0)
    return -1;
  mr_any_set_object(result, str);
  return 0;
}

static const mr_builtin_t k_gpu_builtins[] = {
    {"ffi.Module.load_from_bytes.opencl", load_opencl},
    {"ffi.Module.load_from_bytes.cuda", load_cuda},
    {"ffi.Module.load_from_bytes.vulkan", load_vulkan},
    {"__tvm_set_device", set_device},
    {"ffi.ModuleInspectSource", inspect_source},
};

const mr_builtin_t* mr_device_gpu_builtins(size_t* out_count) {
  *out_count = sizeof(k_gpu_builtins) / sizeof(k_gpu_builtins[0]);
  return k_gpu_builtins;
}
