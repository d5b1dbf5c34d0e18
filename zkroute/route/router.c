/* Router: classifies each operation, keeps the ordering guarantees of
 * DESIGN.md section 3 and dispatches to the member the policy picks.
 *
 * - Writes pass the write gate: one write session at a time, FIFO.  The
 *   write session is the leader's for most writes and the owner's for
 *   session-scoped ones (an ephemeral create, a multi holding one: DESIGN.md
 *   section 4).  When the write session must change (new leader, lost
 *   session, a switch between leader and owner), new writes are parked
 *   until the writes in flight on the old session have completed, so
 *   writes and their completions stay in issue order.  Parking never blocks
 *   a thread: a parked operation is sent by whichever thread completes the
 *   last old write (or by the monitor, or a connecting member).
 * - A read of a path that an in-flight write of this handle will change is
 *   "ordered": it passes the gate too and runs on the write session after
 *   that write (same-session FIFO gives read-your-writes).  An ordered read
 *   that waited in the queue, or that the gate sends to another session
 *   than the one before it, cannot count on FIFO order: it is synced first
 *   (the write it follows completed, so the sync's server sees it).  Every
 *   other read is a sync+read on the member the policy picks.
 * - A read that is neither pinned nor ordered, has no watch and runs under
 *   hybrid may be hedged (zkr__hedger_*): its dispatch queues it for a second
 *   sync+read on another pool member if no reply comes in time.
 * - A write whose outcome is unknown (ZCONNECTIONLOSS, ZOPERATIONTIMEOUT)
 *   raises the fence: a late copy of it, still in its session's socket, a
 *   kernel buffer or a proxy, could be applied after a later write sent
 *   elsewhere.  Until that session reconnected (its server then refuses
 *   the old connection's requests), expired, was moved to another server
 *   (zkr__rescue_*) or the session timeout passed (the servers expired it),
 *   gated operations go to no other session.
 * - When no member is usable (start-up, total outage), operations park
 *   until one is, or until the session timeout passes (ZCONNECTIONLOSS). */
#include <stdlib.h>
#include <string.h>

#include "route/completion.h"
#include "route/dispatch.h"
#include "core/handle.h"
#include "route/hedger.h"
#include "model/inflight.h"
#include "core/policy.h"
#include "route/router.h"
#include "core/watch.h"

/* ---- in-flight paths ---- */

static int track(zkr__op_t *op, const char *path) {
  char *p = strdup(path);
  if (!p) return ZKR_ENOMEM;
  if (zkr__inflight_add(op->z->inflight, p) != 0) {
    free(p);
    return ZKR_ENOMEM;
  }
  op->inflight[op->n_inflight++] = p;
  return ZOK;
}

/* A create or delete also changes its parent's children list. */
static int track_with_parent(zkr__op_t *op, const char *path) {
  int rc = track(op, path);
  const char *slash = strrchr(path, '/');
  if (rc != ZOK || !slash) return rc;
  size_t len = slash == path ? 1 : (size_t)(slash - path);
  char parent[len + 1];
  memcpy(parent, path, len);
  parent[len] = '\0';
  return track(op, parent);
}

static int track_write(zkr__op_t *op) {
  int slots = op->type == ZKR__OP_MULTI ? 2 * op->multi_count : 2;
  op->inflight = calloc((size_t)(slots > 0 ? slots : 1), sizeof *op->inflight);
  if (!op->inflight) return ZKR_ENOMEM;
  int rc = ZOK;
  switch (op->type) {
  case ZKR__OP_CREATE:
  case ZKR__OP_DELETE: return track_with_parent(op, op->path);
  case ZKR__OP_MULTI:
    for (int i = 0; i < op->multi_count && rc == ZOK; i++) {
      const zoo_op_t *o = &op->multi_ops[i];
      if (o->type == ZOO_CREATE_OP) rc = track_with_parent(op, o->create_op.path);
      else if (o->type == ZOO_DELETE_OP) rc = track_with_parent(op, o->delete_op.path);
      else if (o->type == ZOO_SETDATA_OP) rc = track(op, o->set_op.path);
    }
    return rc;
  default: return track(op, op->path);
  }
}

