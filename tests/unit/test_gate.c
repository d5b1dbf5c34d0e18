/* Server-less unit tests of the write gate and the handle's order of
 * operations (DESIGN.md section 3): one write session at a time, writes
 * never overtaken, zkr_async a barrier that leaves the gate as it found
 * it, completions in issue order, and the fence while the owner session
 * is away.  Driven through the function table by the fake ZooKeeper
 * (tests/harness/fakefix.h). */
#include <check.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fakefix.h"

/* The handle open on three members; fake2 leads from now on, and the
 * owner stays on fake1, a follower that answers. */
static void open_fake2_leads(void) {
  open3();
  fake_set_role(1, ZKR_ROLE_FOLLOWER, 0x200000001LL);
  fake_set_role(2, ZKR_ROLE_LEADER, 0x200000001LL);
  fake_set_role(3, ZKR_ROLE_FOLLOWER, 0x200000001LL);
  wait_leader(1);
}

/* fake2 leads from now on and fake1's session drops. */
static void leader_moves_to_fake2(void) {
  fake_set_role(1, ZKR_ROLE_UNREACHABLE, 0);
  fake_set_role(2, ZKR_ROLE_LEADER, 0x200000001LL);
  fake_set_role(3, ZKR_ROLE_FOLLOWER, 0x200000001LL);
  fake_session_event(h[1], ZOO_CONNECTING_STATE);
  wait_leader(1);
}

/* ---- a barrier leaves the gate as it found it ---- */

/* zkr_async on a path with a write of the handle in flight goes through
 * the write gate behind the write (cli_mt's `create /a` then `sync /a`).
 * Its completion must release the gate like any other operation's: after
 * the next leader change, writes reach the new leader - once the owner
 * session is back (writes_fenced_while_owner_away) - instead of parking
 * until the session timeout fails them. */
START_TEST(barrier_releases_write_gate) {
  open3();
  ck_assert_int_eq(zkr_acreate(z, "/a", "", 0, &ZOO_OPEN_ACL_UNSAFE, 0, done_string, (void *)1),
                   ZOK);
  ck_assert_int_eq(zkr_async(z, "/a", done_string, (void *)2), ZOK);
  fake_req_t *c = fake_wait(h[1], FK_CREATE, "/a");
  ck_assert_ptr_nonnull(c);
  fake_req_t *s = fake_wait(NULL, FK_SYNC, "/a");
  ck_assert_ptr_nonnull(s);
  fake_reply(c, ZOK, 0x100000006LL, 0, NULL);
  fake_reply(s, ZOK, 0, 0, NULL);
  int a = ev_find(0, EV_DONE, 1), b = ev_find(0, EV_DONE, 2);
  ck_assert_int_ge(a, 0);
  ck_assert_int_gt(b, a);
  leader_moves_to_fake2();
  ck_assert_int_eq(zkr_aset(z, "/b", "1", 1, -1, done_stat, (void *)3), ZOK);
  /* The owner (fake1) reconnects, a follower of the new epoch. */
  fake_set_role(1, ZKR_ROLE_FOLLOWER, 0x200000001LL);
  fake_session_event(h[1], ZOO_CONNECTED_STATE);
  fake_req_t *w = fake_wait(h[2], FK_SET, "/b");
  ck_assert_msg(w != NULL, "the write after the barrier never reached the new leader");
  fake_reply(w, ZOK, 0x200000002LL, 0, NULL);
  int d = ev_find(0, EV_DONE, 3);
  ck_assert_int_ge(d, 0);
  ck_assert_int_eq(ev_at(d).rc, ZOK);
}
END_TEST

/* The same through an ephemeral create and a sync of its parent (an
 * election recipe), then an ephemeral create while the owner is not the
 * leader's session: the gate must switch to the owner. */
