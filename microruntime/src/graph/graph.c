/* Reading TVM's classic graph JSON into mr_graph_t, validating everything the
 * executor relies on: node kinds and attributes, input references (to earlier
 * nodes only, so the graph runs in order), node_row_ptr, arg_nodes, heads,
 * shapes, dtypes, storage ids and devices, and that no two entries live at the same time
 * share a storage slot. Each error names the node and field. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph.h"
#include "json.h"

#define MR_ERROR_FILE kMrFileGraphGraph

typedef struct {
  mr_json_t doc;
  mr_graph_t* g;
  size_t pool_used, pool_size;
} ctx_t;

/* GFAIL: "graph JSON: <formatted>"; NODE_FAIL: "graph JSON: node <nid> ('<name>'): field
 * '<field>': <problem>"; ENTRY_FAIL: "graph JSON: attrs: <field> of entry <e> <problem>". */
#ifdef MR_CONFIG_SMALL
#define GFAIL(...) MR_GRAPH_FAIL(__VA_ARGS__)
#define NODE_FAIL(g, nid, field, problem) \
  MR_GRAPH_FAIL("%p %u %s %s", (const void*)(g), (unsigned)(nid), field, problem)
#define ENTRY_FAIL(field, e, problem) MR_GRAPH_FAIL("%s %u %s", field, (unsigned)(e), problem)
#else
#define GFAIL gfail
#define NODE_FAIL node_fail
#define ENTRY_FAIL entry_fail
static int gfail(const char* fmt, ...) MR_PRINTF_LIKE(1, 2);
static int gfail(const char* fmt, ...) {
  va_list ap;
  int status;
  va_start(ap, fmt);
  status = mr_graph_vfail("graph JSON", fmt, ap);
  va_end(ap);
  return status;
}

static int node_fail(const mr_graph_t* g, uint32_t nid, const char* field, const char* problem) {
  const char* name = g->nodes[nid].name;
  return gfail("node %u ('%s'): field '%s': %s", (unsigned)nid, name ? name : "?", field, problem);
}

static int entry_fail(const char* field, uint32_t e, const char* problem) {
  return gfail("attrs: %s of entry %u %s", field, (unsigned)e, problem);
}
#endif

static mr_json_type_t type(const ctx_t* c, uint32_t v) { return mr_json_type(&c->doc, v); }
static uint32_t len(const ctx_t* c, uint32_t v) { return mr_json_len(&c->doc, v); }
static uint32_t first(const ctx_t* c, uint32_t v) { return mr_json_first(&c->doc, v); }
static uint32_t next(const ctx_t* c, uint32_t v) { return mr_json_next(&c->doc, v); }

/* An integer in [0, max] (no error recorded on failure). */
static int read_uint(const ctx_t* c, uint32_t i, uint64_t max, uint32_t* out) {
  int64_t x;
  if (mr_json_int(&c->doc, i, &x) != 0 || x < 0 || (uint64_t)x > max) return -1;
  *out = (uint32_t)x;
  return 0;
}

/* Decodes string value i into the string pool. */
static int pool_str(ctx_t* c, uint32_t i, char** out) {
  size_t n;
  char* dst = c->g->strings + c->pool_used;
  size_t raw = type(c, i) == MR_JSON_STRING ? len(c, i) : MR_MAX_NAME;
  if (raw >= MR_MAX_NAME || raw + 1 > c->pool_size - c->pool_used ||
      mr_json_str(&c->doc, i, dst, raw + 1, &n) != 0)
    return -1;
  c->pool_used += n + 1;
  *out = dst;
  return 0;
}

/* An array value of exactly n items (n == UINT32_MAX: any length). */
static int is_array(const ctx_t* c, uint32_t i, uint32_t n) {
  return i && type(c, i) == MR_JSON_ARRAY && (n == UINT32_MAX || len(c, i) == n);
}

/* A [nid, index] or [nid, index, version] reference to an entry of a node before `limit`. */
static int read_ref(const ctx_t* c, uint32_t i, uint32_t limit, uint32_t* out_eid) {
  const mr_graph_t* g = c->g;
  uint32_t nid, idx, version, n = type(c, i) == MR_JSON_ARRAY ? len(c, i) : 0, k = first(c, i);
  if ((n != 2 && n != 3) || read_uint(c, k, limit ? limit - 1 : 0, &nid) != 0 || limit == 0 ||
      read_uint(c, k = next(c, k), UINT32_MAX, &idx) != 0 ||
      (n == 3 && read_uint(c, next(c, k), UINT32_MAX, &version) != 0) ||
      idx >= g->row_ptr[nid + 1] - g->row_ptr[nid])
    return -1;
  *out_eid = g->row_ptr[nid] + idx;
  return 0;
}

