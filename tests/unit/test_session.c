/* Server-less unit tests of the virtual session and the operation
 * lifecycle (DESIGN.md section 4): the library is driven through its
 * function table by the fake ZooKeeper of tests/harness/fakezk.c, which
 * answers nothing until the test does, so the order of replies, session
 * events and watch events is the test's - never timing luck.
 *
 * Each test opens a handle on three fake members ("fake1..3") with the
 * monitor polling every 20 ms, hedging and /zookeeper/config off. */
#include <check.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/socket.h>

#include "fakefix.h"

/* ---- read-your-writes across a write-session switch (issue 11 item 6) ---- */

/* A read of a path with a write in flight is ordered: it follows the write
 * on the write session.  If it must wait while the write session changes,
 * the new session may not have the write yet: it is synced first. */
START_TEST(ordered_read_after_switch_is_synced) {
  open3();
  ck_assert_int_eq(zkr_aset(z, "/k", "v", 1, -1, done_stat, (void *)1), ZOK);
  fake_req_t *set = fake_wait(h[1], FK_SET, "/k");
  ck_assert_ptr_nonnull(set);
  /* The leader's session drops; fake2 leads now. */
  fake_set_role(1, ZKR_ROLE_UNREACHABLE, 0);
  fake_set_role(2, ZKR_ROLE_LEADER, 0x200000001LL);
  fake_session_event(h[1], ZOO_CONNECTING_STATE);
  wait_leader(1);
  ck_assert_int_eq(zkr_aget(z, "/k", 0, done_data, (void *)2), ZOK);
  /* Parked behind the write in flight on the old session. */
  sleep_ms(50);
  ck_assert_ptr_null(fake_peek(h[2], FK_GET, "/k"));
  /* The write is acknowledged: the read goes to fake2, after a sync. */
  fake_reply(set, ZOK, 0x100000006LL, 0, NULL);
  fake_req_t *get = fake_wait(h[2], FK_GET, "/k");
  ck_assert_ptr_nonnull(get);
  int kinds[16];
  fake_req_t *log[16];
  int n = fake_log(h[2], kinds, log, 16);
  int gi = -1;
  for (int i = 0; i < n && i < 16; i++)
    if (log[i] == get) gi = i;
  ck_assert_int_ge(gi, 1);
  ck_assert_int_eq(kinds[gi - 1], FK_SYNC);
  ck_assert_str_eq(log[gi - 1]->path, "/k");
  fake_reply(log[gi - 1], ZOK, 0, 0, NULL);
  fake_reply(get, ZOK, 0x100000006LL, 0, "v");
  ck_assert_int_ge(ev_find(0, EV_DONE, 2), 0);
}
END_TEST

/* An ordered read sent right behind its write on the same session needs
 * no sync: same-session FIFO. */
START_TEST(ordered_read_same_session_not_synced) {
  open3();
  ck_assert_int_eq(zkr_aset(z, "/k", "v", 1, -1, done_stat, (void *)1), ZOK);
  ck_assert_int_eq(zkr_aget(z, "/k", 0, done_data, (void *)2), ZOK);
  ck_assert_ptr_nonnull(fake_wait(h[1], FK_SET, "/k"));
  ck_assert_ptr_nonnull(fake_wait(h[1], FK_GET, "/k"));
  int kinds[8];
  int n = fake_log(h[1], kinds, NULL, 8);
  ck_assert_int_eq(n, 2);
  ck_assert_int_eq(kinds[0], FK_SET);
  ck_assert_int_eq(kinds[1], FK_GET);
}
END_TEST

/* ---- failures of parked operations keep their place (item 9) ---- */

/* /b's reply, from a thread of its own: the thread that sends /b holds the
 * write gate, which /b's completion takes once it has handed its answer
 * on. */
static void *answer_b(void *arg) {
  fake_reply((fake_req_t *)arg, ZOK, 0x100000009LL, 0, NULL);
  return NULL;
}

/* Runs inside the fake's aset of /b, once the fake recorded it: the flush
 * that sends /b is still running and holds the gate.  /b is answered, and
 * this waits until that answer reached the application.  So /a's failure
 * comes first only if it was handed on before /b was sent; a failure
 * handed on after the flush (the old behaviour) comes after /b's
 * completion, whatever the timing. */
static _Atomic int b_done_while_sending;
static void hook_answer_b(fake_req_t *r, void *arg) {
  (void)arg;
  pthread_t t;
  pthread_create(&t, NULL, answer_b, r);
  pthread_detach(t);
  b_done_while_sending = ev_find(0, EV_DONE, 2) >= 0;
}

START_TEST(parked_failure_completes_before_later_writes) {
  open3();
  b_done_while_sending = 0;
  /* No member usable: writes park. */
  for (int i = 1; i <= 3; i++) fake_session_event(h[i], ZOO_CONNECTING_STATE);
  wait_state(ZOO_CONNECTING_STATE);
  ck_assert_int_eq(zkr_aset(z, "/a", "1", 1, -1, done_stat, (void *)1), ZOK);
  ck_assert_int_eq(zkr_aset(z, "/b", "2", 1, -1, done_stat, (void *)2), ZOK);
  /* The leader comes back: sending /a fails (the next SET), /b goes and is
   * answered before the flush that sent it returns. */
  fake_fail_next(FK_SET, ZMARSHALLINGERROR);
  fake_hook_sent(FK_SET, "/b", hook_answer_b, NULL);
  fake_session_event(h[1], ZOO_CONNECTED_STATE);
  int a = ev_find(0, EV_DONE, 1), b = ev_find(0, EV_DONE, 2);
  ck_assert_int_ge(a, 0);
  ck_assert_int_ge(b, 0);
  /* The hook ran, and /b's completion was handed on inside it. */
  ck_assert(b_done_while_sending);
  ck_assert_int_lt(a, b);
  ck_assert_int_eq(ev_at(a).rc, ZMARSHALLINGERROR);
  ck_assert_int_eq(ev_at(b).rc, ZOK);
  /* /a never reached the server: the one SET sent is /b's. */
  int kinds[8];
  fake_req_t *log[8];
  ck_assert_int_eq(fake_log(h[1], kinds, log, 8), 1);
  ck_assert_str_eq(log[0]->path, "/b");
  sleep_ms(50);
  ck_assert_int_eq(ev_matching(EV_DONE, 1), 1);
  ck_assert_int_eq(ev_matching(EV_DONE, 2), 1);
}
END_TEST

