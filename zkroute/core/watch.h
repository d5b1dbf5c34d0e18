/* The watch registry (zkr__watch_*, zkr__watch_rearm_*, zkr__watch_remove_*): the
 * record of every watch the application set, what other parts call -
 * arming from a read's completion, re-arming after a lost session,
 * removal.  watch_record.h is what the three files share under watch_mu. */
#ifndef ZKR_WATCH_H
#define ZKR_WATCH_H

#include "core/handle.h"

/* Lock notes (table in core/handle.h).  "_locked": the caller holds
 * watch_mu.  The others take watch_mu themselves and nothing inside it
 * but the hedger's mu (a held read's reference) and delivery's mu (an
 * event queued); they call no zoo_* under it.  zkr__watch_pair takes
 * ctx_mu alone.  zkr__watch_trampoline is ZooKeeper's watcher thread;
 * zkr__watch_rearm_from and zkr__watch_rearm_retry_lost (the monitor) read-hold
 * m->zh_lock around each re-arming read, and take watch_mu, order_mu,
 * ctx_mu or a waiter's mu inside it. */

enum { ZKR__WATCH_DATA, ZKR__WATCH_EXIST, ZKR__WATCH_CHILD };

enum {
  ZKR__W_PENDING,  /* the read that sets it is in flight */
  ZKR__W_ARMED,    /* live on member's session zh */
  ZKR__W_REARMING, /* being set again on another session (zkr__watch_rearm_*) */
  ZKR__W_LOST,     /* its session is gone and no re-arm got through yet:
                       the monitor retries until one does */
  ZKR__W_HELD,     /* its event came (fire) and waits for the watchers of
                       the path set before it (the registry's ordering, zkr__watch_*); no
                       registration is left on any server */
  ZKR__W_CONSUMED, /* its event was made here (a re-arm or a read that set
                       the pair again saw the change); the registration it
                       still has on zh is swallowed when it fires */
  ZKR__W_FIRED,    /* over (event delivered) while reads that set it
                       again are in flight: kept for them */
  ZKR__W_REMOVED   /* removed by the application (zkr__watch_remove_*): never
                       called again; freed a while later, once no event
                       ZooKeeper may have collected before can still
                       reach it */
};

