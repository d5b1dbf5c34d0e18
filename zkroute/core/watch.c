/* Watch registry: every watch the application sets is armed on a member
 * session through a trampoline record, so that the event reaches the
 * application's watcher (on the delivery thread) with the application's
 * handle, and member-session events stay hidden - the virtual session's
 * own events reach every registered watcher instead (zkr__session_*).  A
 * record remembers its path, its kind, the zhandle it is armed on and what
 * the node looked like when it was armed; when that session is lost, the
 * record is re-armed elsewhere (zkr__watch_rearm_*).  Records live in one list
 * per handle, so close frees those that never fired.
 *
 * The stock client's rules, which one session gives for free and several
 * sessions must be made to keep:
 * - A (watcher, context) pair is one registration per path and watcher
 *   table: watch=1 is the global pair as it was when set; the same pair
 *   set again is the same record (its read goes where the record is
 *   armed), or, when that member cannot take it now, a new record that
 *   supersedes the old one - which gets the event of any change between
 *   the two reads, and nothing after.  A node deleted fires its data and
 *   its child watches: one pair set as both is called once.
 * - The watchers of one path fire in the order they were set, whichever
 *   member's event comes first: an event waits (HELD) while a record set
 *   before it on the path, which the same change fires, has not had its
 *   own (a record whose read saw a later state than the held one's does
 *   not wait, it will not fire for that change).
 * - Nothing is delivered after the owner expired, nor once the handle
 *   closes.
 *
 * A record is only ever freed when no live zhandle can still call its
 * trampoline: when its one event came, when the read that would have set
 * it failed, or at close.  Events from a zhandle the record is no longer
 * bound to are stale and dropped. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/deliver.h"
#include "core/handle.h"
#include "core/hooks.h"
#include "core/watch.h"
#include "core/watch_record.h"
#include "zk/zkapi.h"

/* ---- the index by path (zkr__watch_path_first) ---- */

static uint32_t path_hash(const char *p) { /* FNV-1a */
  uint32_t h = 2166136261u;
  for (; *p; p++) h = (h ^ (unsigned char)*p) * 16777619u;
  return h;
}

static zkr__queue_t *bucket_of(const zkr_t *z, uint32_t h) {
  return &z->watch_paths[h & (z->watch_nbuckets - 1)];
}

static zkr__queue_t *id_bucket_of(const zkr_t *z, uint64_t id) {
  return &z->watch_by_id[id & (z->watch_nbuckets - 1)];
}

/* Sized to hold at most two records a bucket: the buckets are filled
 * again from watch_q, oldest first, so each keeps watch_q's order.  A
 * table that cannot grow stays as it is (longer buckets, same answers);
 * only a first table that cannot be had fails (-1). */
static int index_grow_locked(zkr_t *z) {
  if (z->watch_nbuckets && z->watch_count < 2 * z->watch_nbuckets) return 0;
  size_t n = z->watch_nbuckets ? 2 * z->watch_nbuckets : 64;
  zkr__queue_t *b = calloc(n, sizeof *b), *bi = calloc(n, sizeof *bi);
  if (!b || !bi) {
    free(b);
    free(bi);
    return z->watch_nbuckets ? 0 : -1;
  }
  free(z->watch_paths);
  free(z->watch_by_id);
  z->watch_paths = b;
  z->watch_by_id = bi;
  z->watch_nbuckets = n;
  for (zkr__queue_link_t *l = z->watch_q.last; l; l = l->prev) {
    zkr__watch_t *w = zkr__watch_at(l);
    zkr__queue_push_front(bucket_of(z, w->phash), &w->plink);
    zkr__queue_push_front(id_bucket_of(z, w->id), &w->ilink);
  }
  return 0;
}

zkr__watch_t *zkr__watch_path_first(const zkr_t *z, const char *path) {
  if (!z->watch_nbuckets) return NULL;
  uint32_t h = path_hash(path);
  for (zkr__queue_link_t *l = bucket_of(z, h)->first; l; l = l->next) {
    zkr__watch_t *w = ZKR__QUEUE_DATA(l, zkr__watch_t, plink);
    if (w->phash == h && strcmp(w->path, path) == 0) return w;
  }
  return NULL;
}

zkr__watch_t *zkr__watch_path_next(const zkr__watch_t *w) {
  for (zkr__queue_link_t *l = w->plink.next; l; l = l->next) {
    zkr__watch_t *x = ZKR__QUEUE_DATA(l, zkr__watch_t, plink);
    if (x->phash == w->phash && strcmp(x->path, w->path) == 0) return x;
  }
  return NULL;
}

zkr__watch_t *zkr__watch_new(zkr_t *z, watcher_fn fn, void *ctx, int kind, const char *path) {
  zkr__watch_t *w = calloc(1, sizeof *w);
  if (!w || !(w->path = strdup(path))) {
    free(w);
    return NULL;
  }
  w->z = z;
  w->fn = fn;
  w->ctx = ctx;
  w->kind = kind;
  w->member = -1;
  w->phash = path_hash(path);
  pthread_mutex_lock(&z->watch_mu);
  if (index_grow_locked(z) != 0) {
    pthread_mutex_unlock(&z->watch_mu);
    zkr__watch_free_record(w);
    return NULL;
  }
  w->id = ++z->watch_ids;
  zkr__queue_push_front(&z->watch_q, &w->link);
  zkr__queue_push_front(bucket_of(z, w->phash), &w->plink);
  zkr__queue_push_front(id_bucket_of(z, w->id), &w->ilink);
  z->watch_count++;
  pthread_mutex_unlock(&z->watch_mu);
  return w;
}

zkr__watch_t *zkr__watch_reuse_elsewhere(zkr__watch_t *w, int kind) {
  zkr__watch_t *n = zkr__watch_new(w->z, w->fn, w->ctx, kind, w->path);
  if (n) n->supersedes = w; /* w's reuse count now holds it for n */
  return n;
}

zkr__watch_t *zkr__watch_by_id_locked(zkr_t *z, uint64_t id) {
  if (!z->watch_nbuckets) return NULL;
  for (zkr__queue_link_t *l = id_bucket_of(z, id)->first; l; l = l->next) {
    zkr__watch_t *w = ZKR__QUEUE_DATA(l, zkr__watch_t, ilink);
    if (w->id == id) return w;
  }
  return NULL;
}

/* The interposer's name for the program's global pair (zkr__preload_*). */
void zkr__watch_set_alias(zkr_t *z, void (*fn)(void *, watcher_fn *, void **), void *arg) {
  pthread_mutex_lock(&z->ctx_mu);
  z->watch_alias_arg = arg;
  z->watch_alias = fn;
  pthread_mutex_unlock(&z->ctx_mu);
}

/* The pair a read sets: watch=1 (fn NULL) is the global watcher and
 * context as they are now, as stock stores them; under the interposer, the
 * program's own global pair is the one the library knows as global. */
void zkr__watch_pair(zkr_t *z, watcher_fn *fn, void **ctx) {
  if (!*fn) {
    pthread_mutex_lock(&z->ctx_mu);
    *fn = z->watcher;
    *ctx = z->context;
    pthread_mutex_unlock(&z->ctx_mu);
  } else {
    pthread_mutex_lock(&z->ctx_mu);
    void (*alias)(void *, watcher_fn *, void **) = z->watch_alias;
    void *arg = z->watch_alias_arg;
    pthread_mutex_unlock(&z->ctx_mu);
    if (alias) alias(arg, fn, ctx);
  }
}

/* Every change of state goes through here: the counters of armed records
 * per member and of lost records follow. */
void zkr__watch_set_state_locked(zkr_t *z, zkr__watch_t *w, int state) {
  if (w->outlive_seq && state != ZKR__W_CONSUMED) { /* (zkr__watch_op_done) */
    w->outlive_seq = 0;
    z->watch_outlive--;
  }
  if (w->state == ZKR__W_ARMED) z->members[w->member].watches--;
  if (w->state == ZKR__W_LOST) z->watch_lost--;
  w->state = state;
  if (state == ZKR__W_ARMED) {
    z->members[w->member].watches++;
    w->armed_conn = atomic_load(&z->members[w->member].conn_events);
  }
  if (state == ZKR__W_LOST) z->watch_lost++;
}

void zkr__watch_unlink_locked(zkr_t *z, zkr__watch_t *w) {
  zkr__watch_set_state_locked(z, w, ZKR__W_FIRED);
  zkr__queue_remove(&z->watch_q, &w->link);
  zkr__queue_remove(bucket_of(z, w->phash), &w->plink);
  zkr__queue_remove(id_bucket_of(z, w->id), &w->ilink);
  z->watch_count--;
}

void zkr__watch_free_record(zkr__watch_t *w) {
  free(w->path);
  free(w);
}

void zkr__watch_free_list(zkr__watch_t *gone) {
  while (gone) {
    zkr__watch_t *n = gone->gone_next;
    zkr__watch_free_record(gone);
    gone = n;
  }
}

/* ---- the watch event before the new data ----
 * A stock client sees a watch event for a node before it sees the new data
 * of that node: one session's replies and events come in the server's
 * order.  Here the read may come from another member than the watch's,
 * one that applied the change first.  A read whose reply shows a change
 * that a waiting record of the same path has not fired for is held until
 * that record's event was delivered (or it was superseded, removed, or
 * the session ended). */

/* Whether w will fire for the change a read's answer (rc, st) shows. */
static int pending_change(const zkr__watch_t *w, int rc, const struct Stat *st);

static int shows_change(const zkr__watch_t *w, int rc, const struct Stat *st);

static int maybe_older(const zkr__watch_t *w, const zkr__op_t *op, int rc);
static int read_held_locked(const zkr_t *z, const zkr__watch_t *w);
static int missed_live(const zkr__watch_t *w, int rc, const struct Stat *st);

/* Under watch_mu.  A record whose event came but waits its turn (for the
 * read that armed it, or a pair set before it) blocks as one still
 * waiting: the application gets that event before the data.  Not a
 * record armed by a read issued after op whose answer may be older than
 * op's (maybe_older) while that read is not handed on yet: the
 * application has not seen that pair set, and on stock's one session op
 * completes first.  Held for it, op would wait for an event that may
 * wait for op itself (the read that armed w held for the event of a pair
 * that op sets again). */
static int read_blocked_locked(zkr_t *z, const zkr__op_t *op, int rc, const struct Stat *st) {
  if (zkr__handle_ended_rc(z)) return 0; /* no event comes any more */
  for (zkr__watch_t *w = zkr__watch_path_first(z, op->path); w; w = zkr__watch_path_next(w))
    if ((pending_change(w, rc, st) || (w->fire && shows_change(w, rc, st))) &&
        !(maybe_older(w, op, rc) && read_held_locked(z, w)))
      return 1;
  return 0;
}

/* Under watch_mu.  A read is held at most rescue_ms: a watch that has not
 * fired by then (its server behind, or following a deposed leader) would
 * make the read wait as long as that server.  The event is made from what
 * the read saw instead, as a re-arm makes the one it missed: each record
 * the read waits for gets it now, in its place in the path's order, and
 * its registration's own event is swallowed when it comes.  The read is
 * handed on after those events. */
