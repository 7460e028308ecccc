/* The GraphExecutor module's packed functions, with TVM's names and arguments:
 * set_input, set_input_zero_copy, set_output_zero_copy, run, get_output,
 * get_input, get_num_outputs, get_num_inputs, get_input_index, get_input_info,
 * load_params, share_params, get_node_output, debug_get_output, run_individual
 * (per-node timing) and get_graph_json. Each Function holds the module. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "executor.h"

typedef int (*method_t)(mr_graph_executor_t* ex, const TVMFFIAny* a, int32_t n, TVMFFIAny* out);

static void set_int(TVMFFIAny* out, int64_t v) {
  out->type_index = kTVMFFIInt;
  out->v_int64 = v;
}

/* The input named or numbered by a[i]: its index in g->args. */
static int input_key(mr_graph_executor_t* ex, const char* func, const TVMFFIAny* a, int32_t n,
                     int i, uint32_t* out) {
  const mr_graph_t* g = ex->g;
  char name[MR_MAX_NAME], known[512];
  size_t len = 0;
  int64_t k;
  uint32_t j;
  if (i < n && a[i].type_index == kTVMFFIInt) {
    if (a[i].v_int64 < 0 || a[i].v_int64 >= (int64_t)g->num_args)
      return mr_graph_fail("%s: input index %lld is out of range (%u inputs)", func,
                           (long long)a[i].v_int64, (unsigned)g->num_args);
    *out = (uint32_t)a[i].v_int64;
    return 0;
  }
  if (mr_graph_arg_str(func, a, n, i, name) != 0) return -1;
  if ((k = mr_graph_find_arg(g, name)) >= 0) {
    *out = (uint32_t)k;
    return 0;
  }
  known[0] = '\0';
  for (j = 0; j < g->num_args && len + 8 < sizeof(known); ++j)
    len += (size_t)snprintf(known + len, sizeof(known) - len, "%s'%s'", j ? ", " : "",
                            g->nodes[g->args[j]].name);
  return mr_graph_fail("%s: the graph has no input named '%s' (inputs: %s)", func, name, known);
}

static int output_key(mr_graph_executor_t* ex, const char* func, const TVMFFIAny* a, int32_t n,
                      uint32_t* out) {
  int64_t i;
  if (mr_graph_arg_int(func, a, n, 0, &i) != 0) return -1;
  if (i < 0 || i >= (int64_t)ex->g->num_heads)
    return mr_graph_fail("%s: output index %lld is out of range (%u outputs)", func,
                         (long long)i, (unsigned)ex->g->num_heads);
  *out = ex->g->heads[i];
  return 0;
}

/* Entry eid into `a[i]` (a tensor) when given, else as the result. */
static int give_entry(mr_graph_executor_t* ex, uint32_t eid, const TVMFFIAny* a, int32_t n,
                      int i, TVMFFIAny* out) {
  TVMFFIObject* t;
  DLTensor* dst;
  if (i < n && a[i].type_index != kTVMFFINone) {
    if (mr_graph_arg_tensor("get_output", a, n, i, &dst) != 0) return -1;
    return mr_tensor_copy(&ex->entries[eid], dst, NULL);
  }
  if (mr_graph_executor_entry(ex, eid, &t) != 0) return -1;
  mr_any_set_object(out, t);
  return 0;
}

static int m_set_input(mr_graph_executor_t* ex, const TVMFFIAny* a, int32_t n, TVMFFIAny* out) {
  uint32_t arg;
  DLTensor* t;
  (void)out;
  if (input_key(ex, "set_input", a, n, 0, &arg) != 0 ||
      mr_graph_arg_tensor("set_input", a, n, 1, &t) != 0)
    return -1;
  return mr_graph_executor_set_arg(ex, arg, t, 0);
}

static int m_set_input_zero_copy(mr_graph_executor_t* ex, const TVMFFIAny* a, int32_t n,
                                 TVMFFIAny* out) {
  static const char k_func[] = "set_input_zero_copy";
  char what[MR_MAX_NAME + 16];
  uint32_t arg;
  DLTensor* t;
  (void)out;
  if (input_key(ex, k_func, a, n, 0, &arg) != 0 || mr_graph_arg_tensor(k_func, a, n, 1, &t) != 0)
    return -1;
  snprintf(what, sizeof(what), "input '%s'", ex->g->nodes[ex->g->args[arg]].name);
  if (mr_graph_executor_zero_copy(ex, k_func, mr_graph_arg_entry(ex->g, arg), what, &a[1]) != 0)
    return -1;
  ex->arg_flags[arg] |= MR_GRAPH_ARG_SET;
  return 0;
}

