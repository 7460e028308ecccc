/* The graph executor's pieces, shared by the files of src/graph/: the graph
 * read from TVM's classic graph JSON (graph.c), the executor (executor.c,
 * executor_module.c), the factory module (factory.c, manifest.c). */
#ifndef MR_GRAPH_GRAPH_H_
#define MR_GRAPH_GRAPH_H_

#include "../module.h"
#include "microruntime/graph_executor.h"

/* Mistakes in a graph, its inputs or its manifest are errors of kind
 * "GraphExecutorError" (a RuntimeError in Python, as TVM's TVMError). */
#define MR_GRAPH_ERROR "GraphExecutorError"
/* MR_GRAPH_FAIL(fmt, ...): raises a GraphExecutorError (an error site, see MR_RAISE). */
#ifdef MR_CONFIG_SMALL
#define MR_GRAPH_FAIL(...) \
  (MR_MESSAGE_UNUSED(__VA_ARGS__), mr_error_code_named(MR_GRAPH_ERROR, MR_ERROR_CODE))
#define MR_GRAPH_REFAIL(context) ((void)sizeof(context), mr_graph_refail())
/* Re-records the last error as a GraphExecutorError with its code. */
int mr_graph_refail(void);
#else
#define MR_GRAPH_FAIL(...) mr_graph_fail(__VA_ARGS__)
#define MR_GRAPH_REFAIL(context) mr_graph_refail(context)
int mr_graph_fail(const char* fmt, ...) MR_PRINTF_LIKE(1, 2);
/* The same with the message "<context>: <formatted>" (context NULL: none). */
int mr_graph_vfail(const char* context, const char* fmt, va_list ap);
/* Re-records the last error as a GraphExecutorError, its message prefixed by `context`. */
int mr_graph_refail(const char* context);
#endif

/* ---- graph.c: the graph, validated ---- */
/* What a node does: an input ("null" node), a kernel call, or the built-in __nop / __copy. */
enum { MR_GRAPH_OP_INPUT, MR_GRAPH_OP_CALL, MR_GRAPH_OP_NOP, MR_GRAPH_OP_COPY };

typedef struct {
  char* name;      /* in the graph's string pool */
  char* func_name; /* tvm_op nodes; NULL for "null" (input) nodes */
  uint32_t first_input, num_inputs, num_outputs;
  uint8_t flatten;
  uint8_t kind; /* MR_GRAPH_OP_* */
} mr_graph_node_t;

typedef struct {
  uint32_t shape_at; /* dims at shapes[shape_at ..] */
  int32_t ndim;
  DLDataType dtype;
  uint32_t storage_id;
  int32_t device_type; /* from device_index; 0 when absent */
  uint64_t nbytes;
} mr_graph_entry_t;

typedef struct {
  uint32_t num_nodes, num_entries, num_args, num_heads, num_storage;
  mr_graph_node_t* nodes;
  uint32_t* inputs;  /* entry ids read by ops, node after node */
  uint32_t* row_ptr; /* num_nodes + 1: entry id of (nid, i) is row_ptr[nid] + i */
  uint32_t* args;    /* the input nodes (arg_nodes), in order */
  uint32_t* heads;   /* entry ids of the outputs */
  mr_graph_entry_t* entries;
  int64_t* shapes;
  uint64_t* storage_bytes; /* the largest entry mapped to each slot */
  int32_t* storage_device; /* device type of each slot (0: the executor's first device) */
  char* strings;
} mr_graph_t;

/* Parses and validates graph JSON (no function lookups); errors name the node and field. */
int mr_graph_parse(const char* json, size_t size, mr_graph_t** out_graph);
void mr_graph_free(mr_graph_t* g);
/* Index in g->args of the input node named `name`, or -1. */
int64_t mr_graph_find_arg(const mr_graph_t* g, const char* name);
/* Node id of the node named `name`, or -1. */
int64_t mr_graph_find_node(const mr_graph_t* g, const char* name);
static inline uint32_t mr_graph_arg_entry(const mr_graph_t* g, uint32_t arg) {
  return g->row_ptr[g->args[arg]];
}
#ifndef MR_CONFIG_SMALL
/* "[1, 4] float32" into buf (for messages: not in the small build). */
void mr_graph_describe(const int64_t* shape, int32_t ndim, DLDataType dtype, char* buf,
                       size_t cap);
#endif

/* ---- executor.c: the executor state and its operations ---- */
typedef struct mr_graph_executor mr_graph_executor_t;
/* An executor of its own copy of the graph JSON, parsed. */
int mr_graph_executor_new(const char* json, size_t size, TVMFFIObject* lib, const DLDevice* devs,
                          int num_devices, TVMFFIObject** out_module);
/* An executor of graph g, parsed from json[0..size). owner NULL: the executor takes g (freed
 * with it, or at once when this fails) and copies json; else g and json stay owner's (a
 * factory module), which the executor holds a reference to, so executors of one factory share
 * one graph. Its storage slots are laid out in `arena` (arena.c) when not NULL, and the slots
 * of linked params (`linked`, per slot, or NULL: mr_graph_linked_resolve) view the library's
 * data, neither allocated nor in the arena. */
int mr_graph_executor_new_in(mr_graph_t* g, TVMFFIObject* owner, const char* json, size_t size,
                             TVMFFIObject* lib, const DLDevice* devs, int num_devices,
                             void* arena, size_t arena_bytes, const DLTensor* const* linked,
                             TVMFFIObject** out_module);
