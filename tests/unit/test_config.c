/* Unit tests of the /zookeeper/config parser (zkroute/model/dynconfig.c).  Pure
 * code, no server: real replies of ZooKeeper 3.8.0 (tests/harness/ensemble.sh
 * ensembles), the corners of the grammar, and inputs that must be refused. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "model/dynconfig.h"
#include "zkroute.h"

static int parse(const char *s, zkr__config_t *c) { return zkr__dynconfig_parse(s, strlen(s), c); }

START_TEST(real_reply) {
  /* What a 3 voters + 1 observer ensemble of ensemble.sh serves. */
  const char *s = "server.1=127.0.23.1:2888:3888:participant;127.0.23.1:2181\n"
                  "server.2=127.0.23.2:2888:3888:participant;127.0.23.2:2181\n"
                  "server.3=127.0.23.3:2888:3888:participant;127.0.23.3:2181\n"
                  "server.4=127.0.23.4:2888:3888:observer;127.0.23.4:2181\n"
                  "version=100000000";
  zkr__config_t c;
  ck_assert_int_eq(parse(s, &c), ZOK);
  ck_assert_uint_eq(c.n, 4);
  ck_assert_int_eq(c.version, 0x100000000LL);
  for (int i = 0; i < 4; i++) {
    ck_assert_int_eq(c.v[i].id, i + 1);
    ck_assert_int_eq(c.v[i].observer, i == 3);
    ck_assert_int_eq(c.v[i].has_client, 1);
    ck_assert_int_eq(c.v[i].client.port, 2181);
    ck_assert_int_eq(c.v[i].quorum.port, 2888);
  }
  ck_assert_str_eq(c.v[3].client.name, "127.0.23.4");
}
END_TEST

START_TEST(client_forms) {
  zkr__config_t c;
  /* Only a port, and a wildcard host: the quorum host. */
  ck_assert_int_eq(parse("server.1=a.example:2888:3888;2181\n"
                         "server.2=b:2888:3888;0.0.0.0:2182\n"
                         "server.3=[::1]:2888:3888;[::]:2183\n"
                         "server.4=d:2888:3888;[fe80::1]:2184\n"
                         "server.5=e:2888:3888\n",
                         &c),
                   ZOK);
  ck_assert_uint_eq(c.n, 5);
  ck_assert_int_eq(c.version, -1);
  ck_assert_str_eq(c.v[0].client.name, "a.example");
  ck_assert_int_eq(c.v[0].client.port, 2181);
  ck_assert_str_eq(c.v[1].client.name, "b");
  ck_assert_int_eq(c.v[1].client.port, 2182);
  ck_assert_str_eq(c.v[2].client.name, "::1");
  ck_assert_int_eq(c.v[2].client.ipv6, 1);
  ck_assert_str_eq(c.v[3].client.name, "fe80::1");
  ck_assert_int_eq(c.v[4].has_client, 0);
  ck_assert_int_eq(c.v[4].observer, 0);
}
END_TEST

START_TEST(multi_address_and_groups) {
  zkr__config_t c;
  ck_assert_int_eq(parse("server.1=h1:2888:3888:observer|h1b:2889:3889:observer;h1:2181\n"
                         "group.1=1:2\nweight.1=1\nweight.2=1\n"
                         "server.2=h2:2888:3888;2181\n\nversion=aB\n",
                         &c),
                   ZOK);
  ck_assert_uint_eq(c.n, 2);
  ck_assert_int_eq(c.v[0].observer, 1);
  ck_assert_str_eq(c.v[0].quorum.name, "h1");
  ck_assert_int_eq(c.version, 0xab);
  /* Empty input: no servers, no version. */
  ck_assert_int_eq(zkr__dynconfig_parse("", 0, &c), ZOK);
  ck_assert_uint_eq(c.n, 0);
  ck_assert_int_eq(zkr__dynconfig_parse(NULL, 0, &c), ZOK);
  ck_assert_int_eq(zkr__dynconfig_parse(NULL, 1, &c), ZBADARGUMENTS);
  ck_assert_int_eq(zkr__dynconfig_parse("x", 1, NULL), ZBADARGUMENTS);
}
END_TEST

