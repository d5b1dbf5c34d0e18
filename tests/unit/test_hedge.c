/* Unit tests of the pure part of hedged reads (zkroute/model/hedge.c): the
 * adaptive delay (per-member percentile of the recent window, lower
 * median over members, floor, warm-up) and the
 * load cap (token bucket).  No server, no clock, no threads. */
#include <check.h>
#include <math.h>
#include <stdlib.h>

#include "model/hedge.h"

static const zkr__hedge_cfg_t CFG = {.floor_ms = 5, .percentile = 95, .max_pct = 5, .burst = 20};

START_TEST(mark_is_the_percentile) {
  float v[100];
  for (int i = 0; i < 100; i++) v[i] = (float)(100 - i); /* 100 .. 1, any order */
  ck_assert(zkr__hedge_mark_of(&CFG, v, 100) == 95.0);
  zkr__hedge_cfg_t c = CFG;
  c.percentile = 50;
  ck_assert(zkr__hedge_mark_of(&c, v, 100) == 50.0);
  c.percentile = 99.9;
  ck_assert(zkr__hedge_mark_of(&c, v, 100) == 100.0);
  /* The input is not reordered. */
  ck_assert(v[0] == 100.0f && v[99] == 1.0f);
  /* Too few samples: no mark. */
  ck_assert(zkr__hedge_mark_of(&CFG, v, ZKR__HEDGE_MIN_SAMPLES - 1) == -1);
}
END_TEST

static int cmp_float(const void *a, const void *b) {
  float x = *(const float *)a, y = *(const float *)b;
  return (x > y) - (x < y);
}

/* The mark is selected, not sorted for: the same value as the nearest rank
 * of a sorted copy, over windows of every size with ties, runs and
 * reversed runs, at percentiles from the lowest to the highest. */
START_TEST(mark_equals_the_sorted_rank) {
  const double pcts[] = {1, 50, 90, 95, 99, 99.9, 100};
  unsigned seed = 7;
  for (int it = 0; it < 20000; it++) {
    unsigned n = ZKR__HEDGE_MIN_SAMPLES +
                 (unsigned)rand_r(&seed) % (ZKR__HEDGE_WINDOW - ZKR__HEDGE_MIN_SAMPLES + 1);
    float v[ZKR__HEDGE_WINDOW], s[ZKR__HEDGE_WINDOW];
    int kind = rand_r(&seed) % 5;
    for (unsigned i = 0; i < n; i++)
      v[i] = kind == 0   ? (float)(rand_r(&seed) % 4)
             : kind == 1 ? (float)i
             : kind == 2 ? (float)(n - i)
             : kind == 3 ? 1.5f
                         : (float)rand_r(&seed) / 1000.0f;
    zkr__hedge_cfg_t c = CFG;
    c.percentile = pcts[rand_r(&seed) % 7];
    for (unsigned i = 0; i < n; i++) s[i] = v[i];
    qsort(s, n, sizeof *s, cmp_float);
    double rank = ceil(c.percentile / 100.0 * n);
    unsigned k = rank < 1 ? 0 : (unsigned)rank - 1;
    if (k >= n) k = n - 1;
    ck_assert(zkr__hedge_mark_of(&c, v, n) == s[k]);
  }
}
END_TEST

START_TEST(delay_is_lower_median_with_floor) {
  double none[3] = {-1, -1, -1};
  ck_assert(zkr__hedge_delay(&CFG, none, 3) == 5.0);
  /* One healthy follower (8 ms), one slow (300 ms): the healthy one's mark,
   * so the slow one's reads are hedged. */
  double two[3] = {-1, 8, 300};
  ck_assert(zkr__hedge_delay(&CFG, two, 3) == 8.0);
  /* Four followers, one unusually fast, one slow: the second lowest. */
  double four[5] = {-1, 2, 9, 10, 300};
  ck_assert(zkr__hedge_delay(&CFG, four, 5) == 9.0);
  /* Everything fast: the floor. */
  double fast[3] = {1, 1, 1};
  ck_assert(zkr__hedge_delay(&CFG, fast, 3) == 5.0);
}
END_TEST

