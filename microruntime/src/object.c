/* Object reference counting (strong count low 32 bits, weak count high 32
 * bits, as in tvm-ffi) and the small value objects: Str 65, Bytes 66,
 * Shape 69, Array 71, OpaquePyObject 74 (Map 72 is in map.c). */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

#define MR_ERROR_FILE kMrFileObject

#define MR_STRONG_ONE ((uint64_t)1)
#define MR_WEAK_ONE ((uint64_t)1 << 32)

void mr_object_init(TVMFFIObject* obj, int32_t type_index, void (*deleter)(void*, int)) {
  obj->combined_ref_count = MR_STRONG_ONE | MR_WEAK_ONE;
  obj->type_index = type_index;
  obj->__padding = 0;
  obj->deleter = deleter;
}

void* mr_object_alloc(size_t size, int32_t type_index, void (*deleter)(void*, int),
                      const char* what) {
  TVMFFIObject* obj = (TVMFFIObject*)calloc(1, size);
  if (!obj) {
    MR_OOM(what);
    return NULL;
  }
  mr_object_init(obj, type_index, deleter ? deleter : mr_object_free_deleter);
  return obj;
}

void mr_object_free_deleter(void* self, int flags) {
  if (flags & kTVMFFIObjectDeleterFlagBitMaskWeak) free(self);
}

char* mr_strndup(const char* s, size_t n) {
  char* d = (char*)malloc(n + 1);
  if (d) {
    memcpy(d, s, n);
    d[n] = '\0';
  }
  return d;
}

int mr_concat(char* buf, size_t cap, const char* a, const char* b, const char* c) {
  const char* parts[3];
  size_t len = 0, n;
  int i;
  parts[0] = a;
  parts[1] = b;
  parts[2] = c;
  for (i = 0; i < 3; ++i) {
    if (!parts[i]) continue;
    n = strlen(parts[i]);
    if (n > cap - 1 - len) {
      memcpy(buf + len, parts[i], cap - 1 - len);
      buf[cap - 1] = '\0';
      return -1;
    }
    memcpy(buf + len, parts[i], n);
    len += n;
  }
  buf[len] = '\0';
  return 0;
}

int mr_grow(void* items, size_t* cap, size_t count, size_t elem_size, const char* what) {
  void** p = (void**)items;
  size_t n = *cap ? *cap * 2 : 8;
  void* grown;
  if (count < *cap) return 0;
  grown = realloc(*p, n * elem_size);
  if (!grown) return MR_OOM(what);
  *p = grown;
  *cap = n;
  return 0;
}

int TVMFFIObjectIncRef(TVMFFIObjectHandle handle) {
  TVMFFIObject* obj = (TVMFFIObject*)handle;
  if (obj) mr_atomic_add_u64(&obj->combined_ref_count, MR_STRONG_ONE);
  return 0;
}

int TVMFFIObjectDecRef(TVMFFIObjectHandle handle) {
  TVMFFIObject* obj = (TVMFFIObject*)handle;
  uint64_t old;
  if (!obj) return 0;
  if (mr_atomic_load_u64(&obj->combined_ref_count) == (MR_STRONG_ONE | MR_WEAK_ONE)) {
    obj->deleter(obj, kTVMFFIObjectDeleterFlagBitMaskBoth);
    return 0;
  }
  old = mr_atomic_sub_u64(&obj->combined_ref_count, MR_STRONG_ONE);
  if ((old & 0xFFFFFFFFu) == 1) {
    obj->deleter(obj, kTVMFFIObjectDeleterFlagBitMaskStrong);
    old = mr_atomic_sub_u64(&obj->combined_ref_count, MR_WEAK_ONE);
    if ((old >> 32) == 1) obj->deleter(obj, kTVMFFIObjectDeleterFlagBitMaskWeak);
  }
  return 0;
}

void mr_object_retain(TVMFFIObject* obj) { (void)TVMFFIObjectIncRef(obj); }
void mr_object_release(TVMFFIObject* obj) { (void)TVMFFIObjectDecRef(obj); }
int32_t mr_object_type_index(const TVMFFIObject* obj) { return obj ? obj->type_index : 0; }

void mr_any_clear(TVMFFIAny* value) {
  if (!value) return;
  if (value->type_index >= kTVMFFIStaticObjectBegin) mr_object_release(value->v_obj);
  value->type_index = kTVMFFINone;
  value->zero_padding = 0;
  value->v_int64 = 0;
}

void mr_any_set_object(TVMFFIAny* out, TVMFFIObject* obj) {
  out->type_index = obj ? obj->type_index : kTVMFFINone;
  out->zero_padding = 0;
  out->v_obj = obj;
}

/* ---- Str / Bytes ---- */
typedef struct {
  TVMFFIObject header;
  TVMFFIByteArray cell;
} mr_bytes_obj_t;

