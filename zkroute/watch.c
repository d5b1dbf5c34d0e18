/* Watch registry: every watch the application sets is armed on a member
 * session through a trampoline record, so that the event reaches the
 * application's watcher (on the delivery thread) with the application's
 * handle, and member-session events stay hidden - the virtual session's
 * own events reach every registered watcher instead (session.c).  A
 * record remembers its path, its kind, the zhandle it is armed on and what
 * the node looked like when it was armed; when that session is lost, the
 * record is re-armed elsewhere (watch_rearm.c).  Records live in one list
 * per handle, so close frees those that never fired.
 *
 * A record is only ever freed when no live zhandle can still call its
 * trampoline: when its one event came, when the read that would have set
 * it failed, or at close.  Events from a zhandle the record is no longer
 * bound to are stale and dropped. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "deliver.h"
#include "handle.h"
#include "watch.h"
#include "watch_record.h"

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
  pthread_mutex_lock(&z->watch_mu);
  w->next = z->watch_list;
  if (w->next) w->next->prev = w;
  z->watch_list = w;
  pthread_mutex_unlock(&z->watch_mu);
  return w;
}

void zkr__watch_unlink_locked(zkr_t *z, zkr__watch_t *w) {
  if (w->state == ZKR__W_ARMED) z->members[w->member].watches--;
  if (w->state == ZKR__W_LOST) z->watch_lost--;
  if (w->prev) w->prev->next = w->next;
  else z->watch_list = w->next;
  if (w->next) w->next->prev = w->prev;
}

void zkr__watch_free_record(zkr__watch_t *w) {
  free(w->path);
  free(w);
}

/* The record's watch is over (its event came, or the read that set it
 * failed).  Returns 1 when the caller must free it: it is out of the
 * registry.  A record that reads in flight set again (reuses) stays, as
 * FIRED: each of those reads arms it anew or lets it go when it completes
 * (zkr__watch_reuse_done).  Under watch_mu. */
int zkr__watch_over_locked(zkr_t *z, zkr__watch_t *w) {
  if (w->reuses > 0) {
    if (w->state == ZKR__W_ARMED) z->members[w->member].watches--;
    if (w->state == ZKR__W_LOST) z->watch_lost--;
    w->state = ZKR__W_FIRED;
    return 0;
  }
  zkr__watch_unlink_locked(z, w);
  return 1;
}

static void remember(zkr__watch_t *w, const struct Stat *stat) {
  w->existed = stat != NULL;
  if (stat) {
    w->mzxid = stat->mzxid;
    w->pzxid = stat->pzxid;
  }
}

/* Under watch_mu. */
void zkr__watch_arm_locked(zkr_t *z, zkr__watch_t *w, int member, zhandle_t *zh,
                           const struct Stat *stat) {
  w->member = member;
  w->zh = zh;
  w->state = ZKR__W_ARMED;
  remember(w, stat);
  z->members[member].watches++;
}

/* The read that set the watch succeeded: the watch is live on member's
 * zhandle zh.  stat is the node as that read saw it (NULL: it did not
 * exist). */
/* Completion's share (completion.c): the watch the read set is armed
 * (its read succeeded, or an exists found no node) or discarded; one that
 * was armed before is the same registration, or a new one if it fired
 * meanwhile. */
void zkr__watch_op_done(zkr__op_t *op, int rc, const struct Stat *stat) {
  if (!op->watch) return;
  int armed = (rc == ZOK || (op->type == ZKR__OP_EXISTS && rc == ZNONODE)) && !op->watch_unbound;
  const struct Stat *st = rc == ZOK ? stat : NULL;
  if (op->watch_reused) zkr__watch_reuse_done(op->watch, armed, op->member, op->zh, st);
  else if (armed) zkr__watch_armed(op->watch, op->member, op->zh, st);
  else zkr__watch_discard(op->watch);
  op->watch = NULL;
}

void zkr__watch_armed(zkr__watch_t *w, int member, zhandle_t *zh, const struct Stat *stat) {
  zkr_t *z = w->z;
  pthread_mutex_lock(&z->watch_mu);
  zkr__watch_arm_locked(z, w, member, zh, stat);
  pthread_mutex_unlock(&z->watch_mu);
}

/* The read failed and ZooKeeper did not register the watch. */
void zkr__watch_discard(zkr__watch_t *w) {
  zkr_t *z = w->z;
  pthread_mutex_lock(&z->watch_mu);
  int gone = zkr__watch_over_locked(z, w);
  pthread_mutex_unlock(&z->watch_mu);
  if (gone) zkr__watch_free_record(w);
}

/* Same registration in ZooKeeper's eyes: its watcher tables are data
 * (get, and exists on a node that exists), exist (exists on a missing
 * node) and child. */
static int same_table(const zkr__watch_t *w, int kind) {
  if (kind == ZKR__WATCH_CHILD || w->kind == ZKR__WATCH_CHILD) return kind == w->kind;
  if (w->kind == ZKR__WATCH_DATA) return 1;
  return w->existed || kind == ZKR__WATCH_EXIST; /* w: an exists watch */
}

/* An armed record with the same path, watcher table, watcher and context,
 * or NULL.  Only one whose member is usable: a pinned read must have
 * somewhere to go.  Linear in the watches of the handle.  A record found
 * counts one more reuse (the caller's read, which must end with
 * zkr__watch_reuse_done) and *member is where it is armed. */
