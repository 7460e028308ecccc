/* The Relax VM (Apache TVM 0.27's executable format and semantics), shared by src/vm:
 * exec.c (loader + validator, the relax.VMExecutable module), interp.c (frames, registers,
 * Call/Ret/Goto/If, closures), builtins.c (vm.builtin.*), alloc.c (naive and pooled
 * allocators, storage), module.c (the relax.VirtualMachine module's packed functions and the
 * mr_vm_* C API). */
#ifndef MR_VM_VM_H_
#define MR_VM_VM_H_

#include "../internal.h"
#include "../module.h"
#include "microruntime/vm.h"

/* ---- limits ---- */
#define MR_VM_MAX_FUNCS (1 << 20)
#define MR_VM_MAX_REGISTERS (1 << 20)
#define MR_VM_MAX_CONSTANTS (1 << 24)
#define MR_VM_MAX_CALL_ARGS 4096
#define MR_VM_MAX_DEPTH 256
/* Registers the frames of one call stack may hold together (16 MiB of values): deep
 * recursion through functions with large register files is an error, not gigabytes. */
#define MR_VM_MAX_LIVE_REGISTERS (1 << 20)
#define MR_VM_MAX_DEVICES 8
#define MR_VM_POOL_PAGE 4096

/* ---- the format ---- */
#define MR_VM_MAGIC 0xD225DE2F4214151EULL
#define MR_VM_MAGIC_NO_SCOPE 0xD225DE2F4214151DULL
#define MR_VM_VERSION "0.14"
#define MR_VM_SPECIAL_REG ((int64_t)1 << 54)
#define MR_VM_VOID_REG MR_VM_SPECIAL_REG
#define MR_VM_STATE_REG (MR_VM_SPECIAL_REG + 1)
enum { MR_VM_OP_CALL = 1, MR_VM_OP_RET = 2, MR_VM_OP_GOTO = 3, MR_VM_OP_IF = 4 };
enum { MR_VM_ARG_REG = 0, MR_VM_ARG_IMM = 1, MR_VM_ARG_CONST = 2, MR_VM_ARG_FUNC = 3 };
enum { MR_VM_FUNC_PACKED = 0, MR_VM_FUNC_BYTECODE = 1, MR_VM_FUNC_TIR = 2 };

static inline int mr_vm_arg_kind(int64_t w) { return (int)(((uint64_t)w >> 56) & 0xFF); }
static inline int64_t mr_vm_arg_value(int64_t w) {
  uint64_t v = (uint64_t)w & (((uint64_t)1 << 56) - 1);
  if (v >> 55) v |= ~(((uint64_t)1 << 56) - 1);
  return (int64_t)v;
}

/* Own object kinds. */
#define MR_VM_CLOSURE_TYPE 140

typedef struct {
  int32_t kind;
  char* name;
  int64_t start, end, num_args, num_regs;
  int64_t num_params;
  char** params;
} mr_vm_func_t;

typedef struct {
  TVMFFIObject* module; /* the relax.VMExecutable module owning this (not a reference) */
  mr_vm_func_t* funcs;
  int64_t num_funcs;
  TVMFFIAny* consts; /* owned values; tensors on the CPU, 64-byte aligned */
  int64_t num_consts;
  int64_t* instr_offset;
  int64_t num_instrs;
  int64_t* instr_data;
  int64_t num_words;
} mr_vm_exec_t;

/* A VM closure: a bytecode function of the executable with arguments bound last. */
typedef struct {
  TVMFFIObject header;
  int64_t func_index;
  int32_t discard_result; /* save_function(include_return=False) */
  int32_t num_bound;
  TVMFFIAny bound[1];
} mr_vm_closure_t;

/* ---- allocators (alloc.c) ---- */
typedef struct mr_vm_pool mr_vm_pool_t;
int mr_vm_pool_create(DLDevice dev, int pooled, mr_vm_pool_t** out);
void mr_vm_pool_release(mr_vm_pool_t* pool);
/* A storage: a 1-D uint8 Tensor of nbytes whose memory returns to the pool. */
int mr_vm_pool_alloc(mr_vm_pool_t* pool, uint64_t nbytes, DLDataType hint,
                     TVMFFIObject** out_storage);

/* ---- profiling records ---- */
typedef struct {
  int64_t func_index;
  int64_t ns;
  char shapes[200];
} mr_vm_prof_t;

