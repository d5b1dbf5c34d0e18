/* Unit tests of the host list parser, its expansion into addresses
 * (through a fake resolver) and the formatter (zkroute/model/hosts.c).  Pure
 * code, no server, no DNS: every case asserts the exact code or value.
 * tests/unit/test_hosts_stock.c compares the parser with stock libzookeeper_mt. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/hosts.h"
#include "zkroute.h"

/* Inputs that must be refused, each with the one code that says why.
 * tests/unit/test_hosts_stock.c compares these rules with stock's. */
static const struct {
  const char *in;
  int rc;
} bad[] = {
    {"", ZKR_EHOSTS_EMPTY},
    {"/app", ZKR_EHOSTS_EMPTY},
    {"/", ZKR_EHOSTS_EMPTY},
    {",", ZKR_EHOSTS_EMPTY},
    {",,,/app", ZKR_EHOSTS_EMPTY},
    /* Ports. */
    {"h1:0", ZKR_EHOSTS_BAD_PORT},
    {"h1:00000", ZKR_EHOSTS_BAD_PORT},
    {"h1:65536", ZKR_EHOSTS_BAD_PORT},
    {"h1:70000", ZKR_EHOSTS_BAD_PORT},
    {"h1:99999999999999999999999999", ZKR_EHOSTS_BAD_PORT},
    {"h1:abc", ZKR_EHOSTS_BAD_PORT},
    {"h1:", ZKR_EHOSTS_BAD_PORT},
    {"h1: ", ZKR_EHOSTS_BAD_PORT},
    {"h1:+", ZKR_EHOSTS_BAD_PORT},
    {"h1:++2181", ZKR_EHOSTS_BAD_PORT},
    {"h1:+ 2181", ZKR_EHOSTS_BAD_PORT},
    {"h1:-1", ZKR_EHOSTS_BAD_PORT},
    {"h1:0x10", ZKR_EHOSTS_BAD_PORT},
    {"h1:2181x", ZKR_EHOSTS_BAD_PORT},
    {"h1:2181,h2:0", ZKR_EHOSTS_BAD_PORT},
    {"[::1]:", ZKR_EHOSTS_BAD_PORT},
    {"[::1]:65536", ZKR_EHOSTS_BAD_PORT},
    {"h1", ZKR_EHOSTS_NO_PORT},
    {"h1:2181,h2", ZKR_EHOSTS_NO_PORT},
    {"h1/app", ZKR_EHOSTS_NO_PORT},
    {"[::1]", ZKR_EHOSTS_NO_PORT},
    /* White space: only at the start of an entry or of a port. */
    {"h1:2181 ", ZKR_EHOSTS_SPACE},
    {"h1 :2181", ZKR_EHOSTS_SPACE},
    {"h 1:2181", ZKR_EHOSTS_SPACE},
    {"h1:2181\t", ZKR_EHOSTS_SPACE},
    {"h1:2181\n", ZKR_EHOSTS_SPACE},
    {"h1:2181\r\n", ZKR_EHOSTS_SPACE},
    {"h1:21 81", ZKR_EHOSTS_SPACE},
    {"h1:2181 ,h2:2181", ZKR_EHOSTS_SPACE},
    {"[::1]:2181 ", ZKR_EHOSTS_SPACE},
    /* Entries of white space only (empty ones are skipped). */
    {" ", ZKR_EHOSTS_EMPTY_ENTRY},
    {"h1:2181, ", ZKR_EHOSTS_EMPTY_ENTRY},
    {"h1:2181, ,h2:2181", ZKR_EHOSTS_EMPTY_ENTRY},
    {" /app", ZKR_EHOSTS_EMPTY_ENTRY},
    {"\t,h1:2181", ZKR_EHOSTS_EMPTY_ENTRY},
    /* IPv6: a host with ':' must be one. */
    {"2001:db8::1", ZKR_EHOSTS_BAD_IPV6},
    {"::1", ZKR_EHOSTS_BAD_IPV6},
    {"h1:2181:2182", ZKR_EHOSTS_BAD_IPV6},
    {"::g:2181", ZKR_EHOSTS_BAD_IPV6},
    {"1::2::3:2181", ZKR_EHOSTS_BAD_IPV6},
    {"::1%:2181", ZKR_EHOSTS_BAD_IPV6},
    {"::1%eth0$:2181", ZKR_EHOSTS_BAD_IPV6},
    {"[::1:2181", ZKR_EHOSTS_BAD_IPV6},
    {"[::1", ZKR_EHOSTS_BAD_IPV6},
    {"[]:2181", ZKR_EHOSTS_BAD_IPV6},
    {"[1.2.3.4]:2181", ZKR_EHOSTS_BAD_IPV6},
    {"[h1]:2181", ZKR_EHOSTS_BAD_IPV6},
    {"[1:2:3]:2181", ZKR_EHOSTS_BAD_IPV6},
    {"[::g]:2181", ZKR_EHOSTS_BAD_IPV6},
    {"[1::2::3]:2181", ZKR_EHOSTS_BAD_IPV6},
    {"[::1%]:2181", ZKR_EHOSTS_BAD_IPV6},
    {"[::1%eth0$]:2181", ZKR_EHOSTS_BAD_IPV6},
    {"[::1]x:2181", ZKR_EHOSTS_BAD_IPV6},
    {"[::1]]:2181", ZKR_EHOSTS_BAD_IPV6},
    {"[[::1]]:2181", ZKR_EHOSTS_BAD_IPV6},
    /* Host names. */
    {":2181", ZKR_EHOSTS_BAD_HOST},
    {" :2181", ZKR_EHOSTS_BAD_HOST},
    {"h$:2181", ZKR_EHOSTS_BAD_HOST},
    {"h\x01:2181", ZKR_EHOSTS_BAD_HOST},
    {"h\x7f:2181", ZKR_EHOSTS_BAD_HOST},
    {"h[1]:2181", ZKR_EHOSTS_BAD_HOST},
    {"caf\xc3\xa9:2181", ZKR_EHOSTS_BAD_HOST},
    {"h1:2181,h@2:2181", ZKR_EHOSTS_BAD_HOST},
    /* Chroots. */
    {"h1:2181//", ZKR_EHOSTS_BAD_CHROOT},
    {"h1:2181//a", ZKR_EHOSTS_BAD_CHROOT},
    {"h1:2181/a/", ZKR_EHOSTS_BAD_CHROOT},
    {"h1:2181/a//b", ZKR_EHOSTS_BAD_CHROOT},
    {"h1:2181/.", ZKR_EHOSTS_BAD_CHROOT},
    {"h1:2181/..", ZKR_EHOSTS_BAD_CHROOT},
    {"h1:2181/./a", ZKR_EHOSTS_BAD_CHROOT},
    {"h1:2181/a/../b", ZKR_EHOSTS_BAD_CHROOT},
    {"h1:2181/a/..", ZKR_EHOSTS_BAD_CHROOT},
    {"h1:2181/a\x01", ZKR_EHOSTS_BAD_CHROOT},
    {"h1:2181/a\tb", ZKR_EHOSTS_BAD_CHROOT},
    {"h1:2181/a\n", ZKR_EHOSTS_BAD_CHROOT},
    {"h1:2181/a\x1fz", ZKR_EHOSTS_BAD_CHROOT},
    {"h1:2181/a\x7f", ZKR_EHOSTS_BAD_CHROOT},
    {"h1:2181/a\xc2\x85", ZKR_EHOSTS_BAD_CHROOT},
    {"h1:2181/app,h2:2181", ZKR_EHOSTS_BAD_CHROOT},
};

