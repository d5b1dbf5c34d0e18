/* Unit tests of the health module (zkroute/model/health.c): EWMA arithmetic,
 * ejection, probing, reinstatement, backoff and time accounting, all
 * driven by a fake clock.  No server needed. */
#include <check.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "model/health.h"

#define MS(x) ((uint64_t)((x)*1000000.0 + 0.5))
#define SEC(x) MS((x)*1000.0)
#define TOL 1e-12

/* ---- helpers ---- */

/* A fixed-seed generator (splitmix64) so every run sees the same numbers
 * whatever the libc. */
static uint64_t rng_state;
static void rng_seed(uint64_t s) { rng_state = s; }
static double rng_unit(void) {
  uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  z ^= z >> 31;
  return (double)(z >> 11) / 9007199254740992.0; /* [0, 1) */
}
static double rng_range(double lo, double hi) { return lo + (hi - lo) * rng_unit(); }

typedef struct {
  size_t n;
  zkr__health_t h[8];
  zkr__health_t *p[8];
  zkr__health_cfg_t c;
} pool_t;

/* n members, all connected at now (so all in the pool), default options. */
static void pool_init(pool_t *pl, size_t n, uint64_t now) {
  pl->n = n;
  zkr__health_cfg_t c = {0};
  zkr__health_cfg_defaults(&c);
  pl->c = c;
  for (size_t i = 0; i < n; i++) {
    zkr__health_init(&pl->h[i], now);
    pl->p[i] = &pl->h[i];
    ck_assert_int_eq(zkr__health_set_usable(&pl->h[i], 1, now), 1);
    ck_assert(pl->h[i].in_pool);
  }
}

static int pool_eval(pool_t *pl, uint64_t now) {
  return zkr__health_evaluate(pl->p, pl->n, &pl->c, now);
}

static double pool_median(pool_t *pl) { return zkr__health_pool_median(pl->p, pl->n, &pl->c); }

static size_t pool_count(const pool_t *pl) {
  size_t k = 0;
  for (size_t i = 0; i < pl->n; i++) k += pl->h[i].in_pool != 0;
  return k;
}

static void feed(pool_t *pl, size_t i, uint64_t now, double ms, int times) {
  for (int t = 0; t < times; t++) zkr__health_sample(&pl->h[i], &pl->c, now, ms);
}

/* Sends a probe of member i at now, completing at once with latency ms. */
static int probe(pool_t *pl, size_t i, uint64_t now, double ms, int ok) {
  ck_assert(zkr__health_probe_due(&pl->h[i], now));
  zkr__health_probe_sent(&pl->h[i], &pl->c, now);
  return zkr__health_probe_result(&pl->h[i], &pl->c, now, ms, ok, pool_median(pl));
}

/* Two members judged at 0.3 ms, then member 1 ejected at now (10 slow
 * samples at one instant). */
static void eject_member1(pool_t *pl, uint64_t now) {
  feed(pl, 0, now, 0.3, 20);
  feed(pl, 1, now, 16.0, 20);
  ck_assert_int_eq(pool_eval(pl, now), 1);
  ck_assert(!pl->h[1].in_pool);
  ck_assert(pl->h[0].in_pool);
}

/* ---- options ---- */

START_TEST(test_cfg_defaults) {
  zkr__health_cfg_t c = {0};
  zkr__health_cfg_defaults(&c);
  ck_assert_double_eq(c.half_life_ms, 1000.0);
  ck_assert_double_eq(c.eject_ratio, 3.0);
  ck_assert_double_eq(c.eject_floor_ms, 2.0);
  ck_assert_double_eq(c.readmit_ratio, 2.0);
  ck_assert_uint_eq(c.min_samples, 10);
  ck_assert_uint_eq(c.probe_ms, 200);
  ck_assert_uint_eq(c.reinstate_k, 3);
  ck_assert_uint_eq(c.eject_min_ms, 1000);
  ck_assert_uint_eq(c.eject_max_ms, 30000);
  ck_assert_uint_eq(c.eject_reset_ms, 30000);
  ck_assert_int_eq(c.eject_off, 0);
  ck_assert(zkr__health_cfg_valid(&c));

  zkr__health_cfg_t d = {.half_life_ms = 250, .eject_ratio = 2, .min_samples = 4, .reinstate_k = 1};
  zkr__health_cfg_defaults(&d);
  ck_assert_double_eq(d.half_life_ms, 250);
  ck_assert_double_eq(d.eject_ratio, 2);
  ck_assert_double_eq(d.readmit_ratio, 2); /* default, not above eject */
  ck_assert_double_eq(d.eject_floor_ms, 2.0);
  ck_assert_uint_eq(d.min_samples, 4);
  ck_assert_uint_eq(d.reinstate_k, 1);
  ck_assert_uint_eq(d.probe_ms, 200);
  ck_assert(zkr__health_cfg_valid(&d));

  zkr__health_cfg_t bad = c;
  bad.eject_ratio = 0.5;
  ck_assert(!zkr__health_cfg_valid(&bad));
  bad = c;
  bad.readmit_ratio = 3.5; /* above eject_ratio: no hysteresis but inverted */
  ck_assert(!zkr__health_cfg_valid(&bad));
  bad = c;
  bad.readmit_ratio = 0.9;
  ck_assert(!zkr__health_cfg_valid(&bad));
  zkr__health_cfg_t capped = {.eject_ratio = 1.5};
  zkr__health_cfg_defaults(&capped); /* default 2 capped at eject_ratio */
  ck_assert_double_eq(capped.readmit_ratio, 1.5);
  ck_assert(zkr__health_cfg_valid(&capped));
  bad = c;
  bad.half_life_ms = -1;
  ck_assert(!zkr__health_cfg_valid(&bad));
  bad = c;
  bad.half_life_ms = NAN;
  ck_assert(!zkr__health_cfg_valid(&bad));
  bad = c;
  bad.eject_floor_ms = -0.1;
  ck_assert(!zkr__health_cfg_valid(&bad));
  bad = c;
  bad.eject_min_ms = 40000;
  ck_assert(!zkr__health_cfg_valid(&bad));
  ck_assert(!zkr__health_cfg_valid(NULL));
  zkr__health_cfg_defaults(NULL); /* no crash */
}
END_TEST

