/* Finishing a library module (.so or system library): filling the context
 * slots kernels call through, rebuilding the import tree from
 * __tvm_ffi__library_bin, and writing the module into __tvm_ffi__library_ctx. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "module.h"

#define MR_ERROR_FILE kMrFileModuleLibrary

/* ---- context symbols ---- */
typedef void (*mr_any_fn_t)(void);

/* The runtime's own; registered ones take precedence. */
static const struct {
  const char* name;
  mr_any_fn_t fn;
} k_context[] = {
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
static mr_symtab_t g_context = MR_SYMTAB_INIT(MR_MAX_CONTEXT_SYMBOLS, "context symbols");

int TVMFFIEnvModRegisterContextSymbol(const char* name, void* symbol) {
  return mr_symtab_set(&g_context, name, symbol);
}

static void fill_context_slots(TVMFFIObject* lib) {
  size_t i;
  void* slot;
  for (i = 0; i < sizeof(k_context) / sizeof(k_context[0]); ++i)
    if ((slot = mr_module_library_symbol(lib, k_context[i].name)))
      memcpy(slot, &k_context[i].fn, sizeof(k_context[i].fn));
  mr_mutex_lock(&g_context.mutex);
  for (i = 0; i < g_context.count; ++i)
    if ((slot = mr_module_library_symbol(lib, g_context.items[i].name)))
      memcpy(slot, &g_context.items[i].ptr, sizeof(void*));
  mr_mutex_unlock(&g_context.mutex);
}

/* ---- __tvm_ffi__library_bin ----
 * u64 nbytes, vec<u64> import_tree_indptr, vec<u64> import_tree_children,
 * then per module: str kind ("_lib" is the library itself), str payload. */
/* Item i of a vec<u64> whose items start at `items` (little-endian, unaligned). */
static uint64_t item(const unsigned char* items, uint64_t i) {
  uint64_t v = 0;
  int b;
  for (b = 7; b >= 0; --b) v = (v << 8) | items[i * 8 + (uint64_t)b];
  return v;
}

/* A vec<u64> of at most max items, left in place: *out points at its items. */
static int read_vec(mr_reader_t* r, const char* field, uint64_t max, const unsigned char** out,
                    uint64_t* out_n) {
  uint64_t n, at = r->pos;
  if (mr_read_le(r, 8, field, &n) != 0) return -1;
  if (n > max || n > (r->size - r->pos) / 8)
    return MR_READER_FAIL(r, "%s count %llu at offset %llu is invalid", field,
                          (unsigned long long)n, (unsigned long long)at);
  *out = r->p + r->pos;
  *out_n = n;
  r->pos += 8 * n;
  return 0;
}

/* Checks the CSR import tree: monotone indptr, children in range. Cycles are
 * refused when the imports are made (mr_module_import). */
static int check_tree(const mr_reader_t* r, const unsigned char* indptr, uint64_t n,
                      const unsigned char* children, uint64_t nchildren) {
  uint64_t i;
  if (item(indptr, 0) != 0 || item(indptr, n) != nchildren)
    return MR_READER_FAIL(r, "import_tree_indptr is inconsistent");
  for (i = 0; i < n; ++i)
    if (item(indptr, i) > item(indptr, i + 1))
      return MR_READER_FAIL(r, "import_tree_indptr decreases at %llu", (unsigned long long)i);
  for (i = 0; i < nchildren; ++i)
    if (item(children, i) >= n)
      return MR_READER_FAIL(r, "child %llu out of range (%llu modules)",
                            (unsigned long long)item(children, i), (unsigned long long)n);
  return 0;
}

/* Builds the modules of the blob and their imports; *out_root is module 0.
 * Without a "_lib" entry the .so is not in the tree, so module 0 imports the
 * library: __tvm_ffi__library_ctx (a borrowed pointer) must live as long as
 * the root. Nothing is read past `size`, the blob's real extent. */
int mr_module_blob_load(TVMFFIObject* lib, const unsigned char* blob, uint64_t size,
                        const char* origin, TVMFFIObject** out_root) {
  mr_reader_t r;
  const unsigned char *indptr, *children;
  uint64_t n_indptr = 0, n_children = 0, n = 0, i, j, nbytes;
  TVMFFIObject** mods = NULL;
  char what[MR_MAX_NAME + 16], kind[MR_MAX_NAME];
  int status = -1, has_lib = 0;
  r.p = blob;
  r.size = size;
  r.pos = 0;
  r.what = MR_MESSAGE_TEXT(what, "%s: library blob", origin);
  if (mr_read_le(&r, 8, "nbytes", &nbytes) != 0) return -1;
  if (nbytes > size - 8)
    return MR_READER_BAD(&r, "nbytes", nbytes, "exceeds the blob's size");
  r.size = nbytes + 8;
  if (read_vec(&r, "import_tree_indptr", MR_MAX_BLOB_MODULES + 1, &indptr, &n_indptr) != 0 ||
      read_vec(&r, "import_tree_children", (uint64_t)MR_MAX_BLOB_MODULES * MR_MAX_BLOB_MODULES,
               &children, &n_children) != 0)
    goto done;
  if (n_indptr < 2) {
    MR_READER_FAIL(&r, "no modules");
    goto done;
  }
  n = n_indptr - 1;
  if (check_tree(&r, indptr, n, children, n_children) != 0) goto done;
  mods = (TVMFFIObject**)calloc(n, sizeof(TVMFFIObject*));
  if (!mods) {
    MR_OOM("the library blob");
    goto done;
  }
  for (i = 0; i < n; ++i) {
    const char *text, *payload;
    uint64_t len, at = r.pos;
    if (mr_read_bytes(&r, "module kind", &text, &len) != 0) goto done;
    if (len == 0 || len >= sizeof(kind) || memchr(text, 0, len)) {
      MR_READER_FAIL(&r, "module %llu at offset %llu has an invalid kind",
                     (unsigned long long)i, (unsigned long long)at);
      goto done;
    }
    memcpy(kind, text, len);
    kind[len] = '\0';
    if (strcmp(kind, "_lib") == 0) {
      mr_object_retain(lib);
      mods[i] = lib;
      has_lib = 1;
      continue;
    }
    if (mr_read_bytes(&r, "module payload", &payload, &len) != 0) goto done;
    if (mr_module_load_from_library(kind, payload, (size_t)len, lib, &mods[i]) != 0) {
#ifdef MR_CONFIG_SMALL
      MR_RAISE(kMrErrorRuntime, "%s", origin);
#else
      char inner[MR_MAX_ERROR_MESSAGE / 2];
      snprintf(inner, sizeof(inner), "%s", mr_last_error());
      /* A checksum mismatch says all there is to say: which part of which file. */
      if (strncmp(inner, "checksum mismatch", 17) == 0)
        MR_RAISE(kMrErrorRuntime, "%s: %s", origin, inner);
      else
        MR_RAISE(kMrErrorRuntime, "%s: cannot load imported module %llu of kind '%s': %s",
                      origin, (unsigned long long)i, kind, inner);
#endif
      goto done;
    }
  }
  if (mr_reader_end(&r) != 0) goto done;
  for (i = 0; i < n; ++i)
    for (j = item(indptr, i); j < item(indptr, i + 1); ++j)
      if (mr_module_import(mods[i], mods[item(children, j)]) != 0) {
        if (mr_last_error_kind_id() == kMrErrorValue)
          MR_READER_FAIL(&r, "import tree has a cycle (module %llu imports %llu)",
                         (unsigned long long)i, (unsigned long long)item(children, j));
        goto done;
      }
  if (!has_lib && mr_module_import(mods[0], lib) != 0) goto done;
  mr_object_retain(mods[0]);
  *out_root = mods[0];
  status = 0;
done:
  for (i = 0; mods && i < n; ++i) mr_object_release(mods[i]);
  free(mods);
  return status;
}

int mr_module_library_create(void* handle, mr_symbol_lookup_t lookup,
                             mr_symbol_size_t symbol_size, const char* prefix, int fill_context,
                             const char* origin, TVMFFIObject** out_root) {
  TVMFFIObject *lib = NULL, *root = NULL;
  const unsigned char* blob;
  uint64_t blob_size;
  const void* nbytes;
  void** ctx;
  if (mr_module_library_new(handle, lookup, prefix, &lib) != 0) return -1;
  if (fill_context) fill_context_slots(lib);
  blob = (const unsigned char*)mr_module_library_symbol(lib, "__tvm_ffi__library_bin");
  if (blob) {
    /* The blob's real size: registered beside it as a u64 (a Kiln system library), else
     * the symbol's (that of a .so checked against the file before dlopen); unknown (a
     * system library of another compiler), the declared size is trusted up to a limit. */
    nbytes = mr_module_library_symbol(lib, "__tvm_ffi__library_bin_nbytes");
    if (nbytes)
      memcpy(&blob_size, nbytes, sizeof(blob_size));
    else if (!symbol_size || (blob_size = symbol_size(blob)) == 0)
      blob_size = MR_MAX_LIBRARY_BLOB + 8;
    if (mr_module_blob_load(lib, blob, blob_size, origin, &root) != 0) {
      mr_object_release(lib);
      return -1;
    }
  } else {
    root = lib;
    mr_object_retain(lib);
  }
  /* The slot holds a borrowed pointer: the library lives as long as its root. */
  ctx = (void**)mr_module_library_symbol(lib, "__tvm_ffi__library_ctx");
#ifndef MR_NO_DLOPEN
  if (!ctx && handle && blob) ctx = mr_syslib_context_slot_near(blob); /* a system library */
#endif
  if (ctx) *ctx = lib;
  mr_object_release(lib);
  *out_root = root;
  return 0;
}
