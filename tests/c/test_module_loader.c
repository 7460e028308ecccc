/* The table of module loaders by kind (module_loader.c): a register call puts a loader in
 * the table and makes it the global ffi.Module.load_from_bytes.<kind>, which calls the
 * loader of the table; registering the same loader again changes nothing; a kind without a
 * loader but with such a global (registered by other means) is loaded through the global;
 * the graph executor's and the VM's register calls fill the table the same way. */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "microruntime/graph_executor.h"
#include "microruntime/vm.h"
#include "module.h"

static char g_seen[16];
static size_t g_seen_size;

static int no_functions(void* self, const char* name, TVMFFIObject** out) {
  (void)self, (void)name;
  *out = NULL;
  return 0;
}

/* Remembers the payload and makes a module of `type_key`. */
static int remember(const char* type_key, const char* data, size_t size, TVMFFIObject** out) {
  g_seen_size = size < sizeof(g_seen) ? size : sizeof(g_seen);
  memcpy(g_seen, data, g_seen_size);
  return mr_module_create(type_key, NULL, no_functions, NULL, out);
}

static int loader_a(const char* data, size_t size, TVMFFIObject** out) {
  return remember("kind_a", data, size, out);
}

static int loader_b(const char* data, size_t size, TVMFFIObject** out) {
  return remember("kind_b", data, size, out);
}

/* A loader registered as a global function only (TVM's way): global(bytes) -> Module. */
static int global_loader(void* self, const TVMFFIAny* args, int32_t n, TVMFFIAny* result) {
  const TVMFFIByteArray* bytes;
  TVMFFIObject* m;
  (void)self;
  if (n != 1 || args[0].type_index != kTVMFFIBytes) return mr_error_set("ValueError", "expected Bytes");
  bytes = mr_bytes_view(args[0].v_obj);
  if (remember("by_global", bytes->data, bytes->size, &m) != 0) return -1;
  result->type_index = kTVMFFIModule;
  result->v_obj = m;
  return 0;
}

/* The global function `name` (a new reference), or NULL. */
static TVMFFIObject* global(const char* name) {
  TVMFFIObject* f = NULL;
  if (mr_registry_get(name, &f) != 0) mr_error_clear();
  return f;
}

static int has_global(const char* name) {
  TVMFFIObject* f = global(name);
  mr_object_release(f);
  return f != NULL;
}

/* Whether the global `name` is still `f` (which the caller holds). */
static int same_global(const char* name, TVMFFIObject* f) {
  TVMFFIObject* now = global(name);
  mr_object_release(now);
  return now == f;
}

/* Loads "hello" as `kind`; the type key of the module made, "" on failure. */
static const char* load_hello(const char* kind) {
  static char type_key[32];
  TVMFFIObject* m = NULL;
  type_key[0] = '\0';
  g_seen_size = 0;
  if (mr_module_load_from_bytes(kind, "hello", 5, &m) == 0) {
    snprintf(type_key, sizeof(type_key), "%s", mr_module_type_key(m));
    mr_object_release(m);
  }
  return type_key;
}

static int payload_was_hello(void) {
  return g_seen_size == 5 && memcmp(g_seen, "hello", 5) == 0;
}

static void test_table_and_globals(void) {
  TVMFFIObject *f, *again, *m = NULL;
  TVMFFIAny arg, result;
  char long_kind[MR_MAX_MODULE_KIND + 1];
  CHECK(mr_module_loader_find("test.kind") == NULL);
  CHECK(!has_global("ffi.Module.load_from_bytes.test.kind"));
  CHECK_FAIL(mr_module_load_from_bytes("test.kind", "x", 1, &m),
             "no loader registered for module kind 'test.kind'");

  CHECK_OK(mr_module_loader_register("test.kind", loader_a));
  CHECK(mr_module_loader_find("test.kind") == loader_a);
  CHECK(strcmp(load_hello("test.kind"), "kind_a") == 0 && payload_was_hello());
  /* The global made by the same call loads through the table. */
  f = global("ffi.Module.load_from_bytes.test.kind");
  CHECK(f != NULL);
  if (!f) return;
  memset(&arg, 0, sizeof(arg));
  memset(&result, 0, sizeof(result));
  arg.type_index = kTVMFFIRawStr;
  arg.v_c_str = "hello";
  g_seen_size = 0;
  CHECK_OK(mr_function_call(f, &arg, 1, &result));
  CHECK(result.type_index == kTVMFFIModule && payload_was_hello() &&
        strcmp(mr_module_type_key(result.v_obj), "kind_a") == 0);
  mr_any_clear(&result);
  arg.type_index = kTVMFFIInt;
  CHECK(mr_function_call(f, &arg, 1, &result) != 0 &&
        check_error_matches("takes one bytes argument"));
  CHECK(mr_function_call(f, NULL, 0, &result) != 0 &&
        check_error_matches("takes one bytes argument"));

  /* The same loader again: nothing changes (the global is the same function). */
  CHECK_OK(mr_module_loader_register("test.kind", loader_a));
  CHECK(same_global("ffi.Module.load_from_bytes.test.kind", f));
  mr_object_release(f);
  /* Another loader for the kind replaces it, in the table and behind the global. */
  CHECK_OK(mr_module_loader_register("test.kind", loader_b));
  CHECK(strcmp(load_hello("test.kind"), "kind_b") == 0);
  again = global("ffi.Module.load_from_bytes.test.kind");
  memset(&result, 0, sizeof(result));
  arg.type_index = kTVMFFIRawStr;
  CHECK(again && mr_function_call(again, &arg, 1, &result) == 0 &&
        strcmp(mr_module_type_key(result.v_obj), "kind_b") == 0);
  mr_any_clear(&result);
  mr_object_release(again);

  memset(long_kind, 'k', sizeof(long_kind) - 1);
  long_kind[sizeof(long_kind) - 1] = '\0';
  CHECK_FAIL(mr_module_loader_register(long_kind, loader_a), "loader kind or function invalid");
  CHECK_FAIL(mr_module_loader_register("test.null", NULL), "loader kind or function invalid");
}

