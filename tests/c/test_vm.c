/* The Relax VM from C: hand-assembled executables (a small byte writer below) checking the
 * loader's errors, every validator rule, running (VM-to-VM calls, If/Goto, tuples, closures),
 * exact reference counts, and the mr_vm_* API. */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "microruntime/c_api.h"
#include "microruntime/vm.h"

/* ---- a byte writer ---- */
typedef struct {
  unsigned char data[8192];
  size_t size;
} buf_t;

static void put(buf_t* b, const void* p, size_t n) {
  memcpy(b->data + b->size, p, n);
  b->size += n;
}
static void u64(buf_t* b, uint64_t v) {
  int i;
  for (i = 0; i < 8; ++i) b->data[b->size++] = (unsigned char)(v >> (8 * i));
}
static void i32(buf_t* b, int32_t v) {
  int i;
  for (i = 0; i < 4; ++i) b->data[b->size++] = (unsigned char)((uint32_t)v >> (8 * i));
}
static void str(buf_t* b, const char* s) {
  u64(b, strlen(s));
  put(b, s, strlen(s));
}

#define REG(i) ((int64_t)(i))
#define IMM(v) ((int64_t)(((uint64_t)1 << 56) | ((uint64_t)(v) & (((uint64_t)1 << 56) - 1))))
#define CONST(i) ((int64_t)(((uint64_t)2 << 56) | (uint64_t)(i)))
#define FUNC(i) ((int64_t)(((uint64_t)3 << 56) | (uint64_t)(i)))
#define VOID_REG ((int64_t)1 << 54)
#define VM_REG (((int64_t)1 << 54) + 1)

typedef struct {
  int32_t kind;
  const char* name;
  int64_t start, end, num_args, num_regs;
} func_t;

typedef struct {
  uint64_t magic;
  const char* version;
  func_t funcs[8];
  int num_funcs;
  int32_t bad_tag; /* replaces the Shape constant's tag when non-zero */
  int64_t offs[32];
  int num_instrs;
  int64_t words[128];
  int num_words;
} prog_t;

static void emit(const prog_t* p, buf_t* b) {
  int i;
  static const float tensor[2] = {1.5f, -2.0f};
  double f = 2.5;
  b->size = 0;
  u64(b, p->magic);
  str(b, p->version);
  u64(b, (uint64_t)p->num_funcs);
  for (i = 0; i < p->num_funcs; ++i) {
    const func_t* f2 = &p->funcs[i];
    i32(b, f2->kind);
    str(b, f2->name);
    u64(b, (uint64_t)f2->start);
    u64(b, (uint64_t)f2->end);
    u64(b, (uint64_t)f2->num_args);
    u64(b, (uint64_t)f2->num_regs);
    u64(b, 0); /* no param names */
  }
  if (p->magic == 0xD225DE2F4214151EULL) u64(b, 0); /* memory scopes */
  u64(b, 6);
  i32(b, p->bad_tag ? p->bad_tag : 69); /* Shape [2, 3] */
  u64(b, 2);
  u64(b, 2);
  u64(b, 3);
  i32(b, 65); /* Str */
  str(b, "hi");
  i32(b, 1); /* Int */
  u64(b, (uint64_t)1 << 60);
  i32(b, 3); /* Float */
  put(b, &f, 8);
  i32(b, 5); /* DataType float32 */
  i32(b, 2 | (32 << 8) | (1 << 16));
  i32(b, 70); /* Tensor float32[2] */
  u64(b, 0xDD5E40F096B4A13FULL);
  u64(b, 0);
  i32(b, 1);
  i32(b, 0);
  i32(b, 1);
  i32(b, 2 | (32 << 8) | (1 << 16));
  u64(b, 2);
  u64(b, 8);
  put(b, tensor, 8);
  u64(b, (uint64_t)p->num_instrs);
  for (i = 0; i < p->num_instrs; ++i) u64(b, (uint64_t)p->offs[i]);
  u64(b, (uint64_t)p->num_words);
  for (i = 0; i < p->num_words; ++i) u64(b, (uint64_t)p->words[i]);
}