static int bytes_like_create(int32_t type_index, const char* data, size_t size,
                             TVMFFIObject** out) {
  mr_bytes_obj_t* obj;
  char* inline_data;
  if (size > SIZE_MAX - sizeof(mr_bytes_obj_t) - 1) return MR_OOM("a string");
  if (size && !data) return MR_VALUE_ERROR("string data is NULL");
  obj = (mr_bytes_obj_t*)mr_object_alloc(sizeof(mr_bytes_obj_t) + size + 1, type_index, NULL,
                                         "a string");
  if (!obj) return -1;
  inline_data = (char*)(obj + 1);
  if (size) memcpy(inline_data, data, size);
  obj->cell.data = inline_data;
  obj->cell.size = size;
  *out = &obj->header;
  return 0;
}

int mr_str_create(const char* data, size_t size, TVMFFIObject** out_str) {
  return bytes_like_create(kTVMFFIStr, data, size, out_str);
}

int mr_bytes_create(const char* data, size_t size, TVMFFIObject** out_bytes) {
  return bytes_like_create(kTVMFFIBytes, data, size, out_bytes);
}

const TVMFFIByteArray* mr_bytes_view(const TVMFFIObject* obj) {
  if (!obj || (obj->type_index != kTVMFFIStr && obj->type_index != kTVMFFIBytes)) return NULL;
  return (const TVMFFIByteArray*)(obj + 1);
}

static int from_byte_array(int32_t type_index, const TVMFFIByteArray* input, TVMFFIAny* out) {
  TVMFFIObject* obj;
  if (!input || !out) return MR_VALUE_ERROR("byte array or result is NULL");
  if (bytes_like_create(type_index, input->data, input->size, &obj) != 0) return -1;
  mr_any_set_object(out, obj);
  return 0;
}

int TVMFFIStringFromByteArray(const TVMFFIByteArray* input, TVMFFIAny* out) {
  return from_byte_array(kTVMFFIStr, input, out);
}

int TVMFFIBytesFromByteArray(const TVMFFIByteArray* input, TVMFFIAny* out) {
  return from_byte_array(kTVMFFIBytes, input, out);
}

/* ---- Shape ---- */
typedef struct {
  TVMFFIObject header;
  TVMFFIShapeCell cell;
} mr_shape_obj_t;

int mr_shape_create(const int64_t* dims, size_t ndim, TVMFFIObject** out_shape) {
  mr_shape_obj_t* obj;
  int64_t* inline_dims;
  if (ndim > (SIZE_MAX - sizeof(mr_shape_obj_t)) / sizeof(int64_t) / 2)
    return MR_VALUE_ERROR("shape has too many dimensions");
  if (ndim && !dims) return MR_VALUE_ERROR("shape dims are NULL");
  obj = (mr_shape_obj_t*)mr_object_alloc(sizeof(mr_shape_obj_t) + ndim * sizeof(int64_t),
                                         kTVMFFIShape, NULL, "a Shape");
  if (!obj) return -1;
  inline_dims = (int64_t*)(obj + 1);
  if (ndim) memcpy(inline_dims, dims, ndim * sizeof(int64_t));
  obj->cell.data = inline_dims;
  obj->cell.size = ndim;
  *out_shape = &obj->header;
  return 0;
}

const TVMFFIShapeCell* mr_shape_view(const TVMFFIObject* shape) {
  if (!shape || shape->type_index != kTVMFFIShape) return NULL;
  return (const TVMFFIShapeCell*)(shape + 1);
}

/* ---- values ---- */
#ifndef MR_CONFIG_SMALL /* names are for messages */
/* Names of type indices 0-12 and 64-74, NUL-separated. */
static const char k_pod_type_names[] =
    "None\0int\0bool\0float\0opaque pointer\0DataType\0Device\0DLTensor*\0str\0bytes\0"
    "ObjectRValueRef\0str\0bytes";
static const char k_object_type_names[] =
    "Object\0str\0bytes\0Error\0Function\0Shape\0Tensor\0Array\0Map\0Module\0OpaquePyObject";

static const char* nth_name(const char* names, int n) {
  while (n-- > 0) names += strlen(names) + 1;
  return names;
}

const char* mr_type_index_name(int32_t type_index) {
  if (type_index >= kTVMFFINone && type_index <= kTVMFFISmallBytes)
    return nth_name(k_pod_type_names, type_index);
  if (type_index >= kTVMFFIObject && type_index <= kTVMFFIOpaquePyObject)
    return nth_name(k_object_type_names, type_index - kTVMFFIObject);
  return type_index >= kTVMFFIDynObjectBegin ? "object" : "unknown type";
}
#endif

int mr_any_copy(const TVMFFIAny* in, TVMFFIAny* out) {
  TVMFFIObject* obj;
  switch (in->type_index) {
    case kTVMFFIRawStr:
      if (mr_str_create(in->v_c_str, strlen(in->v_c_str), &obj) != 0) return -1;
      mr_any_set_object(out, obj);
      return 0;
    case kTVMFFIByteArrayPtr: {
      const TVMFFIByteArray* ba = (const TVMFFIByteArray*)in->v_ptr;
      if (mr_bytes_create(ba->data, ba->size, &obj) != 0) return -1;
      mr_any_set_object(out, obj);
      return 0;
    }
    case kTVMFFIObjectRValueRef:
      return MR_RAISE(kMrErrorType, "cannot store an ObjectRValueRef value");
    default:
      *out = *in;
      if (in->type_index >= kTVMFFIStaticObjectBegin) mr_object_retain(in->v_obj);
      return 0;
  }
}

