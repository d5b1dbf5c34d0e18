/* The read_members cap (zkr__carriers_*): which follower sessions a handle
 * keeps, re-chosen on the monitor's turn. */
#ifndef ZKR_CARRIERS_H
#define ZKR_CARRIERS_H

#include "core/handle.h"

/* The monitor's turn, nothing held.  @locks m->health_mu; then, with none held,
 * zkr__member_open/_detach's, zkr__dispatch_complete_dropped's, zkr__watch_rearm_from's. */
void zkr__carriers_tick(struct zkr *z, uint64_t now_ns);

#endif
