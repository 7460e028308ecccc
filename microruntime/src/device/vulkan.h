/* The Vulkan driver (libvulkan.so.1, the Khronos loader) as the backend uses it: the few
 * types and constants of the Vulkan 1.1 API it needs (written out: no SDK headers), the
 * entry points found with dlopen, the devices (each with a compute queue, a command
 * pool, one command buffer, a fence and a descriptor pool), and the buffers tensors hold.
 *
 * Launches are recorded, not submitted: a device's command buffer collects dispatches
 * (each followed by a compute-to-compute barrier, so kernels see their predecessors'
 * writes) until something needs their results or their memory: a copy, a free, a stream
 * sync, a module unload, a full batch (MR_VK_BATCH dispatches) or an exhausted descriptor
 * pool. Then mr_vk_flush submits the batch and waits for it; an error of a recorded launch
 * is reported there. */
#ifndef MR_DEVICE_VULKAN_H_
#define MR_DEVICE_VULKAN_H_

#include "gpu.h"

typedef int32_t VkResult;
typedef uint32_t VkFlags;
typedef uint32_t VkBool32;
typedef uint64_t VkDeviceSize;
typedef struct mr_vk_instance* VkInstance;
typedef struct mr_vk_physical_device* VkPhysicalDevice;
typedef struct mr_vk_device* VkDevice;
typedef struct mr_vk_queue* VkQueue;
typedef struct mr_vk_command_buffer* VkCommandBuffer;
typedef uint64_t VkBuffer; /* non-dispatchable handles: 64 bits everywhere */
typedef uint64_t VkDeviceMemory;
typedef uint64_t VkShaderModule;
typedef uint64_t VkDescriptorSetLayout;
typedef uint64_t VkPipelineLayout;
typedef uint64_t VkPipeline;
typedef uint64_t VkDescriptorPool;
typedef uint64_t VkDescriptorSet;
typedef uint64_t VkCommandPool;
typedef uint64_t VkFence;

#define MR_VK_SUCCESS 0
#define MR_VK_API_VERSION_1_1 ((1u << 22) | (1u << 12))
#define MR_VK_QUEUE_COMPUTE_BIT 0x2u
#define MR_VK_BUFFER_USAGE_TRANSFER_SRC 0x1u
#define MR_VK_BUFFER_USAGE_TRANSFER_DST 0x2u
#define MR_VK_BUFFER_USAGE_STORAGE 0x20u
#define MR_VK_MEMORY_DEVICE_LOCAL 0x1u
#define MR_VK_MEMORY_HOST_VISIBLE 0x2u
#define MR_VK_MEMORY_HOST_COHERENT 0x4u
#define MR_VK_DESCRIPTOR_STORAGE_BUFFER 7u
#define MR_VK_SHADER_STAGE_COMPUTE 0x20u
#define MR_VK_PIPELINE_BIND_POINT_COMPUTE 1u
#define MR_VK_COMMAND_POOL_RESET_BUFFER 0x2u
#define MR_VK_COMMAND_BUFFER_ONE_TIME_SUBMIT 0x1u
#define MR_VK_STAGE_COMPUTE_SHADER 0x800u
#define MR_VK_STAGE_HOST 0x4000u
#define MR_VK_ACCESS_SHADER_READ 0x20u
#define MR_VK_ACCESS_SHADER_WRITE 0x40u
#define MR_VK_ACCESS_HOST_READ 0x2000u
#define MR_VK_ACCESS_HOST_WRITE 0x4000u
#define MR_VK_WHOLE_SIZE (~(uint64_t)0)

enum { /* VkStructureType */
  MR_VK_ST_APPLICATION_INFO = 0,
  MR_VK_ST_INSTANCE_CREATE_INFO = 1,
  MR_VK_ST_DEVICE_QUEUE_CREATE_INFO = 2,
  MR_VK_ST_DEVICE_CREATE_INFO = 3,
  MR_VK_ST_SUBMIT_INFO = 4,
  MR_VK_ST_MEMORY_ALLOCATE_INFO = 5,
  MR_VK_ST_FENCE_CREATE_INFO = 8,
  MR_VK_ST_BUFFER_CREATE_INFO = 12,
  MR_VK_ST_SHADER_MODULE_CREATE_INFO = 16,
  MR_VK_ST_PIPELINE_SHADER_STAGE_CREATE_INFO = 18,
  MR_VK_ST_COMPUTE_PIPELINE_CREATE_INFO = 29,
  MR_VK_ST_PIPELINE_LAYOUT_CREATE_INFO = 30,
  MR_VK_ST_DESCRIPTOR_SET_LAYOUT_CREATE_INFO = 32,
  MR_VK_ST_DESCRIPTOR_POOL_CREATE_INFO = 33,
  MR_VK_ST_DESCRIPTOR_SET_ALLOCATE_INFO = 34,
  MR_VK_ST_WRITE_DESCRIPTOR_SET = 35,
  MR_VK_ST_COMMAND_POOL_CREATE_INFO = 39,
  MR_VK_ST_COMMAND_BUFFER_ALLOCATE_INFO = 40,
  MR_VK_ST_COMMAND_BUFFER_BEGIN_INFO = 42,
  MR_VK_ST_MEMORY_BARRIER = 46
};

