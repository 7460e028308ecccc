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
/* The same for a payload inside the image of library `lib` (a library blob's module): while
 * the loader runs, mr_module_payload_owner() gives lib on this thread. */
int mr_module_load_from_library(const char* kind, const char* data, size_t size,
                                TVMFFIObject* lib, TVMFFIObject** out_module);
/* Inside a loader: the library whose image holds the payload, or NULL (the payload is a
 * caller's buffer). A module that keeps a reference to it may read the payload in place
 * instead of copying it: the image lives as long as the library. */
TVMFFIObject* mr_module_payload_owner(void);

#endif /* MR_MODULE_H_ */
