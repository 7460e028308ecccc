/* platform.h on a microcontroller without an operating system (MR_PLATFORM_BAREMETAL):
 * a monotonic clock from the CPU's cycle counter, busy-wait sleeping, aligned memory from
 * malloc, one core, and thread-specific pointers in a static table. Compiles to nothing
 * elsewhere. */
#ifdef MR_PLATFORM_BAREMETAL
#include <stdlib.h>

#include "config.h"
#include "platform.h"

#ifndef MR_BAREMETAL_CPU_HZ
#define MR_BAREMETAL_CPU_HZ 25000000u /* the MPS2 boards' FPGA clock */
#endif
/* Thread-specific keys (workspace pool, ...). */
#define MR_BAREMETAL_TLS_KEYS 4

#if defined(__ARM_ARCH_7M__) || defined(__ARM_ARCH_7EM__) || \
    defined(__ARM_ARCH_8M_MAIN__) || defined(__ARM_ARCH_8_1M_MAIN__)
/* The Data Watchpoint and Trace unit's cycle counter, enabled on first use. */
#define MR_DEMCR (*(volatile uint32_t*)0xE000EDFCu)
#define MR_DWT_CTRL (*(volatile uint32_t*)0xE0001000u)
#define MR_DWT_CYCCNT (*(volatile uint32_t*)0xE0001004u)
__attribute__((weak)) uint32_t mr_baremetal_cycles(void) {
  static int enabled;
  if (!enabled) {
    MR_DEMCR |= 1u << 24; /* TRCENA */
    MR_DWT_CYCCNT = 0;
    MR_DWT_CTRL |= 1u;    /* CYCCNTENA */
    enabled = 1;
  }
  return MR_DWT_CYCCNT;
}
#else
/* No cycle counter known for this CPU: a counter that advances by one per reading. */
__attribute__((weak)) uint32_t mr_baremetal_cycles(void) {
  static uint32_t ticks;
  return ++ticks;
}
#endif

/* The 32-bit counter extended to 64 bits (it must be read at least once per wrap). */
int64_t mr_now_ns(void) {
  static uint32_t last;
  static uint64_t high;
  uint32_t now = mr_baremetal_cycles();
  uint64_t cycles;
  if (now < last) high += (uint64_t)1 << 32;
  last = now;
  cycles = high | now;
  return (int64_t)(cycles / MR_BAREMETAL_CPU_HZ * 1000000000u +
                   cycles % MR_BAREMETAL_CPU_HZ * 1000000000u / MR_BAREMETAL_CPU_HZ);
}

void mr_sleep_ms(int ms) {
  int64_t until = mr_now_ns() + (int64_t)ms * 1000000;
  while (ms > 0 && mr_now_ns() < until) {
  }
}

void mr_thread_yield(void) {}

int mr_physical_cores(void) { return 1; }

/* malloc'ed memory, aligned by hand: the pointer malloc gave sits just before the block. */
void* mr_aligned_alloc(size_t alignment, size_t nbytes) {
  char *raw, *p;
  if (nbytes == 0) nbytes = alignment;
  if (nbytes > SIZE_MAX - alignment - sizeof(void*)) return NULL;
  raw = (char*)malloc(nbytes + alignment + sizeof(void*));
  if (!raw) return NULL;
  p = (char*)(((uintptr_t)raw + sizeof(void*) + alignment - 1) & ~(uintptr_t)(alignment - 1));
  ((void**)p)[-1] = raw;
  return p;
}

void mr_aligned_free(void* ptr) {
  if (ptr) free(((void**)ptr)[-1]);
}

static void* g_tls[MR_BAREMETAL_TLS_KEYS];
static int g_tls_keys;

int mr_tls_key_create(mr_tls_key_t* key, void (*destroy)(void*)) {
  (void)destroy;
  if (g_tls_keys >= MR_BAREMETAL_TLS_KEYS) return -1;
  *key = g_tls_keys++;
  return 0;
}

void* mr_tls_get(mr_tls_key_t key) { return g_tls[key]; }

int mr_tls_set(mr_tls_key_t key, void* value) {
  g_tls[key] = value;
  return 0;
}
#else
typedef int mr_platform_baremetal_unused_t;
#endif
