/* Loading a library file that was replaced since it was loaded (a recompile, an `mv`,
 * a copy over it) gives the new library; loading an unchanged file gives the same
 * module; the private copy a replaced file is loaded from is removed. Run from the
 * repository root (the fixtures are build/tests/fixtures/). */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "check.h"

#define FIXTURES "build/tests/fixtures/"

/* Copies src over dst in place (the same inode, new contents). */
static int copy_file(const char* src, const char* dst) {
  char buf[4096];
  size_t n;
  int status = 0;
  FILE* in = fopen(src, "rb");
  FILE* out = in ? fopen(dst, "wb") : NULL;
  if (!in || !out) status = -1;
  while (status == 0 && (n = fread(buf, 1, sizeof(buf), in)) > 0)
    if (fwrite(buf, 1, n, out) != n) status = -1;
  if (in) fclose(in);
  if (out && fclose(out) != 0) status = -1;
  return status;
}

/* Entries of `dir` other than "." and "..". */
static int count_entries(const char* dir) {
  int n = 0;
  struct dirent* e;
  DIR* d = opendir(dir);
  if (!d) return -1;
  while ((e = readdir(d)) != NULL)
    if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0) ++n;
  closedir(d);
  return n;
}

int main(void) {
  char dir[] = "/tmp/mr_test_replace_XXXXXX";
  char path[256], staged[256];
  TVMFFIObject *first = NULL, *again = NULL, *second = NULL, *third = NULL;
  if (!mkdtemp(dir)) return 1;
  snprintf(path, sizeof(path), "%s/model.so", dir);
  snprintf(staged, sizeof(staged), "%s/staged.so", dir);

  CHECK_OK(copy_file(FIXTURES "kernels.so", path));
  CHECK_OK(mr_module_load(path, &first));
  CHECK(first && mr_module_implements(first, "add", 0));
  CHECK_OK(mr_module_load(path, &again));
  CHECK(again == first); /* unchanged: the same module */

  /* Replaced by a rename: loaded anew; the old module keeps its own code. */
  CHECK_OK(copy_file(FIXTURES "graph_kernels.so", staged));
  CHECK(rename(staged, path) == 0);
  CHECK_OK(mr_module_load(path, &second));
  CHECK(second && second != first);
  CHECK(second && mr_module_implements(second, "gadd", 0));
  CHECK(second && !mr_module_implements(second, "add", 0));
  CHECK(first && mr_module_implements(first, "add", 0));
  CHECK(count_entries(dir) == 1); /* no private copy left beside it */

  /* Overwritten in place (same inode): loaded from a private copy. */
  CHECK_OK(copy_file(FIXTURES "kernels.so", path));
  CHECK_OK(mr_module_load(path, &third));
  CHECK(third && third != second && mr_module_implements(third, "add", 0));
  CHECK(count_entries(dir) == 1);

  CHECK_FAIL(mr_module_load(FIXTURES "no_such_library.so", &third), "No such file");

  mr_object_release(first);
  mr_object_release(again);
  mr_object_release(second);
  mr_object_release(third);
  unlink(path);
  rmdir(dir);
  return CHECK_RESULT();
}
