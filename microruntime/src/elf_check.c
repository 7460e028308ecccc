/* Checks a shared library's ELF headers against the file's size before dlopen
 * maps it. The dynamic loader maps PT_LOAD segments without comparing them with
 * the file's length, and the first touch of a page past the end of a truncated
 * file raises SIGBUS; so every header table and segment must lie inside the file.
 * Files that are not native ELF are left to dlopen, which refuses them cleanly.
 * Part of the dlopen path only: empty when MR_NO_DLOPEN. */
#ifndef MR_NO_DLOPEN
#include <elf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

#if UINTPTR_MAX > 0xFFFFFFFFu
typedef Elf64_Ehdr mr_ehdr_t;
typedef Elf64_Phdr mr_phdr_t;
typedef Elf64_Shdr mr_shdr_t;
#define MR_ELF_CLASS ELFCLASS64
#else
typedef Elf32_Ehdr mr_ehdr_t;
typedef Elf32_Phdr mr_phdr_t;
typedef Elf32_Shdr mr_shdr_t;
#define MR_ELF_CLASS ELFCLASS32
#endif

static int elf_fail(const char* origin, const char* what, uint64_t off, uint64_t len,
                    uint64_t file_size) {
  return mr_error_setf(kMrErrorRuntime,
                       "cannot load library '%s': truncated or corrupt ELF file: %s at offset "
                       "%llu (%llu bytes) does not fit in the file's %llu bytes",
                       origin, what, (unsigned long long)off, (unsigned long long)len,
                       (unsigned long long)file_size);
}

/* Fails unless [off, off + count * entsize) lies inside the file. */
static int check_range(const char* origin, const char* what, uint64_t off, uint64_t count,
                       uint64_t entsize, uint64_t file_size) {
  uint64_t len, end;
  if (mr_mul_overflow_u64(count, entsize, &len) || mr_add_overflow_u64(off, len, &end) ||
      end > file_size)
    return elf_fail(origin, what, off, len, file_size);
  return 0;
}

/* 1 when the header is a native ELF header (the rest of the checks apply), 0 when it
 * is not ELF for this machine (left to dlopen), -1 when it is broken. */
static int check_ehdr(const mr_ehdr_t* eh, uint64_t file_size, const char* origin) {
  const uint16_t one = 1;
  int native_data = *(const unsigned char*)&one ? ELFDATA2LSB : ELFDATA2MSB;
  if (eh->e_ident[EI_CLASS] != MR_ELF_CLASS || eh->e_ident[EI_DATA] != native_data) return 0;
  if (eh->e_ehsize != sizeof(mr_ehdr_t) || eh->e_phentsize != sizeof(mr_phdr_t) ||
      eh->e_phnum == 0 || eh->e_phnum == PN_XNUM)
    return mr_error_setf(kMrErrorRuntime,
                         "cannot load library '%s': corrupt ELF header (header size %u, program "
                         "header size %u, %u program headers)",
                         origin, (unsigned)eh->e_ehsize, (unsigned)eh->e_phentsize,
                         (unsigned)eh->e_phnum);
  if (check_range(origin, "the program header table", eh->e_phoff, eh->e_phnum,
                  sizeof(mr_phdr_t), file_size) != 0)
    return -1;
  if (eh->e_shoff != 0 || eh->e_shnum != 0) {
    if (eh->e_shentsize != sizeof(mr_shdr_t))
      return mr_error_setf(kMrErrorRuntime,
                           "cannot load library '%s': corrupt ELF header (section header size "
                           "%u)", origin, (unsigned)eh->e_shentsize);
    if (check_range(origin, "the section header table", eh->e_shoff,
                    eh->e_shnum ? eh->e_shnum : 1, sizeof(mr_shdr_t), file_size) != 0)
      return -1;
  }
  return 1;
}

static int check_phdrs(const mr_phdr_t* ph, unsigned n, uint64_t file_size, const char* origin) {
  unsigned i;
  char what[64];
  for (i = 0; i < n; ++i) {
    snprintf(what, sizeof(what), "segment %u", i);
    if (check_range(origin, what, ph[i].p_offset, 1, ph[i].p_filesz, file_size) != 0) return -1;
    if (ph[i].p_type == PT_LOAD && ph[i].p_filesz > ph[i].p_memsz)
      return mr_error_setf(kMrErrorRuntime,
                           "cannot load library '%s': corrupt ELF file: segment %u has %llu "
                           "bytes in the file but %llu in memory",
                           origin, i, (unsigned long long)ph[i].p_filesz,
                           (unsigned long long)ph[i].p_memsz);
  }
  return 0;
}

int mr_elf_check_image(const void* data, size_t size, const char* origin) {
  mr_ehdr_t eh;
  mr_phdr_t* ph;
  int status;
  if (size < SELFMAG || memcmp(data, ELFMAG, SELFMAG) != 0) return 0;
  if (size < sizeof(eh)) return elf_fail(origin, "the ELF header", 0, sizeof(eh), size);
  memcpy(&eh, data, sizeof(eh));
  status = check_ehdr(&eh, size, origin);
  if (status <= 0) return status;
  ph = (mr_phdr_t*)malloc((size_t)eh.e_phnum * sizeof(*ph));
  if (!ph) return mr_error_oom("ELF program headers");
  memcpy(ph, (const char*)data + eh.e_phoff, (size_t)eh.e_phnum * sizeof(*ph));
  status = check_phdrs(ph, eh.e_phnum, size, origin);
  free(ph);
  return status;
}

int mr_elf_check_file(const char* path) {
  FILE* f = fopen(path, "rb");
  mr_ehdr_t eh;
  mr_phdr_t* ph = NULL;
  long end;
  uint64_t size;
  size_t got;
  int status = 0;
  if (!f) return 0; /* dlopen says why it cannot open the file */
  if (fseek(f, 0, SEEK_END) != 0 || (end = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) != 0)
    goto done; /* not a seekable regular file: left to dlopen */
  size = (uint64_t)end;
  got = fread(&eh, 1, sizeof(eh), f);
  if (got < SELFMAG || memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0) goto done;
  if (got < sizeof(eh)) {
    status = elf_fail(path, "the ELF header", 0, sizeof(eh), size);
    goto done;
  }
  status = check_ehdr(&eh, size, path);
  if (status <= 0) goto done;
  ph = (mr_phdr_t*)malloc((size_t)eh.e_phnum * sizeof(*ph));
  if (!ph) {
    status = mr_error_oom("ELF program headers");
    goto done;
  }
  if (fseek(f, (long)eh.e_phoff, SEEK_SET) != 0 ||
      fread(ph, sizeof(*ph), eh.e_phnum, f) != eh.e_phnum) {
    status = elf_fail(path, "the program header table", eh.e_phoff,
                      (uint64_t)eh.e_phnum * sizeof(*ph), size);
    goto done;
  }
  status = check_phdrs(ph, eh.e_phnum, size, path);
done:
  free(ph);
  fclose(f);
  return status < 0 ? -1 : 0;
}
#else
typedef int mr_elf_check_unused_t;
#endif
