/* Policies: which member serves the next read or write (DESIGN.md section
 * 7).  A read selector installed by the application (zkr__selector_*) is asked
 * first; its fallback is the policy.  hybrid sends writes to the leader and
 * rotates reads over the read pool (usable, healthy followers and
 * observers; with leader_read_weight the leader takes that share of the
 * reads); round_robin rotates every operation over all usable members;
 * leader_only uses the leader; sticky
 * keeps one random member, as the stock client does; boltzmann draws a
 * member for every operation from a softmax over the latency EWMAs (the
 * latency-adaptive comparator of the benchmark).  Every policy falls
 * back to any usable member rather than fail: the server forwards a write
 * it does not lead, at the cost of a hop. */
#include <math.h>
#include <stdlib.h>

#include "core/handle.h"
#include "core/policy.h"
#include "core/selector.h"

static int leader_usable(zkr_t *z) {
  int l = z->leader;
  return l >= 0 && zkr__member_usable(&z->members[l]) ? l : -1;
}

/* Rotates over the members for which keep() holds; -1 when none does. */
static int rotate(zkr_t *z, int (*keep)(zkr_t *, int)) {
  int cand[ZKR_MAX_MEMBERS], n = 0;
  for (size_t i = 0; i < z->n; i++)
    if (keep(z, (int)i)) cand[n++] = (int)i;
  if (n == 0) return -1;
  return cand[atomic_fetch_add(&z->rr, 1) % (unsigned)n];
}

static int keep_usable(zkr_t *z, int i) { return zkr__member_usable(&z->members[i]); }

/* Writes never go to an observer directly (it would forward them). */
/* A write - and a read ordered behind the handle's writes, which takes
 * the same gate - goes to no member srvr showed in an older epoch than the
 * handle knows (zkr__policy_epoch_current): a deposed leader, or a
 * follower still following one, cannot commit the write, and answers the
 * read from the old epoch's state. */
static int keep_writable(zkr_t *z, int i) {
  return keep_usable(z, i) && !zkr__member_observer(&z->members[i]) &&
         zkr__policy_epoch_current(z, &z->members[i]);
}

static int writable(zkr_t *z, int m) {
  return m >= 0 && keep_writable(z, m) ? m : rotate(z, keep_writable);
}

/* Read candidates are followers and observers (and the leader when the
 * options put it in the pool): the members hybrid reads from, and the
 * members the health model compares with each other. */
int zkr__policy_read_candidate(zkr_t *z, const zkr__member_t *m) {
  int role = m->role;
  return role == ZKR_ROLE_FOLLOWER || role == ZKR_ROLE_OBSERVER ||
         (role == ZKR_ROLE_LEADER &&
          (z->opts.read_from_leader == 1 || z->opts.leader_read_weight > 0));
}

/* A member may serve reads: its epoch (srvr's Zxid >> 32) is not below
 * the highest srvr showed for a member with a working session (a server
 * that only claims an epoch does not count), nor below the epoch of the highest
 * zxid the handle saw in a reply.  A follower still following a deposed
 * leader has its sync answered by that leader (ZOOKEEPER-1675) and would
 * serve old data.  When srvr does not answer now, the epoch it showed last
 * counts (a deposed leader that hangs still serves its old state to the
 * sessions it has); a member srvr never answered for does not exclude. */
int zkr__policy_epoch_current(zkr_t *z, const zkr__member_t *m) {
  int64_t zx = m->zxid;
  if (zx < 0) zx = m->last_zxid;
  if (zx < 0) return 1;
  uint32_t e = (uint32_t)((uint64_t)zx >> 32), floor = z->srvr_epoch;
  uint32_t seen = (uint32_t)((uint64_t)z->hwm_zxid >> 32);
  if (seen > floor) floor = seen;
  return e >= floor;
}

static int keep_read_pool(zkr_t *z, int i) {
  zkr__member_t *m = &z->members[i];
  return zkr__policy_read_candidate(z, m) && zkr__member_in_pool(m) &&
         zkr__policy_epoch_current(z, m);
}

/* Usable, and current (above): the policies that ignore the pool. */
static int keep_readable(zkr_t *z, int i) {
  return keep_usable(z, i) && zkr__policy_epoch_current(z, &z->members[i]);
}

/* With leader_read_weight, the leader's share is dealt by leader_share()
 * and the rotation covers the other members of the pool. */
