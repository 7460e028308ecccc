/* Tensors (type 70): the 24-byte object header followed by a DLTensor, with
 * shape and strides stored inline. Data is owned (device allocation), borrowed
 * from a base tensor (views), or held by a foreign owner (a DLPack managed tensor,
 * see tensor_dlpack.c) released with the tensor. */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

#define MR_ERROR_FILE kMrFileNdarray

enum { MR_TENSOR_OWNED, MR_TENSOR_VIEW, MR_TENSOR_FOREIGN };

typedef struct {
  TVMFFIObject header;
  DLTensor dl; /* at offset 24 */
  int kind;
  void* owner;                 /* base Tensor object (view) or foreign owner */
  void (*release)(void* owner); /* foreign owner's release */
} mr_tensor_obj_t;

/* Fails on a negative dimension or when the product of the non-zero
 * dimensions exceeds INT64_MAX, so every partial product (a compact stride)
 * fits in int64. */
int mr_shape_numel(int32_t ndim, const int64_t* shape, uint64_t* out_numel) {
  uint64_t n = 1;
  int32_t i, empty = 0;
  for (i = 0; i < ndim; ++i) {
    if (shape[i] < 0) return -1;
    if (shape[i] == 0) empty = 1;
    else if (mr_mul_overflow_u64(n, (uint64_t)shape[i], &n) || n > INT64_MAX) return -1;
  }
  *out_numel = empty ? 0 : n;
  return 0;
}

#ifndef MR_CONFIG_SMALL
/* "(2, 3)", "(5,)" or "()" into buf (of at least 8 bytes), ending in "...)" when it is cut. */
static void format_shape(int32_t ndim, const int64_t* shape, char* buf, size_t size) {
  size_t len = 1;
  int32_t i;
  buf[0] = '(';
  for (i = 0; i < ndim; ++i) {
    char dim[32];
    size_t n = (size_t)snprintf(dim, sizeof(dim), "%s%lld", i ? ", " : "", (long long)shape[i]);
    if (len + n + 8 > size) { /* room for ", ...)" and the NUL */
      memcpy(buf + len, ", ...", 5);
      len += 5;
      break;
    }
    memcpy(buf + len, dim, n);
    len += n;
  }
  if (ndim == 1 && len + 3 <= size) buf[len++] = ',';
  buf[len++] = ')';
  buf[len] = '\0';
}
#endif

int mr_tensor_nbytes_checked(int32_t ndim, const int64_t* shape, DLDataType dtype,
                             const char* context, uint64_t* out_nbytes) {
  char dims[MR_MAX_NDIM * 24 + 16], dt[48];
  const char *problem = NULL, *sep = context ? ": " : "";
  uint64_t numel = 0, bytes = 0;
  int32_t i;
  if (!context) context = "";
  if (ndim < 0 || ndim > MR_MAX_NDIM)
    return MR_VALUE_ERROR("%s%sndim %d out of range [0, %d]", context, sep, (int)ndim,
                          MR_MAX_NDIM);
  if (ndim && !shape) return MR_VALUE_ERROR("%s%sshape is NULL", context, sep);
  for (i = 0; i < ndim && !problem; ++i)
    if (shape[i] < 0) problem = "has a negative dimension";
  if (!problem && (mr_shape_numel(ndim, shape, &numel) != 0 ||
                   mr_mul_overflow_u64(numel, mr_dtype_bytes(dtype), &bytes) ||
                   bytes > (uint64_t)INT64_MAX || bytes > SIZE_MAX))
    problem = "is too large (size overflows)";
  if (!problem) {
    *out_nbytes = bytes;
    return 0;
  }
#ifdef MR_CONFIG_SMALL
  (void)dims;
  (void)dt;
#else
  format_shape(ndim, shape, dims, sizeof(dims));
  if (mr_dtype_format(dtype, dt, sizeof(dt)) != 0) strcpy(dt, "(unknown dtype)");
#endif
  return MR_VALUE_ERROR("%s%stensor of shape %s %s %s", context, sep, dims, dt, problem);
}

size_t mr_tensor_nbytes(const DLTensor* t) {
  uint64_t n, bytes;
  if (mr_shape_numel(t->ndim, t->shape, &n) != 0) return 0;
  if (mr_mul_overflow_u64(n, mr_dtype_bytes(t->dtype), &bytes) || bytes > SIZE_MAX) return 0;
  return (size_t)bytes;
}

int mr_tensor_is_compact(const DLTensor* t) {
  uint64_t expected = 1;
  int32_t i;
  if (!t->strides) return 1;
  for (i = t->ndim - 1; i >= 0; --i) {
    if (t->shape[i] < 0) return 0;
    if (t->shape[i] != 1 && (t->strides[i] < 0 || (uint64_t)t->strides[i] != expected)) return 0;
    if (mr_mul_overflow_u64(expected, (uint64_t)t->shape[i], &expected)) return 0;
  }
  return 1;
}