static int reads_inflight_path(zkr__op_t *op) {
  struct zkr__inflight *s = op->z->inflight;
  if (op->type != ZKR__OP_MULTI) return op->path && zkr__inflight_contains(s, op->path);
  for (int i = 0; i < op->multi_count; i++)
    if (zkr__inflight_contains(s, op->multi_ops[i].check_op.path)) return 1;
  return 0;
}

/* ---- the gate ---- */

enum { PARK = 1 };

/* The session a gated operation goes to: the owner's for a
 * session-scoped write (none yet, or not connected: it waits), else the
 * write member the policy names. */
static int gate_target(zkr_t *z, const zkr__op_t *op) {
  if (!zkr__op_has(op, ZKR__OP_F_OWNER)) return zkr__policy_write_member(z);
  int o = z->owner;
  return o >= 0 && zkr__member_holds_session(&z->members[o]) ? o : -1;
}

/* Whether writes are fenced: the owner session has not been connected for
 * two thirds of its timeout (owner_down_ns, zkr__session_*) - when a stock
 * client gives its connection up, and after which the servers may have
 * expired the session, its ephemeral nodes and locks with it.  A lock
 * holder must not write on then: writes fail with ZCONNECTIONLOSS, as on a
 * stock session, until the owner is back (DESIGN.md section 4). */
static int writes_fenced(zkr_t *z) {
  uint64_t down = z->owner_down_ns;
  if (!down) return 0;
  int o = z->owner;
  int t = o >= 0 && z->members[o].timeout_ms > 0 ? z->members[o].timeout_ms : z->recv_timeout;
  return zkr__since(zkr__now_ns(), down) >= (uint64_t)t * 2 / 3 * 1000000u;
}

/* Whether the owner session is away - not connected (owner_down_ns,
 * zkr__session_*) - so that the servers may have ended it although the
 * library has not been told: a server closes the connection of a session
 * it expired.  A stock session sends nothing then: the writes it is given
 * wait for its reconnect, which tells it EXPIRED if the session ended.
 * Writes park the same way (try_send) and go once the owner is back - its
 * session alive - or fail at its end, or after two thirds of the timeout
 * (writes_fenced): a lock holder's write is not acknowledged after its
 * lock vanished with its session (the simulator's --writes-after-end,
 * docs/decisions.md).  An owner connected to a follower that still
 * follows a deposed leader is not caught here: srvr cannot tell it from
 * a follower of the new epoch that has applied no write of it yet, whose
 * zxid is the old epoch's too, and parking on that stalled the first
 * write after a leader restart until the session timeout (it_session
 * client_id_stable_ephemerals_owned). */
static int owner_away(zkr_t *z) { return z->owner_down_ns != 0; }

/* Gate held: whether the fence keeps gated operations from member
 * target's session. */
static int fenced(zkr_t *z, int target) {
  if (!z->fence_zh) return 0;
  zkr__member_t *m = &z->members[target];
  pthread_rwlock_rdlock(&m->zh_lock);
  int other = m->zh != z->fence_zh;
  pthread_rwlock_unlock(&m->zh_lock);
  return other;
}

/* Consistency `session` keeps a stock session's FIFO client order (the
 * policies that gate writes): a read issued while a write of the handle
 * is outstanding runs after it on the write session; a write waits for the
 * reads issued before it; completions are handed on in issue order
 * (zkr__barrier_*). */
int zkr__router_fifo(zkr_t *z) {
  return z->opts.consistency == ZKR_CONSISTENCY_SESSION &&
         z->opts.policy != ZKR_POLICY_ROUND_ROBIN && z->opts.policy != ZKR_POLICY_BOLTZMANN;
}

/* A member picked as usable whose zhandle was detached before the
 * dispatch (a rescue or a carrier's re-creation in between) is routing's
 * business: the operation waits for the next occasion, as when no member
 * is usable.  Stock gives ZINVALIDSTATE only for a session that is over. */