START_TEST(barrier_after_ephemeral_releases_gate) {
  open3();
  ck_assert_int_eq(zkr_acreate(z, "/election/n-", "", 0, &ZOO_OPEN_ACL_UNSAFE,
                               ZOO_EPHEMERAL_SEQUENTIAL, done_string, (void *)1),
                   ZOK);
  ck_assert_int_eq(zkr_async(z, "/election", done_string, (void *)2), ZOK);
  fake_req_t *c = fake_wait(h[1], FK_CREATE, "/election/n-");
  ck_assert_ptr_nonnull(c);
  fake_req_t *s = fake_wait(NULL, FK_SYNC, "/election");
  ck_assert_ptr_nonnull(s);
  fake_reply(c, ZOK, 0x100000006LL, 0, NULL);
  fake_reply(s, ZOK, 0, 0, NULL);
  ck_assert_int_ge(ev_find(0, EV_DONE, 2), 0);
  /* fake2 leads; the owner stays on fake1, which answers. */
  fake_set_role(1, ZKR_ROLE_FOLLOWER, 0x200000001LL);
  fake_set_role(2, ZKR_ROLE_LEADER, 0x200000001LL);
  wait_leader(1);
  ck_assert_int_eq(zkr_aset(z, "/x", "1", 1, -1, done_stat, (void *)3), ZOK);
  fake_req_t *w = fake_wait(h[2], FK_SET, "/x");
  ck_assert_msg(w != NULL, "a write after the barrier never reached the new leader");
  fake_reply(w, ZOK, 0x200000002LL, 0, NULL);
  ck_assert_int_ge(ev_find(0, EV_DONE, 3), 0);
  ck_assert_int_eq(zkr_acreate(z, "/election/n-", "", 0, &ZOO_OPEN_ACL_UNSAFE,
                               ZOO_EPHEMERAL_SEQUENTIAL, done_string, (void *)4),
                   ZOK);
  c = fake_wait(h[1], FK_CREATE, "/election/n-");
  ck_assert_msg(c != NULL, "the ephemeral create never reached the owner");
  fake_reply(c, ZOK, 0x200000003LL, 0, NULL);
  ck_assert_int_ge(ev_find(0, EV_DONE, 4), 0);
}
END_TEST

/* ---- a write whose outcome is unknown is never overtaken ---- */

/* fake2 leads (a carrier: the owner stays on fake1, connected).  W1 goes
 * to fake2's session, which drops with W1 unanswered: W1's outcome is
 * unknown (a late copy may still be applied).  fake3 leads now; fake2
 * still answers srvr (no reason to move its session).  W2 is issued. */
static void unknown_outcome_then_new_leader(void) {
  open3();
  fake_set_role(1, ZKR_ROLE_FOLLOWER, 0x200000001LL);
  fake_set_role(2, ZKR_ROLE_LEADER, 0x200000001LL);
  wait_leader(1);
  ck_assert_int_eq(zkr_aset(z, "/k", "1", 1, -1, done_stat, (void *)1), ZOK);
  fake_req_t *w1 = fake_wait(h[2], FK_SET, "/k");
  ck_assert_ptr_nonnull(w1);
  fake_set_role(1, ZKR_ROLE_FOLLOWER, 0x300000001LL);
  fake_set_role(2, ZKR_ROLE_FOLLOWER, 0x300000001LL);
  fake_set_role(3, ZKR_ROLE_LEADER, 0x300000001LL);
  fake_session_event(h[2], ZOO_CONNECTING_STATE);
  fake_reply(w1, ZCONNECTIONLOSS, 0, 0, NULL);
  int d = ev_find(0, EV_DONE, 1);
  ck_assert_int_ge(d, 0);
  ck_assert_int_eq(ev_at(d).rc, ZCONNECTIONLOSS);
  wait_leader(2);
  ck_assert_int_eq(zkr_aset(z, "/k", "2", 1, -1, done_stat, (void *)2), ZOK);
}

/* The write session moves only once the session of the unknown outcome
 * reconnected: from then on its server refuses the old connection's late
 * copy. */
START_TEST(unknown_outcome_write_not_overtaken_until_reconnect) {
  unknown_outcome_then_new_leader();
  sleep_ms(300);
  ck_assert_msg(fake_peek(h[3], FK_SET, "/k") == NULL,
                "W2 went to the new leader while W1's session could still apply W1");
  fake_session_event(h[2], ZOO_CONNECTED_STATE);
  fake_req_t *w2 = fake_wait(h[3], FK_SET, "/k");
  ck_assert_ptr_nonnull(w2);
  fake_reply(w2, ZOK, 0x300000002LL, 0, NULL);
  ck_assert_int_ge(ev_find(0, EV_DONE, 2), 0);
}
END_TEST

