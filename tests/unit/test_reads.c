/* Server-less unit tests of what reads guarantee (DESIGN.md section 3):
 * monotonic reads across a leader change - a member still in an older
 * epoch serves no read, and the handle's highest zxid seen raises the
 * epoch floor - and the handle's own order of reads and writes.  Driven
 * through the function table by the fake ZooKeeper
 * (tests/harness/fakefix.h). */
#include <check.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fakefix.h"

/* ---- reads never go back in time across a leader change ---- */

/* Which member served each of n reads of path (sync+read, answered). */
static void read_n(int n, const char *path, int *served) {
  for (int i = 0; i < n; i++) {
    ck_assert_int_eq(zkr_aget(z, path, 0, done_data, (void *)(intptr_t)(500 + i)), ZOK);
    fake_req_t *g = fake_wait(NULL, FK_GET, path);
    ck_assert_ptr_nonnull(g);
    served[fake_handle_server(g->h)]++;
    fake_reply(g, ZOK, 0x200000005LL, 0x200000005LL, "v");
    ck_assert_int_ge(ev_find(0, EV_DONE, 500 + i), 0);
  }
}

/* fake3 still follows a deposed leader: its epoch (srvr's Zxid >> 32) is
 * below the leader's.  A sync there is answered by the deposed leader
 * (ZOOKEEPER-1675): fake3 leaves the read pool. */
START_TEST(member_of_an_older_epoch_serves_no_read) {
  open3();
  fake_set_role(1, ZKR_ROLE_LEADER, 0x200000005LL);
  fake_set_role(2, ZKR_ROLE_FOLLOWER, 0x200000005LL);
  fake_set_role(3, ZKR_ROLE_FOLLOWER, 0x100000009LL);
  sleep_ms(100); /* a few polls */
  int served[4] = {0};
  read_n(8, "/m", served);
  ck_assert_int_eq(served[3], 0);
  ck_assert_int_eq(served[2], 8);
  /* It rejoins the current epoch: back in the pool. */
  fake_set_role(3, ZKR_ROLE_FOLLOWER, 0x200000006LL);
  sleep_ms(100);
  int again[4] = {0};
  read_n(8, "/m", again);
  ck_assert_int_gt(again[3], 0);
}
END_TEST

/* The handle saw a zxid of epoch 2 in a reply (its write, through the new
 * leader) before any srvr poll showed epoch 2: no member known to be in an
 * older epoch serves a read meanwhile - the leader does - and once the
 * polls show who moved on, the member left behind stays out. */
START_TEST(reply_zxid_raises_the_epoch_floor) {
  open3();
  ck_assert_int_eq(zkr_aset(z, "/h", "1", 1, -1, done_stat, (void *)1), ZOK);
  fake_req_t *w = fake_wait(h[1], FK_SET, "/h");
  ck_assert_ptr_nonnull(w);
  fake_reply(w, ZOK, 0x200000001LL, 0, NULL);
  ck_assert_int_ge(ev_find(0, EV_DONE, 1), 0);
  int served[4] = {0};
  read_n(4, "/h", served);
  ck_assert_int_eq(served[2] + served[3], 0);
  ck_assert_int_eq(served[1], 4);
  fake_set_role(1, ZKR_ROLE_LEADER, 0x200000002LL);
  fake_set_role(2, ZKR_ROLE_FOLLOWER, 0x200000002LL);
  sleep_ms(100);
  int later[4] = {0};
  read_n(6, "/h", later);
  ck_assert_int_eq(later[3], 0);
  ck_assert_int_eq(later[2], 6);
}
END_TEST

/* One srvr poll of a stepped handle: its period passes, then one turn. */
static void poll_once(void) {
  advance_ms(1000);
  step();
}

/* fake3 led epoch 1 and was deposed (cut off through an election it has
 * not noticed): it still claims leadership, with its old epoch.  When the
 * real leader (fake1, epoch 2) stops answering srvr, fake3's claim does
 * not make it the leader (a write sent there would wait for a quorum it
 * no longer has), nor does a write go there; fake2's claim of epoch 3
 * does.
 * (The simulator: tests/sim/zkroute-sim --seed 2345 --mode routed.) */
START_TEST(deposed_leader_claim_is_not_the_leader) {
  open3_stepped();
  fake_set_role(1, ZKR_ROLE_LEADER, 0x200000005LL);
  fake_set_role(2, ZKR_ROLE_FOLLOWER, 0x200000005LL);
  fake_set_role(3, ZKR_ROLE_LEADER, 0x100000009LL);
  poll_once();
  fake_set_role(1, 0, 0); /* silent twice while others answer: suspect */
  poll_once();
  poll_once();
  ck_assert_int_eq(zkr_aset(z, "/d", "1", 1, -1, done_stat, (void *)1), ZOK);
  poll_once();
  ck_assert_ptr_null(fake_peek(h[3], FK_SET, "/d"));
  ck_assert_int_eq(stat_leader(), -1);
  fake_set_role(2, ZKR_ROLE_LEADER, 0x300000000LL);
  poll_once();
  ck_assert_int_eq(stat_leader(), 1);
}
END_TEST

/* ---- the handle's own order: FIFO client order in session mode ---- */

static void open3_session(void) {
  zkr_options_t o;
  opts_default(&o);
  o.consistency = ZKR_CONSISTENCY_SESSION;
  open3_opts(&o, NULL);
  wait_state(ZOO_CONNECTED_STATE);
}

/* zkr_awget of /n by watcher ctx, completion tag: its request. */
static fake_req_t *wget_n(int ctx, int tag) {
  ck_assert_int_eq(
      zkr_awget(z, "/n", watcher, (void *)(intptr_t)ctx, done_data, (void *)(intptr_t)tag), ZOK);
  fake_req_t *r = fake_wait(NULL, FK_GET, "/n");
  ck_assert_ptr_nonnull(r);
  return r;
}

/* zkr_aget of /slow, completion tag, left unanswered: its request. */
static fake_req_t *slow_read(int tag) {
  ck_assert_int_eq(zkr_aget(z, "/slow", 0, done_data, (void *)(intptr_t)tag), ZOK);
  fake_req_t *r = fake_wait(NULL, FK_GET, "/slow");
  ck_assert_ptr_nonnull(r);
  return r;
}

/* Session mode: /slow (tag 1) left unanswered, then watcher 7 set on /n
 * by a get (tag 2) answered at once: held behind /slow.  Returns the get's
 * request, and /slow's in *slow. */
static fake_req_t *watched_read_held_behind_slow(fake_req_t **slow) {
  open3_session();
  *slow = slow_read(1);
  fake_req_t *g = wget_n(7, 2);
  fake_reply(g, ZOK, 5, 5, "a");
  return g;
}

/* In session mode completions are handed on in issue order: a watched
 * read answered while an earlier read is still out is held behind it, and
 * the event of the watch it set - which its server may send at once -
 * comes only after the read's completion, as on one stock session.
 * (The simulator: tests/sim/zkroute-sim --seed 10 --mode routed
 * --consistency session.) */
START_TEST(session_mode_watch_event_after_its_held_read) {
  fake_req_t *slow, *g = watched_read_held_behind_slow(&slow);
  sleep_ms(50);
  ck_assert_int_eq(ev_matching(EV_DONE, 2), 0); /* behind /slow */
  fake_fire(g->h, "/n", ZOO_CHANGED_EVENT);
  sleep_ms(50);
  ck_assert_int_eq(ev_matching(EV_WATCH, 7), 0); /* its read first */
  fake_reply(slow, ZOK, 3, 3, "s");
  int d1 = ev_find(0, EV_DONE, 1), d2 = ev_find(0, EV_DONE, 2), w = ev_find(0, EV_WATCH, 7);
  ck_assert_int_ge(d1, 0);
  ck_assert_int_gt(d2, d1);
  ck_assert_int_gt(w, d2);
}
END_TEST