START_TEST(test_threshold) {
  zkr__health_cfg_t c = {0};
  zkr__health_cfg_defaults(&c);
  /* Loopback median: the floor decides. */
  ck_assert_double_eq_tol(zkr__health_threshold(&c, 0.3), 2.3, TOL);
  /* 1 ms: both give 3. */
  ck_assert_double_eq_tol(zkr__health_threshold(&c, 1.0), 3.0, TOL);
  /* Larger medians: the ratio decides. */
  ck_assert_double_eq_tol(zkr__health_threshold(&c, 4.0), 12.0, TOL);
}
END_TEST

/* ---- EWMA arithmetic, checked against hand computations ---- */

START_TEST(test_ewma_math) {
  zkr__health_cfg_t c = {0};
  zkr__health_cfg_defaults(&c); /* half-life 1000 ms */
  zkr__health_t h;
  zkr__health_init(&h, 0);
  ck_assert_double_eq(h.ewma_ms, -1.0);
  ck_assert_uint_eq(h.samples, 0);

  /* First sample is the mean. */
  zkr__health_sample(&h, &c, 0, 2.0);
  ck_assert_double_eq_tol(h.ewma_ms, 2.0, TOL);
  ck_assert_double_eq_tol(h.weight, 1.0, TOL);

  /* One half-life later: old weight 0.5, S = 1 + 4, W = 1.5. */
  zkr__health_sample(&h, &c, SEC(1), 4.0);
  ck_assert_double_eq_tol(h.weight, 1.5, TOL);
  ck_assert_double_eq_tol(h.ewma_ms, 5.0 / 1.5, TOL);

  /* Another: S = 2*0.25 + 4*0.5 + 1 = 3.5, W = 1.75, mean 2. */
  zkr__health_sample(&h, &c, SEC(2), 1.0);
  ck_assert_double_eq_tol(h.weight, 1.75, TOL);
  ck_assert_double_eq_tol(h.ewma_ms, 2.0, TOL);

  /* Same instant (a burst): no decay, each sample counts fully.
   * S = 3.5 + 5 = 8.5, W = 2.75. */
  zkr__health_sample(&h, &c, SEC(2), 5.0);
  ck_assert_double_eq_tol(h.weight, 2.75, TOL);
  ck_assert_double_eq_tol(h.ewma_ms, 8.5 / 2.75, TOL);
  ck_assert_uint_eq(h.samples, 4);
  ck_assert_uint_eq(h.fresh, 4);
  ck_assert_uint_eq(h.last_ns, SEC(2));

  /* Ignored: negative, NaN and infinite latencies. */
  zkr__health_sample(&h, &c, SEC(3), -1.0);
  zkr__health_sample(&h, &c, SEC(3), NAN);
  zkr__health_sample(&h, &c, SEC(3), INFINITY);
  ck_assert_uint_eq(h.samples, 4);
  ck_assert_double_eq_tol(h.ewma_ms, 8.5 / 2.75, TOL);
  ck_assert_uint_eq(h.last_ns, SEC(2));

  /* A long silence (10 half-lives): the old mean weighs 2^-10 of its
   * weight.  S = 8.5/1024 + 0, W = 2.75/1024 + 1. */
  zkr__health_sample(&h, &c, SEC(12), 0.0);
  ck_assert_double_eq_tol(h.weight, 2.75 / 1024 + 1, TOL);
  ck_assert_double_eq_tol(h.ewma_ms, (8.5 / 1024) / (2.75 / 1024 + 1), TOL);

  /* A clock that steps back: no decay, no change of last_ns. */
  double w = h.weight, e = h.ewma_ms;
  zkr__health_sample(&h, &c, SEC(11), 1.0);
  ck_assert_double_eq_tol(h.weight, w + 1, TOL);
  ck_assert_double_eq_tol(h.ewma_ms, (e * w + 1.0) / (w + 1), TOL);
  ck_assert_uint_eq(h.last_ns, SEC(12));
}
END_TEST

/* Evenly spaced samples: the weight converges to 1 / (1 - d) with
 * d = 2^(-dt/H), so each new sample gets alpha = 1 - d, the classic
 * time-based EWMA. */
START_TEST(test_ewma_matches_classic_alpha) {
  zkr__health_cfg_t c = {.half_life_ms = 500};
  zkr__health_cfg_defaults(&c);
  zkr__health_t h;
  zkr__health_init(&h, 0);
  double d = exp2(-100.0 / 500.0), alpha = 1 - d;
  uint64_t t = 0;
  for (int i = 0; i < 2000; i++, t += MS(100)) zkr__health_sample(&h, &c, t, 1.0);
  ck_assert_double_eq_tol(h.weight, 1 / (1 - d), 1e-9);
  double classic = h.ewma_ms;
  for (int i = 0; i < 50; i++, t += MS(100)) {
    double x = (i % 7) * 0.5;
    zkr__health_sample(&h, &c, t, x);
    classic += alpha * (x - classic);
    ck_assert_double_eq_tol(h.ewma_ms, classic, 1e-9);
  }
}
END_TEST

/* ---- pool median ---- */

START_TEST(test_pool_median) {
  pool_t pl;
  pool_init(&pl, 5, 0);
  ck_assert_double_eq(pool_median(&pl), -1.0); /* nobody judged yet */
  feed(&pl, 0, 0, 1.0, 10);
  feed(&pl, 1, 0, 4.0, 10);
  feed(&pl, 2, 0, 2.0, 10);
  feed(&pl, 3, 0, 3.0, 10);
  feed(&pl, 4, 0, 100.0, 9); /* not judged: 9 < min_samples */
  /* {1, 2, 3, 4}: lower median 2. */
  ck_assert_double_eq_tol(pool_median(&pl), 2.0, TOL);
  feed(&pl, 4, 0, 100.0, 1);
  /* {1, 2, 3, 4, 100}: 3. */
  ck_assert_double_eq_tol(pool_median(&pl), 3.0, TOL);
  zkr__health_set_usable(&pl.h[2], 0, MS(1)); /* out: {1, 3, 4, 100} */
  ck_assert_double_eq_tol(pool_median(&pl), 3.0, TOL);
  zkr__health_set_usable(&pl.h[3], 0, MS(1)); /* {1, 4, 100} */
  ck_assert_double_eq_tol(pool_median(&pl), 4.0, TOL);
  ck_assert_double_eq(zkr__health_pool_median(NULL, 5, &pl.c), -1.0);
}
END_TEST