static void instr(prog_t* p, int n, const int64_t* w) {
  p->offs[p->num_instrs++] = p->num_words;
  memcpy(p->words + p->num_words, w, (size_t)n * sizeof(int64_t));
  p->num_words += n;
}

/* main(x): r1 = id(x); r3 = read_if_cond(imm 1); if r3 goto +1 else +2... (see below) */
static void base(prog_t* p) {
  memset(p, 0, sizeof(*p));
  p->magic = 0xD225DE2F4214151EULL;
  p->version = "0.14";
  p->num_funcs = 6;
  p->funcs[0] = (func_t){0, "vm.builtin.make_tuple", 0, 0, -2, 0};
  p->funcs[1] = (func_t){0, "vm.builtin.read_if_cond", 0, 0, -2, 0};
  p->funcs[2] = (func_t){1, "main", 0, 6, 1, 4};
  p->funcs[3] = (func_t){1, "id", 6, 7, 1, 1};
  p->funcs[4] = (func_t){0, "vm.builtin.make_closure", 0, 0, -2, 0};
  p->funcs[5] = (func_t){0, "vm.builtin.invoke_closure", 0, 0, -2, 0};
  {
    int64_t c0[] = {1, 1, 3, 1, REG(0)};                          /* 0: r1 = id(r0) */
    int64_t c1[] = {1, 2, 1, 1, IMM(0)};                          /* 1: r2 = read_if_cond(0) */
    int64_t c2[] = {4, 2, 3};                                     /* 2: if r2 else goto 5 */
    int64_t c3[] = {1, 3, 0, 1, CONST(1)};                        /* 3: r3 = ("hi",) */
    int64_t c4[] = {3, -3};                                       /* 4: goto 1 (not reached) */
    int64_t c5[] = {1, 3, 0, 7, REG(1), CONST(0), CONST(1), CONST(2), CONST(3), CONST(4),
                    CONST(5)};                                    /* 5: r3 = tuple */
    int64_t c6[] = {2, 3};                                        /* 6 */
    int64_t id[] = {2, 0};
    instr(p, 5, c0);
    instr(p, 5, c1);
    instr(p, 3, c2);
    instr(p, 5, c3);
    instr(p, 2, c4);
    instr(p, 11, c5);
    /* main is 0..6 and ends with the ret below: shift id after it */
    instr(p, 2, c6);
    instr(p, 2, id);
    p->funcs[2].end = 7;
    p->funcs[3].start = 7;
    p->funcs[3].end = 8;
  }
}

static int load(const prog_t* p, TVMFFIObject** out) {
  buf_t b;
  emit(p, &b);
  return mr_vm_executable_load(b.data, b.size, out);
}

static uint32_t strong(TVMFFIObject* o) { return (uint32_t)(o->combined_ref_count & 0xFFFFFFFFu); }

static void test_run_and_refcounts(void) {
  prog_t p;
  TVMFFIObject *ex = NULL, *vm = NULL, *x = NULL, *out = NULL;
  DLDevice cpu = {kDLCPU, 0};
  DLDataType f32 = {kDLFloat, 32, 1};
  int64_t shape[1] = {3};
  base(&p);
  CHECK_OK(load(&p, &ex));
  CHECK_OK(mr_vm_create(ex, &cpu, 1, MR_VM_ALLOC_POOLED, &vm));
  CHECK_OK(mr_tensor_create(1, shape, f32, cpu, &x));
  CHECK_OK(mr_vm_call_tensors(vm, "main", &x, 1, &out));
  if (out) {
    const TVMFFISeqCell* s = mr_array_view(out);
    CHECK(mr_vm_result_count(out) == 7);
    CHECK(mr_vm_result_at(out, 0) == x);
    CHECK(strong(x) == 2); /* ours and the tuple's */
    CHECK(s && ((TVMFFIAny*)s->data)[3].v_int64 == (int64_t)1 << 60);
    CHECK(s && ((TVMFFIAny*)s->data)[4].v_float64 == 2.5);
    CHECK(s && ((TVMFFIAny*)s->data)[5].v_dtype.bits == 32);
    CHECK(((float*)mr_tensor_dl(mr_vm_result_at(out, 6))->data)[1] == -2.0f);
    CHECK(((uintptr_t)mr_tensor_dl(mr_vm_result_at(out, 6))->data % 64) == 0);
    CHECK(mr_vm_result_at(out, 7) == NULL);
    mr_object_release(out);
  }
  CHECK(strong(x) == 1);
  CHECK_FAIL(mr_vm_call_tensors(vm, "main", NULL, 0, &out), "takes 1 arguments");
  CHECK_FAIL(mr_vm_call_tensors(vm, "nope", &x, 1, &out), "no function 'nope'");
  CHECK(strong(x) == 1);
  mr_object_release(x);
  mr_object_release(vm);
  mr_object_release(ex);
}