/* Completions held behind an earlier one are handed on one at a time, each
 * still listed in the issue order while it is handed on: handing on the
 * watched read 2 delivers its watch's event, which resumes read 4 (held for
 * that event); read 4 must still wait for read 3, issued before it and
 * held behind read 1 as well.  (The simulator: tests/sim/zkroute-sim --seed
 * 111 --mode routed --consistency session, where a sequential create
 * completed before two creates issued before it.) */
START_TEST(session_mode_resumed_read_waits_for_the_held_ones_before_it) {
  fake_req_t *slow, *g = watched_read_held_behind_slow(&slow);
  ck_assert_int_eq(zkr_aget(z, "/m", 0, done_data, (void *)3), ZOK);
  fake_req_t *m = fake_wait(NULL, FK_GET, "/m");
  ck_assert_ptr_nonnull(m);
  fake_reply(m, ZOK, 4, 4, "m");
  fake_fire(g->h, "/n", ZOO_CHANGED_EVENT); /* waits for read 2's hand-on */
  ck_assert_int_eq(zkr_aget(z, "/n", 0, done_data, (void *)4), ZOK);
  fake_req_t *g2 = fake_wait(NULL, FK_GET, "/n");
  ck_assert_ptr_nonnull(g2);
  fake_reply(g2, ZOK, 6, 5, "b"); /* the change watcher 7 has not had yet */
  sleep_ms(50);
  ck_assert_int_eq(ev_matching(EV_DONE, 2) + ev_matching(EV_DONE, 3) + ev_matching(EV_DONE, 4), 0);
  fake_reply(slow, ZOK, 3, 3, "s");
  int d4 = ev_find(0, EV_DONE, 4);
  ck_assert_int_ge(d4, 0);
  int d1 = ev_find(0, EV_DONE, 1), d2 = ev_find(0, EV_DONE, 2), d3 = ev_find(0, EV_DONE, 3);
  int w = ev_find(0, EV_WATCH, 7);
  ck_assert_int_ge(d1, 0);
  ck_assert_int_gt(d2, d1);
  ck_assert_int_gt(w, d2);
  ck_assert_msg(d3 > d2 && d4 > d3, "completions out of issue order: 2 at %d, 3 at %d, 4 at %d", d2,
                d3, d4);
  ck_assert_int_gt(d4, w);
}
END_TEST

/* Consistency session: watcher 7 set on /n by read 1 on a follower
 * (answered at 0x100000005 and handed on), then a set of /w (tag 2) in
 * flight on the write session; *g gets the read, and the set's request is
 * returned. */
static fake_req_t *watch_on_a_follower_then_a_write(fake_req_t **g) {
  open3_session();
  ck_assert_int_eq(zkr_awget(z, "/n", watcher, (void *)7, done_data, (void *)1), ZOK);
  *g = fake_wait(NULL, FK_GET, "/n");
  ck_assert_ptr_nonnull(*g);
  ck_assert_msg((*g)->h != h[1], "the scenario changed: the first read went to the write session");
  fake_reply(*g, ZOK, 0x100000005LL, 5, "a");
  ck_assert_int_ge(ev_find(0, EV_DONE, 1), 0);
  ck_assert_int_eq(zkr_aset(z, "/w", "1", 1, -1, done_stat, (void *)2), ZOK);
  fake_req_t *w = fake_wait(h[1], FK_SET, "/w");
  ck_assert_ptr_nonnull(w);
  return w;
}

/* Watcher 7 set on /n again (tag 3), behind that write: its request, on
 * another member than the first read g's. */
static fake_req_t *watch_again_behind_the_write(const fake_req_t *g) {
  fake_req_t *g2 = wget_n(7, 3);
  ck_assert_msg(g2->h != g->h, "the scenario changed: the second read went to the watch's member");
  return g2;
}

/* Consistency session: watcher 7 set on /n by read 1 (answered at 5 and
 * handed on; *g gets it), then a read of /slow (tag 2) left unanswered:
 * its request. */
static fake_req_t *watch_then_a_slow_read(fake_req_t **g) {
  open3_session();
  ck_assert_int_eq(zkr_awget(z, "/n", watcher, (void *)7, done_data, (void *)1), ZOK);
  *g = fake_wait(NULL, FK_GET, "/n");
  ck_assert_ptr_nonnull(*g);
  fake_reply(*g, ZOK, 5, 5, "a");
  ck_assert_int_ge(ev_find(0, EV_DONE, 1), 0);
  fake_req_t *slow = slow_read(2);
  return slow;
}

/* remove_all of /n's watches (tag 3): its request to g's member. */
static fake_req_t *remove_all_of_n(const fake_req_t *g) {
  ck_assert_int_eq(zkr_aremove_all_watches(z, "/n", ZWATCHTYPE_ANY, 0, done_void, (void *)3), ZOK);
  fake_req_t *rm = fake_wait(g->h, FK_REMOVE_ALL_WATCHES, "/n");
  ck_assert_ptr_nonnull(rm);
  return rm;
}

/* A watch set again while a write of the handle is in flight: in session
 * mode the read follows the write, on the write session, not on the
 * member that holds the watch - so that read must register the watch
 * there.  Here the first registration fires for the change the second read
 * sees; the pair is set again by that read and must fire for the next
 * change.  (The simulator: tests/sim/zkroute-sim --seed 545 --mode routed
 * --consistency session, "op 526 saw /g1/x2 changed before pair 3's watch
 * fired": the second read went without a watch.) */
START_TEST(session_mode_watch_set_again_behind_a_write_stays_set) {
  fake_req_t *g;
  fake_req_t *w = watch_on_a_follower_then_a_write(&g);
  fake_req_t *g2 = watch_again_behind_the_write(g);
  ck_assert_msg(g2->watched, "the read that sets the watch again carries no watch");
  fake_reply(w, ZOK, 0x100000006LL, 0, NULL);
  ck_assert_int_eq(fake_fire(g->h, "/n", ZOO_CHANGED_EVENT), 1);
  fake_reply(g2, ZOK, 0x100000007LL, 5, "b");
  int d3 = ev_find(0, EV_DONE, 3), w1 = ev_find(0, EV_WATCH, 7);
  ck_assert_int_ge(d3, 0);
  ck_assert_int_ge(w1, 0);
  ck_assert_int_lt(w1, d3);
  ck_assert_int_eq(fake_fire(g2->h, "/n", ZOO_CHANGED_EVENT), 1);
  ck_assert_int_ge(ev_find(w1 + 1, EV_WATCH, 7), 0);
}
END_TEST

/* The same, with a session event while that read is held behind the
 * write: the pair was set all along (the read only set it again, with no
 * change between), so the event reaches it as on one stock session.
 * (The simulator: tests/sim/zkroute-sim --seed 985 --mode routed
 * --consistency session, "session event 1 missed watcher pairs 0x10".) */
