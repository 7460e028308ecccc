/* The global function registry: name -> Function, guarded by a mutex. */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

typedef struct {
  char* name;
  TVMFFIObject* func;
} mr_registry_entry_t;

static mr_mutex_t g_registry_mutex = MR_MUTEX_INIT;
static mr_registry_entry_t* g_entries;
static size_t g_count, g_capacity;
static pthread_once_t g_builtins_once = PTHREAD_ONCE_INIT;

/* Caller holds the mutex. */
static mr_registry_entry_t* find(const char* name, size_t len) {
  size_t i;
  for (i = 0; i < g_count; ++i)
    if (strlen(g_entries[i].name) == len && memcmp(g_entries[i].name, name, len) == 0)
      return &g_entries[i];
  return NULL;
}

static int registry_set(const char* name, size_t len, TVMFFIObject* func, int override) {
  mr_registry_entry_t* e;
  TVMFFIObject* replaced = NULL;
  char* copy;
  int status = 0;
  if (!func || func->type_index != kTVMFFIFunction)
    return mr_error_set("TypeError", "only Functions can be registered");
  if (len == 0 || len >= MR_MAX_NAME)
    return mr_value_error("invalid global function name length %zu", len);
  mr_mutex_lock(&g_registry_mutex);
  e = find(name, len);
  if (e) {
    if (!override) {
      status = mr_value_error("global function '%.*s' is already registered",
                              (int)len, name);
    } else {
      mr_object_retain(func);
      replaced = e->func;
      e->func = func;
    }
  } else if (g_count >= MR_MAX_GLOBAL_FUNCS) {
    status = mr_error_set("RuntimeError", "too many global functions");
  } else {
    if (mr_grow(&g_entries, &g_capacity, g_count, sizeof(*g_entries), "the registry") != 0) {
      status = -1;
      goto done;
    }
    copy = mr_strndup(name, len);
    if (!copy) {
      status = mr_error_oom("a registry name");
      goto done;
    }
    mr_object_retain(func);
    g_entries[g_count].name = copy;
    g_entries[g_count].func = func;
    ++g_count;
  }
done:
  mr_mutex_unlock(&g_registry_mutex);
  /* Outside the lock: the replaced function's deleter may use the registry. */
  mr_object_release(replaced);
  return status;
}

static TVMFFIObject* registry_lookup(const char* name, size_t len) {
  mr_registry_entry_t* e;
  TVMFFIObject* f = NULL;
  mr_registry_ensure_builtins();
  mr_mutex_lock(&g_registry_mutex);
  e = find(name, len);
  if (e) {
    f = e->func;
    mr_object_retain(f);
  }
  mr_mutex_unlock(&g_registry_mutex);
  return f;
}

int mr_registry_set(const char* name, TVMFFIObject* func, int override) {
  if (!name) return mr_value_error("name is NULL");
  mr_registry_ensure_builtins();
  return registry_set(name, strlen(name), func, override);
}

int mr_registry_get(const char* name, TVMFFIObject** out_func) {
  TVMFFIObject* f;
  if (!name) return mr_value_error("name is NULL");
  f = registry_lookup(name, strlen(name));
  if (!f) return mr_error_setf("KeyError", "global function '%s' is not registered", name);
  *out_func = f;
  return 0;
}

int mr_registry_remove(const char* name) {
  mr_registry_entry_t* e;
  TVMFFIObject* f = NULL;
  if (!name) return mr_value_error("name is NULL");
  mr_mutex_lock(&g_registry_mutex);
  e = find(name, strlen(name));
  if (e) {
    f = e->func;
    free(e->name);
    *e = g_entries[--g_count];
  }
  mr_mutex_unlock(&g_registry_mutex);
  if (!f) return mr_error_setf("KeyError", "global function '%s' is not registered", name);
  mr_object_release(f);
  return 0;
}

