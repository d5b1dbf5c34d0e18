/* Read selection by the application (docs/selectors.md): the zone label
 * of each member (the zones option, matched against the host list at
 * init), the user's read selector (zkr_set_read_selector) and the call
 * that asks it for a member, and the ready-made selectors p2c and
 * same_zone, which are pure functions of the member array they get. */
#include <math.h>
#include <string.h>
#include <strings.h>

#include "core/handle.h"
#include "model/options.h"
#include "core/policy.h"
#include "core/registry.h"
#include "core/selector.h"

_Thread_local int zkr__in_selector;

/* ---- zones ---- */

/* Whether member i is named by the one-member host list entry e: its
 * address, or the host list entry it was resolved from ("zk1:2181=a"
 * labels every address zk1 stands for).  Names compare ignoring case, IPv6
 * addresses as numbers, as the host list's own duplicate check does. */
static int names_member(zkr_t *z, size_t i, const zkr__host_t *e) {
  const zkr__host_t *h = &z->members[i].host;
  if (zkr__hosts_equal(h, e)) return 1;
  return h->entry >= 0 && (size_t)h->entry < z->hosts.n_entries &&
         zkr__hosts_equal(&z->hosts.entries[h->entry], e);
}

/* Labels every member that addr ("host:port" as in a host list) names.
 * Returns ZOK, ZKR_EZONES_MEMBER (none) or ZKR_EZONES_DUPLICATE. */
static int label_named(zkr_t *z, const char *addr, const char *label, size_t len) {
  zkr__hostlist_t one;
  int found = 0, rc = ZOK;
  if (zkr__hosts_parse(addr, &one) != ZOK) return ZKR_EZONES_MEMBER;
  if (one.n == 1 && !one.chroot) {
    for (size_t i = 0; i < z->n && rc == ZOK; i++) {
      if (!names_member(z, i, &one.v[0])) continue;
      if (z->members[i].zone[0]) rc = ZKR_EZONES_DUPLICATE;
      else memcpy(z->members[i].zone, label, len);
      found = 1;
    }
  }
  zkr__hosts_free(&one);
  return rc != ZOK ? rc : found ? ZOK : ZKR_EZONES_MEMBER;
}

/* Gives each member its label from the zones option (syntax already
 * checked by zkr__options_*).  Returns ZOK or a ZKR_EZONES_* code. */
static int zones_apply(zkr_t *z) {
  const char *s = z->opts.zones;
  char addr[ZKR__HOST_NAME_MAX + 16], label[32];
  size_t k = 0;
  int r;
  while ((r = zkr__options_zones_next(&s, addr, sizeof addr, label, sizeof label)) == 1) {
    if (addr[0]) {
      int rc = label_named(z, addr, label, sizeof label);
      if (rc != ZOK) return rc;
    } else if (k >= z->n) {
      return ZKR_EZONES_COUNT;
    } else {
      memcpy(z->members[k].zone, label, sizeof label);
    }
    k++;
  }
  if (r < 0) return ZKR_EOPTION_VALUE;
  /* The positional form labels every member. */
  if (k > 0 && !addr[0] && k != z->n) return ZKR_EZONES_COUNT;
  return ZOK;
}

int zkr__selector_init(zkr_t *z) { return zones_apply(z); }

/* ---- the user's selector ---- */

static int set_held(zkr_t *z, zkr_read_selector_fn fn, void *ctx) {
  if (z->closing) return ZKR_ECLOSING;
  pthread_rwlock_wrlock(&z->sel_lock);
  z->sel_fn = fn;
  z->sel_ctx = ctx;
  z->sel_on = fn != NULL;
  pthread_rwlock_unlock(&z->sel_lock);
  return ZOK;
}

int zkr_set_read_selector(zkr_t *z, zkr_read_selector_fn fn, void *ctx) {
  /* zkr__registry_hold refuses calls from inside a selector (ZKR_EINCALLBACK): the
   * write lock would wait for this very call to end. */
  ZKR__HELD(z, set_held(z, fn, ctx));
}

