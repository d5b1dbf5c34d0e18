/* Re-arming watches whose session was lost (DESIGN.md section 4).  When a
 * member's zhandle is closed - an expired carrier replaced, a carrier that
 * stayed unreachable while holding watches, the owner re-attached
 * elsewhere, a retired member - the watches it held are gone with it.
 * Each record is set again on a live session: a sync first, pipelined on
 * the same session, so that a lagging server cannot answer from before the
 * loss, then the read that sets the watch.  If the node changed since the
 * watch was set (existence, mzxid, pzxid), the application gets the event
 * it missed, once, and the new registration is kept only to swallow the
 * server's own event.  A re-arm that fails is retried by the monitor until
 * one succeeds or the handle closes: a watch is never dropped silently. */
#include <stdlib.h>
#include <string.h>

#include "handle.h"
#include "policy.h"
#include "watch.h"
#include "watch_record.h"
#include "zkapi.h"

#define RETRY_MS 200

static int changed_event(const zkr__watch_t *w, int rc, const struct Stat *st) {
  int exists = rc == ZOK;
  if (w->existed && !exists) return ZOO_DELETED_EVENT;
  if (!w->existed && exists) return ZOO_CREATED_EVENT;
  if (!exists || !st) return 0;
  if (w->kind == ZKR__WATCH_CHILD) return st->pzxid != w->pzxid ? ZOO_CHILD_EVENT : 0;
  return st->mzxid != w->mzxid ? ZOO_CHANGED_EVENT : 0;
}

/* Under watch_mu. */
static void lose_locked(zkr_t *z, zkr__watch_t *w) {
  if (w->state == ZKR__W_ARMED) /* a re-arm failing again is no new loss */
    zkr__log_event(z, ZOO_LOG_LEVEL_WARN, "watch_lost", w->member, "path=%s reason=session_closed",
                   w->path);
  if (w->state == ZKR__W_ARMED) z->members[w->member].watches--;
  if (w->state != ZKR__W_LOST) z->watch_lost++;
  w->state = ZKR__W_LOST;
  w->zh = NULL;
}

static void rearmed(zkr__watch_t *w, int rc, const struct Stat *st) {
  zkr_t *z = w->z;
  pthread_mutex_lock(&z->watch_mu);
  if (w->state != ZKR__W_REARMING) {
    pthread_mutex_unlock(&z->watch_mu); /* its session was closed meanwhile */
    return;
  }
  int set = rc == ZOK || (w->kind == ZKR__WATCH_EXIST && rc == ZNONODE);
  if (w->removing) {
    /* Removed by the application while this was on its way: whatever it
     * set goes, and nothing is delivered. */
    w->removing = 0;
    if (set) zkr__watch_unregister(z, w, w->member, w->zh, 1);
    zkr__watch_remove_locked(z, w);
    pthread_mutex_unlock(&z->watch_mu);
    return;
  }
  if (rc != ZOK && rc != ZNONODE) {
    /* That session failed too (lost, closing): try again later. */
    lose_locked(z, w);
    pthread_mutex_unlock(&z->watch_mu);
    return;
  }
  int event = changed_event(w, rc, st);
  if (event) {
    zkr__watch_deliver_locked(w, event);
    z->watch_missed_events++;
  }
  int gone = 0;
  if (!set) {
    /* A data or child watch on a node that is gone: no watch was set, and
     * the deletion is the application's event. */
    gone = zkr__watch_over_locked(z, w);
  } else if (event) {
    w->state = ZKR__W_CONSUMED;
  } else {
    w->state = ZKR__W_ARMED;
    z->members[w->member].watches++;
  }
  zkr__log_event(z, ZOO_LOG_LEVEL_INFO, "watch_rearmed", w->member, "path=%s missed_event=%s",
                 w->path,
                 event == ZOO_CREATED_EVENT   ? "created"
                 : event == ZOO_DELETED_EVENT ? "deleted"
                 : event                      ? "changed"
                                              : "none");
  pthread_mutex_unlock(&z->watch_mu);
  if (gone) zkr__watch_free_record(w);
}

static void rearm_stat(int rc, const struct Stat *st, const void *data) {
  rearmed((zkr__watch_t *)data, rc, st);
}

static void rearm_data(int rc, const char *v, int len, const struct Stat *st, const void *data) {
  (void)v;
  (void)len;
  rearmed((zkr__watch_t *)data, rc, st);
}

static void rearm_children(int rc, const struct String_vector *s, const struct Stat *st,
                           const void *data) {
  (void)s;
  rearmed((zkr__watch_t *)data, rc, st);
}

static void sync_done(int rc, const char *value, const void *data) {
  (void)rc;
  (void)value;
  (void)data;
}

/* Sends sync + the read that sets w on a live session other than
 * `exclude`'s.  w is REARMING or LOST; it ends REARMING (sent) or LOST. */