static void test_loader_errors(void) {
  prog_t p;
  buf_t b;
  TVMFFIObject* ex = NULL;
  size_t cut, full;
  base(&p);
  p.magic = 0x1234;
  CHECK_FAIL(load(&p, &ex), "magic 0x1234");
  base(&p);
  p.version = "0.13";
  CHECK_FAIL(load(&p, &ex), "version '0.13' is not supported");
  base(&p);
  p.bad_tag = 71;
  CHECK_FAIL(load(&p, &ex), "tag 71");
  base(&p);
  p.magic = 0xD225DE2F4214151DULL; /* the old magic: no scope section */
  CHECK_OK(load(&p, &ex));
  mr_object_release(ex);
  base(&p);
  emit(&p, &b);
  full = b.size;
  for (cut = 0; cut < full; ++cut) CHECK(mr_vm_executable_load(b.data, cut, &ex) != 0);
  b.data[b.size++] = 0;
  CHECK_FAIL(mr_vm_executable_load(b.data, b.size, &ex), "trailing");
}

typedef struct {
  const char* phrase;
  int word;     /* index into words to change (-1: none) */
  int64_t value;
  int func;     /* function to change (-1: none) */
  int field;    /* 0 kind, 1 start, 2 end, 3 num_args, 4 num_regs */
  int64_t fvalue;
} mutation_t;

static void test_validator(void) {
  static const mutation_t cases[] = {
      {"writes register 9", 1, 9, -1, 0, 0},            /* call dst out of range */
      {"argument register 4", 4, REG(4), -1, 0, 0},    /* arg register out of range */
      {"calls function index 99", 2, 99, -1, 0, 0},    /* callee out of range */
      {"calls 'id' with 2 arguments", -2, 0, -1, 0, 0}, /* arity (see below) */
      {"names constant 6", 9, CONST(6), -1, 0, 0},     /* constant out of range */
      {"names function 9", 9, FUNC(9), -1, 0, 0},      /* function arg out of range */
      {"unknown kind 7", 9, (int64_t)((uint64_t)7 << 56), -1, 0, 0},
      {"condition register 8", 11, 8, -1, 0, 0},       /* if cond out of range */
      {"false offset 1", 12, 1, -1, 0, 0},             /* if false offset <= 1 */
      {"if offset 9 leaves", 12, 9, -1, 0, 0},         /* if target outside */
      {"goto offset -9 leaves", 19, -9, -1, 0, 0},     /* goto target outside */
      {"offset 0 never ends", 19, 0, -1, 0, 0},
      {"unknown opcode 9", 18, 9, -1, 0, 0},
      {"returned register 7", 32, 7, -1, 0, 0},        /* ret out of range */
      {"outside the 8 instructions", -1, 0, 3, 2, 9},  /* function range */
      {"instruction range 0..0", -1, 0, 2, 2, 0},      /* empty range */
      {"ends without a return", -1, 0, 2, 2, 6},       /* falls off the end (pc 5 is a call) */
      {"has 1 arguments and 0 registers", -1, 0, 3, 4, 0},
      {"compiled TIR function", -1, 0, 3, 0, 2},
      {"kinds are 0", -1, 0, 3, 0, 7},
  };
  size_t i;
  for (i = 0; i < sizeof(cases) / sizeof(cases[0]); ++i) {
    prog_t p;
    TVMFFIObject* ex = NULL;
    const mutation_t* m = &cases[i];
    base(&p);
    if (m->word >= 0) p.words[m->word] = m->value;
    if (m->word == -2) {            /* call id(r0, r0): a longer instruction */
      int64_t w[] = {1, 1, 3, 2, REG(0), REG(0)};
      prog_t q = p;
      int k;
      q.num_instrs = 0;
      q.num_words = 0;
      instr(&q, 6, w);
      for (k = 1; k < p.num_instrs; ++k) {
        int64_t end = k + 1 < p.num_instrs ? p.offs[k + 1] : p.num_words;
        instr(&q, (int)(end - p.offs[k]), p.words + p.offs[k]);
      }
      p = q;
    }
    if (m->func >= 0) {
      func_t* f = &p.funcs[m->func];
      int64_t* fields[] = {NULL, &f->start, &f->end, &f->num_args, &f->num_regs};
      if (m->field == 0) f->kind = (int32_t)m->fvalue;
      else *fields[m->field] = m->fvalue;
    }
    mr_error_clear();
    CHECK(load(&p, &ex) != 0);
    if (!strstr(mr_last_error(), m->phrase))
      fprintf(stderr, "validator case %zu: expected '%s' in: %s\n", i, m->phrase, mr_last_error());
    CHECK(strstr(mr_last_error(), m->phrase) != NULL);
  }
  {  /* offsets that do not tile instr_data */
    prog_t p;
    TVMFFIObject* ex = NULL;
    base(&p);
    p.offs[3] += 1;
    CHECK_FAIL(load(&p, &ex), "words long");
  }
}

