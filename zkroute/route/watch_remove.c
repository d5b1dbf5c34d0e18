/* Removing watches (zoo_remove_watches and friends): through the
 * watch registry, on the member session that holds each watch, with the
 * stock return codes.
 *
 * A removal names a path, a watcher type (ZWATCHTYPE_CHILD: child
 * watches; ZWATCHTYPE_DATA: data and exists watches; ZWATCHTYPE_ANY) and
 * either one watcher and context or every watcher (remove_all).  Stock
 * answers ZNOWATCHER at once, without calling the completion, when no such
 * watcher is registered - except remove_all, which asks the server.  With
 * `local` the registration is dropped on the client only, with no server
 * request; without it the server is asked (check or remove watches) and
 * the client's registration goes only when the server said ZOK.  A removed
 * watcher is never called again.
 *
 * Here the registrations are trampoline records spread over the member
 * sessions: each record armed on a session is removed there (its own
 * registration: trampoline and record), one request per record, or one per
 * session for remove_all; a record that is not on a server right now (lost,
 * or being set again after its session was lost) is removed locally
 * whatever `local` says.  A remove_all that finds no record asks every
 * working member session anyway, as stock asks its server: one whose
 * server still holds a watch the client removed only locally answers ZOK.
 * The application's one completion gets ZOK when some request succeeded
 * or a record was removed here, else the first other error, else
 * ZNOWATCHER (every server said so).  What it says is what is left: the
 * records not on a server (lost, fired) and those whose server could not
 * be asked go only with ZOK - then all of them, so that no watch the
 * application was told is gone fires - and stay with an error, as a
 * failed stock removal leaves its watches (settle_later).  A record that
 * an earlier removal still holds (its request or its result on the way)
 * is taken by a later one too, which completes after that one, as one
 * stock session answers the earlier first (wait_for_locked).  A request
 * whose zhandle is closed before it answers
 * is answered ZCONNECTIONLOSS (ZCLOSING when the handle closes) by
 * zkr__watch_remove_dropped, exactly once.
 *
 * A removed record stays, as REMOVED, for REMOVED_KEEP_S: an event that
 * ZooKeeper collected for it before the removal may still be on its way
 * through the completion queue (stock delivers such an event; here it is
 * dropped), and its memory must outlive that. */
#include <stdlib.h>
#include <string.h>

#include "route/barrier.h"
#include "route/completion.h"
#include "route/dispatch.h"
#include "route/router.h"
#include "core/deliver.h"
#include "core/handle.h"
#include "model/path.h"
#include "core/registry.h"
#include "core/watch.h"
#include "core/watch_record.h"
#include "zk/zkapi.h"

#define REMOVED_KEEP_S 60

typedef struct rm_call {
  zkr_t *z;
  void_completion_t cb;
  const void *data;
  int direct;
  /* Its place in the handle's issue order (zkr__barrier_*): a zkr_async issued
   * after it completes after it, as on one stock session. */
  zkr__op_t *order;
  int pending; /* requests in flight + 1 while sending; under watch_mu */
  int ok, nowatcher, other_rc;
  /* Records whose removal waits for the call's result (under watch_mu):
   * lost or fired ones (on no server), and those whose server request
   * failed.  The call's ZOK removes them too - the application was told
   * its watches are gone; an error leaves them, as stock's failed removal
   * leaves its watches.  Each is held (reuses) and marked removing. */
  zkr__watch_t **later;
  int nlater, caplater;
  /* Later calls that took records this one holds: each waits (pending)
   * until this one completed, as on one stock session, where the server
   * answers the earlier removal first.  Under watch_mu. */
  struct rm_call **waiters;
  int nwaiters, capwaiters;
  int at_hand_on; /* settled at its completion's hand-on (settle_at_hand_on) */
  /* Records whose event came before their server's answer and waits its
   * turn (HELD behind a pair set before it): the application gets that
   * event before the call's completion, as stock's one session delivers
   * an event that came before a reply first (events_waiting_locked).
   * Each is held (reuses).  Under watch_mu. */
  zkr__watch_t **fired;
  int nfired, capfired;
  /* Answered, its completion waiting for those events (z->rm_wait): since
   * wait_ns, in the list by wait_next.  Under watch_mu. */
  int waiting;
  uint64_t wait_ns;
  struct rm_call *wait_next;
  /* Its records settled (settle_records), its completion not queued yet:
   * it waits for the reads issued before it that are still held here
   * (events_waiting_locked).  settled_rc is the result they followed;
   * later[0..nsettling) the records kept rm_settling meanwhile; gone those
   * to free after the completion.  Under watch_mu. */
  int settled, settled_rc, nsettling, done_after;
  zkr__watch_t *gone;
} rm_call_t;

struct zkr__rm_req {
  struct zkr__rm_req *next;
  rm_call_t *call;
  zhandle_t *zh;
  int covers; /* the removal of a record a covered read set (zkr__watch_remove_covered) */
  int all;    /* a remove_all: its ZOK drops every registration of path and type on zh */
  ZooWatcherType t;
  char *path;
  int n;
  zkr__watch_t *w[]; /* the records it removes, held (reuses) */
};
typedef struct zkr__rm_req rm_req_t;

static ZooWatcherType type_of(const zkr__watch_t *w) {
  return w->kind == ZKR__WATCH_CHILD ? ZWATCHTYPE_CHILD : ZWATCHTYPE_DATA;
}

/* Under watch_mu: w is removed by the call issued as seq, in session
 * mode's issue order.  The first such call is the one whose completion
 * shows the application the pair removed; a later call that takes w too
 * (issued while the first was in flight) does not move that (sim seed
 * 1954 --consistency session: a second remove_all renumbered pair 5's
 * record, and its CONNECTED, queued after the first call's completion,
 * still reached it). */
static void rm_seq_first(zkr__watch_t *w, uint64_t seq) {
  if (!w->rm_seq || seq < w->rm_seq) w->rm_seq = seq;
}

