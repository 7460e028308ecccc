/* The OpenCL device: the driver found with dlopen (libOpenCL.so.1, or the library named
 * by MR_OPENCL_LIBRARY), its devices (GPUs when a platform has any, else every device),
 * one context and in-order queue per device, buffers (a cl_mem is the DLTensor's data,
 * views add byte_offset), copies, streams (extra queues) and device attributes.
 * Kernels are in opencl_module.c. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opencl.h"

#define MR_CL_MAX_PLATFORMS 16

static mr_mutex_t g_cl_mutex = MR_MUTEX_INIT; /* guards everything below */
static int g_state;                           /* 0 not tried, 1 loaded, -1 failed */
static char g_error[512];
static mr_cl_fns_t g_fns;
static mr_cl_device_t g_devices[MR_MAX_DEVICE_IDS];
static int32_t g_num_devices;

static const struct {
  const char* name;
  size_t offset;
} k_entries[] = {
#define MR_CL_ENTRY(n) {"cl" #n, offsetof(mr_cl_fns_t, n)}
    MR_CL_ENTRY(GetPlatformIDs),     MR_CL_ENTRY(GetDeviceIDs),
    MR_CL_ENTRY(GetDeviceInfo),      MR_CL_ENTRY(CreateContext),
    MR_CL_ENTRY(ReleaseContext),     MR_CL_ENTRY(CreateCommandQueue),
    MR_CL_ENTRY(ReleaseCommandQueue), MR_CL_ENTRY(CreateBuffer),
    MR_CL_ENTRY(ReleaseMemObject),   MR_CL_ENTRY(EnqueueReadBuffer),
    MR_CL_ENTRY(EnqueueWriteBuffer), MR_CL_ENTRY(EnqueueCopyBuffer),
    MR_CL_ENTRY(Finish),             MR_CL_ENTRY(Flush),
    MR_CL_ENTRY(CreateProgramWithSource), MR_CL_ENTRY(BuildProgram),
    MR_CL_ENTRY(GetProgramBuildInfo), MR_CL_ENTRY(ReleaseProgram),
    MR_CL_ENTRY(CreateKernel),       MR_CL_ENTRY(ReleaseKernel),
    MR_CL_ENTRY(SetKernelArg),       MR_CL_ENTRY(EnqueueNDRangeKernel),
#undef MR_CL_ENTRY
};

/* ---- errors ---- */
static const char* error_name(cl_int err) {
  static const char* const k_names[] = {
      "CL_SUCCESS", "CL_DEVICE_NOT_FOUND", "CL_DEVICE_NOT_AVAILABLE", "CL_COMPILER_NOT_AVAILABLE",
      "CL_MEM_OBJECT_ALLOCATION_FAILURE", "CL_OUT_OF_RESOURCES", "CL_OUT_OF_HOST_MEMORY",
      "CL_PROFILING_INFO_NOT_AVAILABLE", "CL_MEM_COPY_OVERLAP", "CL_IMAGE_FORMAT_MISMATCH",
      "CL_IMAGE_FORMAT_NOT_SUPPORTED", "CL_BUILD_PROGRAM_FAILURE", "CL_MAP_FAILURE",
      "CL_MISALIGNED_SUB_BUFFER_OFFSET", "CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST",
      "CL_COMPILE_PROGRAM_FAILURE", "CL_LINKER_NOT_AVAILABLE", "CL_LINK_PROGRAM_FAILURE",
      "CL_DEVICE_PARTITION_FAILED", "CL_KERNEL_ARG_INFO_NOT_AVAILABLE"};
  static const char* const k_invalid[] = {
      "CL_INVALID_VALUE", "CL_INVALID_DEVICE_TYPE", "CL_INVALID_PLATFORM", "CL_INVALID_DEVICE",
      "CL_INVALID_CONTEXT", "CL_INVALID_QUEUE_PROPERTIES", "CL_INVALID_COMMAND_QUEUE",
      "CL_INVALID_HOST_PTR", "CL_INVALID_MEM_OBJECT", "CL_INVALID_IMAGE_FORMAT_DESCRIPTOR",
      "CL_INVALID_IMAGE_SIZE", "CL_INVALID_SAMPLER", "CL_INVALID_BINARY",
      "CL_INVALID_BUILD_OPTIONS", "CL_INVALID_PROGRAM", "CL_INVALID_PROGRAM_EXECUTABLE",
      "CL_INVALID_KERNEL_NAME", "CL_INVALID_KERNEL_DEFINITION", "CL_INVALID_KERNEL",
      "CL_INVALID_ARG_INDEX", "CL_INVALID_ARG_VALUE", "CL_INVALID_ARG_SIZE",
      "CL_INVALID_KERNEL_ARGS", "CL_INVALID_WORK_DIMENSION", "CL_INVALID_WORK_GROUP_SIZE",
      "CL_INVALID_WORK_ITEM_SIZE", "CL_INVALID_GLOBAL_OFFSET", "CL_INVALID_EVENT_WAIT_LIST",
      "CL_INVALID_EVENT", "CL_INVALID_OPERATION", "CL_INVALID_GL_OBJECT",
      "CL_INVALID_BUFFER_SIZE", "CL_INVALID_MIP_LEVEL", "CL_INVALID_GLOBAL_WORK_SIZE"};
  if (err <= 0 && err > -(cl_int)(sizeof(k_names) / sizeof(k_names[0]))) return k_names[-err];
  if (err <= -30 && err > -30 - (cl_int)(sizeof(k_invalid) / sizeof(k_invalid[0])))
    return k_invalid[-30 - err];
  if (err == MR_CL_PLATFORM_NOT_FOUND_KHR) return "CL_PLATFORM_NOT_FOUND_KHR";
  return "unknown OpenCL error";
}

