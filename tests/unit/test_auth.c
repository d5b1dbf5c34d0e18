/* Server-less unit tests of credentials (DESIGN.md section 4): every
 * zkr_add_auth goes to every member session; the application's completion
 * reports the owner session's answer, never a ZOK no server gave; a
 * member whose server refused the credential never joins a pool; a
 * carrier's AUTH_FAILED is the application's; and a credential's answer
 * never waits for the write gate.  Driven through the function table by
 * the fake ZooKeeper (tests/harness/fakefix.h). */
#include <check.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fakefix.h"
#include "core/handle.h"

/* ---- credentials ---- */

/* A member session whose credential its server refused never joins the
 * pools (its answer came after it connected), and the application's
 * session fails authentication: the same credential goes to every
 * server. */
START_TEST(member_with_refused_credential_not_admitted) {
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
  ck_assert_int_eq(zkr_add_auth(z, "digest", "u:p", 3, done_void, (void *)9), ZOK);
  fake_req_t *a[4];
  for (int i = 1; i <= 3; i++) ck_assert_ptr_nonnull(a[i] = fake_wait(h[i], FK_AUTH, NULL));
  for (int i = 1; i <= 3; i++) fake_connect(h[i], 0);
  fake_reply(a[1], ZOK, 0, 0, NULL);
  fake_reply(a[2], ZOK, 0, 0, NULL);
  wait_state(ZOO_CONNECTED_STATE);
  fake_reply(a[3], ZAUTHFAILED, 0, 0, NULL);
  wait_state(ZOO_AUTH_FAILED_STATE);
  /* The call had the owner's answer already. */
  int d = ev_find(0, EV_DONE, 9);
  ck_assert_int_ge(d, 0);
  ck_assert_int_eq(ev_at(d).rc, ZOK);
  sleep_ms(100);
  zkr_stats_t *s;
  ck_assert_int_eq(zkr_stats(z, &s), ZOK);
  int joined = s->members[2].connected;
  zkr_stats_free(s);
  ck_assert_msg(!joined, "the member whose credential was refused was admitted");
}
END_TEST

/* The credential's answer comes inside libzookeeper_mt's handle lock (its
 * auth completion runs under zoo_lock_auth): what it does there must not
 * wait for the write gate, which routing holds while it calls into
 * libzookeeper (a lock cycle).  Here the gate is held while the answer is
 * given, from another thread: the answer must return at once. */
static _Atomic int auth_answered;
static void *answer_auth(void *arg) {
  fake_reply((fake_req_t *)arg, ZOK, 0, 0, NULL);
  auth_answered = 1;
  return NULL;
}

START_TEST(auth_answer_never_waits_for_the_gate) {
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
  ck_assert_int_eq(zkr_add_auth(z, "digest", "u:p", 3, NULL, NULL), ZOK);
  fake_req_t *a[4];
  for (int i = 1; i <= 3; i++) ck_assert_ptr_nonnull(a[i] = fake_wait(h[i], FK_AUTH, NULL));
  for (int i = 1; i <= 3; i++) fake_connect(h[i], 0);
  fake_reply(a[1], ZOK, 0, 0, NULL);
  fake_reply(a[3], ZOK, 0, 0, NULL);
  wait_state(ZOO_CONNECTED_STATE);
  auth_answered = 0;
  pthread_mutex_lock(&z->gate_mu);
  pthread_t t;
  pthread_create(&t, NULL, answer_auth, a[2]);
  uint64_t deadline = now_ms() + 2000;
  while (!auth_answered && now_ms() < deadline) sleep_ms(5);
  int answered = auth_answered;
  pthread_mutex_unlock(&z->gate_mu);
  pthread_join(t, NULL);
  ck_assert_msg(answered, "the credential's answer waited for the write gate");
}
END_TEST

/* ---- AUTH_FAILED from a carrier is the application's ---- */

