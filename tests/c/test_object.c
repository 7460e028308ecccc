/* Reference counts, Str/Bytes/Shape/Array objects, dtype parsing, joining names. */
#include "check.h"
#include "internal.h"

static int deleted_strong = 0, deleted_weak = 0;
static void counting_deleter(void* self, int flags) {
  (void)self;
  if (flags & 1) ++deleted_strong;
  if (flags & 2) ++deleted_weak;
}

int main(void) {
  TVMFFIObject *s, *b, *shape, *arr, *arr2;
  const TVMFFIByteArray* view;
  const TVMFFIShapeCell* sc;
  const TVMFFISeqCell* seq;
  int64_t dims[3] = {2, 3, 4};
  TVMFFIAny items[3], v;
  DLDataType dt;
  char buf[32];

  /* Combined count: strong in the low 32 bits, weak (implicit one) in the high. */
  {
    TVMFFIObject obj;
    obj.combined_ref_count = 1 | ((uint64_t)1 << 32);
    obj.type_index = 200;
    obj.deleter = counting_deleter;
    TVMFFIObjectIncRef(&obj);
    CHECK((obj.combined_ref_count & 0xFFFFFFFFu) == 2);
    TVMFFIObjectDecRef(&obj);
    CHECK(deleted_strong == 0);
    obj.combined_ref_count += (uint64_t)1 << 32; /* an extra weak reference */
    TVMFFIObjectDecRef(&obj);
    CHECK(deleted_strong == 1 && deleted_weak == 0);
    CHECK((obj.combined_ref_count >> 32) == 1);
  }

  CHECK_OK(mr_str_create("hello", 5, &s));
  CHECK(mr_object_type_index(s) == kTVMFFIStr);
  view = mr_bytes_view(s);
  CHECK(view->size == 5 && strcmp(view->data, "hello") == 0);
  CHECK(view->data == (const char*)s + 24 + 16); /* inline data after the cell */
  CHECK_OK(mr_bytes_create("a\0b", 3, &b));
  CHECK(mr_object_type_index(b) == kTVMFFIBytes && mr_bytes_view(b)->size == 3);
  CHECK(mr_bytes_view(b)->data[3] == '\0');

  CHECK_OK(mr_shape_create(dims, 3, &shape));
  sc = mr_shape_view(shape);
  CHECK(sc->size == 3 && sc->data[2] == 4);
  CHECK(mr_shape_view(s) == NULL);

  items[0].type_index = kTVMFFIInt;
  items[0].zero_padding = 0;
  items[0].v_int64 = 42;
  items[1].type_index = kTVMFFIStr;
  items[1].v_obj = s;
  items[2].type_index = kTVMFFIRawStr;
  items[2].v_c_str = "raw";
  CHECK_OK(mr_array_create(items, 3, &arr));
  seq = mr_array_view(arr);
  CHECK(seq->size == 3);
  CHECK(((TVMFFIAny*)seq->data)[0].v_int64 == 42);
  CHECK(((TVMFFIAny*)seq->data)[1].v_obj == s);
  CHECK(((TVMFFIAny*)seq->data)[2].type_index == kTVMFFIStr); /* raw strings become Str */
  CHECK((s->combined_ref_count & 0xFFFFFFFFu) == 2);
  items[0].type_index = kTVMFFIArray;
  items[0].v_obj = arr;
  CHECK_OK(mr_array_create(items, 1, &arr2)); /* nested */
  mr_object_release(arr);
  mr_object_release(arr2);
  CHECK((s->combined_ref_count & 0xFFFFFFFFu) == 1);

  v.type_index = kTVMFFIShape;
  v.v_obj = shape;
  mr_object_retain(shape);
  mr_any_clear(&v);
  CHECK(v.type_index == kTVMFFINone);

  {
    TVMFFIByteArray ba = {"xyz", 3};
    TVMFFIAny out;
    CHECK_OK(TVMFFIStringFromByteArray(&ba, &out));
    CHECK(out.type_index == kTVMFFIStr && strcmp(mr_bytes_view(out.v_obj)->data, "xyz") == 0);
    mr_any_clear(&out);
  }

  /* dtypes */
  CHECK_OK(mr_dtype_parse("float32", &dt));
  CHECK(dt.code == kDLFloat && dt.bits == 32 && dt.lanes == 1);
  CHECK_OK(mr_dtype_parse("int8x4", &dt));
  CHECK(dt.code == kDLInt && dt.bits == 8 && dt.lanes == 4 && mr_dtype_bytes(dt) == 4);
  CHECK_OK(mr_dtype_format(dt, buf, sizeof(buf)));
  CHECK(strcmp(buf, "int8x4") == 0);
  CHECK_OK(mr_dtype_parse("bool", &dt));
  CHECK(dt.code == kDLBool && dt.bits == 8);
  CHECK_OK(mr_dtype_format(dt, buf, sizeof(buf)));
  CHECK(strcmp(buf, "bool") == 0);
  CHECK_OK(mr_dtype_parse("handle", &dt));
  CHECK(dt.code == kDLOpaqueHandle && dt.bits == 64);
  CHECK_OK(mr_dtype_parse("bfloat16", &dt));
  CHECK(dt.code == kDLBfloat && dt.bits == 16);
  CHECK_OK(mr_dtype_parse("uint1", &dt));
  CHECK(dt.code == kDLUInt && dt.bits == 1 && mr_dtype_bytes(dt) == 1);
  CHECK_OK(mr_dtype_format(dt, buf, sizeof(buf)));
  CHECK(strcmp(buf, "uint1") == 0);
  CHECK_FAIL(mr_dtype_parse("float32x", &dt), "cannot parse dtype");
  CHECK_FAIL(mr_dtype_parse("qint8", &dt), "qint8");
  CHECK_FAIL(mr_dtype_format(dt, buf, 3), "too small");

  mr_object_release(s);
  mr_object_release(b);
  mr_object_release(shape);
  /* mr_concat: parts one after the other; NULL parts skipped; -1 and a cut copy when too long. */
  CHECK(mr_concat(buf, sizeof(buf), "__tvm_", "main", NULL) == 0 && strcmp(buf, "__tvm_main") == 0);
  CHECK(mr_concat(buf, sizeof(buf), NULL, "a", "bc") == 0 && strcmp(buf, "abc") == 0);
  CHECK(mr_concat(buf, 8, "abcd", "efgh", NULL) == -1 && strcmp(buf, "abcdefg") == 0);
  CHECK(mr_concat(buf, 8, "abc", "defg", "") == 0 && strcmp(buf, "abcdefg") == 0);
  CHECK(mr_concat(buf, 1, "a", NULL, NULL) == -1 && buf[0] == '\0');
  return CHECK_RESULT();
}
