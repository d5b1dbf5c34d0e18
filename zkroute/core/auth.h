/* Credentials (auth.c): recorded once, replayed on every member session. */
#ifndef ZKR_AUTH_H
#define ZKR_AUTH_H

#include "core/handle.h"

void zkr__auth_replay(zkr__member_t *m);
void zkr__auth_owner_known(struct zkr *z);
void zkr__auth_free_all(struct zkr *z);
void zkr__auth_tick(struct zkr *z);

#endif
