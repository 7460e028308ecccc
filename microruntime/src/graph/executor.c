/* The graph executor's state: storage slots allocated as planned, one DLTensor
 * per graph entry viewing its slot, and per op its kernel (bound once) and its
 * argument list (inputs then outputs, as DLTensor*). Inputs are copied in, or
 * used in place (zero copy), or shared with another executor (share_params);
 * run calls the ops in order. Calls from several threads are serialized by the
 * executor's lock (executor.h). */
#include <stdlib.h>
#include <string.h>

#include <stdio.h>

#include "executor.h"

#define MR_ERROR_FILE kMrFileGraphExecutor

static void executor_free(void* self) {
  mr_graph_executor_t* ex = (mr_graph_executor_t*)self;
  uint32_t i;
  if (!ex) return;
  mr_graph_arena_release(ex);
  for (i = 0; ex->ops && i < ex->num_ops; ++i) mr_object_release(ex->ops[i].func);
  for (i = 0; ex->slots && i < ex->g->num_storage; ++i) mr_object_release(ex->slots[i]);
  for (i = 0; ex->ext && i < ex->g->num_entries; ++i) mr_object_release(ex->ext[i]);
  mr_object_release(ex->lib);
  free(ex->entries); /* and every array after it (alloc_arrays) */
  if (ex->owner) {
    mr_object_release(ex->owner);
  } else {
    free((void*)ex->json);
    mr_graph_free(ex->g);
  }
  mr_mutex_destroy(&ex->lock);
  free(ex);
}

/* The executor's device of `device_type`; 0 or none such: the first one, as TVM, except
 * that entries the graph places on the CPU (device_index 1: ops that stay on the host of a
 * GPU model) get CPU memory even when the executor was given only the GPU. */
static DLDevice pick_device(const mr_graph_executor_t* ex, int32_t device_type) {
  int i;
  DLDevice cpu = {kDLCPU, 0};
  for (i = 0; device_type && i < ex->num_devs; ++i)
    if (ex->devs[i].device_type == device_type) return ex->devs[i];
  return device_type == kDLCPU ? cpu : ex->devs[0];
}

/* Slot s over a linked param's data in the library (read only, never freed). */
static int linked_slot(mr_graph_executor_t* ex, uint32_t s, const DLTensor* param) {
  if (pick_device(ex, ex->g->storage_device[s]).device_type != kDLCPU)
    return MR_GRAPH_FAIL("storage slot %u holds a linked param, in CPU memory, but the graph "
                         "places it on device type %d", (unsigned)s,
                         (int)pick_device(ex, ex->g->storage_device[s]).device_type);
  ex->slot_data[s] = param->data;
  return 0;
}

/* Slot s as a uint8 tensor (borrowed): the one allocated for it, or one made now over the
 * memory of a slot in the arena or of a linked param (CPU memory the tensor does not own). */
static int slot_tensor(mr_graph_executor_t* ex, uint32_t s, TVMFFIObject** out) {
  DLTensor dl;
  if (!ex->slots[s]) {
    memset(&dl, 0, sizeof(dl));
    dl.data = ex->slot_data[s];
    dl.device.device_type = kDLCPU;
    dl.ndim = 1;
    dl.dtype.code = kDLUInt;
    dl.dtype.bits = 8;
    dl.dtype.lanes = 1;
    dl.shape = (int64_t*)&ex->g->storage_bytes[s];
    if (mr_tensor_wrap(&dl, NULL, mr_graph_no_release, &ex->slots[s]) != 0) return -1;
  }
  *out = ex->slots[s];
  return 0;
}

static int alloc_storage(mr_graph_executor_t* ex, const DLTensor* const* linked) {
  const mr_graph_t* g = ex->g;
  DLDataType u8 = {kDLUInt, 8, 1};
  DLDevice cpu = {kDLCPU, 0};
  uint32_t s, e;
  for (s = 0; s < g->num_storage; ++s) {
    int64_t n = (int64_t)g->storage_bytes[s];
    if (linked && linked[s] ? linked_slot(ex, s, linked[s])
        : ex->arena         ? mr_graph_arena_slot(ex, s)
                            : mr_tensor_create(1, &n, u8, pick_device(ex, g->storage_device[s]),
                                               &ex->slots[s]))
      return -1;
    if (ex->slots[s]) ex->slot_data[s] = mr_tensor_dl(ex->slots[s])->data;
  }
  for (e = 0; e < g->num_entries; ++e) {
    const mr_graph_entry_t* en = &g->entries[e];
    DLTensor* t = &ex->entries[e];
    t->data = ex->slot_data[en->storage_id];
    t->device = ex->slots[en->storage_id] ? mr_tensor_dl(ex->slots[en->storage_id])->device : cpu;
    t->ndim = en->ndim;
    t->dtype = en->dtype;
    t->shape = g->shapes + en->shape_at;
  }
  return 0;
}

