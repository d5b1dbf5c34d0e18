/* Which member serves an operation (zkr__policy_*; DESIGN.md section 7): the
 * read pool's candidates and the member each policy picks for reads,
 * writes, hedges and read-only fallbacks. */
#ifndef ZKR_POLICY_H
#define ZKR_POLICY_H

#include "core/handle.h"

/* Any thread.  @locks none. */
int zkr__policy_read_candidate(struct zkr *z, const zkr__member_t *m);
/* Any thread.  @locks none. */
int zkr__policy_epoch_current(struct zkr *z, const zkr__member_t *m);
/* Routing, possibly under gate_mu.  @locks sel_lock (read, zkr__selector_pick), m->health_mu
 * inside it. */
int zkr__policy_read_member(struct zkr *z);
/* Routing or the monitor, possibly under gate_mu.  @locks m->health_mu. */
int zkr__policy_write_member(struct zkr *z);
/* The hedger's turn, no lock held.  @locks m->health_mu. */
int zkr__policy_hedge_member(struct zkr *z, int exclude);
/* The monitor (re-arms).  @locks none. */
int zkr__policy_any_member(struct zkr *z, int exclude);
/* Routing.  @locks none. */
int zkr__policy_readonly_member(struct zkr *z);
/* Under state_mu (derive_state).  @locks none. */
int zkr__policy_readonly_any(struct zkr *z);

#endif