static int m_set_output_zero_copy(mr_graph_executor_t* ex, const TVMFFIAny* a, int32_t n,
                                  TVMFFIAny* out) {
  static const char k_func[] = "set_output_zero_copy";
  uint32_t eid;
  DLTensor* t;
  (void)out;
  if (output_key(ex, k_func, a, n, &eid) != 0 || mr_graph_arg_tensor(k_func, a, n, 1, &t) != 0)
    return -1;
  return mr_graph_executor_zero_copy(ex, k_func, eid, "the output", &a[1]);
}

static int m_run(mr_graph_executor_t* ex, const TVMFFIAny* a, int32_t n, TVMFFIAny* out) {
  (void)a, (void)n, (void)out;
  return mr_graph_executor_run_upto(ex, UINT32_MAX);
}

static int m_get_output(mr_graph_executor_t* ex, const TVMFFIAny* a, int32_t n, TVMFFIAny* out) {
  uint32_t eid;
  if (output_key(ex, "get_output", a, n, &eid) != 0) return -1;
  return give_entry(ex, eid, a, n, 1, out);
}

static int m_get_input(mr_graph_executor_t* ex, const TVMFFIAny* a, int32_t n, TVMFFIAny* out) {
  uint32_t arg;
  if (input_key(ex, "get_input", a, n, 0, &arg) != 0) return -1;
  return give_entry(ex, mr_graph_arg_entry(ex->g, arg), a, n, 1, out);
}

static int m_get_num_outputs(mr_graph_executor_t* ex, const TVMFFIAny* a, int32_t n,
                             TVMFFIAny* out) {
  (void)a, (void)n;
  set_int(out, ex->g->num_heads);
  return 0;
}

static int m_get_num_inputs(mr_graph_executor_t* ex, const TVMFFIAny* a, int32_t n,
                            TVMFFIAny* out) {
  (void)a, (void)n;
  set_int(out, ex->g->num_args);
  return 0;
}

static int m_get_input_index(mr_graph_executor_t* ex, const TVMFFIAny* a, int32_t n,
                             TVMFFIAny* out) {
  char name[MR_MAX_NAME];
  if (mr_graph_arg_str("get_input_index", a, n, 0, name) != 0) return -1;
  set_int(out, mr_graph_find_arg(ex->g, name));
  return 0;
}

/* An Array of the n objects (the references are moved into it; released on failure). */
static int array_of(TVMFFIObject** objs, uint32_t n, TVMFFIObject** out) {
  TVMFFIAny* items = (TVMFFIAny*)calloc(n + 1, sizeof(TVMFFIAny));
  uint32_t i;
  int status = items ? 0 : mr_error_oom("an array");
  for (i = 0; items && i < n; ++i) mr_any_set_object(&items[i], objs[i]);
  if (status == 0) status = mr_array_create(items, (int64_t)n, out);
  for (i = 0; i < n; ++i) mr_object_release(objs[i]);
  free(items);
  return status;
}

/* [names, shapes, dtypes] of the inputs that are not parameters. */
static int m_get_input_info(mr_graph_executor_t* ex, const TVMFFIAny* a, int32_t n,
                            TVMFFIAny* out) {
  const mr_graph_t* g = ex->g;
  uint32_t i, k = 0, na = g->num_args;
  TVMFFIObject **objs = (TVMFFIObject**)calloc(3 * (size_t)na + 3, sizeof(void*)), *res;
  char dtype[48];
  int status = 0;
  (void)a, (void)n;
  if (!objs) return mr_error_oom("input info");
  for (i = 0; i < na; ++i) {
    const DLTensor* e = &ex->entries[mr_graph_arg_entry(g, i)];
    const char* name = g->nodes[g->args[i]].name;
    if (ex->arg_flags[i] & MR_GRAPH_ARG_PARAM) continue;
    (void)mr_dtype_format(e->dtype, dtype, sizeof(dtype));
    if (status == 0) status = mr_str_create(name, strlen(name), &objs[k]);
    if (status == 0) status = mr_shape_create(e->shape, (size_t)e->ndim, &objs[na + k]);
    if (status == 0) status = mr_str_create(dtype, strlen(dtype), &objs[2 * na + k]);
    ++k;
  }
  for (i = 0; i < 3; ++i) {
    if (status == 0) {
      status = array_of(objs + i * na, k, &objs[3 * na + i]);
    } else {
      uint32_t j;
      for (j = 0; j < k; ++j) mr_object_release(objs[i * na + j]);
    }
  }
  if (status == 0) status = array_of(objs + 3 * na, 3, &res);
  else
    for (i = 0; i < 3; ++i) mr_object_release(objs[3 * na + i]);
  if (status == 0) mr_any_set_object(out, res);
  free(objs);
  return status;
}

