/* Param dicts in TVM's save_param_dict format (little-endian):
 *   u64 0xF7E58D4F05049CB7, u64 0, vec<string> names, u64 count,
 *   count x { u64 0xDD5E40F096B4A13F, u64 0, i32 device_type, i32 device_id,
 *             i32 ndim, u8 code, u8 bits, u16 lanes, i64 shape[ndim],
 *             i64 data_byte_size (= ceil(bits/8) * prod(shape)), data }.
 * Loading validates every field and produces CPU tensors. */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

#define MR_PARAMS_LIST_MAGIC 0xF7E58D4F05049CB7ULL
#define MR_PARAMS_TENSOR_MAGIC 0xDD5E40F096B4A13FULL

static int host_is_big_endian(void) {
  const uint16_t one = 1;
  return *(const unsigned char*)&one == 0;
}

static void swap_elements(unsigned char* p, size_t nbytes, size_t elem) {
  size_t i, j;
  if (elem < 2) return;
  for (i = 0; i + elem <= nbytes; i += elem)
    for (j = 0; j < elem / 2; ++j) {
      unsigned char t = p[i + j];
      p[i + j] = p[i + elem - 1 - j];
      p[i + elem - 1 - j] = t;
    }
}

/* ---- saving ---- */
static unsigned char* put_le(unsigned char* p, uint64_t v, int nbytes) {
  int i;
  for (i = 0; i < nbytes; ++i) p[i] = (unsigned char)(v >> (8 * i));
  return p + nbytes;
}

static int tensor_record_size(const DLTensor* t, uint64_t* out_data, uint64_t* out_total) {
  uint64_t numel, data, total;
  if (t->dtype.lanes != 1)
    return mr_value_error("params: cannot save a vector dtype (lanes > 1)");
  if (t->ndim < 0 || t->ndim > MR_MAX_NDIM || mr_shape_numel(t->ndim, t->shape, &numel) != 0 ||
      mr_mul_overflow_u64(numel, ((uint64_t)t->dtype.bits + 7) / 8, &data))
    return mr_value_error("params: tensor shape is invalid");
  if (!mr_tensor_is_compact(t))
    return mr_value_error("params: only compact tensors can be saved");
  total = 16 + 8 + 4 + 4 + 8 * (uint64_t)t->ndim + 8;
  if (mr_add_overflow_u64(total, data, &total))
    return mr_value_error("params: tensor too large");
  *out_data = data;
  *out_total = total;
  return 0;
}

int mr_params_save(const char* const* names, TVMFFIObject* const* tensors, int64_t count,
                   TVMFFIObject** out_bytes) {
  uint64_t total = 8 + 8 + 8 + 8, data, rec;
  unsigned char *buf = NULL, *p;
  int64_t i;
  int32_t d;
  int status = -1;
  if (count < 0 || (count > 0 && (!names || !tensors)))
    return mr_value_error("params: invalid names/tensors");
  for (i = 0; i < count; ++i) {
    if (!names[i] || !mr_tensor_dl(tensors[i]))
      return mr_error_setf("TypeError", "params: entry %lld is not a (name, Tensor) pair",
                           (long long)i);
    if (tensor_record_size(mr_tensor_dl(tensors[i]), &data, &rec) != 0) return -1;
    if (mr_add_overflow_u64(total, 8 + strlen(names[i]), &total) ||
        mr_add_overflow_u64(total, rec, &total) || total > SIZE_MAX)
      return mr_value_error("params: dict too large");
  }
  buf = (unsigned char*)malloc(total ? (size_t)total : 1);
  if (!buf) return mr_error_oom("a params blob");
  p = put_le(buf, MR_PARAMS_LIST_MAGIC, 8);
  p = put_le(p, 0, 8);
  p = put_le(p, (uint64_t)count, 8);
  for (i = 0; i < count; ++i) {
    size_t n = strlen(names[i]);
    p = put_le(p, n, 8);
    memcpy(p, names[i], n);
    p += n;
  }
  p = put_le(p, (uint64_t)count, 8);
  for (i = 0; i < count; ++i) {
    const DLTensor* t = mr_tensor_dl(tensors[i]);
    (void)tensor_record_size(t, &data, &rec);
    p = put_le(p, MR_PARAMS_TENSOR_MAGIC, 8);
    p = put_le(p, 0, 8);
    p = put_le(p, kDLCPU, 4);
    p = put_le(p, 0, 4);
    p = put_le(p, (uint32_t)t->ndim, 4);
    *p++ = t->dtype.code;
    *p++ = t->dtype.bits;
    p = put_le(p, t->dtype.lanes, 2);
    for (d = 0; d < t->ndim; ++d) p = put_le(p, (uint64_t)t->shape[d], 8);
    p = put_le(p, data, 8);
    if (mr_tensor_copy_to_bytes(t, p, (size_t)data) != 0) goto done;
    if (host_is_big_endian()) swap_elements(p, (size_t)data, ((size_t)t->dtype.bits + 7) / 8);
    p += data;
  }
  status = mr_bytes_create((const char*)buf, (size_t)total, out_bytes);
done:
  free(buf);
  return status;
}

/* ---- loading ---- */
static int expect_u64(mr_reader_t* r, uint64_t expected, const char* field) {
  uint64_t v;
  if (mr_read_le(r, 8, field, &v) != 0) return -1;
  if (v != expected)
    return mr_reader_fail(r, "bad %s 0x%016llx at offset %llu, expected 0x%016llx", field,
                          (unsigned long long)v, (unsigned long long)r->at,
                          (unsigned long long)expected);
  return 0;
}

