/* Module loaders by kind: the one {kind, loader} table through which every module of a
 * library blob other than the library itself is made (module_library.c). Register calls
 * fill it: mr_graph_register, mr_vm_register, mr_gpu_register, or an app's own
 * mr_module_loader_register; the core names none of them. The same call makes the loader
 * TVM's global function ffi.Module.load_from_bytes.<kind> too (so Python and TVM-style
 * callers reach it by name).
 *
 * A kind missing from the table may still have such a global function, registered by
 * someone else (a loader written in Python, say): the blob loader calls that one, as TVM
 * does, handing it a Bytes copy of the payload. */
#include <string.h>

#include "module.h"

#define MR_ERROR_FILE kMrFileModuleLoader

#define LOAD_FROM_BYTES "ffi.Module.load_from_bytes."

static mr_symtab_t g_loaders = MR_SYMTAB_INIT(MR_MAX_MODULE_LOADERS, "module loaders");
static MR_THREAD_LOCAL TVMFFIObject* g_payload_owner;

mr_module_loader_t mr_module_loader_find(const char* kind) {
  mr_module_loader_t loader = NULL;
  void* p = mr_symtab_get(&g_loaders, kind);
  if (p) memcpy(&loader, &p, sizeof(p));
  return loader;
}

/* ffi.Module.load_from_bytes.<kind>(bytes); self is the loader of the kind. */
static int load_global(void* self, const TVMFFIAny* args, int32_t n, TVMFFIAny* result) {
  mr_module_loader_t loader;
  const char* data;
  size_t size;
  TVMFFIObject *mod, *outer = g_payload_owner;
  int status;
  memcpy(&loader, &self, sizeof(loader));
  if (n != 1 || mr_any_get_str(&args[0], &data, &size) != 0)
    return MR_RAISE(kMrErrorType, LOAD_FROM_BYTES "<kind> takes one bytes argument");
  g_payload_owner = NULL; /* the caller's bytes, even inside a library's loading */
  status = loader(data, size, &mod);
  g_payload_owner = outer;
  if (status != 0) return -1;
  mr_any_set_object(result, mod);
  return 0;
}

int mr_module_loader_register(const char* kind, mr_module_loader_t loader) {
  char name[sizeof(LOAD_FROM_BYTES) + MR_MAX_MODULE_KIND];
  TVMFFIObject* f;
  void* p;
  int status;
  if (!kind || !loader || strlen(kind) >= MR_MAX_MODULE_KIND)
    return MR_VALUE_ERROR("loader kind or function invalid");
  if (mr_module_loader_find(kind) == loader) return 0; /* registered already */
  memcpy(&p, &loader, sizeof(p));
  if (mr_function_create_closure(p, load_global, NULL, &f) != 0) return -1;
  (void)mr_concat(name, sizeof(name), LOAD_FROM_BYTES, kind, NULL);
  status = mr_registry_set(name, f, 1);
  mr_object_release(f);
  /* The table last: a kind in it has its global too. */
  return status != 0 ? status : mr_symtab_set(&g_loaders, kind, p);
}

int mr_module_load_from_bytes(const char* kind, const char* data, size_t size,
                              TVMFFIObject** out_module) {
  return mr_module_load_from_library(kind, data, size, NULL, out_module);
}

/* The loader of the table runs with lib as the payload's owner (a loader may load modules of
 * its own: the outer owner is put back after); a global function gets a Bytes copy, and no
 * owner. */
int mr_module_load_from_library(const char* kind, const char* data, size_t size,
                                TVMFFIObject* lib, TVMFFIObject** out_module) {
  mr_module_loader_t loader = mr_module_loader_find(kind);
  char name[MR_MAX_NAME + sizeof(LOAD_FROM_BYTES)];
  TVMFFIObject *f = NULL, *bytes = NULL, *outer = g_payload_owner;
  TVMFFIAny arg, result;
  int status;
  if (loader) {
    g_payload_owner = lib;
    status = loader(data, size, out_module);
    g_payload_owner = outer;
    return status;
  }
  (void)mr_concat(name, sizeof(name), LOAD_FROM_BYTES, kind, NULL);
  if (mr_registry_get(name, &f) != 0)
    return MR_RAISE(kMrErrorRuntime,
                         "no loader registered for module kind '%s' (nor a global '%s')",
                         kind, name);
  memset(&result, 0, sizeof(result));
  status = mr_bytes_create(data, size, &bytes);
  if (status == 0) {
    mr_any_set_object(&arg, bytes);
    g_payload_owner = NULL;
    status = mr_function_call(f, &arg, 1, &result);
    g_payload_owner = outer;
  }
  if (status == 0 && result.type_index != kTVMFFIModule) {
    status = MR_RAISE(kMrErrorType, "loader '%s' did not return a Module", name);
    mr_any_clear(&result);
  }
  if (status == 0) *out_module = result.v_obj;
  mr_object_release(bytes);
  mr_object_release(f);
  return status;
}

TVMFFIObject* mr_module_payload_owner(void) { return g_payload_owner; }
