/* Device modules (kinds "opencl" and "cuda"): a validated payload, and one program per
 * device built at the first call of a kernel there. A kernel is a packed function
 * taking its arguments in arg_types order (buffers as device pointers: an OpaquePtr, a
 * DLTensor* or a Tensor whose data is used; scalars as Int/Float), then one Int per
 * launch tag; it launches on the current stream of the thread's current device. */
#include <stdlib.h>
#include <string.h>

#include "../module.h"
#include "gpu.h"

typedef struct {
  const mr_gpu_backend_t* backend;
  mr_gpu_payload_t payload;
  void* programs[MR_MAX_DEVICE_IDS]; /* built on first use, guarded by g_program_mutex */
  TVMFFIObject* module; /* the module that owns this (a back pointer, not a reference) */
} mr_gpu_module_t;

typedef struct {
  TVMFFIObject* module; /* held: the kernel runs the module's code */
  mr_gpu_module_t* gm;
  uint32_t index;
} mr_gpu_kernel_t;

static mr_mutex_t g_program_mutex = MR_MUTEX_INIT;

/* ---- arguments ---- */
/* float -> IEEE half bits, rounding to nearest even. */
static uint16_t half_bits(float value) {
  uint32_t x, sign, mant;
  int32_t exp;
  memcpy(&x, &value, 4);
  sign = (x >> 16) & 0x8000u;
  exp = (int32_t)((x >> 23) & 0xFF) - 127 + 15;
  mant = x & 0x7FFFFFu;
  if (((x >> 23) & 0xFF) == 0xFF) return (uint16_t)(sign | 0x7C00u | (mant ? 0x200u : 0));
  if (exp >= 31) return (uint16_t)(sign | 0x7C00u);
  if (exp <= 0) {
    uint32_t shift, half, rest;
    if (exp < -10) return (uint16_t)sign;
    mant |= 0x800000u;
    shift = (uint32_t)(14 - exp);
    half = mant >> shift;
    rest = mant & ((1u << shift) - 1);
    if (rest > (1u << (shift - 1)) || (rest == (1u << (shift - 1)) && (half & 1))) ++half;
    return (uint16_t)(sign | half);
  }
  {
    uint32_t h = ((uint32_t)exp << 10) | (mant >> 13), rest = mant & 0x1FFFu;
    if (rest > 0x1000u || (rest == 0x1000u && (h & 1))) ++h; /* may carry into the exponent */
    return (uint16_t)(sign | h);
  }
}

static int bad_arg(const mr_gpu_func_t* f, uint32_t i, const char* expected, const TVMFFIAny* a) {
  return mr_error_setf(kMrErrorType, "kernel '%s': argument %u must be %s, got %s", f->name,
                       (unsigned)i, expected, mr_type_index_name(a->type_index));
}

static int convert_buffer(const mr_gpu_func_t* f, uint32_t i, const TVMFFIAny* a, void** out) {
  switch (a->type_index) {
    case kTVMFFINone: *out = NULL; return 0;
    case kTVMFFIOpaquePtr: *out = a->v_ptr; return 0;
    case kTVMFFIDLTensorPtr: *out = ((const DLTensor*)a->v_ptr)->data; return 0;
    case kTVMFFITensor: *out = mr_tensor_dl(a->v_obj)->data; return 0;
    default: return bad_arg(f, i, "a buffer (a device pointer or a tensor)", a);
  }
}

static int convert_arg(const mr_gpu_func_t* f, uint32_t i, const TVMFFIAny* a,
                       mr_kernel_arg_t* out) {
  DLDataType t = f->arg_types[i];
  memset(out, 0, sizeof(*out));
  out->size = t.bits / 8;
  if (t.code == kDLOpaqueHandle) {
    out->size = sizeof(void*);
    return convert_buffer(f, i, a, &out->v.ptr);
  }
  if (t.code == kDLFloat) {
    double x;
    if (a->type_index == kTVMFFIFloat) x = a->v_float64;
    else if (a->type_index == kTVMFFIInt || a->type_index == kTVMFFIBool) x = (double)a->v_int64;
    else return bad_arg(f, i, "a float", a);
    if (t.bits == 64) out->v.f64 = x;
    else if (t.bits == 32) out->v.f32 = (float)x;
    else out->v.f16_bits = half_bits((float)x);
    return 0;
  }
  if (a->type_index != kTVMFFIInt && a->type_index != kTVMFFIBool)
    return bad_arg(f, i, t.code == kDLBool ? "a bool" : "an int", a);
  switch (t.bits) { /* two's complement: the low bits are the value for int and uint */
    case 8: out->v.i8 = (int8_t)(uint8_t)(a->v_int64 & 0xFF); break;
    case 16: out->v.i16 = (int16_t)(uint16_t)(a->v_int64 & 0xFFFF); break;
    case 32: out->v.i32 = (int32_t)(uint32_t)(a->v_int64 & 0xFFFFFFFF); break;
    default: out->v.i64 = a->v_int64; break;
  }
  return 0;
}

