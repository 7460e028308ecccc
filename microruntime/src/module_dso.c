/* Loading a shared library through the platform's dynamic loader (platform_dl.c),
 * after checking its ELF headers against the file (elf_check.c). Builds without
 * dynamic loading use module_nodl.c instead. */
#include <string.h>

#include "module.h"

/* A library stays loaded for the life of the process, as in TVM, and so does its module
 * tree: generated code keeps functions it looked up through the library's module
 * (TVMFFIHandleInitOnce) in static variables of the library, borrowed from that module.
 * Loading the same library again therefore gives the same module. */
typedef struct {
  void* handle;
  TVMFFIObject* root;
} mr_loaded_t;

static mr_mutex_t g_loaded_mutex = MR_MUTEX_INIT;
static mr_loaded_t* g_loaded;
static size_t g_num_loaded, g_cap_loaded;

static TVMFFIObject* loaded_root(void* handle) {
  TVMFFIObject* root = NULL;
  size_t i;
  mr_mutex_lock(&g_loaded_mutex);
  for (i = 0; i < g_num_loaded && !root; ++i)
    if (g_loaded[i].handle == handle) root = g_loaded[i].root;
  if (root) mr_object_retain(root);
  mr_mutex_unlock(&g_loaded_mutex);
  return root;
}

/* Keeps a reference to root (an out-of-memory failure only loses the reuse). */
static void keep_loaded(void* handle, TVMFFIObject* root) {
  mr_mutex_lock(&g_loaded_mutex);
  if (mr_grow(&g_loaded, &g_cap_loaded, g_num_loaded, sizeof(*g_loaded), "loaded libraries") ==
      0) {
    mr_object_retain(root);
    g_loaded[g_num_loaded].handle = handle;
    g_loaded[g_num_loaded++].root = root;
  } else {
    mr_error_clear();
  }
  mr_mutex_unlock(&g_loaded_mutex);
}

int mr_module_load(const char* path, TVMFFIObject** out_module) {
  void* handle;
  TVMFFIObject* root;
  if (!path) return mr_value_error("module path is NULL");
  if (mr_elf_check_file(path) != 0) return -1;
  handle = mr_dl_open(path);
  if (!handle)
    return mr_error_setf(kMrErrorRuntime, "cannot load library '%s': %s", path, mr_dl_error());
  if ((root = loaded_root(handle)) != NULL) {
    mr_dl_close(handle); /* drops the reference this dlopen added */
    *out_module = root;
    return 0;
  }
  if (mr_module_library_create(handle, mr_dl_sym, mr_dl_symbol_size, "", 1, path, &root) != 0)
    return -1;
  keep_loaded(handle, root);
  *out_module = root;
  return 0;
}
