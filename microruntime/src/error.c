/* The thread-local error slot ("raised error"), the TVMFFIError* C API, and
 * Error objects (type 67). Kernels and the runtime both report through here. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

#define MR_ERROR_FILE kMrFileError

typedef struct {
  int raised;
  uint64_t serial; /* counts the errors recorded on this thread */
  uint32_t code;   /* the site's code (small build), 0 for an error given by its text */
  mr_error_kind_t kind_id;
  char kind[MR_MAX_ERROR_KIND];
  char message[MR_MAX_ERROR_MESSAGE];
} mr_error_state_t;

static MR_THREAD_LOCAL mr_error_state_t g_error;

typedef struct {
  TVMFFIObject header;
  TVMFFIErrorCell cell;
} mr_error_obj_t;

static void copy_text(char* dst, size_t cap, const char* src, size_t n) {
  if (n >= cap) n = cap - 1;
  if (n) memcpy(dst, src, n);
  dst[n] = '\0';
}

/* The names of mr_error_kind_t's kinds, NUL-separated, in enum order from kMrErrorRuntime. */
static const char k_kind_names[] =
    "RuntimeError\0ValueError\0TypeError\0KeyError\0IndexError\0MemoryError\0BufferError";

/* Records a new error of kind `id`, named `name`. */
static void set_kind_named(mr_error_kind_t id, const char* name) {
  copy_text(g_error.kind, sizeof(g_error.kind), name, strlen(name));
  g_error.code = 0;
  g_error.kind_id = id;
  g_error.raised = 1;
  ++g_error.serial;
}

/* The name of a kind of the enum other than kMrErrorOther. */
static const char* kind_name(mr_error_kind_t id) {
  const char* p = k_kind_names;
  int i;
  for (i = kMrErrorRuntime; i < (int)id && i < kMrErrorOther - 1; ++i) p += strlen(p) + 1;
  return p;
}

/* A kind given by name: one of the enum's, or kMrErrorOther with the name kept. */
static void set_kind(const char* kind) {
  int i;
  if (!kind || !*kind) kind = "RuntimeError";
  for (i = kMrErrorRuntime; i < kMrErrorOther; ++i)
    if (strcmp(kind_name((mr_error_kind_t)i), kind) == 0) break;
  set_kind_named((mr_error_kind_t)i, kind);
}

/* Appends s to the message of length len (truncating); returns the new length. */
static size_t append(size_t len, const char* s) {
  size_t n = strlen(s), cap = sizeof(g_error.message) - 1;
  if (n > cap - len) n = cap - len;
  memcpy(g_error.message + len, s, n);
  return len + n;
}

const char* mr_last_error(void) { return g_error.message; }
const char* mr_last_error_kind(void) { return g_error.kind; }
mr_error_kind_t mr_last_error_kind_id(void) { return g_error.kind_id; }
uint64_t mr_last_error_serial(void) { return g_error.serial; }
uint32_t mr_last_error_code(void) { return g_error.code; }

#ifdef MR_CONFIG_SMALL
/* The message of a site's code: "E<code>", in decimal. */
static int set_code(uint32_t code) {
  char digits[10];
  size_t n = 0, i;
  g_error.code = code;
  do digits[n++] = (char)('0' + code % 10); while ((code /= 10) != 0);
  g_error.message[0] = 'E';
  for (i = 0; i < n; ++i) g_error.message[1 + i] = digits[n - 1 - i];
  g_error.message[1 + n] = '\0';
  return -1;
}

int mr_error_code(mr_error_kind_t kind, uint32_t code) {
  set_kind_named(kind, kind_name(kind));
  return set_code(code);
}

int mr_error_code_named(const char* kind, uint32_t code) {
  set_kind(kind);
  return set_code(code);
}
#endif

int mr_error_set(const char* kind, const char* message) {
  set_kind(kind);
  if (!message) message = "";
  copy_text(g_error.message, sizeof(g_error.message), message, strlen(message));
  return -1;
}

#ifndef MR_CONFIG_SMALL /* the small build records codes (mr_error_code), never formats */
int mr_error_setv_in(mr_error_kind_t kind, const char* context, const char* fmt, va_list ap) {
  size_t n = 0;
  set_kind_named(kind, kind_name(kind));
  if (context) {
    n = append(0, context);
    n = append(n, ": ");
  }
  vsnprintf(g_error.message + n, sizeof(g_error.message) - n, fmt, ap);
  return -1;
}

int mr_error_setv(mr_error_kind_t kind, const char* fmt, va_list ap) {
  return mr_error_setv_in(kind, NULL, fmt, ap);
}

int mr_error_setf(mr_error_kind_t kind, const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  mr_error_setv(kind, fmt, ap);
  va_end(ap);
  return -1;
}

int mr_value_error(const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  mr_error_setv(kMrErrorValue, fmt, ap);
  va_end(ap);
  return -1;
}

