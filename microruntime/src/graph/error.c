/* Errors of the graph executor: GraphExecutorError, with a context prefix. */
#include <stdarg.h>
#include <stdio.h>

#include "graph.h"

#ifdef MR_CONFIG_SMALL
int mr_graph_refail(void) {
  if (mr_last_error_kind_id() == kMrErrorMemory) return -1;
  return mr_error_code_named(MR_GRAPH_ERROR, mr_last_error_code());
}
#else
int mr_graph_vfail(const char* context, const char* fmt, va_list ap) {
  char buf[MR_MAX_ERROR_MESSAGE];
  int n = context ? snprintf(buf, sizeof(buf), "%s: ", context) : 0;
  vsnprintf(buf + n, sizeof(buf) - (size_t)n, fmt, ap);
  return mr_error_set(MR_GRAPH_ERROR, buf);
}

int mr_graph_fail(const char* fmt, ...) {
  va_list ap;
  int status;
  va_start(ap, fmt);
  status = mr_graph_vfail(NULL, fmt, ap);
  va_end(ap);
  return status;
}

int mr_graph_refail(const char* context) {
  char buf[MR_MAX_ERROR_MESSAGE];
  snprintf(buf, sizeof(buf), "%s", mr_last_error());
  if (mr_last_error_kind_id() == kMrErrorMemory) return -1;
  return context ? mr_graph_fail("%s: %s", context, buf) : mr_error_set(MR_GRAPH_ERROR, buf);
}
#endif