/* ---- a refused request is never also completed (item 9) ---- */

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

/* ---- zkr_async is a barrier ---- */

START_TEST(async_waits_for_earlier_operations) {
  open3();
  ck_assert_int_eq(zkr_aset(z, "/w", "1", 1, -1, done_stat, (void *)1), ZOK);
  ck_assert_int_eq(zkr_async(z, "/w", done_string, (void *)2), ZOK);
  fake_req_t *set = fake_wait(h[1], FK_SET, "/w");
  ck_assert_ptr_nonnull(set);
  /* The sync goes to a follower and is answered first. */
  fake_req_t *sync = fake_wait(NULL, FK_SYNC, "/w");
  ck_assert_ptr_nonnull(sync);
  fake_reply(sync, ZOK, 0, 0, NULL);
  sleep_ms(50);
  ck_assert_int_eq(ev_matching(EV_DONE, 2), 0);
  fake_reply(set, ZOK, 0x100000006LL, 0, NULL);
  int a = ev_find(0, EV_DONE, 1), b = ev_find(0, EV_DONE, 2);
  ck_assert_int_ge(a, 0);
  ck_assert_int_gt(b, a);
  ck_assert_str_eq(ev_at(b).path, "/w");
}
END_TEST

/* ---- session events reach every registered watcher, once each ---- */

START_TEST(session_events_reach_path_watchers) {
  open3();
  int first = ev_count(); /* the CONNECTED of the open */
  ck_assert_int_eq(ev_matching(EV_SESSION, 100), 1);
  /* Two watches with (watcher, 1), one with (watcher, 2), one with the
   * global watcher (merges with it). */
  ck_assert_int_eq(zkr_awget(z, "/p", watcher, (void *)1, done_data, (void *)11), ZOK);
  ck_assert_int_eq(zkr_awexists(z, "/q", watcher, (void *)1, done_stat, (void *)12), ZOK);
  ck_assert_int_eq(zkr_awexists(z, "/r", watcher, (void *)2, done_stat, (void *)13), ZOK);
  ck_assert_int_eq(zkr_aget(z, "/s", 1, done_data, (void *)14), ZOK);
  const char *paths[] = {"/p", "/q", "/r", "/s"};
  for (int i = 0; i < 4; i++) {
    fake_req_t *r = NULL;
    for (int k = 2; k <= 3 && !r; k++)
      r = fake_peek(h[k], i == 1 || i == 2 ? FK_EXISTS : FK_GET, paths[i]);
    if (!r) r = fake_wait(NULL, i == 1 || i == 2 ? FK_EXISTS : FK_GET, paths[i]);
    ck_assert_ptr_nonnull(r);
    fake_reply(r, ZOK, 5, 5, "x");
  }
  for (int t = 11; t <= 14; t++) ck_assert_int_ge(ev_find(0, EV_DONE, t), 0);
  /* The owner's connection drops and comes back. */
  int mark = ev_count();
  fake_session_event(h[1], ZOO_CONNECTING_STATE);
  wait_state(ZOO_CONNECTING_STATE);
  fake_session_event(h[1], ZOO_CONNECTED_STATE);
  wait_state(ZOO_CONNECTED_STATE);
  int g = ev_find(mark, EV_SESSION, 100);
  ck_assert_int_ge(g, 0);
  ck_assert_int_ge(ev_find(g + 1, EV_SESSION, 100), 0);
  sleep_ms(50);
  int n = ev_count(), c1 = 0, c2 = 0, cg = 0;
  for (int i = mark; i < n; i++) {
    ev_t e = ev_at(i);
    if (e.kind != EV_SESSION) continue;
    ck_assert_str_eq(e.path, "");
    if (e.tag == 1) c1++;
    if (e.tag == 2) c2++;
    if (e.tag == 100) cg++;
  }
  ck_assert_int_eq(c1, 2); /* CONNECTING, CONNECTED: once each */
  ck_assert_int_eq(c2, 2);
  ck_assert_int_eq(cg, 2);
  /* Per-path watchers before the global one, as stock orders them. */
  for (int i = mark; i < n; i++) {
    ev_t e = ev_at(i);
    if (e.kind == EV_SESSION && e.state == ZOO_CONNECTING_STATE) {
      ck_assert_int_ne(e.tag, 100);
      break;
    }
  }
  (void)first;
}
END_TEST

/* ---- the owner: identity, ephemerals, rescue ---- */

