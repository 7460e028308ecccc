/* Data types: sizes, parsing ("float32x4", "bool", "handle") and formatting. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

size_t mr_dtype_bytes(DLDataType dtype) {
  return ((size_t)dtype.bits * (size_t)dtype.lanes + 7) / 8;
}

static const struct {
  const char* name;
  uint8_t code;
  uint8_t default_bits;
} k_codes[] = {
    {"bfloat", kDLBfloat, 16}, {"complex", kDLComplex, 64}, {"float", kDLFloat, 32},
    {"handle", kDLOpaqueHandle, 64}, {"uint", kDLUInt, 32}, {"int", kDLInt, 32},
};

/* Parses a decimal number of at most 5 digits; returns the chars consumed. */
static int parse_num(const char* s, unsigned long* out) {
  int n = 0;
  unsigned long v = 0;
  while (s[n] >= '0' && s[n] <= '9' && n < 6) v = v * 10 + (unsigned long)(s[n++] - '0');
  *out = v;
  return n;
}

int mr_dtype_parse(const char* text, DLDataType* out_dtype) {
  DLDataType t = {kDLBool, 8, 1};
  const char* s;
  size_t i;
  unsigned long bits, lanes = 1;
  int n;
  if (!text) return mr_value_error("dtype string is NULL");
  if (strcmp(text, "bool") == 0) goto done;
  t.code = kDLOpaqueHandle, t.bits = 0, t.lanes = 0;
  if (strcmp(text, "void") == 0) goto done;
  for (i = 0; i < sizeof(k_codes) / sizeof(k_codes[0]); ++i) {
    size_t len = strlen(k_codes[i].name);
    if (strncmp(text, k_codes[i].name, len) != 0) continue;
    s = text + len;
    n = parse_num(s, &bits);
    if (n == 0) bits = k_codes[i].default_bits;
    s += n;
    if (*s == 'x') {
      n = parse_num(s + 1, &lanes);
      if (n == 0) break;
      s += n + 1;
    }
    if (*s != '\0' || bits == 0 || bits > 255 || lanes == 0 || lanes > 65535) break;
    t.code = k_codes[i].code;
    t.bits = (uint8_t)bits;
    t.lanes = (uint16_t)lanes;
    goto done;
  }
  return mr_value_error("cannot parse dtype '%s'", text);
done:
  *out_dtype = t;
  return 0;
}

int mr_dtype_format(DLDataType dtype, char* buf, size_t buf_size) {
  static const char* names[] = {"int", "uint", "float", "handle", "bfloat", "complex"};
  char tmp[48];
  size_t len;
  if (dtype.code == kDLBool && dtype.bits == 8 && dtype.lanes == 1) {
    strcpy(tmp, "bool");
  } else if (dtype.code == kDLOpaqueHandle && dtype.bits == 0 && dtype.lanes == 0) {
    strcpy(tmp, "void");
  } else if (dtype.code == kDLOpaqueHandle && dtype.bits == 64 && dtype.lanes == 1) {
    strcpy(tmp, "handle");
  } else {
    if (dtype.code < sizeof(names) / sizeof(names[0]))
      len = (size_t)snprintf(tmp, sizeof(tmp), "%s%u", names[dtype.code], (unsigned)dtype.bits);
    else
      len = (size_t)snprintf(tmp, sizeof(tmp), "custom[%u]%u", (unsigned)dtype.code,
                             (unsigned)dtype.bits);
    if (dtype.lanes != 1) snprintf(tmp + len, sizeof(tmp) - len, "x%u", (unsigned)dtype.lanes);
  }
  len = strlen(tmp);
  if (!buf || len + 1 > buf_size)
    return mr_value_error("buffer of %zu bytes too small for dtype '%s'", buf_size,
                          tmp);
  memcpy(buf, tmp, len + 1);
  return 0;
}
