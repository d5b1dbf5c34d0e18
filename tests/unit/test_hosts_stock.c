/* The host list parser (zkroute/model/hosts.c) against stock libzookeeper_mt 3.8:
 * for each connect string, what the real zookeeper_init() does with it
 * (called here, the handle closed at once) and what zkroute does (its
 * members after resolution, its chroot, or its error code).  A string
 * stock accepts must be accepted by zkroute too, unless the row gives the
 * reason it is not (each reason is in docs/dropin.md, "Host strings").
 *
 * Only strings that cannot hang are given to stock: addresses, "localhost"
 * (/etc/hosts) and hosts that are no valid DNS name (the resolver refuses
 * those without a query); RES_OPTIONS bounds any query anyway.  Nothing
 * listens on 127.0.9.x or on port 9 of localhost, so zookeeper_init()
 * returns at once and its session never starts. */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/hosts.h"
#include "zk/resolve.h"
#include "zkroute.h"

#define ACCEPT (-1) /* stock returns a handle; otherwise the errno it sets */

static const struct {
  const char *in;
  int stock;           /* ACCEPT, or errno with NULL */
  int rc;              /* zkroute */
  const char *members; /* zkroute's members after resolution, NULL: not
                           compared (environment-dependent) */
  const char *chroot;  /* zkroute's chroot, NULL none */
  const char *why;     /* stock accepts, zkroute refuses: the reason */
} rows[] = {
    /* Accepted by both. */
    {"127.0.9.1:2181", ACCEPT, ZOK, "127.0.9.1:2181", NULL, NULL},
    {"127.0.9.1:2181,127.0.9.2:2182/app", ACCEPT, ZOK, "127.0.9.1:2181,127.0.9.2:2182", "/app",
     NULL},
    {"127.0.9.1:2181/", ACCEPT, ZOK, "127.0.9.1:2181", NULL, NULL},
    {"127.0.9.1:2181/a b", ACCEPT, ZOK, "127.0.9.1:2181", "/a b", NULL},
    {"127.0.9.1:2181/...", ACCEPT, ZOK, "127.0.9.1:2181", "/...", NULL},
    {"127.0.9.1:2181/a/.b", ACCEPT, ZOK, "127.0.9.1:2181", "/a/.b", NULL},
    {" 127.0.9.1:2181", ACCEPT, ZOK, "127.0.9.1:2181", NULL, NULL},
    {"\t127.0.9.1:2181", ACCEPT, ZOK, "127.0.9.1:2181", NULL, NULL},
    {"127.0.9.1:2181, 127.0.9.2:2181", ACCEPT, ZOK, "127.0.9.1:2181,127.0.9.2:2181", NULL, NULL},
    {"127.0.9.1:2181,", ACCEPT, ZOK, "127.0.9.1:2181", NULL, NULL},
    {",127.0.9.1:2181", ACCEPT, ZOK, "127.0.9.1:2181", NULL, NULL},
    {"127.0.9.1:2181,,127.0.9.2:2181", ACCEPT, ZOK, "127.0.9.1:2181,127.0.9.2:2181", NULL, NULL},
    {"127.0.9.1:2181,/app", ACCEPT, ZOK, "127.0.9.1:2181", "/app", NULL},
    {"127.0.9.1:2181,127.0.9.1:2181", ACCEPT, ZOK, "127.0.9.1:2181", NULL, NULL},
    {"127.0.9.1: 2181", ACCEPT, ZOK, "127.0.9.1:2181", NULL, NULL},
    {"127.0.9.1:\t2181", ACCEPT, ZOK, "127.0.9.1:2181", NULL, NULL},
    {"127.0.9.1:+2181", ACCEPT, ZOK, "127.0.9.1:2181", NULL, NULL},
    {"127.0.9.1: +2181", ACCEPT, ZOK, "127.0.9.1:2181", NULL, NULL},
    /* strtol() reads 0217 as octal 143 for its check, but getaddrinfo()
     * reads the text in decimal: stock connects to port 217. */
    {"127.0.9.1:0217", ACCEPT, ZOK, "127.0.9.1:217", NULL, NULL},
    {"127.0.9.1:65535", ACCEPT, ZOK, "127.0.9.1:65535", NULL, NULL},
    {"::1:9", ACCEPT, ZOK, "[::1]:9", NULL, NULL},
    {"::ffff:127.0.9.1:9", ACCEPT, ZOK, "[::ffff:127.0.9.1]:9", NULL, NULL},
    {"fe80::1%lo:9", ACCEPT, ZOK, "[fe80::1%lo]:9", NULL, NULL},
    {"localhost:9", ACCEPT, ZOK, NULL, NULL, NULL},
    {"LOCALHOST:9", ACCEPT, ZOK, NULL, NULL, NULL},
    /* inet_aton()'s forms: names to zkroute, resolved like any name. */
    {"127.1:9", ACCEPT, ZOK, "127.0.0.1:9", NULL, NULL},
    {"2130706433:9", ACCEPT, ZOK, "127.0.0.1:9", NULL, NULL},
    {"0x7f000001:9", ACCEPT, ZOK, "127.0.0.1:9", NULL, NULL},
    /* Stock skips the bracketed entry (it cannot resolve "[::1]"). */
    {"127.0.9.1:2181,[::1]:9", ACCEPT, ZOK, "127.0.9.1:2181,[::1]:9", NULL, NULL},

    /* Accepted by zkroute only. */
    {"[::1]:9", ENOENT, ZOK, "[::1]:9", NULL, NULL},
    {"[fe80::1%lo]:9/app", ENOENT, ZOK, "[fe80::1%lo]:9", "/app", NULL},
    /* strtol() stops at the octal digit 8. */
    {"127.0.9.1:02181", EINVAL, ZOK, "127.0.9.1:2181", NULL, NULL},

    /* Refused by both. */
    {"", EINVAL, ZKR_EHOSTS_EMPTY, NULL, NULL, NULL},
    {",", 0, ZKR_EHOSTS_EMPTY, NULL, NULL, NULL},
    {" /app", EINVAL, ZKR_EHOSTS_EMPTY_ENTRY, NULL, NULL, NULL},
    {"127.0.9.1:2181, ,127.0.9.2:2181", EINVAL, ZKR_EHOSTS_EMPTY_ENTRY, NULL, NULL, NULL},
    {"127.0.9.1", EINVAL, ZKR_EHOSTS_NO_PORT, NULL, NULL, NULL},
    {"127.0.9.1:2181,127.0.9.2", EINVAL, ZKR_EHOSTS_NO_PORT, NULL, NULL, NULL},
    {"127.0.9.1:", EINVAL, ZKR_EHOSTS_BAD_PORT, NULL, NULL, NULL},
    {"127.0.9.1:0", EINVAL, ZKR_EHOSTS_BAD_PORT, NULL, NULL, NULL},
    {"127.0.9.1:00", EINVAL, ZKR_EHOSTS_BAD_PORT, NULL, NULL, NULL},
    {"127.0.9.1:-1", EINVAL, ZKR_EHOSTS_BAD_PORT, NULL, NULL, NULL},
    {"127.0.9.1:-2181", EINVAL, ZKR_EHOSTS_BAD_PORT, NULL, NULL, NULL},
    {"127.0.9.1:0x10", EINVAL, ZKR_EHOSTS_BAD_PORT, NULL, NULL, NULL},
    {"127.0.9.1:+ 2181", EINVAL, ZKR_EHOSTS_BAD_PORT, NULL, NULL, NULL},
    {"127.0.9.1:2181 ", EINVAL, ZKR_EHOSTS_SPACE, NULL, NULL, NULL},
    {"127.0.9.1:2181\n", EINVAL, ZKR_EHOSTS_SPACE, NULL, NULL, NULL},
    {"127.0.9.1 :2181", ENOENT, ZKR_EHOSTS_SPACE, NULL, NULL, NULL},
    {":2181", ENOENT, ZKR_EHOSTS_BAD_HOST, NULL, NULL, NULL},
    {"::1", ENOENT, ZKR_EHOSTS_BAD_IPV6, NULL, NULL, NULL},
    {"127.0.9.1:2181:2182", ENOENT, ZKR_EHOSTS_BAD_IPV6, NULL, NULL, NULL},
    {"127.0.9.1:2181//", EINVAL, ZKR_EHOSTS_BAD_CHROOT, NULL, NULL, NULL},
    {"127.0.9.1:2181/a/", EINVAL, ZKR_EHOSTS_BAD_CHROOT, NULL, NULL, NULL},
    {"127.0.9.1:2181/./a", EINVAL, ZKR_EHOSTS_BAD_CHROOT, NULL, NULL, NULL},
    {"127.0.9.1:2181/a/..", EINVAL, ZKR_EHOSTS_BAD_CHROOT, NULL, NULL, NULL},
    {"127.0.9.1:2181/a\tb", EINVAL, ZKR_EHOSTS_BAD_CHROOT, NULL, NULL, NULL},
    {"127.0.9.1:2181/a\x1e", EINVAL, ZKR_EHOSTS_BAD_CHROOT, NULL, NULL, NULL},

    /* Accepted by stock only: each a documented difference. */
    {"/app", ACCEPT, ZKR_EHOSTS_EMPTY, NULL, NULL,
     "no server: stock returns a handle that never connects"},
    {"/", ACCEPT, ZKR_EHOSTS_EMPTY, NULL, NULL,
     "no server: stock returns a handle that never connects"},
    {"127.0.9.1:65536", ACCEPT, ZKR_EHOSTS_BAD_PORT, NULL, NULL,
     "port above 65535: stock truncates it to 16 bits (65536 is port 0)"},
    {"127.0.9.1:70000", ACCEPT, ZKR_EHOSTS_BAD_PORT, NULL, NULL,
     "port above 65535: stock truncates it to 16 bits (70000 is port 4464)"},
    {"127.0.9.1:2181/app,127.0.9.2:2181", ACCEPT, ZKR_EHOSTS_BAD_CHROOT, NULL, NULL,
     "',' in the chroot: a misplaced chroot, read by stock as one server and "
     "the chroot \"/app,127.0.9.2:2181\""},
    {"127.0.9.1:2181/a\x1f", ACCEPT, ZKR_EHOSTS_BAD_CHROOT, NULL, NULL,
     "0x1f, DEL or C1 in the chroot: stock lets it through, the server refuses "
     "every path holding it"},
    {"127.0.9.1:2181/a\x7f", ACCEPT, ZKR_EHOSTS_BAD_CHROOT, NULL, NULL,
     "0x1f, DEL or C1 in the chroot: stock lets it through, the server refuses "
     "every path holding it"},
    {"127.0.9.1:2181/a\xc2\x85", ACCEPT, ZKR_EHOSTS_BAD_CHROOT, NULL, NULL,
     "0x1f, DEL or C1 in the chroot: stock lets it through, the server refuses "
     "every path holding it"},
    /* Stock skips an entry it cannot resolve and runs on the others. */
    {"127.0.9.1 :2181,127.0.9.2:2181", ACCEPT, ZKR_EHOSTS_SPACE, NULL, NULL,
     "an entry no host could have: stock skips it, a typo gets a code"},
    {"127.0.9.1:2181,::1", ACCEPT, ZKR_EHOSTS_BAD_IPV6, NULL, NULL,
     "an entry no host could have: stock skips it, a typo gets a code"},
    {"127.0.9.1:2181,127.0.9.2:2181:2182", ACCEPT, ZKR_EHOSTS_BAD_IPV6, NULL, NULL,
     "an entry no host could have: stock skips it, a typo gets a code"},
    {"127.0.9.1:2181,h$:2181", ACCEPT, ZKR_EHOSTS_BAD_HOST, NULL, NULL,
     "an entry no host could have: stock skips it, a typo gets a code"},
};

