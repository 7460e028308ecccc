/* time_evaluator: call counts for number/repeat, warm-up, preproc before each
 * repeat, min_repeat_ms growth, Bytes of float64 seconds, errors propagate. */
#include "check.h"

static int g_calls = 0, g_preproc_calls = 0, g_fail = 0;
static int64_t g_last_arg = 0;

static int counting(void* self, const TVMFFIAny* args, int32_t n, TVMFFIAny* result) {
  (void)self;
  (void)result;
  ++g_calls;
  if (n == 1) g_last_arg = args[0].v_int64;
  if (g_fail) {
    TVMFFIErrorSetRaisedFromCStr("RuntimeError", "kernel failed");
    return -1;
  }
  return 0;
}

static int preproc(void* self, const TVMFFIAny* args, int32_t n, TVMFFIAny* result) {
  (void)self;
  (void)result;
  (void)args;
  (void)n;
  ++g_preproc_calls;
  return 0;
}

static int run_timer(TVMFFIObject* timer, TVMFFIAny* args, int n, TVMFFIAny* out) {
  memset(out, 0, sizeof(*out));
  return mr_function_call(timer, args, n, out);
}

int main(void) {
  DLDevice cpu = {kDLCPU, 0}, rocm = {kDLROCM, 0};
  TVMFFIObject *f, *pre, *timer;
  TVMFFIAny arg, out;
  const TVMFFIByteArray* bytes;
  double secs[3];

  CHECK_OK(mr_function_from_symbol(counting, &f));
  CHECK_OK(mr_function_from_symbol(preproc, &pre));

  CHECK_OK(mr_time_evaluator(f, cpu, 5, 3, 0, 100, 0, 1, pre, &timer));
  memset(&arg, 0, sizeof(arg));
  arg.type_index = kTVMFFIInt;
  arg.v_int64 = 123;
  CHECK_OK(run_timer(timer, &arg, 1, &out));
  CHECK(g_calls == 1 + 5 * 3);
  CHECK(g_preproc_calls == 3);
  CHECK(g_last_arg == 123);
  CHECK(out.type_index == kTVMFFIBytes);
  bytes = mr_bytes_view(out.v_obj);
  CHECK(bytes->size == 3 * sizeof(double));
  memcpy(secs, bytes->data, sizeof(secs));
  CHECK(secs[0] >= 0 && secs[0] < 1 && secs[2] >= 0 && secs[2] < 1);
  mr_any_clear(&out);
  mr_object_release(timer);

  /* min_repeat_ms: number grows until one measurement lasts >= 20 ms. */
  g_calls = 0;
  CHECK_OK(mr_time_evaluator(f, cpu, 1, 1, 20, 100, 0, 1, NULL, &timer));
  CHECK_OK(run_timer(timer, NULL, 0, &out));
  CHECK(g_calls > 10);
  mr_any_clear(&out);
  mr_object_release(timer);

  /* Cooldown between repeats. */
  g_calls = 0;
  CHECK_OK(mr_time_evaluator(f, cpu, 2, 2, 0, 100, 1, 1, NULL, &timer));
  CHECK_OK(run_timer(timer, NULL, 0, &out));
  CHECK(g_calls == 1 + 2 * 2);
  mr_any_clear(&out);

  /* Errors of the timed function come through. */
  g_fail = 1;
  CHECK_FAIL(run_timer(timer, NULL, 0, &out), "kernel failed");
  g_fail = 0;
  mr_object_release(timer);

  CHECK_FAIL(mr_time_evaluator(f, cpu, 0, 1, 0, 100, 0, 1, NULL, &timer), "must be positive");
  CHECK_FAIL(mr_time_evaluator(f, rocm, 1, 1, 0, 100, 0, 1, NULL, &timer), "rocm");
  mr_object_release(f);
  mr_object_release(pre);
  return CHECK_RESULT();
}
