/* The graph executor's C API for apps (graph_executor.h), and its registration: the
 * "GraphExecutorFactory" module loader (TVM's global functions and the modules' packed
 * functions: extras.c, executor_module.c, factory_module.c). */
#include <stdlib.h>
#include <string.h>

#include "executor.h"

#define MR_ERROR_FILE kMrFileGraphApi

mr_graph_lookup_fn mr_graph_executor_lookup;
mr_graph_lookup_fn mr_graph_factory_lookup;

int mr_graph_register(void) {
  return mr_module_loader_register("GraphExecutorFactory", mr_graph_factory_load);
}

/* ---- the C API for apps ---- */
int mr_graph_model_open(const char* path, TVMFFIObject** out_model) {
  TVMFFIObject* m;
  const char* kind;
  if (mr_graph_register() != 0) return -1;
  if ((path && *path ? mr_module_load(path, &m) : mr_module_system_lib("", &m)) != 0) return -1;
  kind = mr_module_type_key(m);
  if (strcmp(kind, "GraphExecutorFactory") != 0) {
    MR_GRAPH_FAIL("'%s' holds no graph executor model (its root module is a '%s' module)",
                  path && *path ? path : "the system library", kind);
    mr_object_release(m);
    return -1;
  }
  if (mr_graph_factory_check(m) != 0) {
    mr_object_release(m);
    return -1;
  }
  *out_model = m;
  return 0;
}

int mr_graph_executor_create(TVMFFIObject* model, DLDevice dev, TVMFFIObject** out_executor) {
  return mr_graph_factory_create_executor(model, &dev, 1, out_executor);
}

int mr_graph_executor_set_input(TVMFFIObject* executor, const char* name, const void* data,
                                size_t nbytes) {
  mr_graph_executor_t* ex = mr_graph_executor_of(executor);
  DLTensor host;
  int64_t arg;
  int status;
  if (!ex) return -1;
  if (!name || (arg = mr_graph_find_arg(ex->g, name)) < 0)
    return MR_GRAPH_FAIL("set_input: the graph has no input named '%s'", name ? name : "(NULL)");
  mr_mutex_lock(&ex->lock);
  host = ex->entries[mr_graph_arg_entry(ex->g, (uint32_t)arg)];
  if (nbytes != mr_tensor_nbytes(&host) || (!data && nbytes)) {
    status = MR_GRAPH_FAIL("set_input: input '%s' holds %zu bytes, not %zu", name,
                           mr_tensor_nbytes(&host), nbytes);
  } else {
    host.data = (void*)data;
    host.device.device_type = kDLCPU;
    host.device.device_id = 0;
    status = mr_graph_executor_set_arg(ex, (uint32_t)arg, &host, 0);
  }
  mr_mutex_unlock(&ex->lock);
  return status;
}

int mr_graph_executor_load(mr_graph_executor_t* ex, const char* data, size_t size) {
  TVMFFIObject *names, *tensors;
  const TVMFFISeqCell *ns, *ts;
  int64_t i, arg;
  int status = 0;
  if (mr_params_load(data, size, &names, &tensors) != 0) return MR_GRAPH_REFAIL("load_params");
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

int mr_graph_executor_load_params(TVMFFIObject* executor, const void* data, size_t nbytes) {
  mr_graph_executor_t* ex = mr_graph_executor_of(executor);
  int status;
  if (!ex) return -1;
  mr_mutex_lock(&ex->lock);
  status = mr_graph_executor_load(ex, (const char*)data, nbytes);
  mr_mutex_unlock(&ex->lock);
  return status;
}

/* The executor, when `index` is one of its outputs (else NULL, the error recorded). */
static mr_graph_executor_t* head_of(TVMFFIObject* executor, const char* func, int64_t index) {
  mr_graph_executor_t* ex = mr_graph_executor_of(executor);
  if (ex && (index < 0 || index >= (int64_t)ex->g->num_heads)) {
    MR_GRAPH_FAIL("%s: output index %lld is out of range (%u outputs)", func, (long long)index,
                  (unsigned)ex->g->num_heads);
    return NULL;
  }
  return ex;
}

int mr_graph_executor_run(TVMFFIObject* executor) {
  mr_graph_executor_t* ex = mr_graph_executor_of(executor);
  int status;
  if (!ex) return -1;
  mr_mutex_lock(&ex->lock);
  status = mr_graph_executor_run_upto(ex, UINT32_MAX);
  mr_mutex_unlock(&ex->lock);
  return status;
}

int mr_graph_executor_get_output(TVMFFIObject* executor, int64_t index, void* data,
                                 size_t nbytes) {
  mr_graph_executor_t* ex = head_of(executor, "get_output", index);
  int status;
  if (!ex) return -1;
  mr_mutex_lock(&ex->lock);
  status = mr_tensor_copy_to_bytes(&ex->entries[ex->g->heads[index]], data, nbytes);
  mr_mutex_unlock(&ex->lock);
  return status;
}

int64_t mr_graph_executor_num_inputs(TVMFFIObject* executor) {
  mr_graph_executor_t* ex = mr_graph_executor_of(executor);
  return ex ? (int64_t)ex->g->num_args : -1;
}

int64_t mr_graph_executor_num_outputs(TVMFFIObject* executor) {
  mr_graph_executor_t* ex = mr_graph_executor_of(executor);
  return ex ? (int64_t)ex->g->num_heads : -1;
}

int64_t mr_graph_executor_output_bytes(TVMFFIObject* executor, int64_t index) {
  mr_graph_executor_t* ex = head_of(executor, "output_bytes", index);
  return ex ? (int64_t)ex->g->entries[ex->g->heads[index]].nbytes : -1;
}