/* The executor's arrays, zeroed, in one block that starts at ex->entries (each part at an
 * 8-byte aligned offset): entries, op arguments, flattened arguments, ops, slot tensors,
 * slot memory, external tensors, input flags, from-params flags. */
static int alloc_arrays(mr_graph_executor_t* ex) {
  const mr_graph_t* g = ex->g;
  uint32_t nid, num_ops = 0, args = 0, flat = 0, i;
  uint64_t part[9], at[10];
  unsigned char* p;
  for (nid = 0; nid < g->num_nodes; ++nid)
    if (g->nodes[nid].func_name) {
      uint32_t n = g->nodes[nid].num_inputs + g->nodes[nid].num_outputs;
      ++num_ops;
      args += n;
      flat += g->nodes[nid].flatten ? n : 0;
    }
  part[0] = (uint64_t)g->num_entries * sizeof(DLTensor);
  part[1] = (uint64_t)args * sizeof(TVMFFIAny);
  part[2] = (uint64_t)flat * sizeof(mr_graph_flat_arg_t);
  part[3] = (uint64_t)num_ops * sizeof(mr_graph_op_t);
  part[4] = part[5] = (uint64_t)g->num_storage * sizeof(void*);
  part[6] = (uint64_t)g->num_entries * sizeof(void*);
  part[7] = g->num_args;
  part[8] = g->num_entries;
  for (at[0] = 0, i = 0; i < 9; ++i) at[i + 1] = at[i] + ((part[i] + 7) & ~(uint64_t)7);
  if (at[9] >= SIZE_MAX || !(p = (unsigned char*)calloc(1, (size_t)at[9] + 8)))
    return MR_OOM("a graph executor");
  ex->entries = (DLTensor*)p;
  ex->op_any = (TVMFFIAny*)(p + at[1]);
  ex->flat = (mr_graph_flat_arg_t*)(p + at[2]);
  ex->ops = (mr_graph_op_t*)(p + at[3]);
  ex->slots = (TVMFFIObject**)(p + at[4]);
  ex->slot_data = (void**)(p + at[5]);
  ex->ext = (TVMFFIObject**)(p + at[6]);
  ex->arg_flags = p + at[7];
  ex->from_params = p + at[8];
  return 0;
}

/* Binds each op node's function and lays out its arguments. */
static int bind_ops(mr_graph_executor_t* ex) {
  const mr_graph_t* g = ex->g;
  uint32_t nid, i, k = 0;
  for (nid = 0; nid < g->num_nodes; ++nid) {
    const mr_graph_node_t* node = &g->nodes[nid];
    mr_graph_op_t* op = &ex->ops[ex->num_ops];
    if (!node->func_name) continue;
    ++ex->num_ops;
    op->nid = nid;
    op->first = k;
    op->n = node->num_inputs + node->num_outputs;
    for (i = 0; i < op->n; ++i, ++k) {
      uint32_t eid = i < node->num_inputs ? g->inputs[node->first_input + i]
                                          : g->row_ptr[nid] + i - node->num_inputs;
      ex->op_any[k].type_index = kTVMFFIDLTensorPtr;
      ex->op_any[k].v_ptr = &ex->entries[eid];
      if (node->flatten) {
        mr_graph_flat_arg_t* f = &ex->flat[ex->num_flat++];
        f->eid = eid;
        f->len = (int64_t)(g->entries[eid].nbytes / mr_dtype_bytes(g->entries[eid].dtype));
        f->t = ex->entries[eid];
        f->t.ndim = 1;
        f->t.shape = &f->len;
        ex->op_any[k].v_ptr = &f->t;
      }
    }
    op->kind = node->kind;
    if (op->kind == MR_GRAPH_OP_CALL) {
      if (mr_module_get_function(ex->lib, node->func_name, 1, &op->func) != 0) return -1;
      if (!op->func)
        return MR_GRAPH_FAIL("node %u ('%s'): function '%s' is not in the module or its "
                             "imports", (unsigned)nid, node->name, node->func_name);
    }
  }
  return 0;
}

