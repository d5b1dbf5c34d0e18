/* Hedged reads applied (zkr__hedger_*; hedge.h is the pure delay and
 * cap): the hedger's turn and queue, sending the second request,
 * claiming the first reply, the statistics. */
#ifndef ZKR_HEDGER_H
#define ZKR_HEDGER_H

#include "core/handle.h"

/* Lock notes (table in core/handle.h): every function here that takes
 * the hedger's mu takes nothing inside it; _sent runs with gate_mu and
 * m->zh_lock possibly held, _claim/_ref/_release on a completion's
 * thread, possibly with watch_mu held (_ref), _step on the ticker's timer
 * thread or a stepped runtime with nothing held; _sent kicks the ticker
 * (its mu is a leaf) after releasing the hedger's mu.  @locks hedger's mu: _stop,
 * _sent, _sample, _claim, _ref, _release, _stats, _step. */
/* Init.  @locks none. */
int zkr__hedger_new(struct zkr *z); /* ZOK, ZKR_ENOMEM or ZKR_ETHREAD */
/* The close path.  @locks hedger's mu. */
void zkr__hedger_stop(struct zkr *z); /* no hedge from now on; queue stays */
/* The close path (destroy).  @locks none. */
void zkr__hedger_free(struct zkr *z);
/* Routing.  @locks none. */
int zkr__hedger_eligible(const zkr__op_t *op);
/* Routing (zkr__dispatch).  @locks hedger's mu; then, without it, the ticker's mu and
 * zkr__op_free's. */
void zkr__hedger_sent(zkr__op_t *op);
/* A completion's thread.  @locks hedger's mu. */
void zkr__hedger_sample(struct zkr *z, int member, double ms);
/* A completion's thread.  @locks hedger's mu (zkr__hedger_sample). */
void zkr__hedger_op_done(zkr__op_t *op, int rc, double ms);
/* A completion's thread.  @locks hedger's mu. */
zkr__op_t *zkr__hedger_claim(zkr__op_t *op, int rc);
/* One more hold on the primary p, dropped by zkr__hedger_release(p).
 * A completion's thread, under watch_mu (zkr__watch_hold_read's keep).  @locks hedger's mu. */
void zkr__hedger_ref(zkr__op_t *p);
/* A completion's or a resume's thread.  @locks hedger's mu; then zkr__op_free's without it. */
void zkr__hedger_release(zkr__op_t *op);
/* zkr_stats' caller.  @locks hedger's mu. */
void zkr__hedger_stats(struct zkr *z, zkr_stats_t *s);
/* The ticker's timer thread or a stepped runtime, nothing held.  @locks hedger's mu, released
 * around each send (as zkr__dispatch) and hand-on. */
uint64_t zkr__hedger_step(struct zkr *z); /* the ticker, or a stepped runtime */

#endif