START_TEST(session_mode_pair_set_again_behind_a_write_gets_session_events) {
  fake_req_t *g;
  watch_on_a_follower_then_a_write(&g); /* the write stays in flight */
  fake_req_t *g2 = watch_again_behind_the_write(g);
  fake_reply(g2, ZOK, 0x100000005LL, 5, "a"); /* the same state: no event */
  sleep_ms(50);
  ck_assert_int_eq(ev_matching(EV_DONE, 3), 0); /* held behind the write */
  int mark = ev_count();
  fake_session_event(h[1], ZOO_CONNECTING_STATE);
  wait_state(ZOO_CONNECTING_STATE);
  ck_assert_int_ge(ev_find(mark, EV_SESSION, 100), 0);
  ck_assert_msg(ev_find(mark, EV_SESSION, 7) >= 0,
                "the pair set all along missed the session event");
}
END_TEST

/* The same, with a second pair set between, and a change that fires both:
 * the pair set first is called first, though the read that set it again
 * is handed on after the other pair's.  (The simulator:
 * tests/sim/zkroute-sim --seed 488 --mode routed --consistency session,
 * "changed event on /g0/k3: pair 5 called before pair 1, which was set
 * first".) */
START_TEST(session_mode_pair_set_again_behind_a_write_keeps_its_place) {
  fake_req_t *g;
  fake_req_t *w = watch_on_a_follower_then_a_write(&g);
  fake_req_t *b = wget_n(8, 3);
  fake_req_t *a2 = wget_n(7, 4);
  ck_assert_msg(b->h == a2->h && a2->h != g->h,
                "the scenario changed: the reads behind the write went elsewhere");
  fake_reply(b, ZOK, 0x100000005LL, 5, "a");
  fake_reply(a2, ZOK, 0x100000005LL, 5, "a");
  ck_assert_int_eq(fake_fire(a2->h, "/n", ZOO_CHANGED_EVENT), 2);
  ck_assert_int_eq(fake_fire(g->h, "/n", ZOO_CHANGED_EVENT), 1);
  sleep_ms(50);
  fake_reply(w, ZOK, 0x100000006LL, 0, NULL);
  int e7 = ev_find(0, EV_WATCH, 7), e8 = ev_find(0, EV_WATCH, 8);
  ck_assert_int_ge(e7, 0);
  ck_assert_int_ge(e8, 0);
  int d4 = ev_find(0, EV_DONE, 4);
  ck_assert_int_ge(d4, 0);
  ck_assert_msg(e7 < e8, "pair 8 called (at %d) before pair 7 (at %d), which was set first", e8,
                e7);
  ck_assert_int_gt(e7, d4);
  ck_assert_int_eq(ev_matching(EV_WATCH, 7), 1);
}
END_TEST

/* A watch removal completes in issue order too: issued after a watched
 * read held behind an earlier one, it completes after that read (on one
 * stock session the server answers the read, which sets the watch, then
 * the removal, which removes it).  (The simulator: tests/sim/zkroute-sim
 * --seed 662 --mode routed --consistency session: the removal completed
 * first, and the application saw a pair set after it was removed.) */
START_TEST(session_mode_watch_removal_completes_in_issue_order) {
  fake_req_t *slow, *g = watched_read_held_behind_slow(&slow);
  fake_req_t *rm = remove_all_of_n(g);
  fake_reply(rm, ZOK, 0, 0, NULL);
  sleep_ms(50);
  ck_assert_msg(ev_matching(EV_DONE, 3) == 0,
                "the removal completed before the reads issued before it");
  fake_reply(slow, ZOK, 3, 3, "s");
  int d1 = ev_find(0, EV_DONE, 1), d2 = ev_find(0, EV_DONE, 2), d3 = ev_find(0, EV_DONE, 3);
  ck_assert_int_ge(d1, 0);
  ck_assert_int_gt(d2, d1);
  ck_assert_int_gt(d3, d2);
  ck_assert_int_eq(ev_at(d3).rc, ZOK);
}
END_TEST

/* watch_then_a_slow_read, then a remove_all of /n (tag 3) answered rc on
 * g's member: its completion waits behind /slow.  Returns /slow's request
 * (*g: the watch's). */
static fake_req_t *removal_answered_behind_slow(fake_req_t **g, int rc) {
  fake_req_t *slow = watch_then_a_slow_read(g);
  fake_req_t *rm = remove_all_of_n(*g);
  fake_reply(rm, rc, 0, 0, NULL);
  sleep_ms(50);
  ck_assert_int_eq(ev_matching(EV_DONE, 3), 0); /* behind /slow */
  return slow;
}

/* ... and until its completion is handed on, the application holds the
 * pairs it removes: a session event meanwhile still reaches them, as
 * stock's client drops a watcher only when the removal's answer is
 * processed. */
START_TEST(session_mode_held_watch_removal_leaves_pairs_their_session_events) {
  fake_req_t *g;
  fake_req_t *slow = removal_answered_behind_slow(&g, ZOK);
  int mark = ev_count();
  fake_session_event(h[1], ZOO_CONNECTING_STATE);
  wait_state(ZOO_CONNECTING_STATE);
  ck_assert_int_ge(ev_find(mark, EV_SESSION, 100), 0);
  ck_assert_msg(ev_find(mark, EV_SESSION, 7) >= 0,
                "a pair whose removal had not completed missed the session event");
  fake_session_event(h[1], ZOO_CONNECTED_STATE);
  wait_state(ZOO_CONNECTED_STATE);
  fake_reply(slow, ZOK, 3, 3, "s");
  int d3 = ev_find(0, EV_DONE, 3);
  ck_assert_int_ge(d3, 0);
  /* Removed now: the next session event does not reach it. */
  mark = ev_count();
  fake_session_event(h[1], ZOO_CONNECTING_STATE);
  wait_state(ZOO_CONNECTING_STATE);
  ck_assert_int_ge(ev_find(mark, EV_SESSION, 100), 0);
  sleep_ms(50);
  for (int i = mark; i < ev_count(); i++)
    ck_assert_msg(!(ev_at(i).kind == EV_SESSION && ev_at(i).tag == 7),
                  "a removed pair got a session event");
}
END_TEST

/* The same pair removed by two calls held behind a write: its own removal
 * (tag 4), whose request fails (connection loss), and a remove_all of the
 * path (tag 3) issued while that request was out, which takes the pair
 * too and answers ZOK after it.  The pair's registration stays on its
 * carrier's session, so its record stays until that zhandle closes: the
 * carrier expires first.  Until the remove_all's completion is handed on
 * the pair is still the application's, and a session event must reach
 * it - the record must outlive that zhandle.  (The simulator:
 * tests/sim/zkroute-sim --seed 8841 --mode routed --consistency session,
 * "session event 3 missed watcher pairs 0x8".) */
