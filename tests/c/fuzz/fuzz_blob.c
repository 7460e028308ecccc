/* Fuzz target: library blobs (__tvm_ffi__library_bin) parsed from memory, with a
 * loader for kind "testdev" that accepts any payload. The input is the blob itself,
 * in a buffer of exactly its size. */
#include <stdint.h>
#include <stdlib.h>

#include "internal.h"

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

static int no_function(void* self, const char* name, TVMFFIObject** out) {
  (void)self, (void)name;
  *out = NULL;
  return 0;
}

static int any_payload(const char* payload, size_t size, TVMFFIObject** out) {
  (void)payload, (void)size;
  return mr_module_create("testdev", NULL, no_function, NULL, out);
}

static void* no_symbols(void* handle, const char* symbol) {
  (void)handle, (void)symbol;
  return NULL;
}

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static TVMFFIObject* lib;
  TVMFFIObject* root = NULL;
  if (!lib && (mr_module_library_new(NULL, no_symbols, "", &lib) != 0 ||
               mr_module_loader_register("testdev", any_payload) != 0))
    abort();
  if (mr_module_blob_load(lib, data, size, "fuzz", &root) == 0) mr_object_release(root);
  mr_error_clear();
  return 0;
}
