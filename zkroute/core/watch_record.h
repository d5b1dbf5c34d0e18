/* What zkr__watch_* (the registry) shares with zkr__watch_rearm_* (re-arming after
 * a session was lost): the record's life under watch_mu.  Internal to
 * those two files. */
#ifndef ZKR_WATCH_RECORD_H
#define ZKR_WATCH_RECORD_H

#include "core/watch.h"

/* Under watch_mu.
 * @locks watch_mu held. */
void zkr__watch_set_state_locked(struct zkr *z, zkr__watch_t *w, int state);
/* @locks watch_mu held. */
void zkr__watch_unlink_locked(struct zkr *z, zkr__watch_t *w);
/* @locks watch_mu held. */
int zkr__watch_over_locked(struct zkr *z, zkr__watch_t *w);
/* An event for w: its own (synthetic 0) or one made here (1); then the
 * watchers of its path whose turn it is are delivered, and records that
 * are over are put on *gone (free them outside watch_mu).
 * @locks watch_mu held; takes delivery's mu inside it. */
void zkr__watch_fire_locked(struct zkr *z, zkr__watch_t *w, int type, int synthetic,
                            zkr__watch_t **gone);
/* @locks watch_mu held; takes delivery's mu inside it. */
void zkr__watch_release_locked(struct zkr *z, const char *path, zkr__watch_t **gone);
/* @locks none; watch_mu not held. */
void zkr__watch_free_list(zkr__watch_t *gone);
/* Whether the read that armed w is held back for another record's event.
 * @locks watch_mu held. */
int zkr__watch_read_held_back_locked(const struct zkr *z, const zkr__watch_t *w);
/* The event w's watch missed between its remembered state and stat (rc:
 * the read's answer), 0 none.
 * @locks none. */
int zkr__watch_missed(const zkr__watch_t *w, int rc, const struct Stat *stat);
/* w, still registered, goes with a removal call of issue number ord_seq
 * (zkr__watch_remove_*): a read issued before that call and held here
 * for w's event proves a change w missed - on one stock session that
 * read's reply came before the removal's answer, and w's event before
 * the reply.  The event is made from it, as at the hold's bound, and w
 * keeps it (1); 0: none.
 * @locks watch_mu held; takes delivery's mu inside it. */
int zkr__watch_missed_before_locked(struct zkr *z, zkr__watch_t *w, uint64_t ord_seq,
                                    zkr__watch_t **gone);
/* @locks watch_mu held. */
void zkr__watch_arm_locked(struct zkr *z, zkr__watch_t *w, int member, zhandle_t *zh,
                           const struct Stat *stat, uint64_t read_seq);
/* @locks watch_mu held; takes delivery's mu inside it. */
void zkr__watch_deliver_locked(zkr__watch_t *w, int type);
/* A remove_all takes w: the first held read that armed it carries it as
 * its cover, and the call completes after that read's hand-on; 1 when
 * one does.  @locks watch_mu held. */
int zkr__watch_cover_held_read_locked(struct zkr *z, zkr__watch_t *w);
/* Whether a read issued before the operation of issue number ord_seq
 * that armed one of v[0..n) is held here (answered, not handed on).
 * @locks watch_mu held. */
int zkr__watch_read_held_before_locked(const struct zkr *z, uint64_t ord_seq,
                                       zkr__watch_t *const *v, int n);
/* @locks watch_mu held. */
void zkr__watch_remove_locked(struct zkr *z, zkr__watch_t *w);
/* A removal of path is sent on zhandle zh, or answered there: its server
 * may drop the watch of a record of path consumed there (outlive_seq),
 * which no later read shows live then.  @locks watch_mu held. */
void zkr__watch_outlive_drop_locked(struct zkr *z, const char *path, zhandle_t *zh);
/* Whether w was removed by a call whose completion the application has
 * not seen yet (rm_seq): until it has, it holds the pair, and the record
 * stays.  @locks watch_mu held. */
int zkr__watch_removal_unseen_locked(const struct zkr *z, const zkr__watch_t *w);
/* Drops the registration of w on zhandle zh on the client only.
 * A completion's thread, watch_mu not held.  @locks m->zh_lock (read). */
void zkr__watch_remove_unregister(struct zkr *z, zkr__watch_t *w, int slot, zhandle_t *zh,
                                  int own_thread);
/* Outside watch_mu, once the record is out of the registry.
 * @locks none; watch_mu not held. */
void zkr__watch_free_record(zkr__watch_t *w);

#endif
