/* Credentials (zkr__auth_*): recorded once, replayed on every member session. */
#ifndef ZKR_AUTH_H
#define ZKR_AUTH_H

#include "core/handle.h"

/* Lock notes (table in core/handle.h).  Each takes auth_mu, except
 * zkr__auth_free_all (the handle's end: nothing else runs, no lock);
 * zkr__auth_replay and the monitor's zkr__auth_tick send under it with
 * m->zh_lock read-held, and queue the answer's callback (delivery's mu).
 * auth_done (ZooKeeper's completion thread) takes ans_mu only.
 * zkr_lock_auth leaves auth_mu held for the application. */

/* A thread opening a member (init, the monitor).  @locks auth_mu, inside it m->zh_lock (read)
 * for each zoo_add_auth. */
void zkr__auth_replay(zkr__member_t *m);
/* The monitor (zkr__session_tick).  @locks auth_mu, inside it delivery's mu (queues the
 * answers). */
void zkr__auth_owner_known(struct zkr *z);
/* The close path (destroy), no other thread left.  @locks none. */
void zkr__auth_free_all(struct zkr *z);
/* The monitor, or the close path.  @locks ans_mu, then auth_mu (m->zh_lock read inside,
 * delivery's mu); hooks (as zkr__session_update, zkr__router_gate_flush) and m->health_mu with
 * none held. */
void zkr__auth_tick(struct zkr *z);

#endif
