/* kiln_check_output (check.h). */
#include "check.h"

#include <math.h>
#include <stdio.h>

int kiln_check_output(int index, const float* got, const float* want, size_t count, float atol,
                      float rtol) {
  float worst = 0.0f;
  int ok = 1;
  size_t k;
  for (k = 0; k < count; ++k) {
    float err = fabsf(got[k] - want[k]);
    if (!(err <= atol + rtol * fabsf(want[k]))) ok = 0;
    if (!(err <= worst)) worst = err;
    printf("output %d [%u] = %.9g (expected %.9g)\n", index, (unsigned)k, (double)got[k],
           (double)want[k]);
  }
  printf("output %d: %u values, max abs error %.3g (atol %g, rtol %g): %s\n", index,
         (unsigned)count, (double)worst, (double)atol, (double)rtol, ok ? "match" : "MISMATCH");
  return ok;
}
