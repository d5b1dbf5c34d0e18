/* Integration tests of read selection against a real 3-node ensemble
 * (started by tests/integration/integration.sh): a user selector that names one
 * follower gets every read there (zkr_stats and the servers' own srvr
 * counters agree); an out-of-range answer, or a member whose server is
 * down, falls back to the default policy; zkr_selector_same_zone keeps
 * reads in the local zone; zkr_selector_p2c reads from the pool; and
 * leader_read_weight puts its share of reads on the leader. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "it_common.h"

static void read_done(int rc, const char *v, int len, const struct Stat *st, const void *data) {
  (void)v;
  (void)len;
  (void)st;
  ck_assert_int_eq(rc, ZOK);
  __atomic_add_fetch((int *)data, 1, __ATOMIC_SEQ_CST);
}

/* Issues n pipelined reads of path and waits for all of them. */
static void read_n(zkr_t *z, const char *path, int n) {
  int done = 0;
  for (int i = 0; i < n; i++) ck_assert_int_eq(zkr_aget(z, path, 0, read_done, &done), ZOK);
  uint64_t deadline = it_now_ms() + 15000;
  while (__atomic_load_n(&done, __ATOMIC_SEQ_CST) < n && it_now_ms() < deadline) it_sleep_ms(5);
  ck_assert_int_eq(done, n);
}

static void make_node(zkr_t *z, char *path, size_t len, const char *name) {
  it_path(path, len, name);
  ck_assert_int_eq(zkr_create(z, path, "v", 1, &ZOO_OPEN_ACL_UNSAFE, 0, NULL, 0), ZOK);
}

/* Reads per member between two snapshots. */
static void read_deltas(const zkr_stats_t *a, const zkr_stats_t *b, uint64_t *d) {
  for (int i = 0; i < b->n_members; i++) d[i] = b->members[i].reads - a->members[i].reads;
}

/* Reads the default policy placed between a and b (d: per member) on the
 * followers f0 and f1: all `total` of them, none elsewhere, and an even
 * split, which hybrid's rotation gives while both stay in the read pool.
 * After a health ejection meanwhile (a busy machine can make a healthy
 * follower look slow for a moment; docs/health.md), or with a follower out
 * of the pool at either end (a reconnected member waits for good probes),
 * the split is open: the other follower takes the reads while it is out. */
static void check_default_split(const zkr_stats_t *a, const zkr_stats_t *b, const uint64_t *d,
                                int f0, int f1, uint64_t total) {
  uint64_t ejected = b->members[f0].ejections - a->members[f0].ejections +
                     b->members[f1].ejections - a->members[f1].ejections;
  int pooled = a->members[f0].in_read_pool && a->members[f1].in_read_pool &&
               b->members[f0].in_read_pool && b->members[f1].in_read_pool;
  printf("default placement: %llu on member %d, %llu on member %d, %llu ejection(s), "
         "in the read pool before %d/%d after %d/%d\n",
         (unsigned long long)d[f0], f0, (unsigned long long)d[f1], f1, (unsigned long long)ejected,
         a->members[f0].in_read_pool, a->members[f1].in_read_pool, b->members[f0].in_read_pool,
         b->members[f1].in_read_pool);
  ck_assert_uint_eq(d[f0] + d[f1], total);
  if (ejected == 0 && pooled) {
    ck_assert_uint_eq(d[f0], total / 2);
    ck_assert_uint_eq(d[f1], total / 2);
  }
}

/* n reads of path all go to member, none elsewhere. */
static void all_reads_on(zkr_t *z, const char *path, int n, int member) {
  zkr_stats_t *s0, *s1;
  uint64_t d[IT_MEMBERS];
  ck_assert_int_eq(zkr_stats(z, &s0), ZOK);
  read_n(z, path, n);
  ck_assert_int_eq(zkr_stats(z, &s1), ZOK);
  read_deltas(s0, s1, d);
  for (int i = 0; i < IT_MEMBERS; i++) ck_assert_uint_eq(d[i], i == member ? (uint64_t)n : 0);
  zkr_stats_free(s0);
  zkr_stats_free(s1);
}

static int follower(int nth) {
  int l = it_leader_index();
  ck_assert_int_ge(l, 0);
  for (int i = 0; i < IT_MEMBERS; i++)
    if (i != l && nth-- == 0) return i;
  return -1;
}

static int fixed(const zkr_member_info_t *m, int n, void *ctx) {
  (void)m;
  (void)n;
  return *(const int *)ctx;
}

/* ---- a fixed follower gets every read ---- */