zkr__watch_t *zkr__watch_find(zkr_t *z, int kind, const char *path, watcher_fn fn, void *ctx,
                              int *member) {
  zkr__watch_t *found = NULL;
  pthread_mutex_lock(&z->watch_mu);
  for (zkr__watch_t *w = z->watch_list; w && !found; w = w->next)
    if (w->state == ZKR__W_ARMED && !w->removing && same_table(w, kind) && w->fn == fn &&
        w->ctx == ctx && strcmp(w->path, path) == 0 && zkr__member_usable(&z->members[w->member]))
      found = w;
  if (found) {
    found->reuses++;
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
 * holds a new watch: the record is armed again for it. */
void zkr__watch_reuse_done(zkr__watch_t *w, int armed, int member, zhandle_t *zh,
                           const struct Stat *stat) {
  zkr_t *z = w->z;
  int gone = 0;
  pthread_mutex_lock(&z->watch_mu);
  w->reuses--;
  if (w->state == ZKR__W_FIRED) {
    if (armed) zkr__watch_arm_locked(z, w, member, zh, stat);
    else if (w->reuses == 0) {
      zkr__watch_unlink_locked(z, w);
      gone = 1;
    }
  }
  pthread_mutex_unlock(&z->watch_mu);
  if (gone) zkr__watch_free_record(w);
}

/* Queues w's event for the application (under watch_mu: w stays whole). */
void zkr__watch_deliver_locked(zkr__watch_t *w, int type) {
  zkr_t *z = w->z;
  watcher_fn fn = w->fn;
  void *wctx = w->ctx;
  if (!fn) {
    pthread_mutex_lock(&z->ctx_mu);
    fn = z->watcher;
    wctx = z->context;
    pthread_mutex_unlock(&z->ctx_mu);
  }
  if (!z->closing) zkr__deliver_watch(z, fn, wctx, type, ZOO_CONNECTED_STATE, w->path);
}

void zkr__watch_trampoline(zhandle_t *zh, int type, int state, const char *path, void *ctx) {
  (void)path;
  (void)state;
  /* A member session's own state change: the virtual session reports
   * what the application must know (session.c), and a lost session's
   * records are re-armed by the monitor (rescue.c). */
  if (type == ZOO_SESSION_EVENT) return;
  zkr__watch_t *w = ctx;
  zkr_t *z = w->z;
  pthread_mutex_lock(&z->watch_mu);
  if (w->zh != zh || w->state == ZKR__W_REMOVED) {
    pthread_mutex_unlock(&z->watch_mu);
    return; /* a registration the record left behind, or removed */
  }
  /* Data and child watches fire once.  A record whose event was already
   * delivered by a re-arm (consumed) only waited for this to go. */
  if (w->state != ZKR__W_CONSUMED) zkr__watch_deliver_locked(w, type);
  int gone = zkr__watch_over_locked(z, w);
  pthread_mutex_unlock(&z->watch_mu);
  if (gone) zkr__watch_free_record(w);
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
 * and its event has not come (a consumed record's event came, from a
 * re-arm). */
static int registered(const zkr__watch_t *w) {
  return w->fn &&
         (w->state == ZKR__W_ARMED || w->state == ZKR__W_REARMING || w->state == ZKR__W_LOST);
}

/* The distinct (watcher, context) pairs of registered per-path watches
 * (the global watcher's are the global watcher's): fills up to cap of
 * them and returns how many there are. */
int zkr__watch_session_watchers(zkr_t *z, watcher_fn *fns, void **ctxs, int cap) {
  pthread_mutex_lock(&z->watch_mu);
  size_t k = 0;
  for (zkr__watch_t *w = z->watch_list; w; w = w->next) k += registered(w);
  pair_t *v = k ? malloc(k * sizeof *v) : NULL;
  size_t n = 0;
  for (zkr__watch_t *w = z->watch_list; v && w; w = w->next)
    if (registered(w)) v[n++] = (pair_t){(uintptr_t)w->fn, (uintptr_t)w->ctx};
  pthread_mutex_unlock(&z->watch_mu);
  if (!v) return 0;
  qsort(v, n, sizeof *v, pair_cmp);
  int u = 0;
  for (size_t i = 0; i < n; i++) {
    if (i > 0 && !pair_cmp(&v[i], &v[i - 1])) continue;
    if (u < cap) {
      fns[u] = (watcher_fn)v[i].fn;
      ctxs[u] = (void *)v[i].ctx;
    }
    u++;
  }
  free(v);
  return u;
}

void zkr__watch_stats(zkr_t *z, zkr_stats_t *s) {
  pthread_mutex_lock(&z->watch_mu);
  for (zkr__watch_t *w = z->watch_list; w; w = w->next)
    s->watches +=
        w->state == ZKR__W_ARMED || w->state == ZKR__W_REARMING || w->state == ZKR__W_LOST;
  s->watches_lost = z->watch_lost;
  pthread_mutex_unlock(&z->watch_mu);
  s->watch_rearms = z->watch_rearms;
  s->watch_missed_events = z->watch_missed_events;
}

void zkr__watch_free_all(zkr_t *z) {
  pthread_mutex_lock(&z->watch_mu);
  for (zkr__watch_t *w = z->watch_list, *n; w; w = n) {
    n = w->next;
    zkr__watch_free_record(w);
  }
  z->watch_list = NULL;
  pthread_mutex_unlock(&z->watch_mu);
}