/* node_row_ptr: num_nodes + 1 non-decreasing ints from 0. */
static int read_row_ptr(ctx_t* c, uint32_t a) {
  mr_graph_t* g = c->g;
  uint32_t i, k;
  if (!is_array(c, a, g->num_nodes + 1))
    return GFAIL("'node_row_ptr' must be a list of %u ints (one more than the nodes)",
                 (unsigned)g->num_nodes + 1);
  for (i = 0, k = first(c, a); i <= g->num_nodes; ++i, k = next(c, k))
    if (read_uint(c, k, MR_MAX_GRAPH_ENTRIES, &g->row_ptr[i]) != 0 ||
        (i == 0 && g->row_ptr[0] != 0) || (i > 0 && g->row_ptr[i] < g->row_ptr[i - 1]))
      return GFAIL("'node_row_ptr'[%u] is not a valid entry offset (starting at 0, "
                   "non-decreasing, at most %u)", (unsigned)i, (unsigned)MR_MAX_GRAPH_ENTRIES);
  g->num_entries = g->row_ptr[g->num_nodes];
  return 0;
}

/* A tvm_op node's attrs: func_name, num_inputs, num_outputs, flatten_data (all strings). */
static int read_op_attrs(ctx_t* c, uint32_t nid, uint32_t attrs, uint32_t n_in) {
  mr_graph_t* g = c->g;
  mr_graph_node_t* node = &g->nodes[nid];
  static const char* const keys[] = {"func_name", "num_inputs", "num_outputs", "flatten_data"};
  char buf[24];
  uint32_t k[4], i;
  unsigned long v[3];
  if (!attrs || type(c, attrs) != MR_JSON_OBJECT)
    return NODE_FAIL(g, nid, "attrs", "a tvm_op node needs an object of attributes");
  (void)mr_json_fields(&c->doc, attrs, keys, 4, k); /* other attributes are TVM's, unread */
  for (i = 0; i < 4; ++i) {
    char* end;
    if (!k[i] || type(c, k[i]) != MR_JSON_STRING)
      return NODE_FAIL(g, nid, keys[i], "missing, or not a string");
    if (i == 0) continue;
    if (mr_json_str(&c->doc, k[i], buf, sizeof(buf), NULL) != 0 || buf[0] < '0' ||
        buf[0] > '9' || (v[i - 1] = strtoul(buf, &end, 10), *end) || v[i - 1] > MR_MAX_GRAPH_OP_ARGS)
      return NODE_FAIL(g, nid, keys[i], "not a small decimal integer");
  }
  if (pool_str(c, k[0], &node->func_name) != 0 || !node->func_name[0])
    return NODE_FAIL(g, nid, "func_name", "empty, too long or not a valid name");
  if (v[0] != n_in) return NODE_FAIL(g, nid, "num_inputs", "differs from the length of 'inputs'");
  if (v[1] == 0 || v[1] != g->row_ptr[nid + 1] - g->row_ptr[nid])
    return NODE_FAIL(g, nid, "num_outputs", "must be at least 1 and match node_row_ptr");
  if (v[0] + v[1] > MR_MAX_GRAPH_OP_ARGS)
    return NODE_FAIL(g, nid, "num_outputs", "too many arguments for one op");
  if (v[2] > 1) return NODE_FAIL(g, nid, "flatten_data", "must be \"0\" or \"1\"");
  node->kind = strcmp(node->func_name, "__nop") == 0    ? MR_GRAPH_OP_NOP
               : strcmp(node->func_name, "__copy") == 0 ? MR_GRAPH_OP_COPY
                                                         : MR_GRAPH_OP_CALL;
  if (node->kind == MR_GRAPH_OP_COPY && (v[0] != 1 || v[1] != 1))
    return NODE_FAIL(g, nid, "func_name", "__copy takes one input and one output");
  node->num_outputs = (uint32_t)v[1];
  node->flatten = (uint8_t)v[2];
  return 0;
}

