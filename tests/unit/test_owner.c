/* Server-less unit tests of the owner session - the application's one
 * session (DESIGN.md section 4): its rescue keeps its client id and never
 * ends it (and is not made while its zhandle reconnected or is
 * associating), it moves soon when its server is down, the virtual state
 * follows it (its expiry is the application's, and so is the expiry of a
 * clientid resumed at zkr_init), nothing completes before it is
 * established, and time arithmetic around its timeout cannot wrap.
 * Driven through the function table by the fake ZooKeeper
 * (tests/harness/fakefix.h). */
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

/* ---- nothing of the session outlives its expiry ---- */

/* The owner expired: the virtual session is over, and no member session
 * may be opened for it any more - not for a member the application adds
 * (zkr_set_servers), nor by a re-resolution or /zookeeper/config. */
START_TEST(no_session_opened_after_expiry) {
  open3();
  fake_session_event(h[1], ZOO_EXPIRED_SESSION_STATE);
  wait_state(ZOO_EXPIRED_SESSION_STATE);
  uint64_t deadline = now_ms() + 5000;
  while (!(fake_handle_closed(h[2]) && fake_handle_closed(h[3])) && now_ms() < deadline)
    sleep_ms(5);
  zkr_set_servers(z, "fake1:2181,fake2:2181,fake3:2181,fake4:2181");
  sleep_ms(300);
  ck_assert_int_eq(fake_handle_count(4), 0);
  for (int i = 1; i <= 3; i++) ck_assert_int_eq(fake_handle_count(i), 1);
}
END_TEST

/* ---- the owner's server answers the application, not srvr ---- */

/* srvr is refused on the owner's server (four-letter words off, a
 * firewall) while its session works: session-scoped writes still go to
 * the owner, as a stock client sends them on its connected session. */
