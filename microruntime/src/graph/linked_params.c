/* Linked params: weights a kernel library holds as constant data (a link-params build),
 * which the executor reads where they lie instead of copying them from the payload. The
 * library's packed function "kiln_linked_param"(storage_id) returns the DLTensor* of the
 * weight stored in that slot (or None); each is checked here once, when the factory is
 * checked, against the graph's entry, so a library that disagrees with its graph is an
 * error at load, not a wrong read at run. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "executor.h"

#define MR_ERROR_FILE kMrFileGraphLinkedParams

/* The library's tensor for input `arg`, checked (see graph.h). */
static int lookup_one(TVMFFIObject* fn, const mr_graph_t* g, uint32_t arg, const DLTensor** out) {
  uint32_t eid = mr_graph_arg_entry(g, arg), e;
  const mr_graph_entry_t* en = &g->entries[eid];
  const char* name = g->nodes[g->args[arg]].name;
  TVMFFIAny sid, result;
  DLTensor want, *t;
  char what[MR_MAX_NAME + 32];
  memset(&sid, 0, sizeof(sid));
  memset(&result, 0, sizeof(result));
  sid.type_index = kTVMFFIInt;
  sid.v_int64 = (int64_t)en->storage_id;
  if (mr_function_call(fn, &sid, 1, &result) != 0) return MR_GRAPH_REFAIL("kiln_linked_param");
  if (result.type_index != kTVMFFIDLTensorPtr || !result.v_ptr) {
    mr_any_clear(&result);
    return MR_GRAPH_FAIL("linked param '%s': the library holds no tensor for storage slot %u",
                         name, (unsigned)en->storage_id);
  }
  t = (DLTensor*)result.v_ptr;
  memset(&want, 0, sizeof(want));
  want.ndim = en->ndim;
  want.dtype = en->dtype;
  want.shape = g->shapes + en->shape_at;
  if (mr_graph_check_value("GraphExecutorFactory", MR_MESSAGE_TEXT(what, "linked param '%s'", name),
                           &want, t) != 0)
    return -1;
  if (t->device.device_type != kDLCPU || t->strides || t->byte_offset || !t->data ||
      ((uintptr_t)t->data) % MR_DATA_ALIGNMENT)
    return MR_GRAPH_FAIL("linked param '%s': the library's tensor is not compact CPU data at a "
                         "%d-byte boundary", name, MR_DATA_ALIGNMENT);
  if ((en->device_type && en->device_type != kDLCPU) ||
      g->storage_bytes[en->storage_id] != en->nbytes)
    return MR_GRAPH_FAIL("linked param '%s': its storage slot %u is not a CPU slot of its size",
                         name, (unsigned)en->storage_id);
  for (e = 0; e < g->num_entries; ++e)
    if (e != eid && g->entries[e].storage_id == en->storage_id)
      return MR_GRAPH_FAIL("linked param '%s': storage slot %u is shared with entry %u; a "
                           "linked param's slot holds it alone", name, (unsigned)en->storage_id,
                           (unsigned)e);
  *out = t;
  return 0;
}

static int any_marked(const uint8_t* flags, uint32_t n) {
  while (flags && n--)
    if (flags[n]) return 1;
  return 0;
}

int mr_graph_linked_resolve(TVMFFIObject* lib, const mr_graph_t* g, const uint8_t* linked_args,
                            const DLTensor*** out) {
  const DLTensor** linked;
  TVMFFIObject* fn = NULL;
  uint32_t i;
  int status = 0;
  *out = NULL;
  if (!any_marked(linked_args, g->num_args)) return 0;
  if (mr_module_get_function(lib, "kiln_linked_param", 1, &fn) != 0) return -1;
  if (!fn)
    return MR_GRAPH_FAIL("GraphExecutorFactory: the manifest lists linked params, but the "
                         "kernel library has no kiln_linked_param function");
  linked = (const DLTensor**)calloc(g->num_storage + 1, sizeof(DLTensor*));
  if (!linked) status = MR_OOM("linked params");
  for (i = 0; status == 0 && i < g->num_args; ++i)
    if (linked_args[i])
      status = lookup_one(fn, g, i, &linked[g->entries[mr_graph_arg_entry(g, i)].storage_id]);
  mr_object_release(fn);
  if (status != 0) {
    free(linked);
    return -1;
  }
  *out = linked;
  return 0;
}
