/* Unit tests (no server) of the policies in zkroute/policy.c.  The member
 * state they read comes from a fake: this file defines
 * zkr__member_usable() and zkr__member_in_pool() over two arrays, so each
 * test sets exactly which members are connected and healthy. */
#include <check.h>
#include <math.h>
#include <string.h>

#include "internal.h"

static int fake_usable[ZKR_MAX_MEMBERS];
static int fake_in_pool[ZKR_MAX_MEMBERS];

int zkr__member_usable(const zkr__member_t *m) { return fake_usable[m->index]; }
int zkr__member_observer(const zkr__member_t *m) {
  return m->role == ZKR_ROLE_OBSERVER || m->cfg_observer;
}
int zkr__member_in_pool(zkr__member_t *m) {
  return fake_usable[m->index] && fake_in_pool[m->index];
}

static zkr__member_t members[5];
static struct zkr z;

/* A 3- or 5-member ensemble: member 0 leads, the rest follow; all usable
 * and in the pool. */
static void setup(size_t n, int policy) {
  memset(&z, 0, sizeof z);
  memset(members, 0, sizeof members);
  z.n = n;
  z.members = members;
  z.opts.policy = policy;
  z.leader = 0;
  z.gate_cur = -1;
  z.opts.seed = 42;
  for (size_t i = 0; i < n; i++) {
    members[i].index = (int)i;
    members[i].role = i == 0 ? ZKR_ROLE_LEADER : ZKR_ROLE_FOLLOWER;
    fake_usable[i] = 1;
    fake_in_pool[i] = 1;
  }
}

static void count_reads(int *hits, int rounds) {
  for (int i = 0; i < rounds; i++) {
    int m = zkr__policy_read_member(&z);
    ck_assert_int_ge(m, 0);
    hits[m]++;
  }
}

START_TEST(hybrid_reads_rotate_over_followers) {
  setup(3, ZKR_POLICY_HYBRID);
  int hits[3] = {0};
  count_reads(hits, 1000);
  ck_assert_int_eq(hits[0], 0);
  ck_assert_int_eq(hits[1], 500);
  ck_assert_int_eq(hits[2], 500);
  ck_assert_int_eq(zkr__policy_write_member(&z), 0);
}
END_TEST

START_TEST(hybrid_skips_ejected_and_observer_counts) {
  setup(5, ZKR_POLICY_HYBRID);
  members[4].role = ZKR_ROLE_OBSERVER;
  fake_in_pool[2] = 0; /* ejected */
  fake_usable[3] = 0;  /* disconnected */
  int hits[5] = {0};
  count_reads(hits, 100);
  ck_assert_int_eq(hits[0] + hits[2] + hits[3], 0);
  ck_assert_int_eq(hits[1], 50);
  ck_assert_int_eq(hits[4], 50);
}
END_TEST

/* Observers serve reads, never writes: under every policy, with the
 * leader gone, writes go to a voter, and wait (-1) when only observers are
 * left.  An observer known from /zookeeper/config alone counts too. */
START_TEST(observers_never_take_writes) {
  static const int policies[] = {ZKR_POLICY_HYBRID, ZKR_POLICY_ROUND_ROBIN,
                                 ZKR_POLICY_LEADER_ONLY, ZKR_POLICY_STICKY,
                                 ZKR_POLICY_BOLTZMANN};
  for (size_t p = 0; p < sizeof policies / sizeof policies[0]; p++) {
    setup(5, policies[p]);
    members[3].role = ZKR_ROLE_OBSERVER;
    members[4].cfg_observer = 1;
    for (int k = 0; k < 200; k++) {
      int w = zkr__policy_write_member(&z);
      ck_assert_msg(w >= 0 && w <= 2, "policy %d wrote to %d", policies[p], w);
    }
    fake_usable[0] = 0;
    z.gate_cur = 3; /* even a write session that became an observer */
    for (int k = 0; k < 200; k++) {
      int w = zkr__policy_write_member(&z);
      ck_assert_msg(w == 1 || w == 2, "policy %d wrote to %d", policies[p], w);
    }
    fake_usable[1] = fake_usable[2] = 0;
    ck_assert_int_eq(zkr__policy_write_member(&z), -1);
    /* Reads still reach the observers. */
    int r = zkr__policy_read_member(&z);
    ck_assert(r == 3 || r == 4);
  }
}
END_TEST

