/* The monitor thread: polls `srvr` on every member every leader_poll_ms (at
 * once when kicked, e.g. when the write session disconnects), picks the
 * leader by highest epoch, and does the periodic housekeeping: the owner's
 * rescue and the carriers' re-creation (rescue.c), watches to re-arm
 * (watch_rearm.c), the virtual session's tick (session.c), health
 * evaluation, and expiring operations parked longer than the session
 * timeout. */
#include <errno.h>
#include <stdlib.h>

#include "internal.h"
#include "srvr.h"

#define TICK_MS 50

typedef struct {
  zkr_t *z;
  zkr__member_t *m;
  zkr__srvr_reply_t reply;
  int rc;
} poll_t;

static void *poll_one(void *arg) {
  poll_t *p = arg;
  p->rc = zkr__zk->srvr(p->m->host.name, p->m->host.port, p->z->opts.srvr_timeout_ms,
                        (size_t)p->z->opts.srvr_max_reply, &p->reply);
  return NULL;
}

/* Polls every member at once, one short-lived thread each, so that a hung
 * member (which accepts the TCP connection and never answers) delays the
 * verdict by one srvr timeout, not one per hung member. */
static void poll_members(zkr_t *z) {
  poll_t polls[ZKR_MAX_MEMBERS];
  pthread_t threads[ZKR_MAX_MEMBERS];
  int started[ZKR_MAX_MEMBERS];
  for (size_t i = 0; i < z->n; i++) {
    polls[i] = (poll_t){.z = z, .m = &z->members[i], .rc = ZKR_ESRVR_CONNECT};
    started[i] = pthread_create(&threads[i], NULL, poll_one, &polls[i]) == 0;
    if (!started[i]) poll_one(&polls[i]);
  }
  int best = -1, answered = 0;
  int64_t best_zxid = -1;
  uint32_t best_epoch = 0;
  for (size_t i = 0; i < z->n; i++) {
    if (started[i]) pthread_join(threads[i], NULL);
    answered += polls[i].rc == ZOK;
  }
  for (size_t i = 0; i < z->n; i++) {
    zkr__member_t *m = &z->members[i];
    zkr__srvr_reply_t *r = &polls[i].reply;
    int rc = polls[i].rc;
    m->srvr_polls++;
    /* Silent twice in a row while others answer: the server is hung or cut
     * off even if its session has not noticed yet (that takes two thirds
     * of the session timeout).  New operations avoid it from now on. */
    int streak = rc == ZOK ? 0 : m->srvr_fail_streak + 1;
    m->srvr_fail_streak = streak;
    if (streak == 0) m->srvr_fail_since_ns = 0;
    else if (streak == 1) m->srvr_fail_since_ns = zkr__now_ns();
    int suspect = streak >= 2 && answered > 0;
    if (suspect != m->suspect) {
      m->suspect = suspect;
      pthread_mutex_lock(&m->health_mu);
      zkr__health_set_usable(&m->health, zkr__member_usable(m), zkr__now_ns());
      pthread_mutex_unlock(&m->health_mu);
      zkr__session_update(z);
    }
    if (rc != ZOK && rc != ZKR_ESRVR_NOT_SERVING) {
      m->srvr_failures++;
      m->role = rc == ZKR_ESRVR_CONNECT || rc == ZKR_ESRVR_TIMEOUT
                    ? ZKR_ROLE_UNREACHABLE
                    : ZKR_ROLE_UNKNOWN;
      m->zxid = -1;
      continue;
    }
    m->role = r->role;
    m->zxid = r->has_zxid ? r->zxid : -1;
    if (r->role != ZKR_ROLE_LEADER && r->role != ZKR_ROLE_STANDALONE) continue;
    /* Two members claiming leadership (one hung through an election): the
     * higher epoch is the real leader. */
    uint32_t epoch = r->has_zxid ? r->epoch : 0;
    int64_t zxid = r->has_zxid ? r->zxid : -1;
    if (best < 0 || epoch > best_epoch ||
        (epoch == best_epoch && zxid > best_zxid)) {
      best = (int)i;
      best_epoch = epoch;
      best_zxid = zxid;
    }
  }
  z->leader = best;
  if (best >= 0) {
    /* A change is a different leader than the last one known: a poll that
     * misses the leader once is not a change. */
    if (z->last_leader >= 0 && best != z->last_leader) z->leader_changes++;
    z->last_leader = best;
  }
  z->polled = 1;
  zkr__gate_adopt_leader(z);
  /* A new leader (or a write session back) may let parked writes go. */
  zkr__gate_flush(z);
}

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
  if (m->outstanding <= 0 || now - m->progress_ns < limit ||
      now - m->nudged_ns < limit || m->state != ZOO_CONNECTED_STATE)
    return;
  m->nudged_ns = now;
  pthread_rwlock_rdlock(&m->zh_lock);
  if (m->zh && zkr__zk->awexists(m->zh, "/", NULL, NULL, nudge_done, NULL) == ZOK)
    m->nudges++;
  pthread_rwlock_unlock(&m->zh_lock);
}

