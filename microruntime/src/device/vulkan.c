/* The Vulkan device: the loader found with dlopen (libvulkan.so.1, or the library named
 * by MR_VULKAN_LIBRARY), one instance (Vulkan 1.1, no layers: validation is off), the
 * physical devices that have a compute queue (discrete GPUs first, then integrated,
 * virtual, CPU: lavapipe is a CPU device), per device a logical device with every
 * feature it has, a compute queue, a command pool with one command buffer and a fence;
 * buffers, copies and device attributes. Kernels are in vulkan_module.c.
 *
 * Memory: every buffer is host visible and coherent and stays mapped (device local too
 * where a memory type is both, as on integrated GPUs and lavapipe, where all memory is
 * host memory). That is the simplest correct choice: a copy is a memcpy, since a launch
 * returns only when the device has finished it. A discrete GPU would rather keep tensors
 * in device-local memory behind staging copies. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vulkan.h"

static mr_mutex_t g_vk_mutex = MR_MUTEX_INIT; /* guards the loading and device creation */
mr_mutex_t mr_vk_submit_mutex = MR_MUTEX_INIT;
static int g_state;                           /* 0 not tried, 1 loaded, -1 failed */
static char g_error[512];
static mr_vk_fns_t g_fns;
static VkInstance g_instance;
static mr_vk_device_t g_devices[MR_MAX_DEVICE_IDS];
static int32_t g_num_devices;

static const struct {
  const char* name;
  size_t offset;
} k_entries[] = {
#define MR_VK_ENTRY(n) {"vk" #n, offsetof(mr_vk_fns_t, n)}
    MR_VK_ENTRY(CreateInstance),
    MR_VK_ENTRY(DestroyInstance),
    MR_VK_ENTRY(EnumeratePhysicalDevices),
    MR_VK_ENTRY(GetPhysicalDeviceProperties),
    MR_VK_ENTRY(GetPhysicalDeviceFeatures2),
    MR_VK_ENTRY(EnumerateDeviceExtensionProperties),
    MR_VK_ENTRY(GetPhysicalDeviceQueueFamilyProperties),
    MR_VK_ENTRY(GetPhysicalDeviceMemoryProperties),
    MR_VK_ENTRY(CreateDevice),
    MR_VK_ENTRY(GetDeviceQueue),
    MR_VK_ENTRY(CreateBuffer),
    MR_VK_ENTRY(DestroyBuffer),
    MR_VK_ENTRY(GetBufferMemoryRequirements),
    MR_VK_ENTRY(AllocateMemory),
    MR_VK_ENTRY(FreeMemory),
    MR_VK_ENTRY(BindBufferMemory),
    MR_VK_ENTRY(MapMemory),
    MR_VK_ENTRY(CreateShaderModule),
    MR_VK_ENTRY(DestroyShaderModule),
    MR_VK_ENTRY(CreateDescriptorSetLayout),
    MR_VK_ENTRY(DestroyDescriptorSetLayout),
    MR_VK_ENTRY(CreatePipelineLayout),
    MR_VK_ENTRY(DestroyPipelineLayout),
    MR_VK_ENTRY(CreateComputePipelines),
    MR_VK_ENTRY(DestroyPipeline),
    MR_VK_ENTRY(CreateDescriptorPool),
    MR_VK_ENTRY(DestroyDescriptorPool),
    MR_VK_ENTRY(ResetDescriptorPool),
    MR_VK_ENTRY(AllocateDescriptorSets),
    MR_VK_ENTRY(UpdateDescriptorSets),
    MR_VK_ENTRY(CreateCommandPool),
    MR_VK_ENTRY(AllocateCommandBuffers),
    MR_VK_ENTRY(BeginCommandBuffer),
    MR_VK_ENTRY(EndCommandBuffer),
    MR_VK_ENTRY(ResetCommandBuffer),
    MR_VK_ENTRY(CmdBindPipeline),
    MR_VK_ENTRY(CmdBindDescriptorSets),
    MR_VK_ENTRY(CmdPushConstants),
    MR_VK_ENTRY(CmdDispatch),
    MR_VK_ENTRY(CmdPipelineBarrier),
    MR_VK_ENTRY(QueueSubmit),
    MR_VK_ENTRY(CreateFence),
    MR_VK_ENTRY(WaitForFences),
    MR_VK_ENTRY(ResetFences),
#undef MR_VK_ENTRY
};

