/* Finishing a library module (.so or system library): filling the context
 * slots kernels call through, rebuilding the import tree from
 * __tvm_ffi__library_bin, and writing the module into __tvm_ffi__library_ctx. */
#include <stdlib.h>
#include <string.h>

#include "module.h"

/* ---- context symbols ---- */
typedef void (*mr_any_fn_t)(void);

static struct {
  const char* name;
  mr_any_fn_t fn;
} g_context[MR_MAX_CONTEXT_SYMBOLS] = {
    {"__TVMFFIFunctionCall", (mr_any_fn_t)TVMFFIFunctionCall},
    {"__TVMFFIErrorSetRaisedFromCStr", (mr_any_fn_t)TVMFFIErrorSetRaisedFromCStr},
    {"__TVMFFIErrorSetRaisedFromCStrParts", (mr_any_fn_t)TVMFFIErrorSetRaisedFromCStrParts},
    {"__TVMFFIEnvModLookupFromImports", (mr_any_fn_t)TVMFFIEnvModLookupFromImports},
    {"__TVMFFIHandleInitOnce", (mr_any_fn_t)TVMFFIHandleInitOnce},
    {"__TVMBackendAllocWorkspace", (mr_any_fn_t)TVMBackendAllocWorkspace},
    {"__TVMBackendFreeWorkspace", (mr_any_fn_t)TVMBackendFreeWorkspace},
    {"__TVMBackendParallelLaunch", (mr_any_fn_t)TVMBackendParallelLaunch},
    {"__TVMBackendParallelBarrier", (mr_any_fn_t)TVMBackendParallelBarrier},
    {"__TVMFFIEnvGetStream", (mr_any_fn_t)TVMFFIEnvGetStream},
};
static int g_num_context = 10;
static mr_mutex_t g_context_mutex = MR_MUTEX_INIT;

/* `name` must stay valid for the life of the process (it usually is a literal). */
int TVMFFIEnvModRegisterContextSymbol(const char* name, void* symbol) {
  int i, status = 0;
  if (!name) return mr_value_error("context symbol name is NULL");
  mr_mutex_lock(&g_context_mutex);
  for (i = 0; i < g_num_context && strcmp(g_context[i].name, name) != 0; ++i) {
  }
  if (i == MR_MAX_CONTEXT_SYMBOLS) {
    status = mr_error_set("RuntimeError", "too many context symbols");
  } else {
    g_context[i].name = name;
    memcpy(&g_context[i].fn, &symbol, sizeof(symbol));
    if (i == g_num_context) ++g_num_context;
  }
  mr_mutex_unlock(&g_context_mutex);
  return status;
}

static void fill_context_slots(TVMFFIObject* lib) {
  int i;
  mr_mutex_lock(&g_context_mutex);
  for (i = 0; i < g_num_context; ++i) {
    void* slot = mr_module_library_symbol(lib, g_context[i].name);
    if (slot) memcpy(slot, &g_context[i].fn, sizeof(g_context[i].fn));
  }
  mr_mutex_unlock(&g_context_mutex);
}

/* ---- __tvm_ffi__library_bin ---- */
typedef struct {
  const unsigned char* p;
  uint64_t size, pos;
  const char* origin;
} mr_reader_t;

static int read_u64(mr_reader_t* r, const char* field, uint64_t* out) {
  uint64_t v = 0;
  int i;
  if (r->size - r->pos < 8)
    return mr_value_error("%s: library blob truncated reading %s at offset %llu",
                         r->origin, field, (unsigned long long)r->pos);
  for (i = 7; i >= 0; --i) v = (v << 8) | r->p[r->pos + (uint64_t)i];
  r->pos += 8;
  *out = v;
  return 0;
}

/* A length-prefixed string; *out points into the blob. */
static int read_bytes(mr_reader_t* r, const char* field, const char** out, uint64_t* out_len) {
  uint64_t n;
  if (read_u64(r, field, &n) != 0) return -1;
  if (n > r->size - r->pos)
    return mr_value_error("%s: library blob %s of %llu bytes at offset %llu overruns",
                         r->origin, field, (unsigned long long)n, (unsigned long long)r->pos);
  *out = (const char*)r->p + r->pos;
  *out_len = n;
  r->pos += n;
  return 0;
}

static int read_vec(mr_reader_t* r, const char* field, uint64_t max, uint64_t** out,
                    uint64_t* out_n) {
  uint64_t n, i;
  uint64_t* v;
  if (read_u64(r, field, &n) != 0) return -1;
  if (n > max || n > (r->size - r->pos) / 8)
    return mr_value_error("%s: library blob %s count %llu invalid at offset %llu",
                         r->origin, field, (unsigned long long)n, (unsigned long long)r->pos);
  v = (uint64_t*)malloc((n ? n : 1) * sizeof(uint64_t));
  if (!v) return mr_error_oom("the library blob");
  for (i = 0; i < n; ++i) (void)read_u64(r, field, &v[i]);
  *out = v;
  *out_n = n;
  return 0;
}

