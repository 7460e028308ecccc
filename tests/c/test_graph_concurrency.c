/* Graph executors used by several threads at once (also built under ThreadSanitizer by
 * `make test-tsan`): one executor shared by 4 threads calling run and get_output (calls are
 * serialized by the executor), 4 threads sharing one executor with different inputs, each
 * set_input/run/get_output sequence under the application's own lock, and one executor per
 * thread from one graph. The graph reuses a slot (relu writes where sum was), so a run that
 * interleaved with another would read a half-overwritten slot. The kernels are in this
 * program (its system library), so that ThreadSanitizer sees their memory accesses. */
#include <stdlib.h>

#include "check.h"
#include "microruntime/graph_executor.h"
#include "platform.h"

#define THREADS 4
#define RUNS 50
#define N 4096
#define N_STR "4096"

/* x, y, b (inputs, [N]): out = relu(x + y + b), with sum and out in slot 2. */
static const char* k_graph =
    "{\"nodes\": ["
    "{\"op\": \"null\", \"name\": \"x\", \"inputs\": []},"
    "{\"op\": \"null\", \"name\": \"y\", \"inputs\": []},"
    "{\"op\": \"tvm_op\", \"name\": \"sum\", \"inputs\": [[0, 0, 0], [1, 0, 0]], \"attrs\":"
    " {\"func_name\": \"cc_add\", \"num_inputs\": \"2\", \"num_outputs\": \"1\","
    " \"flatten_data\": \"0\"}},"
    "{\"op\": \"null\", \"name\": \"b\", \"inputs\": []},"
    "{\"op\": \"tvm_op\", \"name\": \"biased\", \"inputs\": [[2, 0, 0], [3, 0, 0]], \"attrs\":"
    " {\"func_name\": \"cc_add\", \"num_inputs\": \"2\", \"num_outputs\": \"1\","
    " \"flatten_data\": \"0\"}},"
    "{\"op\": \"tvm_op\", \"name\": \"relu\", \"inputs\": [[4, 0, 0]], \"attrs\":"
    " {\"func_name\": \"cc_relu\", \"num_inputs\": \"1\", \"num_outputs\": \"1\","
    " \"flatten_data\": \"0\"}}],"
    "\"arg_nodes\": [0, 1, 3], \"heads\": [[5, 0, 0]], \"node_row_ptr\": [0, 1, 2, 3, 4, 5, 6],"
    "\"attrs\": {\"shape\": [\"list_shape\", [[" N_STR "], [" N_STR "], [" N_STR "], [" N_STR "],"
    " [" N_STR "], [" N_STR "]]],"
    " \"dltype\": [\"list_str\", [\"float32\", \"float32\", \"float32\", \"float32\","
    " \"float32\", \"float32\"]],"
    " \"storage_id\": [\"list_int\", [0, 1, 2, 3, 4, 2]]}}";

static float* data(const TVMFFIAny* a) { return (float*)((DLTensor*)a->v_ptr)->data; }

static int cc_add(void* h, const TVMFFIAny* args, int32_t n, TVMFFIAny* r) {
  int i;
  (void)h, (void)n, (void)r;
  for (i = 0; i < N; ++i) data(&args[2])[i] = data(&args[0])[i] + data(&args[1])[i];
  return 0;
}

static int cc_relu(void* h, const TVMFFIAny* args, int32_t n, TVMFFIAny* r) {
  int i;
  (void)h, (void)n, (void)r;
  for (i = 0; i < N; ++i) data(&args[1])[i] = data(&args[0])[i] > 0 ? data(&args[0])[i] : 0;
  return 0;
}

static TVMFFIObject* g_lib;
static float g_y[N], g_b[N]; /* y = 1, b = 0.5: filled before any thread starts */

typedef struct {
  TVMFFIObject* ex;      /* the executor this thread uses */
  mr_mutex_t* app_lock;  /* when set: held around each set_input/run/get_output sequence */
  int* gate;             /* the threads start together once it is set */
  int id, sets_inputs;   /* sets_inputs: x[i] = 10 id + run % 7 - i % 8 */
  int wrong, failed;
  float x[N], out[N];
} job_t;

/* (No CHECK in the threads: the counters of check.h are not atomic.) */
static int set_inputs(TVMFFIObject* ex, float* x, float x0) {
  int i;
  for (i = 0; i < N; ++i) x[i] = x0 - (float)(i % 8);
  return mr_graph_executor_set_input(ex, "x", x, N * sizeof(float)) ||
         mr_graph_executor_set_input(ex, "y", g_y, sizeof(g_y)) ||
         mr_graph_executor_set_input(ex, "b", g_b, sizeof(g_b));
}

