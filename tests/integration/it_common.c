/* Helpers of the integration tests (see it_common.h). */
#include "it_common.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/wait.h>
#include <unistd.h>

#include "model/hosts.h"
#include "model/srvr.h"

const char *it_hosts(void) {
  const char *h = getenv("ZKR_TEST_HOSTS");
  ck_assert_msg(h && *h, "ZKR_TEST_HOSTS is not set: run through tests/integration/integration.sh");
  return h;
}

void it_sleep_ms(int ms) {
  struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
  nanosleep(&ts, NULL);
}

uint64_t it_now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

void it_wait_ready(zkr_t *z) {
  uint64_t deadline = it_now_ms() + 15000;
  for (;;) {
    zkr_stats_t *s;
    ck_assert_int_eq(zkr_stats(z, &s), ZOK);
    int in_pool = 0, followers = 0;
    for (int i = 0; i < s->n_members; i++) {
      if (s->members[i].role == ZKR_ROLE_FOLLOWER) followers++;
      if (s->members[i].role == ZKR_ROLE_FOLLOWER && s->members[i].in_read_pool) in_pool++;
    }
    int ready = zkr_state(z) == ZOO_CONNECTED_STATE && s->leader >= 0 &&
                followers == s->n_members - 1 && in_pool == followers;
    zkr_stats_free(s);
    if (ready) return;
    ck_assert_msg(it_now_ms() < deadline, "handle not ready after 15 s");
    it_sleep_ms(20);
  }
}

zkr_t *it_open_hosts(const char *hosts, const zkr_options_t *opts, watcher_fn fn, void *ctx) {
  zkr_t *z = NULL;
  int rc = zkr_init_opts(&z, hosts, fn, 10000, NULL, ctx, 0, opts);
  ck_assert_msg(rc == ZOK, "zkr_init_opts: %s", zkr_strerror(rc));
  it_wait_ready(z);
  return z;
}

zkr_t *it_open(const zkr_options_t *opts, watcher_fn fn, void *ctx) {
  return it_open_hosts(it_hosts(), opts, fn, ctx);
}

zhandle_t *it_stock(void) { return it_stock_hosts(it_hosts()); }

zhandle_t *it_stock_hosts(const char *hosts) {
  zhandle_t *zh = zookeeper_init(hosts, NULL, 10000, NULL, NULL, 0);
  ck_assert_ptr_nonnull(zh);
  uint64_t deadline = it_now_ms() + 15000;
  while (zoo_state(zh) != ZOO_CONNECTED_STATE) {
    ck_assert_msg(it_now_ms() < deadline, "stock client not connected");
    it_sleep_ms(10);
  }
  return zh;
}

static int srvr_of(int i, zkr__srvr_reply_t *r) {
  zkr__hostlist_t l;
  if (zkr__hosts_parse(it_hosts(), &l) != ZOK) return -1;
  int rc = i < (int)l.n ? zkr__srvr_fetch(l.v[i].name, l.v[i].port, 2000, 65536, r) : -1;
  zkr__hosts_free(&l);
  return rc;
}

int64_t it_received(int i) {
  zkr__srvr_reply_t r;
  return srvr_of(i, &r) == ZOK ? r.received : -1;
}

int it_leader_index(void) {
  for (int i = 0; i < IT_MEMBERS; i++) {
    zkr__srvr_reply_t r;
    if (srvr_of(i, &r) == ZOK && r.role == ZKR_ROLE_LEADER) return i;
  }
  return -1;
}

void it_path(char *buf, size_t len, const char *name) {
  static int n;
  zhandle_t *zh = it_stock();
  zoo_create(zh, "/it", NULL, -1, &ZOO_OPEN_ACL_UNSAFE, 0, NULL, 0);
  zookeeper_close(zh);
  snprintf(buf, len, "/it/%s-%d-%d", name, (int)getpid(), n++);
}

int it_ensemble(const char *cmd, int member) {
  const char *sh = getenv("ZKR_TEST_ENSEMBLE_SH"), *dir = getenv("ZKR_TEST_DIR");
  ck_assert_msg(
      sh && dir,
      "ZKR_TEST_ENSEMBLE_SH / ZKR_TEST_DIR not set: run through tests/integration/integration.sh");
  char line[1024];
  if (member >= 0)
    snprintf(line, sizeof line, "bash '%s' %s '%s' %d >/dev/null", sh, cmd, dir, member + 1);
  else snprintf(line, sizeof line, "bash '%s' %s '%s' >/dev/null", sh, cmd, dir);
  int st = system(line);
  return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

int it_fault(const char *args) {
  const char *sh = getenv("ZKR_TEST_ENSEMBLE_SH"), *dir = getenv("ZKR_TEST_DIR");
  ck_assert_msg(
      sh && dir,
      "ZKR_TEST_ENSEMBLE_SH / ZKR_TEST_DIR not set: run through tests/integration/integration.sh");
  char line[1024];
  snprintf(line, sizeof line, "bash '%s' fault '%s' %s >/dev/null", sh, dir, args);
  int st = system(line);
  return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* Restarts whatever member is down, then waits for a leader. */
void it_ensemble_heal(void) {
  for (int i = 0; i < IT_MEMBERS; i++) {
    if (it_ensemble("pid", i) != 0) ck_assert_int_eq(it_ensemble("restart", i), 0);
    it_ensemble("resume", i);
  }
  ck_assert_int_eq(it_ensemble("wait-leader", -1), 0);
}

int it_have_proxy(const char *what) {
  const char *ext = getenv("ZKR_TEST_ENSEMBLE");
  if (!ext || !*ext) return 1;
  printf("%s: left out: it needs the fault proxy, which the external ensemble "
         "ZKR_TEST_ENSEMBLE=%s does not have\n",
         what, ext);
  fflush(stdout);
  return 0;
}

int it_run(Suite *s) {
  zoo_set_debug_level(ZOO_LOG_LEVEL_WARN);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int ran = srunner_ntests_run(sr), failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  if (ran == 0) {
    printf("no test left to run: skipped\n");
    return 77;
  }
  return failed == 0 ? 0 : 1;
}

int it_off_owner(const zkr_member_info_t *m, int n, void *ctx) {
  int owner = (int)(intptr_t)ctx;
  for (int i = 0; i < n; i++)
    if (m[i].index != owner && m[i].in_pool) return i;
  return -1;
}
