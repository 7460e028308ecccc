/* The graph executor outside its core: TVM's global functions
 * tvm.graph_executor.create and tvm.graph_executor_factory.create, and the
 * GraphExecutor packed functions used from Python and for debugging and profiling
 * (get_input_info, share_params, get_node_output, debug_get_output, run_individual,
 * get_graph_json), and mr_graph_executor_from_json. mr_graph_executor_register()
 * (called by mr_graph_executor_from_json and by the Python package) adds them, and the
 * other packed functions of the executor and factory modules (executor_module.c,
 * factory_module.c); a static app that only uses graph_executor.h's C API (open a model,
 * create an executor, set inputs, load params, run, get outputs) links none of these. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "executor.h"

#define MR_ERROR_FILE kMrFileGraphExtras

/* ---- executor operations ---- */
/* Shares `from`'s entry (data and owner) as this executor's input `arg`. */
int mr_graph_executor_share(mr_graph_executor_t* ex, uint32_t arg, mr_graph_executor_t* from,
                            uint32_t from_arg) {
  uint32_t eid = mr_graph_arg_entry(ex->g, arg), feid = mr_graph_arg_entry(from->g, from_arg);
  uint32_t fs = from->g->entries[feid].storage_id;
  TVMFFIObject* owner = NULL;
  char what[MR_MAX_NAME + 16];
  snprintf(what, sizeof(what), "parameter '%s'", ex->g->nodes[ex->g->args[arg]].name);
  if (!(from->arg_flags[from_arg] & MR_GRAPH_ARG_SET))
    return MR_GRAPH_FAIL("share_params: %s is not set in the executor shared from", what);
  if ((ex->arg_flags[arg] & MR_GRAPH_ARG_LINKED) && ex->entries[eid].data == from->entries[feid].data)
    return 0; /* the same linked param */
  if (mr_graph_executor_check_settable(ex, "share_params", arg) != 0) return -1;
  if (mr_graph_check_value("share_params", what, &ex->entries[eid], &from->entries[feid]) != 0)
    return -1;
  /* Memory of `from`'s own that no object owns (its arena, a linked param) is shared as is;
   * else through a tensor that keeps it alive (not made here: `from` is not locked). */
  if ((from->ext[feid] || from->slots[fs]) && mr_graph_executor_entry(from, feid, &owner) != 0)
    return -1;
  mr_graph_set_entry_data(ex, eid, from->entries[feid].data, owner);
  mr_object_release(owner);
  mr_graph_executor_arg_set(ex, arg, MR_GRAPH_ARG_SET | MR_GRAPH_ARG_PARAM);
  return 0;
}

/* Mean seconds per call of each node (0 for inputs) over `repeat` runs of `number`
 * calls each (both at least 1), after one full run. */
int mr_graph_executor_time_nodes(mr_graph_executor_t* ex, int number, int repeat,
                                 double* out_seconds) {
  uint32_t i;
  int r, k;
  if (mr_graph_executor_run_upto(ex, UINT32_MAX) != 0) return -1;
  memset(out_seconds, 0, ex->g->num_nodes * sizeof(double));
  for (r = 0; r < repeat; ++r)
    for (i = 0; i < ex->num_ops; ++i) {
      const mr_graph_op_t* op = &ex->ops[i];
      DLDevice dev = mr_graph_op_arg(ex, op->first + op->n - 1)->device;
      int64_t t0 = mr_now_ns();
      for (k = 0; k < number; ++k)
        if (mr_graph_run_op(ex, op) != 0) return -1;
      if (mr_device_stream_sync(dev, TVMFFIEnvGetStream(dev.device_type, dev.device_id)) != 0)
        return -1;
      out_seconds[op->nid] += (double)(mr_now_ns() - t0) * 1e-9 / number / repeat;
    }
  return 0;
}

/* ---- packed functions ---- */
/* An Array of the n objects (the references are moved into it; released on failure). */
static int array_of(TVMFFIObject** objs, uint32_t n, TVMFFIObject** out) {
  TVMFFIAny* items = (TVMFFIAny*)calloc(n + 1, sizeof(TVMFFIAny));
  uint32_t i;
  int status = items ? 0 : MR_OOM("an array");
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
  if (!objs) return MR_OOM("input info");
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
      mr_graph_read_params("share_params", a, n, 1, &names, &tensors) != 0)
    return -1;
  ns = mr_array_view(names);
  for (i = 0; i < ns->size && status == 0; ++i) {
    const char* name = mr_bytes_view(((TVMFFIAny*)ns->data)[i].v_obj)->data;
    if ((arg = mr_graph_find_arg(ex->g, name)) < 0) continue;
    if ((from_arg = mr_graph_find_arg(from->g, name)) < 0)
      status = MR_GRAPH_FAIL("share_params: the executor shared from has no input '%s'", name);
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
      return MR_GRAPH_FAIL("%s: the graph has no node named '%s'", func, name);
  }
  if (nid < 0 || nid >= (int64_t)ex->g->num_nodes)
    return MR_GRAPH_FAIL("%s: node %lld is out of range (%u nodes)", func, (long long)nid,
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
    return MR_GRAPH_FAIL("get_node_output: node %u has %u outputs, not %lld", (unsigned)nid,
                         (unsigned)ex->g->nodes[nid].num_outputs, (long long)idx + 1);
  return mr_graph_give_entry(ex, ex->g->row_ptr[nid] + (uint32_t)idx, a, 0, 0, out);
}

