/* Unit tests of the simulator as a whole (tests/sim): one seed replays one
 * world byte for byte; stock mode (the model of libzookeeper_mt driven as
 * an application drives it) gives no violation, which is the evidence that
 * the model and the checkers agree with ZooKeeper's guarantees; and every
 * planted model bug is caught by some checker. */
#include <check.h>
#include <stdio.h>

#include "run.h"
#include "sim.h"

START_TEST(same_seed_same_world) {
  sim_opts_t o = {.seed = 424242};
  sim_result_t a, b, c;
  sim_run(&o, &a);
  sim_run(&o, &b);
  ck_assert_uint_eq(a.digest, b.digest);
  ck_assert_uint_eq(a.events, b.events);
  ck_assert_int_eq(a.violations, b.violations);
  ck_assert_int_gt(a.ops, 100);
  ck_assert_int_ge(a.faults, 3);
  o.seed = 424243;
  sim_run(&o, &c);
  ck_assert_uint_ne(a.digest, c.digest);
}
END_TEST

START_TEST(stock_mode_is_clean) {
  int bad = 0, undecided = 0;
  for (uint64_t seed = 1000; seed < 1300; seed++) {
    sim_opts_t o = {.seed = seed};
    sim_result_t r;
    if (sim_run(&o, &r)) {
      printf("stock seed %llu: %d violations\n%s", (unsigned long long)seed, r.violations,
             r.check.text);
      bad++;
    }
    undecided += r.check.undecided;
  }
  ck_assert_int_eq(bad, 0);
  ck_assert_int_lt(undecided, 10);
}
END_TEST

/* Routed mode (the library under test) replays too, also after other
 * schedules ran in the same process (the library's process-wide state
 * must not leak into the next world). */
START_TEST(routed_same_seed_same_world) {
  sim_opts_t o = {.seed = 77, .mode = SIM_ROUTED};
  sim_result_t a, b, c;
  sim_run(&o, &a);
  o.seed = 78;
  sim_run(&o, &c);
  o.seed = 77;
  sim_run(&o, &b);
  ck_assert_uint_eq(a.digest, b.digest);
  ck_assert_uint_eq(a.events, b.events);
  ck_assert_int_gt(a.ops, 100);
  ck_assert_uint_ne(a.digest, c.digest);
}
END_TEST

/* --slow-calls replays as well, and its schedule is another one: time
 * passed inside the library's zookeeper_init calls (seed 95: the owner's
 * old zhandle connects again during one, docs/simulation.md). */
START_TEST(routed_slow_calls_same_seed_same_world) {
  sim_opts_t o = {.seed = 95, .mode = SIM_ROUTED, .slow_calls = 1};
  sim_result_t a, b, c;
  sim_run(&o, &a);
  sim_run(&o, &b);
  o.slow_calls = 0;
  sim_run(&o, &c);
  ck_assert_uint_eq(a.digest, b.digest);
  ck_assert_uint_eq(a.events, b.events);
  ck_assert_int_eq(a.violations, 0);
  ck_assert_uint_ne(a.digest, c.digest);
}
END_TEST

/* Each planted bug is caught within 200 seeds. */
START_TEST(planted_bugs_caught) {
  static const char *names[] = {"",
                                "sync answered before applying",
                                "a watch notification dropped",
                                "two completions swapped",
                                "a watcher called twice",
                                "a read served before the session's writes",
                                "a completion lost",
                                "a connection loss without a cause"};
  for (int bug = SIM_BUG_SYNC_EARLY; bug <= SIM_BUG_FALSE_LOSS; bug++) {
    int caught = 0;
    uint64_t seed;
    for (seed = 1; seed <= 200 && !caught; seed++) {
      sim_opts_t o = {.seed = seed, .bug = bug};
      sim_result_t r;
      caught = sim_run(&o, &r) > 0;
    }
    printf("planted bug %d (%s): %s at seed %llu\n", bug, names[bug],
           caught ? "caught" : "NOT caught", (unsigned long long)(seed - 1));
    ck_assert_msg(caught, "planted bug %d (%s) not caught in 200 seeds", bug, names[bug]);
  }
}
END_TEST

int main(void) {
  Suite *s = suite_create("sim");
  TCase *tc = tcase_create("sim");
  tcase_set_timeout(tc, 240);
  tcase_add_test(tc, same_seed_same_world);
  tcase_add_test(tc, stock_mode_is_clean);
  tcase_add_test(tc, routed_same_seed_same_world);
  tcase_add_test(tc, routed_slow_calls_same_seed_same_world);
  tcase_add_test(tc, planted_bugs_caught);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? 1 : 0;
}
