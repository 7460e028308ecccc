/* Loading a shared library through the platform's dynamic loader (platform_dl.c),
 * after checking its ELF headers against the file (elf_check.c). Builds without
 * dynamic loading use module_nodl.c instead. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "module.h"

#define MR_ERROR_FILE kMrFileModuleDso

/* A library stays loaded for the life of the process, as in TVM, and so does its module
 * tree: generated code keeps functions it looked up through the library's module
 * (TVMFFIHandleInitOnce) in static variables of the library, borrowed from that module.
 * Loading the same file again therefore gives the same module.
 *
 * "The same file" is the same contents: device, inode, size and modification time. The
 * dynamic loader hands back the library it already has for a path (or an inode) even
 * when the file was replaced since (a recompile, an `mv`), so a replaced file is loaded
 * from a private copy instead, and the old module keeps running the old code. */
typedef struct {
  void* handle;
  TVMFFIObject* root;
  char* path; /* as given to mr_module_load */
  mr_file_id_t id;
} mr_loaded_t;

static mr_mutex_t g_loaded_mutex = MR_MUTEX_INIT;
static mr_loaded_t* g_loaded;
static size_t g_num_loaded, g_cap_loaded;

static int same_file(const mr_file_id_t* a, const mr_file_id_t* b) {
  return a->dev == b->dev && a->ino == b->ino;
}

static int same_contents(const mr_file_id_t* a, const mr_file_id_t* b) {
  return same_file(a, b) && a->size == b->size && a->mtime_sec == b->mtime_sec &&
         a->mtime_nsec == b->mtime_nsec;
}

/* Caller holds g_loaded_mutex. The root loaded from the file `id` (a new reference),
 * or NULL; *out_replaced tells whether the loader knows an older version of the file
 * by its path or inode. */
static TVMFFIObject* find_loaded(const char* path, const mr_file_id_t* id, int* out_replaced) {
  size_t i;
  *out_replaced = 0;
  for (i = 0; i < g_num_loaded; ++i) {
    if (same_contents(&g_loaded[i].id, id)) {
      mr_object_retain(g_loaded[i].root);
      return g_loaded[i].root;
    }
    if (same_file(&g_loaded[i].id, id) || strcmp(g_loaded[i].path, path) == 0)
      *out_replaced = 1;
  }
  return NULL;
}

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
static void keep_loaded(void* handle, TVMFFIObject* root, const char* path,
                        const mr_file_id_t* id) {
  char* copy = mr_strndup(path, strlen(path));
  mr_mutex_lock(&g_loaded_mutex);
  if (copy && mr_grow(&g_loaded, &g_cap_loaded, g_num_loaded, sizeof(*g_loaded),
                      "loaded libraries") == 0) {
    mr_object_retain(root);
    g_loaded[g_num_loaded].handle = handle;
    g_loaded[g_num_loaded].root = root;
    g_loaded[g_num_loaded].path = copy;
    g_loaded[g_num_loaded++].id = *id;
    copy = NULL;
  } else {
    free(copy);
    mr_error_clear();
  }
  mr_mutex_unlock(&g_loaded_mutex);
}

int mr_module_load(const char* path, TVMFFIObject** out_module) {
  void* handle;
  TVMFFIObject* root;
  mr_file_id_t id;
  int replaced;
  if (!path) return MR_VALUE_ERROR("module path is NULL");
  if (mr_file_id(path, &id) != 0)
    return MR_RAISE(kMrErrorRuntime, "cannot load library '%s': %s", path,
                         strerror(errno));
  mr_mutex_lock(&g_loaded_mutex);
  root = find_loaded(path, &id, &replaced);
  mr_mutex_unlock(&g_loaded_mutex);
  if (root) {
    *out_module = root;
    return 0;
  }
  if (mr_elf_check_file(path) != 0) return -1;
  handle = replaced ? mr_dl_open_copy(path) : mr_dl_open(path);
  if (!handle)
    return MR_RAISE(kMrErrorRuntime, "cannot load library '%s': %s", path, mr_dl_error());
  if ((root = loaded_root(handle)) != NULL) {
    mr_dl_close(handle); /* drops the reference this dlopen added */
    *out_module = root;
    return 0;
  }
  if (mr_module_library_create(handle, mr_dl_sym, mr_dl_symbol_size, "", 1, path, &root) != 0)
    return -1;
  keep_loaded(handle, root, path, &id);
  *out_module = root;
  return 0;
}
