/* Server-less unit tests of host names in the connect string (resolve.c,
 * membership.c; docs/dropin.md "Host names"): a name stands for every
 * address it resolves to, one member each, and the names are resolved
 * again every resolve_ms - an address that appears gets a member, one
 * that disappears is retired, a failed lookup changes nothing.  The
 * ZooKeeper and the DNS are the fakes of tests/harness/fakezk.c, whose
 * "addresses" are the fake servers fake1..fake8. */
#include <check.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fakezk.h"
#include "zkroute.h"

static uint64_t now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

static void sleep_ms(int ms) {
  nanosleep(&(struct timespec){ms / 1000, (ms % 1000) * 1000000L}, NULL);
}

static zkr_t *open_handle(const char *hosts, int want_rc) {
  zkr_options_t o = ZKR_OPTIONS_INIT;
  zkr_t *z = NULL;
  ck_assert_int_eq(zkr_options_set(&o, "leader_poll_ms", "20"), ZOK);
  ck_assert_int_eq(zkr_options_set(&o, "idle_poll_ms", "20"), ZOK); /* one rate */
  ck_assert_int_eq(zkr_options_set(&o, "resolve_ms", "30"), ZOK);
  ck_assert_int_eq(zkr_options_set(&o, "follow_config", "off"), ZOK);
  ck_assert_int_eq(zkr_options_set(&o, "hedge", "off"), ZOK);
  ck_assert_int_eq(zkr_init_opts(&z, hosts, NULL, 30000, NULL, NULL, 0, &o), want_rc);
  return z;
}

/* The members not retired, as "fake1:2181,fake3:2181" in slot order. */
static void live_members(zkr_t *z, char *buf, size_t len) {
  zkr_stats_t *s;
  size_t off = 0;
  buf[0] = '\0';
  ck_assert_int_eq(zkr_stats(z, &s), ZOK);
  for (int i = 0; i < s->n_members; i++)
    if (!s->members[i].removed)
      off += (size_t)snprintf(buf + off, len - off, "%s%s", off ? "," : "", s->members[i].address);
  zkr_stats_free(s);
}

/* Waits up to 5 s for the live members to be want. */
static int members_become(zkr_t *z, const char *want) {
  char got[512];
  uint64_t deadline = now_ms() + 5000;
  do {
    live_members(z, got, sizeof got);
    if (strcmp(got, want) == 0) return 1;
    sleep_ms(10);
  } while (now_ms() < deadline);
  fprintf(stderr, "members: %s, expected %s\n", got, want);
  return 0;
}

/* Waits up to 5 s for session h to be closed. */
static int closes_within_5s(fake_zh_t *h) {
  uint64_t deadline = now_ms() + 5000;
  while (!fake_handle_closed(h) && now_ms() < deadline) sleep_ms(10);
  return fake_handle_closed(h);
}

static void setup(void) {
  fake_install_dns();
  fake_set_role(1, ZKR_ROLE_LEADER, 1ll << 32);
  for (int n = 2; n <= 4; n++) fake_set_role(n, ZKR_ROLE_FOLLOWER, 1ll << 32);
}

static void teardown(void) { fake_uninstall(); }

START_TEST(name_is_one_member_per_address) {
  fake_set_dns("svc", "fake1,fake2", 0);
  zkr_t *z = open_handle("svc:2181/app", ZOK);
  char got[512];
  live_members(z, got, sizeof got);
  ck_assert_str_eq(got, "fake1:2181,fake2:2181");
  /* One session each, to the address, with the chroot. */
  ck_assert_ptr_nonnull(fake_handle(1, 0));
  ck_assert_ptr_nonnull(fake_handle(2, 0));
  ck_assert_int_eq(fake_handle_count(3), 0);
  ck_assert_int_eq(zkr_close(z), ZOK);
}
END_TEST

START_TEST(addresses_follow_dns) {
  fake_set_dns("svc", "fake1,fake2", 0);
  zkr_t *z = open_handle("svc:2181", ZOK);
  for (int n = 1; n <= 2; n++) fake_connect(fake_handle(n, 0), 0);
  /* A new address: a new member with a session of its own. */
  fake_set_dns("svc", "fake1,fake2,fake3", 0);
  ck_assert(members_become(z, "fake1:2181,fake2:2181,fake3:2181"));
  ck_assert_ptr_nonnull(fake_handle(3, 0));
  fake_connect(fake_handle(3, 0), 0);
  /* fake2 goes: retired, and its idle carrier session closed. */
  fake_set_dns("svc", "fake1,fake3", 0);
  ck_assert(members_become(z, "fake1:2181,fake3:2181"));
  ck_assert(closes_within_5s(fake_handle(2, 0)));
  /* It comes back: the same slot, a new session. */
  fake_set_dns("svc", "fake1,fake2,fake3", 0);
  ck_assert(members_become(z, "fake1:2181,fake2:2181,fake3:2181"));
  ck_assert_ptr_nonnull(fake_handle(2, 1));
  zkr_stats_t *s;
  ck_assert_int_eq(zkr_stats(z, &s), ZOK);
  ck_assert_int_eq(s->n_members, 3); /* no slot was added for fake2 */
  ck_assert_uint_eq(s->members_added, 2);
  ck_assert_uint_eq(s->members_removed, 1);
  zkr_stats_free(s);
  ck_assert_int_eq(zkr_close(z), ZOK);
}
END_TEST