/* Checks the CSR import tree: monotone indptr, children in range, no cycles. */
static int check_tree(const uint64_t* indptr, uint64_t n, const uint64_t* children,
                      uint64_t nchildren, const char* origin) {
  unsigned char* state;
  uint64_t *stack, *iter, i;
  int status = 0;
  if (indptr[0] != 0 || indptr[n] != nchildren)
    return mr_value_error("%s: library blob import tree indptr is inconsistent",
                         origin);
  for (i = 0; i < n; ++i)
    if (indptr[i] > indptr[i + 1])
      return mr_value_error("%s: library blob indptr decreases at %llu", origin,
                           (unsigned long long)i);
  for (i = 0; i < nchildren; ++i)
    if (children[i] >= n)
      return mr_value_error("%s: library blob child %llu out of range (%llu modules)",
                           origin, (unsigned long long)children[i], (unsigned long long)n);
  /* Iterative DFS; state 1 = on stack, 2 = done. */
  state = (unsigned char*)calloc(n, 1);
  stack = (uint64_t*)malloc(n * sizeof(uint64_t));
  iter = (uint64_t*)malloc(n * sizeof(uint64_t));
  if (!state || !stack || !iter) {
    status = mr_error_oom("the library blob");
    goto done;
  }
  for (i = 0; i < n && status == 0; ++i) {
    uint64_t top = 0;
    if (state[i]) continue;
    stack[top++] = i;
    state[i] = 1;
    iter[i] = indptr[i];
    while (top > 0 && status == 0) {
      uint64_t u = stack[top - 1];
      if (iter[u] == indptr[u + 1]) {
        state[u] = 2;
        --top;
      } else {
        uint64_t c = children[iter[u]++];
        if (state[c] == 1)
          status = mr_value_error("%s: library blob import tree has a cycle", origin);
        else if (state[c] == 0) {
          state[c] = 1;
          iter[c] = indptr[c];
          stack[top++] = c;
        }
      }
    }
  }
done:
  free(state);
  free(stack);
  free(iter);
  return status;
}

/* Builds the modules of the blob and their imports; *out_root is module 0. */
static int load_blob(TVMFFIObject* lib, const unsigned char* blob, const char* origin,
                     TVMFFIObject** out_root) {
  mr_reader_t r;
  uint64_t *indptr = NULL, *children = NULL, n_indptr = 0, n_children = 0, n = 0, i, j;
  TVMFFIObject** mods = NULL;
  int status = -1;
  r.p = blob;
  r.size = 8;
  r.pos = 0;
  r.origin = origin;
  if (read_u64(&r, "nbytes", &r.size) != 0) return -1;
  if (mr_add_overflow_u64(r.size, 8, &r.size))
    return mr_value_error("%s: library blob size invalid", origin);
  if (read_vec(&r, "import_tree_indptr", MR_MAX_BLOB_MODULES + 1, &indptr, &n_indptr) != 0)
    goto done;
  if (read_vec(&r, "import_tree_children", (uint64_t)MR_MAX_BLOB_MODULES * MR_MAX_BLOB_MODULES,
               &children, &n_children) != 0)
    goto done;
  if (n_indptr < 2) {
    mr_value_error("%s: library blob has no modules", origin);
    goto done;
  }
  n = n_indptr - 1;
  if (check_tree(indptr, n, children, n_children, origin) != 0) goto done;
  mods = (TVMFFIObject**)calloc(n, sizeof(TVMFFIObject*));
  if (!mods) {
    mr_error_oom("the library blob");
    goto done;
  }
  for (i = 0; i < n; ++i) {
    const char *kind, *payload;
    uint64_t kind_len, payload_len;
    char kind_buf[MR_MAX_NAME];
    if (read_bytes(&r, "module kind", &kind, &kind_len) != 0) goto done;
    if (kind_len == 0 || kind_len >= sizeof(kind_buf) || memchr(kind, 0, kind_len)) {
      mr_value_error("%s: library blob module %llu has an invalid kind", origin,
                    (unsigned long long)i);
      goto done;
    }
    memcpy(kind_buf, kind, kind_len);
    kind_buf[kind_len] = '\0';
    if (strcmp(kind_buf, "_lib") == 0) {
      mr_object_retain(lib);
      mods[i] = lib;
      continue;
    }
    if (read_bytes(&r, "module payload", &payload, &payload_len) != 0) goto done;
    if (mr_module_load_from_bytes(kind_buf, payload, (size_t)payload_len, &mods[i]) != 0) {
      char inner[MR_MAX_ERROR_MESSAGE / 2];
      strncpy(inner, mr_last_error(), sizeof(inner) - 1);
      inner[sizeof(inner) - 1] = '\0';
      mr_error_setf("RuntimeError", "%s: cannot load imported module %llu of kind '%s': %s",
                    origin, (unsigned long long)i, kind_buf, inner);
      goto done;
    }
  }
  if (r.pos != r.size) {
    mr_value_error("%s: library blob has %llu trailing bytes", origin,
                  (unsigned long long)(r.size - r.pos));
    goto done;
  }
  for (i = 0; i < n; ++i)
    for (j = indptr[i]; j < indptr[i + 1]; ++j)
      if (mr_module_import(mods[i], mods[children[j]]) != 0) goto done;
  mr_object_retain(mods[0]);
  *out_root = mods[0];
  status = 0;
done:
  for (i = 0; mods && i < n; ++i) mr_object_release(mods[i]);
  free(mods);
  free(indptr);
  free(children);
  return status;
}

int mr_module_library_create(void* handle, mr_symbol_lookup_t lookup, const char* prefix,
                             int fill_context, const char* origin, TVMFFIObject** out_root) {
  TVMFFIObject *lib = NULL, *root = NULL;
  const unsigned char* blob;
  void** ctx;
  if (mr_module_library_new(handle, lookup, prefix, &lib) != 0) return -1;
  if (fill_context) fill_context_slots(lib);
  blob = (const unsigned char*)mr_module_library_symbol(lib, "__tvm_ffi__library_bin");
  if (blob) {
    if (load_blob(lib, blob, origin, &root) != 0) {
      mr_object_release(lib);
      return -1;
    }
  } else {
    root = lib;
    mr_object_retain(lib);
  }
  /* The slot holds a borrowed pointer: the library lives as long as its root. */
  ctx = (void**)mr_module_library_symbol(lib, "__tvm_ffi__library_ctx");
  if (ctx) *ctx = lib;
  mr_object_release(lib);
  *out_root = root;
  return 0;
}
