/* Tensors: layout, alignment, strides, views, copies with size checks, DLPack
 * import/export of both versions with deleters, devices without a backend. */
#include <stdlib.h>

#include "check.h"
#include "internal.h"

static int legacy_deleted = 0, versioned_deleted = 0;
static int64_t g_shape[2] = {2, 2};
static float g_data[4] = {1, 2, 3, 4};

static void legacy_deleter(DLManagedTensor* self) {
  ++legacy_deleted;
  free(self);
}
static void versioned_deleter(DLManagedTensorVersioned* self) {
  ++versioned_deleted;
  free(self);
}

/* Every size computed from a shape is checked: a shape whose byte size overflows is refused
 * (never taken for a size of 0), by creation, views, copies and the size helper itself. */
static void test_sizes_that_overflow(void) {
  DLDevice cpu = {kDLCPU, 0};
  DLDataType f32 = {kDLFloat, 32, 1}, u8 = {kDLUInt, 8, 1};
  int64_t huge[2] = {(int64_t)1 << 59, 10}, big[1] = {(int64_t)1 << 61}, empty[1] = {0};
  int64_t neg[1] = {-1}, seven[1] = {7}, wide[2] = {(int64_t)1 << 32, (int64_t)1 << 32};
  TVMFFIObject *base = NULL, *v = NULL;
  uint64_t nbytes = 0;
  DLTensor raw;
  CHECK_FAIL(mr_tensor_create(2, huge, f32, cpu, &v),
             "tensor of shape (576460752303423488, 10) float32 is too large (size overflows)");
  /* 2^61 float32 elements: the element count fits in int64, the byte count does not. */
  CHECK_FAIL(mr_tensor_create(1, big, f32, cpu, &v),
             "tensor of shape (2305843009213693952,) float32 is too large");
  CHECK_FAIL(mr_tensor_create(1, neg, f32, cpu, &v),
             "tensor of shape (-1,) float32 has a negative dimension");
  /* A view over a 0-byte base: its own size overflowing must not read as 0 bytes. */
  CHECK_OK(mr_tensor_create(1, empty, u8, cpu, &base));
  CHECK_FAIL(mr_tensor_view(base, 2, huge, f32, 0, &v),
             "tensor of shape (576460752303423488, 10) float32 is too large (size overflows)");
  CHECK_FAIL(mr_tensor_view(base, 2, wide, f32, 0, &v), "is too large (size overflows)");
  CHECK_FAIL(mr_tensor_view(base, 1, seven, u8, 0, &v),
             "view of 7 bytes at offset 0 does not fit in the base's 0 bytes");
  mr_object_release(base);
  /* A raw compact DLTensor of such a shape: copies refuse it instead of copying nothing. */
  memset(&raw, 0, sizeof(raw));
  raw.data = g_data;
  raw.device = cpu;
  raw.ndim = 2;
  raw.dtype = f32;
  raw.shape = huge;
  CHECK_FAIL(mr_tensor_copy(&raw, &raw, NULL), "copy: tensor of shape (576460752303423488, 10)");
  CHECK_FAIL(mr_tensor_copy_to_bytes(&raw, g_data, 0), "too large (size overflows)");
  CHECK(mr_tensor_nbytes(&raw) == 0); /* the public helper still answers 0 */
  CHECK_FAIL(mr_tensor_nbytes_checked(2, huge, f32, "ctx", &nbytes), "ctx: tensor of shape");
  CHECK_FAIL(mr_tensor_nbytes_checked(-1, huge, f32, NULL, &nbytes), "ndim -1 out of range");
  CHECK_OK(mr_tensor_nbytes_checked(2, g_shape, f32, NULL, &nbytes));
  CHECK(nbytes == 16);
  CHECK_OK(mr_tensor_nbytes_checked(0, NULL, f32, NULL, &nbytes));
  CHECK(nbytes == 4);
}

