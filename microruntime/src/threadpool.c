/* TVMBackendParallelLaunch / TVMBackendParallelBarrier on a thread pool (platform.h threads),
 * created on first use. N workers in all: the calling thread runs task 0 and
 * N-1 pool threads run the others. N comes from MR_NUM_THREADS, else
 * TVM_NUM_THREADS, else the number of physical cores. A launch from inside a
 * task runs serially as one task.
 *
 * A launch is cheap because nobody sleeps while work is frequent: the launcher
 * publishes the job and bumps `generation` (release); pool threads spin on it
 * for up to MR_SPIN_NS before they sleep on work_cond, and the launcher, after
 * running task 0, spins on `remaining` the same way before it sleeps on
 * done_cond. Whoever changes a counter then takes the mutex and broadcasts, and
 * a sleeper re-checks the counter under that mutex, so no wake-up is lost. */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

#ifndef MR_PLATFORM_BAREMETAL /* one thread there: threadpool_inline.c */

/* How long an idle pool thread (or a launcher awaiting its workers) spins
 * before it sleeps, and how many of its first turns use a pause hint rather
 * than yielding the CPU. */
#define MR_SPIN_NS 2000000
#define MR_SPIN_PAUSES 256

typedef struct {
  mr_mutex_t mutex;
  mr_cond_t cond;
  int count;
  unsigned generation;
} mr_barrier_t;

static struct {
  mr_mutex_t mutex;
  mr_cond_t work_cond, done_cond;
  int num_threads;
  int generation; /* bumped once per job; changed only with mr_atomic_add_int */
  int remaining;  /* pool threads still running the current job */
  int shutdown;
  FTVMParallelLambda f;
  void* cdata;
  TVMParallelGroupEnv env;
  mr_barrier_t barrier;
  int status; /* the first error from a pool thread, with its message */
  char error_kind[MR_MAX_ERROR_KIND];
  char error_message[MR_MAX_ERROR_MESSAGE];
} g_pool = {MR_MUTEX_INIT, MR_COND_INIT, MR_COND_INIT, 1, 0,
            0, 0, NULL, NULL, {NULL, 0},
            {MR_MUTEX_INIT, MR_COND_INIT, 0, 0}, 0, {0}, {0}};

static mr_mutex_t g_launch_mutex = MR_MUTEX_INIT;
static mr_thread_t g_threads[MR_MAX_THREADS];
static mr_once_t g_pool_once = MR_ONCE_INIT;
static MR_THREAD_LOCAL int g_in_task;

static int env_threads(const char* name) {
  const char* v = getenv(name);
  long n;
  if (!v || !*v) return 0;
  n = strtol(v, NULL, 10);
  if (n <= 0) return 0;
  return n > MR_MAX_THREADS ? MR_MAX_THREADS : (int)n;
}

/* Waits until (*counter == value) == equal: spins for up to MR_SPIN_NS (with
 * pause hints, then yielding the CPU, so that a thread we wait for can run on
 * a busy machine), then sleeps on cond. Returns the counter's value. */
static int await_counter(int* counter, int value, int equal, mr_cond_t* cond) {
  int64_t deadline = mr_now_ns() + MR_SPIN_NS;
  int v, i;
  for (i = 1; ((v = mr_atomic_load_int(counter)) == value) != equal; ++i) {
    if (i < MR_SPIN_PAUSES) {
      mr_cpu_relax();
      continue;
    }
    if (mr_now_ns() > deadline) break;
    mr_thread_yield();
  }
  if ((v == value) == equal) return v;
  mr_mutex_lock(&g_pool.mutex);
  while (((v = mr_atomic_load_int(counter)) == value) != equal)
    mr_cond_wait(cond, &g_pool.mutex);
  mr_mutex_unlock(&g_pool.mutex);
  return v;
}

/* Wakes the sleepers of cond after a counter they wait on has changed. */
static void wake(mr_cond_t* cond) {
  mr_mutex_lock(&g_pool.mutex);
  mr_cond_broadcast(cond);
  mr_mutex_unlock(&g_pool.mutex);
}

/* Runs tasks first, first + N, ... of the current job. */
static int run_tasks(int first, int num_workers) {
  int t, status = 0;
  g_in_task = 1;
  for (t = first; t < g_pool.env.num_task && status == 0; t += num_workers)
    status = g_pool.f(t, &g_pool.env, g_pool.cdata);
  g_in_task = 0;
  return status;
}

