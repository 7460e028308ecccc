/*
 * The AOT runtime: what a model compiled for the AOT executor (tvmgen_<name>_run, see its
 * generated header tvmgen_<name>.h) needs beside its kernels, for a program that links it
 * statically (build/libmicroruntime_aot.a, microruntime/src/aot/). It replaces the whole
 * runtime there: no graph, no loader, no threads, no allocation.
 *
 * - Kernel workspaces (TVMBackendAllocWorkspace / TVMBackendFreeWorkspace, CPU) come, last in
 *   first out, from the region the run function hands over while it runs (the end of the
 *   caller's workspace, sized by the compiler).
 * - Parallel loops (TVMBackendParallelLaunch) run as one task on the calling thread.
 * - Errors raised by kernels (TVMFFIErrorSetRaisedFromCStr[Parts]) are kept for
 *   mr_last_error() / mr_last_error_kind(), one for the program (single-threaded use).
 * - System-library registration (TVMFFIEnvModRegisterSystemLibSymbol) is accepted and ignored:
 *   the run function calls its kernels directly, never by name.
 * - Functions a kernel would call by name (packed calls) are not there: such a model does not
 *   link.
 */
#ifndef MICRORUNTIME_AOT_RUNTIME_H_
#define MICRORUNTIME_AOT_RUNTIME_H_

#include "c_api.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Bytes of a kernel error message kept (longer ones are cut). */
#ifndef MR_AOT_MAX_ERROR
#define MR_AOT_MAX_ERROR 256
#endif

/* The message and kind of the last error raised ("" when none). */
const char* mr_last_error(void);
const char* mr_last_error_kind(void);

/* From now on CPU workspaces come from [mem, mem + nbytes) (64-byte aligned), last in first
 * out; called by the generated run function before its first kernel. 0, or -1 while
 * workspaces of an earlier region are in use. */
int32_t mr_aot_workspace_begin(void* mem, size_t nbytes);
/* No region any more: a workspace request fails. */
void mr_aot_workspace_end(void);

#ifdef __cplusplus
}
#endif
#endif /* MICRORUNTIME_AOT_RUNTIME_H_ */
