/* The measurements of measure.h. The heap: newlib's mallinfo. SysTick counts down from
 * 2^24 - 1 at the processor clock (KILN_CPU_HZ: 25 MHz on QEMU's MPS2 boards, 32 MHz on
 * mps3-an547) and interrupts on each wrap; under `-icount shift=0` a tick is 10^9 / KILN_CPU_HZ instructions. */
#include "measure.h"

#if defined(__arm__) && !defined(__linux__)
#include <malloc.h>

#define DEMCR (*(volatile uint32_t*)0xE000EDFCu)
#define DWT_CTRL (*(volatile uint32_t*)0xE0001000u)
#define DWT_CYCCNT (*(volatile uint32_t*)0xE0001004u)
#define SYST_CSR (*(volatile uint32_t*)0xE000E010u)
#define SYST_RVR (*(volatile uint32_t*)0xE000E014u)
#define SYST_CVR (*(volatile uint32_t*)0xE000E018u)
#define SYST_MAX 0xFFFFFFu

#ifndef KILN_CPU_HZ
#define KILN_CPU_HZ 25000000u
#endif

static volatile uint32_t g_wraps;
static int g_dwt;
static uint32_t g_dwt_start, g_start;

void SysTick_Handler(void) { ++g_wraps; }

void kiln_cycles_start(void) {
  DEMCR |= 1u << 24; /* TRCENA: the DWT */
  DWT_CYCCNT = 0;
  DWT_CTRL |= 1u;
  g_dwt = DWT_CYCCNT != 0 || DWT_CYCCNT != 0;
  g_dwt_start = DWT_CYCCNT;
  SYST_CSR = 0;
  SYST_RVR = SYST_MAX;
  SYST_CVR = 0; /* reloads on the first tick */
  SYST_CSR = 7; /* processor clock, interrupt on wrap, enabled */
  while (SYST_CVR == 0) {
  }
  g_wraps = 0;
  g_start = SYST_CVR;
}

uint64_t kiln_cycles_stop(void) {
  uint32_t now, wraps;
  uint64_t ticks;
  if (g_dwt) return (uint64_t)(DWT_CYCCNT - g_dwt_start);
  do {
    wraps = g_wraps;
    now = SYST_CVR;
  } while (wraps != g_wraps);
  SYST_CSR = 0;
  ticks = (uint64_t)wraps * (SYST_MAX + 1u) + g_start - now;
  return ticks * 1000000000u / KILN_CPU_HZ;
}

const char* kiln_cycles_source(void) { return g_dwt ? "DWT" : "QEMU icount (SysTick)"; }

size_t kiln_heap_bytes(void) { return (size_t)mallinfo().arena; }
#else
void kiln_cycles_start(void) {}
uint64_t kiln_cycles_stop(void) { return 0; }
const char* kiln_cycles_source(void) { return "none"; }
size_t kiln_heap_bytes(void) { return 0; }
#endif
