/* Checks a shared library's file before dlopen maps it. The dynamic loader maps PT_LOAD
 * segments without comparing them with the file's length (the first touch of a page past
 * the end of a truncated file raises SIGBUS), follows the dynamic section wherever it
 * points, and the runtime later reads __tvm_ffi__library_bin within the size the symbol
 * table gives it; so, before dlopen:
 * - the file is a regular file (a FIFO or a device would block or never end);
 * - when it ends with Kiln's checksum trailer (below), the CRC-32C of everything but the
 *   library blob matches (the blob's parts carry their own checksums in the manifest);
 * - the ELF header is a shared object for this machine, every header table and segment
 *   lies inside the file, the dynamic section and the tables it names lie in the file's
 *   loaded data;
 * - the dynamic symbol __tvm_ffi__library_bin (and any symbol at its address) lies in the
 *   file-backed part of a PT_LOAD segment, and the blob's own length fits in it.
 * Files that are not native ELF are left to dlopen, which refuses them cleanly.
 *
 * The trailer (written by the compiler after linking; 32 bytes at the end of the file,
 * little-endian): "KILNCRC1", u64 offset and u64 size of the region left out (the blob),
 * u32 0, u32 CRC-32C of the file before the trailer without that region, then of the
 * trailer's 20 bytes after its magic.
 * Part of the dlopen path only: empty when MR_NO_DLOPEN. */
#ifndef MR_NO_DLOPEN
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"

#define MR_ERROR_FILE kMrFileElfCheck

#if UINTPTR_MAX > 0xFFFFFFFFu
typedef Elf64_Ehdr mr_ehdr_t;
typedef Elf64_Phdr mr_phdr_t;
typedef Elf64_Shdr mr_shdr_t;
typedef Elf64_Dyn mr_dyn_t;
typedef Elf64_Sym mr_sym_t;
typedef uint64_t mr_bloom_word_t;
#define MR_ELF_CLASS ELFCLASS64
#else
typedef Elf32_Ehdr mr_ehdr_t;
typedef Elf32_Phdr mr_phdr_t;
typedef Elf32_Shdr mr_shdr_t;
typedef Elf32_Dyn mr_dyn_t;
typedef Elf32_Sym mr_sym_t;
typedef uint32_t mr_bloom_word_t;
#define MR_ELF_CLASS ELFCLASS32
#endif

/* The machine this runtime runs on, where elf.h names it (else e_machine is left to dlopen). */
#if defined(__x86_64__)
#define MR_ELF_MACHINE EM_X86_64
#elif defined(__aarch64__)
#define MR_ELF_MACHINE EM_AARCH64
#elif defined(__i386__)
#define MR_ELF_MACHINE EM_386
#elif defined(__arm__)
#define MR_ELF_MACHINE EM_ARM
#elif defined(__riscv) && defined(EM_RISCV)
#define MR_ELF_MACHINE EM_RISCV
#endif

#define TRAILER_SIZE 32
static const char k_trailer_magic[8] = {'K', 'I', 'L', 'N', 'C', 'R', 'C', '1'};
static const char k_blob_symbol[] = "__tvm_ffi__library_bin";

/* A file image and what the checks found in it. */
typedef struct {
  const unsigned char* data;
  uint64_t size;
  const char* origin;
  mr_ehdr_t eh;
  mr_phdr_t* ph;
} elf_t;

static int elf_fail(const char* origin, const char* what, uint64_t off, uint64_t len,
                    uint64_t file_size) {
  return MR_RAISE(kMrErrorRuntime,
                       "cannot load library '%s': truncated or corrupt ELF file: %s at offset "
                       "%llu (%llu bytes) does not fit in the file's %llu bytes",
                       origin, what, (unsigned long long)off, (unsigned long long)len,
                       (unsigned long long)file_size);
}

static int corrupt(const elf_t* e, const char* what) {
  return MR_RAISE(kMrErrorRuntime, "cannot load library '%s': corrupt ELF file: %s",
                       e->origin, what);
}

