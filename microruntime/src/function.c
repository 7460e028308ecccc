/* Function objects (type 68): a TVMFFIFunctionCell whose safe_call receives
 * the Function itself, forwarding to the user's callback with its `self`.
 * A function may also hold a strong reference to an `owner` (the module whose
 * code it runs), released with the function. */
#include <stdlib.h>

#include "internal.h"

#define MR_ERROR_FILE kMrFileFunction

typedef struct {
  TVMFFIObject header;
  TVMFFIFunctionCell cell;
  TVMFFISafeCallType call;
  void* self;
  void (*self_deleter)(void* self);
  TVMFFIObject* owner;
} mr_function_obj_t;

static int function_trampoline(void* handle, const TVMFFIAny* args, int32_t num_args,
                               TVMFFIAny* result) {
  mr_function_obj_t* f = (mr_function_obj_t*)handle;
  return f->call(f->self, args, num_args, result);
}

static void function_deleter(void* obj, int flags) {
  mr_function_obj_t* f = (mr_function_obj_t*)obj;
  if ((flags & kTVMFFIObjectDeleterFlagBitMaskStrong) && f->self_deleter) {
    f->self_deleter(f->self);
    f->self_deleter = NULL;
  }
  if ((flags & kTVMFFIObjectDeleterFlagBitMaskStrong) && f->owner) {
    mr_object_release(f->owner);
    f->owner = NULL;
  }
  if (flags & kTVMFFIObjectDeleterFlagBitMaskWeak) free(obj);
}

int mr_function_create_closure(void* self, TVMFFISafeCallType call, void (*deleter)(void*),
                               TVMFFIObject** out_func) {
  mr_function_obj_t* f;
  if (!call) return MR_VALUE_ERROR("function callback is NULL");
  f = (mr_function_obj_t*)mr_object_alloc(sizeof(*f), kTVMFFIFunction, function_deleter,
                                          "a Function");
  if (!f) return -1;
  f->cell.safe_call = function_trampoline;
  f->call = call;
  f->self = self;
  f->self_deleter = deleter;
  f->owner = NULL;
  *out_func = &f->header;
  return 0;
}

int mr_function_from_owned_symbol(TVMFFISafeCallType symbol, TVMFFIObject* owner,
                                  TVMFFIObject** out_func) {
  TVMFFIObject* f = NULL;
  if (mr_function_create_closure(NULL, symbol, NULL, &f) != 0) return -1;
  if (owner) mr_object_retain(owner);
  ((mr_function_obj_t*)f)->owner = owner;
  *out_func = f;
  return 0;
}

int TVMFFIFunctionCreate(void* self, TVMFFISafeCallType safe_call, void (*deleter)(void* self),
                         TVMFFIObjectHandle* out) {
  TVMFFIObject* f = NULL;
  if (mr_function_create_closure(self, safe_call, deleter, &f) != 0) return -1;
  *out = f;
  return 0;
}

int mr_function_from_symbol(TVMFFISafeCallType symbol, TVMFFIObject** out_func) {
  return mr_function_create_closure(NULL, symbol, NULL, out_func);
}

int TVMFFIFunctionCall(TVMFFIObjectHandle func, TVMFFIAny* args, int32_t num_args,
                       TVMFFIAny* result) {
  TVMFFIObject* obj = (TVMFFIObject*)func;
  const TVMFFIFunctionCell* cell;
  if (!obj || obj->type_index != kTVMFFIFunction)
    return MR_RAISE(kMrErrorType, "called object is not a Function");
  cell = (const TVMFFIFunctionCell*)(obj + 1);
  return cell->safe_call(func, args, num_args, result);
}

int mr_function_call(TVMFFIObject* func, TVMFFIAny* args, int32_t num_args, TVMFFIAny* result) {
  return TVMFFIFunctionCall(func, args, num_args, result);
}
