/* TVMBackendParallelLaunch / TVMBackendParallelBarrier with one thread (MR_PLATFORM_BAREMETAL,
 * or MR_MAX_THREADS 1 as in the small config): a launch runs its function inline as a single
 * task, whatever number of tasks it asks for (the kernels' parallel loops split their range
 * over the tasks they are given), and the barrier of one task returns at once. Compiles to
 * nothing elsewhere (threadpool.c there). */
#include "internal.h"

#define MR_ERROR_FILE kMrFileThreadpoolInline

#if defined(MR_PLATFORM_BAREMETAL) || MR_MAX_THREADS == 1
int mr_num_threads(void) { return 1; }

int TVMBackendParallelLaunch(FTVMParallelLambda flambda, void* cdata, int num_task) {
  TVMParallelGroupEnv env;
  if (!flambda) return MR_VALUE_ERROR("parallel launch of a NULL function");
  if (num_task < 0) return MR_VALUE_ERROR("invalid num_task %d", num_task);
  env.sync_handle = NULL;
  env.num_task = 1;
  return flambda(0, &env, cdata);
}

int TVMBackendParallelBarrier(int task_id, TVMParallelGroupEnv* penv) {
  (void)task_id;
  (void)penv;
  return 0;
}
#else
typedef int mr_threadpool_inline_unused_t;
#endif
