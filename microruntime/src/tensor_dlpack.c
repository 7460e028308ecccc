/* DLPack import and export of tensors (DLManagedTensor and its versioned form).
 * Imports are checked once, here, and wrap the producer's memory; exports hold a
 * reference to the tensor until the consumer calls the deleter. Outside the core:
 * deployments that never exchange tensors with another framework do not link it. */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

#define MR_ERROR_FILE kMrFileTensorDlpack

/* ---- import ---- */
/* The producer's tensor is checked once here: everything else trusts tensors. */
static int check_dltensor(const DLTensor* dl) {
  uint64_t nbytes;
  int32_t i;
  if (dl->ndim < 0 || dl->ndim > MR_MAX_NDIM || (dl->ndim && !dl->shape))
    return MR_VALUE_ERROR("DLPack tensor has ndim %d (at most %d) or no shape", (int)dl->ndim,
                          MR_MAX_NDIM);
  if (dl->dtype.bits == 0 || dl->dtype.lanes == 0)
    return MR_VALUE_ERROR("DLPack tensor dtype has %u bits and %u lanes; both must be non-zero",
                          (unsigned)dl->dtype.bits, (unsigned)dl->dtype.lanes);
  for (i = 0; i < dl->ndim; ++i)
    if (dl->shape[i] < 0)
      return MR_VALUE_ERROR("DLPack tensor dimension %d is negative (%lld)", (int)i,
                            (long long)dl->shape[i]);
  return mr_tensor_nbytes_checked(dl->ndim, dl->shape, dl->dtype, "DLPack import", &nbytes);
}

static void release_managed(void* owner) {
  DLManagedTensor* m = (DLManagedTensor*)owner;
  if (m->deleter) m->deleter(m);
}

static void release_managed_versioned(void* owner) {
  DLManagedTensorVersioned* m = (DLManagedTensorVersioned*)owner;
  if (m->deleter) m->deleter(m);
}

static int wrap_dltensor(const DLTensor* dl, void* owner, void (*release)(void*),
                         TVMFFIObject** out) {
  if (check_dltensor(dl) != 0) return -1;
  return mr_tensor_wrap(dl, owner, release, out);
}

int mr_tensor_from_dlpack(DLManagedTensor* managed, TVMFFIObject** out_tensor) {
  if (!managed) return MR_VALUE_ERROR("DLPack tensor is NULL");
  return wrap_dltensor(&managed->dl_tensor, managed, release_managed, out_tensor);
}

int mr_tensor_from_dlpack_versioned(DLManagedTensorVersioned* managed,
                                    TVMFFIObject** out_tensor) {
  if (!managed) return MR_VALUE_ERROR("DLPack tensor is NULL");
  if (managed->version.major != DLPACK_MAJOR_VERSION)
    return MR_VALUE_ERROR("DLPack major version %u is not supported (expected %d)",
                          (unsigned)managed->version.major, DLPACK_MAJOR_VERSION);
  /* Tensors are writable (copies in, kernel outputs): refuse what must not be written. */
  if (managed->flags & DLPACK_FLAG_BITMASK_READ_ONLY)
    return MR_RAISE(kMrErrorBuffer,
                        "DLPack tensor is read-only (DLPACK_FLAG_BITMASK_READ_ONLY); the "
                        "runtime's tensors are writable, so copy it instead");
  return wrap_dltensor(&managed->dl_tensor, managed, release_managed_versioned, out_tensor);
}

/* ---- export: the managed struct holds a reference to the tensor ---- */
typedef struct {
  DLManagedTensor managed;
  int64_t strides[MR_MAX_NDIM];
} mr_export_t;

typedef struct {
  DLManagedTensorVersioned managed;
  int64_t strides[MR_MAX_NDIM];
} mr_export_versioned_t;

static void export_deleter(DLManagedTensor* self) {
  mr_object_release((TVMFFIObject*)self->manager_ctx);
  free(self);
}

static void export_versioned_deleter(DLManagedTensorVersioned* self) {
  mr_object_release((TVMFFIObject*)self->manager_ctx);
  free(self);
}

/* A zeroed export struct of `size` bytes whose DLTensor (at dl_offset) views the
 * tensor, with compact strides filled in; the struct holds a tensor reference. */
static void* export_alloc(TVMFFIObject* tensor, size_t size, size_t dl_offset) {
  char* e;
  DLTensor* out;
  int64_t* strides;
  int32_t i;
  int64_t s = 1;
  if (!mr_tensor_dl(tensor)) {
    MR_RAISE(kMrErrorType, "to_dlpack: not a Tensor");
    return NULL;
  }
  e = (char*)calloc(1, size);
  if (!e) {
    MR_OOM("a DLPack tensor");
    return NULL;
  }
  out = (DLTensor*)(e + dl_offset);
  strides = (int64_t*)(e + size - MR_MAX_NDIM * sizeof(int64_t));
  *out = *mr_tensor_dl(tensor);
  if (!out->strides && out->ndim > 0) {
    for (i = out->ndim - 1; i >= 0; --i) {
      strides[i] = s;
      s *= out->shape[i];
    }
    out->strides = strides;
  }
  mr_object_retain(tensor);
  return e;
}

int mr_tensor_to_dlpack(TVMFFIObject* tensor, DLManagedTensor** out_managed) {
  mr_export_t* e =
      (mr_export_t*)export_alloc(tensor, sizeof(mr_export_t), offsetof(DLManagedTensor, dl_tensor));
  if (!e) return -1;
  e->managed.manager_ctx = tensor;
  e->managed.deleter = export_deleter;
  *out_managed = &e->managed;
  return 0;
}

int mr_tensor_to_dlpack_versioned(TVMFFIObject* tensor, DLManagedTensorVersioned** out_managed) {
  mr_export_versioned_t* e = (mr_export_versioned_t*)export_alloc(
      tensor, sizeof(mr_export_versioned_t), offsetof(DLManagedTensorVersioned, dl_tensor));
  if (!e) return -1;
  e->managed.version.major = DLPACK_MAJOR_VERSION;
  e->managed.version.minor = DLPACK_MINOR_VERSION;
  e->managed.manager_ctx = tensor;
  e->managed.deleter = export_versioned_deleter;
  *out_managed = &e->managed;
  return 0;
}