START_TEST(selector_fixed_follower_gets_all_reads) {
  zkr_t *z = it_open(NULL, NULL, NULL);
  char path[128];
  make_node(z, path, sizeof path, "sel");
  int f = follower(1);
  ck_assert_int_eq(zkr_set_read_selector(z, fixed, &f), ZOK);
  zkr_stats_t *s0, *s1;
  ck_assert_int_eq(zkr_stats(z, &s0), ZOK);
  int64_t before[IT_MEMBERS];
  for (int i = 0; i < IT_MEMBERS; i++) before[i] = it_received(i);
  const int N = 600;
  read_n(z, path, N);
  ck_assert_int_eq(zkr_stats(z, &s1), ZOK);
  uint64_t d[IT_MEMBERS];
  read_deltas(s0, s1, d);
  printf("selector_fixed: member %d chosen; reads %llu/%llu/%llu, picks %llu, "
         "fallbacks %llu; srvr Received +%lld/+%lld/+%lld\n",
         f, (unsigned long long)d[0], (unsigned long long)d[1], (unsigned long long)d[2],
         (unsigned long long)(s1->selector_picks - s0->selector_picks),
         (unsigned long long)(s1->selector_fallbacks - s0->selector_fallbacks),
         (long long)(it_received(0) - before[0]), (long long)(it_received(1) - before[1]),
         (long long)(it_received(2) - before[2]));
  ck_assert_int_eq(s1->has_selector, 1);
  for (int i = 0; i < IT_MEMBERS; i++) {
    int64_t recv = it_received(i) - before[i];
    if (i == f) {
      ck_assert_uint_eq(d[i], N);
      ck_assert_uint_eq(s1->members[i].selector_picks - s0->members[i].selector_picks, N);
      /* A get each, and a sync for each read that did not share one
       * (sync_coalesce, on by default: docs/guarantees.md). */
      uint64_t shared = s1->members[i].coalesced - s0->members[i].coalesced;
      ck_assert_uint_le(shared, N - 1);
      ck_assert_int_ge(recv, 2 * N - (int64_t)shared);
    } else {
      ck_assert_uint_eq(d[i], 0);
      ck_assert_int_lt(recv, N / 10);
    }
  }
  ck_assert_uint_eq(s1->selector_picks - s0->selector_picks, N);
  ck_assert_uint_eq(s1->selector_fallbacks - s0->selector_fallbacks, 0);
  zkr_stats_free(s0);
  zkr_stats_free(s1);
  /* NULL restores hybrid's rotation. */
  ck_assert_int_eq(zkr_set_read_selector(z, NULL, NULL), ZOK);
  ck_assert_int_eq(zkr_stats(z, &s0), ZOK);
  read_n(z, path, 200);
  ck_assert_int_eq(zkr_stats(z, &s1), ZOK);
  read_deltas(s0, s1, d);
  ck_assert_int_eq(s1->has_selector, 0);
  check_default_split(s0, s1, d, follower(0), f, 200);
  zkr_stats_free(s0);
  zkr_stats_free(s1);
  zkr_close(z);
}
END_TEST

/* ---- out of range, and a member whose server is down: the default ---- */

START_TEST(selector_bad_answers_fall_back) {
  zkr_options_t o = ZKR_OPTIONS_INIT;
  o.rescue_ms = 600000; /* the killed member stays disconnected */
  o.rescue_down_ms = 600000;
  zkr_t *z = it_open(&o, NULL, NULL);
  char path[128];
  make_node(z, path, sizeof path, "selbad");
  int leader = it_leader_index(), f0 = follower(0), f1 = follower(1);
  int answer = 99;
  ck_assert_int_eq(zkr_set_read_selector(z, fixed, &answer), ZOK);
  zkr_stats_t *s0, *s1;
  uint64_t d[IT_MEMBERS];
  ck_assert_int_eq(zkr_stats(z, &s0), ZOK);
  read_n(z, path, 200);
  answer = -1;
  read_n(z, path, 200);
  ck_assert_int_eq(zkr_stats(z, &s1), ZOK);
  read_deltas(s0, s1, d);
  ck_assert_uint_eq(s1->selector_fallbacks - s0->selector_fallbacks, 400);
  ck_assert_uint_eq(s1->selector_picks - s0->selector_picks, 0);
  ck_assert_uint_eq(d[leader], 0);
  check_default_split(s0, s1, d, f0, f1, 400);
  zkr_stats_free(s0);
  zkr_stats_free(s1);
  /* The selector insists on f1, whose server is gone: reads still
   * succeed, on f0, as fallbacks. */
  answer = f1;
  ck_assert_int_eq(it_ensemble("kill", f1), 0);
  uint64_t deadline = it_now_ms() + 10000;
  for (;;) {
    ck_assert_int_eq(zkr_stats(z, &s0), ZOK);
    int gone = !s0->members[f1].connected;
    if (gone) break;
    zkr_stats_free(s0);
    ck_assert_msg(it_now_ms() < deadline, "member %d still connected", f1);
    it_sleep_ms(20);
  }
  read_n(z, path, 100);
  ck_assert_int_eq(zkr_stats(z, &s1), ZOK);
  read_deltas(s0, s1, d);
  printf("selector_bad_answers: member %d down: reads %llu/%llu/%llu, fallbacks %llu\n", f1,
         (unsigned long long)d[0], (unsigned long long)d[1], (unsigned long long)d[2],
         (unsigned long long)(s1->selector_fallbacks - s0->selector_fallbacks));
  ck_assert_uint_eq(s1->selector_fallbacks - s0->selector_fallbacks, 100);
  ck_assert_uint_eq(d[f1], 0);
  /* hybrid's fallback: f0 while it is in the read pool; the leader while
   * the pool is empty (f0 ejected earlier on a busy machine and still
   * serving its minimum time out, until the empty pool takes it back). */
  if (s0->members[f0].in_read_pool && s1->members[f0].ejections == s0->members[f0].ejections)
    ck_assert_uint_eq(d[f0], 100);
  else ck_assert_uint_eq(d[f0] + d[leader], 100);
  zkr_stats_free(s0);
  zkr_stats_free(s1);
  zkr_close(z);
  it_ensemble_heal();
}
END_TEST

