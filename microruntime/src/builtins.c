/* The runtime's own global functions (TVM's names): ffi.SystemLib and
 * ffi.ModuleGetFunction. registry.c registers them on first use. */
#include <string.h>

#include "internal.h"

static int builtin_system_lib(void* self, const TVMFFIAny* args, int32_t n, TVMFFIAny* result) {
  const char* prefix = "";
  size_t len = 0;
  char buf[MR_MAX_NAME];
  TVMFFIObject* mod;
  (void)self;
  if (n > 1) return mr_error_setf(kMrErrorType, "ffi.SystemLib takes at most 1 argument");
  if (n == 1 && mr_any_get_str(&args[0], &prefix, &len) != 0) return -1;
  if (len >= sizeof(buf)) return mr_value_error("system library prefix too long");
  memcpy(buf, prefix, len);
  buf[len] = '\0';
  if (mr_module_system_lib(buf, &mod) != 0) return -1;
  mr_any_set_object(result, mod);
  return 0;
}

static int builtin_module_get_function(void* self, const TVMFFIAny* args, int32_t n,
                                       TVMFFIAny* result) {
  const char* name;
  size_t len;
  char buf[MR_MAX_NAME];
  TVMFFIObject* f;
  (void)self;
  if (n < 2 || n > 3)
    return mr_error_setf(kMrErrorType,
                         "ffi.ModuleGetFunction(module, name, query_imports) takes 2 or 3 "
                         "arguments, got %d", (int)n);
  if (args[0].type_index != kTVMFFIModule)
    return mr_error_setf(kMrErrorType,
                         "ffi.ModuleGetFunction: argument 'module' must be a Module, got type "
                         "index %d (%s)", (int)args[0].type_index,
                         mr_type_index_name(args[0].type_index));
  if (mr_any_get_str(&args[1], &name, &len) != 0)
    return mr_error_setf(kMrErrorType,
                         "ffi.ModuleGetFunction: argument 'name' must be a string, got type "
                         "index %d (%s)", (int)args[1].type_index,
                         mr_type_index_name(args[1].type_index));
  if (n == 3 && args[2].type_index != kTVMFFIBool && args[2].type_index != kTVMFFIInt)
    return mr_error_setf(kMrErrorType,
                         "ffi.ModuleGetFunction: argument 'query_imports' must be a bool or an "
                         "int, got type index %d (%s)", (int)args[2].type_index,
                         mr_type_index_name(args[2].type_index));
  if (len >= sizeof(buf)) return mr_value_error("function name too long");
  memcpy(buf, name, len);
  buf[len] = '\0';
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