/* The key `unknown` of an object, not one of its keys the graph knows, as an error. */
static int unknown_key(ctx_t* c, uint32_t unknown, const char* where, uint32_t nid) {
  char key[64];
  if (mr_json_str(&c->doc, unknown, key, sizeof(key), NULL) != 0) strcpy(key, "...");
  if (nid == UINT32_MAX) return GFAIL("unknown key '%s' in %s", key, where);
  return NODE_FAIL(c->g, nid, key, "unknown key in a node");
}

/* A node's fields: op, name, inputs, attrs (or TVM's older attr), control_deps (unread). */
static const char* const k_node_keys[] = {"op", "name", "inputs", "attrs", "attr",
                                          "control_deps"};
enum { F_OP, F_NAME, F_INPUTS, F_ATTRS, F_ATTR, F_NODE_KEYS = 6 };

static int read_node(ctx_t* c, uint32_t nid, uint32_t k, uint32_t* next_input) {
  mr_graph_t* g = c->g;
  mr_graph_node_t* node = &g->nodes[nid];
  uint32_t f[F_NODE_KEYS], unknown, op, inputs, i, j;
  int is_op;
  if (type(c, k) != MR_JSON_OBJECT) return GFAIL("node %u is not an object", (unsigned)nid);
  unknown = mr_json_fields(&c->doc, k, k_node_keys, F_NODE_KEYS, f);
  if (!f[F_NAME] || pool_str(c, f[F_NAME], &node->name) != 0)
    return GFAIL("node %u: field 'name': missing, too long, or not a string", (unsigned)nid);
  if (unknown) return unknown_key(c, unknown, "a node", nid);
  op = f[F_OP];
  is_op = op && mr_json_str_eq(&c->doc, op, "tvm_op");
  if (!op || (!is_op && !mr_json_str_eq(&c->doc, op, "null")))
    return NODE_FAIL(g, nid, "op", "must be \"null\" or \"tvm_op\"");
  inputs = f[F_INPUTS];
  if (!is_array(c, inputs, UINT32_MAX))
    return NODE_FAIL(g, nid, "inputs", "missing, or not a list");
  node->first_input = *next_input;
  node->num_inputs = len(c, inputs);
  for (i = 0, j = first(c, inputs); i < node->num_inputs; ++i, j = next(c, j))
    if (read_ref(c, j, nid, &g->inputs[(*next_input)++]) != 0)
      return NODE_FAIL(g, nid, "inputs", "each input must be [node, output(, version)] of a "
                       "node before this one");
  if (is_op) return read_op_attrs(c, nid, f[F_ATTRS] ? f[F_ATTRS] : f[F_ATTR], node->num_inputs);
  if (node->num_inputs) return NODE_FAIL(g, nid, "inputs", "an input node (op \"null\") has none");
  if (g->row_ptr[nid + 1] - g->row_ptr[nid] != 1)
    return NODE_FAIL(g, nid, "node_row_ptr", "an input node has exactly one output");
  node->num_outputs = 1;
  return 0;
}

/* The string's characters as written and its NUL (its decoded size at most), or 0. */
static size_t raw_size(const ctx_t* c, uint32_t v) {
  return v && type(c, v) == MR_JSON_STRING ? (size_t)len(c, v) + 1 : 0;
}

/* Sizes the inputs and the string pool (names and function names), then reads the nodes. */
static int read_nodes(ctx_t* c, uint32_t nodes) {
  mr_graph_t* g = c->g;
  uint32_t nid, k, total = 0, next_input = 0;
  for (nid = 0, k = first(c, nodes); nid < g->num_nodes; ++nid, k = next(c, k)) {
    uint32_t f[F_NODE_KEYS];
    (void)mr_json_fields(&c->doc, k, k_node_keys, F_NODE_KEYS, f);
    if (f[F_INPUTS] && type(c, f[F_INPUTS]) == MR_JSON_ARRAY) total += len(c, f[F_INPUTS]);
    c->pool_size += raw_size(c, f[F_NAME]) +
                    raw_size(c, mr_json_get(&c->doc, f[F_ATTRS] ? f[F_ATTRS] : f[F_ATTR],
                                            "func_name"));
  }
  g->inputs = (uint32_t*)calloc(total ? total : 1, sizeof(uint32_t));
  g->strings = (char*)malloc(c->pool_size + 1);
  if (!g->inputs || !g->strings) return MR_OOM("graph inputs");
  for (nid = 0, k = first(c, nodes); nid < g->num_nodes; ++nid, k = next(c, k))
    if (read_node(c, nid, k, &next_input) != 0) return -1;
  return 0;
}

