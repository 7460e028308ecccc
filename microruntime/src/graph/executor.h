/* The graph executor's state (executor.c), shared with its packed functions
 * (executor_module.c), the C API for apps (api.c) and the extras (extras.c). */
#ifndef MR_GRAPH_EXECUTOR_H_
#define MR_GRAPH_EXECUTOR_H_

#include "graph.h"

/* An input is set, a parameter, and (LINKED) a weight read in place from the kernel
 * library's constant data: it cannot be set or replaced (set_input, load_params,
 * set_input_zero_copy, share_params fail naming it). */
enum { MR_GRAPH_ARG_SET = 1, MR_GRAPH_ARG_PARAM = 2, MR_GRAPH_ARG_LINKED = 4 };

typedef struct {
  TVMFFIObject* func; /* the kernel (MR_GRAPH_OP_CALL) */
  uint32_t nid, first, n; /* its node, and its arguments at op_any[first .. first + n) */
  uint8_t kind;
  uint8_t of_params; /* reads parameters alone into slots of its own (executor.c) */
} mr_graph_op_t;

/* An argument of an op with flatten_data: its entry seen as 1-D. */
typedef struct {
  DLTensor t;
  int64_t len; /* t's one dimension */
  uint32_t eid;
} mr_graph_flat_arg_t;

/* The workspace part of an executor's arena: a stack of 64-byte aligned blocks in
 * [mem, mem + size), of which [mem, mem + used) are given out (arena.c). */
typedef struct {
  mr_ws_region_t base;
  unsigned char* mem;
  size_t size, used, depth;
} mr_graph_arena_ws_t;

/* One executor may be used by several threads: every packed function of its module and
 * every call of the C API holds `lock` (recursive) while it runs, so calls are serialized
 * and each sees the executor whole. A sequence of calls (set_input, run, get_output) is not
 * atomic: callers that share an executor serialize their sequences themselves. */
struct mr_graph_executor {
  mr_mutex_t lock;
  mr_graph_t* g;    /* its own, or borrowed from `owner` (read only) */
  TVMFFIObject* owner; /* the factory module whose graph and JSON it uses, or NULL */
  const char* json; /* the graph JSON it was made from (its own copy when owner is NULL) */
  size_t json_size;
  TVMFFIObject* module; /* the GraphExecutor module holding this state (borrowed) */
  TVMFFIObject* lib;
  DLDevice devs[MR_MAX_GRAPH_DEVICES];
  int num_devs;
  void** slot_data;       /* per storage slot: its memory */
  TVMFFIObject** slots;   /* per storage slot: a uint8 tensor of it; made when first needed for
                             slots in the arena or holding a linked param (not the memory) */
  DLTensor* entries;      /* per entry: its data (the slot's, or an external tensor's) */
  TVMFFIObject** ext;     /* per entry: the external tensor it uses, or NULL */
  uint8_t* arg_flags;     /* per input: MR_GRAPH_ARG_* */
  uint8_t* from_params;   /* per entry: computed from parameters alone (executor.c) */
  int params_changed;     /* a parameter was set since the ops of parameters last ran */
  mr_graph_op_t* ops;
  uint32_t num_ops, num_flat;
  TVMFFIAny* op_any;      /* the ops' arguments, DLTensor* values: entries, or in `flat` */
  mr_graph_flat_arg_t* flat; /* the arguments of ops with flatten_data */
  unsigned char* arena;   /* the caller's memory for the slots and workspaces (arena.c), or NULL */
  size_t arena_size, arena_used;
  mr_graph_arena_ws_t ws; /* the workspace part of the arena */
};

/* Argument k of the ops (op_any). */
static inline DLTensor* mr_graph_op_arg(const mr_graph_executor_t* ex, uint32_t k) {
  return (DLTensor*)ex->op_any[k].v_ptr;
}

/* Marks input `arg` set with `flags` (MR_GRAPH_ARG_*); setting a parameter makes the ops
 * that read parameters alone run again at the next run. */
void mr_graph_executor_arg_set(mr_graph_executor_t* ex, uint32_t arg, uint8_t flags);
/* GraphExecutorError "<func>: parameter '<name>' is linked ..." when input `arg` is a
 * linked param (its data is the library's constant data), else 0. */
