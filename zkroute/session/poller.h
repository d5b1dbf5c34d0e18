/* The srvr poll of every member and the leader it names (zkr__poller_*;
 * srvr.h is the parser and the TCP query). */
#ifndef ZKR_POLLER_H
#define ZKR_POLLER_H

#include "core/handle.h"

/* Returns 1 when the picture is settled (the monitor may poll at the
 * idle rate then). */
int zkr__poller_poll_members(struct zkr *z);

#endif
