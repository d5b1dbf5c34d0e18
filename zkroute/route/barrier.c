/* The application's operations in issue order, zkr_async as a barrier
 * (DESIGN.md section 4), and - in consistency `session`, which keeps a
 * stock session's FIFO client order - every completion handed on in issue
 * order.  On one stock session the completion of
 * zoo_async comes after the completions of everything issued before it,
 * because the server answers a session's requests in order.  Behind one
 * zkroute handle those requests run on several sessions, so the order is
 * kept here: every operation the application issued is listed from the
 * moment it is accepted until its completion is handed on, and a
 * barrier's completion is handed on only when nothing before it is still
 * listed - at once if its reply comes last, else by whichever thread hands
 * on the last operation before it.
 *
 * One mutex, order_mu, taken twice per operation; it nests inside the
 * write gate's (zkr__router_* completes parked operations under gate_mu). */
#include <stdlib.h>
#include <string.h>

#include "route/barrier.h"
#include "route/completion.h"
#include "core/deliver.h"
#include "core/handle.h"

static void unlink_locked(zkr_t *z, zkr__op_t *op) {
  zkr__queue_remove(&z->ord_q, &op->ord_link);
  op->app = 0;
}

/* Ready barriers at the head, unlinked, in order: the caller hands them
 * on outside the lock. */
static int ready(const zkr__op_t *op) {
  return (zkr__op_has(op, ZKR__OP_F_BARRIER) && op->b_ready) || op->held;
}

static zkr__op_t *first_locked(const zkr_t *z) { return ZKR__OP_OF(z->ord_q.first, ord_link); }

/* Moves them to *out (its link reused: they are off the order). */
static void pop_ready_locked(zkr_t *z, zkr__queue_t *out) {
  for (zkr__op_t *b; (b = first_locked(z)) && ready(b);) {
    unlink_locked(z, b);
    zkr__queue_push(out, &b->ord_link);
  }
}

static void hand_on_barrier(zkr__op_t *b, int rc, const char *path) {
  zkr__result_t r = {.rc = rc, .value = path, .value_len = -1};
  zkr__completion_hand_on(b, &r); /* b->app is 0: not listed any more */
  zkr__op_free(b);
}

/* A completion held back in issue order: its kept reply (ZKR_ENOMEM when
 * none could be kept), then op goes. */
static void hand_on_held(zkr__op_t *op) {
  zkr__result_t r = {.rc = op->kept_rc ? op->kept_rc : ZKR_ENOMEM, .value_len = -1};
  if (op->kept) r = zkr__deliver_reply_view(op->kept);
  zkr__completion_hand_on(op, &r); /* op->app is 0: not listed any more */
  zkr__deliver_reply_free(op->kept);
  op->kept = NULL;
  zkr__op_free(op);
}

/* Operations held back behind earlier ones.  When the session ended
 * first, they complete with its end, whatever answer they got meanwhile:
 * on a stock session they were queued behind those earlier requests, and
 * stock completes what is pending then with that end (a barrier with ZOK
 * after EXPIRED would say the session still served it). */
static void hand_on_ready(zkr__queue_t *ready) {
  for (zkr__queue_link_t *l; (l = zkr__queue_pop(ready));) {
    zkr__op_t *op = ZKR__OP_OF(l, ord_link);
    int end = zkr__handle_ended_rc(op->z);
    if (end && zkr__op_has(op, ZKR__OP_F_BARRIER)) {
      free(op->b_path);
      op->b_path = NULL;
      hand_on_barrier(op, end, NULL);
    } else if (zkr__op_has(op, ZKR__OP_F_BARRIER)) {
      hand_on_barrier(op, op->b_rc, op->b_path);
    } else {
      if (end) {
        zkr__deliver_reply_free(op->kept);
        op->kept = NULL;
        op->kept_rc = end;
      }
      hand_on_held(op);
    }
  }
}

/* op was accepted: it is issued now. */
void zkr__barrier_add(zkr__op_t *op) {
  zkr_t *z = op->z;
  pthread_mutex_lock(&z->order_mu);
  op->app = 1;
  zkr__queue_push(&z->ord_q, &op->ord_link);
  pthread_mutex_unlock(&z->order_mu);
}

/* op's completion was handed on (or op was refused and will have none):
 * barriers it held up may go. */
void zkr__barrier_done(zkr__op_t *op) {
  zkr_t *z = op->z;
  pthread_mutex_lock(&z->order_mu);
  zkr__queue_t ready = {0};
  if (op->app) {
    int was_head = first_locked(z) == op;
    unlink_locked(z, op);
    if (was_head) pop_ready_locked(z, &ready);
  }
  pthread_mutex_unlock(&z->order_mu);
  hand_on_ready(&ready);
}

void zkr__barrier_cancel(zkr__op_t *op) { zkr__barrier_done(op); }

/* Consistency `session`: the reply of op came (r, already through
 * op_finish).  Returns 0 when op is the oldest operation listed: the
 * caller hands it on now.  Otherwise a copy of r is kept, op belongs to
 * this file from here on, and it is handed on - then freed - by whichever
 * thread hands on the last operation before it; returns 1. */
int zkr__barrier_hold(zkr__op_t *op, const zkr__result_t *r) {
  zkr_t *z = op->z;
  pthread_mutex_lock(&z->order_mu);
  if (!op->app || first_locked(z) == op) {
    pthread_mutex_unlock(&z->order_mu);
    return 0;
  }
  op->kept = zkr__deliver_reply_copy(op->shape, r);
  op->held = 1;
  pthread_mutex_unlock(&z->order_mu);
  return 1;
}

/* The reply of barrier b came (r, already through op_finish).  b is handed
 * on now if nothing before it is listed, else when the last of those is. */
void zkr__barrier_reply(zkr__op_t *b, const zkr__result_t *r) {
  zkr_t *z = b->z;
  pthread_mutex_lock(&z->order_mu);
  if (!b->app || first_locked(z) == b) {
    if (b->app) unlink_locked(z, b);
    zkr__queue_t ready = {0};
    pop_ready_locked(z, &ready);
    pthread_mutex_unlock(&z->order_mu);
    hand_on_barrier(b, r->rc, r->value);
    hand_on_ready(&ready);
    return;
  }
  b->b_rc = r->rc;
  b->b_path = r->value ? strdup(r->value) : NULL;
  if (r->value && !b->b_path) b->b_rc = ZKR_ENOMEM;
  b->b_ready = 1;
  pthread_mutex_unlock(&z->order_mu);
}
