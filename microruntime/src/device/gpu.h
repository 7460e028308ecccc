/* What the GPU backends (src/device/) share: the device-module payload (TVM's
 * SaveToBytes layout), the interface a backend gives device modules (build the
 * code for one device, launch a kernel) and the thread's current device per type.
 * mr_gpu_register (microruntime/gpu.h) makes them reachable. These files are compiled
 * only into builds with dynamic loading: the drivers are found with dlopen. */
#ifndef MR_DEVICE_GPU_H_
#define MR_DEVICE_GPU_H_

#include "../internal.h"

/* ---- device-module payload (gpu_payload.c) ----
 * str fmt; u64 nfuncs; nfuncs x {str key; str name; vec<DLDataType> arg_types;
 * vec<str> launch_param_tags; vec<i32> arg_extra_tags}; str code. */
enum {
  MR_LAUNCH_GRID_X = 0, /* blockIdx.x; grid y and z follow */
  MR_LAUNCH_BLOCK_X = 3, /* threadIdx.x; block y and z follow */
  MR_LAUNCH_DYN_SHMEM = 6 /* tirx.use_dyn_shared_memory: bytes of dynamic shared memory */
};

typedef struct {
  char* name;
  DLDataType* arg_types;
  uint32_t num_args;
  uint8_t tags[MR_MAX_LAUNCH_TAGS]; /* MR_LAUNCH_* of each launch argument, in order */
  uint32_t num_tags;
  /* kind "vulkan" only: the function's SPIR-V, code_bytes at code + code_offset (word
   * aligned), and its shader flag (0: scalars in push constants). */
  size_t code_offset, code_bytes;
  uint32_t shader_flag;
} mr_gpu_func_t;

/* Kind "vulkan" (TVM's VulkanModule) differs after the functions: instead of `str code`,
 * u64 nshaders; nshaders x {str key; u32 flag; vec<u32> spirv}, one shader per function;
 * each is checked (magic, version, word counts) at load. `code` then holds the shaders. */
typedef struct {
  char fmt[16];     /* "cl", "ptx", "cubin", "fatbin", "vulkan" */
  char* code;       /* NUL-terminated copy */
  size_t code_size; /* without the NUL */
  mr_gpu_func_t* funcs;
  uint32_t num_funcs;
} mr_gpu_payload_t;

/* Parses and validates a payload of module kind `kind` ("opencl" or "cuda"): every
 * count against the bytes left, names, argument types, launch tags, the format. A
 * ValueError naming the field and its offset otherwise. *out is filled on success
 * only; free it with mr_gpu_payload_free. */
int mr_gpu_payload_parse(const char* kind, const char* data, size_t size,
                         mr_gpu_payload_t* out);
void mr_gpu_payload_free(mr_gpu_payload_t* payload);
/* Index of the kernel named `name`, or -1. */
int64_t mr_gpu_payload_find(const mr_gpu_payload_t* payload, const char* name);

/* ---- what a backend gives device modules ---- */
/* One kernel argument, converted from its TVMFFIAny to the argument type. */
typedef struct {
  union {
    void* ptr;
    int64_t i64;
    int32_t i32;
    int16_t i16;
    int8_t i8;
    uint16_t f16_bits;
    float f32;
    double f64;
  } v;
  size_t size;
} mr_kernel_arg_t;

typedef struct {
  int32_t device_id;
  size_t grid[3], block[3];
  size_t dyn_shmem;
  void* stream; /* the thread's current stream of the device; NULL: the default one */
} mr_launch_t;

typedef struct mr_gpu_backend {
  const char* kind; /* module kind and type key: "opencl", "cuda" */
  int32_t device_type;
  /* Builds (or loads) the payload's code for one device; *out_program holds one
   * kernel handle per function of the payload, in order. */
  int (*program_create)(int32_t device_id, const mr_gpu_payload_t* payload, void** out_program);
  void (*program_free)(void* program);
  /* Launches function `index` of the program asynchronously. */
  int (*launch)(void* program, const mr_gpu_payload_t* payload, uint32_t index,
                const mr_kernel_arg_t* args, const mr_launch_t* launch);
} mr_gpu_backend_t;

/* ---- device modules (gpu_module.c) ---- */
/* The module of `backend` for a payload (parsed and validated now; the driver and the
 * programs come at the first call of a kernel on each device). */
int mr_gpu_module_load(const mr_gpu_backend_t* backend, const char* data, size_t size,
                       TVMFFIObject** out_module);
/* The code of a device module, or NULL when `module` is not one. */
const mr_gpu_payload_t* mr_gpu_module_payload(TVMFFIObject* module);

/* ---- backends ---- */
extern const mr_gpu_backend_t mr_gpu_opencl_backend;
extern const mr_gpu_backend_t mr_gpu_cuda_backend;
extern const mr_gpu_backend_t mr_gpu_vulkan_backend;
const mr_device_api_t* mr_device_opencl_api(void);
const mr_device_api_t* mr_device_cuda_api(void);
const mr_device_api_t* mr_device_vulkan_api(void);
/* The driver library a backend opens: `env` when that environment variable is set and
 * not empty (a test hook, or a driver in an unusual place), else `fallback`. */
const char* mr_gpu_driver_name(const char* env, const char* fallback);

/* 1 when a backend's driver is loaded: `load` (which sets *state to 1 or -1) runs the first
 * time, under `mutex`; *state 0 means not tried yet. */
int mr_gpu_driver_once(mr_mutex_t* mutex, int* state, void (*load)(void));

/* ---- the thread's current device (gpu_backends.c) ---- */
int32_t mr_gpu_current_device(int32_t device_type);

#endif /* MR_DEVICE_GPU_H_ */
