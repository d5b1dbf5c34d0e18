/* Server-less unit tests of the delivery thread (DESIGN.md section 4):
 * application callbacks run on the handle's own thread, so a watcher may
 * make a blocking call, and a lock the application takes in every
 * callback (as interpreters do) never deadlocks a blocking call made
 * while it is held.  Driven through the function table by the fake
 * ZooKeeper (tests/harness/fakefix.h). */
#include <check.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fakefix.h"

/* ---- callbacks may block ---- */

static void *answer_reads(void *arg) {
  (void)arg;
  fake_req_t *r = fake_wait(NULL, FK_GET, "/inner");
  if (r) fake_reply(r, ZOK, 3, 3, "in");
  return NULL;
}

static int inner_rc = -1;
static void blocking_watcher(zhandle_t *zh, int type, int state, const char *path, void *ctx) {
  (void)state, (void)path, (void)ctx;
  if (type != ZOO_CHANGED_EVENT) return;
  char buf[8];
  int len = sizeof buf;
  inner_rc = zkr_get(zkr_from_zh(zh), "/inner", 0, buf, &len, NULL);
  ev_add(EV_WATCH, 50, inner_rc, type, 0, path);
}

START_TEST(blocking_call_from_watcher) {
  open3();
  ck_assert_int_eq(zkr_awget(z, "/outer", blocking_watcher, NULL, done_data, (void *)1), ZOK);
  fake_req_t *g = fake_wait(NULL, FK_GET, "/outer");
  fake_reply(g, ZOK, 2, 2, "o");
  ck_assert_int_ge(ev_find(0, EV_DONE, 1), 0);
  pthread_t t;
  pthread_create(&t, NULL, answer_reads, NULL);
  ck_assert_int_eq(fake_fire(g->h, "/outer", ZOO_CHANGED_EVENT), 1);
  int w = ev_find(0, EV_WATCH, 50);
  pthread_join(t, NULL);
  ck_assert_int_ge(w, 0);
  ck_assert_int_eq(inner_rc, ZOK);
}
END_TEST

/* ---- a runtime lock taken in every callback (as interpreters do) ---- */

static pthread_mutex_t gil = PTHREAD_MUTEX_INITIALIZER;
static void gil_watcher(zhandle_t *zh, int type, int state, const char *path, void *ctx) {
  (void)zh, (void)state;
  pthread_mutex_lock(&gil);
  ev_add(EV_WATCH, TAG(ctx), 0, type, 0, path);
  pthread_mutex_unlock(&gil);
}

static void *answer_set_g(void *arg) {
  (void)arg;
  fake_req_t *r = fake_wait(NULL, FK_SET, "/g");
  if (r) fake_reply(r, ZOK, 0x100000010LL, 0, NULL);
  return NULL;
}

/* The main thread holds the runtime lock across a blocking call while a
 * watcher waits for that lock: the call's reply must not need the
 * watcher to finish (it goes to the waiter, not through the callback
 * thread), and the watcher runs once the lock is free. */
START_TEST(runtime_lock_in_callbacks_no_deadlock) {
  open3();
  ck_assert_int_eq(zkr_awget(z, "/w", gil_watcher, (void *)5, done_data, (void *)1), ZOK);
  fake_req_t *g = fake_wait(NULL, FK_GET, "/w");
  fake_reply(g, ZOK, 2, 2, "o");
  ck_assert_int_ge(ev_find(0, EV_DONE, 1), 0);
  pthread_mutex_lock(&gil);
  ck_assert_int_eq(fake_fire(g->h, "/w", ZOO_CHANGED_EVENT), 1);
  sleep_ms(50); /* the watcher is now waiting for the lock */
  pthread_t t;
  pthread_create(&t, NULL, answer_set_g, NULL);
  int rc = zkr_set(z, "/g", "v", 1, -1);
  pthread_join(t, NULL);
  ck_assert_int_eq(ev_matching(EV_WATCH, 5), 0);
  pthread_mutex_unlock(&gil);
  ck_assert_int_eq(rc, ZOK);
  ck_assert_int_ge(ev_find(0, EV_WATCH, 5), 0);
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("deliver");
  TCase *tc = tcase_create("fake");
  tcase_set_timeout(tc, 30);
  tcase_add_checked_fixture(tc, NULL, teardown);
  tcase_add_test(tc, blocking_call_from_watcher);
  tcase_add_test(tc, runtime_lock_in_callbacks_no_deadlock);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) {
  zoo_set_debug_level(ZOO_LOG_LEVEL_ERROR);
  SRunner *sr = srunner_create(suite());
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? 1 : 0;
}