/* ---- zones: same_zone keeps reads in the zone ---- */

START_TEST(same_zone_keeps_reads_in_zone) {
  int leader = it_leader_index(), f0 = follower(0), f1 = follower(1);
  /* Positional form: the leader and f0 in zone "a", f1 alone in "b". */
  const char *label[IT_MEMBERS];
  label[leader] = label[f0] = "a";
  label[f1] = "b";
  zkr_options_t o = ZKR_OPTIONS_INIT;
  char zones[64];
  snprintf(zones, sizeof zones, "%s,%s,%s", label[0], label[1], label[2]);
  ck_assert_int_eq(zkr_options_set(&o, "zones", zones), ZOK);
  ck_assert_int_eq(zkr_options_set(&o, "local_zone", "b"), ZOK);
  zkr_t *z = it_open(&o, NULL, NULL);
  char path[128];
  make_node(z, path, sizeof path, "zone");
  ck_assert_int_eq(zkr_set_read_selector(z, zkr_selector_same_zone, NULL), ZOK);
  zkr_stats_t *s0, *s1;
  uint64_t d[IT_MEMBERS];
  ck_assert_int_eq(zkr_stats(z, &s0), ZOK);
  for (int i = 0; i < IT_MEMBERS; i++) ck_assert_str_eq(s0->members[i].zone, label[i]);
  zkr_stats_free(s0);
  all_reads_on(z, path, 300, f1);
  /* Zone "a" from the context: f0 only (the leader is not in the pool). */
  zkr_selector_ctx_t a = {.zone = "a"};
  ck_assert_int_eq(zkr_set_read_selector(z, zkr_selector_same_zone, &a), ZOK);
  all_reads_on(z, path, 300, f0);
  /* A zone with no member: every read falls back to hybrid. */
  zkr_selector_ctx_t c = {.zone = "c"};
  ck_assert_int_eq(zkr_set_read_selector(z, zkr_selector_same_zone, &c), ZOK);
  ck_assert_int_eq(zkr_stats(z, &s0), ZOK);
  read_n(z, path, 100);
  ck_assert_int_eq(zkr_stats(z, &s1), ZOK);
  read_deltas(s0, s1, d);
  ck_assert_uint_eq(s1->selector_fallbacks - s0->selector_fallbacks, 100);
  ck_assert_uint_eq(d[leader], 0);
  check_default_split(s0, s1, d, f0, f1, 100);
  zkr_stats_free(s0);
  zkr_stats_free(s1);
  zkr_close(z);
}
END_TEST

