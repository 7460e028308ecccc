/* Loading a shared library with dlopen. The only file that uses dlopen/dlsym;
 * builds without dynamic loading use module_nodl.c instead. */
#include <dlfcn.h>
#include <string.h>

#include "module.h"

static void* dso_lookup(void* handle, const char* symbol) { return dlsym(handle, symbol); }

int mr_module_load(const char* path, TVMFFIObject** out_module) {
  void* handle;
  const char* err;
  if (!path) return mr_value_error("module path is NULL");
  handle = dlopen(path, RTLD_LAZY | RTLD_LOCAL);
  if (!handle) {
    err = dlerror();
    return mr_error_setf("RuntimeError", "cannot load library '%s': %s", path,
                         err ? err : "unknown dlopen error");
  }
  /* The library stays loaded for the life of the process, as in TVM. */
  return mr_module_library_create(handle, dso_lookup, "", 1, path, out_module);
}