static void tensor_deleter(void* self, int flags) {
  mr_tensor_obj_t* t = (mr_tensor_obj_t*)self;
  if (flags & kTVMFFIObjectDeleterFlagBitMaskStrong) {
    switch (t->kind) {
      case MR_TENSOR_OWNED: {
        const mr_device_api_t* api = mr_device_api_get(t->dl.device.device_type);
        if (api && t->dl.data) (void)api->free_data(t->dl.device, t->dl.data);
        break;
      }
      case MR_TENSOR_VIEW:
        mr_object_release((TVMFFIObject*)t->owner);
        break;
      default:
        t->release(t->owner);
        break;
    }
    t->owner = NULL;
    t->dl.data = NULL;
  }
  if (flags & kTVMFFIObjectDeleterFlagBitMaskWeak) free(self);
}

static int check_ndim(int32_t ndim, const int64_t* shape) {
  if (ndim < 0 || ndim > MR_MAX_NDIM)
    return MR_VALUE_ERROR("ndim %d out of range [0, %d]", (int)ndim, MR_MAX_NDIM);
  if (ndim && !shape) return MR_VALUE_ERROR("shape is NULL");
  return 0;
}

/* Allocates the object with inline compact shape/strides; data left NULL. *out_nbytes: the
 * bytes of its data. */
static int tensor_alloc(int32_t ndim, const int64_t* shape, DLDataType dtype, DLDevice dev,
                        mr_tensor_obj_t** out, uint64_t* out_nbytes) {
  mr_tensor_obj_t* t;
  int64_t *s, stride = 1;
  int32_t i;
  if (check_ndim(ndim, shape) != 0) return -1;
  if (dtype.lanes == 0 || dtype.bits == 0)
    return MR_VALUE_ERROR("dtype has zero bits or zero lanes");
  if (mr_tensor_nbytes_checked(ndim, shape, dtype, NULL, out_nbytes) != 0) return -1;
  t = (mr_tensor_obj_t*)mr_object_alloc(sizeof(*t) + 2 * (size_t)ndim * sizeof(int64_t),
                                        kTVMFFITensor, tensor_deleter, "a Tensor");
  if (!t) return -1;
  s = (int64_t*)(t + 1);
  for (i = ndim - 1; i >= 0; --i) {
    s[i] = shape[i];
    s[ndim + i] = stride;
    stride *= shape[i];
  }
  t->dl.device = dev;
  t->dl.ndim = ndim;
  t->dl.dtype = dtype;
  t->dl.shape = ndim ? s : NULL;
  t->dl.strides = ndim ? s + ndim : NULL;
  *out = t;
  return 0;
}

int mr_tensor_create(int32_t ndim, const int64_t* shape, DLDataType dtype, DLDevice dev,
                     TVMFFIObject** out_tensor) {
  const mr_device_api_t* api;
  mr_tensor_obj_t* t = NULL; /* set by tensor_alloc (initialized for GCC's LTO warnings) */
  uint64_t nbytes = 0;
  void* data = NULL;
  if (tensor_alloc(ndim, shape, dtype, dev, &t, &nbytes) != 0) return -1;
  api = mr_device_api_get(dev.device_type);
  if (!api) goto fail;
  if (api->alloc_data(dev, (size_t)nbytes, MR_DATA_ALIGNMENT, dtype, &data) != 0) goto fail;
  t->dl.data = data;
  t->kind = MR_TENSOR_OWNED;
  *out_tensor = &t->header;
  return 0;
fail:
  free(t);
  return -1;
}

DLTensor* mr_tensor_dl(TVMFFIObject* tensor) {
  if (!tensor || tensor->type_index != kTVMFFITensor) return NULL;
  return (DLTensor*)((char*)tensor + sizeof(TVMFFIObject));
}

static int device_has_pointer_arithmetic(int32_t device_type) {
  return device_type == kDLCPU || device_type == kDLCUDA || device_type == kDLCUDAHost ||
         device_type == kDLCUDAManaged || device_type == kDLROCM || device_type == kDLROCMHost;
}