START_TEST(hybrid_falls_back_to_leader_then_anyone) {
  setup(3, ZKR_POLICY_HYBRID);
  fake_in_pool[1] = fake_in_pool[2] = 0;
  ck_assert_int_eq(zkr__policy_read_member(&z), 0); /* leader */
  fake_usable[0] = 0;
  /* Leader gone too: any usable member (the ejected ones are connected). */
  int m = zkr__policy_read_member(&z);
  ck_assert(m == 1 || m == 2);
  fake_usable[1] = fake_usable[2] = 0;
  ck_assert_int_eq(zkr__policy_read_member(&z), -1);
  ck_assert_int_eq(zkr__policy_write_member(&z), -1);
}
END_TEST

START_TEST(hybrid_leader_in_pool_when_asked) {
  setup(3, ZKR_POLICY_HYBRID);
  z.opts.read_from_leader = 1;
  int hits[3] = {0};
  count_reads(hits, 300);
  ck_assert_int_eq(hits[0], 100);
  ck_assert_int_eq(hits[1], 100);
}
END_TEST

START_TEST(writes_without_leader_stay_on_current_session) {
  setup(3, ZKR_POLICY_HYBRID);
  z.leader = -1;
  z.gate_cur = 2;
  ck_assert_int_eq(zkr__policy_write_member(&z), 2);
  fake_usable[2] = 0;
  int m = zkr__policy_write_member(&z);
  ck_assert(m == 0 || m == 1);
  z.leader = 1;
  ck_assert_int_eq(zkr__policy_write_member(&z), 1);
}
END_TEST

START_TEST(round_robin_uses_everyone_for_everything) {
  setup(3, ZKR_POLICY_ROUND_ROBIN);
  int hits[3] = {0};
  count_reads(hits, 300);
  for (int i = 0; i < 3; i++) ck_assert_int_eq(hits[i], 100);
  int w[3] = {0};
  for (int i = 0; i < 300; i++) w[zkr__policy_write_member(&z)]++;
  for (int i = 0; i < 3; i++) ck_assert_int_eq(w[i], 100);
}
END_TEST

START_TEST(leader_only_uses_leader) {
  setup(3, ZKR_POLICY_LEADER_ONLY);
  for (int i = 0; i < 50; i++) {
    ck_assert_int_eq(zkr__policy_read_member(&z), 0);
    ck_assert_int_eq(zkr__policy_write_member(&z), 0);
  }
}
END_TEST

START_TEST(sticky_keeps_one_member_and_moves_when_lost) {
  setup(3, ZKR_POLICY_STICKY);
  z.sticky = 1;
  for (int i = 0; i < 50; i++) {
    ck_assert_int_eq(zkr__policy_read_member(&z), 1);
    ck_assert_int_eq(zkr__policy_write_member(&z), 1);
  }
  fake_usable[1] = 0;
  int m = zkr__policy_read_member(&z);
  ck_assert(m == 0 || m == 2);
  for (int i = 0; i < 50; i++) ck_assert_int_eq(zkr__policy_write_member(&z), m);
}
END_TEST

/* Draws n members with policy boltzmann, reads and writes alternating. */
static void boltzmann_draws(int *hits, int n) {
  for (int i = 0; i < n; i++) {
    int m = i % 2 ? zkr__policy_write_member(&z) : zkr__policy_read_member(&z);
    ck_assert_int_ge(m, 0);
    hits[m]++;
  }
}

static void set_ewma(double e0, double e1, double e2) {
  members[0].health.ewma_ms = e0;
  members[1].health.ewma_ms = e1;
  members[2].health.ewma_ms = e2;
}

START_TEST(boltzmann_equal_latencies_spread_everything) {
  setup(3, ZKR_POLICY_BOLTZMANN);
  z.opts.boltzmann_temperature = 1;
  set_ewma(3, 3, 3);
  int hits[3] = {0};
  boltzmann_draws(hits, 30000);
  /* Uniform over all three, the leader included, for reads and writes:
   * 10000 each, binomial sd ~82. */
  for (int i = 0; i < 3; i++) {
    ck_assert_int_gt(hits[i], 9500);
    ck_assert_int_lt(hits[i], 10500);
  }
}
END_TEST