static int right(const float* out, float x0) {
  int i;
  for (i = 0; i < N; ++i) {
    float want = x0 - (float)(i % 8) + 1.5f;
    if (out[i] != (want > 0 ? want : 0)) return 0;
  }
  return 1;
}

static void* worker(void* arg) {
  job_t* j = (job_t*)arg;
  int r;
  while (!mr_atomic_load_int(j->gate)) mr_thread_yield();
  for (r = 0; r < RUNS; ++r) {
    float x0 = j->sets_inputs ? (float)(10 * j->id + r % 7) : 2.0f;
    if (j->app_lock) mr_mutex_lock(j->app_lock);
    if ((j->sets_inputs && set_inputs(j->ex, j->x, x0) != 0) || mr_graph_executor_run(j->ex) != 0 ||
        mr_graph_executor_get_output(j->ex, 0, j->out, sizeof(j->out)) != 0)
      ++j->failed;
    else if (!right(j->out, x0))
      ++j->wrong;
    if (j->app_lock) mr_mutex_unlock(j->app_lock);
  }
  return NULL;
}

static void run_jobs(job_t* jobs) {
  mr_thread_t t[THREADS];
  int i, wrong = 0, failed = 0, gate = 0;
  for (i = 0; i < THREADS; ++i) {
    jobs[i].gate = &gate;
    CHECK(mr_thread_create(&t[i], worker, &jobs[i]) == 0);
  }
  mr_atomic_store_int(&gate, 1);
  for (i = 0; i < THREADS; ++i) mr_thread_join(t[i]);
  for (i = 0; i < THREADS; ++i) {
    wrong += jobs[i].wrong;
    failed += jobs[i].failed;
  }
  CHECK(wrong == 0);
  CHECK(failed == 0);
}

static job_t* new_jobs(void) {
  job_t* jobs = (job_t*)calloc(THREADS, sizeof(job_t));
  int i;
  for (i = 0; i < THREADS; ++i) jobs[i].id = i;
  return jobs;
}

static TVMFFIObject* new_executor(void) {
  DLDevice cpu = {kDLCPU, 0};
  TVMFFIObject* ex = NULL;
  CHECK_OK(mr_graph_executor_from_json(k_graph, g_lib, cpu, &ex));
  return ex;
}

/* Runs and reads of one executor from 4 threads, the inputs set once. */
static void test_shared_runs(void) {
  job_t* jobs = new_jobs();
  TVMFFIObject* ex = new_executor();
  int i;
  if (ex && set_inputs(ex, jobs[0].x, 2.0f) == 0) {
    for (i = 0; i < THREADS; ++i) jobs[i].ex = ex;
    run_jobs(jobs);
  }
  CHECK(ex != NULL);
  mr_object_release(ex);
  free(jobs);
}

/* Different inputs per thread on one executor: each sequence under the app's lock. */
static void test_shared_sequences(void) {
  job_t* jobs = new_jobs();
  mr_mutex_t lock;
  TVMFFIObject* ex = new_executor();
  int i;
  mr_mutex_init_recursive(&lock);
  for (i = 0; i < THREADS; ++i) jobs[i].ex = ex, jobs[i].sets_inputs = 1, jobs[i].app_lock = &lock;
  if (ex) run_jobs(jobs);
  mr_mutex_destroy(&lock);
  mr_object_release(ex);
  free(jobs);
}

/* One executor per thread: no lock needed; the kernels are shared. */
static void test_executor_per_thread(void) {
  job_t* jobs = new_jobs();
  int i, made = 0;
  for (i = 0; i < THREADS; ++i) {
    jobs[i].ex = new_executor();
    jobs[i].sets_inputs = 1;
    made += jobs[i].ex != NULL;
  }
  if (made == THREADS) run_jobs(jobs);
  for (i = 0; i < THREADS; ++i) mr_object_release(jobs[i].ex);
  free(jobs);
}

int main(void) {
  int i;
  for (i = 0; i < N; ++i) g_y[i] = 1, g_b[i] = 0.5f;
  CHECK_OK(mr_graph_executor_register());
  CHECK_OK(TVMFFIEnvModRegisterSystemLibSymbol("__tvm_ffi_cc_add", (void*)(uintptr_t)cc_add));
  CHECK_OK(TVMFFIEnvModRegisterSystemLibSymbol("__tvm_ffi_cc_relu", (void*)(uintptr_t)cc_relu));
  CHECK_OK(mr_module_system_lib("", &g_lib));
  if (!g_lib) return CHECK_RESULT();
  test_shared_runs();
  test_shared_sequences();
  test_executor_per_thread();
  mr_object_release(g_lib);
  return CHECK_RESULT();
}
