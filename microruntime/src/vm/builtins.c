/* The vm.builtin.* global functions executables call, with the names, arguments and
 * semantics of TVM's builtin.cc: storage and tensor allocation, the shape heap
 * (match_shape / make_shape), argument checks (their messages name the parameter through
 * err_ctx), tuples, closures, and the small conversions. Every argument is checked here:
 * these run on values the bytecode computed. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vm.h"

#define MR_ERROR_FILE kMrFileVmBuiltins

typedef int (*builtin_fn)(const TVMFFIAny* a, int32_t n, TVMFFIAny* out);

static int argc_error(const char* f, int32_t n, const char* want) {
  return MR_RAISE(kMrErrorType, "vm.builtin.%s takes %s arguments, got %d", f, want, (int)n);
}

static int type_error(const char* f, int i, const char* want, const TVMFFIAny* v) {
  return MR_RAISE(kMrErrorType, "vm.builtin.%s: argument %d must be %s, got a %s", f, i, want,
                       mr_type_index_name(v->type_index));
}

static const DLTensor* as_tensor(const TVMFFIAny* v) {
  if (v->type_index == kTVMFFITensor) return mr_tensor_dl(v->v_obj);
  if (v->type_index == kTVMFFIDLTensorPtr) return (const DLTensor*)v->v_ptr;
  return NULL;
}

static int get_int(const char* f, const TVMFFIAny* a, int i, int64_t* out) {
  *out = 0;
  if (a[i].type_index != kTVMFFIInt && a[i].type_index != kTVMFFIBool)
    return type_error(f, i, "an int", &a[i]);
  *out = a[i].v_int64;
  return 0;
}

static int get_shape(const char* f, const TVMFFIAny* a, int i, const TVMFFIShapeCell** out) {
  *out = NULL;
  if (a[i].type_index != kTVMFFIShape) return type_error(f, i, "a Shape", &a[i]);
  *out = mr_shape_view(a[i].v_obj);
  return 0;
}

static int get_dtype(const char* f, const TVMFFIAny* a, int i, DLDataType* out) {
  const char* s;
  size_t len;
  char buf[64];
  memset(out, 0, sizeof(*out));
  if (a[i].type_index == kTVMFFIDataType) {
    *out = a[i].v_dtype;
    return 0;
  }
  if (mr_any_get_str(&a[i], &s, &len) == 0 && len < sizeof(buf)) {
    memcpy(buf, s, len);
    buf[len] = '\0';
    if (mr_dtype_parse(buf, out) == 0) return 0;
  }
  mr_error_clear();
  return type_error(f, i, "a DataType", &a[i]);
}

/* err_ctx (a[i], when there is one) as text. */
static const char* err_ctx(const TVMFFIAny* a, int32_t n, int i, char* buf, size_t size) {
  const char* s;
  size_t len;
  if (i >= n || mr_any_get_str(&a[i], &s, &len) != 0) {
    mr_error_clear();
    return "";
  }
  snprintf(buf, size, "%.*s: ", (int)(len > size - 3 ? size - 3 : len), s);
  return buf;
}

static void set_obj(TVMFFIAny* out, TVMFFIObject* o) { mr_any_set_object(out, o); }

/* Fails unless a Shape has at most MR_MAX_NDIM dimensions (so that it fits in an int32 ndim). */
static int shape_ndim(const char* f, const TVMFFIShapeCell* s) {
  if (s->size > MR_MAX_NDIM)
    return MR_VALUE_ERROR("vm.builtin.%s: a shape of %llu dimensions (at most %d)", f,
                          (unsigned long long)s->size, MR_MAX_NDIM);
  return 0;
}

static const char* dtype_name(DLDataType t, char* buf) {
  (void)mr_dtype_format(t, buf, 32);
  return buf;
}