static void test_unresolved_function(void) {
  prog_t p;
  TVMFFIObject *ex = NULL, *vm = NULL;
  DLDevice cpu = {kDLCPU, 0};
  base(&p);
  p.funcs[0].name = "no.such.kernel";
  CHECK_OK(load(&p, &ex));
  CHECK_FAIL(mr_vm_create(ex, &cpu, 1, MR_VM_ALLOC_NAIVE, &vm), "cannot find function "
             "'no.such.kernel'");
  mr_object_release(ex);
}

/* Closures through the builtins: main(x) = invoke_closure(make_closure(id, x)). */
static void test_closures(void) {
  prog_t p;
  TVMFFIObject *ex = NULL, *vm = NULL, *x = NULL, *out = NULL;
  DLDevice cpu = {kDLCPU, 0};
  DLDataType f32 = {kDLFloat, 32, 1};
  int64_t shape[1] = {2};
  int64_t m0[] = {1, 1, 4, 2, FUNC(3), REG(0)};        /* r1 = make_closure(id, x) */
  int64_t m1[] = {1, 2, 5, 2, VM_REG, REG(1)};         /* r2 = invoke_closure(vm, r1) */
  int64_t m2[] = {2, 2};
  int64_t id[] = {2, 0};
  base(&p);
  p.num_instrs = 0;
  p.num_words = 0;
  instr(&p, 6, m0);
  instr(&p, 6, m1);
  instr(&p, 2, m2);
  instr(&p, 2, id);
  p.funcs[2] = (func_t){1, "main", 0, 3, 1, 3};
  p.funcs[3] = (func_t){1, "id", 3, 4, 1, 1};
  CHECK_OK(load(&p, &ex));
  CHECK_OK(mr_vm_create(ex, &cpu, 1, MR_VM_ALLOC_NAIVE, &vm));
  CHECK_OK(mr_tensor_create(1, shape, f32, cpu, &x));
  CHECK_OK(mr_vm_call_tensors(vm, "main", &x, 1, &out));
  CHECK(out == x);
  CHECK(strong(x) == 2);
  mr_object_release(out);
  CHECK(strong(x) == 1);
  mr_object_release(x);
  mr_object_release(vm);
  mr_object_release(ex);
}

/* A call from outside moves tensor inputs (also inside arrays) that are not on the VM's first
 * device there (here cpu:1 -> cpu:0); inputs already there are passed as they are. */