static void send_rearm(zkr_t *z, zkr__watch_t *w, int exclude) {
  int t = zkr__policy_any_member(z, exclude);
  zkr__member_t *m = t >= 0 ? &z->members[t] : NULL;
  int rc = ZINVALIDSTATE;
  if (m) pthread_rwlock_rdlock(&m->zh_lock);
  zhandle_t *zh = m ? m->zh : NULL;
  pthread_mutex_lock(&z->watch_mu);
  if (w->state == ZKR__W_LOST) z->watch_lost--;
  w->state = ZKR__W_REARMING;
  w->member = t;
  w->zh = zh;
  pthread_mutex_unlock(&z->watch_mu);
  if (zh && zkr__zk->zoo_async(zh, w->path, sync_done, NULL) == ZOK) {
    if (w->kind == ZKR__WATCH_DATA)
      rc = zkr__zk->zoo_awget(zh, w->path, zkr__watch_trampoline, w, rearm_data, w);
    else if (w->kind == ZKR__WATCH_CHILD)
      rc = zkr__zk->zoo_awget_children2(zh, w->path, zkr__watch_trampoline, w, rearm_children, w);
    else rc = zkr__zk->zoo_awexists(zh, w->path, zkr__watch_trampoline, w, rearm_stat, w);
  }
  if (m) pthread_rwlock_unlock(&m->zh_lock);
  z->watch_rearms++;
  if (rc != ZOK) {
    pthread_mutex_lock(&z->watch_mu);
    if (w->state == ZKR__W_REARMING && w->zh == zh) lose_locked(z, w);
    pthread_mutex_unlock(&z->watch_mu);
  }
}

/* zhandle old of slot was closed: nothing of it can call back any more.
 * Its armed records are set again elsewhere; re-arms that were on their
 * way through it are lost (their completion was dropped) and retried; a
 * consumed record has nothing left to swallow and goes. */
void zkr__watch_rearm_from(zkr_t *z, int slot, zhandle_t *old) {
  pthread_mutex_lock(&z->watch_mu);
  size_t n = 0, cap = 0;
  for (zkr__watch_t *w = z->watch_list; w; w = w->next) cap++;
  zkr__watch_t **todo = malloc((cap ? cap : 1) * sizeof *todo);
  zkr__watch_t *gone = NULL;
  for (zkr__watch_t *w = z->watch_list, *next; w; w = next) {
    next = w->next;
    if (w->zh != old || w->member != slot) continue;
    if (w->state == ZKR__W_REARMING && w->removing) {
      /* Its re-arm went with the zhandle: the removal is complete. */
      w->removing = 0;
      zkr__watch_remove_locked(z, w);
    } else if (w->state == ZKR__W_REMOVED) {
      /* That zhandle can call it no more: it can go now. */
      w->zh = NULL;
      if (w->reuses == 0) {
        zkr__watch_unlink_locked(z, w);
        w->next = gone;
        gone = w;
      }
    } else if (w->state == ZKR__W_CONSUMED) {
      if (zkr__watch_over_locked(z, w)) {
        w->next = gone;
        gone = w;
      }
    } else if (w->state == ZKR__W_ARMED || w->state == ZKR__W_REARMING) {
      lose_locked(z, w);
      if (todo) todo[n++] = w;
    }
  }
  pthread_mutex_unlock(&z->watch_mu);
  /* Removals sent on old that it will never answer. */
  zkr__watch_remove_dropped(z, old);
  while (gone) {
    zkr__watch_t *nx = gone->next;
    zkr__watch_free_record(gone);
    gone = nx;
  }
  /* Out of memory for the list: they stay LOST, and the monitor's retry
   * picks them up. */
  for (size_t i = 0; i < n; i++) send_rearm(z, todo[i], slot);
  free(todo);
}

/* The monitor's turn: every RETRY_MS, lost records try again. */
void zkr__watch_retry_lost(zkr_t *z, uint64_t now) {
  zkr__watch_removed_gc(z, now);
  if (z->watch_lost <= 0 || now < z->watch_retry_ns) return;
  z->watch_retry_ns = now + (uint64_t)RETRY_MS * 1000000u;
  pthread_mutex_lock(&z->watch_mu);
  size_t n = 0, cap = (size_t)z->watch_lost;
  zkr__watch_t **todo = malloc(cap * sizeof *todo);
  for (zkr__watch_t *w = z->watch_list; todo && w && n < cap; w = w->next)
    if (w->state == ZKR__W_LOST) todo[n++] = w;
  pthread_mutex_unlock(&z->watch_mu);
  for (size_t i = 0; i < n; i++) {
    z->watch_rearm_retries++;
    send_rearm(z, todo[i], -1);
  }
  free(todo);
}
