/* Server-less unit tests of the owner session - the application's one
 * session (DESIGN.md section 4): its rescue never ends it, the virtual
 * state follows it, nothing completes before it is established, and time
 * arithmetic around its timeout cannot wrap.  Driven through the function
 * table by the fake ZooKeeper (tests/harness/fakefix.h). */
#include <check.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fakefix.h"

/* ---- a rescue never ends the session it moves ---- */

/* Runs inside the next zookeeper_init: the old owner zhandle finishes its
 * handshake right then, as its I/O thread may at any moment. */
static void old_owner_reconnects(void *arg) {
  fake_set_state((fake_zh_t *)arg, ZOO_CONNECTED_STATE);
}

/* The rescue must close the stranded zhandle before it opens anything:
 * opening a session (address lookup, zookeeper_init, the credentials'
 * replay) takes time, and a zhandle that reconnected meanwhile would send
 * CloseSession when closed - ending the application's session, its
 * ephemerals and its locks. */
START_TEST(rescue_closes_old_before_opening) {
  open3_rescue();
  int64_t sid = fake_session_id(h[1]);
  fake_set_role(1, ZKR_ROLE_UNREACHABLE, 0);
  fake_set_role(2, ZKR_ROLE_LEADER, 0x200000001LL);
  fake_hook_init(old_owner_reconnects, h[1]);
  fake_session_event(h[1], ZOO_CONNECTING_STATE);
  wait_state(ZOO_CONNECTING_STATE);
  fake_zh_t *r = fake_handle(2, 1);
  ck_assert_ptr_nonnull(r);
  ck_assert_int_eq(fake_handle_resumed(r), sid);
  ck_assert(fake_handle_closed(h[1]));
  ck_assert_msg(fake_handle_state_at_close(h[1]) != ZOO_CONNECTED_STATE,
                "the rescue closed the owner's zhandle after it had reconnected");
}
END_TEST

/* ---- the virtual session is established as stock's is ---- */

/* The state turns CONNECTED when the first member session is established,
 * whoever leads, as a stock handle's does when its one session is: the
 * owner is chosen then, without waiting for the leader's session. */
START_TEST(connected_with_first_session) {
  zkr_options_t o;
  opts_default(&o);
  ev_reset();
  fake_install();
  fake_set_role(1, ZKR_ROLE_LEADER, 0x100000005LL);
  fake_set_role(2, ZKR_ROLE_FOLLOWER, 0x100000005LL);
  fake_set_role(3, ZKR_ROLE_FOLLOWER, 0x100000005LL);
  ck_assert_int_eq(zkr_init_opts(&z, HOSTS, watcher, 3000, NULL, (void *)100, 0, &o), ZOK);
  for (int i = 1; i <= 3; i++) ck_assert_ptr_nonnull(h[i] = fake_handle(i, 0));
  wait_leader(0);
  /* A follower's session is established first; the leader's later. */
  fake_connect(h[2], 0);
  ck_assert_int_eq(zkr_state(z), ZOO_CONNECTED_STATE);
  ck_assert_int_eq((int)zkr_client_id(z)->client_id, (int)fake_session_id(h[2]));
  ck_assert_int_eq(stat_owner(), 1);
  fake_connect(h[1], 0);
  fake_connect(h[3], 0);
  ck_assert_int_eq(stat_owner(), 1);
}
END_TEST

/* Nothing completes before the virtual session is established: with a
 * clientid to resume, carriers connect first, and a read waits for the
 * resumed owner session; by the time it completes, the client id is
 * known and the CONNECTED event was queued before it, so a watch set
 * afterwards never sees that event. */
