/* The health model (health.h, pure) applied to the members
 * (health_apply.c): the monitor's health turn, probes' results, latency
 * samples of completed reads, the model's configuration from the options. */
#ifndef ZKR_HEALTH_APPLY_H
#define ZKR_HEALTH_APPLY_H

#include "core/handle.h"

void zkr__health_apply_tick(struct zkr *z, uint64_t now_ns);
void zkr__health_apply_probe_result(zkr__member_t *m, uint64_t now, double ms, int ok);
void zkr__health_apply_op_done(zkr__op_t *op, int rc, uint64_t now, double ms);
void zkr__health_apply_cfg(zkr__health_cfg_t *c, const zkr_options_t *o);

#endif
