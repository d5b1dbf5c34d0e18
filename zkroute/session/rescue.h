/* The owner session re-attached and carrier sessions re-created
 * (zkr__rescue_*; docs/failover.md), on the monitor's turn. */
#ifndef ZKR_RESCUE_H
#define ZKR_RESCUE_H

#include "core/handle.h"

/* The monitor.  @locks state_mu and m->zh_lock (read) to choose; then
 * zkr__member_open/_detach's, zkr__dispatch_complete_dropped's, zkr__watch_rearm_from's, the
 * gate's, one at a time. */
void zkr__rescue_tick(struct zkr *z, uint64_t now_ns);
/* The monitor.  @locks as zkr__member_detach, zkr__dispatch_complete_dropped,
 * zkr__watch_rearm_from and zkr__member_open, one at a time. */
int zkr__rescue_carrier_replace(zkr__member_t *m, int reopen);
/* The monitor (zkr__session_tick).  @locks as zkr__member_detach, zkr__dispatch_complete_dropped
 * and zkr__router_gate_flush, one at a time. */
void zkr__rescue_close_expired(struct zkr *z);
/* The monitor or the close path.  @locks none (zookeeper_close). */
void zkr__rescue_mover_close(struct zkr *z);

#endif
