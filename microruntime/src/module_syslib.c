/* The system library: a process-wide symbol table filled by
 * TVMFFIEnvModRegisterSystemLibSymbol (usually from static constructors of
 * linked kernels), and one library Module per prefix over it. */
#include <stdlib.h>
#include <string.h>

#include "module.h"

#define MR_ERROR_FILE kMrFileModuleSyslib

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

#ifndef MR_NO_DLOPEN
void** mr_syslib_context_slot_near(const void* anchor) {
  static const char k_ctx[] = "__tvm_ffi__library_ctx";
  const size_t k = sizeof(k_ctx) - 1;
  void** found = NULL;
  size_t i, n;
  mr_mutex_lock(&g_symbols.mutex);
  for (i = 0; i < g_symbols.count && !found; ++i) {
    n = strlen(g_symbols.items[i].name);
    if (n >= k && strcmp(g_symbols.items[i].name + n - k, k_ctx) == 0 &&
        mr_dl_same_object(anchor, g_symbols.items[i].ptr))
      found = (void**)g_symbols.items[i].ptr;
  }
  mr_mutex_unlock(&g_symbols.mutex);
  return found;
}
#endif

/* Registration gives no sizes: a Kiln system library registers its blob's size as a
 * symbol of its own (<prefix>__tvm_ffi__library_bin_nbytes, see module_library.c); else,
 * where the dynamic loader is at hand, it can tell the size of a symbol the executable or
 * a library exports, else a blob's declared size is trusted up to MR_MAX_LIBRARY_BLOB. */
#ifdef MR_NO_DLOPEN
static const mr_symbol_size_t k_symbol_size = NULL;
#else
static const mr_symbol_size_t k_symbol_size = mr_dl_symbol_size;
#endif

static mr_mutex_t g_syslib_create_mutex = MR_MUTEX_INIT;

int mr_module_system_lib(const char* prefix, TVMFFIObject** out_module) {
  TVMFFIObject* mod = NULL;
  char* copy;
  int i, status = 0;
  if (!prefix) prefix = "";
  if (strlen(prefix) >= MR_MAX_NAME) return MR_VALUE_ERROR("prefix too long");
  mr_mutex_lock(&g_syslib_create_mutex);
  for (i = 0; i < g_num_syslibs; ++i)
    if (strcmp(g_syslibs[i].prefix, prefix) == 0) mod = g_syslibs[i].module;
  if (!mod) {
    if (g_num_syslibs == (int)(sizeof(g_syslibs) / sizeof(g_syslibs[0]))) {
      status = MR_RAISE(kMrErrorRuntime, "too many system library prefixes");
    } else if (!(copy = mr_strndup(prefix, strlen(prefix)))) {
      status = MR_OOM("a system library");
    } else {
      status = mr_module_library_create(NULL, mr_syslib_lookup, k_symbol_size, prefix, 0,
                                        "system library", &mod);
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
