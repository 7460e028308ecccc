/* The OpenCL backend in C: device attributes, tensors on the device (round trips, device
 * to device copies, views at a byte offset), streams, and a device module loaded from a
 * payload written here byte by byte, whose kernel is called with tensors, device pointers
 * and launch extents. Skips (passes) at run time without an OpenCL device. Also: nothing of
 * the GPU backends is reachable before mr_gpu_register, loading never needs the driver (bad
 * payloads fail at load), and CUDA without libcuda.so.1. */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "microruntime/gpu.h"
#include "module.h"

static const char k_vadd[] =
    "__kernel void vadd(__global const float* A, __global const float* B,\n"
    "                   __global float* C, int n) {\n"
    "  int i = get_group_id(0) * get_local_size(0) + get_local_id(0);\n"
    "  if (i < n) C[i] = A[i] + B[i];\n"
    "}\n";

typedef struct {
  unsigned char data[4096];
  size_t size;
} buf_t;

static void put(buf_t* b, const void* p, size_t n) {
  memcpy(b->data + b->size, p, n);
  b->size += n;
}

static void put_u64(buf_t* b, uint64_t v) {
  unsigned char le[8];
  int i;
  for (i = 0; i < 8; ++i) le[i] = (unsigned char)(v >> (8 * i));
  put(b, le, 8);
}

static void put_str(buf_t* b, const char* s) {
  put_u64(b, strlen(s));
  put(b, s, strlen(s));
}

/* One kernel `name` (handle x3, int32; blockIdx.x, threadIdx.x) over `code`. */
static void vadd_payload(buf_t* b, const char* name, const char* code) {
  static const unsigned char k_types[] = {3, 64, 1, 0, 3, 64, 1, 0, 3, 64, 1, 0, 0, 32, 1, 0};
  static const unsigned char k_extra[16] = {0};
  b->size = 0;
  put_str(b, "cl");
  put_u64(b, 1);
  put_str(b, name);
  put_str(b, name);
  put_u64(b, 4);
  put(b, k_types, sizeof(k_types));
  put_u64(b, 2);
  put_str(b, "blockIdx.x");
  put_str(b, "threadIdx.x");
  put_u64(b, 4);
  put(b, k_extra, sizeof(k_extra));
  put_str(b, code);
}

static void set_int(TVMFFIAny* a, int64_t v) {
  memset(a, 0, sizeof(*a));
  a->type_index = kTVMFFIInt;
  a->v_int64 = v;
}

static int call(TVMFFIObject* f, TVMFFIAny* args, int n) {
  TVMFFIAny result;
  memset(&result, 0, sizeof(result));
  return mr_function_call(f, args, n, &result);
}

static void test_bad_payloads(void) {
  buf_t b;
  TVMFFIObject* mod = NULL;
  size_t n;
  vadd_payload(&b, "vadd", k_vadd);
  for (n = 0; n < b.size; ++n)
    CHECK_FAIL(mr_module_load_from_bytes("opencl", (const char*)b.data, n, &mod),
               "opencl module: ");
  CHECK_FAIL(mr_module_load_from_bytes("cuda", (const char*)b.data, b.size, &mod),
             "code format 'cl' is not one a cuda module can hold");
}

static void test_cuda_without_driver(void) {
  DLDevice dev = {kDLCUDA, 0};
  TVMFFIAny v;
  int64_t shape[1] = {4};
  DLDataType f32 = {kDLFloat, 32, 1};
  TVMFFIObject* t = NULL;
  CHECK_OK(mr_device_get_attr(dev, kMrDevExist, &v));
  if (v.v_int64 == 0 && !getenv("MR_CUDA_LIBRARY")) {
    mr_error_clear();
    if (mr_tensor_create(1, shape, f32, dev, &t) == 0) {
      mr_object_release(t); /* a driver without a device is not this case */
    } else {
      CHECK(strstr(mr_last_error(), "cuda: ") != NULL);
    }
  }
}

