/*
 * The GPU backends (CUDA, OpenCL, Vulkan), in the builds with dynamic loading
 * (libmicroruntime.a and .so, and the Python package): their drivers are found with dlopen
 * at run time, so the runtime builds and runs without their SDKs. The dlopen-free library
 * has none of this.
 *
 * Nothing of them is reachable until mr_gpu_register() ran: an object file of a static
 * library is linked only when something references it, and the runtime's core references
 * no backend. A program that runs models on a GPU calls it once at startup:
 *
 *   if (mr_gpu_register() != 0) printf("error: %s\n", mr_last_error());
 *
 * Conventions are those of microruntime.h.
 */
#ifndef MICRORUNTIME_GPU_H_
#define MICRORUNTIME_GPU_H_

#include "microruntime.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Registers the device APIs of kDLCUDA, kDLOpenCL and kDLVulkan (mr_device_api_register),
 * the loaders of device modules of kinds "cuda", "opencl" and "vulkan" (in the library blob,
 * and as TVM's globals ffi.Module.load_from_bytes.<kind>), and the global functions
 * __tvm_set_device (which generated host code calls before launching kernels) and
 * ffi.ModuleInspectSource. No driver is loaded here: a backend opens its driver when a
 * device of its type is first used. May be called again (it registers the same again). */
MR_DLL int mr_gpu_register(void);

#ifdef __cplusplus
}
#endif
#endif /* MICRORUNTIME_GPU_H_ */