struct zkr__watch {
  struct zkr *z;
  watcher_fn fn; /* the pair it calls: watch=1 is resolved to the global
                    watcher and context when it is set, as stock stores it */
  void *ctx;
  int kind; /* ZKR__WATCH_* */
  char *path;
  int member;                    /* member slot whose session it is armed on */
  zhandle_t *zh;                 /* ... the session's zhandle: events from any other
                       zhandle are stale and ignored */
  int state;                     /* ZKR__W_*, under watch_mu */
  int reuses;                    /* reads in flight that set it again, under watch_mu */
  int rereads;                   /* ... of which those that zkr__watch_find sent to
                                    its own session (the rest: superseding reads
                                    elsewhere, removals' holds), under watch_mu */
  int revive;                    /* REMOVED by a remove_all's answer while rereads
                                    were in flight on its session: sent after the
                                    removal, such a read sets the pair again
                                    (zkr__watch_reuse_done), under watch_mu */
  int existed;                   /* the node as the arming read saw it */
  int64_t mzxid, pzxid, czxid;   /* czxid: which incarnation of the node it saw */
  int64_t ppzxid;                /* an exists watch on a missing node: its parent's pzxid
                     once learned on the same session, -1 unknown */
  uint64_t id;                   /* unique in the handle: answers that may outlive the
                     record find it by this (zkr__watch_*, zkr__watch_rearm_*) */
  uint64_t read_seq;             /* the read_seq of the read that armed it last (the
                                    state it remembers): under watch_mu */
  uint64_t seq;                  /* the order in which the pair was set (first armed),
                     which is the order its watchers fire in; 0 not yet */
  int fire;                      /* the event that came for it and waits its turn, 0 none */
  int swallow;                   /* CONSUMED: its registration's own event came too */
  struct zkr__watch *supersedes; /* PENDING: the record of the same pair
                                    that this read sets again (held by
                                    reuses), NULL none */
  int removing;                  /* removal calls that hold it: their requests or
                                    results are on their way (zkr__watch_remove_*) */
  void *rm_call;                 /* ... the last of them to take it, NULL none: a
                                    later call that takes it too completes after that
                                    one, under watch_mu */
  void *rm_cover;                /* PENDING: a remove_all asked while the read that
                                    sets it was in flight, which removes what that read
                                    sets (zkr__watch_remove_covered), under watch_mu */
  void *rm_cover_end;            /* ... that call, which waits for the read's
                                    hand-on (zkr__watch_remove_cover_end), under
                                    watch_mu */
  int rm_covered;                /* ... its removal request is on its way: a
                                    ZNOWATCHER means that remove_all's own request
                                    removed it already */
  int again;                     /* FIRED: a read that set it again was answered
                                    after its sync was lost and goes again; the
                                    watch that answer registered, a new one, was
                                    taken off the client locally, and an event
                                    zh still delivers before the second answer is
                                    for a change that answer shows
                                    (zkr__watch_reuse_again), under watch_mu */
  int rearm_after;               /* its event came on zh and waits its turn (HELD,
                                    or CONSUMED and swallowed), and a read that
                                    set it again was answered on zh after that
                                    event: the server read after the change and
                                    registered the watch anew, which the record
                                    takes once its event is delivered
                                    (zkr__watch_over_locked), under watch_mu */
  int rearm_existed;             /* ... that read's answer: the node there */
  struct Stat rearm_stat;        /* ... and as it saw it */
  int rearm_member;              /* ... the member it was answered by */
  uint64_t rearm_read_seq;       /* ... its read_seq: held for the event, it does
                                    not hold that event in turn */
  int rearm_handed;              /* ... handed on already (at its hold's bound) */
  int rearm_fire;                /* ... the event its new watch brought meanwhile */
  int rearm_gone;                /* ... zh was closed meanwhile: the record is
                                    LOST then, to be re-armed */
  int zh_pinned;                 /* REMOVED while still registered on zh (its
                                    server could not be asked): freed when zh
                                    is closed, not by the removal GC */
  int read_pending;              /* the read that armed it has not been handed on
                                    to the application: its events wait */
  int merged_pending;            /* reads that set it again while it was armed,
                                    on its own session (ZooKeeper merged the two),
                                    answered before its event and not handed on
                                    yet: its event comes after them */
  uint64_t merged_read_seq;      /* ... the earliest issued of them (read_seq) */
  uint64_t fire_proof;           /* fire was made from a held read's answer: that
                                    read's read_seq (0: not so) */
  int fire_proof_older;          /* ... and that answer may be older than the
                                    record's state (maybe_older): the event is
                                    due by the handle's own create
                                    (due_all_the_same), not proved by it */
  int merged_existed;            /* ... the first of them as it saw the node */
  int64_t merged_mzxid;          /* ... and its mzxid */
  int64_t merged_pzxid;          /* ... and its pzxid */
  int64_t later_set;             /* the highest mzxid a set of its path showed,
                                    acknowledged to this handle while it was
                                    registered (zkr__watch_note_write), 0 none:
                                    a change after the state its read saw has
                                    committed */
  uint64_t armed_ns;             /* when the read that armed it last was answered */
  uint64_t armed_tick;           /* ... its place in z->watch_ticks, under watch_mu */
  uint64_t came_tick;            /* its own event came on zh (its trampoline), in
                                    z->watch_ticks; 0 none since it was armed:
                                    a read answered on zh after it was read
                                    after that change (same_change), under
                                    watch_mu */
  uint64_t came_read_seq;        /* ... the last read_seq the application had
                                    been given then (z->read_seqs): a read with
                                    a higher one was issued after that event
                                    came (same_change); 0 none, or not known,
                                    under watch_mu */
  uint64_t synced_seq;           /* the read that armed it last went behind a
                                    sync sent after it was issued, and no lost
                                    connection undid it (op->sync_held): that
                                    read's read_seq, else 0 - its server read
                                    after every change committed before the
                                    read was issued (same_change), under
                                    watch_mu */
  int created_after;             /* an exists watch on a missing node: a create of
                                    its path that this handle sent after that
                                    answer was acknowledged - a creation after
                                    the state it saw has committed, and its
                                    CREATED is due (zkr__watch_note_write),
                                    under watch_mu */
  zhandle_t *created_zh;         /* ... the zhandle that answered that create: a
                                    read answered there afterwards was served
                                    after the creation (supersede_locked) */
  uint64_t outlive_seq;          /* an exists watch on a missing node, CONSUMED
                                    by a CREATED of another record of its
                                    pair (spread): the last read_seq the
                                    application had been given then
                                    (z->read_seqs) - a read issued after it,
                                    behind a sync, answered on zh before its
                                    own event shows the creation did not fire
                                    it (zkr__watch_op_done); 0 none, under
                                    watch_mu (z->watch_outlive counts them) */
  uint64_t armed_conn;           /* its member's conn_events when it was last
                                    ARMED, under watch_mu */
  int took_over;                 /* it superseded a record of the pair with no
                                    event between: the pair was set all along,
                                    before its read is handed on too */
  uint64_t took_over_of;         /* ... a record whose own first read was not
                                    handed on yet (its id): the pair is set in
                                    the application's eyes once that read is;
                                    0 it was set already */
  int resuming;                  /* the read that armed it is being handed on
                                    (its event waits), under watch_mu */
  uint64_t removed_ns;
  int rm_settling;              /* REMOVED by its removal call's ZOK, whose completion
                                   is not queued yet (watch_remove.c settle_later):
                                   the application still holds the pair, held
                                   (reuses) until then, under watch_mu */
  uint64_t rm_seq;              /* the issue number of the removal call that removes it
                      (0 none): until that call's completion is handed on,
                      the application holds the pair (zkr__watch_session_watchers) */
  zkr__queue_link_t link;       /* in z->watch_q while in the registry, under watch_mu */
  zkr__queue_link_t plink;      /* ... and in its path's bucket of z->watch_paths */
  uint32_t phash;               /* its path's hash, which names the bucket */
  zkr__queue_link_t ilink;      /* ... and in its id's bucket of z->watch_by_id */
  struct zkr__watch *gone_next; /* a list of records out of the registry, to be freed */
};

