/*
 * cortex_m: a model on a microcontroller without an operating system, and the same source on
 * Linux (x86-64, AArch64). The model (a `--system-lib` static library: kernels, graph, params)
 * is linked in; its input and the expected output of a reference run are compiled in from
 * model_data.h (compiler.relay.test_vectors), with the arena size from the compiler's memory
 * plan. The executor runs in a static arena: nothing is allocated after it is created, and no
 * library is loaded (no dlopen, no file system).
 *
 * Prints the cycles of the inference and the heap the runtime took (measure.h), each output
 * value and the largest error, then "PASS" or "FAIL"; exits with 0 when
 * every output matches (|got - expected| <= KILN_ATOL + KILN_RTOL * |expected|), 1 when one
 * does not, 2 on a runtime error. On a Cortex-M the output goes through semihosting, and QEMU
 * exits with main's status.
 */
#include <stdio.h>

#include "check.h"
#include "measure.h"
#include "microruntime/graph_executor.h"
#include "model_data.h"

/* Referencing the model's registration function pulls its object out of the archive. */
extern int kiln_system_lib_register(void);

static unsigned char g_arena[KILN_MODEL_ARENA_BYTES] __attribute__((aligned(64)));
static float g_output[KILN_MAX_OUTPUT_COUNT];

static int fail(const char* what) {
  printf("error: %s: %s: %s\nFAIL\n", what, mr_last_error_kind(), mr_last_error());
  return 2;
}

int main(void) {
  TVMFFIObject *model = NULL, *exec = NULL;
  int i, ok = 1;
  uint64_t cycles;
  if (kiln_system_lib_register() != 0) return fail("registering the model");
  if (mr_graph_model_open(NULL, &model) != 0) return fail("opening the model");
  printf("arena: %u bytes (the model needs %lld)\n", (unsigned)sizeof(g_arena),
         (long long)mr_graph_model_arena_bytes(model));
  if (mr_graph_executor_create_in_arena(model, g_arena, sizeof(g_arena), &exec) != 0)
    return fail("creating the executor");
  for (i = 0; i < KILN_NUM_INPUTS; ++i)
    if (mr_graph_executor_set_input(exec, kiln_input_names[i], kiln_inputs[i],
                                    kiln_input_bytes[i]) != 0)
      return fail("setting an input");
  kiln_cycles_start();
  if (mr_graph_executor_run(exec) != 0) return fail("running");
  cycles = kiln_cycles_stop();
  printf("cycles: %llu (%s)\nheap: %u bytes\n", (unsigned long long)cycles,
         kiln_cycles_source(), (unsigned)kiln_heap_bytes());
  for (i = 0; i < KILN_NUM_OUTPUTS; ++i) {
    if (mr_graph_executor_get_output(exec, i, g_output,
                                     kiln_expected_count[i] * sizeof(float)) != 0)
      return fail("reading an output");
    ok &= kiln_check_output(i, g_output, kiln_expected[i], kiln_expected_count[i], KILN_ATOL,
                            KILN_RTOL);
  }
  mr_object_release(exec);
  mr_object_release(model);
  printf("%s\n", ok ? "PASS" : "FAIL");
  return ok ? 0 : 1;
}