static int sent_or_park(int rc) { return rc == ZINVALIDSTATE ? PARK : rc; }

/* Gate held.  Returns ZOK (sent), PARK, or the error zoo_a* returned. */
static int try_send(zkr_t *z, zkr__op_t *op) {
  int target;
  /* Nothing completes before the virtual session is established. */
  if (!z->established) return PARK;
  if (!op->gated) {
    target =
        zkr__op_has(op, ZKR__OP_F_WRITE) ? zkr__policy_write_member(z) : zkr__policy_read_member(z);
    if (target < 0) return PARK;
    /* Counted before it is sent: its completion may run at once. */
    int counted = !zkr__op_has(op, ZKR__OP_F_WRITE) && zkr__router_fifo(z);
    if (counted) {
      op->fifo_read = 1;
      z->reads_out++;
    }
    int rc = sent_or_park(zkr__dispatch(op, &z->members[target]));
    if (rc != ZOK && counted) {
      op->fifo_read = 0;
      z->reads_out--;
    }
    return rc;
  }
  target = gate_target(z, op);
  /* Only read-only servers answer: a write is refused, as they refuse it. */
  if (target < 0 && zkr__op_has(op, ZKR__OP_F_WRITE) && z->vstate == ZOO_READONLY_STATE)
    return ZNOTREADONLY;
  if (target < 0 || fenced(z, target)) return PARK;
  if (zkr__op_has(op, ZKR__OP_F_WRITE) && z->vstate != ZOO_READONLY_STATE && owner_away(z))
    return PARK;
  /* FIFO: a write waits for the reads issued before it. */
  if (zkr__op_has(op, ZKR__OP_F_WRITE) && z->reads_out > 0 && zkr__router_fifo(z)) return PARK;
  if (z->gate_cur != target) {
    if (z->gate_inflight > 0) return PARK; /* old session still draining */
    z->gate_cur = target;
    if (op->ordered) op->resync = 1;
  }
  if (op->ordered && op->parked) op->resync = 1;
  int rc = sent_or_park(zkr__dispatch(op, &z->members[target]));
  if (rc == ZOK) z->gate_inflight++;
  return rc;
}

static void park(zkr_t *z, zkr__op_t *op) {
  op->start_ns = zkr__now_ns();
  op->parked = 1;
  zkr__queue_push(&z->gate_q, &op->gate_link);
}

static zkr__op_t *pop(zkr_t *z) { return ZKR__OP_OF(zkr__queue_pop(&z->gate_q), gate_link); }

/* Completion's share (zkr__completion_*): the write's paths leave the
 * in-flight set, and a gated write whose outcome is unknown raises the
 * fence on the zhandle it was sent on. */
void zkr__router_op_done(zkr__op_t *op, int rc) {
  zkr_t *z = op->z;
  for (int i = 0; i < op->n_inflight; i++) zkr__inflight_remove(z->inflight, op->inflight[i]);
  if (op->fifo_read || op->fifo_write) {
    int w = op->fifo_write;
    op->fifo_read = op->fifo_write = 0;
    zkr__router_fifo_done(z, w);
  }
  if (!zkr__op_has(op, ZKR__OP_F_WRITE) || !op->gated || !op->zh ||
      (rc != ZCONNECTIONLOSS && rc != ZOPERATIONTIMEOUT))
    return;
  /* The session's id, if the member learned it for this zhandle. */
  zkr__member_t *m = &z->members[op->member];
  clientid_t cid = {0};
  pthread_rwlock_rdlock(&m->zh_lock);
  if (m->cid_zh == op->zh) cid = m->cid;
  pthread_rwlock_unlock(&m->zh_lock);
  pthread_mutex_lock(&z->gate_mu);
  if (!z->fence_zh) {
    z->fence_zh = op->zh;
    z->fence_slot = op->member;
    z->fence_cid = cid;
    z->fence_ns = zkr__now_ns();
  }
  pthread_mutex_unlock(&z->gate_mu);
}