START_TEST(session_mode_pair_of_a_held_removal_gets_session_events_after_its_carrier_closed) {
  open3_session();
  ck_assert_int_eq(zkr_awget(z, "/n", watcher, (void *)7, done_data, (void *)1), ZOK);
  fake_req_t *g = fake_wait(NULL, FK_GET, "/n");
  ck_assert_ptr_nonnull(g);
  fake_reply(g, ZOK, 5, 5, "a");
  ck_assert_int_ge(ev_find(0, EV_DONE, 1), 0);
  ck_assert_ptr_ne(g->h, h[1]);
  /* A write on the leader's session, unanswered: what follows completes
   * after it (the carrier's expiry fails no request of its own). */
  ck_assert_int_eq(zkr_aset(z, "/slow", "s", 1, -1, done_stat, (void *)2), ZOK);
  fake_req_t *slow = fake_wait(NULL, FK_SET, "/slow");
  ck_assert_ptr_nonnull(slow);
  ck_assert_ptr_ne(slow->h, g->h);
  ck_assert_int_eq(
      zkr_aremove_watches(z, "/n", ZWATCHTYPE_DATA, watcher, (void *)7, 0, done_void, (void *)4),
      ZOK);
  fake_req_t *r4 = fake_wait(g->h, FK_REMOVE_WATCHES, "/n");
  ck_assert_ptr_nonnull(r4);
  ck_assert_int_eq(zkr_aremove_all_watches(z, "/n", ZWATCHTYPE_ANY, 0, done_void, (void *)3), ZOK);
  for (int i = 1; i <= 3; i++) {
    fake_req_t *r = fake_peek(h[i], FK_REMOVE_ALL_WATCHES, "/n");
    if (r) fake_reply(r, ZNOWATCHER, 0, 0, NULL);
  }
  fake_reply(r4, ZCONNECTIONLOSS, 0, 0, NULL);
  sleep_ms(50);
  ck_assert_int_eq(ev_matching(EV_DONE, 3) + ev_matching(EV_DONE, 4), 0); /* behind the set */
  fake_session_event(g->h, ZOO_EXPIRED_SESSION_STATE);
  sleep_ms(50);
  int mark = ev_count();
  fake_session_event(h[1], ZOO_CONNECTING_STATE);
  wait_state(ZOO_CONNECTING_STATE);
  ck_assert_int_ge(ev_find(mark, EV_SESSION, 100), 0);
  ck_assert_msg(ev_find(mark, EV_SESSION, 7) >= 0,
                "a pair whose removal had not completed missed the session event");
  fake_session_event(h[1], ZOO_CONNECTED_STATE);
  wait_state(ZOO_CONNECTED_STATE);
  fake_reply(slow, ZOK, 6, 0, NULL);
  int d4 = ev_find(0, EV_DONE, 4), d3 = ev_find(0, EV_DONE, 3);
  ck_assert_int_ge(d4, 0);
  ck_assert_int_ge(d3, 0);
  ck_assert_int_lt(d4, d3);
  ck_assert_int_eq(ev_at(d3).rc, ZOK);
}
END_TEST

/* ... nor path events: a change whose event (from another member) comes
 * while the removal's completion waits behind a delete of the path,
 * issued before it, calls the pair too, in its turn - before a pair set
 * after it.  On one stock session the server applies the delete first,
 * and the event comes before the removal's answer.  (The simulator:
 * tests/sim/zkroute-sim --seed 6943 --mode routed --consistency session,
 * "deleted event on /g0/k0: pair 4 called before pair 5, which was set
 * first": the removal was settled at its answer, before its hand-on.) */
START_TEST(session_mode_held_watch_removal_leaves_pairs_their_path_events) {
  open3_session();
  fake_req_t *g7 = wget_n(7, 1);
  ck_assert_msg(g7->h != h[1], "the scenario changed: the first read went to the write session");
  fake_reply(g7, ZOK, 5, 5, "a");
  ck_assert_int_ge(ev_find(0, EV_DONE, 1), 0);
  /* Pair 8 on another member: its read follows a write of /n (one that
   * changes nothing) on the write session. */
  ck_assert_int_eq(zkr_adelete(z, "/n", 9, done_void, (void *)2), ZOK);
  fake_req_t *d0 = fake_wait(h[1], FK_DELETE, "/n");
  ck_assert_ptr_nonnull(d0);
  fake_req_t *g8 = wget_n(8, 3);
  ck_assert_msg(g8->h == h[1], "the scenario changed: pair 8's read did not follow the write");
  fake_reply(d0, ZBADVERSION, 0, 0, NULL);
  fake_reply(g8, ZOK, 5, 5, "a");
  ck_assert_int_ge(ev_find(0, EV_DONE, 3), 0);
  ck_assert_int_eq(zkr_adelete(z, "/n", -1, done_void, (void *)4), ZOK);
  fake_req_t *d = fake_wait(h[1], FK_DELETE, "/n");
  ck_assert_ptr_nonnull(d);
  ck_assert_int_eq(
      zkr_aremove_watches(z, "/n", ZWATCHTYPE_DATA, watcher, (void *)7, 0, done_void, (void *)5),
      ZOK);
  fake_req_t *rm = fake_wait(g7->h, FK_REMOVE_WATCHES, "/n");
  ck_assert_ptr_nonnull(rm);
  fake_reply(rm, ZOK, 0, 0, NULL); /* g7's member has not seen the delete yet */
  sleep_ms(50);
  ck_assert_int_eq(ev_matching(EV_DONE, 5), 0); /* behind the delete */
  ck_assert_int_eq(fake_fire(g8->h, "/n", ZOO_DELETED_EVENT), 1);
  sleep_ms(50);
  int e7 = ev_find(0, EV_WATCH, 7), e8 = ev_find(0, EV_WATCH, 8);
  ck_assert_int_ge(e8, 0);
  ck_assert_msg(e7 >= 0 && e7 < e8,
                "pair 8 called (at %d) before pair 7 (at %d), set first and not yet removed", e8,
                e7);
  fake_reply(d, ZOK, 0x100000006LL, 0, NULL);
  int d4 = ev_find(0, EV_DONE, 4), d5 = ev_find(0, EV_DONE, 5);
  ck_assert_int_ge(d4, 0);
  ck_assert_int_gt(d5, d4);
  ck_assert_int_eq(ev_matching(EV_WATCH, 7), 1);
}
END_TEST

/* ... but a pair whose event came before the removal's answer is over:
 * the next session event does not reach it, removal held or not.  (The
 * simulator: tests/sim/zkroute-sim --seed 534 --mode routed --consistency
 * session, "watcher pair 1 got session event 1 but holds no watch".) */
START_TEST(session_mode_pair_fired_before_a_held_removal_gets_no_session_event) {
  fake_req_t *g;
  fake_req_t *slow = watch_then_a_slow_read(&g);
  fake_req_t *rm = remove_all_of_n(g);
  ck_assert_int_eq(fake_fire(g->h, "/n", ZOO_CHANGED_EVENT), 1);
  ck_assert_int_ge(ev_find(0, EV_WATCH, 7), 0);
  fake_reply(rm, ZNOWATCHER, 0, 0, NULL);
  sleep_ms(50);
  int mark = ev_count();
  fake_session_event(h[1], ZOO_CONNECTING_STATE);
  wait_state(ZOO_CONNECTING_STATE);
  ck_assert_int_ge(ev_find(mark, EV_SESSION, 100), 0);
  sleep_ms(50);
  for (int i = mark; i < ev_count(); i++)
    ck_assert_msg(!(ev_at(i).kind == EV_SESSION && ev_at(i).tag == 7),
                  "a pair whose watch had fired got a session event");
  fake_session_event(h[1], ZOO_CONNECTED_STATE);
  wait_state(ZOO_CONNECTED_STATE);
  fake_reply(slow, ZOK, 3, 3, "s");
  ck_assert_int_gt(ev_find(0, EV_DONE, 3), ev_find(0, EV_DONE, 2));
}
END_TEST

/* Watcher 7 gets no session event from mark on. */
static void no_session_event_to_7(int mark, const char *why) {
  sleep_ms(50);
  for (int i = mark; i < ev_count(); i++)
    ck_assert_msg(!(ev_at(i).kind == EV_SESSION && ev_at(i).tag == 7), "%s", why);
}

/* The owner's connection drops (or comes back): the global watcher has the
 * event; returns where to look from. */
static int owner_state(int state) {
  int mark = ev_count();
  fake_session_event(h[1], state);
  wait_state(state);
  ck_assert_int_ge(ev_find(mark, EV_SESSION, 100), 0);
  return mark;
}