/* The registry's records, newest first, under watch_mu:
 *   for (zkr__watch_t *w = zkr__watch_first(z); w; w = zkr__watch_next(w)) */
/* Any thread.  @locks watch_mu held; takes none. */
static inline zkr__watch_t *zkr__watch_at(zkr__queue_link_t *l) {
  return l ? ZKR__QUEUE_DATA(l, zkr__watch_t, link) : NULL;
}
/* @locks watch_mu held, as zkr__watch_at. */
/* Whether a watch record of the application is not live on a connected
 * session: ARMED on a member whose session is not connected, LOST, or
 * REARMING (the watch dip, zkr__session_update).  @locks watch_mu. */
int zkr__watch_unlive(zkr_t *z);

#define zkr__watch_first(z) zkr__watch_at((z)->watch_q.first)
#define zkr__watch_next(w) zkr__watch_at((w)->link.next)

/* The registry's records of one path, newest first (their order in
 * watch_q), under watch_mu: a walk over one path's records costs what
 * that path holds, not what the handle holds (a daemon with 16,000
 * watches paid 17 x stock's client CPU per watched read when every such
 * walk went over all records: docs/benchmarks.md, "Many watches").
 *   for (zkr__watch_t *w = zkr__watch_path_first(z, path); w;
 *        w = zkr__watch_path_next(w)) */
/* @locks watch_mu held. */
zkr__watch_t *zkr__watch_path_first(const struct zkr *z, const char *path);
/* @locks watch_mu held. */
zkr__watch_t *zkr__watch_path_next(const zkr__watch_t *w);

/* The watcher table a watched read of type sets. */
static inline int zkr__watch_kind_of(zkr__op_type_t type) {
  return type == ZKR__OP_EXISTS ? ZKR__WATCH_EXIST
         : type == ZKR__OP_GET  ? ZKR__WATCH_DATA
                                : ZKR__WATCH_CHILD;
}

/* The application's thread (a watched read).  @locks watch_mu. */
zkr__watch_t *zkr__watch_new(struct zkr *z, watcher_fn fn, void *ctx, int kind, const char *path);

/* A completion's thread.  @locks watch_mu, inside it delivery's mu; then zkr__watch_done's, none
 * held. */
/* synced: the read went behind a sync sent after it was issued
 * (op->sync_held). */
void zkr__watch_armed(zkr__watch_t *w, int member, zhandle_t *zh, const struct Stat *stat,
                      uint64_t read_seq, int synced);

/* A completion's thread or an op's free.  @locks watch_mu; then zkr__watch_done's, none held. */
void zkr__watch_discard(zkr__watch_t *w);
/* A completion's thread.  @locks watch_mu.  The read that set w completes
 * with a lost connection although ZooKeeper registered its watch on zh
 * (zkr__dispatch_read_again): w calls nobody again, and is freed once zh
 * is closed (zkr__watch_rearm_from) or with the handle - an event zh
 * collected for it may still come. */
void zkr__watch_abandon(zkr__watch_t *w, int member, zhandle_t *zh);

