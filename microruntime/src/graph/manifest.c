/* Checking a model's manifest against its graph: the compiler writes
 *   {"format": "kiln.manifest", "version": 1,
 *    "inputs": [{"name", "shape", "dtype"}], "outputs": [{"shape", "dtype"}],
 *    "params": [names], "storage_bytes": [bytes per slot], "total_bytes": N,
 *    "kernels": [function names], optionally "linked_params": [names],
 *    "crc32c": {"graph_json": N, "params": N}}
 * and the runtime recomputes each from the graph; the first difference is an
 * error naming it. "linked_params" names the inputs whose data the kernel library
 * holds as constant data (linked_params.c): each an input of the graph, once, and
 * not in the payload's params; they are neither inputs nor params of the manifest. Whether the kernels resolve is checked with the imports
 * (mr_graph_factory_check). "crc32c" holds the CRC-32C of the payload's graph JSON
 * and of its params (the bytes from the param count to the end of the last tensor
 * record), checked before anything is built from them; a manifest without it (an
 * older export) is not checked, nor is any when checksums are off (crc32c.c). */
#include <stdio.h>
#include <string.h>

#include "graph.h"
#include "json.h"

#define MR_ERROR_FILE kMrFileGraphManifest

typedef struct {
  mr_json_t doc;
  const mr_graph_t* g;
  uint8_t* linked; /* per input: linked into the library */
} ctx_t;

static uint32_t len(const ctx_t* c, uint32_t v) { return mr_json_len(&c->doc, v); }
static uint32_t first(const ctx_t* c, uint32_t v) { return mr_json_first(&c->doc, v); }
static uint32_t next(const ctx_t* c, uint32_t v) { return mr_json_next(&c->doc, v); }

/* The top-level list `key`, or 0. */
static uint32_t list(const ctx_t* c, const char* key) {
  uint32_t i = mr_json_get(&c->doc, c->doc.root, key);
  return i && mr_json_type(&c->doc, i) == MR_JSON_ARRAY ? i : 0;
}

static int has_name(TVMFFIObject* names, const char* name) {
  const TVMFFISeqCell* s = mr_array_view(names);
  int64_t i;
  for (i = 0; i < s->size; ++i)
    if (strcmp(mr_bytes_view(((TVMFFIAny*)s->data)[i].v_obj)->data, name) == 0) return 1;
  return 0;
}

/* Manifest item `it` ({shape, dtype}) describes entry eid. */
static int same_tensor(const ctx_t* c, uint32_t it, uint32_t eid, char* got, size_t cap) {
  const mr_graph_entry_t* e = &c->g->entries[eid];
  uint32_t shape = mr_json_get(&c->doc, it, "shape"), dtype = mr_json_get(&c->doc, it, "dtype");
  int64_t dims[MR_MAX_NDIM];
  DLDataType t = {0, 0, 0};
  char text[32];
  uint32_t d = 0, k, ndim = shape && mr_json_type(&c->doc, shape) == MR_JSON_ARRAY
                                ? len(c, shape) : MR_MAX_NDIM + 1;
  int ok = ndim <= MR_MAX_NDIM && dtype &&
           mr_json_str(&c->doc, dtype, text, sizeof(text), NULL) == 0 &&
           mr_dtype_parse(text, &t) == 0;
  mr_error_clear();
  for (k = ok ? first(c, shape) : 0; ok && k; ++d, k = next(c, k))
    ok = mr_json_int(&c->doc, k, &dims[d]) == 0;
#ifdef MR_CONFIG_SMALL /* `got` is for the message only */
  (void)got;
  (void)cap;
  if (!ok) return 0;
#else
  if (!ok) {
    snprintf(got, cap, "a malformed shape or dtype");
    return 0;
  }
  mr_graph_describe(dims, (int32_t)ndim, t, got, cap);
#endif
  if ((int32_t)ndim != e->ndim || t.code != e->dtype.code || t.bits != e->dtype.bits ||
      t.lanes != e->dtype.lanes)
    return 0;
  for (d = 0; d < ndim; ++d)
    if (dims[d] != c->g->shapes[e->shape_at + d]) return 0;
  return 1;
}

/* TENSOR_FAIL: "manifest: <what> is <got> in the manifest but <entry's> in the graph";
 * COUNTS_FAIL: "manifest: lists <listed> <what>, the graph has <actual>". */
#ifdef MR_CONFIG_SMALL
#define TENSOR_FAIL(c, what, eid, got) \
  MR_GRAPH_FAIL("%p %s %u %s", (const void*)(c), what, (unsigned)(eid), got)
#define COUNTS_FAIL(listed, what, actual) \
  MR_GRAPH_FAIL("%u %s %u", (unsigned)(listed), what, (unsigned)(actual))
