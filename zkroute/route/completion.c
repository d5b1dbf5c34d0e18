/* Completion: the reply of every request zkroute sent comes back here, on
 * the completion thread of the member session that answered.  First the
 * bookkeeping (outstanding list, latency sample, health, watch record,
 * in-flight paths), then the reply is handed on - to a blocking call's
 * waiter at once, or to the handle's delivery thread as a copy - and only
 * then is the write gate released, so that a write it lets go to another
 * session cannot have its completion handed on before this one's
 * (completions stay in issue order).  No application code runs on a
 * ZooKeeper thread: that is what lets a callback block, and a completion
 * never wait for a lock the application holds (DESIGN.md section 4). */
#include <stdlib.h>
#include <string.h>

#include "route/barrier.h"
#include "route/completion.h"
#include "core/deliver.h"
#include "route/dispatch.h"
#include "core/handle.h"
#include "route/pool.h"
#include "route/hedger.h"
#include "core/kick.h"
#include "route/router.h"
#include "core/watch.h"

/* What the application is told for rc.  ZCLOSING comes from a member
 * zhandle that zkroute closed (replaced, or every session after the
 * owner expired) while the handle stays open: the outcome is unknown.  A
 * carrier's session that expired or whose credentials were refused is
 * not the application's session: while the virtual session has not
 * expired (or failed authentication), that is a lost connection, as a
 * stock session moving to another server reports it. */
static int outcome(zkr_t *z, int rc) {
  if (rc == ZCLOSING && !z->closing) {
    int end = zkr__handle_ended_rc(z);
    return end ? end : ZCONNECTIONLOSS;
  }
  if (rc == ZSESSIONEXPIRED && !z->expired) return ZCONNECTIONLOSS;
  if (rc == ZAUTHFAILED && !z->auth_failed) return ZCONNECTIONLOSS;
  /* The virtual session ended (EXPIRED or AUTH_FAILED): an answer a member
   * session still gives is not the application's session's - on a stock
   * session nothing is answered after that, and what was pending
   * completes with the end (a close afterwards finds nothing pending). */
  if (z->auth_first) return ZAUTHFAILED;
  if (z->expired) return ZSESSIONEXPIRED;
  if (z->auth_failed) return ZAUTHFAILED;
  return rc;
}

/* Everything but handing the reply on, each part doing its own share:
 * runs first, so that a read the application issues as soon as it has the
 * reply sees the in-flight set already updated. */
/* The highest zxid the handle has seen (a floor for the epoch of the
 * members it reads from): every reply's Stat carries a lower bound of the
 * state that server had. */
static void see_zxids(zkr_t *z, const struct Stat *st) {
  int64_t x = st->mzxid > st->pzxid ? st->mzxid : st->pzxid;
  if (st->czxid > x) x = st->czxid;
  int64_t cur = z->hwm_zxid;
  while (x > cur && !atomic_compare_exchange_weak(&z->hwm_zxid, &cur, x)) {
  }
  /* An epoch no srvr answer showed yet: a leader change the monitor has
   * not seen; it polls now. */
  if (x > cur && (uint32_t)((uint64_t)x >> 32) > z->srvr_epoch) zkr__kick_monitor(z);
}

static int op_finish(zkr__op_t *op, int rc, const struct Stat *stat) {
  zkr_t *z = op->z;
  if (rc == ZOK && stat) see_zxids(z, stat);
  zkr__dispatch_op_done(op, rc, stat); /* outstanding list, zxids shown */
  /* What ZooKeeper registered follows its own answer: a watch a member
   * session set after the virtual session ended is not the application's
   * (nothing is delivered any more), but its events still call the record,
   * which must live on as armed (test_auth
   * watched_read_answered_after_auth_failed_keeps_its_record). */
  int registered = rc;
  rc = outcome(z, rc);
  if (op->member >= 0) {
    uint64_t now = zkr__now_ns();
    double ms = (double)zkr__since(now, op->start_ns) / 1e6;
    zkr__pool_op_done(op, rc, now, ms);       /* probe result, latency sample */
    zkr__hedger_op_done(op, rc, ms);          /* the hedge delay's sample */
    zkr__member_op_done(op, rc);              /* error count, monitor kick */
    zkr__watch_op_done(op, registered, stat); /* the watch it set */
  }
  if (rc == ZOK) zkr__watch_note_write(op, stat); /* a set the watches learn of */
  zkr__router_op_done(op, rc);                    /* in-flight paths, the fence */
  return rc;
}