static int keep_read_pool_but_leader(zkr_t *z, int i) {
  return z->members[i].role != ZKR_ROLE_LEADER && keep_read_pool(z, i);
}

/* leader_read_weight w: read number k goes to the leader when
 * floor((k + 1) w) > floor(k w), which gives it exactly the share w of
 * any long run, evenly spread (no random streaks), while it is in the
 * pool.  A leader the health model ejected gets none: its share goes to
 * the followers. */
static int leader_share(zkr_t *z) {
  double w = z->opts.leader_read_weight;
  unsigned k = atomic_fetch_add(&z->leader_rr, 1);
  if (floor((k + 1.0) * w) <= floor(k * w)) return -1;
  int l = z->leader;
  return l >= 0 && keep_read_pool(z, l) ? l : -1;
}

/* The sticky member, replaced by a random usable one when it is lost (the
 * stock client reconnects elsewhere and stays there). */
static int sticky(zkr_t *z) {
  int s = z->sticky;
  if (zkr__member_usable(&z->members[s])) return s;
  int cand[ZKR_MAX_MEMBERS], n = 0;
  for (size_t i = 0; i < z->n; i++)
    if (keep_usable(z, (int)i)) cand[n++] = (int)i;
  if (n == 0) return -1;
  unsigned seed = (unsigned)z->opts.seed + atomic_fetch_add(&z->rr, 1);
  s = cand[rand_r(&seed) % n];
  z->sticky = s;
  return s;
}

/* boltzmann: every operation, read or write, goes to a usable member drawn
 * with probability proportional to exp(-(ewma - best) / T), where ewma is
 * the member's sync+read latency EWMA (zkr__health_*), best the lowest EWMA of
 * the candidates and T the boltzmann_temperature option in ms.  A member
 * with no sample yet counts at the mean of those that have one (all equal
 * when none has), so a new member is neither shunned nor flooded.  It
 * ignores the read pool: ejection is hybrid's answer to a slow member,
 * and this policy is the comparator that answers with weights alone.  Its
 * samples come from its reads, as for every policy.  The draw hashes the
 * seed option with a shared counter: lock-free and reproducible. */

static int boltzmann(zkr_t *z) {
  int cand[ZKR_MAX_MEMBERS], n = 0, known = 0;
  double lat[ZKR_MAX_MEMBERS], w[ZKR_MAX_MEMBERS], sum = 0, best = INFINITY;
  for (size_t i = 0; i < z->n; i++) {
    if (!keep_usable(z, (int)i)) continue;
    zkr__member_t *m = &z->members[i];
    pthread_mutex_lock(&m->health_mu);
    double e = m->health.ewma_ms;
    pthread_mutex_unlock(&m->health_mu);
    if (e >= 0 && isfinite(e)) {
      sum += e;
      known++;
    } else {
      e = -1;
    }
    cand[n] = (int)i;
    lat[n++] = e;
  }
  if (n == 0) return -1;
  double mean = known ? sum / known : 0;
  for (int k = 0; k < n; k++) {
    if (lat[k] < 0) lat[k] = mean;
    if (lat[k] < best) best = lat[k];
  }
  double t = z->opts.boltzmann_temperature > 0 ? z->opts.boltzmann_temperature : 1.0;
  double total = 0;
  for (int k = 0; k < n; k++) total += w[k] = exp(-(lat[k] - best) / t);
  uint64_t r = zkr__mix64(((uint64_t)(unsigned)z->opts.seed << 32) ^ atomic_fetch_add(&z->rr, 1));
  double u = (double)(r >> 11) * 0x1p-53 * total;
  for (int k = 0; k < n; k++) {
    if (u < w[k]) return cand[k];
    u -= w[k];
  }
  return cand[n - 1];
}

static int keep_readonly(zkr_t *z, int i) { return zkr__member_readonly(&z->members[i]); }

/* A member connected to a read-only server, in turn, or -1. */
int zkr__policy_readonly_member(zkr_t *z) { return rotate(z, keep_readonly); }

/* Whether any member is connected to a read-only server. */
int zkr__policy_readonly_any(zkr_t *z) {
  for (size_t i = 0; i < z->n; i++)
    if (keep_readonly(z, (int)i)) return 1;
  return 0;
}

/* The member reads are placed on before consistency `session` sticks to
 * one (below). */
static int place_read(zkr_t *z);