static int executor_get_function(void* self, const char* name, TVMFFIObject** out) {
  mr_graph_lookup_fn lookup = mr_atomic_load_int(&mr_graph_executor_lookup);
  *out = NULL;
  return lookup ? lookup(self, name, out) : 0;
}

int mr_graph_executor_new(const char* json, size_t size, TVMFFIObject* lib, const DLDevice* devs,
                          int num_devices, TVMFFIObject** out_module) {
  mr_graph_t* g;
  if (mr_graph_parse(json, size, &g) != 0) return -1;
  return mr_graph_executor_new_in(g, NULL, json, size, lib, devs, num_devices, NULL, 0, NULL,
                                  out_module);
}

int mr_graph_executor_new_in(mr_graph_t* g, TVMFFIObject* owner, const char* json, size_t size,
                             TVMFFIObject* lib, const DLDevice* devs, int num_devices,
                             void* arena, size_t arena_bytes, const DLTensor* const* linked,
                             TVMFFIObject** out_module) {
  mr_graph_executor_t* ex = NULL;
  if (!lib || mr_object_type_index(lib) != kTVMFFIModule)
    MR_RAISE(kMrErrorType, "graph executor: the kernel library is not a Module");
  else if (num_devices < 1 || num_devices > MR_MAX_GRAPH_DEVICES)
    MR_VALUE_ERROR("graph executor: %d devices (1 to %d)", num_devices, MR_MAX_GRAPH_DEVICES);
  else if (!(ex = (mr_graph_executor_t*)calloc(1, sizeof(*ex))))
    MR_OOM("a graph executor");
  if (!ex) {
    if (!owner) mr_graph_free(g);
    return -1;
  }
  mr_mutex_init_recursive(&ex->lock);
  ex->g = g;
  ex->owner = owner;
  mr_object_retain(owner);
  ex->lib = lib;
  mr_object_retain(lib);
  memcpy(ex->devs, devs, (size_t)num_devices * sizeof(DLDevice));
  ex->num_devs = num_devices;
  ex->params_changed = 1;
  ex->json = owner ? json : mr_strndup(json, size);
  ex->json_size = size;
  ex->arena = (unsigned char*)arena;
  ex->arena_size = arena_bytes;
  if (!ex->json) {
    MR_OOM("a graph executor");
    goto fail;
  }
  if (alloc_arrays(ex) != 0 || alloc_storage(ex, linked) != 0 || bind_ops(ex) != 0 ||
      mr_module_create("GraphExecutor", ex, executor_get_function, executor_free,
                       &ex->module) != 0)
    goto fail;
  *out_module = ex->module;
  return 0;
fail:
  executor_free(ex);
  return -1;
}

mr_graph_executor_t* mr_graph_executor_of(TVMFFIObject* module) {
  mr_module_obj_t* m = mr_module_cast(module);
  if (!m || m->get_function != executor_get_function) {
    MR_RAISE(kMrErrorType, "not a GraphExecutor module");
    return NULL;
  }
  return (mr_graph_executor_t*)m->self;
}

const mr_graph_t* mr_graph_executor_graph(const mr_graph_executor_t* ex) { return ex->g; }

/* ---- inputs and outputs ---- */
int mr_graph_check_value(const char* func, const char* what, const DLTensor* want,
                         const DLTensor* got) {
  int32_t d;
  int same = got->ndim == want->ndim && got->dtype.code == want->dtype.code &&
             got->dtype.bits == want->dtype.bits && got->dtype.lanes == want->dtype.lanes;
  for (d = 0; same && d < got->ndim; ++d) same = got->shape[d] == want->shape[d];
  if (same) return 0;
#ifdef MR_CONFIG_SMALL
  return MR_GRAPH_FAIL("%s %s", func, what);
#else
  {
    char a[256], b[256];
    mr_graph_describe(want->shape, want->ndim, want->dtype, a, sizeof(a));
    mr_graph_describe(got->shape, got->ndim, got->dtype, b, sizeof(b));
    return MR_GRAPH_FAIL("%s: %s expects %s, got %s", func, what, a, b);
  }
#endif
}

/* Points entry eid (and every op argument that is that entry) at `data`, held
 * by `ext` (NULL: the slot's own memory, or a caller's DLTensor*). */