int mr_tensor_view(TVMFFIObject* base, int32_t ndim, const int64_t* shape, DLDataType dtype,
                   uint64_t byte_offset, TVMFFIObject** out_tensor) {
  DLTensor* b = mr_tensor_dl(base);
  mr_tensor_obj_t* t;
  uint64_t bytes, need, base_bytes;
  if (!b) return MR_RAISE(kMrErrorType, "view base is not a Tensor");
  if (!mr_tensor_is_compact(b))
    return MR_VALUE_ERROR("cannot create a view of a non-compact tensor");
  if (mr_tensor_nbytes_checked(b->ndim, b->shape, b->dtype, "view base", &base_bytes) != 0 ||
      tensor_alloc(ndim, shape, dtype, b->device, &t, &bytes) != 0)
    return -1;
  if (mr_add_overflow_u64(bytes, byte_offset, &need) || need > base_bytes) {
    MR_VALUE_ERROR("view of %llu bytes at offset %llu does not fit in the base's %llu bytes",
                   (unsigned long long)bytes, (unsigned long long)byte_offset,
                   (unsigned long long)base_bytes);
    free(t);
    return -1;
  }
  if (device_has_pointer_arithmetic(b->device.device_type)) {
    t->dl.data = (char*)b->data + b->byte_offset + byte_offset;
  } else {
    t->dl.data = b->data;
    t->dl.byte_offset = b->byte_offset + byte_offset;
  }
  t->kind = MR_TENSOR_VIEW;
  t->owner = base;
  mr_object_retain(base);
  *out_tensor = &t->header;
  return 0;
}

/* ---- copies ---- */
static int same_layout(const DLTensor* a, const DLTensor* b) {
  int32_t i;
  if (a->ndim != b->ndim || a->dtype.code != b->dtype.code || a->dtype.bits != b->dtype.bits ||
      a->dtype.lanes != b->dtype.lanes)
    return 0;
  for (i = 0; i < a->ndim; ++i)
    if (a->shape[i] != b->shape[i]) return 0;
  return 1;
}

int mr_tensor_copy(const DLTensor* from, DLTensor* to, void* stream) {
  const mr_device_api_t* api;
  DLDevice dev;
  uint64_t nbytes;
  if (!from || !to) return MR_VALUE_ERROR("copy: tensor is NULL");
  if (!same_layout(from, to))
    return MR_VALUE_ERROR("copy: tensors differ in shape or dtype");
  if (!mr_tensor_is_compact(from) || !mr_tensor_is_compact(to))
    return MR_VALUE_ERROR("copy: only compact tensors can be copied");
  if (mr_tensor_nbytes_checked(from->ndim, from->shape, from->dtype, "copy", &nbytes) != 0)
    return -1;
  if (nbytes == 0) return 0;
  if (from->device.device_type != kDLCPU && to->device.device_type != kDLCPU &&
      from->device.device_type != to->device.device_type)
    return MR_VALUE_ERROR("copy: cannot copy from %s to %s directly",
                          mr_device_type_name(from->device.device_type),
                          mr_device_type_name(to->device.device_type));
  dev = from->device.device_type != kDLCPU ? from->device : to->device;
  api = mr_device_api_get(dev.device_type);
  if (!api) return -1;
  return api->copy_data(from, to, dev, stream);
}

/* Copies between a tensor and a host buffer of exactly its size. */
static int copy_bytes(const DLTensor* t, void* data, size_t nbytes, int to_tensor) {
  DLTensor host;
  uint64_t need;
  if (!t) return MR_VALUE_ERROR("copy: tensor is NULL");
  if (mr_tensor_nbytes_checked(t->ndim, t->shape, t->dtype, "copy", &need) != 0) return -1;
  if ((uint64_t)nbytes != need)
    return MR_VALUE_ERROR("copy: tensor holds %llu bytes but the buffer has %zu",
                          (unsigned long long)need, nbytes);
  host = *t;
  host.data = data;
  host.device.device_type = kDLCPU;
  host.device.device_id = 0;
  host.strides = NULL;
  host.byte_offset = 0;
  return to_tensor ? mr_tensor_copy(&host, (DLTensor*)t, NULL) : mr_tensor_copy(t, &host, NULL);
}

int mr_tensor_copy_from_bytes(DLTensor* to, const void* data, size_t nbytes) {
  return copy_bytes(to, (void*)data, nbytes, 1);
}

int mr_tensor_copy_to_bytes(const DLTensor* from, void* data, size_t nbytes) {
  return copy_bytes(from, data, nbytes, 0);
}

/* ---- tensors over memory someone else owns (tensor_dlpack.c) ---- */
int mr_tensor_wrap(const DLTensor* dl, void* owner, void (*release)(void* owner),
                   TVMFFIObject** out_tensor) {
  mr_tensor_obj_t* t;
  uint64_t nbytes;
  if (check_ndim(dl->ndim, dl->shape) != 0 ||
      mr_tensor_nbytes_checked(dl->ndim, dl->shape, dl->dtype, NULL, &nbytes) != 0)
    return -1;
  t = (mr_tensor_obj_t*)mr_object_alloc(sizeof(*t), kTVMFFITensor, tensor_deleter, "a Tensor");
  if (!t) return -1;
  t->dl = *dl;
  t->kind = MR_TENSOR_FOREIGN;
  t->owner = owner;
  t->release = release;
  *out_tensor = &t->header;
  return 0;
}
