/* Unit tests (no server) of the options table and setter, the error names
 * and texts, and the handle-free argument checks of the public API. */
#include <check.h>
#include <string.h>

#include "zkroute.h"

START_TEST(set_every_option) {
  zkr_options_t o = ZKR_OPTIONS_INIT;
  ck_assert_int_eq(zkr_options_set(&o, "policy", "round_robin"), ZOK);
  ck_assert_int_eq(o.policy, ZKR_POLICY_ROUND_ROBIN);
  ck_assert_int_eq(zkr_options_set(&o, "policy", "STICKY"), ZOK);
  ck_assert_int_eq(o.policy, ZKR_POLICY_STICKY);
  ck_assert_int_eq(zkr_options_set(&o, "consistency", "local"), ZOK);
  ck_assert_int_eq(o.consistency, ZKR_CONSISTENCY_LOCAL);
  ck_assert_int_eq(zkr_options_set(&o, "leader_poll_ms", "250"), ZOK);
  ck_assert_int_eq(o.leader_poll_ms, 250);
  ck_assert_int_eq(zkr_options_set(&o, "eject_ratio", "2.5"), ZOK);
  ck_assert(o.eject_ratio == 2.5);
  ck_assert_int_eq(zkr_options_set(&o, "read_from_leader", "on"), ZOK);
  ck_assert_int_eq(o.read_from_leader, 1);
  ck_assert_int_eq(zkr_options_set(&o, "health", "off"), ZOK);
  ck_assert_int_eq(o.health, -1);
  /* Every documented option can be set to its own default. */
  const char *name, *doc;
  double def;
  int n = 0;
  for (int i = 0; zkr_option_info(i, &name, &doc, &def) == ZOK; i++, n++) {
    ck_assert_ptr_nonnull(doc);
    ck_assert_int_ne(zkr_options_set(&o, name, "nonsense"), ZKR_EOPTION);
  }
  ck_assert_int_ge(n, 15);
}
END_TEST

START_TEST(reject_bad_options) {
  zkr_options_t o = ZKR_OPTIONS_INIT;
  ck_assert_int_eq(zkr_options_set(&o, "no_such", "1"), ZKR_EOPTION);
  ck_assert_int_eq(zkr_options_set(&o, "policy", "fastest"), ZKR_EOPTION_VALUE);
  ck_assert_int_eq(zkr_options_set(&o, "leader_poll_ms", "10x"), ZKR_EOPTION_VALUE);
  ck_assert_int_eq(zkr_options_set(&o, "leader_poll_ms", ""), ZKR_EOPTION_VALUE);
  ck_assert_int_eq(zkr_options_set(&o, "leader_poll_ms", "-5"), ZKR_EOPTION_VALUE);
  ck_assert_int_eq(zkr_options_set(&o, "leader_poll_ms", "99999999999"), ZKR_EOPTION_VALUE);
  ck_assert_int_eq(zkr_options_set(&o, "eject_ratio", "nan"), ZKR_EOPTION_VALUE);
  ck_assert_int_eq(zkr_options_set(&o, "eject_ratio", "0.5"), ZKR_EOPTION_VALUE);
  ck_assert_int_eq(zkr_options_set(&o, "health", "maybe"), ZKR_EOPTION_VALUE);
  ck_assert_int_eq(zkr_options_set(NULL, "policy", "hybrid"), ZBADARGUMENTS);
  ck_assert_int_eq(zkr_options_set(&o, NULL, "x"), ZBADARGUMENTS);
  ck_assert_int_eq(zkr_options_set(&o, "policy", NULL), ZBADARGUMENTS);
  /* Nothing was changed by the failures. */
  ck_assert_int_eq(o.policy, 0);
  ck_assert_int_eq(o.leader_poll_ms, 0);
}
END_TEST

