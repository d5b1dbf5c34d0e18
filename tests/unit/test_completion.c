/* Server-less unit tests of completion (DESIGN.md section 4): every
 * request the application made completes exactly once - a request the
 * client library refused is never also completed, even when its session
 * expires meanwhile - and a carrier's lost connection dips the virtual
 * state to CONNECTING around the failures it causes, as one stock session
 * would show them.  Driven through the function table by the fake
 * ZooKeeper (tests/harness/fakefix.h). */
#include <check.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fakefix.h"

/* ---- a refused request is never also completed ---- */

static void *expire_handle(void *arg) {
  fake_session_event((fake_zh_t *)arg, ZOO_EXPIRED_SESSION_STATE);
  return NULL;
}
/* Inside the failing awget, under the slot's read lock: the expiry of the
 * very session the read was given to arrives on another thread, and the
 * monitor replaces that session (it must wait for the lock, then find
 * nothing of this read listed). */
static fake_zh_t *refused_on;
static void hook_expire(fake_zh_t *hh, void *arg) {
  (void)arg;
  refused_on = hh;
  pthread_t t;
  pthread_create(&t, NULL, expire_handle, hh);
  pthread_detach(t);
  sleep_ms(30);
}

START_TEST(refused_read_never_completes) {
  open3();
  refused_on = NULL;
  int before[4];
  for (int i = 1; i <= 3; i++) before[i] = fake_handle_count(i);
  for (int i = 0; i < 6; i++) {
    fake_fail_next(FK_GET, ZMARSHALLINGERROR);
    if (i == 0) fake_hook_next(FK_GET, hook_expire, NULL);
    int rc = zkr_aget(z, "/r", 0, done_data, (void *)7);
    ck_assert_int_eq(rc, ZMARSHALLINGERROR);
  }
  /* The first refused read went to a carrier (a follower's session), and
   * that is the session that expired. */
  ck_assert_ptr_nonnull(refused_on);
  ck_assert(refused_on == h[2] || refused_on == h[3]);
  int n = fake_handle_server(refused_on);
  /* That carrier was replaced; nothing of the refused reads was completed
   * then or later. */
  uint64_t deadline = now_ms() + 5000;
  while (fake_handle_count(n) == before[n] && now_ms() < deadline) sleep_ms(5);
  ck_assert_int_gt(fake_handle_count(n), before[n]);
  ck_assert(fake_handle_closed(refused_on));
  sleep_ms(100);
  ck_assert_int_eq(ev_matching(EV_DONE, 7), 0);
}
END_TEST

/* ---- a lost connection dips the state around its failures ---- */

START_TEST(carrier_connection_loss_dips_state) {
  open3();
  ck_assert_int_eq(zkr_aget(z, "/d", 0, done_data, (void *)1), ZOK);
  fake_req_t *g = fake_wait(NULL, FK_GET, "/d");
  ck_assert_ptr_nonnull(g);
  ck_assert_ptr_ne(g->h, h[1]);
  int mark = ev_count();
  fake_session_event(g->h, ZOO_CONNECTING_STATE);
  fake_reply(g, ZCONNECTIONLOSS, 0, 0, NULL);
  int s1 = ev_find(mark, EV_SESSION, 100);
  int d = ev_find(mark, EV_DONE, 1);
  ck_assert_int_ge(s1, 0);
  ck_assert_int_eq(ev_at(s1).state, ZOO_CONNECTING_STATE);
  ck_assert_int_gt(d, s1);
  ck_assert_int_eq(ev_at(d).rc, ZCONNECTIONLOSS);
  int s2 = ev_find(d, EV_SESSION, 100);
  ck_assert_int_gt(s2, d);
  ck_assert_int_eq(ev_at(s2).state, ZOO_CONNECTED_STATE);
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("completion");
  TCase *tc = tcase_create("fake");
  tcase_set_timeout(tc, 30);
  tcase_add_checked_fixture(tc, NULL, teardown);
  tcase_add_test(tc, refused_read_never_completes);
  tcase_add_test(tc, carrier_connection_loss_dips_state);
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
