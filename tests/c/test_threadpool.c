/* Thread pool: worker count from MR_NUM_THREADS, tasks that meet at a barrier run on
 * distinct threads, task 0 on the caller, num_task 0 = all workers, the barrier, a task
 * of a busy worker taken by another thread (nobody waits for a worker that has not
 * started), nested
 * launches, error propagation from a worker thread, launches back to back and
 * spaced past the spin window (workers asleep), launches from several application threads
 * at once (they take turns), and an idle pool using no CPU. */
#include <pthread.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <time.h>

#include "check.h"

#define ROUNDS 50

typedef struct {
  pthread_t threads[64];
  int hits[64];
  int num_task_seen;
  int phase[4][ROUNDS];
  int barrier_errors;
} ctx_t;

static int record_thread(int task_id, TVMParallelGroupEnv* penv, void* cdata) {
  ctx_t* c = (ctx_t*)cdata;
  c->threads[task_id] = pthread_self();
  c->hits[task_id]++;
  if (task_id == 0) c->num_task_seen = penv->num_task;
  return 0;
}

/* Each round, every task writes its slot, then after the barrier checks all others did. */
/* Meets the other tasks at a barrier first, so that each runs on its own thread. */
static int record_after_barrier(int task_id, TVMParallelGroupEnv* penv, void* cdata) {
  if (TVMBackendParallelBarrier(task_id, penv) != 0) return -1;
  return record_thread(task_id, penv, cdata);
}

/* Task 1 waits (up to 10 s) until task 5 has run. Both belong to worker 1 of 4, so this
 * ends only if another thread takes task 5 while task 1 is running. */
static int wait_for_task_five(int task_id, TVMParallelGroupEnv* penv, void* cdata) {
  int* flags = (int*)cdata, i;
  (void)penv;
  if (task_id == 1) {
    for (i = 0; i < 100000 && !__atomic_load_n(&flags[5], __ATOMIC_ACQUIRE); ++i) {
      struct timespec ts = {0, 100000};
      nanosleep(&ts, NULL);
    }
    if (!__atomic_load_n(&flags[5], __ATOMIC_ACQUIRE)) {
      TVMFFIErrorSetRaisedFromCStr("RuntimeError", "task 5 never ran beside task 1");
      return -1;
    }
  }
  __atomic_fetch_add(&flags[task_id], 1, __ATOMIC_ACQ_REL);
  return 0;
}

static int barrier_task(int task_id, TVMParallelGroupEnv* penv, void* cdata) {
  ctx_t* c = (ctx_t*)cdata;
  int r, k;
  for (r = 0; r < ROUNDS; ++r) {
    c->phase[task_id][r] = r + 1;
    if (TVMBackendParallelBarrier(task_id, penv) != 0) return -1;
    for (k = 0; k < penv->num_task; ++k)
      if (c->phase[k][r] != r + 1) c->barrier_errors++;
    if (TVMBackendParallelBarrier(task_id, penv) != 0) return -1;
  }
  return 0;
}

static int inner(int task_id, TVMParallelGroupEnv* penv, void* cdata) {
  int* count = (int*)cdata;
  if (penv->num_task != 1 || task_id != 0) return -1;
  __atomic_fetch_add(count, 1, __ATOMIC_RELAXED);
  return 0;
}

static int outer(int task_id, TVMParallelGroupEnv* penv, void* cdata) {
  (void)task_id;
  (void)penv;
  return TVMBackendParallelLaunch(inner, cdata, 0);
}

static int failing(int task_id, TVMParallelGroupEnv* penv, void* cdata) {
  (void)penv;
  (void)cdata;
  if (task_id == 2) {
    TVMFFIErrorSetRaisedFromCStr("ValueError", "task two failed");
    return -1;
  }
  return 0;
}

static void sleep_ms(long ms) {
  struct timespec ts;
  ts.tv_sec = ms / 1000;
  ts.tv_nsec = (ms % 1000) * 1000000L;
  while (nanosleep(&ts, &ts) != 0) {
  }
}

static int count_task(int task_id, TVMParallelGroupEnv* penv, void* cdata) {
  (void)task_id;
  (void)penv;
  __atomic_fetch_add((int*)cdata, 1, __ATOMIC_RELAXED);
  return 0;
}

/* The last task outlasts the spin window, so the launcher has to sleep. */
static int slow_last_task(int task_id, TVMParallelGroupEnv* penv, void* cdata) {
  if (task_id == penv->num_task - 1) sleep_ms(10);
  return count_task(task_id, penv, cdata);
}