static void test_tensors(DLDevice dev) {
  int64_t shape[1] = {256}, half[1] = {128};
  DLDataType f32 = {kDLFloat, 32, 1};
  float host[256], back[256];
  TVMFFIObject *a = NULL, *b = NULL, *view = NULL;
  int i;
  for (i = 0; i < 256; ++i) host[i] = (float)i * 0.5f;
  CHECK_OK(mr_tensor_create(1, shape, f32, dev, &a));
  CHECK_OK(mr_tensor_create(1, shape, f32, dev, &b));
  if (!a || !b) goto done;
  CHECK_OK(mr_tensor_copy_from_bytes(mr_tensor_dl(a), host, sizeof(host)));
  CHECK_OK(mr_tensor_copy(mr_tensor_dl(a), mr_tensor_dl(b), NULL)); /* device to device */
  memset(back, 0, sizeof(back));
  CHECK_OK(mr_tensor_copy_to_bytes(mr_tensor_dl(b), back, sizeof(back)));
  CHECK(memcmp(host, back, sizeof(host)) == 0);
  /* A view of the second half: the cl_mem stays the data, the offset is byte_offset. */
  CHECK_OK(mr_tensor_view(b, 1, half, f32, 128 * sizeof(float), &view));
  if (view) {
    CHECK(mr_tensor_dl(view)->data == mr_tensor_dl(b)->data);
    CHECK(mr_tensor_dl(view)->byte_offset == 128 * sizeof(float));
    memset(back, 0, sizeof(back));
    CHECK_OK(mr_tensor_copy_to_bytes(mr_tensor_dl(view), back, 128 * sizeof(float)));
    CHECK(memcmp(host + 128, back, 128 * sizeof(float)) == 0);
  }
done:
  mr_object_release(view);
  mr_object_release(a);
  mr_object_release(b);
}

static void test_kernel(DLDevice dev) {
  buf_t b;
  TVMFFIObject *mod = NULL, *f = NULL, *set_device = NULL, *ta = NULL, *tc = NULL;
  TVMFFIAny args[6];
  int64_t shape[1] = {100};
  DLDataType f32 = {kDLFloat, 32, 1};
  float a[100], c[100];
  void* stream = NULL;
  int i, ok = 1;
  for (i = 0; i < 100; ++i) a[i] = (float)(i % 7) - 2.5f;
  vadd_payload(&b, "vadd", k_vadd);
  CHECK_OK(mr_module_load_from_bytes("opencl", (const char*)b.data, b.size, &mod));
  CHECK_OK(mr_module_get_function(mod, "vadd", 0, &f));
  CHECK_OK(mr_registry_get("__tvm_set_device", &set_device));
  CHECK_OK(mr_tensor_create(1, shape, f32, dev, &ta));
  CHECK_OK(mr_tensor_create(1, shape, f32, dev, &tc));
  if (!f || !set_device || !ta || !tc) goto done;
  CHECK_OK(mr_tensor_copy_from_bytes(mr_tensor_dl(ta), a, sizeof(a)));
  set_int(&args[0], kDLOpenCL);
  set_int(&args[1], 0);
  CHECK_OK(call(set_device, args, 2));
  /* Tensors (type 70) for A, a DLTensor* for B, the device pointer for C. */
  mr_any_set_object(&args[0], ta);
  memset(&args[1], 0, sizeof(args[1]));
  args[1].type_index = kTVMFFIDLTensorPtr;
  args[1].v_ptr = mr_tensor_dl(ta);
  memset(&args[2], 0, sizeof(args[2]));
  args[2].type_index = kTVMFFIOpaquePtr;
  args[2].v_ptr = mr_tensor_dl(tc)->data;
  set_int(&args[3], 100);
  set_int(&args[4], 2);
  set_int(&args[5], 64);
  CHECK_OK(mr_device_stream_create(dev, &stream));
  CHECK_OK(mr_device_set_stream(dev, stream));
  CHECK_OK(call(f, args, 6));
  CHECK_OK(mr_device_stream_sync(dev, NULL));
  CHECK_OK(mr_device_set_stream(dev, NULL));
  CHECK_OK(mr_device_stream_free(dev, stream));
  CHECK_OK(mr_tensor_copy_to_bytes(mr_tensor_dl(tc), c, sizeof(c)));
  for (i = 0; i < 100; ++i) ok &= c[i] == 2 * a[i];
  CHECK(ok);
  CHECK_FAIL(call(f, args, 5), "kernel 'vadd' takes 6 arguments");
done:
  mr_object_release(ta);
  mr_object_release(tc);
  mr_object_release(set_device);
  mr_object_release(f);
  mr_object_release(mod);
}