typedef struct {
  int32_t sType;
  const void* pNext;
  const char* pApplicationName;
  uint32_t applicationVersion;
  const char* pEngineName;
  uint32_t engineVersion;
  uint32_t apiVersion;
} VkApplicationInfo;

typedef struct {
  int32_t sType;
  const void* pNext;
  VkFlags flags;
  const VkApplicationInfo* pApplicationInfo;
  uint32_t enabledLayerCount;
  const char* const* ppEnabledLayerNames;
  uint32_t enabledExtensionCount;
  const char* const* ppEnabledExtensionNames;
} VkInstanceCreateInfo;

/* VkPhysicalDeviceLimits up to the compute limits (the rest is never read). */
typedef struct {
  uint32_t maxImageDimension[4], maxImageArrayLayers, maxTexelBufferElements;
  uint32_t maxUniformBufferRange, maxStorageBufferRange, maxPushConstantsSize;
  uint32_t maxMemoryAllocationCount, maxSamplerAllocationCount;
  VkDeviceSize bufferImageGranularity, sparseAddressSpaceSize;
  uint32_t maxBoundDescriptorSets, maxPerStage[6], maxPerStageResources, maxDescriptorSet[8];
  uint32_t maxVertex[5], maxTessellation[8], maxGeometry[5], maxFragment[4];
  uint32_t maxComputeSharedMemorySize, maxComputeWorkGroupCount[3];
  uint32_t maxComputeWorkGroupInvocations, maxComputeWorkGroupSize[3];
} mr_vk_limits_t;

typedef union {
  struct {
    uint32_t apiVersion, driverVersion, vendorID, deviceID, deviceType;
    char deviceName[256];
    uint8_t pipelineCacheUUID[16];
    mr_vk_limits_t limits;
  } p;
  unsigned char room[2048]; /* VkPhysicalDeviceProperties is 824 bytes on LP64 */
} mr_vk_properties_t;

typedef struct {
  VkFlags queueFlags;
  uint32_t queueCount, timestampValidBits, granularity[3];
} VkQueueFamilyProperties;

typedef struct {
  uint32_t memoryTypeCount;
  struct {
    VkFlags propertyFlags;
    uint32_t heapIndex;
  } memoryTypes[32];
  uint32_t memoryHeapCount;
  struct {
    VkDeviceSize size;
    VkFlags flags;
  } memoryHeaps[16];
} VkPhysicalDeviceMemoryProperties;

typedef struct {
  int32_t sType;
  const void* pNext;
  VkFlags flags;
  uint32_t queueFamilyIndex, queueCount;
  const float* pQueuePriorities;
} VkDeviceQueueCreateInfo;

typedef struct {
  int32_t sType;
  const void* pNext;
  VkFlags flags;
  uint32_t queueCreateInfoCount;
  const VkDeviceQueueCreateInfo* pQueueCreateInfos;
  uint32_t enabledLayerCount;
  const char* const* ppEnabledLayerNames;
  uint32_t enabledExtensionCount;
  const char* const* ppEnabledExtensionNames;
  const VkBool32* pEnabledFeatures; /* a VkPhysicalDeviceFeatures: 55 VkBool32 */
} VkDeviceCreateInfo;

typedef struct {
  int32_t sType;
  const void* pNext;
  VkFlags flags;
  VkDeviceSize size;
  VkFlags usage;
  int32_t sharingMode;
  uint32_t queueFamilyIndexCount;
  const uint32_t* pQueueFamilyIndices;
} VkBufferCreateInfo;

typedef struct {
  VkDeviceSize size, alignment;
  uint32_t memoryTypeBits;
} VkMemoryRequirements;

