/* The delivery thread: every application callback of one handle -
 * completions of asynchronous calls, watch events, session events - runs
 * on one thread of the handle's own, one at a time, in the order zkroute
 * queued them (DESIGN.md section 4).  As with one stock session, whose
 * single completion thread runs them all, programs may share state
 * between callbacks without locks; unlike a zkroute that ran callbacks on
 * its member sessions' completion threads, a callback may block - on the
 * application's own mutex, or in a blocking zkr_ call, whose reply is
 * handed to its waiter by a member's thread (waiter_wait) - without stopping
 * any ZooKeeper thread: nothing zkroute needs to make progress ever waits
 * for a callback.
 *
 * The replies ZooKeeper gives a completion are valid only during it, so
 * what a callback receives is copied into the event (one allocation for
 * the event and its bytes, plus the vectors).  The queue is unbounded: a
 * callback that blocks for long holds up later callbacks, not zkroute. */
#include <stdlib.h>
#include <string.h>

#include "core/deliver.h"
#include "core/handle.h"
#include "core/runtime.h"
#include "core/watch.h"

_Thread_local zkr_t *zkr__delivering;

enum { EV_RESULT, EV_WATCH };

typedef struct event {
  struct event *next;
  int kind;
  /* EV_RESULT */
  zkr__cb_shape_t shape;
  zkr__cb_t cb;
  const void *data;
  int rc;
  int has_value; /* value is a copy (NULL in ZooKeeper's reply otherwise) */
  int value_len;
  int has_stat;
  struct Stat stat;
  int has_strings;
  struct String_vector strings;
  int has_acl;
  struct ACL_vector acl;
  /* EV_WATCH (session events too) */
  watcher_fn wfn;
  void *wctx;
  int type, state;
  char bytes[]; /* value (result) or path (watch), copied */
} event_t;

struct zkr__deliver {
  pthread_mutex_t mu;
  pthread_cond_t cv;
  pthread_t th;
  int started, stop;
  int draining; /* stepped runtime: a drain is running callbacks */
  event_t *head, *tail;
  uint64_t queued, ran;
};

static void push(zkr_t *z, event_t *e) {
  struct zkr__deliver *d = z->dl;
  e->next = NULL;
  pthread_mutex_lock(&d->mu);
  if (d->tail) d->tail->next = e;
  else d->head = e;
  d->tail = e;
  d->queued++;
  pthread_cond_signal(&d->cv);
  pthread_mutex_unlock(&d->mu);
}

static void free_event(event_t *e);

/* Calls a completion of the given shape with r, on this thread: the
 * application's (run), or zkroute's own waiters' (zkr__completion_hand_on). */
void zkr__deliver_call(zkr__cb_shape_t shape, zkr__cb_t cb, const void *data,
                       const zkr__result_t *r) {
  int rc = r->rc;
  const struct Stat *st = rc == ZOK ? r->stat : NULL;
  switch (shape) {
  case ZKR__CB_VOID:
    if (cb.v) cb.v(rc, data);
    break;
  case ZKR__CB_STAT:
    if (cb.stat) cb.stat(rc, st, data);
    break;
  case ZKR__CB_DATA:
    if (cb.data) cb.data(rc, r->value, r->value_len, st, data);
    break;
  case ZKR__CB_STRINGS:
    if (cb.strings) cb.strings(rc, r->strings, data);
    break;
  case ZKR__CB_STRINGS_STAT:
    if (cb.strings_stat) cb.strings_stat(rc, r->strings, st, data);
    break;
  case ZKR__CB_STRING:
    if (cb.string) cb.string(rc, r->value, data);
    break;
  case ZKR__CB_STRING_STAT:
    if (cb.string_stat) cb.string_stat(rc, r->value, st, data);
    break;
  case ZKR__CB_ACL:
    /* ZooKeeper's acl completion takes non-const pointers. */
    if (cb.acl) cb.acl(rc, (struct ACL_vector *)r->acl, (struct Stat *)st, data);
    break;
  }
}

static void run(zkr_t *z, event_t *e) {
  if (e->kind == EV_WATCH) {
    /* A watch event of a handle being closed is dropped, as a stock
     * zookeeper_close drops them (its watchers are freed uncalled). */
    if (e->wfn && !z->closing) e->wfn(zkr_as_zh(z), e->type, e->state, e->bytes, e->wctx);
    return;
  }
  zkr__result_t r = zkr__deliver_reply_view((struct zkr__reply *)e);
  zkr__deliver_call(e->shape, e->cb, e->data, &r);
}