/* ---- errors ---- */
static const char* result_name(VkResult r) {
  switch (r) {
    case 0: return "VK_SUCCESS";
    case 2: return "VK_TIMEOUT";
    case -1: return "VK_ERROR_OUT_OF_HOST_MEMORY";
    case -2: return "VK_ERROR_OUT_OF_DEVICE_MEMORY";
    case -3: return "VK_ERROR_INITIALIZATION_FAILED";
    case -4: return "VK_ERROR_DEVICE_LOST";
    case -5: return "VK_ERROR_MEMORY_MAP_FAILED";
    case -6: return "VK_ERROR_LAYER_NOT_PRESENT";
    case -7: return "VK_ERROR_EXTENSION_NOT_PRESENT";
    case -8: return "VK_ERROR_FEATURE_NOT_PRESENT";
    case -9: return "VK_ERROR_INCOMPATIBLE_DRIVER";
    case -10: return "VK_ERROR_TOO_MANY_OBJECTS";
    case -13: return "VK_ERROR_UNKNOWN";
    case -1000012000: return "VK_ERROR_INVALID_SHADER_NV";
    default: return "unknown Vulkan result";
  }
}

int mr_vk_fail(const char* what, VkResult err) {
  return mr_error_setf(kMrErrorRuntime, "vulkan: %s failed: %s (%d)", what, result_name(err),
                       (int)err);
}

/* ---- the driver ---- */
static int type_rank(uint32_t type) { /* discrete, integrated, virtual, CPU, other */
  static const int k_rank[5] = {4, 1, 0, 2, 3};
  return type < 5 ? k_rank[type] : 5;
}

static int compute_family(VkPhysicalDevice pd, uint32_t* out) {
  VkQueueFamilyProperties fams[32];
  uint32_t n = 32, i;
  g_fns.GetPhysicalDeviceQueueFamilyProperties(pd, &n, fams);
  for (i = 0; i < n && i < 32; ++i)
    if ((fams[i].queueFlags & MR_VK_QUEUE_COMPUTE_BIT) && fams[i].queueCount > 0) {
      *out = i;
      return 1;
    }
  return 0;
}

/* Creates the instance and lists the compute-capable devices; caller holds the mutex. */
static void load_driver(void) {
  const char* name = mr_gpu_driver_name("MR_VULKAN_LIBRARY", "libvulkan.so.1");
  VkApplicationInfo app;
  VkInstanceCreateInfo info;
  VkPhysicalDevice found[MR_MAX_DEVICE_IDS];
  uint32_t n = MR_MAX_DEVICE_IDS, i;
  int rank;
  VkResult err;
  size_t k;
  void* lib = mr_dl_open(name);
  g_state = -1;
  if (!lib) {
    snprintf(g_error, sizeof(g_error), "%s not found: %s", name, mr_dl_error());
    return;
  }
  for (k = 0; k < sizeof(k_entries) / sizeof(k_entries[0]); ++k) {
    void* sym = mr_dl_sym(lib, k_entries[k].name);
    if (!sym) {
      snprintf(g_error, sizeof(g_error), "%s has no %s: not a Vulkan loader", name,
               k_entries[k].name);
      return; /* the library stays loaded: it may be in use elsewhere in the process */
    }
    memcpy((char*)&g_fns + k_entries[k].offset, &sym, sizeof(sym));
  }
  memset(&app, 0, sizeof(app));
  app.sType = MR_VK_ST_APPLICATION_INFO;
  app.pApplicationName = "microruntime";
  app.pEngineName = "kiln";
  app.apiVersion = MR_VK_API_VERSION_1_1;
  memset(&info, 0, sizeof(info));
  info.sType = MR_VK_ST_INSTANCE_CREATE_INFO;
  info.pApplicationInfo = &app; /* no layers: validation is off */
  err = g_fns.CreateInstance(&info, NULL, &g_instance);
  if (err != MR_VK_SUCCESS) {
    snprintf(g_error, sizeof(g_error), "%s: vkCreateInstance (Vulkan 1.1) failed: %s (%d)",
             name, result_name(err), (int)err);
    return;
  }
  g_state = 1;
  err = g_fns.EnumeratePhysicalDevices(g_instance, &n, found);
  if (err != MR_VK_SUCCESS && err != 5 /* VK_INCOMPLETE */) n = 0;
  for (rank = 0; rank <= 5; ++rank) /* the order device ids follow */
    for (i = 0; i < n && g_num_devices < MR_MAX_DEVICE_IDS; ++i) {
      mr_vk_device_t* d = &g_devices[g_num_devices];
      uint32_t family;
      memset(&d->props, 0, sizeof(d->props));
      g_fns.GetPhysicalDeviceProperties(found[i], &d->props);
      if (type_rank(d->props.p.deviceType) != rank || !compute_family(found[i], &family))
        continue;
      d->physical = found[i];
      d->queue_family = family;
      g_fns.GetPhysicalDeviceMemoryProperties(found[i], &d->memory);
      ++g_num_devices;
    }
}

