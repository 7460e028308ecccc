/* Data type strings: only the names TVM gives data types parse (each prefix with its own bit
 * widths, optional lanes); anything else fails with a message naming the string. */
#include "check.h"

static int parses(const char* text, uint8_t code, uint8_t bits, uint16_t lanes) {
  DLDataType t;
  if (mr_dtype_parse(text, &t) != 0) return 0;
  return t.code == code && t.bits == bits && t.lanes == lanes;
}

int main(void) {
  static const char* const bad[] = {
      "float33", "float8", "float128", "int3", "uint128", "bfloat32", "complex32", "handle32",
      "float032", "float32x", "float32x0", "float32x65536", "float32x04", "x4", "floatx",
      "bool8", "void32", "", "float32 ", "qint8", "int8x4x2",
  };
  DLDataType t;
  size_t i;
  CHECK(parses("float32", kDLFloat, 32, 1));
  CHECK(parses("float", kDLFloat, 32, 1));
  CHECK(parses("float16", kDLFloat, 16, 1));
  CHECK(parses("float64x2", kDLFloat, 64, 2));
  CHECK(parses("int", kDLInt, 32, 1));
  CHECK(parses("int8x16", kDLInt, 8, 16));
  CHECK(parses("int64", kDLInt, 64, 1));
  CHECK(parses("uint1", kDLUInt, 1, 1));
  CHECK(parses("uint4", kDLUInt, 4, 1));
  CHECK(parses("uint16", kDLUInt, 16, 1));
  CHECK(parses("bfloat16", kDLBfloat, 16, 1));
  CHECK(parses("bool", kDLBool, 8, 1));
  CHECK(parses("boolx4", kDLBool, 8, 4));
  CHECK(parses("handle", kDLOpaqueHandle, 64, 1));
  CHECK(parses("complex128", kDLComplex, 128, 1));
  CHECK(parses("float32x65535", kDLFloat, 32, 65535));
  CHECK_OK(mr_dtype_parse("void", &t));
  CHECK(t.code == kDLOpaqueHandle && t.bits == 0 && t.lanes == 0);
  for (i = 0; i < sizeof(bad) / sizeof(bad[0]); ++i) {
    char phrase[64];
    snprintf(phrase, sizeof(phrase), "cannot parse dtype '%s'", bad[i]);
    CHECK_FAIL(mr_dtype_parse(bad[i], &t), phrase);
    CHECK(mr_last_error_kind_id() == kMrErrorValue);
  }
  CHECK_FAIL(mr_dtype_parse(NULL, &t), "NULL");
  return CHECK_RESULT();
}