static int cmp_names(const void* a, const void* b) {
  return strcmp(*(const char* const*)a, *(const char* const*)b);
}

/* Input names are unique (so is every arg node): sorted, no two neighbours equal. */
static int check_unique_args(const mr_graph_t* g) {
  const char** names = (const char**)malloc((g->num_args + 1) * sizeof(char*));
  uint32_t i;
  int status = 0;
  if (!names) return MR_OOM("graph arguments");
  for (i = 0; i < g->num_args; ++i) names[i] = g->nodes[g->args[i]].name;
  qsort(names, g->num_args, sizeof(char*), cmp_names);
  for (i = 1; i < g->num_args && status == 0; ++i)
    if (strcmp(names[i - 1], names[i]) == 0)
      status = GFAIL("'arg_nodes': input '%s' is listed twice or two inputs have that name",
                     names[i]);
  free(names);
  return status;
}

/* arg_nodes: every "null" node exactly once; heads: entry references. */
static int read_args_heads(ctx_t* c, uint32_t a, uint32_t h) {
  mr_graph_t* g = c->g;
  uint32_t i, k, nid, nulls = 0;
  if (!is_array(c, a, UINT32_MAX)) return GFAIL("'arg_nodes' must be a list of node ids");
  if (!is_array(c, h, UINT32_MAX) || !first(c, h))
    return GFAIL("'heads' must be a non-empty list of [node, output, version]");
  for (i = 0; i < g->num_nodes; ++i) nulls += g->nodes[i].func_name == NULL;
  g->num_args = len(c, a);
  g->num_heads = len(c, h);
  g->args = (uint32_t*)calloc(g->num_args + 1, sizeof(uint32_t));
  g->heads = (uint32_t*)calloc(g->num_heads, sizeof(uint32_t));
  if (!g->args || !g->heads) return MR_OOM("graph arguments");
  for (i = 0, k = first(c, a); i < g->num_args; ++i, k = next(c, k)) {
    if (read_uint(c, k, g->num_nodes - 1, &nid) != 0 || g->nodes[nid].func_name)
      return GFAIL("'arg_nodes'[%u] is not the id of an input node (op \"null\")", (unsigned)i);
    g->args[i] = nid;
  }
  if (check_unique_args(g) != 0) return -1;
  if (g->num_args != nulls)
    return GFAIL("'arg_nodes' lists %u nodes but the graph has %u input nodes (op \"null\")",
                 (unsigned)g->num_args, (unsigned)nulls);
  for (i = 0, k = first(c, h); i < g->num_heads; ++i, k = next(c, k))
    if (read_ref(c, k, g->num_nodes, &g->heads[i]) != 0)
      return GFAIL("'heads'[%u] must be [node, output(, version)] of an existing node",
                   (unsigned)i);
  return 0;
}

/* attrs.<key> = [tag, list of num_entries items] at a; *out is the list. */
static int attr_list(ctx_t* c, uint32_t a, const char* key, const char* tag, int required,
                     uint32_t* out) {
  *out = 0;
  if (!a && !required) return 0;
  if (!is_array(c, a, 2) || !mr_json_str_eq(&c->doc, first(c, a), tag) ||
      !is_array(c, next(c, first(c, a)), c->g->num_entries))
    return GFAIL("attrs: '%s' must be [\"%s\", a list of %u items, one per entry]", key, tag,
                 (unsigned)c->g->num_entries);
  *out = next(c, first(c, a));
  return 0;
}

static int read_shapes(ctx_t* c, uint32_t list) {
  mr_graph_t* g = c->g;
  uint32_t e, k, d, j, n, dims = 0;
  for (e = 0, k = first(c, list); e < g->num_entries; ++e, k = next(c, k)) {
    n = type(c, k) == MR_JSON_ARRAY ? len(c, k) : MR_MAX_NDIM + 1;
    if (n > MR_MAX_NDIM)
      return GFAIL("attrs: shape of entry %u must be a list of at most %d dims", (unsigned)e,
                   MR_MAX_NDIM);
    g->entries[e].ndim = (int32_t)n;
    dims += n;
  }
  g->shapes = (int64_t*)calloc(dims ? dims : 1, sizeof(int64_t));
  if (!g->shapes) return MR_OOM("graph shapes");
  for (e = 0, dims = 0, k = first(c, list); e < g->num_entries; ++e, k = next(c, k)) {
    g->entries[e].shape_at = dims;
    for (d = 0, j = first(c, k); j; ++d, j = next(c, j))
      if (mr_json_int(&c->doc, j, &g->shapes[dims++]) != 0 || g->shapes[dims - 1] < 0)
        return GFAIL("attrs: shape of entry %u has an invalid dimension %u", (unsigned)e,
                     (unsigned)d);
  }
  return 0;
}

