/* What watch.c (the registry) shares with watch_rearm.c (re-arming after
 * a session was lost): the record's life under watch_mu.  Internal to
 * those two files. */
#ifndef ZKR_WATCH_RECORD_H
#define ZKR_WATCH_RECORD_H

#include "watch.h"

/* Under watch_mu. */
void zkr__watch_unlink_locked(struct zkr *z, zkr__watch_t *w);
int zkr__watch_over_locked(struct zkr *z, zkr__watch_t *w);
void zkr__watch_arm_locked(struct zkr *z, zkr__watch_t *w, int member, zhandle_t *zh,
                           const struct Stat *stat);
void zkr__watch_deliver_locked(zkr__watch_t *w, int type);
void zkr__watch_remove_locked(struct zkr *z, zkr__watch_t *w);
/* Drops the registration of w on zhandle zh on the client only. */
void zkr__watch_unregister(struct zkr *z, zkr__watch_t *w, int slot, zhandle_t *zh, int own_thread);
/* Outside watch_mu, once the record is out of the registry. */
void zkr__watch_free_record(zkr__watch_t *w);

#endif