#else
#define TENSOR_FAIL tensor_fail
#define COUNTS_FAIL counts_fail
static int tensor_fail(const ctx_t* c, const char* what, uint32_t eid, const char* got) {
  const mr_graph_entry_t* e = &c->g->entries[eid];
  char want[256];
  mr_graph_describe(c->g->shapes + e->shape_at, e->ndim, e->dtype, want, sizeof(want));
  return MR_GRAPH_FAIL("manifest: %s is %s in the manifest but %s in the graph", what, got, want);
}

static int counts_fail(uint32_t listed, const char* what, uint32_t actual) {
  return MR_GRAPH_FAIL("manifest: lists %u %s, the graph has %u", (unsigned)listed, what,
                       (unsigned)actual);
}
#endif

static int check_io(const ctx_t* c, TVMFFIObject* params) {
  const mr_graph_t* g = c->g;
  uint32_t in = list(c, "inputs"), out = list(c, "outputs"), i, k, n = 0, n_in, n_out;
  char got[256], what[MR_MAX_NAME + 32];
  if (!in || !out) return MR_GRAPH_FAIL("manifest: 'inputs' and 'outputs' must be lists");
  n_in = len(c, in);
  n_out = len(c, out);
  for (i = 0, k = first(c, in); i < g->num_args; ++i) {
    const char* name = g->nodes[g->args[i]].name;
    uint32_t key;
    if (has_name(params, name) || c->linked[i]) continue;
    if (n++ >= n_in)
      return MR_GRAPH_FAIL("manifest: lists %u inputs, the graph has more (input '%s')",
                           (unsigned)n_in, name);
    key = mr_json_get(&c->doc, k, "name");
    if (!key || !mr_json_str_eq(&c->doc, key, name))
      return MR_GRAPH_FAIL("manifest: input %u is not named '%s' as in the graph",
                           (unsigned)n - 1, name);
    if (!same_tensor(c, k, mr_graph_arg_entry(g, i), got, sizeof(got)))
      return TENSOR_FAIL(c, MR_MESSAGE_TEXT(what, "input '%s'", name), mr_graph_arg_entry(g, i),
                         got);
    k = next(c, k);
  }
  if (n != n_in) return COUNTS_FAIL(n_in, "inputs", n);
  if (n_out != g->num_heads) return COUNTS_FAIL(n_out, "outputs", g->num_heads);
  for (i = 0, k = first(c, out); i < g->num_heads; ++i, k = next(c, k)) {
    if (!same_tensor(c, k, g->heads[i], got, sizeof(got)))
      return TENSOR_FAIL(c, MR_MESSAGE_TEXT(what, "output %u", (unsigned)i), g->heads[i], got);
  }
  return 0;
}

static int check_storage(const ctx_t* c) {
  const mr_graph_t* g = c->g;
  uint32_t sb = list(c, "storage_bytes"), tb = mr_json_get(&c->doc, c->doc.root, "total_bytes");
  uint32_t i, k;
  uint64_t total = 0;
  int64_t v;
  if (!sb || len(c, sb) != g->num_storage)
    return MR_GRAPH_FAIL("manifest: 'storage_bytes' must list %u slots, as the graph plans",
                         (unsigned)g->num_storage);
  for (i = 0, k = first(c, sb); i < g->num_storage; ++i, k = next(c, k)) {
    if (mr_json_int(&c->doc, k, &v) != 0 || (uint64_t)v != g->storage_bytes[i])
      return MR_GRAPH_FAIL("manifest: storage slot %u is %.*s bytes in the manifest but %llu "
                           "in the graph", (unsigned)i, (int)(len(c, k) < 40 ? len(c, k) : 40),
                           c->doc.text + k - 1,
                           (unsigned long long)g->storage_bytes[i]);
    total += g->storage_bytes[i];
  }
  if (!tb || mr_json_int(&c->doc, tb, &v) != 0 || (uint64_t)v != total)
    return MR_GRAPH_FAIL("manifest: 'total_bytes' is not %llu, the graph's total",
                         (unsigned long long)total);
  return 0;
}

/* Manifest kernels and params are the graph's functions and the payload's params. */
static int check_names(const ctx_t* c, TVMFFIObject* params) {
  const mr_graph_t* g = c->g;
  uint32_t kl = list(c, "kernels"), pl = list(c, "params"), j, k, n_params;
  char name[MR_MAX_NAME];
  if (!kl || !pl) return MR_GRAPH_FAIL("manifest: 'kernels' and 'params' must be lists");
  for (k = first(c, kl); k; k = next(c, k)) {
    if (mr_json_str(&c->doc, k, name, sizeof(name), NULL) != 0) return MR_GRAPH_REFAIL("manifest");
    for (j = 0; j < g->num_nodes; ++j)
      if (g->nodes[j].func_name && strcmp(g->nodes[j].func_name, name) == 0) break;
    if (j == g->num_nodes)
      return MR_GRAPH_FAIL("manifest: kernel '%s' is not called by the graph", name);
  }
  for (j = 0; j < g->num_nodes; ++j) {
    const char* fn = g->nodes[j].func_name;
    if (g->nodes[j].kind != MR_GRAPH_OP_CALL) continue;
    for (k = first(c, kl); k && !mr_json_str_eq(&c->doc, k, fn);) k = next(c, k);
    if (!k)
      return MR_GRAPH_FAIL("manifest: the graph calls '%s', which 'kernels' does not list", fn);
  }
  if ((int64_t)(n_params = len(c, pl)) != mr_array_view(params)->size)
    return MR_GRAPH_FAIL("manifest: lists %u params, the model holds %lld", (unsigned)n_params,
                         (long long)mr_array_view(params)->size);
  for (k = first(c, pl); k; k = next(c, k)) {
    if (mr_json_str(&c->doc, k, name, sizeof(name), NULL) != 0) return MR_GRAPH_REFAIL("manifest");
    if (!has_name(params, name))
      return MR_GRAPH_FAIL("manifest: param '%s' is not among the model's params", name);
  }
  return 0;
}

