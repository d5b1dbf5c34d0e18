/* Re-arming watches whose session was lost (DESIGN.md section 4).  When a
 * member's zhandle is closed - an expired carrier replaced, a carrier that
 * stayed unreachable while holding watches, the owner re-attached
 * elsewhere, a retired member - the watches it held are gone with it.
 * Each record is set again on a live session: a sync first, pipelined on
 * the same session, so that a lagging server cannot answer from before the
 * loss, then the read that sets the watch.  If the node changed since the
 * watch was set (existence, mzxid, pzxid), the application gets the event
 * it missed, once, in its place in the order of the path's watchers, and
 * the new registration is kept only to swallow the server's own event.  An
 * exists watch on a node still missing gets none, as stock's SetWatches
 * gives none: a node created and deleted again meanwhile leaves no trace
 * to tell it from a sibling's change (docs/decisions.md).  A re-arm that fails is retried by the monitor
 * until one succeeds or the handle closes: a watch is never dropped
 * silently, and one the application removed is never set again. */
#include <stdlib.h>
#include <string.h>

#include "core/handle.h"
#include "core/hooks.h"
#include "core/latency.h"
#include "core/policy.h"
#include "core/watch.h"
#include "core/watch_record.h"
#include "zk/zkapi.h"

#define RETRY_MS 200

/* One re-arm on its way: the record by id (it may be gone when the answer
 * comes) and the zhandle it went to.  Listed on z->rearm_q (under
 * watch_mu) until its answer comes or its zhandle closed without one -
 * libzookeeper_mt's close may drop a completion (docs/robustness.md) - so
 * it is freed either way. */
typedef struct {
  zkr_t *z;
  uint64_t id;
  zhandle_t *zh;
  /* The sync sent before the read (its completion runs first, on the same
   * zhandle), under watch_mu: sync_ran when its completion ran, sync_lost
   * when it failed with its connection (no server answered it), no_read
   * when the read was not sent after it or was answered first (the sync's
   * completion frees the re-arm then, or free_unanswered if the zhandle
   * closed without running it). */
  int sync_ran, sync_lost, no_read;
  zkr__queue_link_t link;
} rearm_t;

/* Frees the re-arms sent on zh (every one when zh is NULL) that were not
 * answered: zh is closed, so none of them will be. */
static void free_unanswered(zkr_t *z, zhandle_t *zh) {
  zkr__queue_t gone = {0};
  pthread_mutex_lock(&z->watch_mu);
  ZKR__QUEUE_FOREACH_SAFE(l, n, &z->rearm_q) {
    if (zh && ZKR__QUEUE_DATA(l, rearm_t, link)->zh != zh) continue;
    zkr__queue_remove(&z->rearm_q, l);
    zkr__queue_push(&gone, l);
  }
  pthread_mutex_unlock(&z->watch_mu);
  for (zkr__queue_link_t *l; (l = zkr__queue_pop(&gone));) free(ZKR__QUEUE_DATA(l, rearm_t, link));
}

void zkr__watch_rearm_free_all(zkr_t *z) { free_unanswered(z, NULL); }

/* Under watch_mu. */
static void lose_locked(zkr_t *z, zkr__watch_t *w) {
  if (w->state == ZKR__W_ARMED) /* a re-arm failing again is no new loss */
    zkr__log_event(z, ZOO_LOG_LEVEL_WARN, "watch_lost", w->member, "path=%s reason=session_closed",
                   w->path);
  zkr__watch_set_state_locked(z, w, ZKR__W_LOST);
  w->zh = NULL;
}

static void send_rearm(zkr_t *z, uint64_t id, int exclude);