int mr_cl_fail(const char* what, cl_int err) {
  return mr_error_setf(kMrErrorRuntime, "opencl: %s failed: %s (%d)", what, error_name(err),
                       (int)err);
}

/* ---- the driver ---- */
/* Appends the devices of `type` on every platform; caller holds the mutex. */
static void add_devices(cl_platform_id* platforms, cl_uint nplat, cl_device_type type) {
  cl_uint p, n, i;
  cl_device_id ids[MR_MAX_DEVICE_IDS];
  for (p = 0; p < nplat && g_num_devices < MR_MAX_DEVICE_IDS; ++p) {
    if (g_fns.GetDeviceIDs(platforms[p], type, MR_MAX_DEVICE_IDS, ids, &n) != MR_CL_SUCCESS) continue;
    if (n > MR_MAX_DEVICE_IDS) n = MR_MAX_DEVICE_IDS;
    for (i = 0; i < n && g_num_devices < MR_MAX_DEVICE_IDS; ++i) g_devices[g_num_devices++].id = ids[i];
  }
}

/* Loads the library and lists the devices; caller holds the mutex. */
static void load_driver(void) {
  const char* name = mr_gpu_driver_name("MR_OPENCL_LIBRARY", "libOpenCL.so.1");
  cl_platform_id platforms[MR_CL_MAX_PLATFORMS];
  cl_uint nplat = 0;
  size_t i;
  void* lib = mr_dl_open(name);
  g_state = -1;
  if (!lib) {
    snprintf(g_error, sizeof(g_error), "%s not found: %s", name, mr_dl_error());
    return;
  }
  for (i = 0; i < sizeof(k_entries) / sizeof(k_entries[0]); ++i) {
    void* sym = mr_dl_sym(lib, k_entries[i].name);
    if (!sym) {
      snprintf(g_error, sizeof(g_error), "%s has no %s: not an OpenCL 1.2 driver", name,
               k_entries[i].name);
      return; /* the library stays loaded: it may be in use elsewhere in the process */
    }
    memcpy((char*)&g_fns + k_entries[i].offset, &sym, sizeof(sym));
  }
  g_state = 1;
  /* No platform (CL_PLATFORM_NOT_FOUND_KHR from the ICD loader): loaded, no device. */
  if (g_fns.GetPlatformIDs(MR_CL_MAX_PLATFORMS, platforms, &nplat) != MR_CL_SUCCESS) return;
  if (nplat > MR_CL_MAX_PLATFORMS) nplat = MR_CL_MAX_PLATFORMS;
  add_devices(platforms, nplat, MR_CL_DEVICE_TYPE_GPU);
  if (g_num_devices == 0) add_devices(platforms, nplat, MR_CL_DEVICE_TYPE_ALL);
}

