/* The srvr poll of every member and the leader it names (zkr__poller_*;
 * srvr.h is the parser and the TCP query). */
#ifndef ZKR_POLLER_H
#define ZKR_POLLER_H

#include "core/handle.h"

/* Returns 1 when the picture is settled (the monitor may poll at the
 * idle rate then).  since: a member's answer may come from the process's
 * cache (another handle's request) when its request started at or after
 * that time (zkr__now_ns); UINT64_MAX: every member is asked now.
 * The monitor.  @locks the srvr cache's mu (zk/srvr_cache.h), m->health_mu; then as
 * zkr__session_update, zkr__router_gate_adopt_leader and _gate_flush; one at a time. */
int zkr__poller_poll_members(struct zkr *z, uint64_t since);

#endif
