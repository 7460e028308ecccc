/* Truncated shared libraries: loading a kernel .so cut at any point fails with a
 * message and never crashes (dlopen maps segments past the end of a truncated file,
 * and touching them raises SIGBUS). Each load runs in a child process so that a crash
 * is counted as a failed check. Run from the repository root. */
#include <stdlib.h>
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
  return CHECK_RESULT();
}