/* 1 when the driver is loaded; it is tried once per process. */
static int driver_loaded(void) { return mr_gpu_driver_once(&g_cl_mutex, &g_state, load_driver); }

const mr_cl_fns_t* mr_cl_driver(void) {
  if (driver_loaded()) return &g_fns;
  mr_error_setf(kMrErrorRuntime, "opencl: %s", g_error);
  return NULL;
}

static cl_device_id device_handle(int32_t device_id) {
  return device_id >= 0 && device_id < g_num_devices ? g_devices[device_id].id : NULL;
}

static int no_device(int32_t device_id) {
  return mr_error_setf(kMrErrorRuntime, "opencl: device %d does not exist (%d device%s found)",
                       (int)device_id, (int)g_num_devices, g_num_devices == 1 ? "" : "s");
}

mr_cl_device_t* mr_cl_device(int32_t device_id) {
  mr_cl_device_t* d;
  cl_int err = MR_CL_SUCCESS;
  if (!mr_cl_driver()) return NULL;
  if (!device_handle(device_id)) {
    no_device(device_id);
    return NULL;
  }
  d = &g_devices[device_id];
  mr_mutex_lock(&g_cl_mutex);
  if (!d->context) d->context = g_fns.CreateContext(NULL, 1, &d->id, NULL, NULL, &err);
  if (d->context && !d->queue) d->queue = g_fns.CreateCommandQueue(d->context, d->id, 0, &err);
  mr_mutex_unlock(&g_cl_mutex);
  if (!d->queue) {
    mr_cl_fail(d->context ? "clCreateCommandQueue" : "clCreateContext", err);
    return NULL;
  }
  return d;
}

cl_command_queue mr_cl_queue(const mr_cl_device_t* d, void* stream) {
  return stream ? (cl_command_queue)stream : d->queue;
}

/* The stream a copy or sync without one uses: the thread's current one, else the default. */
static void* current_stream(DLDevice dev, void* stream) {
  return stream ? stream : TVMFFIEnvGetStream(kDLOpenCL, dev.device_id);
}

/* ---- attributes ---- */
static void set_int(TVMFFIAny* out, int64_t v) {
  out->type_index = kTVMFFIInt;
  out->v_int64 = v;
}

static int set_str(TVMFFIAny* out, const char* text) {
  TVMFFIObject* s;
  if (mr_str_create(text, strlen(text), &s) != 0) return -1;
  mr_any_set_object(out, s);
  return 0;
}

static int info(cl_device_id id, cl_device_info what, size_t size, void* value) {
  cl_int err = g_fns.GetDeviceInfo(id, what, size, value, NULL);
  return err == MR_CL_SUCCESS ? 0 : mr_cl_fail("clGetDeviceInfo", err);
}

static int info_uint(cl_device_id id, cl_device_info what, int64_t* out) {
  cl_uint v = 0;
  if (info(id, what, sizeof(v), &v) != 0) return -1;
  *out = (int64_t)v;
  return 0;
}

static int info_ulong(cl_device_id id, cl_device_info what, int64_t* out) {
  cl_ulong v = 0;
  if (info(id, what, sizeof(v), &v) != 0) return -1;
  *out = (int64_t)v;
  return 0;
}

static int info_string(cl_device_id id, cl_device_info what, TVMFFIAny* out) {
  char buf[1024];
  memset(buf, 0, sizeof(buf));
  if (info(id, what, sizeof(buf) - 1, buf) != 0) return -1;
  return set_str(out, buf);
}

