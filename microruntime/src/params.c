/* Loading param dicts in TVM's save_param_dict format (little-endian):
 *   u64 0xF7E58D4F05049CB7, u64 0, vec<string> names, u64 count,
 *   count x { u64 0xDD5E40F096B4A13F, u64 0, i32 device_type, i32 device_id,
 *             i32 ndim, u8 code, u8 bits, u16 lanes, i64 shape[ndim],
 *             i64 data_byte_size (= ceil(bits/8) * prod(shape)), data }.
 * Loading validates every field and produces CPU tensors; as in TVM, only records
 * of CPU tensors (device_type 1) are accepted. Saving is in params_save.c. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "params_format.h"

#define MR_ERROR_FILE kMrFileParams

static const char k_rule_text[][10] = {"", "", "at most ", "at least "};

const mr_params_field_t mr_params_list_header[3] = {
    {"magic", MR_PARAMS_LIST_MAGIC, 8, MR_FIELD_EQUAL},
    {"reserved field", 0, 8, MR_FIELD_EQUAL},
    {"name count", MR_MAX_PARAMS, 8, MR_FIELD_AT_MOST},
};

const mr_params_field_t mr_params_tensor_header[8] = {
    {"tensor magic", MR_PARAMS_TENSOR_MAGIC, 8, MR_FIELD_EQUAL},
    {"tensor reserved field", 0, 8, MR_FIELD_EQUAL},
    {"device_type", kDLCPU, 4, MR_FIELD_EQUAL}, /* tensors are saved from and loaded to the CPU */
    {"device_id", 0, 4, MR_FIELD_ANY},
    {"ndim", MR_MAX_NDIM, 4, MR_FIELD_AT_MOST},
    {"dtype code", 17, 1, MR_FIELD_AT_MOST},
    {"dtype bits", 1, 1, MR_FIELD_AT_LEAST},
    {"dtype lanes", 1, 2, MR_FIELD_EQUAL},
};

void mr_params_swap_elements(unsigned char* p, size_t nbytes, size_t elem) {
  size_t i, j;
  if (elem < 2) return;
  for (i = 0; i + elem <= nbytes; i += elem)
    for (j = 0; j < elem / 2; ++j) {
      unsigned char t = p[i + j];
      p[i + j] = p[i + elem - 1 - j];
      p[i + elem - 1 - j] = t;
    }
}

/* ---- loading ---- */
/* Reads each field into values[i] and checks it against its rule. The 4-byte fields
 * (device_type, device_id, ndim) are int32 in the format and are printed signed. */
static int read_fields(mr_reader_t* r, const mr_params_field_t* f, int n, uint64_t* values) {
  int i;
  for (i = 0; i < n; ++i) {
    uint64_t v;
    char text[24];
    if (mr_read_le(r, f[i].width, f[i].name, &v) != 0) return -1;
    if ((f[i].rule == MR_FIELD_EQUAL && v != f[i].limit) ||
        (f[i].rule == MR_FIELD_AT_MOST && v > f[i].limit) ||
        (f[i].rule == MR_FIELD_AT_LEAST && v < f[i].limit)) {
#ifdef MR_CONFIG_SMALL
      (void)text;
#else
      if (f[i].width == 4)
        snprintf(text, sizeof(text), "%ld", (long)(int32_t)(uint32_t)v);
      else
        snprintf(text, sizeof(text), "%llu", (unsigned long long)v);
#endif
      return MR_READER_FAIL(r, "bad %s %s at offset %llu, expected %s%llu", f[i].name, text,
                            (unsigned long long)r->at, k_rule_text[f[i].rule],
                            (unsigned long long)f[i].limit);
    }
    values[i] = v;
  }
  return 0;
}

