/* The monitor: polls `srvr` on every member every leader_poll_ms
 * (at once when kicked, e.g. when the write session disconnects; every
 * idle_poll_ms while the handle is idle and the picture settled, so that a
 * fleet of idle handles does not keep the servers busy), which
 * names the leader (zkr__poller_*), and does the periodic housekeeping: the owner's
 * rescue and the carriers' re-creation (zkr__rescue_*), watches to re-arm
 * (zkr__watch_rearm_*), the virtual session's tick (zkr__session_*), health
 * evaluation, and expiring operations parked longer than the session
 * timeout. */
#include <errno.h>
#include <stdlib.h>

#include "core/auth.h"
#include "session/carriers.h"
#include "core/handle.h"
#include "route/pool.h"
#include "session/membership.h"
#include "session/monitor.h"
#include "session/rescue.h"
#include "core/runtime.h"
#include "route/router.h"
#include "session/session.h"
#include "session/poller.h"
#include "core/watch.h"
#include "zk/zkapi.h"

#define TICK_MS 50

#define NUDGE_MS 250

static void nudge_done(int rc, const struct Stat *stat, const void *data) {
  (void)rc;
  (void)stat;
  (void)data;
}

/* ZooKeeper 3.8.0 can leave a read queued behind a completed sync on a
 * follower until some other request reaches that server (ZOOKEEPER-4537,
 * fixed in 3.8.1): a lone sync+read then hangs until the session's
 * request timeout.  A member busy for NUDGE_MS without any reply gets a
 * cheap exists("/") on its session, which wakes the server's request
 * pipeline; on a healthy member it costs one small request per stall. */
static void nudge(zkr_t *z, zkr__member_t *m, uint64_t now) {
  uint64_t limit = (uint64_t)NUDGE_MS * 1000000u;
  if (m->outstanding <= 0 || zkr__since(now, m->progress_ns) < limit ||
      zkr__since(now, m->nudged_ns) < limit || m->state != ZOO_CONNECTED_STATE)
    return;
  m->nudged_ns = now;
  pthread_rwlock_rdlock(&m->zh_lock);
  if (m->zh && zkr__zk->zoo_awexists(m->zh, "/", NULL, NULL, nudge_done, NULL) == ZOK) m->nudges++;
  pthread_rwlock_unlock(&m->zh_lock);
}

static void housekeeping(zkr_t *z) {
  uint64_t now = zkr__now_ns();
  size_t n = z->n;
  for (size_t j = 0; j <= n && !z->mon_stop; j++)
    nudge(z, j < n ? &z->members[j] : zkr__member_owner_slot(z), now);
  zkr__auth_tick(z);
  zkr__session_tick(z);
  zkr__rescue_tick(z, now);
  zkr__carriers_tick(z, now);
  zkr__watch_rearm_retry_lost(z, now);
  zkr__watch_hold_tick(z);
  zkr__pool_tick(z, now);
  zkr__log_tick(z, now); /* lines the storm limit dropped */
  zkr__router_gate_expire(z, zkr__before(now, (uint64_t)z->recv_timeout * 1000000u));
  zkr__router_gate_fence_tick(z, now);
}

/* One turn of the monitor: a srvr poll when kicked or due, then the
 * housekeeping.  Returns the time of the next turn: the next poll, or a
 * tick from now, whichever comes first. */
static uint64_t turn(zkr_t *z, int kicked, uint64_t kick_ns) {
  uint64_t now = zkr__now_ns();
  if (kicked || now >= z->mon_next_poll) {
    uint64_t ops = z->app_ops;
    /* The answers it takes (zkr__srvr_cache_*): asked for at most half a
     * period ago - however many handles of the process poll a server, it
     * gets about two polls a period - or, when kicked, asked for since the
     * kick: the servers' state after the event that kicked, which one
     * request serves to every handle the event kicked. */
    uint64_t half =
        (uint64_t)(z->poll_idle ? z->opts.idle_poll_ms : z->opts.leader_poll_ms) * 500000u;
    uint64_t since = kicked ? kick_ns : now > half ? now - half : 0;
    int settled = zkr__poller_poll_members(z, since);
    /* Idle: nothing submitted since the last poll, nothing in flight or
     * waiting, and the last two polls settled.  A session event kicks
     * the monitor as before; the next operation does too (zkr__api_check_*). */
    int idle = settled && ops == z->mon_last_ops && z->mon_settled > 0 &&
               z->opts.idle_poll_ms > z->opts.leader_poll_ms;
    z->mon_settled = settled ? z->mon_settled + 1 : 0;
    z->mon_last_ops = ops;
    z->poll_idle = idle;
    int period = idle ? z->opts.idle_poll_ms : z->opts.leader_poll_ms;
    z->mon_next_poll = zkr__now_ns() + (uint64_t)period * 1000000u;
  }
  housekeeping(z);
  zkr__membership_tick(z);
  uint64_t wake = zkr__now_ns() + TICK_MS * 1000000u;
  return z->mon_next_poll < wake ? z->mon_next_poll : wake;
}

static int take_kick(zkr_t *z, uint64_t *kick_ns) {
  pthread_mutex_lock(&z->mon_mu);
  int kicked = z->mon_kick;
  *kick_ns = z->mon_kick_ns;
  z->mon_kick = 0;
  pthread_mutex_unlock(&z->mon_mu);
  return kicked;
}

/* One turn of the monitor when kicked or due, and when it is due next:
 * run by the process's ticker (zkr__ticker_*, on one of its workers) or
 * by a stepped runtime's driver (runtime.h). */
uint64_t zkr__monitor_step(zkr_t *z) {
  if (z->mon_stop) return UINT64_MAX;
  uint64_t kick_ns;
  int kicked = take_kick(z, &kick_ns);
  if (kicked || zkr__now_ns() >= z->mon_wake) z->mon_wake = turn(z, kicked, kick_ns);
  /* Kicked again during the turn: due at once.  (mon_kick under mon_mu:
   * the kick is rung from any thread.) */
  pthread_mutex_lock(&z->mon_mu);
  int again = z->mon_kick;
  pthread_mutex_unlock(&z->mon_mu);
  return again ? zkr__now_ns() : z->mon_wake;
}

/* Ends the turns: one in progress stops early (the loops check mon_stop),
 * and every later one returns at once.  The caller then takes the handle
 * off the ticker, which waits for a turn in progress. */
void zkr__monitor_stop(zkr_t *z) {
  pthread_mutex_lock(&z->mon_mu);
  z->mon_stop = 1;
  pthread_mutex_unlock(&z->mon_mu);
}
