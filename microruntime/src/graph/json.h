/* A small strict JSON reader (RFC 8259) that allocates nothing: the whole text is
 * checked once, then read in place. A value is named by a handle, 1 + the offset of
 * its first character in the text (0 names no value), and reached from the root by
 * first/next steps, each a scan of the text it steps over. Depth and size are bounded
 * by config.h; an error is a ValueError naming what was read and the offset. */
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

typedef struct {
  const char* text; /* borrowed: it must outlive every use of the document */
  size_t size;
  const char* what; /* names the text in errors: "graph JSON" */
  uint32_t root;    /* the handle of the top-level value */
} mr_json_t;

/* Checks text[0..size) (one value, nothing after it but whitespace). The functions
 * below take handles of a document that passed; they do no checks of their own. */
int mr_json_parse(const char* text, size_t size, const char* what, mr_json_t* out);

mr_json_type_t mr_json_type(const mr_json_t* doc, uint32_t v);
/* Array: items; object: members; string: characters between the quotes, as written;
 * number or literal: characters. */
uint32_t mr_json_len(const mr_json_t* doc, uint32_t v);
/* The first item of an array, or the first key of an object; 0 when empty or neither
 * (or v is 0). */
uint32_t mr_json_first(const mr_json_t* doc, uint32_t v);
/* The value after v in its container: the next item of an array; in an object, a key's
 * value, and after a value the next key; 0 after the last (and after the root). */
uint32_t mr_json_next(const mr_json_t* doc, uint32_t v);

/* One pass over object obj: out[i] is the value of its first member keyed keys[i], or 0.
 * Returns the first key that is none of keys (0: none; also when obj is 0 or not an object,
 * which leaves every out[i] 0). */
uint32_t mr_json_fields(const mr_json_t* doc, uint32_t obj, const char* const* keys, int n,
                        uint32_t* out);
/* The value of `key` in object `obj`, or 0 (also when obj is 0 or not an object). */
uint32_t mr_json_get(const mr_json_t* doc, uint32_t obj, const char* key);
/* 1 when string value v equals s (escapes decoded). */
int mr_json_str_eq(const mr_json_t* doc, uint32_t v, const char* s);
/* Decodes string value v into buf (NUL-terminated); *out_len may be NULL. Fails
 * when it does not fit in cap bytes or contains a NUL. */
int mr_json_str(const mr_json_t* doc, uint32_t v, char* buf, size_t cap, size_t* out_len);
/* An integer number value (no fraction or exponent, fits in int64); -1 with no
 * error recorded otherwise. */
int mr_json_int(const mr_json_t* doc, uint32_t v, int64_t* out);

#endif /* MR_GRAPH_JSON_H_ */