/* Under watch_mu. */
void zkr__watch_remove_locked(zkr_t *z, zkr__watch_t *w) {
  /* Only a watch still registered when removed is the application's
   * until the call completes (rm_seq); one whose event came is over. */
  int registered = !w->fire && (w->state == ZKR__W_ARMED || w->state == ZKR__W_REARMING ||
                                w->state == ZKR__W_LOST);
  if (!registered) w->rm_seq = 0;
  if (w->rearm_after) {
    /* The watch a read set again after its event came (zkr__watch_reuse_done)
     * is still on zh: the record calls nobody, and lives as long as zh. */
    if (!w->rearm_gone && w->zh) w->zh_pinned = 1;
    w->rearm_after = 0;
    w->rearm_fire = 0;
  }
  zkr__watch_set_state_locked(z, w, ZKR__W_REMOVED);
  w->fire = 0; /* an event that waited for its turn is dropped */
  w->removed_ns = zkr__now_ns();
}

/* own_thread: called on zh's own completion thread, where zh cannot be
 * closed under the call (zookeeper_close joins that thread), so without
 * the slot's lock; else under it (never with watch_mu held). */
void zkr__watch_remove_unregister(zkr_t *z, zkr__watch_t *w, int slot, zhandle_t *zh,
                                  int own_thread) {
  if (!zh || slot < 0) return;
  if (own_thread) {
    zkr__zk->zoo_remove_watches(zh, w->path, type_of(w), zkr__watch_trampoline, w, 1);
    return;
  }
  zkr__member_t *m = &z->members[slot];
  pthread_rwlock_rdlock(&m->zh_lock);
  if (m->zh == zh)
    zkr__zk->zoo_remove_watches(zh, w->path, type_of(w), zkr__watch_trampoline, w, 1);
  pthread_rwlock_unlock(&m->zh_lock);
}

/* Under watch_mu: registered, for this path, type and watcher. */
static int matches(const zkr_t *z, const zkr__watch_t *w, const char *path, ZooWatcherType t,
                   int all, watcher_fn fn, void *ctx, watcher_fn gfn, void *gctx) {
  /* Not a HELD record: its event came before this removal was asked for
   * and waits only for its turn - stock would have delivered it already,
   * and removes nothing for it (a removal does not drop an event). */
  if (w->state != ZKR__W_ARMED && w->state != ZKR__W_REARMING && w->state != ZKR__W_LOST) return 0;
  if (strcmp(w->path, path) != 0) return 0;
  if (t != ZWATCHTYPE_ANY && type_of(w) != t) return 0;
  if (all) return 1;
  /* Armed by a read held back for another record's event: in the
   * application's eyes that watcher is not registered yet, and stock's
   * single-watcher removal, which looks in the client's table first,
   * would not find it.  (Not read_pending: a blocking call's caller may
   * run on before its completion thread marks the read handed on.) */
  if (zkr__watch_read_held_back_locked(z, w)) return 0;
  (void)gfn;
  (void)gctx;
  return w->fn == fn && w->ctx == ctx;
}

/* Under watch_mu: a watched read of path in flight that a remove_all
 * asks the servers covers (stock's single-watcher removal checks the
 * client's table first, where the read's watcher is not yet: it covers
 * nothing in flight, nor does a local removal). */
static int covers(const zkr__watch_t *w, const char *path, ZooWatcherType t, int all, int local) {
  if (!all || local || w->state != ZKR__W_PENDING || w->removing || w->rm_cover) return 0;
  if (strcmp(w->path, path) != 0) return 0;
  return t == ZWATCHTYPE_ANY || type_of(w) == t;
}

/* Room for one more element (of size bytes) in the growing array *arrp
 * (a pointer to the array's pointer) holding n of *cap: 0 out of memory,
 * the array as it was. */
static int room_for_one(void *arrp, int n, int *cap, size_t size) {
  if (n < *cap) return 1;
  int ncap = *cap ? 2 * *cap : 4;
  void *old;
  memcpy(&old, arrp, sizeof old);
  void *v = realloc(old, (size_t)ncap * size);
  if (!v) return 0;
  memcpy(arrp, &v, sizeof v);
  *cap = ncap;
  return 1;
}

/* Under watch_mu: w waits for c's result; 0 when it cannot (out of
 * memory: the caller decides now). */
static int defer_locked(rm_call_t *c, zkr__watch_t *w) {
  if (!room_for_one(&c->later, c->nlater, &c->caplater, sizeof *c->later)) return 0;
  c->later[c->nlater++] = w;
  w->removing++;
  w->reuses++;
  if (!w->rm_call) w->rm_call = c;
  return 1;
}

/* Under watch_mu: w's event came before its removal's answer and waits
 * its turn; c completes after it (events_waiting_locked).  Out of
 * memory: c does not wait for it. */
static void note_fired_locked(rm_call_t *c, zkr__watch_t *w) {
  for (int i = 0; i < c->nfired; i++)
    if (c->fired[i] == w) return;
  if (!room_for_one(&c->fired, c->nfired, &c->capfired, sizeof *c->fired)) return;
  c->fired[c->nfired++] = w;
  w->reuses++;
}

/* Under watch_mu: one request answered, or one sender done. */
static rm_call_t *call_release_locked(rm_call_t *c) { return --c->pending == 0 ? c : NULL; }

/* Under watch_mu: c completes after prev (c took a record prev holds).
 * Out of memory: it does not wait. */
static void wait_for_locked(rm_call_t *c, rm_call_t *prev) {
  for (int i = 0; i < prev->nwaiters; i++)
    if (prev->waiters[i] == c) return;
  if (!room_for_one(&prev->waiters, prev->nwaiters, &prev->capwaiters, sizeof *prev->waiters))
    return;
  prev->waiters[prev->nwaiters++] = c;
  c->pending++;
}

static void call_finish(rm_call_t *c);
static void drop_fired(rm_call_t *c);

/* c completed: the calls that waited for it may complete now. */
static void release_waiters(rm_call_t *c) {
  zkr_t *z = c->z;
  for (int i = 0; i < c->nwaiters; i++) {
    pthread_mutex_lock(&z->watch_mu);
    rm_call_t *done = call_release_locked(c->waiters[i]);
    pthread_mutex_unlock(&z->watch_mu);
    call_finish(done);
  }
  free(c->waiters);
  c->waiters = NULL;
  c->nwaiters = 0;
}