/* ---- the VM ---- */
#define MR_VM_STATE_MAGIC 0x564D5354u
typedef struct mr_vm {
  uint32_t magic;
  TVMFFIObject* module;   /* the relax.VirtualMachine module (not a reference) */
  TVMFFIObject* exec_mod; /* the executable module (a reference) */
  const mr_vm_exec_t* exec;
  int initialized;
  int num_devices;
  DLDevice devices[MR_VM_MAX_DEVICES];
  mr_vm_pool_t* pools[MR_VM_MAX_DEVICES];
  TVMFFIAny* consts; /* the constants on devices[0] (owned) */
  TVMFFIAny* func_pool; /* per function: Function (packed) or closure (bytecode), owned */
  int depth;
  int64_t live_regs; /* registers of the frames now running */
  TVMFFIObject* instrument; /* Function or NULL */
  /* set_input / invoke_stateful / get_output, and save_function: per bytecode function */
  TVMFFIObject** inputs;  /* Array of the inputs set, per function, or NULL */
  TVMFFIAny* outputs;     /* per function */
  char** saved_names;
  TVMFFIObject** saved;   /* closures */
  size_t num_saved, cap_saved;
  /* profiling: records of kernel calls while `profiling` */
  int profiling;
  mr_vm_prof_t* prof;
  size_t num_prof, cap_prof;
} mr_vm_t;

/* exec.c */
int mr_vm_exec_parse(const char* data, size_t size, mr_vm_exec_t** out);
void mr_vm_exec_free(mr_vm_exec_t* exec);
mr_vm_exec_t* mr_vm_exec_of(TVMFFIObject* module);
int64_t mr_vm_exec_find(const mr_vm_exec_t* exec, const char* name);

/* interp.c */
int mr_vm_new(TVMFFIObject* exec_mod, int profile, TVMFFIObject** out_vm_module);
mr_vm_t* mr_vm_of(TVMFFIObject* vm_module);
int mr_vm_init(mr_vm_t* vm, const DLDevice* devs, const int* alloc_kinds, int n);
/* Calls bytecode function fidx with args (borrowed); result owned. */
int mr_vm_invoke(mr_vm_t* vm, int64_t fidx, const TVMFFIAny* args, int32_t nargs,
                 TVMFFIAny* result);
/* mr_vm_invoke from outside the VM (the module's functions, mr_vm_call): tensor arguments
 * (also inside arrays) not on the VM's first device are copied there first, as the inputs
 * of set_input are; arguments already there are passed as they are. */
int mr_vm_invoke_entry(mr_vm_t* vm, int64_t fidx, const TVMFFIAny* args, int32_t nargs,
                       TVMFFIAny* result);
/* Calls a closure or Function value. */
int mr_vm_invoke_value(mr_vm_t* vm, const TVMFFIAny* callee, const TVMFFIAny* args,
                       int32_t nargs, TVMFFIAny* result);
int mr_vm_closure_new(int64_t fidx, const TVMFFIAny* bound, int32_t nbound,
                      TVMFFIObject** out);
mr_vm_t* mr_vm_from_arg(const TVMFFIAny* arg, const char* func);
/* Copies a tensor argument to the VM's first device when it is elsewhere; else a new
 * reference (DLTensor pointers become tensors). */
int mr_vm_arg_to_device(mr_vm_t* vm, const TVMFFIAny* in, TVMFFIAny* out);

/* builtins.c */
int mr_vm_register_builtins(void);

/* module.c: the methods of extras.c, a table ending with a NULL name (NULL until
 * mr_vm_register_extras() ran). */
typedef int (*mr_vm_method_fn)(mr_vm_t* vm, const TVMFFIAny* a, int32_t n, TVMFFIAny* out);
typedef struct {
  const char* name;
  mr_vm_method_fn fn;
} mr_vm_method_t;
extern const mr_vm_method_t* mr_vm_extra_methods;
/* MR_VM_ERROR(fmt, ...): raises a VMError (an error site, see MR_RAISE). */
#ifdef MR_CONFIG_SMALL
#define MR_VM_ERROR(...) \
  (MR_MESSAGE_UNUSED(__VA_ARGS__), mr_error_code_named("VMError", MR_ERROR_CODE))
#else
#define MR_VM_ERROR(...) mr_vm_error(__VA_ARGS__)
int mr_vm_error(const char* fmt, ...) MR_PRINTF_LIKE(1, 2);
#endif

/* interp.c: keeping the error that ended a call through its cleanup. Releasing registers and
 * arguments runs deleters, and a deleter may record or clear an error; the caller must still
 * see the error that made the call fail. keep copies the pending error when `failed`;
 * restore records it again if the cleanup replaced or cleared it, and frees the copy. */
typedef struct {
  char* kind;
  char* message;
  uint64_t serial;
} mr_vm_kept_error_t;
void mr_vm_error_keep(mr_vm_kept_error_t* kept, int failed);
void mr_vm_error_restore(mr_vm_kept_error_t* kept);

#endif /* MR_VM_VM_H_ */
