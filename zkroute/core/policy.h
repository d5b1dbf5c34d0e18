/* Which member serves an operation (zkr__policy_*; DESIGN.md section 7): the
 * read pool's candidates and the member each policy picks for reads,
 * writes, hedges and read-only fallbacks. */
#ifndef ZKR_POLICY_H
#define ZKR_POLICY_H

#include "core/handle.h"

int zkr__policy_read_candidate(struct zkr *z, const zkr__member_t *m);
int zkr__policy_epoch_current(struct zkr *z, const zkr__member_t *m);
int zkr__policy_read_member(struct zkr *z);
int zkr__policy_write_member(struct zkr *z);
int zkr__policy_hedge_member(struct zkr *z, int exclude);
int zkr__policy_any_member(struct zkr *z, int exclude);
int zkr__policy_readonly_member(struct zkr *z);
int zkr__policy_readonly_any(struct zkr *z);

#endif
