/* The `srvr` poll applied to a handle: every member asked at once (one
 * short-lived thread each, so a hung member delays the verdict by one srvr
 * timeout, not one per hung member), through the process's answers
 * (zkr__srvr_cache_*: a member another handle polled recently enough needs
 * no request, nor a thread); roles, zxids and the suspect flag of each
 * member from the replies; the leader by highest epoch.  The monitor
 * (zkr__monitor_*) calls it every leader_poll_ms (idle_poll_ms when idle). */
#include <errno.h>
#include <stdlib.h>

#include "core/handle.h"
#include "route/router.h"
#include "core/runtime.h"
#include "session/session.h"
#include "model/srvr.h"
#include "zk/srvr_cache.h"
#include "session/poller.h"
#include "zk/zkapi.h"

typedef struct {
  zkr_t *z;
  zkr__member_t *m;
  zkr__srvr_reply_t reply;
  uint64_t since;
  int rc;
  int ask;  /* no fresh answer in the process's cache: ask (or join) */
  int sent; /* this handle's own request answered */
} poll_t;

static void *poll_one(void *arg) {
  poll_t *p = arg;
  p->rc = zkr__srvr_cache_query(p->m->host.name, p->m->host.port, p->z->opts.srvr_timeout_ms,
                                (size_t)p->z->opts.srvr_max_reply, p->since, &p->reply, &p->sent);
  return NULL;
}

/* A stepped runtime's srvr answers at once, in member order, each its
 * own: one seed replays one world, whatever other handles asked. */
static void *poll_stepped(void *arg) {
  poll_t *p = arg;
  p->sent = 1;
  p->rc = zkr__zk->srvr(p->m->host.name, p->m->host.port, p->z->opts.srvr_timeout_ms,
                        (size_t)p->z->opts.srvr_max_reply, &p->reply);
  return NULL;
}

/* Polls every member at once; a hung member accepts the TCP connection
 * and never answers.  Returns 1 when the picture is settled - a leader,
 * every member that is not retired answering, none suspect or without its
 * session (parked ones aside) - so the monitor may poll at the idle rate. */
int zkr__poller_poll_members(zkr_t *z, uint64_t since) {
  poll_t polls[ZKR_MAX_MEMBERS];
  pthread_t threads[ZKR_MAX_MEMBERS];
  int started[ZKR_MAX_MEMBERS];
  size_t ask = 0, last = 0;
  for (size_t i = 0; i < z->n; i++) {
    polls[i] = (poll_t){.z = z, .m = &z->members[i], .rc = ZKR_ESRVR_CONNECT, .since = since};
    started[i] = 0;
    if (zkr__rt->stepped) {
      poll_stepped(&polls[i]);
      continue;
    }
    /* Answered for another handle recently enough: no thread. */
    if (zkr__srvr_cache_fresh(polls[i].m->host.name, polls[i].m->host.port, since, &polls[i].reply,
                              &polls[i].rc))
      continue;
    polls[i].ask = 1;
    ask++;
    last = i;
  }
  /* The members left are asked at once, the last one on this thread. */
  for (size_t i = 0; i < z->n && ask > 0; i++) {
    if (!polls[i].ask || i == last) continue;
    started[i] = pthread_create(&threads[i], NULL, poll_one, &polls[i]) == 0;
    if (!started[i]) poll_one(&polls[i]);
  }
  if (ask > 0) poll_one(&polls[last]);
  int best = -1, answered = 0;
  int64_t best_zxid = -1;
  uint32_t best_epoch = 0;
  for (size_t i = 0; i < z->n; i++) {
    if (started[i]) pthread_join(threads[i], NULL);
    answered += polls[i].rc == ZOK;
  }
  /* The lowest epoch a leader may have: the highest one srvr showed for
   * a server the handle has a working session with.  A server that still
   * claims leadership with a lower one is a deposed leader (cut off
   * through an election, it has not noticed yet): writes sent there would
   * wait for a quorum it no longer has.  (Not the epoch of the handle's
   * replies: the new leader's own srvr may show its epoch a poll later
   * than its first reply.) */
  uint32_t floor = z->srvr_epoch;
  for (size_t i = 0; i < z->n; i++)
    if (polls[i].rc == ZOK && polls[i].reply.has_zxid && polls[i].reply.epoch > floor &&
        zkr__member_usable(&z->members[i]))
      floor = polls[i].reply.epoch;
  for (size_t i = 0; i < z->n; i++) {
    zkr__member_t *m = &z->members[i];
    zkr__srvr_reply_t *r = &polls[i].reply;
    int rc = polls[i].rc;
    if (polls[i].sent) m->srvr_polls++;
    else m->srvr_shared++;
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
      if (polls[i].sent) m->srvr_failures++;
      m->role = rc == ZKR_ESRVR_CONNECT || rc == ZKR_ESRVR_TIMEOUT ? ZKR_ROLE_UNREACHABLE
                                                                   : ZKR_ROLE_UNKNOWN;
      m->zxid = -1;
      continue;
    }
    m->role = r->role;
    m->zxid = r->has_zxid ? r->zxid : -1;
    if (r->has_zxid) m->last_zxid = r->zxid;
    /* The epoch floor of reads (zkr__policy_*) counts only servers the handle
     * has a working session with: srvr is untrusted input, and a server
     * that only claims a high epoch must not take every member out of the
     * read pool. */
    if (r->has_zxid && r->epoch > z->srvr_epoch && zkr__member_usable(m)) z->srvr_epoch = r->epoch;
    if (r->role != ZKR_ROLE_LEADER && r->role != ZKR_ROLE_STANDALONE) continue;
    /* Two members claiming leadership (one hung through an election): the
     * higher epoch is the real leader. */
    uint32_t epoch = r->has_zxid ? r->epoch : 0;
    int64_t zxid = r->has_zxid ? r->zxid : -1;
    if (epoch < floor) continue; /* deposed */
    if (best < 0 || epoch > best_epoch || (epoch == best_epoch && zxid > best_zxid)) {
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
    if (z->last_leader >= 0 && best != z->last_leader)
      zkr__log_event(z, ZOO_LOG_LEVEL_INFO, "leader_change", best,
                     "previous=%s epoch=%u reason=srvr", z->members[z->last_leader].address,
                     best_epoch);
    z->last_leader = best;
  }
  zkr__router_gate_adopt_leader(z);
  /* A new leader (or a write session back) may let parked writes go. */
  zkr__router_gate_flush(z);
  int settled = best >= 0;
  for (size_t i = 0; i < z->n && settled; i++) {
    zkr__member_t *m = &z->members[i];
    if (m->retired) continue;
    settled = polls[i].rc == ZOK && !m->suspect && (m->parked || zkr__member_connected(m));
  }
  return settled;
}