/* What zkr_stats shows while a retired member comes back, taken inside
 * the zookeeper_init of its new session (the fake's init hook): by then
 * the member is live again in the list, and the count of members added
 * must already say so - stats never show a live member that no counter
 * accounts for.  (The ThreadSanitizer stage of a clean-clone CI run
 * failed addresses_follow_dns on this: members_added 1, expected 2.) */
static zkr_t *hook_z;
static _Atomic uint64_t hook_added; /* (set on the monitor's thread) */
static _Atomic int hook_live = -1;  /* ... last: the main thread waits for it */

static void snapshot_in_init(void *arg) {
  (void)arg;
  char got[512];
  live_members(hook_z, got, sizeof got);
  zkr_stats_t *s;
  ck_assert_int_eq(zkr_stats(hook_z, &s), ZOK);
  hook_added = s->members_added;
  zkr_stats_free(s);
  hook_live = strcmp(got, "fake1:2181,fake2:2181") == 0;
}

START_TEST(member_back_is_counted_before_it_is_live) {
  fake_set_dns("svc", "fake1,fake2", 0);
  zkr_t *z = open_handle("svc:2181", ZOK);
  for (int n = 1; n <= 2; n++) fake_connect(fake_handle(n, 0), 0);
  fake_set_dns("svc", "fake1", 0);
  ck_assert(members_become(z, "fake1:2181"));
  ck_assert(closes_within_5s(fake_handle(2, 0)));
  hook_z = z;
  hook_live = -1;
  fake_hook_init(snapshot_in_init, NULL);
  fake_set_dns("svc", "fake1,fake2", 0);
  uint64_t deadline = now_ms() + 5000;
  while (hook_live < 0 && now_ms() < deadline) sleep_ms(10);
  ck_assert_int_ge(hook_live, 0);
  ck_assert_msg(!hook_live || hook_added == 1,
                "fake2 live again with members_added %llu (expected 1: counted before it is live)",
                (unsigned long long)atomic_load(&hook_added));
  ck_assert(members_become(z, "fake1:2181,fake2:2181"));
  ck_assert_int_eq(zkr_close(z), ZOK);
}
END_TEST

/* A lookup that fails keeps what the name had: a DNS hiccup takes no
 * member away. */
START_TEST(failed_lookup_changes_nothing) {
  fake_set_dns("svc", "fake1,fake2", 0);
  zkr_t *z = open_handle("svc:2181", ZOK);
  fake_set_dns("svc", "", 0);
  int calls = fake_dns_calls();
  uint64_t deadline = now_ms() + 5000;
  while (fake_dns_calls() < calls + 5 && now_ms() < deadline) sleep_ms(10);
  ck_assert_int_ge(fake_dns_calls(), calls + 5);
  char got[512];
  live_members(z, got, sizeof got);
  ck_assert_str_eq(got, "fake1:2181,fake2:2181");
  ck_assert_int_eq(zkr_close(z), ZOK);
}
END_TEST

/* A name that did not resolve at init is skipped, as stock skips it, and
 * joins once it resolves; nothing resolving at all is an error. */
START_TEST(late_name_joins) {
  fake_set_dns("svc", "fake1", 0);
  ck_assert_ptr_null(open_handle("nope:2181", ZKR_EHOSTS_UNRESOLVED));
  zkr_t *z = open_handle("svc:2181,nope:2181", ZOK);
  char got[512];
  live_members(z, got, sizeof got);
  ck_assert_str_eq(got, "fake1:2181");
  fake_set_dns("nope", "fake4", 0);
  ck_assert(members_become(z, "fake1:2181,fake4:2181"));
  ck_assert_int_eq(zkr_close(z), ZOK);
}
END_TEST

/* Two names sharing an address: it stays while either has it. */
START_TEST(shared_address_stays) {
  fake_set_dns("a", "fake1,fake2", 0);
  fake_set_dns("b", "fake2,fake3", 0);
  zkr_t *z = open_handle("a:2181,b:2181", ZOK);
  char got[512];
  live_members(z, got, sizeof got);
  ck_assert_str_eq(got, "fake1:2181,fake2:2181,fake3:2181");
  fake_set_dns("a", "fake1", 0);
  int calls = fake_dns_calls();
  uint64_t deadline = now_ms() + 5000;
  while (fake_dns_calls() < calls + 6 && now_ms() < deadline) sleep_ms(10);
  live_members(z, got, sizeof got);
  ck_assert_str_eq(got, "fake1:2181,fake2:2181,fake3:2181");
  fake_set_dns("b", "fake3", 0);
  ck_assert(members_become(z, "fake1:2181,fake3:2181"));
  ck_assert_int_eq(zkr_close(z), ZOK);
}
END_TEST

