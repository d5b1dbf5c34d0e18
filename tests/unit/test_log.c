/* Server-less unit tests of the log lines of routing state changes
 * (docs/operations.md): the storm limit with an exact clock, and the lines
 * of a handle on the fake ZooKeeper of tests/harness/fakezk.c - written
 * through ZooKeeper's log_message to the sessions' log callback, or to its
 * log stream without one, filtered by ZooKeeper's log level, cut in a
 * storm with the count of what was dropped, and one real state change
 * (the leader moving) logged where it happens. */
#include <check.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "fakezk.h"
#include "core/handle.h"
#include "core/log.h"

#define HOSTS "fake1:2181,fake2:2181,fake3:2181"
#define S 1000000000ull

static uint64_t now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

static void sleep_ms(int ms) {
  struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
  nanosleep(&ts, NULL);
}

/* ---- the storm limit ---- */

START_TEST(limit_burst_then_rate) {
  zkr__log_limit_t l = {0};
  uint64_t report, t = 5 * S;
  for (int i = 0; i < ZKR__LOG_BURST; i++) {
    ck_assert_int_eq(zkr__log_limit_take(&l, t, &report), 1);
    ck_assert_uint_eq(report, 0);
  }
  for (int i = 0; i < 30; i++) ck_assert_int_eq(zkr__log_limit_take(&l, t, &report), 0);
  /* 100 ms: half a line's worth; nothing yet, and nothing to flush. */
  ck_assert_int_eq(zkr__log_limit_take(&l, t + S / 10, &report), 0);
  ck_assert_uint_eq(zkr__log_limit_flush(&l, t + S / 10), 0);
  /* 200 ms: one line goes, with the 31 dropped before it to report. */
  ck_assert_int_eq(zkr__log_limit_take(&l, t + S / 5, &report), 1);
  ck_assert_uint_eq(report, 31);
  ck_assert_int_eq(zkr__log_limit_take(&l, t + S / 5, &report), 0);
  /* With no new line, the flush reports the one dropped once a token is
   * back, and only once. */
  ck_assert_uint_eq(zkr__log_limit_flush(&l, t + S / 5 + S / 10), 0);
  ck_assert_uint_eq(zkr__log_limit_flush(&l, t + 2 * S / 5), 1);
  ck_assert_uint_eq(zkr__log_limit_flush(&l, t + 3 * S), 0);
  /* Quiet for long: the bucket is full again, no more. */
  for (int i = 0; i < ZKR__LOG_BURST; i++)
    ck_assert_int_eq(zkr__log_limit_take(&l, t + 60 * S, &report), 1);
  ck_assert_int_eq(zkr__log_limit_take(&l, t + 60 * S, &report), 0);
}
END_TEST

/* ---- lines of a handle ---- */

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static char seen[64][512];
static int n_seen;

static void capture(const char *line) {
  pthread_mutex_lock(&mu);
  if (n_seen < 64) snprintf(seen[n_seen++], sizeof seen[0], "%s", line);
  pthread_mutex_unlock(&mu);
}

/* Index of the first line holding text, or -1 after ms. */
static int find(const char *text, int ms) {
  uint64_t deadline = now_ms() + (uint64_t)ms;
  for (;;) {
    pthread_mutex_lock(&mu);
    for (int i = 0; i < n_seen; i++) {
      if (strstr(seen[i], text)) {
        pthread_mutex_unlock(&mu);
        return i;
      }
    }
    pthread_mutex_unlock(&mu);
    if (now_ms() > deadline) return -1;
    sleep_ms(5);
  }
}

static int lines_with(const char *text) {
  int c = 0;
  pthread_mutex_lock(&mu);
  for (int i = 0; i < n_seen; i++) c += strstr(seen[i], text) != NULL;
  pthread_mutex_unlock(&mu);
  return c;
}

/* The handle's log counters in zkr_stats: lines written, dropped. */
static void expect_counts(zkr_t *z, uint64_t lines, uint64_t dropped) {
  zkr_stats_t *s;
  ck_assert_int_eq(zkr_stats(z, &s), ZOK);
  ck_assert_uint_eq(s->log_lines, lines);
  ck_assert_uint_eq(s->log_dropped, dropped);
  zkr_stats_free(s);
}

static zkr_t *open_handle(void) {
  zkr_options_t o = ZKR_OPTIONS_INIT;
  o.leader_poll_ms = 20;
  o.idle_poll_ms = 20;
  o.hedge = -1;
  o.follow_config = -1;
  zkr_t *z = NULL;
  ck_assert_int_eq(zkr_init_opts(&z, HOSTS, NULL, 3000, NULL, NULL, 0, &o), ZOK);
  return z;
}

static void setup(void) {
  n_seen = 0;
  zoo_set_debug_level(ZOO_LOG_LEVEL_INFO);
  fake_install();
  fake_set_log_callback(capture);
}

static void teardown(void) {
  fake_set_log_callback(NULL);
  fake_uninstall();
}