START_TEST(test_bad) {
  zkr__hostlist_t l;
  int rc = zkr__hosts_parse(bad[_i].in, &l);

  ck_assert_msg(rc == bad[_i].rc, "\"%s\": got %d, want %d", bad[_i].in, rc, bad[_i].rc);
  ck_assert_ptr_null(l.v);
  ck_assert_uint_eq(l.n, 0);
  ck_assert_ptr_null(l.chroot);
  zkr__hosts_free(&l);
}
END_TEST

START_TEST(test_null) {
  zkr__hostlist_t l;

  ck_assert_int_eq(zkr__hosts_parse(NULL, &l), ZBADARGUMENTS);
  ck_assert_ptr_null(l.v);
  ck_assert_int_eq(zkr__hosts_parse("h1:2181", NULL), ZBADARGUMENTS);
  zkr__hosts_free(NULL);
}
END_TEST

/* An error must leave *out empty even when it held junk before. */
START_TEST(test_error_clears_out) {
  zkr__hostlist_t l = {(zkr__host_t *)&l, 7, (char *)&l, (zkr__host_t *)&l, 3, 2};

  ck_assert_int_eq(zkr__hosts_parse("h1:2181,h2:2181,h1:0", &l), ZKR_EHOSTS_BAD_PORT);
  ck_assert_ptr_null(l.v);
  ck_assert_uint_eq(l.n, 0);
  ck_assert_ptr_null(l.chroot);
  ck_assert_ptr_null(l.entries);
}
END_TEST

