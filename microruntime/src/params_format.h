/* The save_param_dict format, shared by params.c (loading, in the core) and
 * params_save.c (saving): the record headers as tables of little-endian fields,
 * each with the rule a loaded value must meet and the value a saved one gets. */
#ifndef MR_PARAMS_FORMAT_H_
#define MR_PARAMS_FORMAT_H_

#include "internal.h"

#define MR_PARAMS_LIST_MAGIC 0xF7E58D4F05049CB7ULL
#define MR_PARAMS_TENSOR_MAGIC 0xDD5E40F096B4A13FULL

enum { MR_FIELD_ANY, MR_FIELD_EQUAL, MR_FIELD_AT_MOST, MR_FIELD_AT_LEAST };
typedef struct {
  const char* name;
  uint64_t limit; /* the fixed value (MR_FIELD_EQUAL) or the bound */
  uint8_t width, rule;
} mr_params_field_t;

/* magic, reserved, name count. */
extern const mr_params_field_t mr_params_list_header[3];
enum { MR_PARAMS_LIST_COUNT = 2 };
/* magic, reserved, device_type, device_id, ndim, dtype code, bits, lanes. */
extern const mr_params_field_t mr_params_tensor_header[8];
enum { MR_PARAMS_TENSOR_NDIM = 4, MR_PARAMS_TENSOR_CODE, MR_PARAMS_TENSOR_BITS,
       MR_PARAMS_TENSOR_FIELDS = 8 };

/* Reads one tensor record (the same record a GraphExecutorFactory payload holds)
 * into a new CPU tensor. */
int mr_params_read_tensor(mr_reader_t* r, TVMFFIObject** out);

/* count names (each shorter than MR_MAX_NAME, without a NUL; `name_field` in errors), then,
 * when count_field is not NULL, that u64 field (it must equal count: a params file's tensor
 * count), then count tensor records, as an Array of Str and an Array of Tensor. */
int mr_params_read_lists(mr_reader_t* r, uint64_t count, const char* name_field,
                         const char* count_field, TVMFFIObject** out_names,
                         TVMFFIObject** out_tensors);

/* Reverses the bytes of each elem-byte element (the data is little-endian in files). */
void mr_params_swap_elements(unsigned char* p, size_t nbytes, size_t elem);
static inline int mr_host_is_big_endian(void) {
  const uint16_t one = 1;
  return *(const unsigned char*)&one == 0;
}

#endif /* MR_PARAMS_FORMAT_H_ */