/* The re-arm's outcome: rc and st the watched read's answer. */
static void rearmed(rearm_t *a, int rc, const struct Stat *st) {
  zkr_t *z = a->z;
  zkr__watch_t *gone = NULL;
  pthread_mutex_lock(&z->watch_mu);
  zkr__watch_t *w = zkr__watch_by_id_locked(z, a->id);
  if (w && w->zh == a->zh && w->state == ZKR__W_REARMING && !w->removing && a->sync_lost &&
      zkr__latency_server_answered(rc)) {
    /* Its sync failed with the connection, and a server answered the
     * read all the same: libzookeeper_mt sent it on the next connection
     * with no sync before it, so its server may be behind the record (a
     * member catching up) and the answer proves no change.  What it set
     * is taken off the client, and the re-arm goes again behind a new
     * sync (sim seed 475 --io-loss 5: a child watch answered with a
     * pzxid older than its record's got a CHILD event for no change). */
    if (rc == ZOK || (w->kind == ZKR__WATCH_EXIST && rc == ZNONODE))
      zkr__watch_remove_unregister(z, w, w->member, w->zh, 1);
    lose_locked(z, w);
    pthread_mutex_unlock(&z->watch_mu);
    z->watch_rearm_retries++;
    send_rearm(z, a->id, -1);
    return;
  }
  if (!w || w->zh != a->zh || w->state != ZKR__W_REARMING) {
    /* Its session was closed meanwhile, or the pair was set again or
     * another pair's event came (consumed): a consumed record whose re-arm
     * set no watch (failed, or a get or children read of a node gone) has
     * no registration left, and goes once its event was delivered. */
    int none = rc != ZOK && !(w && w->kind == ZKR__WATCH_EXIST && rc == ZNONODE);
    if (w && w->zh == a->zh && w->state == ZKR__W_REMOVED && w->zh_pinned) {
      /* Removed while this was on its way (a removal's ZOK, settle_later):
       * what it set goes, and zh can call the record no more. */
      if (!none) zkr__watch_remove_unregister(z, w, w->member, w->zh, 1);
      w->zh_pinned = 0;
    }
    if (w && w->zh == a->zh && w->state == ZKR__W_CONSUMED && none) {
      if (w->fire) {
        w->swallow = 1; /* nothing left to swallow: over once delivered */
      } else if (zkr__watch_over_locked(z, w)) {
        w->gone_next = gone;
        gone = w;
      }
    }
    pthread_mutex_unlock(&z->watch_mu);
    zkr__watch_done(z, gone);
    return;
  }
  int set = rc == ZOK || (w->kind == ZKR__WATCH_EXIST && rc == ZNONODE);
  if (w->removing) {
    /* Removed by the application while this was on its way: whatever it
     * set goes, and nothing is delivered.  The pair stays the
     * application's until the removal's result: the record is on no
     * server, LOST (not re-armed while removing), and the call's ZOK
     * removes it, an error leaves it to be re-armed (settle_later) - as
     * stock's client drops a pair from its table only at the removal's
     * answer, and a session event before that reaches it (sim seed 523
     * --idle-park 300: removed here, the record missed the owner's
     * CONNECTED).  (The removals that hold it count themselves out of
     * removing when they settle.) */
    if (set) zkr__watch_remove_unregister(z, w, w->member, w->zh, 1);
    zkr__watch_set_state_locked(z, w, ZKR__W_LOST);
    w->zh = NULL;
    pthread_mutex_unlock(&z->watch_mu);
    return;
  }
  if (rc != ZOK && rc != ZNONODE) {
    /* That session failed too (lost, closing): try again later. */
    lose_locked(z, w);
    pthread_mutex_unlock(&z->watch_mu);
    return;
  }
  int event = zkr__watch_missed(w, rc, st);
  if (!event && set && zkr__watch_missed_before_locked(z, w, 0, &gone)) {
    /* The node is as the record remembers it, but a read held for its
     * event saw a change between (created and deleted again, say): that
     * event is made from the read, as at the hold's bound, and the
     * registration this re-arm left is swallowed (consumed). */
    zkr__log_event(z, ZOO_LOG_LEVEL_INFO, "watch_rearmed", w->member,
                   "path=%s missed_event=proved_by_a_held_read", w->path);
    pthread_mutex_unlock(&z->watch_mu);
    zkr__watch_done(z, gone);
    return;
  }
  if (!set) {
    /* A data or child watch on a node that is gone: no watch was set, and
     * the deletion is the application's event. */
    zkr__watch_set_state_locked(z, w, ZKR__W_HELD);
  } else if (event) {
    zkr__watch_set_state_locked(z, w, ZKR__W_CONSUMED);
  } else {
    zkr__watch_set_state_locked(z, w, ZKR__W_ARMED);
  }
  if (event) {
    z->watch_missed_events++;
    zkr__watch_fire_locked(z, w, event, 1, &gone);
  } else if (!set) {
    zkr__watch_t *g = NULL;
    if (zkr__watch_over_locked(z, w)) g = w;
    if (g) g->gone_next = gone, gone = g;
  }
  zkr__log_event(z, ZOO_LOG_LEVEL_INFO, "watch_rearmed", w->member, "path=%s missed_event=%s",
                 w->path,
                 event == ZOO_CREATED_EVENT   ? "created"
                 : event == ZOO_DELETED_EVENT ? "deleted"
                 : event                      ? "changed"
                                              : "none");
  pthread_mutex_unlock(&z->watch_mu);
  zkr__watch_done(z, gone);
}