START_TEST(test_single) {
  zkr__hostlist_t l;

  ck_assert_int_eq(zkr__hosts_parse("zk1.example.com:2181", &l), ZOK);
  ck_assert_uint_eq(l.n, 1);
  ck_assert_str_eq(l.v[0].name, "zk1.example.com");
  ck_assert_int_eq(l.v[0].port, 2181);
  ck_assert_int_eq(l.v[0].ipv6, 0);
  ck_assert_ptr_null(l.chroot);
  zkr__hosts_free(&l);
  ck_assert_ptr_null(l.v);
  ck_assert_uint_eq(l.n, 0);
  zkr__hosts_free(&l);
}
END_TEST

START_TEST(test_members_and_chroot) {
  zkr__hostlist_t l;

  ck_assert_int_eq(zkr__hosts_parse("h1:2181,my-host_2.lan:2182,10.0.0.3:1,[::1]:65535"
                                    "/app/x",
                                    &l),
                   ZOK);
  ck_assert_uint_eq(l.n, 4);
  ck_assert_str_eq(l.v[0].name, "h1");
  ck_assert_int_eq(l.v[0].port, 2181);
  ck_assert_str_eq(l.v[1].name, "my-host_2.lan");
  ck_assert_int_eq(l.v[1].port, 2182);
  ck_assert_str_eq(l.v[2].name, "10.0.0.3");
  ck_assert_int_eq(l.v[2].port, 1);
  ck_assert_int_eq(l.v[2].ipv6, 0);
  ck_assert_str_eq(l.v[3].name, "::1");
  ck_assert_int_eq(l.v[3].port, 65535);
  ck_assert_int_eq(l.v[3].ipv6, 1);
  ck_assert_str_eq(l.chroot, "/app/x");
  zkr__hosts_free(&l);
}
END_TEST

START_TEST(test_ipv6_forms) {
  static const struct {
    const char *in, *name;
  } cases[] = {
      {"[::1]:2181", "::1"},
      {"[fe80::1%eth0]:2181", "fe80::1%eth0"},
      {"[fe80::1%3]:2181", "fe80::1%3"},
      {"[2001:db8::1]:2181", "2001:db8::1"},
      {"[2001:DB8:0:0:0:0:0:1]:2181", "2001:DB8:0:0:0:0:0:1"},
      {"[::ffff:192.0.2.1]:2181", "::ffff:192.0.2.1"},
      /* Bare, as stock reads them: the port follows the last ':'. */
      {"::1:2181", "::1"},
      {"fe80::1%eth0:2181", "fe80::1%eth0"},
      {"2001:db8::1:2181", "2001:db8::1"},
      {"::ffff:192.0.2.1:2181", "::ffff:192.0.2.1"},
      {" ::1: 2181", "::1"},
  };

  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    zkr__hostlist_t l;

    ck_assert_int_eq(zkr__hosts_parse(cases[i].in, &l), ZOK);
    ck_assert_uint_eq(l.n, 1);
    ck_assert_str_eq(l.v[0].name, cases[i].name);
    ck_assert_int_eq(l.v[0].port, 2181);
    ck_assert_int_eq(l.v[0].ipv6, 1);
    zkr__hosts_free(&l);
  }
}
END_TEST