/* ---- allocation ---- */
/* alloc_storage(vm, Shape size, int device_index, DataType hint[, Str scope]) */
static int b_alloc_storage(const TVMFFIAny* a, int32_t n, TVMFFIAny* out) {
  static const char f[] = "alloc_storage";
  const TVMFFIShapeCell* s;
  int64_t dev_index;
  DLDataType hint;
  uint64_t bytes;
  mr_vm_t* vm;
  TVMFFIObject* storage;
  if (n < 4 || n > 5) return argc_error(f, n, "4 or 5");
  if (!(vm = mr_vm_from_arg(&a[0], f)) || get_shape(f, a, 1, &s) != 0 ||
      get_int(f, a, 2, &dev_index) != 0 || get_dtype(f, a, 3, &hint) != 0)
    return -1;
  if (dev_index == -1) dev_index = vm->num_devices - 1;
  if (dev_index < 0 || dev_index >= vm->num_devices)
    return MR_VALUE_ERROR("vm.builtin.alloc_storage: device index %lld of %d devices",
                          (long long)dev_index, vm->num_devices);
  if (shape_ndim(f, s) != 0 ||
      mr_tensor_nbytes_checked((int32_t)s->size, s->data, hint, "vm.builtin.alloc_storage",
                               &bytes) != 0)
    return -1;
  if (mr_vm_pool_alloc(vm->pools[dev_index], bytes, hint, &storage) != 0) return -1;
  set_obj(out, storage);
  return 0;
}

/* alloc_tensor(storage, int offset, Shape, DataType[, Str scope]) */
static int b_alloc_tensor(const TVMFFIAny* a, int32_t n, TVMFFIAny* out) {
  static const char f[] = "alloc_tensor";
  const TVMFFIShapeCell* s;
  int64_t offset;
  DLDataType dt;
  TVMFFIObject* t;
  uint64_t bytes;
  if (n < 4 || n > 5) return argc_error(f, n, "4 or 5");
  if (a[0].type_index != kTVMFFITensor) return type_error(f, 0, "a storage", &a[0]);
  if (get_int(f, a, 1, &offset) != 0 || get_shape(f, a, 2, &s) != 0 ||
      get_dtype(f, a, 3, &dt) != 0 || shape_ndim(f, s) != 0 ||
      mr_tensor_nbytes_checked((int32_t)s->size, s->data, dt, "vm.builtin.alloc_tensor",
                               &bytes) != 0)
    return -1;
  if (offset < 0) return MR_VALUE_ERROR("vm.builtin.alloc_tensor: negative offset");
  if (mr_tensor_view(a[0].v_obj, (int32_t)s->size, s->data, dt, (uint64_t)offset, &t) != 0)
    return -1;
  set_obj(out, t);
  return 0;
}

/* alloc_shape_heap(vm, int size) -> int64[size] on the host */
static int b_alloc_shape_heap(const TVMFFIAny* a, int32_t n, TVMFFIAny* out) {
  static const char f[] = "alloc_shape_heap";
  int64_t size;
  DLDataType i64 = {kDLInt, 64, 1};
  DLDevice cpu = {kDLCPU, 0};
  TVMFFIObject* t;
  if (n != 2) return argc_error(f, n, "2");
  if (!mr_vm_from_arg(&a[0], f) || get_int(f, a, 1, &size) != 0) return -1;
  if (size < 0 || size > (1 << 24)) return MR_VALUE_ERROR("vm.builtin.alloc_shape_heap: size %lld",
                                                         (long long)size);
  if (mr_tensor_create(1, &size, i64, cpu, &t) != 0) return -1;
  memset(mr_tensor_dl(t)->data, 0, (size_t)size * 8);
  set_obj(out, t);
  return 0;
}

/* ---- checks ---- */
/* check_tensor_info(arg, int ndim[, DataType dtype], err_ctx) */
static int b_check_tensor_info(const TVMFFIAny* a, int32_t n, TVMFFIAny* out) {
  static const char f[] = "check_tensor_info";
  const DLTensor* t;
  int64_t ndim;
  DLDataType dt;
  char ctx[512], want[32], got[32];
  (void)out;
  if (n < 3 || n > 4) return argc_error(f, n, "3 or 4");
  err_ctx(a, n, n - 1, ctx, sizeof(ctx));
  if (!(t = as_tensor(&a[0])))
    return MR_RAISE(kMrErrorType, "%sexpected a Tensor, got a %s", ctx,
                         mr_type_index_name(a[0].type_index));
  if (get_int(f, a, 1, &ndim) != 0) return -1;
  if (ndim != -1 && t->ndim != ndim)
    return MR_VALUE_ERROR("%sexpected a Tensor of ndim %lld, got ndim %d", ctx, (long long)ndim,
                          (int)t->ndim);
  if (n == 4) {
    if (get_dtype(f, a, 2, &dt) != 0) return -1;
    if (!(dt.bits == 0 && dt.lanes == 0) &&
        (dt.code != t->dtype.code || dt.bits != t->dtype.bits || dt.lanes != t->dtype.lanes))
      return MR_VALUE_ERROR("%sexpected a Tensor of dtype %s, got dtype %s", ctx,
                            dtype_name(dt, want), dtype_name(t->dtype, got));
  }
  return 0;
}