/* ... or once it expired: nothing of it can be applied any more. */
START_TEST(unknown_outcome_write_not_overtaken_until_expiry) {
  unknown_outcome_then_new_leader();
  sleep_ms(300);
  ck_assert_ptr_null(fake_peek(h[3], FK_SET, "/k"));
  fake_session_event(h[2], ZOO_EXPIRED_SESSION_STATE);
  fake_req_t *w2 = fake_wait(h[3], FK_SET, "/k");
  ck_assert_ptr_nonnull(w2);
  fake_reply(w2, ZOK, 0x300000002LL, 0, NULL);
  ck_assert_int_ge(ev_find(0, EV_DONE, 2), 0);
}
END_TEST

/* ... or once the servers must have expired it: its timeout (rounded up
 * to their tick, at most half of it) since it was lost, even when its
 * zhandle (whose one server stays away) cannot hear it.  W2, parked for
 * the session timeout meanwhile, fails as a parked operation fails; W3,
 * issued after the fence fell, goes to the new leader. */
START_TEST(unknown_outcome_write_fence_ends_with_session_timeout) {
  unknown_outcome_then_new_leader();
  uint64_t t0 = now_ms();
  int d = ev_find(0, EV_DONE, 2);
  while (d < 0 && now_ms() - t0 < 8000) d = ev_find(0, EV_DONE, 2);
  ck_assert_int_ge(d, 0);
  ck_assert_int_eq(ev_at(d).rc, ZCONNECTIONLOSS);
  ck_assert_ptr_null(fake_peek(h[3], FK_SET, "/k"));
  while (now_ms() - t0 < 4600) sleep_ms(20);
  ck_assert_int_eq(zkr_aset(z, "/k", "3", 1, -1, done_stat, (void *)3), ZOK);
  fake_req_t *w3 = fake_wait(h[3], FK_SET, "/k");
  ck_assert_ptr_nonnull(w3);
  fake_reply(w3, ZOK, 0x300000002LL, 0, NULL);
  d = ev_find(0, EV_DONE, 3);
  ck_assert_int_ge(d, 0);
  ck_assert_int_eq(ev_at(d).rc, ZOK);
}
END_TEST

/* The owner is the leader's session here: W1 is lost on it, its server
 * goes silent, and the owner's rescue re-attaches the session to fake2.
 * The fence follows it: once the re-attached zhandle connected, the old
 * connection's late requests are refused, and W2 goes to the new leader
 * at once. */
START_TEST(unknown_outcome_fence_falls_when_owner_rescued) {
  zkr_options_t o;
  opts_default(&o);
  o.rescue_down_ms = 100;
  open3_opts(&o, NULL);
  wait_state(ZOO_CONNECTED_STATE);
  ck_assert_int_eq(zkr_aset(z, "/k", "1", 1, -1, done_stat, (void *)1), ZOK);
  fake_req_t *w1 = fake_wait(h[1], FK_SET, "/k");
  ck_assert_ptr_nonnull(w1);
  fake_set_role(1, 0, 0); /* silent */
  fake_set_role(2, ZKR_ROLE_LEADER, 0x200000001LL);
  fake_set_role(3, ZKR_ROLE_FOLLOWER, 0x200000001LL);
  fake_session_event(h[1], ZOO_CONNECTING_STATE);
  fake_reply(w1, ZCONNECTIONLOSS, 0, 0, NULL);
  ck_assert_int_ge(ev_find(0, EV_DONE, 1), 0);
  wait_leader(1);
  ck_assert_int_eq(zkr_aset(z, "/k", "2", 1, -1, done_stat, (void *)2), ZOK);
  fake_zh_t *r = fake_handle(2, 1);
  ck_assert_ptr_nonnull(r);
  ck_assert_int_eq(fake_handle_resumed(r), fake_session_id(h[1]));
  sleep_ms(100);
  ck_assert_ptr_null(fake_peek(h[2], FK_SET, "/k"));
  fake_connect(r, 0);
  fake_req_t *w2 = fake_wait(h[2], FK_SET, "/k");
  ck_assert_ptr_nonnull(w2);
  fake_reply(w2, ZOK, 0x200000002LL, 0, NULL);
  ck_assert_int_ge(ev_find(0, EV_DONE, 2), 0);
}
END_TEST

/* fake2 leads; a set of /k (tag 1) on its session is lost
 * (ZCONNECTIONLOSS: its outcome unknown) as fake2 goes silent, and fake3
 * leads from then on.  Returns fake2's session id (the fenced carrier's). */
