/* Sessions must not die needlessly, and none may die silently (DESIGN.md
 * section 4).  The monitor runs this every tick:
 *
 * - The owner session, stranded on a server that stays unreachable, is
 *   re-attached - same id and password - to a live server before the
 *   session timeout, so its ephemeral nodes and its identity survive.  It
 *   moves to the owner slot for that, so its member opens a fresh carrier
 *   at home and routing stays one session per server.  Only a zhandle that
 *   is not connected - nor associating with a server that answers srvr -
 *   is ever closed for this (the check is made right before the close, by
 *   zkr__member_detach); if it reconnected meanwhile the move is simply
 *   not made.
 * - A carrier - any other member session - owns nothing but watches.  An
 *   expired one is replaced by a new session, silently; one that stays
 *   unreachable while it holds watches is replaced too, so that its watches
 *   live on elsewhere instead of waiting for its server.  Either way its
 *   watches are re-armed on a live session, with a sync first and a
 *   comparison that delivers any event they missed (zkr__watch_rearm_*).
 * - Once the owner expired, every member session is closed: nothing of the
 *   virtual session may outlive it. */
#include <stdlib.h>

#include "route/dispatch.h"
#include "core/handle.h"
#include "core/kick.h"
#include "core/policy.h"
#include "session/rescue.h"
#include "route/router.h"
#include "session/session.h"
#include "core/watch.h"
#include "zk/zkapi.h"

static int serving(const zkr__member_t *m) {
  int r = m->role;
  return r == ZKR_ROLE_LEADER || r == ZKR_ROLE_FOLLOWER || r == ZKR_ROLE_OBSERVER ||
         r == ZKR_ROLE_STANDALONE;
}

/* A live server for the owner: the leader's (session-scoped writes then
 * pay no hop), else another usable voter, else any usable member - never
 * one whose epoch is behind the handle's (zkr__policy_epoch_current): a
 * deposed leader that still claims leadership, or a follower still
 * following it, would serve the session its old state. */
static int fit(zkr_t *z, int i) {
  zkr__member_t *t = &z->members[i];
  return zkr__member_usable(t) && serving(t) && zkr__policy_epoch_current(z, t);
}

static int rescue_target(zkr_t *z, int not_on) {
  int l = z->leader;
  if (l >= 0 && l != not_on && fit(z, l)) return l;
  int any = -1;
  size_t n = z->n;
  for (size_t i = 0; i < n; i++) {
    zkr__member_t *t = &z->members[i];
    if ((int)i == not_on || !fit(z, (int)i)) continue;
    if (!zkr__member_observer(t)) return (int)i;
    if (any < 0) any = (int)i;
  }
  return any;
}

/* The owner's server stays away: the owner is not connected, and has been
 * down - or its server silent to srvr, whichever began first - for
 * rescue_ms.  Counting from srvr's first failure matters for a hung
 * server: the zhandle only notices after two thirds of the session
 * timeout, too late to wait rescue_ms more.  A server that is silent to
 * srvr twice in a row while another member answers (suspect: down, hung or
 * cut off) cannot serve the session soon: after rescue_down_ms the owner
 * moves without waiting for rescue_ms, as a stock client moves to its next
 * server as soon as its connection is lost (a leader's death otherwise
 * stalls the application for rescue_ms, where stock stalls for the
 * election only: docs/examples.md). */
static int owner_stranded(zkr_t *z, zkr__member_t *o, uint64_t now) {
  if (zkr__member_connected(o) || o->expired) return 0;
  uint64_t since = o->down_since_ns;
  if (!since) return 0;
  const zkr__member_t *home = &z->members[o->hosted_on];
  uint64_t silent = home->srvr_fail_since_ns;
  if (silent && home->suspect &&
      zkr__since(now, silent) > (uint64_t)z->opts.rescue_down_ms * 1000000u)
    return 1;
  if (silent && silent < since) since = silent;
  return zkr__since(now, since) > (uint64_t)z->rescue_ms * 1000000u;
}

