"""Builds the cffi extension `microruntime._ffi`: the whole C runtime compiled in (API mode).

setup.py uses `ffibuilder` (cffi_modules). `python microruntime/build_ffi.py --inplace-asan`
builds a second extension, `microruntime._ffi_asan`, with AddressSanitizer and UBSan, next to
the package; `MR_FFI_VARIANT=asan` makes `import microruntime` load that one instead.
"""
import glob
import os
import sys

from cffi import FFI

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# The declarations of c_api.h / microruntime.h that the Python package calls, written out
# (cffi cannot parse the headers themselves: MR_DLL, and C11-style anonymous unions).
CDEF = r"""
typedef struct { int32_t device_type; int32_t device_id; } DLDevice;
typedef struct { uint8_t code; uint8_t bits; uint16_t lanes; } DLDataType;
typedef struct {
  void* data; DLDevice device; int32_t ndim; DLDataType dtype;
  int64_t* shape; int64_t* strides; uint64_t byte_offset;
} DLTensor;
typedef struct DLManagedTensor {
  DLTensor dl_tensor; void* manager_ctx; void (*deleter)(struct DLManagedTensor* self);
} DLManagedTensor;
typedef struct { uint32_t major; uint32_t minor; } DLPackVersion;
typedef struct DLManagedTensorVersioned {
  DLPackVersion version; void* manager_ctx;
  void (*deleter)(struct DLManagedTensorVersioned* self);
  uint64_t flags; DLTensor dl_tensor;
} DLManagedTensorVersioned;

typedef struct TVMFFIObject {
  uint64_t combined_ref_count; int32_t type_index; uint32_t __padding;
  union { void (*deleter)(void* self, int flags); int64_t __ensure_align; };
} TVMFFIObject;
typedef void* TVMFFIObjectHandle;
typedef struct TVMFFIAny {
  int32_t type_index;
  union { uint32_t zero_padding; uint32_t small_str_len; };
  union {
    int64_t v_int64; double v_float64; void* v_ptr; const char* v_c_str; TVMFFIObject* v_obj;
    DLDataType v_dtype; DLDevice v_device; char v_bytes[8]; uint64_t v_uint64;
  };
} TVMFFIAny;
typedef struct { const char* data; size_t size; } TVMFFIByteArray;
typedef struct { const int64_t* data; size_t size; } TVMFFIShapeCell;
typedef int (*TVMFFISafeCallType)(void* handle, const TVMFFIAny* args, int32_t num_args,
                                  TVMFFIAny* result);
typedef struct {
  TVMFFIByteArray kind; TVMFFIByteArray message; TVMFFIByteArray backtrace;
  void (*update_backtrace)(TVMFFIObjectHandle self, const TVMFFIByteArray* backtrace,
                           int32_t mode);
  void* cause_chain; void* extra_context;
} TVMFFIErrorCell;
typedef struct { void* data; int64_t size; int64_t capacity; void (*data_deleter)(void*); }
  TVMFFISeqCell;

int TVMFFIObjectIncRef(TVMFFIObjectHandle obj);
int TVMFFIObjectDecRef(TVMFFIObjectHandle obj);
void TVMFFIErrorSetRaisedFromCStr(const char* kind, const char* message);
void TVMFFIErrorMoveFromRaised(TVMFFIObjectHandle* out);
int TVMFFIFunctionCreate(void* self, TVMFFISafeCallType safe_call, void (*deleter)(void* self),
                         TVMFFIObjectHandle* out);
int TVMFFIFunctionCall(TVMFFIObjectHandle func, TVMFFIAny* args, int32_t num_args,
                       TVMFFIAny* result);

const char* mr_last_error(void);
const char* mr_last_error_kind(void);
uint64_t mr_last_error_serial(void);
void mr_error_clear(void);
void mr_object_retain(TVMFFIObject* obj);
void mr_object_release(TVMFFIObject* obj);
int32_t mr_object_type_index(const TVMFFIObject* obj);
void mr_any_clear(TVMFFIAny* value);
int mr_str_create(const char* data, size_t size, TVMFFIObject** out_str);
int mr_bytes_create(const char* data, size_t size, TVMFFIObject** out_bytes);
const TVMFFIByteArray* mr_bytes_view(const TVMFFIObject* str_or_bytes);
int mr_shape_create(const int64_t* dims, size_t ndim, TVMFFIObject** out_shape);
const TVMFFIShapeCell* mr_shape_view(const TVMFFIObject* shape);
int mr_array_create(const TVMFFIAny* items, int64_t size, TVMFFIObject** out_array);
const TVMFFISeqCell* mr_array_view(const TVMFFIObject* array);
int mr_map_create(const TVMFFIAny* keys, const TVMFFIAny* values, int64_t size,
                  TVMFFIObject** out_map);
const TVMFFIAny* mr_map_items(const TVMFFIObject* map, int64_t* out_size);
int64_t mr_map_find(const TVMFFIObject* map, const TVMFFIAny* key);
void* mr_opaque_handle(const TVMFFIObject* obj);
int TVMFFIObjectCreateOpaque(void* handle, int32_t type_index, void (*deleter)(void* handle),
                             TVMFFIObjectHandle* out);

size_t mr_dtype_bytes(DLDataType dtype);
int mr_dtype_parse(const char* text, DLDataType* out_dtype);
int mr_dtype_format(DLDataType dtype, char* buf, size_t buf_size);

typedef int... mr_device_attr_t;
typedef struct mr_device_api { const char* name; ...; } mr_device_api_t;
const mr_device_api_t* mr_device_api_get(int32_t device_type);
int mr_device_get_attr(DLDevice dev, mr_device_attr_t attr, TVMFFIAny* out_value);
int mr_device_stream_create(DLDevice dev, void** out_stream);
int mr_device_stream_free(DLDevice dev, void* stream);
int mr_device_stream_sync(DLDevice dev, void* stream);
int mr_device_set_stream(DLDevice dev, void* stream);

int mr_tensor_create(int32_t ndim, const int64_t* shape, DLDataType dtype, DLDevice dev,
                     TVMFFIObject** out_tensor);
DLTensor* mr_tensor_dl(TVMFFIObject* tensor);
size_t mr_tensor_nbytes(const DLTensor* tensor);
int mr_tensor_copy(const DLTensor* from, DLTensor* to, void* stream);
int mr_tensor_copy_from_bytes(DLTensor* to, const void* data, size_t nbytes);
int mr_tensor_copy_to_bytes(const DLTensor* from, void* data, size_t nbytes);
int mr_tensor_from_dlpack(DLManagedTensor* managed, TVMFFIObject** out_tensor);
int mr_tensor_from_dlpack_versioned(DLManagedTensorVersioned* managed,
                                    TVMFFIObject** out_tensor);
int mr_tensor_to_dlpack(TVMFFIObject* tensor, DLManagedTensor** out_managed);
int mr_tensor_to_dlpack_versioned(TVMFFIObject* tensor, DLManagedTensorVersioned** out_managed);

int mr_function_call(TVMFFIObject* func, TVMFFIAny* args, int32_t num_args, TVMFFIAny* result);
int mr_registry_set(const char* name, TVMFFIObject* func, int override);
int mr_registry_get(const char* name, TVMFFIObject** out_func);
int mr_registry_list(TVMFFIObject** out_names);
int mr_registry_remove(const char* name);

int mr_module_load(const char* path, TVMFFIObject** out_module);
int mr_module_system_lib(const char* prefix, TVMFFIObject** out_module);
int mr_module_get_function(TVMFFIObject* module, const char* name, int query_imports,
                           TVMFFIObject** out_func);
int mr_module_import(TVMFFIObject* module, TVMFFIObject* imported);
const char* mr_module_type_key(TVMFFIObject* module);
int64_t mr_module_num_imports(TVMFFIObject* module);
TVMFFIObject* mr_module_import_at(TVMFFIObject* module, int64_t index);
int mr_module_implements(TVMFFIObject* module, const char* name, int query_imports);

int mr_params_save(const char* const* names, TVMFFIObject* const* tensors, int64_t count,
                   TVMFFIObject** out_bytes);
int mr_params_load(const void* data, size_t size, TVMFFIObject** out_names,
                   TVMFFIObject** out_tensors);

int mr_num_threads(void);
int mr_time_evaluator(TVMFFIObject* func, DLDevice dev, int number, int repeat,
                      int min_repeat_ms, int limit_zero_time_iterations,
                      int cooldown_interval_ms, int repeats_to_cooldown,
                      TVMFFIObject* preproc, TVMFFIObject** out_timer);

/* The runtime's optional parts, each registered by its own call (microruntime/__init__.py). */
int mr_graph_executor_register(void);
int mr_vm_register_extras(void);
int mr_gpu_register(void);

/* Defined in the preamble below: the PyCapsule destructor for DLPack capsules, and the
   fast call path of PackedFunc (see microruntime/fastcall.py). */
void* mr_py_dlpack_capsule_destructor(void);
void* mr_py_fastcall_method_def(void);
int mr_py_fastcall_init(uintptr_t ndarray_type, uintptr_t addr_descr, uintptr_t faddr_descr,
                        uintptr_t slow_call, uintptr_t take_result, uintptr_t raise_error);

/* Python callables as C Functions (see microruntime/convert.py). */
extern "Python" int _mr_py_safe_call(void* handle, const TVMFFIAny* args, int32_t num_args,
                                     TVMFFIAny* result);
extern "Python" void _mr_py_func_deleter(void* self);
extern "Python" void _mr_py_value_deleter(void* handle);
"""

