/* Modules: the system library (with and without prefix, ctx slot, singleton,
 * built-in globals), loading real .so kernels (direct calls, context slots,
 * workspace, parallel, packed calls through the library context), library
 * blobs with loaders, and load errors. Run from the repository root. */
#include <pthread.h>
#include <stdlib.h>

#include "check.h"

#define FIXTURES "build/tests/fixtures/"

static int ret_int(TVMFFIAny* result, int64_t v) {
  result->type_index = kTVMFFIInt;
  result->zero_padding = 0;
  result->v_int64 = v;
  return 0;
}
static int sys_plain(void* h, const TVMFFIAny* a, int32_t n, TVMFFIAny* r) {
  (void)h, (void)a, (void)n;
  return ret_int(r, 1);
}
static int sys_prefixed(void* h, const TVMFFIAny* a, int32_t n, TVMFFIAny* r) {
  (void)h, (void)a, (void)n;
  return ret_int(r, 2);
}
static int square(void* h, const TVMFFIAny* a, int32_t n, TVMFFIAny* r) {
  (void)h, (void)n;
  return ret_int(r, a[0].v_int64 * a[0].v_int64);
}
static int dev_func(void* h, const TVMFFIAny* a, int32_t n, TVMFFIAny* r) {
  (void)h, (void)a, (void)n;
  return ret_int(r, 99);
}

static int testdev_get_function(void* self, const char* name, TVMFFIObject** out) {
  (void)self;
  *out = NULL;
  if (strcmp(name, "dev_func") == 0) return mr_function_from_symbol(dev_func, out);
  return 0;
}
static int testdev_loader(const char* data, size_t size, TVMFFIObject** out) {
  if (size != 5 || memcmp(data, "hello", 5) != 0) return mr_error_set("ValueError", "bad payload");
  return mr_module_create("testdev", NULL, testdev_get_function, NULL, out);
}

static int call_int(TVMFFIObject* f, TVMFFIAny* args, int n, int64_t* out) {
  TVMFFIAny r;
  memset(&r, 0, sizeof(r));
  if (mr_function_call(f, args, n, &r) != 0) return -1;
  *out = r.v_int64;
  mr_any_clear(&r);
  return 0;
}

static void* g_ctx_slot = NULL;
static int g_inits = 0;
static int init_fn(void** out) {
  ++g_inits;
  *out = (void*)&g_inits;
  return 0;
}

static void test_system_lib(void) {
  TVMFFIObject *lib, *lib2, *plain, *f, *g;
  int64_t v = 0;
  void* handle = NULL;
  TVMFFIAny args[3], res;
  CHECK_OK(TVMFFIEnvModRegisterSystemLibSymbol("__tvm_ffi_sysfn", (void*)(uintptr_t)sys_plain));
  CHECK_OK(TVMFFIEnvModRegisterSystemLibSymbol("__tvm_ffi_pfx_sysfn",
                                               (void*)(uintptr_t)sys_prefixed));
  CHECK_OK(TVMFFIEnvModRegisterSystemLibSymbol("pfx___tvm_ffi__library_ctx", &g_ctx_slot));
  CHECK_OK(mr_module_system_lib("pfx_", &lib));
  CHECK(g_ctx_slot == (void*)lib);
  CHECK(strcmp(mr_module_type_key(lib), "library") == 0);
  CHECK_OK(mr_module_get_function(lib, "sysfn", 0, &f)); /* prefixed name first */
  CHECK(f && call_int(f, NULL, 0, &v) == 0 && v == 2);
  mr_object_release(f);
  CHECK_OK(mr_module_system_lib("", &plain));
  CHECK(plain != lib);
  CHECK_OK(mr_module_get_function(plain, "sysfn", 0, &f));
  CHECK(f && call_int(f, NULL, 0, &v) == 0 && v == 1);
  mr_object_release(f);
  CHECK_OK(mr_module_get_function(plain, "nothing", 1, &f));
  CHECK(f == NULL);
  CHECK_OK(mr_module_system_lib("pfx_", &lib2));
  CHECK(lib2 == lib);
  mr_object_release(lib2);
  /* The same through the TVM-style globals a C app would use. */
  {
    TVMFFIByteArray name = {"ffi.SystemLib", 13}, gname = {"ffi.ModuleGetFunction", 21};
    CHECK_OK(TVMFFIFunctionGetGlobal(&name, (TVMFFIObjectHandle*)&g));
    CHECK(g != NULL);
    memset(args, 0, sizeof(args));
    memset(&res, 0, sizeof(res));
    args[0].type_index = kTVMFFIRawStr;
    args[0].v_c_str = "pfx_";
    CHECK_OK(mr_function_call(g, args, 1, &res));
    CHECK(res.type_index == kTVMFFIModule && res.v_obj == lib);
    mr_object_release(g);
    CHECK_OK(TVMFFIFunctionGetGlobal(&gname, (TVMFFIObjectHandle*)&g));
    args[0] = res;
    args[1].type_index = kTVMFFIRawStr;
    args[1].v_c_str = "sysfn";
    args[2].type_index = kTVMFFIBool;
    args[2].v_int64 = 0;
    memset(&res, 0, sizeof(res));
    CHECK_OK(mr_function_call(g, args, 3, &res));
    CHECK(res.type_index == kTVMFFIFunction && call_int(res.v_obj, NULL, 0, &v) == 0 && v == 2);
    mr_any_clear(&res);
    /* Argument count and types are checked; the error names the argument. */
    CHECK_FAIL(mr_function_call(g, args, 1, &res), "takes 2 or 3 arguments, got 1");
    args[2].type_index = kTVMFFIFloat;
    CHECK_FAIL(mr_function_call(g, args, 3, &res), "argument 'query_imports'");
    CHECK(strcmp(mr_last_error_kind(), "TypeError") == 0);
    args[2].type_index = kTVMFFIBool;
    args[1].type_index = kTVMFFIInt;
    CHECK_FAIL(mr_function_call(g, args, 3, &res), "argument 'name'");
    args[1].type_index = kTVMFFIRawStr;
    args[1].v_c_str = "sysfn";
    CHECK(res.type_index == kTVMFFINone);
    mr_any_clear(&args[0]);
    mr_object_release(g);
  }
  mr_object_release(lib);
  mr_object_release(plain);
  /* TVMFFIHandleInitOnce runs init once. */
  CHECK_OK(TVMFFIHandleInitOnce(&handle, init_fn));
  CHECK_OK(TVMFFIHandleInitOnce(&handle, init_fn));
  CHECK(g_inits == 1 && handle == (void*)&g_inits);
}

