/*
 * aot_deploy: a model compiled for the AOT executor, linked statically into a C program with
 * the AOT runtime only (no dlopen, no graph, no allocation). The model (build/model.a, its
 * header build/tvmgen_default.h) and its test vectors (build/model_data.h: inputs, expected
 * outputs) come from build_model.py. The workspace is a static array of the size the header
 * gives; the outputs are checked against the test vectors.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "microruntime/aot_runtime.h"
#include "model_data.h"
#include "tvmgen_default.h"

#define ALIGNED __attribute__((aligned(TVMGEN_DEFAULT_WORKSPACE_ALIGNMENT)))

static unsigned char g_workspace[TVMGEN_DEFAULT_WORKSPACE_SIZE] ALIGNED;
static unsigned char g_input[KILN_NUM_INPUTS][4096] ALIGNED;
static float g_output[KILN_NUM_OUTPUTS][KILN_MAX_OUTPUT_COUNT] ALIGNED;

int main(void) {
  const size_t input_sizes[] = TVMGEN_DEFAULT_INPUT_SIZES;
  void *ins[KILN_NUM_INPUTS], *outs[KILN_NUM_OUTPUTS];
  struct tvmgen_default_workspace_pools pools;
  size_t i, k, bad = 0;
  for (k = 0; k < KILN_NUM_INPUTS; ++k) {
    if (input_sizes[k] != kiln_input_bytes[k] || input_sizes[k] > sizeof(g_input[k])) {
      fprintf(stderr, "aot_deploy: input %u does not fit\n", (unsigned)k);
      return 1;
    }
    memcpy(g_input[k], kiln_inputs[k], kiln_input_bytes[k]);
    ins[k] = g_input[k];
  }
  for (k = 0; k < KILN_NUM_OUTPUTS; ++k) outs[k] = g_output[k];
  {
    struct tvmgen_default_inputs inputs = TVMGEN_DEFAULT_INPUTS_INIT(ins);
    struct tvmgen_default_outputs outputs = TVMGEN_DEFAULT_OUTPUTS_INIT(outs);
    pools.global_workspace = g_workspace;
    if (tvmgen_default_run(&inputs, &outputs, &pools) != 0) {
      fprintf(stderr, "aot_deploy: %s: %s\n", mr_last_error_kind(), mr_last_error());
      return 1;
    }
  }
  for (k = 0; k < KILN_NUM_OUTPUTS; ++k)
    for (i = 0; i < kiln_expected_count[k]; ++i)
      if (fabsf(g_output[k][i] - kiln_expected[k][i]) >
          KILN_ATOL + KILN_RTOL * fabsf(kiln_expected[k][i]))
        ++bad;
  printf("aot_deploy: output 0:");
  for (i = 0; i < kiln_expected_count[0] && i < 10; ++i) printf(" %.4f", g_output[0][i]);
  printf("\naot_deploy: workspace %d bytes, %s\n", TVMGEN_DEFAULT_WORKSPACE_SIZE,
         bad ? "MISMATCH" : "matches the graph executor");
  return bad ? 1 : 0;
}
