/* The runtime in force (runtime.h): the real clock and threads, or a
 * simulator's; and zkr__runtime_step, one turn of a handle's loops for a stepped
 * runtime. */
#include "core/runtime.h"

#include <time.h>

#include "core/deliver.h"
#include "core/handle.h"
#include "route/hedger.h"
#include "session/monitor.h"

static uint64_t monotonic_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static const zkr__runtime_t real = {.now_ns = monotonic_ns};

const zkr__runtime_t *zkr__rt = &real;
uint64_t (*zkr__clock)(void);

void zkr__runtime_use(const zkr__runtime_t *rt) {
  zkr__rt = rt ? rt : &real;
  zkr__clock = rt ? rt->now_ns : NULL;
}

static uint64_t earlier(uint64_t a, uint64_t b) { return a < b ? a : b; }

uint64_t zkr__runtime_step(zkr_t *z) {
  zkr__deliver_drain(z);
  uint64_t next = zkr__monitor_step(z);
  next = earlier(next, zkr__hedger_step(z));
  /* What the turns queued (session events, completions of what they
   * failed) runs now. */
  zkr__deliver_drain(z);
  return next;
}
