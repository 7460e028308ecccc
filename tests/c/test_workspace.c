/* Workspace: 64-byte alignment, LIFO reuse, growth, out-of-order frees. */
#include "check.h"

int main(void) {
  void *a, *b, *c, *a2, *big;
  a = TVMBackendAllocWorkspace(kDLCPU, 0, 100, kDLFloat, 32);
  b = TVMBackendAllocWorkspace(kDLCPU, 0, 5000, kDLFloat, 32);
  CHECK(a && b && a != b);
  CHECK((uintptr_t)a % 64 == 0 && (uintptr_t)b % 64 == 0);
  memset(a, 1, 100);
  memset(b, 2, 5000);
  /* Out of order: freeing `a` while `b` is live is an error and changes nothing. */
  mr_error_clear();
  CHECK(TVMBackendFreeWorkspace(kDLCPU, 0, a) != 0);
  CHECK(check_error_matches("out of order"));
  CHECK(TVMBackendFreeWorkspace(kDLCPU, 0, b) == 0);
  CHECK(TVMBackendFreeWorkspace(kDLCPU, 0, a) == 0);
  CHECK(TVMBackendFreeWorkspace(kDLCPU, 0, a) != 0); /* nothing left */
  /* Reuse: the same sizes come back at the same depth. */
  a2 = TVMBackendAllocWorkspace(kDLCPU, 0, 100, kDLFloat, 32);
  CHECK(a2 == a);
  c = TVMBackendAllocWorkspace(kDLCPU, 0, 4000, kDLFloat, 32);
  CHECK(c == b); /* 5000 rounded up to a block that also fits 4000 */
  CHECK_OK(TVMBackendFreeWorkspace(kDLCPU, 0, c));
  /* Growth: a larger request at the same depth gets a bigger block. */
  big = TVMBackendAllocWorkspace(kDLCPU, 0, 1 << 20, kDLFloat, 32);
  CHECK(big != NULL && (uintptr_t)big % 64 == 0);
  memset(big, 3, 1 << 20);
  CHECK_OK(TVMBackendFreeWorkspace(kDLCPU, 0, big));
  CHECK_OK(TVMBackendFreeWorkspace(kDLCPU, 0, a2));
  /* Zero bytes still gives a usable pointer. */
  a = TVMBackendAllocWorkspace(kDLCPU, 0, 0, kDLFloat, 32);
  CHECK(a != NULL);
  CHECK_OK(TVMBackendFreeWorkspace(kDLCPU, 0, a));
  /* Devices without a backend fail with a message naming them. */
  mr_error_clear();
  CHECK(TVMBackendAllocWorkspace(kDLROCM, 0, 16, kDLFloat, 32) == NULL);
  CHECK(check_error_matches("rocm"));
  return CHECK_RESULT();
}