/* The launch extents that follow the kernel arguments. */
static int read_launch(const mr_gpu_func_t* f, const TVMFFIAny* args, mr_launch_t* l) {
  uint32_t t;
  int d;
  for (d = 0; d < 3; ++d) l->grid[d] = l->block[d] = 1;
  l->dyn_shmem = 0;
  for (t = 0; t < f->num_tags; ++t) {
    const TVMFFIAny* a = &args[f->num_args + t];
    uint8_t tag = f->tags[t];
    if (a->type_index != kTVMFFIInt && a->type_index != kTVMFFIBool)
      return bad_arg(f, f->num_args + t, "an int (a launch extent)", a);
    if (a->v_int64 < 0 || a->v_int64 > INT32_MAX)
      return mr_value_error("kernel '%s': launch extent %u is %lld, out of [0, 2^31)", f->name,
                            (unsigned)t, (long long)a->v_int64);
    if (tag == MR_LAUNCH_DYN_SHMEM) l->dyn_shmem = (size_t)a->v_int64;
    else if (tag >= MR_LAUNCH_BLOCK_X) l->block[tag - MR_LAUNCH_BLOCK_X] = (size_t)a->v_int64;
    else l->grid[tag] = (size_t)a->v_int64;
  }
  return 0;
}

static int program_for(mr_gpu_module_t* gm, int32_t dev_id, void** out) {
  int status = 0;
  mr_mutex_lock(&g_program_mutex);
  if (!gm->programs[dev_id])
    status = gm->backend->program_create(dev_id, &gm->payload, &gm->programs[dev_id]);
  *out = gm->programs[dev_id];
  mr_mutex_unlock(&g_program_mutex);
  return status;
}

static int kernel_call(void* self, const TVMFFIAny* args, int32_t num_args, TVMFFIAny* result) {
  mr_gpu_kernel_t* k = (mr_gpu_kernel_t*)self;
  const mr_gpu_backend_t* be = k->gm->backend;
  const mr_gpu_func_t* f = &k->gm->payload.funcs[k->index];
  mr_kernel_arg_t small[16], *conv = small;
  mr_launch_t launch;
  void* program;
  uint32_t i;
  int status = -1, d;
  (void)result;
  if (num_args < 0 || (uint32_t)num_args != f->num_args + f->num_tags)
    return mr_error_setf(kMrErrorType, "kernel '%s' takes %u arguments (%u kernel arguments, "
                         "then %u launch extents), got %d", f->name,
                         (unsigned)(f->num_args + f->num_tags), (unsigned)f->num_args,
                         (unsigned)f->num_tags, (int)num_args);
  launch.device_id = mr_gpu_current_device(be->device_type);
  if (read_launch(f, args, &launch) != 0) return -1;
  if (f->num_args > sizeof(small) / sizeof(small[0])) {
    conv = (mr_kernel_arg_t*)malloc(f->num_args * sizeof(*conv));
    if (!conv) return mr_error_oom("kernel arguments");
  }
  for (i = 0; i < f->num_args; ++i)
    if (convert_arg(f, i, &args[i], &conv[i]) != 0) goto done;
  for (d = 0; d < 3; ++d)
    if (launch.grid[d] == 0 || launch.block[d] == 0) { /* nothing to run */
      status = 0;
      goto done;
    }
  if (program_for(k->gm, launch.device_id, &program) != 0) goto done;
  launch.stream = TVMFFIEnvGetStream(be->device_type, launch.device_id);
  status = be->launch(program, &k->gm->payload, k->index, conv, &launch);
done:
  if (conv != small) free(conv);
  return status;
}

static void kernel_free(void* self) {
  mr_gpu_kernel_t* k = (mr_gpu_kernel_t*)self;
  mr_object_release(k->module);
  free(k);
}

/* ---- the module ---- */
static int gpu_get_function(void* self, const char* name, TVMFFIObject** out) {
  mr_gpu_module_t* gm = (mr_gpu_module_t*)self;
  int64_t index = mr_gpu_payload_find(&gm->payload, name);
  mr_gpu_kernel_t* k;
  *out = NULL;
  if (index < 0) return 0;
  k = (mr_gpu_kernel_t*)malloc(sizeof(*k));
  if (!k) return mr_error_oom("a kernel function");
  k->gm = gm;
  k->index = (uint32_t)index;
  k->module = gm->module; /* alive: its functions are looked up through it */
  if (mr_function_create_closure(k, kernel_call, kernel_free, out) != 0) {
    free(k);
    return -1;
  }
  mr_object_retain(k->module);
  return 0;
}

static void gpu_module_free(void* self) {
  mr_gpu_module_t* gm = (mr_gpu_module_t*)self;
  int i;
  for (i = 0; i < MR_MAX_DEVICE_IDS; ++i)
    if (gm->programs[i]) gm->backend->program_free(gm->programs[i]);
  mr_gpu_payload_free(&gm->payload);
  free(gm);
}

int mr_gpu_module_load(const mr_gpu_backend_t* backend, const char* data, size_t size,
                       TVMFFIObject** out_module) {
  mr_gpu_module_t* gm = (mr_gpu_module_t*)calloc(1, sizeof(*gm));
  if (!gm) return mr_error_oom("a device module");
  gm->backend = backend;
  if (mr_gpu_payload_parse(backend->kind, data, size, &gm->payload) != 0) {
    free(gm);
    return -1;
  }
  if (mr_module_create(backend->kind, gm, gpu_get_function, gpu_module_free, out_module) != 0) {
    gpu_module_free(gm);
    return -1;
  }
  gm->module = *out_module;
  return 0;
}

const mr_gpu_payload_t* mr_gpu_module_payload(TVMFFIObject* module) {
  mr_module_obj_t* m = mr_module_cast(module);
  if (!m || m->get_function != gpu_get_function) return NULL;
  return &((mr_gpu_module_t*)m->self)->payload;
}
