/* Workspace sizes near the top of size_t: CPU workspaces are whole pages, and rounding a
 * request up to a page must not wrap around to a tiny block. */
#include <stdint.h>

#include "check.h"
#include "microruntime/c_api.h"

int main(void) {
  uint64_t sizes[3];
  void* p;
  int i;
  sizes[0] = (uint64_t)SIZE_MAX - 100; /* rounds past SIZE_MAX */
  sizes[1] = (uint64_t)SIZE_MAX - 4095;
  sizes[2] = UINT64_MAX;
  for (i = 0; i < 3; ++i) {
    mr_error_clear();
    p = TVMBackendAllocWorkspace(kDLCPU, 0, sizes[i], kDLFloat, 32);
    CHECK(p == NULL);
    if (p) (void)TVMBackendFreeWorkspace(kDLCPU, 0, p);
    CHECK(mr_last_error_kind_id() == kMrErrorMemory);
    CHECK(check_error_matches("cannot allocate a workspace of"));
  }
  /* An ordinary request still works and is freed LIFO. */
  p = TVMBackendAllocWorkspace(kDLCPU, 0, 100, kDLFloat, 32);
  CHECK(p != NULL && ((uintptr_t)p % 64) == 0);
  CHECK_OK(TVMBackendFreeWorkspace(kDLCPU, 0, p));
  return CHECK_RESULT();
}