/* Stock's leniencies: empty entries skipped, white space at the start of
 * an entry and of a port, a '+' before the port. */
START_TEST(test_lenient_forms) {
  static const struct {
    const char *in;
    size_t n;
    const char *chroot;
  } cases[] = {
      {"h1:2181,", 1, NULL},       {",h1:2181", 1, NULL},  {",,h1:2181,,,h2:2181,,", 2, NULL},
      {"h1:2181,/app", 1, "/app"}, {" h1:2181", 1, NULL},  {"\t\n h1:2181,  h2:2181", 2, NULL},
      {"h1: 2181", 1, NULL},       {"h1:\t2181", 1, NULL}, {"h1:+2181", 1, NULL},
      {"h1: +2181", 1, NULL},      {"h1:0217", 1, NULL},   {"h1:2181/a b", 1, "/a b"},
      {"h1:2181/ a", 1, "/ a"},
  };

  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    zkr__hostlist_t l;

    ck_assert_msg(zkr__hosts_parse(cases[i].in, &l) == ZOK, "\"%s\"", cases[i].in);
    ck_assert_uint_eq(l.n, cases[i].n);
    ck_assert_str_eq(l.v[0].name, "h1");
    if (cases[i].chroot) ck_assert_str_eq(l.chroot, cases[i].chroot);
    else ck_assert_ptr_null(l.chroot);
    zkr__hosts_free(&l);
  }
  /* Decimal, as getaddrinfo() reads it: "0217" is 217. */
  zkr__hostlist_t l;
  ck_assert_int_eq(zkr__hosts_parse("h1:0217,h2:+1", &l), ZOK);
  ck_assert_int_eq(l.v[0].port, 217);
  ck_assert_int_eq(l.v[1].port, 1);
  zkr__hosts_free(&l);
}
END_TEST

START_TEST(test_ports) {
  zkr__hostlist_t l;

  ck_assert_int_eq(zkr__hosts_parse("h1:02181,h2:00001,h3:65535", &l), ZOK);
  ck_assert_int_eq(l.v[0].port, 2181);
  ck_assert_int_eq(l.v[1].port, 1);
  ck_assert_int_eq(l.v[2].port, 65535);
  zkr__hosts_free(&l);
}
END_TEST

/* Same name on two ports, or two zones of one address, are two members. */
START_TEST(test_not_duplicates) {
  zkr__hostlist_t l;

  ck_assert_int_eq(zkr__hosts_parse("h1:2181,h1:2182,[fe80::1%eth]:2181,"
                                    "[fe80::1%eth0]:2181,[fe80::1%eth1]:2181,"
                                    "[fe80::1]:2181",
                                    &l),
                   ZOK);
  ck_assert_uint_eq(l.n, 6);
  zkr__hosts_free(&l);
}
END_TEST

/* One server listed twice is one member (stock accepts the list too):
 * names ignoring case, IPv6 as numbers, bracketed or bare. */