START_TEST(no_completion_before_established) {
  zkr_options_t o;
  opts_default(&o);
  clientid_t cid = {.client_id = 0x4242};
  memcpy(cid.passwd, "0123456789abcdef", 16);
  open3_opts(&o, &cid);
  fake_zh_t *owner = NULL;
  for (int i = 1; i <= 3; i++) {
    if (fake_handle_resumed(h[i]) == 0x4242) owner = h[i];
    else fake_connect(h[i], 0);
  }
  ck_assert_ptr_nonnull(owner);
  ck_assert_int_eq(zkr_aexists(z, "/r", 0, done_stat, (void *)1), ZOK);
  sleep_ms(100);
  fake_req_t *r = fake_peek(NULL, FK_EXISTS, "/r");
  if (r) fake_reply(r, ZOK, 5, 5, NULL);
  sleep_ms(50);
  ck_assert_msg(ev_matching(EV_DONE, 1) == 0,
                "a read completed before the session was established");
  fake_connect(owner, 0);
  if (!r) {
    r = fake_wait(NULL, FK_EXISTS, "/r");
    ck_assert_ptr_nonnull(r);
    fake_reply(r, ZOK, 5, 5, NULL);
  }
  int d = ev_find(0, EV_DONE, 1);
  int c = ev_find(0, EV_SESSION, 100);
  ck_assert_int_ge(d, 0);
  ck_assert_int_ge(c, 0);
  ck_assert_int_lt(c, d);
  ck_assert_int_eq(ev_at(c).state, ZOO_CONNECTED_STATE);
  ck_assert_int_eq((int)zkr_client_id(z)->client_id, 0x4242);
  /* A watch set now sees no CONNECTED event. */
  ck_assert_int_eq(zkr_awexists(z, "/w", watcher, (void *)7, done_stat, (void *)2), ZOK);
  r = fake_wait(NULL, FK_EXISTS, "/w");
  ck_assert_ptr_nonnull(r);
  fake_reply(r, ZOK, 6, 6, NULL);
  ck_assert_int_ge(ev_find(0, EV_DONE, 2), 0);
  sleep_ms(50);
  ck_assert_int_eq(ev_matching(EV_SESSION, 7), 0);
}
END_TEST

/* ---- time arithmetic cannot wrap ---- */

/* A session timeout longer than the machine has been up (INT_MAX ms is
 * 24.8 days): "parked since before now - timeout" must not wrap into a
 * time in the future, which failed every parked operation at once with
 * ZCONNECTIONLOSS. */
START_TEST(timeout_longer_than_uptime_parks_operations) {
  zkr_options_t o;
  opts_default(&o);
  ev_reset();
  fake_install();
  fake_set_role(1, ZKR_ROLE_LEADER, 0x100000005LL);
  fake_set_role(2, ZKR_ROLE_FOLLOWER, 0x100000005LL);
  fake_set_role(3, ZKR_ROLE_FOLLOWER, 0x100000005LL);
  ck_assert_int_eq(zkr_init_opts(&z, HOSTS, watcher, 0x7fffffff, NULL, (void *)100, 0, &o), ZOK);
  for (int i = 1; i <= 3; i++) ck_assert_ptr_nonnull(h[i] = fake_handle(i, 0));
  wait_leader(0);
  /* No session is connected yet: the operations park. */
  for (int i = 0; i < 20; i++)
    ck_assert_int_eq(zkr_aexists(z, "/x", 0, done_stat, (void *)(intptr_t)(i + 1)), ZOK);
  sleep_ms(300); /* several monitor turns */
  ck_assert_msg(ev_matching(EV_DONE, -1) == 0, "%d parked operations failed at once",
                ev_matching(EV_DONE, -1));
  for (int i = 1; i <= 3; i++) fake_connect(h[i], 0);
  for (int i = 0; i < 20; i++) {
    fake_req_t *r = fake_wait(NULL, FK_EXISTS, "/x");
    ck_assert_ptr_nonnull(r);
    fake_reply(r, ZOK, 5, 5, NULL);
  }
  for (int i = 1; i <= 20; i++) {
    int d = ev_find(0, EV_DONE, i);
    ck_assert_int_ge(d, 0);
    ck_assert_int_eq(ev_at(d).rc, ZOK);
  }
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("owner");
  TCase *tc = tcase_create("fake");
  tcase_set_timeout(tc, 30);
  tcase_add_checked_fixture(tc, NULL, teardown);
  tcase_add_test(tc, rescue_closes_old_before_opening);
  tcase_add_test(tc, timeout_longer_than_uptime_parks_operations);
  tcase_add_test(tc, connected_with_first_session);
  tcase_add_test(tc, no_completion_before_established);
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
