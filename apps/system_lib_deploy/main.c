/*
 * system_lib_deploy: run Kiln kernels linked statically into a C program, with no Python and no
 * dlopen. The kernels come from a `--system-lib` build exported as a static library
 * (build/kernels.a, made by build_kernels.py): `vadd(A, B, C)` (float32, any length) and
 * `mm(A, B, C)` (float32 64x64 matmul).
 *
 * Calling kiln_system_lib_register() is what pulls the kernel object out of the archive into
 * the link (no --whole-archive needed); it is idempotent, since the object's constructor
 * already registered its functions when the program started.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "microruntime/microruntime.h"

#define MM_N 64

extern int kiln_system_lib_register(void);

static float mm_a[MM_N * MM_N], mm_b[MM_N * MM_N], mm_c[MM_N * MM_N];

static int fail(const char* what) {
  fprintf(stderr, "system_lib_deploy: %s: %s\n", what, mr_last_error());
  return 1;
}

static DLTensor tensor(float* data, int32_t ndim, int64_t* shape) {
  DLTensor t;
  t.data = data;
  t.device.device_type = kDLCPU;
  t.device.device_id = 0;
  t.ndim = ndim;
  t.dtype.code = kDLFloat;
  t.dtype.bits = 32;
  t.dtype.lanes = 1;
  t.shape = shape;
  t.strides = NULL;
  t.byte_offset = 0;
  return t;
}

/* Calls f(a, b, c) with DLTensor* arguments. */
static int call3(TVMFFIObject* f, DLTensor* a, DLTensor* b, DLTensor* c) {
  TVMFFIAny args[3], result;
  DLTensor* ts[3];
  int i;
  ts[0] = a;
  ts[1] = b;
  ts[2] = c;
  for (i = 0; i < 3; ++i) {
    args[i].type_index = kTVMFFIDLTensorPtr;
    args[i].zero_padding = 0;
    args[i].v_ptr = ts[i];
  }
  result.type_index = kTVMFFINone;
  result.zero_padding = 0;
  result.v_int64 = 0;
  return mr_function_call(f, args, 3, &result);
}

int main(void) {
  TVMFFIObject *lib = NULL, *vadd = NULL, *mm = NULL;
  float a[10], b[10], c[10];
  int64_t n = 10, mm_shape[2] = {MM_N, MM_N};
  DLTensor ta, tb, tc;
  double max_err = 0.0, checksum = 0.0;
  int i, j, k;

  if (kiln_system_lib_register() != 0) return fail("registering the kernels");
  if (mr_module_system_lib("", &lib) != 0) return fail("system library");
  if (mr_module_get_function(lib, "vadd", 0, &vadd) != 0 || vadd == NULL) return fail("vadd");
  if (mr_module_get_function(lib, "mm", 0, &mm) != 0 || mm == NULL) return fail("mm");

  for (i = 0; i < 10; ++i) {
    a[i] = (float)i;
    b[i] = (float)(2 * i);
    c[i] = 0.0f;
  }
  ta = tensor(a, 1, &n);
  tb = tensor(b, 1, &n);
  tc = tensor(c, 1, &n);
  if (call3(vadd, &ta, &tb, &tc) != 0) return fail("calling vadd");
  printf("vadd:");
  for (i = 0; i < 10; ++i) printf(" %g", c[i]);
  printf("\n");

  for (i = 0; i < MM_N * MM_N; ++i) {
    mm_a[i] = (float)((i * 7) % 13) / 13.0f;
    mm_b[i] = (float)((i * 5) % 11) / 11.0f;
  }
  ta = tensor(mm_a, 2, mm_shape);
  tb = tensor(mm_b, 2, mm_shape);
  tc = tensor(mm_c, 2, mm_shape);
  if (call3(mm, &ta, &tb, &tc) != 0) return fail("calling mm");
  for (i = 0; i < MM_N; ++i) {
    for (j = 0; j < MM_N; ++j) {
      double ref = 0.0;
      for (k = 0; k < MM_N; ++k) ref += (double)mm_a[i * MM_N + k] * mm_b[k * MM_N + j];
      if (fabs(ref - mm_c[i * MM_N + j]) > max_err) max_err = fabs(ref - mm_c[i * MM_N + j]);
      checksum += mm_c[i * MM_N + j];
    }
  }
  printf("mm: %dx%d checksum %.3f max_abs_err %.2e %s\n", MM_N, MM_N, checksum, max_err,
         max_err < 1e-3 ? "OK" : "MISMATCH");

  /* A wrong call reports the kernel's own error message. */
  tc = tensor(c, 1, &n);
  if (call3(mm, &ta, &tb, &tc) == 0) return fail("mm accepted a 1-D output");
  printf("mm with a 1-D output: %s: %s\n", mr_last_error_kind(), mr_last_error());

  mr_object_release(mm);
  mr_object_release(vadd);
  mr_object_release(lib);
  return max_err < 1e-3 ? 0 : 1;
}