int main(void) {
  DLDevice cpu = {kDLCPU, 0}, ext_dev = {kDLExtDev, 0}; /* a device no backend serves */
  DLDataType f32 = {kDLFloat, 32, 1};
  int64_t shape[3] = {2, 3, 4}, vshape[1] = {6};
  TVMFFIObject *t, *t2, *v, *imp;
  DLTensor* dl;
  float host[24], back[24];
  int i;
  TVMFFIAny attr;

  CHECK_OK(mr_tensor_create(3, shape, f32, cpu, &t));
  dl = mr_tensor_dl(t);
  CHECK((char*)dl == (char*)t + 24);
  CHECK(mr_object_type_index(t) == kTVMFFITensor);
  CHECK(((uintptr_t)dl->data % 64) == 0);
  CHECK(dl->ndim == 3 && dl->shape[2] == 4 && dl->byte_offset == 0);
  CHECK(dl->strides && dl->strides[0] == 12 && dl->strides[1] == 4 && dl->strides[2] == 1);
  CHECK(mr_tensor_nbytes(dl) == 96);

  for (i = 0; i < 24; ++i) host[i] = (float)i;
  CHECK_OK(mr_tensor_copy_from_bytes(dl, host, sizeof(host)));
  CHECK_FAIL(mr_tensor_copy_from_bytes(dl, host, 10), "96 bytes");
  CHECK_OK(mr_tensor_create(3, shape, f32, cpu, &t2));
  CHECK_OK(mr_tensor_copy(dl, mr_tensor_dl(t2), NULL));
  CHECK_OK(mr_tensor_copy_to_bytes(mr_tensor_dl(t2), back, sizeof(back)));
  CHECK(memcmp(host, back, sizeof(host)) == 0);
  CHECK_FAIL(mr_tensor_copy_to_bytes(dl, back, 4), "buffer has 4");

  /* Views: share memory, keep the base alive, must fit. */
  CHECK_OK(mr_tensor_view(t, 1, vshape, f32, 24, &v));
  CHECK(mr_tensor_dl(v)->data == (char*)dl->data + 24);
  CHECK(((float*)mr_tensor_dl(v)->data)[0] == 6.0f);
  CHECK_FAIL(mr_tensor_view(t, 1, vshape, f32, 80, &imp), "does not fit");
  mr_object_release(t);
  CHECK(((float*)mr_tensor_dl(v)->data)[5] == 11.0f); /* base still alive */
  {
    int64_t other[2] = {3, 2};
    TVMFFIObject* t3;
    CHECK_OK(mr_tensor_create(2, other, f32, cpu, &t3));
    CHECK_FAIL(mr_tensor_copy(mr_tensor_dl(v), mr_tensor_dl(t3), NULL), "differ");
    mr_object_release(t3);
  }
  mr_object_release(v);

  /* Copies between tensors sharing memory (overlapping views) move the data. */
  {
    float buf[1025];
    int64_t n[1] = {1024};
    DLTensor a = {NULL, {kDLCPU, 0}, 1, {kDLFloat, 32, 1}, NULL, NULL, 0}, b;
    a.data = buf;
    a.shape = n;
    b = a;
    b.data = buf + 1;
    for (i = 0; i < 1025; ++i) buf[i] = (float)i;
    CHECK_OK(mr_tensor_copy(&a, &b, NULL));
    for (i = 0; i < 1024 && buf[i + 1] == (float)i; ++i) {
    }
    CHECK(i == 1024);
  }

  /* Bad arguments. */
  {
    int64_t neg[1] = {-1};
    int64_t big[33];
    for (i = 0; i < 33; ++i) big[i] = 1;
    CHECK_FAIL(mr_tensor_create(1, neg, f32, cpu, &imp), "negative");
    CHECK_FAIL(mr_tensor_create(33, big, f32, cpu, &imp), "ndim 33");
    CHECK_FAIL(mr_tensor_create(1, vshape, f32, ext_dev, &imp), "no backend for device 'ext_dev'");
  }
  CHECK_OK(mr_device_get_attr(cpu, kMrDevExist, &attr));
  CHECK(attr.type_index == kTVMFFIInt && attr.v_int64 == 1);
  CHECK_OK(mr_device_get_attr(cpu, kMrDevDeviceName, &attr));
  CHECK(attr.type_index == kTVMFFINone);
  CHECK_OK(mr_device_get_attr(ext_dev, kMrDevExist, &attr));
  CHECK(attr.type_index == kTVMFFIInt && attr.v_int64 == 0);
  CHECK(mr_device_api_get(kDLExtDev) == NULL && check_error_matches("ext_dev"));

  /* DLPack import (legacy): the deleter runs when the tensor dies. */
  {
    DLManagedTensor* m = (DLManagedTensor*)calloc(1, sizeof(*m));
    m->dl_tensor.data = g_data;
    m->dl_tensor.device = cpu;
    m->dl_tensor.ndim = 2;
    m->dl_tensor.dtype = f32;
    m->dl_tensor.shape = g_shape;
    m->deleter = legacy_deleter;
    CHECK_OK(mr_tensor_from_dlpack(m, &imp));
    CHECK(mr_tensor_dl(imp)->data == g_data && mr_tensor_dl(imp)->shape[1] == 2);
    CHECK(legacy_deleted == 0);
    mr_object_release(imp);
    CHECK(legacy_deleted == 1);
  }
  /* A producer's tensor is validated at import; nothing is consumed on failure. */
  {
    int64_t neg[2] = {2, -1}, huge[2] = {(int64_t)1 << 62, 4};
    int64_t hidden[3] = {0, (int64_t)1 << 40, (int64_t)1 << 40};
    DLManagedTensor m;
    memset(&m, 0, sizeof(m));
    m.dl_tensor.data = g_data;
    m.dl_tensor.device = cpu;
    m.dl_tensor.ndim = 2;
    m.dl_tensor.shape = g_shape;
    m.dl_tensor.dtype = f32;
    m.dl_tensor.dtype.bits = 0;
    CHECK_FAIL(mr_tensor_from_dlpack(&m, &imp), "0 bits and 1 lanes");
    m.dl_tensor.dtype = f32;
    m.dl_tensor.dtype.lanes = 0;
    CHECK_FAIL(mr_tensor_from_dlpack(&m, &imp), "32 bits and 0 lanes");
    m.dl_tensor.dtype = f32;
    m.dl_tensor.shape = neg;
    CHECK_FAIL(mr_tensor_from_dlpack(&m, &imp), "dimension 1 is negative (-1)");
    m.dl_tensor.shape = huge;
    CHECK_FAIL(mr_tensor_from_dlpack(&m, &imp), "is too large (size overflows)");
    m.dl_tensor.ndim = 3;
    m.dl_tensor.shape = hidden;
    CHECK_FAIL(mr_tensor_from_dlpack(&m, &imp), "is too large (size overflows)");
    m.dl_tensor.ndim = -1;
    CHECK_FAIL(mr_tensor_from_dlpack(&m, &imp), "ndim -1");
    m.dl_tensor.ndim = 33;
    CHECK_FAIL(mr_tensor_from_dlpack(&m, &imp), "ndim 33");
    CHECK(strcmp(mr_last_error_kind(), "ValueError") == 0);
  }
  /* Copies test a raw DLTensor's compactness without overflowing. */
  {
    int64_t shape[2] = {(int64_t)1 << 62, 8}, strides[2] = {8, 1};
    DLTensor raw;
    memset(&raw, 0, sizeof(raw));
    raw.data = g_data;
    raw.device = cpu;
    raw.ndim = 2;
    raw.dtype = f32;
    raw.shape = shape;
    raw.strides = strides;
    CHECK_FAIL(mr_tensor_copy(&raw, &raw, NULL), "only compact tensors");
    strides[0] = -8;
    CHECK_FAIL(mr_tensor_copy(&raw, &raw, NULL), "only compact tensors");
  }
  /* DLPack import (versioned), and a rejected major version. */
  {
    DLManagedTensorVersioned* m = (DLManagedTensorVersioned*)calloc(1, sizeof(*m));
    m->version.major = 1;
    m->version.minor = 0;
    m->dl_tensor.data = g_data;
    m->dl_tensor.device = cpu;
    m->dl_tensor.ndim = 2;
    m->dl_tensor.dtype = f32;
    m->dl_tensor.shape = g_shape;
    m->deleter = versioned_deleter;
    m->version.major = 2;
    CHECK_FAIL(mr_tensor_from_dlpack_versioned(m, &imp), "major version 2");
    m->version.major = 1;
    m->flags = DLPACK_FLAG_BITMASK_READ_ONLY;
    CHECK_FAIL(mr_tensor_from_dlpack_versioned(m, &imp), "read-only");
    CHECK(strcmp(mr_last_error_kind(), "BufferError") == 0 && versioned_deleted == 0);
    m->flags = DLPACK_FLAG_BITMASK_IS_COPIED;
    CHECK_OK(mr_tensor_from_dlpack_versioned(m, &imp));
    CHECK(((float*)mr_tensor_dl(imp)->data)[3] == 4.0f);
    mr_object_release(imp);
    CHECK(versioned_deleted == 1);
  }
  /* Export both versions; round trip back in; the tensor lives until both deleters ran. */
  {
    DLManagedTensor* m;
    DLManagedTensorVersioned* mv;
    TVMFFIObject *back1, *back2;
    CHECK_OK(mr_tensor_create(3, shape, f32, cpu, &t));
    CHECK_OK(mr_tensor_copy_from_bytes(mr_tensor_dl(t), host, sizeof(host)));
    CHECK_OK(mr_tensor_to_dlpack(t, &m));
    CHECK_OK(mr_tensor_to_dlpack_versioned(t, &mv));
    CHECK(mv->version.major == DLPACK_MAJOR_VERSION && mv->flags == 0);
    CHECK(m->dl_tensor.data == mr_tensor_dl(t)->data && mv->dl_tensor.ndim == 3);
    CHECK((t->combined_ref_count & 0xFFFFFFFFu) == 3);
    mr_object_release(t);
    CHECK_OK(mr_tensor_from_dlpack(m, &back1));
    CHECK_OK(mr_tensor_from_dlpack_versioned(mv, &back2));
    CHECK(((float*)mr_tensor_dl(back1)->data)[23] == 23.0f);
    CHECK(((float*)mr_tensor_dl(back2)->data)[1] == 1.0f);
    mr_object_release(back1);
    mr_object_release(back2); /* last reference: the original tensor is freed */
  }
  /* A scalar (ndim 0) tensor. */
  CHECK_OK(mr_tensor_create(0, NULL, f32, cpu, &t));
  CHECK(mr_tensor_nbytes(mr_tensor_dl(t)) == 4 && mr_tensor_dl(t)->data != NULL);
  mr_object_release(t);
  mr_object_release(t2);
  test_sizes_that_overflow();
  return CHECK_RESULT();
}