static void test_inputs_moved_to_first_device(void) {
  prog_t p;
  TVMFFIObject *ex = NULL, *vm = NULL, *x = NULL, *arr = NULL, *out = NULL;
  DLDevice cpu = {kDLCPU, 0}, cpu1 = {kDLCPU, 1};
  DLDataType f32 = {kDLFloat, 32, 1};
  int64_t shape[1] = {3};
  TVMFFIAny item;
  base(&p);
  CHECK_OK(load(&p, &ex));
  CHECK_OK(mr_vm_create(ex, &cpu, 1, MR_VM_ALLOC_NAIVE, &vm));
  CHECK_OK(mr_tensor_create(1, shape, f32, cpu1, &x));
  if (x) {
    float* d = (float*)mr_tensor_dl(x)->data;
    d[0] = 1.0f, d[1] = 2.0f, d[2] = 3.0f;
  }
  CHECK_OK(mr_vm_call_tensors(vm, "main", &x, 1, &out));
  if (out) {
    TVMFFIObject* y = mr_vm_result_at(out, 0);
    CHECK(y && y != x);
    CHECK(y && mr_tensor_dl(y)->device.device_id == 0);
    CHECK(y && ((float*)mr_tensor_dl(y)->data)[2] == 3.0f);
    mr_object_release(out);
    out = NULL;
  }
  CHECK(strong(x) == 1);
  memset(&item, 0, sizeof(item));
  item.type_index = kTVMFFITensor;
  item.v_obj = x;
  CHECK_OK(mr_array_create(&item, 1, &arr));
  CHECK_OK(mr_vm_call_tensors(vm, "main", &arr, 1, &out));
  if (out) {
    TVMFFIObject* a = mr_vm_result_at(out, 0);
    const TVMFFISeqCell* s = a ? mr_array_view(a) : NULL;
    const TVMFFIAny* v = s && s->size == 1 ? (const TVMFFIAny*)s->data : NULL;
    CHECK(a && a != arr);
    CHECK(v && v->type_index == kTVMFFITensor && v->v_obj != x);
    CHECK(v && mr_tensor_dl(v->v_obj)->device.device_id == 0);
    CHECK(v && ((float*)mr_tensor_dl(v->v_obj)->data)[1] == 2.0f);
    mr_object_release(out);
  }
  CHECK(strong(x) == 2); /* ours and the array's */
  mr_object_release(arr);
  mr_object_release(x);
  mr_object_release(vm);
  mr_object_release(ex);
}

/* ---- errors survive the cleanup of a failed call ---- */
static int g_deleted;
static int clearing_call(void* self, const TVMFFIAny* a, int32_t n, TVMFFIAny* out) {
  (void)self, (void)a, (void)n, (void)out;
  return 0;
}
/* A deleter that records an error of its own and then clears it, as careless cleanup does. */
static void clearing_deleter(void* self) {
  (void)self;
  ++g_deleted;
  mr_error_set("RuntimeError", "noise from a deleter");
  mr_error_clear();
}
/* test.make_clearing() -> a new Function whose deleter clears the thread's error. */
static int make_clearing(void* self, const TVMFFIAny* a, int32_t n, TVMFFIAny* out) {
  TVMFFIObjectHandle f;
  (void)self, (void)a, (void)n;
  if (TVMFFIFunctionCreate(NULL, clearing_call, clearing_deleter, &f) != 0) return -1;
  out->type_index = kTVMFFIFunction;
  out->v_obj = (TVMFFIObject*)f;
  return 0;
}

/* Functions: 0 alloc_storage, 1 alloc_tensor, 2 check_tensor_info, 3 make_shape,
 * 4 test.make_clearing; bytecode 5 bad_check(x), 6 huge(x), 7 noisy(x).
 *   bad_check: r1 = storage of Shape[2, 3] float32 (24 bytes); r2 = tensor (2, 3) in it;
 *              check_tensor_info(r2, ndim 5, float32, "hi") fails while r1, r2 are live.
 *   huge:      r1 = the same storage; r2 = make_shape(None, 2, (0, 2^54), (0, 2^54));
 *              r3 = alloc_tensor(r1, 0, r2, float32) must fail: the size overflows.
 *   noisy:     r1 = test.make_clearing(); check_tensor_info(x, ndim 5, ...) fails. */
