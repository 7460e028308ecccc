/* The GraphExecutor module's packed functions, with TVM's names and arguments:
 * set_input, set_input_zero_copy, set_output_zero_copy, run, get_output,
 * get_input, get_num_outputs, get_num_inputs, get_input_index, get_input_info,
 * load_params; the rest of TVM's set (get_input_info, share_params,
 * get_node_output, debug_get_output, run_individual, get_graph_json) is in extras.c.
 * Each Function holds the module. mr_graph_executor_register makes these the module's
 * functions; the C API for apps (api.c) calls the executor directly. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "executor.h"

#define MR_ERROR_FILE kMrFileGraphExecutorModule


void mr_graph_set_int(TVMFFIAny* out, int64_t v) {
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
      return MR_GRAPH_FAIL("%s: input index %lld is out of range (%u inputs)", func,
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
  return MR_GRAPH_FAIL("%s: the graph has no input named '%s' (inputs: %s)", func, name, known);
}

static int output_key(mr_graph_executor_t* ex, const char* func, const TVMFFIAny* a, int32_t n,
                      uint32_t* out) {
  int64_t i;
  if (mr_graph_arg_int(func, a, n, 0, &i) != 0) return -1;
  if (i < 0 || i >= (int64_t)ex->g->num_heads)
    return MR_GRAPH_FAIL("%s: output index %lld is out of range (%u outputs)", func,
                         (long long)i, (unsigned)ex->g->num_heads);
  *out = ex->g->heads[i];
  return 0;
}

/* Entry eid into `a[i]` (a tensor) when given, else as the result. */
int mr_graph_give_entry(mr_graph_executor_t* ex, uint32_t eid, const TVMFFIAny* a, int32_t n,
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
  if (mr_graph_executor_check_settable(ex, k_func, arg) != 0 ||
      mr_graph_executor_zero_copy(ex, k_func, mr_graph_arg_entry(ex->g, arg), what, &a[1]) != 0)
    return -1;
  mr_graph_executor_arg_set(ex, arg, MR_GRAPH_ARG_SET);
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
  return mr_graph_give_entry(ex, eid, a, n, 1, out);
}

static int m_get_input(mr_graph_executor_t* ex, const TVMFFIAny* a, int32_t n, TVMFFIAny* out) {
  uint32_t arg;
  if (input_key(ex, "get_input", a, n, 0, &arg) != 0) return -1;
  return mr_graph_give_entry(ex, mr_graph_arg_entry(ex->g, arg), a, n, 1, out);
}

static int m_get_num_outputs(mr_graph_executor_t* ex, const TVMFFIAny* a, int32_t n,
                             TVMFFIAny* out) {
  (void)a, (void)n;
  mr_graph_set_int(out, ex->g->num_heads);
  return 0;
}

static int m_get_num_inputs(mr_graph_executor_t* ex, const TVMFFIAny* a, int32_t n,
                            TVMFFIAny* out) {
  (void)a, (void)n;
  mr_graph_set_int(out, ex->g->num_args);
  return 0;
}

static int m_get_input_index(mr_graph_executor_t* ex, const TVMFFIAny* a, int32_t n,
                             TVMFFIAny* out) {
  char name[MR_MAX_NAME];
  if (mr_graph_arg_str("get_input_index", a, n, 0, name) != 0) return -1;
  mr_graph_set_int(out, mr_graph_find_arg(ex->g, name));
  return 0;
}

/* The params blob in a[i]: names and tensors. */
int mr_graph_read_params(const char* func, const TVMFFIAny* a, int32_t n, int i,
                       TVMFFIObject** names, TVMFFIObject** tensors) {
  const char* data;
  size_t size;
  if (i >= n || mr_any_get_str(&a[i], &data, &size) != 0)
    return mr_graph_bad_arg(func, i, "the bytes of a params file", i < n ? &a[i] : NULL);
  if (mr_params_load(data, size, names, tensors) != 0) return MR_GRAPH_REFAIL(func);
  return 0;
}

static int m_load_params(mr_graph_executor_t* ex, const TVMFFIAny* a, int32_t n,
                         TVMFFIAny* out) {
  const char* data;
  size_t size;
  (void)out;
  if (n < 1 || mr_any_get_str(&a[0], &data, &size) != 0)
    return mr_graph_bad_arg("load_params", 0, "the bytes of a params file", n ? &a[0] : NULL);
  return mr_graph_executor_load(ex, data, size);
}

static const mr_graph_method_t k_methods[] = {
    {"set_input", m_set_input},
    {"set_input_zero_copy", m_set_input_zero_copy},
    {"set_output_zero_copy", m_set_output_zero_copy},
    {"run", m_run},
    {"get_output", m_get_output},
    {"get_input", m_get_input},
    {"get_num_outputs", m_get_num_outputs},
    {"get_num_inputs", m_get_num_inputs},
    {"get_input_index", m_get_input_index},
    {"load_params", m_load_params},
    {NULL, NULL},
};

const mr_graph_method_t* mr_graph_extra_methods;

typedef struct {
  TVMFFIObject* module;
  mr_graph_method_fn fn;
} bound_t;

/* Runs a method with the executor's lock held (calls from several threads take turns). */
static int call_bound(void* self, const TVMFFIAny* a, int32_t n, TVMFFIAny* out) {
  bound_t* b = (bound_t*)self;
  mr_graph_executor_t* ex = (mr_graph_executor_t*)mr_module_cast(b->module)->self;
  int status;
  mr_mutex_lock(&ex->lock);
  status = b->fn(ex, a, n, out);
  mr_mutex_unlock(&ex->lock);
  return status;
}

static void free_bound(void* self) {
  mr_object_release(((bound_t*)self)->module);
  free(self);
}

static const mr_graph_method_t* find_method(const mr_graph_method_t* m, const char* name) {
  for (; m && m->name; ++m)
    if (strcmp(m->name, name) == 0) return m;
  return NULL;
}

int mr_graph_executor_function(void* self, const char* name, TVMFFIObject** out) {
  mr_graph_executor_t* ex = (mr_graph_executor_t*)self;
  /* (the atomic load of a pointer: the extras may be registered by another thread) */
  const mr_graph_method_t* m = find_method(k_methods, name);
  bound_t* b;
  *out = NULL;
  if (!m) m = find_method(mr_atomic_load_int(&mr_graph_extra_methods), name);
  if (!m) return 0;
  if (!(b = (bound_t*)malloc(sizeof(*b)))) return MR_OOM("a function");
  b->module = ex->module;
  b->fn = m->fn;
  mr_object_retain(ex->module);
  if (mr_function_create_closure(b, call_bound, free_bound, out) != 0) {
    free_bound(b);
    return -1;
  }
  return 0;
}
