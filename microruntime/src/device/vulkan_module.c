/* Vulkan programs of device modules: for one device, at the first call of one of the
 * module's kernels there, one compute pipeline per function (its SPIR-V, checked at load,
 * as a shader module; a descriptor set layout with one storage buffer per buffer
 * argument, bindings in argument order; the scalar arguments as push constants, 8 bytes
 * each, TVM's layout) and a descriptor pool. A launch writes the descriptor set, records
 * bind / push / dispatch(grid) into the device's command buffer, submits it and waits on
 * the device's fence: kernels complete in order, before the call returns. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vulkan.h"

typedef struct {
  VkShaderModule shader;
  VkDescriptorSetLayout set_layout;
  VkPipelineLayout layout;
  VkPipeline pipeline;
  VkDescriptorPool pool;
  uint32_t num_buffers, num_scalars;
} mr_vk_kernel_t;

typedef struct {
  int32_t device_id;
  uint32_t num_kernels;
  mr_vk_kernel_t* kernels; /* one per function of the payload */
} mr_vk_program_t;

/* Guards the devices' command buffers, fences and the kernels' descriptor pools. */
static mr_mutex_t g_submit_mutex = MR_MUTEX_INIT;

static void program_free(void* self) {
  mr_vk_program_t* p = (mr_vk_program_t*)self;
  const mr_vk_fns_t* fn;
  mr_vk_device_t* d;
  uint32_t i;
  if (!p) return;
  fn = mr_vk_driver();
  d = fn ? mr_vk_device(p->device_id) : NULL;
  for (i = 0; d && i < p->num_kernels; ++i) {
    mr_vk_kernel_t* k = &p->kernels[i];
    if (k->pipeline) fn->DestroyPipeline(d->device, k->pipeline, NULL);
    if (k->layout) fn->DestroyPipelineLayout(d->device, k->layout, NULL);
    if (k->pool) fn->DestroyDescriptorPool(d->device, k->pool, NULL);
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
  VkDescriptorPoolCreateInfo dp;
  VkDescriptorPoolSize size;
  VkResult err;
  uint32_t i;
  char what[MR_MAX_NAME + 64];
  for (i = 0; i < f->num_args; ++i) {
    if (f->arg_types[i].code == kDLOpaqueHandle) ++k->num_buffers;
    else ++k->num_scalars;
  }
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
  size.type = MR_VK_DESCRIPTOR_STORAGE_BUFFER;
  size.descriptorCount = k->num_buffers ? k->num_buffers : 1;
  memset(&dp, 0, sizeof(dp));
  dp.sType = MR_VK_ST_DESCRIPTOR_POOL_CREATE_INFO;
  dp.maxSets = 1;
  dp.poolSizeCount = 1;
  dp.pPoolSizes = &size;
  if ((err = fn->CreateDescriptorPool(d->device, &dp, NULL, &k->pool)) != MR_VK_SUCCESS)
    return mr_vk_fail("vkCreateDescriptorPool", err);
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

static int record_and_run(const mr_vk_fns_t* fn, mr_vk_device_t* d, const mr_vk_kernel_t* k,
                          VkDescriptorSet set, const unsigned char* push, const mr_launch_t* l) {
  VkCommandBufferBeginInfo begin;
  VkSubmitInfo submit;
  VkMemoryBarrier barrier;
  VkResult err;
  memset(&begin, 0, sizeof(begin));
  begin.sType = MR_VK_ST_COMMAND_BUFFER_BEGIN_INFO;
  begin.flags = MR_VK_COMMAND_BUFFER_ONE_TIME_SUBMIT;
  if ((err = fn->ResetCommandBuffer(d->cmd, 0)) != MR_VK_SUCCESS ||
      (err = fn->BeginCommandBuffer(d->cmd, &begin)) != MR_VK_SUCCESS)
    return mr_vk_fail("vkBeginCommandBuffer", err);
  fn->CmdBindPipeline(d->cmd, MR_VK_PIPELINE_BIND_POINT_COMPUTE, k->pipeline);
  fn->CmdBindDescriptorSets(d->cmd, MR_VK_PIPELINE_BIND_POINT_COMPUTE, k->layout, 0, 1, &set, 0,
                            NULL);
  if (k->num_scalars)
    fn->CmdPushConstants(d->cmd, k->layout, MR_VK_SHADER_STAGE_COMPUTE, 0, k->num_scalars * 8,
                         push);
  fn->CmdDispatch(d->cmd, (uint32_t)l->grid[0], (uint32_t)l->grid[1], (uint32_t)l->grid[2]);
  /* the shader's writes become visible to the host (the buffers are mapped) */
  memset(&barrier, 0, sizeof(barrier));
  barrier.sType = MR_VK_ST_MEMORY_BARRIER;
  barrier.srcAccessMask = MR_VK_ACCESS_SHADER_WRITE;
  barrier.dstAccessMask = MR_VK_ACCESS_HOST_READ | MR_VK_ACCESS_HOST_WRITE;
  fn->CmdPipelineBarrier(d->cmd, MR_VK_STAGE_COMPUTE_SHADER, MR_VK_STAGE_HOST, 0, 1, &barrier,
                         0, NULL, 0, NULL);
  if ((err = fn->EndCommandBuffer(d->cmd)) != MR_VK_SUCCESS)
    return mr_vk_fail("vkEndCommandBuffer", err);
  memset(&submit, 0, sizeof(submit));
  submit.sType = MR_VK_ST_SUBMIT_INFO;
  submit.commandBufferCount = 1;
  submit.pCommandBuffers = &d->cmd;
  if ((err = fn->QueueSubmit(d->queue, 1, &submit, d->fence)) != MR_VK_SUCCESS)
    return mr_vk_fail("vkQueueSubmit", err);
  err = fn->WaitForFences(d->device, 1, &d->fence, 1, UINT64_MAX);
  (void)fn->ResetFences(d->device, 1, &d->fence);
  return err == MR_VK_SUCCESS ? 0 : mr_vk_fail("vkWaitForFences", err);
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
  VkDescriptorSetAllocateInfo alloc;
  VkDescriptorSet set;
  VkResult err;
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
  mr_mutex_lock(&g_submit_mutex); /* one submission at a time per command buffer */
  memset(&alloc, 0, sizeof(alloc));
  alloc.sType = MR_VK_ST_DESCRIPTOR_SET_ALLOCATE_INFO;
  alloc.descriptorPool = k->pool;
  alloc.descriptorSetCount = 1;
  alloc.pSetLayouts = &k->set_layout;
  if ((err = fn->ResetDescriptorPool(d->device, k->pool, 0)) != MR_VK_SUCCESS ||
      (err = fn->AllocateDescriptorSets(d->device, &alloc, &set)) != MR_VK_SUCCESS) {
    mr_mutex_unlock(&g_submit_mutex);
    status = mr_vk_fail("vkAllocateDescriptorSets", err);
    goto done;
  }
  for (i = 0; i < nb; ++i) write[i].dstSet = set;
  if (nb) fn->UpdateDescriptorSets(d->device, nb, write, 0, NULL);
  status = record_and_run(fn, d, k, set, push, l);
  mr_mutex_unlock(&g_submit_mutex);
done:
  if (info != infos) free(info);
  if (write != writes) free(write);
  return status;
}

const mr_gpu_backend_t mr_gpu_vulkan_backend = {"vulkan", kDLVulkan, program_create,
                                                program_free, launch};
