/* The strict JSON reader of json.h: recursive descent over the text, one
 * value record per JSON value. */
#include <stdlib.h>
#include <string.h>

#include "json.h"

typedef struct {
  mr_json_t* doc;
  size_t pos;
} parser_t;

static int fail(parser_t* p, const char* problem) {
  return mr_value_error("%s: %s at offset %zu", p->doc->what, problem, p->pos);
}

static void skip_ws(parser_t* p) {
  const char* t = p->doc->text;
  while (p->pos < p->doc->size &&
         (t[p->pos] == ' ' || t[p->pos] == '\t' || t[p->pos] == '\n' || t[p->pos] == '\r'))
    ++p->pos;
}

static int peek(const parser_t* p) {
  return p->pos < p->doc->size ? (unsigned char)p->doc->text[p->pos] : -1;
}

static int is_digit(int c) { return c >= '0' && c <= '9'; }

static int hex4(const char* s, unsigned* out) {
  unsigned v = 0;
  int i;
  for (i = 0; i < 4; ++i) {
    int c = (unsigned char)s[i], d;
    if (is_digit(c)) d = c - '0';
    else if (c >= 'a' && c <= 'f') d = c - 'a' + 10;
    else if (c >= 'A' && c <= 'F') d = c - 'A' + 10;
    else return -1;
    v = v * 16 + (unsigned)d;
  }
  *out = v;
  return 0;
}

/* Appends a value record; its index is returned through *out. */
static int push(parser_t* p, mr_json_type_t type, uint32_t* out) {
  mr_json_t* d = p->doc;
  if (d->count >= MR_MAX_JSON_VALUES) return fail(p, "too many values");
  if (mr_grow(&d->v, &d->cap, d->count, sizeof(*d->v), "JSON values") != 0) return -1;
  memset(&d->v[d->count], 0, sizeof(*d->v));
  d->v[d->count].type = (uint8_t)type;
  d->v[d->count].start = (uint32_t)p->pos;
  *out = (uint32_t)d->count++;
  return 0;
}

static int parse_string(parser_t* p) {
  const char* t = p->doc->text;
  size_t n = p->doc->size;
  uint32_t i;
  unsigned u, lo;
  ++p->pos; /* the opening quote */
  if (push(p, MR_JSON_STRING, &i) != 0) return -1;
  while (p->pos < n && t[p->pos] != '"') {
    unsigned char c = (unsigned char)t[p->pos];
    if (c < 0x20) return fail(p, "control character in a string");
    if (c != '\\') {
      ++p->pos;
      continue;
    }
    p->doc->v[i].escaped = 1;
    if (p->pos + 1 >= n) break;
    c = (unsigned char)t[p->pos + 1];
    if (c != 'u') {
      if (!strchr("\"\\/bfnrt", c) || c == 0) return fail(p, "invalid escape in a string");
      p->pos += 2;
      continue;
    }
    if (p->pos + 6 > n || hex4(t + p->pos + 2, &u) != 0) return fail(p, "invalid \\u escape");
    p->pos += 6;
    if (u >= 0xDC00 && u <= 0xDFFF) return fail(p, "unpaired surrogate in a string");
    if (u >= 0xD800 && u <= 0xDBFF &&
        (p->pos + 6 > n || t[p->pos] != '\\' || t[p->pos + 1] != 'u' ||
         hex4(t + p->pos + 2, &lo) != 0 || lo < 0xDC00 || lo > 0xDFFF))
      return fail(p, "unpaired surrogate in a string");
    if (u >= 0xD800 && u <= 0xDBFF) p->pos += 6;
  }
  if (p->pos >= n) return fail(p, "unterminated string");
  p->doc->v[i].len = (uint32_t)(p->pos - p->doc->v[i].start);
  ++p->pos;
  p->doc->v[i].next = (uint32_t)p->doc->count;
  return 0;
}

static int parse_number(parser_t* p) {
  uint32_t i;
  size_t digits;
  if (push(p, MR_JSON_NUMBER, &i) != 0) return -1;
  if (peek(p) == '-') ++p->pos;
  if (!is_digit(peek(p))) return fail(p, "invalid number");
  if (peek(p) == '0') ++p->pos;
  else while (is_digit(peek(p))) ++p->pos;
  if (peek(p) == '.') {
    ++p->pos;
    for (digits = 0; is_digit(peek(p)); ++digits) ++p->pos;
    if (!digits) return fail(p, "invalid number");
  }
  if (peek(p) == 'e' || peek(p) == 'E') {
    ++p->pos;
    if (peek(p) == '+' || peek(p) == '-') ++p->pos;
    for (digits = 0; is_digit(peek(p)); ++digits) ++p->pos;
    if (!digits) return fail(p, "invalid number");
  }
  p->doc->v[i].len = (uint32_t)(p->pos - p->doc->v[i].start);
  p->doc->v[i].next = (uint32_t)p->doc->count;
  return 0;
}

static int parse_literal(parser_t* p, const char* word, mr_json_type_t type) {
  size_t len = strlen(word);
  uint32_t i;
  if (p->doc->size - p->pos < len || memcmp(p->doc->text + p->pos, word, len) != 0)
    return fail(p, "unexpected character");
  if (push(p, type, &i) != 0) return -1;
  p->pos += len;
  p->doc->v[i].len = (uint32_t)len;
  p->doc->v[i].next = (uint32_t)p->doc->count;
  return 0;
}

static int parse_value(parser_t* p, int depth);