int mr_params_read_tensor(mr_reader_t* r, TVMFFIObject** out) {
  uint64_t h[MR_PARAMS_TENSOR_FIELDS], v, data_size, expected, d;
  int64_t shape[MR_MAX_NDIM];
  int32_t ndim;
  DLDataType dtype;
  DLDevice cpu = {kDLCPU, 0};
  TVMFFIObject* t;
  if (read_fields(r, mr_params_tensor_header, MR_PARAMS_TENSOR_FIELDS, h) != 0) return -1;
  ndim = (int32_t)h[MR_PARAMS_TENSOR_NDIM];
  dtype.code = (uint8_t)h[MR_PARAMS_TENSOR_CODE];
  dtype.bits = (uint8_t)h[MR_PARAMS_TENSOR_BITS];
  dtype.lanes = 1;
  for (d = 0; d < (uint64_t)ndim; ++d) {
    if (mr_read_le(r, 8, "shape", &v) != 0) return -1;
    shape[d] = (int64_t)v;
    if (shape[d] < 0)
      return MR_READER_FAIL(r, "shape[%llu] is %lld at offset %llu: a dimension cannot be "
                            "negative", (unsigned long long)d, (long long)shape[d],
                            (unsigned long long)r->at);
  }
  if (mr_tensor_nbytes_checked(ndim, shape, dtype, r->what, &expected) != 0) return -1;
  if (mr_read_le(r, 8, "data_byte_size", &data_size) != 0) return -1;
  if (data_size != expected)
    return MR_READER_FAIL(r, "data_byte_size %llu at offset %llu does not match the shape and "
                          "dtype (%llu bytes)", (unsigned long long)data_size,
                          (unsigned long long)r->at, (unsigned long long)expected);
  if (mr_reader_need(r, data_size, "tensor data") != 0 ||
      mr_tensor_create(ndim, shape, dtype, cpu, &t) != 0)
    return -1;
  if (data_size) {
    DLTensor* dl = mr_tensor_dl(t);
    memcpy(dl->data, r->p + r->pos, (size_t)data_size);
    if (mr_host_is_big_endian())
      mr_params_swap_elements((unsigned char*)dl->data, (size_t)data_size,
                              ((size_t)dtype.bits + 7) / 8);
  }
  r->pos += data_size;
  *out = t;
  return 0;
}

/* See params_format.h. */
int mr_params_read_lists(mr_reader_t* r, uint64_t count, const char* name_field,
                         const char* count_field, TVMFFIObject** out_names,
                         TVMFFIObject** out_tensors) {
  TVMFFIAny* items; /* count names, then count tensors */
  TVMFFIObject *names = NULL, *tensors = NULL, *obj;
  const char* name;
  uint64_t i, len, count2 = count;
  int status = -1;
  if (count > (r->size - r->pos) / 8)
    return MR_READER_BAD(r, count_field ? "name count" : "param count", count, "exceeds the data");
  if (!(items = (TVMFFIAny*)calloc(2 * count + 1, sizeof(TVMFFIAny)))) return MR_OOM("params");
  for (i = 0; i < count; ++i) {
    if (mr_read_bytes(r, name_field, &name, &len) != 0) goto done;
    if (len >= MR_MAX_NAME || memchr(name, 0, (size_t)len)) {
      MR_READER_BAD(r, name_field, len, "is too long or holds a NUL");
      goto done;
    }
    if (mr_str_create(name, (size_t)len, &obj) != 0) goto done;
    mr_any_set_object(&items[i], obj);
  }
  if (count_field && mr_read_le(r, 8, count_field, &count2) != 0) goto done;
  if (count2 != count) {
    MR_READER_BAD(r, count_field, count2, "differs from the name count");
    goto done;
  }
  for (i = 0; i < count; ++i) {
    if (mr_params_read_tensor(r, &obj) != 0) goto done;
    mr_any_set_object(&items[count + i], obj);
  }
  if (mr_array_create(items, (int64_t)count, &names) != 0 ||
      mr_array_create(items + count, (int64_t)count, &tensors) != 0)
    goto done;
  *out_names = names;
  *out_tensors = tensors;
  names = tensors = NULL;
  status = 0;
done:
  mr_object_release(names);
  mr_object_release(tensors);
  for (i = 0; i < 2 * count; ++i) mr_any_clear(&items[i]);
  free(items);
  return status;
}

int mr_params_load(const void* data, size_t size, TVMFFIObject** out_names,
                   TVMFFIObject** out_tensors) {
  mr_reader_t r = {NULL, 0, 0, 0, "params"};
  uint64_t h[3];
  TVMFFIObject *names, *tensors;
  if (!data && size) return MR_VALUE_ERROR("params: data is NULL");
  r.p = (const unsigned char*)data;
  r.size = size;
  if (read_fields(&r, mr_params_list_header, 3, h) != 0 ||
      mr_params_read_lists(&r, h[MR_PARAMS_LIST_COUNT], "name", "tensor count", &names,
                           &tensors) != 0)
    return -1;
  if (mr_reader_end(&r) != 0) {
    mr_object_release(names);
    mr_object_release(tensors);
    return -1;
  }
  *out_names = names;
  *out_tensors = tensors;
  return 0;
}