static void error_program(prog_t* p) {
  int64_t st[] = {1, 1, 0, 4, VM_REG, CONST(0), IMM(0), CONST(4)};
  int64_t te[] = {1, 2, 1, 4, REG(1), IMM(0), CONST(0), CONST(4)};
  int64_t ck[] = {1, VOID_REG, 2, 4, REG(2), IMM(5), CONST(4), CONST(1)};
  int64_t ret2[] = {2, 2};
  int64_t sh[] = {1, 2, 3, 6, VOID_REG, IMM(2), IMM(0), IMM((int64_t)1 << 54), IMM(0),
                  IMM((int64_t)1 << 54)};
  int64_t te2[] = {1, 3, 1, 4, REG(1), IMM(0), REG(2), CONST(4)};
  int64_t ret3[] = {2, 3};
  int64_t mk[] = {1, 1, 4, 0};
  int64_t ck0[] = {1, VOID_REG, 2, 4, REG(0), IMM(5), CONST(4), CONST(1)};
  int64_t ret1[] = {2, 1};
  base(p);
  p->num_instrs = 0;
  p->num_words = 0;
  p->num_funcs = 8;
  p->funcs[0] = (func_t){0, "vm.builtin.alloc_storage", 0, 0, -2, 0};
  p->funcs[1] = (func_t){0, "vm.builtin.alloc_tensor", 0, 0, -2, 0};
  p->funcs[2] = (func_t){0, "vm.builtin.check_tensor_info", 0, 0, -2, 0};
  p->funcs[3] = (func_t){0, "vm.builtin.make_shape", 0, 0, -2, 0};
  p->funcs[4] = (func_t){0, "test.make_clearing", 0, 0, -2, 0};
  p->funcs[5] = (func_t){1, "bad_check", 0, 4, 1, 3};
  p->funcs[6] = (func_t){1, "huge", 4, 8, 1, 4};
  p->funcs[7] = (func_t){1, "noisy", 8, 11, 1, 2};
  instr(p, 8, st);
  instr(p, 8, te);
  instr(p, 8, ck);
  instr(p, 2, ret2);
  instr(p, 8, st);
  instr(p, 10, sh);
  instr(p, 8, te2);
  instr(p, 2, ret3);
  instr(p, 4, mk);
  instr(p, 8, ck0);
  instr(p, 2, ret1);
}

static void test_errors_survive_cleanup(void) {
  static const int kinds[2] = {MR_VM_ALLOC_POOLED, MR_VM_ALLOC_NAIVE};
  prog_t p;
  TVMFFIObject *ex = NULL, *vm = NULL, *x = NULL, *out = NULL, *maker = NULL;
  DLDevice cpu = {kDLCPU, 0};
  DLDataType f32 = {kDLFloat, 32, 1};
  int64_t shape[1] = {3};
  int k;
  CHECK_OK(TVMFFIFunctionCreate(NULL, make_clearing, NULL, (TVMFFIObjectHandle*)&maker));
  CHECK_OK(mr_registry_set("test.make_clearing", maker, 1));
  mr_object_release(maker);
  error_program(&p);
  CHECK_OK(load(&p, &ex));
  CHECK_OK(mr_tensor_create(1, shape, f32, cpu, &x));
  for (k = 0; k < 2; ++k) {
    CHECK_OK(mr_vm_create(ex, &cpu, 1, kinds[k], &vm));
    /* The storage goes back to the pool after the check failed: its message stays. */
    CHECK_FAIL(mr_vm_call_tensors(vm, "bad_check", &x, 1, &out),
               "hi: expected a Tensor of ndim 5, got ndim 2");
    CHECK(strcmp(mr_last_error_kind(), "ValueError") == 0);
    CHECK_FAIL(mr_vm_call_tensors(vm, "huge", &x, 1, &out),
               "vm.builtin.alloc_tensor: tensor of shape (18014398509481984, "
               "18014398509481984) float32 is too large (size overflows)");
    g_deleted = 0;
    CHECK_FAIL(mr_vm_call_tensors(vm, "noisy", &x, 1, &out),
               "hi: expected a Tensor of ndim 5, got ndim 1");
    CHECK(g_deleted == 1);
    CHECK(strong(x) == 1);
    mr_object_release(vm);
    vm = NULL;
  }
  mr_object_release(x);
  mr_object_release(ex);
}

int main(void) {
  test_run_and_refcounts();
  test_inputs_moved_to_first_device();
  test_loader_errors();
  test_validator();
  test_unresolved_function();
  test_closures();
  test_errors_survive_cleanup();
  return CHECK_RESULT();
}