typedef struct {
  int32_t sType;
  const void* pNext;
  VkDeviceSize allocationSize;
  uint32_t memoryTypeIndex;
} VkMemoryAllocateInfo;

typedef struct {
  int32_t sType;
  const void* pNext;
  VkFlags flags;
  size_t codeSize;
  const uint32_t* pCode;
} VkShaderModuleCreateInfo;

typedef struct {
  uint32_t binding;
  int32_t descriptorType;
  uint32_t descriptorCount;
  VkFlags stageFlags;
  const void* pImmutableSamplers;
} VkDescriptorSetLayoutBinding;

typedef struct {
  int32_t sType;
  const void* pNext;
  VkFlags flags;
  uint32_t bindingCount;
  const VkDescriptorSetLayoutBinding* pBindings;
} VkDescriptorSetLayoutCreateInfo;

typedef struct {
  VkFlags stageFlags;
  uint32_t offset, size;
} VkPushConstantRange;

typedef struct {
  int32_t sType;
  const void* pNext;
  VkFlags flags;
  uint32_t setLayoutCount;
  const VkDescriptorSetLayout* pSetLayouts;
  uint32_t pushConstantRangeCount;
  const VkPushConstantRange* pPushConstantRanges;
} VkPipelineLayoutCreateInfo;

typedef struct {
  int32_t sType;
  const void* pNext;
  VkFlags flags;
  VkFlags stage;
  VkShaderModule module;
  const char* pName;
  const void* pSpecializationInfo;
} VkPipelineShaderStageCreateInfo;

typedef struct {
  int32_t sType;
  const void* pNext;
  VkFlags flags;
  VkPipelineShaderStageCreateInfo stage;
  VkPipelineLayout layout;
  VkPipeline basePipelineHandle;
  int32_t basePipelineIndex;
} VkComputePipelineCreateInfo;

typedef struct {
  int32_t type;
  uint32_t descriptorCount;
} VkDescriptorPoolSize;

typedef struct {
  int32_t sType;
  const void* pNext;
  VkFlags flags;
  uint32_t maxSets, poolSizeCount;
  const VkDescriptorPoolSize* pPoolSizes;
} VkDescriptorPoolCreateInfo;

typedef struct {
  int32_t sType;
  const void* pNext;
  VkDescriptorPool descriptorPool;
  uint32_t descriptorSetCount;
  const VkDescriptorSetLayout* pSetLayouts;
} VkDescriptorSetAllocateInfo;

typedef struct {
  VkBuffer buffer;
  VkDeviceSize offset, range;
} VkDescriptorBufferInfo;

typedef struct {
  int32_t sType;
  const void* pNext;
  VkDescriptorSet dstSet;
  uint32_t dstBinding, dstArrayElement, descriptorCount;
  int32_t descriptorType;
  const void* pImageInfo;
  const VkDescriptorBufferInfo* pBufferInfo;
  const void* pTexelBufferView;
} VkWriteDescriptorSet;

typedef struct {
  int32_t sType;
  const void* pNext;
  VkFlags flags;
  uint32_t queueFamilyIndex;
} VkCommandPoolCreateInfo;

typedef struct {
  int32_t sType;
  const void* pNext;
  VkCommandPool commandPool;
  int32_t level;
  uint32_t commandBufferCount;
} VkCommandBufferAllocateInfo;

typedef struct {
  int32_t sType;
  const void* pNext;
  VkFlags flags;
  const void* pInheritanceInfo;
} VkCommandBufferBeginInfo;

typedef struct {
  int32_t sType;
  const void* pNext;
  uint32_t waitSemaphoreCount;
  const void* pWaitSemaphores;
  const VkFlags* pWaitDstStageMask;
  uint32_t commandBufferCount;
  const VkCommandBuffer* pCommandBuffers;
  uint32_t signalSemaphoreCount;
  const void* pSignalSemaphores;
} VkSubmitInfo;

typedef struct {
  int32_t sType;
  const void* pNext;
  VkFlags flags;
} VkFenceCreateInfo;

typedef struct {
  int32_t sType;
  const void* pNext;
  VkFlags srcAccessMask, dstAccessMask;
} VkMemoryBarrier;

/* VkExtensionProperties */
typedef struct {
  char extensionName[256];
  uint32_t specVersion;
} VkExtensionProperties;

/* The feature structures of vkGetPhysicalDeviceFeatures2 the backend chains (VkPhysicalDevice-
 * Features2 holds the 55 VkBool32 of VkPhysicalDeviceFeatures; the others at most 4). */
