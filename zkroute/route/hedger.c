/* Hedged reads, applied (DESIGN.md section 7; docs/hedging.md; the pure
 * delay and cap are in zkr__hedge_*).  Owns the hedger: a queue of sent reads
 * that may be hedged, ordered by the time their hedge is due, and one
 * thread that sends the hedge of each read still unanswered at that time.
 *
 * The hedger's turns (zkr__hedger_step) run on the process's ticker's
 * timer thread (zkr__ticker_*), or a stepped runtime's driver.
 *
 * A hedge is a second sync+read of the same path on another member of the
 * read pool, drawn at random (zkr__policy_*), so that a fault that slows the
 * first member's zone is unlikely to slow the second.  The read's two
 * requests race; the first reply wins and runs the application's
 * completion, once; the other reply is discarded when it comes.  "First
 * reply" means the first reply from a server: an error of the client
 * library (connection loss, timeout, closing) while the other request is
 * still pending is held back, and delivered only if the other one fails
 * too.  Both replies are health samples of their member (zkr__completion_*).
 *
 * Lifetime.  The primary op is shared by up to three holders, counted in
 * h_refs under the hedger's mutex: its own request's completion, its entry
 * in the queue (handed to its hedge when one is sent) and its hedge's
 * completion.  The last holder frees it; a hedge op frees itself.
 *
 * Threads: zkr__hedger_sent runs on the thread that dispatched the read,
 * claim and release on ZooKeeper's completion threads, the ticker's
 * timer thread sends hedges.  Lock order: gate_mu (the router dispatches under it) before
 * the hedger's mutex; the hedger never holds its mutex while dispatching,
 * picking a member or calling the application. */
#include <stdlib.h>
#include <string.h>

#include "route/completion.h"
#include "route/dispatch.h"
#include "core/handle.h"
#include "model/hedge.h"
#include "route/hedger.h"
#include "core/latency.h"
#include "core/policy.h"
#include "core/runtime.h"
#include "core/ticker.h"

struct zkr__hedger {
  pthread_mutex_t mu;
  int stop;
  zkr__hedge_cfg_t cfg;
  /* One per member slot, made at the member's first sample: a handle has
   * slots for 64 members, most never filled, and a fleet of idle handles
   * would pay a kilobyte each for every one. */
  zkr__hedge_window_t **win;
  double *marks;   /* each window's mark */
  double delay_ms; /* the hedge delay now */
  zkr__hedge_budget_t budget;
  zkr__hedge_yield_t yield; /* what the last hedges earned */
  zkr__queue_t q;           /* by hedge_at_ns */
  uint64_t eligible, sent, won, capped, no_member, discarded;
};

/* ---- the queue (under mu) ---- */

/* Inserted from the tail: the delay changes slowly, so a new entry almost
 * always goes last. */
static void enqueue(struct zkr__hedger *h, zkr__op_t *op) {
  zkr__queue_link_t *after = h->q.last;
  while (after && ZKR__OP_OF(after, hq_link)->hedge_at_ns > op->hedge_at_ns) after = after->prev;
  zkr__queue_insert_after(&h->q, after, &op->hq_link);
  op->h_flags |= ZKR__OP_H_QUEUED;
}

static void dequeue(struct zkr__hedger *h, zkr__op_t *op) {
  zkr__queue_remove(&h->q, &op->hq_link);
  op->h_flags &= ~ZKR__OP_H_QUEUED;
}

/* ---- the hedger's turn ---- */

/* Drops one holder of p (under mu); returns 1 when it was the last. */
static int unref(zkr__op_t *p) { return --p->h_refs == 0; }

/* Sends the hedge of every queued read whose hedge is due (under mu, on
 * entry and on return); returns when the next one is due, UINT64_MAX when
 * none is queued. */
