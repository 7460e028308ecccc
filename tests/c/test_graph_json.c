/* The graph executor's JSON reader: values, strings (escapes, \u, surrogate pairs), integer
 * limits, and errors with their offsets (trailing text, depth, control characters, escapes,
 * numbers, truncation). */
#include <stdlib.h>

#include "check.h"
#include "graph/json.h"

static int parse(const char* text, mr_json_t* doc) {
  return mr_json_parse(text, strlen(text), "test JSON", doc);
}

static int parse_only(const char* text) {
  mr_json_t doc;
  if (parse(text, &doc) != 0) return -1;
  mr_json_free(&doc);
  return 0;
}

int main(void) {
  mr_json_t doc;
  char buf[64], deep[80];
  int64_t v = 0;
  uint32_t a, s;
  size_t len;
  int i;

  CHECK_OK(parse(" {\"a\": [1, -2, 3.5e2, true, false, null], \"b\\u0063\": \"x\\ty\\u00e9\\ud83d\\ude00\"} ",
                 &doc));
  CHECK(doc.v[0].type == MR_JSON_OBJECT && doc.v[0].len == 2);
  a = mr_json_get(&doc, 0, "a");
  CHECK(a && doc.v[a].type == MR_JSON_ARRAY && doc.v[a].len == 6);
  CHECK(mr_json_int(&doc, a + 1, &v) == 0 && v == 1);
  CHECK(mr_json_int(&doc, a + 2, &v) == 0 && v == -2);
  CHECK(mr_json_int(&doc, a + 3, &v) != 0); /* 3.5e2 is not an integer literal */
  CHECK(doc.v[a + 4].type == MR_JSON_TRUE && doc.v[a + 6].type == MR_JSON_NULL);
  s = mr_json_get(&doc, 0, "bc"); /* the key is "b\u0063" */
  CHECK(s != 0 && mr_json_get(&doc, 0, "zz") == 0);
  CHECK_OK(mr_json_str(&doc, s, buf, sizeof(buf), &len));
  CHECK(len == 9 && memcmp(buf, "x\ty\xc3\xa9\xf0\x9f\x98\x80", 9) == 0);
  CHECK(mr_json_str_eq(&doc, s, "x\ty\xc3\xa9\xf0\x9f\x98\x80"));
  CHECK_FAIL(mr_json_str(&doc, s, buf, 5, &len), "longer than 4 bytes");
  CHECK(mr_json_get(&doc, a, "a") == 0); /* not an object */
  mr_json_free(&doc);

  CHECK_OK(parse("[9223372036854775807, -9223372036854775808, 9223372036854775808]", &doc));
  CHECK(mr_json_int(&doc, 1, &v) == 0 && v == INT64_MAX);
  CHECK(mr_json_int(&doc, 2, &v) == 0 && v == INT64_MIN);
  CHECK(mr_json_int(&doc, 3, &v) != 0);
  mr_json_free(&doc);
  CHECK_OK(parse("[\"a\\u0000b\"]", &doc));
  CHECK_FAIL(mr_json_str(&doc, 1, buf, sizeof(buf), &len), "holds a NUL");
  mr_json_free(&doc);

  CHECK_FAIL(parse_only(""), "test JSON: unexpected end of text at offset 0");
  CHECK_FAIL(parse_only("[1] x"), "trailing characters after the value at offset 4");
  CHECK_FAIL(parse_only("[1,]"), "unexpected character at offset 3");
  CHECK_FAIL(parse_only("{\"a\" 1}"), "expected ':' at offset 5");
  CHECK_FAIL(parse_only("{1: 2}"), "expected a string key at offset 1");
  CHECK_FAIL(parse_only("[1 2]"), "expected ',' or ']' at offset 3");
  CHECK_FAIL(parse_only("\"a\nb\""), "control character in a string at offset 2");
  CHECK_FAIL(parse_only("\"\\x\""), "invalid escape in a string at offset 1");
  CHECK_FAIL(parse_only("\"\\u12g4\""), "invalid \\u escape");
  CHECK_FAIL(parse_only("\"\\udc00\""), "unpaired surrogate");
  CHECK_FAIL(parse_only("\"\\ud800x\""), "unpaired surrogate");
  CHECK_FAIL(parse_only("\"abc"), "unterminated string");
  CHECK_FAIL(parse_only("01"), "trailing characters");
  CHECK_FAIL(parse_only("-"), "invalid number at offset 1");
  CHECK_FAIL(parse_only("1."), "invalid number at offset 2");
  CHECK_FAIL(parse_only("1e+"), "invalid number at offset 3");
  CHECK_FAIL(parse_only("tru"), "unexpected character at offset 0");
  for (i = 0; i < 33; ++i) deep[i] = '[', deep[33 + i] = ']';
  deep[66] = '\0';
  CHECK_FAIL(parse_only(deep), "nesting too deep at offset 32");
  CHECK_FAIL(parse_only(deep + 1), "trailing characters"); /* one ] too many */
  deep[65] = '\0';
  CHECK_OK(parse_only(deep + 1)); /* 32 levels */
  /* Every prefix of a valid document fails cleanly (no over-read under ASan). */
  {
    const char* text = "{\"k\": [1, \"\\u00e9\", {\"n\": null}], \"t\": true}";
    size_t n = strlen(text), k;
    for (k = 0; k < n; ++k) {
      char* copy = (char*)malloc(k + 1);
      memcpy(copy, text, k);
      CHECK(mr_json_parse(copy, k, "prefix", &doc) != 0);
      free(copy);
    }
  }
  return CHECK_RESULT();
}
