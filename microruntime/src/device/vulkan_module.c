/* Vulkan programs of device modules: for one device, at the first call of one of the
 * module's kernels there, one compute pipeline per function (its SPIR-V, checked at load,
 * as a shader module; a descriptor set layout with one storage buffer per buffer
 * argument, bindings in argument order; the scalar arguments as push constants, 8 bytes
 * each, TVM's layout). A launch takes a descriptor set from the device's pool, writes it,
 * and records bind / push / dispatch(grid) / barrier into the device's command buffer;
 * kernels run in order when the batch is flushed (see vulkan.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vulkan.h"

typedef struct {
  VkShaderModule shader;
  VkDescriptorSetLayout set_layout;
  VkPipelineLayout layout;
  VkPipeline pipeline;
  uint32_t num_buffers, num_scalars;
} mr_vk_kernel_t;

typedef struct {
  int32_t device_id;
  uint32_t num_kernels;
  mr_vk_kernel_t* kernels; /* one per function of the payload */
} mr_vk_program_t;

static void program_free(void* self) {
  mr_vk_program_t* p = (mr_vk_program_t*)self;
  const mr_vk_fns_t* fn;
  mr_vk_device_t* d;
  uint32_t i;
  if (!p) return;
  fn = mr_vk_driver();
  d = fn ? mr_vk_device(p->device_id) : NULL;
  if (d) (void)mr_vk_sync(p->device_id); /* recorded launches may still use the pipelines */
  for (i = 0; d && i < p->num_kernels; ++i) {
    mr_vk_kernel_t* k = &p->kernels[i];
    if (k->pipeline) fn->DestroyPipeline(d->device, k->pipeline, NULL);
    if (k->layout) fn->DestroyPipelineLayout(d->device, k->layout, NULL);
    if (k->set_layout) fn->DestroyDescriptorSetLayout(d->device, k->set_layout, NULL);
    if (k->shader) fn->DestroyShaderModule(d->device, k->shader, NULL);
  }
  free(p->kernels);
  free(p);
}

static int kernel_create(const mr_vk_fns_t* fn, const mr_vk_device_t* d,
                         const mr_gpu_payload_t* payload, uint32_t index, mr_vk_kernel_t* k) {
  const mr_gpu_func_t* f = &payload->funcs[index];
  VkDescriptorSetLayoutBinding* binds;
  VkShaderModuleCreateInfo sm;
  VkDescriptorSetLayoutCreateInfo sl;
  VkPipelineLayoutCreateInfo pl;
  VkPushConstantRange range;
  VkComputePipelineCreateInfo cp;
  VkResult err;
  uint32_t i;
  char what[MR_MAX_NAME + 64];
  for (i = 0; i < f->num_args; ++i) {
    if (f->arg_types[i].code == kDLOpaqueHandle) ++k->num_buffers;
    else ++k->num_scalars;
  }
  if (k->num_buffers > d->props.p.limits.maxPerStage[2])
    return mr_error_setf(kMrErrorRuntime, "vulkan: kernel '%s' takes %u array arguments, more "
                         "than the %u storage buffers a shader of device '%s' can bind "
                         "(maxPerStageDescriptorStorageBuffers); build it with fewer inputs "
                         "per kernel (target attribute max_function_args)", f->name,
                         (unsigned)k->num_buffers, (unsigned)d->props.p.limits.maxPerStage[2],
                         d->props.p.deviceName);
  if (k->num_scalars * 8 > d->props.p.limits.maxPushConstantsSize)
    return mr_error_setf(kMrErrorRuntime, "vulkan: kernel '%s' takes %u scalar arguments (%u "
                         "bytes of push constants), more than the %u bytes device '%s' has",
                         f->name, (unsigned)k->num_scalars, (unsigned)(k->num_scalars * 8),
                         (unsigned)d->props.p.limits.maxPushConstantsSize,
                         d->props.p.deviceName);
  memset(&sm, 0, sizeof(sm));
  sm.sType = MR_VK_ST_SHADER_MODULE_CREATE_INFO;
  sm.codeSize = f->code_bytes;
  sm.pCode = (const uint32_t*)(const void*)(payload->code + f->code_offset);
  if ((err = fn->CreateShaderModule(d->device, &sm, NULL, &k->shader)) != MR_VK_SUCCESS) {
    snprintf(what, sizeof(what), "vkCreateShaderModule of kernel '%s'", f->name);
    return mr_vk_fail(what, err);
  }
  binds = (VkDescriptorSetLayoutBinding*)calloc(k->num_buffers + 1, sizeof(*binds));
  if (!binds) return mr_error_oom("descriptor bindings");
  for (i = 0; i < k->num_buffers; ++i) {
    binds[i].binding = i;
    binds[i].descriptorType = MR_VK_DESCRIPTOR_STORAGE_BUFFER;
    binds[i].descriptorCount = 1;
    binds[i].stageFlags = MR_VK_SHADER_STAGE_COMPUTE;
  }
  memset(&sl, 0, sizeof(sl));
  sl.sType = MR_VK_ST_DESCRIPTOR_SET_LAYOUT_CREATE_INFO;
  sl.bindingCount = k->num_buffers;
  sl.pBindings = binds;
  err = fn->CreateDescriptorSetLayout(d->device, &sl, NULL, &k->set_layout);
  free(binds);
  if (err != MR_VK_SUCCESS) return mr_vk_fail("vkCreateDescriptorSetLayout", err);
  range.stageFlags = MR_VK_SHADER_STAGE_COMPUTE;
  range.offset = 0;
  range.size = k->num_scalars * 8;
  memset(&pl, 0, sizeof(pl));
  pl.sType = MR_VK_ST_PIPELINE_LAYOUT_CREATE_INFO;
  pl.setLayoutCount = 1;
  pl.pSetLayouts = &k->set_layout;
  pl.pushConstantRangeCount = k->num_scalars ? 1 : 0;
  pl.pPushConstantRanges = &range;
  if ((err = fn->CreatePipelineLayout(d->device, &pl, NULL, &k->layout)) != MR_VK_SUCCESS)
    return mr_vk_fail("vkCreatePipelineLayout", err);
  memset(&cp, 0, sizeof(cp));
  cp.sType = MR_VK_ST_COMPUTE_PIPELINE_CREATE_INFO;
  cp.stage.sType = MR_VK_ST_PIPELINE_SHADER_STAGE_CREATE_INFO;
  cp.stage.stage = MR_VK_SHADER_STAGE_COMPUTE;
  cp.stage.module = k->shader;
  cp.stage.pName = f->name;
  cp.layout = k->layout;
  cp.basePipelineIndex = -1;
  if ((err = fn->CreateComputePipelines(d->device, 0, 1, &cp, NULL, &k->pipeline)) !=
      MR_VK_SUCCESS) {
    snprintf(what, sizeof(what), "creating the pipeline of kernel '%s'", f->name);
    return mr_vk_fail(what, err);
  }
  return 0;
}