static uint64_t send_due_locked(zkr_t *z, struct zkr__hedger *h) {
  for (;;) {
    zkr__op_t *p = ZKR__OP_OF(h->q.first, hq_link);
    if (h->stop || !p) return UINT64_MAX;
    if (p->hedge_at_ns > zkr__now_ns()) return p->hedge_at_ns;
    /* The queue's hold on p is now this thread's. */
    dequeue(h, p);
    pthread_mutex_unlock(&h->mu);
    int target = zkr__policy_hedge_member(z, p->member);
    zkr__op_t *s = target >= 0 ? zkr__op_new(z, p->type, p->path) : NULL;
    pthread_mutex_lock(&h->mu);
    int drop = 1;
    if ((p->h_flags & ZKR__OP_H_DELIVERED) || p->h_attempts == 0) {
      /* answered while the target was picked */
    } else if (target < 0) {
      h->no_member++;
    } else if (s && !zkr__hedge_budget_take(&h->budget)) {
      h->capped++;
    } else if (s) {
      drop = 0;
    }
    if (drop) {
      int last = unref(p);
      pthread_mutex_unlock(&h->mu);
      zkr__op_free(s);
      if (last) zkr__op_free(p);
      pthread_mutex_lock(&h->mu);
      continue;
    }
    zkr__op_set(s, ZKR__OP_F_HEDGE, 1);
    s->primary = p;
    p->h_attempts++;
    h->sent++;
    pthread_mutex_unlock(&h->mu);
    int rc = zkr__dispatch(s, &z->members[target]);
    pthread_mutex_lock(&h->mu);
    if (rc == ZOK) continue;
    /* Not sent: its completion will not run.  If the first request's
     * error was held back for it, that error is the read's outcome. */
    h->sent--;
    p->h_attempts--;
    int deliver = p->h_attempts == 0 && !(p->h_flags & ZKR__OP_H_DELIVERED);
    if (deliver) p->h_flags |= ZKR__OP_H_DELIVERED;
    int drc = p->h_deferred_rc;
    pthread_mutex_unlock(&h->mu);
    zkr__op_free(s);
    /* The queue entry's hold keeps p alive through the callback: the
     * first request's reply may be releasing its own hold meanwhile. */
    if (deliver) zkr__completion_call_user_error(p, drc);
    pthread_mutex_lock(&h->mu);
    if (unref(p)) {
      pthread_mutex_unlock(&h->mu);
      zkr__op_free(p);
      pthread_mutex_lock(&h->mu);
    }
  }
}

/* One turn: the hedges due now, and when the next one is due (the
 * ticker's timer thread, or a stepped runtime's driver). */
uint64_t zkr__hedger_step(zkr_t *z) {
  struct zkr__hedger *h = z->hedger;
  if (!h) return UINT64_MAX;
  pthread_mutex_lock(&h->mu);
  uint64_t next = send_due_locked(z, h);
  pthread_mutex_unlock(&h->mu);
  return next;
}

/* ---- life ---- */

int zkr__hedger_new(zkr_t *z) {
  z->hedger = NULL;
  if (z->opts.hedge < 0 || z->opts.policy != ZKR_POLICY_HYBRID) return ZOK;
  struct zkr__hedger *h = calloc(1, sizeof *h);
  if (!h) return ZKR_ENOMEM;
  h->cfg.floor_ms = z->opts.hedge_floor_ms;
  h->cfg.percentile = z->opts.hedge_percentile;
  h->cfg.max_pct = z->opts.hedge_max_pct;
  h->cfg.burst = z->opts.hedge_burst;
  /* One per member slot: membership (zkr__membership_*) may fill slots up to
   * cap while the handle lives. */
  h->win = calloc(z->cap, sizeof *h->win);
  h->marks = calloc(z->cap, sizeof *h->marks);
  if (!h->win || !h->marks) {
    free(h->win);
    free(h->marks);
    free(h);
    return ZKR_ENOMEM;
  }
  for (size_t i = 0; i < z->cap; i++) h->marks[i] = -1;
  h->delay_ms = zkr__hedge_delay(&h->cfg, h->marks, (unsigned)z->n);
  pthread_mutex_init(&h->mu, NULL);
  z->hedger = h;
  return ZOK;
}