int mr_registry_list(TVMFFIObject** out_names) {
  TVMFFIAny* items;
  size_t i, n;
  int status = 0;
  mr_registry_ensure_builtins();
  mr_mutex_lock(&g_registry_mutex);
  n = g_count;
  items = (TVMFFIAny*)calloc(n ? n : 1, sizeof(TVMFFIAny));
  if (!items) {
    mr_mutex_unlock(&g_registry_mutex);
    return mr_error_oom("the registry list");
  }
  for (i = 0; i < n; ++i) {
    items[i].type_index = kTVMFFIRawStr;
    items[i].v_c_str = g_entries[i].name;
  }
  status = mr_array_create(items, (int64_t)n, out_names); /* names become Str */
  mr_mutex_unlock(&g_registry_mutex);
  free(items);
  return status;
}

int TVMFFIFunctionSetGlobal(const TVMFFIByteArray* name, TVMFFIObjectHandle f, int override) {
  if (!name) return mr_value_error("name is NULL");
  mr_registry_ensure_builtins();
  return registry_set(name->data, name->size, (TVMFFIObject*)f, override);
}

int TVMFFIFunctionGetGlobal(const TVMFFIByteArray* name, TVMFFIObjectHandle* out) {
  if (!name) return mr_value_error("name is NULL");
  *out = registry_lookup(name->data, name->size);
  return 0;
}

/* ---- built-in global functions ---- */
static int builtin_system_lib(void* self, const TVMFFIAny* args, int32_t n, TVMFFIAny* result) {
  const char* prefix = "";
  size_t len = 0;
  char buf[MR_MAX_NAME];
  TVMFFIObject* mod;
  (void)self;
  if (n > 1) return mr_error_set("TypeError", "ffi.SystemLib takes at most 1 argument");
  if (n == 1 && mr_any_get_str(&args[0], &prefix, &len) != 0) return -1;
  if (len >= sizeof(buf)) return mr_value_error("system library prefix too long");
  memcpy(buf, prefix, len);
  buf[len] = '\0';
  if (mr_module_system_lib(buf, &mod) != 0) return -1;
  mr_any_set_object(result, mod);
  return 0;
}

static int builtin_module_get_function(void* self, const TVMFFIAny* args, int32_t n,
                                       TVMFFIAny* result) {
  const char* name;
  size_t len;
  char buf[MR_MAX_NAME];
  TVMFFIObject* f;
  (void)self;
  if (n < 2 || n > 3)
    return mr_error_setf("TypeError",
                         "ffi.ModuleGetFunction(module, name, query_imports) takes 2 or 3 "
                         "arguments, got %d", (int)n);
  if (args[0].type_index != kTVMFFIModule)
    return mr_error_setf("TypeError",
                         "ffi.ModuleGetFunction: argument 'module' must be a Module (type index "
                         "%d), got type index %d", kTVMFFIModule, (int)args[0].type_index);
  if (mr_any_get_str(&args[1], &name, &len) != 0)
    return mr_error_setf("TypeError",
                         "ffi.ModuleGetFunction: argument 'name' must be a string, got type "
                         "index %d", (int)args[1].type_index);
  if (n == 3 && args[2].type_index != kTVMFFIBool && args[2].type_index != kTVMFFIInt)
    return mr_error_setf("TypeError",
                         "ffi.ModuleGetFunction: argument 'query_imports' must be a bool or an "
                         "int, got type index %d", (int)args[2].type_index);
  if (len >= sizeof(buf)) return mr_value_error("function name too long");
  memcpy(buf, name, len);
  buf[len] = '\0';
  if (mr_module_get_function(args[0].v_obj, buf, n == 3 && args[2].v_int64 != 0, &f) != 0)
    return -1;
  mr_any_set_object(result, f);
  return 0;
}

static void register_builtins(void) {
  static const struct {
    const char* name;
    TVMFFISafeCallType call;
  } k_builtins[] = {
      {"ffi.SystemLib", builtin_system_lib},
      {"ffi.ModuleGetFunction", builtin_module_get_function},
  };
  size_t i;
  for (i = 0; i < sizeof(k_builtins) / sizeof(k_builtins[0]); ++i) {
    TVMFFIObject* f;
    if (mr_function_create_closure(NULL, k_builtins[i].call, NULL, &f) != 0) continue;
    (void)registry_set(k_builtins[i].name, strlen(k_builtins[i].name), f, 1);
    mr_object_release(f);
  }
}

void mr_registry_ensure_builtins(void) { (void)pthread_once(&g_builtins_once, register_builtins); }
