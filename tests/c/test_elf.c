/* Truncated shared libraries: loading a kernel .so cut at any point fails with a
 * message and never crashes (dlopen maps segments past the end of a truncated file,
 * and touching them raises SIGBUS). Each load runs in a child process so that a crash
 * is counted as a failed check. Also the other checks made before dlopen: the library
 * blob's symbol and length, the machine, the checksum trailer, and files that are not
 * regular files (a FIFO must not block). Run from the repository root. */
#include <elf.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "internal.h"

#define FIXTURES "build/tests/fixtures/"

static unsigned char* read_file(const char* path, size_t* out_size) {
  FILE* f = fopen(path, "rb");
  unsigned char* data = NULL;
  long n;
  if (!f) return NULL;
  if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) > 0 && fseek(f, 0, SEEK_SET) == 0) {
    data = (unsigned char*)malloc((size_t)n);
    if (data && fread(data, 1, (size_t)n, f) != (size_t)n) {
      free(data);
      data = NULL;
    }
    *out_size = (size_t)n;
  }
  fclose(f);
  return data;
}

/* The library's bytes; global so that a child process's leak check sees it reachable. */
unsigned char* g_data;

enum { CUT_FAILED_CLEANLY = 20, CUT_LOADED = 21, CUT_UNCLEAR = 22, CUT_CRASHED = 23 };

/* Writes data[0..cut) to a file of its own and loads it in a child process; one of
 * the CUT_* results (a child that did not exit normally crashed). */
static int load_cut(const unsigned char* data, size_t cut, const char* dir) {
  char path[256];
  FILE* f;
  pid_t pid;
  int status = 0;
  snprintf(path, sizeof(path), "%s/cut_%zu.so", dir, cut);
  f = fopen(path, "wb");
  if (!f || fwrite(data, 1, cut, f) != cut) {
    if (f) fclose(f);
    return CUT_CRASHED;
  }
  fclose(f);
  pid = fork();
  if (pid == 0) {
    TVMFFIObject* mod = NULL;
    int loaded = mr_module_load(path, &mod) == 0;
    _exit(loaded ? CUT_LOADED : strstr(mr_last_error(), path) ? CUT_FAILED_CLEANLY : CUT_UNCLEAR);
  }
  waitpid(pid, &status, 0);
  unlink(path);
  return WIFEXITED(status) ? WEXITSTATUS(status) : CUT_CRASHED;
}

#if UINTPTR_MAX > 0xFFFFFFFFu
typedef Elf64_Ehdr ehdr_t;
typedef Elf64_Shdr shdr_t;
typedef Elf64_Sym sym_t;
#else
typedef Elf32_Ehdr ehdr_t;
typedef Elf32_Shdr shdr_t;
typedef Elf32_Sym sym_t;
#endif

/* The .dynsym entry of `name` in an ELF image (found through the section headers), or NULL. */
static sym_t* find_dynsym(unsigned char* data, const char* name) {
  ehdr_t eh;
  shdr_t sh, str;
  size_t i, k;
  memcpy(&eh, data, sizeof(eh));
  for (i = 0; i < eh.e_shnum; ++i) {
    memcpy(&sh, data + eh.e_shoff + i * sizeof(sh), sizeof(sh));
    if (sh.sh_type != SHT_DYNSYM) continue;
    memcpy(&str, data + eh.e_shoff + sh.sh_link * sizeof(str), sizeof(str));
    for (k = 0; k < sh.sh_size / sizeof(sym_t); ++k) {
      sym_t* sym = (sym_t*)(data + sh.sh_offset + k * sizeof(sym_t));
      if (strcmp((const char*)data + str.sh_offset + sym->st_name, name) == 0) return sym;
    }
  }
  return NULL;
}

static void put_u64(unsigned char* p, uint64_t v) {
  int i;
  for (i = 0; i < 8; ++i) p[i] = (unsigned char)(v >> (8 * i));
}

/* blob_lib.so's image with a checksum trailer as the compiler writes it. */
static unsigned char* with_trailer(const unsigned char* data, size_t size, size_t blob_off,
                                   size_t blob_size, size_t* out_size) {
  unsigned char* out = (unsigned char*)malloc(size + 32);
  uint32_t crc;
  memcpy(out, data, size);
  memcpy(out + size, "KILNCRC1", 8);
  put_u64(out + size + 8, blob_off);
  put_u64(out + size + 16, blob_size);
  crc = mr_crc32c(0, out, blob_off);
  crc = mr_crc32c(crc, out + blob_off + blob_size, size - blob_off - blob_size);
  put_u64(out + size + 24, 0);
  crc = mr_crc32c(crc, out + size + 8, 20);
  put_u64(out + size + 24, (uint64_t)crc << 32);
  *out_size = size + 32;
  return out;
}