static int hold_over(const zkr_t *z, const zkr__op_t *op) {
  return op->held_ns && zkr__since(zkr__now_ns(), op->held_ns) >= (uint64_t)z->rescue_ms * 1000000u;
}

/* Whether op's answer (rc) may show an older state than w's read saw,
 * not a newer one: w was armed by a read issued after op (on one stock
 * session op would have completed before that pair was set), and the
 * answer differs from w's state in the node's existence only, which
 * either order explains - not created yet there, or deleted since.  op
 * still waits for w's event, up to the bound, but no event is made from
 * it.  (A later version, mzxid or pzxid, is a change after w's state
 * whoever issued the read.) */
static int maybe_older(const zkr__watch_t *w, const zkr__op_t *op, int rc) {
  return op->read_seq && w->read_seq > op->read_seq && w->existed != (rc == ZOK);
}

/* Whether the event a read past its bound shows w missed is due even if
 * that read may show an older state (maybe_older): an exists watch on a
 * missing node, with a creation after its state known committed
 * (created_after) - the first change that can fire it, so CREATED is its
 * event, whichever state the read shows. */
static int due_all_the_same(const zkr__watch_t *w, int rc) {
  return rc == ZOK && w->created_after && w->kind == ZKR__WATCH_EXIST && !w->existed;
}

static void make_late_events_locked(zkr_t *z, const zkr__op_t *op, int rc, const struct Stat *st,
                                    zkr__watch_t **gone) {
  for (;;) {
    zkr__watch_t *w = zkr__watch_path_first(z, op->path);
    while (w &&
           !(pending_change(w, rc, st) && (!maybe_older(w, op, rc) || due_all_the_same(w, rc))))
      w = zkr__watch_path_next(w);
    int event = w ? missed_live(w, rc, st) : 0;
    if (!event) return;
    if (w->state == ZKR__W_ARMED || w->state == ZKR__W_REARMING)
      zkr__watch_set_state_locked(z, w, ZKR__W_CONSUMED);
    else zkr__watch_set_state_locked(z, w, ZKR__W_HELD); /* lost: nothing to swallow */
    z->watch_missed_events++;
    w->fire_proof = op->read_seq;
    w->fire_proof_older = maybe_older(w, op, rc); /* (due_all_the_same) */
    zkr__watch_fire_locked(z, w, event, 1, gone);
  }
}

/* Completion's test for an application read (zkr__completion_*): 1 when its
 * reply is kept and op held here, to be handed on by zkr__watch_done once
 * no record blocks it.  A reply that comes once the session is over (the
 * handle closes: its member sessions' completions run during the close)
 * is not handed on with its data: no event is delivered any more, and on
 * stock's one session an event of a change the reply shows would have
 * come before it - the record that waited for that event may even be gone
 * already, its event dropped by the close (zkr__watch_deliver_locked).
 * *r becomes the end's outcome instead (ZCLOSING), as for the reads held
 * when the session ended (done_with), and as stock completes what is
 * outstanding at its close. */
int zkr__watch_hold_read(zkr__op_t *op, zkr__result_t *r, void (*keep)(zkr__op_t *)) {
  zkr_t *z = op->z;
  if (zkr__op_has(op, ZKR__OP_F_WRITE) || !op->path || (r->rc != ZOK && r->rc != ZNONODE)) return 0;
  int ended = zkr__handle_ended_rc(z);
  if (ended) {
    *r = (zkr__result_t){.rc = ended, .value_len = -1};
    return 0;
  }
  /* The list is read under its lock only (an unlocked look at watch_list
   * raced with the watcher thread's unlink: ThreadSanitizer). */
  pthread_mutex_lock(&z->watch_mu);
  op->held_ns = 0;
  int held = !zkr__queue_empty(&z->watch_q) && read_blocked_locked(z, op, r->rc, r->stat);
  if (held) {
    if (keep) keep(op);
    op->held_ns = zkr__now_ns();
    op->kept = zkr__deliver_reply_copy(op->shape, r);
    /* In the order they were held, which is the order they are handed on
     * in when one event releases several. */
    zkr__queue_push(&z->wf_held, &op->wf_link);
    z->wf_count++;
  }
  pthread_mutex_unlock(&z->watch_mu);
  return held;
}

/* Under watch_mu.  Whether op, past the hold's bound, shows a change whose
 * event is in hand and waits only for the hand-on of the read that set
 * its record - released (resuming) or on its way to the application, not
 * held itself.  That event comes as soon as that read is handed on, and op
 * after it (zkr__watch_read_handed_on calls done_with again), not with the
 * reads before the event it waited for.  At most twice the bound: a read
 * that never reaches the application (e.g. a hedge's loser) holds nobody
 * for ever. */
static int event_on_its_way_locked(zkr_t *z, const zkr__op_t *op, const zkr__result_t *r) {
  if (zkr__since(zkr__now_ns(), op->held_ns) >= 2 * (uint64_t)z->rescue_ms * 1000000u) return 0;
  for (const zkr__watch_t *w = zkr__watch_path_first(z, op->path); w; w = zkr__watch_path_next(w)) {
    if (!w->fire || !shows_change(w, r->rc, r->stat)) continue;
    if (w->resuming ||
        ((w->read_pending || w->merged_pending) && !zkr__watch_read_held_back_locked(z, w)))
      return 1;
  }
  return 0;
}

/* Under watch_mu.  Whether op, past the hold's bound, waits for the event
 * of a record whose change another held read proves and that read is not
 * past its own bound yet: op's answer may be older than that record's
 * state (maybe_older: no event is made from it), but a read issued after
 * the record's showed the change for certain, and its bound makes the
 * event (make_late_events_locked) if the record's own does not come
 * first.  op waits for it: handed on now, its answer (ZNONODE: the node
 * gone, in the application's eyes) would come before an event the
 * handle knows is due (sim seed 18941).  Then, in the turn that makes
 * the event, op goes too, after it.  At most twice the bound. */
static int event_proved_by_held_locked(zkr_t *z, const zkr__op_t *op, const zkr__result_t *r) {
  if (zkr__since(zkr__now_ns(), op->held_ns) >= 2 * (uint64_t)z->rescue_ms * 1000000u) return 0;
  for (const zkr__watch_t *w = zkr__watch_path_first(z, op->path); w; w = zkr__watch_path_next(w)) {
    if (!pending_change(w, r->rc, r->stat) || !maybe_older(w, op, r->rc)) continue;
    ZKR__QUEUE_FOREACH(l, &z->wf_held) {
      const zkr__op_t *o = ZKR__OP_OF(l, wf_link);
      if (o == op || !o->kept || !o->path || strcmp(o->path, op->path)) continue;
      zkr__result_t a = zkr__deliver_reply_view(o->kept);
      if (pending_change(w, a.rc, a.stat) && !maybe_older(w, o, a.rc) && !hold_over(z, o)) return 1;
    }
  }
  return 0;
}

/* Under watch_mu.  Whether op, whose answer may be older than a record's
 * state (maybe_older: that record was set by a read issued after op),
 * shows a change whose event came for that record and waits only its turn
 * (for the hand-on of the read that set it): its read may be handed on in
 * this very turn, and the application would then see op's answer (the
 * node gone, in its eyes) before that event, which the handle holds
 * already.  op waits for the next turn, after the event (a bounded read
 * past its bound goes all the same).  (The simulator: tests/sim/zkroute-sim
 * --seed 30747 --mode routed, op 1205's ZNONODE handed on with the reads
 * of pairs 0 and 4, before their DELETED.) */
static int older_than_an_event_in_hand_locked(zkr_t *z, const zkr__op_t *op,
                                              const zkr__result_t *r) {
  for (const zkr__watch_t *w = zkr__watch_path_first(z, op->path); w; w = zkr__watch_path_next(w))
    if (w->fire && shows_change(w, r->rc, r->stat) && maybe_older(w, op, r->rc)) return 1;
  return 0;
}

/* w's pair is set in the application's eyes now, its first read handed
 * on: w takes its place in the path's order, after every pair placed
 * before.  So does a record that took w's over (the pair set again
 * elsewhere while w's read was held, no change between: took_over_of),
 * whose place until now was w's at its answer - before pairs whose reads
 * were handed on earlier (sim seed 4635 --io-loss 5).  Under watch_mu. */
static void place_locked(zkr_t *z, zkr__watch_t *w) {
  w->seq = ++z->watch_seq;
  for (zkr__watch_t *r = zkr__watch_path_first(z, w->path); r; r = zkr__watch_path_next(r))
    if (r != w && r->took_over && r->took_over_of == w->id) r->seq = w->seq;
}

static void rearm_after_locked(zkr_t *z, zkr__watch_t *w);

/* After records changed (outside watch_mu): frees those that went, and
 * hands on the held reads nothing blocks any more - after the events just
 * queued, which come first.  all: every held read (the handle closes).
 * before (unless 0): only the reads issued before the operation of that
 * issue number. */