static int read_tensor(mr_reader_t* r, TVMFFIObject** out) {
  uint64_t v, ndim, data_size, numel = 1, expected, d;
  int64_t shape[MR_MAX_NDIM];
  DLDataType dtype;
  DLDevice cpu = {kDLCPU, 0};
  TVMFFIObject* t;
  if (expect_u64(r, MR_PARAMS_TENSOR_MAGIC, "tensor magic") != 0 ||
      expect_u64(r, 0, "tensor reserved field") != 0 ||
      mr_read_le(r, 8, "device_type and device_id", &v) != 0 ||
      mr_read_le(r, 4, "ndim", &ndim) != 0)
    return -1;
  if (ndim > MR_MAX_NDIM)
    return mr_reader_fail(r, "ndim %llu at offset %llu exceeds %d", (unsigned long long)ndim,
                          (unsigned long long)r->at, MR_MAX_NDIM);
  if (mr_read_le(r, 4, "dtype", &v) != 0) return -1;
  dtype.code = (uint8_t)v;
  dtype.bits = (uint8_t)(v >> 8);
  dtype.lanes = (uint16_t)(v >> 16);
  if (dtype.code > 17 || dtype.bits == 0 || dtype.lanes != 1)
    return mr_reader_fail(r, "invalid dtype (code %u, bits %u, lanes %u) at offset %llu",
                          (unsigned)dtype.code, (unsigned)dtype.bits, (unsigned)dtype.lanes,
                          (unsigned long long)r->at);
  for (d = 0; d < ndim; ++d) {
    if (mr_read_le(r, 8, "shape", &v) != 0) return -1;
    shape[d] = (int64_t)v;
    if (shape[d] < 0 || mr_mul_overflow_u64(numel, v, &numel))
      return mr_reader_bad(r, "invalid shape dimension", v, "(negative or too many elements)");
  }
  if (mr_read_le(r, 8, "data_byte_size", &data_size) != 0) return -1;
  if (mr_mul_overflow_u64(numel, ((uint64_t)dtype.bits + 7) / 8, &expected) ||
      data_size != expected)
    return mr_reader_bad(r, "data_byte_size", data_size, "does not match the shape and dtype");
  if (mr_reader_need(r, data_size, "tensor data") != 0 ||
      mr_tensor_create((int32_t)ndim, shape, dtype, cpu, &t) != 0)
    return -1;
  if (data_size) {
    DLTensor* dl = mr_tensor_dl(t);
    memcpy(dl->data, r->p + r->pos, (size_t)data_size);
    if (host_is_big_endian())
      swap_elements((unsigned char*)dl->data, (size_t)data_size, ((size_t)dtype.bits + 7) / 8);
  }
  r->pos += data_size;
  *out = t;
  return 0;
}

int mr_params_load(const void* data, size_t size, TVMFFIObject** out_names,
                   TVMFFIObject** out_tensors) {
  mr_reader_t r = {NULL, 0, 0, 0, "params"};
  uint64_t count = 0, count2, i, len;
  TVMFFIAny* items = NULL; /* count names, then count tensors */
  TVMFFIObject *names_arr = NULL, *tensors_arr = NULL, *obj;
  const char* name;
  int status = -1;
  if (!data && size) return mr_value_error("params: data is NULL");
  r.p = (const unsigned char*)data;
  r.size = size;
  if (expect_u64(&r, MR_PARAMS_LIST_MAGIC, "magic") != 0 ||
      expect_u64(&r, 0, "reserved field") != 0 ||
      mr_read_le(&r, 8, "name count", &count) != 0)
    goto done;
  if (count > MR_MAX_PARAMS || count > (r.size - r.pos) / 8) {
    mr_reader_bad(&r, "name count", count, "exceeds the data");
    count = 0;
    goto done;
  }
  items = (TVMFFIAny*)calloc(count ? 2 * count : 1, sizeof(TVMFFIAny));
  if (!items) {
    mr_error_oom("params");
    goto done;
  }
  for (i = 0; i < count; ++i) {
    if (mr_read_bytes(&r, "name", &name, &len) != 0 ||
        mr_str_create(name, (size_t)len, &obj) != 0)
      goto done;
    mr_any_set_object(&items[i], obj);
  }
  if (mr_read_le(&r, 8, "tensor count", &count2) != 0) goto done;
  if (count2 != count) {
    mr_reader_bad(&r, "tensor count", count2, "differs from the name count");
    goto done;
  }
  for (i = 0; i < count; ++i) {
    if (read_tensor(&r, &obj) != 0) goto done;
    mr_any_set_object(&items[count + i], obj);
  }
  if (mr_reader_end(&r) != 0 || mr_array_create(items, (int64_t)count, &names_arr) != 0 ||
      mr_array_create(items + count, (int64_t)count, &tensors_arr) != 0)
    goto done;
  *out_names = names_arr;
  *out_tensors = tensors_arr;
  names_arr = tensors_arr = NULL;
  status = 0;
done:
  mr_object_release(names_arr);
  mr_object_release(tensors_arr);
  for (i = 0; items && i < 2 * count; ++i) mr_any_clear(&items[i]);
  free(items);
  return status;
}