START_TEST(line_through_the_callback) {
  zkr_t *z = open_handle();
  zkr__log_event(z, ZOO_LOG_LEVEL_WARN, "ejected", 1, "ewma_ms=%.2f reason=latency", 3.5);
  char want[128];
  snprintf(want, sizeof want,
           "event=ejected handle=%u member=fake2:2181 ewma_ms=3.50 reason=latency", z->serial);
  int i = find(want, 1000);
  ck_assert_int_ge(i, 0);
  /* ZooKeeper's own prefix: level and funcName@line of the call site. */
  ck_assert_ptr_nonnull(strstr(seen[i], ":ZOO_WARN@line_through_the_callback_fn@"));
  expect_counts(z, 1, 0);
  zkr_close(z);
}
END_TEST

/* Below ZooKeeper's level: neither written nor counted as dropped. */
START_TEST(level_filters) {
  zkr_t *z = open_handle();
  zoo_set_debug_level(ZOO_LOG_LEVEL_WARN);
  zkr__log_event(z, ZOO_LOG_LEVEL_INFO, "reinstated", 0, "reason=probes");
  zkr__log_event(z, ZOO_LOG_LEVEL_ERROR, "session_expired", 0, "owner=yes");
  ck_assert_int_ge(find("event=session_expired", 1000), 0);
  ck_assert_int_eq(lines_with("event=reinstated"), 0);
  expect_counts(z, 1, 0);
  zkr_close(z);
}
END_TEST

START_TEST(storm_is_cut_and_counted) {
  zkr_t *z = open_handle();
  for (int i = 0; i < 100; i++)
    zkr__log_event(z, ZOO_LOG_LEVEL_INFO, "watch_rearmed", 0, "path=/w%d missed_event=none", i);
  ck_assert_int_eq(lines_with("event=watch_rearmed"), ZKR__LOG_BURST);
  /* The monitor's tick reports the rest once a token is back (5 a second). */
  int i = find("event=log_dropped", 2000);
  ck_assert_int_ge(i, 0);
  ck_assert_ptr_nonnull(strstr(seen[i], "lines=80 reason=storm_limit"));
  ck_assert_ptr_nonnull(strstr(seen[i], ":ZOO_WARN@"));
  expect_counts(z, ZKR__LOG_BURST + 1, 80);
  zkr_close(z);
}
END_TEST

/* No callback: ZooKeeper's log stream. */
START_TEST(line_to_the_stream) {
  fake_set_log_callback(NULL);
  FILE *f = tmpfile();
  zoo_set_log_stream(f);
  zkr_t *z = open_handle();
  zkr__log_event(z, ZOO_LOG_LEVEL_INFO, "carrier_recreated", 2, "reason=expired");
  zkr_close(z);
  zoo_set_log_stream(NULL);
  char buf[4096] = "";
  rewind(f);
  size_t n = fread(buf, 1, sizeof buf - 1, f);
  buf[n] = '\0';
  fclose(f);
  ck_assert_msg(strstr(buf, "ZOO_INFO@") && strstr(buf, "event=carrier_recreated handle=") &&
                    strstr(buf, "member=fake3:2181 reason=expired\n"),
                "%s", buf);
}
END_TEST

/* A real state change, logged by the code that makes it. */
START_TEST(leader_change_is_logged) {
  fake_set_role(1, ZKR_ROLE_LEADER, 0x100000001);
  fake_set_role(2, ZKR_ROLE_FOLLOWER, 0x100000001);
  fake_set_role(3, ZKR_ROLE_FOLLOWER, 0x100000001);
  zkr_t *z = open_handle();
  uint64_t deadline = now_ms() + 3000;
  zkr_stats_t *s = NULL;
  for (;;) {
    ck_assert_int_eq(zkr_stats(z, &s), ZOK);
    int leader = s->leader;
    zkr_stats_free(s);
    if (leader == 0) break;
    ck_assert_uint_lt(now_ms(), deadline);
    sleep_ms(10);
  }
  fake_set_role(1, ZKR_ROLE_FOLLOWER, 0x200000001);
  fake_set_role(2, ZKR_ROLE_LEADER, 0x200000001);
  char want[128];
  snprintf(want, sizeof want,
           "event=leader_change handle=%u member=fake2:2181 previous=fake1:2181 epoch=2 "
           "reason=srvr",
           z->serial);
  int i = find(want, 3000);
  ck_assert_int_ge(i, 0);
  ck_assert_ptr_nonnull(strstr(seen[i], ":ZOO_INFO@zkr__poller_poll_members@"));
  zkr_close(z);
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("log");
  TCase *tc = tcase_create("limit");
  tcase_add_test(tc, limit_burst_then_rate);
  suite_add_tcase(s, tc);
  tc = tcase_create("lines");
  tcase_set_timeout(tc, 20);
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_add_test(tc, line_through_the_callback);
  tcase_add_test(tc, level_filters);
  tcase_add_test(tc, storm_is_cut_and_counted);
  tcase_add_test(tc, line_to_the_stream);
  tcase_add_test(tc, leader_change_is_logged);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) {
  SRunner *sr = srunner_create(suite());
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? 1 : 0;
}
