/* Params: byte-exact save of the reference 182-byte example, load back, every
 * truncation fails cleanly, corrupted fields fail with the field named. */
#include <stdlib.h>

#include "check.h"

#define U64(v) (v), 0, 0, 0, 0, 0, 0, 0
#define LIST_MAGIC 0xb7, 0x9c, 0x04, 0x05, 0x4f, 0x8d, 0xe5, 0xf7
#define TENSOR_MAGIC 0x3f, 0xa1, 0xb4, 0x96, 0xf0, 0x40, 0x5e, 0xdd

static const unsigned char k_expected[182] = {
    LIST_MAGIC, U64(0), U64(2), U64(1), 'w', U64(1), 'b', U64(2),
    /* w: float32 2x3 */
    TENSOR_MAGIC, U64(0), 1, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 2, 32, 1, 0, U64(2), U64(3), U64(24),
    0, 0, 0, 0, 0, 0, 0x80, 0x3f, 0, 0, 0, 0x40, 0, 0, 0x40, 0x40, 0, 0, 0x80, 0x40, 0, 0, 0xa0,
    0x40,
    /* b: int8 [4] */
    TENSOR_MAGIC, U64(0), 1, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 8, 1, 0, U64(4), U64(4), 0x01,
    0xfe, 0x03, 0xfc};

static int load_ok(const unsigned char* data, size_t size) {
  TVMFFIObject *names, *tensors;
  if (mr_params_load(data, size, &names, &tensors) != 0) return -1;
  mr_object_release(names);
  mr_object_release(tensors);
  return 0;
}

/* Copies the example, changes one byte, and expects a failure mentioning `phrase`. */
static void corrupt(size_t offset, unsigned char value, const char* phrase) {
  unsigned char buf[182];
  memcpy(buf, k_expected, sizeof(buf));
  buf[offset] = value;
  CHECK_FAIL(load_ok(buf, sizeof(buf)), phrase);
}

/* The same with n bytes written little-endian from value at offset. */
static void corrupt_le(size_t offset, uint64_t value, int n, const char* phrase) {
  unsigned char buf[182];
  int i;
  memcpy(buf, k_expected, sizeof(buf));
  for (i = 0; i < n; ++i) buf[offset + (size_t)i] = (unsigned char)(value >> (8 * i));
  CHECK_FAIL(load_ok(buf, sizeof(buf)), phrase);
}

