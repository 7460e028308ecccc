/* The GraphExecutorFactory module (TVM's layout): the graph JSON, the params
 * and the name of its creator function ("default"), importing the kernel
 * library. Its payload (SaveToBinary in TVM):
 *   str graph_json; u64 count; vec<str> names; count tensor records (as in a
 *   params file); str module_name; then, Kiln's extension that TVM does not
 *   read, an optional str manifest (JSON, checked by manifest.c, with the checksums of
 *   the graph JSON and of the params: the bytes from the count to the last record).
 * Params the manifest lists as "linked_params" are not in the payload: the kernel library
 * holds them (linked_params.c), and executors read them there.
 * Its packed functions are in factory_module.c. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../params_format.h"
#include "executor.h"

#define MR_ERROR_FILE kMrFileGraphFactory

typedef mr_graph_factory_t factory_t;

static void factory_free(void* self) {
  factory_t* f = (factory_t*)self;
  if (!f) return;
  if (f->text_owner) {
    mr_object_release(f->text_owner);
  } else {
    free((void*)f->json);
    free((void*)f->manifest);
  }
  free(f->module_name);
  free(f->linked_args);
  free((void*)f->linked);
  mr_object_release(f->names);
  mr_object_release(f->tensors);
  mr_graph_free(f->graph);
  free(f);
}

static int factory_get_function(void* self, const char* name, TVMFFIObject** out);

static factory_t* factory_of(TVMFFIObject* module) {
  mr_module_obj_t* m = mr_module_cast(module);
  if (!m || m->get_function != factory_get_function) {
    MR_RAISE(kMrErrorType, "not a GraphExecutorFactory module");
    return NULL;
  }
  return (factory_t*)m->self;
}

static const char* item_str(TVMFFIObject* array, int64_t i) {
  return mr_bytes_view(((TVMFFIAny*)mr_array_view(array)->data)[i].v_obj)->data;
}

static DLTensor* item_tensor(TVMFFIObject* array, int64_t i) {
  return mr_tensor_dl(((TVMFFIAny*)mr_array_view(array)->data)[i].v_obj);
}

/* Each param is an input of the graph, of its shape and dtype. */
static int check_params(const factory_t* f) {
  const mr_graph_t* g = f->graph;
  int64_t i, n = mr_array_view(f->names)->size, arg;
  for (i = 0; i < n; ++i) {
    const char* name = item_str(f->names, i);
    DLTensor want;
    char what[MR_MAX_NAME + 16];
    if ((arg = mr_graph_find_arg(g, name)) < 0)
      return MR_GRAPH_FAIL("GraphExecutorFactory: parameter '%s' is not an input of the graph",
                           name);
    memset(&want, 0, sizeof(want));
    want.ndim = g->entries[mr_graph_arg_entry(g, (uint32_t)arg)].ndim;
    want.dtype = g->entries[mr_graph_arg_entry(g, (uint32_t)arg)].dtype;
    want.shape = g->shapes + g->entries[mr_graph_arg_entry(g, (uint32_t)arg)].shape_at;
    if (mr_graph_check_value("GraphExecutorFactory", MR_MESSAGE_TEXT(what, "parameter '%s'", name),
                             &want, item_tensor(f->tensors, i)))
      return -1;
  }
  return 0;
}