/* A removal of a pair whose read, answered, is held behind an earlier
 * one: the application has seen neither the read set the pair nor the
 * removal take it, and a session event meanwhile does not reach it (on
 * one stock session both completions come before that event, and the
 * pair is gone).  (The simulator: tests/sim/zkroute-sim --seed 5563
 * --mode routed --consistency session, "watcher pair 4 got session event
 * 1 but holds no watch"; seeds 11678 15053 16376 too.) */
START_TEST(session_mode_pair_removed_while_its_read_is_held_gets_no_session_event) {
  fake_req_t *slow, *g = watched_read_held_behind_slow(&slow);
  fake_req_t *rm = remove_all_of_n(g);
  fake_reply(rm, ZOK, 0, 0, NULL);
  sleep_ms(50);
  ck_assert_int_eq(ev_matching(EV_DONE, 2) + ev_matching(EV_DONE, 3), 0); /* behind /slow */
  no_session_event_to_7(owner_state(ZOO_CONNECTING_STATE),
                        "a pair whose read was not handed on got a session event");
  owner_state(ZOO_CONNECTED_STATE);
  fake_reply(slow, ZOK, 3, 3, "s");
  int d2 = ev_find(0, EV_DONE, 2), d3 = ev_find(0, EV_DONE, 3);
  ck_assert_int_ge(d2, 0);
  ck_assert_int_gt(d3, d2);
  no_session_event_to_7(owner_state(ZOO_CONNECTING_STATE), "a removed pair got a session event");
}
END_TEST

/* Two remove_alls of one pair's watch, the second issued while the first
 * is in flight.  The first's completion shows the application the pair
 * removed: a session event after it no longer reaches the pair, though
 * the second call has not completed.  (The simulator: tests/sim/zkroute-sim
 * --seed 1954 --mode routed --consistency session: the second call
 * renumbered the record, and a CONNECTED queued after the first call's
 * completion still reached pair 5.) */
START_TEST(session_mode_pair_removed_by_the_first_of_two_calls_gets_no_later_session_event) {
  open3_session();
  fake_req_t *g = wget_n(7, 2);
  fake_reply(g, ZOK, 5, 5, "a");
  ck_assert_int_ge(ev_find(0, EV_DONE, 2), 0);
  fake_req_t *rm1 = remove_all_of_n(g);
  /* A read between the two calls, left unanswered: the second call's
   * completion waits its turn behind it. */
  fake_req_t *slow = slow_read(5);
  ck_assert_int_eq(zkr_aremove_all_watches(z, "/n", ZWATCHTYPE_ANY, 0, done_void, (void *)4), ZOK);
  fake_req_t *rm2 = NULL;
  for (int i = 0; i < 200 && !rm2; i++) {
    for (int k = 1; k <= 3 && !rm2; k++) {
      fake_req_t *r = fake_peek(h[k], FK_REMOVE_ALL_WATCHES, "/n");
      if (r && r != rm1) rm2 = r;
    }
    if (!rm2) sleep_ms(5);
  }
  fake_reply(rm1, ZOK, 0, 0, NULL);
  int d3 = ev_find(0, EV_DONE, 3);
  ck_assert_int_ge(d3, 0);
  ck_assert_int_eq(ev_at(d3).rc, ZOK);
  ck_assert_int_eq(ev_matching(EV_DONE, 4), 0);
  no_session_event_to_7(owner_state(ZOO_CONNECTING_STATE), "a removed pair got a session event");
  owner_state(ZOO_CONNECTED_STATE);
  if (rm2) fake_reply(rm2, ZNOWATCHER, 0, 0, NULL);
  fake_reply(slow, ZOK, 3, 3, "s");
  ck_assert_int_gt(ev_find(0, EV_DONE, 4), ev_find(0, EV_DONE, 5));
}
END_TEST

/* ... and a removal that failed leaves its pairs at once, though its
 * completion waits its turn: a second removal issued after that answer
 * finds them and removes them.  (The simulator: tests/sim/zkroute-sim
 * --seed 12524 --mode routed --consistency session, with the removals
 * settled at their hand-on only: the second found the pair still marked
 * as being removed, removed nothing, and the pair was called after it
 * completed ZOK.) */
START_TEST(session_mode_failed_held_removal_leaves_its_pairs_to_the_next) {
  fake_req_t *g;
  fake_req_t *slow = removal_answered_behind_slow(&g, ZCONNECTIONLOSS);
  ck_assert_int_eq(zkr_aremove_all_watches(z, "/n", ZWATCHTYPE_ANY, 0, done_void, (void *)4), ZOK);
  fake_req_t *rm2 = fake_wait(g->h, FK_REMOVE_ALL_WATCHES, "/n");
  ck_assert_ptr_nonnull(rm2);
  for (int i = 1; i <= 3; i++)
    ck_assert_msg(h[i] == g->h || !fake_peek(h[i], FK_REMOVE_ALL_WATCHES, "/n"),
                  "the second removal found no record of the pair and asked every member");
  fake_reply(rm2, ZOK, 0, 0, NULL);
  fake_reply(slow, ZOK, 3, 3, "s");
  int d3 = ev_find(0, EV_DONE, 3), d4 = ev_find(0, EV_DONE, 4);
  ck_assert_int_ge(d3, 0);
  ck_assert_int_eq(ev_at(d3).rc, ZCONNECTIONLOSS);
  ck_assert_int_gt(d4, d3);
  ck_assert_int_eq(ev_at(d4).rc, ZOK);
  no_session_event_to_7(owner_state(ZOO_CONNECTING_STATE), "a removed pair got a session event");
}
END_TEST

/* ... and a removal answered while a read issued before it is held for
 * the event of a pair it removes (the read shows the node created, the
 * pair's member has not seen it yet, and removes it): that read proves
 * the event, which is made at the answer, as when the removal settles
 * there - the read goes after it, and the removal after the read.  (The
 * simulator: tests/sim/zkroute-sim --seed 16591 --mode routed
 * --consistency session, with the removals settled at their hand-on only:
 * the read waited for the event, the removal for the read, until the
 * hold's bound.) */
START_TEST(session_mode_held_removal_makes_the_event_a_held_read_proves) {
  open3_session();
  ck_assert_int_eq(zkr_awexists(z, "/n", watcher, (void *)7, done_stat, (void *)1), ZOK);
  fake_req_t *e = fake_wait(NULL, FK_EXISTS, "/n");
  ck_assert_ptr_nonnull(e);
  ck_assert_msg(e->h != h[1], "the scenario changed: the exists went to the write session");
  fake_reply(e, ZNONODE, 0, 0, NULL);
  ck_assert_int_ge(ev_find(0, EV_DONE, 1), 0);
  ck_assert_int_eq(zkr_acreate(z, "/n", "a", 1, &ZOO_OPEN_ACL_UNSAFE, 0, done_string, (void *)2),
                   ZOK);
  fake_req_t *c = fake_wait(h[1], FK_CREATE, "/n");
  ck_assert_ptr_nonnull(c);
  ck_assert_int_eq(zkr_aget(z, "/n", 0, done_data, (void *)3), ZOK);
  fake_req_t *g = fake_wait(h[1], FK_GET, "/n");
  ck_assert_ptr_nonnull(g);
  fake_reply(c, ZOK, 0x100000006LL, 0, NULL);
  fake_reply(g, ZOK, 0x100000006LL, 0x100000006LL, "a"); /* held: pair 7 has not fired */
  ck_assert_int_ge(ev_find(0, EV_DONE, 2), 0);
  sleep_ms(50);
  ck_assert_int_eq(ev_matching(EV_DONE, 3), 0);
  ck_assert_int_eq(zkr_aremove_all_watches(z, "/n", ZWATCHTYPE_ANY, 0, done_void, (void *)4), ZOK);
  fake_req_t *rm = fake_wait(e->h, FK_REMOVE_ALL_WATCHES, "/n");
  ck_assert_ptr_nonnull(rm);
  fake_reply(rm, ZOK, 0, 0, NULL); /* pair 7's member has not seen the create */
  int w7 = ev_find(0, EV_WATCH, 7), d3 = ev_find(0, EV_DONE, 3), d4 = ev_find(0, EV_DONE, 4);
  ck_assert_msg(w7 >= 0 && d3 > w7 && d4 > d3,
                "pair 7's event (%d), the held read (%d), the removal (%d) not in that order", w7,
                d3, d4);
  ck_assert_int_eq(ev_at(w7).type, ZOO_CREATED_EVENT);
}
END_TEST

