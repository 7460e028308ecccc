/* Platform services: thread-local storage, atomics, mutexes, condition variables,
 * once-initialisation, threads, clocks, CPU topology, and dynamic loading. The
 * portable core uses only these; platform.c implements them on POSIX (pthreads),
 * platform_dl.c the dynamic loading (dlopen), which dlopen-free builds leave out.
 * A port to another OS replaces the typedefs and inline wrappers below and those
 * two files.
 *
 * MR_PLATFORM_BAREMETAL (a microcontroller without an operating system, one thread):
 * locks and once-flags are plain ints, no thread can be created (so parallel launches
 * run inline: threadpool_inline.c), thread-local data is ordinary static data, the
 * clock is a cycle counter (platform_baremetal.c), and nothing is loaded dynamically. */
#ifndef MR_PLATFORM_H_
#define MR_PLATFORM_H_

#include <stddef.h>
#include <stdint.h>

#ifdef MR_PLATFORM_BAREMETAL
#ifndef MR_NO_DLOPEN
#define MR_NO_DLOPEN
#endif
#else
#include <pthread.h>
#endif

#ifdef MR_PLATFORM_BAREMETAL
#define MR_THREAD_LOCAL
#elif defined(__STDC_VERSION__) && __STDC_VERSION__ >= 201112L && !defined(__STDC_NO_THREADS__)
#define MR_THREAD_LOCAL _Thread_local
#else
#define MR_THREAD_LOCAL __thread
#endif

#if defined(__GNUC__) || defined(__clang__)
#define MR_PRINTF_LIKE(f, a) __attribute__((format(printf, f, a)))
#else
#define MR_PRINTF_LIKE(f, a)
#endif

/* Reference counts are updated with the compiler's atomic built-ins (with one thread,
 * plain arithmetic: a Cortex-M has no 64-bit atomics). */
#ifdef MR_PLATFORM_BAREMETAL
static inline uint64_t mr_atomic_add_u64(uint64_t* p, uint64_t v) {
  uint64_t old = *p;
  *p = old + v;
  return old;
}
static inline uint64_t mr_atomic_sub_u64(uint64_t* p, uint64_t v) {
  uint64_t old = *p;
  *p = old - v;
  return old;
}
static inline uint64_t mr_atomic_load_u64(const uint64_t* p) { return *p; }
#else
static inline uint64_t mr_atomic_add_u64(uint64_t* p, uint64_t v) {
  return __atomic_fetch_add(p, v, __ATOMIC_RELAXED);
}
static inline uint64_t mr_atomic_sub_u64(uint64_t* p, uint64_t v) {
  return __atomic_fetch_sub(p, v, __ATOMIC_ACQ_REL);
}
static inline uint64_t mr_atomic_load_u64(const uint64_t* p) {
  return __atomic_load_n(p, __ATOMIC_ACQUIRE);
}
#endif

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

/* ---- mutexes, condition variables, once, threads, thread-specific data ---- */
#ifdef MR_PLATFORM_BAREMETAL
/* One thread: nothing to lock or wait for; thread creation always fails. */
typedef int mr_mutex_t;
typedef int mr_cond_t;
typedef int mr_once_t;
typedef int mr_thread_t;
typedef int mr_tls_key_t;
#define MR_MUTEX_INIT 0
#define MR_COND_INIT 0
#define MR_ONCE_INIT 0
static inline void mr_mutex_lock(mr_mutex_t* m) { (void)m; }
static inline void mr_mutex_unlock(mr_mutex_t* m) { (void)m; }
static inline int mr_mutex_trylock(mr_mutex_t* m) { (void)m; return 0; }
static inline void mr_mutex_init_recursive(mr_mutex_t* m) { *m = 0; }
static inline void mr_mutex_destroy(mr_mutex_t* m) { (void)m; }
static inline void mr_cond_wait(mr_cond_t* c, mr_mutex_t* m) { (void)c; (void)m; }
static inline void mr_cond_broadcast(mr_cond_t* c) { (void)c; }
static inline void mr_once(mr_once_t* flag, void (*init)(void)) {
  if (!*flag) {
    *flag = 1;
    init();
  }
}
static inline int mr_thread_create(mr_thread_t* t, void* (*run)(void*), void* arg) {
  (void)t; (void)run; (void)arg;
  return -1;
}
static inline void mr_thread_join(mr_thread_t t) { (void)t; }
static inline int mr_thread_is_self(mr_thread_t t) { (void)t; return 1; }
/* Thread-specific pointers are slots of a small static table (platform_baremetal.c);
 * `destroy` never runs, since the one thread never exits. */
int mr_tls_key_create(mr_tls_key_t* key, void (*destroy)(void*));
void* mr_tls_get(mr_tls_key_t key);
int mr_tls_set(mr_tls_key_t key, void* value);
/* The cycle counter that mr_now_ns reads (DWT CYCCNT on Cortex-M3/M4/M7/M33/M55); weak, so a
 * board without one supplies its own. Its frequency: MR_BAREMETAL_CPU_HZ (Hz). */