START_TEST(test_duplicates_merged) {
  static const char *const cases[] = {
      "h1:2181,h1:2181",
      "H1:2181,h1:2181",
      "h1:2181,h1:02181",
      "[::1]:2181,[::1]:2181",
      "[::1]:2181,[0:0::1]:2181",
      "[::1]:2181,::1:2181",
      "[FE80::1%ETH0]:2181,fe80::1%eth0:2181",
  };

  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    zkr__hostlist_t l;

    ck_assert_int_eq(zkr__hosts_parse(cases[i], &l), ZOK);
    ck_assert_msg(l.n == 1, "\"%s\": %zu members", cases[i], l.n);
    zkr__hosts_free(&l);
  }
  zkr__hostlist_t l;
  ck_assert_int_eq(zkr__hosts_parse("h1:1,h2:1,h1:1,h3:1,h2:1", &l), ZOK);
  ck_assert_uint_eq(l.n, 3);
  ck_assert_str_eq(l.v[2].name, "h3");
  zkr__hosts_free(&l);
}
END_TEST

START_TEST(test_chroots) {
  static const struct {
    const char *in, *chroot;
  } cases[] = {
      {"h1:2181/", NULL},
      {"h1:2181/a", "/a"},
      {"h1:2181/...", "/..."},
      {"h1:2181/.a/b./..c", "/.a/b./..c"},
      {"h1:2181/caf\xc3\xa9", "/caf\xc3\xa9"},
      {"h1:2181/a:b[c]-_@", "/a:b[c]-_@"},
  };

  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    zkr__hostlist_t l;

    ck_assert_int_eq(zkr__hosts_parse(cases[i].in, &l), ZOK);
    ck_assert_uint_eq(l.n, 1);
    if (cases[i].chroot == NULL) ck_assert_ptr_null(l.chroot);
    else ck_assert_str_eq(l.chroot, cases[i].chroot);
    zkr__hosts_free(&l);
  }
}
END_TEST

START_TEST(test_name_length) {
  char s[300];
  zkr__hostlist_t l;

  memset(s, 'a', 255);
  strcpy(s + 255, ":2181");
  ck_assert_int_eq(zkr__hosts_parse(s, &l), ZOK);
  ck_assert_uint_eq(strlen(l.v[0].name), 255);
  zkr__hosts_free(&l);
  memset(s, 'a', 256);
  strcpy(s + 256, ":2181");
  ck_assert_int_eq(zkr__hosts_parse(s, &l), ZKR_EHOSTS_BAD_HOST);
}
END_TEST

/* Writes "h0:2181,h1:2181,..." with n members into a malloc'd string. */
static char *member_list(int n, const char *chroot) {
  char *s = malloc((size_t)n * 16 + strlen(chroot) + 1), *p = s;

  ck_assert_ptr_nonnull(s);
  for (int i = 0; i < n; i++) p += sprintf(p, "%sh%d:2181", i ? "," : "", i);
  strcpy(p, chroot);
  return s;
}

START_TEST(test_member_count) {
  zkr__hostlist_t l;
  char *s = member_list(ZKR__HOSTS_MAX_MEMBERS, "/c");

  ck_assert_int_eq(zkr__hosts_parse(s, &l), ZOK);
  ck_assert_uint_eq(l.n, 64);
  ck_assert_str_eq(l.v[63].name, "h63");
  ck_assert_str_eq(l.chroot, "/c");
  zkr__hosts_free(&l);
  free(s);

  s = member_list(ZKR__HOSTS_MAX_MEMBERS + 1, "");
  ck_assert_int_eq(zkr__hosts_parse(s, &l), ZKR_EHOSTS_TOO_MANY);
  ck_assert_ptr_null(l.v);
  free(s);

  s = member_list(1000, "");
  ck_assert_uint_lt(strlen(s), ZKR__HOSTS_MAX_LEN);
  ck_assert_int_eq(zkr__hosts_parse(s, &l), ZKR_EHOSTS_TOO_MANY);
  free(s);
}
END_TEST