/* 1 when the driver is loaded; it is tried once per process. */
static int driver_loaded(void) { return mr_gpu_driver_once(&g_vk_mutex, &g_state, load_driver); }

const mr_vk_fns_t* mr_vk_driver(void) {
  if (driver_loaded()) return &g_fns;
  mr_error_setf(kMrErrorRuntime, "vulkan: %s", g_error);
  return NULL;
}

static int no_device(int32_t device_id) {
  return mr_error_setf(kMrErrorRuntime, "vulkan: device %d does not exist (%d compute-capable "
                       "device%s found)", (int)device_id, (int)g_num_devices,
                       g_num_devices == 1 ? "" : "s");
}

/* The memory type for buffers: host visible and coherent, device local as well if any. */
static int pick_memory(mr_vk_device_t* d) {
  const uint32_t need = MR_VK_MEMORY_HOST_VISIBLE | MR_VK_MEMORY_HOST_COHERENT;
  uint32_t i, best = UINT32_MAX;
  for (i = 0; i < d->memory.memoryTypeCount && i < 32; ++i) {
    VkFlags f = d->memory.memoryTypes[i].propertyFlags;
    if ((f & need) != need) continue;
    if (best == UINT32_MAX || ((f & MR_VK_MEMORY_DEVICE_LOCAL) &&
                               !(d->memory.memoryTypes[best].propertyFlags &
                                 MR_VK_MEMORY_DEVICE_LOCAL)))
      best = i;
  }
  if (best == UINT32_MAX)
    return mr_error_setf(kMrErrorRuntime, "vulkan: device '%s' has no host-visible coherent "
                         "memory", d->props.p.deviceName);
  d->memory_type = best;
  return 0;
}

static int create_descriptor_pool(mr_vk_device_t* d) {
  VkDescriptorPoolCreateInfo dp;
  VkDescriptorPoolSize size;
  VkResult err;
  size.type = MR_VK_DESCRIPTOR_STORAGE_BUFFER;
  size.descriptorCount = MR_VK_BATCH_DESCRIPTORS;
  memset(&dp, 0, sizeof(dp));
  dp.sType = MR_VK_ST_DESCRIPTOR_POOL_CREATE_INFO;
  dp.maxSets = MR_VK_BATCH;
  dp.poolSizeCount = 1;
  dp.pPoolSizes = &size;
  if ((err = g_fns.CreateDescriptorPool(d->device, &dp, NULL, &d->sets)) != MR_VK_SUCCESS)
    return mr_vk_fail("vkCreateDescriptorPool", err);
  return 0;
}

/* What kernels may use beyond Vulkan 1.0, enabled where the device has it: 16-bit storage
 * (core in 1.1), 8-bit storage and float16/int8 arithmetic (extensions before 1.2). */
typedef struct {
  VkPhysicalDeviceFeatures2 all; /* every 1.0 feature it has: int64, float64, int16... */
  mr_vk_feature_struct_t storage16, storage8, float16_int8;
  const char* extensions[2];
  uint32_t num_extensions;
} mr_vk_features_t;

static int has_extension(const VkExtensionProperties* list, uint32_t n, const char* name) {
  uint32_t i;
  for (i = 0; i < n; ++i)
    if (strcmp(list[i].extensionName, name) == 0) return 1;
  return 0;
}