with open(os.path.join(ROOT, "microruntime", "py_fastcall.c")) as _f:
    FASTCALL_C = _f.read()

PREAMBLE = r"""
#include "microruntime/microruntime.h"
#include "microruntime/gpu.h"
#include "microruntime/graph_executor.h"
#include "microruntime/vm.h"

/* Frees a DLPack capsule nobody consumed (the consumer renames it to "used_..."). */
static void mr_py_dlpack_capsule_destructor_impl(PyObject* capsule) {
  if (PyCapsule_IsValid(capsule, "dltensor")) {
    DLManagedTensor* m = (DLManagedTensor*)PyCapsule_GetPointer(capsule, "dltensor");
    if (m != NULL && m->deleter != NULL) m->deleter(m);
  } else if (PyCapsule_IsValid(capsule, "dltensor_versioned")) {
    DLManagedTensorVersioned* m =
        (DLManagedTensorVersioned*)PyCapsule_GetPointer(capsule, "dltensor_versioned");
    if (m != NULL && m->deleter != NULL) m->deleter(m);
  }
}

static void* mr_py_dlpack_capsule_destructor(void) {
  return (void*)&mr_py_dlpack_capsule_destructor_impl;
}
""" + FASTCALL_C

C_DEFINES = ["-std=c99", "-D_POSIX_C_SOURCE=200809L", "-D_DEFAULT_SOURCE"]
SAN_FLAGS = ["-fsanitize=address,undefined", "-fno-omit-frame-pointer", "-fno-sanitize-recover=all"]


