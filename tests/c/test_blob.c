/* Library blobs read from memory (mr_module_blob_load, internal): nothing is
 * read past the blob's real size, whatever its fields claim. Each blob sits in a
 * heap block of exactly its size, so AddressSanitizer sees any over-read. */
#include <stdlib.h>

#include "check.h"
#include "internal.h"

static unsigned char* put_u64(unsigned char* p, uint64_t v) {
  int i;
  for (i = 0; i < 8; ++i) p[i] = (unsigned char)(v >> (8 * i));
  return p + 8;
}

static unsigned char* put_str(unsigned char* p, const char* s) {
  size_t n = strlen(s);
  p = put_u64(p, n);
  memcpy(p, s, n);
  return p + n;
}

static void* no_symbols(void* handle, const char* symbol) {
  (void)handle, (void)symbol;
  return NULL;
}

static int testdev_get_function(void* self, const char* name, TVMFFIObject** out) {
  (void)self, (void)name;
  *out = NULL;
  return 0;
}

static int testdev_loader(const char* data, size_t size, TVMFFIObject** out) {
  (void)data, (void)size;
  return mr_module_create("testdev", NULL, testdev_get_function, NULL, out);
}

/* Loads a copy of blob[0..size) placed in a heap block of exactly `size` bytes. */
static int load(TVMFFIObject* lib, const unsigned char* blob, size_t size) {
  unsigned char* copy = (unsigned char*)malloc(size ? size : 1);
  TVMFFIObject* root = NULL;
  int status;
  if (size) memcpy(copy, blob, size);
  status = mr_module_blob_load(lib, copy, size, "test", &root);
  mr_object_release(root);
  free(copy);
  return status;
}

/* A system library's symbols as the compiler registers them: the blob, and its real size
 * as a u64 beside it (g_syslib_nbytes; 0: not registered, as another compiler's). */
static unsigned char* g_syslib_blob;
static uint64_t g_syslib_nbytes;

static void* syslib_symbols(void* handle, const char* symbol) {
  (void)handle;
  if (strcmp(symbol, "__tvm_ffi__library_bin") == 0) return g_syslib_blob;
  if (strcmp(symbol, "__tvm_ffi__library_bin_nbytes") == 0 && g_syslib_nbytes)
    return &g_syslib_nbytes;
  return NULL;
}

/* A blob whose nbytes and last payload length were raised together: only the registered
 * size tells where the blob ends (the copy has exactly `size` bytes, so ASan sees any
 * read past it). */
static void test_registered_size(const unsigned char* blob, size_t size) {
  TVMFFIObject* root = NULL;
  g_syslib_blob = (unsigned char*)malloc(size);
  memcpy(g_syslib_blob, blob, size);
  g_syslib_nbytes = size;
  CHECK_OK(mr_module_library_create(NULL, syslib_symbols, NULL, "", 0, "system library", &root));
  mr_object_release(root);
  root = NULL;
  put_u64(g_syslib_blob, size - 8 + 4096);
  put_u64(g_syslib_blob + size - 13, 5 + 4096); /* the payload "hello" */
  CHECK_FAIL(mr_module_library_create(NULL, syslib_symbols, NULL, "", 0, "system library",
                                      &root),
             "nbytes 4184 at offset 0 exceeds the blob's size");
  g_syslib_nbytes = 0;
  free(g_syslib_blob);
}

int main(void) {
  TVMFFIObject* lib;
  unsigned char blob[256], *p = blob + 8;
  size_t size, i;
  int v;
  CHECK_OK(mr_module_library_new(NULL, no_symbols, "", &lib));
  CHECK_OK(mr_module_loader_register("testdev", testdev_loader));
  /* kinds ["_lib", "testdev"], indptr [0, 1, 1], children [1] */
  p = put_u64(p, 3);
  p = put_u64(p, 0);
  p = put_u64(p, 1);
  p = put_u64(p, 1);
  p = put_u64(p, 1);
  p = put_u64(p, 1);
  p = put_str(p, "_lib");
  p = put_str(p, "testdev");
  p = put_str(p, "hello");
  size = (size_t)(p - blob);
  put_u64(blob, size - 8);
  CHECK_OK(load(lib, blob, size));
  test_registered_size(blob, size);

  /* nbytes beyond the real size. */
  put_u64(blob, size);
  CHECK_FAIL(load(lib, blob, size), "nbytes");
  CHECK_FAIL(load(lib, blob, size), "exceeds the blob's size");
  put_u64(blob, (uint64_t)1 << 40);
  CHECK_FAIL(load(lib, blob, size), "exceeds the blob's size");
  /* nbytes plus a huge count: the count is checked against the real size. */
  put_u64(blob, size - 8);
  put_u64(blob + 8, 1000);
  CHECK_FAIL(load(lib, blob, size), "import_tree_indptr count 1000");
  put_u64(blob + 8, 3);
  /* Shorter than the nbytes field, and every truncation. */
  CHECK_FAIL(load(lib, blob, 0), "truncated");
  CHECK_FAIL(load(lib, blob, 7), "truncated");
  for (i = 8; i < size; ++i) {
    int failed = load(lib, blob, i) != 0;
    CHECK(failed);
    if (!failed) break;
  }
  /* Every value of every byte: loads or fails, never reads outside. */
  for (i = 0; i < size; ++i) {
    unsigned char saved = blob[i];
    for (v = 0; v < 256; v += 15) {
      blob[i] = (unsigned char)v;
      (void)load(lib, blob, size);
    }
    blob[i] = saved;
  }
  CHECK_OK(load(lib, blob, size));
  mr_error_clear();
  mr_object_release(lib);
  return CHECK_RESULT();
}