/* A FIFO read or write (counted in reads_out, writes_out) completed: the
 * last read lets a waiting write go.  Never called with gate_mu held: a
 * counted operation was sent, and a sent one completes on a ZooKeeper
 * thread or a close path outside the gate. */
void zkr__router_fifo_done(zkr_t *z, int write) {
  if (write) {
    z->writes_out--;
    return;
  }
  if (atomic_fetch_sub(&z->reads_out, 1) == 1) zkr__router_gate_flush(z);
}

/* Lowers the fence if it stands on zh (any zh when zh is NULL); parked
 * operations may go. */
static void fence_lower(zkr_t *z, zhandle_t *zh) {
  pthread_mutex_lock(&z->gate_mu);
  int was = z->fence_zh && (!zh || z->fence_zh == zh);
  if (was) z->fence_zh = NULL;
  pthread_mutex_unlock(&z->gate_mu);
  if (was) zkr__router_gate_flush(z);
}

/* A member zhandle's session event (zkr__member_*): a fenced session that
 * reconnected refuses its old connection's late requests from now on; one
 * that expired applies nothing any more. */
void zkr__router_gate_session_event(zkr_t *z, zhandle_t *zh, int state) {
  if (state == ZOO_CONNECTED_STATE || state == ZOO_READONLY_STATE ||
      state == ZOO_EXPIRED_SESSION_STATE)
    fence_lower(z, zh);
}

/* The fenced session was re-attached elsewhere, on member slot `slot`
 * (zkr__rescue_*): the new zhandle carries the fence now; it falls when that
 * one connects. */
void zkr__router_gate_fence_moved(zkr_t *z, zhandle_t *from, zhandle_t *to, int slot) {
  pthread_mutex_lock(&z->gate_mu);
  if (z->fence_zh == from && to) {
    z->fence_zh = to;
    z->fence_slot = slot;
  }
  pthread_mutex_unlock(&z->gate_mu);
}

/* The fence's zhandle, slot and session, or NULL (for the monitor's
 * rescue). */
zhandle_t *zkr__router_gate_fence(zkr_t *z, int *slot, clientid_t *cid) {
  pthread_mutex_lock(&z->gate_mu);
  zhandle_t *zh = z->fence_zh;
  *slot = z->fence_slot;
  *cid = z->fence_cid;
  pthread_mutex_unlock(&z->gate_mu);
  return zh;
}

/* The monitor's turn: the servers have expired a session not heard from
 * for its timeout (rounded up to their tick, at most half of it), so once
 * that passed since the loss, no late copy can be applied. */
void zkr__router_gate_fence_tick(zkr_t *z, uint64_t now) {
  pthread_mutex_lock(&z->gate_mu);
  int t = z->negotiated_ms > z->recv_timeout ? z->negotiated_ms : z->recv_timeout;
  uint64_t bound = (uint64_t)t * 3 / 2 * 1000000u;
  int over = z->fence_zh && zkr__since(now, z->fence_ns) >= bound;
  pthread_mutex_unlock(&z->gate_mu);
  if (over) fence_lower(z, NULL);
}

