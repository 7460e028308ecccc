/* Declarations shared between the runtime's source files (not installed). */
#ifndef MR_INTERNAL_H_
#define MR_INTERNAL_H_

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include "config.h"
#include "microruntime/microruntime.h"
#include "platform.h"

/* ---- error.c ---- */
/* Error sites. Each place that raises an error does so through one of these macros (or a
 * file's own helper built on them). The normal build formats the message with mr_error_setf's
 * arguments. Under MR_CONFIG_SMALL the message text and its formatting are left out of the
 * binary: the site records its kind and a code naming it, MR_ERROR_CODE, which
 * mr_last_error_code() returns and mr_last_error() reads as "E<code>". The checks and the
 * statuses are the same in both builds. The small build does not evaluate the message's
 * arguments (they are still type-checked), so they must have no side effects. */
#ifdef MR_CONFIG_SMALL
#include "error_files.h"
/* The site's code: MR_ERROR_FILE (the number error_files.h gives the source file, which
 * defines MR_ERROR_FILE to it) * 10000 + its line. */
#define MR_ERROR_CODE ((uint32_t)MR_ERROR_FILE * 10000u + (uint32_t)__LINE__)
/* Type-checks a message's arguments without evaluating them. */
#define MR_MESSAGE_UNUSED(...) ((void)sizeof(mr_error_message_unused(__VA_ARGS__)))
#define MR_RAISE(kind, ...) (MR_MESSAGE_UNUSED(__VA_ARGS__), mr_error_code((kind), MR_ERROR_CODE))
#define MR_VALUE_ERROR(...) MR_RAISE(kMrErrorValue, __VA_ARGS__)
#define MR_OOM(what) (MR_MESSAGE_UNUSED(what), mr_error_code(kMrErrorMemory, MR_ERROR_CODE))
/* Never defined or called: only named in sizeof. */
int mr_error_message_unused(const char* fmt, ...) MR_PRINTF_LIKE(1, 2);
#else
#define MR_RAISE(kind, ...) mr_error_setf((kind), __VA_ARGS__)
#define MR_VALUE_ERROR(...) mr_value_error(__VA_ARGS__)
#define MR_OOM(what) mr_error_oom(what)
#endif
/* Text made only for a message: MR_MESSAGE_TEXT(buf, fmt, ...) formats into the array `buf`
 * and is `buf` in the normal build; in the small build it formats nothing and is "". */
#ifdef MR_CONFIG_SMALL
#define MR_MESSAGE_TEXT(buf, ...) (MR_MESSAGE_UNUSED(__VA_ARGS__), (void)(buf), "")
#else
#define MR_MESSAGE_TEXT(buf, ...) (snprintf((buf), sizeof(buf), __VA_ARGS__), (const char*)(buf))
#endif
/* Records an error of `kind` (one of the enum's, not kMrErrorOther) with site code `code`, the
 * message "E<code>"; returns -1. */
int mr_error_code(mr_error_kind_t kind, uint32_t code);
/* The same for a kind given by name ("GraphExecutorError"). */
int mr_error_code_named(const char* kind, uint32_t code);
#ifndef MR_CONFIG_SMALL
int mr_error_setf(mr_error_kind_t kind, const char* fmt, ...) MR_PRINTF_LIKE(2, 3);
int mr_error_setv(mr_error_kind_t kind, const char* fmt, va_list ap);
/* The same with the message "<context>: <formatted>". */
int mr_error_setv_in(mr_error_kind_t kind, const char* context, const char* fmt, va_list ap);
/* mr_error_setf(kMrErrorValue, ...), the most common kind. */
int mr_value_error(const char* fmt, ...) MR_PRINTF_LIKE(1, 2);
int mr_error_oom(const char* what);
#endif

/* ---- object.c ---- */
/* Fresh header: one strong and one (implicit) weak reference. */
void mr_object_init(TVMFFIObject* obj, int32_t type_index, void (*deleter)(void*, int));
/* A zeroed object of `size` bytes with a fresh header; NULL (MemoryError naming
 * `what`) when out of memory. deleter NULL: mr_object_free_deleter. */
void* mr_object_alloc(size_t size, int32_t type_index, void (*deleter)(void*, int),
                      const char* what);
/* Frees the object when the last weak reference goes (objects owning nothing). */
void mr_object_free_deleter(void* self, int flags);
/* Copy of s[0..n) with a terminating NUL, or NULL. */
char* mr_strndup(const char* s, size_t n);
/* a, b and c (NULL: none) one after the other into buf of cap (> 0) bytes, NUL-terminated;
 * -1 when they do not fit (buf then holds what did). Records no error. */
int mr_concat(char* buf, size_t cap, const char* a, const char* b, const char* c);
/* Makes room for one more element in *(T**)items holding count of *cap; doubles
 * the capacity (first 8). MemoryError naming `what` on failure. */