/* The same credentials go to every member session: a carrier's server
 * that refuses them makes the virtual session AUTH_FAILED, though the
 * owner's server took them (docs/dropin.md, "Known differences"). */
START_TEST(carrier_auth_failed_is_the_applications) {
  open3();
  int mark = ev_count();
  fake_session_event(h[3], ZOO_AUTH_FAILED_STATE);
  wait_state(ZOO_AUTH_FAILED_STATE);
  int e = ev_find(mark, EV_SESSION, 100);
  ck_assert_int_ge(e, 0);
  ck_assert_int_eq(ev_at(e).state, ZOO_AUTH_FAILED_STATE);
  ck_assert(!fake_handle_closed(h[1]));
  ck_assert_int_eq(zkr_aset(z, "/x", "1", 1, -1, done_stat, (void *)1), ZINVALIDSTATE);
}
END_TEST

/* AUTH_FAILED ends the session: when the owner's session expires after
 * it, the application hears nothing more - no EXPIRED after AUTH_FAILED,
 * as a stock session, over at AUTH_FAILED, reports no other state - and
 * the handle stays AUTH_FAILED.  (The simulator: tests/sim/zkroute-sim
 * --seed 16989 --mode routed --consistency session, "session event -112
 * after the session ended".) */
START_TEST(no_expired_after_auth_failed) {
  open3();
  int mark = ev_count();
  fake_session_event(h[3], ZOO_AUTH_FAILED_STATE);
  wait_state(ZOO_AUTH_FAILED_STATE);
  ck_assert_int_ge(ev_find(mark, EV_SESSION, 100), 0);
  fake_session_event(h[1], ZOO_EXPIRED_SESSION_STATE);
  sleep_ms(200);
  for (int i = mark; i < ev_count(); i++)
    ck_assert_msg(!(ev_at(i).kind == EV_SESSION && ev_at(i).state == ZOO_EXPIRED_SESSION_STATE),
                  "EXPIRED delivered after AUTH_FAILED");
  ck_assert_int_eq(zkr_state(z), ZOO_AUTH_FAILED_STATE);
}
END_TEST

/* A sync and a read go out on two member sessions; a carrier's server
 * refuses the credentials and the virtual session is AUTH_FAILED; then
 * the other member answers both.  On a stock session nothing is answered
 * by a server after AUTH_FAILED: what was pending completes ZAUTHFAILED.
 * (The simulator: tests/sim/zkroute-sim --seed 1359 --mode routed.) */
START_TEST(no_server_answer_after_auth_failed) {
  open3();
  ck_assert_int_eq(zkr_async(z, "/s", done_string, (void *)1), ZOK);
  fake_req_t *s = fake_wait(NULL, FK_SYNC, "/s");
  ck_assert_ptr_nonnull(s);
  ck_assert_int_eq(zkr_aget(z, "/g", 0, done_data, (void *)2), ZOK);
  fake_req_t *g = fake_wait(NULL, FK_GET, "/g");
  ck_assert_ptr_nonnull(g);
  fake_zh_t *other =
      h[3] == s->h || h[3] == g->h ? h[1] == s->h || h[1] == g->h ? h[2] : h[1] : h[3];
  fake_session_event(other, ZOO_AUTH_FAILED_STATE);
  wait_state(ZOO_AUTH_FAILED_STATE);
  fake_reply(s, ZOK, 0, 0, "/s");
  fake_reply(g, ZOK, 5, 5, "v");
  int d1 = ev_find(0, EV_DONE, 1), d2 = ev_find(0, EV_DONE, 2);
  ck_assert_int_ge(d1, 0);
  ck_assert_int_ge(d2, 0);
  ck_assert_int_eq(ev_at(d1).rc, ZAUTHFAILED);
  ck_assert_int_eq(ev_at(d2).rc, ZAUTHFAILED);
}
END_TEST

/* Arms a watch of watcher 7 on path with a read (tag 1) the test
 * answers; returns the zhandle holding it. */
