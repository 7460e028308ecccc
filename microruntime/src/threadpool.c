/* TVMBackendParallelLaunch / TVMBackendParallelBarrier on a thread pool (platform.h threads),
 * created on first use. N workers in all: the calling thread and N-1 pool threads. N comes
 * from MR_NUM_THREADS, else TVM_NUM_THREADS, else the number of physical cores. A launch
 * from inside a task runs serially as one task.
 *
 * Tasks are claimed, not assigned: worker i owns tasks i, i + N, i + 2N, ... (task 0 is the
 * caller's, claimed before the job is published), takes them one at a time from its own
 * cursor, and when its own run out takes the unclaimed ones of the others. So the caller
 * never waits for a worker that has not started: if a worker is asleep or descheduled, the
 * caller (or another worker) runs its tasks, and a launch costs at most a little more than
 * running the job on one thread. The caller waits only for tasks that are already running.
 * A job whose tasks meet at a barrier still runs each task on its own thread: a thread
 * takes a second task only after finishing its first, and a task that has passed its
 * barriers has seen every other task of the job arrive there, so all were claimed already.
 *
 * One word, `state`, says which job is current (its number, bits MR_JOB_SHIFT and up),
 * whether it is open for claims (MR_OPEN) and how many pool threads are inside it (the low
 * bits). A pool thread enters with one atomic add, which also tells it whether the job it
 * entered is open; the launcher closes the job when all its tasks are done, and before it
 * rewrites the job's fields for the next launch waits until no pool thread is inside.
 *
 * Nobody sleeps while work is frequent: pool threads spin on `state` for up to MR_SPIN_NS
 * before they sleep on work_cond, and the launcher spins on `done` the same way before it
 * sleeps on done_cond. Whoever changes a counter then takes the mutex and broadcasts, and
 * a sleeper re-checks the counter under that mutex, so no wake-up is lost. */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

#define MR_ERROR_FILE kMrFileThreadpool

#if !defined(MR_PLATFORM_BAREMETAL) && MR_MAX_THREADS > 1 /* else threadpool_inline.c */

/* How long an idle pool thread (or a launcher awaiting its workers) spins
 * before it sleeps, and how many of its first turns use a pause hint rather
 * than yielding the CPU. */
#define MR_SPIN_NS 2000000
#define MR_SPIN_PAUSES 256

/* The fields of `state`: pool threads inside the current job (MR_MAX_THREADS < MR_BUSY + 1),
 * the open flag, and the job's number, which counts modulo MR_JOB_COUNT. */
#define MR_BUSY 0x3ff
#define MR_OPEN 0x400
#define MR_JOB_SHIFT 11
#define MR_JOB_COUNT (1 << 20)
#define MR_JOB_OF(s) ((s) >> MR_JOB_SHIFT)

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
  int state;    /* job number, open flag, pool threads inside; atomic */
  int claimed;  /* tasks of the current job claimed so far; atomic */
  int done;     /* tasks of the current job finished (or skipped after a failure); atomic */
  int failed;   /* a task of the current job failed: skip the rest; atomic */
  int shutdown;
  FTVMParallelLambda f;
  void* cdata;
  TVMParallelGroupEnv env;
  mr_barrier_t barrier;
  int status; /* the first error from a pool thread, with its message */
  char error_kind[MR_MAX_ERROR_KIND];
  char error_message[MR_MAX_ERROR_MESSAGE];
  int next[MR_MAX_THREADS]; /* per worker: how many of its own tasks were claimed; atomic */
} g_pool = {MR_MUTEX_INIT, MR_COND_INIT, MR_COND_INIT, 1, 0, 0, 0, 0,
            0, NULL, NULL, {NULL, 0},
            {MR_MUTEX_INIT, MR_COND_INIT, 0, 0}, 0, {0}, {0}, {0}};

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

/* Waits until ((*word & mask) == value) == equal: spins for up to MR_SPIN_NS (with pause
 * hints, then yielding the CPU, so that a thread we wait for can run on a busy machine),
 * then, when cond is given, sleeps on it (else keeps yielding). Returns the word. */
