/* Start-up of a Cortex-M program on QEMU's MPS2 boards (mps2-an386: Cortex-M4F, mps2-an500:
 * Cortex-M7) and mps3-an547 (Cortex-M55): the vector table, and a reset handler that enables
 * the FPU, copies .data, zeroes .bss, opens semihosting (newlib's librdimon: printf and exit reach the host, and QEMU exits
 * with main's status), runs the constructors (the model's registration), then main. */
#include <stdint.h>
#include <stdlib.h>

extern uint32_t __data_load, __data_start, __data_end, __bss_start__, __bss_end__;
extern uint32_t __stack_top;
extern int main(void);
extern void initialise_monitor_handles(void);
extern void __libc_init_array(void);

/* With -nostartfiles there is no crti/crtn: __libc_init_array calls these. */
void _init(void) {}
void _fini(void) {}

void Reset_Handler(void) {
  uint32_t *src = &__data_load, *dst = &__data_start;
#if defined(__ARM_FP)
  /* CP10 and CP11 full access (CPACR): QEMU, like the hardware, resets with the FPU off. */
  *(volatile uint32_t*)0xE000ED88u |= 0xFu << 20;
  __asm__ volatile("dsb\n\tisb" ::: "memory");
#endif
  while (dst < &__data_end) *dst++ = *src++;
  for (dst = &__bss_start__; dst < &__bss_end__;) *dst++ = 0;
  initialise_monitor_handles();
  __libc_init_array();
  exit(main());
}

/* A fault ends the program with status 3 (through semihosting, as exit does). */
void Fault_Handler(void) { exit(3); }

/* The SysTick interrupt: the app's cycle counter (cycles.c) counts its wraps. */
void SysTick_Handler(void) __attribute__((weak, alias("Ignore_Handler")));
void Ignore_Handler(void) {}

__attribute__((section(".vectors"), used)) static void (*const g_vectors[16])(void) = {
    (void (*)(void))(uintptr_t)&__stack_top, /* initial stack pointer */
    Reset_Handler, Fault_Handler,            /* reset, NMI */
    Fault_Handler, Fault_Handler,            /* hard fault, memory management fault */
    Fault_Handler, Fault_Handler,            /* bus fault, usage fault */
    [15] = SysTick_Handler,
};
