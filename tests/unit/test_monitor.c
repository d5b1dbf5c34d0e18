/* Server-less unit tests of the monitor's poll rate (monitor.c,
 * poller.c): a handle polls srvr every leader_poll_ms while it works
 * or while the picture is unsettled, every idle_poll_ms while it is idle,
 * and the first operation after an idle spell polls at once.  The fake
 * ZooKeeper of tests/harness/fakezk.c answers srvr from its role table;
 * the polls are counted by the handle's own statistics (srvr_polls).
 *
 * The rates compared are 25 ms and 2 s, so the windows below hold about
 * 40 fast polls or at most one or two idle ones: the margins are wide
 * enough for a loaded machine (a fast window is asserted at >= 8). */
#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>

#include "fakezk.h"
#include "zkroute.h"

#define HOSTS "fake1:2181,fake2:2181,fake3:2181"

static zkr_t *z;

static uint64_t now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

static void sleep_ms(int ms) {
  nanosleep(&(struct timespec){ms / 1000, (ms % 1000) * 1000000L}, NULL);
}

/* srvr polls of member 0 so far. */
static uint64_t polls(void) {
  zkr_stats_t *s;
  ck_assert_int_eq(zkr_stats(z, &s), ZOK);
  uint64_t n = s->members[0].srvr_polls;
  zkr_stats_free(s);
  return n;
}

/* fake1 leads, fake2 and fake3 follow (fake3 unreachable when
 * three_answers is 0); every session connects. */
static void open3(int idle_poll_ms, int three_answers) {
  fake_install();
  fake_set_role(1, ZKR_ROLE_LEADER, 0x100000005LL);
  fake_set_role(2, ZKR_ROLE_FOLLOWER, 0x100000005LL);
  fake_set_role(3, three_answers ? ZKR_ROLE_FOLLOWER : 0, 0x100000005LL);
  zkr_options_t o = ZKR_OPTIONS_INIT;
  o.leader_poll_ms = 25;
  o.idle_poll_ms = idle_poll_ms;
  o.hedge = -1;
  o.follow_config = -1;
  o.sync_coalesce = -1;
  o.rescue_ms = 60000;
  o.rescue_down_ms = 60000;
  ck_assert_int_eq(zkr_init_opts(&z, HOSTS, NULL, 3000, NULL, NULL, 0, &o), ZOK);
  for (int i = 1; i <= 3; i++) {
    fake_zh_t *h = fake_handle(i, 0);
    ck_assert_ptr_nonnull(h);
    fake_connect(h, 0);
  }
  uint64_t deadline = now_ms() + 5000;
  while (zkr_state(z) != ZOO_CONNECTED_STATE && now_ms() < deadline) sleep_ms(2);
  ck_assert_int_eq(zkr_state(z), ZOO_CONNECTED_STATE);
}

static void teardown(void) {
  if (z) zkr_close(z);
  z = NULL;
  fake_uninstall();
}

/* Polls of member 0 over the next ms milliseconds. */
static uint64_t polls_during(int ms) {
  uint64_t p0 = polls();
  sleep_ms(ms);
  return polls() - p0;
}

START_TEST(idle_handle_polls_slowly) {
  open3(2000, 1);
  /* Two settled polls with nothing submitted make the handle idle; then
   * the next poll is 2 s away. */
  sleep_ms(300);
  uint64_t idle = polls_during(1000);
  fprintf(stderr, "idle: %llu polls in 1 s at idle_poll_ms=2000\n", (unsigned long long)idle);
  ck_assert_uint_le(idle, 1);
}
END_TEST

static void done_stat(int rc, const struct Stat *s, const void *d) { (void)rc, (void)s, (void)d; }

START_TEST(first_operation_after_idle_polls_at_once) {
  open3(2000, 1);
  sleep_ms(300);
  ck_assert_uint_le(polls_during(600), 1); /* idle now */
  uint64_t p0 = polls(), t0 = now_ms();
  /* An operation (its reply never comes: the kick does not wait for it). */
  ck_assert_int_eq(zkr_aexists(z, "/x", 0, done_stat, NULL), ZOK);
  while (polls() == p0 && now_ms() < t0 + 1000) sleep_ms(2);
  uint64_t waited = now_ms() - t0;
  fprintf(stderr, "kick: a poll %llu ms after the first operation\n", (unsigned long long)waited);
  ck_assert_uint_gt(polls(), p0);
  ck_assert_uint_lt(waited, 1000);
}
END_TEST

START_TEST(working_handle_polls_fast) {
  open3(2000, 1);
  sleep_ms(300);
  /* An operation every 10 ms: never idle. */
  uint64_t p0 = polls(), t0 = now_ms();
  while (now_ms() < t0 + 1000) {
    ck_assert_int_eq(zkr_aexists(z, "/x", 0, done_stat, NULL), ZOK);
    sleep_ms(10);
  }
  uint64_t busy = polls() - p0;
  fprintf(stderr, "busy: %llu polls in 1 s at leader_poll_ms=25\n", (unsigned long long)busy);
  ck_assert_uint_ge(busy, 8);
}
END_TEST

START_TEST(unsettled_handle_polls_fast) {
  /* fake3 never answers srvr: the picture is not settled, so an idle
   * handle keeps polling at leader_poll_ms (it notices the server's return
   * within one poll). */
  open3(2000, 0);
  sleep_ms(300);
  uint64_t n = polls_during(1000);
  fprintf(stderr, "unsettled: %llu polls in 1 s\n", (unsigned long long)n);
  ck_assert_uint_ge(n, 8);
}
END_TEST

START_TEST(one_rate_when_idle_poll_is_not_slower) {
  open3(25, 1);
  sleep_ms(300);
  uint64_t n = polls_during(1000);
  fprintf(stderr, "one rate: %llu polls in 1 s\n", (unsigned long long)n);
  ck_assert_uint_ge(n, 8);
}
END_TEST

int main(void) {
  Suite *s = suite_create("monitor");
  TCase *tc = tcase_create("poll rate");
  tcase_set_timeout(tc, 20);
  tcase_add_checked_fixture(tc, NULL, teardown);
  tcase_add_test(tc, idle_handle_polls_slowly);
  tcase_add_test(tc, first_operation_after_idle_polls_at_once);
  tcase_add_test(tc, working_handle_polls_fast);
  tcase_add_test(tc, unsettled_handle_polls_fast);
  tcase_add_test(tc, one_rate_when_idle_poll_is_not_slower);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? 1 : 0;
}
