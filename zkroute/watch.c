/* Watch registry: every watch the application sets is armed on a member
 * session through a trampoline record, so that the event reaches the
 * application's watcher with the application's handle and member-session
 * state events stay hidden.  A record remembers its path, its kind and what
 * the node looked like when it was armed; when the member's session is
 * replaced (a rescue re-attaches it to another server, which forgets the
 * old connection's watches), the registry re-arms the watch on the new
 * session and, if the node changed meanwhile, delivers the event the
 * application would have had.  Records live in one list per handle, so
 * close frees those that never fired. */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

zkr__watch_t *zkr__watch_new(zkr_t *z, watcher_fn fn, void *ctx, int kind,
                             const char *path) {
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

static void unlink_locked(zkr_t *z, zkr__watch_t *w) {
  if (w->state == ZKR__W_ARMED) z->members[w->member].watches--;
  if (w->prev) w->prev->next = w->next;
  else z->watch_list = w->next;
  if (w->next) w->next->prev = w->prev;
}

static void free_record(zkr__watch_t *w) {
  free(w->path);
  free(w);
}

/* The record's watch is over (its event came, or its session is gone).
 * Returns 1 when the caller must free it: it is out of the registry.  A
 * record that reads in flight set again (reuses) stays, as FIRED: each of
 * those reads arms it anew or lets it go when it completes
 * (zkr__watch_reuse_done).  Under watch_mu. */
static int over_locked(zkr_t *z, zkr__watch_t *w) {
  if (w->reuses > 0) {
    if (w->state == ZKR__W_ARMED) z->members[w->member].watches--;
    w->state = ZKR__W_FIRED;
    return 0;
  }
  unlink_locked(z, w);
  return 1;
}

static void drop(zkr__watch_t *w) {
  zkr_t *z = w->z;
  pthread_mutex_lock(&z->watch_mu);
  int gone = over_locked(z, w);
  pthread_mutex_unlock(&z->watch_mu);
  if (gone) free_record(w);
}

static void remember(zkr__watch_t *w, const struct Stat *stat) {
  w->existed = stat != NULL;
  if (stat) {
    w->mzxid = stat->mzxid;
    w->pzxid = stat->pzxid;
  }
}

/* The read that set the watch succeeded: the watch is live on member.
 * stat is the node as that read saw it (NULL: it did not exist). */
void zkr__watch_armed(zkr__watch_t *w, int member, const struct Stat *stat) {
  zkr_t *z = w->z;
  pthread_mutex_lock(&z->watch_mu);
  w->member = member;
  w->state = ZKR__W_ARMED;
  remember(w, stat);
  z->members[member].watches++;
  pthread_mutex_unlock(&z->watch_mu);
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
 * somewhere to go.  Linear in the armed watches of the handle.  A record
 * found counts one more reuse (the caller's read, which must end with
 * zkr__watch_reuse_done) and *member is where it is armed. */
zkr__watch_t *zkr__watch_find(zkr_t *z, int kind, const char *path,
                              watcher_fn fn, void *ctx, int *member) {
  zkr__watch_t *found = NULL;
  pthread_mutex_lock(&z->watch_mu);
  for (zkr__watch_t *w = z->watch_list; w && !found; w = w->next)
    if (w->state == ZKR__W_ARMED && same_table(w, kind) && w->fn == fn &&
        w->ctx == ctx && strcmp(w->path, path) == 0 &&
        !z->members[w->member].keeper && zkr__member_usable(&z->members[w->member]))
      found = w;
  if (found) {
    found->reuses++;
    *member = found->member;
  }
  pthread_mutex_unlock(&z->watch_mu);
  return found;
}

/* A read that set the record w again completed (armed: ZooKeeper
 * registered its watch, on member; stat as it saw the node).  While the
 * record is still armed the two registrations are one (ZooKeeper merges
 * them).  If the watch fired meanwhile, the event came before this read's
 * reply, so the server processed the read after the change and holds a
 * new watch: the record is armed again for it. */
void zkr__watch_reuse_done(zkr__watch_t *w, int armed, int member,
                           const struct Stat *stat) {
  zkr_t *z = w->z;
  int gone = 0;
  pthread_mutex_lock(&z->watch_mu);
  w->reuses--;
  if (w->state == ZKR__W_FIRED) {
    if (armed) {
      w->member = member;
      w->state = ZKR__W_ARMED;
      remember(w, stat);
      z->members[member].watches++;
    } else if (w->reuses == 0) {
      unlink_locked(z, w);
      gone = 1;
    }
  }
  pthread_mutex_unlock(&z->watch_mu);
  if (gone) free_record(w);
}

/* The read failed and ZooKeeper did not register the watch. */
void zkr__watch_discard(zkr__watch_t *w) { drop(w); }

static void deliver(zkr__watch_t *w, int type) {
  zkr_t *z = w->z;
  watcher_fn fn = w->fn;
  void *wctx = w->ctx;
  if (!fn) {
    pthread_mutex_lock(&z->ctx_mu);
    fn = z->watcher;
    wctx = z->context;
    pthread_mutex_unlock(&z->ctx_mu);
  }
  if (fn && !z->closing) {
    zkr__callback_enter(z);
    fn(zkr_as_zh(z), type, ZOO_CONNECTED_STATE, w->path, wctx);
    zkr__callback_leave(z);
  }
}

void zkr__watch_trampoline(zhandle_t *zh, int type, int state,
                           const char *path, void *ctx) {
  (void)zh;
  (void)path;
  zkr__watch_t *w = ctx;
  if (type == ZOO_SESSION_EVENT) {
    /* A member session's own state change: the virtual session reports
     * what the application must know (session.c).  An expired session
     * drops its watches, so the record goes too. */
    if (state == ZOO_EXPIRED_SESSION_STATE || state == ZOO_AUTH_FAILED_STATE)
      drop(w);
    return;
  }
  /* Data and child watches fire once.  A record whose event was already
   * delivered by a re-arm (consumed) only waited for this to go. */
  zkr_t *z = w->z;
  pthread_mutex_lock(&z->watch_mu);
  int consumed = w->state == ZKR__W_CONSUMED;
  int gone = over_locked(z, w);
  if (!gone) w->reuses++; /* kept: held through the delivery below */
  pthread_mutex_unlock(&z->watch_mu);
  if (!consumed) deliver(w, type);
  if (gone) free_record(w);
  else zkr__watch_reuse_done(w, 0, -1, NULL);
}

/* ---- re-arming after a session was replaced ---- */

static int changed_event(const zkr__watch_t *w, int rc, const struct Stat *st) {
  int exists = rc == ZOK;
  if (w->existed && !exists) return ZOO_DELETED_EVENT;
  if (!w->existed && exists) return ZOO_CREATED_EVENT;
  if (!exists) return 0;
  if (w->kind == ZKR__WATCH_CHILD) return st->pzxid != w->pzxid ? ZOO_CHILD_EVENT : 0;
  return st->mzxid != w->mzxid ? ZOO_CHANGED_EVENT : 0;
}

/* Compares the node now with the node at arming.  A change means the
 * application missed an event: it gets it now, once, and the watch the
 * re-arm just set is marked consumed (its own event, if any, is dropped).
 * A watch that could not be re-armed (node gone for a data or child
 * watch) ends with its event. */
static void rearmed(zkr__watch_t *w, int rc, const struct Stat *st) {
  zkr_t *z = w->z;
  int rearm_ok = rc == ZOK || (w->kind == ZKR__WATCH_EXIST && rc == ZNONODE);
  if (rc != ZOK && rc != ZNONODE) {
    /* The new session failed too (closing, lost again): the record waits
     * for the next replacement; close frees it. */
    pthread_mutex_lock(&z->watch_mu);
    w->state = ZKR__W_LOST;
    pthread_mutex_unlock(&z->watch_mu);
    return;
  }
  int event = changed_event(w, rc, st);
  if (!rearm_ok) {
    /* A data or child watch on a node that is gone: no watch is set, the
     * deletion is the application's event. */
    pthread_mutex_lock(&z->watch_mu);
    int gone = over_locked(z, w);
    if (!gone) w->reuses++; /* kept: held through the delivery below */
    pthread_mutex_unlock(&z->watch_mu);
    if (event) deliver(w, event);
    if (gone) free_record(w);
    else zkr__watch_reuse_done(w, 0, -1, NULL);
    return;
  }
  pthread_mutex_lock(&z->watch_mu);
  if (event) {
    w->state = ZKR__W_CONSUMED;
  } else {
    w->state = ZKR__W_ARMED;
    z->members[w->member].watches++;
  }
  pthread_mutex_unlock(&z->watch_mu);
  if (event) deliver(w, event);
}

static void rearm_stat(int rc, const struct Stat *st, const void *data) {
  rearmed((zkr__watch_t *)data, rc, st);
}

static void rearm_data(int rc, const char *v, int len, const struct Stat *st,
                       const void *data) {
  (void)v;
  (void)len;
  rearmed((zkr__watch_t *)data, rc, st);
}

static void rearm_children(int rc, const struct String_vector *s,
                           const struct Stat *st, const void *data) {
  (void)s;
  rearmed((zkr__watch_t *)data, rc, st);
}

/* Re-arms every live watch of member m on its current session.  Called by
 * the monitor after m's session was re-attached elsewhere: the server side
 * of the old connection's watches is gone, and the new zhandle has none. */
void zkr__watch_rearm_member(zkr_t *z, zkr__member_t *m) {
  pthread_mutex_lock(&z->watch_mu);
  size_t n = 0, cap = 0;
  for (zkr__watch_t *w = z->watch_list; w; w = w->next) cap++;
  zkr__watch_t **todo = malloc((cap ? cap : 1) * sizeof *todo);
  for (zkr__watch_t *w = z->watch_list; todo && w; w = w->next) {
    if (w->member != m->index) continue;
    if (w->state != ZKR__W_ARMED && w->state != ZKR__W_LOST) continue;
    if (w->state == ZKR__W_ARMED) m->watches--;
    w->state = ZKR__W_REARMING;
    todo[n++] = w;
  }
  pthread_mutex_unlock(&z->watch_mu);
  if (!todo) return; /* out of memory: they stay as they are */
  pthread_rwlock_rdlock(&m->zh_lock);
  for (size_t i = 0; i < n; i++) {
    zkr__watch_t *w = todo[i];
    int rc = ZINVALIDSTATE;
    if (!m->zh)
      ;
    else if (w->kind == ZKR__WATCH_DATA)
      rc = zkr__zk->awget(m->zh, w->path, zkr__watch_trampoline, w, rearm_data, w);
    else if (w->kind == ZKR__WATCH_CHILD)
      rc = zkr__zk->awget_children2(m->zh, w->path, zkr__watch_trampoline, w,
                                    rearm_children, w);
    else
      rc = zkr__zk->awexists(m->zh, w->path, zkr__watch_trampoline, w, rearm_stat, w);
    if (rc != ZOK) {
      pthread_mutex_lock(&z->watch_mu);
      w->state = ZKR__W_LOST; /* for the next replacement */
      pthread_mutex_unlock(&z->watch_mu);
    }
  }
  pthread_rwlock_unlock(&m->zh_lock);
  free(todo);
}

/* The watches armed on member `from`'s session now live on `to` (the
 * session moved: zkr__member_keep). */
void zkr__watch_move(zkr_t *z, int from, int to) {
  pthread_mutex_lock(&z->watch_mu);
  for (zkr__watch_t *w = z->watch_list; w; w = w->next) {
    if (w->member != from) continue;
    if (w->state == ZKR__W_ARMED) {
      z->members[from].watches--;
      z->members[to].watches++;
    }
    w->member = to;
  }
  pthread_mutex_unlock(&z->watch_mu);
}

void zkr__watch_free_all(zkr_t *z) {
  pthread_mutex_lock(&z->watch_mu);
  for (zkr__watch_t *w = z->watch_list, *n; w; w = n) {
    n = w->next;
    free(w->path);
    free(w);
  }
  z->watch_list = NULL;
  pthread_mutex_unlock(&z->watch_mu);
}
