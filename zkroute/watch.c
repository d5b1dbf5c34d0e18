/* Watch registry: every watch the application sets is armed on a member
 * session through a trampoline record, so that the event reaches the
 * application's watcher with the application's handle, and member-session
 * state events stay hidden.  Records live in one list per handle, so close
 * frees those that never fired. */
#include <stdlib.h>

#include "internal.h"

zkr__watch_t *zkr__watch_new(zkr_t *z, watcher_fn fn, void *ctx) {
  zkr__watch_t *w = calloc(1, sizeof *w);
  if (!w) return NULL;
  w->z = z;
  w->fn = fn;
  w->ctx = ctx;
  w->member = -1;
  pthread_mutex_lock(&z->watch_mu);
  w->next = z->watch_list;
  if (w->next) w->next->prev = w;
  z->watch_list = w;
  pthread_mutex_unlock(&z->watch_mu);
  return w;
}

static void unlink_locked(zkr_t *z, zkr__watch_t *w) {
  if (w->prev) w->prev->next = w->next;
  else z->watch_list = w->next;
  if (w->next) w->next->prev = w->prev;
}

/* The read that set the watch succeeded: the watch is live on member. */
void zkr__watch_armed(zkr__watch_t *w, int member) {
  pthread_mutex_lock(&w->z->watch_mu);
  w->member = member;
  w->armed = 1;
  pthread_mutex_unlock(&w->z->watch_mu);
  w->z->members[member].watches++;
}

/* The read failed and ZooKeeper did not register the watch. */
void zkr__watch_discard(zkr__watch_t *w) {
  zkr_t *z = w->z;
  pthread_mutex_lock(&z->watch_mu);
  unlink_locked(z, w);
  pthread_mutex_unlock(&z->watch_mu);
  free(w);
}

void zkr__watch_trampoline(zhandle_t *zh, int type, int state,
                           const char *path, void *ctx) {
  (void)zh;
  zkr__watch_t *w = ctx;
  zkr_t *z = w->z;
  if (type == ZOO_SESSION_EVENT) {
    /* A member session's own state change: the virtual session reports
     * what the application must know (session.c).  An expired or closed
     * session drops its watches, so the record goes too. */
    if (state != ZOO_EXPIRED_SESSION_STATE && state != ZOO_AUTH_FAILED_STATE)
      return;
    pthread_mutex_lock(&z->watch_mu);
    if (w->armed) z->members[w->member].watches--;
    unlink_locked(z, w);
    pthread_mutex_unlock(&z->watch_mu);
    free(w);
    return;
  }
  watcher_fn fn = w->fn;
  void *wctx = w->ctx;
  if (!fn) {
    pthread_mutex_lock(&z->ctx_mu);
    fn = z->watcher;
    wctx = z->context;
    pthread_mutex_unlock(&z->ctx_mu);
  }
  /* Data and child watches fire once: the record is done. */
  pthread_mutex_lock(&z->watch_mu);
  if (w->armed) z->members[w->member].watches--;
  unlink_locked(z, w);
  pthread_mutex_unlock(&z->watch_mu);
  free(w);
  if (fn && !z->closing) {
    zkr__in_callback++;
    fn(zkr_as_zh(z), type, ZOO_CONNECTED_STATE, path, wctx);
    zkr__in_callback--;
  }
}

void zkr__watch_free_all(zkr_t *z) {
  pthread_mutex_lock(&z->watch_mu);
  for (zkr__watch_t *w = z->watch_list, *n; w; w = n) {
    n = w->next;
    free(w);
  }
  z->watch_list = NULL;
  pthread_mutex_unlock(&z->watch_mu);
}