/* The removal call leaves the issue order: a barrier behind it may go. */
static void leave_order(rm_call_t *c) {
  if (!c->order) return;
  zkr__barrier_done(c->order);
  zkr__op_free(c->order);
  c->order = NULL;
}

/* The application's completion of the call (not in session mode's issue
 * order: that one waits its turn in call_finish). */
/* Under watch_mu: the application is about to see c complete - its
 * records are no longer its pairs, for the session events queued from
 * now on (zkr__watch_session_deliver). */
static void seen_locked(rm_call_t *c) {
  zkr_t *z = c->z;
  if (c->order && c->order->ord_seq > z->rm_queued_seq) z->rm_queued_seq = c->order->ord_seq;
  for (int i = 0; i < c->nsettling; i++) c->later[i]->rm_settling = 0;
}

static void complete_call(rm_call_t *c, int rc) {
  zkr_t *z = c->z;
  zkr__result_t r = {.rc = rc, .value_len = -1};
  zkr__cb_t cb = {.v = c->cb};
  if (c->direct) {
    pthread_mutex_lock(&z->watch_mu);
    seen_locked(c);
    pthread_mutex_unlock(&z->watch_mu);
    if (c->cb) c->cb(rc, c->data);
    return;
  }
  /* Queued with the mark, so that no session event falls between them. */
  pthread_mutex_lock(&z->watch_mu);
  seen_locked(c);
  int queued = zkr__deliver_result_queue(z, ZKR__CB_VOID, cb, c->data, &r);
  pthread_mutex_unlock(&z->watch_mu);
  if (!queued) zkr__deliver_call(ZKR__CB_VOID, cb, c->data, &r);
}

/* The deferred records follow the call's result rc.  complete (unless
 * NULL) is the call's completion: it goes before the reads issued after
 * the removal that were held for those records' events and that their
 * removal releases (and the events those reads' records wait to
 * deliver); one issued before it is handed on first, as before.  On one
 * stock session the removal's answer comes before the reply of a read
 * issued after it and before a later change's event, and drops the pairs
 * from the client's table first; handed on before the completion, such a
 * read's pair's event reached the application while the removed pairs
 * were still the application's, and not called (seeds 2940, 2422: a
 * CHANGED to pair 6, set by a read the removal released, before the
 * remove_all's completion - stock's collectWatchers takes the exist
 * table, where pairs 0 and 4 still were, for CHANGED too). */
static void settle_records(rm_call_t *c, int rc, int keep) {
  c->settled = 1;
  c->settled_rc = rc;
  c->nsettling = 0;
  c->done_after = c->nlater > 0;
  if (!c->nlater) return;
  zkr_t *z = c->z;
  zkr__watch_t *gone = NULL;
  /* The records still held past this loop (rm_settling) are gathered at
   * the front of c->later: the others may be freed before the completion
   * (zkr__watch_done_before), and are not touched again. */
  int nsettling = 0;
  pthread_mutex_lock(&z->watch_mu);
  for (int i = 0; i < c->nlater; i++) {
    zkr__watch_t *w = c->later[i];
    w->removing--;
    w->reuses--;
    if (w->rm_call == c) w->rm_call = NULL;
    /* One whose event came meanwhile (another member's copy of a change,
     * spread to it) keeps it: that event reached the client before the
     * removal's answer, and is delivered in its turn.  So does one whose
     * missed change a read issued before the call, held for its event,
     * proves (its server had not reported it, and now never will): on one
     * stock session that read's reply, and the event before it, came
     * before the removal's answer - the event is made now (sim seed
     * 10095: the read and a later event of the path went first, and the
     * pair was never called). */
    if (rc == ZOK && w->state != ZKR__W_REMOVED && w->state != ZKR__W_PENDING && !w->fire &&
        !(c->order && zkr__watch_missed_before_locked(z, w, c->order->ord_seq, &gone))) {
      /* One still registered on a server it could not reach stays until
       * that zhandle is closed (zkr__watch_rearm_from frees it): its event
       * may still call it, and is dropped. */
      if (w->state == ZKR__W_ARMED) w->zh_pinned = 1;
      /* One whose re-arm is on its way: the watch that read sets on zh
       * may call it too, until the answer drops it (rearmed) or zh
       * closes. */
      if (w->state == ZKR__W_REARMING) w->zh_pinned = 1;
      zkr__watch_remove_locked(z, w);
      /* Until the call's completion is queued (settle_finish), the
       * application holds the pair: a session event meanwhile - one that
       * the hand-on of a read issued before the call brings
       * (zkr__watch_done_before, zkr__session_update) - reaches it, as
       * on one stock session, where the removal's answer comes after it
       * (zkr__watch_removal_unseen_locked; in consistency `session` its
       * rm_seq says so, until the hand-on in issue order). */
      if (keep) {
        w->rm_settling = 1;
        w->reuses++;
        c->later[nsettling++] = w;
      }
    } else if (w->state == ZKR__W_FIRED && w->reuses == 0) {
      zkr__watch_remove_locked(z, w); /* over, and nobody holds it: GC */
    }
    zkr__watch_release_locked(z, w->path, &gone);
  }
  c->nsettling = nsettling;
  pthread_mutex_unlock(&z->watch_mu);
  if (keep && c->order) {
    /* A read issued before the removal still completes before it. */
    zkr__watch_done_before(z, gone, c->order->ord_seq);
    gone = NULL;
  }
  c->gone = gone;
}

/* The second half of settle_later: the completion (unless NULL), then the
 * records kept rm_settling until it was queued go. */
static void settle_finish(rm_call_t *c, int rc, void (*complete)(rm_call_t *, int)) {
  zkr_t *z = c->z;
  if (complete) complete(c, rc);
  if (c->nsettling) {
    pthread_mutex_lock(&z->watch_mu);
    for (int i = 0; i < c->nsettling; i++) {
      zkr__watch_t *w = c->later[i];
      w->rm_settling = 0;
      w->reuses--;
    }
    pthread_mutex_unlock(&z->watch_mu);
    c->nsettling = 0;
  }
  zkr__watch_t *gone = c->gone;
  c->gone = NULL;
  if (c->done_after) zkr__watch_done(z, gone);
  c->done_after = 0;
  free(c->later);
  c->later = NULL;
  c->nlater = 0;
}