/* Reads still queued keep their entry: their own completion (ZCLOSING at
 * the latest) removes it.  The handle is off the ticker by now. */
void zkr__hedger_stop(zkr_t *z) {
  struct zkr__hedger *h = z->hedger;
  if (!h) return;
  pthread_mutex_lock(&h->mu);
  h->stop = 1;
  pthread_mutex_unlock(&h->mu);
}

void zkr__hedger_free(zkr_t *z) {
  struct zkr__hedger *h = z->hedger;
  if (!h) return;
  pthread_mutex_destroy(&h->mu);
  for (size_t i = 0; i < z->cap; i++) free(h->win[i]);
  free(h->win);
  free(h->marks);
  free(h);
  z->hedger = NULL;
}

/* ---- the read's side ---- */

/* Only reads the policy spreads over the read pool, without a watch (a
 * watch armed twice would fire twice, on two sessions) and without an
 * ordering duty (a read that follows an in-flight write runs on the write
 * session, where FIFO order is the point).  Writes never: ZooKeeper does
 * not deduplicate them.  Nor while a read selector is installed.  A multi of checks is not hedged either: both
 * requests would write the caller's one results array. */
int zkr__hedger_eligible(const zkr__op_t *op) {
  if (!op->z->hedger || zkr__op_has(op, ZKR__OP_F_WRITE) || op->ordered || op->gated ||
      op->pin >= 0 || op->watch || zkr__op_has(op, ZKR__OP_F_PROBE) ||
      zkr__op_has(op, ZKR__OP_F_HEDGE))
    return 0;
  /* Session consistency reads stick to one member: a reply from another
   * could run ahead of the next read there (monotonic reads). */
  if (op->z->opts.consistency == ZKR_CONSISTENCY_SESSION) return 0;
  /* A read selector decides where reads go (a zone, a member): a hedge to a
   * random pool member would overrule it. */
  if (atomic_load(&op->z->sel_on)) return 0;
  switch (op->type) {
  case ZKR__OP_EXISTS:
  case ZKR__OP_GET:
  case ZKR__OP_GET_CHILDREN:
  case ZKR__OP_GET_CHILDREN2:
  case ZKR__OP_GET_ACL: return 1;
  default: return 0;
  }
}

/* The primary was handed to ZooKeeper (h_refs 2: its reply and the queue
 * entry it gets here).  Its completion may already have run. */
void zkr__hedger_sent(zkr__op_t *op) {
  /* Read while this entry's hold keeps op whole: once it is queued and
   * the lock dropped, its reply may dequeue and free it. */
  zkr_t *z = op->z;
  struct zkr__hedger *h = z->hedger;
  int last = 0, first = 0;
  pthread_mutex_lock(&h->mu);
  h->eligible++;
  zkr__hedge_budget_read(&h->budget, &h->cfg, zkr__hedge_yield_lean(&h->yield));
  if (op->h_attempts > 0 && !h->stop) {
    op->hedge_at_ns = op->start_ns + (uint64_t)(h->delay_ms * 1e6);
    enqueue(h, op);
    first = h->q.first == &op->hq_link;
  } else {
    last = unref(op);
  }
  pthread_mutex_unlock(&h->mu);
  /* The earliest hedge changed: the ticker's next turn is due sooner. */
  if (first) zkr__ticker_kick_hedger(z);
  if (last) zkr__op_free(op);
}

/* Completion's share (zkr__completion_*): the hedge delay follows the first
 * requests of hedgeable reads, per member: what a read costs without a
 * hedge. */
void zkr__hedger_op_done(zkr__op_t *op, int rc, double ms) {
  if (op->h_armed && zkr__latency_server_answered(rc)) zkr__hedger_sample(op->z, op->member, ms);
}

