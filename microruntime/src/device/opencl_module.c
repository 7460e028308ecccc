/* OpenCL programs of device modules: the module's OpenCL C built for one device at the
 * first call of one of its kernels there (a failed build reports the compiler's log),
 * one cl_kernel per function, and launches: clSetKernelArg per argument, global size
 * grid x block, local size block, on the stream's queue. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opencl.h"

typedef struct {
  cl_program program;
  uint32_t num_kernels;
  cl_kernel* kernels; /* one per function of the payload */
} mr_cl_program_t;

/* A cl_kernel's arguments are state: setting them and enqueueing go together. */
static mr_mutex_t g_launch_mutex = MR_MUTEX_INIT;

static void program_free(void* self) {
  mr_cl_program_t* p = (mr_cl_program_t*)self;
  const mr_cl_fns_t* fn = mr_cl_driver();
  uint32_t i;
  if (!p) return;
  for (i = 0; fn && i < p->num_kernels; ++i)
    if (p->kernels[i]) (void)fn->ReleaseKernel(p->kernels[i]);
  if (fn && p->program) (void)fn->ReleaseProgram(p->program);
  free(p->kernels);
  free(p);
}

/* Records the build failure with as much of the compiler's log as the message holds. */
static int build_failed(const mr_cl_fns_t* fn, cl_program program, const mr_cl_device_t* d,
                        int32_t device_id, cl_int err) {
  char log[MR_MAX_ERROR_MESSAGE - 256];
  size_t size = 0;
  memset(log, 0, sizeof(log));
  if (fn->GetProgramBuildInfo(program, d->id, MR_CL_PROGRAM_BUILD_LOG, 0, NULL, &size) ==
          MR_CL_SUCCESS && size > 0) {
    char* full = (char*)malloc(size + 1);
    if (full && fn->GetProgramBuildInfo(program, d->id, MR_CL_PROGRAM_BUILD_LOG, size, full,
                                        NULL) == MR_CL_SUCCESS) {
      full[size] = '\0';
      snprintf(log, sizeof(log), "%s", full);
    }
    free(full);
  }
  return mr_error_setf(kMrErrorRuntime,
                       "opencl: building the module's program for device %d failed (%d); "
                       "build log:\n%s", (int)device_id, (int)err, log[0] ? log : "(empty)");
}

static int program_create(int32_t device_id, const mr_gpu_payload_t* payload, void** out) {
  mr_cl_device_t* d = mr_cl_device(device_id);
  const mr_cl_fns_t* fn = mr_cl_driver();
  mr_cl_program_t* p;
  const char* code = payload->code;
  cl_int err = MR_CL_SUCCESS;
  uint32_t i;
  if (!d || !fn) return -1;
  p = (mr_cl_program_t*)calloc(1, sizeof(*p));
  if (!p || !(p->kernels = (cl_kernel*)calloc(payload->num_funcs + 1, sizeof(cl_kernel)))) {
    free(p);
    return mr_error_oom("an OpenCL program");
  }
  p->program = fn->CreateProgramWithSource(d->context, 1, &code, &payload->code_size, &err);
  if (!p->program) {
    mr_cl_fail("clCreateProgramWithSource", err);
    goto fail;
  }
  err = fn->BuildProgram(p->program, 1, &d->id, "", NULL, NULL);
  if (err != MR_CL_SUCCESS) {
    build_failed(fn, p->program, d, device_id, err);
    goto fail;
  }
  for (i = 0; i < payload->num_funcs; ++i) {
    p->kernels[i] = fn->CreateKernel(p->program, payload->funcs[i].name, &err);
    p->num_kernels = i + 1;
    if (!p->kernels[i]) {
      mr_error_setf(kMrErrorRuntime, "opencl: kernel '%s' is not in the module's program (%d)",
                    payload->funcs[i].name, (int)err);
      goto fail;
    }
  }
  *out = p;
  return 0;
fail:
  program_free(p);
  return -1;
}

static int launch(void* self, const mr_gpu_payload_t* payload, uint32_t index,
                  const mr_kernel_arg_t* args, const mr_launch_t* l) {
  mr_cl_program_t* p = (mr_cl_program_t*)self;
  const mr_gpu_func_t* f = &payload->funcs[index];
  const mr_cl_fns_t* fn = mr_cl_driver();
  mr_cl_device_t* d = mr_cl_device(l->device_id);
  cl_kernel k = p->kernels[index];
  size_t global[3], local[3];
  cl_int err = MR_CL_SUCCESS;
  uint32_t i, j;
  int has_dyn = 0;
  if (!fn || !d) return -1;
  for (j = 0; j < f->num_tags; ++j) has_dyn |= f->tags[j] == MR_LAUNCH_DYN_SHMEM;
  for (i = 0; i < 3; ++i) {
    global[i] = l->grid[i] * l->block[i];
    local[i] = l->block[i];
  }
  mr_mutex_lock(&g_launch_mutex);
  for (i = 0; i < f->num_args && err == MR_CL_SUCCESS; ++i)
    err = fn->SetKernelArg(k, i, args[i].size, &args[i].v);
  if (err == MR_CL_SUCCESS && has_dyn) { /* dynamic local memory: one more __local argument */
    i = f->num_args + 1;
    err = fn->SetKernelArg(k, f->num_args, l->dyn_shmem, NULL);
  }
  if (err != MR_CL_SUCCESS) {
    mr_mutex_unlock(&g_launch_mutex);
    return mr_error_setf(kMrErrorRuntime, "opencl: kernel '%s': setting argument %u failed "
                         "(%d): does the kernel's signature match its argument types?",
                         f->name, (unsigned)(i - 1), (int)err);
  }
  err = fn->EnqueueNDRangeKernel(mr_cl_queue(d, l->stream), k, 3, NULL, global, local, 0, NULL,
                                 NULL);
  mr_mutex_unlock(&g_launch_mutex);
  if (err != MR_CL_SUCCESS) {
    char what[MR_MAX_NAME + 128];
    snprintf(what, sizeof(what), "launching kernel '%s' (global %zux%zux%zu, local %zux%zux%zu)",
             f->name, global[0], global[1], global[2], local[0], local[1], local[2]);
    return mr_cl_fail(what, err);
  }
  return 0;
}

const mr_gpu_backend_t mr_gpu_opencl_backend = {"opencl", kDLOpenCL, program_create,
                                                program_free, launch};
