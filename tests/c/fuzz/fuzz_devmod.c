/* Fuzz target: device-module payloads (kinds "opencl" and "cuda"), parsed from memory as
 * the module loaders do at load. Whatever parses must be consistent: every kernel's name,
 * argument types and launch tags, and the code, lie within what was allocated. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "device/gpu.h"

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

static void touch(const mr_gpu_payload_t* p) {
  volatile size_t sink = p->code_size + strlen(p->fmt);
  uint32_t i, j;
  for (i = 0; i < p->num_funcs; ++i) {
    const mr_gpu_func_t* f = &p->funcs[i];
    sink += strlen(f->name) + f->num_tags;
    for (j = 0; j < f->num_args; ++j) sink += f->arg_types[j].bits;
    for (j = 0; j < f->num_tags; ++j) sink += f->tags[j];
    if (mr_gpu_payload_find(p, f->name) != (int64_t)i) abort();
  }
  if (p->code[p->code_size] != '\0') abort();
  (void)sink;
}

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const char* const k_kinds[] = {"opencl", "cuda"};
  mr_gpu_payload_t p;
  int k;
  for (k = 0; k < 2; ++k) {
    if (mr_gpu_payload_parse(k_kinds[k], (const char*)data, size, &p) == 0) {
      touch(&p);
      mr_gpu_payload_free(&p);
    }
    mr_error_clear();
  }
  return 0;
}
