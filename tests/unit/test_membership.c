/* Server-less unit tests of which members hold sessions (DESIGN.md
 * section 7): zkr_set_servers adds and retires members, and read_members
 * caps the follower sessions, parking the others and swapping them in
 * when a kept one drops.  Driven through the function table by the fake
 * ZooKeeper (tests/harness/fakefix.h). */
#include <check.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "fakefix.h"

/* ---- the server list ---- */

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

/* The owner's member counts toward the cap when it serves reads: after an
 * election moved the leader away from the owner's server, read_members=1
 * keeps two sessions (the new leader's and the owner's), not three. */
START_TEST(read_members_counts_the_owners_follower) {
  zkr_options_t o;
  opts_default(&o);
  o.read_members = 1;
  open3_opts(&o, NULL);
  wait_state(ZOO_CONNECTED_STATE);
  uint64_t deadline = now_ms() + 5000;
  while (!fake_handle_closed(h[2]) && !fake_handle_closed(h[3]) && now_ms() < deadline) sleep_ms(5);
  int parked = fake_handle_closed(h[2]) ? 2 : fake_handle_closed(h[3]) ? 3 : 0;
  ck_assert_int_ne(parked, 0);
  /* fake2 leads now; fake1, the owner's server, follows. */
  fake_set_role(1, ZKR_ROLE_FOLLOWER, 0x200000001LL);
  fake_set_role(2, ZKR_ROLE_LEADER, 0x200000001LL);
  fake_set_role(3, ZKR_ROLE_FOLLOWER, 0x200000001LL);
  wait_leader(1);
  if (parked == 2) {
    fake_zh_t *again = fake_handle(2, 1); /* the leader's: opened again */
    ck_assert_ptr_nonnull(again);
    fake_connect(again, 0);
  }
  deadline = now_ms() + 5000;
  while (!parked_of(2) && now_ms() < deadline) sleep_ms(5);
  sleep_ms(200); /* a few more ticks: nothing is opened again */
  ck_assert(parked_of(2));
  ck_assert(!parked_of(0));
  ck_assert(!parked_of(1));
}
END_TEST

/* ---- idle parking: the read_members cap of an idle handle ---- */

/* The member (1..3) of h[2], h[3] closed so far, or 0. */
static int closed_follower(void) {
  return fake_handle_closed(h[2]) ? 2 : fake_handle_closed(h[3]) ? 3 : 0;
}

/* Time moves on by ms in ticks of the monitor's (50 ms), each turn run;
 * the servers answer the health probes (sync and exists of "/") a newly
 * opened member gets. */
static void idle_for(int ms) {
  for (int t = 0; t < ms; t += 50) {
    fake_req_t *r;
    while ((r = fake_peek(NULL, FK_SYNC, "/")) || (r = fake_peek(NULL, FK_EXISTS, "/")))
      fake_reply(r, ZOK, 0, 0, NULL);
    advance_ms(50);
    step();
  }
}

/* A handle with no operation for idle_park_ms keeps idle_read_members
 * follower sessions (default 1): the leader's (the owner's here) and one
 * follower's; the other is parked.  The next operation opens it again,
 * and an operation less than idle_park_ms ago keeps it open. */
START_TEST(idle_handle_parks_followers_and_an_operation_opens_them) {
  zkr_options_t o;
  opts_default(&o);
  o.idle_park_ms = 1000;
  open3_stepped_opts(&o);
  idle_for(800);
  ck_assert_int_eq(closed_follower(), 0); /* not idle long enough */
  idle_for(400);
  int parked = closed_follower();
  ck_assert_int_ne(parked, 0);
  int kept = parked == 2 ? 3 : 2;
  ck_assert(!fake_handle_closed(h[kept]));
  ck_assert(!fake_handle_closed(h[1]));
  ck_assert(parked_of(parked - 1));
  ck_assert(!parked_of(kept - 1));
  /* An operation: served by the kept follower at once, and the parked
   * member is opened again on the monitor's next turn. */
  ck_assert_int_eq(zkr_aget(z, "/m", 0, done_data, (void *)1), ZOK);
  fake_req_t *g = fake_wait(NULL, FK_GET, "/m");
  ck_assert_ptr_eq(g->h, h[kept]);
  fake_req_t *sy;
  while ((sy = fake_peek(h[kept], FK_SYNC, NULL))) fake_reply(sy, ZOK, 0, 0, NULL);
  fake_reply(g, ZOK, 1, 1, "v");
  idle_for(50);
  fake_zh_t *again = fake_handle(parked, 1);
  ck_assert_ptr_nonnull(again);
  ck_assert(!parked_of(parked - 1));
  fake_connect(again, 0);
  idle_for(800); /* the operation was less than idle_park_ms ago */
  ck_assert(!fake_handle_closed(again));
  ck_assert(!fake_handle_closed(h[kept]));
  idle_for(400); /* and now it was not */
  ck_assert(fake_handle_closed(again) || fake_handle_closed(h[kept]));
}
END_TEST

