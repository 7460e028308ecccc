/*
 * cortex_m with the AOT executor: the model (a static library: the generated run function
 * tvmgen_default_run, its kernels and the weights as constant data) is linked with the AOT
 * runtime only (microruntime/src/aot: no graph, no allocation). Its workspace is a static
 * array of the size the generated header gives (TVMGEN_DEFAULT_WORKSPACE_SIZE); the input is
 * copied into a static buffer, as a sensor's data would arrive, and the output written into
 * another. What it prints and returns is main.c's: cycles and heap, each output value and the
 * largest error, "PASS" (status 0), "FAIL" (1 on a mismatch, 2 on a runtime error).
 */
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "measure.h"
#include "microruntime/aot_runtime.h"
#include "model_data.h"
#include "tvmgen_default.h"

#define ALIGNED __attribute__((aligned(TVMGEN_DEFAULT_WORKSPACE_ALIGNMENT)))
#define PORT_BYTES(n) (((n) + TVMGEN_DEFAULT_WORKSPACE_ALIGNMENT - 1) & \
                       ~(size_t)(TVMGEN_DEFAULT_WORKSPACE_ALIGNMENT - 1))

static const size_t g_input_sizes[] = TVMGEN_DEFAULT_INPUT_SIZES;
static const size_t g_output_sizes[] = TVMGEN_DEFAULT_OUTPUT_SIZES;

static unsigned char g_workspace[TVMGEN_DEFAULT_WORKSPACE_SIZE] ALIGNED;
static unsigned char g_input[KILN_NUM_INPUTS][PORT_BYTES(KILN_MAX_INPUT_BYTES)] ALIGNED;
static float g_output[KILN_NUM_OUTPUTS][PORT_BYTES(KILN_MAX_OUTPUT_COUNT * 4) / 4] ALIGNED;

int main(void) {
  void *ins[KILN_NUM_INPUTS], *outs[KILN_NUM_OUTPUTS];
  struct tvmgen_default_workspace_pools pools;
  uint64_t cycles;
  int k, ok = 1;
  for (k = 0; k < KILN_NUM_INPUTS; ++k) {
    if (g_input_sizes[k] != kiln_input_bytes[k]) {
      printf("error: input %d holds %u bytes; the model takes %u\nFAIL\n", k,
             (unsigned)kiln_input_bytes[k], (unsigned)g_input_sizes[k]);
      return 2;
    }
    memcpy(g_input[k], kiln_inputs[k], kiln_input_bytes[k]);
    ins[k] = g_input[k];
  }
  for (k = 0; k < KILN_NUM_OUTPUTS; ++k) {
    if (g_output_sizes[k] != kiln_expected_count[k] * sizeof(float)) {
      printf("error: output %d has %u bytes; %u expected\nFAIL\n", k,
             (unsigned)g_output_sizes[k], (unsigned)(kiln_expected_count[k] * sizeof(float)));
      return 2;
    }
    outs[k] = g_output[k];
  }
  printf("arena: %u bytes (the model needs %u)\n", (unsigned)sizeof(g_workspace),
         (unsigned)TVMGEN_DEFAULT_WORKSPACE_SIZE);
  {
    struct tvmgen_default_inputs inputs = TVMGEN_DEFAULT_INPUTS_INIT(ins);
    struct tvmgen_default_outputs outputs = TVMGEN_DEFAULT_OUTPUTS_INIT(outs);
    pools.global_workspace = g_workspace;
    kiln_cycles_start();
    if (tvmgen_default_run(&inputs, &outputs, &pools) != 0) {
      printf("error: running: %s: %s\nFAIL\n", mr_last_error_kind(), mr_last_error());
      return 2;
    }
    cycles = kiln_cycles_stop();
  }
  printf("cycles: %llu (%s)\nheap: %u bytes\n", (unsigned long long)cycles,
         kiln_cycles_source(), (unsigned)kiln_heap_bytes());
  for (k = 0; k < KILN_NUM_OUTPUTS; ++k)
    ok &= kiln_check_output(k, g_output[k], kiln_expected[k], kiln_expected_count[k], KILN_ATOL,
                            KILN_RTOL);
  printf("%s\n", ok ? "PASS" : "FAIL");
  return ok ? 0 : 1;
}
