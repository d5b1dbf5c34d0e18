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
 * on the last operation before it.  An operation leaves the list only
 * after its completion was handed on: were it unlinked first, a later one
 * whose reply comes meanwhile (or is resumed by the very hand-on, as a
 * read held for the event of a watch an earlier read set) would find itself
 * the oldest and go first.
 *
 * One mutex, order_mu, taken twice per operation; it nests inside the
 * write gate's (zkr__router_* completes parked operations under gate_mu). */
#include <stdlib.h>
#include <string.h>

#include "route/barrier.h"
#include "route/completion.h"
#include "core/deliver.h"
#include "core/handle.h"

static zkr__op_t *first_locked(const zkr_t *z) { return ZKR__OP_OF(z->ord_q.first, ord_link); }

/* op leaves the list: the oldest listed may change. */
static void remove_locked(zkr_t *z, zkr__op_t *op) {
  zkr__queue_remove(&z->ord_q, &op->ord_link);
  zkr__op_t *f = first_locked(z);
  atomic_store(&z->ord_head, f ? f->ord_seq : z->ord_issued + 1);
}

static void unlink_locked(zkr_t *z, zkr__op_t *op) {
  remove_locked(z, op);
  op->app = 0;
}

static int ready(const zkr__op_t *op) {
  return (zkr__op_has(op, ZKR__OP_F_BARRIER) && op->b_ready) || op->held;
}

/* The head when it is ready, else NULL.  Only the thread that made it the
 * head (by unlinking the one before) asks, so each ready operation is
 * handed on by exactly one thread.  It stays listed - at the head - until
 * its completion has been handed on (zkr__barrier_* unlinks it after), so
 * nothing issued after it can find itself the oldest and be handed on
 * first; only app is cleared, which keeps zkr__completion_hand_on from
 * calling zkr__barrier_done for it. */
static zkr__op_t *take_ready_head_locked(zkr_t *z) {
  zkr__op_t *b = first_locked(z);
  if (!b || !ready(b)) return NULL;
  b->app = 0;
  return b;
}

/* Hands on op, a ready operation at the head (take_ready_head_locked): a
 * barrier with its own answer, anything else with its kept reply
 * (ZKR_ENOMEM when none could be kept).  When the session ended first, it
 * completes with that end, whatever answer it got meanwhile: on a stock
 * session it was queued behind the earlier requests, and stock completes
 * what is pending then with that end (a barrier with ZOK after EXPIRED
 * would say the session still served it). */
static void hand_on_one(zkr__op_t *op) {
  int end = zkr__handle_ended_rc(op->z);
  zkr__result_t r = {.value_len = -1};
  if (zkr__op_has(op, ZKR__OP_F_BARRIER)) {
    r.rc = end ? end : op->b_rc;
    r.value = end ? NULL : op->b_path;
    zkr__completion_hand_on(op, &r);
    free(op->b_path);
    op->b_path = NULL;
    return;
  }
  if (end) {
    zkr__deliver_reply_free(op->kept);
    op->kept = NULL;
    op->kept_rc = end;
  }
  r.rc = op->kept_rc ? op->kept_rc : ZKR_ENOMEM;
  if (op->kept) r = zkr__deliver_reply_view(op->kept);
  zkr__completion_hand_on(op, &r);
  zkr__deliver_reply_free(op->kept);
  op->kept = NULL;
}

/* Hands on op (taken by take_ready_head_locked) and then, one at a time,
 * each operation behind it that is ready by then; each leaves the order
 * only after its completion was handed on, and goes. */
static void hand_on_from(zkr__op_t *op) {
  zkr_t *z = op->z;
  while (op) {
    hand_on_one(op);
    pthread_mutex_lock(&z->order_mu);
    remove_locked(z, op);
    zkr__op_t *next = take_ready_head_locked(z);
    pthread_mutex_unlock(&z->order_mu);
    zkr__op_free(op);
    op = next;
  }
}

/* op was accepted: it is issued now. */
void zkr__barrier_add(zkr__op_t *op) {
  zkr_t *z = op->z;
  pthread_mutex_lock(&z->order_mu);
  op->app = 1;
  op->ord_seq = ++z->ord_issued;
  if (zkr__queue_empty(&z->ord_q)) atomic_store(&z->ord_head, op->ord_seq);
  zkr__queue_push(&z->ord_q, &op->ord_link);
  pthread_mutex_unlock(&z->order_mu);
}

/* op's completion was handed on (or op was refused and will have none):
 * the operations it held up may go. */
void zkr__barrier_done(zkr__op_t *op) {
  zkr_t *z = op->z;
  pthread_mutex_lock(&z->order_mu);
  zkr__op_t *next = NULL;
  if (op->app) {
    int was_head = first_locked(z) == op;
    unlink_locked(z, op);
    if (was_head) next = take_ready_head_locked(z);
  }
  pthread_mutex_unlock(&z->order_mu);
  if (next) hand_on_from(next);
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
    /* Listed, it stays at the head while it is handed on (see
     * take_ready_head_locked). */
    int listed = b->app;
    b->app = 0;
    pthread_mutex_unlock(&z->order_mu);
    zkr__completion_hand_on(b, r);
    zkr__op_t *next = NULL;
    if (listed) {
      pthread_mutex_lock(&z->order_mu);
      remove_locked(z, b);
      next = take_ready_head_locked(z);
      pthread_mutex_unlock(&z->order_mu);
    }
    zkr__op_free(b);
    if (next) hand_on_from(next);
    return;
  }
  b->b_rc = r->rc;
  b->b_path = r->value ? strdup(r->value) : NULL;
  if (r->value && !b->b_path) b->b_rc = ZKR_ENOMEM;
  b->b_ready = 1;
  pthread_mutex_unlock(&z->order_mu);
}