static void hand_on_held(zkr_t *z, zkr__watch_t *gone, int all, uint64_t before) {
  zkr__watch_free_list(gone);
  if (!z->wf_count) return;
  zkr__queue_t ready = {0};
  pthread_mutex_lock(&z->watch_mu);
  /* Reads released because the session ended (or the handle closes) are
   * still outstanding for the application: they complete as stock
   * completes what is outstanding then, not with the data their event
   * should have come before. */
  int ended = all ? ZCLOSING : zkr__handle_ended_rc(z);
  zkr__watch_t *made_gone = NULL;
  /* The records the released reads armed: their events wait until the
   * reads were handed on (resuming), and they take their places in the
   * path's order in the order the reads are handed on in - the
   * application sees a pair set when its read completes, so reads of the
   * path that completed while this one was held were set before it
   * (stock's table keeps the order completions registered them in). */
  size_t cap = (size_t)z->wf_count, n_ids = 0, n_covers = 0;
  uint64_t *ids = malloc((cap ? cap : 1) * sizeof *ids);
  /* The records a remove_all covered, whose reads are released here: that
   * call completes after their events too, which come after the reads
   * (zkr__watch_remove_cover_end; without memory, at the hand-on). */
  zkr__watch_t **covers = malloc((cap ? cap : 1) * sizeof *covers);
  ZKR__QUEUE_FOREACH_SAFE(l, next, &z->wf_held) {
    zkr__op_t *op = ZKR__OP_OF(l, wf_link);
    if (before && op->ord_seq >= before) continue;
    zkr__result_t r = {.rc = ZKR_ENOMEM, .value_len = -1};
    if (op->kept) r = zkr__deliver_reply_view(op->kept);
    int over = !all && op->kept && hold_over(z, op);
    if (over && event_on_its_way_locked(z, op, &r)) over = 0;
    if (over && event_proved_by_held_locked(z, op, &r)) over = 0;
    if (over && !zkr__handle_ended_rc(z)) make_late_events_locked(z, op, r.rc, r.stat, &made_gone);
    zkr__watch_t *own = op->watch_id && !ended ? zkr__watch_by_id_locked(z, op->watch_id) : NULL;
    int release = all || !op->kept || over ||
                  (!read_blocked_locked(z, op, r.rc, r.stat) &&
                   !older_than_an_event_in_hand_locked(z, op, &r));
    if (release && own && (!ids || n_ids == cap)) release = all; /* out of memory: next turn */
    if (release) {
      if (own && ids && n_ids < cap) {
        ids[n_ids++] = op->watch_id;
        /* Placed by the first read handed on that set it: a read that
         * set the pair again while it was set (its record reused: a read
         * released before this one in this turn, or one handed on
         * earlier) changes nothing, as in stock's table. */
        if (own->state != ZKR__W_FIRED && own->read_pending && !own->took_over && !own->resuming &&
            !(own->rearm_after && op->read_seq == own->rearm_read_seq))
          place_locked(z, own); /* placed here, in the order reads are handed on */
        own->resuming++;
      }
      if (op->cover_w && covers && n_covers < cap) {
        covers[n_covers++] = op->cover_w;
        op->cover_w = NULL;
      }
      zkr__queue_remove(&z->wf_held, &op->wf_link);
      zkr__queue_push(&ready, &op->wf_link);
      z->wf_count--;
    }
  }
  pthread_mutex_unlock(&z->watch_mu);
  zkr__watch_free_list(made_gone);
  /* The reads, then the events of the records they armed. */
  for (zkr__queue_link_t *l; (l = zkr__queue_pop(&ready));) {
    zkr__op_t *op = ZKR__OP_OF(l, wf_link);
    if (ended) {
      zkr__deliver_reply_free(op->kept);
      op->kept = NULL;
      op->kept_rc = ended;
    }
    zkr__hooks_resume(op);
  }
  int released = 0;
  if (n_ids) {
    zkr__watch_t *gone2 = NULL;
    pthread_mutex_lock(&z->watch_mu);
    for (size_t i = 0; i < n_ids; i++) {
      zkr__watch_t *w = zkr__watch_by_id_locked(z, ids[i]);
      if (w) w->resuming--;
    }
    for (size_t i = 0; i < n_ids; i++) {
      zkr__watch_t *w = zkr__watch_by_id_locked(z, ids[i]);
      if (w && w->fire) {
        zkr__watch_release_locked(z, w->path, &gone2);
        released = 1;
      }
    }
    pthread_mutex_unlock(&z->watch_mu);
    zkr__watch_free_list(gone2);
  }
  free(ids);
  for (size_t i = 0; i < n_covers; i++) zkr__hooks_cover_end(z, covers[i]);
  free(covers);
  /* Those events may unblock other held reads. */
  if (released) hand_on_held(z, NULL, 0, before);
}

/* hand_on_held, then the removal calls that waited for events delivered
 * by now (zkr__watch_remove_events_out): a removal's completion comes
 * after the events its records got before its answer. */
static void done_with(zkr_t *z, zkr__watch_t *gone, int all, uint64_t before) {
  hand_on_held(z, gone, all, before);
  zkr__hooks_events_out(z);
}

void zkr__watch_done(zkr_t *z, zkr__watch_t *gone) { done_with(z, gone, 0, 0); }

void zkr__watch_done_before(zkr_t *z, zkr__watch_t *gone, uint64_t ord_seq) {
  done_with(z, gone, 0, ord_seq);
}

/* The monitor's turn: held reads past their bound go. */
void zkr__watch_hold_tick(zkr_t *z) {
  if (z->wf_count) hand_on_held(z, NULL, 0, 0);
  zkr__hooks_events_out(z);
}

void zkr__watch_release_all_held(zkr_t *z) { done_with(z, NULL, 1, 0); }

/* The record's watch is over (its event came, or the read that set it
 * failed).  Returns 1 when the caller must free it: it is out of the
 * registry.  A record that reads in flight set again (reuses) stays, as
 * FIRED: each of those reads arms it anew or lets it go when it completes
 * (zkr__watch_reuse_done).  Under watch_mu. */
int zkr__watch_over_locked(zkr_t *z, zkr__watch_t *w) {
  w->fire = 0;
  w->swallow = 0;
  if (w->rearm_after) {
    rearm_after_locked(z, w);
    return 0;
  }
  if (w->reuses > 0) {
    zkr__watch_set_state_locked(z, w, ZKR__W_FIRED);
    return 0;
  }
  zkr__watch_unlink_locked(z, w);
  return 1;
}

static void over_to(zkr_t *z, zkr__watch_t *w, zkr__watch_t **gone) {
  if (zkr__watch_over_locked(z, w)) {
    w->gone_next = *gone;
    *gone = w;
  }
}

static void remember(zkr__watch_t *w, const struct Stat *stat) {
  w->existed = stat != NULL;
  if (stat) {
    w->mzxid = stat->mzxid;
    w->pzxid = stat->pzxid;
    w->czxid = stat->czxid;
  }
}

/* ---- the order of events ---- */

/* Whether an event of type fires w's watcher table, as the server and the
 * stock client's collectWatchers choose: a change fires data watches
 * (exists on an existing node is one), a creation exists watches on a
 * missing node, a child change child watches, a deletion data and child
 * watches. */
static int triggers_table(int type, int kind, int existed) {
  int data = kind == ZKR__WATCH_DATA || (kind == ZKR__WATCH_EXIST && existed);
  int exist = kind == ZKR__WATCH_EXIST && !existed;
  int child = kind == ZKR__WATCH_CHILD;
  if (type == ZOO_CHANGED_EVENT) return data;
  if (type == ZOO_CREATED_EVENT) return exist;
  if (type == ZOO_CHILD_EVENT) return child;
  if (type == ZOO_DELETED_EVENT) return data || child;
  return 0;
}

static int triggers(int type, const zkr__watch_t *w) {
  return triggers_table(type, w->kind, w->existed);
}

/* Registered from the application's point of view and not yet fired. */
static int waiting(const zkr__watch_t *w) {
  return !w->fire &&
         (w->state == ZKR__W_ARMED || w->state == ZKR__W_REARMING || w->state == ZKR__W_LOST);
}

/* The state w's read saw, in the counter the change of its kind moves. */
static int64_t seen(const zkr__watch_t *w) {
  return w->kind == ZKR__WATCH_CHILD ? w->pzxid : w->mzxid;
}

/* Whether r, a record of f's pair set again on f's path after f's state
 * (its read saw a later one, and was handed on), is fired by f's event
 * (type) all the same: a later set than the state r saw is known to have
 * committed (r->later_set: acknowledged to this handle), so in the
 * application's eyes the pair's one registration - stock's table holds a
 * pair once per path and table - was taken by this event, whichever
 * change f's member reported: a lagging member's older copy (f's read,
 * issued first, answered after r's, saw an older state) comes first.
 * Left armed, r was called again for that set (sim seeds 697 and 182
 * --idle-park 300: "changed event ... to pair N, which held no such
 * watch").  Without that knowledge f's event may be the change r's read
 * saw, and r waits for the next one (same_change). */
static int known_later_twin(const zkr__watch_t *r, const zkr__watch_t *f, int type) {
  return type == ZOO_CHANGED_EVENT && r->fn == f->fn && r->ctx == f->ctx && !r->read_pending &&
         r->existed && f->existed && r->kind != ZKR__WATCH_CHILD && f->kind != ZKR__WATCH_CHILD &&
         r->czxid == f->czxid && r->later_set > seen(r);
}

/* Whether the change that fired f fires r too, r being a record of f's
 * path that an event of type fires: unless r's read saw a later state
 * than f's (it was set after that change: stock's read registered anew
 * after the change, and fires for the next one), or, for a deletion, a
 * later incarnation of the node (created again after the deletion that
 * fired f). */
static int same_change(const zkr__watch_t *r, const zkr__watch_t *f, int type) {
  if (type == ZOO_DELETED_EVENT) return !(r->existed && f->existed && r->czxid > f->czxid);
  /* An exists watch on a missing node (the one table a CREATED fires)
   * whose read was issued after the held read that made f's CREATED
   * (fire_proof): on stock's one session that read's reply came after the
   * creation's event, so r's ZNONODE is the node deleted again and r was
   * set after the creation.  ZooKeeper registers it at the state its read
   * saw (DataTree.statNode) and fires it at the next creation
   * (createNode, WatchManager.triggerWatch): consumed now, its own event
   * for that one was swallowed (routed seed 1179: pair 0 never called).
   * As supersede_locked's not_fired. */
  /* Not when that answer may be older than f's state (fire_proof_older):
   * its event is due by the handle's own create, sent after f's read was
   * answered, and it shows no creation before the reads issued after it.
   * A record armed before such a create too (created_after) has a
   * creation after its state committed, which this event stands for
   * (the first after the older record's state, or one before it): the
   * change fires it, in its turn.  Spared, each record got its made
   * event alone, newest first (routed seed 28264: "pair 1 called before
   * pair 6, which was set first").  One armed after every such create
   * (no created_after) is spared as before. */
  if (type == ZOO_CREATED_EVENT && f->fire_proof && r->read_seq > f->fire_proof &&
      !(f->fire_proof_older && r->created_after))
    return 0;
  /* The same for one whose read was answered on the zhandle where f's
   * own CREATED had come, after it: one session's server sends a change's
   * event before the replies of the reads it serves after that change, so
   * r's read saw the node deleted again (routed --io-loss 5 seed 6864:
   * pair 2 set again while its first record's CREATED waited its turn). */
  if (type == ZOO_CREATED_EVENT && f->came_tick && r->zh && r->zh == f->zh &&
      r->armed_tick > f->came_tick)
    return 0;
  /* The same for one whose read, on any member, was issued after f's own
   * CREATED came (came_read_seq) and went behind a sync sent after it was
   * issued (synced_seq): f's server had applied the creation, so it had
   * committed before that sync, which goes through the leader and is
   * answered behind the COMMITs the leader sent (Leader.processSync) - the
   * read's server applied the creation first, and r's read saw the node
   * deleted again (routed seed 19467: pair 1 set again on another member
   * while its first record's CREATED waited for the first read's
   * hand-on; consumed by that event, its own for the next creation was
   * swallowed). */
  if (type == ZOO_CREATED_EVENT && f->came_read_seq && r->synced_seq > f->came_read_seq) return 0;
  /* Data and exists watches on a node both saw its mzxid, child watches
   * its pzxid. */
  int comparable =
      r->existed && f->existed && (r->kind == ZKR__WATCH_CHILD) == (f->kind == ZKR__WATCH_CHILD);
  return !(comparable && seen(r) > seen(f));
}

/* The event the change that fired f (type) brings r, a record of f's path
 * that change fires (same_change): for a deletion, a record whose read saw
 * an older state of the same node than f's (a smaller mzxid, or pzxid for
 * child watches) missed a change before it - a set (a child created or
 * deleted) - and its watch fired for that one, with its own type, as on
 * any server; the deletion fires only the records set after that change.
 * Otherwise type. */