/* ---- ejection ---- */

/* Load: one read per ms alternating between two followers.  After 10 s
 * (the EWMA weight is then at its steady state) the second goes from
 * 0.3 ms to 16.3 ms (8 ms each way).  It must go once its EWMA crosses
 * 2.3 ms: 2/16 of the weight, 1 - 2^(-x) = 0.125, x = 0.193 half-lives,
 * i.e. its 97th slow sample, 1 + 96 * 2 ms after the step. */
START_TEST(test_eject_slow_member) {
  pool_t pl;
  const uint64_t step = SEC(10);
  pool_init(&pl, 2, 0);
  uint64_t t = 0, ejected_at = 0;
  for (int i = 0; i < 20000 && !ejected_at; i++, t += MS(1)) {
    size_t m = (size_t)i % 2;
    double lat = (m == 1 && t >= step) ? 16.3 : 0.3;
    zkr__health_sample(&pl.h[m], &pl.c, t, lat);
    if (pool_eval(&pl, t)) ejected_at = t;
  }
  ck_assert_uint_ge(ejected_at, step);
  ck_assert(!pl.h[1].in_pool);
  ck_assert(pl.h[0].in_pool);
  ck_assert_uint_eq(pl.h[1].ejections, 1);
  ck_assert_uint_eq(pl.h[1].removals, 0);
  ck_assert_uint_eq(ejected_at, step + MS(1 + 96 * 2));
  ck_assert_uint_eq(pl.h[1].min_out_until_ns, ejected_at + SEC(1));
  ck_assert_uint_eq(pl.h[1].next_probe_ns, ejected_at + MS(200));
  ck_assert_double_gt(pl.h[1].ewma_ms, 2.3);
}
END_TEST

/* Judging needs min_samples on the member and on a reference. */
START_TEST(test_eject_needs_min_samples) {
  pool_t pl;
  pool_init(&pl, 2, 0);
  for (int i = 0; i < 9; i++) {
    feed(&pl, 0, MS(i), 0.3, 1);
    feed(&pl, 1, MS(i), 50.0, 1);
    ck_assert_int_eq(pool_eval(&pl, MS(i)), 0);
  }
  feed(&pl, 0, MS(9), 0.3, 1); /* reference judged, member not yet */
  ck_assert_int_eq(pool_eval(&pl, MS(9)), 0);
  feed(&pl, 1, MS(9), 50.0, 1); /* tenth sample */
  ck_assert_int_eq(pool_eval(&pl, MS(9)), 1);
  ck_assert(!pl.h[1].in_pool);

  /* No judged reference: no ejection however slow. */
  pool_init(&pl, 2, 0);
  feed(&pl, 0, 0, 0.3, 9);
  feed(&pl, 1, 0, 500.0, 100);
  ck_assert_int_eq(pool_eval(&pl, 0), 0);
  ck_assert_uint_eq(pool_count(&pl), 2);
}
END_TEST

/* Both thresholds must be exceeded, strictly. */
START_TEST(test_eject_both_thresholds) {
  pool_t pl;
  /* 2.0 vs 0.3: 6.7x the median but only 1.7 ms above it: stays. */
  pool_init(&pl, 2, 0);
  feed(&pl, 0, 0, 0.3, 10);
  feed(&pl, 1, 0, 2.0, 10);
  ck_assert_int_eq(pool_eval(&pl, 0), 0);
  /* 11 vs 4: 7 ms above but under 3x: stays. */
  pool_init(&pl, 2, 0);
  feed(&pl, 0, 0, 4.0, 10);
  feed(&pl, 1, 0, 11.0, 10);
  ck_assert_int_eq(pool_eval(&pl, 0), 0);
  /* Exactly 3x and exactly +floor (1 vs 3): not exceeded, stays. */
  pool_init(&pl, 2, 0);
  feed(&pl, 0, 0, 1.0, 10);
  feed(&pl, 1, 0, 3.0, 10);
  ck_assert_int_eq(pool_eval(&pl, 0), 0);
  /* 12.5 vs 4: both exceeded. */
  pool_init(&pl, 2, 0);
  feed(&pl, 0, 0, 4.0, 10);
  feed(&pl, 1, 0, 12.5, 10);
  ck_assert_int_eq(pool_eval(&pl, 0), 1);
  ck_assert(!pl.h[1].in_pool);
}
END_TEST

/* Healthy ensemble, 1 ms +- 0.5 ms on every link, 60 simulated seconds:
 * never an ejection, dense or sparse load, 2 or 3 followers.  With one link
 * per sample (0.5..1.5 ms) no EWMA can be 2 ms above another; with the four
 * links of a sync+read through a follower (2..6 ms) none can be more than
 * 3x another.  The floor and the ratio make this hold by construction. */
static void jitter_run(size_t n, int links, int sparse, uint64_t seed) {
  pool_t pl;
  rng_seed(seed);
  pool_init(&pl, n, 0);
  uint64_t next[8] = {0};
  size_t evals = 0, changes = 0;
  for (uint64_t t = 0; t <= SEC(60); t += MS(1)) {
    for (size_t m = 0; m < n; m++) {
      if (t < next[m]) continue;
      double lat = 0;
      for (int l = 0; l < links; l++) lat += rng_range(0.5, 1.5);
      zkr__health_sample(&pl.h[m], &pl.c, t, lat);
      changes += (size_t)pool_eval(&pl, t);
      evals++;
      next[m] = t + (sparse ? MS(rng_range(1, 2000)) : MS(1));
    }
  }
  ck_assert_uint_eq(changes, 0);
  for (size_t m = 0; m < n; m++) {
    ck_assert(pl.h[m].in_pool);
    ck_assert_uint_eq(pl.h[m].ejections, 0);
    ck_assert_uint_eq(zkr__health_out_ns(&pl.h[m], SEC(60)), 0);
  }
  ck_assert_uint_gt(evals, sparse ? 30 * n : 60000 * n);
}