START_TEST(init_checks_arguments) {
  zkr_t *z = (zkr_t *)1;
  ck_assert_int_eq(zkr_init_opts(&z, NULL, NULL, 1000, NULL, NULL, 0, NULL), ZBADARGUMENTS);
  ck_assert_int_eq(zkr_init_opts(&z, "", NULL, 1000, NULL, NULL, 0, NULL), ZKR_EHOSTS_EMPTY);
  ck_assert_ptr_null(z);
  ck_assert_int_eq(zkr_init_opts(&z, "a:0", NULL, 1000, NULL, NULL, 0, NULL), ZKR_EHOSTS_BAD_PORT);
  zkr_options_t o = ZKR_OPTIONS_INIT;
  o.leader_poll_ms = 1; /* below the range */
  ck_assert_int_eq(zkr_init_opts(&z, "a:1", NULL, 1000, NULL, NULL, 0, &o), ZKR_EOPTION_VALUE);
  o.version = 99;
  ck_assert_int_eq(zkr_init_opts(&z, "a:1", NULL, 1000, NULL, NULL, 0, &o), ZKR_EOPTIONS_VERSION);
  ck_assert_ptr_null(zkr_init("h:1,h:1", NULL, 1000, NULL, NULL, 0));
}
END_TEST

START_TEST(null_handle_everywhere) {
  char buf[4];
  int len = sizeof buf;
  struct String_vector sv;
  ck_assert_int_eq(zkr_close(NULL), ZBADARGUMENTS);
  ck_assert_int_eq(zkr_state(NULL), 0);
  ck_assert_ptr_null(zkr_client_id(NULL));
  ck_assert_int_eq(zkr_get(NULL, "/a", 0, buf, &len, NULL), ZBADARGUMENTS);
  ck_assert_int_eq(zkr_set(NULL, "/a", "x", 1, -1), ZBADARGUMENTS);
  ck_assert_int_eq(zkr_create(NULL, "/a", "x", 1, &ZOO_OPEN_ACL_UNSAFE, 0, NULL, 0), ZBADARGUMENTS);
  ck_assert_int_eq(zkr_delete(NULL, "/a", -1), ZBADARGUMENTS);
  ck_assert_int_eq(zkr_get_children(NULL, "/", 0, &sv), ZBADARGUMENTS);
  ck_assert_int_eq(zkr_add_auth(NULL, "digest", "a:b", 3, NULL, NULL), ZBADARGUMENTS);
  zkr_stats_t *s;
  ck_assert_int_eq(zkr_stats(NULL, &s), ZBADARGUMENTS);
  zkr_stats_free(NULL);
}
END_TEST

START_TEST(error_names_and_texts) {
  ck_assert_str_eq(zkr_err_name(ZKR_EHOSTS_BAD_PORT), "ZKR_EHOSTS_BAD_PORT");
  ck_assert_str_eq(zkr_err_name(ZCONNECTIONLOSS), "ZCONNECTIONLOSS");
  ck_assert_str_eq(zkr_err_name(12345), "UNKNOWN");
  ck_assert_str_eq(zkr_strerror(ZKR_EINCALLBACK), "zkroute call made from inside a read selector");
  for (int c = -2000; c <= 10; c++) {
    ck_assert_ptr_nonnull(zkr_strerror(c));
    ck_assert_ptr_nonnull(zkr_err_name(c));
  }
  ck_assert_str_eq(zkr_role_name(ZKR_ROLE_FOLLOWER), "follower");
  ck_assert_str_eq(zkr_policy_name(0), "hybrid");
  ck_assert_str_eq(zkr_policy_name(ZKR_POLICY_STICKY), "sticky");
}
END_TEST

