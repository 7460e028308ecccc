/* The graph executor's JSON reader: values and the steps between them, strings (escapes, \u,
 * surrogate pairs), integer limits, and errors with their offsets (trailing text, depth,
 * control characters, escapes, numbers, truncation). */
#include <stdlib.h>

#include "check.h"
#include "graph/json.h"

static int parse(const char* text, mr_json_t* doc) {
  return mr_json_parse(text, strlen(text), "test JSON", doc);
}

static int parse_only(const char* text) {
  mr_json_t doc;
  return parse(text, &doc);
}

/* The k-th item (from 0) of array v. */
static uint32_t item(const mr_json_t* doc, uint32_t v, int k) {
  uint32_t i = mr_json_first(doc, v);
  while (k-- > 0 && i) i = mr_json_next(doc, i);
  return i;
}

int main(void) {
  mr_json_t doc;
  char buf[64], deep[2 * MR_MAX_JSON_DEPTH + 3], phrase[64];
  int64_t v = 0;
  uint32_t a, s, k;
  size_t len;
  int i;

  CHECK_OK(parse(" {\"a\": [1, -2, 3.5e2, true, false, null], \"b\\u0063\": \"x\\ty\\u00e9\\ud83d\\ude00\"} ",
                 &doc));
  CHECK(doc.root == 2 && mr_json_type(&doc, doc.root) == MR_JSON_OBJECT);
  CHECK(mr_json_len(&doc, doc.root) == 2 && mr_json_next(&doc, doc.root) == 0);
  a = mr_json_get(&doc, doc.root, "a");
  CHECK(a && mr_json_type(&doc, a) == MR_JSON_ARRAY && mr_json_len(&doc, a) == 6);
  CHECK(mr_json_int(&doc, item(&doc, a, 0), &v) == 0 && v == 1);
  CHECK(mr_json_int(&doc, item(&doc, a, 1), &v) == 0 && v == -2);
  CHECK(mr_json_int(&doc, item(&doc, a, 2), &v) != 0); /* 3.5e2 is not an integer literal */
  CHECK(mr_json_len(&doc, item(&doc, a, 2)) == 5);
  CHECK(mr_json_type(&doc, item(&doc, a, 3)) == MR_JSON_TRUE);
  CHECK(mr_json_type(&doc, item(&doc, a, 4)) == MR_JSON_FALSE);
  CHECK(mr_json_type(&doc, item(&doc, a, 5)) == MR_JSON_NULL && !item(&doc, a, 6));
  /* Members: key, value, key, value. */
  k = mr_json_first(&doc, doc.root);
  CHECK(mr_json_str_eq(&doc, k, "a") && mr_json_next(&doc, k) == a);
  k = mr_json_next(&doc, a);
  CHECK(mr_json_str_eq(&doc, k, "bc") && mr_json_len(&doc, k) == 7);
  s = mr_json_get(&doc, doc.root, "bc"); /* the key is "b\u0063" */
  CHECK(s != 0 && s == mr_json_next(&doc, k) && mr_json_next(&doc, s) == 0);
  CHECK(mr_json_get(&doc, doc.root, "zz") == 0 && mr_json_get(&doc, 0, "a") == 0);
  CHECK_OK(mr_json_str(&doc, s, buf, sizeof(buf), &len));
  CHECK(len == 9 && memcmp(buf, "x\ty\xc3\xa9\xf0\x9f\x98\x80", 9) == 0);
  CHECK(mr_json_str_eq(&doc, s, "x\ty\xc3\xa9\xf0\x9f\x98\x80"));
  CHECK_FAIL(mr_json_str(&doc, s, buf, 5, &len), "longer than 4 bytes");
  CHECK(mr_json_get(&doc, a, "a") == 0); /* not an object */

  CHECK_OK(parse("[9223372036854775807, -9223372036854775808, 9223372036854775808]", &doc));
  CHECK(mr_json_int(&doc, item(&doc, doc.root, 0), &v) == 0 && v == INT64_MAX);
  CHECK(mr_json_int(&doc, item(&doc, doc.root, 1), &v) == 0 && v == INT64_MIN);
  CHECK(mr_json_int(&doc, item(&doc, doc.root, 2), &v) != 0);
  CHECK_OK(parse("[\"a\\u0000b\"]", &doc));
  CHECK_FAIL(mr_json_str(&doc, item(&doc, doc.root, 0), buf, sizeof(buf), &len), "holds a NUL");
  /* Empty containers, nesting, strings holding brackets and escaped quotes are stepped over. */
  CHECK_OK(parse("[[], {}, [[\"]\\\"[\"], {\"}\": 1}], 7]", &doc));
  CHECK(mr_json_len(&doc, doc.root) == 4 && mr_json_first(&doc, item(&doc, doc.root, 0)) == 0);
  CHECK(mr_json_first(&doc, item(&doc, doc.root, 1)) == 0);
  CHECK(mr_json_len(&doc, item(&doc, doc.root, 1)) == 0);
  CHECK(mr_json_int(&doc, item(&doc, doc.root, 3), &v) == 0 && v == 7);
  CHECK(mr_json_str(&doc, item(&doc, item(&doc, item(&doc, doc.root, 2), 0), 0), buf,
                    sizeof(buf), &len) == 0 && len == 3 && memcmp(buf, "]\"[", 3) == 0);
  CHECK_OK(parse("  12  ", &doc));
  CHECK(doc.root == 3 && mr_json_len(&doc, doc.root) == 2 && mr_json_next(&doc, doc.root) == 0);

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
  /* MR_MAX_JSON_DEPTH + 1 levels, then MR_MAX_JSON_DEPTH. */
  for (i = 0; i <= MR_MAX_JSON_DEPTH; ++i) deep[i] = '[', deep[MR_MAX_JSON_DEPTH + 1 + i] = ']';
  deep[2 * MR_MAX_JSON_DEPTH + 2] = '\0';
  snprintf(phrase, sizeof(phrase), "nesting too deep at offset %d", MR_MAX_JSON_DEPTH);
  CHECK_FAIL(parse_only(deep), phrase);
  CHECK_FAIL(parse_only(deep + 1), "trailing characters"); /* one ] too many */
  deep[2 * MR_MAX_JSON_DEPTH + 1] = '\0';
  CHECK_OK(parse_only(deep + 1));
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