int mr_any_get_str(const TVMFFIAny* v, const char** out_data, size_t* out_size) {
  switch (v->type_index) {
    case kTVMFFIRawStr:
      *out_data = v->v_c_str;
      *out_size = strlen(v->v_c_str);
      return 0;
    case kTVMFFISmallStr:
    case kTVMFFISmallBytes:
      *out_data = v->v_bytes;
      *out_size = v->small_str_len;
      return 0;
    case kTVMFFIByteArrayPtr:
      *out_data = ((const TVMFFIByteArray*)v->v_ptr)->data;
      *out_size = ((const TVMFFIByteArray*)v->v_ptr)->size;
      return 0;
    case kTVMFFIStr:
    case kTVMFFIBytes:
      *out_data = mr_bytes_view(v->v_obj)->data;
      *out_size = mr_bytes_view(v->v_obj)->size;
      return 0;
    default:
      return MR_RAISE(kMrErrorType, "expected a string, got type index %d (%s)",
                           (int)v->type_index, mr_type_index_name(v->type_index));
  }
}

/* ---- Array ---- */
typedef struct {
  TVMFFIObject header;
  TVMFFISeqCell cell;
} mr_array_obj_t;

static void array_deleter(void* self, int flags) {
  mr_array_obj_t* arr = (mr_array_obj_t*)self;
  if (flags & kTVMFFIObjectDeleterFlagBitMaskStrong) {
    TVMFFIAny* items = (TVMFFIAny*)arr->cell.data;
    int64_t i;
    for (i = 0; i < arr->cell.size; ++i) mr_any_clear(&items[i]);
    arr->cell.size = 0;
  }
  if (flags & kTVMFFIObjectDeleterFlagBitMaskWeak) free(self);
}

int mr_array_create(const TVMFFIAny* items, int64_t size, TVMFFIObject** out_array) {
  mr_array_obj_t* arr;
  TVMFFIAny* data;
  int64_t i;
  if (size < 0 || (uint64_t)size > (SIZE_MAX - sizeof(mr_array_obj_t)) / sizeof(TVMFFIAny))
    return MR_VALUE_ERROR("invalid array size %lld", (long long)size);
  if (size && !items) return MR_VALUE_ERROR("array items are NULL");
  arr = (mr_array_obj_t*)mr_object_alloc(
      sizeof(mr_array_obj_t) + (size_t)size * sizeof(TVMFFIAny), kTVMFFIArray, array_deleter,
      "an Array");
  if (!arr) return -1;
  data = (TVMFFIAny*)(arr + 1);
  arr->cell.data = data;
  arr->cell.capacity = size;
  for (i = 0; i < size; ++i) {
    if (mr_any_copy(&items[i], &data[i]) != 0) {
      mr_object_release(&arr->header);
      return -1;
    }
    arr->cell.size = i + 1;
  }
  *out_array = &arr->header;
  return 0;
}

const TVMFFISeqCell* mr_array_view(const TVMFFIObject* array) {
  if (!array || array->type_index != kTVMFFIArray) return NULL;
  return (const TVMFFISeqCell*)(array + 1);
}

/* ---- OpaquePyObject ---- */
typedef struct {
  TVMFFIObject header;
  TVMFFIOpaqueObjectCell cell;
  void (*handle_deleter)(void* handle);
} mr_opaque_obj_t;

static void opaque_deleter(void* self, int flags) {
  mr_opaque_obj_t* obj = (mr_opaque_obj_t*)self;
  if ((flags & kTVMFFIObjectDeleterFlagBitMaskStrong) && obj->handle_deleter) {
    obj->handle_deleter(obj->cell.handle);
    obj->handle_deleter = NULL;
  }
  if (flags & kTVMFFIObjectDeleterFlagBitMaskWeak) free(self);
}

int TVMFFIObjectCreateOpaque(void* handle, int32_t type_index, void (*deleter)(void* handle),
                             TVMFFIObjectHandle* out) {
  mr_opaque_obj_t* obj;
  if (type_index != kTVMFFIOpaquePyObject)
    return MR_VALUE_ERROR("opaque objects have type index %d (OpaquePyObject), not %d",
                          (int)kTVMFFIOpaquePyObject, (int)type_index);
  if (!out) return MR_VALUE_ERROR("opaque object output is NULL");
  obj = (mr_opaque_obj_t*)mr_object_alloc(sizeof(*obj), type_index, opaque_deleter,
                                          "an OpaquePyObject");
  if (!obj) return -1;
  obj->cell.handle = handle;
  obj->handle_deleter = deleter;
  *out = &obj->header;
  return 0;
}

void* mr_opaque_handle(const TVMFFIObject* obj) {
  if (!obj || obj->type_index != kTVMFFIOpaquePyObject) return NULL;
  return ((const mr_opaque_obj_t*)obj)->cell.handle;
}