START_TEST(test_no_eject_under_jitter) {
  jitter_run(2, 1, 0, 42);
  jitter_run(3, 1, 0, 43);
  jitter_run(2, 4, 0, 44);
  jitter_run(3, 4, 0, 45);
  jitter_run(2, 1, 1, 46);
  jitter_run(3, 1, 1, 47);
  jitter_run(2, 4, 1, 48);
  jitter_run(3, 4, 1, 49);
}
END_TEST

START_TEST(test_never_eject_last) {
  pool_t pl;
  pool_init(&pl, 2, 0);
  feed(&pl, 0, 0, 0.3, 10);
  feed(&pl, 1, 0, 0.3, 10);
  /* The other member disconnects: the slow one is the whole pool. */
  zkr__health_set_usable(&pl.h[1], 0, MS(1));
  feed(&pl, 0, MS(2), 500.0, 100);
  ck_assert_int_eq(pool_eval(&pl, MS(2)), 0);
  ck_assert(pl.h[0].in_pool);

  /* Two members: the slow one goes, then the other may be as slow as it
   * likes. */
  pool_init(&pl, 2, 0);
  eject_member1(&pl, 0);
  feed(&pl, 0, MS(1), 1000.0, 1000);
  int changes = 0;
  for (uint64_t t = MS(1); t < SEC(10); t += MS(10)) changes += pool_eval(&pl, t);
  ck_assert_int_eq(changes, 0);
  ck_assert(pl.h[0].in_pool);
  ck_assert_uint_eq(pl.h[0].ejections, 0);
}
END_TEST

START_TEST(test_both_slow_keeps_better) {
  pool_t pl;
  int changes = 0;
  pool_init(&pl, 2, 0);
  /* 16 ms and 10 ms: both slow, neither 3x the other: both stay. */
  for (uint64_t t = 0; t < SEC(10); t += MS(1)) {
    feed(&pl, 0, t, 16.0, 1);
    feed(&pl, 1, t, 10.0, 1);
    changes += pool_eval(&pl, t);
  }
  ck_assert_int_eq(changes, 0);
  /* The first gets much worse: it goes, the better one stays for good. */
  uint64_t t = SEC(10);
  for (; pl.h[0].in_pool && t < SEC(20); t += MS(1)) {
    feed(&pl, 0, t, 60.0, 1);
    feed(&pl, 1, t, 10.0, 1);
    pool_eval(&pl, t);
  }
  ck_assert(!pl.h[0].in_pool);
  ck_assert(pl.h[1].in_pool);
  for (; t < SEC(30); t += MS(1)) {
    feed(&pl, 1, t, 200.0, 1);
    changes += pool_eval(&pl, t);
  }
  ck_assert_int_eq(changes, 0);
  ck_assert(pl.h[1].in_pool);

  /* Three followers, two slow: compared with the lower median of the
   * others, both slow ones go (one per call), the fast one stays. */
  pool_init(&pl, 3, 0);
  feed(&pl, 0, 0, 16.0, 10);
  feed(&pl, 1, 0, 0.3, 10);
  feed(&pl, 2, 0, 17.0, 10);
  ck_assert_double_eq_tol(pool_median(&pl), 16.0, TOL);
  ck_assert_int_eq(pool_eval(&pl, 0), 1);
  ck_assert(!pl.h[2].in_pool); /* the slowest first */
  ck_assert(pl.h[0].in_pool);
  ck_assert_int_eq(pool_eval(&pl, 0), 1);
  ck_assert(!pl.h[0].in_pool);
  ck_assert(pl.h[1].in_pool);
  ck_assert_int_eq(pool_eval(&pl, 0), 0);
}
END_TEST

START_TEST(test_eject_off) {
  pool_t pl;
  pool_init(&pl, 2, 0);
  pl.c.eject_off = 1;
  feed(&pl, 0, 0, 0.3, 50);
  feed(&pl, 1, 0, 500.0, 50);
  ck_assert_int_eq(pool_eval(&pl, 0), 0);
  ck_assert_uint_eq(pool_count(&pl), 2);
  ck_assert_int_eq(zkr__health_set_usable(&pl.h[1], 0, MS(1)), 1);
  ck_assert(!pl.h[1].in_pool);
}
END_TEST

/* ---- probing and reinstatement ---- */

START_TEST(test_probe_cadence) {
  pool_t pl;
  pool_init(&pl, 2, 0);
  zkr__health_t *b = &pl.h[1];
  uint64_t te = SEC(1);
  ck_assert(!zkr__health_probe_due(b, te)); /* in the pool */
  eject_member1(&pl, te);
  ck_assert(!zkr__health_probe_due(&pl.h[0], te + SEC(5))); /* in pool */
  ck_assert(!zkr__health_probe_due(b, te));
  ck_assert(!zkr__health_probe_due(b, te + MS(199.999)));
  ck_assert(zkr__health_probe_due(b, te + MS(200)));
  zkr__health_probe_sent(b, &pl.c, te + MS(200));
  ck_assert_uint_eq(b->probes, 1);
  /* In flight: not due, even when the period passed. */
  ck_assert(!zkr__health_probe_due(b, te + MS(250)));
  ck_assert(!zkr__health_probe_due(b, te + MS(450)));
  /* A late reply: the next one is due at once (200 ms after the last was
   * sent). */
  zkr__health_probe_result(b, &pl.c, te + MS(450), 16.0, 1, pool_median(&pl));
  ck_assert(zkr__health_probe_due(b, te + MS(450)));
  zkr__health_probe_sent(b, &pl.c, te + MS(450));
  zkr__health_probe_result(b, &pl.c, te + MS(451), 16.0, 1, pool_median(&pl));
  ck_assert(!zkr__health_probe_due(b, te + MS(649)));
  ck_assert(zkr__health_probe_due(b, te + MS(650)));
  /* Not usable: not due. */
  zkr__health_set_usable(b, 0, te + MS(650));
  ck_assert(!zkr__health_probe_due(b, te + SEC(10)));
  ck_assert(!zkr__health_probe_due(NULL, te));
  /* A slow probe is a sample too. */
  ck_assert_uint_eq(b->samples, 22);
}
END_TEST