/* Two reads set two pairs of one path; the later one's reply comes first
 * and is held in issue order behind the earlier one.  The application
 * sees pair 7 set first (its read completes first), and stock's table
 * keeps the pairs in the order completions registered them: a change
 * calls pair 7 first, though the server registered pair 8 first.  (The
 * simulator: tests/sim/zkroute-sim --seed 10144 --mode routed
 * --consistency session, "deleted event on /g0/k2: pair 0 called before
 * pair 2, which was set first"; seed 1546 the same.) */
START_TEST(session_mode_pairs_take_their_places_in_completion_order) {
  open3_session();
  fake_req_t *a = wget_n(7, 1);
  fake_req_t *b = wget_n(8, 2);
  fake_reply(b, ZOK, 5, 5, "a");
  sleep_ms(50);
  ck_assert_int_eq(ev_matching(EV_DONE, 2), 0); /* behind pair 7's read */
  fake_reply(a, ZOK, 5, 5, "a");
  int d1 = ev_find(0, EV_DONE, 1), d2 = ev_find(0, EV_DONE, 2);
  ck_assert_int_ge(d1, 0);
  ck_assert_int_gt(d2, d1);
  fake_fire(b->h, "/n", ZOO_CHANGED_EVENT);
  if (a->h != b->h) fake_fire(a->h, "/n", ZOO_CHANGED_EVENT);
  int e7 = ev_find(0, EV_WATCH, 7), e8 = ev_find(0, EV_WATCH, 8);
  ck_assert_int_ge(e7, 0);
  ck_assert_int_ge(e8, 0);
  ck_assert_msg(e7 < e8, "pair 8 called (at %d) before pair 7 (at %d), which was set first", e8,
                e7);
}
END_TEST

/* A remove_all held behind a write, of pairs 7 (on a follower) and 8
 * (set behind the write, on the leader): the leader removes pair 8's
 * watch, pair 7's member loses the request, and the call's ZOK removes
 * pair 7's record too, left registered on that member's zhandle.  That
 * session then goes and its zhandle is closed: the application still
 * holds pair 7 until the removal's completion is handed on, and a
 * session event meanwhile reaches it.  (The simulator:
 * tests/sim/zkroute-sim --seed 11640 --mode routed --consistency session,
 * "session event 3 missed watcher pairs 0x20"; seeds 17070 17098 too.) */
START_TEST(session_mode_held_removal_keeps_the_pair_when_its_session_goes) {
  fake_req_t *g;
  fake_req_t *w = watch_on_a_follower_then_a_write(&g);
  fake_req_t *b = wget_n(8, 4);
  ck_assert_msg(b->h == h[1], "the scenario changed: the read behind the write went elsewhere");
  fake_reply(b, ZOK, 0x100000005LL, 5, "a");
  fake_req_t *rm = remove_all_of_n(g);
  fake_req_t *rl = fake_wait(h[1], FK_REMOVE_ALL_WATCHES, "/n");
  ck_assert_ptr_nonnull(rl);
  fake_reply(rl, ZOK, 0, 0, NULL);
  fake_reply(rm, ZCONNECTIONLOSS, 0, 0, NULL);
  for (int i = 1; i <= 3; i++) {
    fake_req_t *r;
    while ((r = fake_peek(h[i], FK_REMOVE_ALL_WATCHES, "/n")) != NULL)
      fake_reply(r, ZNOWATCHER, 0, 0, NULL);
  }
  sleep_ms(50);
  ck_assert_int_eq(ev_matching(EV_DONE, 3), 0); /* behind the write */
  fake_session_event(g->h, ZOO_EXPIRED_SESSION_STATE);
  for (int i = 0; i < 100 && !fake_handle_closed(g->h); i++) sleep_ms(10);
  ck_assert_msg(fake_handle_closed(g->h), "the scenario changed: the expired carrier stays open");
  sleep_ms(50);
  int mark = owner_state(ZOO_CONNECTING_STATE);
  ck_assert_msg(ev_find(mark, EV_SESSION, 7) >= 0,
                "a pair whose removal had not completed missed the session event");
  owner_state(ZOO_CONNECTED_STATE);
  fake_reply(w, ZOK, 0x100000006LL, 0, NULL);
  int d3 = ev_find(0, EV_DONE, 3);
  ck_assert_int_ge(d3, 0);
  ck_assert_int_eq(ev_at(d3).rc, ZOK);
  no_session_event_to_7(owner_state(ZOO_CONNECTING_STATE), "a removed pair got a session event");
}
END_TEST

/* Pair 7's read, answered, is held behind an earlier read on the same
 * follower; that follower then falls behind the epoch, so the pair set
 * again goes elsewhere, with a record of its own that supersedes the
 * first (no change between).  Neither read is handed on: the application
 * has not seen the pair set, and a session event meanwhile does not reach
 * it; once both are, the next one does.  (The simulator:
 * tests/sim/zkroute-sim --seed 7973 --mode routed --consistency session,
 * "watcher pair 0 got session event 1 but holds no watch"; seed 13607
 * too.) */
START_TEST(session_mode_pair_set_again_elsewhere_while_its_read_is_held_gets_no_session_event) {
  open3_session();
  fake_set_role(1, ZKR_ROLE_LEADER, 0x200000005LL);
  fake_set_role(2, ZKR_ROLE_FOLLOWER, 0x200000005LL);
  fake_set_role(3, ZKR_ROLE_FOLLOWER, 0x200000005LL);
  sleep_ms(100);
  fake_req_t *slow = slow_read(1);
  fake_req_t *a = wget_n(7, 2);
  ck_assert_msg(a->h == slow->h, "the scenario changed: the reads went to two members");
  fake_reply(a, ZOK, 0x200000004LL, 5, "a");
  int f = fake_handle_server(a->h);
  fake_set_role(f, ZKR_ROLE_FOLLOWER, 0x100000009LL);
  sleep_ms(100);
  fake_req_t *b = wget_n(7, 3);
  ck_assert_msg(b->h != a->h, "the scenario changed: the read went to the member behind");
  fake_reply(b, ZOK, 0x200000004LL, 5, "a"); /* the same state: no event */
  sleep_ms(50);
  ck_assert_int_eq(ev_matching(EV_DONE, 2) + ev_matching(EV_DONE, 3), 0); /* behind /slow */
  no_session_event_to_7(owner_state(ZOO_CONNECTING_STATE),
                        "a pair whose reads were not handed on got a session event");
  owner_state(ZOO_CONNECTED_STATE);
  fake_reply(slow, ZOK, 3, 3, "s");
  int d2 = ev_find(0, EV_DONE, 2), d3 = ev_find(0, EV_DONE, 3);
  ck_assert_int_ge(d2, 0);
  ck_assert_int_gt(d3, d2);
  int mark = owner_state(ZOO_CONNECTING_STATE);
  ck_assert_msg(ev_find(mark, EV_SESSION, 7) >= 0, "the pair set missed the session event");
}
END_TEST