/* A list of exactly the maximum length passes; one byte more does not. */
START_TEST(test_length) {
  char *s = malloc(20 * 1024 + 1);
  zkr__hostlist_t l;

  ck_assert_ptr_nonnull(s);
  strcpy(s, "h1:2181/");
  memset(s + 8, 'a', ZKR__HOSTS_MAX_LEN - 8);
  s[ZKR__HOSTS_MAX_LEN] = '\0';
  ck_assert_int_eq(zkr__hosts_parse(s, &l), ZOK);
  ck_assert_uint_eq(strlen(l.chroot), ZKR__HOSTS_MAX_LEN - 7);
  zkr__hosts_free(&l);

  s[ZKR__HOSTS_MAX_LEN] = 'a';
  s[ZKR__HOSTS_MAX_LEN + 1] = '\0';
  ck_assert_int_eq(zkr__hosts_parse(s, &l), ZKR_EHOSTS_TOO_LONG);

  memset(s, ',', 20 * 1024);
  s[20 * 1024] = '\0';
  ck_assert_int_eq(zkr__hosts_parse(s, &l), ZKR_EHOSTS_TOO_LONG);
  ck_assert_ptr_null(l.v);
  free(s);
}
END_TEST

START_TEST(test_format) {
  zkr__host_t h = {.name = "h1", .port = 2181, .ipv6 = 0};
  zkr__host_t v6 = {.name = "fe80::1%eth0", .port = 2182, .ipv6 = 1};
  char buf[64];

  ck_assert_int_eq(zkr__hosts_format(&h, NULL, buf, sizeof buf), 7);
  ck_assert_str_eq(buf, "h1:2181");
  ck_assert_int_eq(zkr__hosts_format(&h, "/app", buf, sizeof buf), 11);
  ck_assert_str_eq(buf, "h1:2181/app");
  ck_assert_int_eq(zkr__hosts_format(&v6, "/a", buf, sizeof buf), 21);
  ck_assert_str_eq(buf, "[fe80::1%eth0]:2182/a");
  /* The NUL needs a byte too. */
  ck_assert_int_eq(zkr__hosts_format(&h, "/app", buf, 12), 11);
  ck_assert_int_eq(zkr__hosts_format(&h, "/app", buf, 11), -1);
  ck_assert_int_eq(zkr__hosts_format(&h, NULL, buf, 0), -1);
  ck_assert_int_eq(zkr__hosts_format(NULL, NULL, buf, sizeof buf), -1);
  ck_assert_int_eq(zkr__hosts_format(&h, NULL, NULL, 10), -1);
}
END_TEST

/* What the parser returns, formatted, is a host string ZooKeeper reads the
 * same way. */
START_TEST(test_round_trip) {
  static const char *const want[] = {"h1:2181/ch", "[::1]:2182/ch", "[fe80::1%eth0]:2183/ch"};
  zkr__hostlist_t l;
  char buf[300];

  ck_assert_int_eq(zkr__hosts_parse("h1:2181,[::1]:2182,[fe80::1%eth0]:2183/ch", &l), ZOK);
  ck_assert_uint_eq(l.n, 3);
  for (size_t i = 0; i < l.n; i++) {
    ck_assert_int_eq(zkr__hosts_format(&l.v[i], l.chroot, buf, sizeof buf), (int)strlen(want[i]));
    ck_assert_str_eq(buf, want[i]);
  }
  zkr__hosts_free(&l);
}
END_TEST

/* ---- expansion: names into addresses, through an injected resolver ---- */

/* A fake DNS: "svc" stands for three addresses, "dual" for an IPv4 and an
 * IPv6 one, "many" for 70, "dup" for one already listed; anything else
 * does not resolve.  It records how often it was asked. */
static int fake_calls;