/* Answers every sync waiting on zh, then r with rc. */
static void answer_behind_syncs(fake_req_t *r, int rc) {
  fake_req_t *sy;
  while ((sy = fake_peek(r->h, FK_SYNC, NULL))) fake_reply(sy, ZOK, 0, 0, NULL);
  fake_reply(r, rc, 0, 0, NULL);
}

/* An idle handle parks a follower that holds a watch: until the watch's
 * re-arm on a kept session is answered it is on no server, and a node
 * created and deleted meanwhile would leave no trace, so the state dips
 * (the watch dip), as for a lost carrier: CONNECTING at the park,
 * CONNECTED at the re-arm's answer. */
START_TEST(idle_parking_a_follower_that_holds_a_watch_dips_the_state) {
  zkr_options_t o;
  opts_default(&o);
  o.idle_park_ms = 1000;
  open3_stepped_opts(&o);
  /* A watch on each follower: the reads rotate over them. */
  const char *paths[2] = {"/w0", "/w1"};
  fake_req_t *r[2];
  for (int i = 0; i < 2; i++) {
    ck_assert_int_eq(zkr_awexists(z, paths[i], watcher, (void *)(intptr_t)(1 + i), done_stat,
                                  (void *)(intptr_t)(10 + i)),
                     ZOK);
    step();
    r[i] = fake_wait(NULL, FK_EXISTS, paths[i]);
    ck_assert_ptr_nonnull(r[i]);
    answer_behind_syncs(r[i], ZNONODE);
    step();
  }
  ck_assert_ptr_ne(r[0]->h, r[1]->h);
  ck_assert_int_ge(ev_find(0, EV_DONE, 11), 0);
  int mark = ev_count();
  idle_for(1200);
  int parked = closed_follower();
  ck_assert_int_ne(parked, 0);
  ck_assert_int_eq(zkr_state(z), ZOO_CONNECTING_STATE);
  int c = ev_find(mark, EV_SESSION, 100);
  ck_assert_int_ge(c, 0);
  ck_assert_int_eq(ev_at(c).state, ZOO_CONNECTING_STATE);
  /* The re-arm of the parked follower's watch, on a kept session. */
  int i = r[0]->h == h[parked] ? 0 : 1;
  ck_assert_ptr_eq(r[i]->h, h[parked]);
  fake_req_t *rg = fake_wait(NULL, FK_EXISTS, paths[i]);
  ck_assert_ptr_nonnull(rg);
  ck_assert_ptr_ne(rg->h, h[parked]);
  answer_behind_syncs(rg, ZNONODE);
  step();
  ck_assert_int_eq(zkr_state(z), ZOO_CONNECTED_STATE);
  int c2 = ev_find(c + 1, EV_SESSION, 100);
  ck_assert_int_ge(c2, 0);
  ck_assert_int_eq(ev_at(c2).state, ZOO_CONNECTED_STATE);
}
END_TEST

/* idle_read_members=-1: an idle handle keeps every session. */
START_TEST(idle_parking_off_keeps_every_session) {
  zkr_options_t o;
  opts_default(&o);
  o.idle_park_ms = 200;
  o.idle_read_members = -1;
  open3_stepped_opts(&o);
  idle_for(2000);
  ck_assert_int_eq(closed_follower(), 0);
  ck_assert(!fake_handle_closed(h[1]));
}
END_TEST

/* With a read_members cap of its own, an idle handle keeps the smaller
 * of the two caps; active again, the handle's own cap holds. */
START_TEST(idle_parking_under_a_read_members_cap) {
  zkr_options_t o;
  opts_default(&o);
  o.read_members = 1;
  o.idle_read_members = 2;
  o.idle_park_ms = 200;
  open3_stepped_opts(&o);
  idle_for(1000);
  int parked = closed_follower();
  ck_assert_int_ne(parked, 0); /* read_members=1 parks one at once */
  ck_assert(!fake_handle_closed(h[parked == 2 ? 3 : 2]));
  ck_assert_int_eq(fake_handle_count(parked), 1); /* not opened again */
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("membership");
  TCase *tc = tcase_create("fake");
  tcase_set_timeout(tc, 30);
  tcase_add_checked_fixture(tc, NULL, teardown);
  tcase_add_test(tc, set_servers_changes_members);
  tcase_add_test(tc, read_members_cap_parks_and_swaps);
  tcase_add_test(tc, read_members_counts_the_owners_follower);
  tcase_add_test(tc, idle_handle_parks_followers_and_an_operation_opens_them);
  tcase_add_test(tc, idle_parking_a_follower_that_holds_a_watch_dips_the_state);
  tcase_add_test(tc, idle_parking_off_keeps_every_session);
  tcase_add_test(tc, idle_parking_under_a_read_members_cap);
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
