/* Platform services: threads-local storage, atomics, mutexes, clocks, CPU topology.
 * The portable core uses only these; platform.c implements them on POSIX. */
#ifndef MR_PLATFORM_H_
#define MR_PLATFORM_H_

#include <pthread.h>
#include <stdint.h>

#if defined(__STDC_VERSION__) && __STDC_VERSION__ >= 201112L && !defined(__STDC_NO_THREADS__)
#define MR_THREAD_LOCAL _Thread_local
#else
#define MR_THREAD_LOCAL __thread
#endif

#if defined(__GNUC__) || defined(__clang__)
#define MR_PRINTF_LIKE(f, a) __attribute__((format(printf, f, a)))
#else
#define MR_PRINTF_LIKE(f, a)
#endif

/* Reference counts are updated with the compiler's atomic built-ins. */
static inline uint64_t mr_atomic_add_u64(uint64_t* p, uint64_t v) {
  return __atomic_fetch_add(p, v, __ATOMIC_RELAXED);
}
static inline uint64_t mr_atomic_sub_u64(uint64_t* p, uint64_t v) {
  return __atomic_fetch_sub(p, v, __ATOMIC_ACQ_REL);
}
static inline uint64_t mr_atomic_load_u64(const uint64_t* p) {
  return __atomic_load_n(p, __ATOMIC_ACQUIRE);
}

/* Ints shared between threads without a lock: acquire loads, release stores, and
 * read-modify-writes that are both (they return the new value). */
#if defined(__GNUC__) || defined(__clang__)
#define mr_atomic_load_int(p) __atomic_load_n((p), __ATOMIC_ACQUIRE)
#define mr_atomic_store_int(p, v) __atomic_store_n((p), (v), __ATOMIC_RELEASE)
#define mr_atomic_add_int(p, v) __atomic_add_fetch((p), (v), __ATOMIC_ACQ_REL)
#else
#include <stdatomic.h>
#define mr_atomic_load_int(p) atomic_load_explicit((_Atomic int*)(p), memory_order_acquire)
#define mr_atomic_store_int(p, v) \
  atomic_store_explicit((_Atomic int*)(p), (v), memory_order_release)
#define mr_atomic_add_int(p, v) \
  (atomic_fetch_add_explicit((_Atomic int*)(p), (v), memory_order_acq_rel) + (v))
#endif

/* Tells the CPU that this thread is busy-waiting (x86 pause, ARM yield). */
static inline void mr_cpu_relax(void) {
#if (defined(__GNUC__) || defined(__clang__)) && (defined(__x86_64__) || defined(__i386__))
  __asm__ __volatile__("pause");
#elif (defined(__GNUC__) || defined(__clang__)) && (defined(__aarch64__) || defined(__arm__))
  __asm__ __volatile__("yield");
#endif
}

/* Gives the CPU to another runnable thread, if there is one. */
void mr_thread_yield(void);

typedef pthread_mutex_t mr_mutex_t;
#define MR_MUTEX_INIT PTHREAD_MUTEX_INITIALIZER
#define mr_mutex_lock(m) ((void)pthread_mutex_lock(m))
#define mr_mutex_unlock(m) ((void)pthread_mutex_unlock(m))

/* Monotonic clock in nanoseconds. */
int64_t mr_now_ns(void);
void mr_sleep_ms(int ms);
/* Physical cores usable by this process (>= 1). */
int mr_physical_cores(void);
/* Aligned host memory (alignment a power of two >= sizeof(void*)); NULL on failure. */
void* mr_aligned_alloc(size_t alignment, size_t nbytes);
void mr_aligned_free(void* ptr);

#endif /* MR_PLATFORM_H_ */