def make_builder(module_name="microruntime._ffi", sanitize=False, absolute=False):
    """An FFI builder for the extension `module_name`; `sanitize` adds ASan+UBSan."""
    base = ROOT if absolute else ""
    sources = sorted(glob.glob(os.path.join(ROOT, "microruntime", "src", "*.c")))
    for sub in ("graph", "vm", "device"):
        sources += sorted(glob.glob(os.path.join(ROOT, "microruntime", "src", sub, "*.c")))
    sources = [os.path.join(base, os.path.relpath(s, ROOT)) for s in sources]
    opt = ["-O1", "-g"] + SAN_FLAGS if sanitize else ["-O2"]
    builder = FFI()
    builder.cdef(CDEF)
    builder.set_source(
        module_name,
        PREAMBLE,
        sources=sources,
        include_dirs=[os.path.join(base, "microruntime", "include")],
        extra_compile_args=C_DEFINES + opt,
        # Internal calls bind to our own definitions even if another TVM-FFI runtime was
        # loaded RTLD_GLOBAL first.
        extra_link_args=["-Wl,-Bsymbolic"] + (SAN_FLAGS if sanitize else []),
        libraries=["dl", "pthread", "m"],
        # The fast call path reads __slots__ through member descriptors (full C API). cffi's
        # header selects the limited API unless _CFFI_NO_LIMITED_API is defined; its setuptools
        # hook defines it for py_limited_api=False, ffi.compile() (the ASan build) does not.
        py_limited_api=False,
        define_macros=[("_CFFI_NO_LIMITED_API", None)],
    )
    return builder


ffibuilder = make_builder()


def build_inplace(module_name, sanitize):
    """Compiles `module_name` into the source tree (next to this file); returns its path."""
    builder = make_builder(module_name, sanitize=sanitize, absolute=True)
    tmpdir = os.path.join(ROOT, "build", "ffi_" + module_name.rsplit(".", 1)[-1])
    os.makedirs(tmpdir, exist_ok=True)
    built = builder.compile(tmpdir=tmpdir, verbose=False)
    target = os.path.join(ROOT, "microruntime", os.path.basename(built))
    os.replace(built, target)
    return target


def main(argv):
    # The plain extension is built by `pip install -e .` (an in-place copy here could shadow
    # that one: Python prefers the .cpython-3XX suffix over .abi3).
    if "--inplace-asan" not in argv:
        print("usage: python microruntime/build_ffi.py --inplace-asan")
        return 2
    print(build_inplace("microruntime._ffi_asan", sanitize=True))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