/* A read that set w again (reused) was answered on zh after its sync was
 * lost, and is about to go again (zkr__dispatch_read_again).  1 when w's
 * event came before that answer (w is FIRED): the answer registered a new
 * watch, which the caller takes off the client locally, as a new
 * record's; until w is armed again, an event zh delivers to it is
 * dropped. */
int zkr__watch_reuse_again(zkr__watch_t *w, zhandle_t *zh);

/* Whether a removal of w (zkr__watch_remove_*) has its request on its way
 * on zh, where w is armed (or was, until its event came): a read that set
 * w again, sent again on zh now
 * (zkr__dispatch_read_again), would be read by the server after the
 * removal and complete after the call, where on one stock session it was
 * answered before it. */
int zkr__watch_removal_on(zkr__watch_t *w, zhandle_t *zh);

/* A completion's thread, nothing held.  @locks watch_mu (its record; zkr__watch_armed or
 * _discard), then the remove cover hooks and zkr__watch_done's. */
void zkr__watch_op_done(zkr__op_t *op, int rc, const struct Stat *stat);
/* A write of the handle was answered ZOK (stat: its Stat, NULL none): a
 * set's mzxid (a plain set's, or a multi's set whose result carries its
 * Stat) is a change of that path the handle knows committed, and the
 * records of the path remember it (later_set); a create (not sequential,
 * plain or in a multi) sent after an exists watch's read found the node
 * missing is a creation after that watch's state (created_after), on the
 * zhandle that answered it (created_zh).
 * A completion's thread, nothing held.  @locks watch_mu. */
void zkr__watch_note_write(zkr__op_t *op, const struct Stat *stat);
/* The read that armed record id was handed on to the application
 * (zkr__completion_*): the record's events may go. */
/* The thread handing the read on.  @locks watch_mu, inside it delivery's mu; then
 * zkr__watch_done's. */
void zkr__watch_read_handed_on(struct zkr *z, uint64_t id, uint64_t read_seq);
/* The same for a read that set record id again while it was armed
 * (zkr__watch_reuse_done returned 1), or its free if it never was. */
/* The thread handing the read on.  @locks watch_mu, inside it delivery's mu; then
 * zkr__watch_done's. */
void zkr__watch_merged_handed_on(struct zkr *z, uint64_t id);

/* The application's thread.  @locks watch_mu. */
zkr__watch_t *zkr__watch_find(struct zkr *z, int kind, const char *path, watcher_fn fn, void *ctx,
                              int (*pin_ok)(struct zkr *z, int member), int *member,
                              zkr__watch_t **supersede);

/* The application's thread (zkr__router_route).  @locks watch_mu.  A read
 * that was to set w again on w's own member (zkr__watch_find counted it in
 * w's reuses) goes to another session after all - in consistency
 * `session`, behind the handle's writes on their session: it sets a record
 * of its own there, which supersedes w once the read armed it, as when
 * zkr__watch_find finds w's member unable to take the read.  NULL when
 * there is no memory (the caller fails the read: ZKR_ENOMEM). */
zkr__watch_t *zkr__watch_reuse_elsewhere(zkr__watch_t *w, int kind);

/* The application's thread.  @locks ctx_mu. */
void zkr__watch_pair(struct zkr *z, watcher_fn *fn, void **ctx);
/* Init (the drop-in).  @locks ctx_mu. */
void zkr__watch_set_alias(struct zkr *z, void (*fn)(void *, watcher_fn *, void **), void *arg);

/* A record by its id, under watch_mu; NULL when it is gone. */
/* @locks watch_mu held. */
zkr__watch_t *zkr__watch_by_id_locked(struct zkr *z, uint64_t id);

/* Routing (zkr__dispatch, m->zh_lock read-held).  @locks watch_mu. */
int zkr__watch_reuse_bound(zkr__watch_t *w, zhandle_t *zh);

/* A completion's thread, the application's, or an op's free.  @locks watch_mu; then
 * zkr__watch_done's, none held.  Returns 1 when the read's registration
 * merged with w's, still armed: w's event waits for the read's hand-on
 * (zkr__watch_merged_handed_on). */
int zkr__watch_reuse_done(zkr__watch_t *w, int reread, int armed, int member, zhandle_t *zh,
                          const struct Stat *stat, uint64_t read_seq);

/* A member zhandle's completion thread (ZooKeeper's watcher).  @locks watch_mu, inside it
 * delivery's mu; then zkr__watch_done's. */
void zkr__watch_trampoline(zhandle_t *zh, int type, int state, const char *path, void *ctx);

