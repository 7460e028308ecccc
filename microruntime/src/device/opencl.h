/* The OpenCL driver (libOpenCL.so.1, the ICD loader) as the backend uses it: the few
 * types and constants of the OpenCL 1.2 API it needs (written out: no SDK headers),
 * the entry points found with dlopen, and the devices with their context and queue. */
#ifndef MR_DEVICE_OPENCL_H_
#define MR_DEVICE_OPENCL_H_

#include "gpu.h"

typedef int32_t cl_int;
typedef uint32_t cl_uint;
typedef uint64_t cl_ulong;
typedef cl_uint cl_bool;
typedef cl_ulong cl_bitfield;
typedef cl_bitfield cl_device_type;
typedef cl_bitfield cl_mem_flags;
typedef cl_bitfield cl_command_queue_properties;
typedef cl_uint cl_device_info;
typedef cl_uint cl_program_build_info;
typedef intptr_t cl_context_properties;
typedef struct mr_cl_platform* cl_platform_id;
typedef struct mr_cl_device* cl_device_id;
typedef struct mr_cl_context* cl_context;
typedef struct mr_cl_queue* cl_command_queue;
typedef struct mr_cl_mem* cl_mem;
typedef struct mr_cl_program* cl_program;
typedef struct mr_cl_kernel* cl_kernel;
typedef struct mr_cl_event* cl_event;

#define MR_CL_SUCCESS 0
#define MR_CL_DEVICE_NOT_FOUND (-1)
#define MR_CL_BUILD_PROGRAM_FAILURE (-11)
#define MR_CL_PLATFORM_NOT_FOUND_KHR (-1001)
#define MR_CL_TRUE 1u
#define MR_CL_DEVICE_TYPE_GPU ((cl_device_type)1 << 2)
#define MR_CL_DEVICE_TYPE_ALL ((cl_device_type)0xFFFFFFFFu)
#define MR_CL_MEM_READ_WRITE ((cl_mem_flags)1)
#define MR_CL_DEVICE_MAX_COMPUTE_UNITS 0x1002u
#define MR_CL_DEVICE_MAX_WORK_GROUP_SIZE 0x1004u
#define MR_CL_DEVICE_MAX_WORK_ITEM_SIZES 0x1005u
#define MR_CL_DEVICE_MAX_CLOCK_FREQUENCY 0x100Cu
#define MR_CL_DEVICE_GLOBAL_MEM_CACHE_SIZE 0x101Eu
#define MR_CL_DEVICE_GLOBAL_MEM_SIZE 0x101Fu
#define MR_CL_DEVICE_LOCAL_MEM_SIZE 0x1023u
#define MR_CL_DEVICE_NAME 0x102Bu
#define MR_CL_DRIVER_VERSION 0x102Du
#define MR_CL_DEVICE_VERSION 0x102Fu
#define MR_CL_PROGRAM_BUILD_LOG 0x1183u

/* The entry points (OpenCL 1.2; CL_API_CALL is the C calling convention here). */
typedef struct {
  cl_int (*GetPlatformIDs)(cl_uint, cl_platform_id*, cl_uint*);
  cl_int (*GetDeviceIDs)(cl_platform_id, cl_device_type, cl_uint, cl_device_id*, cl_uint*);
  cl_int (*GetDeviceInfo)(cl_device_id, cl_device_info, size_t, void*, size_t*);
  cl_context (*CreateContext)(const cl_context_properties*, cl_uint, const cl_device_id*,
                              void (*)(const char*, const void*, size_t, void*), void*, cl_int*);
  cl_int (*ReleaseContext)(cl_context);
  cl_command_queue (*CreateCommandQueue)(cl_context, cl_device_id, cl_command_queue_properties,
                                         cl_int*);
  cl_int (*ReleaseCommandQueue)(cl_command_queue);
  cl_mem (*CreateBuffer)(cl_context, cl_mem_flags, size_t, void*, cl_int*);
  cl_int (*ReleaseMemObject)(cl_mem);
  cl_int (*EnqueueReadBuffer)(cl_command_queue, cl_mem, cl_bool, size_t, size_t, void*, cl_uint,
                              const cl_event*, cl_event*);
  cl_int (*EnqueueWriteBuffer)(cl_command_queue, cl_mem, cl_bool, size_t, size_t, const void*,
                               cl_uint, const cl_event*, cl_event*);
  cl_int (*EnqueueCopyBuffer)(cl_command_queue, cl_mem, cl_mem, size_t, size_t, size_t, cl_uint,
                              const cl_event*, cl_event*);
  cl_int (*Finish)(cl_command_queue);
  cl_int (*Flush)(cl_command_queue);
  cl_program (*CreateProgramWithSource)(cl_context, cl_uint, const char**, const size_t*,
                                        cl_int*);
  cl_int (*BuildProgram)(cl_program, cl_uint, const cl_device_id*, const char*,
                         void (*)(cl_program, void*), void*);
  cl_int (*GetProgramBuildInfo)(cl_program, cl_device_id, cl_program_build_info, size_t, void*,
                                size_t*);
  cl_int (*ReleaseProgram)(cl_program);
  cl_kernel (*CreateKernel)(cl_program, const char*, cl_int*);
  cl_int (*ReleaseKernel)(cl_kernel);
  cl_int (*SetKernelArg)(cl_kernel, cl_uint, size_t, const void*);
  cl_int (*EnqueueNDRangeKernel)(cl_command_queue, cl_kernel, cl_uint, const size_t*,
                                 const size_t*, const size_t*, cl_uint, const cl_event*,
                                 cl_event*);
} mr_cl_fns_t;

typedef struct {
  cl_device_id id;
  cl_context context;     /* created at the device's first use */
  cl_command_queue queue; /* in order; the default stream */
} mr_cl_device_t;

/* The loaded driver, or NULL with an error naming the library and why it failed
 * ("libOpenCL.so.1 not found: ..."). The library is MR_OPENCL_LIBRARY when set. */
const mr_cl_fns_t* mr_cl_driver(void);
/* The device with its context and queue (created now if needed), or NULL with an error. */
mr_cl_device_t* mr_cl_device(int32_t device_id);
/* The queue to use: `stream` when given, else the device's default queue. */
cl_command_queue mr_cl_queue(const mr_cl_device_t* d, void* stream);
/* Records "opencl: <what> failed: <error name> (<code>)" and returns -1. */
int mr_cl_fail(const char* what, cl_int err);

#endif /* MR_DEVICE_OPENCL_H_ */
