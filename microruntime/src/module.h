/* The Module object (type 73), shared by module*.c. */
#ifndef MR_MODULE_H_
#define MR_MODULE_H_

#include "internal.h"

/* A function found by TVMFFIEnvModLookupFromImports (imports or globals). */
typedef struct {
  char* name;
  TVMFFIObject* func;
} mr_module_cache_entry_t;

typedef struct {
  TVMFFIObject header;
  char* type_key;
  /* Library modules (.so or system library). */
  void* lib_handle;
  mr_symbol_lookup_t lookup;
  char* prefix;
  /* Other kinds (created by loaders). */
  void* self;
  mr_module_get_function_t get_function;
  void (*self_deleter)(void* self);
  /* Imports and the function cache, guarded by the module mutex. */
  TVMFFIObject** imports;
  int64_t num_imports;
  size_t cap_imports;
  mr_module_cache_entry_t* cache;
  size_t cache_count, cache_cap;
} mr_module_obj_t;

static inline mr_module_obj_t* mr_module_cast(TVMFFIObject* obj) {
  return (obj && obj->type_index == kTVMFFIModule) ? (mr_module_obj_t*)obj : NULL;
}

/* ---- module_loader.c ---- */
/* Decodes a module of `kind` from a payload with the loader of the table (else with a global
 * function ffi.Module.load_from_bytes.<kind> registered by other means). */
int mr_module_load_from_bytes(const char* kind, const char* data, size_t size,
                              TVMFFIObject** out_module);

#endif /* MR_MODULE_H_ */