static int m_debug_get_output(mr_graph_executor_t* ex, const TVMFFIAny* a, int32_t n,
                              TVMFFIAny* out) {
  uint32_t nid;
  if (node_key(ex, "debug_get_output", a, n, &nid) != 0 ||
      mr_graph_executor_run_upto(ex, nid) != 0)
    return -1;
  return mr_graph_give_entry(ex, ex->g->row_ptr[nid], a, n, 1, out);
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
  if (number < 1 || repeat < 1 || number > 1000000 || repeat > 1000000)
    return MR_VALUE_ERROR("run_individual: number and repeat must be in [1, 1000000]");
  secs = (double*)calloc(ex->g->num_nodes, sizeof(double));
  if (!secs) return MR_OOM("node timings");
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

static const mr_graph_method_t k_extra_methods[] = {
    {"get_input_info", m_get_input_info},
    {"share_params", m_share_params},
    {"get_node_output", m_get_node_output},
    {"debug_get_output", m_debug_get_output},
    {"run_individual", m_run_individual},
    {"get_graph_json", m_get_graph_json},
    {NULL, NULL},
};

/* ---- global functions ---- */
/* tvm.graph_executor.create(graph_json, libmod, dev_type, dev_id, ...) */
static int g_create(void* self, const TVMFFIAny* a, int32_t n, TVMFFIAny* out) {
  static const char k_func[] = "tvm.graph_executor.create";
  DLDevice devs[MR_MAX_GRAPH_DEVICES];
  const char* json;
  size_t size;
  int ndev;
  TVMFFIObject* m;
  (void)self;
  if (n < 3 || mr_any_get_str(&a[0], &json, &size) != 0)
    return mr_graph_bad_arg(k_func, 0, "the graph JSON (a string)", n ? &a[0] : NULL);
  if (a[1].type_index != kTVMFFIModule) return mr_graph_bad_arg(k_func, 1, "a Module", &a[1]);
  if (mr_graph_arg_devices(k_func, a, n, 2, devs, &ndev) != 0 ||
      mr_graph_executor_new(json, size, a[1].v_obj, devs, ndev, &m) != 0)
    return -1;
  mr_any_set_object(out, m);
  return 0;
}

/* tvm.graph_executor_factory.create(graph_json, libmod, module_name, name0, arr0, ...) */
static int g_factory_create(void* self, const TVMFFIAny* a, int32_t n, TVMFFIAny* out) {
  static const char k_func[] = "tvm.graph_executor_factory.create";
  char name[MR_MAX_NAME];
  const char* json;
  size_t size;
  int32_t i, count = (n - 3) / 2;
  TVMFFIAny* items;
  TVMFFIObject *names = NULL, *tensors = NULL, *m = NULL;
  int status = 0;
  (void)self;
  if (n < 3 || (n - 3) % 2 || mr_any_get_str(&a[0], &json, &size) != 0)
    return MR_RAISE(kMrErrorType, "%s(graph_json, libmod, module_name, name0, arr0, ...) "
                         "takes a string, a Module, a name and name/tensor pairs", k_func);
  if (a[1].type_index != kTVMFFIModule) return mr_graph_bad_arg(k_func, 1, "a Module", &a[1]);
  if (mr_graph_arg_str(k_func, a, n, 2, name) != 0) return -1;
  if (!(items = (TVMFFIAny*)calloc(2 * (size_t)count + 1, sizeof(TVMFFIAny))))
    return MR_OOM("params");
  for (i = 0; i < count && status == 0; ++i) {
    items[i] = a[3 + 2 * i];
    items[count + i] = a[4 + 2 * i];
    if (mr_any_get_str(&items[i], &json, &size) != 0)
      status = mr_graph_bad_arg(k_func, 3 + 2 * i, "a parameter name", &items[i]);
    else if (items[count + i].type_index != kTVMFFITensor)
      status = mr_graph_bad_arg(k_func, 4 + 2 * i, "a Tensor", &items[count + i]);
  }
  (void)mr_any_get_str(&a[0], &json, &size);
  if (status == 0) status = mr_array_create(items, count, &names);
  if (status == 0) status = mr_array_create(items + count, count, &tensors);
  if (status == 0)
    status = mr_graph_factory_new(json, size, name, names, tensors, NULL, 0, NULL, &m);
  if (status == 0 && (status = mr_module_import(m, a[1].v_obj)) != 0) mr_object_release(m);
  if (status == 0) mr_any_set_object(out, m);
  mr_object_release(names);
  mr_object_release(tensors);
  free(items);
  return status;
}

static const mr_builtin_t k_globals[] = {
    {"tvm.graph_executor.create", g_create},
    {"tvm.graph_executor_factory.create", g_factory_create},
};

int mr_graph_executor_register(void) {
  /* The methods go in last: once they are set, everything is registered. */
  if (mr_atomic_load_int(&mr_graph_extra_methods)) return 0;
  if (mr_graph_register() != 0 ||
      mr_registry_set_table(k_globals, sizeof(k_globals) / sizeof(k_globals[0])) != 0)
    return -1;
  mr_atomic_store_int(&mr_graph_executor_lookup, mr_graph_executor_function);
  mr_atomic_store_int(&mr_graph_factory_lookup, mr_graph_factory_function);
  mr_atomic_store_int(&mr_graph_extra_methods, k_extra_methods);
  return 0;
}

/* ---- the C API: an executor from graph JSON (as tvm.graph_executor.create) ---- */
int mr_graph_executor_from_json(const char* graph_json, TVMFFIObject* lib, DLDevice dev,
                                TVMFFIObject** out_executor) {
  if (!graph_json) return MR_VALUE_ERROR("graph JSON is NULL");
  if (mr_graph_executor_register() != 0) return -1;
  return mr_graph_executor_new(graph_json, strlen(graph_json), lib, &dev, 1, out_executor);
}