static fake_zh_t *armed_watch(const char *path) {
  ck_assert_int_eq(zkr_awget(z, path, watcher, (void *)7, done_data, (void *)1), ZOK);
  fake_req_t *g = fake_wait(NULL, FK_GET, path);
  ck_assert_ptr_nonnull(g);
  fake_reply(g, ZOK, 5, 5, "v");
  ck_assert_int_ge(ev_find(0, EV_DONE, 1), 0);
  return g->h;
}

/* A member other than holder's reports AUTH_FAILED (its server refused
 * the credentials): the virtual session is AUTH_FAILED. */
static void auth_failed_elsewhere(fake_zh_t *holder) {
  fake_session_event(holder == h[1] ? h[2] : h[1], ZOO_AUTH_FAILED_STATE);
  wait_state(ZOO_AUTH_FAILED_STATE);
  ck_assert_int_ge(ev_find(0, EV_SESSION, 100), 0);
}

/* A watch armed on one member; another member's server refuses the
 * credentials (AUTH_FAILED): the watch's server still sends its event,
 * but after AUTH_FAILED no watcher is called, as on a stock session whose
 * connection the refusal ended.
 * (The simulator: tests/sim/zkroute-sim --seed 1134 --mode routed.) */
START_TEST(no_watch_event_after_auth_failed) {
  open3();
  fake_zh_t *holder = armed_watch("/w");
  auth_failed_elsewhere(holder);
  fake_fire(holder, "/w", ZOO_CHANGED_EVENT);
  sleep_ms(100);
  for (int i = 0; i < ev_count(); i++)
    ck_assert(!(ev_at(i).kind == EV_WATCH && ev_at(i).type == ZOO_CHANGED_EVENT));
}
END_TEST

/* A read held for a watch's event (its answer shows a change the watch,
 * on another member, has not fired for) when another member's server
 * refuses the credentials: the event will not be delivered any more, and
 * the read completes ZAUTHFAILED, as what a stock session still has
 * pending then - not ZOK with its data, and not only at the hold's bound.
 * (The simulator: tests/sim/zkroute-sim --seed 2063 --mode routed.) */
START_TEST(held_read_completes_auth_failed) {
  open3();
  fake_zh_t *holder = armed_watch("/h");
  ck_assert_int_eq(zkr_aget(z, "/h", 0, done_data, (void *)2), ZOK);
  fake_req_t *g = fake_wait(NULL, FK_GET, "/h");
  ck_assert_ptr_nonnull(g);
  ck_assert_ptr_ne(g->h, holder);
  fake_reply(g, ZOK, 9, 9, "w");
  sleep_ms(50);
  ck_assert_int_eq(ev_matching(EV_DONE, 2), 0); /* held for watcher 7's event */
  auth_failed_elsewhere(holder);
  int d = ev_find(0, EV_DONE, 2);
  ck_assert_int_ge(d, 0);
  ck_assert_int_eq(ev_at(d).rc, ZAUTHFAILED);
}
END_TEST

/* A watched read is out when another member's server refuses the
 * credentials; its own server then answers ZOK and registers the watch on
 * that member's session.  The application is told ZAUTHFAILED, yet the
 * record must outlive that registration: its event still calls the
 * record (freed with the read's completion, that was a use after free:
 * tests/sim/zkroute-sim --seed 346 --mode routed --io-loss 5 under
 * --enable-sanitizers), and reaches nobody. */