START_TEST(test_reinstate_after_k_good_probes) {
  pool_t pl;
  pool_init(&pl, 2, 0);
  zkr__health_t *b = &pl.h[1];
  eject_member1(&pl, 0);
  /* Good probes during the minimum time out count but do not reinstate. */
  ck_assert_int_eq(probe(&pl, 1, MS(200), 0.4, 1), 0);
  ck_assert_int_eq(probe(&pl, 1, MS(400), 0.4, 1), 0);
  ck_assert_int_eq(probe(&pl, 1, MS(600), 0.4, 1), 0);
  ck_assert_int_eq(probe(&pl, 1, MS(800), 0.4, 1), 0);
  ck_assert_uint_eq(b->good_probes, 4);
  ck_assert(!b->in_pool);
  /* The first good one once the minimum time out passed. */
  ck_assert_int_eq(probe(&pl, 1, MS(1000), 0.4, 1), 1);
  ck_assert(b->in_pool);
  ck_assert_uint_eq(b->good_probes, 0);
  ck_assert_uint_eq(b->probes_good, 5);
  /* Its EWMA is the run of good probes, not the 16 ms that ejected it. */
  ck_assert_double_eq_tol(b->ewma_ms, 0.4, TOL);
  ck_assert_uint_eq(b->fresh, 5);
  ck_assert_uint_eq(b->samples, 25);
  ck_assert_uint_eq(zkr__health_out_ns(b, SEC(5)), SEC(1));
  /* Not judged again before min_samples samples. */
  feed(&pl, 1, MS(1001), 16.0, 4);
  ck_assert_int_eq(pool_eval(&pl, MS(1001)), 0);
  feed(&pl, 1, MS(1001), 16.0, 1);
  ck_assert_int_eq(pool_eval(&pl, MS(1001)), 1);
  ck_assert_uint_eq(b->ejections, 2);

  /* Probes good only after the minimum time out: back at the k-th. */
  pool_init(&pl, 2, 0);
  eject_member1(&pl, 0);
  uint64_t t = MS(200);
  for (; t <= MS(1200); t += MS(200)) ck_assert_int_eq(probe(&pl, 1, t, 16.0, 1), 0);
  ck_assert_int_eq(probe(&pl, 1, t, 0.3, 1), 0);
  ck_assert_int_eq(probe(&pl, 1, t + MS(200), 0.3, 1), 0);
  ck_assert_int_eq(probe(&pl, 1, t + MS(400), 0.3, 1), 1);
  ck_assert(pl.h[1].in_pool);
  ck_assert_double_eq_tol(pl.h[1].ewma_ms, 0.3, TOL);
}
END_TEST

/* Hysteresis: a member that was ejected at more than 3x the pool median
 * needs probes under 2x to come back.  The scene of docs/benchmarks.md
 * section 4.2: healthy members at 12 ms under load, the degraded one's
 * probes at 30 ms (2.5x): never readmitted, where with one threshold
 * (36 ms) it would be back after three probes. */
START_TEST(test_readmit_hysteresis) {
  pool_t pl;
  pool_init(&pl, 3, 0);
  feed(&pl, 0, 0, 12.0, 20);
  feed(&pl, 1, 0, 12.0, 20);
  feed(&pl, 2, 0, 40.0, 20);
  ck_assert_int_eq(pool_eval(&pl, 0), 1);
  ck_assert(!pl.h[2].in_pool);
  ck_assert_double_eq_tol(zkr__health_readmit_threshold(&pl.c, 12.0), 24.0, TOL);
  ck_assert_double_eq_tol(zkr__health_threshold(&pl.c, 12.0), 36.0, TOL);
  uint64_t t = SEC(1); /* minimum time out over */
  for (int i = 0; i < 10; i++, t += MS(200)) ck_assert_int_eq(probe(&pl, 2, t, 30.0, 1), 0);
  ck_assert(!pl.h[2].in_pool);
  ck_assert_uint_eq(pl.h[2].good_probes, 0);
  /* Under 24 ms: back after reinstate_k probes. */
  ck_assert_int_eq(probe(&pl, 2, t, 20.0, 1), 0);
  ck_assert_int_eq(probe(&pl, 2, t + MS(200), 20.0, 1), 0);
  ck_assert_int_eq(probe(&pl, 2, t + MS(400), 20.0, 1), 1);
  ck_assert(pl.h[2].in_pool);

  /* readmit_ratio = eject_ratio: the old single threshold, 30 ms is good. */
  pool_init(&pl, 3, 0);
  pl.c.readmit_ratio = pl.c.eject_ratio;
  feed(&pl, 0, 0, 12.0, 20);
  feed(&pl, 1, 0, 12.0, 20);
  feed(&pl, 2, 0, 40.0, 20);
  ck_assert_int_eq(pool_eval(&pl, 0), 1);
  t = SEC(1);
  ck_assert_int_eq(probe(&pl, 2, t, 30.0, 1), 0);
  ck_assert_int_eq(probe(&pl, 2, t + MS(200), 30.0, 1), 0);
  ck_assert_int_eq(probe(&pl, 2, t + MS(400), 30.0, 1), 1);
  /* The floor still applies at small medians: 0.3 ms median, bar 2.3 ms. */
  ck_assert_double_eq_tol(zkr__health_readmit_threshold(&pl.c, 0.3), 2.3, TOL);
}
END_TEST

