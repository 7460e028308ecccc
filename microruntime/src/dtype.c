/* Data types: sizes, parsing ("float32x4", "bool", "handle") and formatting. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

#define MR_ERROR_FILE kMrFileDtype

size_t mr_dtype_bytes(DLDataType dtype) {
  return ((size_t)dtype.bits * (size_t)dtype.lanes + 7) / 8;
}

/* The names TVM gives data types, each with the bit widths it takes (0-terminated; the first
 * is what the bare name means): "float" is float32, "float33" is no data type. int1/uint1
 * (TVM's boolean of the loop IR) and int4/uint4 (packed quantized weights) are TVM's too. */
static const uint8_t k_int_bits[] = {32, 1, 4, 8, 16, 64, 0};
static const uint8_t k_float_bits[] = {32, 16, 64, 0};
static const uint8_t k_bfloat_bits[] = {16, 0};
static const uint8_t k_complex_bits[] = {64, 128, 0};

static const struct {
  const char* name;
  uint8_t code;
  const uint8_t* bits; /* allowed widths; NULL: the name takes no width (bool, handle) */
} k_codes[] = {
    {"bfloat", kDLBfloat, k_bfloat_bits}, {"bool", kDLBool, NULL},
    {"complex", kDLComplex, k_complex_bits}, {"float", kDLFloat, k_float_bits},
    {"handle", kDLOpaqueHandle, NULL},     {"uint", kDLUInt, k_int_bits},
    {"int", kDLInt, k_int_bits},
};

/* Parses a decimal number without a leading zero, of at most 5 digits; returns the chars
 * consumed (0: none, or not such a number). */
static int parse_num(const char* s, unsigned long* out) {
  int n = 0;
  unsigned long v = 0;
  *out = 0;
  if (s[0] == '0') return 0;
  while (s[n] >= '0' && s[n] <= '9') {
    if (n == 5) return 0;
    v = v * 10 + (unsigned long)(s[n++] - '0');
  }
  *out = v;
  return n;
}

static int bits_allowed(const uint8_t* allowed, unsigned long bits) {
  for (; *allowed; ++allowed)
    if (*allowed == bits) return 1;
  return 0;
}

static int parse_error(const char* text) {
  return MR_VALUE_ERROR("cannot parse dtype '%s' (expected int or uint of 1, 4, 8, 16, 32 or "
                        "64 bits, float16/32/64, bfloat16, complex64/128, bool or handle, "
                        "with lanes as in 'float32x4')", text);
}

int mr_dtype_parse(const char* text, DLDataType* out_dtype) {
  DLDataType t = {kDLOpaqueHandle, 0, 0};
  const char* s;
  size_t i;
  unsigned long bits, lanes = 1;
  int n;
  if (!text) return MR_VALUE_ERROR("dtype string is NULL");
  if (strcmp(text, "void") == 0) goto done;
  for (i = 0; i < sizeof(k_codes) / sizeof(k_codes[0]); ++i) {
    size_t len = strlen(k_codes[i].name);
    if (strncmp(text, k_codes[i].name, len) == 0) break;
  }
  if (i == sizeof(k_codes) / sizeof(k_codes[0])) return parse_error(text);
  s = text + strlen(k_codes[i].name);
  n = k_codes[i].bits ? parse_num(s, &bits) : 0;
  if (n != 0 && !bits_allowed(k_codes[i].bits, bits)) return parse_error(text);
  if (n == 0) bits = k_codes[i].bits ? k_codes[i].bits[0] : k_codes[i].code == kDLBool ? 8 : 64;
  s += n;
  if (*s == 'x') {
    n = parse_num(s + 1, &lanes);
    if (n == 0 || lanes > 65535) return parse_error(text);
    s += n + 1;
  }
  if (*s != '\0') return parse_error(text);
  t.code = k_codes[i].code;
  t.bits = (uint8_t)bits;
  t.lanes = (uint16_t)lanes;
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
    return MR_VALUE_ERROR("buffer of %zu bytes too small for dtype '%s'", buf_size,
                          tmp);
  memcpy(buf, tmp, len + 1);
  return 0;
}