static int event_for(const zkr__watch_t *r, const zkr__watch_t *f, int type) {
  if (type != ZOO_DELETED_EVENT || !r->existed || !f->existed || r->czxid != f->czxid ||
      (r->kind == ZKR__WATCH_CHILD) != (f->kind == ZKR__WATCH_CHILD) || seen(r) >= seen(f))
    return type;
  return r->kind == ZKR__WATCH_CHILD ? ZOO_CHILD_EVENT : ZOO_CHANGED_EVENT;
}

/* Whether w's event reports a later change than the one r fires for: a
 * read held here that set w on w's session (its reply came there before
 * w's event, so w's change is after that read's state) shows a change
 * after r's state.  r is one-shot: that earlier change fires it, before
 * the read's reply on stock's one session, and w after the read - so r's
 * event does not wait for w's, though w was set first.  Under watch_mu. */
static int later_change_locked(const zkr_t *z, const zkr__watch_t *w, const zkr__watch_t *r) {
  if (!w->zh) return 0;
  ZKR__QUEUE_FOREACH(l, &z->wf_held) {
    const zkr__op_t *op = ZKR__OP_OF(l, wf_link);
    if (op->watch_id != w->id || op->zh != w->zh || !op->kept) continue;
    /* (not one answered there after w's event: rearm_after) */
    if (w->rearm_after && op->read_seq == w->rearm_read_seq) continue;
    zkr__result_t a = zkr__deliver_reply_view(op->kept);
    if (shows_change(r, a.rc, a.stat) && !maybe_older(r, op, a.rc)) return 1;
  }
  return 0;
}

/* Whether r, set before f on f's path, must be delivered before f's event
 * (f->fire): r's event came and waits too, or r has had none yet and the
 * same change will fire it - unless r's read saw a later state than f's,
 * after the change that fired f. */
static int blocks(const zkr_t *z, const zkr__watch_t *r, const zkr__watch_t *f) {
  if (r == f || !r->seq || r->seq >= f->seq || !triggers(f->fire, r)) return 0;
  /* r's first read is not handed on: its pair is not set in the
   * application's eyes, and takes its place when that read is (done_with,
   * zkr__watch_read_handed_on) - after f, which was handed on. */
  if (r->read_pending && !r->took_over && !f->read_pending) return 0;
  if (r->fire) return !later_change_locked(z, r, f);
  return waiting(r) && same_change(r, f, f->fire);
}

/* Queues w's event for the application (under watch_mu: w stays whole).
 * Nothing after the owner expired or the session failed authentication:
 * the EXPIRED (AUTH_FAILED) event is the last. */
void zkr__watch_deliver_locked(zkr__watch_t *w, int type) {
  zkr_t *z = w->z;
  if (!z->closing && !z->expired && !z->auth_failed)
    zkr__deliver_watch(z, w->fn, w->ctx, type, ZOO_CONNECTED_STATE, w->path);
}

/* f's event (type) is the path's event: stock fires the watchers of a
 * path from one server's table, so one change calls each pair once, and
 * all with the same event, whichever member's copy came first.  The
 * other records of the path that the same change fires are consumed
 * (their own copies swallowed when they come):
 *  - the same pair's: two reads that set the pair at once on two members,
 *    or a deletion firing the pair's data and child tables - not called
 *    again;
 *  - another pair's (spread gave it the change when it came): f's event,
 *    delivered in its turn of the order the pairs were set (its own copy
 *    may say otherwise: a re-arm that found the node gone reports DELETED
 *    where a live member reported CHANGED).
 * A record the change does not fire (same_change) is kept, and fires for
 * the next one. */
static void consume_twins(zkr_t *z, const zkr__watch_t *f, int type, zkr__watch_t **gone) {
  for (zkr__watch_t *r = zkr__watch_path_first(z, f->path), *next; r; r = next) {
    next = zkr__watch_path_next(r);
    if (r == f || !triggers(type, r) || !(same_change(r, f, type) || known_later_twin(r, f, type)))
      continue;
    if (r->fn != f->fn || r->ctx != f->ctx) {
      /* its copy of this change (spread) waits its turn */
      if (r->fire) r->fire = event_for(r, f, type);
    } else if (r->read_pending) {
      /* Its first read is not handed on (f's is, being delivered): the
       * application sees that read set the pair again after f's event -
       * a registration of its own, called in its own turn (blocks). */
    } else if (r->fire && (r->fire == type || r->fire == event_for(r, f, type))) {
      /* Its copy of this very event, delivered now by f's (an older
       * twin's is the set it missed: one registration in stock's table,
       * called once).  A consumed
       * record (its event made here, by a re-arm or a superseding read)
       * still has a registration whose own event must come and be
       * swallowed: freed now, that event would call a freed record. */
      if (r->state == ZKR__W_CONSUMED && !r->swallow) r->fire = 0;
      else over_to(z, r, gone);
    } else if (waiting(r)) {
      if (r->state == ZKR__W_ARMED || r->state == ZKR__W_REARMING)
        zkr__watch_set_state_locked(z, r, ZKR__W_CONSUMED);
      else over_to(z, r, gone); /* lost: no registration left */
    }
  }
}

/* Whether the read that armed w is held back for another record's event
 * (or being released): its completion is not on its way to the
 * application yet.  Under watch_mu. */
/* A remove_all (zkr__watch_remove_*) takes w while a read that armed it
 * is held here (answered, not handed on): that read was issued before the
 * removal, and on one stock session it completes first.  The first such
 * read carries w as its cover (cover_w): the call's completion waits for
 * its hand-on, or its free (zkr__hooks_cover_end).  1 when one does.
 * Under watch_mu. */
int zkr__watch_cover_held_read_locked(zkr_t *z, zkr__watch_t *w) {
  ZKR__QUEUE_FOREACH(l, &z->wf_held) {
    zkr__op_t *op = ZKR__OP_OF(l, wf_link);
    if (op->watch_id == w->id && !op->cover_w) {
      op->cover_w = w;
      return 1;
    }
  }
  return 0;
}

int zkr__watch_read_held_before_locked(const zkr_t *z, uint64_t ord_seq, zkr__watch_t *const *v,
                                       int n) {
  ZKR__QUEUE_FOREACH(l, &z->wf_held) {
    const zkr__op_t *op = ZKR__OP_OF(l, wf_link);
    if (!op->watch_id || !op->ord_seq || op->ord_seq >= ord_seq) continue;
    for (int i = 0; i < n; i++)
      if (v[i]->id == op->watch_id) return 1;
  }
  return 0;
}

int zkr__watch_read_held_back_locked(const zkr_t *z, const zkr__watch_t *w) {
  if (w->resuming) return 1;
  ZKR__QUEUE_FOREACH(l, &z->wf_held) {
    const zkr__op_t *op = ZKR__OP_OF(l, wf_link);
    /* Not the read that set w again after its event came (rearm_after):
     * it comes after that event, and arms w only then. */
    if (op->watch_id == w->id && !(w->rearm_after && op->read_seq == w->rearm_read_seq)) return 1;
  }
  return 0;
}

/* Whether w's event was made from a held read's answer, issued before
 * every read that set w again on its own session and is not handed on
 * yet (merged_pending): on stock's one session the event came before
 * that read's reply, so before those reads' - it does not wait for them,
 * and they set the pair again after it (sim seeds 8451 and 5720
 * --io-loss 5: the pair's own member had lost the creation's event with
 * a connection, answered those reads after a deletion, and the made
 * CREATED waited behind them, after the read that proved it). */
static int made_before_merged(const zkr__watch_t *w) {
  return w->fire && w->fire_proof && w->merged_pending > 0 && w->fire_proof < w->merged_read_seq;
}

/* Whether the read that armed w is held (for an event of another record),
 * or not handed on yet: w's event waits for that read's completion
 * (done_with). */
static int read_held_locked(const zkr_t *z, const zkr__watch_t *w) {
  if (!made_before_merged(w))
    return w->read_pending || w->merged_pending || zkr__watch_read_held_back_locked(z, w);
  if (w->read_pending || w->resuming) return 1;
  ZKR__QUEUE_FOREACH(l, &z->wf_held) {
    const zkr__op_t *op = ZKR__OP_OF(l, wf_link);
    if (op->watch_id == w->id && !(op->watch_merged && op->read_seq > w->fire_proof)) return 1;
  }
  return 0;
}

/* Whether r was armed by a read still held back for another record's
 * event: the application has not seen that pair set, and r takes its
 * place when the read is handed on (done_with), after every record whose
 * read was handed on before - it precedes none of those yet.  Under
 * watch_mu. */
static int unplaced_locked(const zkr_t *z, const zkr__watch_t *r) {
  return r->read_pending && !r->took_over && !r->resuming && zkr__watch_read_held_back_locked(z, r);
}

/* Whether w's own session's copy of the change it is to be called for
 * came (its own trampoline), not only another member's (spread). */
static int own_copy_came(const zkr__watch_t *w) {
  return w->fire && (w->state == ZKR__W_HELD || w->swallow);
}

/* Whether f's event must wait for the hand-on of a read that set r, a
 * record of f's path, again on r's session (merged_pending): that read's
 * reply came there while r was still armed, before the change that fires
 * r, and the same change fires f.  Once that change's event came on r's
 * session too (r's own copy, or that of another record armed there), the
 * server's order is known: the reply, then the event - and stock fires all
 * the path's pairs from one table at that event, so no pair is called
 * before the read's completion, not only r's (read_held_locked).  (Seeds
 * 2153 and 16933: the other pair was called first, and the read that set
 * r again looked set after the event.)  While the change came only from
 * other members, the order of the two sessions is not known and f goes
 * (test_watchers waiting_event_pair_gets_session_events).  Under
 * watch_mu. */
static int merged_read_first_locked(const zkr_t *z, const zkr__watch_t *r, const zkr__watch_t *f) {
  if (r == f || r->merged_pending <= 0 || !r->fire || !r->zh || !triggers(f->fire, r) ||
      !same_change(r, f, f->fire))
    return 0;
  /* That read saw a change after f's state: f's change came first, and
   * the read, held for f's event, waits for f (seed 9668: f was given a
   * deletion that came after the change it missed). */
  struct Stat st = {.mzxid = r->merged_mzxid, .pzxid = r->merged_pzxid};
  if (shows_change(f, r->merged_existed ? ZOK : ZNONODE, &st)) return 0;
  for (const zkr__watch_t *x = zkr__watch_path_first(z, r->path); x; x = zkr__watch_path_next(x))
    if (x->zh == r->zh && own_copy_came(x) && same_change(x, f, f->fire)) return 1;
  return 0;
}

/* Delivers, in the order they were set, the events of path's records
 * whose turn it is. */