static int64_t carrier_write_lost_as_its_server_goes_silent(void) {
  fake_set_role(1, ZKR_ROLE_FOLLOWER, 0x200000001LL);
  fake_set_role(2, ZKR_ROLE_LEADER, 0x200000001LL);
  wait_leader(1);
  ck_assert_int_eq(zkr_aset(z, "/k", "1", 1, -1, done_stat, (void *)1), ZOK);
  fake_req_t *w1 = fake_wait(h[2], FK_SET, "/k");
  ck_assert_ptr_nonnull(w1);
  int64_t sid = fake_session_id(h[2]);
  fake_set_role(2, 0, 0); /* silent */
  fake_set_role(3, ZKR_ROLE_LEADER, 0x300000001LL);
  fake_set_role(1, ZKR_ROLE_FOLLOWER, 0x300000001LL);
  fake_session_event(h[2], ZOO_CONNECTING_STATE);
  fake_reply(w1, ZCONNECTIONLOSS, 0, 0, NULL);
  ck_assert_int_ge(ev_find(0, EV_DONE, 1), 0);
  wait_leader(2);
  return sid;
}

/* The mover: a zhandle on fake3 resuming session sid; NULL if none came
 * within 5 s. */
static fake_zh_t *mover_of(int64_t sid) {
  uint64_t deadline = now_ms() + 5000;
  for (;;) {
    for (int k = 1; k < fake_handle_count(3); k++) {
      fake_zh_t *c = fake_handle(3, k);
      if (c && fake_handle_resumed(c) == sid) return c;
    }
    if (now_ms() >= deadline) return NULL;
    sleep_ms(5);
  }
}

/* W1 is lost on a carrier's session (fake2 leads, the owner stays on
 * fake1), and fake2 goes silent: its zhandle cannot reconnect.  The
 * session is resumed on a live server to fence it (once that zhandle
 * connected, the old connection's late requests are refused), then that
 * zhandle is closed; W2 goes to fake3, the new leader. */
START_TEST(unknown_outcome_fence_falls_when_carrier_session_moved) {
  zkr_options_t o;
  opts_default(&o);
  o.rescue_down_ms = 100;
  open3_opts(&o, NULL);
  wait_state(ZOO_CONNECTED_STATE);
  int64_t sid = carrier_write_lost_as_its_server_goes_silent();
  ck_assert_int_eq(zkr_aset(z, "/k", "2", 1, -1, done_stat, (void *)2), ZOK);
  /* The mover: a zhandle on fake3 (the new leader) resuming fake2's
   * session. */
  fake_zh_t *mv = mover_of(sid);
  ck_assert_ptr_nonnull(mv);
  ck_assert_ptr_null(fake_peek(h[3], FK_SET, "/k"));
  fake_connect(mv, 0);
  fake_req_t *w2 = fake_wait(h[3], FK_SET, "/k");
  ck_assert_ptr_nonnull(w2);
  fake_reply(w2, ZOK, 0x300000002LL, 0, NULL);
  ck_assert_int_ge(ev_find(0, EV_DONE, 2), 0);
  /* Connected once, it is closed (ending the carrier's old session). */
  uint64_t deadline = now_ms() + 5000;
  while (!fake_handle_closed(mv) && now_ms() < deadline) sleep_ms(5);
  ck_assert(fake_handle_closed(mv));
  ck_assert_int_eq(fake_handle_state_at_close(mv), ZOO_CONNECTED_STATE);
}
END_TEST

/* The same, with a watch on the carrier's session: closing the connected
 * mover ends that session at the servers, and with it the watch.  It is
 * re-armed on another member at once, not when the carrier's zhandle
 * learns of the end - a change meanwhile would be lost.  (The simulator:
 * tests/sim/zkroute-sim --seed 6519 --mode routed, an exists watch that
 * never fired for a creation.) */
