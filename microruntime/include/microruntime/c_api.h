/*
 * The TVM-FFI stable C ABI, as spoken by compiled kernels.
 *
 * Layouts and enum values follow apache/tvm-ffi (c_api.h, 0.1.x) so that
 * kernels compiled by Apache TVM run on the microruntime and kernels compiled
 * by Kiln run in Apache TVM. See shared reference §1 for every offset.
 *
 * Calling convention (TVMFFISafeCallType): arguments are borrowed views; the
 * caller sets `result->type_index = kTVMFFINone` before the call and owns
 * whatever object the callee leaves in `result`. A callee returns 0 on
 * success, or records an error with TVMFFIErrorSetRaisedFromCStr[Parts] and
 * returns -1.
 */
#ifndef MICRORUNTIME_C_API_H_
#define MICRORUNTIME_C_API_H_

#include <stddef.h>
#include <stdint.h>

#include "dlpack.h"

#ifdef __cplusplus
extern "C" {
#endif

#if defined(_WIN32)
#define MR_DLL __declspec(dllexport)
#else
#define MR_DLL __attribute__((visibility("default")))
#endif

typedef enum {
  kTVMFFIAny = -1,
  kTVMFFINone = 0,
  kTVMFFIInt = 1,
  kTVMFFIBool = 2,
  kTVMFFIFloat = 3,
  kTVMFFIOpaquePtr = 4,
  kTVMFFIDataType = 5,
  kTVMFFIDevice = 6,
  kTVMFFIDLTensorPtr = 7,
  kTVMFFIRawStr = 8,
  kTVMFFIByteArrayPtr = 9,
  kTVMFFIObjectRValueRef = 10,
  kTVMFFISmallStr = 11,
  kTVMFFISmallBytes = 12,
  kTVMFFIStaticObjectBegin = 64,
  kTVMFFIObject = 64,
  kTVMFFIStr = 65,
  kTVMFFIBytes = 66,
  kTVMFFIError = 67,
  kTVMFFIFunction = 68,
  kTVMFFIShape = 69,
  kTVMFFITensor = 70,
  kTVMFFIArray = 71,
  kTVMFFIMap = 72,
  kTVMFFIModule = 73,
  kTVMFFIOpaquePyObject = 74,
  /* The microruntime's own object kinds start here. */
  kTVMFFIDynObjectBegin = 128
} TVMFFITypeIndex;

/* Deleter flags. */
#define kTVMFFIObjectDeleterFlagBitMaskStrong 1
#define kTVMFFIObjectDeleterFlagBitMaskWeak 2
#define kTVMFFIObjectDeleterFlagBitMaskBoth 3

/* Object header: 24 bytes. Strong count in the low 32 bits of
 * combined_ref_count, weak count in the high 32 bits. */
typedef struct TVMFFIObject {
  uint64_t combined_ref_count;
  int32_t type_index;
  uint32_t __padding;
  union {
    void (*deleter)(void* self, int flags);
    int64_t __ensure_align;
  };
} TVMFFIObject;

typedef void* TVMFFIObjectHandle;

/* A value: 16 bytes. */
typedef struct TVMFFIAny {
  int32_t type_index;
  union {
    uint32_t zero_padding;
    uint32_t small_str_len;
  };
  union {
    int64_t v_int64;
    double v_float64;
    void* v_ptr;
    const char* v_c_str;
    TVMFFIObject* v_obj;
    DLDataType v_dtype;
    DLDevice v_device;
    char v_bytes[8];
    uint64_t v_uint64;
  };
} TVMFFIAny;

typedef struct {
  const char* data;
  size_t size;
} TVMFFIByteArray;

typedef struct {
  const int64_t* data;
  size_t size;
} TVMFFIShapeCell;

typedef int (*TVMFFISafeCallType)(void* handle, const TVMFFIAny* args,
                                  int32_t num_args, TVMFFIAny* result);

typedef struct {
  TVMFFISafeCallType safe_call;
  void* cpp_call; /* always NULL in the microruntime */
} TVMFFIFunctionCell;

typedef struct {
  TVMFFIByteArray kind;
  TVMFFIByteArray message;
  TVMFFIByteArray backtrace;
  void (*update_backtrace)(TVMFFIObjectHandle self,
                           const TVMFFIByteArray* backtrace, int32_t mode);
  void* cause_chain;
  void* extra_context;
} TVMFFIErrorCell;

typedef struct {
  void* data; /* TVMFFIAny elements */
  int64_t size;
  int64_t capacity;
  void (*data_deleter)(void*);
} TVMFFISeqCell;

/* What an opaque object (OpaquePyObject, 74) holds after its header. */
typedef struct {
  void* handle;
} TVMFFIOpaqueObjectCell;

/* ---- objects ------------------------------------------------------------ */
MR_DLL int TVMFFIObjectIncRef(TVMFFIObjectHandle obj);
MR_DLL int TVMFFIObjectDecRef(TVMFFIObjectHandle obj);
/* A new opaque object holding `handle`; `deleter(handle)` runs when the last strong
 * reference goes. Only type index kTVMFFIOpaquePyObject is accepted, as in TVM-FFI. */
MR_DLL int TVMFFIObjectCreateOpaque(void* handle, int32_t type_index,
                                    void (*deleter)(void* handle), TVMFFIObjectHandle* out);

/* ---- errors (thread-local "raised" slot) -------------------------------- */
MR_DLL void TVMFFIErrorSetRaisedFromCStr(const char* kind, const char* message);
/* The message is the concatenation of parts[0..num_parts); NULL parts are skipped. */
MR_DLL void TVMFFIErrorSetRaisedFromCStrParts(const char* kind, const char** parts,
                                              int32_t num_parts);
/* Raises an Error object (type 67); the caller keeps its reference, as in TVM-FFI. */
MR_DLL void TVMFFIErrorSetRaised(TVMFFIObjectHandle error);
/* Moves the raised error out as a new Error object (NULL if none). */
MR_DLL void TVMFFIErrorMoveFromRaised(TVMFFIObjectHandle* out);
MR_DLL int TVMFFIErrorCreate(const TVMFFIByteArray* kind, const TVMFFIByteArray* message,
                             const TVMFFIByteArray* backtrace, TVMFFIObjectHandle* out);

/* ---- functions and the global registry ---------------------------------- */
MR_DLL int TVMFFIFunctionCreate(void* self, TVMFFISafeCallType safe_call,
                                void (*deleter)(void* self), TVMFFIObjectHandle* out);
MR_DLL int TVMFFIFunctionCall(TVMFFIObjectHandle func, TVMFFIAny* args, int32_t num_args,
                              TVMFFIAny* result);
MR_DLL int TVMFFIFunctionSetGlobal(const TVMFFIByteArray* name, TVMFFIObjectHandle f,
                                   int override);
/* *out is a new reference, or NULL when no such function exists (still returns 0). */
MR_DLL int TVMFFIFunctionGetGlobal(const TVMFFIByteArray* name, TVMFFIObjectHandle* out);
MR_DLL int TVMFFIStringFromByteArray(const TVMFFIByteArray* input, TVMFFIAny* out);
MR_DLL int TVMFFIBytesFromByteArray(const TVMFFIByteArray* input, TVMFFIAny* out);

/* ---- environment services used by generated code ------------------------ */
/* *out is a borrowed Function handle, cached in the module. */
MR_DLL int TVMFFIEnvModLookupFromImports(TVMFFIObjectHandle library_ctx, const char* func_name,
                                         TVMFFIObjectHandle* out);
MR_DLL int TVMFFIEnvModRegisterSystemLibSymbol(const char* name, void* symbol);
MR_DLL int TVMFFIEnvModRegisterContextSymbol(const char* name, void* symbol);
MR_DLL int TVMFFIHandleInitOnce(void** handle_addr, int (*init)(void** result));
MR_DLL void* TVMFFIEnvGetStream(int32_t device_type, int32_t device_id);
MR_DLL int TVMFFIEnvSetStream(int32_t device_type, int32_t device_id, void* stream,
                              void** opt_out_original_stream);
MR_DLL int TVMFFIEnvCheckSignals(void);

/* ---- backend services (classic names, unchanged in TVM >= 0.20) --------- */
typedef struct {
  void* sync_handle;
  int32_t num_task;
} TVMParallelGroupEnv;

typedef int (*FTVMParallelLambda)(int task_id, TVMParallelGroupEnv* penv, void* cdata);

/* Returns NULL on failure (with an error raised). Frees must be LIFO per thread. */
MR_DLL void* TVMBackendAllocWorkspace(int device_type, int device_id, uint64_t nbytes,
                                      int dtype_code_hint, int dtype_bits_hint);
MR_DLL int TVMBackendFreeWorkspace(int device_type, int device_id, void* ptr);
/* num_task == 0 means "all workers". Returns the first non-zero task status. */
MR_DLL int TVMBackendParallelLaunch(FTVMParallelLambda flambda, void* cdata, int num_task);
MR_DLL int TVMBackendParallelBarrier(int task_id, TVMParallelGroupEnv* penv);

#ifdef __cplusplus
}
#endif
#endif /* MICRORUNTIME_C_API_H_ */