/* One slow read in twenty-five is above the 95th percentile: the mark
 * stays at the fast reads' level, so the slow ones are hedged. */
START_TEST(window_follows_recent_reads) {
  zkr__hedge_window_t w;
  zkr__hedge_window_init(&w);
  ck_assert(w.mark_ms == -1);
  for (int i = 0; i < 400; i++) zkr__hedge_window_add(&w, &CFG, i % 25 == 0 ? 200 : 8);
  ck_assert_uint_eq(w.n, ZKR__HEDGE_WINDOW);
  ck_assert(w.mark_ms == 8.0);
  /* The member gets slower: the window (256 reads) forgets the old level
   * within one window plus one recompute period. */
  for (int i = 0; i < ZKR__HEDGE_WINDOW + ZKR__HEDGE_RECOMPUTE; i++)
    zkr__hedge_window_add(&w, &CFG, 30);
  ck_assert(w.mark_ms == 30.0);
  /* Recomputed once per ZKR__HEDGE_RECOMPUTE samples, not on every one. */
  int recomputed = 0;
  for (int i = 0; i < 10 * ZKR__HEDGE_RECOMPUTE; i++)
    recomputed += zkr__hedge_window_add(&w, &CFG, 30);
  ck_assert_int_eq(recomputed, 10);
  /* Nonsense is ignored. */
  unsigned n = w.n, next = w.next;
  zkr__hedge_window_add(&w, &CFG, NAN);
  zkr__hedge_window_add(&w, &CFG, -1);
  ck_assert_uint_eq(w.next, next);
  ck_assert_uint_eq(w.n, n);
}
END_TEST

START_TEST(window_warms_up_at_min_samples) {
  zkr__hedge_window_t w;
  zkr__hedge_window_init(&w);
  for (int i = 0; i < ZKR__HEDGE_MIN_SAMPLES - 1; i++) zkr__hedge_window_add(&w, &CFG, 50);
  ck_assert(w.mark_ms == -1);
  ck_assert_int_eq(zkr__hedge_window_add(&w, &CFG, 50), 1);
  ck_assert(w.mark_ms == 50.0);
}
END_TEST

/* The cap: at every instant, hedges <= 5 % of the reads so far. */
START_TEST(cap_holds_at_every_instant) {
  zkr__hedge_budget_t b = {0};
  long reads = 0, hedges = 0;
  for (int i = 0; i < 100000; i++) {
    zkr__hedge_budget_read(&b, &CFG, 0);
    reads++;
    /* Every read wants a hedge (the worst case: everything is slow). */
    if (zkr__hedge_budget_take(&b)) hedges++;
    ck_assert_int_le(hedges * 100, reads * 5);
  }
  ck_assert_int_eq(hedges, 5000);
}
END_TEST

START_TEST(cap_starts_empty) {
  zkr__hedge_budget_t b = {0};
  ck_assert_int_eq(zkr__hedge_budget_take(&b), 0);
  for (int i = 0; i < 19; i++) zkr__hedge_budget_read(&b, &CFG, 0);
  ck_assert_int_eq(zkr__hedge_budget_take(&b), 0);
  zkr__hedge_budget_read(&b, &CFG, 0); /* the 20th read: one whole token */
  ck_assert_int_eq(zkr__hedge_budget_take(&b), 1);
  ck_assert_int_eq(zkr__hedge_budget_take(&b), 0);
}
END_TEST

/* After a long quiet spell only `burst` hedges can go at once; then the
 * rate is max_pct again. */
