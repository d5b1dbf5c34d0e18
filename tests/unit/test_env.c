/* Unit tests (no server) of the environment configuration behind the
 * drop-in layers (docs/dropin.md), through the public zkr_init_env(): a
 * good value is used, a bad one gives one stderr line and the default, an
 * unknown ZKROUTE_* variable is reported, ZKROUTE=off means sticky + local
 * for zkr_init_env and a plain handle for the compat header's
 * zkr_compat_init, and ZKROUTE_STATS gets one JSON line per handle at
 * close.  The compat header's calls with no server meaning (the event
 * loop, the resolution delay, the log callback, the credential lock) give
 * stock's codes on a routed handle and are the real ones on a plain one.  Each test runs in its own process (Check forks), so the
 * environment is read afresh.  The host list names closed local ports:
 * handles are created and closed without ever connecting. */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "zkroute.h"
#include "zkroute/compat.h"

#define HOSTS "127.0.0.1:9,127.0.0.2:9,127.0.0.3:9"

static char err_path[64];

/* Sends this process's stderr to a file, to read the warnings back. */
static void capture_stderr(void) {
  snprintf(err_path, sizeof err_path, "/tmp/zkr-test-env-%d.err", (int)getpid());
  int fd = open(err_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
  ck_assert_int_ge(fd, 0);
  dup2(fd, 2);
  close(fd);
  /* ZooKeeper's own log (connection refused) goes elsewhere: zkroute's
   * notes are written to fd 2 directly. */
  static FILE *devnull;
  if (!devnull) devnull = fopen("/dev/null", "w");
  zoo_set_log_stream(devnull);
}

static char *slurp(const char *path) {
  static char buf[65536];
  FILE *f = fopen(path, "r");
  size_t n = f ? fread(buf, 1, sizeof buf - 1, f) : 0;
  if (f) fclose(f);
  buf[n] = '\0';
  return buf;
}

static int count(const char *hay, const char *needle) {
  int n = 0;
  for (const char *p = hay; (p = strstr(p, needle)); p++) n++;
  return n;
}

static int policy_of(zkr_t *z) {
  zkr_stats_t *s;
  ck_assert_int_eq(zkr_stats(z, &s), ZOK);
  int p = s->policy;
  zkr_stats_free(s);
  return p;
}

START_TEST(good_values_are_used) {
  capture_stderr();
  setenv("ZKROUTE_POLICY", "round_robin", 1);
  setenv("ZKROUTE_LEADER_POLL_MS", "200", 1);
  setenv("ZKROUTE_HEALTH", "off", 1);
  zkr_t *z = zkr_init_env(HOSTS, NULL, 10000, NULL, NULL, 0);
  ck_assert_ptr_nonnull(z);
  ck_assert_int_eq(policy_of(z), ZKR_POLICY_ROUND_ROBIN);
  zkr_close(z);
  ck_assert_str_eq(slurp(err_path), "");
  unlink(err_path);
}
END_TEST

START_TEST(bad_values_warn_once_and_use_defaults) {
  capture_stderr();
  setenv("ZKROUTE_POLICY", "fastest", 1);
  setenv("ZKROUTE_EJECT_RATIO", "lots", 1);
  setenv("ZKROUTE_POLICEY", "hybrid", 1);
  setenv("ZKROUTE", "maybe", 1);
  setenv("ZKROUTE_CONSISTENCY", "", 1); /* empty: unset, no warning */
  for (int i = 0; i < 2; i++) {         /* the environment is read once */
    zkr_t *z = zkr_init_env(HOSTS, NULL, 10000, NULL, NULL, 0);
    ck_assert_ptr_nonnull(z);
    ck_assert_int_eq(policy_of(z), ZKR_POLICY_HYBRID);
    zkr_close(z);
  }
  const char *err = slurp(err_path);
  ck_assert_int_eq(count(err, "\n"), 4);
  ck_assert_int_eq(count(err, "zkroute: ignoring ZKROUTE_POLICY=fastest: not a valid policy"), 1);
  ck_assert_int_eq(count(err, "using the default, hybrid\n"), 1);
  ck_assert_int_eq(count(err, "zkroute: ignoring ZKROUTE_EJECT_RATIO=lots"), 1);
  ck_assert_int_eq(count(err, "using the default, 3\n"), 1);
  ck_assert_int_eq(count(err, "unknown variable ZKROUTE_POLICEY"), 1);
  ck_assert_int_eq(count(err, "ignoring ZKROUTE=maybe"), 1);
  unlink(err_path);
}
END_TEST

/* zkr_init_env must return a routed handle: with ZKROUTE=off, sticky +
 * local, said once. */
START_TEST(off_in_zkr_init_env_is_sticky) {
  capture_stderr();
  setenv("ZKROUTE", "off", 1);
  zkr_t *z = zkr_init_env(HOSTS, NULL, 10000, NULL, NULL, 0);
  ck_assert_ptr_nonnull(z);
  ck_assert_int_eq(policy_of(z), ZKR_POLICY_STICKY);
  zkr_close(z);
  z = zkr_init_env(HOSTS, NULL, 10000, NULL, NULL, 0);
  zkr_close(z);
  ck_assert_int_eq(count(slurp(err_path), "ZKROUTE=off: zkr_init_env() returns a routed handle"),
                   1);
  unlink(err_path);
}
END_TEST

/* The compat header's constructor: with ZKROUTE=off a plain
 * libzookeeper_mt handle that every compat call hands to the real
 * library; a routed handle of the same process is still routed. */
START_TEST(off_in_the_compat_header_is_plain) {
  capture_stderr();
  setenv("ZKROUTE", "off", 1);
  setenv("ZKROUTE_STATS", "/dev/null", 1);
  zhandle_t *zh = zkr_compat_init(HOSTS, NULL, 10000, NULL, NULL, 0, NULL);
  ck_assert_ptr_nonnull(zh);
  ck_assert_ptr_null(zkr_compat_routed(zh));
  /* A real handle: libzookeeper_mt answers for it, zkroute does not know it. */
  ck_assert_int_eq(zoo_recv_timeout(zh), 10000);
  ck_assert_int_eq(is_unrecoverable(zh), ZOK);
  zkr_stats_t *st = NULL;
  ck_assert_int_eq(zkr_stats(zkr_from_zh(zh), &st), ZKR_ECLOSED);
  zkr_t *z = zkr_init(HOSTS, NULL, 10000, NULL, NULL, 0);
  ck_assert_ptr_eq(zkr_compat_routed(zkr_as_zh(z)), z);
  ck_assert_int_eq(zkr_compat_close(zkr_as_zh(z)), ZOK);
  ck_assert_int_eq(zkr_compat_close(zh), ZOK);
  /* Closed: no longer a plain handle (a later one at that address would
   * be taken for what it is). */
  zhandle_t *zh2 = zkr_compat_init(HOSTS, NULL, 10000, NULL, NULL, 0, NULL);
  ck_assert_ptr_null(zkr_compat_routed(zh2));
  ck_assert_int_eq(zkr_compat_close(zh2), ZOK);
  /* A bad host list: NULL and errno, as the real zookeeper_init2. */
  errno = 0;
  ck_assert_ptr_null(zkr_compat_init("", NULL, 10000, NULL, NULL, 0, NULL));
  ck_assert_int_eq(errno, EINVAL);
  ck_assert_int_eq(count(slurp(err_path), "zkroute:"), 0); /* not verbose: silent */
  unlink(err_path);
}
END_TEST

START_TEST(on_in_the_compat_header_is_routed) {
  capture_stderr();
  zhandle_t *zh = zkr_compat_init(HOSTS, NULL, 10000, NULL, NULL, 0, NULL);
  ck_assert_ptr_nonnull(zh);
  zkr_t *z = zkr_compat_routed(zh);
  ck_assert_ptr_eq(z, zkr_from_zh(zh));
  ck_assert_int_eq(policy_of(z), ZKR_POLICY_HYBRID);
  ck_assert_int_eq(zkr_compat_close(zh), ZOK);
  ck_assert_int_eq(zkr_compat_close(zh), ZKR_ECLOSED);
  unlink(err_path);
}
END_TEST

/* The compat header's calls that have no server meaning on a routed
 * handle, on one that never connects: stock's codes where they exist. */
static void log_cb(const char *message) { (void)message; }

START_TEST(compat_calls_without_a_server) {
  capture_stderr();
  zhandle_t *zh = zookeeper_init(HOSTS, NULL, 10000, NULL, NULL, 0);
  ck_assert_ptr_nonnull(zkr_compat_routed(zh));
  int fd, interest;
  struct timeval tv;
  ck_assert_int_eq(zookeeper_interest(zh, &fd, &interest, &tv), ZUNIMPLEMENTED);
  ck_assert_int_eq(zookeeper_process(zh, 0), ZUNIMPLEMENTED);
  ck_assert_int_eq(zoo_set_servers_resolution_delay(zh, -2), ZBADARGUMENTS);
  ck_assert_int_eq(zoo_set_servers_resolution_delay(zh, -1), ZOK);
  ck_assert_int_eq(zoo_set_servers_resolution_delay(zh, 100), ZOK);
  zoo_cycle_next_server(zh);
  /* Before an owner is chosen: the first member's server; not connected. */
  ck_assert_str_eq(zoo_get_current_server(zh), "127.0.0.1:9");
  struct sockaddr_storage ss;
  socklen_t len = sizeof ss;
  ck_assert_ptr_null(zookeeper_get_connected_host(zh, (struct sockaddr *)&ss, &len));
  /* The log callback is not used here (docs/dropin.md). */
  zoo_set_log_callback(zh, log_cb);
  ck_assert_ptr_null(zoo_get_log_callback(zh));
  ck_assert_int_eq(zoo_lock_auth(zh), ZOK);
  ck_assert_int_eq(zoo_unlock_auth(zh), ZOK);
  ck_assert_int_eq(zoo_state(zh), ZOO_CONNECTING_STATE);
  ck_assert_int_eq(zookeeper_close(zh), ZOK);
  unlink(err_path);
}
END_TEST

/* The same calls on a plain handle (ZKROUTE=off) are the real functions'. */
START_TEST(compat_calls_on_a_plain_handle) {
  capture_stderr();
  setenv("ZKROUTE", "off", 1);
  zhandle_t *zh = zookeeper_init(HOSTS, NULL, 10000, NULL, NULL, 0);
  ck_assert_ptr_null(zkr_compat_routed(zh));
  ck_assert_int_eq(zoo_set_servers_resolution_delay(zh, -2), ZBADARGUMENTS);
  ck_assert_int_eq(zoo_set_servers_resolution_delay(zh, -1), ZOK);
  zoo_cycle_next_server(zh);
  ck_assert_int_eq(zoo_lock_auth(zh), 0);
  ck_assert_int_eq(zoo_unlock_auth(zh), 0);
  zoo_set_log_callback(zh, log_cb);
  ck_assert(zoo_get_log_callback(zh) == log_cb);
  ck_assert_int_eq(zookeeper_close(zh), ZOK);
  unlink(err_path);
}
END_TEST

START_TEST(bad_host_list_fails_as_zkr_init) {
  capture_stderr();
  ck_assert_ptr_null(zkr_init_env("h1:2181,,h2", NULL, 10000, NULL, NULL, 0));
  ck_assert_ptr_null(zkr_init_env(NULL, NULL, 10000, NULL, NULL, 0));
  unlink(err_path);
}
END_TEST

START_TEST(stats_file_gets_one_line_per_handle) {
  capture_stderr();
  char path[64];
  snprintf(path, sizeof path, "/tmp/zkr-test-env-%d.json", (int)getpid());
  unlink(path);
  setenv("ZKROUTE_STATS", path, 1);
  zkr_t *a = zkr_init_env(HOSTS, NULL, 10000, NULL, NULL, 0);
  zkr_t *b = zkr_init_env("127.0.0.1:9,127.0.0.2:9", NULL, 10000, NULL, NULL, 0);
  ck_assert_ptr_nonnull(a);
  ck_assert_ptr_nonnull(b);
  zkr_close(b);
  zkr_close(a);
  const char *js = slurp(path);
  ck_assert_int_eq(count(js, "\n"), 2);
  ck_assert_int_eq(count(js, "{\"schema\":1,\"pid\":"), 2);
  ck_assert_int_eq(count(js, "\"reason\":\"close\""), 2);
  ck_assert_int_eq(count(js, "test_env\",\"handle\":"), 2); /* lt-test_env under libtool */
  ck_assert_int_eq(count(js, "\"n_members\":3"), 1);
  ck_assert_int_eq(count(js, "\"n_members\":2"), 1);
  ck_assert_int_eq(count(js, "\"address\":\"127.0.0.2:9\""), 2);
  ck_assert_int_eq(count(js, "\"ewma_ms\":null"), 5);
  unlink(path);
  unlink(err_path);
}
END_TEST

START_TEST(stats_json_of_a_handle) {
  capture_stderr();
  zkr_t *z = zkr_init(HOSTS, NULL, 10000, NULL, NULL, 0);
  ck_assert_ptr_nonnull(z);
  char *js = NULL;
  ck_assert_int_eq(zkr_stats_json(NULL, &js), ZBADARGUMENTS);
  ck_assert_int_eq(zkr_stats_json(z, NULL), ZBADARGUMENTS);
  ck_assert_int_eq(zkr_stats_json(z, &js), ZOK);
  ck_assert_ptr_nonnull(js);
  const char *head = "{\"version\":1,\"state\":\"connecting\",";
  ck_assert_int_eq(strncmp(js, head, strlen(head)), 0);
  ck_assert_int_eq(count(js, "\"n_members\":3,"), 1);
  ck_assert_int_eq(js[strlen(js) - 1], '}');
  ck_assert_ptr_null(strchr(js, '\n'));
  ck_assert_int_eq(count(js, "\"policy\":\"hybrid\""), 1);
  free(js);
  zkr_close(z);
  unlink(err_path);
}
END_TEST

int main(void) {
  Suite *s = suite_create("env");
  TCase *tc = tcase_create("env");
  tcase_set_timeout(tc, 20);
  tcase_add_test(tc, good_values_are_used);
  tcase_add_test(tc, bad_values_warn_once_and_use_defaults);
  tcase_add_test(tc, off_in_zkr_init_env_is_sticky);
  tcase_add_test(tc, off_in_the_compat_header_is_plain);
  tcase_add_test(tc, on_in_the_compat_header_is_routed);
  tcase_add_test(tc, compat_calls_without_a_server);
  tcase_add_test(tc, compat_calls_on_a_plain_handle);
  tcase_add_test(tc, bad_host_list_fails_as_zkr_init);
  tcase_add_test(tc, stats_file_gets_one_line_per_handle);
  tcase_add_test(tc, stats_json_of_a_handle);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed == 0 ? 0 : 1;
}