static int await_word(int* word, int mask, int value, int equal, mr_cond_t* cond) {
  int64_t deadline = mr_now_ns() + MR_SPIN_NS;
  int v, i;
  for (i = 1; (((v = mr_atomic_load_int(word)) & mask) == value) != equal; ++i) {
    if (i < MR_SPIN_PAUSES) {
      mr_cpu_relax();
      continue;
    }
    if (cond && mr_now_ns() > deadline) break;
    mr_thread_yield();
  }
  if (((v & mask) == value) == equal) return v;
  mr_mutex_lock(&g_pool.mutex);
  while ((((v = mr_atomic_load_int(word)) & mask) == value) != equal)
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

/* Claims the next unclaimed task of worker `owner`; -1 when it has none left. */
static int claim_own(int owner) {
  int k = mr_atomic_add_int(&g_pool.next[owner], 1) - 1;
  int64_t task = owner + (int64_t)k * g_pool.num_threads;
  if (task >= g_pool.env.num_task) return -1;
  mr_atomic_add_int(&g_pool.claimed, 1);
  return (int)task;
}

/* Claims a task for worker `self`: its own first, then any other worker's. -1: none left. */
static int claim(int self) {
  int task = claim_own(self), i, n = g_pool.num_threads;
  for (i = 1; task < 0 && i < n; ++i) {
    if (mr_atomic_load_int(&g_pool.claimed) >= g_pool.env.num_task) return -1;
    task = claim_own((self + i) % n);
  }
  return task;
}

/* Runs `task` unless an earlier task failed, and counts it done. Returns its status; a pool
 * thread's first error is kept, with its message, for the launcher. */
static int run_task(int task, int on_pool_thread) {
  int status = 0;
  if (!mr_atomic_load_int(&g_pool.failed)) {
    g_in_task = 1;
    status = g_pool.f(task, &g_pool.env, g_pool.cdata);
    g_in_task = 0;
  }
  if (status != 0) {
    mr_atomic_store_int(&g_pool.failed, 1);
    if (on_pool_thread) {
      mr_mutex_lock(&g_pool.mutex);
      if (g_pool.status == 0) {
        g_pool.status = status;
        strncpy(g_pool.error_kind, mr_last_error_kind(), sizeof(g_pool.error_kind) - 1);
        strncpy(g_pool.error_message, mr_last_error(), sizeof(g_pool.error_message) - 1);
      }
      mr_mutex_unlock(&g_pool.mutex);
    }
  }
  if (mr_atomic_add_int(&g_pool.done, 1) == g_pool.env.num_task && on_pool_thread)
    wake(&g_pool.done_cond);
  return status;
}

static void* worker_main(void* arg) {
  int index = (int)(intptr_t)arg, seen = 0, s, task;
  for (;;) {
    await_word(&g_pool.state, ~(MR_BUSY | MR_OPEN), seen << MR_JOB_SHIFT, 0,
               &g_pool.work_cond);
    if (g_pool.shutdown) return NULL;
    s = mr_atomic_add_int(&g_pool.state, 1); /* enter: the job's fields stay until we leave */
    seen = MR_JOB_OF(s);
    if (s & MR_OPEN)
      while ((task = claim(index)) >= 0) run_task(task, 1);
    mr_atomic_add_int(&g_pool.state, -1);
  }
  return NULL;
}

/* At process exit the workers are woken and joined, so that no thread is
 * left running inside the runtime while it is torn down. */
static void pool_shutdown(void) {
  int i, job;
  /* exit() from inside a parallel task (launch in progress): leave the pool alone. */
  if (mr_mutex_trylock(&g_launch_mutex) != 0) return;
  g_pool.shutdown = 1;
  job = MR_JOB_OF(mr_atomic_load_int(&g_pool.state));
  mr_atomic_add_int(&g_pool.state, ((job + 1) % MR_JOB_COUNT - job) << MR_JOB_SHIFT);
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

/* Sets up the job's fields (no pool thread is inside: the previous job is closed and its
 * stragglers have left) and opens it, with task 0 claimed by the caller. */
static void open_job(FTVMParallelLambda flambda, void* cdata, int num_task) {
  int i, job;
  await_word(&g_pool.state, MR_BUSY, 0, 1, NULL);
  g_pool.f = flambda;
  g_pool.cdata = cdata;
  g_pool.env.sync_handle = &g_pool.barrier;
  g_pool.env.num_task = num_task;
  g_pool.barrier.count = 0;
  g_pool.status = 0;
  g_pool.failed = 0;
  g_pool.done = 0;
  g_pool.claimed = 1;
  g_pool.next[0] = 1;
  for (i = 1; i < g_pool.num_threads && i < MR_MAX_THREADS; ++i) g_pool.next[i] = 0;
  job = MR_JOB_OF(mr_atomic_load_int(&g_pool.state));
  mr_atomic_add_int(&g_pool.state, MR_OPEN + (((job + 1) % MR_JOB_COUNT - job) << MR_JOB_SHIFT));
  wake(&g_pool.work_cond);
}

int TVMBackendParallelLaunch(FTVMParallelLambda flambda, void* cdata, int num_task) {
  int n = mr_num_threads(), status, other, task;
  if (!flambda) return MR_VALUE_ERROR("parallel launch of a NULL function");
  if (num_task < 0) return MR_VALUE_ERROR("invalid num_task %d", num_task);
  if (num_task == 0) num_task = n;
  if (g_in_task || n == 1 || num_task == 1) return run_serially(flambda, cdata);
  mr_mutex_lock(&g_launch_mutex);
  open_job(flambda, cdata, num_task);
  status = run_task(0, 0);
  while ((task = claim(0)) >= 0)
    if ((other = run_task(task, 0)) != 0 && status == 0) status = other;
  await_word(&g_pool.done, -1, num_task, 1, &g_pool.done_cond);
  mr_atomic_add_int(&g_pool.state, -MR_OPEN);
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
    return MR_RAISE(kMrErrorRuntime, "barrier over %d tasks but only %d threads",
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