static void chain(void** tail, mr_vk_feature_struct_t* f, int32_t type) {
  memset(f, 0, sizeof(*f));
  f->sType = type;
  *tail = f;
}

static int query_features(mr_vk_device_t* d, mr_vk_features_t* out) {
  VkExtensionProperties* list = NULL;
  uint32_t n = 0;
  void** tail;
  memset(out, 0, sizeof(*out));
  out->all.sType = MR_VK_ST_PHYSICAL_DEVICE_FEATURES_2;
  if (g_fns.EnumerateDeviceExtensionProperties(d->physical, NULL, &n, NULL) == MR_VK_SUCCESS &&
      n && (list = (VkExtensionProperties*)calloc(n, sizeof(*list))) == NULL)
    return mr_error_oom("the device's extension list");
  if (list && g_fns.EnumerateDeviceExtensionProperties(d->physical, NULL, &n, list) !=
                  MR_VK_SUCCESS)
    n = 0;
  chain(&out->all.pNext, &out->storage16, MR_VK_ST_16BIT_STORAGE_FEATURES);
  tail = &out->storage16.pNext;
  if (has_extension(list, n, "VK_KHR_8bit_storage")) {
    out->extensions[out->num_extensions++] = "VK_KHR_8bit_storage";
    chain(tail, &out->storage8, MR_VK_ST_8BIT_STORAGE_FEATURES);
    tail = &out->storage8.pNext;
  }
  if (has_extension(list, n, "VK_KHR_shader_float16_int8")) {
    out->extensions[out->num_extensions++] = "VK_KHR_shader_float16_int8";
    chain(tail, &out->float16_int8, MR_VK_ST_FLOAT16_INT8_FEATURES);
  }
  free(list);
  g_fns.GetPhysicalDeviceFeatures2(d->physical, &out->all);
  return 0;
}

/* Creates the logical device and its queue, pools, command buffer and fence; caller holds
 * the mutex. */
static int create_device(mr_vk_device_t* d) {
  mr_vk_features_t features;
  float priority = 1.0f;
  VkDeviceQueueCreateInfo q;
  VkDeviceCreateInfo info;
  VkCommandPoolCreateInfo pool;
  VkCommandBufferAllocateInfo alloc;
  VkFenceCreateInfo fence;
  VkResult err;
  if (pick_memory(d) != 0 || query_features(d, &features) != 0) return -1;
  memset(&q, 0, sizeof(q));
  q.sType = MR_VK_ST_DEVICE_QUEUE_CREATE_INFO;
  q.queueFamilyIndex = d->queue_family;
  q.queueCount = 1;
  q.pQueuePriorities = &priority;
  memset(&info, 0, sizeof(info));
  info.sType = MR_VK_ST_DEVICE_CREATE_INFO;
  info.queueCreateInfoCount = 1;
  info.pQueueCreateInfos = &q;
  info.pNext = &features.all; /* everything the device has, as queried */
  info.enabledExtensionCount = features.num_extensions;
  info.ppEnabledExtensionNames = features.extensions;
  if ((err = g_fns.CreateDevice(d->physical, &info, NULL, &d->device)) != MR_VK_SUCCESS)
    return mr_vk_fail("vkCreateDevice", err);
  g_fns.GetDeviceQueue(d->device, d->queue_family, 0, &d->queue);
  memset(&pool, 0, sizeof(pool));
  pool.sType = MR_VK_ST_COMMAND_POOL_CREATE_INFO;
  pool.flags = MR_VK_COMMAND_POOL_RESET_BUFFER;
  pool.queueFamilyIndex = d->queue_family;
  if ((err = g_fns.CreateCommandPool(d->device, &pool, NULL, &d->pool)) != MR_VK_SUCCESS)
    return mr_vk_fail("vkCreateCommandPool", err);
  memset(&alloc, 0, sizeof(alloc));
  alloc.sType = MR_VK_ST_COMMAND_BUFFER_ALLOCATE_INFO;
  alloc.commandPool = d->pool;
  alloc.commandBufferCount = 1;
  if ((err = g_fns.AllocateCommandBuffers(d->device, &alloc, &d->cmd)) != MR_VK_SUCCESS)
    return mr_vk_fail("vkAllocateCommandBuffers", err);
  memset(&fence, 0, sizeof(fence));
  fence.sType = MR_VK_ST_FENCE_CREATE_INFO;
  if (!d->sets && create_descriptor_pool(d) != 0) return -1;
  if ((err = g_fns.CreateFence(d->device, &fence, NULL, &d->fence)) != MR_VK_SUCCESS)
    return mr_vk_fail("vkCreateFence", err);
  return 0;
}

