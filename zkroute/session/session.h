/* The virtual session (zkr__session_*; DESIGN.md section 4): the owner, the
 * state the application sees, and its dips to CONNECTING. */
#ifndef ZKR_SESSION_H
#define ZKR_SESSION_H

#include "core/handle.h"
#include "core/hooks.h"

void zkr__session_update(struct zkr *z);
void zkr__session_tick(struct zkr *z);
int zkr__session_owner(struct zkr *z);
int zkr__session_dip(struct zkr *z, int slot);
void zkr__session_dip_check(struct zkr *z, int slot, int counted);
/* The calls the layers below make up to the session (hooks.h). */
extern const zkr__session_hooks_t zkr__session_hooks;

#endif