static void free_event(event_t *e) {
  if (e->has_strings) deallocate_String_vector(&e->strings);
  if (e->has_acl) zkr__op_acl_free(&e->acl);
  free(e);
}

static void *deliver_main(void *arg) {
  zkr_t *z = arg;
  struct zkr__deliver *d = z->dl;
  zkr__delivering = z;
  pthread_mutex_lock(&d->mu);
  for (;;) {
    while (!d->head && !d->stop) pthread_cond_wait(&d->cv, &d->mu);
    if (!d->head) break; /* stopped, and everything queued ran */
    event_t *batch = d->head;
    d->head = d->tail = NULL;
    pthread_mutex_unlock(&d->mu);
    while (batch) {
      event_t *n = batch->next;
      run(z, batch);
      free_event(batch);
      batch = n;
    }
    pthread_mutex_lock(&d->mu);
  }
  pthread_mutex_unlock(&d->mu);
  return NULL;
}

int zkr__deliver_start(zkr_t *z) {
  struct zkr__deliver *d = calloc(1, sizeof *d);
  if (!d) return ZKR_ENOMEM;
  pthread_mutex_init(&d->mu, NULL);
  pthread_cond_init(&d->cv, NULL);
  z->dl = d;
  if (zkr__rt->stepped) return ZOK; /* zkr__deliver_drain runs them */
  if (pthread_create(&d->th, NULL, deliver_main, z) != 0) return ZKR_ETHREAD;
  d->started = 1;
  return ZOK;
}

/* A stepped runtime's delivery (runtime.h): runs what is queued, and what
 * those callbacks queue, on the caller's thread, one at a time.  Not
 * re-entered: a callback that blocks runs the world meanwhile, and the
 * callbacks queued behind it wait for it, as on the delivery thread. */
void zkr__deliver_drain(zkr_t *z) {
  struct zkr__deliver *d = z->dl;
  if (!d || d->started || d->draining) return;
  d->draining = 1;
  zkr_t *outer = zkr__delivering;
  zkr__delivering = z;
  for (;;) {
    pthread_mutex_lock(&d->mu);
    event_t *e = d->head;
    if (e) {
      d->head = e->next;
      if (!d->head) d->tail = NULL;
    }
    pthread_mutex_unlock(&d->mu);
    if (!e) break;
    run(z, e);
    free_event(e);
  }
  zkr__delivering = outer;
  d->draining = 0;
}

/* Runs what is queued, then ends the thread.  Called by the close path
 * once no member session can queue anything; never on the delivery thread
 * itself (zkr_close hands a close from a callback to a thread of its own). */
void zkr__deliver_stop(zkr_t *z) {
  struct zkr__deliver *d = z->dl;
  if (!d) return;
  if (!d->started) {
    zkr__deliver_drain(z);
    return;
  }
  pthread_mutex_lock(&d->mu);
  d->stop = 1;
  pthread_cond_signal(&d->cv);
  pthread_mutex_unlock(&d->mu);
  pthread_join(d->th, NULL);
  d->started = 0;
}

void zkr__deliver_free(zkr_t *z) {
  struct zkr__deliver *d = z->dl;
  if (!d) return;
  for (event_t *e = d->head, *n; e; e = n) {
    n = e->next;
    free_event(e);
  }
  pthread_mutex_destroy(&d->mu);
  pthread_cond_destroy(&d->cv);
  free(d);
  z->dl = NULL;
}

/* ---- queueing ---- */

/* Out of memory for a copy: the completion still comes, once, with the
 * error instead of the reply (never a half-copied one). */