void zkr__watch_release_locked(zkr_t *z, const char *path, zkr__watch_t **gone) {
  for (;;) {
    zkr__watch_t *next_f = NULL;
    for (zkr__watch_t *f = zkr__watch_path_first(z, path); f; f = zkr__watch_path_next(f)) {
      if (!f->fire) continue;
      if (next_f && next_f->seq <= f->seq) continue;
      int blocked = read_held_locked(z, f);
      for (zkr__watch_t *r = zkr__watch_path_first(z, path); r && !blocked;
           r = zkr__watch_path_next(r))
        blocked =
            ((blocks(z, r, f) && !unplaced_locked(z, r)) || merged_read_first_locked(z, r, f));
      if (!blocked) next_f = f;
    }
    if (!next_f) return;
    zkr__watch_t *f = next_f;
    int type = f->fire;
    int set_again = made_before_merged(f);
    zkr__watch_deliver_locked(f, type);
    /* (with fire_proof still set: same_change) */
    consume_twins(z, f, type, gone);
    f->fire_proof = 0;
    f->fire_proof_older = 0;
    if (set_again && f->state == ZKR__W_CONSUMED) {
      /* The reads that set it again after the event hold its
       * registration: the pair's from here, at the state they saw, its
       * next event its own - or, if that registration fired already (its
       * copy came: swallow), none, and it is set again (LOST: re-armed). */
      struct Stat st = {.mzxid = f->merged_mzxid, .pzxid = f->merged_pzxid};
      f->fire = 0;
      f->seq = 0; /* at the end of the path's order */
      /* (the reads issued before those show it nothing: read_seq) */
      zkr__watch_arm_locked(z, f, f->member, f->zh, f->merged_existed ? &st : NULL,
                            f->merged_read_seq);
      if (f->swallow) {
        f->swallow = 0;
        f->zh = NULL;
        zkr__watch_set_state_locked(z, f, ZKR__W_LOST);
      }
    } else if (f->state == ZKR__W_CONSUMED && !f->swallow) {
      f->fire = 0; /* its registration's own event is still to come */
    } else {
      over_to(z, f, gone);
    }
  }
}

/* w's event (type) came: the change it reports fires the other pairs of
 * the path that were set before it (stock's one table fires them all
 * at once), whatever member holds them and whatever event their own
 * copies will say: each gets type now, and its own copy is swallowed.
 * So do the same pair's other records (set twice at once on two members,
 * or in its data and child tables): the pair is one registration in
 * stock's table, in the place it was first set, and is called there, once
 * (consume_twins drops the other records' events, but for a record whose
 * read is not handed on yet: that read sets the pair again after the
 * event, in the application's eyes).  Left waiting, a twin
 * set before w would hold w's event, and every pair set between them,
 * until its own member reported the change. */
static void spread(zkr_t *z, const zkr__watch_t *w, int type, const zkr__watch_t *except) {
  for (zkr__watch_t *r = zkr__watch_path_first(z, w->path); r; r = zkr__watch_path_next(r)) {
    if (r == w || r == except || !waiting(r) || !triggers(type, r) ||
        !(same_change(r, w, type) || known_later_twin(r, w, type)))
      continue;
    /* An exists watch on a missing node of w's pair that w's CREATED
     * consumes: which state its read saw is not known (same_change cannot
     * compare), and a synced read may show later that this creation did
     * not fire it (outlive_seq, zkr__watch_op_done) - the pair's call is
     * w's registration's then.  (Another pair's record is called for it
     * here, and only here: its own event after would be a second call.) */
    if (r->state == ZKR__W_ARMED && type == ZOO_CREATED_EVENT && r->kind == ZKR__WATCH_EXIST &&
        !r->existed && r->fn == w->fn && r->ctx == w->ctx && !r->outlive_seq && !r->removing) {
      r->outlive_seq = atomic_load(&z->read_seqs);
      z->watch_outlive++;
    }
    if (r->state == ZKR__W_ARMED || r->state == ZKR__W_REARMING)
      zkr__watch_set_state_locked(z, r, ZKR__W_CONSUMED);
    else zkr__watch_set_state_locked(z, r, ZKR__W_HELD); /* lost: nothing to swallow */
    r->fire = event_for(r, w, type);
    if (!r->seq) r->seq = ++z->watch_seq;
  }
}

/* except: a record the change does not fire, which spread cannot tell
 * (supersede_locked: a change a held read proved, and the record set by
 * a read issued after that one). */
static void fire_except_locked(zkr_t *z, zkr__watch_t *w, int type, int synthetic,
                               const zkr__watch_t *except, zkr__watch_t **gone) {
  w->fire = type;
  if (!synthetic) zkr__watch_set_state_locked(z, w, ZKR__W_HELD);
  if (!w->seq) w->seq = ++z->watch_seq;
  spread(z, w, type, except);
  zkr__watch_release_locked(z, w->path, gone);
}

void zkr__watch_fire_locked(zkr_t *z, zkr__watch_t *w, int type, int synthetic,
                            zkr__watch_t **gone) {
  fire_except_locked(z, w, type, synthetic, NULL, gone);
}

/* w's event was delivered (zkr__watch_over_locked), and a read that set
 * it again was answered on w's session after that event came there
 * (rearm_after, zkr__watch_reuse_done): the watch that read registered is
 * w's now, at the end of the path's order, as stock's table re-adds a
 * pair at a read's reply after its event; its events wait for that
 * read's hand-on (read_pending) unless it was handed on already.  An
 * event that watch brought meanwhile (rearm_fire) is w's next, and
 * fires the other records of the path as any event does.  zh closed
 * meanwhile: w is on no server, LOST, and the monitor re-arms it from
 * the state that read saw.  Under watch_mu. */
static void rearm_after_locked(zkr_t *z, zkr__watch_t *w) {
  int fire = w->rearm_fire;
  const struct Stat *st = w->rearm_existed ? &w->rearm_stat : NULL;
  w->rearm_after = 0;
  w->rearm_fire = 0;
  w->seq = 0;
  if (w->rearm_gone || fire) {
    /* on no server any more: its event was the last, or zh is gone */
    if (!st && w->kind == ZKR__WATCH_DATA) w->kind = ZKR__WATCH_EXIST;
    remember(w, st);
    w->read_seq = w->rearm_read_seq;
    w->synced_seq = 0;
    w->came_read_seq = 0; /* (when rearm_fire came is not known) */
    w->armed_ns = zkr__now_ns();
    w->created_after = 0;
    w->created_zh = NULL;
    w->member = w->rearm_member;
    if (fire) {
      zkr__watch_set_state_locked(z, w, ZKR__W_HELD);
    } else {
      zkr__watch_set_state_locked(z, w, ZKR__W_LOST);
      w->zh = NULL;
    }
    w->seq = ++z->watch_seq;
  } else {
    zkr__watch_arm_locked(z, w, w->rearm_member, w->zh, st, w->rearm_read_seq);
  }
  w->rearm_gone = 0;
  w->read_pending = !w->rearm_handed;
  w->rearm_handed = 0;
  if (fire) {
    w->fire = fire;
    spread(z, w, fire, NULL);
  }
}

/* ---- arming ---- */

/* Under watch_mu.  A data record armed with no stat was set again by an
 * exists of the same pair that found no node (its get's watch fired for
 * the deletion before): it is an exists watch now, in stock's exist
 * table - it waits for a creation, and a re-arm sets it by an exists (a
 * get sets no watch on a missing node). */
void zkr__watch_arm_locked(zkr_t *z, zkr__watch_t *w, int member, zhandle_t *zh,
                           const struct Stat *stat, uint64_t read_seq) {
  w->member = member;
  w->zh = zh;
  w->again = 0;
  if (!stat && w->kind == ZKR__WATCH_DATA) w->kind = ZKR__WATCH_EXIST;
  remember(w, stat);
  w->read_seq = read_seq;
  w->armed_ns = zkr__now_ns();
  w->armed_tick = ++z->watch_ticks;
  w->came_tick = 0;
  w->came_read_seq = 0;
  w->synced_seq = 0; /* (zkr__watch_armed sets it) */
  w->created_after = 0;
  w->created_zh = NULL;
  zkr__watch_set_state_locked(z, w, ZKR__W_ARMED);
  if (!w->seq) w->seq = ++z->watch_seq;
}

/* Whether a read's answer (rc, st) shows a change after the state w's
 * read saw, of the kind w's watch fires for. */
static int shows_change(const zkr__watch_t *w, int rc, const struct Stat *st) {
  int exists = rc == ZOK;
  if (w->kind == ZKR__WATCH_EXIST && !w->existed) return exists; /* created */
  if (!exists) return 1;                                         /* deleted */
  if (!st) return 0;
  if (w->kind == ZKR__WATCH_CHILD) return st->pzxid > w->pzxid;
  return st->mzxid > w->mzxid;
}

static int pending_change(const zkr__watch_t *w, int rc, const struct Stat *st) {
  return waiting(w) && shows_change(w, rc, st);
}

/* The event w's watch missed, between the state it remembers and the one
 * a read found (rc ZOK with stat, or ZNONODE). */
int zkr__watch_missed(const zkr__watch_t *w, int rc, const struct Stat *st) {
  int exists = rc == ZOK;
  if (w->existed && !exists) return ZOO_DELETED_EVENT;
  if (!w->existed && exists) return ZOO_CREATED_EVENT;
  if (!exists || !st) return 0;
  if (w->kind == ZKR__WATCH_CHILD) return st->pzxid != w->pzxid ? ZOO_CHILD_EVENT : 0;
  return st->mzxid != w->mzxid ? ZOO_CHANGED_EVENT : 0;
}

/* The event w's watch, still registered on its server, fires for the
 * change a held read's answer (rc, st) shows: as zkr__watch_missed, but a
 * node found created again since (a later czxid than the one w saw) was
 * deleted first, and the deletion fires a live watch - the server's
 * DataTree.deleteNode triggers the node's data and child watches with
 * NodeDeleted, on any member - not a change of the node w saw.  Given a
 * CHANGED, w took an event that would fire the pairs set on the new node
 * too (sim seed 36285: pair 2 called CHANGED, pair 1, set on the new
 * node first, not).  (A re-arm keeps zkr__watch_missed's CHANGED: stock's
 * SetWatches answers a data watch on a node whose mzxid is past the
 * relative zxid so, whatever happened between.) */
static int missed_live(const zkr__watch_t *w, int rc, const struct Stat *st) {
  if (rc == ZOK && st && w->existed && w->czxid && st->czxid > w->czxid) return ZOO_DELETED_EVENT;
  return zkr__watch_missed(w, rc, st);
}

/* The event a held read proves w missed: its answer shows a change
 * after w's state that w has not fired for, and no older state (not
 * maybe_older) - the first such read in held order.  A read that sets w
 * again may find the state w remembers (an exists watch on a missing
 * node: created and deleted again meanwhile) while a read held for w saw
 * the change between: the change happened, and on stock's one session w
 * fired for it before that read's reply.  before (unless 0): only the
 * reads issued before the operation of that issue number.  0: none.
 * Under watch_mu. */
static int missed_by_held_locked(zkr_t *z, const zkr__watch_t *w, uint64_t before,
                                 uint64_t *read_seq) {
  ZKR__QUEUE_FOREACH(l, &z->wf_held) {
    const zkr__op_t *op = ZKR__OP_OF(l, wf_link);
    if (!op->kept || strcmp(op->path, w->path) != 0 || (before && op->ord_seq >= before)) continue;
    zkr__result_t r = zkr__deliver_reply_view(op->kept);
    if (pending_change(w, r.rc, r.stat) && !maybe_older(w, op, r.rc)) {
      int event = missed_live(w, r.rc, r.stat);
      if (event) {
        *read_seq = op->read_seq;
        return event;
      }
    }
  }
  return 0;
}