/* check_shape_info(arg, int ndim, err_ctx) */
static int b_check_shape_info(const TVMFFIAny* a, int32_t n, TVMFFIAny* out) {
  int64_t ndim;
  char ctx[512];
  (void)out;
  if (n < 2 || n > 3) return argc_error("check_shape_info", n, "2 or 3");
  err_ctx(a, n, 2, ctx, sizeof(ctx));
  if (a[0].type_index != kTVMFFIShape)
    return MR_RAISE(kMrErrorType, "%sexpected a Shape, got a %s", ctx,
                         mr_type_index_name(a[0].type_index));
  if (get_int("check_shape_info", a, 1, &ndim) != 0) return -1;
  if (ndim != -1 && (int64_t)mr_shape_view(a[0].v_obj)->size != ndim)
    return MR_VALUE_ERROR("%sexpected a Shape of %lld dimensions, got %lld", ctx,
                          (long long)ndim, (long long)mr_shape_view(a[0].v_obj)->size);
  return 0;
}

/* check_tuple_info(arg, int size, err_ctx) */
static int b_check_tuple_info(const TVMFFIAny* a, int32_t n, TVMFFIAny* out) {
  int64_t size;
  char ctx[512];
  (void)out;
  if (n < 2 || n > 3) return argc_error("check_tuple_info", n, "2 or 3");
  err_ctx(a, n, 2, ctx, sizeof(ctx));
  if (a[0].type_index != kTVMFFIArray)
    return MR_RAISE(kMrErrorType, "%sexpected a tuple, got a %s", ctx,
                         mr_type_index_name(a[0].type_index));
  if (get_int("check_tuple_info", a, 1, &size) != 0) return -1;
  if (mr_array_view(a[0].v_obj)->size != size)
    return MR_VALUE_ERROR("%sexpected a tuple of %lld fields, got %lld", ctx, (long long)size,
                          (long long)mr_array_view(a[0].v_obj)->size);
  return 0;
}

/* check_prim_value_info(arg, DataType, err_ctx) */
static int b_check_prim_value_info(const TVMFFIAny* a, int32_t n, TVMFFIAny* out) {
  DLDataType dt;
  char ctx[512];
  int ok;
  (void)out;
  if (n < 2 || n > 3) return argc_error("check_prim_value_info", n, "2 or 3");
  err_ctx(a, n, 2, ctx, sizeof(ctx));
  if (get_dtype("check_prim_value_info", a, 1, &dt) != 0) return -1;
  ok = (dt.code == kDLFloat) ? (a[0].type_index == kTVMFFIFloat || a[0].type_index == kTVMFFIInt)
       : (dt.code == kDLBool || (dt.code == kDLUInt && dt.bits == 1))
           ? (a[0].type_index == kTVMFFIBool || a[0].type_index == kTVMFFIInt)
           : (a[0].type_index == kTVMFFIInt || a[0].type_index == kTVMFFIBool);
  if (dt.bits == 0 && dt.lanes == 0) ok = 1;
  if (!ok)
    return MR_RAISE(kMrErrorType, "%sexpected a prim value, got a %s", ctx,
                         mr_type_index_name(a[0].type_index));
  return 0;
}

/* check_func_info(arg, err_ctx) */
static int b_check_func_info(const TVMFFIAny* a, int32_t n, TVMFFIAny* out) {
  char ctx[512];
  (void)out;
  if (n < 1 || n > 2) return argc_error("check_func_info", n, "1 or 2");
  err_ctx(a, n, 1, ctx, sizeof(ctx));
  if (a[0].type_index != kTVMFFIFunction && a[0].type_index != MR_VM_CLOSURE_TYPE)
    return MR_RAISE(kMrErrorType, "%sexpected a function, got a %s", ctx,
                         mr_type_index_name(a[0].type_index));
  return 0;
}

