/* Health: latency EWMA, ejection, probing and reinstatement of one pool of
 * members.  The model and every option are described in health.h and
 * docs/health.md.  Pure code: time comes in as nanoseconds from the
 * caller's clock and the caller holds the lock. */
#include "model/health.h"

#include <math.h>
#include <string.h>

#define NS_PER_MS 1000000ull

void zkr__health_cfg_defaults(zkr__health_cfg_t *c) {
  if (!c) return;
  if (c->half_life_ms == 0) c->half_life_ms = ZKR__HEALTH_DEF_HALF_LIFE_MS;
  if (c->eject_ratio == 0) c->eject_ratio = ZKR__HEALTH_DEF_EJECT_RATIO;
  if (c->readmit_ratio == 0) c->readmit_ratio = ZKR__HEALTH_DEF_READMIT_RATIO;
  if (c->readmit_ratio > c->eject_ratio) c->readmit_ratio = c->eject_ratio;
  if (c->eject_floor_ms == 0) c->eject_floor_ms = ZKR__HEALTH_DEF_EJECT_FLOOR_MS;
  if (c->min_samples == 0) c->min_samples = ZKR__HEALTH_DEF_MIN_SAMPLES;
  if (c->probe_ms == 0) c->probe_ms = ZKR__HEALTH_DEF_PROBE_MS;
  if (c->reinstate_k == 0) c->reinstate_k = ZKR__HEALTH_DEF_REINSTATE_K;
  if (c->eject_min_ms == 0) c->eject_min_ms = ZKR__HEALTH_DEF_EJECT_MIN_MS;
  if (c->eject_max_ms == 0) c->eject_max_ms = ZKR__HEALTH_DEF_EJECT_MAX_MS;
  if (c->eject_reset_ms == 0) c->eject_reset_ms = ZKR__HEALTH_DEF_EJECT_RESET_MS;
}

int zkr__health_cfg_valid(const zkr__health_cfg_t *c) {
  if (!c) return 0;
  if (!isfinite(c->half_life_ms) || c->half_life_ms <= 0) return 0;
  if (!isfinite(c->eject_ratio) || c->eject_ratio < 1) return 0;
  if (!isfinite(c->readmit_ratio) || c->readmit_ratio < 1 || c->readmit_ratio > c->eject_ratio)
    return 0;
  if (!isfinite(c->eject_floor_ms) || c->eject_floor_ms < 0) return 0;
  if (c->min_samples < 1 || c->probe_ms < 1 || c->reinstate_k < 1) return 0;
  if (c->eject_min_ms < 1 || c->eject_min_ms > c->eject_max_ms) return 0;
  if (c->eject_reset_ms < 1) return 0;
  return 1;
}

void zkr__health_init(zkr__health_t *h, uint64_t now_ns) {
  if (!h) return;
  memset(h, 0, sizeof *h);
  h->ewma_ms = -1.0;
  h->last_ns = now_ns;
  h->out_since_ns = now_ns;
  h->in_since_ns = now_ns;
  h->next_probe_ns = now_ns;
}

/* Forgets the samples behind the EWMA so the next one starts it over.
 * ewma_ms keeps its value for the stats until then; nothing judges it while
 * fresh is below min_samples. */
static void restart(zkr__health_t *h) {
  h->weight = 0;
  h->fresh = 0;
}

static void add_sample(zkr__health_t *h, const zkr__health_cfg_t *c, uint64_t now_ns, double ms) {
  if (!isfinite(ms) || ms < 0) return;
  if (h->weight > 0 && now_ns > h->last_ns) {
    double dt_ms = (double)(now_ns - h->last_ns) / (double)NS_PER_MS;
    h->weight *= exp2(-dt_ms / c->half_life_ms);
  }
  if (h->weight > 0) {
    h->weight += 1.0;
    h->ewma_ms += (ms - h->ewma_ms) / h->weight;
  } else {
    h->weight = 1.0;
    h->ewma_ms = ms;
  }
  /* A clock that steps back must not make the next decay huge. */
  if (now_ns > h->last_ns) h->last_ns = now_ns;
  h->samples++;
  h->fresh++;
}

