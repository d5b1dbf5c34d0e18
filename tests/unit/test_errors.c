/* Server-less unit tests of the error codes the application gets: only
 * what a stock session would give in the same situation (DESIGN.md
 * section 4).  A member detached between the pick and the dispatch is
 * routing's business, not the application's; a carrier's session trouble
 * is a connection loss while the virtual session is CONNECTED; an ACL the
 * server must judge goes to the server.  Driven through the function table
 * by the fake ZooKeeper (tests/harness/fakefix.h). */
#include <check.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fakefix.h"
#include "core/handle.h"
#include "core/member.h"
#include "zk/zkapi.h"

/* ---- a member detached between the pick and the dispatch ---- */

/* fake2's zhandle is gone from its slot, though the slot still reads as
 * usable: what a read sees that picked fake2 just before a rescue or a
 * carrier's re-creation detached its zhandle, and dispatches just after.
 * The read selector makes the pick fake2. */
static int pick_fake2(const zkr_member_info_t *members, int n, void *ctx) {
  (void)ctx;
  for (int i = 0; i < n; i++)
    if (members[i].index == 1) return i;
  return -1;
}

START_TEST(detached_member_is_not_the_applications_error) {
  open3();
  zkr__member_t *m = &z->members[1];
  zhandle_t *old = zkr__member_detach(m, 0);
  ck_assert_ptr_nonnull(old);
  m->state = ZOO_CONNECTED_STATE;
  m->joined = 1;
  ck_assert_int_eq(zkr_set_read_selector(z, pick_fake2, NULL), ZOK);
  int rc = zkr_aget(z, "/d", 0, done_data, (void *)1);
  ck_assert_msg(rc == ZOK, "zkr_aget returned %d (%s)", rc, zkr_strerror(rc));
  /* The detach completes (the slot reads as down), and the read goes
   * elsewhere at the next occasion. */
  m->joined = 0;
  m->state = ZOO_NOTCONNECTED_STATE;
  ck_assert_int_eq(zkr_set_read_selector(z, NULL, NULL), ZOK);
  fake_session_event(h[3], ZOO_CONNECTED_STATE);
  fake_req_t *g = fake_wait(NULL, FK_GET, "/d");
  ck_assert_ptr_nonnull(g);
  fake_reply(g, ZOK, 5, 5, "a");
  int d = ev_find(0, EV_DONE, 1);
  ck_assert_int_ge(d, 0);
  ck_assert_int_eq(ev_at(d).rc, ZOK);
  zkr__zk->zookeeper_close(old);
}
END_TEST

/* ---- a carrier's session trouble ---- */

/* A carrier's session expired under a read (ZooKeeper completes it with
 * ZSESSIONEXPIRED) while the owner - the application's session - is
 * fine: the read's outcome is a lost connection, as a stock session that
 * moves to another server reports it; the state stays CONNECTED. */
START_TEST(carrier_expiry_is_a_connection_loss) {
  open3();
  ck_assert_int_eq(zkr_aget(z, "/e", 0, done_data, (void *)1), ZOK);
  fake_req_t *g = fake_wait(NULL, FK_GET, "/e");
  ck_assert_ptr_nonnull(g);
  ck_assert_ptr_ne(g->h, h[1]);
  fake_reply(g, ZSESSIONEXPIRED, 0, 0, NULL);
  int d = ev_find(0, EV_DONE, 1);
  ck_assert_int_ge(d, 0);
  ck_assert_int_eq(ev_at(d).rc, ZCONNECTIONLOSS);
  ck_assert_int_eq(zkr_state(z), ZOO_CONNECTED_STATE);
}
END_TEST

START_TEST(carrier_auth_failure_reply_is_a_connection_loss) {
  open3();
  ck_assert_int_eq(zkr_aget(z, "/e", 0, done_data, (void *)1), ZOK);
  fake_req_t *g = fake_wait(NULL, FK_GET, "/e");
  ck_assert_ptr_nonnull(g);
  ck_assert_ptr_ne(g->h, h[1]);
  fake_reply(g, ZAUTHFAILED, 0, 0, NULL);
  int d = ev_find(0, EV_DONE, 1);
  ck_assert_int_ge(d, 0);
  ck_assert_int_eq(ev_at(d).rc, ZCONNECTIONLOSS);
}
END_TEST

/* ---- an ACL the server judges ---- */

/* Stock sends a NULL ACL as an empty one (CreateRequest_init), and the
 * server answers ZINVALIDACL through the completion. */
START_TEST(null_or_empty_acl_goes_to_the_server) {
  open3();
  struct ACL_vector empty = {0, NULL};
  ck_assert_int_eq(zkr_acreate(z, "/n", "", 0, NULL, 0, done_string, (void *)1), ZOK);
  ck_assert_int_eq(zkr_acreate(z, "/m", "", 0, &empty, 0, done_string, (void *)2), ZOK);
  ck_assert_int_eq(zkr_aset_acl(z, "/n", -1, &empty, done_void, (void *)3), ZOK);
  fake_req_t *c1 = fake_wait(h[1], FK_CREATE, "/n");
  fake_req_t *c2 = fake_wait(h[1], FK_CREATE, "/m");
  fake_req_t *c3 = fake_wait(h[1], FK_SETACL, "/n");
  ck_assert_ptr_nonnull(c1);
  ck_assert_ptr_nonnull(c2);
  ck_assert_ptr_nonnull(c3);
  fake_reply(c1, ZINVALIDACL, 0, 0, NULL);
  fake_reply(c2, ZINVALIDACL, 0, 0, NULL);
  fake_reply(c3, ZINVALIDACL, 0, 0, NULL);
  for (int t = 1; t <= 3; t++) {
    int d = ev_find(0, EV_DONE, t);
    ck_assert_int_ge(d, 0);
    ck_assert_int_eq(ev_at(d).rc, ZINVALIDACL);
  }
  /* A malformed one (an entry without scheme) is refused at once: it
   * cannot even be sent. */
  struct ACL bad_entry = {ZOO_PERM_ALL, {NULL, "anyone"}};
  struct ACL_vector bad = {1, &bad_entry};
  ck_assert_int_eq(zkr_acreate(z, "/b", "", 0, &bad, 0, done_string, (void *)4), ZINVALIDACL);
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("errors");
  TCase *tc = tcase_create("fake");
  tcase_set_timeout(tc, 30);
  tcase_add_checked_fixture(tc, NULL, teardown);
  tcase_add_test(tc, detached_member_is_not_the_applications_error);
  tcase_add_test(tc, carrier_expiry_is_a_connection_loss);
  tcase_add_test(tc, carrier_auth_failure_reply_is_a_connection_loss);
  tcase_add_test(tc, null_or_empty_acl_goes_to_the_server);
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