/* ---- the shape heap ---- */
static int heap_of(const char* f, const TVMFFIAny* v, int64_t** data, int64_t* size) {
  const DLTensor* t;
  *data = NULL;
  *size = 0;
  if (v->type_index == kTVMFFINone) return 0;
  t = as_tensor(v);
  if (!t || t->device.device_type != kDLCPU || t->ndim != 1 || t->dtype.code != kDLInt ||
      t->dtype.bits != 64)
    return MR_RAISE(kMrErrorType, "vm.builtin.%s: the shape heap must be a host int64 "
                         "tensor (vm.builtin.alloc_shape_heap)", f);
  *data = (int64_t*)((char*)t->data + t->byte_offset);
  *size = t->shape[0];
  return 0;
}

static int heap_slot(const char* f, int64_t size, int64_t idx) {
  if (idx < 0 || idx >= size)
    return MR_VM_ERROR("vm.builtin.%s: shape heap slot %lld of %lld", f, (long long)idx,
                       (long long)size);
  return 0;
}

/* match_shape(value, heap, int ndim, (int code, int value) x ndim[, err_ctx]);
 * codes: 0 equal to the value, 1 store in heap[value], 2 nothing, 3 equal to heap[value]. */
static int b_match_shape(const TVMFFIAny* a, int32_t n, TVMFFIAny* out) {
  static const char f[] = "match_shape";
  const int64_t* dims;
  int64_t ndim, got_ndim, i, *heap, heap_size, code, val;
  const DLTensor* t;
  char ctx[512];
  (void)out;
  if (n < 3) return argc_error(f, n, "at least 3");
  if (get_int(f, a, 2, &ndim) != 0) return -1;
  if (ndim < 0 || n < 3 + 2 * ndim || n > 4 + 2 * ndim)
    return argc_error(f, n, "3 + 2 * ndim (+ err_ctx)");
  err_ctx(a, n, (int)(3 + 2 * ndim), ctx, sizeof(ctx));
  if ((t = as_tensor(&a[0])) != NULL) {
    dims = t->shape;
    got_ndim = t->ndim;
  } else if (a[0].type_index == kTVMFFIShape) {
    dims = mr_shape_view(a[0].v_obj)->data;
    got_ndim = (int64_t)mr_shape_view(a[0].v_obj)->size;
  } else {
    return MR_RAISE(kMrErrorType, "%sexpected a Tensor or a Shape, got a %s", ctx,
                         mr_type_index_name(a[0].type_index));
  }
  if (heap_of(f, &a[1], &heap, &heap_size) != 0) return -1;
  if (got_ndim != ndim)
    return MR_VALUE_ERROR("%sexpected %lld dimensions, got %lld", ctx, (long long)ndim,
                          (long long)got_ndim);
  for (i = 0; i < ndim; ++i) {
    if (get_int(f, a, (int)(3 + 2 * i), &code) != 0 || get_int(f, a, (int)(4 + 2 * i), &val) != 0)
      return -1;
    switch (code) {
      case 0:
        if (dims[i] != val)
          return MR_VALUE_ERROR("%sshape[%lld] is %lld, expected %lld", ctx, (long long)i,
                                (long long)dims[i], (long long)val);
        break;
      case 1:
        if (heap_slot(f, heap_size, val) != 0) return -1;
        heap[val] = dims[i];
        break;
      case 2:
        break;
      case 3:
        if (heap_slot(f, heap_size, val) != 0) return -1;
        if (dims[i] != heap[val])
          return MR_VALUE_ERROR("%sshape[%lld] is %lld, expected %lld (as an earlier dimension "
                                "of the same name)", ctx, (long long)i, (long long)dims[i],
                                (long long)heap[val]);
        break;
      default:
        return MR_VALUE_ERROR("vm.builtin.match_shape: unknown code %lld", (long long)code);
    }
  }
  return 0;
}