static int fake_resolve(const char *name, int port, zkr__host_t *out, size_t cap, size_t *n) {
  static const char *const svc[] = {"10.0.0.1", "10.0.0.2", "10.0.0.3"};

  fake_calls++;
  *n = 0;
  if (strcmp(name, "svc") == 0) {
    for (size_t i = 0; i < 3 && *n < cap; i++, (*n)++)
      out[*n] = (zkr__host_t){.port = port, .entry = -1};
    for (size_t i = 0; i < 3; i++) strcpy(out[i].name, svc[i]);
  } else if (strcmp(name, "dual") == 0) {
    out[0] = (zkr__host_t){.name = "10.0.0.9", .port = port, .entry = -1};
    out[1] = (zkr__host_t){.name = "fd00::9", .port = port, .ipv6 = 1, .entry = -1};
    *n = 2;
  } else if (strcmp(name, "many") == 0) {
    for (; *n < 70 && *n < cap; (*n)++) {
      out[*n] = (zkr__host_t){.port = port, .entry = -1};
      snprintf(out[*n].name, sizeof out[*n].name, "10.1.0.%zu", *n + 1);
    }
  } else if (strcmp(name, "dup") == 0) {
    out[0] = (zkr__host_t){.name = "10.0.0.2", .port = port, .entry = -1};
    *n = 1;
  } else {
    return ZKR_EHOSTS_UNRESOLVED;
  }
  return ZOK;
}

static void expand(const char *in, zkr__hostlist_t *l, int want_rc) {
  ck_assert_int_eq(zkr__hosts_parse(in, l), ZOK);
  ck_assert_int_eq(zkr__hosts_expand(l, fake_resolve), want_rc);
}

START_TEST(test_expand_names) {
  zkr__hostlist_t l;

  /* One member per address, in the resolver's order, each knowing its
   * entry; addresses are used as written, never resolved. */
  fake_calls = 0;
  expand("svc:2181,10.0.0.7:2182,[::1]:2183/app", &l, ZOK);
  ck_assert_int_eq(fake_calls, 1);
  ck_assert_uint_eq(l.n, 5);
  ck_assert_str_eq(l.v[0].name, "10.0.0.1");
  ck_assert_str_eq(l.v[2].name, "10.0.0.3");
  ck_assert_int_eq(l.v[2].port, 2181);
  ck_assert_int_eq(l.v[2].entry, 0);
  ck_assert_str_eq(l.v[3].name, "10.0.0.7");
  ck_assert_int_eq(l.v[3].entry, 1);
  ck_assert_str_eq(l.v[4].name, "::1");
  ck_assert_int_eq(l.v[4].entry, 2);
  ck_assert_uint_eq(l.n_entries, 3);
  ck_assert_str_eq(l.entries[0].name, "svc");
  ck_assert_uint_eq(l.n_names, 1);
  ck_assert_str_eq(l.chroot, "/app");
  zkr__hosts_free(&l);

  /* IPv4 and IPv6 of one name: two members, as stock counts them. */
  expand("dual:2181", &l, ZOK);
  ck_assert_uint_eq(l.n, 2);
  ck_assert_int_eq(l.v[1].ipv6, 1);
  zkr__hosts_free(&l);

  /* An address reached twice counts once, whichever way. */
  expand("10.0.0.2:2181,svc:2181,dup:2181", &l, ZOK);
  ck_assert_uint_eq(l.n, 3);
  ck_assert_str_eq(l.v[0].name, "10.0.0.2");
  ck_assert_int_eq(l.v[0].entry, 0);
  ck_assert_str_eq(l.v[1].name, "10.0.0.1");
  ck_assert_str_eq(l.v[2].name, "10.0.0.3");
  ck_assert_uint_eq(l.n_names, 2);
  zkr__hosts_free(&l);

  /* Same address, another port: another member. */
  expand("svc:2181,svc2:1,10.0.0.1:2182", &l, ZOK);
  ck_assert_uint_eq(l.n, 4);
  zkr__hosts_free(&l);
}
END_TEST

