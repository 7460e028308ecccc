/* The system library: a process-wide symbol table filled by
 * TVMFFIEnvModRegisterSystemLibSymbol (usually from static constructors of
 * linked kernels), and one library Module per prefix over it. */
#include <stdlib.h>
#include <string.h>

#include "module.h"

static mr_symtab_t g_symbols = MR_SYMTAB_INIT(MR_MAX_SYSLIB_SYMBOLS, "system library symbols");

static struct {
  char* prefix;
  TVMFFIObject* module;
} g_syslibs[16];
static int g_num_syslibs;

int TVMFFIEnvModRegisterSystemLibSymbol(const char* name, void* symbol) {
  return mr_symtab_set(&g_symbols, name, symbol);
}

void* mr_syslib_lookup(void* handle, const char* symbol) {
  (void)handle;
  return mr_symtab_get(&g_symbols, symbol);
}

static mr_mutex_t g_syslib_create_mutex = MR_MUTEX_INIT;

int mr_module_system_lib(const char* prefix, TVMFFIObject** out_module) {
  TVMFFIObject* mod = NULL;
  char* copy;
  int i, status = 0;
  if (!prefix) prefix = "";
  if (strlen(prefix) >= MR_MAX_NAME) return mr_value_error("prefix too long");
  mr_mutex_lock(&g_syslib_create_mutex);
  for (i = 0; i < g_num_syslibs; ++i)
    if (strcmp(g_syslibs[i].prefix, prefix) == 0) mod = g_syslibs[i].module;
  if (!mod) {
    if (g_num_syslibs == (int)(sizeof(g_syslibs) / sizeof(g_syslibs[0]))) {
      status = mr_error_set("RuntimeError", "too many system library prefixes");
    } else if (!(copy = mr_strndup(prefix, strlen(prefix)))) {
      status = mr_error_oom("a system library");
    } else {
      status = mr_module_library_create(NULL, mr_syslib_lookup, prefix, 0, "system library",
                                        &mod);
      if (status == 0) {
        g_syslibs[g_num_syslibs].prefix = copy;
        g_syslibs[g_num_syslibs].module = mod; /* the table keeps this reference */
        ++g_num_syslibs;
      } else {
        free(copy);
      }
    }
  }
  if (status == 0) {
    mr_object_retain(mod);
    *out_module = mod;
  }
  mr_mutex_unlock(&g_syslib_create_mutex);
  return status;
}