/* make_shape(heap, int ndim, (int code, int value) x ndim); codes: 0 the value, 1 heap[value] */
static int b_make_shape(const TVMFFIAny* a, int32_t n, TVMFFIAny* out) {
  static const char f[] = "make_shape";
  int64_t ndim, i, *heap, heap_size, code, val, local[16], *dims = local;
  TVMFFIObject* s;
  int status = -1;
  if (n < 2) return argc_error(f, n, "at least 2");
  if (heap_of(f, &a[0], &heap, &heap_size) != 0 || get_int(f, a, 1, &ndim) != 0) return -1;
  if (ndim < 0 || n != 2 + 2 * ndim) return argc_error(f, n, "2 + 2 * ndim");
  if (ndim > 16 && !(dims = (int64_t*)malloc((size_t)ndim * sizeof(int64_t))))
    return MR_OOM("a shape");
  for (i = 0; i < ndim; ++i) {
    if (get_int(f, a, (int)(2 + 2 * i), &code) != 0 || get_int(f, a, (int)(3 + 2 * i), &val) != 0)
      goto done;
    if (code == 0) {
      dims[i] = val;
    } else if (code == 1) {
      if (heap_slot(f, heap_size, val) != 0) goto done;
      dims[i] = heap[val];
    } else {
      MR_VALUE_ERROR("vm.builtin.make_shape: unknown code %lld", (long long)code);
      goto done;
    }
  }
  if (mr_shape_create(dims, (size_t)ndim, &s) != 0) goto done;
  set_obj(out, s);
  status = 0;
done:
  if (dims != local) free(dims);
  return status;
}

/* match_prim_value(value, heap, code, slot[, err_ctx]) / make_prim_value(heap, code, value) */
static int b_match_prim_value(const TVMFFIAny* a, int32_t n, TVMFFIAny* out) {
  static const char f[] = "match_prim_value";
  int64_t v, *heap, heap_size, code, val;
  char ctx[512];
  (void)out;
  if (n < 4 || n > 5) return argc_error(f, n, "4 or 5");
  err_ctx(a, n, 4, ctx, sizeof(ctx));
  if (get_int(f, a, 0, &v) != 0 || heap_of(f, &a[1], &heap, &heap_size) != 0 ||
      get_int(f, a, 2, &code) != 0 || get_int(f, a, 3, &val) != 0)
    return -1;
  if (code == 0 && v != val)
    return MR_VALUE_ERROR("%svalue is %lld, expected %lld", ctx, (long long)v, (long long)val);
  if (code == 1 || code == 3) {
    if (heap_slot(f, heap_size, val) != 0) return -1;
    if (code == 1) heap[val] = v;
    else if (heap[val] != v)
      return MR_VALUE_ERROR("%svalue is %lld, expected %lld", ctx, (long long)v,
                            (long long)heap[val]);
  }
  return 0;
}

static int b_make_prim_value(const TVMFFIAny* a, int32_t n, TVMFFIAny* out) {
  static const char f[] = "make_prim_value";
  int64_t *heap, heap_size, code, val;
  if (n != 3) return argc_error(f, n, "3");
  if (heap_of(f, &a[0], &heap, &heap_size) != 0 || get_int(f, a, 1, &code) != 0 ||
      get_int(f, a, 2, &val) != 0)
    return -1;
  if (code == 1) {
    if (heap_slot(f, heap_size, val) != 0) return -1;
    val = heap[val];
  }
  out->type_index = kTVMFFIInt;
  out->v_int64 = val;
  return 0;
}

/* ---- values ---- */
static int b_null_value(const TVMFFIAny* a, int32_t n, TVMFFIAny* out) {
  (void)a, (void)n, (void)out;
  return 0;
}

static int b_copy(const TVMFFIAny* a, int32_t n, TVMFFIAny* out) {
  if (n != 1) return argc_error("copy", n, "1");
  return mr_any_copy(&a[0], out);
}