int zkr__watch_missed_before_locked(zkr_t *z, zkr__watch_t *w, uint64_t ord_seq,
                                    zkr__watch_t **gone) {
  uint64_t proof = 0;
  int event = missed_by_held_locked(z, w, ord_seq, &proof);
  if (!event) return 0;
  if (w->state == ZKR__W_ARMED || w->state == ZKR__W_REARMING)
    zkr__watch_set_state_locked(z, w, ZKR__W_CONSUMED);
  else zkr__watch_set_state_locked(z, w, ZKR__W_HELD); /* lost: nothing to swallow */
  z->watch_missed_events++;
  w->fire_proof = proof;
  w->fire_proof_older = 0;
  zkr__watch_fire_locked(z, w, event, 1, gone);
  return 1;
}

/* w2's read armed it; old, the record of the same pair it set again (its
 * member could not take the read), is superseded: it gets the event of a
 * change between the two reads, if there was one, and its registration,
 * wherever it is, is swallowed.  Without such an event w2 takes old's
 * place in the order (stock's table keeps a pair set again where it was).
 * With one, the pair left stock's table at that event and its read set it
 * again at the end: w2 takes its place when its read is handed on - after
 * the reads that event released (done_with), which the application sees
 * complete first. */
/* Whether a creation of the path is known to have committed between the
 * read that armed old, an exists watch on the missing node, and w2's,
 * which found it missing too: a create of this handle, sent after old's
 * read was answered, was answered on the zhandle that answered w2's read,
 * before it - one session answers in order, so its server read after the
 * creation (and a deletion after it: a multi that created and deleted
 * the node, say).  On stock's one session that creation fired the pair's
 * watch before w2's reply, and w2's read set the pair again after it.
 * Under watch_mu. */
static int created_between(const zkr__watch_t *old, const zkr__watch_t *w2) {
  return old->kind == ZKR__WATCH_EXIST && !old->existed && old->created_after && old->created_zh &&
         old->created_zh == w2->zh && !w2->existed;
}

static void supersede_locked(zkr_t *z, zkr__watch_t *w2, const struct Stat *st,
                             zkr__watch_t **gone) {
  zkr__watch_t *old = w2->supersedes;
  w2->supersedes = NULL;
  old->reuses--;
  if (waiting(old)) {
    int event = zkr__watch_missed(old, st ? ZOK : ZNONODE, st);
    /* w2's read found the state old remembers, and a held read proved a
     * change between: that read (issued before w2's) saw it, so w2's
     * read saw the state after it, and the change does not fire w2. */
    uint64_t proof = 0;
    const zkr__watch_t *not_fired = NULL;
    if (!event && (event = missed_by_held_locked(z, old, 0, &proof)) && proof < w2->read_seq)
      not_fired = w2;
    /* The handle's own create proves a creation between the two reads,
     * which the first registration's member may report later - or, with
     * another pair's copy of it, give to w2 (spread), which was set after
     * it (sim seeds 2730 and 5511 --io-loss 5: a multi created and
     * deleted the node, and the pair's exists went behind it). */
    if (!event && created_between(old, w2)) {
      event = ZOO_CREATED_EVENT;
      not_fired = w2;
    }
    int registered = old->state == ZKR__W_ARMED || old->state == ZKR__W_REARMING;
    if (old->seq && !event) {
      w2->seq = old->seq;
      w2->took_over = 1; /* the pair stayed set, in the application's eyes */
      /* ... once old's own first read is handed on, if it is not yet. */
      w2->took_over_of = !old->read_pending ? 0 : old->took_over ? old->took_over_of : old->id;
    }
    if (registered) zkr__watch_set_state_locked(z, old, ZKR__W_CONSUMED);
    else zkr__watch_set_state_locked(z, old, ZKR__W_HELD);
    if (event) {
      z->watch_missed_events++;
      fire_except_locked(z, old, event, 1, not_fired, gone);
    } else if (!registered) {
      over_to(z, old, gone);
    }
    /* An exists watch on a missing node, found missing again elsewhere:
     * old's member could not take the read, so a creation and deletion
     * between the two reads may have fired old's registration into a
     * connection that is gone, or be on its way still - stock's one
     * session would have delivered it before w2's reply, or reported
     * CONNECTING (it misses exactly that across SetWatches:
     * DataTree.setWatches adds such a watch silently).  The watch dip of
     * one turn reports it (zkr__watch_armed; routed seed 540). */
    if (!event && !st && old->kind == ZKR__WATCH_EXIST && !old->existed) z->wblip = 1;
  } else if (old->state == ZKR__W_FIRED && old->reuses == 0) {
    zkr__watch_unlink_locked(z, old);
    old->gone_next = *gone;
    *gone = old;
  }
}

/* op, a watched read, was answered (rc, st) and sets its pair (self),
 * and a read held for the event of another record of the path, issued
 * before op, proves that event (a node created while that record's
 * carrier was away, and deleted again before its server sent it, say).
 * On stock's one session the event came before that read's reply, so
 * before op's.  When op's answer shows no change after that record's
 * state, op is not held for it, and its pair would take its place before
 * the event came: if the event fires the table op sets, stock's table
 * would call op's pair for it too.  The event is made now, as at the
 * hold's bound. */
static void make_proved_before(zkr_t *z, const zkr__op_t *op, const zkr__watch_t *self, int rc,
                               const struct Stat *st) {
  if (!op->ord_seq) return;
  int kind = rc == ZOK ? zkr__watch_kind_of(op->type) : ZKR__WATCH_EXIST; /* the table it sets */
  zkr__watch_t *gone = NULL;
  pthread_mutex_lock(&z->watch_mu);
  for (int made = 1; made;) {
    made = 0;
    for (zkr__watch_t *w = zkr__watch_path_first(z, op->path); w && !made;
         w = zkr__watch_path_next(w)) {
      if (w == self || w == self->supersedes || !waiting(w) || w->removing ||
          shows_change(w, rc, st))
        continue;
      uint64_t proof = 0;
      int event = missed_by_held_locked(z, w, op->ord_seq, &proof);
      if (!event || !triggers_table(event, kind, rc == ZOK)) continue;
      /* Made as zkr__watch_missed_before_locked makes it; that may unlink
       * records: the walk starts again. */
      made = zkr__watch_missed_before_locked(z, w, op->ord_seq, &gone);
    }
  }
  pthread_mutex_unlock(&z->watch_mu);
  zkr__watch_done(z, gone);
}

/* A removal of path is sent on zh, or answered there: a server holds one
 * watch of a path per connection, and a removal drops it whatever record
 * the request named - a record of path consumed there (outlive_seq),
 * which the call leaves as it is, may have no registration left, and no
 * later read shows it live (routed seeds 8738 and 9405, with the rule
 * below before this: a remove_all answered ZOK on the consumed record's
 * zhandle, and the record made live again was called for another
 * pair's creation).  Under watch_mu. */
void zkr__watch_outlive_drop_locked(zkr_t *z, const char *path, zhandle_t *zh) {
  for (zkr__watch_t *w = zkr__watch_path_first(z, path); w && z->watch_outlive;
       w = zkr__watch_path_next(w))
    if (w->outlive_seq && w->zh == zh) {
      w->outlive_seq = 0;
      z->watch_outlive--;
    }
}

/* op, a read issued after an exists watch on a missing node was consumed
 * by a CREATED of another record of its pair (outlive_seq), went behind a
 * sync sent after it was issued (op->sync_held) and was answered on the
 * zhandle where that watch is registered, whose own event has not come:
 * that server read after every change committed before the sync was sent
 * (the leader answers a sync behind the COMMITs it sent:
 * Leader.processSync), the creation among them, and one session's server
 * sends a change's event before the replies of the reads it serves after
 * that change (WatchManager.triggerWatch, then the reply).  So the
 * creation did not fire the watch - its read saw the node deleted again
 * after it - and its registration is live: the record is armed again, as
 * it was, and its own event, for a later creation, is delivered, not
 * swallowed (routed seed 47962: pair 0's exists, in flight across the
 * handle's create and delete, got the older creation's CREATED, which
 * consumed the pair's later record; that record's event for the next
 * creation was swallowed).  Only with the watch surely still on its
 * server: no removal of the path sent there since it was consumed, nor
 * in flight then (zkr__watch_outlive_drop_locked, removing), and the
 * connection kept since the record was armed (no session event of zh:
 * armed_conn) - a server drops a lost connection's watches
 * (DataTree.removeCnxn), and the reconnection sets an exists watch on a
 * missing node again silently (DataTree.setWatches), so a creation and
 * deletion meanwhile fire nothing there, and the change fired the
 * registration all the same in the application's eyes (--io-loss 5 seed
 * 1906 before the rule was kept to the pair's own records).  One whose
 * copy of the change still waits its turn (fire) is left as it is.
 * Under watch_mu. */
static void outlived_locked(zkr_t *z, const zkr__op_t *op) {
  for (zkr__watch_t *w = zkr__watch_first(z); w && z->watch_outlive; w = zkr__watch_next(w))
    if (w->outlive_seq && w->outlive_seq < op->read_seq && w->zh == op->zh &&
        w->state == ZKR__W_CONSUMED && !w->fire && !w->swallow &&
        atomic_load(&z->members[w->member].conn_events) == w->armed_conn)
      zkr__watch_set_state_locked(z, w, ZKR__W_ARMED);
}

/* Completion's share (zkr__completion_*): the watch the read set is armed
 * (its read succeeded, or an exists found no node) or discarded; one that
 * was armed before is the same registration, or a new one if it fired
 * meanwhile. */
void zkr__watch_op_done(zkr__op_t *op, int rc, const struct Stat *stat) {
  if (op->sync_held && op->read_seq && op->zh && atomic_load(&op->z->watch_outlive)) {
    zkr_t *z = op->z;
    pthread_mutex_lock(&z->watch_mu);
    if (z->watch_outlive) outlived_locked(z, op);
    pthread_mutex_unlock(&z->watch_mu);
  }
  if (!op->watch) return;
  int armed = (rc == ZOK || (op->type == ZKR__OP_EXISTS && rc == ZNONODE)) && !op->watch_unbound;
  const struct Stat *st = rc == ZOK ? stat : NULL;
  zkr__watch_t *w = op->watch;
  op->watch_id = armed ? w->id : 0;
  if (armed) make_proved_before(op->z, op, w, rc, st);
  if (zkr__op_has(op, ZKR__OP_F_WATCH_REUSED)) {
    op->watch_merged = zkr__watch_reuse_done(w, 1, armed, op->member, op->zh, st, op->read_seq);
  } else {
    /* A remove_all asked while this read was in flight removes what it
     * set (the route layer's cover, through the hooks), and completes
     * after this read is handed on (zkr__completion_hand_on, or the op's
     * free). */
    int covered = zkr__hooks_cover_held(op->z, w);
    if (armed) zkr__watch_armed(w, op->member, op->zh, st, op->read_seq, op->sync_held);
    else zkr__watch_discard(w);
    if (covered) {
      zkr__hooks_covered(op->z, w);
      op->cover_w = w;
    }
  }
  op->watch = NULL;
}

