/* Module objects (type 73): library modules (symbol lookup), loader-made
 * modules (a get_function callback), imports, the function cache, and the
 * environment services kernels call (TVMFFIEnvModLookupFromImports,
 * TVMFFIHandleInitOnce). Loaders by kind: module_loader.c. */
#include <stdlib.h>
#include <string.h>

#include "module.h"

#define MR_ERROR_FILE kMrFileModule

static mr_mutex_t g_module_mutex = MR_MUTEX_INIT;

static char* dup_str(const char* s) { return mr_strndup(s, strlen(s)); }

static void module_deleter(void* obj, int flags) {
  mr_module_obj_t* m = (mr_module_obj_t*)obj;
  if (flags & kTVMFFIObjectDeleterFlagBitMaskStrong) {
    int64_t i;
    size_t j;
    for (i = 0; i < m->num_imports; ++i) mr_object_release(m->imports[i]);
    for (j = 0; j < m->cache_count; ++j) {
      mr_object_release(m->cache[j].func);
      free(m->cache[j].name);
    }
    if (m->self_deleter) m->self_deleter(m->self);
    free(m->imports);
    free(m->cache);
    free(m->type_key);
    free(m->prefix);
    m->imports = NULL;
    m->cache = NULL;
    m->num_imports = 0;
    m->cache_count = 0;
  }
  if (flags & kTVMFFIObjectDeleterFlagBitMaskWeak) free(obj);
}

static int module_alloc(const char* type_key, mr_module_obj_t** out) {
  mr_module_obj_t* m =
      (mr_module_obj_t*)mr_object_alloc(sizeof(*m), kTVMFFIModule, module_deleter, "a Module");
  if (!m) return -1;
  m->type_key = dup_str(type_key);
  if (!m->type_key) {
    free(m);
    return MR_OOM("a Module");
  }
  *out = m;
  return 0;
}

int mr_module_create(const char* type_key, void* self, mr_module_get_function_t get_function,
                     void (*deleter)(void* self), TVMFFIObject** out_module) {
  mr_module_obj_t* m;
  if (!type_key || !get_function)
    return MR_VALUE_ERROR("module type key and get_function are required");
  if (module_alloc(type_key, &m) != 0) return -1;
  m->self = self;
  m->get_function = get_function;
  m->self_deleter = deleter;
  *out_module = &m->header;
  return 0;
}

int mr_module_library_new(void* handle, mr_symbol_lookup_t lookup, const char* prefix,
                          TVMFFIObject** out_module) {
  mr_module_obj_t* m;
  if (module_alloc("library", &m) != 0) return -1;
  m->lib_handle = handle;
  m->lookup = lookup;
  m->prefix = dup_str(prefix ? prefix : "");
  if (!m->prefix) {
    mr_object_release(&m->header);
    return MR_OOM("a Module");
  }
  *out_module = &m->header;
  return 0;
}

/* Looks up head + prefix + name, then head + name. */
static void* lookup_prefixed(mr_module_obj_t* m, const char* head, const char* name) {
  char buf[2 * MR_MAX_NAME];
  void* p = NULL;
  if (m->prefix[0] && mr_concat(buf, sizeof(buf), head, m->prefix, name) == 0)
    p = m->lookup(m->lib_handle, buf);
  if (!p && mr_concat(buf, sizeof(buf), head, name, NULL) == 0)
    p = m->lookup(m->lib_handle, buf);
  return p;
}

void* mr_module_library_symbol(TVMFFIObject* module, const char* symbol) {
  mr_module_obj_t* m = mr_module_cast(module);
  return m && m->lookup ? lookup_prefixed(m, "", symbol) : NULL;
}

/* Caller holds the module mutex. */
static TVMFFIObject* cache_find(mr_module_obj_t* m, const char* name) {
  size_t i;
  for (i = 0; i < m->cache_count; ++i)
    if (strcmp(m->cache[i].name, name) == 0)
      return m->cache[i].func;
  return NULL;
}

