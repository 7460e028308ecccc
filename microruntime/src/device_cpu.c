/* The CPU device: 64-byte aligned host memory, memmove copies (the two tensors may
 * share memory, e.g. DLPack imports of overlapping slices), no streams. */
#include <string.h>

#include "internal.h"

#define MR_ERROR_FILE kMrFileDeviceCpu

static int cpu_get_attr(DLDevice dev, mr_device_attr_t attr, TVMFFIAny* out) {
  (void)dev;
  memset(out, 0, sizeof(*out));
  if (attr == kMrDevExist) {
    out->type_index = kTVMFFIInt;
    out->v_int64 = 1;
  }
  return 0;
}

static int cpu_alloc_data(DLDevice dev, size_t nbytes, size_t alignment, DLDataType hint,
                          void** out_ptr) {
  void* p;
  (void)dev;
  (void)hint;
  if (alignment < MR_DATA_ALIGNMENT) alignment = MR_DATA_ALIGNMENT;
  if (alignment & (alignment - 1))
    return MR_VALUE_ERROR("alignment %zu is not a power of two", alignment);
  p = mr_aligned_alloc(alignment, nbytes);
  if (!p) return MR_RAISE(kMrErrorMemory, "cpu: cannot allocate %zu bytes", nbytes);
  *out_ptr = p;
  return 0;
}

static int cpu_free_data(DLDevice dev, void* ptr) {
  (void)dev;
  mr_aligned_free(ptr);
  return 0;
}

static int cpu_copy_data(const DLTensor* from, DLTensor* to, DLDevice dev, void* stream) {
  size_t n = mr_tensor_nbytes(from);
  (void)dev;
  (void)stream;
  if (n) memmove((char*)to->data + to->byte_offset, (const char*)from->data + from->byte_offset, n);
  return 0;
}

static int cpu_stream_create(DLDevice dev, void** out_stream) {
  (void)dev;
  *out_stream = NULL;
  return 0;
}

static int cpu_stream_noop(DLDevice dev, void* stream) {
  (void)dev;
  (void)stream;
  return 0;
}

static const mr_device_api_t k_cpu_api = {
    "cpu",          cpu_get_attr,    cpu_alloc_data,  cpu_free_data, cpu_copy_data,
    cpu_stream_create, cpu_stream_noop, cpu_stream_noop, NULL,          NULL,
};

const mr_device_api_t* mr_device_cpu_api(void) { return &k_cpu_api; }