/* The close path (destroy).  @locks watch_mu. */
void zkr__watch_free_all(struct zkr *z);

/* The watch event before the new data (zkr__watch_*): a read held, and the
 * hand-on of those nothing blocks any more after records changed. */
/* keep: called under the registry's lock when op is held (a hedged
 * read's extra hold, taken before any resume can run), or NULL. */
/* A completion's thread.  @locks watch_mu; keep runs inside it (hedger's mu). */
/* A reply that comes once the session is over and would be held is
 * rewritten to the end's outcome (ZCLOSING) and not held. */
int zkr__watch_hold_read(zkr__op_t *op, zkr__result_t *r, void (*keep)(zkr__op_t *));
/* Any thread, no watch_mu held.  @locks watch_mu (delivery's mu inside), then resumes reads (as
 * zkr__completion_resume) without it. */
void zkr__watch_done(struct zkr *z, zkr__watch_t *gone);
/* zkr__watch_done for the held reads issued before the operation of
 * issue number ord_seq (zkr__barrier_add) only: the rest stay held until
 * the next zkr__watch_done.  @locks as zkr__watch_done. */
void zkr__watch_done_before(struct zkr *z, zkr__watch_t *gone, uint64_t ord_seq);
/* The close path.  @locks as zkr__watch_done. */
void zkr__watch_release_all_held(struct zkr *z);
/* The monitor.  @locks as zkr__watch_done. */
void zkr__watch_hold_tick(struct zkr *z);

/* zkr_stats' caller.  @locks watch_mu. */
void zkr__watch_stats(struct zkr *z, zkr_stats_t *s);

/* Any thread, possibly under state_mu (zkr__deliver_session).  @locks watch_mu, and
 * delivery's mu inside it. */
void zkr__watch_session_deliver(struct zkr *z, int state, watcher_fn gfn, void *gctx);

/* zkr__watch_rearm_* */
/* The monitor (rescue, carriers, retirement).  @locks watch_mu; m->zh_lock (read) to send,
 * order_mu and what a hand-on takes, without it. */
void zkr__watch_rearm_from(struct zkr *z, int slot, zhandle_t *old);

/* The monitor.  @locks watch_mu; m->zh_lock (read) to send, without it. */
void zkr__watch_rearm_retry_lost(struct zkr *z, uint64_t now_ns);

/* Once every zhandle of z is closed: frees the re-arms none answered. */
/* The close path (destroy).  @locks watch_mu. */
void zkr__watch_rearm_free_all(struct zkr *z);

/* zkr__watch_remove_* */
/* The application's thread.  @locks ctx_mu, watch_mu, m->zh_lock (read), order_mu, delivery's
 * mu, one at a time; hand-ons as zkr__completion_hand_on. */
int zkr__watch_remove_watches(struct zkr *z, const char *path, ZooWatcherType wtype, int all,
                              watcher_fn watcher, void *ctx, int local, void_completion_t cb,
                              const void *data, int direct);

/* The close path or the monitor (zkr__watch_rearm_from).  @locks watch_mu; then hands on
 * (order_mu, delivery's mu, zkr__watch_done's) without it. */
void zkr__watch_remove_dropped(struct zkr *z, zhandle_t *zh);
/* A watched read completes (before its record is armed or discarded):
 * whether a remove_all covers what it sets, holding the record when so;
 * then, once armed or discarded, the covered record's removal. */
/* A completion's thread or an op's free (hooks.h).  @locks watch_mu. */
int zkr__watch_remove_cover_held(struct zkr *z, zkr__watch_t *w);
/* As _cover_held.  @locks watch_mu; m->zh_lock (read) and hand-ons without it. */
void zkr__watch_remove_covered(struct zkr *z, zkr__watch_t *w);
/* The read that set a covered record was handed on to the application
 * (or freed without): the call's wait for it ends, and it may complete.
 * A completion's thread or an op's free.  @locks watch_mu; hand-ons
 * without it. */
void zkr__watch_remove_cover_end(struct zkr *z, zkr__watch_t *w);
/* Removal calls whose completion waited for the events of records they
 * remove (delivered now, the session over, or past twice rescue_ms)
 * complete.  Any thread, no watch_mu held.  @locks watch_mu, then what a
 * completion takes. */
void zkr__watch_remove_events_out(struct zkr *z);

/* The monitor.  @locks watch_mu. */
void zkr__watch_remove_gc(struct zkr *z, uint64_t now_ns);

#endif
