/* Unit tests of the process's srvr answers (zkr__srvr_cache_*): a query
 * takes an answer whose request started at or after its `since`, joins a
 * request in flight that started since, and otherwise sends its own;
 * since UINT64_MAX always sends; addresses and srvr functions do not mix.
 * The tests pass an age in ms (since = now - age; 0: UINT64_MAX).  The
 * srvr function is the test's own (a zkapi table with it), counting and,
 * on demand, slow. */
#include <check.h>
#include <pthread.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>
#include <stdatomic.h>
#include <string.h>
#include <time.h>

#include "model/base.h"
#include "zk/srvr_cache.h"
#include "zk/zkapi.h"

static _Atomic int requests, slow_ms;
static _Atomic int role = ZKR_ROLE_FOLLOWER;

static void sleep_ms(int ms) {
  nanosleep(&(struct timespec){ms / 1000, (ms % 1000) * 1000000L}, NULL);
}

static int fake_srvr(const char *host, int port, int timeout_ms, size_t cap,
                     zkr__srvr_reply_t *out) {
  (void)host, (void)port, (void)timeout_ms, (void)cap;
  atomic_fetch_add(&requests, 1);
  if (atomic_load(&slow_ms)) sleep_ms(atomic_load(&slow_ms));
  memset(out, 0, sizeof *out);
  out->role = atomic_load(&role);
  return ZOK;
}

static int other_srvr(const char *host, int port, int timeout_ms, size_t cap,
                      zkr__srvr_reply_t *out) {
  return fake_srvr(host, port, timeout_ms, cap, out);
}

static zkr__zk_t table;

static void use(int (*fn)(const char *, int, int, size_t, zkr__srvr_reply_t *)) {
  table = zkr__zk_real;
  table.srvr = fn;
  zkr__zkapi_use(&table);
}

static uint64_t since_ms(int age_ms) {
  return age_ms == 0 ? UINT64_MAX : zkr__now_ns() - (uint64_t)age_ms * 1000000u;
}

static int ask(const char *host, int age_ms, int *sent) {
  zkr__srvr_reply_t r;
  int rc = zkr__srvr_cache_query(host, 2181, 1000, 4096, since_ms(age_ms), &r, sent);
  ck_assert_int_eq(rc, ZOK);
  return r.role;
}

START_TEST(recent_answers_are_shared) {
  use(fake_srvr);
  atomic_store(&requests, 0);
  int sent;
  ask("a1", 200, &sent);
  ck_assert_int_eq(sent, 1);
  atomic_store(&role, ZKR_ROLE_LEADER);
  ck_assert_int_eq(ask("a1", 200, &sent), ZKR_ROLE_FOLLOWER); /* the shared one */
  ck_assert_int_eq(sent, 0);
  zkr__srvr_reply_t r;
  int rc;
  ck_assert_int_eq(zkr__srvr_cache_fresh("a1", 2181, since_ms(200), &r, &rc), 1);
  ck_assert_int_eq(zkr__srvr_cache_fresh("a1", 2181, since_ms(0), &r, &rc), 0);
  ck_assert_int_eq(zkr__srvr_cache_fresh("a2", 2181, since_ms(200), &r, &rc), 0);
  ck_assert_int_eq(atomic_load(&requests), 1);
  /* UINT64_MAX asks now, and its answer serves the next. */
  ck_assert_int_eq(ask("a1", 0, &sent), ZKR_ROLE_LEADER);
  ck_assert_int_eq(sent, 1);
  atomic_store(&role, ZKR_ROLE_FOLLOWER);
  ck_assert_int_eq(ask("a1", 200, &sent), ZKR_ROLE_LEADER);
  ck_assert_int_eq(atomic_load(&requests), 2);
  /* Older than the max age: asked again. */
  sleep_ms(60);
  ck_assert_int_eq(ask("a1", 50, &sent), ZKR_ROLE_FOLLOWER);
  ck_assert_int_eq(sent, 1);
  /* Another address, another srvr function: their own. */
  ask("a2", 200, &sent);
  ck_assert_int_eq(sent, 1);
  use(other_srvr);
  ask("a1", 200, &sent);
  ck_assert_int_eq(sent, 1);
  ck_assert_int_eq(atomic_load(&requests), 5);
}
END_TEST

static _Atomic int joined_sent = -1;

static void *asker(void *arg) {
  int sent;
  ask(arg, 1000, &sent);
  atomic_store(&joined_sent, sent);
  return NULL;
}

START_TEST(a_request_in_flight_is_joined) {
  use(fake_srvr);
  atomic_store(&requests, 0);
  atomic_store(&slow_ms, 200);
  pthread_t t;
  ck_assert_int_eq(pthread_create(&t, NULL, asker, "b1"), 0);
  sleep_ms(50); /* the thread's request is in flight */
  int sent;
  ask("b1", 1000, &sent);
  ck_assert_int_eq(sent, 0);
  pthread_join(t, NULL);
  ck_assert_int_eq(atomic_load(&joined_sent), 1);
  ck_assert_int_eq(atomic_load(&requests), 1);
  /* A query for answers asked since after the request in flight started
   * (a kick after it) does not join it: it sends its own. */
  atomic_store(&slow_ms, 100);
  ck_assert_int_eq(pthread_create(&t, NULL, asker, "b2"), 0);
  sleep_ms(30);
  zkr__srvr_reply_t r;
  ck_assert_int_eq(zkr__srvr_cache_query("b2", 2181, 1000, 4096, zkr__now_ns(), &r, &sent), ZOK);
  ck_assert_int_eq(sent, 1);
  pthread_join(t, NULL);
  ck_assert_int_eq(atomic_load(&requests), 3);
}
END_TEST

/* A child forked while a request is in flight does not wait for it: no
 * thread of the child will finish it. */
START_TEST(a_forked_child_does_not_wait_for_the_parents_request) {
  use(fake_srvr);
  atomic_store(&slow_ms, 300);
  pthread_t t;
  ck_assert_int_eq(pthread_create(&t, NULL, asker, "c1"), 0);
  sleep_ms(50); /* in flight */
  uint64_t since = zkr__now_ns() - 1000000000u;
  pid_t pid = fork();
  ck_assert_int_ge(pid, 0);
  if (pid == 0) {
    atomic_store(&slow_ms, 0);
    zkr__srvr_reply_t r;
    int sent = 0;
    int rc = zkr__srvr_cache_query("c1", 2181, 1000, 4096, since, &r, &sent);
    _exit(rc == ZOK && sent == 1 ? 0 : 1);
  }
  int status = -1;
  for (int i = 0; i < 2000 && waitpid(pid, &status, WNOHANG) == 0; i++) sleep_ms(1);
  if (waitpid(pid, &status, WNOHANG) == 0) {
    kill(pid, SIGKILL);
    waitpid(pid, &status, 0);
    ck_abort_msg("the child waited for the parent's request");
  }
  ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  pthread_join(t, NULL);
}
END_TEST

int main(void) {
  Suite *s = suite_create("srvr_cache");
  TCase *tc = tcase_create("srvr_cache");
  tcase_set_timeout(tc, 30);
  tcase_add_test(tc, recent_answers_are_shared);
  tcase_add_test(tc, a_request_in_flight_is_joined);
  tcase_add_test(tc, a_forked_child_does_not_wait_for_the_parents_request);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? 1 : 0;
}