/* The read's completion.  The sync's completion ran before it (the same
 * zhandle answers in order); if it has not (a fake's order), that one
 * frees the re-arm. */
static void watched_done(rearm_t *a, int rc, const struct Stat *st) {
  zkr_t *z = a->z;
  pthread_mutex_lock(&z->watch_mu);
  int last = a->sync_ran;
  if (last) zkr__queue_remove(&z->rearm_q, &a->link);
  else a->no_read = 1;
  pthread_mutex_unlock(&z->watch_mu);
  rearmed(a, rc, st);
  if (last) free(a);
  /* The last watch set again ends the watch dip (zkr__session_update). */
  if (z->wdip) zkr__hooks_session_update(z);
}

static void rearm_stat(int rc, const struct Stat *st, const void *data) {
  watched_done((rearm_t *)data, rc, st);
}

static void rearm_data(int rc, const char *v, int len, const struct Stat *st, const void *data) {
  (void)v;
  (void)len;
  watched_done((rearm_t *)data, rc, st);
}

static void rearm_children(int rc, const struct String_vector *s, const struct Stat *st,
                           const void *data) {
  (void)s;
  watched_done((rearm_t *)data, rc, st);
}

/* The re-arm's sync: a failed one proves nothing, and one lost with its
 * connection makes the read's answer untrusted (rearmed). */
static void sync_done(int rc, const char *value, const void *data) {
  (void)value;
  rearm_t *a = (rearm_t *)data;
  zkr_t *z = a->z;
  pthread_mutex_lock(&z->watch_mu);
  a->sync_ran = 1;
  a->sync_lost = !zkr__latency_server_answered(rc);
  int free_it = a->no_read;
  if (free_it) zkr__queue_remove(&z->rearm_q, &a->link);
  pthread_mutex_unlock(&z->watch_mu);
  if (free_it) free(a);
}

/* Sends sync + the read that sets w (by id) on a live session other than
 * `exclude`'s; only a LOST record is re-armed - not one removed meanwhile,
 * nor one an application's removal is on its way for (removing: its
 * server removed it, and the call's result decides, zkr__watch_remove_*).
 * It ends REARMING (sent) or LOST. */
static void send_rearm(zkr_t *z, uint64_t id, int exclude) {
  int t = zkr__policy_any_member(z, exclude);
  zkr__member_t *m = t >= 0 ? &z->members[t] : NULL;
  if (m) pthread_rwlock_rdlock(&m->zh_lock);
  zhandle_t *zh = m ? m->zh : NULL;
  pthread_mutex_lock(&z->watch_mu);
  zkr__watch_t *w = zkr__watch_by_id_locked(z, id);
  if (!w || w->state != ZKR__W_LOST || w->removing) {
    pthread_mutex_unlock(&z->watch_mu);
    if (m) pthread_rwlock_unlock(&m->zh_lock);
    return;
  }
  zkr__watch_set_state_locked(z, w, ZKR__W_REARMING);
  w->member = t;
  w->zh = zh;
  size_t len = strlen(w->path);
  char path[len + 1];
  memcpy(path, w->path, len + 1);
  int kind = w->kind;
  pthread_mutex_unlock(&z->watch_mu);
  rearm_t *a = calloc(1, sizeof *a);
  int rc = ZINVALIDSTATE, synced = 0;
  if (a && zh) {
    a->z = z;
    a->id = id;
    a->zh = zh;
    /* Listed first: the answers may come before the calls return. */
    pthread_mutex_lock(&z->watch_mu);
    zkr__queue_push(&z->rearm_q, &a->link);
    pthread_mutex_unlock(&z->watch_mu);
    synced = zkr__zk->zoo_async(zh, path, sync_done, a) == ZOK;
  }
  if (synced) {
    if (kind == ZKR__WATCH_DATA)
      rc = zkr__zk->zoo_awget(zh, path, zkr__watch_trampoline, w, rearm_data, a);
    else if (kind == ZKR__WATCH_CHILD)
      rc = zkr__zkapi_zoo_awget_children2(zh, path, zkr__watch_trampoline, w, rearm_children, a);
    else rc = zkr__zk->zoo_awexists(zh, path, zkr__watch_trampoline, w, rearm_stat, a);
  }
  if (m) pthread_rwlock_unlock(&m->zh_lock);
  z->watch_rearms++;
  if (rc != ZOK) {
    pthread_mutex_lock(&z->watch_mu);
    /* Once its sync was sent, the sync's completion frees it (or
     * free_unanswered, if zh closes without running it). */
    int keep = synced && !a->sync_ran;
    if (keep) a->no_read = 1;
    else if (a && a->z) zkr__queue_remove(&z->rearm_q, &a->link);
    if (!keep) free(a);
    w = zkr__watch_by_id_locked(z, id);
    if (w && w->state == ZKR__W_REARMING && w->zh == zh) lose_locked(z, w);
    pthread_mutex_unlock(&z->watch_mu);
  }
}