static void* worker_main(void* arg) {
  int index = (int)(intptr_t)arg, status, seen = 0;
  for (;;) {
    seen = await_counter(&g_pool.generation, seen, 0, &g_pool.work_cond);
    if (g_pool.shutdown) return NULL;
    status = run_tasks(index, g_pool.num_threads);
    if (status != 0) {
      mr_mutex_lock(&g_pool.mutex);
      if (g_pool.status == 0) {
        g_pool.status = status;
        strncpy(g_pool.error_kind, mr_last_error_kind(), sizeof(g_pool.error_kind) - 1);
        strncpy(g_pool.error_message, mr_last_error(), sizeof(g_pool.error_message) - 1);
      }
      mr_mutex_unlock(&g_pool.mutex);
    }
    if (mr_atomic_add_int(&g_pool.remaining, -1) == 0) wake(&g_pool.done_cond);
  }
  return NULL;
}

/* At process exit the workers are woken and joined, so that no thread is
 * left running inside the runtime while it is torn down. */
static void pool_shutdown(void) {
  int i;
  /* exit() from inside a parallel task (launch in progress): leave the pool alone. */
  if (mr_mutex_trylock(&g_launch_mutex) != 0) return;
  g_pool.shutdown = 1;
  mr_atomic_add_int(&g_pool.generation, 1);
  wake(&g_pool.work_cond);
  for (i = 1; i < g_pool.num_threads; ++i)
    if (!mr_thread_is_self(g_threads[i])) mr_thread_join(g_threads[i]);
  g_pool.num_threads = 1;
  mr_mutex_unlock(&g_launch_mutex);
}

static void pool_init(void) {
  int n = env_threads("MR_NUM_THREADS"), i;
  if (n == 0) n = env_threads("TVM_NUM_THREADS");
  if (n == 0) n = mr_physical_cores();
  if (n > MR_MAX_THREADS) n = MR_MAX_THREADS;
  for (i = 1; i < n; ++i)
    if (mr_thread_create(&g_threads[i], worker_main, (void*)(intptr_t)i) != 0) break;
  g_pool.num_threads = i < 1 ? 1 : i;
  if (g_pool.num_threads > 1) atexit(pool_shutdown);
}

int mr_num_threads(void) {
  mr_once(&g_pool_once, pool_init);
  return g_pool.num_threads;
}

static int run_serially(FTVMParallelLambda flambda, void* cdata) {
  TVMParallelGroupEnv env;
  int was_in_task = g_in_task, status;
  env.sync_handle = NULL;
  env.num_task = 1;
  g_in_task = 1;
  status = flambda(0, &env, cdata);
  g_in_task = was_in_task;
  return status;
}

int TVMBackendParallelLaunch(FTVMParallelLambda flambda, void* cdata, int num_task) {
  int n = mr_num_threads(), status;
  if (!flambda) return mr_value_error("parallel launch of a NULL function");
  if (num_task < 0) return mr_value_error("invalid num_task %d", num_task);
  if (num_task == 0) num_task = n;
  if (g_in_task || n == 1 || num_task == 1) return run_serially(flambda, cdata);
  mr_mutex_lock(&g_launch_mutex);
  g_pool.f = flambda;
  g_pool.cdata = cdata;
  g_pool.env.sync_handle = &g_pool.barrier;
  g_pool.env.num_task = num_task;
  g_pool.barrier.count = 0;
  g_pool.status = 0;
  mr_atomic_store_int(&g_pool.remaining, n - 1);
  mr_atomic_add_int(&g_pool.generation, 1);
  wake(&g_pool.work_cond);
  status = run_tasks(0, n);
  await_counter(&g_pool.remaining, 0, 1, &g_pool.done_cond);
  if (status == 0 && g_pool.status != 0) {
    status = g_pool.status;
    mr_error_set(g_pool.error_kind, g_pool.error_message);
  }
  mr_mutex_unlock(&g_launch_mutex);
  return status;
}

int TVMBackendParallelBarrier(int task_id, TVMParallelGroupEnv* penv) {
  mr_barrier_t* b;
  unsigned gen;
  (void)task_id;
  if (!penv || !penv->sync_handle || penv->num_task <= 1) return 0;
  if (penv->num_task > g_pool.num_threads)
    return mr_error_setf(kMrErrorRuntime, "barrier over %d tasks but only %d threads",
                         (int)penv->num_task, g_pool.num_threads);
  b = (mr_barrier_t*)penv->sync_handle;
  mr_mutex_lock(&b->mutex);
  gen = b->generation;
  if (++b->count == penv->num_task) {
    b->count = 0;
    ++b->generation;
    mr_cond_broadcast(&b->cond);
  } else {
    while (gen == b->generation) mr_cond_wait(&b->cond, &b->mutex);
  }
  mr_mutex_unlock(&b->mutex);
  return 0;
}
#else
typedef int mr_threadpool_unused_t;
#endif