START_TEST(watched_read_answered_after_auth_failed_keeps_its_record) {
  open3();
  ck_assert_int_eq(zkr_awget(z, "/a", watcher, (void *)8, done_data, (void *)3), ZOK);
  fake_req_t *g = fake_wait(NULL, FK_GET, "/a");
  ck_assert_ptr_nonnull(g);
  auth_failed_elsewhere(g->h);
  fake_reply(g, ZOK, 5, 5, "v");
  int d = ev_find(0, EV_DONE, 3);
  ck_assert_int_ge(d, 0);
  ck_assert_int_eq(ev_at(d).rc, ZAUTHFAILED);
  ck_assert_int_eq(fake_watch_count(g->h, "/a"), 1);
  ck_assert_int_eq(fake_fire(g->h, "/a", ZOO_CHANGED_EVENT), 1);
  sleep_ms(100);
  ck_assert_int_eq(ev_matching(EV_WATCH, 8), 0);
}
END_TEST

/* A remove_all is out when another member's server refuses the
 * credentials; its server then answers ZOK.  After AUTH_FAILED nothing is
 * answered by a server: the removal completes ZAUTHFAILED.
 * (The simulator: tests/sim/zkroute-sim --seed 1631 --mode routed.) */
START_TEST(no_removal_answer_after_auth_failed) {
  open3();
  fake_zh_t *holder = armed_watch("/r");
  ck_assert_int_eq(zkr_aremove_all_watches(z, "/r", ZWATCHTYPE_ANY, 0, done_void, (void *)2), ZOK);
  fake_req_t *r = fake_wait(holder, FK_REMOVE_ALL_WATCHES, "/r");
  ck_assert_ptr_nonnull(r);
  auth_failed_elsewhere(holder);
  fake_reply(r, ZOK, 0, 0, NULL);
  int d = ev_find(0, EV_DONE, 2);
  ck_assert_int_ge(d, 0);
  ck_assert_int_eq(ev_at(d).rc, ZAUTHFAILED);
}
END_TEST

/* ---- add_auth reports the owner's answer ---- */

/* A credential added while the owner's connection is down: stock's
 * zoo_add_auth refuses it then (its state is 0 between the loss and the
 * next attempt, ZOOKEEPER-800), so the owner's zhandle does not hold it
 * and must not serve until it does.  Once reconnected, the monitor sends
 * it, and the application's session is CONNECTED again - it stayed
 * CONNECTING while every operation succeeded.  (The simulator:
 * tests/sim/zkroute-sim --seed 80 --mode routed, a run that never
 * settled.) */
START_TEST(owner_refused_a_credential_while_down_reconnects_after_resend) {
  open3();
  /* The owner is the leader's session, slot 0: the first member a
   * credential is sent to, so the fake's next failure is the owner's. */
  int o = stat_owner();
  ck_assert_int_eq(o, 0);
  fake_session_event(h[o + 1], ZOO_CONNECTING_STATE);
  wait_state(ZOO_CONNECTING_STATE);
  fake_fail_next(FK_AUTH, ZINVALIDSTATE);
  ck_assert_int_eq(zkr_add_auth(z, "digest", "u:p", 3, done_void, (void *)1), ZOK);
  for (int i = 1; i <= 3; i++) {
    if (i == o + 1) continue;
    fake_req_t *a = fake_wait(h[i], FK_AUTH, NULL);
    ck_assert_ptr_nonnull(a);
    fake_reply(a, ZOK, 0, 0, NULL);
  }
  fake_session_event(h[o + 1], ZOO_CONNECTED_STATE);
  fake_req_t *mine = fake_wait(h[o + 1], FK_AUTH, NULL); /* sent again, by the monitor */
  ck_assert_ptr_nonnull(mine);
  fake_reply(mine, ZOK, 0, 0, NULL);
  wait_state(ZOO_CONNECTED_STATE);
  int d = ev_find(0, EV_DONE, 1);
  ck_assert_int_ge(d, 0);
  ck_assert_int_eq(ev_at(d).rc, ZOK);
}
END_TEST