/* The cached function (borrowed: the cache holds it while m lives), or NULL. */
static TVMFFIObject* cache_get(mr_module_obj_t* m, const char* name) {
  TVMFFIObject* f;
  mr_mutex_lock(&g_module_mutex);
  f = cache_find(m, name);
  mr_mutex_unlock(&g_module_mutex);
  return f;
}

static int check_name(const char* name) {
  if (!name || strlen(name) >= MR_MAX_NAME)
    return MR_VALUE_ERROR("function name is NULL or longer than %d bytes", MR_MAX_NAME - 1);
  return 0;
}

/* Adds `func` (borrowed) to the cache; returns the cached function (which may
 * be another thread's) or NULL when out of memory. */
static TVMFFIObject* cache_insert(mr_module_obj_t* m, const char* name, TVMFFIObject* func) {
  TVMFFIObject* hit;
  char* copy;
  mr_mutex_lock(&g_module_mutex);
  hit = cache_find(m, name);
  if (hit) goto done;
  if (mr_grow(&m->cache, &m->cache_cap, m->cache_count, sizeof(*m->cache), "a function cache"))
    goto done;
  copy = dup_str(name);
  if (!copy) goto done;
  mr_object_retain(func);
  m->cache[m->cache_count].name = copy;
  m->cache[m->cache_count].func = func;
  ++m->cache_count;
  hit = func;
done:
  mr_mutex_unlock(&g_module_mutex);
  return hit;
}

/* *out is a new reference or NULL. A library function holds its module, so the
 * module (and the library context its code reads) lives as long as the function;
 * for that reason these functions are not cached in the module. */
static int own_function(mr_module_obj_t* m, const char* name, TVMFFIObject** out) {
  TVMFFISafeCallType fn;
  void* sym;
  if (!m->lookup) return m->get_function(m->self, name, out);
  sym = lookup_prefixed(m, "__tvm_ffi_", name);
  if (!sym) {
    *out = NULL;
    return 0;
  }
  memcpy(&fn, &sym, sizeof(fn));
  return mr_function_from_owned_symbol(fn, &m->header, out);
}

static int get_function(mr_module_obj_t* m, const char* name, int query_imports,
                        TVMFFIObject** out);

/* The index-th import of m with a new reference, or NULL past the end. Imports
 * may be added on another thread meanwhile (the array is reallocated then). */
static TVMFFIObject* import_ref(mr_module_obj_t* m, int64_t index) {
  TVMFFIObject* im = NULL;
  mr_mutex_lock(&g_module_mutex);
  if (index >= 0 && index < m->num_imports) {
    im = m->imports[index];
    mr_object_retain(im);
  }
  mr_mutex_unlock(&g_module_mutex);
  return im;
}

/* Searches the imports of m, depth first; *out stays NULL when none has it. */
static int import_function(mr_module_obj_t* m, const char* name, TVMFFIObject** out) {
  TVMFFIObject* im;
  int64_t i;
  int status = 0;
  for (i = 0; status == 0 && !*out && (im = import_ref(m, i)) != NULL; ++i) {
    status = get_function((mr_module_obj_t*)im, name, 1, out);
    mr_object_release(im);
  }
  return status;
}

static int get_function(mr_module_obj_t* m, const char* name, int query_imports,
                        TVMFFIObject** out) {
  TVMFFIObject* f = NULL;
  if (own_function(m, name, &f) != 0 || (query_imports && import_function(m, name, &f) != 0))
    return -1;
  *out = f;
  return 0;
}

int mr_module_get_function(TVMFFIObject* module, const char* name, int query_imports,
                           TVMFFIObject** out_func) {
  mr_module_obj_t* m = mr_module_cast(module);
  if (!m) return MR_RAISE(kMrErrorType, "get_function: not a Module");
  if (check_name(name) != 0) return -1;
  return get_function(m, name, query_imports, out_func);
}

int mr_module_implements(TVMFFIObject* module, const char* name, int query_imports) {
  TVMFFIObject* f = NULL;
  if (mr_module_get_function(module, name, query_imports, &f) != 0) {
    mr_error_clear();
    return 0;
  }
  mr_object_release(f);
  return f != NULL;
}

