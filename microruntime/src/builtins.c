/* The runtime's own global functions (TVM's names): ffi.SystemLib and
 * ffi.ModuleGetFunction. registry.c registers them on first use. */
#include <string.h>

#include "internal.h"

#define MR_ERROR_FILE kMrFileBuiltins

/* TypeError naming the argument, what it must be, and what it is. */
static int bad_argument(const char* func, const char* arg, const char* expected,
                        const TVMFFIAny* value) {
  return MR_RAISE(kMrErrorType, "%s: argument '%s' must be %s, got type index %d (%s)",
                       func, arg, expected, (int)value->type_index,
                       mr_type_index_name(value->type_index));
}

/* A string argument as a NUL-terminated copy in buf[MR_MAX_NAME]. */
static int string_argument(const char* func, const char* arg, const TVMFFIAny* value,
                           char* buf) {
  const char* text;
  size_t len;
  if (mr_any_get_str(value, &text, &len) != 0) return bad_argument(func, arg, "a string", value);
  if (len >= MR_MAX_NAME)
    return MR_VALUE_ERROR("%s: argument '%s' is longer than %d bytes", func, arg, MR_MAX_NAME - 1);
  memcpy(buf, text, len);
  buf[len] = '\0';
  return 0;
}

static int builtin_system_lib(void* self, const TVMFFIAny* args, int32_t n, TVMFFIAny* result) {
  static const char k_name[] = "ffi.SystemLib";
  char buf[MR_MAX_NAME] = "";
  TVMFFIObject* mod;
  (void)self;
  if (n > 1) return MR_RAISE(kMrErrorType, "%s takes at most 1 argument", k_name);
  if ((n == 1 && string_argument(k_name, "prefix", &args[0], buf) != 0) ||
      mr_module_system_lib(buf, &mod) != 0)
    return -1;
  mr_any_set_object(result, mod);
  return 0;
}

static int builtin_module_get_function(void* self, const TVMFFIAny* args, int32_t n,
                                       TVMFFIAny* result) {
  static const char k_name[] = "ffi.ModuleGetFunction";
  char buf[MR_MAX_NAME];
  TVMFFIObject* f;
  (void)self;
  if (n < 2 || n > 3)
    return MR_RAISE(kMrErrorType, "%s(module, name, query_imports) takes 2 or 3 arguments, "
                         "got %d", k_name, (int)n);
  if (args[0].type_index != kTVMFFIModule)
    return bad_argument(k_name, "module", "a Module", &args[0]);
  if (string_argument(k_name, "name", &args[1], buf) != 0) return -1;
  if (n == 3 && args[2].type_index != kTVMFFIBool && args[2].type_index != kTVMFFIInt)
    return bad_argument(k_name, "query_imports", "a bool or an int", &args[2]);
  if (mr_module_get_function(args[0].v_obj, buf, n == 3 && args[2].v_int64 != 0, &f) != 0)
    return -1;
  mr_any_set_object(result, f);
  return 0;
}

static const mr_builtin_t k_builtins[] = {
    {"ffi.SystemLib", builtin_system_lib},
    {"ffi.ModuleGetFunction", builtin_module_get_function},
};

const mr_builtin_t* mr_builtins(size_t* out_count) {
  *out_count = sizeof(k_builtins) / sizeof(k_builtins[0]);
  return k_builtins;
}