int mr_vk_record(mr_vk_device_t* d) {
  VkCommandBufferBeginInfo begin;
  VkResult err;
  if (d->pending) return 0;
  memset(&begin, 0, sizeof(begin));
  begin.sType = MR_VK_ST_COMMAND_BUFFER_BEGIN_INFO;
  begin.flags = MR_VK_COMMAND_BUFFER_ONE_TIME_SUBMIT;
  if ((err = g_fns.ResetCommandBuffer(d->cmd, 0)) != MR_VK_SUCCESS ||
      (err = g_fns.BeginCommandBuffer(d->cmd, &begin)) != MR_VK_SUCCESS)
    return mr_vk_fail("vkBeginCommandBuffer", err);
  return 0;
}

int mr_vk_flush(mr_vk_device_t* d) {
  VkSubmitInfo submit;
  VkMemoryBarrier barrier;
  VkResult err;
  if (!d->pending) return 0;
  d->pending = 0;
  /* the shaders' writes become visible to the host (the buffers are mapped) */
  memset(&barrier, 0, sizeof(barrier));
  barrier.sType = MR_VK_ST_MEMORY_BARRIER;
  barrier.srcAccessMask = MR_VK_ACCESS_SHADER_WRITE;
  barrier.dstAccessMask = MR_VK_ACCESS_HOST_READ | MR_VK_ACCESS_HOST_WRITE;
  g_fns.CmdPipelineBarrier(d->cmd, MR_VK_STAGE_COMPUTE_SHADER, MR_VK_STAGE_HOST, 0, 1,
                           &barrier, 0, NULL, 0, NULL);
  if ((err = g_fns.EndCommandBuffer(d->cmd)) != MR_VK_SUCCESS)
    return mr_vk_fail("vkEndCommandBuffer", err);
  memset(&submit, 0, sizeof(submit));
  submit.sType = MR_VK_ST_SUBMIT_INFO;
  submit.commandBufferCount = 1;
  submit.pCommandBuffers = &d->cmd;
  if ((err = g_fns.QueueSubmit(d->queue, 1, &submit, d->fence)) != MR_VK_SUCCESS)
    return mr_vk_fail("vkQueueSubmit", err);
  err = g_fns.WaitForFences(d->device, 1, &d->fence, 1, UINT64_MAX);
  (void)g_fns.ResetFences(d->device, 1, &d->fence);
  (void)g_fns.ResetDescriptorPool(d->device, d->sets, 0);
  return err == MR_VK_SUCCESS ? 0 : mr_vk_fail("vkWaitForFences", err);
}

int mr_vk_sync(int32_t device_id) {
  mr_vk_device_t* d = mr_vk_device(device_id);
  int status;
  if (!d) return -1;
  mr_mutex_lock(&mr_vk_submit_mutex);
  status = mr_vk_flush(d);
  mr_mutex_unlock(&mr_vk_submit_mutex);
  return status;
}

