/* The virtual session (session.c; DESIGN.md section 4): the owner, the
 * state the application sees, and its dips to CONNECTING. */
#ifndef ZKR_SESSION_H
#define ZKR_SESSION_H

#include "handle.h"

void zkr__session_update(struct zkr *z);
void zkr__session_tick(struct zkr *z);
int zkr__session_owner(struct zkr *z);
int zkr__session_is_owner(struct zkr *z, const zkr__member_t *m);
int zkr__session_dip(struct zkr *z, int slot);
void zkr__session_dip_check(struct zkr *z, int slot, int counted);

#endif
