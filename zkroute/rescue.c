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
 *   comparison that delivers any event they missed (watch_rearm.c).
 * - Once the owner expired, every member session is closed: nothing of the
 *   virtual session may outlive it. */
#include <stdlib.h>

#include "dispatch.h"
#include "handle.h"
#include "rescue.h"
#include "router.h"
#include "session.h"
#include "watch.h"
#include "zkapi.h"

static int serving(const zkr__member_t *m) {
  int r = m->role;
  return r == ZKR_ROLE_LEADER || r == ZKR_ROLE_FOLLOWER || r == ZKR_ROLE_OBSERVER ||
         r == ZKR_ROLE_STANDALONE;
}

/* A live server for the owner: the leader's (session-scoped writes then
 * pay no hop), else another usable voter, else any usable member. */
static int rescue_target(zkr_t *z, int not_on) {
  int l = z->leader;
  if (l >= 0 && l != not_on && zkr__member_usable(&z->members[l]) && serving(&z->members[l]))
    return l;
  int any = -1;
  size_t n = z->n;
  for (size_t i = 0; i < n; i++) {
    zkr__member_t *t = &z->members[i];
    if ((int)i == not_on || !zkr__member_usable(t) || !serving(t)) continue;
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
  if (silent && home->suspect && now - silent > (uint64_t)z->opts.rescue_down_ms * 1000000u)
    return 1;
  if (silent && silent < since) since = silent;
  return now - since > (uint64_t)z->rescue_ms * 1000000u;
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
  zkr__log_event(z, ZOO_LOG_LEVEL_WARN, "owner_rescue", t, "from=%s session=0x%llx reason=%s",
                 z->members[m->hosted_on].address, (unsigned long long)z->owner_id.client_id,
                 z->members[m->hosted_on].suspect ? "server_silent" : "unreachable");
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
  /* Closed while not connected: no close-session is sent, the session
   * lives on and the new zhandle resumes it.  What was in flight on it
   * has an unknown outcome; its watches go elsewhere. */
  zkr__zk->zookeeper_close(old);
  zkr__op_complete_dropped(z, old);
  zkr__watch_rearm_from(z, m->index, old);
  if (zkr__member_open(os, t, &z->owner_id) != ZOK) {
    /* No zhandle: the next tick tries again (the owner stays down). */
    os->down_since_ns = now;
  }
  zkr__session_update(z);
}

/* Replaces carrier m's session: its zhandle is closed (only if it is not
 * connected, unless it expired), its operations in flight complete with
 * ZCONNECTIONLOSS, its watches are re-armed elsewhere, and with reopen a
 * new session is opened at home.  Returns 1 when the zhandle was
 * replaced. */
int zkr__rescue_carrier_replace(zkr__member_t *m, int reopen) {
  zkr_t *z = m->z;
  zhandle_t *old = zkr__member_detach(m, !m->expired);
  if (!old) return 0;
  m->recreated++;
  zkr__log_event(z, ZOO_LOG_LEVEL_WARN, "carrier_recreated", m->index, "reason=%s",
                 m->expired ? "expired" : "unreachable_with_watches");
  zkr__zk->zookeeper_close(old);
  zkr__op_complete_dropped(z, old);
  zkr__watch_rearm_from(z, m->index, old);
  if (reopen) m->reopen = zkr__member_open(m, m->index, NULL) != ZOK;
  return 1;
}

void zkr__rescue_tick(zkr_t *z, uint64_t now) {
  if (z->expired || z->closing) return;
  rescue_owner(z, now);
  size_t n = z->n;
  for (size_t i = 0; i < n && !z->mon_stop; i++) {
    zkr__member_t *m = &z->members[i];
    if ((int)i == z->owner || m->retired) continue; /* membership.c: retired */
    if (m->reopen) {
      /* Its new session could not be opened (zookeeper_init failed):
       * again, until it can. */
      m->reopen = zkr__member_open(m, (int)i, NULL) != ZOK;
    } else if (m->expired) {
      zkr__rescue_carrier_replace(m, 1);
    } else if (m->watches > 0 && !zkr__member_connected(m) && m->down_since_ns &&
               now - m->down_since_ns > (uint64_t)z->rescue_ms * 1000000u) {
      zkr__rescue_carrier_replace(m, 1);
    }
  }
}

/* The owner expired: the virtual session is over.  Every member session
 * closes, so no carrier outlives it on a server; what was in flight
 * completes with ZSESSIONEXPIRED, parked operations too (router.c). */
void zkr__rescue_close_expired(zkr_t *z) {
  z->carriers_closed = 1;
  size_t n = z->n;
  for (size_t i = 0; i <= n; i++) {
    zkr__member_t *m = i < n ? &z->members[i] : zkr__member_owner_slot(z);
    zhandle_t *zh = zkr__member_detach(m, 0);
    if (!zh) continue;
    zkr__zk->zookeeper_close(zh);
    zkr__op_complete_dropped(z, zh);
  }
  zkr__gate_flush(z);
}
