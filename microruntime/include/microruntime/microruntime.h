/*
 * The microruntime's own C API (what apps and the Python loader call).
 *
 * Conventions
 * - Every fallible function returns an int status: 0 on success, -1 on
 *   failure. Outputs come last as `out_*` and are written only on success.
 *   The message of the last failure on this thread is mr_last_error(); its
 *   kind ("ValueError", "TypeError", "RuntimeError", ...) is
 *   mr_last_error_kind(). The library never prints and never aborts.
 * - Objects (tensors, functions, modules, strings, shapes, arrays, errors) are
 *   TVMFFIObject* with a strong reference count. A function whose output is an
 *   object hands the caller one new reference ("owned"); release it with
 *   mr_object_release (= TVMFFIObjectDecRef). Object arguments are borrowed:
 *   a callee that keeps one takes its own reference.
 * - TVMFFIAny values follow the safe-call convention of c_api.h: arguments
 *   borrowed, results owned.
 * - Tensor objects are the 24-byte header followed by a DLTensor;
 *   mr_tensor_dl() returns that DLTensor. CPU data is 64-byte aligned.
 */
#ifndef MICRORUNTIME_MICRORUNTIME_H_
#define MICRORUNTIME_MICRORUNTIME_H_

#include "c_api.h"

#ifdef __cplusplus
extern "C" {
#endif

#define MR_VERSION "0.1.0"

/* ---- errors -------------------------------------------------------------- */
/* The kinds of error the runtime itself records. Code that branches on an error
 * compares mr_last_error_kind_id() with these; mr_last_error_kind() is the kind's
 * name, which is what crosses the ABI (kernels and callbacks may record kinds of
 * their own: kMrErrorOther, named by mr_last_error_kind()). */
typedef enum {
  kMrErrorNone = 0, /* nothing recorded since the last mr_error_clear */
  kMrErrorRuntime = 1,
  kMrErrorValue = 2,
  kMrErrorType = 3,
  kMrErrorKey = 4,
  kMrErrorIndex = 5,
  kMrErrorMemory = 6,
  kMrErrorBuffer = 7,
  kMrErrorOther = 8
} mr_error_kind_t;

MR_DLL const char* mr_last_error(void);
MR_DLL const char* mr_last_error_kind(void);
MR_DLL mr_error_kind_t mr_last_error_kind_id(void);
/* Changes with every error recorded on this thread (each one is a new occurrence, even with the
 * same kind and message); bindings use it to tie their own exception to one occurrence. */
MR_DLL uint64_t mr_last_error_serial(void);
/* The code of the error site that raised the last error, in a runtime built with
 * MR_CONFIG_SMALL (which leaves message text out: mr_last_error() is then "E<code>"); a code
 * is the source file's number in src/error_files.h * 10000 + the line. 0 in the normal build
 * and for errors given by their text (kernels, callbacks). */
MR_DLL uint32_t mr_last_error_code(void);
/* Records an error (kind defaults to "RuntimeError" when NULL); returns -1. */
MR_DLL int mr_error_set(const char* kind, const char* message);
MR_DLL void mr_error_clear(void);

/* ---- objects ------------------------------------------------------------- */
MR_DLL void mr_object_retain(TVMFFIObject* obj);
MR_DLL void mr_object_release(TVMFFIObject* obj);
MR_DLL int32_t mr_object_type_index(const TVMFFIObject* obj);
/* Releases the object held by `value` (if any) and sets it to None. */
MR_DLL void mr_any_clear(TVMFFIAny* value);

/* Str (65) / Bytes (66): owned copy of `size` bytes (NUL-terminated). */
MR_DLL int mr_str_create(const char* data, size_t size, TVMFFIObject** out_str);
MR_DLL int mr_bytes_create(const char* data, size_t size, TVMFFIObject** out_bytes);
/* Borrowed view of a Str or Bytes object's contents. */
MR_DLL const TVMFFIByteArray* mr_bytes_view(const TVMFFIObject* str_or_bytes);
/* Shape (69). */
MR_DLL int mr_shape_create(const int64_t* dims, size_t ndim, TVMFFIObject** out_shape);
MR_DLL const TVMFFIShapeCell* mr_shape_view(const TVMFFIObject* shape);
/* Array (71) of Any: items are copied with a new reference each. */
MR_DLL int mr_array_create(const TVMFFIAny* items, int64_t size, TVMFFIObject** out_array);
MR_DLL const TVMFFISeqCell* mr_array_view(const TVMFFIObject* array);
/* Map (72): pairs keys[i] -> values[i], copied with new references; a key given again
 * keeps its first place and takes the later value. */
MR_DLL int mr_map_create(const TVMFFIAny* keys, const TVMFFIAny* values, int64_t size,
                         TVMFFIObject** out_map);
/* Borrowed view of a map's pairs: 2 * *out_size values, key then value; NULL if not a Map. */
MR_DLL const TVMFFIAny* mr_map_items(const TVMFFIObject* map, int64_t* out_size);
/* The index of the pair whose key is `key`, or -1. */
MR_DLL int64_t mr_map_find(const TVMFFIObject* map, const TVMFFIAny* key);
/* The handle an OpaquePyObject (74) holds; NULL for any other object. */
MR_DLL void* mr_opaque_handle(const TVMFFIObject* obj);

/* ---- data types ---------------------------------------------------------- */
/* Bytes of one element (lanes included), rounded up to whole bytes. */
MR_DLL size_t mr_dtype_bytes(DLDataType dtype);
/* Parses "float32", "int8x4", "bool", "handle", "bfloat16", "uint1" ... */
MR_DLL int mr_dtype_parse(const char* text, DLDataType* out_dtype);
/* Writes the canonical name ("float32x4") into buf. */
MR_DLL int mr_dtype_format(DLDataType dtype, char* buf, size_t buf_size);

/* ---- devices ------------------------------------------------------------- */
typedef enum {
  kMrDevExist = 0,
  kMrDevMaxThreadsPerBlock = 1,
  kMrDevWarpSize = 2,
  kMrDevMaxSharedMemoryPerBlock = 3,
  kMrDevComputeVersion = 4,
  kMrDevDeviceName = 5,
  kMrDevMaxClockRate = 6,
  kMrDevMultiProcessorCount = 7,
  kMrDevMaxThreadDimensions = 8,
  kMrDevMaxRegistersPerBlock = 9,
  kMrDevGcnArch = 10,
  kMrDevApiVersion = 11,
  kMrDevDriverVersion = 12,
  kMrDevL2CacheSizeBytes = 13,
  kMrDevTotalGlobalMemory = 14,
  kMrDevAvailableGlobalMemory = 15
} mr_device_attr_t;

/* The table a device backend provides. CPU is built in; CUDA, OpenCL and
 * Vulkan register theirs with mr_device_api_register. */
typedef struct mr_device_api {
  const char* name; /* "cpu", "cuda", ... */
  /* Sets *out to the attribute (None when the device has no such property). */
  int (*get_attr)(DLDevice dev, mr_device_attr_t attr, TVMFFIAny* out);
  int (*alloc_data)(DLDevice dev, size_t nbytes, size_t alignment, DLDataType hint,
                    void** out_ptr);
  int (*free_data)(DLDevice dev, void* ptr);
  /* Copies between tensors of equal shape/dtype; at least one side on `dev`. */
  int (*copy_data)(const DLTensor* from, DLTensor* to, DLDevice dev, void* stream);
  int (*stream_create)(DLDevice dev, void** out_stream);
  int (*stream_free)(DLDevice dev, void* stream);
  int (*stream_sync)(DLDevice dev, void* stream);
  void* (*alloc_workspace)(DLDevice dev, size_t nbytes, DLDataType hint);
  int (*free_workspace)(DLDevice dev, void* ptr);
} mr_device_api_t;

MR_DLL int mr_device_api_register(int32_t device_type, const mr_device_api_t* api);
/* NULL (with an error set) when no backend is available for the device type. */
MR_DLL const mr_device_api_t* mr_device_api_get(int32_t device_type);
MR_DLL int mr_device_get_attr(DLDevice dev, mr_device_attr_t attr, TVMFFIAny* out_value);
MR_DLL int mr_device_stream_create(DLDevice dev, void** out_stream);
MR_DLL int mr_device_stream_free(DLDevice dev, void* stream);
MR_DLL int mr_device_stream_sync(DLDevice dev, void* stream);
MR_DLL int mr_device_set_stream(DLDevice dev, void* stream);

/* ---- tensors ------------------------------------------------------------- */
MR_DLL int mr_tensor_create(int32_t ndim, const int64_t* shape, DLDataType dtype, DLDevice dev,
                            TVMFFIObject** out_tensor);
/* A view sharing `base`'s memory (base is retained), with a new shape/dtype
 * starting `byte_offset` bytes into it; it must fit inside base. */
MR_DLL int mr_tensor_view(TVMFFIObject* base, int32_t ndim, const int64_t* shape,
                          DLDataType dtype, uint64_t byte_offset, TVMFFIObject** out_tensor);
MR_DLL DLTensor* mr_tensor_dl(TVMFFIObject* tensor);
/* Bytes of a compact tensor's data. */
MR_DLL size_t mr_tensor_nbytes(const DLTensor* tensor);
MR_DLL int mr_tensor_copy(const DLTensor* from, DLTensor* to, void* stream);
MR_DLL int mr_tensor_copy_from_bytes(DLTensor* to, const void* data, size_t nbytes);
MR_DLL int mr_tensor_copy_to_bytes(const DLTensor* from, void* data, size_t nbytes);
/* DLPack import: the new tensor owns `managed` and calls its deleter when freed; on
 * failure (a read-only versioned tensor is refused: BufferError) the caller still owns it. */
MR_DLL int mr_tensor_from_dlpack(DLManagedTensor* managed, TVMFFIObject** out_tensor);
MR_DLL int mr_tensor_from_dlpack_versioned(DLManagedTensorVersioned* managed,
                                           TVMFFIObject** out_tensor);
/* DLPack export: the managed tensor holds a reference to `tensor` until its deleter runs. */
MR_DLL int mr_tensor_to_dlpack(TVMFFIObject* tensor, DLManagedTensor** out_managed);
MR_DLL int mr_tensor_to_dlpack_versioned(TVMFFIObject* tensor,
                                         DLManagedTensorVersioned** out_managed);

/* ---- functions and registry ---------------------------------------------- */
/* Same as TVMFFIFunctionCall; `result` must be None on entry and is owned after. */
MR_DLL int mr_function_call(TVMFFIObject* func, TVMFFIAny* args, int32_t num_args,
                            TVMFFIAny* result);
/* Wraps a plain safe-call symbol (no closure, handle NULL) as a Function. */
MR_DLL int mr_function_from_symbol(TVMFFISafeCallType symbol, TVMFFIObject** out_func);
MR_DLL int mr_registry_set(const char* name, TVMFFIObject* func, int override);
/* Errors with a message naming `name` when it is not registered. */
MR_DLL int mr_registry_get(const char* name, TVMFFIObject** out_func);
/* Array of Str with every registered name. */
MR_DLL int mr_registry_list(TVMFFIObject** out_names);
MR_DLL int mr_registry_remove(const char* name);

/* ---- modules ------------------------------------------------------------- */
/* Loads a shared library (dlopen). Fails cleanly in builds without dlopen. */
MR_DLL int mr_module_load(const char* path, TVMFFIObject** out_module);
/* Process-wide system library for `prefix` (a singleton per prefix). */
MR_DLL int mr_module_system_lib(const char* prefix, TVMFFIObject** out_module);
/* *out_func is NULL (status 0) when the module has no such function. */
MR_DLL int mr_module_get_function(TVMFFIObject* module, const char* name, int query_imports,
                                  TVMFFIObject** out_func);
MR_DLL int mr_module_import(TVMFFIObject* module, TVMFFIObject* imported);
/* Borrowed views. */
MR_DLL const char* mr_module_type_key(TVMFFIObject* module);
MR_DLL int64_t mr_module_num_imports(TVMFFIObject* module);
MR_DLL TVMFFIObject* mr_module_import_at(TVMFFIObject* module, int64_t index);
MR_DLL int mr_module_implements(TVMFFIObject* module, const char* name, int query_imports);
/* Name of the function __tvm_ffi_main forwards to is not recoverable from a
 * .so; the entry function is get_function("main"). */

/* A module of another kind, whose functions come from `get_function`
 * (*out_func a new reference, or NULL when it has no such function). `deleter`
 * (may be NULL) releases `self` when the module is freed. Functions returned
 * by get_function are not cached by the module. */
typedef int (*mr_module_get_function_t)(void* self, const char* name, TVMFFIObject** out_func);
MR_DLL int mr_module_create(const char* type_key, void* self,
                            mr_module_get_function_t get_function, void (*deleter)(void* self),
                            TVMFFIObject** out_module);

/* Kinds of module other than libraries ("GraphExecutorFactory", device code, ...)
 * are created from a payload by a loader registered under their kind: the one table the
 * library blob's loader reads. The same call makes the loader TVM's global function
 * ffi.Module.load_from_bytes.<kind>; registering the same loader again does nothing, another
 * one replaces it. The runtime's own register theirs through mr_graph_register
 * (graph_executor.h), mr_vm_register (vm.h) and mr_gpu_register (gpu.h). */
typedef int (*mr_module_loader_t)(const char* data, size_t size, TVMFFIObject** out_module);
MR_DLL int mr_module_loader_register(const char* kind, mr_module_loader_t loader);

/* ---- params (save_param_dict format) ------------------------------------- */
/* Serialises names[i] -> tensors[i] (any device) into a new Bytes object. */
MR_DLL int mr_params_save(const char* const* names, TVMFFIObject* const* tensors, int64_t count,
                          TVMFFIObject** out_bytes);
/* Parses a blob; *out_names is an Array of Str, *out_tensors an Array of CPU
 * Tensors in the same order. Every field is validated. */
MR_DLL int mr_params_load(const void* data, size_t size, TVMFFIObject** out_names,
                          TVMFFIObject** out_tensors);

/* ---- threads and timing -------------------------------------------------- */
MR_DLL int mr_num_threads(void);
/* Wraps `func` into a Function that takes the same arguments and returns Bytes
 * holding `repeat` float64 seconds-per-call (TVM time_evaluator semantics).
 * `preproc` may be NULL. */
MR_DLL int mr_time_evaluator(TVMFFIObject* func, DLDevice dev, int number, int repeat,
                             int min_repeat_ms, int limit_zero_time_iterations,
                             int cooldown_interval_ms, int repeats_to_cooldown,
                             TVMFFIObject* preproc, TVMFFIObject** out_timer);

#ifdef __cplusplus
}
#endif
#endif /* MICRORUNTIME_MICRORUNTIME_H_ */
