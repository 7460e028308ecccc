/* A tiny assertion header for the C tests: failures print file:line and the
 * runtime's last error, and main returns CHECK_RESULT(). */
#ifndef MR_TESTS_CHECK_H_
#define MR_TESTS_CHECK_H_

#include <stdio.h>
#include <string.h>

#include "microruntime/microruntime.h"

static int check_failures = 0;
static int check_count = 0;

#define CHECK(cond)                                                              \
  do {                                                                           \
    ++check_count;                                                               \
    if (!(cond)) {                                                               \
      ++check_failures;                                                          \
      fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond);   \
    }                                                                            \
  } while (0)

/* expr must return 0. */
#define CHECK_OK(expr)                                                                  \
  do {                                                                                  \
    ++check_count;                                                                      \
    if ((expr) != 0) {                                                                  \
      ++check_failures;                                                                 \
      fprintf(stderr, "%s:%d: %s failed: %s: %s\n", __FILE__, __LINE__, #expr,          \
              mr_last_error_kind(), mr_last_error());                                   \
    }                                                                                   \
  } while (0)

#ifdef MR_CONFIG_SMALL
/* A runtime built small records an error site's code, the message "E<code>", in place of the
 * message: the error must be one of a site (code non-zero, its message "E<code>") or one given
 * by its text (a kernel's, code 0) that contains `phrase`. */
static inline int check_error_matches(const char* phrase) {
  char want[16];
  uint32_t code = mr_last_error_code();
  if (mr_last_error_kind_id() == kMrErrorNone) return 0;
  if (code == 0) return strstr(mr_last_error(), phrase) != NULL;
  snprintf(want, sizeof(want), "E%u", (unsigned)code);
  return strcmp(mr_last_error(), want) == 0;
}
#else
static inline int check_error_matches(const char* phrase) {
  return strstr(mr_last_error(), phrase) != NULL;
}
#endif

/* expr must return non-zero and the error message must contain `phrase` (in the small build:
 * see check_error_matches). */
#define CHECK_FAIL(expr, phrase)                                                        \
  do {                                                                                  \
    ++check_count;                                                                      \
    mr_error_clear();                                                                   \
    if ((expr) == 0) {                                                                  \
      ++check_failures;                                                                 \
      fprintf(stderr, "%s:%d: %s succeeded but should fail\n", __FILE__, __LINE__, #expr); \
    } else if (!check_error_matches(phrase)) {                                          \
      ++check_failures;                                                                 \
      fprintf(stderr, "%s:%d: %s: error '%s' lacks '%s'\n", __FILE__, __LINE__, #expr,  \
              mr_last_error(), (phrase));                                               \
    }                                                                                   \
  } while (0)

#define CHECK_RESULT()                                                              \
  (printf("%d checks, %d failed\n", check_count, check_failures), check_failures ? 1 : 0)

#endif /* MR_TESTS_CHECK_H_ */
