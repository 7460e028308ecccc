/* Thread-local error slot, kinds by name and by enum, CStrParts concatenation,
 * Error objects. */
#include <pthread.h>

#include "check.h"
#include "config.h"
#include "error_files.h"

static void* other_thread(void* arg) {
  (void)arg;
  mr_error_set("TypeError", "from another thread");
  return NULL;
}

int main(void) {
  const char* parts[] = {"Mismatched ", NULL, "A", ".dtype on argument #", "0"};
  TVMFFIObjectHandle err = NULL;
  TVMFFIByteArray kind = {"ValueError", 10}, msg = {"bad value", 9};
  const TVMFFIErrorCell* cell;
  pthread_t t;

  CHECK(mr_error_set(NULL, "plain") == -1);
  CHECK(strcmp(mr_last_error_kind(), "RuntimeError") == 0);
  CHECK(strcmp(mr_last_error(), "plain") == 0);

  TVMFFIErrorSetRaisedFromCStrParts("TypeError", parts, 5);
  CHECK(strcmp(mr_last_error(), "Mismatched A.dtype on argument #0") == 0);
  CHECK(strcmp(mr_last_error_kind(), "TypeError") == 0);

  /* A type index a kernel reports is named (the small build keeps the kernel's text). */
  {
    const char* got[] = {"expected Tensor, but got ", "type index ", "0"};
    const char* obj[] = {"got type index ", "68", "; ", "type index ", "x1", " type index ", "300"};
    TVMFFIErrorSetRaisedFromCStrParts("TypeError", got, 3);
#ifdef MR_CONFIG_SMALL
    CHECK(strcmp(mr_last_error(), "expected Tensor, but got type index 0") == 0);
#else
    CHECK(strcmp(mr_last_error(), "expected Tensor, but got type index 0 (None)") == 0);
#endif
    TVMFFIErrorSetRaisedFromCStrParts("TypeError", obj, 7);
#ifdef MR_CONFIG_SMALL
    CHECK(strcmp(mr_last_error(), "got type index 68; type index x1 type index 300") == 0);
#else
    CHECK(strcmp(mr_last_error(),
                 "got type index 68 (Function); type index x1 type index 300 (object)") == 0);
#endif
    TVMFFIErrorSetRaisedFromCStrParts("TypeError", parts, 5);
  }

  /* Every recorded error is a new occurrence, even with the same text; clearing is not one. */
  {
    uint64_t before = mr_last_error_serial();
    mr_error_set("ValueError", "same");
    CHECK(mr_last_error_serial() == before + 1);
    mr_error_clear();
    CHECK(mr_last_error_serial() == before + 1);
    TVMFFIErrorSetRaisedFromCStr("ValueError", "same");
    CHECK(mr_last_error_serial() == before + 2);
    TVMFFIErrorSetRaisedFromCStrParts("TypeError", parts, 5);
    CHECK(mr_last_error_serial() == before + 3);
  }

  /* Errors are per thread. */
  pthread_create(&t, NULL, other_thread, NULL);
  pthread_join(t, NULL);
  CHECK(strcmp(mr_last_error_kind(), "TypeError") == 0);
  CHECK(strcmp(mr_last_error(), "Mismatched A.dtype on argument #0") == 0);

  /* Move the raised error out as an Error object (67). */
  TVMFFIErrorMoveFromRaised(&err);
  CHECK(err != NULL);
  CHECK(mr_object_type_index((TVMFFIObject*)err) == kTVMFFIError);
  cell = (const TVMFFIErrorCell*)((char*)err + 24);
  CHECK(cell->kind.size == 9 && memcmp(cell->kind.data, "TypeError", 9) == 0);
  CHECK(strcmp(cell->message.data, "Mismatched A.dtype on argument #0") == 0);
  CHECK(mr_last_error()[0] == '\0');
  mr_object_release((TVMFFIObject*)err);
  TVMFFIErrorMoveFromRaised(&err); /* nothing raised now: NULL */
  CHECK(err == NULL);

  /* SetRaised borrows the Error object: the caller still releases its reference. */
  CHECK_OK(TVMFFIErrorCreate(&kind, &msg, NULL, &err));
  TVMFFIErrorSetRaised(err);
  CHECK((uint32_t)((TVMFFIObject*)err)->combined_ref_count == 1); /* strong count */
  mr_object_release((TVMFFIObject*)err);
  CHECK(strcmp(mr_last_error_kind(), "ValueError") == 0);
  CHECK(strcmp(mr_last_error(), "bad value") == 0);

  /* Kinds the runtime branches on are an enum; the name is still what crosses the ABI. */
  CHECK(mr_last_error_kind_id() == kMrErrorValue);
  mr_error_set("MemoryError", "m");
  CHECK(mr_last_error_kind_id() == kMrErrorMemory);
  mr_error_set("BufferError", "b");
  CHECK(mr_last_error_kind_id() == kMrErrorBuffer);
  TVMFFIErrorSetRaisedFromCStr("MyOwnError", "from a kernel");
  CHECK(mr_last_error_kind_id() == kMrErrorOther);
  CHECK(strcmp(mr_last_error_kind(), "MyOwnError") == 0);
  mr_error_set(NULL, "no kind");
  CHECK(mr_last_error_kind_id() == kMrErrorRuntime);
  mr_error_clear();
  CHECK(mr_last_error_kind_id() == kMrErrorNone);

  /* Long messages are truncated, not overflowed. */
  {
    static char big[10000];
    memset(big, 'x', sizeof(big) - 1);
    TVMFFIErrorSetRaisedFromCStr("RuntimeError", big);
    CHECK(strlen(mr_last_error()) == MR_MAX_ERROR_MESSAGE - 1);
  }

  /* A runtime error site: the normal build says what is wrong and has no code; the small build
   * records the site's code (dtype.c's number * 10000 + its line) and the message "E<code>". */
  {
    DLDataType t;
    char want[16];
    CHECK(mr_dtype_parse("float7", &t) == -1);
    CHECK(mr_last_error_kind_id() == kMrErrorValue);
#ifdef MR_CONFIG_SMALL
    CHECK(mr_last_error_code() / 10000 == kMrFileDtype && mr_last_error_code() % 10000 != 0);
    snprintf(want, sizeof(want), "E%u", (unsigned)mr_last_error_code());
    CHECK(strcmp(mr_last_error(), want) == 0);
#else
    (void)want;
    CHECK(mr_last_error_code() == 0);
    CHECK(strstr(mr_last_error(), "cannot parse dtype 'float7'") != NULL);
#endif
    TVMFFIErrorSetRaisedFromCStr("ValueError", "from a kernel");
    CHECK(mr_last_error_code() == 0);
    CHECK(strcmp(mr_last_error(), "from a kernel") == 0);
  }
  mr_error_clear();
  CHECK(mr_last_error()[0] == '\0');
  return CHECK_RESULT();
}
