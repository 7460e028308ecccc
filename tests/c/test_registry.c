/* Global registry: set/get/override/list/remove, TVMFFIFunction*Global, calls. */
#include <unistd.h>

#include "check.h"

static int add_one(void* self, const TVMFFIAny* args, int32_t n, TVMFFIAny* result) {
  (void)self;
  if (n != 1 || args[0].type_index != kTVMFFIInt) {
    TVMFFIErrorSetRaisedFromCStr("TypeError", "add_one expects one int");
    return -1;
  }
  result->type_index = kTVMFFIInt;
  result->v_int64 = args[0].v_int64 + 1;
  return 0;
}

static int self_deleted = 0;
static void delete_self(void* self) { self_deleted += *(int*)self; }

static int add_self(void* self, const TVMFFIAny* args, int32_t n, TVMFFIAny* result) {
  (void)n;
  result->type_index = kTVMFFIInt;
  result->v_int64 = args[0].v_int64 + *(int*)self;
  return 0;
}

/* A closure whose deleter uses the registry (as a Python callable's finaliser may). */
static int reentrant_deleted = 0;
static void delete_using_registry(void* self) {
  TVMFFIObject* got = NULL;
  (void)self;
  if (mr_registry_get("test.reentrant", &got) == 0) mr_object_release(got);
  ++reentrant_deleted;
}

int main(void) {
  TVMFFIObject *f, *g, *got, *names;
  TVMFFIObjectHandle h;
  TVMFFIAny arg, res;
  TVMFFIByteArray name = {"test.add_one", 12}, missing = {"test.none", 9};
  int seven = 7;
  const TVMFFISeqCell* seq;
  int64_t i;
  int found = 0;

  CHECK_OK(mr_function_from_symbol(add_one, &f));
  CHECK(mr_object_type_index(f) == kTVMFFIFunction);
  CHECK_OK(TVMFFIFunctionCreate(&seven, add_self, delete_self, &h));
  g = (TVMFFIObject*)h;

  CHECK_OK(mr_registry_set("test.add_one", f, 0));
  CHECK_FAIL(mr_registry_set("test.add_one", g, 0), "already registered");
  CHECK_OK(mr_registry_get("test.add_one", &got));
  memset(&arg, 0, sizeof(arg));
  arg.type_index = kTVMFFIInt;
  arg.v_int64 = 41;
  memset(&res, 0, sizeof(res));
  CHECK_OK(mr_function_call(got, &arg, 1, &res));
  CHECK(res.type_index == kTVMFFIInt && res.v_int64 == 42);
  arg.type_index = kTVMFFIFloat;
  CHECK_FAIL(mr_function_call(got, &arg, 1, &res), "expects one int");
  CHECK(strcmp(mr_last_error_kind(), "TypeError") == 0);
  mr_object_release(got);

  /* The TVM-FFI spellings. */
  CHECK_OK(TVMFFIFunctionSetGlobal(&name, g, 1));
  CHECK_OK(TVMFFIFunctionGetGlobal(&name, &h));
  CHECK(h == g);
  arg.type_index = kTVMFFIInt;
  arg.v_int64 = 1;
  CHECK_OK(TVMFFIFunctionCall(h, &arg, 1, &res));
  CHECK(res.v_int64 == 8);
  mr_object_release((TVMFFIObject*)h);
  CHECK_OK(TVMFFIFunctionGetGlobal(&missing, &h));
  CHECK(h == NULL);
  CHECK_FAIL(mr_registry_get("test.none", &got), "test.none");

  CHECK_OK(mr_registry_list(&names));
  seq = mr_array_view(names);
  for (i = 0; i < seq->size; ++i) {
    const TVMFFIAny* it = (const TVMFFIAny*)seq->data + i;
    CHECK(it->type_index == kTVMFFIStr);
    if (strcmp(mr_bytes_view(it->v_obj)->data, "test.add_one") == 0) ++found;
  }
  CHECK(found == 1);
  CHECK(seq->size >= 3); /* plus the built-ins ffi.SystemLib, ffi.ModuleGetFunction */
  mr_object_release(names);

  /* Replacing or removing a function whose deleter calls back into the registry. */
  {
    TVMFFIObjectHandle r;
    alarm(20); /* a deadlock ends the test */
    CHECK_OK(TVMFFIFunctionCreate(NULL, add_self, delete_using_registry, &r));
    CHECK_OK(mr_registry_set("test.reentrant", (TVMFFIObject*)r, 0));
    mr_object_release((TVMFFIObject*)r);
    CHECK_OK(mr_registry_set("test.reentrant", f, 1)); /* drops the last reference to r */
    CHECK(reentrant_deleted == 1);
    CHECK_OK(mr_registry_remove("test.reentrant"));
    alarm(0);
  }

  CHECK_OK(mr_registry_remove("test.add_one"));
  CHECK_FAIL(mr_registry_remove("test.add_one"), "not registered");
  mr_object_release(f);
  CHECK(self_deleted == 0);
  mr_object_release(g);
  CHECK(self_deleted == 7);
  return CHECK_RESULT();
}