static void settle_later(rm_call_t *c, int rc, void (*complete)(rm_call_t *, int)) {
  settle_records(c, rc, complete != NULL);
  settle_finish(c, rc, complete);
}

/* Consistency `session`: the call's completion, handed on in issue order
 * (as the function of its order op, called directly at the hand-on).  Its
 * records are settled only now: until the application sees the call
 * complete it holds those pairs, and an event that reaches it first -
 * another member's copy of a change, while the removal's completion waits
 * behind an earlier operation, e.g. a write of the same path - calls them
 * too, in their turn (spread), as on one stock session, where the server
 * applied that change before the removal (the event came before its
 * answer).  Settled at the answer, they were gone at that event, and a
 * pair set after them was called alone (sim seeds 6943, 19838: a delete
 * issued before the removal). */
static void settle_at_hand_on(int rc, const void *data) {
  rm_call_t *c = (rm_call_t *)data;
  c->at_hand_on = 1;
  settle_later(c, rc, complete_call);
  drop_fired(c);
  release_waiters(c);
  free(c);
}

/* Under watch_mu: whether one of c's records has an event that came
 * before the call's answer and is still to be delivered.  Not once the
 * session is over (no event is delivered any more), the handle closes,
 * or after twice rescue_ms (a read's hold is bounded by rescue_ms, and a
 * read that never reaches the application must not hold the call for
 * ever: as event_on_its_way_locked). */
static int events_waiting_locked(const rm_call_t *c) {
  zkr_t *z = c->z;
  if (z->closing || zkr__handle_ended_rc(z)) return 0;
  if (c->wait_ns && zkr__since(zkr__now_ns(), c->wait_ns) >= 2 * (uint64_t)z->rescue_ms * 1000000u)
    return 0;
  for (int i = 0; i < c->nfired; i++)
    if (c->fired[i]->fire && c->fired[i]->state != ZKR__W_REMOVED) return 1;
  /* (Settled, only the first nsettling are still held: settle_records.) */
  for (int i = 0; i < (c->settled ? c->nsettling : c->nlater); i++)
    if (c->later[i]->fire && c->later[i]->state != ZKR__W_REMOVED) return 1;
  /* Settled: a read issued before the call that armed one of the records
   * it removed, still held here (answered after the call was issued - one
   * held then is covered at the issue - and not released by the
   * settling's own events and hand-on, zkr__watch_done_before), completes
   * first, as on one stock session, where its reply registered the pair
   * before the removal's answer dropped it (sim seed 4919 --io-loss 5: a
   * read that set a pair again, in flight at a remove_all and held for
   * another pair's event, completed after the call's ZOK, and the
   * application held a pair the call had removed).  Only those: the
   * records stay REMOVED meanwhile, and an event of their path that comes
   * now calls no one of them (waiting for any earlier read, routed seed
   * 51's remove_all waited 150 ms for a read of another path, and a
   * deletion meanwhile skipped a pair the application still held). */
  return c->settled && c->order && c->nsettling &&
         zkr__watch_read_held_before_locked(z, c->order->ord_seq, c->later, c->nsettling);
}

/* 1 when c's completion waits for its records' events: c is in the
 * handle's list then, until zkr__watch_remove_events_out finishes it. */
static int wait_for_events(rm_call_t *c) {
  zkr_t *z = c->z;
  pthread_mutex_lock(&z->watch_mu);
  int wait = events_waiting_locked(c);
  if (wait && !c->waiting) {
    c->waiting = 1;
    if (!c->wait_ns) c->wait_ns = zkr__now_ns();
    c->wait_next = z->rm_wait;
    z->rm_wait = c;
    z->rm_waiting++;
  }
  pthread_mutex_unlock(&z->watch_mu);
  return wait;
}

/* The records c waited for go back (GC'd when over and nobody holds them). */
static void drop_fired(rm_call_t *c) {
  if (!c->nfired) {
    free(c->fired);
    return;
  }
  zkr_t *z = c->z;
  zkr__watch_t *gone = NULL;
  pthread_mutex_lock(&z->watch_mu);
  for (int i = 0; i < c->nfired; i++) {
    zkr__watch_t *w = c->fired[i];
    w->reuses--;
    if (w->state == ZKR__W_FIRED && w->reuses == 0) zkr__watch_remove_locked(z, w); /* GC */
    zkr__watch_release_locked(z, w->path, &gone);
  }
  pthread_mutex_unlock(&z->watch_mu);
  free(c->fired);
  c->fired = NULL;
  c->nfired = 0;
  zkr__watch_done(z, gone);
}

void zkr__watch_remove_events_out(zkr_t *z) {
  rm_call_t *ready = NULL;
  pthread_mutex_lock(&z->watch_mu);
  for (rm_call_t **p = (rm_call_t **)&z->rm_wait; *p;) {
    rm_call_t *c = *p;
    if (events_waiting_locked(c)) {
      p = &c->wait_next;
      continue;
    }
    *p = c->wait_next;
    c->waiting = 0;
    z->rm_waiting--;
    c->wait_next = ready;
    ready = c;
  }
  pthread_mutex_unlock(&z->watch_mu);
  /* In the order they began to wait in: the list is newest first, and
   * ready was built from it reversed. */
  while (ready) {
    rm_call_t *n = ready->wait_next;
    call_finish(ready);
    ready = n;
  }
}

