/* Saving param dicts in TVM's save_param_dict format (see params.c and
 * params_format.h). Outside the core: a deployment loads params, the tools that
 * make them save them (TVM's C runtime has no SaveParams either). */
#include <stdlib.h>
#include <string.h>

#include "params_format.h"

#define MR_ERROR_FILE kMrFileParamsSave

static unsigned char* put_le(unsigned char* p, uint64_t v, int nbytes) {
  int i;
  for (i = 0; i < nbytes; ++i) p[i] = (unsigned char)(v >> (8 * i));
  return p + nbytes;
}

/* Writes values[i] for each field (fixed fields: their value). */
static unsigned char* put_fields(unsigned char* p, const mr_params_field_t* f, int n,
                                 const uint64_t* values) {
  int i;
  for (i = 0; i < n; ++i)
    p = put_le(p, f[i].rule == MR_FIELD_EQUAL ? f[i].limit : values[i], f[i].width);
  return p;
}

static int tensor_record_size(const DLTensor* t, uint64_t* out_data, uint64_t* out_total) {
  uint64_t numel, data, total;
  if (t->dtype.lanes != 1)
    return MR_VALUE_ERROR("params: cannot save a vector dtype (lanes > 1)");
  if (t->ndim < 0 || t->ndim > MR_MAX_NDIM || mr_shape_numel(t->ndim, t->shape, &numel) != 0 ||
      mr_mul_overflow_u64(numel, ((uint64_t)t->dtype.bits + 7) / 8, &data))
    return MR_VALUE_ERROR("params: tensor shape is invalid");
  if (!mr_tensor_is_compact(t))
    return MR_VALUE_ERROR("params: only compact tensors can be saved");
  total = 16 + 8 + 4 + 4 + 8 * (uint64_t)t->ndim + 8;
  if (mr_add_overflow_u64(total, data, &total))
    return MR_VALUE_ERROR("params: tensor too large");
  *out_data = data;
  *out_total = total;
  return 0;
}

int mr_params_save(const char* const* names, TVMFFIObject* const* tensors, int64_t count,
                   TVMFFIObject** out_bytes) {
  uint64_t total = 8 + 8 + 8 + 8, data, rec, v[MR_PARAMS_TENSOR_FIELDS] = {0};
  unsigned char *buf = NULL, *p;
  int64_t i;
  int32_t d;
  int status = -1;
  if (count < 0 || (count > 0 && (!names || !tensors)))
    return MR_VALUE_ERROR("params: invalid names/tensors");
  for (i = 0; i < count; ++i) {
    if (!names[i] || !mr_tensor_dl(tensors[i]))
      return MR_RAISE(kMrErrorType, "params: entry %lld is not a (name, Tensor) pair",
                           (long long)i);
    if (tensor_record_size(mr_tensor_dl(tensors[i]), &data, &rec) != 0) return -1;
    if (mr_add_overflow_u64(total, 8 + strlen(names[i]), &total) ||
        mr_add_overflow_u64(total, rec, &total) || total > SIZE_MAX)
      return MR_VALUE_ERROR("params: dict too large");
  }
  buf = (unsigned char*)malloc(total ? (size_t)total : 1);
  if (!buf) return MR_OOM("a params blob");
  v[MR_PARAMS_LIST_COUNT] = (uint64_t)count;
  p = put_fields(buf, mr_params_list_header, 3, v);
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
    v[MR_PARAMS_TENSOR_NDIM] = (uint64_t)t->ndim;
    v[MR_PARAMS_TENSOR_CODE] = t->dtype.code;
    v[MR_PARAMS_TENSOR_BITS] = t->dtype.bits;
    p = put_fields(p, mr_params_tensor_header, MR_PARAMS_TENSOR_FIELDS, v);
    for (d = 0; d < t->ndim; ++d) p = put_le(p, (uint64_t)t->shape[d], 8);
    p = put_le(p, data, 8);
    if (mr_tensor_copy_to_bytes(t, p, (size_t)data) != 0) goto done;
    if (mr_host_is_big_endian()) mr_params_swap_elements(p, (size_t)data, ((size_t)t->dtype.bits + 7) / 8);
    p += data;
  }
  status = mr_bytes_create((const char*)buf, (size_t)total, out_bytes);
done:
  free(buf);
  return status;
}

