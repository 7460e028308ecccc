/*
 * graph_deploy: run a model exported by Kiln (graph JSON + params + kernels in one library)
 * from C with the graph executor's C API (microruntime/graph_executor.h).
 *
 *   app MODEL NAME=FILE ... [OUTPUT_INDEX]
 *
 * MODEL is a shared library (model.so, loaded with dlopen) or "-" for the model linked into
 * the program (a `--system-lib` model.a; build with -DGRAPH_DEPLOY_SYSTEM_LIB). Each NAME=FILE
 * sets input NAME from FILE (a regular file: its raw bytes, exactly the input's size). The
 * output (index 0 by default; OUTPUT_INDEX is a decimal number) is printed as float32 values,
 * one per line. Mistakes are one line on stderr and exit status 1 (2 for a bad command line).
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "microruntime/graph_executor.h"

#ifdef GRAPH_DEPLOY_SYSTEM_LIB
/* Referencing the model's registration function pulls its object out of the archive. */
extern int kiln_system_lib_register(void);
#endif

static int fail(const char* what) {
  fprintf(stderr, "graph_deploy: %s: %s: %s\n", what, mr_last_error_kind(), mr_last_error());
  return 1;
}

static int os_error(const char* path, const char* why) {
  char message[1024];
  snprintf(message, sizeof(message), "%s: %s", path, why);
  return mr_error_set("OSError", message);
}

/* The whole of the regular file at path, in *out (malloc'ed), of *out_size bytes. Opened
 * without blocking: a FIFO or a device is refused, not waited on. */
static int read_file(const char* path, char** out, size_t* out_size) {
  struct stat st;
  size_t n, got = 0;
  ssize_t r;
  char* data;
  int fd = open(path, O_RDONLY | O_NONBLOCK);
  if (fd < 0) return os_error(path, strerror(errno));
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || (uint64_t)st.st_size >= SIZE_MAX) {
    close(fd);
    return os_error(path, "not a regular file");
  }
  n = (size_t)st.st_size;
  if (!(data = (char*)malloc(n + 1))) {
    close(fd);
    return os_error(path, "out of memory");
  }
  while (got < n && ((r = read(fd, data + got, n - got)) > 0 || (r < 0 && errno == EINTR)))
    got += r > 0 ? (size_t)r : 0;
  close(fd);
  if (got != n) {
    free(data);
    return os_error(path, "cannot read the file");
  }
  *out = data;
  *out_size = n;
  return 0;
}

/* An output index: a decimal number, all of arg. */
static int parse_index(const char* arg, int64_t* out) {
  char* end;
  long long v;
  errno = 0;
  v = strtoll(arg, &end, 10);
  if (end == arg || *end != '\0' || errno != 0 || v < 0) return -1;
  *out = (int64_t)v;
  return 0;
}

int main(int argc, char** argv) {
  TVMFFIObject *model = NULL, *exec = NULL;
  DLDevice cpu = {kDLCPU, 0};
  int64_t index = 0;
  size_t size = 0, i;
  float* out = NULL;
  int a, status = 0;
  if (argc < 2) {
    fprintf(stderr, "usage: %s MODEL|- NAME=FILE... [OUTPUT_INDEX]\n", argv[0]);
    return 2;
  }
#ifdef GRAPH_DEPLOY_SYSTEM_LIB
  if (kiln_system_lib_register() != 0) return fail("registering the model");
#endif
  if (mr_graph_model_open(strcmp(argv[1], "-") ? argv[1] : NULL, &model) != 0)
    return fail("opening the model");
  if (mr_graph_executor_create(model, cpu, &exec) != 0) status = fail("creating the executor");
  for (a = 2; status == 0 && a < argc; ++a) {
    char *eq = strchr(argv[a], '='), *data = NULL;
    if (!eq) {
      if (parse_index(argv[a], &index) != 0) {
        fprintf(stderr, "graph_deploy: '%s' is neither NAME=FILE nor an output index\n",
                argv[a]);
        status = 2;
      }
      continue;
    }
    *eq = '\0';
    if (read_file(eq + 1, &data, &size) != 0 ||
        mr_graph_executor_set_input(exec, argv[a], data, size) != 0)
      status = fail("setting an input");
    free(data);
  }
  if (status == 0 && mr_graph_executor_run(exec) != 0) status = fail("running");
  if (status == 0) {
    int64_t nbytes = mr_graph_executor_output_bytes(exec, index);
    if (nbytes < 0 || !(out = (float*)malloc((size_t)nbytes + 1))) {
      if (nbytes >= 0) mr_error_set("MemoryError", "the output");
      status = fail("the output");
    } else if (mr_graph_executor_get_output(exec, index, out, (size_t)nbytes) != 0) {
      status = fail("reading the output");
    } else {
      for (i = 0; i < (size_t)nbytes / sizeof(float); ++i) printf("%.9g\n", out[i]);
    }
    free(out);
  }
  mr_object_release(exec);
  mr_object_release(model);
  return status;
}