int mr_grow(void* items, size_t* cap, size_t count, size_t elem_size, const char* what);
/* Owned copy of a value (objects get a new reference; raw strings become Str). */
int mr_any_copy(const TVMFFIAny* in, TVMFFIAny* out);
/* Borrowed string view of a RawStr, SmallStr, ByteArrayPtr, Str or Bytes value. */
int mr_any_get_str(const TVMFFIAny* value, const char** out_data, size_t* out_size);
void mr_any_set_object(TVMFFIAny* out, TVMFFIObject* obj);
/* What a type index stands for, for messages: "None", "int", "Tensor", "Function", ...
 * Not defined in the small build, whose messages do not evaluate their arguments. */
const char* mr_type_index_name(int32_t type_index);

/* ---- checked arithmetic ---- */
static inline int mr_mul_overflow_u64(uint64_t a, uint64_t b, uint64_t* out) {
  if (a != 0 && b > UINT64_MAX / a) return 1;
  *out = a * b;
  return 0;
}
static inline int mr_add_overflow_u64(uint64_t a, uint64_t b, uint64_t* out) {
  if (b > UINT64_MAX - a) return 1;
  *out = a + b;
  return 0;
}

/* ---- reader.c: bounds-checked reading of params files and library blobs ---- */
typedef struct {
  const unsigned char* p;
  uint64_t size, pos;
  uint64_t at;      /* offset of the last integer read */
  const char* what; /* names the data in errors: "params", "lib.so: library blob" */
} mr_reader_t;
/* ValueError "<what>: <message>" (an error site, see MR_RAISE). */
int mr_reader_fail(const mr_reader_t* r, const char* fmt, ...) MR_PRINTF_LIKE(2, 3);
/* ValueError "<what>: <field> <value> at offset <at> <problem>" about the last integer read. */
int mr_reader_bad(const mr_reader_t* r, const char* field, uint64_t value, const char* problem);
#ifdef MR_CONFIG_SMALL
#define MR_READER_FAIL(r, ...) ((void)sizeof(r), MR_VALUE_ERROR(__VA_ARGS__))
#define MR_READER_BAD(r, field, value, problem) \
  ((void)sizeof(r), (void)sizeof(value), MR_VALUE_ERROR("%s%s", field, problem))
#else
#define MR_READER_FAIL(r, ...) mr_reader_fail((r), __VA_ARGS__)
#define MR_READER_BAD(r, field, value, problem) mr_reader_bad((r), (field), (value), (problem))
#endif
/* Fails unless n more bytes are left. */
int mr_reader_need(const mr_reader_t* r, uint64_t n, const char* field);
/* Fails unless all the data was read. */
int mr_reader_end(const mr_reader_t* r);
/* An unsigned little-endian integer of nbytes (<= 8). */
int mr_read_le(mr_reader_t* r, int nbytes, const char* field, uint64_t* out);
/* A u64 length, then that many bytes; *out points into the data. */
int mr_read_bytes(mr_reader_t* r, const char* field, const char** out, uint64_t* out_len);

/* ---- symtab.c: name -> pointer tables (module loaders, context symbols, system library) ---- */
typedef struct {
  char* name;
  void* ptr;
} mr_symbol_t;
typedef struct {
  mr_mutex_t mutex; /* guards the items */
  mr_symbol_t* items;
  size_t count, cap, max;
  const char* what; /* names the entries in errors: "module loaders" */
} mr_symtab_t;
#define MR_SYMTAB_INIT(max, what) {MR_MUTEX_INIT, NULL, 0, 0, (max), (what)}
/* Sets name (copied; NULL or MR_MAX_NAME bytes or more is a ValueError) to ptr. */
int mr_symtab_set(mr_symtab_t* t, const char* name, void* ptr);
/* The pointer set for name, or NULL. */
void* mr_symtab_get(mr_symtab_t* t, const char* name);

/* ---- workspace.c ---- */
/* Memory of the caller's that serves a thread's CPU workspaces (LIFO) in place of the heap:
 * alloc returns NULL with an error set when it is full; free fails for a pointer it did not
 * give out last. */
typedef struct mr_ws_region mr_ws_region_t;
struct mr_ws_region {
  void* (*alloc)(mr_ws_region_t* self, uint64_t nbytes);
  int (*free)(mr_ws_region_t* self, void* ptr);
};
/* From now on `region` serves this thread's CPU workspaces (NULL: the heap again). Fails while
 * heap workspaces are in use. */
int mr_workspace_set_region(mr_ws_region_t* region);
/* This thread's workspace region, or NULL. */
mr_ws_region_t* mr_workspace_region(void);

/* ---- device.c / device_cpu.c ---- */
const mr_device_api_t* mr_device_cpu_api(void);
const char* mr_device_type_name(int32_t device_type);