int mr_graph_factory_new(const char* json, size_t json_size, const char* module_name,
                         TVMFFIObject* names, TVMFFIObject* tensors, const char* manifest,
                         size_t manifest_size, TVMFFIObject* text_owner,
                         TVMFFIObject** out_module) {
  factory_t* f = (factory_t*)calloc(1, sizeof(factory_t));
  if (!f) return MR_OOM("a GraphExecutorFactory");
  f->text_owner = text_owner;
  mr_object_retain(text_owner);
  f->json = text_owner ? json : mr_strndup(json, json_size);
  f->json_size = json_size;
  f->module_name = mr_strndup(module_name, strlen(module_name));
  f->manifest = !manifest || text_owner ? manifest : mr_strndup(manifest, manifest_size);
  f->manifest_size = manifest_size;
  f->names = names;
  f->tensors = tensors;
  mr_object_retain(names);
  mr_object_retain(tensors);
  if (!f->json || !f->module_name || (manifest && !f->manifest)) {
    MR_OOM("a GraphExecutorFactory");
    goto fail;
  }
  if (mr_graph_parse(json, json_size, &f->graph) != 0 || check_params(f) != 0) goto fail;
  if (!(f->linked_args = (uint8_t*)calloc(f->graph->num_args + 1, 1))) {
    MR_OOM("a GraphExecutorFactory");
    goto fail;
  }
  if ((manifest &&
       mr_graph_manifest_check(manifest, manifest_size, f->graph, names, f->linked_args) != 0) ||
      mr_module_create("GraphExecutorFactory", f, factory_get_function, factory_free,
                       &f->module) != 0)
    goto fail;
  *out_module = f->module;
  return 0;
fail:
  factory_free(f);
  return -1;
}

/* ---- the payload ---- */
/* A string field as a NUL-terminated copy (no NUL inside, shorter than max). */
static int read_name(mr_reader_t* r, const char* field, size_t max, char** out) {
  const char* s;
  uint64_t len;
  if (mr_read_bytes(r, field, &s, &len) != 0) return -1;
  if (len >= max || memchr(s, 0, (size_t)len))
    return MR_READER_BAD(r, field, len, "is too long or holds a NUL");
  *out = mr_strndup(s, (size_t)len);
  return *out ? 0 : MR_OOM(field);
}

int mr_graph_factory_load(const char* data, size_t size, TVMFFIObject** out_module) {
  mr_reader_t r = {NULL, 0, 0, 0, "GraphExecutorFactory"};
  const char *json, *manifest = NULL;
  uint64_t json_size, manifest_size = 0, count = 0, count2, params_at, params_end;
  TVMFFIObject *names = NULL, *tensors = NULL;
  char* module_name = NULL;
  int status = -1;
  r.p = (const unsigned char*)data;
  r.size = size;
  if (mr_read_bytes(&r, "graph_json", &json, &json_size) != 0) goto done;
  params_at = r.pos;
  if (mr_read_le(&r, 8, "param count", &count) != 0) goto done;
  if (count > MR_MAX_PARAMS || count > (r.size - r.pos) / 16) {
    MR_READER_BAD(&r, "param count", count, "exceeds the data");
    goto done;
  }
  if (mr_read_le(&r, 8, "name count", &count2) != 0) goto done;
  if (count2 != count) {
    MR_READER_BAD(&r, "name count", count2, "differs from the param count");
    goto done;
  }
  if (mr_params_read_lists(&r, count, "param name", NULL, &names, &tensors) != 0) goto done;
  params_end = r.pos;
  if (read_name(&r, "module_name", MR_MAX_NAME, &module_name) != 0) goto done;
  if (r.pos < r.size && mr_read_bytes(&r, "manifest", &manifest, &manifest_size) != 0) goto done;
  if (mr_reader_end(&r) != 0 ||
      (manifest && mr_graph_manifest_check_sums(manifest, (size_t)manifest_size, json,
                                                (size_t)json_size, r.p + params_at,
                                                (size_t)(params_end - params_at)) != 0))
    goto done;
  status = mr_graph_factory_new(json, (size_t)json_size, module_name, names, tensors, manifest,
                                (size_t)manifest_size, mr_module_payload_owner(), out_module);
done:
  free(module_name);
  mr_object_release(names);
  mr_object_release(tensors);
  return status;
}

