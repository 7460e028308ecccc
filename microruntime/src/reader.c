/* Bounds-checked little-endian reading of binary formats (params files,
 * library blobs). Every error is a ValueError naming the format, the field
 * and its offset. */
#include "internal.h"

#define MR_ERROR_FILE kMrFileReader

#ifndef MR_CONFIG_SMALL
int mr_reader_fail(const mr_reader_t* r, const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  mr_error_setv_in(kMrErrorValue, r->what, fmt, ap);
  va_end(ap);
  return -1;
}

int mr_reader_bad(const mr_reader_t* r, const char* field, uint64_t value, const char* problem) {
  return mr_reader_fail(r, "%s %llu at offset %llu %s", field, (unsigned long long)value,
                        (unsigned long long)r->at, problem);
}
#endif

int mr_reader_need(const mr_reader_t* r, uint64_t n, const char* field) {
  if (n > r->size - r->pos)
    return MR_READER_FAIL(r, "truncated reading %s at offset %llu (need %llu bytes, %llu left)",
                          field, (unsigned long long)r->pos, (unsigned long long)n,
                          (unsigned long long)(r->size - r->pos));
  return 0;
}

int mr_reader_end(const mr_reader_t* r) {
  if (r->pos != r->size)
    return MR_READER_FAIL(r, "%llu trailing bytes at offset %llu",
                          (unsigned long long)(r->size - r->pos), (unsigned long long)r->pos);
  return 0;
}

int mr_read_le(mr_reader_t* r, int nbytes, const char* field, uint64_t* out) {
  uint64_t v = 0;
  int i;
  if (mr_reader_need(r, (uint64_t)nbytes, field) != 0) return -1;
  r->at = r->pos;
  for (i = nbytes - 1; i >= 0; --i) v = (v << 8) | r->p[r->pos + (uint64_t)i];
  r->pos += (uint64_t)nbytes;
  *out = v;
  return 0;
}

int mr_read_bytes(mr_reader_t* r, const char* field, const char** out, uint64_t* out_len) {
  uint64_t n;
  if (mr_read_le(r, 8, field, &n) != 0 || mr_reader_need(r, n, field) != 0) return -1;
  *out = (const char*)r->p + r->pos;
  *out_len = n;
  r->pos += n;
  return 0;
}