START_TEST(test_expand_failures) {
  zkr__hostlist_t l;

  /* A name that does not resolve is skipped, as stock skips it... */
  expand("nope:2181,10.0.0.7:2181", &l, ZOK);
  ck_assert_uint_eq(l.n, 1);
  ck_assert_str_eq(l.v[0].name, "10.0.0.7");
  ck_assert_uint_eq(l.n_names, 1);
  zkr__hosts_free(&l);
  /* ... and nothing resolving is an error that leaves the list as parsed. */
  expand("nope:2181,gone:2181", &l, ZKR_EHOSTS_UNRESOLVED);
  ck_assert_uint_eq(l.n, 2);
  ck_assert_ptr_null(l.entries);
  zkr__hosts_free(&l);
  /* More addresses than members allowed. */
  expand("many:2181", &l, ZKR_EHOSTS_TOO_MANY);
  ck_assert_uint_eq(l.n, 1);
  zkr__hosts_free(&l);
  /* Expanding twice, or nothing, is a caller's error. */
  expand("10.0.0.7:2181", &l, ZOK);
  ck_assert_int_eq(zkr__hosts_expand(&l, fake_resolve), ZBADARGUMENTS);
  zkr__hosts_free(&l);
  ck_assert_int_eq(zkr__hosts_expand(NULL, fake_resolve), ZBADARGUMENTS);
}
END_TEST

/* Without a resolver the entries are the members (unit tests' fakes). */
START_TEST(test_expand_without_resolver) {
  zkr__hostlist_t l;

  ck_assert_int_eq(zkr__hosts_parse("fake1:2181,fake2:2181", &l), ZOK);
  ck_assert_int_eq(zkr__hosts_expand(&l, NULL), ZOK);
  ck_assert_uint_eq(l.n, 2);
  ck_assert_str_eq(l.v[1].name, "fake2");
  ck_assert_int_eq(l.v[1].entry, 1);
  ck_assert_uint_eq(l.n_names, 0);
  zkr__hosts_free(&l);
}
END_TEST

START_TEST(test_literal) {
  zkr__host_t a = {.name = "10.0.0.1"}, b = {.name = "::1", .ipv6 = 1}, c = {.name = "127.1"},
              d = {.name = "zk1"};

  ck_assert_int_eq(zkr__hosts_literal(&a), 1);
  ck_assert_int_eq(zkr__hosts_literal(&b), 1);
  ck_assert_int_eq(zkr__hosts_literal(&c), 0); /* inet_aton's form: a name */
  ck_assert_int_eq(zkr__hosts_literal(&d), 0);
}
END_TEST

static Suite *hosts_suite(void) {
  Suite *s = suite_create("hosts");
  TCase *tc = tcase_create("parse");

  tcase_set_timeout(tc, 10);
  tcase_add_loop_test(tc, test_bad, 0, (int)(sizeof bad / sizeof bad[0]));
  tcase_add_test(tc, test_null);
  tcase_add_test(tc, test_error_clears_out);
  tcase_add_test(tc, test_single);
  tcase_add_test(tc, test_members_and_chroot);
  tcase_add_test(tc, test_ipv6_forms);
  tcase_add_test(tc, test_lenient_forms);
  tcase_add_test(tc, test_ports);
  tcase_add_test(tc, test_not_duplicates);
  tcase_add_test(tc, test_duplicates_merged);
  tcase_add_test(tc, test_chroots);
  tcase_add_test(tc, test_name_length);
  tcase_add_test(tc, test_member_count);
  tcase_add_test(tc, test_length);
  suite_add_tcase(s, tc);

  tc = tcase_create("expand");
  tcase_set_timeout(tc, 10);
  tcase_add_test(tc, test_expand_names);
  tcase_add_test(tc, test_expand_failures);
  tcase_add_test(tc, test_expand_without_resolver);
  tcase_add_test(tc, test_literal);
  suite_add_tcase(s, tc);

  tc = tcase_create("format");
  tcase_set_timeout(tc, 10);
  tcase_add_test(tc, test_format);
  tcase_add_test(tc, test_round_trip);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) {
  SRunner *sr = srunner_create(hosts_suite());
  int failed;

  srunner_run_all(sr, CK_NORMAL);
  failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
