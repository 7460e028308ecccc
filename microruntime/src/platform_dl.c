/* Dynamic loading for platform.h on POSIX: dlopen, dlsym, dlclose, dlerror, symbol
 * sizes from the ELF symbol table (dladdr1), a file's identity (stat) and loading a
 * private copy of a library. The only file that calls the dynamic loader; it compiles
 * to nothing in dlopen-free builds (MR_NO_DLOPEN), and the Makefile leaves it out of
 * those. */
#ifndef MR_NO_DLOPEN
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "platform.h"

/* Why the last mr_dl_open_copy on this thread failed, when the dynamic loader did not
 * say ("" otherwise). */
static MR_THREAD_LOCAL char g_dl_error[512];

void* mr_dl_open(const char* path) {
  g_dl_error[0] = '\0';
  return dlopen(path, RTLD_LAZY | RTLD_LOCAL);
}

void* mr_dl_sym(void* handle, const char* symbol) { return dlsym(handle, symbol); }

void mr_dl_close(void* handle) {
  if (handle) (void)dlclose(handle);
}

const char* mr_dl_error(void) {
  const char* err;
  if (g_dl_error[0]) return g_dl_error;
  err = dlerror();
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

int mr_dl_same_object(const void* a, const void* b) {
  Dl_info ia, ib;
  return dladdr(a, &ia) != 0 && dladdr(b, &ib) != 0 && ia.dli_fbase == ib.dli_fbase;
}

int mr_file_id(const char* path, mr_file_id_t* out_id) {
  struct stat st;
  if (stat(path, &st) != 0) return -1;
  out_id->dev = (uint64_t)st.st_dev;
  out_id->ino = (uint64_t)st.st_ino;
  out_id->size = (uint64_t)st.st_size;
  out_id->mtime_sec = (int64_t)st.st_mtim.tv_sec;
  out_id->mtime_nsec = (int64_t)st.st_mtim.tv_nsec;
  return 0;
}

/* Copies everything from `in` to `out`: 0, or -1 with errno set. */
static int copy_fd(int in, int out) {
  char buf[1 << 14];
  for (;;) {
    ssize_t n = read(in, buf, sizeof(buf)), done = 0;
    if (n == 0) return 0;
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return -1;
    while (done < n) {
      ssize_t w = write(out, buf + done, (size_t)(n - done));
      if (w < 0 && errno == EINTR) continue;
      if (w < 0) return -1;
      done += w;
    }
  }
}

/* Copies the file at path to a new file "<dir>/.<name>.XXXXXX" whose name is left in
 * `copy` (`cap` bytes): 0, or -1 with errno set (and no file left behind). */
static int copy_into(const char* path, const char* dir, char* copy, size_t cap) {
  const char* slash = strrchr(path, '/');
  int in, out, status = -1, saved;
  int n = snprintf(copy, cap, "%s/.%s.XXXXXX", dir, slash ? slash + 1 : path);
  if (n < 0 || (size_t)n >= cap) {
    errno = ENAMETOOLONG;
    return -1;
  }
  if ((in = open(path, O_RDONLY)) < 0) return -1;
  if ((out = mkstemp(copy)) >= 0) {
    status = copy_fd(in, out);
    saved = errno;
    if (close(out) != 0 && status == 0) {
      status = -1;
      saved = errno;
    }
    if (status != 0) (void)unlink(copy);
    errno = saved;
  }
  saved = errno;
  (void)close(in);
  errno = saved;
  return status;
}

void* mr_dl_open_copy(const char* path) {
  char dir[4096], copy[4096];
  const char* slash = strrchr(path, '/');
  const char* tmpdir = getenv("TMPDIR");
  const char* dirs[2] = {dir, tmpdir && tmpdir[0] ? tmpdir : "/tmp"};
  size_t len = slash ? (size_t)(slash - path) : 0;
  void* handle = NULL;
  int i, err = 0;
  g_dl_error[0] = '\0';
  /* The library's own folder first: it allows mapping code, where /tmp may not. */
  if (!slash) {
    (void)snprintf(dir, sizeof(dir), ".");
  } else if (len < sizeof(dir)) {
    memcpy(dir, path, len);
    dir[len] = '\0';
  } else {
    dirs[0] = dirs[1]; /* a folder name too long to copy: the temporary folder twice */
  }
  for (i = 0; i < 2 && !handle; ++i) {
    if (copy_into(path, dirs[i], copy, sizeof(copy)) != 0) {
      err = errno;
      continue;
    }
    handle = dlopen(copy, RTLD_LAZY | RTLD_LOCAL);
    if (!handle) (void)snprintf(g_dl_error, sizeof(g_dl_error), "%s", dlerror());
    (void)unlink(copy); /* the mapping stays; no file is left behind */
  }
  if (!handle && !g_dl_error[0])
    (void)snprintf(g_dl_error, sizeof(g_dl_error), "cannot make a private copy to load: %s",
                   strerror(err));
  return handle;
}
#else
typedef int mr_platform_dl_unused_t;
#endif
