/*
 * graph_deploy: run a model exported by Kiln (graph JSON + params + kernels in one library)
 * from C with the graph executor's C API (microruntime/graph_executor.h).
 *
 *   app MODEL NAME=FILE ... [OUTPUT_INDEX]
 *
 * MODEL is a shared library (model.so, loaded with dlopen) or "-" for the model linked into
 * the program (a `--system-lib` model.a; build with -DGRAPH_DEPLOY_SYSTEM_LIB). Each NAME=FILE
 * sets input NAME from FILE (its raw bytes, exactly the input's size). The output (index 0 by
 * default) is printed as float32 values, one per line.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "microruntime/graph_executor.h"

#ifdef GRAPH_DEPLOY_SYSTEM_LIB
/* Referencing the model's registration function pulls its object out of the archive. */
extern int kiln_system_lib_register(void);
#endif

static int fail(const char* what) {
  fprintf(stderr, "graph_deploy: %s: %s: %s\n", what, mr_last_error_kind(), mr_last_error());
  return 1;
}

/* The whole file, in *out (malloc'ed), of *out_size bytes. */
static int read_file(const char* path, char** out, size_t* out_size) {
  FILE* f = fopen(path, "rb");
  long n;
  if (!f || fseek(f, 0, SEEK_END) != 0 || (n = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) != 0 ||
      !(*out = (char*)malloc((size_t)n + 1)) || fread(*out, 1, (size_t)n, f) != (size_t)n) {
    if (f) fclose(f);
    return mr_error_set("OSError", path);
  }
  fclose(f);
  *out_size = (size_t)n;
  return 0;
}

int main(int argc, char** argv) {
  TVMFFIObject *model = NULL, *exec = NULL;
  DLDevice cpu = {kDLCPU, 0};
  int64_t index = 0;
  size_t size, i;
  float* out;
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
      index = atoll(argv[a]);
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
    if (nbytes < 0 || !(out = (float*)malloc((size_t)nbytes + 1)))
      return fail("the output");
    if (mr_graph_executor_get_output(exec, index, out, (size_t)nbytes) != 0) {
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