/* The params blob in a[i]: names and tensors. */
static int read_params(const char* func, const TVMFFIAny* a, int32_t n, int i,
                       TVMFFIObject** names, TVMFFIObject** tensors) {
  const char* data;
  size_t size;
  if (i >= n || mr_any_get_str(&a[i], &data, &size) != 0)
    return mr_graph_bad_arg(func, i, "the bytes of a params file", i < n ? &a[i] : NULL);
  if (mr_params_load(data, size, names, tensors) != 0) return mr_graph_refail(func);
  return 0;
}

static int m_load_params(mr_graph_executor_t* ex, const TVMFFIAny* a, int32_t n,
                         TVMFFIAny* out) {
  TVMFFIObject *names, *tensors;
  const TVMFFISeqCell *ns, *ts;
  int64_t i, arg;
  int status = 0;
  (void)out;
  if (read_params("load_params", a, n, 0, &names, &tensors) != 0) return -1;
  ns = mr_array_view(names);
  ts = mr_array_view(tensors);
  for (i = 0; i < ns->size && status == 0; ++i) {
    const char* name = mr_bytes_view(((TVMFFIAny*)ns->data)[i].v_obj)->data;
    if ((arg = mr_graph_find_arg(ex->g, name)) < 0) continue; /* as TVM: not an input here */
    status = mr_graph_executor_set_arg(ex, (uint32_t)arg,
                                       mr_tensor_dl(((TVMFFIAny*)ts->data)[i].v_obj), 1);
  }
  mr_object_release(names);
  mr_object_release(tensors);
  return status;
}

static int m_share_params(mr_graph_executor_t* ex, const TVMFFIAny* a, int32_t n,
                          TVMFFIAny* out) {
  TVMFFIObject *names, *tensors;
  const TVMFFISeqCell* ns;
  mr_graph_executor_t* from;
  int64_t i, arg, from_arg;
  int status = 0;
  (void)out;
  if (n < 1 || a[0].type_index != kTVMFFIModule)
    return mr_graph_bad_arg("share_params", 0, "a GraphExecutor module", n ? &a[0] : NULL);
  if (!(from = mr_graph_executor_of(a[0].v_obj)) ||
      read_params("share_params", a, n, 1, &names, &tensors) != 0)
    return -1;
  ns = mr_array_view(names);
  for (i = 0; i < ns->size && status == 0; ++i) {
    const char* name = mr_bytes_view(((TVMFFIAny*)ns->data)[i].v_obj)->data;
    if ((arg = mr_graph_find_arg(ex->g, name)) < 0) continue;
    if ((from_arg = mr_graph_find_arg(from->g, name)) < 0)
      status = mr_graph_fail("share_params: the executor shared from has no input '%s'", name);
    else
      status = mr_graph_executor_share(ex, (uint32_t)arg, from, (uint32_t)from_arg);
  }
  mr_object_release(names);
  mr_object_release(tensors);
  return status;
}

/* A node given by id or name. */
static int node_key(mr_graph_executor_t* ex, const char* func, const TVMFFIAny* a, int32_t n,
                    uint32_t* out) {
  char name[MR_MAX_NAME];
  int64_t nid;
  if (n > 0 && a[0].type_index == kTVMFFIInt) {
    nid = a[0].v_int64;
  } else {
    if (mr_graph_arg_str(func, a, n, 0, name) != 0) return -1;
    if ((nid = mr_graph_find_node(ex->g, name)) < 0)
      return mr_graph_fail("%s: the graph has no node named '%s'", func, name);
  }
  if (nid < 0 || nid >= (int64_t)ex->g->num_nodes)
    return mr_graph_fail("%s: node %lld is out of range (%u nodes)", func, (long long)nid,
                         (unsigned)ex->g->num_nodes);
  *out = (uint32_t)nid;
  return 0;
}

