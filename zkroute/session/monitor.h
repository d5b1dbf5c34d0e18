/* The monitor (zkr__monitor_*): srvr polls, health, rescue, carriers and
 * membership turns, run by the process's ticker (zkr__ticker_*) or a
 * stepped runtime; a kick (zkr__kick_monitor) makes it turn at once. */
#ifndef ZKR_MONITOR_H
#define ZKR_MONITOR_H

#include <stdint.h>

#include "core/handle.h"

void zkr__monitor_stop(struct zkr *z);
uint64_t zkr__monitor_step(struct zkr *z); /* the ticker, or a stepped runtime */

#endif