int mr_graph_executor_check_settable(const mr_graph_executor_t* ex, const char* func,
                                     uint32_t arg);

/* ---- arena.c: an executor in a caller's memory ---- */
/* Slot s at the next bytes of ex->arena, into ex->slot_data[s]. */
int mr_graph_arena_slot(mr_graph_executor_t* ex, uint32_t s);
/* Gives back what the executor's arena serves besides its slots (the thread's workspace). */
void mr_graph_arena_release(mr_graph_executor_t* ex);

/* GraphExecutorError "<func>: <what> expects [..] dtype, got [..] dtype" unless they match. */
int mr_graph_check_value(const char* func, const char* what, const DLTensor* want,
                         const DLTensor* got);
/* Uses the tensor `value` (Tensor or DLTensor*) as entry eid in place. */
int mr_graph_executor_zero_copy(mr_graph_executor_t* ex, const char* func, uint32_t eid,
                                const char* what, const TVMFFIAny* value);
int mr_graph_executor_share(mr_graph_executor_t* ex, uint32_t arg, mr_graph_executor_t* from,
                            uint32_t from_arg);
/* Entry eid as a Tensor (new reference) sharing its memory. */
int mr_graph_executor_entry(mr_graph_executor_t* ex, uint32_t eid, TVMFFIObject** out);
void mr_graph_no_release(void* owner);
int mr_graph_executor_check_inputs(const mr_graph_executor_t* ex, const char* func);
/* Runs the ops of nodes up to last_nid (UINT32_MAX: all). */
int mr_graph_executor_run_upto(mr_graph_executor_t* ex, uint32_t last_nid);
/* number, repeat >= 1 */
int mr_graph_executor_time_nodes(mr_graph_executor_t* ex, int number, int repeat,
                                 double* out_seconds);
/* A packed function of the executor module, and the tables of them (ending in a NULL name):
 * executor_module.c's, and extras.c's once mr_graph_executor_register has run. */
typedef int (*mr_graph_method_fn)(mr_graph_executor_t* ex, const TVMFFIAny* a, int32_t n,
                                  TVMFFIAny* out);
typedef struct {
  const char* name;
  mr_graph_method_fn fn;
} mr_graph_method_t;
extern const mr_graph_method_t* mr_graph_extra_methods;
void mr_graph_set_int(TVMFFIAny* out, int64_t v);
/* Entry eid into a[i] (a tensor) when given, else as the result. */
int mr_graph_give_entry(mr_graph_executor_t* ex, uint32_t eid, const TVMFFIAny* a, int32_t n,
                        int i, TVMFFIAny* out);
/* The params blob in a[i]: names and tensors. */
int mr_graph_read_params(const char* func, const TVMFFIAny* a, int32_t n, int i,
                         TVMFFIObject** names, TVMFFIObject** tensors);
/* Points entry eid (and every op argument that is it) at data, held by ext (may be NULL). */
void mr_graph_set_entry_data(mr_graph_executor_t* ex, uint32_t eid, void* data,
                             TVMFFIObject* ext);
int mr_graph_run_op(mr_graph_executor_t* ex, const mr_graph_op_t* op);
/* The packed function `name` of the executor module (NULL when there is none). */
int mr_graph_executor_function(void* ex, const char* name, TVMFFIObject** out);
/* Executes `load_params`: sets the inputs named in the params file data[0..size). */
int mr_graph_executor_load(mr_graph_executor_t* ex, const char* data, size_t size);

/* The packed functions of GraphExecutor and GraphExecutorFactory modules (executor_module.c,
 * factory_module.c) are reached through these hooks, which mr_graph_executor_register sets:
 * a C app that uses only graph_executor.h's C API links neither file. Until they are set,
 * the modules have no packed functions (lookups give NULL). */
typedef int (*mr_graph_lookup_fn)(void* self, const char* name, TVMFFIObject** out);
extern mr_graph_lookup_fn mr_graph_executor_lookup;
extern mr_graph_lookup_fn mr_graph_factory_lookup;
/* The factory module's packed function `name` (factory_module.c). */
int mr_graph_factory_function(void* factory, const char* name, TVMFFIObject** out);

#endif /* MR_GRAPH_EXECUTOR_H_ */