void zkr__watch_read_handed_on(zkr_t *z, uint64_t id, uint64_t read_seq) {
  zkr__watch_t *gone = NULL;
  pthread_mutex_lock(&z->watch_mu);
  zkr__watch_t *w = zkr__watch_by_id_locked(z, id);
  if (w && w->rearm_after && read_seq == w->rearm_read_seq) {
    /* The read that set w again after its event came, handed on before
     * that event (at its hold's bound): w takes its watch, once the
     * event is delivered, as set (rearm_after_locked). */
    w->rearm_handed = 1;
  } else if (w && w->read_pending) {
    w->read_pending = 0;
    /* Its pair is set in the application's eyes now, after the pairs of
     * the reads handed on before: it takes its place in the path's order
     * here, not at the reply (in consistency `session` a later read's
     * reply may come first and wait behind this one).  Not one that took
     * over a record of the pair with no event between: that pair stayed
     * set, in its place. */
    if (!w->took_over && w->state != ZKR__W_FIRED) place_locked(z, w);
    if (w->fire) zkr__watch_release_locked(z, w->path, &gone);
  }
  pthread_mutex_unlock(&z->watch_mu);
  zkr__watch_done(z, gone);
}

void zkr__watch_merged_handed_on(zkr_t *z, uint64_t id) {
  zkr__watch_t *gone = NULL;
  pthread_mutex_lock(&z->watch_mu);
  zkr__watch_t *w = zkr__watch_by_id_locked(z, id);
  if (w && w->merged_pending > 0 && --w->merged_pending == 0 && w->fire)
    zkr__watch_release_locked(z, w->path, &gone);
  pthread_mutex_unlock(&z->watch_mu);
  zkr__watch_done(z, gone);
}

void zkr__watch_armed(zkr__watch_t *w, int member, zhandle_t *zh, const struct Stat *stat,
                      uint64_t read_seq, int synced) {
  zkr_t *z = w->z;
  zkr__watch_t *gone = NULL;
  pthread_mutex_lock(&z->watch_mu);
  zkr__watch_arm_locked(z, w, member, zh, stat, read_seq);
  if (synced) w->synced_seq = read_seq;
  w->read_pending = 1; /* until the read is handed on */
  if (w->supersedes) supersede_locked(z, w, stat, &gone);
  int blip = z->wblip;
  pthread_mutex_unlock(&z->watch_mu);
  /* Before the read is handed on: its reply comes after the CONNECTING,
   * as stock's after its reconnection. */
  if (blip) zkr__hooks_session_update(z);
  zkr__watch_done(z, gone);
}

/* w's read failed: the record it would have superseded stays the
 * registration.  Under watch_mu. */
static void keep_superseded_locked(zkr_t *z, zkr__watch_t *w, zkr__watch_t **gone) {
  zkr__watch_t *old = w->supersedes;
  if (!old) return;
  w->supersedes = NULL;
  if (--old->reuses == 0 && old->state == ZKR__W_FIRED) over_to(z, old, gone);
}

/* The read failed and ZooKeeper did not register the watch. */
void zkr__watch_discard(zkr__watch_t *w) {
  zkr_t *z = w->z;
  zkr__watch_t *gone = NULL;
  pthread_mutex_lock(&z->watch_mu);
  keep_superseded_locked(z, w, &gone);
  over_to(z, w, &gone);
  pthread_mutex_unlock(&z->watch_mu);
  zkr__watch_done(z, gone);
}

void zkr__watch_abandon(zkr__watch_t *w, int member, zhandle_t *zh) {
  zkr_t *z = w->z;
  zkr__watch_t *gone = NULL;
  pthread_mutex_lock(&z->watch_mu);
  keep_superseded_locked(z, w, &gone);
  w->member = member;
  w->zh = zh;
  w->zh_pinned = 1;
  w->fire = 0;
  zkr__watch_set_state_locked(z, w, ZKR__W_REMOVED);
  w->removed_ns = zkr__now_ns();
  pthread_mutex_unlock(&z->watch_mu);
  zkr__watch_done(z, gone);
}

int zkr__watch_reuse_again(zkr__watch_t *w, zhandle_t *zh) {
  zkr_t *z = w->z;
  pthread_mutex_lock(&z->watch_mu);
  int fresh = w->state == ZKR__W_FIRED && w->zh == zh;
  if (fresh) w->again++;
  pthread_mutex_unlock(&z->watch_mu);
  return fresh;
}

int zkr__watch_removal_on(zkr__watch_t *w, zhandle_t *zh) {
  zkr_t *z = w->z;
  pthread_mutex_lock(&z->watch_mu);
  int on = w->removing > 0 && (w->state == ZKR__W_ARMED || w->state == ZKR__W_FIRED) && w->zh == zh;
  pthread_mutex_unlock(&z->watch_mu);
  return on;
}

/* Same registration in ZooKeeper's eyes: its watcher tables are data
 * (get, and exists on a node that exists), exist (exists on a missing
 * node) and child. */
static int same_table(const zkr__watch_t *w, int kind) {
  if (kind == ZKR__WATCH_CHILD || w->kind == ZKR__WATCH_CHILD) return kind == w->kind;
  if (w->kind == ZKR__WATCH_DATA) return 1;
  return w->existed || kind == ZKR__WATCH_EXIST; /* w: an exists watch */
}

/* The registration of the pair (fn, ctx) for path in kind's table, if it
 * is waiting for an event.  Armed on a usable member: returned, counted as
 * one more reuse (the caller's read, which must end with
 * zkr__watch_reuse_done), with *member where it is armed.  Anywhere else
 * (its member reconnecting, its session lost or being re-armed): NULL,
 * and *supersede is it, held (reuses) for the caller's new record - as
 * when pin_ok is NULL or refuses its member (the read must go elsewhere).
 * Linear in the watches of the handle. */
zkr__watch_t *zkr__watch_find(zkr_t *z, int kind, const char *path, watcher_fn fn, void *ctx,
                              int (*pin_ok)(struct zkr *z, int member), int *member,
                              zkr__watch_t **supersede) {
  zkr__watch_t *found = NULL;
  *supersede = NULL;
  pthread_mutex_lock(&z->watch_mu);
  for (zkr__watch_t *w = zkr__watch_path_first(z, path); w && !found; w = zkr__watch_path_next(w))
    if (waiting(w) && !w->removing && same_table(w, kind) && w->fn == fn && w->ctx == ctx)
      found = w;
  /* Its member must be one reads may go to: usable, and one the caller's
   * pin_ok accepts (not behind the handle's epoch: a deposed leader, or a
   * follower of one, would answer the read - and its sync - with old
   * state); no pin_ok: the read must go elsewhere. */
  if (found && (!pin_ok || found->state != ZKR__W_ARMED ||
                !zkr__member_usable(&z->members[found->member]) || !pin_ok(z, found->member))) {
    found->reuses++;
    *supersede = found;
    found = NULL;
  } else if (found) {
    found->reuses++;
    found->rereads++;
    *member = found->member;
  }
  pthread_mutex_unlock(&z->watch_mu);
  return found;
}

/* Whether a read setting w again may register it on zh: only on the
 * zhandle it is bound to.  After that session was replaced the record is
 * re-armed elsewhere, and a second registration would fire twice. */
int zkr__watch_reuse_bound(zkr__watch_t *w, zhandle_t *zh) {
  zkr_t *z = w->z;
  pthread_mutex_lock(&z->watch_mu);
  int bound = w->zh == zh && (w->state == ZKR__W_ARMED || w->state == ZKR__W_FIRED);
  pthread_mutex_unlock(&z->watch_mu);
  return bound;
}

/* A read that set the record w again completed (armed: ZooKeeper
 * registered its watch, on member's zh; stat as it saw the node).  While
 * the record is still armed the two registrations are one (ZooKeeper
 * merges them).  If the watch fired meanwhile, the event came before this
 * read's reply, so the server processed the read after the change and
 * holds a new watch: the record is armed again for it, at the end of the
 * order, as stock inserts a pair set again after it fired. */
int zkr__watch_reuse_done(zkr__watch_t *w, int reread, int armed, int member, zhandle_t *zh,
                          const struct Stat *stat, uint64_t read_seq) {
  zkr_t *z = w->z;
  zkr__watch_t *gone = NULL;
  int merged = 0;
  pthread_mutex_lock(&z->watch_mu);
  w->reuses--;
  if (reread) w->rereads--;
  if (reread && armed && w->zh == zh && own_copy_came(w) && !w->rearm_after) {
    /* Its event came on zh before this answer, and waits its turn: the
     * server read after the change, and holds a new watch for the pair.
     * On stock's one session the event comes first, then this read's
     * completion, which sets the pair again: the record takes the new
     * watch once its event is delivered (rearm_after_locked), and this
     * read, held for that event (read_blocked_locked), does not hold it
     * in turn (zkr__watch_read_held_back_locked).  (The simulator:
     * tests/sim/zkroute-sim --seed 47367 --mode routed.) */
    w->rearm_after = 1;
    w->rearm_existed = stat != NULL;
    if (stat) w->rearm_stat = *stat;
    w->rearm_member = member;
    w->rearm_read_seq = read_seq;
    w->rearm_handed = 0;
    w->rearm_fire = 0;
    w->rearm_gone = 0;
  } else if (w->state == ZKR__W_REMOVED && w->revive && reread && armed && w->zh == zh) {
    /* A remove_all's answer took it while this read was on its way on
     * the same session, sent after the removal (the session answers in
     * order): the server holds the watch the read set, and stock's table
     * the pair its reply put back.  The record is armed again, at the
     * end of the order, as a pair set again after it fired. */
    w->revive = 0;
    w->zh_pinned = 0;
    w->rm_seq = 0;
    w->seq = 0;
    zkr__watch_arm_locked(z, w, member, zh, stat, read_seq);
    w->read_pending = 1;
  } else if (w->state == ZKR__W_CONSUMED && armed && !w->fire && !w->swallow && w->zh == zh) {
    /* Its event was made and delivered (another pair's event came first,
     * or a re-arm's), and the server's own is still to come: that server
     * answered this read before it applied the change, and the watch the
     * read set is the one still registered.  For the application the read
     * set the pair again after the event, so the coming event is its
     * own: the record is armed again, at the end of the order, and the
     * event is delivered, not swallowed. */
    w->seq = 0;
    zkr__watch_arm_locked(z, w, member, zh, stat, read_seq);
    w->read_pending = 1;
  } else if (w->state == ZKR__W_FIRED) {
    if (armed) {
      w->seq = 0;
      zkr__watch_arm_locked(z, w, member, zh, stat, read_seq);
      w->read_pending = 1;
    } else if (w->reuses == 0 && w->again) {
      /* The watch a first answer registered was taken off the client
       * locally (zkr__watch_reuse_again), but zh may have collected an
       * event for it before: w must outlive zh, as an abandoned record. */
      w->zh_pinned = 1;
      zkr__watch_set_state_locked(z, w, ZKR__W_REMOVED);
      w->removed_ns = zkr__now_ns();
    } else if (w->reuses == 0) {
      zkr__watch_unlink_locked(z, w);
      gone = w;
    }
  } else if (armed && w->state == ZKR__W_ARMED && w->zh == zh) {
    /* Still armed: the read's reply came before the event, on the same
     * session, so the server read before the change - and on stock's one
     * session that reply, and its completion, come before the event. */
    if (w->merged_pending++ == 0) {
      w->merged_existed = stat != NULL;
      w->merged_mzxid = stat ? stat->mzxid : 0;
      w->merged_pzxid = stat ? stat->pzxid : 0;
      w->merged_read_seq = read_seq;
    } else if (read_seq < w->merged_read_seq) {
      w->merged_read_seq = read_seq;
    }
    merged = 1;
  }
  pthread_mutex_unlock(&z->watch_mu);
  zkr__watch_done(z, gone);
  return merged;
}