START_TEST(ephemerals_go_to_owner_ttl_to_leader) {
  zkr_options_t o;
  opts_default(&o);
  /* No srvr answer at first: the owner is the first session connected,
   * fake2's; then fake1 is found to lead. */
  ev_reset();
  fake_install();
  ck_assert_int_eq(zkr_init_opts(&z, HOSTS, watcher, 3000, NULL, (void *)100, 0, &o), ZOK);
  for (int i = 1; i <= 3; i++) ck_assert_ptr_nonnull(h[i] = fake_handle(i, 0));
  sleep_ms(60); /* a poll happened: no leader */
  fake_connect(h[2], 0x222);
  wait_state(ZOO_CONNECTED_STATE);
  ck_assert_int_eq(stat_owner(), 1);
  ck_assert_int_eq((int)zkr_client_id(z)->client_id, 0x222);
  fake_connect(h[1], 0x111);
  fake_connect(h[3], 0x333);
  fake_set_role(1, ZKR_ROLE_LEADER, 0x100000005LL);
  fake_set_role(2, ZKR_ROLE_FOLLOWER, 0x100000005LL);
  fake_set_role(3, ZKR_ROLE_FOLLOWER, 0x100000005LL);
  wait_leader(0);
  ck_assert_int_eq(
      zkr_acreate(z, "/e", "", 0, &ZOO_OPEN_ACL_UNSAFE, ZOO_EPHEMERAL, done_string, (void *)1),
      ZOK);
  fake_req_t *c = fake_wait(h[2], FK_CREATE, "/e");
  ck_assert_ptr_nonnull(c);
  fake_reply(c, ZOK, 6, 6, NULL);
  ck_assert_int_ge(ev_find(0, EV_DONE, 1), 0);
  ck_assert_int_eq(zkr_acreate_ttl(z, "/t", "", 0, &ZOO_OPEN_ACL_UNSAFE, ZOO_PERSISTENT_WITH_TTL,
                                   60000, done_string, (void *)2),
                   ZOK);
  c = fake_wait(h[1], FK_CREATE, "/t");
  ck_assert_ptr_nonnull(c);
  fake_reply(c, ZOK, 7, 7, NULL);
  ck_assert_int_ge(ev_find(0, EV_DONE, 2), 0);
  zoo_op_t ops[2];
  zoo_op_result_t res[2];
  zoo_create_op_init(&ops[0], "/m1", "", 0, &ZOO_OPEN_ACL_UNSAFE, 0, NULL, 0);
  zoo_create_op_init(&ops[1], "/m2", "", 0, &ZOO_OPEN_ACL_UNSAFE, ZOO_EPHEMERAL_SEQUENTIAL, NULL,
                     0);
  ck_assert_int_eq(zkr_amulti(z, 2, ops, res, done_void, (void *)3), ZOK);
  c = fake_wait(h[2], FK_MULTI, NULL);
  ck_assert_ptr_nonnull(c);
  fake_reply(c, ZOK, 8, 8, NULL);
  ck_assert_int_ge(ev_find(0, EV_DONE, 3), 0);
  ck_assert_int_eq((int)zkr_client_id(z)->client_id, 0x222);
}
END_TEST

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

/* ---- carriers: silent expiry, watches re-armed with a sync ---- */

START_TEST(carrier_expiry_silent_watch_rearmed) {
  open3();
  ck_assert_int_eq(zkr_awget(z, "/cfg", watcher, (void *)1, done_data, (void *)10), ZOK);
  fake_req_t *g = fake_wait(NULL, FK_GET, "/cfg");
  ck_assert_ptr_nonnull(g);
  fake_zh_t *carrier = g->h;
  ck_assert_ptr_ne(carrier, h[1]);
  fake_reply(g, ZOK, 5, 5, "a");
  ck_assert_int_ge(ev_find(0, EV_DONE, 10), 0);
  int n_session = ev_matching(EV_SESSION, 100);
  /* The carrier expires; the node changed meanwhile (mzxid 5 -> 9). */
  fake_session_event(carrier, ZOO_EXPIRED_SESSION_STATE);
  fake_req_t *rg = fake_wait(NULL, FK_GET, "/cfg");
  ck_assert_ptr_nonnull(rg);
  ck_assert_ptr_ne(rg->h, carrier);
  ck_assert(fake_handle_closed(carrier));
  /* A sync went first on that session. */
  int kinds[32];
  fake_req_t *log[32];
  int n = fake_log(rg->h, kinds, log, 32), gi = -1;
  for (int i = 0; i < n && i < 32; i++)
    if (log[i] == rg) gi = i;
  ck_assert_int_ge(gi, 1);
  ck_assert_int_eq(kinds[gi - 1], FK_SYNC);
  ck_assert(rg->watched);
  fake_reply(rg, ZOK, 9, 9, "b");
  int w = ev_find(0, EV_WATCH, 1);
  ck_assert_int_ge(w, 0);
  ck_assert_int_eq(ev_at(w).type, ZOO_CHANGED_EVENT);
  ck_assert_str_eq(ev_at(w).path, "/cfg");
  /* The registration the re-arm left behind fires later: swallowed. */
  fake_fire(rg->h, "/cfg", ZOO_CHANGED_EVENT);
  sleep_ms(50);
  ck_assert_int_eq(ev_matching(EV_WATCH, 1), 1);
  /* Silent: no session event for the carrier's expiry. */
  ck_assert_int_eq(ev_matching(EV_SESSION, 100), n_session);
  ck_assert_int_eq(zkr_state(z), ZOO_CONNECTED_STATE);
}
END_TEST