static void describe(zkr_t *z, zkr_member_info_t *v, size_t n) {
  int leader = z->leader;
  for (size_t i = 0; i < n; i++) {
    zkr__member_t *m = &z->members[i];
    zkr_member_info_t *d = &v[i];
    d->index = (int)i;
    d->address = m->address;
    d->role = (zkr_role_t)m->role;
    d->zone = m->zone;
    d->local = m->zone[0] && strcmp(m->zone, z->opts.local_zone) == 0;
    d->usable = zkr__member_usable(m);
    d->in_pool = d->usable && zkr__policy_read_candidate(z, m) && zkr__member_in_pool(m);
    d->is_leader = (int)i == leader;
    pthread_mutex_lock(&m->health_mu);
    double e = m->health.ewma_ms;
    pthread_mutex_unlock(&m->health_mu);
    d->ewma_ms = e >= 0 && isfinite(e) ? e : -1;
    d->outstanding = m->outstanding;
  }
}

int zkr__selector_pick(zkr_t *z) {
  if (!z->sel_on) return -1;
  zkr_member_info_t v[ZKR_MAX_MEMBERS];
  int pick = -1, asked = 0;
  pthread_rwlock_rdlock(&z->sel_lock);
  if (z->sel_fn) {
    /* One count for both: membership may publish a member meanwhile. */
    size_t n = z->n;
    describe(z, v, n);
    zkr__in_selector = 1;
    pick = z->sel_fn(v, (int)n, z->sel_ctx);
    zkr__in_selector = 0;
    asked = 1;
  }
  pthread_rwlock_unlock(&z->sel_lock);
  if (!asked) return -1;
  /* Usable now, not only when described: the session may have dropped. */
  if (pick < 0 || (size_t)pick >= z->n || !zkr__member_usable(&z->members[pick])) {
    z->sel_fallbacks++;
    return -1;
  }
  z->sel_picks++;
  z->members[pick].selected++;
  return pick;
}

/* ---- ready-made selectors ---- */

/* One random number per call: a hash of the seed and a counter advanced
 * atomically, so threads sharing a context never draw the same number and
 * a test with a fixed seed is exact. */
static uint64_t draw(zkr_selector_ctx_t *c) {
  static _Atomic uint64_t shared;
  if (!c) return zkr__mix64(atomic_fetch_add(&shared, 1));
  uint64_t k = __atomic_fetch_add(&c->draws, 1, __ATOMIC_RELAXED);
  return zkr__mix64(c->seed ^ zkr__mix64(k));
}

/* p2c over the pool members for which zone is NULL or matches (zone ""
 * means "flagged local").  Load = (outstanding + 1) x EWMA; members
 * without an EWMA count at the mean of the others (1 ms when none has
 * one), so a new member is neither shunned nor flooded. */
static int p2c(const zkr_member_info_t *m, int n, zkr_selector_ctx_t *c, const char *zone) {
  int cand[ZKR_MAX_MEMBERS], k = 0, known = 0;
  double sum = 0;
  if (!m || n <= 0) return -1;
  if (n > ZKR_MAX_MEMBERS) n = ZKR_MAX_MEMBERS;
  for (int i = 0; i < n; i++) {
    if (!m[i].in_pool) continue;
    if (zone && (zone[0] ? !m[i].zone || strcmp(m[i].zone, zone) != 0 : !m[i].local)) continue;
    cand[k++] = i;
    if (m[i].ewma_ms >= 0) {
      sum += m[i].ewma_ms;
      known++;
    }
  }
  if (k == 0) return -1;
  if (k == 1) return cand[0];
  double mean = known ? sum / known : 1.0;
  uint64_t r = draw(c);
  int a = cand[r % (uint64_t)k];
  int b = cand[(r / (uint64_t)k % (uint64_t)(k - 1) + r % (uint64_t)k + 1) % (uint64_t)k];
  double la = (m[a].outstanding + 1) * (m[a].ewma_ms >= 0 ? m[a].ewma_ms : mean);
  double lb = (m[b].outstanding + 1) * (m[b].ewma_ms >= 0 ? m[b].ewma_ms : mean);
  return lb < la ? b : a;
}

int zkr_selector_p2c(const zkr_member_info_t *members, int n, void *ctx) {
  return p2c(members, n, ctx, NULL);
}

int zkr_selector_same_zone(const zkr_member_info_t *members, int n, void *ctx) {
  zkr_selector_ctx_t *c = ctx;
  const char *zone = c && c->zone ? c->zone : "";
  if (c && c->zone && !c->zone[0]) return -1; /* no zone to prefer */
  return p2c(members, n, c, zone);
}