static void set_tensor_arg(TVMFFIAny* a, TVMFFIObject* t) {
  memset(a, 0, sizeof(*a));
  a->type_index = kTVMFFITensor;
  a->v_obj = t;
}

static void test_dso(void) {
  TVMFFIObject *mod, *f, *sq, *ta, *tb, *tc;
  DLDevice cpu = {kDLCPU, 0};
  DLDataType f32 = {kDLFloat, 32, 1};
  int64_t n = 1000, v = 0, i;
  float *a, *b, *c;
  TVMFFIAny args[3], r;
  int ok;

  CHECK_FAIL(mr_module_load(FIXTURES "no_such.so", &mod), FIXTURES "no_such.so");
  CHECK_OK(mr_module_load(FIXTURES "kernels.so", &mod));
  CHECK(strcmp(mr_module_type_key(mod), "library") == 0);
  CHECK(mr_module_implements(mod, "add", 0));
  CHECK(!mr_module_implements(mod, "sub", 1));
  CHECK_OK(mr_tensor_create(1, &n, f32, cpu, &ta));
  CHECK_OK(mr_tensor_create(1, &n, f32, cpu, &tb));
  CHECK_OK(mr_tensor_create(1, &n, f32, cpu, &tc));
  a = (float*)mr_tensor_dl(ta)->data;
  b = (float*)mr_tensor_dl(tb)->data;
  c = (float*)mr_tensor_dl(tc)->data;
  for (i = 0; i < n; ++i) a[i] = (float)i, b[i] = 0.5f;

  /* "main" resolves to __tvm_ffi_main; arguments as Tensor objects and as DLTensor*. */
  CHECK_OK(mr_module_get_function(mod, "main", 0, &f));
  CHECK(f != NULL);
  set_tensor_arg(&args[0], ta);
  set_tensor_arg(&args[1], tb);
  args[2].type_index = kTVMFFIDLTensorPtr;
  args[2].zero_padding = 0;
  args[2].v_ptr = mr_tensor_dl(tc);
  memset(&r, 0, sizeof(r));
  CHECK_OK(mr_function_call(f, args, 3, &r));
  for (ok = 1, i = 0; i < n; ++i) ok &= c[i] == (float)i + 0.5f;
  CHECK(ok);
  CHECK_FAIL(mr_function_call(f, args, 2, &r), "Expected 3 arguments when calling: kernel");
  CHECK(strcmp(mr_last_error_kind(), "TypeError") == 0);
  mr_object_release(f);

  CHECK_OK(mr_module_get_function(mod, "ws", 0, &f));
  CHECK_OK(mr_function_call(f, args, 2, &r));
  for (ok = 1, i = 0; i < n; ++i) ok &= b[i] == 2.0f * (float)i;
  CHECK(ok);
  mr_object_release(f);

  CHECK_OK(mr_module_get_function(mod, "par", 0, &f));
  CHECK_OK(mr_function_call(f, args, 2, &r));
  for (ok = 1, i = 0; i < n; ++i) ok &= b[i] == 3.0f * (float)i;
  CHECK(ok);
  mr_object_release(f);

  /* Packed call through __tvm_ffi__library_ctx: imports, then the global registry. */
  CHECK_OK(mr_module_get_function(mod, "calls", 0, &f));
  memset(args, 0, sizeof(args));
  args[0].type_index = kTVMFFIInt;
  args[0].v_int64 = 7;
  CHECK_FAIL(call_int(f, args, 1, &v), "test.square");
  CHECK_OK(mr_function_from_symbol(square, &sq));
  CHECK_OK(mr_registry_set("test.square", sq, 0));
  mr_object_release(sq);
  CHECK_OK(call_int(f, args, 1, &v));
  CHECK(v == 50);
  CHECK_OK(call_int(f, args, 1, &v)); /* cached handle */
  CHECK(v == 50);
  mr_object_release(f);

  mr_object_release(ta);
  mr_object_release(tb);
  mr_object_release(tc);
  mr_object_release(mod);
}