/* Unchanged node: the re-armed watch is the same watch, and fires once. */
START_TEST(rearm_unchanged_then_fires_once) {
  open3_rescue();
  ck_assert_int_eq(zkr_awexists(z, "/x", watcher, (void *)1, done_stat, (void *)10), ZOK);
  fake_req_t *g = fake_wait(NULL, FK_EXISTS, "/x");
  fake_zh_t *carrier = g->h;
  fake_reply(g, ZNONODE, 0, 0, NULL);
  ck_assert_int_ge(ev_find(0, EV_DONE, 10), 0);
  /* The carrier stays unreachable longer than rescue_ms. */
  fake_session_event(carrier, ZOO_CONNECTING_STATE);
  fake_req_t *rg = fake_wait(NULL, FK_EXISTS, "/x");
  ck_assert_ptr_nonnull(rg);
  ck_assert_ptr_ne(rg->h, carrier);
  /* The first re-arm fails (its session drops too): retried. */
  fake_reply(rg, ZCONNECTIONLOSS, 0, 0, NULL);
  fake_req_t *rg2 = fake_wait(NULL, FK_EXISTS, "/x");
  ck_assert_ptr_nonnull(rg2);
  fake_reply(rg2, ZNONODE, 0, 0, NULL);
  sleep_ms(50);
  ck_assert_int_eq(ev_matching(EV_WATCH, 1), 0);
  ck_assert_int_eq(fake_fire(rg2->h, "/x", ZOO_CREATED_EVENT), 1);
  int w = ev_find(0, EV_WATCH, 1);
  ck_assert_int_ge(w, 0);
  ck_assert_int_eq(ev_at(w).type, ZOO_CREATED_EVENT);
  sleep_ms(50);
  ck_assert_int_eq(ev_matching(EV_WATCH, 1), 1);
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

/* ---- add_auth reports the owner's answer ---- */

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
  /* Its server refuses the credential: that is the answer, the owner's
   * (the session was chosen as the owner once it could be used). */
  fake_reply(a[1], ZAUTHFAILED, 0, 0, NULL);
  int d = ev_find(0, EV_DONE, 1);
  ck_assert_int_ge(d, 0);
  ck_assert_int_eq(ev_at(d).rc, ZAUTHFAILED);
  ck_assert_int_eq(stat_owner(), 0);
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

/* ---- removing watches, the server list, where the owner is ---- */

/* Two watchers on one path, armed by reads the test answers; returns the
 * zhandles that hold them. */
static void two_watches(fake_zh_t **ha, fake_zh_t **hb) {
  ck_assert_int_eq(zkr_awget(z, "/p", watcher, (void *)1, done_data, (void *)11), ZOK);
  fake_req_t *a = fake_wait(NULL, FK_GET, "/p");
  ck_assert_ptr_nonnull(a);
  fake_reply(a, ZOK, 5, 5, "x");
  ck_assert_int_eq(zkr_awget(z, "/p", watcher, (void *)2, done_data, (void *)12), ZOK);
  fake_req_t *b = fake_wait(NULL, FK_GET, "/p");
  ck_assert_ptr_nonnull(b);
  fake_reply(b, ZOK, 5, 5, "x");
  ck_assert_int_ge(ev_find(0, EV_DONE, 11), 0);
  ck_assert_int_ge(ev_find(0, EV_DONE, 12), 0);
  *ha = a->h;
  *hb = b->h;
}

START_TEST(remove_watch_on_its_member) {
  open3();
  fake_zh_t *ha, *hb;
  two_watches(&ha, &hb);
  /* A watcher nobody set: ZNOWATCHER at once, no completion. */
  ck_assert_int_eq(
      zkr_aremove_watches(z, "/p", ZWATCHTYPE_DATA, watcher, (void *)3, 0, done_void, (void *)30),
      ZNOWATCHER);
  ck_assert_int_eq(
      zkr_aremove_watches(z, "/p", ZWATCHTYPE_CHILD, watcher, (void *)1, 0, done_void, (void *)31),
      ZNOWATCHER);
  ck_assert_int_eq(zkr_aremove_watches(z, "/p", 7, watcher, (void *)1, 0, done_void, (void *)32),
                   ZBADARGUMENTS);
  ck_assert_int_eq(
      zkr_aremove_watches(z, "p", ZWATCHTYPE_DATA, watcher, (void *)1, 0, done_void, (void *)33),
      ZBADARGUMENTS);
  /* Watcher 1: asked of the session that holds it. */
  ck_assert_int_eq(
      zkr_aremove_watches(z, "/p", ZWATCHTYPE_DATA, watcher, (void *)1, 0, done_void, (void *)20),
      ZOK);
  fake_req_t *r = fake_wait(ha, FK_REMOVE_WATCHES, "/p");
  ck_assert_ptr_nonnull(r);
  sleep_ms(30);
  ck_assert_int_eq(ev_matching(EV_DONE, 20), 0);
  fake_reply(r, ZOK, 0, 0, NULL);
  int d = ev_find(0, EV_DONE, 20);
  ck_assert_int_ge(d, 0);
  ck_assert_int_eq(ev_at(d).rc, ZOK);
  /* The path changes: watcher 2 hears it, watcher 1 never again. */
  fake_fire(ha, "/p", ZOO_CHANGED_EVENT);
  if (hb != ha) fake_fire(hb, "/p", ZOO_CHANGED_EVENT);
  ck_assert_int_ge(ev_find(0, EV_WATCH, 2), 0);
  sleep_ms(50);
  ck_assert_int_eq(ev_matching(EV_WATCH, 1), 0);
  ck_assert_int_eq(ev_matching(EV_DONE, 30) + ev_matching(EV_DONE, 31), 0);
}
END_TEST

START_TEST(remove_all_watches_everywhere) {
  open3();
  fake_zh_t *ha, *hb;
  two_watches(&ha, &hb);
  ck_assert_int_eq(zkr_aremove_all_watches(z, "/p", ZWATCHTYPE_ANY, 0, done_void, (void *)20), ZOK);
  fake_req_t *ra = fake_wait(ha, FK_REMOVE_ALL_WATCHES, "/p");
  ck_assert_ptr_nonnull(ra);
  fake_req_t *rb = hb != ha ? fake_wait(hb, FK_REMOVE_ALL_WATCHES, "/p") : NULL;
  fake_reply(ra, ZOK, 0, 0, NULL);
  if (rb) {
    sleep_ms(30);
    ck_assert_int_eq(ev_matching(EV_DONE, 20), 0); /* one answer still missing */
    fake_reply(rb, ZOK, 0, 0, NULL);
  }
  int d = ev_find(0, EV_DONE, 20);
  ck_assert_int_ge(d, 0);
  ck_assert_int_eq(ev_at(d).rc, ZOK);
  fake_fire(ha, "/p", ZOO_CHANGED_EVENT);
  fake_fire(hb, "/p", ZOO_CHANGED_EVENT);
  sleep_ms(50);
  ck_assert_int_eq(ev_matching(EV_WATCH, 1) + ev_matching(EV_WATCH, 2), 0);
  ck_assert_int_eq(ev_matching(EV_DONE, 20), 1);
  /* Nothing left: remove_all asks every member session anyway, as stock
   * asks its server, and gets ZNOWATCHER from all. */
  ck_assert_int_eq(zkr_aremove_all_watches(z, "/p", ZWATCHTYPE_ANY, 0, done_void, (void *)21), ZOK);
  for (int i = 1; i <= 3; i++) {
    fake_req_t *r = fake_wait(h[i], FK_REMOVE_ALL_WATCHES, "/p");
    ck_assert_ptr_nonnull(r);
    fake_reply(r, ZNOWATCHER, 0, 0, NULL);
  }
  d = ev_find(0, EV_DONE, 21);
  ck_assert_int_ge(d, 0);
  ck_assert_int_eq(ev_at(d).rc, ZNOWATCHER);
}
END_TEST

/* A watch removed on the client only stays registered on its server, as
 * with stock: a later remove_all, which finds nothing here, still asks, and
 * that server's ZOK is the answer (stock's: ZOK from its one server). */
START_TEST(remove_all_after_local_removal_asks_servers) {
  open3();
  fake_zh_t *ha, *hb;
  two_watches(&ha, &hb);
  ck_assert_int_eq(zkr_remove_watches(z, "/p", ZWATCHTYPE_ANY, watcher, (void *)1, 1), ZOK);
  ck_assert_int_eq(zkr_remove_watches(z, "/p", ZWATCHTYPE_ANY, watcher, (void *)2, 1), ZOK);
  ck_assert_int_eq(zkr_aremove_all_watches(z, "/p", ZWATCHTYPE_ANY, 0, done_void, (void *)22), ZOK);
  for (int i = 1; i <= 3; i++) {
    fake_req_t *r = fake_wait(h[i], FK_REMOVE_ALL_WATCHES, "/p");
    ck_assert_ptr_nonnull(r);
    fake_reply(r, h[i] == ha ? ZOK : ZNOWATCHER, 0, 0, NULL);
  }
  int d = ev_find(0, EV_DONE, 22);
  ck_assert_int_ge(d, 0);
  ck_assert_int_eq(ev_at(d).rc, ZOK);
  sleep_ms(50);
  ck_assert_int_eq(ev_matching(EV_DONE, 22), 1);
}
END_TEST

START_TEST(remove_watch_locally) {
  open3();
  fake_zh_t *ha, *hb;
  two_watches(&ha, &hb);
  ck_assert_int_eq(zkr_remove_watches(z, "/p", ZWATCHTYPE_ANY, watcher, (void *)1, 1), ZOK);
  ck_assert_ptr_null(fake_peek(NULL, FK_REMOVE_WATCHES, NULL));
  fake_fire(ha, "/p", ZOO_CHANGED_EVENT);
  if (hb != ha) fake_fire(hb, "/p", ZOO_CHANGED_EVENT);
  ck_assert_int_ge(ev_find(0, EV_WATCH, 2), 0);
  sleep_ms(50);
  ck_assert_int_eq(ev_matching(EV_WATCH, 1), 0);
}
END_TEST

/* A removal whose session goes before answering still completes, once. */
START_TEST(remove_answered_when_its_session_goes) {
  open3();
  fake_zh_t *ha, *hb;
  two_watches(&ha, &hb);
  ck_assert_ptr_ne(ha, h[1]);
  ck_assert_int_eq(
      zkr_aremove_watches(z, "/p", ZWATCHTYPE_DATA, watcher, (void *)1, 0, done_void, (void *)20),
      ZOK);
  ck_assert_ptr_nonnull(fake_wait(ha, FK_REMOVE_WATCHES, "/p"));
  fake_session_event(ha, ZOO_EXPIRED_SESSION_STATE);
  int d = ev_find(0, EV_DONE, 20);
  ck_assert_int_ge(d, 0);
  ck_assert_int_eq(ev_at(d).rc, ZCONNECTIONLOSS);
  sleep_ms(100);
  ck_assert_int_eq(ev_matching(EV_DONE, 20), 1);
}
END_TEST

START_TEST(set_servers_changes_members) {
  open3();
  ck_assert_str_eq(zkr_get_current_server(z), "fake1:2181");
  ck_assert_int_eq(zkr_set_servers(z, "fake1:2181,fake2:2181,fake4:2181"), ZOK);
  fake_zh_t *h4 = fake_handle(4, 0);
  ck_assert_ptr_nonnull(h4);
  uint64_t deadline = now_ms() + 5000;
  while (!fake_handle_closed(h[3]) && now_ms() < deadline) sleep_ms(5);
  ck_assert(fake_handle_closed(h[3])); /* retired, idle: closed */
  zkr_stats_t *s;
  ck_assert_int_eq(zkr_stats(z, &s), ZOK);
  ck_assert_int_eq(s->n_members, 4);
  ck_assert(s->members[2].removed);
  ck_assert(!s->members[3].removed);
  zkr_stats_free(s);
  /* Bad lists and another chroot are refused; nothing changes. */
  ck_assert_int_eq(zkr_set_servers(z, NULL), ZBADARGUMENTS);
  ck_assert_int_ne(zkr_set_servers(z, "fake1:notaport"), ZOK);
  ck_assert_int_eq(zkr_set_servers(z, "fake1:2181/other"), ZBADARGUMENTS);
  ck_assert_str_eq(zkr_get_current_server(z), "fake1:2181");
  struct sockaddr_storage ss;
  socklen_t len = sizeof ss;
  ck_assert_ptr_nonnull(zkr_get_connected_host(z, (struct sockaddr *)&ss, &len));
}
END_TEST

START_TEST(reconfig_goes_to_leader) {
  open3();
  ck_assert_int_eq(zkr_areconfig(z, NULL, NULL, NULL, -1, done_data, (void *)1), ZBADARGUMENTS);
  ck_assert_int_eq(
      zkr_areconfig(z, "server.4=fake4:2888:3888;2181", NULL, NULL, -1, done_data, (void *)1), ZOK);
  fake_req_t *r = fake_wait(h[1], FK_RECONFIG, NULL);
  ck_assert_ptr_nonnull(r);
  fake_reply(r, ZOK, 9, 9, "server.1=...");
  ck_assert_int_ge(ev_find(0, EV_DONE, 1), 0);
}
END_TEST

/* ---- ZOO_READONLY: read-only servers serve reads while no quorum ---- */

START_TEST(readonly_servers_serve_reads) {
  zkr_options_t o;
  opts_default(&o);
  ev_reset();
  fake_install();
  /* No quorum: srvr says read-only everywhere; sessions connect read-only. */
  for (int i = 1; i <= 3; i++) fake_set_role(i, ZKR_ROLE_READ_ONLY, 0x100000005LL);
  ck_assert_int_eq(zkr_init_opts(&z, HOSTS, watcher, 3000, NULL, (void *)100, ZOO_READONLY, &o),
                   ZOK);
  for (int i = 1; i <= 3; i++) ck_assert_ptr_nonnull(h[i] = fake_handle(i, 0));
  fake_session_event(h[2], ZOO_READONLY_STATE);
  wait_state(ZOO_READONLY_STATE);
  int e = ev_find(0, EV_SESSION, 100);
  ck_assert_int_ge(e, 0);
  ck_assert_int_eq(ev_at(e).state, ZOO_READONLY_STATE);
  /* A read goes to the read-only member, without a sync (refused there). */
  ck_assert_int_eq(zkr_aget(z, "/r", 0, done_data, (void *)1), ZOK);
  fake_req_t *g = fake_wait(h[2], FK_GET, "/r");
  ck_assert_ptr_nonnull(g);
  int kinds[8];
  ck_assert_int_eq(fake_log(h[2], kinds, NULL, 8), 1);
  fake_reply(g, ZOK, 4, 4, "v");
  ck_assert_int_ge(ev_find(0, EV_DONE, 1), 0);
  /* A write is refused as a read-only server refuses it. */
  ck_assert_int_eq(zkr_aset(z, "/r", "w", 1, -1, done_stat, (void *)2), ZNOTREADONLY);
  /* The quorum is back: the owner is chosen, the state is CONNECTED. */
  fake_set_role(1, ZKR_ROLE_LEADER, 0x100000006LL);
  fake_set_role(2, ZKR_ROLE_FOLLOWER, 0x100000006LL);
  fake_set_role(3, ZKR_ROLE_FOLLOWER, 0x100000006LL);
  fake_connect(h[1], 0);
  wait_state(ZOO_CONNECTED_STATE);
  ck_assert_int_eq(zkr_aset(z, "/r", "w", 1, -1, done_stat, (void *)2), ZOK);
  ck_assert_ptr_nonnull(fake_wait(h[1], FK_SET, "/r"));
}
END_TEST

/* ---- sync coalescing ---- */

/* Every GET on h must follow, on h, a SYNC that arrived after the read was
 * invoked (invoked[i]: fake_seq_now() before read i; gets[i] its GET). */
static void check_synced_after_invoke(fake_zh_t *hh, fake_req_t **gets, const int *invoked, int n) {
  fake_req_t *log[64];
  int kinds[64];
  int nl = fake_log(hh, kinds, log, 64);
  for (int i = 0; i < n; i++) {
    int last_sync = -1, gi = -1;
    for (int k = 0; k < nl && k < 64; k++) {
      if (log[k] == gets[i]) {
        gi = k;
        break;
      }
      if (kinds[k] == FK_SYNC) last_sync = log[k]->seq;
    }
    ck_assert_int_ge(gi, 0);
    ck_assert_msg(last_sync > invoked[i], "read %d (invoked at seq %d) follows sync seq %d", i,
                  invoked[i], last_sync);
  }
}

/* A handle with coalescing at depth and one follower (fake2; fake3 never
 * answers srvr), so every read goes to fake2; the leader is fake1. */
static void open_one_follower(int depth) {
  zkr_options_t o;
  opts_default(&o);
  o.sync_coalesce = 1;
  o.sync_coalesce_depth = depth;
  ev_reset();
  fake_install();
  fake_set_role(1, ZKR_ROLE_LEADER, 0x100000005LL);
  fake_set_role(2, ZKR_ROLE_FOLLOWER, 0x100000005LL);
  ck_assert_int_eq(zkr_init_opts(&z, HOSTS, watcher, 3000, NULL, (void *)100, 0, &o), ZOK);
  for (int i = 1; i <= 3; i++) ck_assert_ptr_nonnull(h[i] = fake_handle(i, 0));
  wait_leader(0);
  fake_connect(h[1], 0);
  fake_connect(h[2], 0);
  wait_state(ZOO_CONNECTED_STATE);
}

START_TEST(coalesced_reads_share_one_sync) {
  open_one_follower(1);
  int invoked[4];
  fake_req_t *gets[4];
  invoked[0] = fake_seq_now();
  ck_assert_int_eq(zkr_aget(z, "/c0", 0, done_data, (void *)1), ZOK);
  fake_req_t *s1 = fake_wait(h[2], FK_SYNC, NULL);
  ck_assert_ptr_nonnull(s1);
  ck_assert_ptr_nonnull(gets[0] = fake_wait(h[2], FK_GET, "/c0"));
  /* Three more while that sync is in flight: they wait for the next. */
  for (int i = 1; i < 4; i++) {
    char p[8];
    snprintf(p, sizeof p, "/c%d", i);
    invoked[i] = fake_seq_now();
    ck_assert_int_eq(zkr_aget(z, p, 0, done_data, (void *)(intptr_t)(1 + i)), ZOK);
  }
  sleep_ms(50);
  ck_assert_ptr_null(fake_peek(h[2], FK_SYNC, NULL));
  ck_assert_ptr_null(fake_peek(h[2], FK_GET, NULL));
  fake_reply(s1, ZOK, 0, 0, NULL);
  fake_req_t *s2 = fake_wait(h[2], FK_SYNC, NULL);
  ck_assert_ptr_nonnull(s2);
  for (int i = 1; i < 4; i++) {
    char p[8];
    snprintf(p, sizeof p, "/c%d", i);
    ck_assert_ptr_nonnull(gets[i] = fake_wait(h[2], FK_GET, p));
    ck_assert_int_gt(gets[i]->seq, s2->seq);
  }
  check_synced_after_invoke(h[2], gets, invoked, 4);
  /* One sync for the three. */
  ck_assert_ptr_null(fake_peek(h[2], FK_SYNC, NULL));
  for (int i = 0; i < 4; i++) fake_reply(gets[i], ZOK, 5, 5, "v");
  for (int i = 1; i <= 4; i++) ck_assert_int_ge(ev_find(0, EV_DONE, i), 0);
  fake_reply(s2, ZOK, 0, 0, NULL);
  /* No sync in flight now: the next read sends its own, at once. */
  invoked[0] = fake_seq_now();
  ck_assert_int_eq(zkr_aget(z, "/c9", 0, done_data, (void *)9), ZOK);
  ck_assert_ptr_nonnull(fake_wait(h[2], FK_SYNC, NULL));
  ck_assert_ptr_nonnull(gets[0] = fake_wait(h[2], FK_GET, "/c9"));
  check_synced_after_invoke(h[2], gets, invoked, 1);
  zkr_stats_t *st;
  ck_assert_int_eq(zkr_stats(z, &st), ZOK);
  ck_assert_uint_eq(st->members[1].syncs, 3);
  ck_assert_uint_eq(st->members[1].reads, 5);
  zkr_stats_free(st);
}
END_TEST

/* Depth 2: a read that finds one sync in flight sends its own at once;
 * only reads that find two wait, and the first completion sends them
 * behind one new sync. */
START_TEST(coalesced_reads_two_syncs_in_flight) {
  open_one_follower(2);
  int invoked[5];
  fake_req_t *gets[5], *syncs[3];
  char p[8];
  for (int i = 0; i < 2; i++) {
    snprintf(p, sizeof p, "/d%d", i);
    invoked[i] = fake_seq_now();
    ck_assert_int_eq(zkr_aget(z, p, 0, done_data, (void *)(intptr_t)(1 + i)), ZOK);
    ck_assert_ptr_nonnull(syncs[i] = fake_wait(h[2], FK_SYNC, NULL));
    ck_assert_ptr_nonnull(gets[i] = fake_wait(h[2], FK_GET, p));
  }
  /* Two syncs in flight: the next three wait. */
  for (int i = 2; i < 5; i++) {
    snprintf(p, sizeof p, "/d%d", i);
    invoked[i] = fake_seq_now();
    ck_assert_int_eq(zkr_aget(z, p, 0, done_data, (void *)(intptr_t)(1 + i)), ZOK);
  }
  sleep_ms(50);
  ck_assert_ptr_null(fake_peek(h[2], FK_SYNC, NULL));
  ck_assert_ptr_null(fake_peek(h[2], FK_GET, NULL));
  /* The older sync completes: one new sync, then the three. */
  fake_reply(syncs[0], ZOK, 0, 0, NULL);
  ck_assert_ptr_nonnull(syncs[2] = fake_wait(h[2], FK_SYNC, NULL));
  for (int i = 2; i < 5; i++) {
    snprintf(p, sizeof p, "/d%d", i);
    ck_assert_ptr_nonnull(gets[i] = fake_wait(h[2], FK_GET, p));
    ck_assert_int_gt(gets[i]->seq, syncs[2]->seq);
  }
  check_synced_after_invoke(h[2], gets, invoked, 5);
  ck_assert_ptr_null(fake_peek(h[2], FK_SYNC, NULL));
  for (int i = 0; i < 5; i++) fake_reply(gets[i], ZOK, 5, 5, "v");
  for (int i = 1; i <= 5; i++) ck_assert_int_ge(ev_find(0, EV_DONE, i), 0);
  fake_reply(syncs[1], ZOK, 0, 0, NULL);
  fake_reply(syncs[2], ZOK, 0, 0, NULL);
  zkr_stats_t *st;
  ck_assert_int_eq(zkr_stats(z, &st), ZOK);
  ck_assert_uint_eq(st->members[1].syncs, 3);
  ck_assert_uint_eq(st->members[1].reads, 5);
  ck_assert_uint_eq(st->members[1].coalesced, 3);
  zkr_stats_free(st);
}
END_TEST

/* Reads waiting for a sync whose session goes complete once each. */
START_TEST(coalesced_reads_complete_when_session_goes) {
  open_one_follower(1);
  for (int i = 1; i <= 3; i++) {
    char p[8];
    snprintf(p, sizeof p, "/q%d", i);
    ck_assert_int_eq(zkr_aget(z, p, 0, done_data, (void *)(intptr_t)i), ZOK);
  }
  ck_assert_ptr_nonnull(fake_wait(h[2], FK_GET, "/q1"));
  /* The carrier expires: its sync and first read are dropped with the
   * zhandle, and the two waiting reads must not be forgotten. */
  fake_session_event(h[2], ZOO_EXPIRED_SESSION_STATE);
  for (int i = 1; i <= 3; i++) {
    int d = ev_find(0, EV_DONE, i);
    ck_assert_int_ge(d, 0);
    ck_assert_int_eq(ev_at(d).rc, ZCONNECTIONLOSS);
  }
  sleep_ms(100);
  for (int i = 1; i <= 3; i++) ck_assert_int_eq(ev_matching(EV_DONE, i), 1);
}
END_TEST

/* ---- consistency session: reads stick, sync on a switch or a write ---- */

START_TEST(session_mode_syncs_only_when_needed) {
  zkr_options_t o;
  opts_default(&o);
  o.consistency = ZKR_CONSISTENCY_SESSION;
  ev_reset();
  fake_install();
  fake_set_role(1, ZKR_ROLE_LEADER, 0x100000005LL);
  fake_set_role(2, ZKR_ROLE_FOLLOWER, 0x100000005LL);
  fake_set_role(3, ZKR_ROLE_FOLLOWER, 0x100000005LL);
  ck_assert_int_eq(zkr_init_opts(&z, HOSTS, watcher, 3000, NULL, (void *)100, 0, &o), ZOK);
  for (int i = 1; i <= 3; i++) ck_assert_ptr_nonnull(h[i] = fake_handle(i, 0));
  wait_leader(0);
  for (int i = 1; i <= 3; i++) fake_connect(h[i], 0);
  wait_state(ZOO_CONNECTED_STATE);
  /* First read: a sync (never synced); the next ones on the same member:
   * none. */
  fake_zh_t *rh = NULL;
  for (int i = 0; i < 4; i++) {
    ck_assert_int_eq(zkr_aget(z, "/s", 0, done_data, (void *)(intptr_t)(10 + i)), ZOK);
    fake_req_t *g = fake_wait(NULL, FK_GET, "/s");
    ck_assert_ptr_nonnull(g);
    if (!rh) rh = g->h;
    ck_assert_ptr_eq(g->h, rh);
    fake_reply(g, ZOK, 5, 5, "v");
  }
  int kinds[16];
  int n = fake_log(rh, kinds, NULL, 16), syncs = 0;
  for (int i = 0; i < n; i++) syncs += kinds[i] == FK_SYNC;
  ck_assert_int_eq(syncs, 1);
  /* A write of the handle completes: the next read syncs again. */
  ck_assert_int_eq(zkr_aset(z, "/s", "w", 1, -1, done_stat, (void *)20), ZOK);
  fake_req_t *w = fake_wait(h[1], FK_SET, "/s");
  fake_reply(w, ZOK, 6, 6, NULL);
  ck_assert_int_ge(ev_find(0, EV_DONE, 20), 0);
  ck_assert_int_eq(zkr_aget(z, "/s", 0, done_data, (void *)21), ZOK);
  fake_req_t *g = fake_wait(rh, FK_GET, "/s");
  ck_assert_ptr_nonnull(g);
  n = fake_log(rh, kinds, NULL, 16);
  ck_assert_int_eq(kinds[n - 2], FK_SYNC);
  fake_reply(g, ZOK, 6, 6, "w");
  /* Its member leaves: the reads move, with a sync. */
  fake_zh_t *other = rh == h[2] ? h[3] : h[2];
  fake_session_event(rh, ZOO_CONNECTING_STATE);
  ck_assert_int_eq(zkr_aget(z, "/s", 0, done_data, (void *)22), ZOK);
  g = fake_wait(other, FK_GET, "/s");
  ck_assert_ptr_nonnull(g);
  n = fake_log(other, kinds, NULL, 16);
  ck_assert_int_eq(kinds[n - 2], FK_SYNC);
  fake_reply(g, ZOK, 6, 6, "w");
  ck_assert_int_ge(ev_find(0, EV_DONE, 22), 0);
}
END_TEST

/* ---- read_members: a cap on the follower sessions ---- */

static int parked_of(int member) {
  zkr_stats_t *st;
  ck_assert_int_eq(zkr_stats(z, &st), ZOK);
  int p = st->members[member].parked;
  zkr_stats_free(st);
  return p;
}

START_TEST(read_members_cap_parks_and_swaps) {
  zkr_options_t o;
  opts_default(&o);
  o.read_members = 1;
  open3_opts(&o, NULL);
  wait_state(ZOO_CONNECTED_STATE);
  /* Leader (and owner) fake1, plus one follower: the other is parked. */
  uint64_t deadline = now_ms() + 5000;
  while (!fake_handle_closed(h[2]) && !fake_handle_closed(h[3]) && now_ms() < deadline) sleep_ms(5);
  int parked = fake_handle_closed(h[2]) ? 2 : fake_handle_closed(h[3]) ? 3 : 0;
  ck_assert_int_ne(parked, 0);
  int kept = parked == 2 ? 3 : 2;
  ck_assert(parked_of(parked - 1));
  ck_assert(!parked_of(kept - 1));
  ck_assert(!fake_handle_closed(h[1]));
  /* Reads go to the kept follower. */
  ck_assert_int_eq(zkr_aget(z, "/m", 0, done_data, (void *)1), ZOK);
  fake_req_t *g = fake_wait(NULL, FK_GET, "/m");
  ck_assert_ptr_eq(g->h, h[kept]);
  fake_reply(g, ZOK, 1, 1, "v");
  /* The kept follower's session drops: the parked member is opened again,
   * and once it serves, the dropped one is parked. */
  fake_session_event(h[kept], ZOO_CONNECTING_STATE);
  fake_zh_t *again = fake_handle(parked, 1);
  ck_assert_ptr_nonnull(again);
  fake_connect(again, 0);
  deadline = now_ms() + 5000;
  while (!fake_handle_closed(h[kept]) && now_ms() < deadline) sleep_ms(5);
  ck_assert(fake_handle_closed(h[kept]));
  ck_assert(parked_of(kept - 1));
  ck_assert(!parked_of(parked - 1));
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("session");
  TCase *tc = tcase_create("fake");
  tcase_set_timeout(tc, 30);
  tcase_add_checked_fixture(tc, NULL, teardown);
  tcase_add_test(tc, ordered_read_after_switch_is_synced);
  tcase_add_test(tc, ordered_read_same_session_not_synced);
  tcase_add_test(tc, parked_failure_completes_before_later_writes);
  tcase_add_test(tc, refused_read_never_completes);
  tcase_add_test(tc, async_waits_for_earlier_operations);
  tcase_add_test(tc, session_events_reach_path_watchers);
  tcase_add_test(tc, ephemerals_go_to_owner_ttl_to_leader);
  tcase_add_test(tc, owner_rescue_keeps_client_id);
  tcase_add_test(tc, owner_rescued_soon_when_its_server_is_down);
  tcase_add_test(tc, owner_stays_while_rescue_down_ms_runs);
  tcase_add_test(tc, owner_rescue_aborted_when_reconnected);
  tcase_add_test(tc, owner_rescue_aborted_when_associating);
  tcase_add_test(tc, resume_of_unknown_session_expires);
  tcase_add_test(tc, carrier_expiry_silent_watch_rearmed);
  tcase_add_test(tc, rearm_unchanged_then_fires_once);
  tcase_add_test(tc, owner_expiry_is_the_applications);
  tcase_add_test(tc, carrier_connection_loss_dips_state);
  tcase_add_test(tc, carrier_auth_failed_is_the_applications);
  tcase_add_test(tc, blocking_call_from_watcher);
  tcase_add_test(tc, runtime_lock_in_callbacks_no_deadlock);
  tcase_add_test(tc, add_auth_reports_owner_answer);
  tcase_add_test(tc, add_auth_before_any_session_waits_for_owner);
  tcase_add_test(tc, remove_watch_on_its_member);
  tcase_add_test(tc, remove_all_watches_everywhere);
  tcase_add_test(tc, remove_all_after_local_removal_asks_servers);
  tcase_add_test(tc, remove_watch_locally);
  tcase_add_test(tc, remove_answered_when_its_session_goes);
  tcase_add_test(tc, set_servers_changes_members);
  tcase_add_test(tc, reconfig_goes_to_leader);
  tcase_add_test(tc, readonly_servers_serve_reads);
  tcase_add_test(tc, coalesced_reads_share_one_sync);
  tcase_add_test(tc, coalesced_reads_two_syncs_in_flight);
  tcase_add_test(tc, coalesced_reads_complete_when_session_goes);
  tcase_add_test(tc, session_mode_syncs_only_when_needed);
  tcase_add_test(tc, read_members_cap_parks_and_swaps);
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