/* User plus system CPU time of the process, in milliseconds. */
static double cpu_ms(void) {
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  return (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e3 +
         (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e3;
}

/* An application thread launching jobs of its own; its count must be exact. */
typedef struct {
  int count, failed;
} launcher_t;

static void* launcher(void* arg) {
  launcher_t* l = (launcher_t*)arg;
  int i;
  for (i = 0; i < 200; ++i)
    if (TVMBackendParallelLaunch(count_task, &l->count, 0) != 0) ++l->failed;
  return NULL;
}

static void check_concurrent_launchers(void) {
  pthread_t t[4];
  launcher_t l[4];
  int i;
  memset(l, 0, sizeof(l));
  for (i = 0; i < 4; ++i) CHECK(pthread_create(&t[i], NULL, launcher, &l[i]) == 0);
  for (i = 0; i < 4; ++i) pthread_join(t[i], NULL);
  for (i = 0; i < 4; ++i) CHECK(l[i].count == 4 * 200 && l[i].failed == 0);
}

static void check_launch_paths(void) {
  int i, count = 0;
  double before;
  for (i = 0; i < 10000; ++i) CHECK_OK(TVMBackendParallelLaunch(count_task, &count, 0));
  CHECK(count == 4 * 10000);
  count = 0;
  for (i = 0; i < 5; ++i) {
    sleep_ms(10);
    CHECK_OK(TVMBackendParallelLaunch(count_task, &count, 0));
    CHECK_OK(TVMBackendParallelLaunch(slow_last_task, &count, 0));
  }
  CHECK(count == 2 * 4 * 5);
  /* Idle workers stop spinning and block: 200 ms idle costs (almost) no CPU. */
  before = cpu_ms();
  sleep_ms(200);
  CHECK(cpu_ms() - before < 50);
}

int main(void) {
  ctx_t c;
  int i, j, distinct = 0, count = 0;
  setenv("MR_NUM_THREADS", "4", 1);
  CHECK(mr_num_threads() == 4);

  memset(&c, 0, sizeof(c));
  CHECK_OK(TVMBackendParallelLaunch(record_after_barrier, &c, 0));
  CHECK(c.num_task_seen == 4);
  CHECK(pthread_equal(c.threads[0], pthread_self()));
  for (i = 0; i < 4; ++i) {
    CHECK(c.hits[i] == 1);
    for (j = 0; j < i && !pthread_equal(c.threads[i], c.threads[j]); ++j) {
    }
    if (j == i) ++distinct;
  }
  CHECK(distinct == 4);

  /* More tasks than threads: each still runs exactly once. */
  memset(&c, 0, sizeof(c));
  CHECK_OK(TVMBackendParallelLaunch(record_thread, &c, 10));
  for (i = 0; i < 10; ++i) CHECK(c.hits[i] == 1);

  /* Fewer tasks than threads. */
  memset(&c, 0, sizeof(c));
  CHECK_OK(TVMBackendParallelLaunch(record_thread, &c, 2));
  CHECK(c.hits[0] == 1 && c.hits[1] == 1 && c.hits[2] == 0);

  memset(&c, 0, sizeof(c));
  for (i = 0; i < 20; ++i) CHECK_OK(TVMBackendParallelLaunch(barrier_task, &c, 4));
  CHECK(c.barrier_errors == 0);
  memset(&c, 0, sizeof(c));
  CHECK_OK(TVMBackendParallelLaunch(barrier_task, &c, 3));
  CHECK(c.barrier_errors == 0);

  /* Tasks are taken from a worker that is busy: 8 tasks, each run once. */
  for (i = 0; i < 3; ++i) {
    int flags[8] = {0};
    CHECK_OK(TVMBackendParallelLaunch(wait_for_task_five, flags, 8));
    for (j = 0; j < 8; ++j) CHECK(flags[j] == 1);
  }

  /* Many small jobs with every count of tasks: each task runs exactly once. */
  for (i = 1; i <= 9; ++i)
    for (j = 0; j < 300; ++j) {
      memset(&c, 0, sizeof(c));
      CHECK_OK(TVMBackendParallelLaunch(record_thread, &c, i));
      for (count = 0; count < i && c.hits[count] == 1; ++count) {
      }
      CHECK(count == i && c.hits[i] == 0);
    }
  count = 0;

  /* Nested launches run serially as one task. */
  CHECK_OK(TVMBackendParallelLaunch(outer, &count, 4));
  CHECK(count == 4);

  /* The worker's error reaches the caller. */
  mr_error_clear();
  CHECK(TVMBackendParallelLaunch(failing, NULL, 4) == -1);
  CHECK(strcmp(mr_last_error(), "task two failed") == 0);
  CHECK(strcmp(mr_last_error_kind(), "ValueError") == 0);

  check_concurrent_launchers();
  check_launch_paths();
  return CHECK_RESULT();
}
