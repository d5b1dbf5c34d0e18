/* Small inline helpers any part may use: the monotonic clock, a 64-bit
 * mix for random draws, and zeroed memory in pages of its own. */
/* No locks: pure functions of their arguments (zkr__now_ns reads the clock); the caller
 * serialises. */
#ifndef ZKR_BASE_H
#define ZKR_BASE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/mman.h>
#include <time.h>

/* ---- zeroed memory of its own pages (mmap): for the per-handle arrays
 * sized for every member slot, most of which a handle never fills.  calloc
 * clears the whole block (it comes from the heap and is reused), so every
 * page would count in the process's memory; fresh pages count only once
 * written.  NULL on failure; free with zkr__pages_free and the same
 * size. ---- */
static inline void *zkr__pages_zalloc(size_t size) {
  void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  return p == MAP_FAILED ? NULL : p;
}
static inline void zkr__pages_free(void *p, size_t size) {
  if (p) munmap(p, size);
}

/* ---- time: CLOCK_MONOTONIC, or the simulated world's clock when a
 * stepped runtime is in force (runtime.h; zkr__clock is its now_ns) ---- */
extern uint64_t (*zkr__clock)(void);
static inline uint64_t zkr__now_ns(void) {
  if (__builtin_expect(zkr__clock != NULL, 0)) return zkr__clock();
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Time from then to now; 0 when then is later - a time another thread
 * stored after now was read must not wrap into an age of centuries. */
static inline uint64_t zkr__since(uint64_t now, uint64_t then) {
  return now > then ? now - then : 0;
}

/* The time d before now; 0 when d is longer than the clock has run (a
 * session timeout longer than the machine's uptime). */
static inline uint64_t zkr__before(uint64_t now, uint64_t d) { return now > d ? now - d : 0; }

/* ---- random numbers: splitmix64, a bijective 64-bit mix of a counter
 * or seed (zkr__policy_* draws, the hedge target, zkr_selector_p2c) ---- */
static inline uint64_t zkr__mix64(uint64_t x) {
  x += 0x9E3779B97F4A7C15ULL;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
  return x ^ (x >> 31);
}

#endif