static void test_blobs(void) {
  TVMFFIObject *mod, *f, *imp;
  int64_t v = 0;
  CHECK_FAIL(mr_module_load(FIXTURES "blob_lib.so", &mod), "testdev");
  CHECK_OK(mr_module_loader_register("testdev", testdev_loader));
  CHECK_OK(mr_module_load(FIXTURES "blob_lib.so", &mod));
  CHECK(strcmp(mr_module_type_key(mod), "library") == 0);
  CHECK(mr_module_num_imports(mod) == 1);
  imp = mr_module_import_at(mod, 0);
  CHECK(imp && strcmp(mr_module_type_key(imp), "testdev") == 0);
  CHECK(mr_module_import_at(mod, 1) == NULL);
  CHECK_OK(mr_module_get_function(mod, "dev_func", 0, &f));
  CHECK(f == NULL);
  CHECK_OK(mr_module_get_function(mod, "dev_func", 1, &f));
  CHECK(f && call_int(f, NULL, 0, &v) == 0 && v == 99);
  mr_object_release(f);
  CHECK_OK(mr_module_get_function(mod, "call_dev", 0, &f));
  v = 0;
  CHECK(f && call_int(f, NULL, 0, &v) == 0 && v == 99);
  mr_object_release(f);
  CHECK_FAIL(mr_module_import(imp, mod), "cycle");
  mr_object_release(mod);

  /* No "_lib" in the tree: the root imports the library, so the context slot
   * the kernels use stays valid as long as the root lives. */
  CHECK_OK(mr_module_load(FIXTURES "blob_nolib.so", &mod));
  CHECK(strcmp(mr_module_type_key(mod), "testdev") == 0);
  CHECK(mr_module_num_imports(mod) == 1);
  imp = mr_module_import_at(mod, 0);
  CHECK(imp && strcmp(mr_module_type_key(imp), "library") == 0);
  f = NULL;
  CHECK_OK(mr_module_get_function(mod, "lookup_dev", 1, &f));
  CHECK(f != NULL);
  CHECK_FAIL(call_int(f, NULL, 0, &v), "function 'dev_func' is not in the imports");
  mr_object_release(f);
  mr_object_release(mod);

  CHECK_FAIL(mr_module_load(FIXTURES "blob_missing.so", &mod),
             "no loader registered for module kind 'nosuchkind'");
  CHECK_FAIL(mr_module_load(FIXTURES "blob_bad.so", &mod), "out of range");
  /* Declared sizes beyond the symbol's real size (ELF st_size) are refused. */
  CHECK_FAIL(mr_module_load(FIXTURES "blob_oversize.so", &mod),
             "nbytes 1048576 at offset 0 exceeds the blob's size");
}

/* Imports added on one thread while another looks functions up through them. */
enum { CONCURRENT_IMPORTS = 8000 };
static volatile int g_importing = 1;
static void* add_imports(void* root) {
  int i;
  for (i = 0; i < CONCURRENT_IMPORTS; ++i) {
    TVMFFIObject* m = NULL;
    if (mr_module_create("testdev", NULL, testdev_get_function, NULL, &m) != 0 ||
        mr_module_import((TVMFFIObject*)root, m) != 0)
      break;
    mr_object_release(m);
  }
  __atomic_store_n(&g_importing, 0, __ATOMIC_RELEASE);
  return NULL;
}

static void test_concurrent_imports(void) {
  TVMFFIObject *root, *f = NULL;
  pthread_t thread;
  int64_t i, lookups = 0, failed = 0;
  g_importing = 1;
  CHECK_OK(mr_module_create("testdev", NULL, testdev_get_function, NULL, &root));
  CHECK(pthread_create(&thread, NULL, add_imports, root) == 0);
  do {
    failed += mr_module_get_function(root, "no_such_function", 1, &f) != 0 || f != NULL;
    for (i = mr_module_num_imports(root) - 1; i >= 0 && i % 97; --i)
      failed += mr_module_import_at(root, i) == NULL;
    ++lookups;
  } while (__atomic_load_n(&g_importing, __ATOMIC_ACQUIRE));
  pthread_join(thread, NULL);
  CHECK(failed == 0 && lookups > 0);
  CHECK(mr_module_num_imports(root) == CONCURRENT_IMPORTS);
  mr_object_release(root);
}

int main(void) {
  int i;
  test_system_lib();
  test_dso();
  test_blobs();
  for (i = 0; i < 8; ++i) test_concurrent_imports(); /* a race: each round may catch it */
  return CHECK_RESULT();
}