/* ---- functions ---- */
int mr_graph_factory_check(TVMFFIObject* factory) {
  factory_t* f = factory_of(factory);
  const mr_graph_t* g;
  uint32_t nid;
  if (!f) return -1;
  if (mr_atomic_load_int(&f->checked)) return 0;
  g = f->graph;
  if (mr_module_num_imports(factory) < 1)
    return MR_GRAPH_FAIL("GraphExecutorFactory: no kernel library is imported");
  for (nid = 0; nid < g->num_nodes; ++nid) {
    const char* fn = g->nodes[nid].func_name;
    TVMFFIObject* func = NULL;
    if (g->nodes[nid].kind != MR_GRAPH_OP_CALL) continue;
    if (mr_module_get_function(mr_module_import_at(factory, 0), fn, 1, &func) != 0) return -1;
    if (!func)
      return MR_GRAPH_FAIL("GraphExecutorFactory: node %u ('%s') calls '%s', which the kernel "
                           "library does not define", (unsigned)nid, g->nodes[nid].name, fn);
    mr_object_release(func);
  }
  if (!f->linked &&
      mr_graph_linked_resolve(mr_module_import_at(factory, 0), g, f->linked_args, &f->linked))
    return -1;
  mr_atomic_store_int(&f->checked, 1);
  return 0;
}

static int create_executor(factory_t* f, const DLDevice* devs, int n, void* arena,
                           size_t arena_bytes, TVMFFIObject** out) {
  TVMFFIObject* ex_module;
  mr_graph_executor_t* ex;
  int64_t i, count = mr_array_view(f->names)->size;
  uint32_t arg;
  if (mr_graph_factory_check(f->module) != 0 ||
      mr_graph_executor_new_in(f->graph, f->module, f->json, f->json_size,
                               mr_module_import_at(f->module, 0), devs, n, arena, arena_bytes,
                               f->linked, &ex_module) != 0)
    return -1;
  ex = mr_graph_executor_of(ex_module);
  for (arg = 0; f->linked && arg < f->graph->num_args; ++arg)
    if (f->linked_args[arg])
      mr_graph_executor_arg_set(ex, arg, MR_GRAPH_ARG_SET | MR_GRAPH_ARG_PARAM |
                                             MR_GRAPH_ARG_LINKED);
  for (i = 0; i < count; ++i)
    if (mr_graph_executor_set_arg(
            ex, (uint32_t)mr_graph_find_arg(ex->g, item_str(f->names, i)),
            item_tensor(f->tensors, i), 1) != 0) {
      mr_object_release(ex_module);
      return -1;
    }
  *out = ex_module;
  return 0;
}

int mr_graph_factory_create_executor(TVMFFIObject* factory, const DLDevice* devs, int n,
                                     TVMFFIObject** out_executor) {
  factory_t* f = factory_of(factory);
  return f ? create_executor(f, devs, n, NULL, 0, out_executor) : -1;
}

int mr_graph_factory_create_executor_in(TVMFFIObject* factory, const DLDevice* devs, int n,
                                        void* arena, size_t arena_bytes,
                                        TVMFFIObject** out_executor) {
  factory_t* f = factory_of(factory);
  return f ? create_executor(f, devs, n, arena, arena_bytes, out_executor) : -1;
}

int mr_graph_factory_plan(TVMFFIObject* factory, const mr_graph_t** out_graph,
                          const char** out_manifest, size_t* out_manifest_size,
                          const DLTensor* const** out_linked) {
  factory_t* f = factory_of(factory);
  if (!f || mr_graph_factory_check(factory) != 0) return -1;
  *out_graph = f->graph;
  *out_linked = f->linked;
  *out_manifest = f->manifest;
  *out_manifest_size = f->manifest ? f->manifest_size : 0;
  return 0;
}

static int factory_get_function(void* self, const char* name, TVMFFIObject** out) {
  mr_graph_lookup_fn lookup = mr_atomic_load_int(&mr_graph_factory_lookup);
  *out = NULL;
  return lookup ? lookup(self, name, out) : 0;
}