/* zhandle old of slot was closed: nothing of it can call back any more.
 * Its armed records are set again elsewhere; re-arms that were on their
 * way through it are lost (their completion was dropped) and retried; a
 * consumed record has nothing left to swallow and goes (once its made
 * event was delivered). */
void zkr__watch_rearm_from(zkr_t *z, int slot, zhandle_t *old) {
  pthread_mutex_lock(&z->watch_mu);
  size_t n = 0, cap = 0;
  for (zkr__watch_t *w = zkr__watch_first(z); w; w = zkr__watch_next(w)) cap++;
  uint64_t *todo = malloc((cap ? cap : 1) * sizeof *todo);
  zkr__watch_t *gone = NULL;
  for (zkr__watch_t *w = zkr__watch_first(z), *next; w; w = next) {
    next = zkr__watch_next(w);
    if (w->zh != old || w->member != slot) continue;
    /* A watch a read set again after its event came, which it takes once
     * that event is delivered: gone with zh (zkr__watch_over_locked makes
     * it LOST then, to be re-armed). */
    if (w->rearm_after) w->rearm_gone = 1;
    if (w->state == ZKR__W_REARMING && w->removing) {
      /* Its re-arm went with the zhandle: on no server, it waits for the
       * removal's result as a lost one (see rearmed). */
      lose_locked(z, w);
    } else if (w->state == ZKR__W_REMOVED) {
      /* That zhandle can call it no more: it can go now - unless the
       * application still holds its pair (its removal's completion not
       * handed on): then the removal GC frees it. */
      w->zh = NULL;
      w->zh_pinned = 0;
      if (w->reuses == 0 && !zkr__watch_removal_unseen_locked(z, w)) {
        zkr__watch_unlink_locked(z, w);
        w->gone_next = gone;
        gone = w;
      }
    } else if (w->state == ZKR__W_CONSUMED) {
      w->zh = NULL;
      if (w->fire) {
        w->swallow = 1; /* nothing left to swallow: over once delivered */
      } else if (zkr__watch_over_locked(z, w)) {
        w->gone_next = gone;
        gone = w;
      }
    } else if (w->state == ZKR__W_ARMED || w->state == ZKR__W_REARMING) {
      lose_locked(z, w);
      if (todo) todo[n++] = w->id;
    }
  }
  pthread_mutex_unlock(&z->watch_mu);
  /* Re-arms and removals sent on old that it will never answer. */
  free_unanswered(z, old);
  zkr__watch_remove_dropped(z, old);
  zkr__watch_done(z, gone);
  /* Out of memory for the list: they stay LOST, and the monitor's retry
   * picks them up. */
  for (size_t i = 0; i < n; i++) send_rearm(z, todo[i], slot);
  free(todo);
}

/* The monitor's turn: every RETRY_MS, lost records try again. */
void zkr__watch_rearm_retry_lost(zkr_t *z, uint64_t now) {
  zkr__watch_remove_gc(z, now);
  if (z->watch_lost <= 0 || now < z->watch_retry_ns) return;
  z->watch_retry_ns = now + (uint64_t)RETRY_MS * 1000000u;
  pthread_mutex_lock(&z->watch_mu);
  size_t n = 0, cap = (size_t)z->watch_lost;
  uint64_t *todo = malloc(cap * sizeof *todo);
  for (zkr__watch_t *w = zkr__watch_first(z); todo && w && n < cap; w = zkr__watch_next(w))
    if (w->state == ZKR__W_LOST && !w->removing) todo[n++] = w->id;
  pthread_mutex_unlock(&z->watch_mu);
  for (size_t i = 0; i < n; i++) {
    z->watch_rearm_retries++;
    send_rearm(z, todo[i], -1);
  }
  free(todo);
}