#define MR_VK_ST_PHYSICAL_DEVICE_FEATURES_2 1000059000
#define MR_VK_ST_16BIT_STORAGE_FEATURES 1000083000
#define MR_VK_ST_8BIT_STORAGE_FEATURES 1000177000
#define MR_VK_ST_FLOAT16_INT8_FEATURES 1000082000
typedef struct {
  int32_t sType;
  void* pNext;
  VkBool32 features[55];
} VkPhysicalDeviceFeatures2;
typedef struct {
  int32_t sType;
  void* pNext;
  VkBool32 flags[4];
} mr_vk_feature_struct_t;

/* The entry points (Vulkan 1.0 core; VKAPI_CALL is the C calling convention here). */
typedef struct {
  VkResult (*CreateInstance)(const VkInstanceCreateInfo*, const void*, VkInstance*);
  void (*DestroyInstance)(VkInstance, const void*);
  VkResult (*EnumeratePhysicalDevices)(VkInstance, uint32_t*, VkPhysicalDevice*);
  void (*GetPhysicalDeviceProperties)(VkPhysicalDevice, void*);
  void (*GetPhysicalDeviceFeatures2)(VkPhysicalDevice, VkPhysicalDeviceFeatures2*); /* 1.1 */
  VkResult (*EnumerateDeviceExtensionProperties)(VkPhysicalDevice, const char*, uint32_t*,
                                                 VkExtensionProperties*);
  void (*GetPhysicalDeviceQueueFamilyProperties)(VkPhysicalDevice, uint32_t*,
                                                 VkQueueFamilyProperties*);
  void (*GetPhysicalDeviceMemoryProperties)(VkPhysicalDevice, VkPhysicalDeviceMemoryProperties*);
  VkResult (*CreateDevice)(VkPhysicalDevice, const VkDeviceCreateInfo*, const void*, VkDevice*);
  void (*GetDeviceQueue)(VkDevice, uint32_t, uint32_t, VkQueue*);
  VkResult (*CreateBuffer)(VkDevice, const VkBufferCreateInfo*, const void*, VkBuffer*);
  void (*DestroyBuffer)(VkDevice, VkBuffer, const void*);
  void (*GetBufferMemoryRequirements)(VkDevice, VkBuffer, VkMemoryRequirements*);
  VkResult (*AllocateMemory)(VkDevice, const VkMemoryAllocateInfo*, const void*, VkDeviceMemory*);
  void (*FreeMemory)(VkDevice, VkDeviceMemory, const void*);
  VkResult (*BindBufferMemory)(VkDevice, VkBuffer, VkDeviceMemory, VkDeviceSize);
  VkResult (*MapMemory)(VkDevice, VkDeviceMemory, VkDeviceSize, VkDeviceSize, VkFlags, void**);
  VkResult (*CreateShaderModule)(VkDevice, const VkShaderModuleCreateInfo*, const void*,
                                 VkShaderModule*);
  void (*DestroyShaderModule)(VkDevice, VkShaderModule, const void*);
  VkResult (*CreateDescriptorSetLayout)(VkDevice, const VkDescriptorSetLayoutCreateInfo*,
                                        const void*, VkDescriptorSetLayout*);
  void (*DestroyDescriptorSetLayout)(VkDevice, VkDescriptorSetLayout, const void*);
  VkResult (*CreatePipelineLayout)(VkDevice, const VkPipelineLayoutCreateInfo*, const void*,
                                   VkPipelineLayout*);
  void (*DestroyPipelineLayout)(VkDevice, VkPipelineLayout, const void*);
  VkResult (*CreateComputePipelines)(VkDevice, uint64_t, uint32_t,
                                     const VkComputePipelineCreateInfo*, const void*,
                                     VkPipeline*);
  void (*DestroyPipeline)(VkDevice, VkPipeline, const void*);
  VkResult (*CreateDescriptorPool)(VkDevice, const VkDescriptorPoolCreateInfo*, const void*,
                                   VkDescriptorPool*);
  void (*DestroyDescriptorPool)(VkDevice, VkDescriptorPool, const void*);
  VkResult (*ResetDescriptorPool)(VkDevice, VkDescriptorPool, VkFlags);
  VkResult (*AllocateDescriptorSets)(VkDevice, const VkDescriptorSetAllocateInfo*,
                                     VkDescriptorSet*);
  void (*UpdateDescriptorSets)(VkDevice, uint32_t, const VkWriteDescriptorSet*, uint32_t,
                               const void*);
  VkResult (*CreateCommandPool)(VkDevice, const VkCommandPoolCreateInfo*, const void*,
                                VkCommandPool*);
  VkResult (*AllocateCommandBuffers)(VkDevice, const VkCommandBufferAllocateInfo*,
                                     VkCommandBuffer*);
  VkResult (*BeginCommandBuffer)(VkCommandBuffer, const VkCommandBufferBeginInfo*);
  VkResult (*EndCommandBuffer)(VkCommandBuffer);
  VkResult (*ResetCommandBuffer)(VkCommandBuffer, VkFlags);
  void (*CmdBindPipeline)(VkCommandBuffer, uint32_t, VkPipeline);
  void (*CmdBindDescriptorSets)(VkCommandBuffer, uint32_t, VkPipelineLayout, uint32_t, uint32_t,
                                const VkDescriptorSet*, uint32_t, const uint32_t*);
  void (*CmdPushConstants)(VkCommandBuffer, VkPipelineLayout, VkFlags, uint32_t, uint32_t,
                           const void*);
  void (*CmdDispatch)(VkCommandBuffer, uint32_t, uint32_t, uint32_t);
  void (*CmdPipelineBarrier)(VkCommandBuffer, VkFlags, VkFlags, VkFlags, uint32_t,
                             const VkMemoryBarrier*, uint32_t, const void*, uint32_t,
                             const void*);
  VkResult (*QueueSubmit)(VkQueue, uint32_t, const VkSubmitInfo*, VkFence);
  VkResult (*CreateFence)(VkDevice, const VkFenceCreateInfo*, const void*, VkFence*);
  VkResult (*WaitForFences)(VkDevice, uint32_t, const VkFence*, VkBool32, uint64_t);
  VkResult (*ResetFences)(VkDevice, uint32_t, const VkFence*);
} mr_vk_fns_t;

