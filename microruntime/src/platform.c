/* POSIX implementations of platform.h: recursive mutexes, clocks, sleeping,
 * aligned memory, and the number of physical cores (sysfs topology, else the
 * affinity mask). Dynamic loading is in platform_dl.c. */
#ifndef MR_PLATFORM_BAREMETAL /* platform_baremetal.c there */
#define _GNU_SOURCE
#include "platform.h"

#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "config.h"

int64_t mr_now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + (int64_t)ts.tv_nsec;
}

void mr_sleep_ms(int ms) {
  struct timespec ts;
  if (ms <= 0) return;
  ts.tv_sec = ms / 1000;
  ts.tv_nsec = (long)(ms % 1000) * 1000000L;
  while (nanosleep(&ts, &ts) != 0) {
  }
}

void mr_thread_yield(void) { sched_yield(); }

void mr_mutex_init_recursive(mr_mutex_t* m) {
  pthread_mutexattr_t attr;
  pthread_mutexattr_init(&attr);
  pthread_mutexattr_settype(&attr, PTHREAD_MUTEX_RECURSIVE);
  pthread_mutex_init(m, &attr);
  pthread_mutexattr_destroy(&attr);
}

/* A build may cap one allocation (the fuzz build does, so that sizes read from its inputs end
 * in a clean out-of-memory error instead of exhausting the fuzzer's memory limit). */
#ifndef MR_MAX_ALLOC_BYTES
#define MR_MAX_ALLOC_BYTES 0
#endif

void* mr_aligned_alloc(size_t alignment, size_t nbytes) {
  void* p = NULL;
  if (nbytes == 0) nbytes = alignment;
  if (MR_MAX_ALLOC_BYTES > 0 && nbytes > (size_t)MR_MAX_ALLOC_BYTES) return NULL;
  if (posix_memalign(&p, alignment, nbytes) != 0) return NULL;
  return p;
}

void mr_aligned_free(void* ptr) { free(ptr); }

#if MR_MAX_THREADS > 1 /* the thread pool's size (threadpool.c) */
/* Reads the integer in /sys/devices/system/cpu/cpu<cpu>/topology/<name>. */
static int read_topology(int cpu, const char* name, long* out) {
  char path[128];
  FILE* f;
  int ok;
  snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu%d/topology/%s", cpu, name);
  f = fopen(path, "r");
  if (!f) return -1;
  ok = fscanf(f, "%ld", out) == 1;
  fclose(f);
  return ok ? 0 : -1;
}

/* Counts unique (package, core) pairs among the CPUs this process may run on. */
int mr_physical_cores(void) {
  long keys[MR_MAX_THREADS * 4];
  int nkeys = 0, cpu, i, ncpu_set = 0;
  cpu_set_t set;
  long sys = sysconf(_SC_NPROCESSORS_ONLN);
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) != 0) return sys > 0 ? (int)sys : 1;
  for (cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
    long core, pkg = 0, key;
    if (!CPU_ISSET(cpu, &set)) continue;
    ++ncpu_set;
    if (read_topology(cpu, "core_id", &core) != 0) {
      nkeys = -1;
      continue;
    }
    (void)read_topology(cpu, "physical_package_id", &pkg);
    if (nkeys < 0) continue;
    key = pkg * 1000003L + core;
    for (i = 0; i < nkeys && keys[i] != key; ++i) {
    }
    if (i == nkeys && nkeys < (int)(sizeof(keys) / sizeof(keys[0]))) keys[nkeys++] = key;
  }
  if (nkeys > 0) return nkeys;
  if (ncpu_set > 0) return ncpu_set;
  return sys > 0 ? (int)sys : 1;
}
#endif
#else
typedef int mr_platform_posix_unused_t;
#endif
