/* The runtime (zkr__runtime_*): where the library's time and background loops
 * come from.  By default time is CLOCK_MONOTONIC and the loops - the
 * monitor, the delivery thread, the hedger - run on threads of their own.
 * A simulator (tests/sim, DESIGN.md section 10) replaces both: time is the
 * simulated world's, the library starts no thread, and the driver steps
 * each handle's loops with zkr__runtime_step, so that one seed replays one world.
 * Nothing here is exported. */
#ifndef ZKR_RUNTIME_H
#define ZKR_RUNTIME_H

#include <stdint.h>

struct zkr;

typedef struct zkr__runtime {
  /* Monotonic time in ns. */
  uint64_t (*now_ns)(void);
  /* Set: no library thread.  The driver calls zkr__runtime_step for each handle
   * when the world changed and when zkr__runtime_step asked to be called again. */
  int stepped;
  /* Stepped: a blocking zkr_ call waits by running the world until
   * done(arg) is nonzero (the world's events complete it). */
  void (*run_until)(void *arg, int (*done)(void *arg));
  /* Stepped: runs fn(arg) later, as a world event, where the library
   * would start a thread for it (a close asked for inside a callback). */
  void (*defer)(void (*fn)(void *), void *arg);
} zkr__runtime_t;

/* The runtime in force; never NULL. */
extern const zkr__runtime_t *zkr__rt;

/* Replaces the runtime (NULL: back to the real clock and threads).  Call
 * before any handle exists.
 * Before any handle exists.  @locks none. */
void zkr__runtime_use(const zkr__runtime_t *rt);

/* Stepped only: runs every loop of z that is due now - the queued
 * callbacks, hedges due, the monitor's turn when due or kicked - and
 * returns the time at which z next needs a step (UINT64_MAX: only after
 * something happens to it).  Not re-entered: a step asked for inside a
 * callback that blocks (run_until) runs what is due but the callbacks,
 * which run one at a time, as on the delivery thread.
 * A stepped runtime's driver, nothing held.  @locks delivery's mu (the drain), then as
 * zkr__hedger_step and zkr__monitor_step. */
uint64_t zkr__runtime_step(struct zkr *z);

#endif
