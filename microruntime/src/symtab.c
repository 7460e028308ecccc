/* Name -> pointer tables guarded by their own mutex: module loaders by kind,
 * context symbols, and the system library's symbols. Names are copied. */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

#define MR_ERROR_FILE kMrFileSymtab

/* Caller holds the mutex. */
static mr_symbol_t* find(mr_symtab_t* t, const char* name) {
  size_t i;
  for (i = 0; i < t->count; ++i)
    if (strcmp(t->items[i].name, name) == 0) return &t->items[i];
  return NULL;
}

int mr_symtab_set(mr_symtab_t* t, const char* name, void* ptr) {
  mr_symbol_t* s;
  size_t n;
  int status = 0;
  if (!name || (n = strlen(name)) >= MR_MAX_NAME)
    return MR_VALUE_ERROR("%s: name is NULL or too long", t->what);
  mr_mutex_lock(&t->mutex);
  s = find(t, name);
  if (!s) {
    if (t->count >= t->max) {
      status = MR_RAISE(kMrErrorRuntime, "too many %s", t->what);
    } else if (mr_grow(&t->items, &t->cap, t->count, sizeof(*t->items), t->what) != 0) {
      status = -1;
    } else if (!(t->items[t->count].name = mr_strndup(name, n))) {
      status = MR_OOM(t->what);
    } else {
      s = &t->items[t->count++];
    }
  }
  if (s) s->ptr = ptr;
  mr_mutex_unlock(&t->mutex);
  return status;
}

void* mr_symtab_get(mr_symtab_t* t, const char* name) {
  mr_symbol_t* s;
  void* ptr;
  mr_mutex_lock(&t->mutex);
  s = find(t, name);
  ptr = s ? s->ptr : NULL;
  mr_mutex_unlock(&t->mutex);
  return ptr;
}