/* The address of the member holding the application's session goes away
 * while its server still serves the session: the member is retired (no
 * more reads), and the owner's session-scoped writes still go to it at
 * once - parking them until the session moves would stall them while
 * nothing is wrong with the session. */
static int create_done, create_rc;
static void create_cb(int rc, const char *value, const void *data) {
  (void)value;
  (void)data;
  create_rc = rc;
  __atomic_store_n(&create_done, 1, __ATOMIC_SEQ_CST);
}

START_TEST(owner_member_retired_keeps_session_writes) {
  fake_set_dns("svc", "fake1,fake2", 0);
  zkr_t *z = open_handle("svc:2181", ZOK);
  fake_connect(fake_handle(1, 0), 0);
  fake_connect(fake_handle(2, 0), 0);
  zkr_stats_t *s;
  int owner = -1;
  uint64_t deadline = now_ms() + 5000;
  while (owner < 0 && now_ms() < deadline) {
    ck_assert_int_eq(zkr_stats(z, &s), ZOK);
    owner = s->owner;
    zkr_stats_free(s);
    if (owner < 0) sleep_ms(10);
  }
  ck_assert_int_ge(owner, 0);
  ck_assert_int_le(owner, 1);
  fake_zh_t *oh = fake_handle(owner + 1, 0);
  fake_set_dns("svc", owner == 0 ? "fake2" : "fake1", 0);
  ck_assert(members_become(z, owner == 0 ? "fake2:2181" : "fake1:2181"));
  create_done = 0;
  ck_assert_int_eq(
      zkr_acreate(z, "/e", "x", 1, &ZOO_OPEN_ACL_UNSAFE, ZOO_EPHEMERAL, create_cb, NULL), ZOK);
  fake_req_t *r = fake_wait(oh, FK_CREATE, "/e");
  ck_assert_ptr_nonnull(r);
  fake_reply(r, ZOK, 5, 5, NULL);
  deadline = now_ms() + 5000;
  while (!__atomic_load_n(&create_done, __ATOMIC_SEQ_CST) && now_ms() < deadline) sleep_ms(5);
  ck_assert_int_eq(create_done, 1);
  ck_assert_int_eq(create_rc, ZOK);
  /* The retired member's session stays: it is the application's. */
  ck_assert_int_eq(fake_handle_closed(oh), 0);
  ck_assert_int_eq(zkr_close(z), ZOK);
}
END_TEST

/* Addresses in the connect string are never looked up, so a list of
 * addresses never starts a resolution round. */
START_TEST(addresses_are_not_resolved) {
  /* A name the fake DNS does not know: looked up, once. */
  ck_assert_ptr_null(open_handle("fake1:2181", ZKR_EHOSTS_UNRESOLVED));
  ck_assert_int_eq(fake_dns_calls(), 1);
  /* Addresses: no lookup (the fake ZooKeeper then refuses the sessions,
   * which only have fake names). */
  ck_assert_ptr_null(open_handle("127.0.9.1:2181,[::1]:2181", ZKR_EINIT));
  ck_assert_int_eq(fake_dns_calls(), 1);
}
END_TEST

/* zkr_close never waits for a slow DNS: the round's thread finishes on
 * its own. */
START_TEST(close_does_not_wait_for_dns) {
  fake_set_dns("svc", "fake1,fake2", 0);
  zkr_t *z = open_handle("svc:2181", ZOK);
  fake_set_dns("svc", "fake1,fake2", 2000);
  int calls = fake_dns_calls();
  uint64_t deadline = now_ms() + 5000;
  while (fake_dns_calls() == calls && now_ms() < deadline) sleep_ms(5);
  ck_assert_int_gt(fake_dns_calls(), calls); /* a round is in its lookup */
  uint64_t t0 = now_ms();
  ck_assert_int_eq(zkr_close(z), ZOK);
  ck_assert_uint_lt(now_ms() - t0, 1000);
  sleep_ms(2200); /* the round ends and frees itself (valgrind, ASan) */
}
END_TEST

int main(void) {
  Suite *s = suite_create("resolve");
  TCase *tc = tcase_create("dns");
  tcase_set_timeout(tc, 30);
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_add_test(tc, name_is_one_member_per_address);
  tcase_add_test(tc, addresses_follow_dns);
  tcase_add_test(tc, member_back_is_counted_before_it_is_live);
  tcase_add_test(tc, failed_lookup_changes_nothing);
  tcase_add_test(tc, late_name_joins);
  tcase_add_test(tc, shared_address_stays);
  tcase_add_test(tc, owner_member_retired_keeps_session_writes);
  tcase_add_test(tc, addresses_are_not_resolved);
  tcase_add_test(tc, close_does_not_wait_for_dns);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