static int program_create(int32_t device_id, const mr_gpu_payload_t* payload, void** out) {
  mr_vk_device_t* d = mr_vk_device(device_id);
  const mr_vk_fns_t* fn = mr_vk_driver();
  mr_vk_program_t* p;
  uint32_t i;
  if (!d || !fn) return -1;
  p = (mr_vk_program_t*)calloc(1, sizeof(*p));
  if (!p || !(p->kernels = (mr_vk_kernel_t*)calloc(payload->num_funcs + 1,
                                                   sizeof(mr_vk_kernel_t)))) {
    free(p);
    return mr_error_oom("a Vulkan program");
  }
  p->device_id = device_id;
  for (i = 0; i < payload->num_funcs; ++i) {
    p->num_kernels = i + 1;
    if (kernel_create(fn, d, payload, i, &p->kernels[i]) != 0) {
      program_free(p);
      return -1;
    }
  }
  *out = p;
  return 0;
}

/* The 8-byte push-constant slot of a scalar argument (integers of 32 bits or fewer as a
 * sign-extended int32 in the low bytes, float32 in the low bytes, 64-bit values whole). */
static void pack_scalar(DLDataType t, const mr_kernel_arg_t* a, unsigned char* slot) {
  int32_t i32;
  memset(slot, 0, 8);
  if (t.bits == 64) {
    memcpy(slot, &a->v, 8);
    return;
  }
  if (t.code == kDLFloat) {
    memcpy(slot, &a->v.f32, 4);
    return;
  }
  i32 = t.bits == 32 ? a->v.i32 : t.bits == 16 ? (int32_t)a->v.i16 : (int32_t)a->v.i8;
  memcpy(slot, &i32, 4);
}

/* Records the dispatch of kernel `k` with descriptor set `set`; caller holds the mutex. */
static void record(const mr_vk_fns_t* fn, mr_vk_device_t* d, const mr_vk_kernel_t* k,
                   VkDescriptorSet set, const unsigned char* push, const mr_launch_t* l) {
  VkMemoryBarrier barrier;
  fn->CmdBindPipeline(d->cmd, MR_VK_PIPELINE_BIND_POINT_COMPUTE, k->pipeline);
  fn->CmdBindDescriptorSets(d->cmd, MR_VK_PIPELINE_BIND_POINT_COMPUTE, k->layout, 0, 1, &set, 0,
                            NULL);
  if (k->num_scalars)
    fn->CmdPushConstants(d->cmd, k->layout, MR_VK_SHADER_STAGE_COMPUTE, 0, k->num_scalars * 8,
                         push);
  fn->CmdDispatch(d->cmd, (uint32_t)l->grid[0], (uint32_t)l->grid[1], (uint32_t)l->grid[2]);
  /* the next dispatch sees this one's writes */
  memset(&barrier, 0, sizeof(barrier));
  barrier.sType = MR_VK_ST_MEMORY_BARRIER;
  barrier.srcAccessMask = MR_VK_ACCESS_SHADER_WRITE;
  barrier.dstAccessMask = MR_VK_ACCESS_SHADER_READ | MR_VK_ACCESS_SHADER_WRITE;
  fn->CmdPipelineBarrier(d->cmd, MR_VK_STAGE_COMPUTE_SHADER, MR_VK_STAGE_COMPUTE_SHADER, 0, 1,
                         &barrier, 0, NULL, 0, NULL);
  ++d->pending;
}