static const char *const bad[] = {
    "server.1=h:2888:3888;2181\nserver.1=h2:2888:3888;2181", /* duplicate id */
    "version=1\nversion=2",
    "version=",
    "version=xyz",
    "version=1234567890abcdef0", /* too long */
    "server.=h:2888:3888;2181",
    "server.x=h:2888:3888;2181",
    "server.1234567890123456789=h:2888:3888;2181",
    "server.-1=h:2888:3888;2181",
    "server.1=h:2888;2181",
    "server.1=h:2888:3888:leader;2181",
    "server.1=h:2888:3888:participant:x;2181",
    "server.1=h:0:3888;2181",
    "server.1=h:2888:65536;2181",
    "server.1=h:2888:3888;0",
    "server.1=h:2888:3888;",
    "server.1=h:2888:3888;2181;2182",
    "server.1=h:2888:3888;h:",
    "server.1=;2181",
    "server.1=",
    "server.1=[::1:2888:3888;2181",
    "server.1=[::1]2888:3888;2181",
    "server.1=::1:2888:3888;2181",
    "server.1=h/x:2888:3888;2181",
    "server.1=h,i:2888:3888;2181",
    "server.1=h:2888:3888|;2181",
    "server.1=h:2888:3888:observer|i:2888:3888;2181", /* roles differ */
    "server.1=h:2888:3888;[::1]2181",
    "server.1=h:2888:3888 ;2181",
    "server.1=h:2888:3888;2181\r\n",
    "\tversion=1",
    "clientPort=2181",
    "group.1=",
    "weight.x=1",
    "=1",
    "version",
};

START_TEST(refused) {
  zkr__config_t c;
  const char *s = bad[_i];
  ck_assert_msg(parse(s, &c) == ZKR_ECONFIG, "accepted: %s", s);
  ck_assert_uint_eq(c.n, 0);
  ck_assert_int_eq(c.version, -1);
}
END_TEST

START_TEST(limits) {
  zkr__config_t c;
  /* A NUL byte inside, 64 servers, 65, and the length cap. */
  ck_assert_int_eq(zkr__dynconfig_parse("version=1\0", 10, &c), ZKR_ECONFIG);
  char *s = malloc(ZKR__CONFIG_MAX_LEN + 2);
  size_t len = 0;
  for (int i = 1; i <= 65; i++) {
    len += (size_t)sprintf(s + len, "server.%d=h%d:2888:3888;2181\n", i, i);
    if (i == 64) {
      ck_assert_int_eq(zkr__dynconfig_parse(s, len, &c), ZOK);
      ck_assert_uint_eq(c.n, 64);
    }
  }
  ck_assert_int_eq(zkr__dynconfig_parse(s, len, &c), ZKR_ECONFIG);
  memset(s, '\n', ZKR__CONFIG_MAX_LEN + 1);
  ck_assert_int_eq(zkr__dynconfig_parse(s, ZKR__CONFIG_MAX_LEN, &c), ZOK);
  ck_assert_int_eq(zkr__dynconfig_parse(s, ZKR__CONFIG_MAX_LEN + 1, &c), ZKR_ECONFIG);
  free(s);
}
END_TEST

START_TEST(same_host) {
  zkr__host_t a = {.name = "Host.example", .port = 2181};
  zkr__host_t b = {.name = "host.EXAMPLE", .port = 2181};
  zkr__host_t d = {.name = "host.example", .port = 2182};
  ck_assert(zkr__hosts_equal(&a, &b));
  ck_assert(!zkr__hosts_equal(&a, &d));
}
END_TEST

int main(void) {
  Suite *s = suite_create("config");
  TCase *tc = tcase_create("parse");
  tcase_set_timeout(tc, 10);
  tcase_add_test(tc, real_reply);
  tcase_add_test(tc, client_forms);
  tcase_add_test(tc, multi_address_and_groups);
  tcase_add_loop_test(tc, refused, 0, (int)(sizeof bad / sizeof bad[0]));
  tcase_add_test(tc, limits);
  tcase_add_test(tc, same_host);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? 1 : 0;
}
