/* Credentials (zkr__auth_*): recorded once, replayed on every member session. */
#ifndef ZKR_AUTH_H
#define ZKR_AUTH_H

#include "core/handle.h"

/* Lock notes (table in core/handle.h).  Each takes auth_mu;
 * zkr__auth_replay and the monitor's zkr__auth_tick send under it with
 * m->zh_lock read-held, and queue the answer's callback (delivery's mu).
 * auth_done (ZooKeeper's completion thread) takes ans_mu only.
 * zkr_lock_auth leaves auth_mu held for the application. */

void zkr__auth_replay(zkr__member_t *m);
void zkr__auth_owner_known(struct zkr *z);
void zkr__auth_free_all(struct zkr *z);
void zkr__auth_tick(struct zkr *z);

#endif