void zkr__health_sample(zkr__health_t *h, const zkr__health_cfg_t *c, uint64_t now_ns,
                        double latency_ms) {
  if (!h || !c) return;
  add_sample(h, c, now_ns, latency_ms);
}

static uint64_t since(uint64_t now_ns, uint64_t then_ns) {
  return now_ns > then_ns ? now_ns - then_ns : 0;
}

static void join(zkr__health_t *h, uint64_t now_ns) {
  h->out_closed_ns += since(now_ns, h->out_since_ns);
  h->in_pool = 1;
  h->in_since_ns = now_ns;
  h->good_probes = 0;
}

static void leave(zkr__health_t *h, uint64_t now_ns) {
  h->in_pool = 0;
  h->out_since_ns = now_ns;
  h->good_probes = 0;
}

/* Minimum time out, in ms, of the streak-th ejection in a row. */
static uint64_t backoff_ms(const zkr__health_cfg_t *c, unsigned streak) {
  uint64_t ms = c->eject_min_ms;
  for (unsigned i = 1; i < streak && ms < c->eject_max_ms; i++) ms *= 2;
  return ms < c->eject_max_ms ? ms : c->eject_max_ms;
}

static void eject(zkr__health_t *h, const zkr__health_cfg_t *c, uint64_t now_ns) {
  int repeated =
      h->ejections > 0 && since(now_ns, h->in_since_ns) < (uint64_t)c->eject_reset_ms * NS_PER_MS;
  h->streak = repeated ? h->streak + 1 : 1;
  if (h->streak == 0) h->streak = 1; /* wrapped: stays at the cap anyway */
  h->ejections++;
  leave(h, now_ns);
  h->min_out_until_ns = now_ns + backoff_ms(c, h->streak) * NS_PER_MS;
  h->next_probe_ns = now_ns + (uint64_t)c->probe_ms * NS_PER_MS;
}

int zkr__health_set_usable(zkr__health_t *h, int usable, uint64_t now_ns) {
  if (!h) return 0;
  usable = usable != 0;
  if (usable == h->usable) return 0;
  h->usable = usable;
  h->good_probes = 0;
  if (!usable) {
    if (!h->in_pool) return 0;
    leave(h, now_ns);
    h->removals++;
    return 1;
  }
  if (!h->ever_connected) {
    h->ever_connected = 1;
    join(h, now_ns);
    return 1;
  }
  h->next_probe_ns = now_ns;
  return 0;
}

double zkr__health_threshold(const zkr__health_cfg_t *c, double median_ms) {
  double rel = c->eject_ratio * median_ms;
  double abs = median_ms + c->eject_floor_ms;
  return rel > abs ? rel : abs;
}

double zkr__health_readmit_threshold(const zkr__health_cfg_t *c, double median_ms) {
  double rel = c->readmit_ratio * median_ms;
  double abs = median_ms + c->eject_floor_ms;
  return rel > abs ? rel : abs;
}

typedef struct {
  double ewma;
  size_t i;
} ranked_t;

/* Sorts by EWMA, then by index, so results never depend on input order of
 * equal values.  n <= 64: insertion sort. */
static void sort_ranked(ranked_t *r, size_t n) {
  for (size_t i = 1; i < n; i++) {
    ranked_t x = r[i];
    size_t j = i;
    while (j > 0 && (r[j - 1].ewma > x.ewma || (r[j - 1].ewma == x.ewma && r[j - 1].i > x.i))) {
      r[j] = r[j - 1];
      j--;
    }
    r[j] = x;
  }
}

/* The in-pool members with enough samples to be judged, sorted; returns
 * their count and the count of all in-pool members in *in_pool. */
static size_t judged(zkr__health_t *const *m, size_t n, const zkr__health_cfg_t *c, ranked_t *r,
                     size_t *in_pool) {
  size_t k = 0, in = 0;
  if (n > ZKR__HEALTH_MAX_MEMBERS) n = ZKR__HEALTH_MAX_MEMBERS;
  for (size_t i = 0; i < n; i++) {
    const zkr__health_t *h = m[i];
    if (!h || !h->in_pool) continue;
    in++;
    if (h->fresh >= c->min_samples) {
      r[k].ewma = h->ewma_ms;
      r[k].i = i;
      k++;
    }
  }
  sort_ranked(r, k);
  if (in_pool) *in_pool = in;
  return k;
}

