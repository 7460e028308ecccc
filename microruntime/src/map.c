/* Map objects (type 72) in TVM-FFI's small-map layout: after the header,
 * {void* data; uint64_t size; uint64_t slots}, bit 63 of `slots` marking a small
 * map and the rest its capacity; `data` points at `size` (key, value) pairs of
 * Any stored right after those fields. Lookup is linear.
 *
 * Keys are unique. Two keys are the same when both are strings (Str, SmallStr,
 * RawStr) of equal contents, both bytes of equal contents, both the same
 * OpaquePyObject handle (the same Python object), or of one type index with
 * equal values (objects: the same object). */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

#define MR_ERROR_FILE kMrFileMap

#define MR_SMALL_MAP_TAG ((uint64_t)1 << 63)

typedef struct {
  TVMFFIAny key;
  TVMFFIAny value;
} mr_map_kv_t;

typedef struct {
  TVMFFIObject header;
  void* data;
  uint64_t size;
  uint64_t slots;
} mr_map_obj_t;

static int is_str(int32_t t) {
  return t == kTVMFFIStr || t == kTVMFFISmallStr || t == kTVMFFIRawStr;
}

static int is_bytes(int32_t t) {
  return t == kTVMFFIBytes || t == kTVMFFISmallBytes || t == kTVMFFIByteArrayPtr;
}

static int same_text(const TVMFFIAny* a, const TVMFFIAny* b) {
  const char *da, *db;
  size_t na, nb;
  if (mr_any_get_str(a, &da, &na) != 0 || mr_any_get_str(b, &db, &nb) != 0) return 0;
  return na == nb && (na == 0 || memcmp(da, db, na) == 0);
}

static int same_key(const TVMFFIAny* a, const TVMFFIAny* b) {
  if (is_str(a->type_index) || is_str(b->type_index))
    return is_str(a->type_index) && is_str(b->type_index) && same_text(a, b);
  if (is_bytes(a->type_index) || is_bytes(b->type_index))
    return is_bytes(a->type_index) && is_bytes(b->type_index) && same_text(a, b);
  if (a->type_index != b->type_index) return 0;
  switch (a->type_index) {
    case kTVMFFINone:
      return 1;
    case kTVMFFIFloat:
      return a->v_float64 == b->v_float64;
    case kTVMFFIDataType:
      return a->v_dtype.code == b->v_dtype.code && a->v_dtype.bits == b->v_dtype.bits &&
             a->v_dtype.lanes == b->v_dtype.lanes;
    case kTVMFFIDevice:
      return a->v_device.device_type == b->v_device.device_type &&
             a->v_device.device_id == b->v_device.device_id;
    case kTVMFFIOpaquePyObject:
      return a->v_obj == b->v_obj ||
             mr_opaque_handle(a->v_obj) == mr_opaque_handle(b->v_obj);
    default:
      return a->v_int64 == b->v_int64; /* ints, bools, pointers, other objects */
  }
}

static void map_deleter(void* self, int flags) {
  mr_map_obj_t* map = (mr_map_obj_t*)self;
  if (flags & kTVMFFIObjectDeleterFlagBitMaskStrong) {
    mr_map_kv_t* kv = (mr_map_kv_t*)map->data;
    uint64_t i;
    for (i = 0; i < map->size; ++i) {
      mr_any_clear(&kv[i].key);
      mr_any_clear(&kv[i].value);
    }
    map->size = 0;
  }
  if (flags & kTVMFFIObjectDeleterFlagBitMaskWeak) free(self);
}

static int64_t find(const mr_map_obj_t* map, const TVMFFIAny* key) {
  const mr_map_kv_t* kv = (const mr_map_kv_t*)map->data;
  uint64_t i;
  for (i = 0; i < map->size; ++i)
    if (same_key(&kv[i].key, key)) return (int64_t)i;
  return -1;
}

/* Sets pair `at` (a fresh slot when at == map->size) to an owned copy of key/value. */
static int put(mr_map_obj_t* map, uint64_t at, const TVMFFIAny* key, const TVMFFIAny* value) {
  mr_map_kv_t* kv = (mr_map_kv_t*)map->data + at;
  TVMFFIAny copy;
  if (at == map->size) {
    if (mr_any_copy(key, &kv->key) != 0) return -1;
    kv->value.type_index = kTVMFFINone;
    map->size++;
  }
  if (mr_any_copy(value, &copy) != 0) return -1;
  mr_any_clear(&kv->value);
  kv->value = copy;
  return 0;
}

int mr_map_create(const TVMFFIAny* keys, const TVMFFIAny* values, int64_t size,
                  TVMFFIObject** out_map) {
  mr_map_obj_t* map;
  int64_t i;
  if (size < 0 ||
      (uint64_t)size > (SIZE_MAX - sizeof(mr_map_obj_t)) / sizeof(mr_map_kv_t))
    return MR_VALUE_ERROR("invalid map size %lld", (long long)size);
  if (size && (!keys || !values)) return MR_VALUE_ERROR("map keys or values are NULL");
  map = (mr_map_obj_t*)mr_object_alloc(sizeof(mr_map_obj_t) + (size_t)size * sizeof(mr_map_kv_t),
                                       kTVMFFIMap, map_deleter, "a Map");
  if (!map) return -1;
  map->data = map + 1;
  map->size = 0;
  map->slots = (uint64_t)size | MR_SMALL_MAP_TAG;
  for (i = 0; i < size; ++i) {
    int64_t at;
    if (keys[i].type_index == kTVMFFIObjectRValueRef) {
      mr_object_release(&map->header);
      return MR_RAISE(kMrErrorType, "a map key cannot be an ObjectRValueRef");
    }
    at = find(map, &keys[i]);
    if (put(map, at < 0 ? map->size : (uint64_t)at, &keys[i], &values[i]) != 0) {
      mr_object_release(&map->header);
      return -1;
    }
  }
  *out_map = &map->header;
  return 0;
}

const TVMFFIAny* mr_map_items(const TVMFFIObject* map, int64_t* out_size) {
  const mr_map_obj_t* m = (const mr_map_obj_t*)map;
  if (!map || map->type_index != kTVMFFIMap) return NULL;
  *out_size = (int64_t)m->size;
  return (const TVMFFIAny*)m->data;
}

int64_t mr_map_find(const TVMFFIObject* map, const TVMFFIAny* key) {
  if (!map || map->type_index != kTVMFFIMap || !key) return -1;
  return find((const mr_map_obj_t*)map, key);
}