int zkr__policy_read_member(zkr_t *z) {
  if (z->opts.consistency != ZKR_CONSISTENCY_SESSION) return place_read(z);
  /* Session consistency: reads stick to one member while it stays in the
   * read pool (or usable, for policies that ignore the pool), as a stock
   * session reads from its one server; a switch syncs (zkr__dispatch_*). */
  int r = z->session_reader;
  if (r >= 0 && (size_t)r < z->n &&
      (z->opts.policy == ZKR_POLICY_HYBRID ? keep_read_pool(z, r) : keep_readable(z, r)))
    return r;
  r = place_read(z);
  if (r >= 0) z->session_reader = r;
  return r;
}

static int place_read(zkr_t *z) {
  int m = zkr__selector_pick(z);
  if (m >= 0) return m;
  switch (z->opts.policy) {
  case ZKR_POLICY_ROUND_ROBIN: m = rotate(z, keep_readable); break;
  case ZKR_POLICY_BOLTZMANN: m = boltzmann(z); break;
  case ZKR_POLICY_STICKY: m = sticky(z); break;
  case ZKR_POLICY_LEADER_ONLY:
    m = leader_usable(z);
    if (m < 0) m = rotate(z, keep_readable);
    break;
  default:
    if (z->opts.leader_read_weight > 0) {
      if ((m = leader_share(z)) >= 0) return m;
      m = rotate(z, keep_read_pool_but_leader);
    } else {
      m = rotate(z, keep_read_pool);
    }
    /* No current member in the pool: the leader (the highest epoch srvr
     * showed), else any current member. */
    if (m < 0) m = leader_usable(z);
    if (m < 0) m = rotate(z, keep_readable);
    break;
  }
  /* No quorum anywhere, and the application allowed read-only servers
   * (ZOO_READONLY): a read-only member serves the read. */
  return m >= 0 ? m : zkr__policy_readonly_member(z);
}

/* The target of a hedge (zkr__hedger_*): a member of the read pool other than
 * exclude, drawn uniformly at random - not the fastest other member, so that
 * a fault shared by a zone and its fastest path does not catch both
 * requests every time.  -1 when the pool has no other member: a hedge does
 * not go to the leader, which reads avoid (read_from_leader). */
int zkr__policy_hedge_member(zkr_t *z, int exclude) {
  int cand[ZKR_MAX_MEMBERS], n = 0;
  for (size_t i = 0; i < z->n; i++)
    if ((int)i != exclude && keep_read_pool(z, (int)i)) cand[n++] = (int)i;
  if (n == 0) return -1;
  uint64_t r = zkr__mix64(((uint64_t)(unsigned)z->opts.seed << 32) ^
                          (0x68656467ULL + atomic_fetch_add(&z->hedge_draws, 1)));
  return cand[r % (uint64_t)n];
}

/* Called with the write gate held (zkr__router_*), so gate_cur is stable.
 * Whatever the policy, an observer never gets a write: another usable
 * member does, or the write waits (parked) until one is. */
int zkr__policy_write_member(zkr_t *z) {
  int m;
  switch (z->opts.policy) {
  case ZKR_POLICY_ROUND_ROBIN: return rotate(z, keep_writable);
  case ZKR_POLICY_BOLTZMANN: return writable(z, boltzmann(z));
  case ZKR_POLICY_STICKY: return writable(z, sticky(z));
  default:
    m = leader_usable(z);
    if (m >= 0 && !zkr__member_observer(&z->members[m])) return m;
    /* Leader unknown or unreachable: stay on the current write session
     * while it works, else take any usable member. */
    if (z->gate_cur >= 0 && keep_writable(z, z->gate_cur)) return z->gate_cur;
    return rotate(z, keep_writable);
  }
}

static int rotate_except(zkr_t *z, int (*keep)(zkr_t *, int), int exclude,
                         _Atomic unsigned *counter) {
  int cand[ZKR_MAX_MEMBERS], n = 0;
  for (size_t i = 0; i < z->n; i++)
    if ((int)i != exclude && keep(z, (int)i)) cand[n++] = (int)i;
  if (n == 0) return -1;
  return cand[atomic_fetch_add(counter, 1) % (unsigned)n];
}

/* Where a watch whose session was lost is set again (zkr__watch_rearm_*): a
 * member of the read pool other than exclude, in turn, else any usable
 * member; -1 when none is. */
int zkr__policy_any_member(zkr_t *z, int exclude) {
  int m = rotate_except(z, keep_read_pool, exclude, &z->rearm_rr);
  return m >= 0 ? m : rotate_except(z, keep_readable, exclude, &z->rearm_rr);
}