uint32_t mr_baremetal_cycles(void);
#else
typedef pthread_mutex_t mr_mutex_t;
typedef pthread_cond_t mr_cond_t;
typedef pthread_once_t mr_once_t;
typedef pthread_t mr_thread_t;
typedef pthread_key_t mr_tls_key_t;
#define MR_MUTEX_INIT PTHREAD_MUTEX_INITIALIZER
#define MR_COND_INIT PTHREAD_COND_INITIALIZER
#define MR_ONCE_INIT PTHREAD_ONCE_INIT

static inline void mr_mutex_lock(mr_mutex_t* m) { (void)pthread_mutex_lock(m); }
static inline void mr_mutex_unlock(mr_mutex_t* m) { (void)pthread_mutex_unlock(m); }
/* 0 when the mutex was taken, non-zero when another thread holds it. */
static inline int mr_mutex_trylock(mr_mutex_t* m) { return pthread_mutex_trylock(m); }
/* Initialises a mutex that its holder may lock again (not statically initialisable). */
void mr_mutex_init_recursive(mr_mutex_t* m);
/* Releases what a mutex from mr_mutex_init_recursive holds (it must be unlocked). */
static inline void mr_mutex_destroy(mr_mutex_t* m) { (void)pthread_mutex_destroy(m); }
static inline void mr_cond_wait(mr_cond_t* c, mr_mutex_t* m) { (void)pthread_cond_wait(c, m); }
static inline void mr_cond_broadcast(mr_cond_t* c) { (void)pthread_cond_broadcast(c); }
/* Runs init exactly once per flag, process-wide; later callers wait for it. */
static inline void mr_once(mr_once_t* flag, void (*init)(void)) { (void)pthread_once(flag, init); }
/* 0 on success. */
static inline int mr_thread_create(mr_thread_t* t, void* (*run)(void*), void* arg) {
  return pthread_create(t, NULL, run, arg);
}
static inline void mr_thread_join(mr_thread_t t) { (void)pthread_join(t, NULL); }
static inline int mr_thread_is_self(mr_thread_t t) { return pthread_equal(t, pthread_self()); }
/* Thread-specific pointers; `destroy` runs on a thread's non-NULL value when it exits. */
static inline int mr_tls_key_create(mr_tls_key_t* key, void (*destroy)(void*)) {
  return pthread_key_create(key, destroy);
}
static inline void* mr_tls_get(mr_tls_key_t key) { return pthread_getspecific(key); }
static inline int mr_tls_set(mr_tls_key_t key, void* value) {
  return pthread_setspecific(key, value);
}

#endif /* MR_PLATFORM_BAREMETAL */

/* Monotonic clock in nanoseconds. */
int64_t mr_now_ns(void);
void mr_sleep_ms(int ms);
/* Physical cores usable by this process (>= 1; for the thread pool: not in a runtime of
 * MR_MAX_THREADS 1). */
int mr_physical_cores(void);
/* Aligned host memory (alignment a power of two >= sizeof(void*)); NULL on failure. */
void* mr_aligned_alloc(size_t alignment, size_t nbytes);
void mr_aligned_free(void* ptr);

/* ---- dynamic loading (platform_dl.c; absent when MR_NO_DLOPEN) ----
 * For kernel libraries and, later, device drivers found at run time. */
/* A handle to the library at path (loaded with its symbols private, resolved
 * lazily), or NULL; mr_dl_error() then says why. */
void* mr_dl_open(const char* path);
/* The address of `symbol` in the library, or NULL. */
void* mr_dl_sym(void* handle, const char* symbol);
void mr_dl_close(void* handle);
/* Why the last mr_dl_* call on this thread failed ("unknown error" if it did not say). */
const char* mr_dl_error(void);
/* The size in bytes the library's symbol table gives the object at addr, or 0 when
 * it is unknown (no such symbol, or a symbol without a size). */
uint64_t mr_dl_symbol_size(const void* addr);
/* Whether the addresses a and b lie in the same loaded object (executable or library). */
int mr_dl_same_object(const void* a, const void* b);
/* What identifies a file's contents: device, inode, size and modification time. */
typedef struct {
  uint64_t dev, ino, size;
  int64_t mtime_sec, mtime_nsec;
} mr_file_id_t;
/* Fills *out_id for the file at path: 0, or -1 with errno set. */
int mr_file_id(const char* path, mr_file_id_t* out_id);
/* As mr_dl_open, on a private copy of the file at path (made next to it, or in $TMPDIR or
 * /tmp, and removed once loaded): the loader cannot hand back a library it loaded earlier
 * from the same path or inode. NULL on failure; mr_dl_error() then says why. */
void* mr_dl_open_copy(const char* path);

#endif /* MR_PLATFORM_H_ */