/* Fails unless [off, off + count * entsize) lies inside the file. */
static int check_range(const char* origin, const char* what, uint64_t off, uint64_t count,
                       uint64_t entsize, uint64_t file_size) {
  uint64_t len = UINT64_MAX, end; /* UINT64_MAX: the length overflowed */
  if (mr_mul_overflow_u64(count, entsize, &len) || mr_add_overflow_u64(off, len, &end) ||
      end > file_size)
    return elf_fail(origin, what, off, len, file_size);
  return 0;
}

static uint64_t le_u64(const unsigned char* p) {
  uint64_t v = 0;
  int i;
  for (i = 7; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}

/* ---- the checksum trailer ---- */
static int check_trailer(const elf_t* e) {
  const unsigned char* t;
  uint64_t off, len, end, body;
  uint32_t want, got;
  if (e->size < TRAILER_SIZE + sizeof(mr_ehdr_t)) return 0;
  t = e->data + e->size - TRAILER_SIZE;
  if (memcmp(t, k_trailer_magic, sizeof(k_trailer_magic)) != 0) return 0;
  off = le_u64(t + 8);
  len = le_u64(t + 16);
  want = (uint32_t)(le_u64(t + 24) >> 32);
  body = e->size - TRAILER_SIZE;
  if (mr_add_overflow_u64(off, len, &end) || end > body) {
    off = body; /* a broken region: checksum everything, which cannot match */
    end = body;
  }
  got = mr_crc32c(0, e->data, (size_t)off);
  got = mr_crc32c(got, e->data + end, (size_t)(body - end));
  got = mr_crc32c(got, t + 8, 20);
  if (got != want)
    return MR_RAISE(kMrErrorRuntime,
                         "%s: checksum mismatch in the library's code and headers (expected "
                         "0x%08x, got 0x%08x): the file is corrupt",
                         e->origin, (unsigned)want, (unsigned)got);
  return 0;
}

/* ---- headers ---- */
/* 1 when the header is a native ELF header (the rest of the checks apply), 0 when it
 * is not ELF for this machine (left to dlopen), -1 when it is broken. */
static int check_ehdr(const mr_ehdr_t* eh, uint64_t file_size, const char* origin) {
  const uint16_t one = 1;
  int native_data = *(const unsigned char*)&one ? ELFDATA2LSB : ELFDATA2MSB;
  if (eh->e_ident[EI_CLASS] != MR_ELF_CLASS || eh->e_ident[EI_DATA] != native_data) return 0;
  if (eh->e_ident[EI_VERSION] != EV_CURRENT || eh->e_version != EV_CURRENT ||
      eh->e_type != ET_DYN)
    return MR_RAISE(kMrErrorRuntime,
                         "cannot load library '%s': not a shared library (ELF type %u, version "
                         "%u)", origin, (unsigned)eh->e_type, (unsigned)eh->e_version);
#ifdef MR_ELF_MACHINE
  if (eh->e_machine != MR_ELF_MACHINE)
    return MR_RAISE(kMrErrorRuntime,
                         "cannot load library '%s': it is built for ELF machine %u, this "
                         "runtime runs on machine %u", origin, (unsigned)eh->e_machine,
                         (unsigned)MR_ELF_MACHINE);
#endif
  if (eh->e_ehsize != sizeof(mr_ehdr_t) || eh->e_phentsize != sizeof(mr_phdr_t) ||
      eh->e_phnum == 0 || eh->e_phnum == PN_XNUM)
    return MR_RAISE(kMrErrorRuntime,
                         "cannot load library '%s': corrupt ELF header (header size %u, program "
                         "header size %u, %u program headers)",
                         origin, (unsigned)eh->e_ehsize, (unsigned)eh->e_phentsize,
                         (unsigned)eh->e_phnum);
  if (check_range(origin, "the program header table", eh->e_phoff, eh->e_phnum,
                  sizeof(mr_phdr_t), file_size) != 0)
    return -1;
  if (eh->e_shoff != 0 || eh->e_shnum != 0) {
    if (eh->e_shentsize != sizeof(mr_shdr_t))
      return MR_RAISE(kMrErrorRuntime,
                           "cannot load library '%s': corrupt ELF header (section header size "
                           "%u)", origin, (unsigned)eh->e_shentsize);
    if (check_range(origin, "the section header table", eh->e_shoff,
                    eh->e_shnum ? eh->e_shnum : 1, sizeof(mr_shdr_t), file_size) != 0)
      return -1;
  }
  return 1;
}

static int check_phdrs(const mr_phdr_t* ph, unsigned n, uint64_t file_size, const char* origin) {
  unsigned i, loads = 0, dynamics = 0;
  char what[64];
  for (i = 0; i < n; ++i) {
    snprintf(what, sizeof(what), "segment %u", i);
    if (check_range(origin, what, ph[i].p_offset, 1, ph[i].p_filesz, file_size) != 0) return -1;
    dynamics += ph[i].p_type == PT_DYNAMIC;
    if (ph[i].p_type != PT_LOAD) continue;
    ++loads;
    if (ph[i].p_filesz > ph[i].p_memsz)
      return MR_RAISE(kMrErrorRuntime,
                           "cannot load library '%s': corrupt ELF file: segment %u has %llu "
                           "bytes in the file but %llu in memory",
                           origin, i, (unsigned long long)ph[i].p_filesz,
                           (unsigned long long)ph[i].p_memsz);
    if ((ph[i].p_align & (ph[i].p_align - 1)) != 0 ||
        (ph[i].p_align > 1 && (ph[i].p_vaddr - ph[i].p_offset) % ph[i].p_align != 0))
      return MR_RAISE(kMrErrorRuntime,
                           "cannot load library '%s': corrupt ELF file: segment %u is not "
                           "aligned as it says (alignment %llu)",
                           origin, i, (unsigned long long)ph[i].p_align);
  }
  if (loads == 0 || dynamics > 1)
    return MR_RAISE(kMrErrorRuntime,
                         "cannot load library '%s': corrupt ELF file: %u loadable segments, %u "
                         "dynamic sections", origin, loads, dynamics);
  return 0;
}

/* ---- the loaded data: addresses to file offsets ---- */
/* The file offset of [vaddr, vaddr + len) when it lies in the file-backed part of one
 * PT_LOAD segment; 0 when it does not. */
static int file_offset(const elf_t* e, uint64_t vaddr, uint64_t len, uint64_t* out_off) {
  unsigned i;
  uint64_t end;
  if (mr_add_overflow_u64(vaddr, len, &end)) return 0;
  for (i = 0; i < e->eh.e_phnum; ++i) {
    const mr_phdr_t* p = &e->ph[i];
    if (p->p_type == PT_LOAD && vaddr >= p->p_vaddr && end - p->p_vaddr <= p->p_filesz) {
      *out_off = p->p_offset + (vaddr - p->p_vaddr);
      return 1;
    }
  }
  return 0;
}

/* What the dynamic section names (0 when absent). */
typedef struct {
  uint64_t symtab, strtab, strsz, hash, gnu_hash, nsyms;
} dyn_info_t;

/* The number of dynamic symbols, as the loader counts them: DT_HASH's nchain, or one past
 * the last symbol a DT_GNU_HASH chain reaches; 0 when neither table can be read. */
static int count_symbols(const elf_t* e, dyn_info_t* d) {
  uint64_t off, words, i, last = 0, at;
  uint32_t hdr[4], v;
  if (d->hash) {
    if (!file_offset(e, d->hash, 8, &off)) return corrupt(e, "DT_HASH lies outside the file");
    memcpy(hdr, e->data + off, 8);
    d->nsyms = hdr[1];
    return 0;
  }
  if (!d->gnu_hash) return 0;
  if (!file_offset(e, d->gnu_hash, 16, &off)) return corrupt(e, "DT_GNU_HASH lies outside the file");
  memcpy(hdr, e->data + off, 16); /* nbuckets, symoffset, bloom words, bloom shift */
  words = (uint64_t)hdr[2] * sizeof(mr_bloom_word_t) / 4 + hdr[0];
  if (!file_offset(e, d->gnu_hash, 16 + 4 * words, &off))
    return corrupt(e, "the GNU hash table lies outside the file");
  for (i = 0; i < hdr[0]; ++i) {
    memcpy(&v, e->data + off + 16 + 4 * (words - hdr[0] + i), 4);
    if (v > last) last = v;
  }
  if (last < hdr[1]) {
    d->nsyms = hdr[1];
    return 0;
  }
  /* The chain of the last bucket ends at the entry with its low bit set. */
  at = d->gnu_hash + 16 + 4 * words;
  for (i = last - hdr[1];; ++i) {
    if (!file_offset(e, at + 4 * i, 4, &off))
      return corrupt(e, "a GNU hash chain runs outside the file");
    memcpy(&v, e->data + off, 4);
    if (v & 1u) break;
  }
  d->nsyms = hdr[1] + i + 1;
  return 0;
}

/* The dynamic section lies in the loaded data and ends with DT_NULL; the symbol and
 * string tables it names lie there too. */
static int check_dynamic(const elf_t* e, dyn_info_t* d) {
  unsigned i;
  uint64_t off, n, k, syment = sizeof(mr_sym_t), len;
  mr_dyn_t dyn;
  int ended = 0;
  memset(d, 0, sizeof(*d));
  for (i = 0; i < e->eh.e_phnum && e->ph[i].p_type != PT_DYNAMIC; ++i) continue;
  if (i == e->eh.e_phnum) return 0;
  if (!file_offset(e, e->ph[i].p_vaddr, e->ph[i].p_filesz, &off))
    return corrupt(e, "the dynamic section lies outside the loaded data");
  n = e->ph[i].p_filesz / sizeof(mr_dyn_t);
  for (k = 0; k < n && !ended; ++k) {
    memcpy(&dyn, e->data + off + k * sizeof(mr_dyn_t), sizeof(dyn));
    switch (dyn.d_tag) {
      case DT_NULL: ended = 1; break;
      case DT_SYMTAB: d->symtab = dyn.d_un.d_ptr; break;
      case DT_STRTAB: d->strtab = dyn.d_un.d_ptr; break;
      case DT_STRSZ: d->strsz = dyn.d_un.d_val; break;
      case DT_SYMENT: syment = dyn.d_un.d_val; break;
      case DT_HASH: d->hash = dyn.d_un.d_ptr; break;
      case DT_GNU_HASH: d->gnu_hash = dyn.d_un.d_ptr; break;
      default: break;
    }
  }
  if (!ended) return corrupt(e, "the dynamic section does not end (no DT_NULL)");
  if (syment != sizeof(mr_sym_t)) return corrupt(e, "DT_SYMENT is not the size of a symbol");
  if (d->strtab && !file_offset(e, d->strtab, d->strsz, &off))
    return corrupt(e, "the dynamic string table lies outside the loaded data");
  if (!d->symtab || !d->strtab) {
    d->nsyms = 0;
    return 0;
  }
  if (count_symbols(e, d) != 0) return -1;
  if (mr_mul_overflow_u64(d->nsyms, sizeof(mr_sym_t), &len) ||
      !file_offset(e, d->symtab, len, &off))
    return corrupt(e, "the dynamic symbol table lies outside the loaded data");
  return 0;
}

/* ---- __tvm_ffi__library_bin ---- */
static void symbol_at(const elf_t* e, const dyn_info_t* d, uint64_t i, mr_sym_t* out) {
  uint64_t off = 0;
  (void)file_offset(e, d->symtab + i * sizeof(mr_sym_t), sizeof(mr_sym_t), &off);
  memcpy(out, e->data + off, sizeof(*out));
}

static int is_blob_symbol(const elf_t* e, const dyn_info_t* d, const mr_sym_t* s) {
  uint64_t off;
  if (s->st_shndx == SHN_UNDEF || s->st_name >= d->strsz ||
      d->strsz - s->st_name < sizeof(k_blob_symbol) ||
      !file_offset(e, d->strtab + s->st_name, sizeof(k_blob_symbol), &off))
    return 0;
  return memcmp(e->data + off, k_blob_symbol, sizeof(k_blob_symbol)) == 0;
}

/* A symbol the runtime may take for the blob lies in the file's loaded data, and the blob's
 * length field (u64 nbytes, then nbytes bytes) fits in it. */
static int check_blob_extent(const elf_t* e, const mr_sym_t* s) {
  uint64_t off = 0;
  if (s->st_size != 0 && !file_offset(e, s->st_value, s->st_size, &off))
    return MR_RAISE(kMrErrorRuntime,
                         "cannot load library '%s': corrupt library blob: %llu bytes at address "
                         "0x%llx do not lie in the file's loaded data", e->origin,
                         (unsigned long long)s->st_size, (unsigned long long)s->st_value);
  if (s->st_size != 0 && (s->st_size < 8 || le_u64(e->data + off) > s->st_size - 8))
    return MR_RAISE(kMrErrorRuntime,
                         "cannot load library '%s': corrupt library blob: nbytes %llu at offset 0 "
                         "exceeds the blob's size (%llu bytes)", e->origin,
                         (unsigned long long)(s->st_size < 8 ? 0 : le_u64(e->data + off)),
                         (unsigned long long)s->st_size);
  return 0;
}

static int check_blob(const elf_t* e, const dyn_info_t* d) {
  uint64_t i;
  mr_sym_t s, blob;
  int found = 0;
  for (i = 0; i < d->nsyms && !found; ++i) {
    symbol_at(e, d, i, &blob);
    found = is_blob_symbol(e, d, &blob);
  }
  if (!found) return 0;
  if (check_blob_extent(e, &blob) != 0) return -1;
  /* The runtime asks the loader for the size of the object at the blob's address, which
   * may name another symbol there. */
  for (i = 0; i < d->nsyms; ++i) {
    symbol_at(e, d, i, &s);
    if (s.st_shndx != SHN_UNDEF && s.st_value == blob.st_value && check_blob_extent(e, &s))
      return -1;
  }
  return 0;
}

int mr_elf_check_image(const void* data, size_t size, const char* origin) {
  elf_t e;
  dyn_info_t d;
  int status;
  e.data = (const unsigned char*)data;
  e.size = size;
  e.origin = origin;
  e.ph = NULL;
  /* The checksum first: a flip in the ELF magic is a corrupt file too. */
  if (mr_checksum_verify_enabled() && check_trailer(&e) != 0) return -1;
  if (size < SELFMAG || memcmp(data, ELFMAG, SELFMAG) != 0) return 0;
  if (size < sizeof(e.eh)) return elf_fail(origin, "the ELF header", 0, sizeof(e.eh), size);
  memcpy(&e.eh, data, sizeof(e.eh));
  status = check_ehdr(&e.eh, size, origin);
  if (status <= 0) return status;
  e.ph = (mr_phdr_t*)malloc((size_t)e.eh.e_phnum * sizeof(*e.ph));
  if (!e.ph) return MR_OOM("ELF program headers");
  memcpy(e.ph, e.data + e.eh.e_phoff, (size_t)e.eh.e_phnum * sizeof(*e.ph));
  status = check_phdrs(e.ph, e.eh.e_phnum, size, origin);
  if (status == 0) status = check_dynamic(&e, &d);
  if (status == 0) status = check_blob(&e, &d);
  free(e.ph);
  return status;
}

int mr_elf_check_file(const char* path) {
  struct stat st;
  void* map;
  int fd, status;
  /* Non-blocking: opening a FIFO for reading would wait for a writer. */
  fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return 0; /* dlopen says why it cannot open the file */
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    (void)close(fd);
    return MR_RAISE(kMrErrorRuntime, "cannot load library '%s': not a regular file", path);
  }
  if ((uint64_t)st.st_size < SELFMAG || (uint64_t)st.st_size > SIZE_MAX) {
    (void)close(fd);
    return 0; /* too short to be ELF: dlopen refuses it */
  }
  map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
  (void)close(fd);
  if (map == MAP_FAILED)
    return MR_RAISE(kMrErrorRuntime, "cannot load library '%s': cannot map the file: %s",
                         path, strerror(errno));
  status = mr_elf_check_image(map, (size_t)st.st_size, path);
  (void)munmap(map, (size_t)st.st_size);
  return status < 0 ? -1 : 0;
}
#else
typedef int mr_elf_check_unused_t;
#endif