/* A descriptor set of layout `k` from the device's pool, flushing the batch first when the
 * pool (or the batch) is full; caller holds the mutex. */
static int take_set(const mr_vk_fns_t* fn, mr_vk_device_t* d, const mr_vk_kernel_t* k,
                    VkDescriptorSet* set) {
  VkDescriptorSetAllocateInfo alloc;
  VkResult err;
  if (d->pending >= MR_VK_BATCH && mr_vk_flush(d) != 0) return -1;
  memset(&alloc, 0, sizeof(alloc));
  alloc.sType = MR_VK_ST_DESCRIPTOR_SET_ALLOCATE_INFO;
  alloc.descriptorPool = d->sets;
  alloc.descriptorSetCount = 1;
  alloc.pSetLayouts = &k->set_layout;
  if (fn->AllocateDescriptorSets(d->device, &alloc, set) == MR_VK_SUCCESS) return 0;
  if (d->pending == 0 && k->num_buffers > MR_VK_BATCH_DESCRIPTORS)
    return mr_value_error("vulkan: a kernel with %u buffer arguments exceeds the %u "
                          "descriptors of a batch", (unsigned)k->num_buffers,
                          (unsigned)MR_VK_BATCH_DESCRIPTORS);
  if (mr_vk_flush(d) != 0) return -1; /* the pool is full: complete the batch, reuse it */
  if ((err = fn->AllocateDescriptorSets(d->device, &alloc, set)) != MR_VK_SUCCESS)
    return mr_vk_fail("vkAllocateDescriptorSets", err);
  return 0;
}

static int launch(void* self, const mr_gpu_payload_t* payload, uint32_t index,
                  const mr_kernel_arg_t* args, const mr_launch_t* l) {
  mr_vk_program_t* p = (mr_vk_program_t*)self;
  const mr_gpu_func_t* f = &payload->funcs[index];
  const mr_vk_kernel_t* k = &p->kernels[index];
  const mr_vk_fns_t* fn = mr_vk_driver();
  mr_vk_device_t* d = mr_vk_device(l->device_id);
  VkDescriptorBufferInfo infos[64], *info = infos;
  VkWriteDescriptorSet writes[64], *write = writes;
  unsigned char push[128 * 8];
  VkDescriptorSet set;
  uint32_t i, nb = 0, ns = 0;
  int status = -1;
  if (!fn || !d) return -1;
  if (k->num_scalars > sizeof(push) / 8)
    return mr_value_error("vulkan: kernel '%s' has too many scalar arguments", f->name);
  if (k->num_buffers > 64) {
    info = (VkDescriptorBufferInfo*)calloc(k->num_buffers, sizeof(*info));
    write = (VkWriteDescriptorSet*)calloc(k->num_buffers, sizeof(*write));
    if (!info || !write) {
      status = mr_error_oom("descriptor writes");
      goto done;
    }
  }
  for (i = 0; i < f->num_args; ++i) {
    if (f->arg_types[i].code != kDLOpaqueHandle) {
      pack_scalar(f->arg_types[i], &args[i], push + 8 * ns++);
      continue;
    }
    {
      const mr_vk_buffer_t* b = (const mr_vk_buffer_t*)args[i].v.ptr;
      if (!b || b->magic != MR_VK_BUFFER_MAGIC || b->device_id != l->device_id) {
        status = mr_value_error("vulkan: kernel '%s': argument %u is not a buffer on "
                                "vulkan(%d) (a tensor allocated on that device)", f->name,
                                (unsigned)i, (int)l->device_id);
        goto done;
      }
      memset(&info[nb], 0, sizeof(info[nb]));
      info[nb].buffer = b->buffer;
      info[nb].range = MR_VK_WHOLE_SIZE;
      memset(&write[nb], 0, sizeof(write[nb]));
      write[nb].sType = MR_VK_ST_WRITE_DESCRIPTOR_SET;
      write[nb].dstBinding = nb;
      write[nb].descriptorCount = 1;
      write[nb].descriptorType = MR_VK_DESCRIPTOR_STORAGE_BUFFER;
      write[nb].pBufferInfo = &info[nb];
      ++nb;
    }
  }
  mr_mutex_lock(&mr_vk_submit_mutex);
  if ((status = take_set(fn, d, k, &set)) == 0 && (status = mr_vk_record(d)) == 0) {
    for (i = 0; i < nb; ++i) write[i].dstSet = set;
    if (nb) fn->UpdateDescriptorSets(d->device, nb, write, 0, NULL);
    record(fn, d, k, set, push, l);
  }
  mr_mutex_unlock(&mr_vk_submit_mutex);
done:
  if (info != infos) free(info);
  if (write != writes) free(write);
  return status;
}

const mr_gpu_backend_t mr_gpu_vulkan_backend = {"vulkan", kDLVulkan, program_create,
                                                program_free, launch};
