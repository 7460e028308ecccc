/* What the app measures on the board: the heap it took, and the cycles of a stretch of code:
 * the DWT cycle counter where the board model
 * counts with it, else the SysTick timer, which under QEMU's `-icount shift=0` (one
 * instruction per nanosecond of virtual time) gives executed instructions as cycles (QEMU
 * models no caches or pipeline). On a host build all read 0. */
#ifndef KILN_APP_MEASURE_H_
#define KILN_APP_MEASURE_H_

#include <stddef.h>
#include <stdint.h>

/* Starts counting. */
void kiln_cycles_start(void);
/* Cycles since kiln_cycles_start. */
uint64_t kiln_cycles_stop(void);
/* Where the count came from: "DWT", "QEMU icount (SysTick)" or "none". */
const char* kiln_cycles_source(void);

/* Bytes the C library's heap holds from the system (malloc's arena). */
size_t kiln_heap_bytes(void);

#endif /* KILN_APP_MEASURE_H_ */