START_TEST(carrier_watches_rearmed_when_its_moved_session_is_closed) {
  zkr_options_t o;
  opts_default(&o);
  o.rescue_down_ms = 100;
  open3_opts(&o, NULL);
  wait_state(ZOO_CONNECTED_STATE);
  /* An exists watch on fake2's session (reads rotate over the followers). */
  char path[16] = "";
  for (int i = 0; i < 6 && !path[0]; i++) {
    char p[16];
    snprintf(p, sizeof p, "/w%d", i);
    ck_assert_int_eq(zkr_awexists(z, p, watcher, (void *)9, done_stat, (void *)(intptr_t)(50 + i)),
                     ZOK);
    fake_req_t *r = fake_wait(NULL, FK_EXISTS, p);
    ck_assert_ptr_nonnull(r);
    fake_reply(r, ZNONODE, 0, 0, NULL);
    ck_assert_int_ge(ev_find(0, EV_DONE, 50 + i), 0);
    if (r->h == h[2]) snprintf(path, sizeof path, "%s", p);
    else ck_assert_int_eq(zkr_remove_watches(z, p, ZWATCHTYPE_ANY, watcher, (void *)9, 1), ZOK);
  }
  ck_assert_msg(path[0], "the scenario changed: no exists watch went to fake2");
  int64_t sid = carrier_write_lost_as_its_server_goes_silent();
  fake_zh_t *mv = mover_of(sid);
  ck_assert_ptr_nonnull(mv);
  fake_connect(mv, 0);
  uint64_t deadline = now_ms() + 5000;
  while (!fake_handle_closed(mv) && now_ms() < deadline) sleep_ms(5);
  ck_assert(fake_handle_closed(mv));
  ck_assert_int_eq(fake_handle_state_at_close(mv), ZOO_CONNECTED_STATE);
  /* The session is over: the watch is set again elsewhere, at once. */
  fake_req_t *re = fake_wait(NULL, FK_EXISTS, path);
  ck_assert_msg(re != NULL, "the watch of the closed session was not set again");
  ck_assert_ptr_ne(re->h, h[2]);
  fake_reply(re, ZNONODE, 0, 0, NULL);
  sleep_ms(50);
  ck_assert_int_eq(fake_fire(re->h, path, ZOO_CREATED_EVENT), 1);
  int e = ev_find(0, EV_WATCH, 9);
  ck_assert_int_ge(e, 0);
  ck_assert_int_eq(ev_at(e).type, ZOO_CREATED_EVENT);
}
END_TEST

/* ---- writes are fenced while the application's session may be gone ---- */

/* fake2 leads; a set of /k (tag 1) goes to the leader's session while the
 * owner (fake1) is connected, and is left unanswered; then the owner's
 * session drops, at *t0.  Returns the set's request. */
static fake_req_t *set_then_owner_away(uint64_t *t0) {
  open_fake2_leads();
  ck_assert_int_eq(zkr_aset(z, "/k", "1", 1, -1, done_stat, (void *)1), ZOK);
  fake_req_t *w = fake_wait(h[2], FK_SET, "/k");
  ck_assert_ptr_nonnull(w);
  *t0 = now_ms();
  fake_session_event(h[1], ZOO_CONNECTING_STATE);
  return w;
}

/* The owner's server stays reachable to srvr (no rescue) but the owner's
 * session is disconnected; fake2 leads.  The session may already be over
 * at the servers (a server closes an expired session's connection), so a
 * write waits, as a stock session's waits for its reconnect: it goes once
 * the owner is back.  After two thirds of the session timeout (3000 ms
 * here) a stock client gives the connection up: a write still waiting,
 * and any later one, fails with ZCONNECTIONLOSS, never sent.  Reads go on.
 * (The simulator: --writes-after-end, seed 39 - a write acknowledged after
 * the owner's session had expired, issued 46 ms after its loss.) */