static void test_build_error(DLDevice dev) {
  buf_t b;
  TVMFFIObject *mod = NULL, *f = NULL;
  TVMFFIAny args[6];
  int i;
  vadd_payload(&b, "vadd", "__kernel void vadd(__global float* A) { A[0] = no_such_name; }\n");
  CHECK_OK(mr_module_load_from_bytes("opencl", (const char*)b.data, b.size, &mod));
  CHECK_OK(mr_module_get_function(mod, "vadd", 0, &f));
  if (f) {
    for (i = 0; i < 3; ++i) {
      memset(&args[i], 0, sizeof(args[i]));
      args[i].type_index = kTVMFFIOpaquePtr;
    }
    set_int(&args[3], 1);
    set_int(&args[4], 1);
    set_int(&args[5], 1);
    CHECK_FAIL(call(f, args, 6), "no_such_name");
    CHECK(strstr(mr_last_error(), "build log") != NULL);
  }
  (void)dev;
  mr_object_release(f);
  mr_object_release(mod);
}

/* Nothing of the GPU backends is reachable before mr_gpu_register: the core names none. */
static void test_registration(void) {
  DLDevice dev = {kDLOpenCL, 0};
  TVMFFIObject *mod = NULL, *f = NULL;
  TVMFFIAny exist;
  buf_t b;
  vadd_payload(&b, "vadd", k_vadd);
  CHECK(mr_device_api_get(kDLOpenCL) == NULL && strstr(mr_last_error(), "opencl"));
  CHECK_OK(mr_device_get_attr(dev, kMrDevExist, &exist));
  CHECK(exist.v_int64 == 0);
  CHECK_FAIL(mr_module_load_from_bytes("opencl", (const char*)b.data, b.size, &mod),
             "no loader registered for module kind 'opencl'");
  CHECK_FAIL(mr_registry_get("__tvm_set_device", &f), "is not registered");
  CHECK_OK(mr_gpu_register());
  CHECK_OK(mr_gpu_register()); /* again: the same registrations */
  CHECK(mr_device_api_get(kDLOpenCL) != NULL && mr_device_api_get(kDLCUDA) != NULL &&
        mr_device_api_get(kDLVulkan) != NULL);
  CHECK_OK(mr_registry_get("__tvm_set_device", &f));
  mr_object_release(f);
  CHECK_OK(mr_registry_get("ffi.Module.load_from_bytes.vulkan", &f));
  mr_object_release(f);
  CHECK_OK(mr_module_load_from_bytes("opencl", (const char*)b.data, b.size, &mod));
  CHECK(mod && strcmp(mr_module_type_key(mod), "opencl") == 0);
  mr_object_release(mod);
}

int main(void) {
  DLDevice dev = {kDLOpenCL, 0};
  TVMFFIAny exist;
  test_registration();
  test_bad_payloads();
  test_cuda_without_driver();
  CHECK_OK(mr_device_get_attr(dev, kMrDevExist, &exist));
  if (exist.v_int64 == 0) {
    printf("skipping the OpenCL device tests: no OpenCL driver with a device\n");
    return CHECK_RESULT();
  }
  test_tensors(dev);
  test_kernel(dev);
  test_build_error(dev);
  return CHECK_RESULT();
}
