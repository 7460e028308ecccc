/* mr_time_evaluator: TVM's time_evaluator algorithm. One warm-up call, then
 * `repeat` measurements of `number` back-to-back calls (number grows by
 * max(min_repeat_ms / per_call_ms + 1, number * 1.618) until a measurement
 * lasts min_repeat_ms, giving up after limit_zero_time_iterations zero
 * readings), device sync around each, optional preproc and cooldown. The
 * timer Function returns Bytes of `repeat` float64 seconds per call. */
#include <stdlib.h>

#include "internal.h"

#define MR_ERROR_FILE kMrFileTimer

typedef struct {
  TVMFFIObject* func;
  TVMFFIObject* preproc;
  DLDevice dev;
  int number, repeat, min_repeat_ms, limit_zero_time_iterations;
  int cooldown_interval_ms, repeats_to_cooldown;
} mr_timer_t;

static void timer_free(void* self) {
  mr_timer_t* t = (mr_timer_t*)self;
  mr_object_release(t->func);
  mr_object_release(t->preproc);
  free(t);
}

static int call_and_drop(TVMFFIObject* f, const TVMFFIAny* args, int32_t n) {
  TVMFFIAny result = {0, {0}, {0}};
  if (mr_function_call(f, (TVMFFIAny*)args, n, &result) != 0) return -1;
  mr_any_clear(&result);
  return 0;
}

static int sync(DLDevice dev) { return mr_device_stream_sync(dev, TVMFFIEnvGetStream(dev.device_type, dev.device_id)); }

static int timer_call(void* self, const TVMFFIAny* args, int32_t n, TVMFFIAny* result) {
  mr_timer_t* t = (mr_timer_t*)self;
  double* out = (double*)malloc((size_t)t->repeat * sizeof(double));
  int number = t->number, i, j, status = -1;
  TVMFFIObject* bytes;
  if (!out) return MR_OOM("timer results");
  if (call_and_drop(t->func, args, n) != 0 || sync(t->dev) != 0) goto done;
  for (i = 0; i < t->repeat; ++i) {
    double ms = 0.0;
    int zero_times = 0;
    if (t->preproc && call_and_drop(t->preproc, args, n) != 0) goto done;
    do {
      int64_t start, nanos;
      if (ms > 0.0) {
        double grown = t->min_repeat_ms / (ms / number) + 1, golden = number * 1.618;
        grown = grown > golden ? grown : golden;
        number = grown > 1e9 ? 1000000000 : (int)grown;
      }
      if (sync(t->dev) != 0) goto done;
      start = mr_now_ns();
      for (j = 0; j < number; ++j)
        if (call_and_drop(t->func, args, n) != 0) goto done;
      if (sync(t->dev) != 0) goto done;
      nanos = mr_now_ns() - start;
      if (nanos == 0) ++zero_times;
      ms = (double)nanos / 1e6;
    } while (ms < t->min_repeat_ms && zero_times < t->limit_zero_time_iterations);
    out[i] = ms / 1e3 / number;
    if (t->cooldown_interval_ms > 0 && (i % t->repeats_to_cooldown) == 0)
      mr_sleep_ms(t->cooldown_interval_ms);
  }
  if (mr_bytes_create((const char*)out, (size_t)t->repeat * sizeof(double), &bytes) != 0)
    goto done;
  mr_any_set_object(result, bytes);
  status = 0;
done:
  free(out);
  return status;
}

int mr_time_evaluator(TVMFFIObject* func, DLDevice dev, int number, int repeat,
                      int min_repeat_ms, int limit_zero_time_iterations,
                      int cooldown_interval_ms, int repeats_to_cooldown, TVMFFIObject* preproc,
                      TVMFFIObject** out_timer) {
  mr_timer_t* t;
  if (!func || func->type_index != kTVMFFIFunction ||
      (preproc && preproc->type_index != kTVMFFIFunction))
    return MR_RAISE(kMrErrorType, "time_evaluator: func and preproc must be Functions");
  if (number <= 0 || repeat <= 0 || min_repeat_ms < 0)
    return MR_VALUE_ERROR("time_evaluator: number (%d) and repeat (%d) must be positive", number,
                          repeat);
  if (!mr_device_api_get(dev.device_type)) return -1;
  t = (mr_timer_t*)calloc(1, sizeof(*t));
  if (!t) return MR_OOM("a timer");
  t->func = func;
  t->preproc = preproc;
  t->dev = dev;
  t->number = number;
  t->repeat = repeat;
  t->min_repeat_ms = min_repeat_ms;
  t->limit_zero_time_iterations = limit_zero_time_iterations;
  t->cooldown_interval_ms = cooldown_interval_ms;
  t->repeats_to_cooldown = repeats_to_cooldown > 0 ? repeats_to_cooldown : 1;
  if (mr_function_create_closure(t, timer_call, timer_free, out_timer) != 0) {
    free(t);
    return -1;
  }
  mr_object_retain(func);
  mr_object_retain(preproc);
  return 0;
}