static int read_entry_attrs(ctx_t* c, uint32_t attrs) {
  static const char* const keys[] = {"shape", "dltype", "storage_id", "device_index",
                                     "storage_scope"};
  mr_graph_t* g = c->g;
  uint32_t a[5], shape, dltype, sid, dev, scope, e, k;
  char buf[32];
  if (!attrs || type(c, attrs) != MR_JSON_OBJECT) return GFAIL("'attrs' must be an object");
  (void)mr_json_fields(&c->doc, attrs, keys, 5, a); /* other attributes are TVM's, unread */
  if (attr_list(c, a[0], "shape", "list_shape", 1, &shape) != 0 ||
      attr_list(c, a[1], "dltype", "list_str", 1, &dltype) != 0 ||
      attr_list(c, a[2], "storage_id", "list_int", 1, &sid) != 0 ||
      attr_list(c, a[3], "device_index", "list_int", 0, &dev) != 0 ||
      attr_list(c, a[4], "storage_scope", "list_str", 0, &scope) != 0 ||
      read_shapes(c, shape) != 0)
    return -1;
  for (e = 0, k = first(c, dltype); e < g->num_entries; ++e, k = next(c, k)) {
    mr_graph_entry_t* en = &g->entries[e];
    if (mr_json_str(&c->doc, k, buf, sizeof(buf), NULL) != 0 ||
        mr_dtype_parse(buf, &en->dtype) != 0 || en->dtype.bits == 0 || en->dtype.lanes == 0)
      return ENTRY_FAIL("dltype", e, "is not a valid data type");
  }
  for (e = 0, k = first(c, sid); e < g->num_entries; ++e, k = next(c, k)) {
    if (read_uint(c, k, g->num_entries - 1, &g->entries[e].storage_id) != 0)
      return GFAIL("attrs: storage_id of entry %u must be in [0, %u)", (unsigned)e,
                   (unsigned)g->num_entries);
    if (g->entries[e].storage_id >= g->num_storage) g->num_storage = g->entries[e].storage_id + 1;
  }
  for (e = 0, k = first(c, dev); dev && e < g->num_entries; ++e, k = next(c, k))
    if (read_uint(c, k, 255, (uint32_t*)&g->entries[e].device_type) != 0)
      return ENTRY_FAIL("device_index", e, "is not a device type");
  for (e = 0, k = first(c, scope); scope && e < g->num_entries; ++e, k = next(c, k))
    if (!mr_json_str_eq(&c->doc, k, "global") && !mr_json_str_eq(&c->doc, k, ""))
      return ENTRY_FAIL("storage_scope", e, "is not supported (only \"global\")");
  return 0;
}

/* Entry sizes, and slot sizes and devices. */
static int plan_storage(mr_graph_t* g) {
  uint32_t e;
  g->storage_bytes = (uint64_t*)calloc(g->num_storage + 1, sizeof(uint64_t));
  g->storage_device = (int32_t*)calloc(g->num_storage + 1, sizeof(int32_t));
  if (!g->storage_bytes || !g->storage_device) return MR_OOM("graph storage");
  for (e = 0; e < g->num_storage; ++e) g->storage_device[e] = -1;
  for (e = 0; e < g->num_entries; ++e) {
    mr_graph_entry_t* en = &g->entries[e];
    uint64_t numel;
    if (mr_shape_numel(en->ndim, g->shapes + en->shape_at, &numel) != 0 ||
        mr_mul_overflow_u64(numel, mr_dtype_bytes(en->dtype), &en->nbytes) ||
        en->nbytes > ((uint64_t)1 << 48))
      return ENTRY_FAIL("size", e, "is too large");
    if (en->nbytes > g->storage_bytes[en->storage_id]) g->storage_bytes[en->storage_id] = en->nbytes;
    if (g->storage_device[en->storage_id] >= 0 &&
        g->storage_device[en->storage_id] != en->device_type)
      return GFAIL("attrs: storage slot %u holds entries of different devices",
                   (unsigned)en->storage_id);
    g->storage_device[en->storage_id] = en->device_type;
  }
  for (e = 0; e < g->num_storage; ++e)
    if (g->storage_device[e] < 0) g->storage_device[e] = 0;
  return 0;
}