static int m_get_node_output(mr_graph_executor_t* ex, const TVMFFIAny* a, int32_t n,
                             TVMFFIAny* out) {
  uint32_t nid;
  int64_t idx;
  if (node_key(ex, "get_node_output", a, n, &nid) != 0 ||
      mr_graph_arg_int("get_node_output", a, n, 1, &idx) != 0)
    return -1;
  if (idx < 0 || idx >= (int64_t)ex->g->nodes[nid].num_outputs)
    return mr_graph_fail("get_node_output: node %u has %u outputs, not %lld", (unsigned)nid,
                         (unsigned)ex->g->nodes[nid].num_outputs, (long long)idx + 1);
  return give_entry(ex, ex->g->row_ptr[nid] + (uint32_t)idx, a, 0, 0, out);
}

static int m_debug_get_output(mr_graph_executor_t* ex, const TVMFFIAny* a, int32_t n,
                              TVMFFIAny* out) {
  uint32_t nid;
  if (node_key(ex, "debug_get_output", a, n, &nid) != 0 ||
      mr_graph_executor_run_upto(ex, nid) != 0)
    return -1;
  return give_entry(ex, ex->g->row_ptr[nid], a, n, 1, out);
}

/* Bytes of one float64 per node: its mean seconds per call. */
static int m_run_individual(mr_graph_executor_t* ex, const TVMFFIAny* a, int32_t n,
                            TVMFFIAny* out) {
  int64_t number = 1, repeat = 1;
  double* secs;
  TVMFFIObject* bytes;
  int status;
  if ((n > 0 && mr_graph_arg_int("run_individual", a, n, 0, &number) != 0) ||
      (n > 1 && mr_graph_arg_int("run_individual", a, n, 1, &repeat) != 0))
    return -1;
  if (number > 1000000 || repeat > 1000000)
    return mr_value_error("run_individual: number and repeat must be at most 1000000");
  secs = (double*)calloc(ex->g->num_nodes, sizeof(double));
  if (!secs) return mr_error_oom("node timings");
  status = mr_graph_executor_time_nodes(ex, (int)number, (int)repeat, secs);
  if (status == 0)
    status = mr_bytes_create((const char*)secs, ex->g->num_nodes * sizeof(double), &bytes);
  if (status == 0) mr_any_set_object(out, bytes);
  free(secs);
  return status;
}

static int m_get_graph_json(mr_graph_executor_t* ex, const TVMFFIAny* a, int32_t n,
                            TVMFFIAny* out) {
  TVMFFIObject* s;
  (void)a, (void)n;
  if (mr_str_create(ex->json, ex->json_size, &s) != 0) return -1;
  mr_any_set_object(out, s);
  return 0;
}

static const struct {
  const char* name;
  method_t fn;
} k_methods[] = {
    {"set_input", m_set_input},
    {"set_input_zero_copy", m_set_input_zero_copy},
    {"set_output_zero_copy", m_set_output_zero_copy},
    {"run", m_run},
    {"get_output", m_get_output},
    {"get_input", m_get_input},
    {"get_num_outputs", m_get_num_outputs},
    {"get_num_inputs", m_get_num_inputs},
    {"get_input_index", m_get_input_index},
    {"get_input_info", m_get_input_info},
    {"load_params", m_load_params},
    {"share_params", m_share_params},
    {"get_node_output", m_get_node_output},
    {"debug_get_output", m_debug_get_output},
    {"run_individual", m_run_individual},
    {"get_graph_json", m_get_graph_json},
};

typedef struct {
  TVMFFIObject* module;
  method_t fn;
} bound_t;

static int call_bound(void* self, const TVMFFIAny* a, int32_t n, TVMFFIAny* out) {
  bound_t* b = (bound_t*)self;
  return b->fn((mr_graph_executor_t*)mr_module_cast(b->module)->self, a, n, out);
}

static void free_bound(void* self) {
  mr_object_release(((bound_t*)self)->module);
  free(self);
}

int mr_graph_executor_function(mr_graph_executor_t* ex, const char* name, TVMFFIObject** out) {
  size_t i;
  bound_t* b;
  *out = NULL;
  for (i = 0; i < sizeof(k_methods) / sizeof(k_methods[0]); ++i)
    if (strcmp(k_methods[i].name, name) == 0) break;
  if (i == sizeof(k_methods) / sizeof(k_methods[0])) return 0;
  if (!(b = (bound_t*)malloc(sizeof(*b)))) return mr_error_oom("a function");
  b->module = ex->module;
  b->fn = k_methods[i].fn;
  mr_object_retain(ex->module);
  if (mr_function_create_closure(b, call_bound, free_bound, out) != 0) {
    free_bound(b);
    return -1;
  }
  return 0;
}