START_TEST(test_bad_probe_resets_count) {
  pool_t pl;
  pool_init(&pl, 2, 0);
  zkr__health_t *b = &pl.h[1];
  eject_member1(&pl, 0);
  uint64_t t = SEC(1); /* minimum time out over */
  /* Pool median 0.3: threshold 2.3 ms. */
  ck_assert_int_eq(probe(&pl, 1, t, 0.5, 1), 0);
  ck_assert_int_eq(probe(&pl, 1, t + MS(200), 0.5, 1), 0);
  ck_assert_uint_eq(b->good_probes, 2);
  ck_assert_int_eq(probe(&pl, 1, t + MS(400), 2.3, 1), 0); /* not under */
  ck_assert_uint_eq(b->good_probes, 0);
  ck_assert_int_eq(probe(&pl, 1, t + MS(600), 0.5, 1), 0);
  ck_assert_int_eq(probe(&pl, 1, t + MS(800), 0.5, 1), 0);
  ck_assert_int_eq(probe(&pl, 1, t + MS(1000), 0.5, 0), 0); /* failed */
  ck_assert_uint_eq(b->good_probes, 0);
  ck_assert_int_eq(probe(&pl, 1, t + MS(1200), 0.5, 1), 0);
  ck_assert_int_eq(probe(&pl, 1, t + MS(1400), 0.5, 1), 0);
  ck_assert_int_eq(probe(&pl, 1, t + MS(1600), 0.6, 1), 1);
  ck_assert(b->in_pool);
  /* The EWMA holds the last run only: probes 200 ms apart decay by
   * d = 2^-0.2 per step, so 0.5 at weight d^2, 0.5 at d and 0.6 at 1. */
  double d = exp2(-0.2);
  double expect = (0.5 * d * d + 0.5 * d + 0.6) / (d * d + d + 1);
  ck_assert_double_eq_tol(b->ewma_ms, expect, 1e-12);
  ck_assert_uint_eq(b->fresh, 3);
}
END_TEST

/* A member out while the pool has no judged reference: any successful
 * probe is good. */
START_TEST(test_probe_without_reference) {
  pool_t pl;
  pool_init(&pl, 2, 0);
  eject_member1(&pl, 0);
  ck_assert_double_eq(zkr__health_pool_median(pl.p, 2, &pl.c), 0.3);
  uint64_t t = SEC(1);
  zkr__health_probe_sent(&pl.h[1], &pl.c, t);
  ck_assert_int_eq(zkr__health_probe_result(&pl.h[1], &pl.c, t, 50, 1, -1), 0);
  ck_assert_uint_eq(pl.h[1].good_probes, 1);
}
END_TEST

/* ---- backoff ---- */

START_TEST(test_backoff_doubles_and_caps) {
  pool_t pl;
  pool_init(&pl, 2, 0);
  zkr__health_t *b = &pl.h[1];
  const uint64_t expect_ms[] = {1000, 2000, 4000, 8000, 16000, 30000, 30000};
  uint64_t t = 0;
  for (size_t i = 0; i < sizeof expect_ms / sizeof expect_ms[0]; i++) {
    /* Ejected right after it came back (fresh samples: 3 probes + 10). */
    eject_member1(&pl, t);
    ck_assert_uint_eq(b->ejections, i + 1);
    ck_assert_uint_eq(b->streak, i + 1);
    ck_assert_uint_eq(b->min_out_until_ns - t, MS(expect_ms[i]));
    /* Three good probes before the minimum time out is over... */
    uint64_t p = t + MS(200);
    for (int k = 0; k < 3; k++, p += MS(200)) ck_assert_int_eq(probe(&pl, 1, p, 0.3, 1), 0);
    /* ...and the first good one after it brings the member back. */
    p = b->min_out_until_ns;
    ck_assert(zkr__health_probe_due(b, p));
    ck_assert_int_eq(probe(&pl, 1, p, 0.3, 1), 1);
    ck_assert_uint_eq(p - t, MS(expect_ms[i]));
    t = p + MS(1);
  }
  /* Thirty seconds back in the pool: forgiven, the next ejection starts
   * over at eject_min_ms. */
  t += SEC(30);
  eject_member1(&pl, t);
  ck_assert_uint_eq(b->streak, 1);
  ck_assert_uint_eq(b->min_out_until_ns - t, SEC(1));
  ck_assert_uint_eq(b->ejections, 8);
}
END_TEST

/* ---- connection state ---- */

START_TEST(test_disconnect_and_reconnect) {
  zkr__health_cfg_t c = {0};
  zkr__health_cfg_defaults(&c);
  zkr__health_t h;
  zkr__health_init(&h, 0);
  ck_assert(!h.in_pool);
  ck_assert(!h.usable);
  ck_assert(!zkr__health_probe_due(&h, SEC(1))); /* never connected */
  /* The first connection joins at once. */
  ck_assert_int_eq(zkr__health_set_usable(&h, 1, MS(5)), 1);
  ck_assert(h.in_pool);
  ck_assert_int_eq(zkr__health_set_usable(&h, 1, MS(6)), 0); /* no-op */
  /* Disconnection: out at once, even as the last member; not an ejection. */
  ck_assert_int_eq(zkr__health_set_usable(&h, 0, MS(100)), 1);
  ck_assert(!h.in_pool);
  ck_assert_uint_eq(h.removals, 1);
  ck_assert_uint_eq(h.ejections, 0);
  ck_assert_int_eq(zkr__health_set_usable(&h, 0, MS(101)), 0); /* no-op */
  ck_assert(!zkr__health_probe_due(&h, SEC(1)));
  /* Reconnection: not back yet, probed at once, back after k good probes
   * with no minimum time out. */
  ck_assert_int_eq(zkr__health_set_usable(&h, 1, MS(300)), 0);
  ck_assert(!h.in_pool);
  uint64_t t = MS(300);
  for (int k = 0; k < 3; k++, t += MS(200)) {
    ck_assert(zkr__health_probe_due(&h, t));
    zkr__health_probe_sent(&h, &c, t);
    int back = zkr__health_probe_result(&h, &c, t, 0.3, 1, 0.3);
    ck_assert_int_eq(back, k == 2);
  }
  ck_assert(h.in_pool);
  ck_assert_uint_eq(zkr__health_out_ns(&h, SEC(2)), MS(5) + MS(600));

  /* A probe that succeeds while the session is down does not bring the
   * member back. */
  zkr__health_set_usable(&h, 0, SEC(2));
  zkr__health_set_usable(&h, 1, SEC(2));
  zkr__health_probe_sent(&h, &c, SEC(2));
  zkr__health_probe_result(&h, &c, SEC(2), 0.3, 1, 0.3);
  zkr__health_probe_sent(&h, &c, SEC(2) + MS(200));
  zkr__health_probe_result(&h, &c, SEC(2) + MS(200), 0.3, 1, 0.3);
  zkr__health_set_usable(&h, 0, SEC(2) + MS(300));
  ck_assert_uint_eq(h.good_probes, 0); /* a disconnection resets the run */
  zkr__health_probe_sent(&h, &c, SEC(2) + MS(400));
  ck_assert_int_eq(zkr__health_probe_result(&h, &c, SEC(2) + MS(400), 0.3, 1, 0.3), 0);
  ck_assert(!h.in_pool);
}
END_TEST