/* reshape(tensor, Shape) -> a view */
static int b_reshape(const TVMFFIAny* a, int32_t n, TVMFFIAny* out) {
  static const char f[] = "reshape";
  const TVMFFIShapeCell* s;
  const DLTensor* t;
  TVMFFIObject* v;
  uint64_t from_bytes, to_bytes;
  if (n != 2) return argc_error(f, n, "2");
  if (a[0].type_index != kTVMFFITensor) return type_error(f, 0, "a Tensor", &a[0]);
  if (get_shape(f, a, 1, &s) != 0 || shape_ndim(f, s) != 0) return -1;
  t = mr_tensor_dl(a[0].v_obj);
  if (mr_tensor_nbytes_checked(t->ndim, t->shape, t->dtype, "vm.builtin.reshape", &from_bytes) !=
          0 ||
      mr_tensor_nbytes_checked((int32_t)s->size, s->data, t->dtype, "vm.builtin.reshape",
                               &to_bytes) != 0)
    return -1;
  if (from_bytes != to_bytes)
    return MR_VALUE_ERROR("vm.builtin.reshape: cannot reshape a tensor of %llu bytes to a "
                          "shape of %llu bytes", (unsigned long long)from_bytes,
                          (unsigned long long)to_bytes);
  if (mr_tensor_view(a[0].v_obj, (int32_t)s->size, s->data, t->dtype, 0, &v) != 0) return -1;
  set_obj(out, v);
  return 0;
}

static int b_make_tuple(const TVMFFIAny* a, int32_t n, TVMFFIAny* out) {
  TVMFFIObject* arr;
  int32_t i;
  for (i = 0; i < n; ++i)
    if (a[i].type_index == kTVMFFIDLTensorPtr)
      return type_error("make_tuple", i, "a value that can be kept (not a DLTensor*)", &a[i]);
  if (mr_array_create(a, n, &arr) != 0) return -1;
  set_obj(out, arr);
  return 0;
}

static int b_tuple_getitem(const TVMFFIAny* a, int32_t n, TVMFFIAny* out) {
  const TVMFFISeqCell* s;
  int64_t i;
  if (n != 2) return argc_error("tuple_getitem", n, "2");
  if (a[0].type_index != kTVMFFIArray) return type_error("tuple_getitem", 0, "a tuple", &a[0]);
  if (get_int("tuple_getitem", a, 1, &i) != 0) return -1;
  s = mr_array_view(a[0].v_obj);
  if (i < 0 || i >= s->size)
    return MR_RAISE(kMrErrorIndex, "vm.builtin.tuple_getitem: index %lld of a tuple of "
                         "%lld", (long long)i, (long long)s->size);
  return mr_any_copy(&((const TVMFFIAny*)s->data)[i], out);
}

/* A host copy of a (small) tensor's data into buf; returns the element count. */
static int host_read(const char* f, const DLTensor* t, void* buf, size_t cap, uint64_t* count) {
  DLTensor host;
  uint64_t numel, nbytes;
  char ctx[64];
  snprintf(ctx, sizeof(ctx), "vm.builtin.%s", f);
  if (mr_tensor_nbytes_checked(t->ndim, t->shape, t->dtype, ctx, &nbytes) != 0) return -1;
  if (nbytes > cap || mr_shape_numel(t->ndim, t->shape, &numel) != 0)
    return MR_VALUE_ERROR("vm.builtin.%s: the tensor is too large (%llu bytes, at most %zu)", f,
                          (unsigned long long)nbytes, cap);
  host = *t;
  host.data = buf;
  host.device.device_type = kDLCPU;
  host.device.device_id = 0;
  host.strides = NULL;
  host.byte_offset = 0;
  if (mr_tensor_copy(t, &host, NULL) != 0) return -1;
  *count = numel;
  return 0;
}

static int b_read_if_cond(const TVMFFIAny* a, int32_t n, TVMFFIAny* out) {
  const DLTensor* t;
  unsigned char buf[16];
  uint64_t count, k;
  int64_t v = 0;
  if (n != 1) return argc_error("read_if_cond", n, "1");
  out->type_index = kTVMFFIBool;
  if (a[0].type_index == kTVMFFIInt || a[0].type_index == kTVMFFIBool) {
    out->v_int64 = a[0].v_int64 != 0;
    return 0;
  }
  if (!(t = as_tensor(&a[0]))) {
    out->type_index = kTVMFFINone;
    return type_error("read_if_cond", 0, "a bool, an int or a tensor", &a[0]);
  }
  memset(buf, 0, sizeof(buf));
  if (host_read("read_if_cond", t, buf, sizeof(buf), &count) != 0) {
    out->type_index = kTVMFFINone;
    return -1;
  }
  if (count != 1) {
    out->type_index = kTVMFFINone;
    return MR_VALUE_ERROR("vm.builtin.read_if_cond: the condition has %llu elements, not 1",
                          (unsigned long long)count);
  }
  if (t->dtype.code == kDLFloat && t->dtype.bits == 32) {
    float x;
    memcpy(&x, buf, 4);
    v = x != 0.0f;
  } else if (t->dtype.code == kDLFloat && t->dtype.bits == 64) {
    double x;
    memcpy(&x, buf, 8);
    v = x != 0.0;
  } else {
    for (k = 0; k < mr_dtype_bytes(t->dtype) && k < sizeof(buf); ++k) v |= buf[k];
  }
  out->v_int64 = v != 0;
  return 0;
}