/* The addressed form of zones, from the members' own addresses. */
START_TEST(zones_by_address_and_p2c) {
  zkr_t *z = it_open(NULL, NULL, NULL);
  zkr_stats_t *s;
  ck_assert_int_eq(zkr_stats(z, &s), ZOK);
  zkr_options_t o = ZKR_OPTIONS_INIT;
  char zones[1024];
  snprintf(zones, sizeof zones, "%s=x,%s=y", s->members[2].address, s->members[0].address);
  zkr_stats_free(s);
  zkr_close(z);
  ck_assert_int_eq(zkr_options_set(&o, "zones", zones), ZOK);
  z = it_open(&o, NULL, NULL);
  ck_assert_int_eq(zkr_stats(z, &s), ZOK);
  ck_assert_str_eq(s->members[0].zone, "y");
  ck_assert_str_eq(s->members[1].zone, "");
  ck_assert_str_eq(s->members[2].zone, "x");
  zkr_stats_free(s);
  /* p2c over the pool: the followers only, every read placed by it. */
  char path[128];
  make_node(z, path, sizeof path, "p2c");
  zkr_selector_ctx_t c = {.seed = 1};
  ck_assert_int_eq(zkr_set_read_selector(z, zkr_selector_p2c, &c), ZOK);
  zkr_stats_t *s0, *s1;
  uint64_t d[IT_MEMBERS];
  ck_assert_int_eq(zkr_stats(z, &s0), ZOK);
  read_n(z, path, 400);
  ck_assert_int_eq(zkr_stats(z, &s1), ZOK);
  read_deltas(s0, s1, d);
  ck_assert_uint_eq(s1->selector_picks - s0->selector_picks, 400);
  ck_assert_uint_eq(d[it_leader_index()], 0);
  ck_assert_uint_gt(d[follower(0)], 0);
  ck_assert_uint_gt(d[follower(1)], 0);
  zkr_stats_free(s0);
  zkr_stats_free(s1);
  zkr_close(z);
}
END_TEST

/* ---- leader_read_weight ---- */

START_TEST(leader_weight_share) {
  zkr_options_t o = ZKR_OPTIONS_INIT;
  ck_assert_int_eq(zkr_options_set(&o, "leader_read_weight", "0.33"), ZOK);
  zkr_t *z = it_open(&o, NULL, NULL);
  char path[128];
  make_node(z, path, sizeof path, "lw");
  int leader = it_leader_index();
  zkr_stats_t *s0, *s1;
  uint64_t d[IT_MEMBERS];
  ck_assert_int_eq(zkr_stats(z, &s0), ZOK);
  int64_t before = it_received(leader);
  const int N = 900;
  read_n(z, path, N);
  ck_assert_int_eq(zkr_stats(z, &s1), ZOK);
  read_deltas(s0, s1, d);
  double share = (double)d[leader] / N;
  char why[512];
  snprintf(
      why, sizeof why,
      "leader %d served %llu of %d reads (%.3f; srvr Received +%lld); reads %llu/%llu/%llu; "
      "in pool %d%d%d -> %d%d%d; ejections +%llu/+%llu/+%llu; leader after %d",
      leader, (unsigned long long)d[leader], N, share, (long long)(it_received(leader) - before),
      (unsigned long long)d[0], (unsigned long long)d[1], (unsigned long long)d[2],
      s0->members[0].in_read_pool, s0->members[1].in_read_pool, s0->members[2].in_read_pool,
      s1->members[0].in_read_pool, s1->members[1].in_read_pool, s1->members[2].in_read_pool,
      (unsigned long long)(s1->members[0].ejections - s0->members[0].ejections),
      (unsigned long long)(s1->members[1].ejections - s0->members[1].ejections),
      (unsigned long long)(s1->members[2].ejections - s0->members[2].ejections), it_leader_index());
  printf("leader_weight_share: %s\n", why);
  fflush(stdout);
  /* Exactly 0.33 while every member stays in the read pool.  A busy
   * machine (the sanitizer stage) can make a member look slow for a
   * moment (docs/health.md): an ejected leader gets no share while it is
   * out, so its share can only fall; with the followers out, the leader
   * serves what they would have (zkr__policy_read_member: no current member
   * in the pool, the leader), so its share can only rise. */
  uint64_t ej_leader = s1->members[leader].ejections - s0->members[leader].ejections, ej_others = 0;
  for (int i = 0; i < IT_MEMBERS; i++)
    if (i != leader) ej_others += s1->members[i].ejections - s0->members[i].ejections;
  if (ej_leader == 0 && ej_others == 0) ck_assert_msg(share > 0.32 && share < 0.34, "%s", why);
  else if (ej_leader == 0) ck_assert_msg(share > 0.32, "%s", why);
  else if (ej_others == 0) ck_assert_msg(share < 0.34, "%s", why);
  ck_assert_uint_eq(d[0] + d[1] + d[2], N);
  zkr_stats_free(s0);
  zkr_stats_free(s1);
  zkr_close(z);
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("select");
  TCase *tc = tcase_create("ensemble");
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, selector_fixed_follower_gets_all_reads);
  tcase_add_test(tc, same_zone_keeps_reads_in_zone);
  tcase_add_test(tc, zones_by_address_and_p2c);
  tcase_add_test(tc, leader_weight_share);
  tcase_add_test(tc, selector_bad_answers_fall_back);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return it_run(suite()); }