/* A latency ejection's minimum time out survives a reconnection. */
START_TEST(test_reconnect_keeps_min_out) {
  pool_t pl;
  pool_init(&pl, 2, 0);
  eject_member1(&pl, 0);
  zkr__health_set_usable(&pl.h[1], 0, MS(100));
  ck_assert_uint_eq(pl.h[1].removals, 0); /* already out */
  zkr__health_set_usable(&pl.h[1], 1, MS(150));
  ck_assert(zkr__health_probe_due(&pl.h[1], MS(150)));
  ck_assert_int_eq(probe(&pl, 1, MS(150), 0.3, 1), 0);
  ck_assert_int_eq(probe(&pl, 1, MS(350), 0.3, 1), 0);
  ck_assert_int_eq(probe(&pl, 1, MS(550), 0.3, 1), 0);
  ck_assert_int_eq(probe(&pl, 1, MS(750), 0.3, 1), 0);
  ck_assert_int_eq(probe(&pl, 1, MS(950), 0.3, 1), 0);
  ck_assert_int_eq(probe(&pl, 1, MS(1150), 0.3, 1), 1);
}
END_TEST

/* An empty pool refills at once from the best usable member. */
START_TEST(test_rescue_empty_pool) {
  pool_t pl;
  pool_init(&pl, 3, 0);
  feed(&pl, 0, 0, 0.3, 10);
  feed(&pl, 1, 0, 20.0, 10);
  feed(&pl, 2, 0, 30.0, 10);
  ck_assert_int_eq(pool_eval(&pl, 0), 1); /* 2 out */
  ck_assert_int_eq(pool_eval(&pl, 0), 1); /* 1 out */
  ck_assert(!pl.h[1].in_pool && !pl.h[2].in_pool);
  /* The last member disconnects: the better ejected one comes back at
   * once, despite its minimum time out, and is judged afresh. */
  zkr__health_set_usable(&pl.h[0], 0, MS(100));
  ck_assert_uint_eq(pool_count(&pl), 0);
  ck_assert_int_eq(pool_eval(&pl, MS(100)), 1);
  ck_assert(pl.h[1].in_pool);
  ck_assert(!pl.h[2].in_pool);
  ck_assert_uint_eq(pl.h[1].fresh, 0);
  ck_assert_uint_eq(zkr__health_out_ns(&pl.h[1], SEC(1)), MS(100));
  ck_assert_int_eq(pool_eval(&pl, MS(100)), 0);

  /* A member with no current samples counts as best. */
  pool_init(&pl, 2, 0);
  feed(&pl, 0, 0, 5.0, 10);
  zkr__health_set_usable(&pl.h[0], 0, MS(1));
  zkr__health_set_usable(&pl.h[1], 0, MS(1));
  ck_assert_int_eq(pool_eval(&pl, MS(2)), 0); /* nobody usable */
  zkr__health_set_usable(&pl.h[0], 1, MS(3));
  zkr__health_set_usable(&pl.h[1], 1, MS(3));
  ck_assert_int_eq(pool_eval(&pl, MS(3)), 1);
  ck_assert(pl.h[1].in_pool);
  ck_assert(!pl.h[0].in_pool);
}
END_TEST

/* ---- time out of the pool ---- */

START_TEST(test_out_time_accounting) {
  pool_t pl;
  zkr__health_cfg_t c = {0};
  zkr__health_cfg_defaults(&c);
  pl.n = 2;
  pl.c = c;
  for (size_t i = 0; i < 2; i++) {
    zkr__health_init(&pl.h[i], 0);
    pl.p[i] = &pl.h[i];
  }
  zkr__health_t *b = &pl.h[1];
  ck_assert_uint_eq(zkr__health_out_ns(b, MS(3)), MS(3)); /* not connected */
  zkr__health_set_usable(&pl.h[0], 1, 0);
  zkr__health_set_usable(b, 1, MS(5));
  ck_assert_uint_eq(zkr__health_out_ns(b, SEC(1)), MS(5));
  /* Ejected at 1 s, back at 2 s. */
  eject_member1(&pl, SEC(1));
  ck_assert_uint_eq(zkr__health_out_ns(b, SEC(1) + MS(500)), MS(505));
  for (uint64_t t = SEC(1) + MS(200); !b->in_pool; t += MS(200)) probe(&pl, 1, t, 0.3, 1);
  ck_assert_uint_eq(zkr__health_out_ns(b, SEC(3)), SEC(1) + MS(5));
  /* Disconnected from 3 s; the current stretch counts. */
  zkr__health_set_usable(b, 0, SEC(3));
  ck_assert_uint_eq(zkr__health_out_ns(b, SEC(4)), SEC(2) + MS(5));
  ck_assert_uint_eq(zkr__health_out_ns(b, SEC(3) - 1), SEC(1) + MS(5));
  ck_assert_uint_eq(zkr__health_out_ns(NULL, SEC(4)), 0);
}
END_TEST

/* ---- whole scenarios: load, monitor ticks, probes ---- */

typedef struct {
  double base[2], jitter[2];
} link_model_t;

typedef struct {
  uint64_t first_eject[2]; /* 0: never */
  uint64_t last_reinstate[2];
  size_t min_pool; /* smallest pool size seen */
} scenario_t;

/* Two followers.  One read every 0.5 ms, rotating over the pool; every
 * 10 ms a monitor tick evaluates and sends due probes (which complete
 * with the same latency model).  model(t) gives each member's latency. */
