/* The global function registry: name -> Function, guarded by a mutex; the
 * runtime's own global functions (builtins.c) are registered on first use. */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

#define MR_ERROR_FILE kMrFileRegistry

typedef struct {
  char* name;
  TVMFFIObject* func;
} mr_registry_entry_t;

static mr_mutex_t g_registry_mutex = MR_MUTEX_INIT;
static mr_registry_entry_t* g_entries;
static size_t g_count, g_capacity;
static mr_once_t g_builtins_once = MR_ONCE_INIT;

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
    return MR_RAISE(kMrErrorType, "only Functions can be registered");
  if (len == 0 || len >= MR_MAX_NAME)
    return MR_VALUE_ERROR("invalid global function name length %zu", len);
  mr_mutex_lock(&g_registry_mutex);
  e = find(name, len);
  if (e) {
    if (!override) {
      status = MR_VALUE_ERROR("global function '%.*s' is already registered",
                              (int)len, name);
    } else {
      mr_object_retain(func);
      replaced = e->func;
      e->func = func;
    }
  } else if (g_count >= MR_MAX_GLOBAL_FUNCS) {
    status = MR_RAISE(kMrErrorRuntime, "too many global functions");
  } else {
    if (mr_grow(&g_entries, &g_capacity, g_count, sizeof(*g_entries), "the registry") != 0) {
      status = -1;
      goto done;
    }
    copy = mr_strndup(name, len);
    if (!copy) {
      status = MR_OOM("a registry name");
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
  if (!name) return MR_VALUE_ERROR("name is NULL");
  mr_registry_ensure_builtins();
  return registry_set(name, strlen(name), func, override);
}

int mr_registry_get(const char* name, TVMFFIObject** out_func) {
  TVMFFIObject* f;
  if (!name) return MR_VALUE_ERROR("name is NULL");
  f = registry_lookup(name, strlen(name));
  if (!f) return MR_RAISE(kMrErrorKey, "global function '%s' is not registered", name);
  *out_func = f;
  return 0;
}

int mr_registry_remove(const char* name) {
  mr_registry_entry_t* e;
  TVMFFIObject* f = NULL;
  if (!name) return MR_VALUE_ERROR("name is NULL");
  mr_mutex_lock(&g_registry_mutex);
  e = find(name, strlen(name));
  if (e) {
    f = e->func;
    free(e->name);
    *e = g_entries[--g_count];
  }
  mr_mutex_unlock(&g_registry_mutex);
  if (!f) return MR_RAISE(kMrErrorKey, "global function '%s' is not registered", name);
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
    return MR_OOM("the registry list");
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
  if (!name) return MR_VALUE_ERROR("name is NULL");
  mr_registry_ensure_builtins();
  return registry_set(name->data, name->size, (TVMFFIObject*)f, override);
}

int TVMFFIFunctionGetGlobal(const TVMFFIByteArray* name, TVMFFIObjectHandle* out) {
  if (!name) return MR_VALUE_ERROR("name is NULL");
  *out = registry_lookup(name->data, name->size);
  return 0;
}

int mr_registry_set_table(const mr_builtin_t* table, size_t count) {
  size_t i;
  int status = 0;
  for (i = 0; status == 0 && i < count; ++i) {
    TVMFFIObject* f;
    status = mr_function_create_closure(NULL, table[i].call, NULL, &f);
    if (status == 0) {
      status = registry_set(table[i].name, strlen(table[i].name), f, 1);
      mr_object_release(f);
    }
  }
  return status;
}

/* The runtime's own (builtins.c) go in once, before the first use of the registry. */
static void register_builtins(void) {
  size_t n;
  const mr_builtin_t* table = mr_builtins(&n);
  (void)mr_registry_set_table(table, n);
}

void mr_registry_ensure_builtins(void) { mr_once(&g_builtins_once, register_builtins); }