static void call_finish(rm_call_t *c) {
  if (!c) return;
  /* ZOK when some server removed a watch or one was removed here; else
   * the first other error; else ZNOWATCHER. */
  int rc = c->ok ? ZOK : c->other_rc ? c->other_rc : c->nowatcher ? ZNOWATCHER : ZOK;
  /* The session ended meanwhile (EXPIRED, AUTH_FAILED): no server answers
   * the application after that, as stock completes what is pending. */
  zkr_t *z = c->z;
  if (z->expired || z->auth_failed) rc = zkr__handle_ended_rc(z);
  if (c->order && zkr__router_fifo(z)) {
    /* Consistency `session`: handed on in issue order, as every
     * completion (zkr__barrier_hold) - on one stock session the server
     * answers the requests sent before it first; the records are settled
     * then (settle_at_hand_on, which frees c). */
    zkr__op_t *o = c->order;
    o->shape = ZKR__CB_VOID;
    if (rc == ZOK) {
      /* A missed change that a read issued before the call, held for its
       * event, proves is made now, as settle_later would: that read waits
       * for the event, and the call's hand-on waits for that read. */
      zkr__watch_t *gone = NULL;
      pthread_mutex_lock(&z->watch_mu);
      for (int i = 0; i < c->nlater; i++) {
        zkr__watch_t *w = c->later[i];
        if (w->state != ZKR__W_REMOVED && w->state != ZKR__W_PENDING && !w->fire)
          zkr__watch_missed_before_locked(z, w, o->ord_seq, &gone);
      }
      pthread_mutex_unlock(&z->watch_mu);
      zkr__watch_done(z, gone);
      o->cb.v = settle_at_hand_on;
      o->data = c;
      zkr__op_set(o, ZKR__OP_F_DIRECT, 1);
      c = NULL;
    } else {
      /* What a failed call leaves stays now: a removal issued after this
       * one's answer must find it (the records are no longer removing). */
      settle_later(c, rc, NULL);
      o->cb.v = c->cb;
      o->data = c->data;
      zkr__op_set(o, ZKR__OP_F_DIRECT, c->direct);
    }
    zkr__result_t r = {.rc = rc, .value_len = -1};
    if (!zkr__barrier_hold(o, &r)) {
      zkr__completion_hand_on(o, &r); /* then it leaves the order */
      zkr__op_free(o);
    }
    if (c) {
      /* (A ZOK call's waiters go at its hand-on: settle_at_hand_on.) */
      drop_fired(c);
      release_waiters(c);
      free(c);
    }
    return;
  }
  if (wait_for_events(c)) return; /* zkr__watch_remove_events_out finishes it */
  if (!c->settled) {
    settle_records(c, rc, 1);
    /* The reads issued before the call that its settling did not release:
     * the completion waits for them, its records kept rm_settling. */
    c->wait_ns = 0;
    if (wait_for_events(c)) return;
  }
  if (!z->expired && !z->auth_failed) rc = c->settled_rc;
  settle_finish(c, rc, complete_call);
  drop_fired(c);
  leave_order(c);
  release_waiters(c);
  free(c);
}

/* Under watch_mu: q is answered with rc; returns the call if it is done. */
static rm_call_t *answer_locked(zkr_t *z, rm_req_t *q, int rc, zkr__watch_t **gone) {
  int failed = rc != ZOK && rc != ZNOWATCHER;
  if (q->path) zkr__watch_outlive_drop_locked(z, q->path, q->zh);
  for (int i = 0; i < q->n; i++) {
    zkr__watch_t *w = q->w[i];
    zkr__watch_outlive_drop_locked(z, w->path, q->zh);
    w->removing--;
    w->reuses--;
    /* Deferred below, it is still this call's (defer_locked). */
    if (w->rm_call == q->call) w->rm_call = NULL;
    /* Its server did not answer: whether it goes is the call's result. */
    if (failed && w->state == ZKR__W_ARMED && defer_locked(q->call, w)) continue;
    /* Its server removed it, and so did its zhandle: no event can come
     * from there.  The application still holds the watch until the call
     * answers - on one stock session an event that reaches the client
     * before the removal's answer calls every pair still registered -
     * so the record waits for the call as one on no server (LOST, not
     * re-armed while removing): when another member's copy of a change
     * comes meanwhile, it is called too, in its turn (spread); the call's
     * ZOK removes it after that (settle_later). */
    int gone_there = rc == ZOK || (rc == ZNOWATCHER && w->rm_covered);
    w->rm_covered = 0;
    if (gone_there && w->state == ZKR__W_ARMED && defer_locked(q->call, w)) {
      zkr__watch_set_state_locked(z, w, ZKR__W_LOST);
      w->zh = NULL;
      zkr__watch_release_locked(z, w->path, gone);
      continue;
    }
    /* Its event came before this answer and waits for its turn (HELD
     * behind a pair set before it): stock's one session delivers it
     * before the removal's answer; the call's completion waits for it
     * (seed 10827: a CHANGED to the pair after the call's ZOK). */
    if (w->fire && w->state != ZKR__W_REMOVED) note_fired_locked(q->call, w);
    /* ZOK: the client dropped the registration; otherwise it stays, or it
     * fired meanwhile (its event came or comes: ZNOWATCHER). */
    if (rc == ZOK && (w->state == ZKR__W_ARMED || w->state == ZKR__W_FIRED))
      zkr__watch_remove_locked(z, w);
    else if (w->state == ZKR__W_FIRED && w->reuses == 0)
      zkr__watch_remove_locked(z, w); /* over, and nobody holds it: GC */
    /* Events held behind it may go now. */
    zkr__watch_release_locked(z, w->path, gone);
  }
  /* A remove_all's ZOK: the server dropped every watch of the path and
   * type on this session, and the client every registration - also those
   * of records armed on zh after the request was sent, by a read whose
   * reply came before this answer (a read that set a pair again while
   * its record was consumed or fired: zkr__watch_reuse_done).  The server
   * read before it removed, so those go too, as in stock's table;
   * left armed, they would wait for an event that never comes. */
  if (rc == ZOK && q->all && q->path) {
    for (zkr__watch_t *w = zkr__watch_first(z); w; w = zkr__watch_next(w)) {
      if (w->zh != q->zh || w->state != ZKR__W_ARMED || w->removing ||
          strcmp(w->path, q->path) != 0 || (q->t != ZWATCHTYPE_ANY && type_of(w) != q->t))
        continue;
      if (w->rereads > 0) {
        /* A read that sets it again is on its way on zh, sent after this
         * removal (zh answers in order, and it is not answered yet): the
         * server removed the watch, and that read registers it again.  It
         * goes now and comes back at that read's completion
         * (zkr__watch_reuse_done), where stock's table gets the pair
         * back. */
        zkr__watch_remove_locked(z, w);
        w->revive = 1;
      } else if (defer_locked(q->call, w)) {
        zkr__watch_set_state_locked(z, w, ZKR__W_LOST);
        w->zh = NULL;
      } else {
        zkr__watch_remove_locked(z, w);
      }
      zkr__watch_release_locked(z, w->path, gone);
    }
  }
  rm_call_t *c = q->call;
  if (rc == ZOK || (rc == ZNOWATCHER && q->covers)) c->ok = 1;
  else if (rc == ZNOWATCHER) c->nowatcher = 1;
  else if (!c->other_rc) c->other_rc = rc;
  return call_release_locked(c);
}