void mr_graph_set_entry_data(mr_graph_executor_t* ex, uint32_t eid, void* data, TVMFFIObject* ext) {
  uint32_t k;
  if (ext) mr_object_retain(ext);
  mr_object_release(ex->ext[eid]);
  ex->ext[eid] = ext;
  ex->entries[eid].data = data;
  for (k = 0; k < ex->num_flat; ++k)
    if (ex->flat[k].eid == eid) ex->flat[k].t.data = data;
}

static void* slot_data(const mr_graph_executor_t* ex, uint32_t eid) {
  return ex->slot_data[ex->g->entries[eid].storage_id];
}

int mr_graph_executor_set_arg(mr_graph_executor_t* ex, uint32_t arg, const DLTensor* value,
                              int is_param) {
  uint32_t eid = mr_graph_arg_entry(ex->g, arg);
  char what[MR_MAX_NAME + 16];
  if (mr_graph_executor_check_settable(ex, "set_input", arg) != 0 ||
      mr_graph_check_value("set_input",
                           MR_MESSAGE_TEXT(what, "input '%s'", ex->g->nodes[ex->g->args[arg]].name),
                           &ex->entries[eid], value) != 0)
    return -1;
  mr_graph_set_entry_data(ex, eid, slot_data(ex, eid), NULL);
  if (mr_tensor_copy(value, &ex->entries[eid], NULL) != 0) return -1;
  mr_graph_executor_arg_set(ex, arg, MR_GRAPH_ARG_SET | (is_param ? MR_GRAPH_ARG_PARAM : 0));
  return 0;
}

int mr_graph_executor_check_settable(const mr_graph_executor_t* ex, const char* func,
                                     uint32_t arg) {
  if (!(ex->arg_flags[arg] & MR_GRAPH_ARG_LINKED)) return 0;
  return MR_GRAPH_FAIL("%s: parameter '%s' is linked into the kernel library as constant data "
                       "(read in place) and cannot be set; build the model with link-params "
                       "off to change its weights", func, ex->g->nodes[ex->g->args[arg]].name);
}

void mr_graph_executor_arg_set(mr_graph_executor_t* ex, uint32_t arg, uint8_t flags) {
  ex->arg_flags[arg] |= flags;
  if (ex->arg_flags[arg] & MR_GRAPH_ARG_PARAM) ex->params_changed = 1;
}

int mr_graph_executor_zero_copy(mr_graph_executor_t* ex, const char* func, uint32_t eid,
                                const char* what, const TVMFFIAny* value) {
  DLTensor* t = value->type_index == kTVMFFITensor ? mr_tensor_dl(value->v_obj)
                                                    : (DLTensor*)value->v_ptr;
  const DLTensor* e = &ex->entries[eid];
  char* data = (char*)t->data + t->byte_offset;
  if (mr_graph_check_value(func, what, e, t) != 0) return -1;
  if (!mr_tensor_is_compact(t)) return MR_GRAPH_FAIL("%s: %s must be compact", func, what);
  if (((uintptr_t)data) % MR_DATA_ALIGNMENT)
    return MR_GRAPH_FAIL("%s: %s must be %d-byte aligned", func, what, MR_DATA_ALIGNMENT);
  if (t->device.device_type != e->device.device_type || t->device.device_id != e->device.device_id)
    return MR_GRAPH_FAIL("%s: %s must be on device (%d, %d), not (%d, %d)", func, what,
                         (int)e->device.device_type, (int)e->device.device_id,
                         (int)t->device.device_type, (int)t->device.device_id);
  mr_graph_set_entry_data(ex, eid, data, value->type_index == kTVMFFITensor ? value->v_obj : NULL);
  return 0;
}

int mr_graph_executor_entry(mr_graph_executor_t* ex, uint32_t eid, TVMFFIObject** out) {
  const DLTensor* e = &ex->entries[eid];
  TVMFFIObject* slot;
  if (ex->ext[eid]) { /* a caller's tensor, or one shared from another executor */
    mr_object_retain(ex->ext[eid]);
    *out = ex->ext[eid];
    return 0;
  }
  if (e->data != slot_data(ex, eid)) /* a caller's DLTensor*: borrowed */
    return mr_tensor_wrap(e, NULL, mr_graph_no_release, out);
  if (slot_tensor(ex, ex->g->entries[eid].storage_id, &slot) != 0) return -1;
  return mr_tensor_view(slot, e->ndim, e->shape, e->dtype, 0, out);
}

