/* The application's issue order (zkr__barrier_*): every operation it issued
 * until its completion was handed on, and zkr_async as a barrier. */
#ifndef ZKR_BARRIER_H
#define ZKR_BARRIER_H

#include "core/handle.h"

/* Lock notes (table in core/handle.h): each takes order_mu, which may be
 * taken under gate_mu or m->zh_lock, and holds no other lock inside it;
 * operations it hands on are handed on after order_mu is let go. */

/* The application's thread, before zkr__router_route.  @locks order_mu. */
void zkr__barrier_add(zkr__op_t *op);
/* The application's thread (refused) or a completion's.  @locks order_mu,
 * then hands on what became ready (delivery's mu) without it. */
void zkr__barrier_cancel(zkr__op_t *op);
void zkr__barrier_done(zkr__op_t *op);
/* A completion's thread.  @locks order_mu. */
void zkr__barrier_reply(zkr__op_t *op, const zkr__result_t *r);
int zkr__barrier_hold(zkr__op_t *op, const zkr__result_t *r);

#endif