static void rm_done(int rc, const void *data) {
  rm_req_t *q = (rm_req_t *)data;
  zkr_t *z = q->call->z;
  pthread_mutex_lock(&z->watch_mu);
  /* Answered already (its zhandle was closed and the answer made up)? */
  rm_req_t **p = &z->rm_list;
  while (*p && *p != q) p = &(*p)->next;
  if (!*p) {
    pthread_mutex_unlock(&z->watch_mu);
    return;
  }
  *p = q->next;
  zkr__watch_t *gone = NULL;
  rm_call_t *done = answer_locked(z, q, rc, &gone);
  pthread_mutex_unlock(&z->watch_mu);
  zkr__watch_done(z, gone);
  free(q->path);
  free(q);
  call_finish(done);
}

/* zhandle zh (every one when NULL) was closed: its unanswered removals get
 * their answer here. */
void zkr__watch_remove_dropped(zkr_t *z, zhandle_t *zh) {
  int rc = z->closing ? ZCLOSING : ZCONNECTIONLOSS;
  for (;;) {
    pthread_mutex_lock(&z->watch_mu);
    rm_req_t **p = &z->rm_list;
    while (*p && zh && (*p)->zh != zh) p = &(*p)->next;
    rm_req_t *q = *p;
    rm_call_t *done = NULL;
    zkr__watch_t *gone = NULL;
    if (q) {
      *p = q->next;
      done = answer_locked(z, q, rc, &gone);
    }
    pthread_mutex_unlock(&z->watch_mu);
    zkr__watch_done(z, gone);
    if (!q) return;
    free(q->path);
    free(q);
    call_finish(done);
  }
}

/* Sends one request on slot's zhandle zh for records v[0..n), all armed
 * there; a refusal is the request's answer. */
static void send_req(rm_call_t *c, int slot, zhandle_t *zh, zkr__watch_t **v, int n,
                     const char *path, ZooWatcherType t, int all, int cover) {
  zkr_t *z = c->z;
  rm_req_t *q = calloc(1, sizeof *q + (size_t)n * sizeof q->w[0]);
  if (!q) {
    pthread_mutex_lock(&z->watch_mu);
    if (!c->other_rc) c->other_rc = ZKR_ENOMEM;
    pthread_mutex_unlock(&z->watch_mu);
    return;
  }
  q->call = c;
  q->zh = zh;
  q->covers = cover;
  q->all = all;
  q->t = t;
  q->path = all ? strdup(path) : NULL;
  q->n = n;
  if (n > 0) memcpy(q->w, v, (size_t)n * sizeof *v);
  pthread_mutex_lock(&z->watch_mu);
  for (int i = 0; i < n; i++) {
    v[i]->reuses++; /* held until answered */
    v[i]->removing++;
    v[i]->rm_call = c;
    v[i]->rm_covered = cover;
  }
  zkr__watch_outlive_drop_locked(z, path, zh);
  c->pending++;
  q->next = z->rm_list;
  z->rm_list = q;
  pthread_mutex_unlock(&z->watch_mu);
  zkr__member_t *m = &z->members[slot];
  /* On one stock session the reads issued before the removal were sent
   * before it: a watched read of path still waiting on zh for a sync goes
   * first (not for a covered read's record: that removal is sent when the
   * read was answered, maybe after later reads). */
  if (!cover) zkr__dispatch_send_watched_before(m, zh, path);
  int rc = ZINVALIDSTATE;
  pthread_rwlock_rdlock(&m->zh_lock);
  if (m->zh == zh) {
    /* ZooKeeper calls the completion it is given as the function itself. */
    void_completion_t *done = (void_completion_t *)rm_done;
    rc = all ? zkr__zk->zoo_aremove_all_watches(zh, path, t, 0, done, q)
             : zkr__zk->zoo_aremove_watches(zh, path, type_of(v[0]), zkr__watch_trampoline, v[0], 0,
                                            done, q);
  }
  pthread_rwlock_unlock(&m->zh_lock);
  if (rc != ZOK) rm_done(rc == ZINVALIDSTATE ? ZCONNECTIONLOSS : rc, q);
}

