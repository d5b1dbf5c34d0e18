/* The process's ticker (zkr__ticker_*): one timer thread and a small pool
 * of workers run the background turns of every handle of the process - the
 * monitor's and the hedger's - in place of two threads per handle.  Each
 * handle has an entry, embedded in struct zkr, with the two turns as a
 * const table from the layer that owns them (calls go down).  Not used
 * under a stepped runtime (runtime.h), whose driver steps each handle. */
#ifndef ZKR_TICKER_H
#define ZKR_TICKER_H

#include <stdint.h>

#include "model/queue.h"

struct zkr;

/* A handle's two turns.  Each runs one turn when due (or kicked) and
 * returns when it is due next (UINT64_MAX: only after a kick).  monitor
 * may block (srvr polls, zookeeper_close): it runs on a worker.  hedger
 * must not block: it runs on the timer thread itself, so that a slow
 * monitor turn of any handle never delays a hedge. */
typedef struct zkr__ticker_turns {
  uint64_t (*monitor)(struct zkr *z);
  uint64_t (*hedger)(struct zkr *z);
} zkr__ticker_turns_t;

/* A handle's place in the ticker; every field is under the ticker's mu. */
typedef struct zkr__ticker_entry {
  const zkr__ticker_turns_t *turns;
  zkr__queue_link_t link;  /* in the list of entries */
  zkr__queue_link_t wlink; /* in the workers' queue */
  uint64_t mon_due, hedge_due;
  uint64_t queued_ns; /* when its turn was queued (or last found stalled) */
  int on, mon_busy, hedge_busy, queued;
} zkr__ticker_entry_t;

/* Lock notes: the ticker's mu is a leaf (nothing is taken inside it), so
 * zkr__ticker_kick_* may be called under any lock.  _add and _remove take
 * its life_mu first (starting and stopping its threads) and must not be
 * called from a turn.  No turn runs with any ticker lock held. */

/* Registers z: its first monitor turn is due now.  Starts the ticker's
 * threads with the first handle.  ZOK or ZKR_ETHREAD. */
/* Init, never from a turn.  @locks the ticker's life_mu, then its mu. */
int zkr__ticker_add(struct zkr *z, const zkr__ticker_turns_t *turns);

/* Unregisters z and waits for a turn of z in progress to end; no turn of
 * z starts after it returns.  The last handle's removal stops and joins
 * the ticker's threads.  No-op for a handle never added.
 * The close path, never from a turn.  @locks the ticker's life_mu, then its mu. */
void zkr__ticker_remove(struct zkr *z);

/* The monitor's or the hedger's turn of z is due now.  Any thread, any
 * lock held; no-op when z is not registered.
 * @locks the ticker's mu (a leaf). */
void zkr__ticker_kick_monitor(struct zkr *z);
/* @locks the ticker's mu (a leaf). */
void zkr__ticker_kick_hedger(struct zkr *z);

/* How long a worker beyond the first stays idle before it ends (ms; 0:
 * the default, 10 s).  Tests.  @locks the ticker's mu. */
void zkr__ticker_set_retire_ms(int ms);

/* Threads the ticker runs now (timer and workers), for tests.
 * Tests.  @locks the ticker's mu. */
int zkr__ticker_threads(void);

/* How often the timer found the oldest queued turn waiting a grid step
 * and added a worker for it (the active ones held - or, on a loaded
 * machine, not scheduled: the two look alike).  Tests.  @locks the
 * ticker's mu. */
int zkr__ticker_stalls(void);

#endif
