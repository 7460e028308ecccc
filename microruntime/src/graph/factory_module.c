/* The GraphExecutorFactory module's packed functions (TVM's): <module_name>(dev...) ->
 * GraphExecutor with the params set, get_graph_json, get_graph_params ([names, tensors])
 * (these three once every kernel resolves in the imports), and get_manifest (the manifest's
 * JSON, or None). mr_graph_executor_register makes them the factory's functions. */
#include <stdlib.h>
#include <string.h>

#include "executor.h"

#define MR_ERROR_FILE kMrFileGraphFactoryModule

enum { F_CREATE, F_JSON, F_PARAMS, F_MANIFEST };

typedef struct {
  TVMFFIObject* module; /* held by the function */
  int which;
} bound_t;

static int call_factory(void* self, const TVMFFIAny* a, int32_t n, TVMFFIAny* out) {
  int which = ((bound_t*)self)->which;
  mr_graph_factory_t* f = (mr_graph_factory_t*)mr_module_cast(((bound_t*)self)->module)->self;
  TVMFFIObject* obj = NULL;
  DLDevice devs[MR_MAX_GRAPH_DEVICES];
  int ndev, status = 0;
  switch (which) {
    case F_CREATE:
      status = mr_graph_arg_devices(f->module_name, a, n, 0, devs, &ndev) ||
               mr_graph_factory_create_executor(f->module, devs, ndev, &obj);
      break;
    case F_JSON:
      status = mr_str_create(f->json, f->json_size, &obj);
      break;
    case F_PARAMS: {
      TVMFFIAny pair[2];
      mr_any_set_object(&pair[0], f->names);
      mr_any_set_object(&pair[1], f->tensors);
      status = mr_array_create(pair, 2, &obj);
      break;
    }
    default:
      if (f->manifest) status = mr_str_create(f->manifest, f->manifest_size, &obj);
      break;
  }
  if (status != 0) return -1;
  if (obj) mr_any_set_object(out, obj);
  return 0;
}

static void free_call(void* self) {
  mr_object_release(((bound_t*)self)->module);
  free(self);
}

int mr_graph_factory_function(void* self, const char* name, TVMFFIObject** out) {
  mr_graph_factory_t* f = (mr_graph_factory_t*)self;
  int which;
  bound_t* bound;
  *out = NULL;
  if (strcmp(name, f->module_name) == 0) which = F_CREATE;
  else if (strcmp(name, "get_graph_json") == 0) which = F_JSON;
  else if (strcmp(name, "get_graph_params") == 0) which = F_PARAMS;
  else if (strcmp(name, "get_manifest") == 0) which = F_MANIFEST;
  else return 0;
  /* The manifest describes the model without running it, so it is there without the kernels
   * too (a file's manifest is read from the factory's payload alone); the other functions
   * first check that every kernel resolves. */
  if (which != F_MANIFEST && mr_graph_factory_check(f->module) != 0) return -1;
  if (!(bound = (bound_t*)malloc(sizeof(*bound)))) return MR_OOM("a function");
  bound->module = f->module;
  bound->which = which;
  mr_object_retain(f->module);
  if (mr_function_create_closure(bound, call_factory, free_call, out) != 0) {
    free_call(bound);
    return -1;
  }
  return 0;
}