START_TEST(writes_fenced_while_owner_away) {
  uint64_t t0;
  fake_req_t *w = set_then_owner_away(&t0);
  fake_reply(w, ZOK, 0x200000002LL, 0, NULL);
  ck_assert_int_ge(ev_find(0, EV_DONE, 1), 0);
  /* Issued while the owner is away: it waits. */
  ck_assert_int_eq(zkr_aset(z, "/k", "2", 1, -1, done_stat, (void *)2), ZOK);
  sleep_ms(200);
  ck_assert_msg(fake_peek(h[2], FK_SET, "/k") == NULL, "a write went out while the owner was away");
  ck_assert_int_eq(ev_matching(EV_DONE, 2), 0);
  /* The owner is back (its session alive): the write goes. */
  fake_session_event(h[1], ZOO_CONNECTED_STATE);
  w = fake_wait(h[2], FK_SET, "/k");
  ck_assert_ptr_nonnull(w);
  fake_reply(w, ZOK, 0x200000003LL, 0, NULL);
  int d = ev_find(0, EV_DONE, 2);
  ck_assert_int_ge(d, 0);
  ck_assert_int_eq(ev_at(d).rc, ZOK);
  /* Away again: a write waits, and fails once two thirds of the timeout
   * passed; a later one fails at once. */
  t0 = now_ms();
  fake_session_event(h[1], ZOO_CONNECTING_STATE);
  ck_assert_int_eq(zkr_aset(z, "/k", "3", 1, -1, done_stat, (void *)3), ZOK);
  d = -1;
  while (d < 0 && now_ms() - t0 < 5000) {
    sleep_ms(20);
    d = ev_find(0, EV_DONE, 3);
  }
  ck_assert_int_ge(d, 0);
  ck_assert_int_eq(ev_at(d).rc, ZCONNECTIONLOSS);
  ck_assert_uint_ge(now_ms() - t0, 1900);
  ck_assert_int_eq(zkr_aset(z, "/k", "4", 1, -1, done_stat, (void *)4), ZOK);
  d = ev_find(0, EV_DONE, 4);
  ck_assert_int_ge(d, 0);
  ck_assert_int_eq(ev_at(d).rc, ZCONNECTIONLOSS);
  ck_assert_msg(fake_peek(h[2], FK_SET, "/k") == NULL, "a write went out while the owner was away");
  /* Reads still work. */
  ck_assert_int_eq(zkr_aget(z, "/k", 0, done_data, (void *)5), ZOK);
  fake_req_t *g = fake_wait(NULL, FK_GET, "/k");
  ck_assert_ptr_nonnull(g);
  fake_reply(g, ZOK, 0x200000003LL, 0, "2");
  ck_assert_int_ge(ev_find(0, EV_DONE, 5), 0);
  /* The owner is back: writes go again. */
  fake_session_event(h[1], ZOO_CONNECTED_STATE);
  wait_state(ZOO_CONNECTED_STATE);
  ck_assert_int_eq(zkr_aset(z, "/k", "6", 1, -1, done_stat, (void *)6), ZOK);
  w = fake_wait(h[2], FK_SET, "/k");
  ck_assert_ptr_nonnull(w);
  fake_reply(w, ZOK, 0x200000004LL, 0, NULL);
  d = ev_find(0, EV_DONE, 6);
  ck_assert_int_ge(d, 0);
  ck_assert_int_eq(ev_at(d).rc, ZOK);
}
END_TEST

/* ---- failures of parked operations keep their place ---- */

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

/* A parked write never completes before a gated write issued before it,
 * still in flight: stock completes a session's requests in issue order,
 * failures too.  Two ways a write could fail at once: the handle closes,
 * and the fence of writes while the owner is away. */

/* The owner on fake1, fake2 leads.  An ephemeral create goes to the
 * owner's session and stays unanswered; a set, for the leader's session,
 * parks behind it (the gate drains one session before the next).
 * Simulator seed 79 (routed): the set's ZCLOSING came first. */
static void ephemeral_in_flight_set_parked(void) {
  open_fake2_leads();
  ck_assert_int_eq(zkr_acreate(z, "/e/n-", "", 0, &ZOO_OPEN_ACL_UNSAFE, ZOO_EPHEMERAL_SEQUENTIAL,
                               done_string, (void *)1),
                   ZOK);
  ck_assert_ptr_nonnull(fake_wait(h[1], FK_CREATE, "/e/n-"));
  ck_assert_int_eq(zkr_aset(z, "/k", "1", 1, -1, done_stat, (void *)2), ZOK);
  sleep_ms(50);
  ck_assert_msg(fake_peek(h[2], FK_SET, "/k") == NULL, "the set did not wait for the create");
}

START_TEST(parked_write_fails_after_earlier_in_flight_at_close) {
  ephemeral_in_flight_set_parked();
  zkr_t *zz = z;
  z = NULL;
  zkr_close(zz);
  int a = ev_find(0, EV_DONE, 1), b = ev_find(0, EV_DONE, 2);
  ck_assert_int_ge(a, 0);
  ck_assert_int_ge(b, 0);
  ck_assert_msg(a < b, "the parked set completed before the create issued before it");
  ck_assert_int_eq(ev_at(a).rc, ZCLOSING);
  ck_assert_int_eq(ev_at(b).rc, ZCLOSING);
}
END_TEST