static int reaches(mr_module_obj_t* from, mr_module_obj_t* target, int depth) {
  int64_t i;
  if (from == target) return 1;
  if (depth > MR_MAX_BLOB_MODULES) return 1;
  for (i = 0; i < from->num_imports; ++i)
    if (reaches((mr_module_obj_t*)from->imports[i], target, depth + 1)) return 1;
  return 0;
}

int mr_module_import(TVMFFIObject* module, TVMFFIObject* imported) {
  mr_module_obj_t *m = mr_module_cast(module), *im = mr_module_cast(imported);
  int status = 0;
  if (!m || !im) return MR_RAISE(kMrErrorType, "import: not a Module");
  mr_mutex_lock(&g_module_mutex);
  if (reaches(im, m, 0)) {
    status = MR_VALUE_ERROR("import would create a cycle of modules");
  } else {
    status = mr_grow(&m->imports, &m->cap_imports, (size_t)m->num_imports, sizeof(*m->imports),
                     "module imports");
  }
  if (status == 0) {
    mr_object_retain(imported);
    m->imports[m->num_imports++] = imported;
  }
  mr_mutex_unlock(&g_module_mutex);
  return status;
}

const char* mr_module_type_key(TVMFFIObject* module) {
  mr_module_obj_t* m = mr_module_cast(module);
  return m ? m->type_key : NULL;
}

int64_t mr_module_num_imports(TVMFFIObject* module) {
  mr_module_obj_t* m = mr_module_cast(module);
  int64_t n = 0;
  if (!m) return 0;
  mr_mutex_lock(&g_module_mutex);
  n = m->num_imports;
  mr_mutex_unlock(&g_module_mutex);
  return n;
}

TVMFFIObject* mr_module_import_at(TVMFFIObject* module, int64_t index) {
  mr_module_obj_t* m = mr_module_cast(module);
  TVMFFIObject* im = m ? import_ref(m, index) : NULL;
  mr_object_release(im); /* borrowed: the module holds its imports for its lifetime */
  return im;
}

/* ---- services for generated code ---- */
int TVMFFIEnvModLookupFromImports(TVMFFIObjectHandle library_ctx, const char* func_name,
                                  TVMFFIObjectHandle* out) {
  mr_module_obj_t* m = mr_module_cast((TVMFFIObject*)library_ctx);
  TVMFFIObject *f = NULL, *cached;
  if (!m) return MR_RAISE(kMrErrorRuntime, "library context is not a Module");
  if (check_name(func_name) != 0) return -1;
  cached = cache_get(m, func_name);
  if (cached) {
    *out = cached;
    return 0;
  }
  if (import_function(m, func_name, &f) != 0) return -1;
  if (!f && mr_registry_get(func_name, &f) != 0)
    return MR_RAISE(kMrErrorRuntime,
                         "function '%s' is not in the imports or the global registry",
                         func_name);
  cached = cache_insert(m, func_name, f);
  mr_object_release(f);
  if (!cached) return MR_OOM("the module function cache");
  *out = cached;
  return 0;
}

static mr_mutex_t g_init_once_mutex; /* recursive: an init may run another InitOnce */
static mr_once_t g_init_once_mutex_once = MR_ONCE_INIT;

static void init_once_mutex(void) { mr_mutex_init_recursive(&g_init_once_mutex); }

int TVMFFIHandleInitOnce(void** handle_addr, int (*init)(void** result)) {
  int status = 0;
  void* result = NULL;
  if (!handle_addr || !init) return MR_VALUE_ERROR("HandleInitOnce: NULL argument");
  mr_once(&g_init_once_mutex_once, init_once_mutex);
  mr_mutex_lock(&g_init_once_mutex);
  if (*handle_addr == NULL) {
    status = init(&result);
    if (status == 0) *handle_addr = result;
  }
  mr_mutex_unlock(&g_init_once_mutex);
  return status;
}