static void housekeeping(zkr_t *z) {
  uint64_t now = zkr__now_ns();
  size_t n = z->n;
  for (size_t j = 0; j <= n && !z->mon_stop; j++)
    nudge(z, j < n ? &z->members[j] : zkr__owner_slot(z), now);
  zkr__session_tick(z);
  zkr__rescue_tick(z, now);
  zkr__carriers_tick(z, now);
  zkr__watch_retry_lost(z, now);
  zkr__health_tick(z, now);
  zkr__gate_expire(z, now - (uint64_t)z->recv_timeout * 1000000u);
}

static void *monitor_main(void *arg) {
  zkr_t *z = arg;
  uint64_t next_poll = 0;
  pthread_mutex_lock(&z->mon_mu);
  while (!z->mon_stop) {
    uint64_t now = zkr__now_ns();
    int kicked = z->mon_kick;
    z->mon_kick = 0;
    pthread_mutex_unlock(&z->mon_mu);
    if (kicked || now >= next_poll) {
      poll_members(z);
      next_poll = zkr__now_ns() + (uint64_t)z->opts.leader_poll_ms * 1000000u;
    }
    housekeeping(z);
    zkr__membership_tick(z);
    pthread_mutex_lock(&z->mon_mu);
    if (z->mon_stop || z->mon_kick) continue;
    uint64_t wake = zkr__now_ns() + TICK_MS * 1000000u;
    if (next_poll < wake) wake = next_poll;
    struct timespec ts = {(time_t)(wake / 1000000000u), (long)(wake % 1000000000u)};
    pthread_cond_timedwait(&z->mon_cv, &z->mon_mu, &ts);
  }
  pthread_mutex_unlock(&z->mon_mu);
  return NULL;
}

int zkr__monitor_start(zkr_t *z) {
  pthread_condattr_t ca;
  pthread_condattr_init(&ca);
  pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
  pthread_cond_init(&z->mon_cv, &ca);
  pthread_condattr_destroy(&ca);
  if (pthread_create(&z->monitor, NULL, monitor_main, z) != 0) return ZKR_ETHREAD;
  z->monitor_started = 1;
  return ZOK;
}

void zkr__monitor_stop(zkr_t *z) {
  if (!z->monitor_started) return;
  pthread_mutex_lock(&z->mon_mu);
  z->mon_stop = 1;
  pthread_cond_signal(&z->mon_cv);
  pthread_mutex_unlock(&z->mon_mu);
  pthread_join(z->monitor, NULL);
  z->monitor_started = 0;
}

void zkr__monitor_kick(zkr_t *z) {
  pthread_mutex_lock(&z->mon_mu);
  z->mon_kick = 1;
  pthread_cond_signal(&z->mon_cv);
  pthread_mutex_unlock(&z->mon_mu);
}
