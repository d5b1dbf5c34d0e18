/* The health model (health.h, pure) applied to the members
 * (zkr__pool_*): the monitor's health turn, probes' results, latency
 * samples of completed reads, the model's configuration from the options. */
#ifndef ZKR_POOL_H
#define ZKR_POOL_H

#include "core/handle.h"

/* Lock notes (table in core/handle.h).  The monitor's turn.  @locks
 * every member's m->health_mu in slot order (the pool median), then each
 * due member's alone; sends probes (zkr__dispatch_probe) with none held. */
void zkr__pool_tick(struct zkr *z, uint64_t now_ns);
/* A completion's thread.  @locks m->health_mu (zkr__member_sample). */
void zkr__pool_probe_result(zkr__member_t *m, uint64_t now, double ms, int ok);
void zkr__pool_op_done(zkr__op_t *op, int rc, uint64_t now, double ms);
void zkr__pool_cfg(zkr__health_cfg_t *c, const zkr_options_t *o);

#endif
