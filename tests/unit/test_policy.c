/* Unit tests (no server) of the policies in zkroute/core/policy.c and the read
 * selectors of zkroute/selector.c.  The member state they read comes from a
 * fake: this file defines zkr__member_usable(), zkr__member_in_pool() and
 * zkr__member_readonly()
 * over two arrays, so each test sets exactly which members are connected
 * and healthy; the ready-made selectors get fake member arrays made by
 * hand (no handle at all). */
#include <check.h>
#include <math.h>
#include <string.h>

#include "dropin/internal.h"

static int fake_usable[ZKR_MAX_MEMBERS];
static int fake_in_pool[ZKR_MAX_MEMBERS];

int zkr__member_usable(const zkr__member_t *m) { return fake_usable[m->index]; }
int zkr__member_observer(const zkr__member_t *m) {
  return m->role == ZKR_ROLE_OBSERVER || m->cfg_observer;
}
int zkr__member_in_pool(zkr__member_t *m) {
  return fake_usable[m->index] && fake_in_pool[m->index];
}
/* No member is on a read-only server in these tests. */
int zkr__member_readonly(const zkr__member_t *m) {
  (void)m;
  return 0;
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
  pthread_rwlock_init(&z.sel_lock, NULL);
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
  static const int policies[] = {ZKR_POLICY_HYBRID, ZKR_POLICY_ROUND_ROBIN, ZKR_POLICY_LEADER_ONLY,
                                 ZKR_POLICY_STICKY, ZKR_POLICY_BOLTZMANN};
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

/* No leader known (it stopped answering srvr) and member 0 is deposed in
 * epoch 1 (srvr showed its zxid of epoch 1 while the handle has seen epoch
 * 2): the write gate - which also carries the reads ordered behind the
 * handle's writes - goes to no such member, neither staying on it nor
 * rotating to it.  A read served there answers from the old epoch's
 * state, older than the handle's own acknowledged writes; a write there
 * cannot commit.  With no current member it waits (-1).
 * (The simulator: tests/sim/zkroute-sim --seed 606 --mode routed.) */
START_TEST(writes_without_leader_go_to_no_older_epoch_member) {
  setup(3, ZKR_POLICY_HYBRID);
  z.leader = -1;
  z.srvr_epoch = 2;
  members[0].zxid = members[0].last_zxid = 0x100000009LL;
  members[1].zxid = members[1].last_zxid = 0x200000005LL;
  members[2].zxid = members[2].last_zxid = 0x200000005LL;
  fake_usable[2] = 0;
  z.gate_cur = 0;
  for (int i = 0; i < 10; i++) ck_assert_int_eq(zkr__policy_write_member(&z), 1);
  z.gate_cur = -1;
  for (int i = 0; i < 10; i++) ck_assert_int_eq(zkr__policy_write_member(&z), 1);
  fake_usable[1] = 0;
  ck_assert_int_eq(zkr__policy_write_member(&z), -1);
  /* The handle's own high-water mark counts as much as srvr's epoch. */
  fake_usable[1] = 1;
  z.srvr_epoch = 1;
  z.hwm_zxid = 0x200000001LL;
  for (int i = 0; i < 10; i++) ck_assert_int_eq(zkr__policy_write_member(&z), 1);
  /* Sessions of the other policies spread writes, on current members too. */
  z.opts.policy = ZKR_POLICY_ROUND_ROBIN;
  for (int i = 0; i < 10; i++) ck_assert_int_eq(zkr__policy_write_member(&z), 1);
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

/* Hedge targets: uniform over the other pool members (random, not the
 * next in the rotation nor the fastest), never the primary, an ejected or
 * disconnected member or the leader; -1 when the pool has no other. */
START_TEST(hedge_target_is_random_other_pool_member) {
  setup(5, ZKR_POLICY_HYBRID);
  fake_in_pool[2] = 0; /* ejected */
  set_ewma(-1, 1, 1);
  members[3].health.ewma_ms = 1;
  members[4].health.ewma_ms = 50;
  int hits[5] = {0}, changes = 0, last = -1;
  for (int i = 0; i < 30000; i++) {
    int m = zkr__policy_hedge_member(&z, 1);
    ck_assert_int_ge(m, 0);
    hits[m]++;
    changes += m != last;
    last = m;
  }
  ck_assert_int_eq(hits[0] + hits[1] + hits[2], 0);
  /* Members 3 and 4 alike, although 4 is much slower. */
  ck_assert_int_gt(hits[3], 14000);
  ck_assert_int_gt(hits[4], 14000);
  /* Not an alternation: about half of the draws repeat the last one. */
  ck_assert_int_lt(changes, 17000);
  ck_assert_int_gt(changes, 13000);
  fake_in_pool[3] = fake_in_pool[4] = 0;
  ck_assert_int_eq(zkr__policy_hedge_member(&z, 1), -1);
}
END_TEST

/* ---- leader_read_weight ---- */

START_TEST(leader_read_weight_gives_the_leader_its_share) {
  setup(3, ZKR_POLICY_HYBRID);
  z.opts.leader_read_weight = 0.25;
  int hits[3] = {0};
  count_reads(hits, 1000);
  ck_assert_int_eq(hits[0], 250); /* exactly: a counter, not a draw */
  ck_assert_int_eq(hits[1], 375);
  ck_assert_int_eq(hits[2], 375);
  /* An ejected leader gets none; its share goes to the followers. */
  fake_in_pool[0] = 0;
  int h2[3] = {0};
  count_reads(h2, 100);
  ck_assert_int_eq(h2[0], 0);
  ck_assert_int_eq(h2[1] + h2[2], 100);
  /* Weight 1: every read on the leader (while it is in the pool). */
  fake_in_pool[0] = 1;
  z.opts.leader_read_weight = 1;
  int h3[3] = {0};
  count_reads(h3, 100);
  ck_assert_int_eq(h3[0], 100);
  /* Writes are not affected. */
  ck_assert_int_eq(zkr__policy_write_member(&z), 0);
}
END_TEST

START_TEST(leader_read_weight_overrides_read_from_leader) {
  setup(3, ZKR_POLICY_HYBRID);
  z.opts.read_from_leader = 1;
  z.opts.leader_read_weight = 0.1;
  int hits[3] = {0};
  count_reads(hits, 1000);
  ck_assert_int_eq(hits[0], 100);
  ck_assert_int_eq(hits[1], 450);
}
END_TEST

/* ---- the user's selector, as policy.c asks it ---- */

static zkr_member_info_t seen[5];
static int seen_n, selector_calls;
static int fixed_selector(const zkr_member_info_t *m, int n, void *ctx) {
  memcpy(seen, m, (size_t)n * sizeof *m);
  seen_n = n;
  selector_calls++;
  return *(int *)ctx;
}

static void install(zkr_read_selector_fn fn, void *ctx) {
  z.sel_fn = fn;
  z.sel_ctx = ctx;
  z.sel_on = fn != NULL;
}

START_TEST(selector_pick_is_used_and_counted) {
  setup(3, ZKR_POLICY_HYBRID);
  int want = 2;
  install(fixed_selector, &want);
  int hits[3] = {0};
  count_reads(hits, 100);
  ck_assert_int_eq(hits[2], 100);
  ck_assert_uint_eq(z.sel_picks, 100);
  ck_assert_uint_eq(members[2].selected, 100);
  ck_assert_uint_eq(z.sel_fallbacks, 0);
  /* It may pick the leader: its choice, not the pool's. */
  want = 0;
  ck_assert_int_eq(zkr__policy_read_member(&z), 0);
  /* Writes never ask it. */
  selector_calls = 0;
  ck_assert_int_eq(zkr__policy_write_member(&z), 0);
  ck_assert_int_eq(selector_calls, 0);
}
END_TEST

START_TEST(selector_out_of_range_or_unusable_falls_back) {
  setup(3, ZKR_POLICY_HYBRID);
  int want = 3; /* one past the end */
  install(fixed_selector, &want);
  int hits[3] = {0};
  count_reads(hits, 100);
  ck_assert_int_eq(hits[0], 0); /* hybrid's rotation over the followers */
  ck_assert_int_eq(hits[1], 50);
  ck_assert_int_eq(hits[2], 50);
  want = -1;
  count_reads(hits, 10);
  want = 1000000;
  count_reads(hits, 10);
  /* A disconnected member is refused even though the selector named it. */
  want = 2;
  fake_usable[2] = 0;
  for (int i = 0; i < 10; i++) ck_assert_int_eq(zkr__policy_read_member(&z), 1);
  ck_assert_uint_eq(z.sel_fallbacks, 130);
  ck_assert_uint_eq(z.sel_picks, 0);
  /* NULL restores the default without asking anything. */
  install(NULL, NULL);
  selector_calls = 0;
  ck_assert_int_eq(zkr__policy_read_member(&z), 1);
  ck_assert_int_eq(selector_calls, 0);
  ck_assert_uint_eq(z.sel_fallbacks, 130);
}
END_TEST

START_TEST(selector_sees_every_member) {
  setup(3, ZKR_POLICY_HYBRID);
  strcpy(members[0].zone, "a");
  strcpy(members[1].zone, "b");
  strcpy(members[0].address, "h0:1");
  strcpy(z.opts.local_zone, "b");
  members[1].outstanding = 7;
  members[2].health.ewma_ms = 2.5;
  members[1].health.ewma_ms = NAN;
  fake_in_pool[2] = 0;
  int want = 1;
  install(fixed_selector, &want);
  ck_assert_int_eq(zkr__policy_read_member(&z), 1);
  ck_assert_int_eq(seen_n, 3);
  ck_assert_int_eq(seen[0].index, 0);
  ck_assert_str_eq(seen[0].address, "h0:1");
  ck_assert_int_eq(seen[0].role, ZKR_ROLE_LEADER);
  ck_assert_int_eq(seen[0].is_leader, 1);
  ck_assert_int_eq(seen[0].in_pool, 0); /* the leader: no weight */
  ck_assert_int_eq(seen[0].usable, 1);
  ck_assert_str_eq(seen[0].zone, "a");
  ck_assert_int_eq(seen[0].local, 0);
  ck_assert_str_eq(seen[1].zone, "b");
  ck_assert_int_eq(seen[1].local, 1);
  ck_assert_int_eq(seen[1].in_pool, 1);
  ck_assert_int_eq(seen[1].outstanding, 7);
  ck_assert(seen[1].ewma_ms == -1); /* no valid sample */
  ck_assert_str_eq(seen[2].zone, "");
  ck_assert_int_eq(seen[2].local, 0);
  ck_assert_int_eq(seen[2].in_pool, 0);
  ck_assert(seen[2].ewma_ms == 2.5);
  /* With a leader weight the leader is in the pool the selector sees. */
  z.opts.leader_read_weight = 0.5;
  zkr__policy_read_member(&z);
  ck_assert_int_eq(seen[0].in_pool, 1);
}
END_TEST

static int reentrant_rc;
static int calls_zkr(const zkr_member_info_t *m, int n, void *ctx) {
  (void)m;
  (void)n;
  reentrant_rc = zkr_set_read_selector(ctx, NULL, NULL);
  return 1;
}

START_TEST(selector_cannot_call_zkroute) {
  setup(3, ZKR_POLICY_HYBRID);
  install(calls_zkr, &z);
  ck_assert_int_eq(zkr__policy_read_member(&z), 1);
  ck_assert_int_eq(reentrant_rc, ZKR_EINCALLBACK);
  ck_assert_int_eq(z.sel_on, 1); /* unchanged */
}
END_TEST

/* ---- ready-made selectors on fake member arrays ---- */

/* A fake member array: n members, all usable and in the pool, EWMA 1 ms,
 * nothing outstanding. */
static zkr_member_info_t fm[8];
static void fake_members(int n) {
  memset(fm, 0, sizeof fm);
  for (int i = 0; i < n; i++) {
    fm[i].index = i;
    fm[i].address = "fake";
    fm[i].role = ZKR_ROLE_FOLLOWER;
    fm[i].zone = "";
    fm[i].usable = fm[i].in_pool = 1;
    fm[i].ewma_ms = 1;
  }
}

START_TEST(p2c_takes_the_lighter_of_two) {
  zkr_selector_ctx_t c = {.seed = 7};
  fake_members(2);
  fm[0].outstanding = 3; /* load 4 x 1 */
  fm[1].ewma_ms = 3;     /* load 1 x 3 */
  for (int i = 0; i < 100; i++) ck_assert_int_eq(zkr_selector_p2c(fm, 2, &c), 1);
  fm[1].ewma_ms = 5; /* now 5 > 4 */
  for (int i = 0; i < 100; i++) ck_assert_int_eq(zkr_selector_p2c(fm, 2, &c), 0);
  /* Three members: the heaviest always loses its duel, the others win
   * theirs: 1/3 + 1/6 each way. */
  fake_members(3);
  fm[2].outstanding = 10;
  int hits[3] = {0};
  for (int i = 0; i < 30000; i++) hits[zkr_selector_p2c(fm, 3, &c)]++;
  ck_assert_int_eq(hits[2], 0);
  ck_assert_int_gt(hits[0], 14000);
  ck_assert_int_gt(hits[1], 14000);
  /* Equal loads: uniform. */
  fm[2].outstanding = 0;
  int eq[3] = {0};
  for (int i = 0; i < 30000; i++) eq[zkr_selector_p2c(fm, 3, NULL)]++;
  for (int i = 0; i < 3; i++) ck_assert_int_gt(eq[i], 9500);
}
END_TEST

START_TEST(p2c_pool_only_unsampled_at_mean_and_reproducible) {
  zkr_selector_ctx_t c = {.seed = 9};
  fake_members(4);
  fm[0].in_pool = 0;  /* ejected (or the leader without weight) */
  fm[1].ewma_ms = -1; /* counts at the mean of 2 and 4: 3 */
  fm[2].ewma_ms = 2;
  fm[3].ewma_ms = 4;
  int hits[4] = {0};
  for (int i = 0; i < 3000; i++) hits[zkr_selector_p2c(fm, 4, &c)]++;
  ck_assert_int_eq(hits[0], 0);
  ck_assert_int_eq(hits[3], 0); /* the slowest loses every duel */
  ck_assert_int_gt(hits[1], 0); /* wins against 3 */
  ck_assert_int_gt(hits[2], hits[1]);
  int seq[32];
  zkr_selector_ctx_t a = {.seed = 5}, b = {.seed = 5};
  for (int i = 0; i < 32; i++) seq[i] = zkr_selector_p2c(fm, 4, &a);
  for (int i = 0; i < 32; i++) ck_assert_int_eq(zkr_selector_p2c(fm, 4, &b), seq[i]);
  /* Nothing in the pool, no members, NULL: the default policy. */
  for (int i = 0; i < 4; i++) fm[i].in_pool = 0;
  ck_assert_int_eq(zkr_selector_p2c(fm, 4, &c), -1);
  ck_assert_int_eq(zkr_selector_p2c(fm, 0, &c), -1);
  ck_assert_int_eq(zkr_selector_p2c(NULL, 3, &c), -1);
  /* One member in the pool: that one. */
  fm[3].in_pool = 1;
  ck_assert_int_eq(zkr_selector_p2c(fm, 4, &c), 3);
}
END_TEST

START_TEST(same_zone_stays_in_zone_or_defers) {
  zkr_selector_ctx_t c = {.seed = 3};
  fake_members(5);
  fm[0].zone = fm[1].zone = "east";
  fm[2].zone = fm[3].zone = "west";
  fm[2].local = fm[3].local = 1; /* local_zone=west */
  /* ctx NULL (or no zone in it): the members flagged local. */
  int hits[5] = {0};
  for (int i = 0; i < 1000; i++) hits[zkr_selector_same_zone(fm, 5, NULL)]++;
  for (int i = 0; i < 1000; i++) hits[zkr_selector_same_zone(fm, 5, &c)]++;
  ck_assert_int_eq(hits[0] + hits[1] + hits[4], 0);
  ck_assert_int_gt(hits[2], 800);
  ck_assert_int_gt(hits[3], 800);
  /* A zone named in the context. */
  zkr_selector_ctx_t e = {.zone = "east", .seed = 3};
  int he[5] = {0};
  for (int i = 0; i < 1000; i++) he[zkr_selector_same_zone(fm, 5, &e)]++;
  ck_assert_int_eq(he[2] + he[3] + he[4], 0);
  /* Within the zone, the lighter member wins. */
  fm[0].outstanding = 50;
  for (int i = 0; i < 100; i++) ck_assert_int_eq(zkr_selector_same_zone(fm, 5, &e), 1);
  /* The zone's members out of the pool: -1, the default over all zones. */
  fm[0].in_pool = fm[1].in_pool = 0;
  ck_assert_int_eq(zkr_selector_same_zone(fm, 5, &e), -1);
  zkr_selector_ctx_t none = {.zone = ""};
  ck_assert_int_eq(zkr_selector_same_zone(fm, 5, &none), -1);
  /* No member flagged local (local_zone unset): -1. */
  for (int i = 0; i < 5; i++) fm[i].local = 0;
  ck_assert_int_eq(zkr_selector_same_zone(fm, 5, NULL), -1);
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
  tcase_add_test(tc, writes_without_leader_go_to_no_older_epoch_member);
  tcase_add_test(tc, round_robin_uses_everyone_for_everything);
  tcase_add_test(tc, leader_only_uses_leader);
  tcase_add_test(tc, sticky_keeps_one_member_and_moves_when_lost);
  tcase_add_test(tc, boltzmann_equal_latencies_spread_everything);
  tcase_add_test(tc, boltzmann_weights_follow_exp_of_latency);
  tcase_add_test(tc, boltzmann_unsampled_member_counts_at_the_mean);
  tcase_add_test(tc, boltzmann_skips_unusable_and_is_reproducible);
  tcase_add_test(tc, hedge_target_is_random_other_pool_member);
  tcase_add_test(tc, leader_read_weight_gives_the_leader_its_share);
  tcase_add_test(tc, leader_read_weight_overrides_read_from_leader);
  tcase_add_test(tc, selector_pick_is_used_and_counted);
  tcase_add_test(tc, selector_out_of_range_or_unusable_falls_back);
  tcase_add_test(tc, selector_sees_every_member);
  tcase_add_test(tc, selector_cannot_call_zkroute);
  tcase_add_test(tc, p2c_takes_the_lighter_of_two);
  tcase_add_test(tc, p2c_pool_only_unsampled_at_mean_and_reproducible);
  tcase_add_test(tc, same_zone_stays_in_zone_or_defers);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? 1 : 0;
}