int zkr__router_route(zkr__op_t *op) {
  zkr_t *z = op->z;
  /* round_robin and boltzmann spread writes over all members on purpose:
   * no write gate, so their writes keep no order across members. */
  int rr = z->opts.policy == ZKR_POLICY_ROUND_ROBIN || z->opts.policy == ZKR_POLICY_BOLTZMANN;
  int rc;
  if (zkr__op_has(op, ZKR__OP_F_WRITE)) {
    if ((rc = track_write(op)) != ZOK) goto undo;
    /* Session-scoped writes go to the owner whatever the policy. */
    op->gated = !rr || zkr__op_has(op, ZKR__OP_F_OWNER);
    if (zkr__router_fifo(z)) {
      op->fifo_write = 1;
      z->writes_out++;
    }
  } else {
    /* FIFO: behind the handle's outstanding writes, on their session. */
    int behind = zkr__router_fifo(z) && z->writes_out > 0;
    if (behind && op->pin >= 0 && zkr__op_has(op, ZKR__OP_F_WATCH_REUSED)) {
      /* A watch set again, pinned to the member that holds it: not there
       * after all, so this read sets it where it goes (without, it would
       * only read, and the pair would stay unset once the old
       * registration fired). */
      zkr__watch_t *n = zkr__watch_reuse_elsewhere(op->watch, zkr__watch_kind_of(op->type));
      if (!n) {
        rc = ZKR_ENOMEM;
        goto undo;
      }
      op->watch = n;
      zkr__op_set(op, ZKR__OP_F_WATCH_REUSED, 0);
    }
    if (behind) op->pin = -1;
    if (op->pin >= 0) {
      /* A watch set again goes where the watch is (zkr__api_read_*, which
       * pins only when no write of this handle to the path is in flight).  Its
       * zhandle detached meanwhile: the record is being re-armed
       * elsewhere, and this read is routed as any other (it sets the watch
       * on no other session: zkr__dispatch). */
      int counted = zkr__router_fifo(z);
      if (counted) {
        op->fifo_read = 1;
        z->reads_out++;
      }
      rc = zkr__dispatch(op, &z->members[op->pin]);
      if (rc == ZOK) return rc;
      if (counted) {
        op->fifo_read = 0;
        z->reads_out--;
      }
      if (rc != ZINVALIDSTATE) return rc;
      op->pin = -1;
    }
    if (!rr && (behind || reads_inflight_path(op))) op->ordered = op->gated = 1;
    else op->hedge_ok = zkr__hedger_eligible(op);
  }
  pthread_mutex_lock(&z->gate_mu);
  if (z->closing) {
    rc = ZKR_ECLOSING;
  } else if (zkr__op_has(op, ZKR__OP_F_WRITE) && zkr__queue_empty(&z->gate_q) &&
             z->gate_inflight == 0 && writes_fenced(z)) {
    /* Accepted and failed, as a stock session fails a write it cannot
     * send: its completion comes, with ZCONNECTIONLOSS. */
    zkr__completion_error(op, ZCONNECTIONLOSS);
    rc = ZOK;
  } else if (op->gated && (!zkr__queue_empty(&z->gate_q) ||
                           (zkr__op_has(op, ZKR__OP_F_WRITE) && writes_fenced(z)))) {
    /* Behind earlier parked writes (FIFO), or fenced behind gated ones in
     * flight: it fails once they completed (zkr__router_gate_flush). */
    park(z, op);
    rc = ZOK;
  } else {
    rc = try_send(z, op);
    if (rc == PARK) {
      park(z, op);
      rc = ZOK;
    }
  }
  pthread_mutex_unlock(&z->gate_mu);
undo:
  /* The completion will not run: undo what the write registered.  The
   * strings stay with op, which the caller frees (zkr__op_free). */
  if (rc != ZOK) {
    for (int i = 0; i < op->n_inflight; i++) zkr__inflight_remove(z->inflight, op->inflight[i]);
    if (op->fifo_write) {
      op->fifo_write = 0;
      zkr__router_fifo_done(z, 1);
    }
  }
  return rc;
}

/* With nothing in flight or parked, the write session can follow the
 * leader at once, so stats show it before the first write.  Not for
 * sticky: asking it for a member here, on a poll that may come before its
 * member's session connected, would move it for good to whichever member
 * connected first. */
void zkr__router_gate_adopt_leader(zkr_t *z) {
  if (z->opts.policy == ZKR_POLICY_ROUND_ROBIN || z->opts.policy == ZKR_POLICY_BOLTZMANN ||
      z->opts.policy == ZKR_POLICY_STICKY)
    return;
  pthread_mutex_lock(&z->gate_mu);
  if (z->gate_inflight == 0 && zkr__queue_empty(&z->gate_q) && !z->closing) {
    int target = zkr__policy_write_member(z);
    if (target >= 0) z->gate_cur = target;
  }
  pthread_mutex_unlock(&z->gate_mu);
}