START_TEST(boltzmann_weights_follow_exp_of_latency) {
  setup(3, ZKR_POLICY_BOLTZMANN);
  z.opts.boltzmann_temperature = 1;
  set_ewma(2, 3, 40); /* weights 1, e^-1, e^-38 */
  int hits[3] = {0};
  boltzmann_draws(hits, 40000);
  double p0 = 1 / (1 + exp(-1)), p1 = exp(-1) / (1 + exp(-1));
  ck_assert_int_gt(hits[0], (int)(40000 * p0) - 500);
  ck_assert_int_lt(hits[0], (int)(40000 * p0) + 500);
  ck_assert_int_gt(hits[1], (int)(40000 * p1) - 500);
  ck_assert_int_eq(hits[2], 0);
  /* A higher temperature flattens the same latencies. */
  z.opts.boltzmann_temperature = 1000;
  int flat[3] = {0};
  boltzmann_draws(flat, 30000);
  for (int i = 0; i < 3; i++) ck_assert_int_gt(flat[i], 9000);
}
END_TEST

START_TEST(boltzmann_unsampled_member_counts_at_the_mean) {
  setup(3, ZKR_POLICY_BOLTZMANN);
  z.opts.boltzmann_temperature = 1;
  set_ewma(-1, 2, 4); /* member 0 counts as 3: weights e^-1, 1, e^-2 */
  int hits[3] = {0};
  boltzmann_draws(hits, 40000);
  double tot = exp(-1) + 1 + exp(-2);
  ck_assert_int_gt(hits[0], (int)(40000 * exp(-1) / tot) - 500);
  ck_assert_int_lt(hits[0], (int)(40000 * exp(-1) / tot) + 500);
  ck_assert_int_gt(hits[1], (int)(40000 * 1 / tot) - 500);
  ck_assert_int_lt(hits[2], (int)(40000 * exp(-2) / tot) + 500);
  /* No member has a sample: all equal. */
  set_ewma(-1, -1, -1);
  int eq[3] = {0};
  boltzmann_draws(eq, 30000);
  for (int i = 0; i < 3; i++) ck_assert_int_gt(eq[i], 9500);
}
END_TEST

START_TEST(boltzmann_skips_unusable_and_is_reproducible) {
  setup(3, ZKR_POLICY_BOLTZMANN);
  z.opts.boltzmann_temperature = 1;
  set_ewma(1, 1, 1);
  fake_usable[1] = 0;
  int hits[3] = {0}, seq[64];
  boltzmann_draws(hits, 1000);
  ck_assert_int_eq(hits[1], 0);
  ck_assert_int_gt(hits[0], 0);
  ck_assert_int_gt(hits[2], 0);
  /* Same seed and counter, same draws. */
  z.rr = 0;
  for (int i = 0; i < 64; i++) seq[i] = zkr__policy_read_member(&z);
  z.rr = 0;
  for (int i = 0; i < 64; i++) ck_assert_int_eq(zkr__policy_read_member(&z), seq[i]);
  fake_usable[0] = fake_usable[2] = 0;
  ck_assert_int_eq(zkr__policy_read_member(&z), -1);
  ck_assert_int_eq(zkr__policy_write_member(&z), -1);
}
END_TEST

int main(void) {
  Suite *s = suite_create("policy");
  TCase *tc = tcase_create("pure");
  tcase_set_timeout(tc, 10);
  tcase_add_test(tc, hybrid_reads_rotate_over_followers);
  tcase_add_test(tc, hybrid_skips_ejected_and_observer_counts);
  tcase_add_test(tc, hybrid_falls_back_to_leader_then_anyone);
  tcase_add_test(tc, observers_never_take_writes);
  tcase_add_test(tc, hybrid_leader_in_pool_when_asked);
  tcase_add_test(tc, writes_without_leader_stay_on_current_session);
  tcase_add_test(tc, round_robin_uses_everyone_for_everything);
  tcase_add_test(tc, leader_only_uses_leader);
  tcase_add_test(tc, sticky_keeps_one_member_and_moves_when_lost);
  tcase_add_test(tc, boltzmann_equal_latencies_spread_everything);
  tcase_add_test(tc, boltzmann_weights_follow_exp_of_latency);
  tcase_add_test(tc, boltzmann_unsampled_member_counts_at_the_mean);
  tcase_add_test(tc, boltzmann_skips_unusable_and_is_reproducible);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? 1 : 0;
}
