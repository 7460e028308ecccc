/* Errors in the AOT runtime: the last message raised by a kernel or the run function, kept
 * in a static buffer (the AOT runtime is single-threaded). */
#include <string.h>

#include "microruntime/aot_runtime.h"

static char g_kind[32];
static char g_message[MR_AOT_MAX_ERROR];

/* Appends `text` to `buf` (of `cap` bytes), cutting what does not fit. */
static void append(char* buf, size_t cap, const char* text) {
  size_t used = strlen(buf), n = text ? strlen(text) : 0;
  if (n > cap - 1 - used) n = cap - 1 - used;
  memcpy(buf + used, text, n);
  buf[used + n] = '\0';
}

void TVMFFIErrorSetRaisedFromCStrParts(const char* kind, const char** parts, int32_t num_parts) {
  int32_t i;
  g_kind[0] = '\0';
  g_message[0] = '\0';
  append(g_kind, sizeof(g_kind), kind);
  for (i = 0; i < num_parts; ++i) append(g_message, sizeof(g_message), parts[i]);
}

void TVMFFIErrorSetRaisedFromCStr(const char* kind, const char* message) {
  TVMFFIErrorSetRaisedFromCStrParts(kind, &message, 1);
}

const char* mr_last_error(void) { return g_message; }

const char* mr_last_error_kind(void) { return g_kind; }