static void test_global_only_loader(void) {
  TVMFFIObject* f;
  CHECK_OK(mr_function_create_closure(NULL, global_loader, NULL, &f));
  CHECK_OK(mr_registry_set("ffi.Module.load_from_bytes.test.global", f, 0));
  mr_object_release(f);
  CHECK(mr_module_loader_find("test.global") == NULL);
  CHECK(strcmp(load_hello("test.global"), "by_global") == 0 && payload_was_hello());
  CHECK_OK(mr_registry_remove("ffi.Module.load_from_bytes.test.global"));
}

/* The payload's owner a loader sees: the library given to mr_module_load_from_library, none
 * for a caller's buffer, and none inside the global function even when a library's loading
 * calls it (its bytes are the caller's); the outer owner is back after a nested load. */
static TVMFFIObject* g_owner_seen[4];
static int g_owner_calls;

static int owner_probe(const char* data, size_t size, TVMFFIObject** out) {
  TVMFFIAny arg, result;
  TVMFFIObject* f;
  if (g_owner_calls < 4) g_owner_seen[g_owner_calls] = mr_module_payload_owner();
  ++g_owner_calls;
  if (size == 6 && memcmp(data, "nested", 6) == 0) { /* load "hello" through the global */
    f = global("ffi.Module.load_from_bytes.test.owner");
    memset(&arg, 0, sizeof(arg));
    memset(&result, 0, sizeof(result));
    arg.type_index = kTVMFFIRawStr;
    arg.v_c_str = "hello";
    if (!f || mr_function_call(f, &arg, 1, &result) != 0) return -1;
    mr_object_release(f);
    mr_any_clear(&result);
    if (g_owner_calls < 4) g_owner_seen[g_owner_calls] = mr_module_payload_owner();
    ++g_owner_calls;
  }
  return mr_module_create("owner_probe", NULL, no_functions, NULL, out);
}

static void test_payload_owner(void) {
  TVMFFIObject *lib = NULL, *m = NULL;
  CHECK(mr_module_payload_owner() == NULL);
  CHECK_OK(mr_module_loader_register("test.owner", owner_probe));
  CHECK_OK(mr_module_create("fake_library", NULL, no_functions, NULL, &lib));
  g_owner_calls = 0;
  CHECK_OK(mr_module_load_from_library("test.owner", "hello", 5, lib, &m));
  mr_object_release(m);
  CHECK(g_owner_calls == 1 && g_owner_seen[0] == lib && mr_module_payload_owner() == NULL);
  g_owner_calls = 0;
  CHECK_OK(mr_module_load_from_bytes("test.owner", "hello", 5, &m));
  mr_object_release(m);
  CHECK(g_owner_calls == 1 && g_owner_seen[0] == NULL);
  g_owner_calls = 0;
  CHECK_OK(mr_module_load_from_library("test.owner", "nested", 6, lib, &m));
  mr_object_release(m);
  /* outer call: lib; the global's call: none; back in the outer call: lib again. */
  CHECK(g_owner_calls == 3 && g_owner_seen[0] == lib && g_owner_seen[1] == NULL &&
        g_owner_seen[2] == lib && mr_module_payload_owner() == NULL);
  mr_object_release(lib);
}

static void test_plugins_fill_the_table(void) {
  TVMFFIObject *builtin, *m = NULL;
  CHECK(mr_module_loader_find("GraphExecutorFactory") == NULL);
  CHECK(mr_module_loader_find("relax.VMExecutable") == NULL);
  CHECK_OK(mr_graph_register());
  CHECK_OK(mr_vm_register());
  CHECK(mr_module_loader_find("GraphExecutorFactory") != NULL);
  CHECK(mr_module_loader_find("relax.VMExecutable") != NULL);
  CHECK(has_global("ffi.Module.load_from_bytes.GraphExecutorFactory"));
  CHECK(has_global("ffi.Module.load_from_bytes.relax.VMExecutable"));
  /* Registered once: calling again leaves the VM's globals as they are. */
  builtin = global("vm.builtin.alloc_storage");
  CHECK(builtin != NULL);
  if (!builtin) return;
  CHECK_OK(mr_vm_register());
  CHECK_OK(mr_vm_register_extras());
  CHECK(same_global("vm.builtin.alloc_storage", builtin));
  mr_object_release(builtin);
  CHECK_OK(mr_graph_executor_register());
  CHECK_OK(mr_graph_executor_register());
  CHECK(has_global("tvm.graph_executor.create"));
  /* The payloads go to those loaders, which validate them. */
  CHECK_FAIL(mr_module_load_from_bytes("GraphExecutorFactory", "x", 1, &m),
             "GraphExecutorFactory");
  CHECK_FAIL(mr_module_load_from_bytes("relax.VMExecutable", "x", 1, &m),
             "VM executable");
}

int main(void) {
  test_table_and_globals();
  test_global_only_loader();
  test_payload_owner();
  test_plugins_fill_the_table();
  return CHECK_RESULT();
}
