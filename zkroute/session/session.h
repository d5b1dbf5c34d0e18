/* The virtual session (zkr__session_*; DESIGN.md section 4): the owner, the
 * state the application sees, and its dips to CONNECTING. */
#ifndef ZKR_SESSION_H
#define ZKR_SESSION_H

#include "core/handle.h"
#include "core/hooks.h"

/* Any thread (a member's watcher, a completion, the monitor).  @locks state_mu, inside it
 * m->zh_lock (read), ctx_mu, watch_mu, delivery's mu, one at a time; then mon_mu. */
void zkr__session_update(struct zkr *z);
/* The monitor.  @locks as zkr__session_update, zkr__auth_owner_known, zkr__router_gate_flush,
 * zkr__rescue_close_expired, zkr__watch_done, one at a time. */
void zkr__session_tick(struct zkr *z);
/* Any thread.  @locks none. */
int zkr__session_owner(struct zkr *z);
/* A completion's thread (hooks.h).  @locks state_mu; then as zkr__session_update. */
int zkr__session_dip(struct zkr *z, int slot);
/* A completion's thread or the monitor.  @locks state_mu; then as zkr__session_update. */
void zkr__session_dip_check(struct zkr *z, int slot, int counted);
/* The calls the layers below make up to the session (hooks.h). */
extern const zkr__session_hooks_t zkr__session_hooks;

#endif