/* "OpenCL <major>.<minor> <vendor>" -> "<major>.<minor>". */
static int compute_version(cl_device_id id, TVMFFIAny* out) {
  char buf[256], *p, *end;
  memset(buf, 0, sizeof(buf));
  if (info(id, MR_CL_DEVICE_VERSION, sizeof(buf) - 1, buf) != 0) return -1;
  p = strncmp(buf, "OpenCL ", 7) == 0 ? buf + 7 : buf;
  end = strchr(p, ' ');
  if (end) *end = '\0';
  return set_str(out, p);
}

static int thread_dims(cl_device_id id, TVMFFIAny* out) {
  size_t dims[3] = {0, 0, 0};
  char buf[96];
  if (info(id, MR_CL_DEVICE_MAX_WORK_ITEM_SIZES, sizeof(dims), dims) != 0) return -1;
  snprintf(buf, sizeof(buf), "[%zu, %zu, %zu]", dims[0], dims[1], dims[2]);
  return set_str(out, buf);
}

static int cl_get_attr(DLDevice dev, mr_device_attr_t attr, TVMFFIAny* out) {
  cl_device_id id;
  int64_t v = 0;
  memset(out, 0, sizeof(*out));
  if (attr == kMrDevExist) {
    set_int(out, driver_loaded() && device_handle(dev.device_id) != NULL);
    return 0;
  }
  if (!driver_loaded() || !(id = device_handle(dev.device_id))) return 0; /* None */
  switch (attr) {
    case kMrDevMaxThreadsPerBlock: {
      size_t n = 0;
      if (info(id, MR_CL_DEVICE_MAX_WORK_GROUP_SIZE, sizeof(n), &n) != 0) return -1;
      set_int(out, (int64_t)n);
      return 0;
    }
    case kMrDevWarpSize: set_int(out, 1); return 0;
    case kMrDevMaxSharedMemoryPerBlock:
      if (info_ulong(id, MR_CL_DEVICE_LOCAL_MEM_SIZE, &v) != 0) return -1;
      break;
    case kMrDevComputeVersion: return compute_version(id, out);
    case kMrDevDeviceName: return info_string(id, MR_CL_DEVICE_NAME, out);
    case kMrDevMaxClockRate: /* MHz in OpenCL, kHz as CUDA reports it */
      if (info_uint(id, MR_CL_DEVICE_MAX_CLOCK_FREQUENCY, &v) != 0) return -1;
      v *= 1000;
      break;
    case kMrDevMultiProcessorCount:
      if (info_uint(id, MR_CL_DEVICE_MAX_COMPUTE_UNITS, &v) != 0) return -1;
      break;
    case kMrDevMaxThreadDimensions: return thread_dims(id, out);
    case kMrDevApiVersion: set_int(out, 120); return 0; /* the OpenCL 1.2 API is all it uses */
    case kMrDevDriverVersion: return info_string(id, MR_CL_DRIVER_VERSION, out);
    case kMrDevL2CacheSizeBytes:
      if (info_ulong(id, MR_CL_DEVICE_GLOBAL_MEM_CACHE_SIZE, &v) != 0) return -1;
      break;
    case kMrDevTotalGlobalMemory:
      if (info_ulong(id, MR_CL_DEVICE_GLOBAL_MEM_SIZE, &v) != 0) return -1;
      break;
    default: return 0; /* None: no such property in OpenCL */
  }
  set_int(out, v);
  return 0;
}

/* ---- memory ---- */
static int cl_alloc(DLDevice dev, size_t nbytes, size_t alignment, DLDataType hint, void** out) {
  mr_cl_device_t* d = mr_cl_device(dev.device_id);
  cl_int err = MR_CL_SUCCESS;
  cl_mem mem;
  (void)alignment; /* buffers are aligned for every type the device has */
  (void)hint;
  if (!d) return -1;
  mem = g_fns.CreateBuffer(d->context, MR_CL_MEM_READ_WRITE, nbytes ? nbytes : 1, NULL, &err);
  if (!mem)
    return mr_error_setf(kMrErrorMemory, "opencl: cannot allocate %zu bytes on device %d: %s",
                         nbytes, (int)dev.device_id, error_name(err));
  *out = mem;
  return 0;
}

static int cl_free(DLDevice dev, void* ptr) {
  (void)dev;
  if (ptr && driver_loaded()) (void)g_fns.ReleaseMemObject((cl_mem)ptr);
  return 0;
}