static void rescue_owner(zkr_t *z, uint64_t now) {
  int o = z->owner;
  if (o < 0 || z->expired) return;
  zkr__member_t *m = &z->members[o];
  if (!owner_stranded(z, m, now) || z->owner_id.client_id == 0) return;
  int t = rescue_target(z, m->hosted_on);
  if (t < 0) return;
  zkr__member_t *os = zkr__member_owner_slot(z);
  /* A zhandle associating with a server that answers srvr again has its
   * session renewal on the way there: if that renewal landed after the
   * rescue's, the session would move back to the closed connection and the
   * server would tear down the rescued one (ZOOKEEPER-710).  One whose
   * server stays silent (hung, cut off) is moved: that renewal cannot land
   * soon, and the session must not expire waiting for it. */
  int answering = z->members[m->hosted_on].srvr_fail_streak == 0;
  zhandle_t *old = zkr__member_detach(m, answering ? ZKR__KEEP_ASSOCIATING : 1);
  if (!old) return; /* it reconnected, or is reconnecting: nothing to move */
  /* Closed at once, right after detach checked that it is not connected:
   * nothing that can take time (an address lookup, zookeeper_init, the
   * credentials' replay, which waits for auth_mu) may come between the
   * check and the close.  A zhandle that finished its handshake in such a
   * window would send CloseSession and end the application's session. */
  zkr__zk->zookeeper_close(old);
  zkr__log_event(z, ZOO_LOG_LEVEL_WARN, "owner_rescue", t, "from=%s session=0x%llx reason=%s",
                 z->members[m->hosted_on].address, (unsigned long long)z->owner_id.client_id,
                 z->members[m->hosted_on].suspect ? "server_silent" : "unreachable");
  /* What was in flight on it has an unknown outcome; its watches go
   * elsewhere.  Only then are new sessions opened. */
  zkr__dispatch_complete_dropped(z, old);
  zkr__watch_rearm_from(z, m->index, old);
  if (m != os) {
    /* From its member to the owner slot: the member gets a fresh carrier
     * at home, which connects when its server comes back. */
    os->hosted_on = m->hosted_on;
    os->role = ZKR_ROLE_UNKNOWN;
    m->rescues++;
    pthread_mutex_lock(&z->state_mu);
    z->owner = os->index;
    pthread_mutex_unlock(&z->state_mu);
    if (!m->retired) m->reopen = zkr__member_open(m, m->index, NULL) != ZOK;
  } else {
    os->rescues++;
  }
  if (zkr__member_open(os, t, &z->owner_id) != ZOK) {
    /* No zhandle: the next tick tries again (the owner stays down). */
    os->down_since_ns = now;
  } else {
    /* A write of the session whose outcome is unknown fences the write
     * gate (zkr__router_*): the session re-attached on another server refuses
     * the old connection's late requests, so the fence falls when the new
     * zhandle connects - checked here too, in case it already did. */
    pthread_rwlock_rdlock(&os->zh_lock);
    zhandle_t *nz = os->zh;
    pthread_rwlock_unlock(&os->zh_lock);
    zkr__router_gate_fence_moved(z, old, nz, os->index);
    if (zkr__member_connected(os)) zkr__router_gate_session_event(z, nz, ZOO_CONNECTED_STATE);
  }
  zkr__session_update(z);
}

/* ---- moving a fenced carrier's session ----
 * A write whose outcome is unknown on a carrier's session fences the
 * write gate (zkr__router_*) until that session reconnects, expires or the
 * servers must have expired it.  A carrier whose server went away cannot
 * reconnect (its zhandle names that one server) and would hold the gate
 * for longer than the session timeout.  The mover resumes that session on
 * a live server instead: once it connects, the session has moved and the
 * old connection's late requests are refused, so the fence falls.  The
 * mover is then closed, which ends the session.  A carrier owns nothing
 * but watches, and those end with it: the carrier is replaced at once
 * (carrier_session_closed) - its watches re-armed elsewhere, a new session
 * opened at home - not when its zhandle learns of the end, which a change
 * meanwhile would not survive. */

/* ctx is the fenced carrier's member: every zhandle the library opens has
 * a member as its context (the interposer's table finds the program's log
 * callback through it). */
static void mover_watcher(zhandle_t *zh, int type, int state, const char *path, void *ctx) {
  (void)path;
  zkr_t *z = ((zkr__member_t *)ctx)->z;
  if (type != ZOO_SESSION_EVENT || z->closing) return;
  zkr__router_gate_session_event(z, zh, state);
  if (state != ZOO_CONNECTING_STATE && state != ZOO_ASSOCIATING_STATE) zkr__kick_monitor(z);
}

/* Closes the mover (monitor thread, or the close path once the monitor
 * stopped). */