/* Hands the application's completion of op on: a connection loss first
 * dips the virtual state (the session's dip hook, zkr__session_dip), then a
 * waiter is signalled here and anything else goes to the delivery thread;
 * then op leaves the issue order, which may hand on a barrier that waited
 * for it (zkr__barrier_done). */
void zkr__completion_hand_on(zkr__op_t *op, const zkr__result_t *r) {
  zkr_t *z = op->z;
  int dipped = 0;
  if (op->app && (r->rc == ZCONNECTIONLOSS || r->rc == ZOPERATIONTIMEOUT) && op->member >= 0)
    dipped = zkr__hooks_session_dip(z, op->member);
  if (zkr__op_has(op, ZKR__OP_F_DIRECT)) zkr__deliver_call(op->shape, op->cb, op->data, r);
  else zkr__deliver_result(z, op->shape, op->cb, op->data, r);
  /* The watch it set is set in the application's eyes now: its events,
   * which waited, come after this completion. */
  if (op->watch_id) zkr__watch_read_handed_on(z, op->watch_id, op->read_seq);
  if (op->watch_merged) {
    op->watch_merged = 0;
    zkr__watch_merged_handed_on(z, op->watch_id);
  }
  /* A remove_all that covered what it set completes after it - through
   * the same hook an op's free uses (core/op.c), so that completion.c does
   * not call into the removal's file, which calls dispatch and completion:
   * that pulled watch_remove.c into the route/ circle (scripts/layers.py). */
  if (op->cover_w) {
    zkr__hooks_cover_end(z, op->cover_w);
    op->cover_w = NULL;
  }
  if (op->app) zkr__barrier_done(op);
  if (op->member >= 0) zkr__hooks_session_dip_check(z, op->member, dipped);
}

/* The start of every completion: `a` is the request that completed, op
 * the operation whose application completion this reply runs, or NULL when
 * the reply is discarded (the other request of a hedged read won; see
 * zkr__hedger_*).  A barrier (zkr_async, never hedged) belongs to
 * zkr__barrier_* from here on.  Last, for every operation that passed the write
 * gate - a barrier too - the gate is released: only after the completion
 * was handed on, so that a write it lets go to another session cannot have
 * its completion handed on before this one's. */
static void complete(zkr__op_t *a, zkr__result_t *r) {
  /* A read answered after its sync was lost: sent again instead (or, if
   * it cannot be, its outcome is a lost connection). */
  int again = zkr__dispatch_read_again(a, r->rc);
  if (again > 0) return;
  zkr__result_t lost = {.rc = ZCONNECTIONLOSS, .value_len = -1};
  if (again < 0) r = &lost;
  r->rc = op_finish(a, r->rc, r->stat);
  zkr_t *z = a->z;
  /* Hedged reads are never gated (zkr__router_*). */
  int gated = a->gated && a->member >= 0;
  if (zkr__op_has(a, ZKR__OP_F_BARRIER)) {
    zkr__barrier_reply(a, r); /* hands it on and frees it, now or later */
  } else if (!a->h_armed && a->app && zkr__watch_hold_read(a, r, NULL)) {
    /* (h_armed first: it is fixed at dispatch, while a hedged read's
     * winning reply, on another thread, clears app - zkr__barrier_*.) */
    /* Its reply shows a change a watch has not fired for yet: the event
     * comes first (zkr__watch_* resumes it, zkr__completion_resume). */
  } else if (!a->h_armed && zkr__router_fifo(z) && a->app && zkr__barrier_hold(a, r)) {
    /* Consistency `session`: held back behind operations issued before it
     * (zkr__barrier_* hands it on, and frees it). */
  } else {
    zkr__op_t *op = zkr__hedger_claim(a, r->rc);
    if (op && !zkr__op_has(op, ZKR__OP_F_PROBE)) {
      /* A hedged read's winning reply is held as any other: op, the
       * primary, is kept by one more hold until it is resumed, taken
       * under the registry's lock (no resume can run before it) and only
       * when it is held. */
      if (!(op->h_armed && op->app && zkr__watch_hold_read(op, r, zkr__hedger_ref)))
        zkr__completion_hand_on(op, r);
    }
    if (zkr__op_has(a, ZKR__OP_F_HEDGE) || a->h_armed) zkr__hedger_release(a);
    else zkr__op_free(a);
  }
  if (gated) zkr__router_gate_done(z);
}