int main(void) {
  DLDevice cpu = {kDLCPU, 0};
  DLDataType f32 = {kDLFloat, 32, 1}, i8 = {kDLInt, 8, 1};
  int64_t wshape[2] = {2, 3}, bshape[1] = {4};
  float w[6] = {0, 1, 2, 3, 4, 5};
  int8_t b[4] = {1, -2, 3, -4};
  const char* names[2] = {"w", "b"};
  TVMFFIObject *tensors[2], *blob, *lnames, *ltensors;
  const TVMFFIByteArray* bytes;
  const TVMFFISeqCell *ns, *ts;
  size_t len;

  CHECK_OK(mr_tensor_create(2, wshape, f32, cpu, &tensors[0]));
  CHECK_OK(mr_tensor_create(1, bshape, i8, cpu, &tensors[1]));
  CHECK_OK(mr_tensor_copy_from_bytes(mr_tensor_dl(tensors[0]), w, sizeof(w)));
  CHECK_OK(mr_tensor_copy_from_bytes(mr_tensor_dl(tensors[1]), b, sizeof(b)));
  CHECK_OK(mr_params_save(names, tensors, 2, &blob));
  bytes = mr_bytes_view(blob);
  CHECK(bytes->size == 182);
  CHECK(bytes->size == 182 && memcmp(bytes->data, k_expected, 182) == 0);

  CHECK_OK(mr_params_load(bytes->data, bytes->size, &lnames, &ltensors));
  ns = mr_array_view(lnames);
  ts = mr_array_view(ltensors);
  CHECK(ns->size == 2 && ts->size == 2);
  CHECK(strcmp(mr_bytes_view(((TVMFFIAny*)ns->data)[0].v_obj)->data, "w") == 0);
  CHECK(strcmp(mr_bytes_view(((TVMFFIAny*)ns->data)[1].v_obj)->data, "b") == 0);
  {
    DLTensor* lw = mr_tensor_dl(((TVMFFIAny*)ts->data)[0].v_obj);
    DLTensor* lb = mr_tensor_dl(((TVMFFIAny*)ts->data)[1].v_obj);
    CHECK(lw->ndim == 2 && lw->shape[0] == 2 && lw->shape[1] == 3 && lw->dtype.code == kDLFloat);
    CHECK(memcmp(lw->data, w, sizeof(w)) == 0);
    CHECK(lb->ndim == 1 && lb->dtype.bits == 8 && memcmp(lb->data, b, sizeof(b)) == 0);
    CHECK((uintptr_t)lw->data % 64 == 0);
  }
  mr_object_release(lnames);
  mr_object_release(ltensors);
  mr_object_release(blob);

  /* Every truncation is a clean error. */
  for (len = 0; len < 182; ++len) {
    int failed = load_ok(k_expected, len) != 0;
    CHECK(failed);
    if (!failed) break;
  }
  CHECK_FAIL(load_ok(k_expected, 100), "truncated");
  /* Trailing garbage. */
  {
    unsigned char longer[183];
    memcpy(longer, k_expected, 182);
    longer[182] = 0;
    CHECK_FAIL(load_ok(longer, 183), "1 trailing bytes at offset 182");
  }
  corrupt(0, 0xb6, "bad magic");
  corrupt(8, 1, "reserved");
  corrupt(0x10, 0xff, "name count");      /* 255 names: more than the data */
  corrupt(0x18 + 3, 0x7f, "reading name at offset 32"); /* "w" claims a huge length */
  corrupt(0x2a, 3, "tensor count 3");
  corrupt(0x32, 0, "tensor magic");
  corrupt(0x3a, 0x1, "tensor reserved");
  corrupt(0x42, 2, "bad device_type 2 at offset 66, expected 1"); /* CPU only, as in TVM */
  corrupt(0x4a, 40, "ndim 40");
  corrupt(0x4e, 99, "dtype code 99");
  corrupt(0x4f, 0, "dtype bits 0");
  corrupt(0x50, 4, "dtype lanes 4");
  corrupt(0x52 + 7, 0x80, "shape[0] is -9223372036854775806 at offset 82: a dimension cannot be");
  corrupt(0x62, 25, "data_byte_size 25");
  corrupt(0x52, 3, "data_byte_size 24");   /* shape 3x3 needs 36 bytes */
  corrupt(0x9a, 0xff, "ndim 255 at offset 154");
  /* int32 fields are printed signed; a bad dimension is named by its index; a shape whose
   * byte size overflows is named whole. */
  corrupt_le(0x4a, 0xFFFFFFFFu, 4, "bad ndim -1 at offset 74, expected at most 32");
  corrupt_le(0x42, 0xFFFFFFFEu, 4, "bad device_type -2 at offset 66, expected 1");
  corrupt_le(0x5a, (uint64_t)-5, 8, "shape[1] is -5 at offset 90: a dimension cannot be negative");
  corrupt_le(0x5a, (uint64_t)1 << 62, 8,
             "params: tensor of shape (2, 4611686018427387904) float32 is too large (size "
             "overflows)");
  corrupt_le(0x52, (uint64_t)1 << 62, 8,
             "tensor of shape (4611686018427387904, 3) float32 is too large");
  corrupt_le(0x62, 48, 8, "data_byte_size 48 at offset 98 does not match the shape and dtype "
             "(24 bytes)");

  /* Save-side errors. */
  {
    DLDataType f32x4 = {kDLFloat, 32, 4};
    TVMFFIObject* vec;
    CHECK_OK(mr_tensor_create(1, bshape, f32x4, cpu, &vec));
    CHECK_FAIL(mr_params_save(names, &vec, 1, &lnames), "lanes");
    mr_object_release(vec);
  }
  /* An empty dict round trips. */
  CHECK_OK(mr_params_save(NULL, NULL, 0, &lnames));
  CHECK(mr_bytes_view(lnames)->size == 32);
  CHECK_OK(mr_params_load(mr_bytes_view(lnames)->data, 32, &ltensors, &blob));
  mr_object_release(lnames);
  mr_object_release(ltensors);
  mr_object_release(blob);

  mr_object_release(tensors[0]);
  mr_object_release(tensors[1]);
  return CHECK_RESULT();
}