START_TEST(zones_and_leader_weight_options) {
  zkr_options_t o = ZKR_OPTIONS_INIT;
  ck_assert_int_eq(zkr_options_set(&o, "leader_read_weight", "0.33"), ZOK);
  ck_assert(o.leader_read_weight == 0.33);
  ck_assert_int_eq(zkr_options_set(&o, "leader_read_weight", "1.5"), ZKR_EOPTION_VALUE);
  ck_assert_int_eq(zkr_options_set(&o, "leader_read_weight", "-0.1"), ZKR_EOPTION_VALUE);
  ck_assert_int_eq(zkr_options_set(&o, "zones", "a,a,b"), ZOK);
  ck_assert_str_eq(o.zones, "a,a,b");
  ck_assert_int_eq(zkr_options_set(&o, "zones", "h1:2181=eu-1,[::1]:2182=us.2"), ZOK);
  ck_assert_str_eq(o.zones, "h1:2181=eu-1,[::1]:2182=us.2");
  ck_assert_int_eq(zkr_options_set(&o, "local_zone", "eu-1"), ZOK);
  ck_assert_str_eq(o.local_zone, "eu-1");
  /* Strict syntax: each refusal leaves the old value. */
  const char *bad[] = {"a,,b",
                       "a,",
                       ",a",
                       "a b",
                       "h1:2181=",
                       "=a",
                       "h:1=a=b",
                       "h:1=a,b" /* mixed forms */,
                       "a,h:1=b",
                       "a/b",
                       "0123456789012345678901234567890123" /* label > 31 */};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
    ck_assert_int_eq(zkr_options_set(&o, "zones", bad[i]), ZKR_EOPTION_VALUE);
  ck_assert_str_eq(o.zones, "h1:2181=eu-1,[::1]:2182=us.2");
  char huge[2000];
  memset(huge, 'a', sizeof huge - 1);
  huge[sizeof huge - 1] = '\0';
  ck_assert_int_eq(zkr_options_set(&o, "zones", huge), ZKR_EOPTION_VALUE);
  ck_assert_int_eq(zkr_options_set(&o, "local_zone", "a,b"), ZKR_EOPTION_VALUE);
  ck_assert_int_eq(zkr_options_set(&o, "local_zone", "a=b"), ZKR_EOPTION_VALUE);
  ck_assert_int_eq(zkr_options_set(&o, "zones", ""), ZOK); /* none */
  ck_assert_str_eq(o.zones, "");
  /* The zones must fit the host list; checked before any session opens.
   * Addresses, so that nothing is resolved (names are: docs/dropin.md). */
  zkr_t *z = (zkr_t *)1;
  const char *hosts = "127.0.9.1:2181,127.0.9.2:2181,127.0.9.3:2181";
  zkr_options_set(&o, "zones", "a,b");
  ck_assert_int_eq(zkr_init_opts(&z, hosts, NULL, 1000, NULL, NULL, 0, &o), ZKR_EZONES_COUNT);
  zkr_options_set(&o, "zones", "a,b,c,d");
  ck_assert_int_eq(zkr_init_opts(&z, hosts, NULL, 1000, NULL, NULL, 0, &o), ZKR_EZONES_COUNT);
  zkr_options_set(&o, "zones", "127.0.9.1:2181=a,127.0.9.4:2181=b");
  ck_assert_int_eq(zkr_init_opts(&z, hosts, NULL, 1000, NULL, NULL, 0, &o), ZKR_EZONES_MEMBER);
  zkr_options_set(&o, "zones", "127.0.9.1:2181=a,127.0.9.2:2182=b");
  ck_assert_int_eq(zkr_init_opts(&z, hosts, NULL, 1000, NULL, NULL, 0, &o), ZKR_EZONES_MEMBER);
  zkr_options_set(&o, "zones", "127.0.9.1:2181=a,127.0.9.1:02181=b");
  ck_assert_int_eq(zkr_init_opts(&z, hosts, NULL, 1000, NULL, NULL, 0, &o), ZKR_EZONES_DUPLICATE);
  ck_assert_ptr_null(z);
  /* A struct filled by hand gets the same syntax check. */
  zkr_options_t h = ZKR_OPTIONS_INIT;
  strcpy(h.zones, "a,,b");
  ck_assert_int_eq(zkr_init_opts(&z, hosts, NULL, 1000, NULL, NULL, 0, &h), ZKR_EOPTION_VALUE);
  memset(h.zones, 'a', sizeof h.zones); /* not terminated */
  ck_assert_int_eq(zkr_init_opts(&z, hosts, NULL, 1000, NULL, NULL, 0, &h), ZKR_EOPTION_VALUE);
  ck_assert_str_eq(zkr_err_name(ZKR_EZONES_MEMBER), "ZKR_EZONES_MEMBER");
}
END_TEST

int main(void) {
  Suite *s = suite_create("options");
  TCase *tc = tcase_create("pure");
  tcase_set_timeout(tc, 10);
  tcase_add_test(tc, set_every_option);
  tcase_add_test(tc, reject_bad_options);
  tcase_add_test(tc, init_checks_arguments);
  tcase_add_test(tc, null_handle_everywhere);
  tcase_add_test(tc, error_names_and_texts);
  tcase_add_test(tc, zones_and_leader_weight_options);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? 1 : 0;
}