/* A read held until a watch's event came (zkr__watch_*): its kept reply is
 * handed on now - behind the operations before it in consistency
 * `session` - and op goes. */
void zkr__completion_resume(zkr__op_t *op) {
  struct zkr__reply *k = op->kept;
  op->kept = NULL;
  zkr__result_t r = {.rc = op->kept_rc ? op->kept_rc : ZKR_ENOMEM, .value_len = -1};
  if (k) r = zkr__deliver_reply_view(k);
  if (op->h_armed) {
    /* A hedged read (complete): its extra hold goes. */
    zkr__completion_hand_on(op, &r);
    zkr__hedger_release(op);
  } else if (!(zkr__router_fifo(op->z) && zkr__barrier_hold(op, &r))) {
    zkr__completion_hand_on(op, &r);
    zkr__op_free(op);
  }
  zkr__deliver_reply_free(k);
}

void zkr__completion_void(int rc, const void *data) {
  zkr__result_t r = {.rc = rc};
  complete((zkr__op_t *)data, &r);
}

void zkr__completion_stat(int rc, const struct Stat *stat, const void *data) {
  zkr__result_t r = {.rc = rc, .stat = stat};
  complete((zkr__op_t *)data, &r);
}

void zkr__completion_data(int rc, const char *value, int value_len, const struct Stat *stat,
                          const void *data) {
  zkr__result_t r = {.rc = rc, .value = value, .value_len = value_len, .stat = stat};
  complete((zkr__op_t *)data, &r);
}

void zkr__completion_strings(int rc, const struct String_vector *strings, const struct Stat *stat,
                             const void *data) {
  zkr__result_t r = {.rc = rc, .strings = strings, .stat = stat};
  complete((zkr__op_t *)data, &r);
}

void zkr__completion_strings_stat(int rc, const struct String_vector *strings,
                                  const struct Stat *stat, const void *data) {
  zkr__completion_strings(rc, strings, stat, data);
}

void zkr__completion_string(int rc, const char *value, const void *data) {
  zkr__result_t r = {.rc = rc, .value = value};
  complete((zkr__op_t *)data, &r);
}

void zkr__completion_string_stat(int rc, const char *value, const struct Stat *stat,
                                 const void *data) {
  zkr__result_t r = {.rc = rc, .value = value, .stat = stat};
  complete((zkr__op_t *)data, &r);
}

void zkr__completion_acl(int rc, struct ACL_vector *acl, struct Stat *stat, const void *data) {
  zkr__result_t r = {.rc = rc, .acl = acl, .stat = stat};
  complete((zkr__op_t *)data, &r);
}

/* Completes an operation that was accepted (the caller got ZOK) but can no
 * longer be sent, or was dropped by a closed zhandle: the application still
 * gets its one completion. */
void zkr__completion_error(zkr__op_t *op, int rc) {
  zkr__result_t r = {.rc = rc, .value_len = -1};
  complete(op, &r);
}

/* Hands on the application's completion of a read with rc and no result,
 * nothing else: for a hedged read whose held-back error became its outcome
 * (zkr__hedger_*) after both requests' own bookkeeping was done. */
void zkr__completion_call_user_error(zkr__op_t *op, int rc) {
  zkr__result_t r = {.rc = rc, .value_len = -1};
  zkr__completion_hand_on(op, &r);
}