#define N_ROWS (sizeof rows / sizeof rows[0])

/* What stock does with s: ACCEPT, or the errno of its NULL. */
static int stock_init(const char *s) {
  zhandle_t *zh;
  int err;

  errno = 0;
  zh = zookeeper_init(s, NULL, 10000, NULL, NULL, 0);
  err = errno;
  if (zh) {
    zookeeper_close(zh);
    return ACCEPT;
  }
  return err;
}

/* zkroute's members, formatted and comma-separated. */
static void members_text(const zkr__hostlist_t *l, char *buf, size_t len) {
  size_t off = 0;

  buf[0] = '\0';
  for (size_t i = 0; i < l->n && off < len; i++) {
    int n;

    if (i) buf[off++] = ',';
    n = zkr__hosts_format(&l->v[i], NULL, buf + off, len - off);
    ck_assert_int_ge(n, 0);
    off += (size_t)n;
  }
}

static void quiet(void) {
  /* A lookup that would go to DNS gives up after a second, never hangs. */
  setenv("RES_OPTIONS", "timeout:1 attempts:1", 1);
  zoo_set_debug_level(0);
}

START_TEST(stock_and_zkroute) {
  const char *in = rows[_i].in;
  zkr__hostlist_t l;
  char got[2048];
  int stock, rc;

  quiet();
  stock = stock_init(in);
  ck_assert_msg(stock == rows[_i].stock, "stock on \"%s\": %s (errno %d), table says %d", in,
                stock == ACCEPT ? "handle" : "NULL", stock, rows[_i].stock);
  rc = zkr__hosts_parse(in, &l);
  if (rc == ZOK) rc = zkr__hosts_expand(&l, zkr__resolve_addrinfo);
  ck_assert_msg(rc == rows[_i].rc, "zkroute on \"%s\": %s, table says %s", in, zkr_err_name(rc),
                zkr_err_name(rows[_i].rc));
  if (rc == ZOK) {
    members_text(&l, got, sizeof got);
    if (rows[_i].members)
      ck_assert_msg(strcmp(got, rows[_i].members) == 0, "\"%s\": members %s, table says %s", in,
                    got, rows[_i].members);
    else ck_assert_msg(strstr(got, "127.0.0.1:9") != NULL, "\"%s\": members %s", in, got);
    if (rows[_i].chroot) ck_assert_str_eq(l.chroot, rows[_i].chroot);
    else ck_assert_ptr_null(l.chroot);
  }
  zkr__hosts_free(&l);
  /* The rule: what stock accepts, zkroute accepts, or says why not. */
  if (stock == ACCEPT && rc != ZOK)
    ck_assert_msg(rows[_i].why != NULL,
                  "\"%s\": stock accepts, zkroute refuses (%s), no reason given", in,
                  zkr_err_name(rc));
  else
    ck_assert_msg(rows[_i].why == NULL, "\"%s\": a reason is given but there is no difference", in);
}
END_TEST