void zkr__rescue_mover_close(zkr_t *z) {
  zhandle_t *mv = z->mover;
  z->mover = NULL;
  if (mv) zkr__zk->zookeeper_close(mv);
}

static void carrier_session_closed(zkr_t *z, int slot, zhandle_t *from);
static int carrier_replace(zkr__member_t *m, int reopen, const char *force);

static void fence_move(zkr_t *z, uint64_t now) {
  int slot;
  clientid_t cid;
  zhandle_t *f = zkr__router_gate_fence(z, &slot, &cid);
  if (z->mover) {
    /* Its session event may have come before the fence moved to it. */
    int s = zkr__zk->zoo_state(z->mover);
    if (f == z->mover && s != ZOO_CONNECTING_STATE && s != ZOO_ASSOCIATING_STATE)
      zkr__router_gate_session_event(z, z->mover, s);
    f = zkr__router_gate_fence(z, &slot, &cid);
    uint64_t bound = (uint64_t)z->recv_timeout * 1000000u;
    if (f != z->mover || zkr__since(now, z->mover_ns) > bound) {
      /* Closing a connected mover sends CloseSession: the carrier's
       * session ends at the servers now, and with it every watch its
       * zhandle holds.  They are re-armed at once, as for an expired
       * carrier; waiting for that zhandle to learn of the expiry loses
       * every change until then. */
      int ended = zkr__zk->zoo_state(z->mover) == ZOO_CONNECTED_STATE;
      int mslot = z->mover_slot;
      zhandle_t *from = z->mover_from;
      zkr__rescue_mover_close(z);
      if (ended) carrier_session_closed(z, mslot, from);
    }
    return;
  }
  /* The owner's session is moved by the owner's rescue. */
  if (!f || cid.client_id == 0 || cid.client_id == z->owner_id.client_id || slot < 0 ||
      (size_t)slot >= z->n)
    return;
  zkr__member_t *m = &z->members[slot];
  pthread_rwlock_rdlock(&m->zh_lock);
  int current = m->zh == f;
  pthread_rwlock_unlock(&m->zh_lock);
  if (current && zkr__member_connected(m)) return; /* the fence falls by itself */
  /* Moved only when its server cannot serve it soon: silent to srvr while
   * others answer for rescue_down_ms, or the session down for rescue_ms
   * (as the owner's rescue decides). */
  uint64_t silent = m->srvr_fail_since_ns, since = m->down_since_ns;
  int away = (m->suspect && silent &&
              zkr__since(now, silent) > (uint64_t)z->opts.rescue_down_ms * 1000000u) ||
             (since && zkr__since(now, since) > (uint64_t)z->rescue_ms * 1000000u) || !current;
  if (!away) return;
  int t = rescue_target(z, slot);
  if (t < 0) return;
  zhandle_t *mv = zkr__zk->zookeeper_init(z->members[t].connect, mover_watcher, z->recv_timeout,
                                          &cid, m, z->flags);
  if (!mv) return;
  if (zkr__zk->zoo_set_servers_resolution_delay) zkr__zk->zoo_set_servers_resolution_delay(mv, -1);
  z->mover = mv;
  z->mover_ns = now;
  z->mover_slot = slot;
  z->mover_from = f;
  zkr__router_gate_fence_moved(z, f, mv, slot);
}

/* Replaces carrier m's session: its zhandle is closed (only if it is not
 * connected, unless it expired or `force` gives the reason to close it
 * anyway, which the log names), its operations in flight complete with
 * ZCONNECTIONLOSS, its watches are re-armed elsewhere, and with reopen a
 * new session is opened at home.  Returns 1 when the zhandle was
 * replaced. */
static int carrier_replace(zkr__member_t *m, int reopen, const char *force) {
  zkr_t *z = m->z;
  zhandle_t *old = zkr__member_detach(m, !force && !m->expired);
  if (!old) return 0;
  m->recreated++;
  zkr__log_event(z, ZOO_LOG_LEVEL_WARN, "carrier_recreated", m->index, "reason=%s",
                 m->expired ? "expired"
                 : force    ? force
                            : "unreachable_with_watches");
  zkr__zk->zookeeper_close(old);
  zkr__dispatch_complete_dropped(z, old);
  zkr__watch_rearm_from(z, m->index, old);
  if (reopen) m->reopen = zkr__member_open(m, m->index, NULL) != ZOK;
  return 1;
}

int zkr__rescue_carrier_replace(zkr__member_t *m, int reopen) {
  return carrier_replace(m, reopen, NULL);
}

