/* mr_module_load for builds without dynamic loading (MR_NO_DLOPEN), where
 * module_dso.c is left out. Empty otherwise. */
#include "internal.h"

#define MR_ERROR_FILE kMrFileModuleNodl

#ifdef MR_NO_DLOPEN
int mr_module_load(const char* path, TVMFFIObject** out_module) {
  (void)out_module;
  return MR_RAISE(kMrErrorRuntime, "cannot load '%s': runtime built without dynamic loading",
                       path ? path : "(null)");
}
#else
typedef int mr_module_nodl_unused_t;
#endif
