/* The read_members cap (fleet scale): configuration daemons run
 * by the thousand, mostly idle, and every member session costs the client
 * two threads and a socket and the servers a session with its pings.  With
 * read_members=N a handle keeps sessions only to the leader, the owner
 * session's member and the N best other members - in the read pool first,
 * then lowest latency EWMA; the owner's member is one of the N when it is
 * a follower in the read pool - and parks the rest: no session, no pings, but
 * still polled with srvr, so the leader is always known.
 *
 * The monitor re-chooses every tick, with a margin so that a noisy EWMA
 * does not swap members back and forth: a parked member is opened when the
 * chosen set needs it (the leader moved there, a kept member left the pool
 * or lost its session); a kept member that is no longer chosen is parked
 * once a replacement is usable and nothing is in flight on it.  Parking
 * closes the session (a carrier owns nothing but watches, which are set
 * again elsewhere, zkr__watch_rearm_*); the owner session is never parked.
 *
 * Idle parking: a handle that submitted no operation for idle_park_ms
 * takes idle_read_members as its cap (the smaller of the two when it has a
 * read_members of its own), so an idle fleet keeps two sessions a handle,
 * not one per member; the first operation after that lifts it, and the
 * next turn opens what the handle's own cap keeps (the operation itself
 * is served at once by a kept session).  docs/decisions.md says why. */
#include <math.h>
#include <stdlib.h>

#include "session/carriers.h"
#include "session/session.h"
#include "route/dispatch.h"
#include "core/handle.h"
#include "core/watch.h"
#include "zk/zkapi.h"

/* A kept member is parked only when a better one is this much better
 * (EWMA ratio), or not in the pool at all. */
#define SWAP_RATIO 1.5

/* The member's latency EWMA; a member never measured counts as slow, but
 * better than one that cannot serve (below). */
static double ewma_of(zkr__member_t *m) {
  pthread_mutex_lock(&m->health_mu);
  double e = m->health.ewma_ms;
  pthread_mutex_unlock(&m->health_mu);
  return e >= 0 && isfinite(e) ? e : 1e6;
}

/* A member worth reading from: its server serves (srvr) and, when it has a
 * session, that session is in the read pool. */
static int serving(const zkr__member_t *m) {
  int r = m->role;
  return r == ZKR_ROLE_FOLLOWER || r == ZKR_ROLE_OBSERVER || r == ZKR_ROLE_LEADER ||
         r == ZKR_ROLE_STANDALONE;
}

/* Whether the handle has been idle for idle_park_ms: no operation
 * submitted (app_ops unchanged) in that long, as the monitor saw it. */
static int idle_long(zkr_t *z, uint64_t now) {
  uint64_t ops = z->app_ops;
  if (z->carriers_active_ns == 0 || ops != z->carriers_ops) {
    z->carriers_ops = ops;
    z->carriers_active_ns = now;
    return 0;
  }
  return zkr__since(now, z->carriers_active_ns) >= (uint64_t)z->opts.idle_park_ms * 1000000u;
}

/* The cap that holds now: read_members, or idle_read_members when idle
 * (the smaller when both are set); 0 none. */
static int cap_now(zkr_t *z, uint64_t now) {
  int cap = z->opts.read_members, idle = z->opts.idle_read_members;
  if (idle > 0 && idle_long(z, now) && (cap <= 0 || idle < cap)) cap = idle;
  return cap;
}

/* Whether a member is parked: with no cap, what idle parking parked is
 * opened again. */
static int any_parked(const zkr_t *z) {
  for (size_t i = 0; i < z->n; i++)
    if (z->members[i].parked && !z->members[i].retired) return 1;
  return 0;
}

void zkr__carriers_tick(zkr_t *z, uint64_t now) {
  int cap = cap_now(z, now);
  if (z->expired || z->closing) return;
  size_t n = z->n;
  if (cap <= 0) {
    if (!any_parked(z)) return;
    cap = (int)n; /* no cap: every serving member */
  }
  int l = z->leader, o = z->owner;
  int keep[ZKR_MAX_MEMBERS] = {0};
  if (l >= 0) keep[l] = 1;
  if (o >= 0 && (size_t)o < n) keep[o] = 1;
  /* The N best others: kept members in the pool first (so a healthy one is
   * not swapped for a marginally faster one), then serving ones by EWMA. */
  /* Ties (idle handles have measured no member yet) go to the first in a
   * per-handle order: a fleet of handles spreads over the followers
   * instead of all choosing the first one. */
  size_t start = n ? (size_t)z->opts.seed % n : 0;
  /* The owner's member, when it serves reads (a follower in the pool), is
   * one of the N: its session cannot be parked, so choosing another one
   * besides it would keep a session more than the cap says - what a
   * fleet of idle handles whose owner landed on a follower paid (1,000
   * handles with read_members=1 kept 2.42 sessions each). */
  int k0 = 0;
  if (o >= 0 && (size_t)o < n && o != l) {
    zkr__member_t *om = &z->members[o];
    k0 = !om->parked && serving(om) && om->role != ZKR_ROLE_LEADER && zkr__member_in_pool(om);
  }
  for (int k = k0; k < cap; k++) {
    int best = -1;
    double best_score = INFINITY;
    for (size_t j = 0; j < n; j++) {
      size_t i = (start + j) % n;
      zkr__member_t *m = &z->members[i];
      if (keep[i] || m->retired || !serving(m) || m->role == ZKR_ROLE_LEADER) continue;
      /* Lower is better: a kept member in the pool keeps its place unless
       * a parked one is SWAP_RATIO faster; a kept member out of the pool
       * (ejected, disconnected) loses it to any serving parked one. */
      double score = ewma_of(m);
      if (!m->parked) score = zkr__member_in_pool(m) ? score / SWAP_RATIO : 1e9;
      if (score < best_score) {
        best_score = score;
        best = (int)i;
      }
    }
    if (best < 0) break;
    keep[best] = 1;
  }
  /* Open what is chosen and parked; park what is not chosen, once the
   * chosen are usable (no gap in the read pool) and it is idle. */
  int chosen_usable = 1;
  for (size_t i = 0; i < n; i++) {
    zkr__member_t *m = &z->members[i];
    if (!keep[i] || m->retired) continue;
    if (m->parked) {
      m->parked = 0;
      m->reopen = zkr__member_open(m, (int)i, NULL) != ZOK;
      chosen_usable = 0;
    } else if (!zkr__member_usable(m)) {
      chosen_usable = 0;
    }
  }
  if (!chosen_usable) return;
  int moved = 0;
  for (size_t i = 0; i < n; i++) {
    zkr__member_t *m = &z->members[i];
    if (keep[i] || m->parked || m->retired || (int)i == z->owner || m->outstanding > 0) continue;
    zhandle_t *zh = zkr__member_detach(m, 0);
    m->parked = 1;
    if (!zh) continue;
    zkr__zk->zookeeper_close(zh);
    zkr__dispatch_complete_dropped(z, zh);
    zkr__watch_rearm_from(z, (int)i, zh);
    moved = 1;
    pthread_mutex_lock(&m->health_mu);
    zkr__health_set_usable(&m->health, 0, zkr__now_ns());
    pthread_mutex_unlock(&m->health_mu);
  }
  /* Watches it held are on no server until their re-arms are answered:
   * the watch dip (session.c) shows that window, as it does for a lost
   * carrier - a node created and deleted inside it leaves no trace. */
  if (moved) zkr__session_update(z);
}