START_TEST(owner_used_while_srvr_fails_on_its_server) {
  open3();
  fake_set_role(1, 0, 0); /* srvr silent; the session stays connected */
  fake_set_role(2, ZKR_ROLE_LEADER, 0x100000006LL);
  wait_leader(1);
  sleep_ms(100); /* two polls: fake1 suspect */
  ck_assert_int_eq(zkr_state(z), ZOO_CONNECTED_STATE);
  ck_assert_int_eq(
      zkr_acreate(z, "/e", "", 0, &ZOO_OPEN_ACL_UNSAFE, ZOO_EPHEMERAL, done_string, (void *)1),
      ZOK);
  fake_req_t *c = fake_wait(h[1], FK_CREATE, "/e");
  ck_assert_msg(c != NULL, "the ephemeral create never reached the owner");
  fake_reply(c, ZOK, 0x100000007LL, 0, NULL);
  int d = ev_find(0, EV_DONE, 1);
  ck_assert_int_ge(d, 0);
  ck_assert_int_eq(ev_at(d).rc, ZOK);
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

/* ---- the owner: identity, rescue ---- */

START_TEST(owner_rescue_keeps_client_id) {
  open3_rescue();
  const clientid_t *id = zkr_client_id(z);
  int64_t sid = fake_session_id(h[1]);
  ck_assert_int_eq(id->client_id, sid);
  /* The owner's server dies: srvr cannot reach it, its zhandle drops. */
  fake_set_role(1, ZKR_ROLE_UNREACHABLE, 0);
  fake_set_role(2, ZKR_ROLE_LEADER, 0x200000001LL);
  fake_session_event(h[1], ZOO_CONNECTING_STATE);
  wait_state(ZOO_CONNECTING_STATE);
  /* Re-attached to fake2, the new leader, resuming the same session. */
  fake_zh_t *r = fake_handle(2, 1);
  ck_assert_ptr_nonnull(r);
  ck_assert_int_eq(fake_handle_resumed(r), sid);
  ck_assert(fake_handle_closed(h[1]));
  ck_assert_int_ne(fake_handle_state_at_close(h[1]), ZOO_CONNECTED_STATE);
  fake_connect(r, 0);
  wait_state(ZOO_CONNECTED_STATE);
  ck_assert_ptr_eq(zkr_client_id(z), id);
  ck_assert_int_eq(zkr_client_id(z)->client_id, sid);
  /* Ephemerals go to the re-attached owner. */
  ck_assert_int_eq(
      zkr_acreate(z, "/e", "", 0, &ZOO_OPEN_ACL_UNSAFE, ZOO_EPHEMERAL, done_string, (void *)1),
      ZOK);
  fake_req_t *c = fake_wait(r, FK_CREATE, "/e");
  ck_assert_ptr_nonnull(c);
  fake_reply(c, ZOK, 6, 6, NULL);
  ck_assert_int_ge(ev_find(0, EV_DONE, 1), 0);
  /* Member 0 got a fresh carrier of its own at home. */
  ck_assert_int_eq(fake_handle_count(1), 2);
  ck_assert_int_eq(fake_handle_resumed(fake_handle(1, 1)), 0);
}
END_TEST

/* The owner's server dies (silent to srvr while the others answer): the
 * owner moves after rescue_down_ms, without waiting for rescue_ms (60 s
 * here), as a stock client moves to its next server at once; with
 * rescue_down_ms as long as rescue_ms, it stays put. */
static void owner_server_dies(int rescue_down_ms) {
  zkr_options_t o;
  opts_default(&o);
  o.rescue_down_ms = rescue_down_ms;
  open3_opts(&o, NULL);
  wait_state(ZOO_CONNECTED_STATE);
  ck_assert_int_eq(stat_owner(), 0);
  fake_set_role(1, 0, 0); /* silent */
  fake_set_role(2, ZKR_ROLE_LEADER, 0x200000001LL);
  fake_session_event(h[1], ZOO_CONNECTING_STATE);
  wait_state(ZOO_CONNECTING_STATE);
}

START_TEST(owner_rescued_soon_when_its_server_is_down) {
  owner_server_dies(100);
  int64_t sid = fake_session_id(h[1]);
  uint64_t t0 = now_ms();
  fake_zh_t *r = fake_handle(2, 1);
  ck_assert_ptr_nonnull(r);
  fprintf(stderr,
          "rescue_down_ms=100: the owner re-attached to fake2 %llu ms after its "
          "server went silent (rescue_ms 60000)\n",
          (unsigned long long)(now_ms() - t0));
  ck_assert_int_eq(fake_handle_resumed(r), sid);
  ck_assert(fake_handle_closed(h[1]));
  ck_assert_int_ne(fake_handle_state_at_close(h[1]), ZOO_CONNECTED_STATE);
  fake_connect(r, 0);
  wait_state(ZOO_CONNECTED_STATE);
  ck_assert_int_eq(zkr_client_id(z)->client_id, sid);
}
END_TEST

START_TEST(owner_stays_while_rescue_down_ms_runs) {
  owner_server_dies(60000);
  sleep_ms(1000); /* 50 polls at 20 ms: the server is long suspect */
  ck_assert_int_eq(fake_handle_count(2), 1);
  ck_assert(!fake_handle_closed(h[1]));
}
END_TEST

/* The owner's zhandle reconnected just before the move: it is not closed
 * (closing a connected zhandle ends the session). */
START_TEST(owner_rescue_aborted_when_reconnected) {
  open3_rescue();
  fake_set_role(1, ZKR_ROLE_UNREACHABLE, 0);
  fake_set_role(2, ZKR_ROLE_LEADER, 0x200000001LL);
  /* The watcher saw CONNECTING, but zoo_state already says CONNECTED. */
  fake_session_event(h[1], ZOO_CONNECTING_STATE);
  fake_set_state(h[1], ZOO_CONNECTED_STATE);
  sleep_ms(600); /* two rescue periods */
  ck_assert(!fake_handle_closed(h[1]));
  ck_assert_int_eq(fake_handle_count(2), 1);
}
END_TEST

/* The owner's zhandle is associating with its server, which answers srvr
 * again (it came back): the session renewal is on its way there, and a
 * renewal landing after the rescue's would move the session back to a
 * dead connection (ZOOKEEPER-710) - not closed.  Once that server is
 * silent again, the associating zhandle is moved: it cannot renew soon,
 * and the session must not expire waiting. */
START_TEST(owner_rescue_aborted_when_associating) {
  open3_rescue();
  fake_set_role(1, ZKR_ROLE_UNREACHABLE, 0);
  fake_set_role(2, ZKR_ROLE_LEADER, 0x200000001LL);
  fake_session_event(h[1], ZOO_CONNECTING_STATE);
  fake_set_state(h[1], ZOO_ASSOCIATING_STATE);
  fake_set_role(1, ZKR_ROLE_FOLLOWER, 0x200000001LL);
  sleep_ms(600); /* two rescue periods */
  ck_assert(!fake_handle_closed(h[1]));
  ck_assert_int_eq(fake_handle_count(2), 1);
  fake_set_role(1, 0, 0); /* srvr gets no answer */
  fake_zh_t *r = fake_handle(2, 1);
  ck_assert_ptr_nonnull(r);
  ck_assert(fake_handle_closed(h[1]));
  ck_assert_int_eq(fake_handle_resumed(r), fake_session_id(h[1]));
}
END_TEST

START_TEST(resume_of_unknown_session_expires) {
  zkr_options_t o;
  opts_default(&o);
  clientid_t cid = {.client_id = 0xdead};
  memcpy(cid.passwd, "0123456789abcdef", 16);
  open3_opts(&o, &cid);
  ck_assert_int_eq(zkr_client_id(z)->client_id, 0xdead);
  /* Exactly one zhandle resumes it; the server says it is gone. */
  fake_zh_t *owner = NULL;
  for (int i = 1; i <= 3; i++) {
    if (fake_handle_resumed(h[i]) == 0xdead) {
      ck_assert_ptr_null(owner);
      owner = h[i];
    } else {
      fake_connect(h[i], 0);
    }
  }
  ck_assert_ptr_nonnull(owner);
  sleep_ms(50);
  ck_assert_int_eq(zkr_state(z), ZOO_CONNECTING_STATE);
  fake_session_event(owner, ZOO_EXPIRED_SESSION_STATE);
  wait_state(ZOO_EXPIRED_SESSION_STATE);
  ck_assert_int_eq(zkr_client_id(z)->client_id, 0xdead);
  int e = ev_find(0, EV_SESSION, 100);
  ck_assert_int_ge(e, 0);
  ck_assert_int_eq(ev_at(e).state, ZOO_EXPIRED_SESSION_STATE);
  ck_assert_int_eq(ev_matching(EV_SESSION, 100), 1);
  /* Every session closes with it. */
  uint64_t deadline = now_ms() + 5000;
  int all = 0;
  while (!all && now_ms() < deadline) {
    all = 1;
    for (int i = 1; i <= 3; i++) all &= fake_handle_closed(h[i]);
    sleep_ms(5);
  }
  ck_assert(all);
}
END_TEST

/* ---- the owner expires: EXPIRED, once; parked operations too ---- */

START_TEST(owner_expiry_is_the_applications) {
  open3();
  for (int i = 2; i <= 3; i++) fake_session_event(h[i], ZOO_CONNECTING_STATE);
  fake_session_event(h[1], ZOO_CONNECTING_STATE);
  ck_assert_int_eq(zkr_aset(z, "/p", "1", 1, -1, done_stat, (void *)1), ZOK);
  fake_session_event(h[1], ZOO_EXPIRED_SESSION_STATE);
  wait_state(ZOO_EXPIRED_SESSION_STATE);
  int d = ev_find(0, EV_DONE, 1);
  ck_assert_int_ge(d, 0);
  ck_assert_int_eq(ev_at(d).rc, ZSESSIONEXPIRED);
  ck_assert_int_eq(zkr_aset(z, "/p", "1", 1, -1, done_stat, (void *)2), ZINVALIDSTATE);
  uint64_t deadline = now_ms() + 5000;
  while (!(fake_handle_closed(h[2]) && fake_handle_closed(h[3])) && now_ms() < deadline)
    sleep_ms(5);
  ck_assert(fake_handle_closed(h[2]) && fake_handle_closed(h[3]));
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
  tcase_add_test(tc, no_session_opened_after_expiry);
  tcase_add_test(tc, owner_used_while_srvr_fails_on_its_server);
  tcase_add_test(tc, no_completion_before_established);
  tcase_add_test(tc, owner_rescue_keeps_client_id);
  tcase_add_test(tc, owner_rescued_soon_when_its_server_is_down);
  tcase_add_test(tc, owner_stays_while_rescue_down_ms_runs);
  tcase_add_test(tc, owner_rescue_aborted_when_reconnected);
  tcase_add_test(tc, owner_rescue_aborted_when_associating);
  tcase_add_test(tc, resume_of_unknown_session_expires);
  tcase_add_test(tc, owner_expiry_is_the_applications);
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
