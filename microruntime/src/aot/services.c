/* The other services kernels call, in the AOT runtime: parallel loops run as one task on the
 * calling thread, and system-library registration is accepted and ignored (the run function
 * calls its kernels directly). */
#include "microruntime/aot_runtime.h"

int TVMBackendParallelLaunch(FTVMParallelLambda flambda, void* cdata, int num_task) {
  TVMParallelGroupEnv env;
  (void)num_task;
  env.sync_handle = NULL;
  env.num_task = 1;
  return flambda(0, &env, cdata);
}

int TVMBackendParallelBarrier(int task_id, TVMParallelGroupEnv* penv) {
  (void)task_id, (void)penv;
  return 0;
}

int TVMFFIEnvModRegisterSystemLibSymbol(const char* name, void* symbol) {
  (void)name, (void)symbol;
  return 0;
}