START_TEST(add_auth_reports_owner_answer) {
  open3();
  ck_assert_int_eq(zkr_add_auth(z, "digest", "u:p", 3, done_void, (void *)1), ZOK);
  fake_req_t *a2 = fake_wait(h[2], FK_AUTH, NULL), *a3 = fake_wait(h[3], FK_AUTH, NULL);
  fake_req_t *a1 = fake_wait(h[1], FK_AUTH, NULL);
  ck_assert_ptr_nonnull(a1);
  ck_assert_ptr_nonnull(a2);
  ck_assert_ptr_nonnull(a3);
  fake_reply(a2, ZOK, 0, 0, NULL);
  fake_reply(a3, ZOK, 0, 0, NULL);
  sleep_ms(50);
  ck_assert_int_eq(ev_matching(EV_DONE, 1), 0);
  fake_reply(a1, ZAUTHFAILED, 0, 0, NULL);
  int d = ev_find(0, EV_DONE, 1);
  ck_assert_int_ge(d, 0);
  ck_assert_int_eq(ev_at(d).rc, ZAUTHFAILED);
}
END_TEST

/* A carrier's zhandle reports AUTH_FAILED (its server refused a
 * credential) before the owner's server answers the credential the
 * application is waiting on: that call completes ZAUTHFAILED - after the
 * session's AUTH_FAILED nothing is answered ZOK, as on a stock session.
 * (The simulator: tests/sim/zkroute-sim --seed 1487 --mode routed.) */
START_TEST(add_auth_after_auth_failed_is_refused) {
  open3();
  ck_assert_int_eq(zkr_add_auth(z, "digest", "u:p", 3, done_void, (void *)1), ZOK);
  fake_req_t *a1 = fake_wait(h[1], FK_AUTH, NULL);
  ck_assert_ptr_nonnull(a1);
  fake_session_event(h[3], ZOO_AUTH_FAILED_STATE);
  wait_state(ZOO_AUTH_FAILED_STATE);
  fake_reply(a1, ZOK, 0, 0, NULL);
  int d = ev_find(0, EV_DONE, 1);
  ck_assert_int_ge(d, 0);
  ck_assert_int_eq(ev_at(d).rc, ZAUTHFAILED);
  int e = ev_find(0, EV_SESSION, 100);
  ck_assert_int_ge(e, 0);
}
END_TEST

/* No member session is connected yet when the credential is added: the
 * call is not completed on the way (a ZOK no server gave, on the
 * caller's thread), nor by a carrier's answer; it reports the owner's
 * answer once the owner session is established and answers, on the
 * delivery thread. */
static pthread_t caller;
static _Atomic int auth_on_caller;
static void done_auth(int rc, const void *d) {
  if (pthread_equal(pthread_self(), caller)) auth_on_caller = 1;
  ev_add(EV_DONE, TAG(d), rc, 0, 0, NULL);
}

START_TEST(add_auth_before_any_session_waits_for_owner) {
  zkr_options_t o;
  opts_default(&o);
  ev_reset();
  auth_on_caller = 0;
  fake_install();
  fake_set_role(1, ZKR_ROLE_LEADER, 0x100000005LL);
  fake_set_role(2, ZKR_ROLE_FOLLOWER, 0x100000005LL);
  fake_set_role(3, ZKR_ROLE_FOLLOWER, 0x100000005LL);
  ck_assert_int_eq(zkr_init_opts(&z, HOSTS, watcher, 3000, NULL, (void *)100, 0, &o), ZOK);
  for (int i = 1; i <= 3; i++) ck_assert_ptr_nonnull(h[i] = fake_handle(i, 0));
  wait_leader(0);
  ck_assert_int_eq(zkr_state(z), ZOO_CONNECTING_STATE);
  caller = pthread_self();
  ck_assert_int_eq(zkr_add_auth(z, "digest", "u:p", 3, done_auth, (void *)1), ZOK);
  ck_assert_int_eq(ev_matching(EV_DONE, 1), 0);
  /* Queued on every zhandle, as stock queues it until the handshake. */
  fake_req_t *a[4];
  for (int i = 1; i <= 3; i++) ck_assert_ptr_nonnull(a[i] = fake_wait(h[i], FK_AUTH, NULL));
  /* The leader's session is established; until its server answered the
   * credential it is not usable, and nothing is reported. */
  fake_connect(h[1], 0);
  sleep_ms(100);
  ck_assert_int_eq(ev_matching(EV_DONE, 1), 0);
  /* Its server refuses the credential: that is the answer - the same
   * credential goes to every server, so the application's session fails
   * authentication - and the refused session is never admitted. */
  fake_reply(a[1], ZAUTHFAILED, 0, 0, NULL);
  int d = ev_find(0, EV_DONE, 1);
  ck_assert_int_ge(d, 0);
  ck_assert_int_eq(ev_at(d).rc, ZAUTHFAILED);
  wait_state(ZOO_AUTH_FAILED_STATE);
  ck_assert_int_ne(stat_owner(), 0);
  /* The carriers connect and accept it later: no second answer. */
  for (int i = 2; i <= 3; i++) {
    fake_connect(h[i], 0);
    fake_reply(a[i], ZOK, 0, 0, NULL);
  }
  ck_assert(!auth_on_caller);
  sleep_ms(50);
  ck_assert_int_eq(ev_matching(EV_DONE, 1), 1);
}
END_TEST

