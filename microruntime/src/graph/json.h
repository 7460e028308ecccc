/* A small strict JSON reader (RFC 8259): the whole text is parsed once into a
 * flat array of values in document order, which point back into the text (no
 * copies of strings or numbers). Depth, size and value count are bounded by
 * config.h; an error is a ValueError naming what was read and the offset. */
#ifndef MR_GRAPH_JSON_H_
#define MR_GRAPH_JSON_H_

#include "../internal.h"

typedef enum {
  MR_JSON_NULL,
  MR_JSON_FALSE,
  MR_JSON_TRUE,
  MR_JSON_NUMBER,
  MR_JSON_STRING,
  MR_JSON_ARRAY,
  MR_JSON_OBJECT
} mr_json_type_t;

/* An array's items, or an object's keys and values alternating, follow it at
 * index + 1; `next` is the index just past its subtree (its next sibling). */
typedef struct {
  uint32_t start; /* offset in the text (a string: just after its opening quote) */
  uint32_t len;   /* string/number: characters; array: items; object: members */
  uint32_t next;
  uint8_t type;
  uint8_t escaped; /* a string with escapes */
} mr_json_value_t;

typedef struct {
  const char* text;
  size_t size;
  const char* what; /* names the text in errors: "graph JSON" */
  mr_json_value_t* v;
  size_t count, cap;
} mr_json_t;

/* Parses text[0..size); on failure nothing is left to free. */
int mr_json_parse(const char* text, size_t size, const char* what, mr_json_t* out);
void mr_json_free(mr_json_t* doc);

/* The value of `key` in object `obj`, or 0 (the root is never a member). */
uint32_t mr_json_get(const mr_json_t* doc, uint32_t obj, const char* key);
/* 1 when string value i equals s (escapes decoded). */
int mr_json_str_eq(const mr_json_t* doc, uint32_t i, const char* s);
/* Decodes string value i into buf (NUL-terminated); *out_len may be NULL. Fails
 * when it does not fit in cap bytes or contains a NUL. */
int mr_json_str(const mr_json_t* doc, uint32_t i, char* buf, size_t cap, size_t* out_len);
/* An integer number value (no fraction or exponent, fits in int64); -1 with no
 * error recorded otherwise. */
int mr_json_int(const mr_json_t* doc, uint32_t i, int64_t* out);

#endif /* MR_GRAPH_JSON_H_ */