/* Reads "linked_params" (absent: none) into c->linked. */
static int read_linked(const ctx_t* c, TVMFFIObject* params) {
  uint32_t ll = mr_json_get(&c->doc, c->doc.root, "linked_params"), k;
  char name[MR_MAX_NAME];
  int64_t arg;
  if (!ll) return 0;
  if (mr_json_type(&c->doc, ll) != MR_JSON_ARRAY)
    return MR_GRAPH_FAIL("manifest: 'linked_params' must be a list");
  for (k = first(c, ll); k; k = next(c, k)) {
    if (mr_json_str(&c->doc, k, name, sizeof(name), NULL) != 0) return MR_GRAPH_REFAIL("manifest");
    if ((arg = mr_graph_find_arg(c->g, name)) < 0)
      return MR_GRAPH_FAIL("manifest: linked param '%s' is not an input of the graph", name);
    if (c->linked[arg] || has_name(params, name))
      return MR_GRAPH_FAIL("manifest: linked param '%s' is listed twice or is also in the "
                           "payload's params", name);
    c->linked[arg] = 1;
  }
  return 0;
}

int mr_graph_manifest_check(const char* manifest, size_t size, const mr_graph_t* g,
                            TVMFFIObject* param_names, uint8_t* linked_args) {
  ctx_t c;
  uint32_t fmt, ver;
  int64_t version = 0;
  int status;
  c.g = g;
  c.linked = linked_args;
  if (mr_json_parse(manifest, size, "manifest", &c.doc) != 0) return MR_GRAPH_REFAIL(NULL);
  fmt = mr_json_get(&c.doc, c.doc.root, "format");
  ver = mr_json_get(&c.doc, c.doc.root, "version");
  if (!fmt || !mr_json_str_eq(&c.doc, fmt, "kiln.manifest"))
    status = MR_GRAPH_FAIL("manifest: 'format' is not \"kiln.manifest\"");
  else if (!ver || mr_json_int(&c.doc, ver, &version) != 0 || version != 1)
    status = MR_GRAPH_FAIL("manifest: version %lld, expected 1", (long long)version);
  else
    status = read_linked(&c, param_names) || check_io(&c, param_names) || check_storage(&c) ||
             check_names(&c, param_names);
  return status ? -1 : 0;
}

/* ---- checksums ---- */
static int check_sum(const mr_json_t* doc, uint32_t sums, const char* key, const char* part,
                     const void* data, size_t size) {
  uint32_t i = mr_json_get(doc, sums, key), got;
  int64_t want = -1;
  if (!i || mr_json_int(doc, i, &want) != 0 || want < 0 || want > 0xFFFFFFFFll)
    return MR_GRAPH_FAIL("manifest: 'crc32c' must give '%s' as a 32-bit integer", key);
  got = mr_crc32c(0, data, size);
  if (got != (uint32_t)want)
    return MR_GRAPH_FAIL("checksum mismatch in %s (expected 0x%08x, got 0x%08x): the file is "
                         "corrupt", part, (unsigned)want, (unsigned)got);
  return 0;
}

int mr_graph_manifest_check_sums(const char* manifest, size_t size, const char* json,
                                 size_t json_size, const void* params, size_t params_size) {
  mr_json_t doc;
  uint32_t sums;
  int status = 0;
  if (!mr_checksum_verify_enabled()) return 0;
  if (mr_json_parse(manifest, size, "manifest", &doc) != 0) return MR_GRAPH_REFAIL(NULL);
  sums = mr_json_get(&doc, doc.root, "crc32c");
  if (sums && mr_json_type(&doc, sums) != MR_JSON_OBJECT)
    status = MR_GRAPH_FAIL("manifest: 'crc32c' must be an object");
  else if (sums)
    status = check_sum(&doc, sums, "graph_json", "the graph JSON", json, json_size) ||
             check_sum(&doc, sums, "params", "params", params, params_size);
  return status ? -1 : 0;
}
