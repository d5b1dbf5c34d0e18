/* The monitor (zkr__monitor_*): srvr polls, health, rescue, carriers and
 * membership turns, run by the process's ticker (zkr__ticker_*) or a
 * stepped runtime; a kick (zkr__kick_monitor) makes it turn at once. */
#ifndef ZKR_MONITOR_H
#define ZKR_MONITOR_H

#include <stdint.h>

#include "core/handle.h"

/* The close path.  @locks mon_mu. */
void zkr__monitor_stop(struct zkr *z);
/* A ticker worker or a stepped runtime, nothing held.  @locks mon_mu (the kick flag), then the
 * turn's steps one at a time: the poller, rescue, carriers, session, auth, pool, watch, gate and
 * membership turns. */
uint64_t zkr__monitor_step(struct zkr *z); /* the ticker, or a stepped runtime */

#endif