void zkr__watch_trampoline(zhandle_t *zh, int type, int state, const char *path, void *ctx) {
  (void)path;
  (void)state;
  /* A member session's own state change: the virtual session reports
   * what the application must know (zkr__session_*), and a lost session's
   * records are re-armed by the monitor (zkr__rescue_*). */
  if (type == ZOO_SESSION_EVENT) return;
  zkr__watch_t *w = ctx;
  zkr_t *z = w->z;
  zkr__watch_t *gone = NULL;
  pthread_mutex_lock(&z->watch_mu);
  if (w->rearm_after && w->zh == zh && !w->rearm_gone) {
    /* The watch a read set again after w's event came (rearm_after):
     * its event, w's next once the one waiting is delivered. */
    if (!w->rearm_fire) w->rearm_fire = type;
    pthread_mutex_unlock(&z->watch_mu);
    return;
  }
  if (w->zh != zh || w->state == ZKR__W_REMOVED || w->state == ZKR__W_HELD ||
      (w->state == ZKR__W_FIRED && w->again)) {
    pthread_mutex_unlock(&z->watch_mu);
    return; /* a registration the record left behind, removed, fired, or
               taken off while its read goes again */
  }
  if (w->state == ZKR__W_CONSUMED) {
    /* Its event was made here: this one only had to come. */
    if (w->fire) w->swallow = 1;
    else over_to(z, w, &gone);
  } else {
    w->came_tick = ++z->watch_ticks;
    w->came_read_seq = atomic_load(&z->read_seqs);
    zkr__watch_fire_locked(z, w, type, 0, &gone);
  }
  pthread_mutex_unlock(&z->watch_mu);
  zkr__watch_done(z, gone);
}

/* Under watch_mu: a set of path committed with mzxid. */
static void note_set_locked(zkr_t *z, const char *path, int64_t mzxid) {
  if (!path || mzxid <= 0) return;
  for (zkr__watch_t *w = zkr__watch_path_first(z, path); w; w = zkr__watch_path_next(w))
    if (waiting(w) && w->later_set < mzxid) w->later_set = mzxid;
}

/* Under watch_mu: a create of path, sent at sent_ns, was acknowledged on
 * zh. */
static void note_create_locked(zkr_t *z, const char *path, uint64_t sent_ns, zhandle_t *zh) {
  if (!path) return;
  for (zkr__watch_t *w = zkr__watch_path_first(z, path); w; w = zkr__watch_path_next(w))
    if (waiting(w) && w->kind == ZKR__WATCH_EXIST && !w->existed && sent_ns > w->armed_ns) {
      if (!w->created_after) w->created_zh = zh;
      w->created_after = 1;
    }
}

void zkr__watch_note_write(zkr__op_t *op, const struct Stat *stat) {
  zkr_t *z = op->z;
  if (op->type == ZKR__OP_CREATE && !(op->mode & ZOO_SEQUENCE)) {
    /* Sent after the read that armed an exists watch on the missing node
     * was answered, it committed after the state that read saw: the
     * watch's CREATED is due, whatever a read that may be older shows
     * (make_late_events_locked; sim seed 49379). */
    pthread_mutex_lock(&z->watch_mu);
    note_create_locked(z, op->path, op->start_ns, op->zh);
    pthread_mutex_unlock(&z->watch_mu);
    return;
  }
  if (op->type != ZKR__OP_SET && op->type != ZKR__OP_MULTI) return;
  pthread_mutex_lock(&z->watch_mu);
  if (op->type == ZKR__OP_SET && stat) note_set_locked(z, op->path, stat->mzxid);
  for (int i = 0;
       op->type == ZKR__OP_MULTI && op->multi_ops && op->multi_results && i < op->multi_count;
       i++) {
    const zoo_op_result_t *res = &op->multi_results[i];
    const zoo_op_t *o = &op->multi_ops[i];
    if (o->type == ZOO_SETDATA_OP && res->err == ZOK && res->stat)
      note_set_locked(z, o->set_op.path, res->stat->mzxid);
    /* A multi's create is a creation as a plain one is, even when a
     * later op of the multi deleted the node again (sim seeds 2730 and
     * 5511 --io-loss 5). */
    if (o->type == ZOO_CREATE_OP && res->err == ZOK && !(o->create_op.flags & ZOO_SEQUENCE))
      note_create_locked(z, o->create_op.path, op->start_ns, op->zh);
  }
  pthread_mutex_unlock(&z->watch_mu);
}

/* ---- the watchers a session event goes to ---- */

typedef struct {
  uintptr_t fn, ctx;
} pair_t;

static int pair_cmp(const void *a, const void *b) {
  const pair_t *x = a, *y = b;
  if (x->fn != y->fn) return x->fn < y->fn ? -1 : 1;
  return x->ctx < y->ctx ? -1 : x->ctx > y->ctx;
}

/* Registered from the application's point of view: its read succeeded
 * and its event has not been delivered - also when that event came (or
 * another member's copy of the change gave it one: CONSUMED) and waits
 * its turn.  A session event delivered before it must reach the pair: on
 * stock's one session the application would have seen the pair's event
 * first.  (A removed record's event is dropped: fire is 0.) */
static int registered(const zkr__watch_t *w) {
  return w->fn && (waiting(w) || w->state == ZKR__W_HELD || w->fire);
}

/* Whether the application has seen w's pair set: stock registers a
 * watch when its read's completion is processed, so a record counts once
 * the read that armed it is handed on - or, when that read only set the
 * pair again (it superseded a record of the pair with no event between:
 * took_over), once the superseded record's first read is.  (A superseded
 * record gone before that: as set.)  Under watch_mu. */
static int set_in_app_eyes_locked(zkr_t *z, const zkr__watch_t *w) {
  if (!w->read_pending) return 1;
  if (!w->took_over) return 0;
  if (!w->took_over_of) return 1;
  const zkr__watch_t *first = zkr__watch_by_id_locked(z, w->took_over_of);
  return !first || !first->read_pending;
}

int zkr__watch_removal_unseen_locked(const zkr_t *z, const zkr__watch_t *w) {
  return w->state == ZKR__W_REMOVED &&
         (w->rm_settling ||
          (w->rm_seq && w->rm_seq >= atomic_load(&z->ord_head) && w->rm_seq > z->rm_queued_seq));
}

/* A session event to the distinct (watcher, context) pairs of registered
 * per-path watches, then to the global watcher (gfn, gctx), queued under
 * watch_mu: what decides the pairs - a removal the application has seen
 * complete, whose completion is queued under watch_mu too (complete_call
 * in watch_remove.c) - cannot change between the choice and the queuing,
 * so the event reaches a removed pair only if it comes before the
 * removal's completion (sim seed 1954 --consistency session: pair 5's
 * CONNECTED came after its remove_all's completion).  Out of memory for
 * the list, only the global watcher gets the event. */
void zkr__watch_session_deliver(zkr_t *z, int state, watcher_fn gfn, void *gctx) {
  pthread_mutex_lock(&z->watch_mu);
  size_t k = 0;
  for (zkr__watch_t *w = zkr__watch_first(z); w; w = zkr__watch_next(w)) k++;
  pair_t *v = k ? malloc(k * sizeof *v) : NULL;
  size_t n = 0;
  /* A record whose pair the application has not seen set gets no session
   * event (set_in_app_eyes_locked), nor does one it has seen removed; a
   * removed one whose removal it has not seen complete does. */
  for (zkr__watch_t *w = zkr__watch_first(z); v && w; w = zkr__watch_next(w))
    if (w->fn && (registered(w) || zkr__watch_removal_unseen_locked(z, w)) &&
        set_in_app_eyes_locked(z, w))
      v[n++] = (pair_t){(uintptr_t)w->fn, (uintptr_t)w->ctx};
  if (n) qsort(v, n, sizeof *v, pair_cmp);
  for (size_t i = 0; i < n; i++) {
    if (i > 0 && !pair_cmp(&v[i], &v[i - 1])) continue;
    watcher_fn fn = (watcher_fn)v[i].fn;
    void *ctx = (void *)v[i].ctx;
    if (fn != gfn || ctx != gctx) zkr__deliver_watch(z, fn, ctx, ZOO_SESSION_EVENT, state, "");
  }
  zkr__deliver_watch(z, gfn, gctx, ZOO_SESSION_EVENT, state, "");
  pthread_mutex_unlock(&z->watch_mu);
  free(v);
}

void zkr__watch_stats(zkr_t *z, zkr_stats_t *s) {
  pthread_mutex_lock(&z->watch_mu);
  for (zkr__watch_t *w = zkr__watch_first(z); w; w = zkr__watch_next(w))
    s->watches += registered(w);
  s->watches_lost = z->watch_lost;
  pthread_mutex_unlock(&z->watch_mu);
  s->watch_rearms = z->watch_rearms;
  s->watch_missed_events = z->watch_missed_events;
}

void zkr__watch_free_all(zkr_t *z) {
  pthread_mutex_lock(&z->watch_mu);
  for (zkr__watch_t *w = zkr__watch_first(z), *n; w; w = n) {
    n = zkr__watch_next(w);
    zkr__watch_free_record(w);
  }
  z->watch_q = (zkr__queue_t){0};
  free(z->watch_paths);
  free(z->watch_by_id);
  z->watch_paths = z->watch_by_id = NULL;
  z->watch_nbuckets = z->watch_count = 0;
  pthread_mutex_unlock(&z->watch_mu);
}

int zkr__watch_unlive(zkr_t *z) {
  int unlive = 0;
  pthread_mutex_lock(&z->watch_mu);
  for (zkr__watch_t *w = zkr__watch_first(z); w && !unlive; w = zkr__watch_next(w)) {
    /* One the application is removing needs no events any more. */
    if (w->removing) continue;
    if (w->state == ZKR__W_LOST || w->state == ZKR__W_REARMING) unlive = 1;
    else if (w->state == ZKR__W_ARMED && w->member >= 0)
      unlive = !zkr__member_connected(&z->members[w->member]);
  }
  pthread_mutex_unlock(&z->watch_mu);
  return unlive;
}
