/* The CUDA driver API (libcuda.so.1) as the backend uses it: the types and constants it
 * needs (written out: no SDK headers), the entry points found with dlopen, and the
 * devices with their primary contexts. */
#ifndef MR_DEVICE_CUDA_H_
#define MR_DEVICE_CUDA_H_

#include "gpu.h"

typedef int CUresult;
typedef int CUdevice;
typedef unsigned long long CUdeviceptr;
typedef struct mr_cu_context* CUcontext;
typedef struct mr_cu_module* CUmodule;
typedef struct mr_cu_function* CUfunction;
typedef struct mr_cu_stream* CUstream;

#define MR_CUDA_SUCCESS 0
#define MR_CUDA_ERROR_NO_DEVICE 100
/* CUdevice_attribute */
#define MR_CU_ATTR_MAX_THREADS_PER_BLOCK 1
#define MR_CU_ATTR_MAX_BLOCK_DIM_X 2
#define MR_CU_ATTR_MAX_BLOCK_DIM_Y 3
#define MR_CU_ATTR_MAX_BLOCK_DIM_Z 4
#define MR_CU_ATTR_MAX_SHARED_MEMORY_PER_BLOCK 8
#define MR_CU_ATTR_WARP_SIZE 10
#define MR_CU_ATTR_MAX_REGISTERS_PER_BLOCK 12
#define MR_CU_ATTR_CLOCK_RATE 13
#define MR_CU_ATTR_MULTIPROCESSOR_COUNT 16
#define MR_CU_ATTR_L2_CACHE_SIZE 38
#define MR_CU_ATTR_COMPUTE_CAPABILITY_MAJOR 75
#define MR_CU_ATTR_COMPUTE_CAPABILITY_MINOR 76
/* CUfunction_attribute, CUjit_option */
#define MR_CU_FUNC_MAX_DYNAMIC_SHARED_SIZE_BYTES 8
#define MR_CU_JIT_ERROR_LOG_BUFFER 5
#define MR_CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES 6

typedef struct {
  CUresult (*Init)(unsigned int);
  CUresult (*DriverGetVersion)(int*);
  CUresult (*DeviceGetCount)(int*);
  CUresult (*DeviceGet)(CUdevice*, int);
  CUresult (*DeviceGetAttribute)(int*, int, CUdevice);
  CUresult (*DeviceGetName)(char*, int, CUdevice);
  CUresult (*DeviceTotalMem)(size_t*, CUdevice);
  CUresult (*DevicePrimaryCtxRetain)(CUcontext*, CUdevice);
  CUresult (*CtxSetCurrent)(CUcontext);
  CUresult (*MemGetInfo)(size_t*, size_t*);
  CUresult (*MemAlloc)(CUdeviceptr*, size_t);
  CUresult (*MemFree)(CUdeviceptr);
  CUresult (*MemcpyHtoDAsync)(CUdeviceptr, const void*, size_t, CUstream);
  CUresult (*MemcpyDtoHAsync)(void*, CUdeviceptr, size_t, CUstream);
  CUresult (*MemcpyDtoDAsync)(CUdeviceptr, CUdeviceptr, size_t, CUstream);
  CUresult (*MemcpyPeerAsync)(CUdeviceptr, CUcontext, CUdeviceptr, CUcontext, size_t, CUstream);
  CUresult (*StreamCreate)(CUstream*, unsigned int);
  CUresult (*StreamDestroy)(CUstream);
  CUresult (*StreamSynchronize)(CUstream);
  CUresult (*ModuleLoadDataEx)(CUmodule*, const void*, unsigned int, int*, void**);
  CUresult (*ModuleUnload)(CUmodule);
  CUresult (*ModuleGetFunction)(CUfunction*, CUmodule, const char*);
  CUresult (*FuncSetAttribute)(CUfunction, int, int);
  CUresult (*LaunchKernel)(CUfunction, unsigned int, unsigned int, unsigned int, unsigned int,
                           unsigned int, unsigned int, unsigned int, CUstream, void**, void**);
  CUresult (*GetErrorName)(CUresult, const char**);
  CUresult (*GetErrorString)(CUresult, const char**);
} mr_cu_fns_t;

/* The loaded driver, or NULL with an error naming the library and why it failed
 * ("libcuda.so.1 not found: ..."). The library is MR_CUDA_LIBRARY when set. */
const mr_cu_fns_t* mr_cu_driver(void);
/* Makes the device's primary context current on this thread (retained at first use);
 * *out_ctx is it. -1 with an error when there is no such device. */
int mr_cu_enter(int32_t device_id, CUcontext* out_ctx);
/* Records "cuda: <what> failed: <name>: <description>" and returns -1. */
int mr_cu_fail(const char* what, CUresult err);

#endif /* MR_DEVICE_CUDA_H_ */