/* A watch set again while it is armed goes to the member that holds it,
 * where ZooKeeper merges the two registrations.  Answered before the
 * change, that read's completion comes before the event on one stock
 * session - also when the completion is held behind an earlier operation.
 * (The simulator: tests/sim/zkroute-sim --seed 536 --mode routed
 * --consistency session, "op 2019 saw /g2/x1 changed before pair 4's
 * watch (set by op 2014) fired": the event came before op 2014's
 * completion, so the application saw the pair set again after it.) */
START_TEST(session_mode_event_after_a_held_read_that_set_the_watch_again) {
  fake_req_t *g;
  fake_req_t *slow = watch_then_a_slow_read(&g);
  fake_req_t *g2 = wget_n(7, 3);
  ck_assert_msg(g2->h == g->h, "the scenario changed: the watch set again went to another member");
  fake_reply(g2, ZOK, 5, 5, "a");
  ck_assert_int_eq(fake_fire(g->h, "/n", ZOO_CHANGED_EVENT), 1);
  sleep_ms(50);
  ck_assert_msg(ev_matching(EV_WATCH, 7) == 0,
                "the event came before the completion of the read that set the watch again");
  fake_reply(slow, ZOK, 3, 3, "s");
  int w = ev_find(0, EV_WATCH, 7);
  ck_assert_int_ge(w, 0);
  int d2 = ev_find(0, EV_DONE, 2), d3 = ev_find(0, EV_DONE, 3);
  ck_assert_int_ge(d2, 0);
  ck_assert_int_gt(d3, d2);
  ck_assert_int_gt(w, d3);
  ck_assert_int_eq(ev_matching(EV_WATCH, 7), 1);
}
END_TEST

/* ... and so does every other pair's call for that change: stock fires
 * the path's watchers from one table at one event, which comes after that
 * reply.  Watcher 8, set first on the same member, must not be called
 * before the held read's completion either.  (The simulator:
 * tests/sim/zkroute-sim --seed 2153 --mode routed --consistency session,
 * "op 368 saw /g0/k4 changed before pair 6's watch (set by op 351)
 * fired": pair 2 got the CREATED event before op 351's completion, pair 6
 * after it, so op 351's watch looked set after the event; 16933 the
 * same.) */
START_TEST(session_mode_other_pairs_event_after_a_held_read_that_set_a_watch_again) {
  open3_session();
  ck_assert_int_eq(zkr_awget(z, "/n", watcher, (void *)8, done_data, (void *)1), ZOK);
  fake_req_t *g8 = fake_wait(NULL, FK_GET, "/n");
  ck_assert_ptr_nonnull(g8);
  fake_reply(g8, ZOK, 5, 5, "a");
  ck_assert_int_ge(ev_find(0, EV_DONE, 1), 0);
  fake_req_t *g = wget_n(7, 2);
  ck_assert_msg(g->h == g8->h, "the scenario changed: the two watches are on two members");
  fake_reply(g, ZOK, 5, 5, "a");
  ck_assert_int_ge(ev_find(0, EV_DONE, 2), 0);
  fake_req_t *slow = slow_read(3);
  fake_req_t *g2 = wget_n(7, 4);
  ck_assert_msg(g2->h == g->h, "the scenario changed: the watch set again went to another member");
  fake_reply(g2, ZOK, 5, 5, "a");
  ck_assert_int_eq(fake_fire(g->h, "/n", ZOO_CHANGED_EVENT), 2);
  sleep_ms(50);
  ck_assert_msg(ev_matching(EV_WATCH, 8) == 0,
                "another pair's event came before the completion of the read that set a watch "
                "of the path again");
  ck_assert_int_eq(ev_matching(EV_WATCH, 7), 0);
  fake_reply(slow, ZOK, 3, 3, "s");
  int w8 = ev_find(0, EV_WATCH, 8), w7 = ev_find(0, EV_WATCH, 7);
  ck_assert_int_ge(w8, 0);
  ck_assert_int_gt(w7, w8);
  int d3 = ev_find(0, EV_DONE, 3), d4 = ev_find(0, EV_DONE, 4);
  ck_assert_int_ge(d3, 0);
  ck_assert_int_gt(d4, d3);
  ck_assert_int_gt(w8, d4);
  ck_assert_int_eq(ev_matching(EV_WATCH, 8), 1);
  ck_assert_int_eq(ev_matching(EV_WATCH, 7), 1);
}
END_TEST

/* consistency=session claims a stock session's guarantees, FIFO client
 * order among them: aset(/a) then aget(/b) complete in that order, and
 * the read runs after the write (it cannot miss it). */
START_TEST(session_mode_read_after_write_in_issue_order) {
  open3_session();
  ck_assert_int_eq(zkr_aset(z, "/a", "1", 1, -1, done_stat, (void *)1), ZOK);
  ck_assert_int_eq(zkr_aget(z, "/b", 0, done_data, (void *)2), ZOK);
  fake_req_t *w = fake_wait(h[1], FK_SET, "/a");
  ck_assert_ptr_nonnull(w);
  /* The read is not on a follower ahead of the write. */
  sleep_ms(50);
  fake_req_t *r = fake_peek(NULL, FK_GET, "/b");
  if (r) {
    ck_assert_ptr_eq(r->h, h[1]);
    ck_assert_int_gt(r->seq, w->seq);
    fake_reply(r, ZOK, 0x100000006LL, 0, "b"); /* even answered first */
  }
  sleep_ms(50);
  ck_assert_int_eq(ev_matching(EV_DONE, 2), 0);
  fake_reply(w, ZOK, 0x100000006LL, 0, NULL);
  if (!r) {
    r = fake_wait(NULL, FK_GET, "/b");
    ck_assert_ptr_nonnull(r);
    fake_reply(r, ZOK, 0x100000006LL, 0, "b");
  }
  int a = ev_find(0, EV_DONE, 1), b = ev_find(0, EV_DONE, 2);
  ck_assert_int_ge(a, 0);
  ck_assert_int_gt(b, a);
}
END_TEST

/* aget(/b) then aset(/a): the read, in flight on a follower, must not see
 * the later write - the write waits for it - and completes first. */
START_TEST(session_mode_write_after_read_waits) {
  open3_session();
  ck_assert_int_eq(zkr_aget(z, "/b", 0, done_data, (void *)1), ZOK);
  fake_req_t *r = fake_wait(NULL, FK_GET, "/b");
  ck_assert_ptr_nonnull(r);
  ck_assert_ptr_ne(r->h, h[1]);
  ck_assert_int_eq(zkr_aset(z, "/a", "1", 1, -1, done_stat, (void *)2), ZOK);
  sleep_ms(100);
  ck_assert_msg(fake_peek(h[1], FK_SET, "/a") == NULL,
                "the write went out while an earlier read was in flight");
  fake_reply(r, ZOK, 0x100000005LL, 0, "b");
  fake_req_t *w = fake_wait(h[1], FK_SET, "/a");
  ck_assert_ptr_nonnull(w);
  fake_reply(w, ZOK, 0x100000006LL, 0, NULL);
  int a = ev_find(0, EV_DONE, 1), b = ev_find(0, EV_DONE, 2);
  ck_assert_int_ge(a, 0);
  ck_assert_int_gt(b, a);
}
END_TEST

/* Linearizable mode keeps no FIFO order between a write and a later read
 * of another path (docs/guarantees.md): the read is a sync+read on a
 * follower at once and may complete first.  What it does keep: a read of
 * the path the write changes follows the write on its session. */
