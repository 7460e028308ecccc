/* The C app `make size` links against core + graph executor (with --gc-sections) to measure
 * what a deployment of the graph executor carries: it calls every function of
 * graph_executor.h's C API for apps (the registration of the packed-function layer aside). */
#include <stdio.h>

#include "microruntime/graph_executor.h"

static unsigned char g_arena[1 << 16];

int main(int argc, char** argv) {
  TVMFFIObject *model = NULL, *exec = NULL, *in_arena = NULL;
  DLDevice cpu = {kDLCPU, 0};
  float buf[16];
  int ok = mr_graph_register() == 0 &&
           mr_graph_model_open(argc > 1 ? argv[1] : NULL, &model) == 0 &&
           mr_graph_executor_create(model, cpu, &exec) == 0 &&
           mr_graph_model_arena_bytes(model) >= 0 &&
           mr_graph_executor_create_in_arena(model, g_arena, sizeof(g_arena), &in_arena) == 0 &&
           mr_graph_executor_set_input(exec, "x", buf, sizeof(buf)) == 0 &&
           mr_graph_executor_load_params(exec, buf, sizeof(buf)) == 0 &&
           mr_graph_executor_run(exec) == 0 &&
           mr_graph_executor_get_output(exec, 0, buf, sizeof(buf)) == 0 &&
           mr_graph_executor_output_bytes(exec, 0) >= 0 &&
           mr_graph_executor_num_inputs(exec) >= 0 && mr_graph_executor_num_outputs(exec) >= 0;
  if (!ok) printf("%s: %s\n", mr_last_error_kind(), mr_last_error());
  mr_object_release(in_arena);
  mr_object_release(exec);
  mr_object_release(model);
  return ok ? 0 : 1;
}