static int b_tensor_to_shape(const TVMFFIAny* a, int32_t n, TVMFFIAny* out) {
  const DLTensor* t;
  int64_t dims[MR_MAX_NDIM * 8];
  int32_t d32[MR_MAX_NDIM * 8];
  uint64_t count, i;
  TVMFFIObject* s;
  if (n != 1) return argc_error("tensor_to_shape", n, "1");
  if (!(t = as_tensor(&a[0]))) return type_error("tensor_to_shape", 0, "a Tensor", &a[0]);
  if (t->ndim != 1 || (t->dtype.code != kDLInt && t->dtype.code != kDLUInt) ||
      (t->dtype.bits != 64 && t->dtype.bits != 32) || t->dtype.lanes != 1)
    return MR_VALUE_ERROR("vm.builtin.tensor_to_shape: expected a 1-D int32/int64 tensor");
  if (t->dtype.bits == 64) {
    if (host_read("tensor_to_shape", t, dims, sizeof(dims), &count) != 0) return -1;
  } else {
    if (host_read("tensor_to_shape", t, d32, sizeof(d32), &count) != 0) return -1;
    for (i = 0; i < count; ++i) dims[i] = d32[i];
  }
  if (mr_shape_create(dims, (size_t)count, &s) != 0) return -1;
  set_obj(out, s);
  return 0;
}

static int b_shape_of(const TVMFFIAny* a, int32_t n, TVMFFIAny* out) {
  const DLTensor* t;
  TVMFFIObject* s;
  if (n != 1) return argc_error("shape_of", n, "1");
  if (!(t = as_tensor(&a[0]))) return type_error("shape_of", 0, "a Tensor", &a[0]);
  if (mr_shape_create(t->shape, (size_t)t->ndim, &s) != 0) return -1;
  set_obj(out, s);
  return 0;
}

static int b_ensure_zero_offset(const TVMFFIAny* a, int32_t n, TVMFFIAny* out) {
  const DLTensor* t;
  TVMFFIObject* c;
  if (n != 1) return argc_error("ensure_zero_offset", n, "1");
  if (a[0].type_index != kTVMFFITensor)
    return type_error("ensure_zero_offset", 0, "a Tensor", &a[0]);
  t = mr_tensor_dl(a[0].v_obj);
  if (t->byte_offset == 0) return mr_any_copy(&a[0], out);
  if (mr_tensor_create(t->ndim, t->shape, t->dtype, t->device, &c) != 0) return -1;
  if (mr_tensor_copy(t, mr_tensor_dl(c), NULL) != 0) {
    mr_object_release(c);
    return -1;
  }
  set_obj(out, c);
  return 0;
}

/* to_device(tensor, int device_type, int device_id) */
static int b_to_device(const TVMFFIAny* a, int32_t n, TVMFFIAny* out) {
  const DLTensor* t;
  int64_t type, id;
  DLDevice dev;
  TVMFFIObject* c;
  if (n != 3) return argc_error("to_device", n, "3");
  if (!(t = as_tensor(&a[0]))) return type_error("to_device", 0, "a Tensor", &a[0]);
  if (get_int("to_device", a, 1, &type) != 0 || get_int("to_device", a, 2, &id) != 0) return -1;
  dev.device_type = (int32_t)type;
  dev.device_id = (int32_t)id;
  if (a[0].type_index == kTVMFFITensor && t->device.device_type == dev.device_type &&
      t->device.device_id == dev.device_id)
    return mr_any_copy(&a[0], out);
  if (mr_tensor_create(t->ndim, t->shape, t->dtype, dev, &c) != 0) return -1;
  if (mr_tensor_copy(t, mr_tensor_dl(c), NULL) != 0) {
    mr_object_release(c);
    return -1;
  }
  set_obj(out, c);
  return 0;
}