static int remove_held(zkr_t *z, const char *path, ZooWatcherType t, int all, watcher_fn fn,
                       void *ctx, int local, void_completion_t cb, const void *data, int direct) {
  int rc = zkr__path_check(path);
  if (rc != ZOK) return rc;
  if (t != ZWATCHTYPE_CHILD && t != ZWATCHTYPE_DATA && t != ZWATCHTYPE_ANY) return ZBADARGUMENTS;
  if (z->closing) return ZKR_ECLOSING;
  if (!local && (z->expired || z->auth_failed)) return ZINVALIDSTATE;
  pthread_mutex_lock(&z->ctx_mu);
  watcher_fn gfn = z->watcher;
  void *gctx = z->context;
  pthread_mutex_unlock(&z->ctx_mu);
  rm_call_t *c = calloc(1, sizeof *c);
  if (!c || !(c->order = zkr__op_new(z, ZKR__OP_SYNC, NULL))) {
    free(c);
    return ZKR_ENOMEM;
  }
  zkr__barrier_add(c->order);
  c->z = z;
  c->cb = cb;
  c->data = data;
  c->direct = direct;
  c->pending = 1;
  int fifo = zkr__router_fifo(z);
  /* The armed records to ask a server about; the rest is removed here. */
  pthread_mutex_lock(&z->watch_mu);
  size_t cap = 0;
  for (zkr__watch_t *w = zkr__watch_first(z); w; w = zkr__watch_next(w)) cap++;
  zkr__watch_t **armed = malloc((cap ? cap : 1) * sizeof *armed);
  zkr__watch_t **here = malloc((cap ? cap : 1) * sizeof *here);
  int na = 0, nh = 0, found = 0, held_cover = 0;
  for (zkr__watch_t *w = zkr__watch_first(z); armed && here && w; w = zkr__watch_next(w)) {
    /* Consistency `session`: until this call's completion is handed on -
     * in issue order (call_finish) - the application holds what it
     * removes, and session events still reach those pairs. */
    if (fifo && (covers(w, path, t, all, local) || matches(z, w, path, t, all, fn, ctx, gfn, gctx)))
      rm_seq_first(w, c->order->ord_seq);
    if (covers(w, path, t, all, local)) {
      /* A watched read in flight: its server sets the watch before this
       * removal's request reaches that session, as on one stock session
       * (the read was sent first), and stock's client drops it when the
       * removal's ZOK comes after the read's reply.  The call waits for
       * the read, then removes what it set (zkr__watch_remove_covered). */
      w->rm_cover = c;
      w->reuses++;
      c->pending++;
      continue;
    }
    if (!matches(z, w, path, t, all, fn, ctx, gfn, gctx)) continue;
    found++;
    if (w->removing) {
      /* An earlier removal holds it (its request on the way, or its
       * result awaited): it follows this call's result too - a ZOK here
       * tells the application the pair is gone, whatever that earlier
       * call answers - and this call completes after that one, as a
       * stock session answers the earlier removal first.  Out of memory:
       * this call fails. */
      rm_call_t *prev = w->rm_call;
      if (defer_locked(c, w)) {
        w->rm_call = c;
        if (prev && prev != c) wait_for_locked(c, prev);
      } else {
        found--;
        if (!c->other_rc) c->other_rc = ZKR_ENOMEM;
      }
    } else if (w->state == ZKR__W_ARMED && !local) {
      armed[na++] = w;
      /* Armed by a read answered before and held (for another record's
       * event): issued before this call, that read completes first. */
      if (all && !w->rm_cover_end && zkr__watch_cover_held_read_locked(z, w)) {
        w->rm_cover_end = c;
        w->reuses++;
        c->pending++;
      }
    } else if (w->state == ZKR__W_ARMED) {
      /* Local: the client-side registration goes below; meanwhile the
       * record is held and no read may set it again. */
      w->removing++;
      w->reuses++;
      here[nh++] = w;
    } else if (w->state == ZKR__W_REARMING) {
      /* On no server yet: as a lost one, it waits for the call's result
       * (a ZOK answered at once must leave nothing registered: a session
       * event would call it).  Meanwhile its re-arm drops what it set
       * (zkr__watch_rearm_*). */
      if (!defer_locked(c, w)) w->removing++;
    } else if (!defer_locked(c, w)) {
      zkr__watch_remove_locked(z, w); /* lost or fired: on no server */
    }
  }
  if (found > na) c->ok = 1;
  /* A removal of one watcher that the client holds: the pair's other
   * records whose reads are in flight (a read issued while the pair's
   * first read was) are covered.  On one stock session the pair is one
   * entry of the client's table, which those reads' replies - before the
   * removal's answer - register again, and which the removal's ZOK drops
   * (seed 18739: a CHANGED to the pair through such a record after the
   * call completed).  So are those armed by a read answered and held
   * here (seed 29157). */
  for (zkr__watch_t *w = zkr__watch_first(z); found && !all && !local && armed && w;
       w = zkr__watch_next(w)) {
    if (w->removing || w->rm_cover || w->fn != fn || w->ctx != ctx || strcmp(w->path, path) != 0 ||
        (t != ZWATCHTYPE_ANY && type_of(w) != t))
      continue;
    if (w->state == ZKR__W_PENDING) {
      if (fifo) rm_seq_first(w, c->order->ord_seq);
      w->rm_cover = c;
      w->reuses++;
      c->pending++;
    } else if (w->state == ZKR__W_ARMED && !w->rm_cover_end &&
               zkr__watch_read_held_back_locked(z, w)) {
      /* Armed by a read answered before this call and held here for
       * another record's event (matches leaves it out: the application
       * has not seen that read complete).  On one stock session its reply
       * came before the removal's answer and registered the pair, which
       * that ZOK drops: its server is asked too, and the call completes
       * after the read's hand-on, as a remove_all's does (seed 29157: the
       * event the read waited for was made at this call's answer, the
       * read handed on before its ZOK, and the pair called for the next
       * change). */
      if (fifo) rm_seq_first(w, c->order->ord_seq);
      armed[na++] = w;
      if (zkr__watch_cover_held_read_locked(z, w)) {
        w->rm_cover_end = c;
        w->reuses++;
        c->pending++;
        held_cover = 1;
      }
    }
  }
  zkr__watch_t *gone = NULL;
  /* The call now waits for those reads, and they may wait for the event
   * of a record the call took while on no server (lost: its own event
   * never comes), which only the call's answer would make (settle_later):
   * each would wait for the other until the hold's bound.  That event is
   * made now, when a read issued before the call proves it - on one stock
   * session it came before that read's reply, so before the removal's
   * answer. */
  for (int i = 0; held_cover && i < c->nlater; i++) {
    zkr__watch_t *w = c->later[i];
    if (w->state != ZKR__W_REMOVED && w->state != ZKR__W_PENDING && !w->fire)
      zkr__watch_missed_before_locked(z, w, c->order->ord_seq, &gone);
  }
  zkr__watch_release_locked(z, path, &gone);
  pthread_mutex_unlock(&z->watch_mu);
  zkr__watch_done(z, gone);
  if (!armed || !here) {
    free(armed);
    free(here);
    settle_later(c, ZKR_ENOMEM, NULL);
    leave_order(c);
    free(c);
    return ZKR_ENOMEM;
  }
  for (int i = 0; i < nh; i++) {
    zkr__watch_t *w = here[i];
    zkr__watch_remove_unregister(z, w, w->member, w->zh, 0);
    pthread_mutex_lock(&z->watch_mu);
    w->removing--;
    w->reuses--;
    if (w->state == ZKR__W_ARMED || w->state == ZKR__W_FIRED) zkr__watch_remove_locked(z, w);
    zkr__watch_t *g = NULL;
    zkr__watch_release_locked(z, path, &g);
    pthread_mutex_unlock(&z->watch_mu);
    zkr__watch_done(z, g);
  }
  free(here);
  if (!found && !all) {
    free(armed);
    leave_order(c);
    free(c);
    return ZNOWATCHER; /* no completion, as stock */
  }
  if (!found) c->nowatcher = 1; /* remove_all of nothing, and nobody to ask */
  if (!found && all && !local) {
    /* Stock asks its server even when its client holds nothing for the
     * path: a watch removed on the client only (local) is still
     * registered on the server, which answers ZOK.  Here any member
     * session may be such a one: every one that works is asked. */
    size_t n = z->n;
    for (size_t i = 0; i <= z->cap; i++) {
      if (i >= n && i != z->cap) continue;
      zkr__member_t *m = &z->members[i];
      if (!zkr__member_connected(m)) continue;
      pthread_rwlock_rdlock(&m->zh_lock);
      zhandle_t *zh = m->zh;
      pthread_rwlock_unlock(&m->zh_lock);
      if (zh) send_req(c, (int)i, zh, NULL, 0, path, t, 1, 0);
    }
  }
  if (all) {
    /* One remove-all per zhandle holding some of them. */
    for (int i = 0; i < na; i++) {
      if (!armed[i]) continue;
      zkr__watch_t **batch = malloc((size_t)na * sizeof *batch);
      int nb = 0, slot = armed[i]->member;
      zhandle_t *zh = armed[i]->zh;
      for (int k = i; batch && k < na; k++)
        if (armed[k] && armed[k]->zh == zh) {
          batch[nb++] = armed[k];
          armed[k] = NULL;
        }
      if (batch) send_req(c, slot, zh, batch, nb, path, t, 1, 0);
      else c->other_rc = ZKR_ENOMEM;
      free(batch);
    }
  } else {
    for (int i = 0; i < na; i++)
      send_req(c, armed[i]->member, armed[i]->zh, &armed[i], 1, path, t, 0, 0);
  }
  free(armed);
  pthread_mutex_lock(&z->watch_mu);
  rm_call_t *done = call_release_locked(c);
  pthread_mutex_unlock(&z->watch_mu);
  call_finish(done);
  return ZOK;
}