START_TEST(cap_burst_is_bounded) {
  zkr__hedge_budget_t b = {0};
  for (int i = 0; i < 100000; i++) zkr__hedge_budget_read(&b, &CFG, 0);
  int burst = 0;
  while (zkr__hedge_budget_take(&b)) burst++;
  ck_assert_int_eq(burst, 20);
  int more = 0;
  for (int i = 0; i < 1000; i++) {
    zkr__hedge_budget_read(&b, &CFG, 0);
    more += zkr__hedge_budget_take(&b);
  }
  ck_assert_int_eq(more, 50);
}
END_TEST

/* The yield: lean only once a full window of outcomes is known, while
 * fewer than ZKR__HEDGE_MIN_WINS of them won; a win leaves the window
 * ZKR__HEDGE_OUTCOMES outcomes later. */
START_TEST(yield_is_lean_only_over_a_full_window_of_losses) {
  zkr__hedge_yield_t y = {0};
  for (int i = 0; i < ZKR__HEDGE_OUTCOMES - 1; i++) zkr__hedge_yield_add(&y, 0);
  ck_assert_int_eq(zkr__hedge_yield_lean(&y), 0); /* not known yet */
  zkr__hedge_yield_add(&y, 0);
  ck_assert_int_eq(zkr__hedge_yield_lean(&y), 1);
  for (int i = 0; i < ZKR__HEDGE_MIN_WINS - 1; i++) zkr__hedge_yield_add(&y, 1);
  ck_assert_int_eq(zkr__hedge_yield_lean(&y), 1);
  zkr__hedge_yield_add(&y, 1); /* the MIN_WINS-th win */
  ck_assert_int_eq(zkr__hedge_yield_lean(&y), 0);
  /* Losses push the wins out: the first of them leaves after
   * OUTCOMES - MIN_WINS + 1 more outcomes. */
  for (int i = 0; i < ZKR__HEDGE_OUTCOMES - ZKR__HEDGE_MIN_WINS; i++) zkr__hedge_yield_add(&y, 0);
  ck_assert_int_eq(zkr__hedge_yield_lean(&y), 0);
  zkr__hedge_yield_add(&y, 0);
  ck_assert_int_eq(zkr__hedge_yield_lean(&y), 1);
}
END_TEST

/* A lean bucket fills at a tenth of the rate, and keeps its burst: the
 * first hedges of a fault still go at once. */
START_TEST(lean_bucket_fills_at_a_tenth_and_keeps_its_burst) {
  zkr__hedge_budget_t b = {0};
  long hedges = 0;
  for (int i = 0; i < 100000; i++) {
    zkr__hedge_budget_read(&b, &CFG, 1);
    if (zkr__hedge_budget_take(&b)) hedges++;
    ck_assert_int_le(hedges * 1000, (long)(i + 1) * 5);
  }
  ck_assert_int_eq(hedges, 500);
  for (int i = 0; i < 100000; i++) zkr__hedge_budget_read(&b, &CFG, 1);
  int burst = 0;
  while (zkr__hedge_budget_take(&b)) burst++;
  ck_assert_int_eq(burst, 20);
}
END_TEST

static Suite *hedge_suite(void) {
  Suite *s = suite_create("hedge");
  TCase *tc = tcase_create("pure");
  tcase_set_timeout(tc, 10);
  tcase_add_test(tc, mark_is_the_percentile);
  tcase_add_test(tc, mark_equals_the_sorted_rank);
  tcase_add_test(tc, delay_is_lower_median_with_floor);
  tcase_add_test(tc, window_follows_recent_reads);
  tcase_add_test(tc, window_warms_up_at_min_samples);
  tcase_add_test(tc, cap_holds_at_every_instant);
  tcase_add_test(tc, cap_starts_empty);
  tcase_add_test(tc, cap_burst_is_bounded);
  tcase_add_test(tc, yield_is_lean_only_over_a_full_window_of_losses);
  tcase_add_test(tc, lean_bucket_fills_at_a_tenth_and_keeps_its_burst);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) {
  SRunner *sr = srunner_create(hedge_suite());
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
