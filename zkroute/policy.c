/* Policies: which member serves the next read or write (DESIGN.md section
 * 7).  hybrid sends writes to the leader and rotates reads over the read
 * pool (usable, healthy followers and observers); round_robin rotates every
 * operation over all usable members; leader_only uses the leader; sticky
 * keeps one random member, as the stock client does.  Every policy falls
 * back to any usable member rather than fail: the server forwards a write
 * it does not lead, at the cost of a hop. */
#include <stdlib.h>

#include "internal.h"

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

static int keep_usable(zkr_t *z, int i) {
  return zkr__member_usable(&z->members[i]);
}

/* Read candidates are followers and observers (and the leader when the
 * options put it in the pool): the members hybrid reads from, and the
 * members the health model compares with each other. */
int zkr__policy_read_candidate(zkr_t *z, const zkr__member_t *m) {
  int role = m->role;
  return role == ZKR_ROLE_FOLLOWER || role == ZKR_ROLE_OBSERVER ||
         (role == ZKR_ROLE_LEADER && z->opts.read_from_leader == 1);
}

static int keep_read_pool(zkr_t *z, int i) {
  zkr__member_t *m = &z->members[i];
  return zkr__policy_read_candidate(z, m) && zkr__member_in_pool(m);
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

int zkr__policy_read_member(zkr_t *z) {
  int m;
  switch (z->opts.policy) {
  case ZKR_POLICY_ROUND_ROBIN: return rotate(z, keep_usable);
  case ZKR_POLICY_STICKY: return sticky(z);
  case ZKR_POLICY_LEADER_ONLY:
    m = leader_usable(z);
    return m >= 0 ? m : rotate(z, keep_usable);
  default:
    m = rotate(z, keep_read_pool);
    if (m < 0) m = leader_usable(z);
    return m >= 0 ? m : rotate(z, keep_usable);
  }
}

/* Called with the write gate held (router.c), so gate_cur is stable. */
int zkr__policy_write_member(zkr_t *z) {
  int m;
  switch (z->opts.policy) {
  case ZKR_POLICY_ROUND_ROBIN: return rotate(z, keep_usable);
  case ZKR_POLICY_STICKY: return sticky(z);
  default:
    m = leader_usable(z);
    if (m >= 0) return m;
    /* Leader unknown or unreachable: stay on the current write session
     * while it works, else take any usable member. */
    if (z->gate_cur >= 0 && zkr__member_usable(&z->members[z->gate_cur]))
      return z->gate_cur;
    return rotate(z, keep_usable);
  }
}
