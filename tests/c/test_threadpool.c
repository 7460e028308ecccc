/* Thread pool: worker count from MR_NUM_THREADS, distinct threads run tasks,
 * task 0 on the caller, num_task 0 = all workers, the barrier, nested
 * launches, and error propagation from a worker thread. */
#include <pthread.h>
#include <stdlib.h>

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
  c->num_task_seen = penv->num_task;
  return 0;
}

/* Each round, every task writes its slot, then after the barrier checks all others did. */
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

int main(void) {
  ctx_t c;
  int i, j, distinct = 0, count = 0;
  setenv("MR_NUM_THREADS", "4", 1);
  CHECK(mr_num_threads() == 4);

  memset(&c, 0, sizeof(c));
  CHECK_OK(TVMBackendParallelLaunch(record_thread, &c, 0));
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

  /* Nested launches run serially as one task. */
  CHECK_OK(TVMBackendParallelLaunch(outer, &count, 4));
  CHECK(count == 4);

  /* The worker's error reaches the caller. */
  mr_error_clear();
  CHECK(TVMBackendParallelLaunch(failing, NULL, 4) == -1);
  CHECK(strcmp(mr_last_error(), "task two failed") == 0);
  CHECK(strcmp(mr_last_error_kind(), "ValueError") == 0);
  return CHECK_RESULT();
}
