/* Loading a shared library through the platform's dynamic loader (platform_dl.c),
 * after checking its ELF headers against the file (elf_check.c). Builds without
 * dynamic loading use module_nodl.c instead. */
#include "module.h"

int mr_module_load(const char* path, TVMFFIObject** out_module) {
  void* handle;
  if (!path) return mr_value_error("module path is NULL");
  if (mr_elf_check_file(path) != 0) return -1;
  handle = mr_dl_open(path);
  if (!handle)
    return mr_error_setf(kMrErrorRuntime, "cannot load library '%s': %s", path, mr_dl_error());
  /* The library stays loaded for the life of the process, as in TVM. */
  return mr_module_library_create(handle, mr_dl_sym, mr_dl_symbol_size, "", 1, path, out_module);
}