/* The mover that resumed carrier slot's session was closed connected: that
 * session is over.  The carrier's zhandle, if still the one fenced, is
 * replaced whatever its state (a server that has not applied the close -
 * a deposed leader - may even take it back). */
static void carrier_session_closed(zkr_t *z, int slot, zhandle_t *from) {
  if (slot < 0 || (size_t)slot >= z->n || slot == z->owner) return;
  zkr__member_t *m = &z->members[slot];
  pthread_rwlock_rdlock(&m->zh_lock);
  int same = m->zh == from;
  pthread_rwlock_unlock(&m->zh_lock);
  if (same) carrier_replace(m, !m->retired, "session_closed");
}

/* srvr shows m in an older epoch than a change the handle saw committed
 * (a zxid of the newer epoch with a non-zero counter).  An older epoch
 * alone proves nothing: a follower of the new epoch shows the old epoch's
 * last zxid until the new leader's first write. */
static int behind_a_seen_change(zkr_t *z, const zkr__member_t *m) {
  int64_t seen = z->hwm_zxid, zx = m->zxid >= 0 ? m->zxid : m->last_zxid;
  return zx >= 0 && seen > 0 && (seen >> 32) > (zx >> 32) && (seen & 0xffffffffLL) != 0;
}

/* Carrier m holds watches on a server that has been behind a change the
 * handle saw (behind_a_seen_change) for rescue_ms: a follower still
 * following a deposed leader.  The changes the new leader commits do not
 * reach it - nor the events of the watches there - until that leader
 * notices it lost its quorum (ZOOKEEPER-1675), which may take longer than
 * the session timeout.  Its connection does not break, so nothing else
 * moves them.  Not while a member of the current epoch is missing to set
 * them on, nor while a write of unknown outcome fences the gate on its
 * session (fence_move's case). */
static int carrier_behind(zkr_t *z, zkr__member_t *m, uint64_t now) {
  if (m->watches <= 0 || !behind_a_seen_change(z, m)) {
    m->behind_since_ns = 0;
    return 0;
  }
  if (!m->behind_since_ns) {
    m->behind_since_ns = now;
    return 0;
  }
  if (zkr__since(now, m->behind_since_ns) <= (uint64_t)z->rescue_ms * 1000000u ||
      rescue_target(z, m->index) < 0)
    return 0;
  int slot;
  clientid_t cid;
  zhandle_t *f = zkr__router_gate_fence(z, &slot, &cid);
  if (f && slot == m->index) return 0;
  m->behind_since_ns = 0;
  return 1;
}

void zkr__rescue_tick(zkr_t *z, uint64_t now) {
  if (z->expired || z->closing) return;
  rescue_owner(z, now);
  fence_move(z, now);
  size_t n = z->n;
  for (size_t i = 0; i < n && !z->mon_stop; i++) {
    zkr__member_t *m = &z->members[i];
    if ((int)i == z->owner || m->retired) continue; /* zkr__membership_*: retired */
    if (m->reopen) {
      /* Its new session could not be opened (zookeeper_init failed):
       * again, until it can. */
      m->reopen = zkr__member_open(m, (int)i, NULL) != ZOK;
    } else if (m->expired) {
      zkr__rescue_carrier_replace(m, 1);
    } else if (m->watches > 0 && !zkr__member_connected(m) && m->down_since_ns &&
               zkr__since(now, m->down_since_ns) > (uint64_t)z->rescue_ms * 1000000u) {
      zkr__rescue_carrier_replace(m, 1);
    } else if (carrier_behind(z, m, now)) {
      carrier_replace(m, 1, "behind_epoch");
    }
  }
}

/* The owner expired: the virtual session is over.  Every member session
 * closes, so no carrier outlives it on a server; what was in flight
 * completes with ZSESSIONEXPIRED, parked operations too (zkr__router_*). */
void zkr__rescue_close_expired(zkr_t *z) {
  z->carriers_closed = 1;
  zkr__rescue_mover_close(z);
  size_t n = z->n;
  for (size_t i = 0; i <= n; i++) {
    zkr__member_t *m = i < n ? &z->members[i] : zkr__member_owner_slot(z);
    zhandle_t *zh = zkr__member_detach(m, 0);
    if (!zh) continue;
    zkr__zk->zookeeper_close(zh);
    zkr__dispatch_complete_dropped(z, zh);
  }
  zkr__router_gate_flush(z);
}
