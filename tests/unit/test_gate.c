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
 * the next leader change, writes reach the new leader instead of parking
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

static Suite *suite(void) {
  Suite *s = suite_create("gate");
  TCase *tc = tcase_create("fake");
  tcase_set_timeout(tc, 30);
  tcase_add_checked_fixture(tc, NULL, teardown);
  tcase_add_test(tc, barrier_releases_write_gate);
  tcase_add_test(tc, barrier_after_ephemeral_releases_gate);
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