/* NULL: both refuse it, stock with EINVAL. */
START_TEST(stock_null) {
  zkr__hostlist_t l;

  quiet();
  errno = 0;
  ck_assert_ptr_null(zookeeper_init(NULL, NULL, 10000, NULL, NULL, 0));
  ck_assert_int_eq(errno, EINVAL);
  ck_assert_int_eq(zkr__hosts_parse(NULL, &l), ZBADARGUMENTS);
}
END_TEST

/* The table prints itself (make check's log), for docs/dropin.md. */
START_TEST(print_table) {
  for (size_t i = 0; i < N_ROWS; i++) {
    char esc[128];
    size_t o = 0;

    for (const unsigned char *c = (const unsigned char *)rows[i].in; *c && o + 5 < sizeof esc; c++)
      o += (size_t)(*c < 0x20 || *c >= 0x7f ? snprintf(esc + o, sizeof esc - o, "\\x%02x", *c)
                                            : snprintf(esc + o, sizeof esc - o, "%c", *c));
    esc[o] = '\0';
    printf("%-40s stock: %-8s zkroute: %s\n", esc,
           rows[i].stock == ACCEPT   ? "handle"
           : rows[i].stock == EINVAL ? "EINVAL"
           : rows[i].stock == ENOENT ? "ENOENT"
                                     : "NULL",
           rows[i].rc == ZOK ? "ok" : zkr_err_name(rows[i].rc));
  }
}
END_TEST

int main(void) {
  Suite *s = suite_create("hosts_stock");
  TCase *tc = tcase_create("stock");
  SRunner *sr;
  int failed;

  tcase_set_timeout(tc, 30);
  tcase_add_loop_test(tc, stock_and_zkroute, 0, (int)N_ROWS);
  tcase_add_test(tc, stock_null);
  tcase_add_test(tc, print_table);
  suite_add_tcase(s, tc);
  sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
