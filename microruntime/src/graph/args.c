/* Reading the arguments of the graph executor's packed functions. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "graph.h"

#define MR_ERROR_FILE kMrFileGraphArgs

int mr_graph_bad_arg(const char* func, int i, const char* expected, const TVMFFIAny* v) {
  return MR_RAISE(kMrErrorType, "%s: argument %d must be %s, got %s", func, i, expected,
                       v ? mr_type_index_name(v->type_index) : "nothing");
}

static const TVMFFIAny* arg(const TVMFFIAny* args, int32_t n, int i) {
  return i < n ? &args[i] : NULL;
}

int mr_graph_arg_int(const char* func, const TVMFFIAny* args, int32_t n, int i, int64_t* out) {
  const TVMFFIAny* v = arg(args, n, i);
  if (!v || (v->type_index != kTVMFFIInt && v->type_index != kTVMFFIBool))
    return mr_graph_bad_arg(func, i, "an int", v);
  *out = v->v_int64;
  return 0;
}

int mr_graph_arg_tensor(const char* func, const TVMFFIAny* args, int32_t n, int i,
                        DLTensor** out) {
  const TVMFFIAny* v = arg(args, n, i);
  if (v && v->type_index == kTVMFFITensor) *out = mr_tensor_dl(v->v_obj);
  else if (v && v->type_index == kTVMFFIDLTensorPtr && v->v_ptr) *out = (DLTensor*)v->v_ptr;
  else return mr_graph_bad_arg(func, i, "a tensor", v);
  return 0;
}

int mr_graph_arg_str(const char* func, const TVMFFIAny* args, int32_t n, int i, char* buf) {
  const TVMFFIAny* v = arg(args, n, i);
  const char* s;
  size_t len;
  if (!v || mr_any_get_str(v, &s, &len) != 0) return mr_graph_bad_arg(func, i, "a string", v);
  if (len >= MR_MAX_NAME || memchr(s, 0, len))
    return MR_RAISE(kMrErrorValue, "%s: argument %d is longer than %d bytes or holds a NUL",
                         func, i, MR_MAX_NAME - 1);
  memcpy(buf, s, len);
  buf[len] = '\0';
  return 0;
}

int mr_graph_arg_devices(const char* func, const TVMFFIAny* args, int32_t n, int first,
                         DLDevice* devs, int* out_count) {
  int i = first, count = 0;
  while (i < n) {
    if (count == MR_MAX_GRAPH_DEVICES)
      return MR_RAISE(kMrErrorValue, "%s: at most %d devices", func, MR_MAX_GRAPH_DEVICES);
    if (args[i].type_index == kTVMFFIDevice) {
      devs[count++] = args[i++].v_device;
      continue;
    }
    if (args[i].type_index != kTVMFFIInt || i + 1 >= n || args[i + 1].type_index != kTVMFFIInt)
      return mr_graph_bad_arg(func, i, "a Device or a (device_type, device_id) pair of ints",
                              &args[i]);
    devs[count].device_type = (int32_t)args[i].v_int64;
    devs[count++].device_id = (int32_t)args[i + 1].v_int64;
    i += 2;
  }
  if (count == 0) return MR_RAISE(kMrErrorValue, "%s: no device given", func);
  *out_count = count;
  return 0;
}