static void test_blob_and_checksums(void) {
  size_t size = 0, tsize = 0, blob_off;
  unsigned char* data = read_file(FIXTURES "blob_lib.so", &size);
  unsigned char *blob, *t;
  sym_t* sym;
  uint64_t saved_size;
  ehdr_t eh;
  CHECK(data != NULL);
  if (!data) return;
  CHECK_OK(mr_elf_check_image(data, size, "blob_lib.so"));
  sym = find_dynsym(data, "__tvm_ffi__library_bin");
  CHECK(sym != NULL && sym->st_size == 96);
  if (!sym) {
    free(data);
    return;
  }
  /* The blob's bytes in the file: nbytes 88, then an indptr count of 3. */
  for (blob = NULL, blob_off = 0; !blob && blob_off + 16 <= size; ++blob_off)
    if (memcmp(data + blob_off, "\x58\0\0\0\0\0\0\0\x03\0\0\0\0\0\0\0", 16) == 0)
      blob = data + blob_off;
  CHECK(blob != NULL);
  if (!blob) {
    free(data);
    return;
  }
  blob_off = (size_t)(blob - data);
  /* A symbol size past the loaded data, with a blob length to match: refused before dlopen. */
  saved_size = sym->st_size;
  sym->st_size = (uint64_t)1 << 30;
  put_u64(blob, ((uint64_t)1 << 30) - 8);
  CHECK_FAIL(mr_elf_check_image(data, size, "blob_lib.so"), "do not lie in the file's loaded data");
  /* The symbol's size is right, the blob's length field claims more. */
  sym->st_size = saved_size;
  CHECK_FAIL(mr_elf_check_image(data, size, "blob_lib.so"),
             "nbytes 1073741816 at offset 0 exceeds the blob's size (96 bytes)");
  put_u64(blob, 88);
  CHECK_OK(mr_elf_check_image(data, size, "blob_lib.so"));

  /* Another machine. */
  memcpy(&eh, data, sizeof(eh));
  eh.e_machine ^= 0x40;
  memcpy(data, &eh, sizeof(eh));
  CHECK_FAIL(mr_elf_check_image(data, size, "blob_lib.so"), "it is built for ELF machine");
  eh.e_machine ^= 0x40;
  memcpy(data, &eh, sizeof(eh));

  /* The checksum trailer: a flip anywhere but in the blob is found; in the blob it is left
   * to the blob's own checks; MR_SKIP_CHECKSUM=1 skips the trailer. */
  CHECK(mr_crc32c(0, "123456789", 9) == 0xE3069283u);
  CHECK(mr_crc32c(mr_crc32c(0, "1234", 4), "56789", 5) == 0xE3069283u);
  t = with_trailer(data, size, blob_off, 96, &tsize);
  CHECK_OK(mr_elf_check_image(t, tsize, "blob_lib.so"));
  t[blob_off + 40] ^= 1;
  CHECK_OK(mr_elf_check_image(t, tsize, "blob_lib.so"));
  t[blob_off + 40] ^= 1;
  t[size / 3] ^= 4;
  CHECK_FAIL(mr_elf_check_image(t, tsize, "blob_lib.so"),
             "blob_lib.so: checksum mismatch in the library's code and headers (expected 0x");
  setenv("MR_SKIP_CHECKSUM", "1", 1);
  mr_error_clear();
  (void)mr_elf_check_image(t, tsize, "blob_lib.so");
  CHECK(strstr(mr_last_error(), "checksum") == NULL);
  unsetenv("MR_SKIP_CHECKSUM");
  t[size / 3] ^= 4;
  t[tsize - 10] ^= 1; /* the stored checksum itself */
  CHECK_FAIL(mr_elf_check_image(t, tsize, "blob_lib.so"), "checksum mismatch");
  free(t);
  free(data);
}

/* A FIFO (or any file that is not a regular file) is refused at once, not read. */
static void test_not_a_regular_file(void) {
  char dir[] = "/tmp/mr_test_fifo_XXXXXX", path[64];
  TVMFFIObject* mod = NULL;
  CHECK(mkdtemp(dir) != NULL);
  snprintf(path, sizeof(path), "%s/model.so", dir);
  CHECK(mkfifo(path, 0600) == 0);
  alarm(60); /* a blocking open ends the test instead of hanging it */
  CHECK_FAIL(mr_module_load(path, &mod), "not a regular file");
  CHECK_FAIL(mr_module_load(dir, &mod), "not a regular file");
  alarm(0);
  unlink(path);
  rmdir(dir);
}

int main(void) {
  size_t size = 0, cut, step;
  unsigned char* data;
  g_data = read_file(FIXTURES "kernels.so", &size);
  data = g_data;
  char dir[] = "/tmp/mr_test_elf_XXXXXX";
  int crashed = 0, loaded = 0, unclear = 0;
  CHECK(data != NULL && size > 1024);
  CHECK(mkdtemp(dir) != NULL);
  if (!data) return CHECK_RESULT();
  /* The whole file loads; every cut fails cleanly: each of the first 4 KB (headers),
   * then points spread over the rest, and the last bytes. */
  CHECK(load_cut(data, size, dir) == CUT_LOADED);
  step = size / 97 + 1;
  for (cut = 0; cut < size; cut += cut < 4096 ? 61 : step) {
    int r = load_cut(data, cut, dir);
    crashed += r != CUT_FAILED_CLEANLY && r != CUT_LOADED && r != CUT_UNCLEAR;
    loaded += r == CUT_LOADED;
    unclear += r == CUT_UNCLEAR;
  }
  for (cut = size - 16; cut < size; ++cut) {
    int r = load_cut(data, cut, dir);
    crashed += r != CUT_FAILED_CLEANLY && r != CUT_LOADED && r != CUT_UNCLEAR;
    loaded += r == CUT_LOADED;
    unclear += r == CUT_UNCLEAR;
  }
  if (crashed || loaded || unclear)
    fprintf(stderr, "cut points: %d crashed, %d loaded, %d failed without naming the file\n",
            crashed, loaded, unclear);
  CHECK(crashed == 0);
  CHECK(loaded == 0);
  CHECK(unclear == 0);
  rmdir(dir);

  /* The same checks on images in memory (what the fuzzer drives). */
  CHECK_OK(mr_elf_check_image(data, size, "kernels.so"));
  CHECK_FAIL(mr_elf_check_image(data, size - 1, "kernels.so"), "section header table");
  CHECK_FAIL(mr_elf_check_image(data, 40, "kernels.so"), "the ELF header");
  CHECK_OK(mr_elf_check_image("not elf", 7, "x")); /* left to dlopen */
  free(data);
  test_blob_and_checksums();
  test_not_a_regular_file();
  return CHECK_RESULT();
}