typedef struct {
  VkPhysicalDevice physical;
  mr_vk_properties_t props;
  VkPhysicalDeviceMemoryProperties memory;
  uint32_t queue_family;
  /* created at the device's first use: */
  VkDevice device;
  VkQueue queue;
  VkCommandPool pool;
  VkCommandBuffer cmd; /* one at a time: submissions wait for their fence */
  VkFence fence;
  VkDescriptorPool sets; /* the recorded dispatches' descriptor sets, reset at each flush */
  uint32_t memory_type; /* host-visible and coherent (device-local too when there is one) */
  uint32_t pending;     /* dispatches recorded since the last flush */
} mr_vk_device_t;

/* Dispatches per submission, and descriptors of the pool they take their sets from. */
#define MR_VK_BATCH 256u
#define MR_VK_BATCH_DESCRIPTORS (MR_VK_BATCH * 16u)

/* What a Vulkan tensor's data points to. The memory stays mapped: it is host visible and
 * coherent, so copies are memcpy once the device's work is done (launches wait for it). */
#define MR_VK_BUFFER_MAGIC 0x4B4C5642u /* "BVLK" */
typedef struct {
  uint32_t magic;
  int32_t device_id;
  VkBuffer buffer;
  VkDeviceMemory memory;
  void* mapped;
  size_t size;
} mr_vk_buffer_t;

/* The loaded driver, or NULL with an error naming the library and why it failed. The
 * library is MR_VULKAN_LIBRARY when set. */
const mr_vk_fns_t* mr_vk_driver(void);
/* The device with its queue, pool and fence (created now if needed), or NULL with an error. */
mr_vk_device_t* mr_vk_device(int32_t device_id);
/* Guards every device's command buffer, fence and descriptor pool. */
extern mr_mutex_t mr_vk_submit_mutex;
/* The command buffer of `d` ready to record into (begun if nothing is pending); the caller
 * holds mr_vk_submit_mutex. */
int mr_vk_record(mr_vk_device_t* d);
/* Submits what `d` has recorded and waits for it (nothing to do when nothing is pending);
 * the caller holds mr_vk_submit_mutex. */
int mr_vk_flush(mr_vk_device_t* d);
/* mr_vk_flush of device `device_id` (created if needed) under the mutex. */
int mr_vk_sync(int32_t device_id);
/* Records "vulkan: <what> failed: <result name> (<code>)" and returns -1. */
int mr_vk_fail(const char* what, VkResult err);

#endif /* MR_DEVICE_VULKAN_H_ */
