/* Runs a model compiled for the AOT executor, linked statically with the AOT runtime
 * (build/libmicroruntime_aot.a): tests/compiler/relay/test_aot_c_app.py builds the model
 * (model.a and tvmgen_default.h) and this program against it, with malloc, calloc, realloc and
 * posix_memalign wrapped (-Wl,--wrap=...).
 *
 *   test_aot_model IN_0 ... IN_k OUT_0 ... OUT_m
 *
 * While it initialises (buffers, reading the inputs: raw bytes of each, exactly its size) the
 * allocator works; then it refuses every call, and the model runs twice. Exit status 0 when
 * both runs succeed, give the same outputs and nothing was allocated; the outputs are then
 * written to the OUT files. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "microruntime/aot_runtime.h"
#include "tvmgen_default.h"

void* __real_malloc(size_t n);
void* __real_calloc(size_t n, size_t size);
void* __real_realloc(void* p, size_t n);
int __real_posix_memalign(void** out, size_t alignment, size_t n);
static int g_refuse, g_refused;
void* __wrap_malloc(size_t n) { return g_refuse ? (++g_refused, (void*)NULL) : __real_malloc(n); }
void* __wrap_calloc(size_t n, size_t size) {
  return g_refuse ? (++g_refused, (void*)NULL) : __real_calloc(n, size);
}
void* __wrap_realloc(void* p, size_t n) {
  return g_refuse ? (++g_refused, (void*)NULL) : __real_realloc(p, n);
}
int __wrap_posix_memalign(void** out, size_t alignment, size_t n) {
  return g_refuse ? (++g_refused, ENOMEM) : __real_posix_memalign(out, alignment, n);
}

#define NI TVMGEN_DEFAULT_NUM_INPUTS
#define NO TVMGEN_DEFAULT_NUM_OUTPUTS

static void* buffer(size_t n) {
  void* p = NULL;
  if (posix_memalign(&p, TVMGEN_DEFAULT_WORKSPACE_ALIGNMENT, n ? n : 1) != 0) return NULL;
  memset(p, 0, n);
  return p;
}

static int file_io(const char* path, void* data, size_t n, int writing) {
  int fd = writing ? open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644) : open(path, O_RDONLY);
  size_t done = 0;
  ssize_t r = 1;
  if (fd < 0) return -1;
  while (done < n && r > 0) {
    r = writing ? write(fd, (char*)data + done, n - done) : read(fd, (char*)data + done, n - done);
    done += r > 0 ? (size_t)r : 0;
  }
  close(fd);
  return done == n ? 0 : -1;
}

int main(int argc, char** argv) {
  const size_t in_sizes[] = TVMGEN_DEFAULT_INPUT_SIZES, out_sizes[] = TVMGEN_DEFAULT_OUTPUT_SIZES;
  void *ins[NI + 1], *outs[NO], *first[NO];
  void* workspace = buffer(TVMGEN_DEFAULT_WORKSPACE_SIZE);
  int i, status = 0;
  if (argc != 1 + NI + NO || !workspace) {
    fprintf(stderr, "usage: %s %d input files, %d output files\n", argv[0], NI, NO);
    return 2;
  }
  for (i = 0; i < NI; ++i)
    if (!(ins[i] = buffer(in_sizes[i])) || file_io(argv[1 + i], ins[i], in_sizes[i], 0) != 0) {
      fprintf(stderr, "cannot read input %d from %s\n", i, argv[1 + i]);
      return 2;
    }
  for (i = 0; i < NO; ++i)
    if (!(outs[i] = buffer(out_sizes[i])) || !(first[i] = buffer(out_sizes[i]))) return 2;
  {
    struct tvmgen_default_inputs inputs = TVMGEN_DEFAULT_INPUTS_INIT(ins);
    struct tvmgen_default_outputs outputs = TVMGEN_DEFAULT_OUTPUTS_INIT(outs);
    struct tvmgen_default_workspace_pools pools;
    pools.global_workspace = workspace;
    g_refuse = 1; /* initialised: from here on nothing may be allocated */
    if (tvmgen_default_run(&inputs, &outputs, &pools) != 0) status = 1;
    for (i = 0; status == 0 && i < NO; ++i) memcpy(first[i], outs[i], out_sizes[i]);
    if (status == 0 && tvmgen_default_run(&inputs, &outputs, &pools) != 0) status = 1;
    g_refuse = 0;
  }
  if (status != 0) {
    fprintf(stderr, "tvmgen_default_run: %s: %s\n", mr_last_error_kind(), mr_last_error());
    return 1;
  }
  for (i = 0; i < NO; ++i) {
    if (memcmp(first[i], outs[i], out_sizes[i]) != 0) {
      fprintf(stderr, "output %d differs between two runs\n", i);
      return 1;
    }
    if (file_io(argv[1 + NI + i], outs[i], out_sizes[i], 1) != 0) return 2;
  }
  for (i = 0; i < NI; ++i) free(ins[i]);
  for (i = 0; i < NO; ++i) free(outs[i]), free(first[i]);
  free(workspace);
  if (g_refused) {
    fprintf(stderr, "%d allocations after initialisation\n", g_refused);
    return 1;
  }
  printf("ran twice, outputs equal, 0 allocations after initialisation\n");
  return 0;
}