/* it_history (ASan, loaded machine): writes in flight on the write
 * session when the owner had been away for two thirds of the session
 * timeout; a later write of the same thread was failed by the fence at
 * once and completed first.  The fenced write must complete after the
 * ones issued before it, as a stock session fails what it has pending
 * before what comes after. */
START_TEST(fenced_write_completes_after_writes_in_flight) {
  uint64_t t0;
  fake_req_t *w = set_then_owner_away(&t0); /* not answered yet */
  while (now_ms() - t0 < 2100) sleep_ms(10);
  /* Fenced: it fails, but not before the write in flight completed. */
  ck_assert_int_eq(zkr_aset(z, "/j", "2", 1, -1, done_stat, (void *)2), ZOK);
  sleep_ms(100);
  ck_assert_msg(ev_matching(EV_DONE, 2) == 0,
                "the fenced write completed while an earlier write was in flight");
  fake_reply(w, ZOK, 0x200000002LL, 0, NULL);
  int a = ev_find(0, EV_DONE, 1), b = ev_find(0, EV_DONE, 2);
  ck_assert_int_ge(a, 0);
  ck_assert_int_ge(b, 0);
  ck_assert_int_lt(a, b);
  ck_assert_int_eq(ev_at(a).rc, ZOK);
  ck_assert_int_eq(ev_at(b).rc, ZCONNECTIONLOSS);
  ck_assert_msg(fake_peek(h[2], FK_SET, "/j") == NULL, "a write went out while the owner was away");
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

/* The barrier's answer came, but a write before it was still pending when
 * the session expired: stock completes both with ZSESSIONEXPIRED (the
 * sync was queued behind the write on the one session), never the
 * barrier with ZOK after EXPIRED.  Simulator seed 70 (routed). */
START_TEST(async_after_expiry_completes_expired) {
  open_fake2_leads();
  ck_assert_int_eq(zkr_aset(z, "/w", "1", 1, -1, done_stat, (void *)1), ZOK);
  fake_req_t *set = fake_wait(h[2], FK_SET, "/w");
  ck_assert_ptr_nonnull(set);
  ck_assert_int_eq(zkr_async(z, "/v", done_string, (void *)2), ZOK);
  fake_req_t *sync = fake_wait(NULL, FK_SYNC, "/v");
  ck_assert_ptr_nonnull(sync);
  fake_reply(sync, ZOK, 0, 0, NULL);
  fake_session_event(h[1], ZOO_EXPIRED_SESSION_STATE);
  wait_state(ZOO_EXPIRED_SESSION_STATE);
  fake_reply(set, ZOK, 0x200000002LL, 0, NULL);
  int a = ev_find(0, EV_DONE, 1), b = ev_find(0, EV_DONE, 2);
  ck_assert_int_ge(a, 0);
  ck_assert_int_gt(b, a);
  ck_assert_msg(ev_at(b).rc == ZSESSIONEXPIRED, "the barrier completed with %d after EXPIRED",
                ev_at(b).rc);
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("gate");
  TCase *tc = tcase_create("fake");
  tcase_set_timeout(tc, 30);
  tcase_add_checked_fixture(tc, NULL, teardown);
  tcase_add_test(tc, barrier_releases_write_gate);
  tcase_add_test(tc, barrier_after_ephemeral_releases_gate);
  tcase_add_test(tc, unknown_outcome_write_not_overtaken_until_reconnect);
  tcase_add_test(tc, unknown_outcome_write_not_overtaken_until_expiry);
  tcase_add_test(tc, unknown_outcome_write_fence_ends_with_session_timeout);
  tcase_add_test(tc, unknown_outcome_fence_falls_when_owner_rescued);
  tcase_add_test(tc, unknown_outcome_fence_falls_when_carrier_session_moved);
  tcase_add_test(tc, carrier_watches_rearmed_when_its_moved_session_is_closed);
  tcase_add_test(tc, writes_fenced_while_owner_away);
  tcase_add_test(tc, parked_failure_completes_before_later_writes);
  tcase_add_test(tc, parked_write_fails_after_earlier_in_flight_at_close);
  tcase_add_test(tc, fenced_write_completes_after_writes_in_flight);
  tcase_add_test(tc, async_waits_for_earlier_operations);
  tcase_add_test(tc, async_after_expiry_completes_expired);
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