double zkr__health_pool_median(zkr__health_t *const *members, size_t n,
                               const zkr__health_cfg_t *c) {
  ranked_t r[ZKR__HEALTH_MAX_MEMBERS];
  if (!members || !c) return -1.0;
  size_t k = judged(members, n, c, r, NULL);
  return k ? r[(k - 1) / 2].ewma : -1.0;
}

/* Empty pool: the best usable member comes back at once. */
static int rescue(zkr__health_t *const *m, size_t n, uint64_t now_ns) {
  zkr__health_t *best = NULL;
  double best_ewma = 0;
  if (n > ZKR__HEALTH_MAX_MEMBERS) n = ZKR__HEALTH_MAX_MEMBERS;
  for (size_t i = 0; i < n; i++) {
    zkr__health_t *h = m[i];
    if (!h || !h->usable) continue;
    double e = h->fresh ? h->ewma_ms : 0.0;
    if (!best || e < best_ewma) {
      best = h;
      best_ewma = e;
    }
  }
  if (!best) return 0;
  join(best, now_ns);
  restart(best);
  return 1;
}

int zkr__health_evaluate(zkr__health_t *const *members, size_t n, const zkr__health_cfg_t *c,
                         uint64_t now_ns) {
  ranked_t r[ZKR__HEALTH_MAX_MEMBERS];
  size_t in;
  if (!members || !c) return 0;
  size_t k = judged(members, n, c, r, &in);
  if (in == 0) return rescue(members, n, now_ns);
  if (c->eject_off || in < 2 || k < 2) return 0;

  /* Only the slowest can qualify: it has the highest EWMA and, with itself
   * left out, the lowest reference.  The reference is the lower median of
   * the other k - 1, i.e. index (k - 2) / 2 of the sorted list, which the
   * slowest (at k - 1) never shifts. */
  double ref = r[(k - 2) / 2].ewma;
  if (r[k - 1].ewma <= zkr__health_threshold(c, ref)) return 0;
  eject(members[r[k - 1].i], c, now_ns);
  return 1;
}

int zkr__health_probe_due(const zkr__health_t *h, uint64_t now_ns) {
  return h && h->usable && !h->in_pool && !h->probe_in_flight && now_ns >= h->next_probe_ns;
}

void zkr__health_probe_sent(zkr__health_t *h, const zkr__health_cfg_t *c, uint64_t now_ns) {
  if (!h || !c) return;
  h->probe_in_flight = 1;
  h->probes++;
  h->next_probe_ns = now_ns + (uint64_t)c->probe_ms * NS_PER_MS;
}

int zkr__health_probe_result(zkr__health_t *h, const zkr__health_cfg_t *c, uint64_t now_ns,
                             double latency_ms, int ok, double pool_median_ms) {
  if (!h || !c) return 0;
  h->probe_in_flight = 0;
  if (ok && (!isfinite(latency_ms) || latency_ms < 0)) ok = 0;
  if (!ok) {
    h->good_probes = 0;
    return 0;
  }
  if (h->in_pool) { /* came back meanwhile (rescue): just a sample */
    add_sample(h, c, now_ns, latency_ms);
    return 0;
  }
  int good = pool_median_ms < 0 || latency_ms < zkr__health_readmit_threshold(c, pool_median_ms);
  if (!good) {
    add_sample(h, c, now_ns, latency_ms);
    h->good_probes = 0;
    return 0;
  }
  /* The EWMA of a member coming back is its run of good probes. */
  if (h->good_probes == 0) restart(h);
  add_sample(h, c, now_ns, latency_ms);
  h->good_probes++;
  h->probes_good++;
  if (h->usable && h->good_probes >= c->reinstate_k && now_ns >= h->min_out_until_ns) {
    join(h, now_ns);
    return 1;
  }
  return 0;
}

uint64_t zkr__health_out_ns(const zkr__health_t *h, uint64_t now_ns) {
  if (!h) return 0;
  return h->out_closed_ns + (h->in_pool ? 0 : since(now_ns, h->out_since_ns));
}