int zkr__watch_remove_cover_held(zkr_t *z, zkr__watch_t *w) {
  pthread_mutex_lock(&z->watch_mu);
  int held = w->rm_cover != NULL;
  pthread_mutex_unlock(&z->watch_mu);
  return held;
}

/* The covered read's record is armed (its watch is set on its member's
 * session) or over: an armed one is removed there, as one request of the
 * call (its answer decides, as any other's).  The call still waits for
 * the read: its completion comes after the read's, as on one stock
 * session, even when that request is answered at once (stock's client
 * answers ZNOWATCHER without asking when the watch's event came in
 * already) - zkr__watch_remove_cover_end. */
void zkr__watch_remove_covered(zkr_t *z, zkr__watch_t *w) {
  pthread_mutex_lock(&z->watch_mu);
  rm_call_t *c = w->rm_cover;
  w->rm_cover = NULL;
  w->rm_cover_end = c;
  int armed = c && w->state == ZKR__W_ARMED && w->zh;
  int slot = w->member;
  zhandle_t *zh = w->zh;
  pthread_mutex_unlock(&z->watch_mu);
  if (c && armed) send_req(c, slot, zh, &w, 1, w->path, type_of(w), 0, 1);
}

/* The covered read was handed on: the call's wait for it ends.  The record
 * is held by the cover until here. */
void zkr__watch_remove_cover_end(zkr_t *z, zkr__watch_t *w) {
  pthread_mutex_lock(&z->watch_mu);
  rm_call_t *c = w->rm_cover_end;
  if (!c) {
    pthread_mutex_unlock(&z->watch_mu);
    return;
  }
  w->rm_cover_end = NULL;
  zkr__watch_t *gone = NULL;
  w->reuses--;
  if (w->state == ZKR__W_FIRED && w->reuses == 0) zkr__watch_remove_locked(z, w); /* GC */
  zkr__watch_release_locked(z, w->path, &gone);
  rm_call_t *done = call_release_locked(c);
  pthread_mutex_unlock(&z->watch_mu);
  zkr__watch_done(z, gone);
  call_finish(done);
}

/* The monitor's turn: removed records old enough go. */
void zkr__watch_remove_gc(zkr_t *z, uint64_t now) {
  uint64_t keep = (uint64_t)REMOVED_KEEP_S * 1000000000u;
  zkr__watch_t *gone = NULL;
  pthread_mutex_lock(&z->watch_mu);
  for (zkr__watch_t *w = zkr__watch_first(z), *next; w; w = next) {
    next = zkr__watch_next(w);
    if (w->state != ZKR__W_REMOVED || w->reuses > 0 || w->zh_pinned ||
        zkr__since(now, w->removed_ns) < keep || zkr__watch_removal_unseen_locked(z, w))
      continue;
    zkr__watch_unlink_locked(z, w);
    w->gone_next = gone;
    gone = w;
  }
  pthread_mutex_unlock(&z->watch_mu);
  while (gone) {
    zkr__watch_t *n = gone->gone_next;
    zkr__watch_free_record(gone);
    gone = n;
  }
}

int zkr__watch_remove_watches(zkr_t *z, const char *path, ZooWatcherType wtype, int all,
                              watcher_fn watcher, void *ctx, int local, void_completion_t cb,
                              const void *data, int direct) {
  ZKR__HELD(z, remove_held(z, path, wtype, all, watcher, ctx, local, cb, data, direct));
}

int zkr_aremove_watches(zkr_t *z, const char *path, ZooWatcherType wtype, watcher_fn watcher,
                        void *watcherCtx, int local, void_completion_t completion,
                        const void *data) {
  return zkr__watch_remove_watches(z, path, wtype, 0, watcher, watcherCtx, local, completion, data,
                                   0);
}

int zkr_aremove_all_watches(zkr_t *z, const char *path, ZooWatcherType wtype, int local,
                            void_completion_t completion, const void *data) {
  return zkr__watch_remove_watches(z, path, wtype, 1, NULL, NULL, local, completion, data, 0);
}
