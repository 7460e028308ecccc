/* CUDA modules of device modules: the PTX, cubin or fatbin loaded into one device's
 * primary context at the first call of one of its kernels there (a failed load reports
 * the JIT's log), one CUfunction per function, and launches with cuLaunchKernel on the
 * stream, with the dynamic shared memory the launch asks for. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda.h"

/* Above this, a kernel must opt in to more dynamic shared memory. */
#define MR_CU_DEFAULT_DYN_SHMEM (48 * 1024)

typedef struct {
  int32_t device_id;
  CUmodule module;
  uint32_t num_funcs;
  CUfunction* funcs; /* one per function of the payload */
} mr_cu_program_t;

static void program_free(void* self) {
  mr_cu_program_t* p = (mr_cu_program_t*)self;
  const mr_cu_fns_t* fn = mr_cu_driver();
  if (!p) return;
  if (fn && p->module && mr_cu_enter(p->device_id, NULL) == 0) (void)fn->ModuleUnload(p->module);
  free(p->funcs);
  free(p);
}

static int program_create(int32_t device_id, const mr_gpu_payload_t* payload, void** out) {
  const mr_cu_fns_t* fn = mr_cu_driver();
  char log[2048];
  int options[2] = {MR_CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES, MR_CU_JIT_ERROR_LOG_BUFFER};
  void* values[2];
  mr_cu_program_t* p;
  CUresult err;
  uint32_t i;
  if (!fn || mr_cu_enter(device_id, NULL) != 0) return -1;
  p = (mr_cu_program_t*)calloc(1, sizeof(*p));
  if (!p || !(p->funcs = (CUfunction*)calloc(payload->num_funcs + 1, sizeof(CUfunction)))) {
    free(p);
    return mr_error_oom("a CUDA module");
  }
  p->device_id = device_id;
  memset(log, 0, sizeof(log));
  values[0] = (void*)(uintptr_t)(sizeof(log) - 1);
  values[1] = log;
  err = fn->ModuleLoadDataEx(&p->module, payload->code, 2, options, values);
  if (err != MR_CUDA_SUCCESS) {
    char what[sizeof(log) + 128];
    snprintf(what, sizeof(what), "loading the module's %s on device %d (log: %s)", payload->fmt,
             (int)device_id, log[0] ? log : "empty");
    p->module = NULL;
    mr_cu_fail(what, err);
    goto fail;
  }
  for (i = 0; i < payload->num_funcs; ++i) {
    err = fn->ModuleGetFunction(&p->funcs[i], p->module, payload->funcs[i].name);
    if (err != MR_CUDA_SUCCESS) {
      char what[MR_MAX_NAME + 64];
      snprintf(what, sizeof(what), "finding kernel '%s' in the module", payload->funcs[i].name);
      mr_cu_fail(what, err);
      goto fail;
    }
  }
  p->num_funcs = payload->num_funcs;
  *out = p;
  return 0;
fail:
  program_free(p);
  return -1;
}

static int launch(void* self, const mr_gpu_payload_t* payload, uint32_t index,
                  const mr_kernel_arg_t* args, const mr_launch_t* l) {
  mr_cu_program_t* p = (mr_cu_program_t*)self;
  const mr_gpu_func_t* f = &payload->funcs[index];
  const mr_cu_fns_t* fn = mr_cu_driver();
  void* small[16];
  void** params = small;
  uint32_t i;
  CUresult err;
  int status = 0;
  if (!fn || mr_cu_enter(l->device_id, NULL) != 0) return -1;
  if (f->num_args > sizeof(small) / sizeof(small[0])) {
    params = (void**)malloc(f->num_args * sizeof(void*));
    if (!params) return mr_error_oom("kernel parameters");
  }
  for (i = 0; i < f->num_args; ++i) params[i] = (void*)&args[i].v;
  if (l->dyn_shmem > MR_CU_DEFAULT_DYN_SHMEM) {
    err = fn->FuncSetAttribute(p->funcs[index], MR_CU_FUNC_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                               (int)l->dyn_shmem);
    if (err != MR_CUDA_SUCCESS) status = mr_cu_fail("cuFuncSetAttribute", err);
  }
  if (status == 0) {
    err = fn->LaunchKernel(p->funcs[index], (unsigned)l->grid[0], (unsigned)l->grid[1],
                           (unsigned)l->grid[2], (unsigned)l->block[0], (unsigned)l->block[1],
                           (unsigned)l->block[2], (unsigned)l->dyn_shmem, (CUstream)l->stream,
                           params, NULL);
    if (err != MR_CUDA_SUCCESS) {
      char what[MR_MAX_NAME + 160];
      snprintf(what, sizeof(what), "launching kernel '%s' (grid %zux%zux%zu, block %zux%zux%zu, "
               "%zu bytes of dynamic shared memory)", f->name, l->grid[0], l->grid[1],
               l->grid[2], l->block[0], l->block[1], l->block[2], l->dyn_shmem);
      status = mr_cu_fail(what, err);
    }
  }
  if (params != small) free(params);
  return status;
}

const mr_gpu_backend_t mr_gpu_cuda_backend = {"cuda", kDLCUDA, program_create, program_free,
                                              launch};