/* The write session's member, -1 none; for readers outside the gate. */
int zkr__router_gate_current(zkr_t *z) {
  pthread_mutex_lock(&z->gate_mu);
  int w = z->gate_cur;
  pthread_mutex_unlock(&z->gate_mu);
  return w;
}

/* Why op, parked, can never be sent now, or ZOK. */
static int hopeless(zkr_t *z, const zkr__op_t *op) {
  int end = zkr__handle_ended_rc(z);
  if (end) return end;
  if (zkr__op_has(op, ZKR__OP_F_WRITE) && writes_fenced(z)) return ZCONNECTIONLOSS;
  return ZOK;
}

/* Sends parked operations, in order, as far as possible.  One that cannot
 * be sent completes with its error right there, under the gate: no later
 * operation can be sent (and complete) before it.  Nor before an earlier
 * one: every gated operation in flight was issued before the parked ones
 * (once one parks, the later ones park behind it), so a failure waits
 * until they completed (zkr__router_gate_done flushes again), as a stock session
 * completes its requests in issue order, failures too. */
void zkr__router_gate_flush(zkr_t *z) {
  pthread_mutex_lock(&z->gate_mu);
  while (!zkr__queue_empty(&z->gate_q)) {
    int rc = hopeless(z, ZKR__OP_OF(z->gate_q.first, gate_link));
    if (rc != ZOK && z->gate_inflight > 0) break;
    /* Out of the queue before it is sent: once ZooKeeper has it, its
     * completion may run on another thread and free it. */
    zkr__op_t *op = pop(z);
    if (rc == ZOK) rc = try_send(z, op);
    if (rc == PARK) {
      zkr__queue_push_front(&z->gate_q, &op->gate_link);
      break;
    }
    if (rc != ZOK) zkr__completion_error(op, rc);
  }
  pthread_mutex_unlock(&z->gate_mu);
}

/* The handle closes and no ZooKeeper thread runs any more (every member
 * zhandle closed, what they dropped completed): nothing gated is in
 * flight, and what is still parked fails now, in order (ZCLOSING). */
void zkr__router_gate_close(zkr_t *z) {
  pthread_mutex_lock(&z->gate_mu);
  z->gate_inflight = 0;
  pthread_mutex_unlock(&z->gate_mu);
  zkr__router_gate_flush(z);
}

/* A gated operation completed: the last one of a draining session lets the
 * parked operations go to the new one. */
void zkr__router_gate_done(zkr_t *z) {
  pthread_mutex_lock(&z->gate_mu);
  int flush = --z->gate_inflight == 0 && !zkr__queue_empty(&z->gate_q);
  pthread_mutex_unlock(&z->gate_mu);
  if (flush) zkr__router_gate_flush(z);
}

/* Fails operations parked since before older_than_ns: no member could
 * take them within the session timeout (the stock client gives up then).
 * Completed under the gate, in order, like any failure of a parked one. */
void zkr__router_gate_expire(zkr_t *z, uint64_t older_than_ns) {
  pthread_mutex_lock(&z->gate_mu);
  while (z->gate_inflight == 0 && !zkr__queue_empty(&z->gate_q) &&
         ZKR__OP_OF(z->gate_q.first, gate_link)->start_ns < older_than_ns)
    zkr__completion_error(pop(z), ZCONNECTIONLOSS);
  pthread_mutex_unlock(&z->gate_mu);
}

/* The layers below call these through the handle (hooks.h). */
const zkr__route_hooks_t zkr__router_hooks = {
    .gate_flush = zkr__router_gate_flush,
    .gate_session_event = zkr__router_gate_session_event,
    .resume = zkr__completion_resume,
    .cover_held = zkr__watch_remove_cover_held,
    .covered = zkr__watch_remove_covered,
    .cover_end = zkr__watch_remove_cover_end,
    .events_out = zkr__watch_remove_events_out,
};