static event_t *result_event(zkr__cb_shape_t shape, const zkr__result_t *r) {
  size_t extra = 0;
  if (r->rc == ZOK && r->value) {
    if (shape == ZKR__CB_DATA) extra = r->value_len > 0 ? (size_t)r->value_len : 0;
    else extra = strlen(r->value) + 1;
  }
  event_t *e = calloc(1, sizeof *e + extra + 1);
  if (!e) return NULL;
  e->kind = EV_RESULT;
  e->shape = shape;
  e->rc = r->rc;
  if (r->rc != ZOK) return e;
  if (r->value) {
    e->has_value = 1;
    e->value_len = shape == ZKR__CB_DATA ? r->value_len : (int)extra - 1;
    if (extra) memcpy(e->bytes, r->value, extra);
  }
  if (r->stat) {
    e->has_stat = 1;
    e->stat = *r->stat;
  }
  int rc = ZOK;
  if (r->strings) {
    e->has_strings = 1;
    rc = zkr__op_strings_copy(&e->strings, r->strings);
  }
  if (rc == ZOK && r->acl) {
    e->has_acl = 1;
    rc = zkr__op_acl_copy(&e->acl, r->acl);
  }
  if (rc != ZOK) {
    if (e->has_strings) deallocate_String_vector(&e->strings);
    if (e->has_acl) zkr__op_acl_free(&e->acl);
    memset(e, 0, sizeof *e);
    e->kind = EV_RESULT;
    e->shape = shape;
    e->rc = ZKR_ENOMEM;
  }
  return e;
}

/* A reply kept beyond its completion (zkr__barrier_* holds one back until the
 * operations before it were handed on): the same copy an event holds.
 * NULL when out of memory. */
struct zkr__reply *zkr__deliver_reply_copy(zkr__cb_shape_t shape, const zkr__result_t *r) {
  return (struct zkr__reply *)result_event(shape, r);
}

/* The kept reply, as a result valid until zkr__deliver_reply_free. */
zkr__result_t zkr__deliver_reply_view(const struct zkr__reply *k) {
  const event_t *e = (const event_t *)k;
  zkr__result_t r = {
      .rc = e->rc,
      .value = e->has_value ? e->bytes : NULL,
      .value_len = e->has_value ? e->value_len : -1,
      .stat = e->has_stat ? &e->stat : NULL,
      .strings = e->has_strings ? &e->strings : NULL,
      .acl = e->has_acl ? &e->acl : NULL,
  };
  return r;
}

void zkr__deliver_reply_free(struct zkr__reply *k) {
  if (k) free_event((event_t *)k);
}

int zkr__deliver_result_queue(zkr_t *z, zkr__cb_shape_t shape, zkr__cb_t cb, const void *data,
                              const zkr__result_t *r) {
  if (!cb.v) return 1;
  event_t *e = result_event(shape, r);
  if (!e) return 0;
  e->cb = cb;
  e->data = data;
  push(z, e);
  return 1;
}

void zkr__deliver_result(zkr_t *z, zkr__cb_shape_t shape, zkr__cb_t cb, const void *data,
                         const zkr__result_t *r) {
  if (!cb.v) return; /* every member of the union is a pointer */
  event_t *e = result_event(shape, r);
  if (!e) {
    /* Not even the event: the application's completion must still run
     * exactly once, so it runs here, with the error, on this thread. */
    zkr__result_t err = {.rc = ZKR_ENOMEM, .value_len = -1};
    zkr__deliver_call(shape, cb, data, &err);
    return;
  }
  e->cb = cb;
  e->data = data;
  push(z, e);
}

void zkr__deliver_watch(zkr_t *z, watcher_fn fn, void *ctx, int type, int state, const char *path) {
  if (!fn) return;
  size_t len = path ? strlen(path) : 0;
  event_t *e = calloc(1, sizeof *e + len + 1);
  if (!e) return; /* an event that cannot be queued is lost: ENOMEM */
  e->kind = EV_WATCH;
  e->wfn = fn;
  e->wctx = ctx;
  e->type = type;
  e->state = state;
  if (len) memcpy(e->bytes, path, len);
  push(z, e);
}

/* A transition of the virtual session: to every per-path watcher the
 * application has registered, once per distinct (watcher, context) pair,
 * then to the global watcher - stock's order and de-duplication (its
 * collectWatchers), with the path "" as stock gives it. */
void zkr__deliver_session(zkr_t *z, int state) {
  pthread_mutex_lock(&z->ctx_mu);
  watcher_fn gfn = z->watcher;
  void *gctx = z->context;
  pthread_mutex_unlock(&z->ctx_mu);
  zkr__watch_session_deliver(z, state, gfn, gctx);
}
