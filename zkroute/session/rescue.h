/* The owner session re-attached and carrier sessions re-created
 * (zkr__rescue_*; docs/failover.md), on the monitor's turn. */
#ifndef ZKR_RESCUE_H
#define ZKR_RESCUE_H

#include "core/handle.h"

void zkr__rescue_tick(struct zkr *z, uint64_t now_ns);
int zkr__rescue_carrier_replace(zkr__member_t *m, int reopen);
void zkr__rescue_close_expired(struct zkr *z);
void zkr__rescue_mover_close(struct zkr *z);

#endif