mr_vk_device_t* mr_vk_device(int32_t device_id) {
  mr_vk_device_t* d;
  int status = 0;
  if (!mr_vk_driver()) return NULL;
  if (device_id < 0 || device_id >= g_num_devices) {
    no_device(device_id);
    return NULL;
  }
  d = &g_devices[device_id];
  mr_mutex_lock(&g_vk_mutex);
  if (!d->fence) status = create_device(d); /* a failed step is retried at the next use */
  mr_mutex_unlock(&g_vk_mutex);
  return status == 0 ? d : NULL;
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

static int vk_get_attr(DLDevice dev, mr_device_attr_t attr, TVMFFIAny* out) {
  const mr_vk_device_t* d;
  const mr_vk_limits_t* lim;
  char buf[96];
  uint32_t v, i;
  uint64_t total = 0;
  memset(out, 0, sizeof(*out));
  if (attr == kMrDevExist) {
    set_int(out, driver_loaded() && dev.device_id >= 0 && dev.device_id < g_num_devices);
    return 0;
  }
  if (!driver_loaded() || dev.device_id < 0 || dev.device_id >= g_num_devices) return 0;
  d = &g_devices[dev.device_id];
  lim = &d->props.p.limits;
  v = d->props.p.apiVersion;
  switch (attr) {
    case kMrDevMaxThreadsPerBlock: set_int(out, lim->maxComputeWorkGroupInvocations); return 0;
    case kMrDevWarpSize: set_int(out, 1); return 0; /* subgroups are not used */
    case kMrDevMaxSharedMemoryPerBlock: set_int(out, lim->maxComputeSharedMemorySize); return 0;
    case kMrDevComputeVersion:
      snprintf(buf, sizeof(buf), "%u.%u", (unsigned)(v >> 22), (unsigned)((v >> 12) & 0x3FF));
      return set_str(out, buf);
    case kMrDevDeviceName: return set_str(out, d->props.p.deviceName);
    case kMrDevMaxThreadDimensions:
      snprintf(buf, sizeof(buf), "[%u, %u, %u]", (unsigned)lim->maxComputeWorkGroupSize[0],
               (unsigned)lim->maxComputeWorkGroupSize[1],
               (unsigned)lim->maxComputeWorkGroupSize[2]);
      return set_str(out, buf);
    case kMrDevApiVersion: set_int(out, (int64_t)v); return 0;
    case kMrDevDriverVersion:
      snprintf(buf, sizeof(buf), "%u", (unsigned)d->props.p.driverVersion);
      return set_str(out, buf);
    case kMrDevTotalGlobalMemory:
      for (i = 0; i < d->memory.memoryHeapCount && i < 16; ++i)
        if (d->memory.memoryHeaps[i].flags & 1u) total += d->memory.memoryHeaps[i].size;
      set_int(out, (int64_t)total);
      return 0;
    default: return 0; /* None: no such property in Vulkan */
  }
}

/* ---- memory ---- */
static int vk_alloc(DLDevice dev, size_t nbytes, size_t alignment, DLDataType hint, void** out) {
  mr_vk_device_t* d = mr_vk_device(dev.device_id);
  VkBufferCreateInfo info;
  VkMemoryRequirements req;
  VkMemoryAllocateInfo mem;
  mr_vk_buffer_t* b;
  VkResult err;
  (void)alignment; /* buffers start at offset 0 of their own allocation */
  (void)hint;
  if (!d) return -1;
  b = (mr_vk_buffer_t*)calloc(1, sizeof(*b));
  if (!b) return mr_error_oom("a Vulkan buffer");
  b->magic = MR_VK_BUFFER_MAGIC;
  b->device_id = dev.device_id;
  b->size = nbytes;
  memset(&info, 0, sizeof(info));
  info.sType = MR_VK_ST_BUFFER_CREATE_INFO;
  info.size = nbytes ? nbytes : 4;
  info.usage = MR_VK_BUFFER_USAGE_STORAGE | MR_VK_BUFFER_USAGE_TRANSFER_SRC |
               MR_VK_BUFFER_USAGE_TRANSFER_DST;
  if ((err = g_fns.CreateBuffer(d->device, &info, NULL, &b->buffer)) != MR_VK_SUCCESS) {
    free(b);
    return mr_error_setf(kMrErrorMemory, "vulkan: cannot create a buffer of %zu bytes on "
                         "device %d: %s", nbytes, (int)dev.device_id, result_name(err));
  }
  g_fns.GetBufferMemoryRequirements(d->device, b->buffer, &req);
  memset(&mem, 0, sizeof(mem));
  mem.sType = MR_VK_ST_MEMORY_ALLOCATE_INFO;
  mem.allocationSize = req.size;
  mem.memoryTypeIndex = d->memory_type;
  err = g_fns.AllocateMemory(d->device, &mem, NULL, &b->memory);
  if (err == MR_VK_SUCCESS) err = g_fns.BindBufferMemory(d->device, b->buffer, b->memory, 0);
  if (err == MR_VK_SUCCESS)
    err = g_fns.MapMemory(d->device, b->memory, 0, MR_VK_WHOLE_SIZE, 0, &b->mapped);
  if (err != MR_VK_SUCCESS) {
    if (b->memory) g_fns.FreeMemory(d->device, b->memory, NULL);
    g_fns.DestroyBuffer(d->device, b->buffer, NULL);
    free(b);
    return mr_error_setf(kMrErrorMemory, "vulkan: cannot allocate %zu bytes on device %d: %s",
                         nbytes, (int)dev.device_id, result_name(err));
  }
  *out = b;
  return 0;
}

static int vk_free(DLDevice dev, void* ptr) {
  mr_vk_buffer_t* b = (mr_vk_buffer_t*)ptr;
  mr_vk_device_t* d;
  (void)dev;
  if (!b) return 0;
  if (b->magic == MR_VK_BUFFER_MAGIC && driver_loaded() && b->device_id >= 0 &&
      b->device_id < g_num_devices && (d = &g_devices[b->device_id])->device) {
    (void)mr_vk_sync(b->device_id); /* recorded launches may still use it */
    g_fns.FreeMemory(d->device, b->memory, NULL); /* unmaps it */
    g_fns.DestroyBuffer(d->device, b->buffer, NULL);
  }
  b->magic = 0;
  free(b);
  return 0;
}

/* The host address of a tensor's bytes (Vulkan buffers are mapped). */
static int host_view(const DLTensor* t, size_t n, char** out) {
  if (t->device.device_type != kDLVulkan) {
    *out = (char*)t->data + t->byte_offset;
    return 0;
  }
  {
    const mr_vk_buffer_t* b = (const mr_vk_buffer_t*)t->data;
    if (!b || b->magic != MR_VK_BUFFER_MAGIC)
      return mr_value_error("vulkan: a tensor on vulkan(%d) does not hold a Vulkan buffer",
                            (int)t->device.device_id);
    if (t->byte_offset > b->size || n > b->size - t->byte_offset)
      return mr_value_error("vulkan: a copy of %zu bytes at offset %llu overruns a buffer of "
                            "%zu bytes", n, (unsigned long long)t->byte_offset, b->size);
    *out = (char*)b->mapped + t->byte_offset;
  }
  return 0;
}

static int sync_if_vulkan(DLDevice dev) {
  return dev.device_type == kDLVulkan ? mr_vk_sync(dev.device_id) : 0;
}

static int same_device(DLDevice a, DLDevice b) {
  return a.device_type == b.device_type && a.device_id == b.device_id;
}

/* The recorded launches of the devices involved complete first; the memory is then idle
 * and mapped, so a copy is a memcpy. */
static int vk_copy(const DLTensor* from, DLTensor* to, DLDevice dev, void* stream) {
  size_t n = mr_tensor_nbytes(from);
  char *src, *dst;
  (void)dev;
  (void)stream;
  if (n == 0) return 0;
  if (sync_if_vulkan(from->device) != 0 ||
      (!same_device(from->device, to->device) && sync_if_vulkan(to->device) != 0))
    return -1;
  if (host_view(from, n, &src) != 0 || host_view(to, n, &dst) != 0) return -1;
  memmove(dst, src, n);
  return 0;
}

/* ---- streams: one queue per device; a sync completes what was recorded ---- */
static int vk_stream_create(DLDevice dev, void** out) {
  if (!mr_vk_device(dev.device_id)) return -1;
  *out = NULL; /* the device's queue */
  return 0;
}

static int vk_stream_free(DLDevice dev, void* stream) {
  (void)dev;
  (void)stream;
  return 0;
}

static int vk_stream_sync(DLDevice dev, void* stream) {
  (void)stream;
  return mr_vk_sync(dev.device_id);
}

static const mr_device_api_t k_vulkan_api = {
    "vulkan",         vk_get_attr,    vk_alloc,       vk_free, vk_copy,
    vk_stream_create, vk_stream_free, vk_stream_sync, NULL,    NULL,
};

const mr_device_api_t* mr_device_vulkan_api(void) { return &k_vulkan_api; }