static int check(cl_int err, const char* what) { return err == MR_CL_SUCCESS ? 0 : mr_cl_fail(what, err); }

/* Between two devices (two contexts): through host memory. */
static int copy_across(const DLTensor* from, DLTensor* to, size_t n) {
  mr_cl_device_t *src = mr_cl_device(from->device.device_id), *dst;
  void* host;
  int status;
  if (!src || !(dst = mr_cl_device(to->device.device_id))) return -1;
  host = malloc(n);
  if (!host) return mr_error_oom("a copy between OpenCL devices");
  status = check(g_fns.EnqueueReadBuffer(mr_cl_queue(src, current_stream(from->device, NULL)),
                                         (cl_mem)from->data, MR_CL_TRUE, from->byte_offset, n,
                                         host, 0, NULL, NULL), "clEnqueueReadBuffer");
  if (status == 0)
    status = check(g_fns.EnqueueWriteBuffer(mr_cl_queue(dst, current_stream(to->device, NULL)),
                                            (cl_mem)to->data, MR_CL_TRUE, to->byte_offset, n,
                                            host, 0, NULL, NULL), "clEnqueueWriteBuffer");
  free(host);
  return status;
}

static int cl_copy(const DLTensor* from, DLTensor* to, DLDevice dev, void* stream) {
  size_t n = mr_tensor_nbytes(from);
  int from_cl = from->device.device_type == kDLOpenCL, to_cl = to->device.device_type == kDLOpenCL;
  mr_cl_device_t* d;
  cl_command_queue q;
  if (from_cl && to_cl && from->device.device_id != to->device.device_id)
    return copy_across(from, to, n);
  if (!(d = mr_cl_device(dev.device_id))) return -1;
  q = mr_cl_queue(d, current_stream(dev, stream));
  if (from_cl && to_cl)
    return check(g_fns.EnqueueCopyBuffer(q, (cl_mem)from->data, (cl_mem)to->data,
                                         from->byte_offset, to->byte_offset, n, 0, NULL, NULL),
                 "clEnqueueCopyBuffer");
  if (to_cl) /* blocking: the host memory may go as soon as this returns */
    return check(g_fns.EnqueueWriteBuffer(q, (cl_mem)to->data, MR_CL_TRUE, to->byte_offset, n,
                                          (const char*)from->data + from->byte_offset, 0, NULL,
                                          NULL), "clEnqueueWriteBuffer");
  return check(g_fns.EnqueueReadBuffer(q, (cl_mem)from->data, MR_CL_TRUE, from->byte_offset, n,
                                       (char*)to->data + to->byte_offset, 0, NULL, NULL),
               "clEnqueueReadBuffer");
}

/* ---- streams ---- */
static int cl_stream_create(DLDevice dev, void** out) {
  mr_cl_device_t* d = mr_cl_device(dev.device_id);
  cl_int err = MR_CL_SUCCESS;
  cl_command_queue q;
  if (!d) return -1;
  q = g_fns.CreateCommandQueue(d->context, d->id, 0, &err);
  if (!q) return mr_cl_fail("clCreateCommandQueue", err);
  *out = q;
  return 0;
}

static int cl_stream_free(DLDevice dev, void* stream) {
  (void)dev;
  if (!stream) return 0;
  if (!mr_cl_driver()) return -1;
  return check(g_fns.ReleaseCommandQueue((cl_command_queue)stream), "clReleaseCommandQueue");
}

static int cl_stream_sync(DLDevice dev, void* stream) {
  mr_cl_device_t* d = mr_cl_device(dev.device_id);
  if (!d) return -1;
  return check(g_fns.Finish(mr_cl_queue(d, current_stream(dev, stream))), "clFinish");
}

static const mr_device_api_t k_opencl_api = {
    "opencl",         cl_get_attr,    cl_alloc,       cl_free, cl_copy,
    cl_stream_create, cl_stream_free, cl_stream_sync, NULL,    NULL,
};

const mr_device_api_t* mr_device_opencl_api(void) { return &k_opencl_api; }