/* The executor behind a GraphExecutor module, or NULL (TypeError recorded). */
mr_graph_executor_t* mr_graph_executor_of(TVMFFIObject* module);
/* Copies `value` into input `arg` and marks it set (and a parameter when is_param). */
int mr_graph_executor_set_arg(mr_graph_executor_t* ex, uint32_t arg, const DLTensor* value,
                              int is_param);
const mr_graph_t* mr_graph_executor_graph(const mr_graph_executor_t* ex);

/* ---- factory.c ---- */
/* The state of a GraphExecutorFactory module. */
typedef struct {
  TVMFFIObject* module; /* the factory module holding this state (borrowed) */
  const char *json, *manifest; /* copies, or read in place in text_owner's image */
  TVMFFIObject* text_owner;    /* the library holding json and manifest, or NULL */
  char* module_name;
  size_t json_size, manifest_size;
  TVMFFIObject *names, *tensors;
  mr_graph_t* graph;
  uint8_t* linked_args;   /* per input: linked into the library (the manifest says) */
  const DLTensor** linked; /* per slot: its linked param in the library, once checked */
  int checked; /* the kernels resolve in the imports, and the linked params */
} mr_graph_factory_t;
int mr_graph_factory_load(const char* data, size_t size, TVMFFIObject** out_module);
/* A factory over graph JSON, imported lib and params given as parallel arrays. text_owner
 * NULL: the factory copies json and manifest; else they lie in the image of that library
 * (mr_module_payload_owner), which the factory holds a reference to, and are read there. */
int mr_graph_factory_new(const char* json, size_t json_size, const char* module_name,
                         TVMFFIObject* names, TVMFFIObject* tensors, const char* manifest,
                         size_t manifest_size, TVMFFIObject* text_owner,
                         TVMFFIObject** out_module);
/* A new executor (module) of the factory's graph on devs, with its params set. */
int mr_graph_factory_create_executor(TVMFFIObject* factory, const DLDevice* devs, int n,
                                     TVMFFIObject** out_executor);
/* The same with its storage in `arena` (see mr_graph_executor_new_in). */
int mr_graph_factory_create_executor_in(TVMFFIObject* factory, const DLDevice* devs, int n,
                                        void* arena, size_t arena_bytes,
                                        TVMFFIObject** out_executor);
/* The factory's graph, manifest (NULL, 0 when it has none) and linked params per slot
 * (NULL when none; see mr_graph_linked_resolve), borrowed; checks the factory first
 * (mr_graph_factory_check). */
int mr_graph_factory_plan(TVMFFIObject* factory, const mr_graph_t** out_graph,
                          const char** out_manifest, size_t* out_manifest_size,
                          const DLTensor* const** out_linked);
/* Every kernel the graph calls resolves in the factory's imports (checked once). */
int mr_graph_factory_check(TVMFFIObject* factory);

/* ---- manifest.c ---- */
/* Checks a manifest against the graph and its params' names (Array of Str), and marks in
 * linked_args (num_args bytes, zeroed by the caller) the inputs it lists as linked params. */
int mr_graph_manifest_check(const char* manifest, size_t size, const mr_graph_t* g,
                            TVMFFIObject* param_names, uint8_t* linked_args);

/* ---- linked_params.c: weights the kernel library holds as constant data ---- */
/* Per storage slot (g->num_storage), the library's tensor of the linked param stored there,
 * or NULL: each input marked in linked_args looked up with the library's packed function
 * "kiln_linked_param"(storage_id) and checked (shape and dtype as the graph's entry, a
 * compact CPU tensor, 64-byte aligned, alone in its slot). *out is NULL when none is
 * marked; else free() it. The tensors are borrowed from `lib` (static data). */
int mr_graph_linked_resolve(TVMFFIObject* lib, const mr_graph_t* g, const uint8_t* linked_args,
                            const DLTensor*** out);
/* The payload's graph JSON and params bytes match the manifest's "crc32c" (when it has one
 * and checksums are verified): "checksum mismatch in params (expected 0x..., got 0x...)". */
int mr_graph_manifest_check_sums(const char* manifest, size_t size, const char* json,
                                 size_t json_size, const void* params, size_t params_size);

/* ---- args.c: reading packed-call arguments ---- */
/* TypeError "<func>: argument <i> must be <expected>, got <type>". */
int mr_graph_bad_arg(const char* func, int i, const char* expected, const TVMFFIAny* v);
int mr_graph_arg_int(const char* func, const TVMFFIAny* args, int32_t n, int i, int64_t* out);
/* A Tensor object or a DLTensor*. */
int mr_graph_arg_tensor(const char* func, const TVMFFIAny* args, int32_t n, int i,
                        DLTensor** out);
/* A NUL-terminated copy of a string argument in buf[MR_MAX_NAME]. */
int mr_graph_arg_str(const char* func, const TVMFFIAny* args, int32_t n, int i, char* buf);
/* Devices from Device values or (device_type, device_id) int pairs, from args[first]. */
int mr_graph_arg_devices(const char* func, const TVMFFIAny* args, int32_t n, int first,
                         DLDevice* devs, int* out_count);

#endif /* MR_GRAPH_GRAPH_H_ */
