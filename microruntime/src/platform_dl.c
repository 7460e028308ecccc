/* Dynamic loading for platform.h on POSIX: dlopen, dlsym, dlclose, dlerror, and
 * symbol sizes from the ELF symbol table (dladdr1). The only file that calls the
 * dynamic loader; it compiles to nothing in dlopen-free builds (MR_NO_DLOPEN), and
 * the Makefile leaves it out of those. */
#ifndef MR_NO_DLOPEN
#define _GNU_SOURCE
#include <dlfcn.h>
#include <link.h>

#include "platform.h"

void* mr_dl_open(const char* path) { return dlopen(path, RTLD_LAZY | RTLD_LOCAL); }

void* mr_dl_sym(void* handle, const char* symbol) { return dlsym(handle, symbol); }

void mr_dl_close(void* handle) {
  if (handle) (void)dlclose(handle);
}

const char* mr_dl_error(void) {
  const char* err = dlerror();
  return err ? err : "unknown error";
}

uint64_t mr_dl_symbol_size(const void* addr) {
#ifdef __GLIBC__ /* dladdr1 and RTLD_DL_SYMENT are GNU extensions */
  Dl_info info;
  const ElfW(Sym)* sym = NULL;
  if (dladdr1(addr, &info, (void**)&sym, RTLD_DL_SYMENT) == 0 || !sym ||
      info.dli_saddr != addr)
    return 0;
  return (uint64_t)sym->st_size;
#else
  (void)addr;
  return 0;
#endif
}
#else
typedef int mr_platform_dl_unused_t;
#endif