/* An array or an object (members: a string key, ':', a value). */
static int parse_container(parser_t* p, int depth, int object) {
  uint32_t i, n = 0;
  int close = object ? '}' : ']';
  if (depth >= MR_MAX_JSON_DEPTH) return fail(p, "nesting too deep");
  if (push(p, object ? MR_JSON_OBJECT : MR_JSON_ARRAY, &i) != 0) return -1;
  ++p->pos;
  skip_ws(p);
  if (peek(p) == close) {
    ++p->pos;
  } else {
    for (;;) {
      skip_ws(p);
      if (object) {
        if (peek(p) != '"') return fail(p, "expected a string key");
        if (parse_string(p) != 0) return -1;
        skip_ws(p);
        if (peek(p) != ':') return fail(p, "expected ':'");
        ++p->pos;
      }
      if (parse_value(p, depth + 1) != 0) return -1;
      ++n;
      skip_ws(p);
      if (peek(p) == close) {
        ++p->pos;
        break;
      }
      if (peek(p) != ',') return fail(p, object ? "expected ',' or '}'" : "expected ',' or ']'");
      ++p->pos;
    }
  }
  p->doc->v[i].len = n;
  p->doc->v[i].next = (uint32_t)p->doc->count;
  return 0;
}

static int parse_value(parser_t* p, int depth) {
  skip_ws(p);
  switch (peek(p)) {
    case '{': return parse_container(p, depth, 1);
    case '[': return parse_container(p, depth, 0);
    case '"': return parse_string(p);
    case 't': return parse_literal(p, "true", MR_JSON_TRUE);
    case 'f': return parse_literal(p, "false", MR_JSON_FALSE);
    case 'n': return parse_literal(p, "null", MR_JSON_NULL);
    case -1: return fail(p, "unexpected end of text");
    default:
      if (peek(p) == '-' || is_digit(peek(p))) return parse_number(p);
      return fail(p, "unexpected character");
  }
}

int mr_json_parse(const char* text, size_t size, const char* what, mr_json_t* out) {
  parser_t p;
  mr_json_t doc;
  memset(&doc, 0, sizeof(doc));
  doc.text = text;
  doc.size = size;
  doc.what = what;
  p.doc = &doc;
  p.pos = 0;
  if (!text && size) return mr_value_error("%s: text is NULL", what);
  if (size > MR_MAX_GRAPH_JSON || size > UINT32_MAX)
    return mr_value_error("%s: %zu bytes is more than the limit of %zu", what, size,
                          (size_t)MR_MAX_GRAPH_JSON);
  if (parse_value(&p, 0) != 0) goto fail;
  skip_ws(&p);
  if (p.pos != size) {
    fail(&p, "trailing characters after the value");
    goto fail;
  }
  *out = doc;
  return 0;
fail:
  free(doc.v);
  return -1;
}

void mr_json_free(mr_json_t* doc) {
  free(doc->v);
  doc->v = NULL;
  doc->count = doc->cap = 0;
}

/* Decodes string i into buf when buf is not NULL; *out_len is the decoded length.
 * Fails (without recording an error) past cap bytes or on a NUL. */
static int decode(const mr_json_t* doc, uint32_t i, char* buf, size_t cap, size_t* out_len) {
  const mr_json_value_t* v = &doc->v[i];
  const char* s = doc->text + v->start;
  size_t k = 0, n = 0, m, j;
  unsigned char tmp[4];
  while (k < v->len) {
    unsigned cp, lo;
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

int mr_json_str(const mr_json_t* doc, uint32_t i, char* buf, size_t cap, size_t* out_len) {
  size_t n;
  if (doc->v[i].type != MR_JSON_STRING) return mr_value_error("%s: expected a string", doc->what);
  if (decode(doc, i, buf, cap, &n) != 0)
    return mr_value_error("%s: string at offset %u is longer than %zu bytes or holds a NUL",
                          doc->what, (unsigned)doc->v[i].start, cap ? cap - 1 : 0);
  if (out_len) *out_len = n;
  return 0;
}

int mr_json_str_eq(const mr_json_t* doc, uint32_t i, const char* s) {
  char buf[MR_MAX_NAME];
  size_t n = strlen(s), len;
  const mr_json_value_t* v = &doc->v[i];
  if (v->type != MR_JSON_STRING) return 0;
  if (!v->escaped) return v->len == n && memcmp(doc->text + v->start, s, n) == 0;
  return decode(doc, i, buf, sizeof(buf), &len) == 0 && len == n && memcmp(buf, s, n) == 0;
}

uint32_t mr_json_get(const mr_json_t* doc, uint32_t obj, const char* key) {
  uint32_t k, j;
  if (doc->v[obj].type != MR_JSON_OBJECT) return 0;
  for (j = 0, k = obj + 1; j < doc->v[obj].len; ++j, k = doc->v[k + 1].next)
    if (mr_json_str_eq(doc, k, key)) return k + 1;
  return 0;
}

int mr_json_int(const mr_json_t* doc, uint32_t i, int64_t* out) {
  const mr_json_value_t* v = &doc->v[i];
  const char* s = doc->text + v->start;
  uint64_t x = 0, limit;
  uint32_t k = 0;
  int neg = 0;
  if (v->type != MR_JSON_NUMBER) return -1;
  if (s[0] == '-') neg = 1, k = 1;
  limit = neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
  for (; k < v->len; ++k) {
    if (!is_digit(s[k]) || x > (limit - (uint64_t)(s[k] - '0')) / 10) return -1;
    x = x * 10 + (uint64_t)(s[k] - '0');
  }
  *out = neg ? (int64_t)(0 - x) : (int64_t)x;
  return 0;
}