/* ---- ndarray.c ---- */
/* Elements of a shape, or -1 on overflow / negative dims (records no error). */
int mr_shape_numel(int32_t ndim, const int64_t* shape, uint64_t* out_numel);
/* Bytes of a compact tensor of this shape and dtype: the one size computation from shapes.
 * Fails with a ValueError (prefixed "<context>: " when context is not NULL) on a bad ndim, a
 * negative dimension, or a size that does not fit in int64 and size_t: "tensor of shape
 * (576460752303423488, 10) float32 is too large (size overflows)". */
int mr_tensor_nbytes_checked(int32_t ndim, const int64_t* shape, DLDataType dtype,
                             const char* context, uint64_t* out_nbytes);
int mr_tensor_is_compact(const DLTensor* t);
/* A tensor over memory `owner` holds (dl is copied; its shape and strides must
 * outlive the tensor); release(owner) runs when the tensor is freed. On failure
 * the caller still owns `owner`. */
int mr_tensor_wrap(const DLTensor* dl, void* owner, void (*release)(void* owner),
                   TVMFFIObject** out_tensor);

/* ---- module.c / module_library.c / module_syslib.c ---- */
typedef void* (*mr_symbol_lookup_t)(void* handle, const char* symbol);
/* The size of the object at a symbol's address, 0 when unknown. */
typedef uint64_t (*mr_symbol_size_t)(const void* addr);
/* Creates a library module over a symbol table and finishes loading it: fills
 * context slots (when fill_context_slots), builds imports from the library blob,
 * and writes the library module into the library_ctx slot. *out_root is the
 * root of the import tree (the library itself when there is no blob). The blob
 * is read within the size registered as __tvm_ffi__library_bin_nbytes (a u64), else
 * the size symbol_size gives it; without one (symbol_size NULL,
 * or a size of 0), within its declared size, at most MR_MAX_LIBRARY_BLOB. */
int mr_module_library_create(void* handle, mr_symbol_lookup_t lookup,
                             mr_symbol_size_t symbol_size, const char* prefix,
                             int fill_context_slots, const char* origin,
                             TVMFFIObject** out_root);
/* Builds the import tree of a library blob of `size` bytes (its real extent) whose
 * "_lib" entries stand for `lib`; *out_root is module 0. */
int mr_module_blob_load(TVMFFIObject* lib, const unsigned char* blob, uint64_t size,
                        const char* origin, TVMFFIObject** out_root);

/* ---- module_loader.c ---- */
/* The loader registered for `kind`, or NULL. */
mr_module_loader_t mr_module_loader_find(const char* kind);

/* Library-module symbol lookup honouring the prefix (prefixed name first). */
void* mr_module_library_symbol(TVMFFIObject* module, const char* symbol);
int mr_module_library_new(void* handle, mr_symbol_lookup_t lookup, const char* prefix,
                          TVMFFIObject** out_module);
void* mr_syslib_lookup(void* handle, const char* symbol);
#ifndef MR_NO_DLOPEN
/* The library context slot that a system library loaded as a shared object registered
 * (its `__tvm_ffi__library_ctx` is internal: dlsym cannot see it), found as the registered
 * slot in the same loaded object as `anchor` (one of that library's symbols); or NULL. */
void** mr_syslib_context_slot_near(const void* anchor);
#endif

/* ---- elf_check.c (dlopen builds only) ---- */
/* Fails (RuntimeError naming the path) when the native ELF file at path has headers
 * or segments that do not fit in it; other files are left to the dynamic loader. */
int mr_elf_check_file(const char* path);
/* The same checks on a file image in memory. */
int mr_elf_check_image(const void* data, size_t size, const char* origin);

/* ---- crc32c.c ---- */
/* CRC-32C of data[0..size) continuing crc (0 to start), as zlib's crc32 chains. */
uint32_t mr_crc32c(uint32_t crc, const void* data, size_t size);
/* 0 when checksums are not verified (MR_NO_CHECKSUM, or MR_SKIP_CHECKSUM=1 set). */
int mr_checksum_verify_enabled(void);

/* ---- function.c ---- */
int mr_function_create_closure(void* self, TVMFFISafeCallType call, void (*deleter)(void*),
                               TVMFFIObject** out_func);
/* A Function calling `symbol` with a NULL handle, holding a strong reference
 * to `owner` (may be NULL) until the function is freed. */
int mr_function_from_owned_symbol(TVMFFISafeCallType symbol, TVMFFIObject* owner,
                                  TVMFFIObject** out_func);

/* ---- registry.c / builtins.c ---- */
/* Registers the runtime's own global functions once. */
void mr_registry_ensure_builtins(void);
typedef struct {
  const char* name;
  TVMFFISafeCallType call;
} mr_builtin_t;
/* The built-in global functions. */
const mr_builtin_t* mr_builtins(size_t* out_count);
/* Registers each function of `table` as a global function (replacing one of the same name;
 * none may have the name of one of the runtime's own, which go in at the first use). */
int mr_registry_set_table(const mr_builtin_t* table, size_t count);

#endif /* MR_INTERNAL_H_ */
