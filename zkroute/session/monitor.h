/* The monitor thread (zkr__monitor_*): srvr polls, health, rescue, carriers
 * and membership turns; a kick (zkr__kick_monitor) makes it turn at once. */
#ifndef ZKR_MONITOR_H
#define ZKR_MONITOR_H

#include <stdint.h>

#include "core/handle.h"

int zkr__monitor_start(struct zkr *z);
void zkr__monitor_stop(struct zkr *z);
uint64_t zkr__monitor_step(struct zkr *z); /* stepped runtime (runtime.h) */

#endif
