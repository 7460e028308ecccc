/* The GPU backends' registration (mr_gpu_register, microruntime/gpu.h): their device APIs,
 * the device module loaders (kinds "opencl", "cuda", "vulkan"), __tvm_set_device (which
 * generated host code calls before launching kernels) and ffi.ModuleInspectSource; and the
 * thread's current device per device type.
 *
 * Why an explicit call, rather than constructors or weak symbols: an object file in a static
 * library is linked only when something references it, so a constructor here would never
 * run in an app linked against libmicroruntime.a, and a weak reference does not pull the
 * object in either. The core references nothing here, so the dlopen-free library, which
 * leaves src/device/ out, links without it. */
#include <stdlib.h>
#include <string.h>

#include "microruntime/gpu.h"
#include "gpu.h"

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
static int load_opencl(const char* data, size_t size, TVMFFIObject** out_module) {
  return mr_gpu_module_load(&mr_gpu_opencl_backend, data, size, out_module);
}

static int load_cuda(const char* data, size_t size, TVMFFIObject** out_module) {
  return mr_gpu_module_load(&mr_gpu_cuda_backend, data, size, out_module);
}

static int load_vulkan(const char* data, size_t size, TVMFFIObject** out_module) {
  return mr_gpu_module_load(&mr_gpu_vulkan_backend, data, size, out_module);
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

static const mr_builtin_t k_globals[] = {
    {"__tvm_set_device", set_device},
    {"ffi.ModuleInspectSource", inspect_source},
};

static const struct {
  const mr_gpu_backend_t* backend;
  mr_module_loader_t load;
  const mr_device_api_t* (*api)(void);
} k_backends[] = {
    {&mr_gpu_opencl_backend, load_opencl, mr_device_opencl_api},
    {&mr_gpu_cuda_backend, load_cuda, mr_device_cuda_api},
    {&mr_gpu_vulkan_backend, load_vulkan, mr_device_vulkan_api},
};

int mr_gpu_register(void) {
  size_t i;
  int status = mr_registry_set_table(k_globals, sizeof(k_globals) / sizeof(k_globals[0]));
  for (i = 0; status == 0 && i < sizeof(k_backends) / sizeof(k_backends[0]); ++i) {
    const mr_gpu_backend_t* be = k_backends[i].backend;
    status = mr_device_api_register(be->device_type, k_backends[i].api());
    if (status == 0) status = mr_module_loader_register(be->kind, k_backends[i].load);
  }
  return status;
}
