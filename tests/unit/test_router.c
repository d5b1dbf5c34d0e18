/* Server-less unit tests of the router (DESIGN.md sections 2 and 4):
 * where each operation goes - an ephemeral create or a multi holding one
 * to the owner session, a TTL create and a reconfiguration to the leader,
 * reads to a read-only server while there is no quorum (and writes
 * refused there as a read-only server refuses them).  Driven through the
 * function table by the fake ZooKeeper (tests/harness/fakefix.h). */
#include <check.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fakefix.h"

/* ---- where writes go: ephemerals to the owner, TTL to the leader ---- */

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

/* ---- reconfiguration goes to the leader ---- */

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

static Suite *suite(void) {
  Suite *s = suite_create("router");
  TCase *tc = tcase_create("fake");
  tcase_set_timeout(tc, 30);
  tcase_add_checked_fixture(tc, NULL, teardown);
  tcase_add_test(tc, ephemerals_go_to_owner_ttl_to_leader);
  tcase_add_test(tc, reconfig_goes_to_leader);
  tcase_add_test(tc, readonly_servers_serve_reads);
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