/* ---- closures ---- */
/* make_closure(closure, *args): a closure with args bound after its own */
static int b_make_closure(const TVMFFIAny* a, int32_t n, TVMFFIAny* out) {
  const mr_vm_closure_t* c;
  TVMFFIAny local[16], *all = local;
  TVMFFIObject* made;
  int32_t total;
  int status;
  if (n < 1) return argc_error("make_closure", n, "at least 1");
  if (a[0].type_index != MR_VM_CLOSURE_TYPE)
    return type_error("make_closure", 0, "a VM closure", &a[0]);
  c = (const mr_vm_closure_t*)a[0].v_obj;
  total = c->num_bound + n - 1;
  if (total > 16 && !(all = (TVMFFIAny*)malloc((size_t)total * sizeof(TVMFFIAny))))
    return MR_OOM("a closure");
  if (c->num_bound) memcpy(all, c->bound, (size_t)c->num_bound * sizeof(TVMFFIAny));
  if (n > 1) memcpy(all + c->num_bound, a + 1, (size_t)(n - 1) * sizeof(TVMFFIAny));
  status = mr_vm_closure_new(c->func_index, all, total, &made);
  if (all != local) free(all);
  if (status != 0) return -1;
  set_obj(out, made);
  return 0;
}

/* invoke_closure(vm, closure, *args) */
static int b_invoke_closure(const TVMFFIAny* a, int32_t n, TVMFFIAny* out) {
  mr_vm_t* vm;
  if (n < 2) return argc_error("invoke_closure", n, "at least 2");
  if (!(vm = mr_vm_from_arg(&a[0], "vm.builtin.invoke_closure"))) return -1;
  return mr_vm_invoke_value(vm, &a[1], a + 2, n - 2, out);
}

static const struct {
  const char* name;
  builtin_fn fn;
} k_builtins[] = {
    {"alloc_storage", b_alloc_storage},
    {"alloc_tensor", b_alloc_tensor},
    {"alloc_shape_heap", b_alloc_shape_heap},
    {"check_tensor_info", b_check_tensor_info},
    {"check_shape_info", b_check_shape_info},
    {"check_tuple_info", b_check_tuple_info},
    {"check_prim_value_info", b_check_prim_value_info},
    {"check_func_info", b_check_func_info},
    {"match_shape", b_match_shape},
    {"make_shape", b_make_shape},
    {"match_prim_value", b_match_prim_value},
    {"make_prim_value", b_make_prim_value},
    {"null_value", b_null_value},
    {"reshape", b_reshape},
    {"make_tuple", b_make_tuple},
    {"tuple_getitem", b_tuple_getitem},
    {"copy", b_copy},
    {"read_if_cond", b_read_if_cond},
    {"tensor_to_shape", b_tensor_to_shape},
    {"shape_of", b_shape_of},
    {"make_closure", b_make_closure},
    {"invoke_closure", b_invoke_closure},
    {"ensure_zero_offset", b_ensure_zero_offset},
    {"to_device", b_to_device},
};

static int call_builtin(void* self, const TVMFFIAny* a, int32_t n, TVMFFIAny* out) {
  builtin_fn fn;
  memcpy(&fn, &self, sizeof(fn));
  return fn(a, n, out);
}

int mr_vm_register_builtins(void) {
  char name[64];
  size_t i;
  for (i = 0; i < sizeof(k_builtins) / sizeof(k_builtins[0]); ++i) {
    TVMFFIObject* f;
    void* self;
    int status;
    memcpy(&self, &k_builtins[i].fn, sizeof(self));
    snprintf(name, sizeof(name), "vm.builtin.%s", k_builtins[i].name);
    if (mr_function_create_closure(self, call_builtin, NULL, &f) != 0) return -1;
    status = mr_registry_set(name, f, 1);
    mr_object_release(f);
    if (status != 0) return -1;
  }
  return 0;
}