/* The node that produces entry e (row_ptr is non-decreasing). */
static uint32_t entry_node(const mr_graph_t* g, uint32_t e) {
  uint32_t lo = 0, hi = g->num_nodes;
  while (hi - lo > 1) {
    uint32_t mid = lo + (hi - lo) / 2;
    if (g->row_ptr[mid] <= e) lo = mid; else hi = mid;
  }
  return lo;
}

static int storage_conflict(const mr_graph_t* g, uint32_t a, uint32_t b) {
  uint32_t na = entry_node(g, a), nb = entry_node(g, b);
  return GFAIL("attrs: storage_id: entry %u (output %u of node %u '%s') and entry %u (output "
               "%u of node %u '%s') are live at the same time but share storage slot %u",
               (unsigned)a, (unsigned)(a - g->row_ptr[na]), (unsigned)na, g->nodes[na].name,
               (unsigned)b, (unsigned)(b - g->row_ptr[nb]), (unsigned)nb, g->nodes[nb].name,
               (unsigned)g->entries[a].storage_id);
}

/* The storage plan is sound: entries that share a slot are never live at the same time.
 * Time t = 0 is before the run and t = nid + 1 when node nid runs; an entry is live from its
 * writer to its last reader (written and never read: at its writer only). Inputs and params
 * are live from 0 to the end, across runs, and the outputs (heads) to the end. An op's
 * output can never share a slot with an input of that op, except that the output of a
 * __nop (which does nothing: TVM's reshape, its output planned in its input's slot) in the
 * slot of one of its inputs is that input under another name, and lives as long as both. */
static int check_storage_plan(const mr_graph_t* g) {
  uint32_t n = g->num_entries, end_of_run = g->num_nodes + 1, nid, e, i, s;
  uint32_t* buf = (uint32_t*)calloc(4 * (size_t)n + g->num_storage + 2, sizeof(uint32_t));
  uint32_t *root = buf, *start = buf + n, *end = buf + 2 * (size_t)n, *order = buf + 3 * (size_t)n;
  uint32_t* first = buf + 4 * (size_t)n; /* per slot: where its entries begin in `order` */
  int status = 0;
  if (!buf) return MR_OOM("the storage plan check");
  for (nid = 0; nid < g->num_nodes; ++nid) {
    const mr_graph_node_t* node = &g->nodes[nid];
    for (e = g->row_ptr[nid]; e < g->row_ptr[nid + 1]; ++e) {
      root[e] = e;
      start[e] = end[e] = node->kind == MR_GRAPH_OP_INPUT ? 0 : nid + 1;
      if (node->kind == MR_GRAPH_OP_INPUT) end[e] = end_of_run;
      for (i = 0; node->kind == MR_GRAPH_OP_NOP && i < node->num_inputs; ++i) {
        uint32_t in = g->inputs[node->first_input + i];
        if (g->entries[in].storage_id == g->entries[e].storage_id) {
          root[e] = root[in];
          break;
        }
      }
    }
    for (i = 0; i < node->num_inputs; ++i) {
      uint32_t r = root[g->inputs[node->first_input + i]];
      if (end[r] < nid + 1) end[r] = nid + 1;
    }
  }
  for (i = 0; i < g->num_heads; ++i) end[root[g->heads[i]]] = end_of_run;
  /* The entries of each slot, by start time: counting sort by slot over the inputs first,
   * then the other entries in node order. */
  for (e = 0; e < n; ++e) ++first[g->entries[e].storage_id + 1];
  for (s = 0; s < g->num_storage; ++s) first[s + 1] += first[s];
  for (i = 0; i < 2; ++i)
    for (e = 0; e < n; ++e)
      if ((start[e] == 0) == (i == 0)) order[first[g->entries[e].storage_id]++] = e;
  /* first[s] is now where slot s + 1 begins; sweep each slot, tracking the latest end. */
  for (s = 0, i = 0; s < g->num_storage && status == 0; ++s) {
    uint32_t live = UINT32_MAX; /* the root entry with the latest end so far */
    for (; i < first[s] && status == 0; ++i) {
      uint32_t r = order[i];
      if (root[r] != r) continue;
      if (live != UINT32_MAX && start[r] <= end[live]) status = storage_conflict(g, live, r);
      if (live == UINT32_MAX || end[r] > end[live]) live = r;
    }
  }
  free(buf);
  return status;
}

