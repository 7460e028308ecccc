/* The strict JSON reader of json.h: a recursive-descent check of the whole text, then
 * steps over the checked text (which needs no checks: every string is closed, every
 * bracket matched). */
#include <string.h>

#include "json.h"

#define MR_ERROR_FILE kMrFileGraphJson

typedef struct {
  const mr_json_t* doc;
  size_t pos;
} parser_t;

/* ValueError "<what>: <problem> at offset <pos>". */
#ifdef MR_CONFIG_SMALL
#define FAIL(p, problem) ((void)sizeof(p), MR_VALUE_ERROR("%s", problem))
#else
#define FAIL(p, problem) fail((p), (problem))
static int fail(parser_t* p, const char* problem) {
  return mr_value_error("%s: %s at offset %zu", p->doc->what, problem, p->pos);
}
#endif

static int is_ws(int c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

static size_t skip_ws(const mr_json_t* d, size_t pos) {
  while (pos < d->size && is_ws(d->text[pos])) ++pos;
  return pos;
}

static int peek(const parser_t* p) {
  return p->pos < p->doc->size ? (unsigned char)p->doc->text[p->pos] : -1;
}

static int is_digit(int c) { return c >= '0' && c <= '9'; }

static int hex4(const char* s, unsigned* out) {
  unsigned v = 0;
  int i;
  for (i = 0; i < 4; ++i) {
    int c = (unsigned char)s[i] | 0x20, d; /* lower case */
    if (is_digit(s[i])) d = s[i] - '0';
    else if (c >= 'a' && c <= 'f') d = c - 'a' + 10;
    else return -1;
    v = v * 16 + (unsigned)d;
  }
  *out = v;
  return 0;
}

static int parse_string(parser_t* p) {
  const char* t = p->doc->text;
  size_t n = p->doc->size;
  unsigned u, lo;
  ++p->pos; /* the opening quote */
  while (p->pos < n && t[p->pos] != '"') {
    unsigned char c = (unsigned char)t[p->pos];
    if (c < 0x20) return FAIL(p, "control character in a string");
    if (c != '\\') {
      ++p->pos;
      continue;
    }
    if (p->pos + 1 >= n) break;
    c = (unsigned char)t[p->pos + 1];
    if (c != 'u') {
      if (!strchr("\"\\/bfnrt", c) || c == 0) return FAIL(p, "invalid escape in a string");
      p->pos += 2;
      continue;
    }
    if (p->pos + 6 > n || hex4(t + p->pos + 2, &u) != 0) return FAIL(p, "invalid \\u escape");
    p->pos += 6;
    if (u >= 0xDC00 && u <= 0xDFFF) return FAIL(p, "unpaired surrogate in a string");
    if (u >= 0xD800 && u <= 0xDBFF &&
        (p->pos + 6 > n || t[p->pos] != '\\' || t[p->pos + 1] != 'u' ||
         hex4(t + p->pos + 2, &lo) != 0 || lo < 0xDC00 || lo > 0xDFFF))
      return FAIL(p, "unpaired surrogate in a string");
    if (u >= 0xD800 && u <= 0xDBFF) p->pos += 6;
  }
  if (p->pos >= n) return FAIL(p, "unterminated string");
  ++p->pos;
  return 0;
}

/* Digits from p->pos; fails when there are none and `required`. */
static int digits(parser_t* p, int required) {
  size_t from = p->pos;
  while (is_digit(peek(p))) ++p->pos;
  return required && p->pos == from ? FAIL(p, "invalid number") : 0;
}

static int parse_number(parser_t* p) {
  if (peek(p) == '-') ++p->pos;
  if (peek(p) == '0') ++p->pos;
  else if (digits(p, 1) != 0) return -1;
  if (peek(p) == '.') {
    ++p->pos;
    if (digits(p, 1) != 0) return -1;
  }
  if (peek(p) == 'e' || peek(p) == 'E') {
    ++p->pos;
    if (peek(p) == '+' || peek(p) == '-') ++p->pos;
    if (digits(p, 1) != 0) return -1;
  }
  return 0;
}

static int parse_literal(parser_t* p, const char* word) {
  size_t len = strlen(word);
  if (p->doc->size - p->pos < len || memcmp(p->doc->text + p->pos, word, len) != 0)
    return FAIL(p, "unexpected character");
  p->pos += len;
  return 0;
}

static int parse_value(parser_t* p, int depth);

/* An array or an object (members: a string key, ':', a value). */
static int parse_container(parser_t* p, int depth, int object) {
  int close = object ? '}' : ']';
  if (depth >= MR_MAX_JSON_DEPTH) return FAIL(p, "nesting too deep");
  p->pos = skip_ws(p->doc, p->pos + 1);
  if (peek(p) == close) {
    ++p->pos;
    return 0;
  }
  for (;;) {
    p->pos = skip_ws(p->doc, p->pos);
    if (object) {
      if (peek(p) != '"') return FAIL(p, "expected a string key");
      if (parse_string(p) != 0) return -1;
      p->pos = skip_ws(p->doc, p->pos);
      if (peek(p) != ':') return FAIL(p, "expected ':'");
      ++p->pos;
    }
    if (parse_value(p, depth + 1) != 0) return -1;
    p->pos = skip_ws(p->doc, p->pos);
    if (peek(p) == close) {
      ++p->pos;
      return 0;
    }
    if (peek(p) != ',') return FAIL(p, object ? "expected ',' or '}'" : "expected ',' or ']'");
    ++p->pos;
  }
}

static int parse_value(parser_t* p, int depth) {
  p->pos = skip_ws(p->doc, p->pos);
  switch (peek(p)) {
    case '{': return parse_container(p, depth, 1);
    case '[': return parse_container(p, depth, 0);
    case '"': return parse_string(p);
    case 't': return parse_literal(p, "true");
    case 'f': return parse_literal(p, "false");
    case 'n': return parse_literal(p, "null");
    case -1: return FAIL(p, "unexpected end of text");
    default:
      if (peek(p) == '-' || is_digit(peek(p))) return parse_number(p);
      return FAIL(p, "unexpected character");
  }
}

int mr_json_parse(const char* text, size_t size, const char* what, mr_json_t* out) {
  parser_t p;
  mr_json_t doc;
  doc.text = text;
  doc.size = size;
  doc.what = what;
  p.doc = &doc;
  p.pos = 0;
  if (!text && size) return MR_VALUE_ERROR("%s: text is NULL", what);
  if (size > MR_MAX_GRAPH_JSON || size >= UINT32_MAX)
    return MR_VALUE_ERROR("%s: %zu bytes is more than the limit of %zu", what, size,
                          (size_t)MR_MAX_GRAPH_JSON);
  if (parse_value(&p, 0) != 0) return -1;
  p.pos = skip_ws(&doc, p.pos);
  if (p.pos != size) return FAIL(&p, "trailing characters after the value");
  doc.root = (uint32_t)skip_ws(&doc, 0) + 1;
  *out = doc;
  return 0;
}

/* ---- reading the checked text ---- */
/* Characters of a number or literal. */
static int in_scalar(int c) {
  return is_digit(c) || (c >= 'a' && c <= 'z') || c == 'E' || c == '-' || c == '+' || c == '.';
}

/* The offset just past the value at offset pos. */
static size_t skip_value(const mr_json_t* d, size_t pos) {
  const char* t = d->text;
  int depth = 0;
  do {
    char c = t[pos++];
    if (c == '"') {
      while (t[pos] != '"') pos += t[pos] == '\\' ? 2 : 1;
      ++pos;
    } else if (c == '[' || c == '{') {
      ++depth;
    } else if (c == ']' || c == '}') {
      --depth;
    } else if (!depth) {
      while (pos < d->size && in_scalar(t[pos])) ++pos;
    }
  } while (depth);
  return pos;
}

mr_json_type_t mr_json_type(const mr_json_t* doc, uint32_t v) {
  switch (doc->text[v - 1]) {
    case '{': return MR_JSON_OBJECT;
    case '[': return MR_JSON_ARRAY;
    case '"': return MR_JSON_STRING;
    case 't': return MR_JSON_TRUE;
    case 'f': return MR_JSON_FALSE;
    case 'n': return MR_JSON_NULL;
    default: return MR_JSON_NUMBER;
  }
}

uint32_t mr_json_first(const mr_json_t* doc, uint32_t v) {
  size_t pos;
  if (!v || mr_json_type(doc, v) < MR_JSON_ARRAY) return 0;
  pos = skip_ws(doc, v);
  return doc->text[pos] == ']' || doc->text[pos] == '}' ? 0 : (uint32_t)pos + 1;
}

uint32_t mr_json_next(const mr_json_t* doc, uint32_t v) {
  size_t pos = skip_ws(doc, skip_value(doc, v - 1));
  if (pos >= doc->size || (doc->text[pos] != ',' && doc->text[pos] != ':')) return 0;
  return (uint32_t)skip_ws(doc, pos + 1) + 1;
}

uint32_t mr_json_len(const mr_json_t* doc, uint32_t v) {
  mr_json_type_t type = mr_json_type(doc, v);
  uint32_t n = 0, k;
  if (type < MR_JSON_STRING) return (uint32_t)(skip_value(doc, v - 1) - (v - 1));
  if (type == MR_JSON_STRING) return (uint32_t)(skip_value(doc, v - 1) - v - 1);
  for (k = mr_json_first(doc, v); k; k = mr_json_next(doc, k)) ++n;
  return type == MR_JSON_OBJECT ? n / 2 : n;
}

/* Decodes string v into buf when buf is not NULL; *out_len is the decoded length.
 * Fails (without recording an error) past cap bytes or on a NUL. */
static int decode(const mr_json_t* doc, uint32_t v, char* buf, size_t cap, size_t* out_len) {
  const char* s = doc->text + v;
  size_t k = 0, n = 0, m, j;
  unsigned char tmp[4];
  while (s[k] != '"') {
    unsigned cp = 0, lo = 0;
    unsigned char c = (unsigned char)s[k];
    if (c != '\\') {
      tmp[0] = c;
      m = 1;
      ++k;
    } else if (s[k + 1] != 'u') {
      static const char from[] = "\"\\/bfnrt", to[] = "\"\\/\b\f\n\r\t";
      tmp[0] = (unsigned char)to[strchr(from, s[k + 1]) - from];
      m = 1;
      k += 2;
    } else {
      (void)hex4(s + k + 2, &cp);
      k += 6;
      if (cp >= 0xD800 && cp <= 0xDBFF) {
        (void)hex4(s + k + 2, &lo);
        cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
        k += 6;
      }
      if (cp == 0) return -1;
      /* UTF-8: m bytes, continuation bytes from the last; a lead byte of m - 1 ones. */
      m = cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4;
      for (j = m - 1; j > 0; --j, cp >>= 6) tmp[j] = (unsigned char)(0x80 | (cp & 0x3F));
      tmp[0] = (unsigned char)(m == 1 ? cp : (0xF00u >> m) | cp);
    }
    if (tmp[0] == 0 || n + m >= cap) return -1;
    if (buf) memcpy(buf + n, tmp, m);
    n += m;
  }
  if (buf) buf[n] = '\0';
  *out_len = n;
  return 0;
}

int mr_json_str(const mr_json_t* doc, uint32_t v, char* buf, size_t cap, size_t* out_len) {
  size_t n;
  if (mr_json_type(doc, v) != MR_JSON_STRING)
    return MR_VALUE_ERROR("%s: expected a string", doc->what);
  if (decode(doc, v, buf, cap, &n) != 0)
    return MR_VALUE_ERROR("%s: string at offset %u is longer than %zu bytes or holds a NUL",
                          doc->what, (unsigned)v, cap ? cap - 1 : 0);
  if (out_len) *out_len = n;
  return 0;
}

int mr_json_str_eq(const mr_json_t* doc, uint32_t v, const char* s) {
  char buf[MR_MAX_NAME];
  size_t n = strlen(s), len = 0;
  const char* raw = doc->text + v;
  if (mr_json_type(doc, v) != MR_JSON_STRING) return 0;
  while (raw[len] != '"' && raw[len] != '\\') ++len;
  if (raw[len] == '"') return len == n && memcmp(raw, s, n) == 0; /* no escapes */
  return decode(doc, v, buf, sizeof(buf), &len) == 0 && len == n && memcmp(buf, s, n) == 0;
}

uint32_t mr_json_fields(const mr_json_t* doc, uint32_t obj, const char* const* keys, int n,
                        uint32_t* out) {
  uint32_t k, v, unknown = 0;
  int i;
  memset(out, 0, (size_t)n * sizeof(*out));
  if (!obj || mr_json_type(doc, obj) != MR_JSON_OBJECT) return 0;
  for (k = mr_json_first(doc, obj); k; k = mr_json_next(doc, v)) {
    v = mr_json_next(doc, k);
    for (i = 0; i < n && !mr_json_str_eq(doc, k, keys[i]); ++i) continue;
    if (i == n && !unknown) unknown = k;
    if (i < n && !out[i]) out[i] = v;
  }
  return unknown;
}

uint32_t mr_json_get(const mr_json_t* doc, uint32_t obj, const char* key) {
  uint32_t v;
  (void)mr_json_fields(doc, obj, &key, 1, &v);
  return v;
}

int mr_json_int(const mr_json_t* doc, uint32_t v, int64_t* out) {
  const char* s = doc->text + v - 1;
  uint64_t x = 0, limit;
  uint32_t k = 0, len;
  int neg = 0;
  if (mr_json_type(doc, v) != MR_JSON_NUMBER) return -1;
  len = mr_json_len(doc, v);
  if (s[0] == '-') neg = 1, k = 1;
  limit = neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
  for (; k < len; ++k) {
    if (!is_digit(s[k]) || x > (limit - (uint64_t)(s[k] - '0')) / 10) return -1;
    x = x * 10 + (uint64_t)(s[k] - '0');
  }
  *out = neg ? (int64_t)(0 - x) : (int64_t)x;
  return 0;
}