int mr_error_oom(const char* what) {
  return mr_error_setf(kMrErrorMemory, "out of memory allocating %s", what);
}
#endif

void mr_error_clear(void) {
  g_error.raised = 0;
  g_error.code = 0;
  g_error.kind_id = kMrErrorNone;
  g_error.kind[0] = '\0';
  g_error.message[0] = '\0';
}

void TVMFFIErrorSetRaisedFromCStr(const char* kind, const char* message) {
  (void)mr_error_set(kind, message);
}

#ifndef MR_CONFIG_SMALL
/* Whether `value` is the number a message gives after a "type index " part. */
static int is_type_index_value(const char* before, const char* value) {
  static const char k_head[] = "type index ";
  size_t n = strlen(before), k = sizeof(k_head) - 1;
  char* end;
  if (n < k || memcmp(before + n - k, k_head, k) != 0 || !*value) return 0;
  (void)strtol(value, &end, 10);
  return *end == '\0';
}
#endif

/* Kernels say "... but got type index <n>": the runtime adds the type's name (not in the small
 * build, which keeps the kernel's text as it is). */
void TVMFFIErrorSetRaisedFromCStrParts(const char* kind, const char** parts, int32_t num_parts) {
  size_t len = 0;
  int32_t i;
  set_kind(kind);
  for (i = 0; parts && i < num_parts; ++i) {
    if (!parts[i]) continue;
    len = append(len, parts[i]);
#ifndef MR_CONFIG_SMALL
    if (i > 0 && parts[i - 1] && is_type_index_value(parts[i - 1], parts[i])) {
      len = append(len, " (");
      len = append(len, mr_type_index_name((int32_t)strtol(parts[i], NULL, 10)));
      len = append(len, ")");
    }
#endif
  }
  g_error.message[len] = '\0';
}

static void error_update_backtrace(TVMFFIObjectHandle self, const TVMFFIByteArray* backtrace,
                                   int32_t mode) {
  (void)self;
  (void)backtrace;
  (void)mode;
}

int TVMFFIErrorCreate(const TVMFFIByteArray* kind, const TVMFFIByteArray* message,
                      const TVMFFIByteArray* backtrace, TVMFFIObjectHandle* out) {
  static const TVMFFIByteArray empty = {"", 0};
  const TVMFFIByteArray* parts[3];
  mr_error_obj_t* err;
  TVMFFIByteArray* cells[3];
  char* p;
  size_t total = sizeof(mr_error_obj_t) + 3;
  int i;
  parts[0] = kind ? kind : &empty;
  parts[1] = message ? message : &empty;
  parts[2] = backtrace ? backtrace : &empty;
  for (i = 0; i < 3; ++i) {
    if (parts[i]->size > (SIZE_MAX >> 1) - total) return MR_VALUE_ERROR("error text too long");
    total += parts[i]->size;
  }
  err = (mr_error_obj_t*)mr_object_alloc(total, kTVMFFIError, NULL, "an Error object");
  if (!err) return -1;
  cells[0] = &err->cell.kind;
  cells[1] = &err->cell.message;
  cells[2] = &err->cell.backtrace;
  p = (char*)(err + 1);
  for (i = 0; i < 3; ++i) {
    if (parts[i]->size) memcpy(p, parts[i]->data, parts[i]->size);
    p[parts[i]->size] = '\0';
    cells[i]->data = p;
    cells[i]->size = parts[i]->size;
    p += parts[i]->size + 1;
  }
  err->cell.update_backtrace = error_update_backtrace;
  *out = err;
  return 0;
}

void TVMFFIErrorSetRaised(TVMFFIObjectHandle error) {
  TVMFFIObject* obj = (TVMFFIObject*)error;
  if (!obj) return;
  if (obj->type_index == kTVMFFIError) {
    const TVMFFIErrorCell* cell = (const TVMFFIErrorCell*)(obj + 1);
    char kind[MR_MAX_ERROR_KIND];
    copy_text(kind, sizeof(kind), cell->kind.data, cell->kind.size);
    set_kind(kind);
    copy_text(g_error.message, sizeof(g_error.message), cell->message.data, cell->message.size);
  } else {
    (void)MR_RAISE(kMrErrorRuntime, "an object that is not an Error was raised");
  }
}

void TVMFFIErrorMoveFromRaised(TVMFFIObjectHandle* out) {
  TVMFFIByteArray kind, message;
  TVMFFIObjectHandle err = NULL;
  if (!out) return;
  *out = NULL;
  if (!g_error.raised) return;
  kind.data = g_error.kind;
  kind.size = strlen(g_error.kind);
  message.data = g_error.message;
  message.size = strlen(g_error.message);
  if (TVMFFIErrorCreate(&kind, &message, NULL, &err) != 0) return;
  mr_error_clear();
  *out = err;
}