void zkr__hedger_sample(zkr_t *z, int member, double ms) {
  struct zkr__hedger *h = z->hedger;
  if (member < 0 || (size_t)member >= z->n) return;
  pthread_mutex_lock(&h->mu);
  zkr__hedge_window_t *w = h->win[member];
  if (!w && (w = malloc(sizeof *w))) {
    zkr__hedge_window_init(w);
    h->win[member] = w;
  }
  if (w && zkr__hedge_window_add(w, &h->cfg, ms)) {
    h->marks[member] = w->mark_ms;
    h->delay_ms = zkr__hedge_delay(&h->cfg, h->marks, (unsigned)z->n);
  }
  pthread_mutex_unlock(&h->mu);
}

/* A reply of a hedgeable read (either request) came: returns the op whose
 * completion the application gets now (the primary), or NULL when this
 * reply is discarded.  Plain operations return themselves. */
zkr__op_t *zkr__hedger_claim(zkr__op_t *a, int rc) {
  zkr__op_t *p = zkr__op_has(a, ZKR__OP_F_HEDGE) ? a->primary : a;
  if (!p->h_armed) return a;
  struct zkr__hedger *h = a->z->hedger;
  zkr__op_t *winner = NULL;
  pthread_mutex_lock(&h->mu);
  p->h_attempts--;
  if (!zkr__op_has(a, ZKR__OP_F_HEDGE) && (p->h_flags & ZKR__OP_H_QUEUED)) {
    dequeue(h, p); /* answered before its hedge was due */
    unref(p);      /* never the last: this reply still holds it */
  }
  if ((p->h_flags & ZKR__OP_H_DELIVERED)) {
    h->discarded++;
    if (zkr__op_has(a, ZKR__OP_F_HEDGE)) zkr__hedge_yield_add(&h->yield, 0);
  } else if (!zkr__latency_server_answered(rc) && p->h_attempts > 0) {
    p->h_deferred_rc = rc;
    h->discarded++;
  } else {
    p->h_flags |= ZKR__OP_H_DELIVERED;
    winner = p;
    if (zkr__op_has(a, ZKR__OP_F_HEDGE)) {
      h->won++;
      zkr__hedge_yield_add(&h->yield, 1);
    }
  }
  pthread_mutex_unlock(&h->mu);
  return winner;
}

/* One more hold on the primary p (the application's operation), by a
 * read held until a watch's event came (zkr__watch_*, under its registry lock;
 * nothing here takes that lock); zkr__completion_resume drops it
 * with zkr__hedger_release(p). */
void zkr__hedger_ref(zkr__op_t *p) {
  struct zkr__hedger *h = p->z->hedger;
  pthread_mutex_lock(&h->mu);
  p->h_refs++;
  pthread_mutex_unlock(&h->mu);
}

/* After the completion: drops this reply's hold. */
void zkr__hedger_release(zkr__op_t *a) {
  /* Read before the unref: once this reply's hold on the primary is
   * dropped another thread may free it, and a may be the primary. */
  int is_hedge = zkr__op_has(a, ZKR__OP_F_HEDGE);
  zkr__op_t *p = is_hedge ? a->primary : a;
  struct zkr__hedger *h = a->z->hedger;
  pthread_mutex_lock(&h->mu);
  int last = unref(p);
  pthread_mutex_unlock(&h->mu);
  if (is_hedge) zkr__op_free(a);
  if (last) zkr__op_free(p);
}

void zkr__hedger_stats(zkr_t *z, zkr_stats_t *s) {
  struct zkr__hedger *h = z->hedger;
  s->hedging = h != NULL;
  s->hedge_delay_ms = -1;
  if (!h) return;
  pthread_mutex_lock(&h->mu);
  s->hedge_delay_ms = h->delay_ms;
  s->hedge_eligible = h->eligible;
  s->hedges_sent = h->sent;
  s->hedges_won = h->won;
  s->hedges_capped = h->capped;
  s->hedges_no_member = h->no_member;
  s->hedge_discarded = h->discarded;
  pthread_mutex_unlock(&h->mu);
}