void mr_graph_no_release(void* owner) { (void)owner; }

/* ---- running ---- */
int mr_graph_run_op(mr_graph_executor_t* ex, const mr_graph_op_t* op) {
  TVMFFIAny result;
  int status = 0;
  if (op->kind == MR_GRAPH_OP_NOP) return 0;
  if (op->kind == MR_GRAPH_OP_COPY) {
    status = mr_tensor_copy(mr_graph_op_arg(ex, op->first), mr_graph_op_arg(ex, op->first + 1),
                            NULL);
  } else {
    memset(&result, 0, sizeof(result));
    status = mr_function_call(op->func, ex->op_any + op->first, (int32_t)op->n, &result);
    if (status == 0) mr_any_clear(&result);
  }
#ifndef MR_CONFIG_SMALL /* the small build keeps the kernel's error as it is */
  if (status != 0) {
    const mr_graph_node_t* node = &ex->g->nodes[op->nid];
    char buf[MR_MAX_ERROR_MESSAGE], kind[MR_MAX_ERROR_KIND];
    snprintf(kind, sizeof(kind), "%s", mr_last_error_kind());
    snprintf(buf, sizeof(buf), "node %u ('%s', function '%s'): %s", (unsigned)op->nid,
             node->name, node->func_name, mr_last_error());
    return mr_error_set(kind, buf);
  }
#endif
  return status;
}

int mr_graph_executor_check_inputs(const mr_graph_executor_t* ex, const char* func) {
  uint32_t i;
  for (i = 0; i < ex->g->num_args; ++i)
    if (!(ex->arg_flags[i] & MR_GRAPH_ARG_SET))
      return MR_GRAPH_FAIL("%s: input '%s' was never set (set_input, load_params or "
                           "share_params)", func, ex->g->nodes[ex->g->args[i]].name);
  return 0;
}

/* Whether op's outputs each have a slot no other entry shares. */
static int owns_its_slots(const mr_graph_executor_t* ex, const mr_graph_node_t* node,
                          uint32_t first_out) {
  uint32_t k, e;
  for (k = 0; k < node->num_outputs; ++k)
    for (e = 0; e < ex->g->num_entries; ++e)
      if (e != first_out + k &&
          ex->g->entries[e].storage_id == ex->g->entries[first_out + k].storage_id)
        return 0;
  return 1;
}

/* The ops that read parameters alone (or what such ops computed) into slots of their own
 * compute the same outputs until a parameter is set again (a weight transformed at load):
 * after one is, they run first, once; every run skips them otherwise. Which ops they are
 * depends on which inputs are parameters (load_params, share_params), so it is decided
 * here. */
static int run_of_params(mr_graph_executor_t* ex) {
  const mr_graph_t* g = ex->g;
  uint32_t i, j;
  memset(ex->from_params, 0, g->num_entries);
  for (i = 0; i < g->num_args; ++i)
    if (ex->arg_flags[i] & MR_GRAPH_ARG_PARAM) ex->from_params[mr_graph_arg_entry(g, i)] = 1;
  for (i = 0; i < ex->num_ops; ++i) {
    mr_graph_op_t* op = &ex->ops[i];
    const mr_graph_node_t* node = &g->nodes[op->nid];
    uint32_t first_out = g->row_ptr[op->nid];
    int of_params = op->kind == MR_GRAPH_OP_CALL && node->num_inputs > 0;
    for (j = 0; of_params && j < node->num_inputs; ++j)
      of_params = ex->from_params[g->inputs[node->first_input + j]];
    op->of_params = (uint8_t)(of_params && owns_its_slots(ex, node, first_out));
    if (!op->of_params) continue;
    for (j = 0; j < node->num_outputs; ++j) ex->from_params[first_out + j] = 1;
    if (mr_graph_run_op(ex, op) != 0) return -1;
  }
  ex->params_changed = 0;
  return 0;
}

int mr_graph_executor_run_upto(mr_graph_executor_t* ex, uint32_t last_nid) {
  uint32_t i;
  if (mr_graph_executor_check_inputs(ex, "run") != 0) return -1;
  if (ex->params_changed && run_of_params(ex) != 0) return -1;
  for (i = 0; i < ex->num_ops && ex->ops[i].nid <= last_nid; ++i)
    if (!ex->ops[i].of_params && mr_graph_run_op(ex, &ex->ops[i]) != 0) return -1;
  return 0;
}