static void run_scenario(pool_t *pl, uint64_t end, void (*model)(uint64_t t, link_model_t *lm),
                         scenario_t *out) {
  unsigned rr = 0;
  out->min_pool = 2;
  out->first_eject[0] = out->first_eject[1] = 0;
  out->last_reinstate[0] = out->last_reinstate[1] = 0;
  for (uint64_t t = 0; t <= end; t += MS(0.5)) {
    link_model_t lm;
    model(t, &lm);
    int in0 = pl->h[0].in_pool, in1 = pl->h[1].in_pool;
    size_t m = (in0 && in1) ? rr++ % 2 : (in0 ? 0 : 1);
    double lat = lm.base[m] + rng_range(-lm.jitter[m], lm.jitter[m]);
    zkr__health_sample(&pl->h[m], &pl->c, t, lat);
    pool_eval(pl, t);
    if (t % MS(10) == 0) {
      pool_eval(pl, t);
      double med = pool_median(pl);
      for (size_t i = 0; i < 2; i++) {
        if (!zkr__health_probe_due(&pl->h[i], t)) continue;
        zkr__health_probe_sent(&pl->h[i], &pl->c, t);
        double pl_ms = lm.base[i] + rng_range(-lm.jitter[i], lm.jitter[i]);
        zkr__health_probe_result(&pl->h[i], &pl->c, t, pl_ms, 1, med);
      }
    }
    for (size_t i = 0; i < 2; i++) {
      int was = i == 0 ? in0 : in1;
      if (was && !pl->h[i].in_pool && !out->first_eject[i]) out->first_eject[i] = t;
      if (!was && pl->h[i].in_pool) out->last_reinstate[i] = t;
    }
    size_t k = pool_count(pl);
    if (k < out->min_pool) out->min_pool = k;
  }
}

/* Follower 1 is 8 ms +- 2 ms behind each way from 5 s to 15 s. */
static void model_degrade(uint64_t t, link_model_t *lm) {
  lm->base[0] = 0.3, lm->jitter[0] = 0.05;
  if (t >= SEC(5) && t < SEC(15)) lm->base[1] = 16.3, lm->jitter[1] = 4.0;
  else lm->base[1] = 0.3, lm->jitter[1] = 0.05;
}

START_TEST(test_scenario_degrade_and_recover) {
  pool_t pl;
  rng_seed(7);
  pool_init(&pl, 2, 0);
  scenario_t s;
  run_scenario(&pl, SEC(30), model_degrade, &s);
  ck_assert_uint_eq(s.first_eject[0], 0);
  ck_assert(pl.h[0].in_pool);
  /* Ejected within 2 s (the model says ~0.2 s). */
  ck_assert_uint_gt(s.first_eject[1], SEC(5));
  ck_assert_uint_lt(s.first_eject[1], SEC(5) + MS(400));
  /* Back within 5 s of the recovery (the model says < 1 s), and stays. */
  ck_assert_uint_gt(s.last_reinstate[1], SEC(15));
  ck_assert_uint_lt(s.last_reinstate[1], SEC(16));
  ck_assert(pl.h[1].in_pool);
  ck_assert_uint_eq(pl.h[1].ejections, 1);
  ck_assert_uint_ge(s.min_pool, 1);
  uint64_t out = zkr__health_out_ns(&pl.h[1], SEC(30));
  ck_assert_uint_eq(out, s.last_reinstate[1] - s.first_eject[1]);
}
END_TEST

/* Both followers slow from 5 s, one worse than the other. */
static void model_both_slow(uint64_t t, link_model_t *lm) {
  int slow = t >= SEC(5);
  lm->base[0] = slow ? 16.3 : 0.3, lm->jitter[0] = slow ? 4.0 : 0.05;
  lm->base[1] = slow ? 60.3 : 0.3, lm->jitter[1] = slow ? 4.0 : 0.05;
}

/* Both followers equally slow from 5 s. */
static void model_both_equal(uint64_t t, link_model_t *lm) {
  int slow = t >= SEC(5);
  for (int i = 0; i < 2; i++) lm->base[i] = slow ? 16.3 : 0.3, lm->jitter[i] = slow ? 4.0 : 0.05;
}

START_TEST(test_scenario_both_slow) {
  pool_t pl;
  scenario_t s;
  rng_seed(11);
  pool_init(&pl, 2, 0);
  run_scenario(&pl, SEC(20), model_both_slow, &s);
  ck_assert_uint_eq(s.first_eject[0], 0); /* the better one stays */
  ck_assert_uint_gt(s.first_eject[1], SEC(5));
  ck_assert_uint_lt(s.first_eject[1], SEC(7));
  ck_assert(!pl.h[1].in_pool);
  ck_assert_uint_eq(s.min_pool, 1);

  rng_seed(12);
  pool_init(&pl, 2, 0);
  run_scenario(&pl, SEC(20), model_both_equal, &s);
  ck_assert_uint_eq(s.first_eject[0], 0);
  ck_assert_uint_eq(s.first_eject[1], 0);
  ck_assert_uint_eq(s.min_pool, 2);
}
END_TEST

static Suite *health_suite(void) {
  Suite *s = suite_create("health");
  TCase *tc = tcase_create("unit");
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, test_cfg_defaults);
  tcase_add_test(tc, test_threshold);
  tcase_add_test(tc, test_ewma_math);
  tcase_add_test(tc, test_ewma_matches_classic_alpha);
  tcase_add_test(tc, test_pool_median);
  tcase_add_test(tc, test_eject_slow_member);
  tcase_add_test(tc, test_eject_needs_min_samples);
  tcase_add_test(tc, test_eject_both_thresholds);
  tcase_add_test(tc, test_no_eject_under_jitter);
  tcase_add_test(tc, test_never_eject_last);
  tcase_add_test(tc, test_both_slow_keeps_better);
  tcase_add_test(tc, test_eject_off);
  tcase_add_test(tc, test_probe_cadence);
  tcase_add_test(tc, test_reinstate_after_k_good_probes);
  tcase_add_test(tc, test_bad_probe_resets_count);
  tcase_add_test(tc, test_probe_without_reference);
  tcase_add_test(tc, test_backoff_doubles_and_caps);
  tcase_add_test(tc, test_disconnect_and_reconnect);
  tcase_add_test(tc, test_reconnect_keeps_min_out);
  tcase_add_test(tc, test_rescue_empty_pool);
  tcase_add_test(tc, test_readmit_hysteresis);
  tcase_add_test(tc, test_out_time_accounting);
  tcase_add_test(tc, test_scenario_degrade_and_recover);
  tcase_add_test(tc, test_scenario_both_slow);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) {
  SRunner *sr = srunner_create(health_suite());
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