/* Every zhandle refuses zoo_add_auth (between two connection attempts,
 * ZOOKEEPER-800), so no send carries the call; the handle closes before a
 * retry got through.  Stock completes a pending credential at close: the
 * call completes with ZCLOSING, never not at all.  Simulator seeds 141
 * and 849 (routed): the call never completed. */
static _Atomic int refuse_auth;
static void refuse_next_auth(fake_zh_t *hh, void *arg) {
  (void)hh;
  if (!refuse_auth) return;
  fake_fail_next(FK_AUTH, ZINVALIDSTATE);
  fake_hook_next(FK_AUTH, refuse_next_auth, arg);
}

START_TEST(add_auth_pending_at_close_completes_closing) {
  open3();
  refuse_auth = 1;
  fake_hook_next(FK_AUTH, refuse_next_auth, NULL);
  ck_assert_int_eq(zkr_add_auth(z, "digest", "u:p", 3, done_void, (void *)1), ZOK);
  sleep_ms(300); /* the monitor's retries are refused too */
  ck_assert_int_eq(ev_matching(EV_DONE, 1), 0);
  zkr_t *zz = z;
  z = NULL;
  zkr_close(zz);
  refuse_auth = 0;
  int d = ev_find(0, EV_DONE, 1);
  ck_assert_msg(d >= 0, "the credential's call never completed");
  ck_assert_int_eq(ev_at(d).rc, ZCLOSING);
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("auth");
  TCase *tc = tcase_create("fake");
  tcase_set_timeout(tc, 30);
  tcase_add_checked_fixture(tc, NULL, teardown);
  tcase_add_test(tc, member_with_refused_credential_not_admitted);
  tcase_add_test(tc, auth_answer_never_waits_for_the_gate);
  tcase_add_test(tc, carrier_auth_failed_is_the_applications);
  tcase_add_test(tc, no_server_answer_after_auth_failed);
  tcase_add_test(tc, no_watch_event_after_auth_failed);
  tcase_add_test(tc, no_expired_after_auth_failed);
  tcase_add_test(tc, no_removal_answer_after_auth_failed);
  tcase_add_test(tc, watched_read_answered_after_auth_failed_keeps_its_record);
  tcase_add_test(tc, held_read_completes_auth_failed);
  tcase_add_test(tc, add_auth_reports_owner_answer);
  tcase_add_test(tc, owner_refused_a_credential_while_down_reconnects_after_resend);
  tcase_add_test(tc, add_auth_after_auth_failed_is_refused);
  tcase_add_test(tc, add_auth_before_any_session_waits_for_owner);
  tcase_add_test(tc, add_auth_pending_at_close_completes_closing);
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