START_TEST(linearizable_read_of_another_path_is_not_ordered) {
  open3();
  ck_assert_int_eq(zkr_aset(z, "/a", "1", 1, -1, done_stat, (void *)1), ZOK);
  ck_assert_int_eq(zkr_aget(z, "/b", 0, done_data, (void *)2), ZOK);
  ck_assert_int_eq(zkr_aget(z, "/a", 0, done_data, (void *)3), ZOK);
  fake_req_t *w = fake_wait(h[1], FK_SET, "/a");
  fake_req_t *rb = fake_wait(NULL, FK_GET, "/b");
  fake_req_t *ra = fake_wait(h[1], FK_GET, "/a");
  ck_assert_ptr_nonnull(w);
  ck_assert_ptr_nonnull(rb);
  ck_assert_ptr_nonnull(ra);
  ck_assert_ptr_ne(rb->h, h[1]);
  ck_assert_int_gt(ra->seq, w->seq);
  fake_reply(rb, ZOK, 0x100000005LL, 0, "b");
  ck_assert_int_ge(ev_find(0, EV_DONE, 2), 0);
  ck_assert_int_eq(ev_matching(EV_DONE, 1), 0);
  fake_reply(w, ZOK, 0x100000006LL, 0, NULL);
  fake_reply(ra, ZOK, 0x100000006LL, 0, "1");
  int a = ev_find(0, EV_DONE, 1), c = ev_find(0, EV_DONE, 3);
  ck_assert_int_ge(a, 0);
  ck_assert_int_gt(c, a);
}
END_TEST

/* ---- read-your-writes across a write-session switch ---- */

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

/* Consistency session, one round: a read of /b in flight on a follower
 * (answered with Stat zxid fz), a write of /a waiting for it (FIFO), and a
 * read of path issued behind the write, so it waits in the gate too and
 * then goes to the write session after the write.  Returns whether a sync
 * came on the write session between the write and that read. */
static int gated_read_round(const char *path, int64_t fz, int64_t wz, int tag) {
  ck_assert_int_eq(zkr_aget(z, "/b", 0, done_data, (void *)(intptr_t)tag), ZOK);
  fake_req_t *r0 = fake_wait(NULL, FK_GET, "/b");
  ck_assert_ptr_nonnull(r0);
  ck_assert_ptr_ne(r0->h, h[1]);
  ck_assert_int_eq(zkr_aset(z, "/a", "1", 1, -1, done_stat, (void *)(intptr_t)(tag + 1)), ZOK);
  ck_assert_int_eq(zkr_aget(z, path, 0, done_data, (void *)(intptr_t)(tag + 2)), ZOK);
  sleep_ms(50);
  ck_assert_ptr_null(fake_peek(h[1], FK_SET, "/a"));
  fake_reply(r0, ZOK, fz, fz, "b");
  fake_req_t *w = fake_wait(h[1], FK_SET, "/a");
  fake_req_t *r1 = fake_wait(h[1], FK_GET, path);
  ck_assert_ptr_nonnull(w);
  ck_assert_ptr_nonnull(r1);
  fake_req_t *log[64];
  int kinds[64], synced = 0;
  int n = fake_log(h[1], kinds, log, 64);
  for (int i = 0; i < n && i < 64; i++)
    if (kinds[i] == FK_SYNC && log[i]->seq > w->seq && log[i]->seq < r1->seq) synced = 1;
  fake_reply(w, ZOK, wz, wz, NULL);
  fake_req_t *sy;
  while ((sy = fake_peek(h[1], FK_SYNC, NULL))) fake_reply(sy, ZOK, 0, 0, NULL);
  fake_reply(r1, ZOK, wz, wz, "v");
  ck_assert_int_ge(ev_find(0, EV_DONE, tag + 2), 0);
  return synced;
}

/* Such a read was always synced; now only where the write session has not
 * shown the highest zxid the handle saw: the first time
 * (that zhandle never synced), not the second (the leader's session showed
 * the first write's zxid; the follower's read showed less), again when the
 * follower's read showed a zxid the leader's session has not shown (the
 * write before the read, still in flight, may come before it), and not
 * after that. */
START_TEST(session_mode_gated_read_syncs_only_where_needed) {
  open3_session();
  ck_assert_int_eq(gated_read_round("/c", 0x100000005LL, 0x100000006LL, 10), 1);
  ck_assert_int_eq(gated_read_round("/c", 0x100000005LL, 0x100000007LL, 20), 0);
  ck_assert_int_eq(gated_read_round("/c", 0x100000009LL, 0x10000000aLL, 30), 1);
  ck_assert_int_eq(gated_read_round("/c", 0x100000008LL, 0x10000000bLL, 40), 0);
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("reads");
  TCase *tc = tcase_create("fake");
  tcase_set_timeout(tc, 30);
  tcase_add_checked_fixture(tc, NULL, teardown);
  tcase_add_test(tc, member_of_an_older_epoch_serves_no_read);
  tcase_add_test(tc, reply_zxid_raises_the_epoch_floor);
  tcase_add_test(tc, deposed_leader_claim_is_not_the_leader);
  tcase_add_test(tc, session_mode_read_after_write_in_issue_order);
  tcase_add_test(tc, session_mode_watch_event_after_its_held_read);
  tcase_add_test(tc, session_mode_resumed_read_waits_for_the_held_ones_before_it);
  tcase_add_test(tc, session_mode_watch_set_again_behind_a_write_stays_set);
  tcase_add_test(tc, session_mode_pair_set_again_behind_a_write_gets_session_events);
  tcase_add_test(tc, session_mode_pair_set_again_behind_a_write_keeps_its_place);
  tcase_add_test(tc, session_mode_watch_removal_completes_in_issue_order);
  tcase_add_test(tc, session_mode_held_watch_removal_leaves_pairs_their_session_events);
  tcase_add_test(tc, session_mode_held_watch_removal_leaves_pairs_their_path_events);
  tcase_add_test(tc, session_mode_pair_fired_before_a_held_removal_gets_no_session_event);
  tcase_add_test(tc,
                 session_mode_pair_of_a_held_removal_gets_session_events_after_its_carrier_closed);
  tcase_add_test(tc, session_mode_event_after_a_held_read_that_set_the_watch_again);
  tcase_add_test(tc, session_mode_other_pairs_event_after_a_held_read_that_set_a_watch_again);
  tcase_add_test(tc, session_mode_pair_removed_while_its_read_is_held_gets_no_session_event);
  tcase_add_test(tc,
                 session_mode_pair_removed_by_the_first_of_two_calls_gets_no_later_session_event);
  tcase_add_test(tc, session_mode_held_removal_keeps_the_pair_when_its_session_goes);
  tcase_add_test(tc, session_mode_failed_held_removal_leaves_its_pairs_to_the_next);
  tcase_add_test(tc, session_mode_held_removal_makes_the_event_a_held_read_proves);
  tcase_add_test(tc, session_mode_pairs_take_their_places_in_completion_order);
  tcase_add_test(
      tc, session_mode_pair_set_again_elsewhere_while_its_read_is_held_gets_no_session_event);
  tcase_add_test(tc, session_mode_write_after_read_waits);
  tcase_add_test(tc, linearizable_read_of_another_path_is_not_ordered);
  tcase_add_test(tc, ordered_read_after_switch_is_synced);
  tcase_add_test(tc, ordered_read_same_session_not_synced);
  tcase_add_test(tc, session_mode_gated_read_syncs_only_where_needed);
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