static int parse(ctx_t* c) {
  static const char* const keys[] = {"nodes", "arg_nodes", "heads", "node_row_ptr", "attrs",
                                     "metadata"};
  mr_graph_t* g = c->g;
  uint32_t f[6], unknown, nodes;
  if (type(c, c->doc.root) != MR_JSON_OBJECT) return GFAIL("the graph must be a JSON object");
  if ((unknown = mr_json_fields(&c->doc, c->doc.root, keys, 6, f)))
    return unknown_key(c, unknown, "the graph", UINT32_MAX);
  nodes = f[0];
  g->num_nodes = is_array(c, nodes, UINT32_MAX) ? len(c, nodes) : 0;
  if (g->num_nodes == 0 || g->num_nodes > MR_MAX_GRAPH_NODES)
    return GFAIL("'nodes' must be a list of 1 to %u nodes", (unsigned)MR_MAX_GRAPH_NODES);
  g->nodes = (mr_graph_node_t*)calloc(g->num_nodes, sizeof(mr_graph_node_t));
  g->row_ptr = (uint32_t*)calloc(g->num_nodes + 1, sizeof(uint32_t));
  if (!g->nodes || !g->row_ptr) return MR_OOM("the graph");
  if (read_row_ptr(c, f[3]) != 0) return -1;
  g->entries = (mr_graph_entry_t*)calloc(g->num_entries + 1, sizeof(mr_graph_entry_t));
  if (!g->entries) return MR_OOM("graph entries");
  return read_nodes(c, nodes) || read_args_heads(c, f[1], f[2]) || read_entry_attrs(c, f[4]) ||
         plan_storage(g) || check_storage_plan(g) ? -1 : 0;
}

int mr_graph_parse(const char* json, size_t size, mr_graph_t** out_graph) {
  ctx_t c;
  int status;
  memset(&c, 0, sizeof(c));
  if (mr_json_parse(json, size, "graph JSON", &c.doc) != 0) return MR_GRAPH_REFAIL(NULL);
  c.g = (mr_graph_t*)calloc(1, sizeof(mr_graph_t));
  status = c.g ? parse(&c) : MR_OOM("the graph");
  if (status != 0) {
    mr_graph_free(c.g);
    return -1;
  }
  *out_graph = c.g;
  return 0;
}

void mr_graph_free(mr_graph_t* g) {
  if (!g) return;
  free(g->nodes);
  free(g->inputs);
  free(g->row_ptr);
  free(g->args);
  free(g->heads);
  free(g->entries);
  free(g->shapes);
  free(g->storage_bytes);
  free(g->storage_device);
  free(g->strings);
  free(g);
}

int64_t mr_graph_find_arg(const mr_graph_t* g, const char* name) {
  uint32_t i;
  for (i = 0; i < g->num_args && g->args[i] < g->num_nodes; ++i)
    if (strcmp(g->nodes[g->args[i]].name, name) == 0) return (int64_t)i;
  return -1;
}

int64_t mr_graph_find_node(const mr_graph_t* g, const char* name) {
  uint32_t i;
  for (i = 0; i < g->num_nodes; ++i)
    if (g->nodes[i].name && strcmp(g->nodes[i].name, name) == 0) return (int64_t)i;
  return -1;
}

#ifndef MR_CONFIG_SMALL
void mr_graph_describe(const int64_t* shape, int32_t ndim, DLDataType dtype, char* buf,
                       size_t cap) {
  size_t n = 0;
  int32_t d;
  buf[0] = '\0';
  for (d = 0; d < ndim && n + 24 < cap; ++d)
    n += (size_t)snprintf(buf + n, cap - n, "%s%lld", d ? ", " : "[", (long long)shape[d]);
  n += (size_t)snprintf(buf + n, cap - n, ndim ? "] " : "[] ");
  if (n < cap) (void)mr_dtype_format(dtype, buf + n, cap - n);
}
#endif
