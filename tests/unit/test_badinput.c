/* The bad-input matrix of docs/robustness.md that needs no server: NULL,
 * closed, double-closed and stray handles (also racing zkr_close), host
 * strings, paths, buffer lengths and value sizes, ACLs, multi, a blocking
 * call and a close from inside a callback.  Each case asserts its exact
 * code and that a refused call never runs its completion.  Handles here
 * point at 127.0.9.254:1, where nothing listens: operations that pass the
 * checks park (no member is usable) and complete with ZCLOSING on close.
 * Run under ASan (./configure --enable-sanitizers) and valgrind, the
 * closed-handle cases prove that no freed memory is read. */
#include <check.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "zkroute.h"

#define NOWHERE "127.0.9.254:1"
#define ONE_MIB (1024 * 1024)

static zkr_t *open_nowhere(void) {
  zkr_t *z = NULL;
  ck_assert_int_eq(zkr_init_opts(&z, NOWHERE, NULL, 5000, NULL, NULL, 0, NULL), ZOK);
  ck_assert_ptr_nonnull(z);
  return z;
}

/* Completions count their calls; a refused call must leave them at 0. */
static int completions;
static int last_rc;

static void cb_void(int rc, const void *d) {
  (void)d;
  last_rc = rc;
  __atomic_add_fetch(&completions, 1, __ATOMIC_SEQ_CST);
}
static void cb_stat(int rc, const struct Stat *s, const void *d) {
  (void)s;
  cb_void(rc, d);
}
static void cb_data(int rc, const char *v, int l, const struct Stat *s, const void *d) {
  (void)v;
  (void)l;
  cb_stat(rc, s, d);
}
static void cb_string(int rc, const char *v, const void *d) {
  (void)v;
  cb_void(rc, d);
}
static void cb_string_stat(int rc, const char *v, const struct Stat *s, const void *d) {
  (void)v;
  cb_stat(rc, s, d);
}
static void cb_strings(int rc, const struct String_vector *v, const void *d) {
  (void)v;
  cb_void(rc, d);
}
static void cb_strings_stat(int rc, const struct String_vector *v, const struct Stat *s,
                            const void *d) {
  (void)v;
  cb_stat(rc, s, d);
}
static void cb_acl(int rc, struct ACL_vector *a, struct Stat *s, const void *d) {
  (void)a;
  cb_stat(rc, s, d);
}
static void watcher(zhandle_t *zh, int type, int state, const char *path, void *ctx) {
  (void)zh;
  (void)type;
  (void)state;
  (void)path;
  (void)ctx;
}

/* Every public call that takes a handle, with valid other arguments; each
 * must return `want` (for calls that return a code). */
static void every_call_returns(zkr_t *z, int want) {
  char buf[16];
  int len = sizeof buf;
  struct Stat st;
  struct String_vector sv;
  struct ACL_vector acl;
  zoo_op_t op;
  zoo_op_result_t res;
  zkr_stats_t *s = NULL;
  zoo_set_op_init(&op, "/a", "x", 1, -1, NULL);
  completions = 0;
  ck_assert_int_eq(zkr_acreate(z, "/a", "x", 1, &ZOO_OPEN_ACL_UNSAFE, 0, cb_string, NULL), want);
  ck_assert_int_eq(zkr_acreate_ttl(z, "/a", "x", 1, &ZOO_OPEN_ACL_UNSAFE, ZOO_PERSISTENT_WITH_TTL,
                                   1000, cb_string, NULL),
                   want);
  ck_assert_int_eq(zkr_acreate2(z, "/a", "x", 1, &ZOO_OPEN_ACL_UNSAFE, 0, cb_string_stat, NULL),
                   want);
  ck_assert_int_eq(zkr_acreate2_ttl(z, "/a", "x", 1, &ZOO_OPEN_ACL_UNSAFE, ZOO_PERSISTENT_WITH_TTL,
                                    1000, cb_string_stat, NULL),
                   want);
  ck_assert_int_eq(zkr_adelete(z, "/a", -1, cb_void, NULL), want);
  ck_assert_int_eq(zkr_aset(z, "/a", "x", 1, -1, cb_stat, NULL), want);
  ck_assert_int_eq(zkr_aset_acl(z, "/a", -1, &ZOO_OPEN_ACL_UNSAFE, cb_void, NULL), want);
  ck_assert_int_eq(zkr_amulti(z, 1, &op, &res, cb_void, NULL), want);
  ck_assert_int_eq(zkr_aexists(z, "/a", 0, cb_stat, NULL), want);
  ck_assert_int_eq(zkr_awexists(z, "/a", watcher, NULL, cb_stat, NULL), want);
  ck_assert_int_eq(zkr_aget(z, "/a", 0, cb_data, NULL), want);
  ck_assert_int_eq(zkr_awget(z, "/a", watcher, NULL, cb_data, NULL), want);
  ck_assert_int_eq(zkr_aget_children(z, "/a", 0, cb_strings, NULL), want);
  ck_assert_int_eq(zkr_awget_children(z, "/a", watcher, NULL, cb_strings, NULL), want);
  ck_assert_int_eq(zkr_aget_children2(z, "/a", 0, cb_strings_stat, NULL), want);
  ck_assert_int_eq(zkr_awget_children2(z, "/a", watcher, NULL, cb_strings_stat, NULL), want);
  ck_assert_int_eq(zkr_aget_acl(z, "/a", cb_acl, NULL), want);
  ck_assert_int_eq(zkr_async(z, "/a", cb_string, NULL), want);
  ck_assert_int_eq(zkr_create(z, "/a", "x", 1, &ZOO_OPEN_ACL_UNSAFE, 0, buf, len), want);
  ck_assert_int_eq(zkr_create_ttl(z, "/a", "x", 1, &ZOO_OPEN_ACL_UNSAFE, ZOO_PERSISTENT_WITH_TTL,
                                  1000, buf, len),
                   want);
  ck_assert_int_eq(zkr_create2(z, "/a", "x", 1, &ZOO_OPEN_ACL_UNSAFE, 0, buf, len, &st), want);
  ck_assert_int_eq(zkr_create2_ttl(z, "/a", "x", 1, &ZOO_OPEN_ACL_UNSAFE, ZOO_PERSISTENT_WITH_TTL,
                                   1000, buf, len, &st),
                   want);
  ck_assert_int_eq(zkr_delete(z, "/a", -1), want);
  ck_assert_int_eq(zkr_set(z, "/a", "x", 1, -1), want);
  ck_assert_int_eq(zkr_set2(z, "/a", "x", 1, -1, &st), want);
  ck_assert_int_eq(zkr_set_acl(z, "/a", -1, &ZOO_OPEN_ACL_UNSAFE), want);
  ck_assert_int_eq(zkr_multi(z, 1, &op, &res), want);
  ck_assert_int_eq(zkr_exists(z, "/a", 0, &st), want);
  ck_assert_int_eq(zkr_wexists(z, "/a", watcher, NULL, &st), want);
  ck_assert_int_eq(zkr_get(z, "/a", 0, buf, &len, &st), want);
  ck_assert_int_eq(zkr_wget(z, "/a", watcher, NULL, buf, &len, &st), want);
  ck_assert_int_eq(zkr_get_children(z, "/a", 0, &sv), want);
  ck_assert_int_eq(zkr_wget_children(z, "/a", watcher, NULL, &sv), want);
  ck_assert_int_eq(zkr_get_children2(z, "/a", 0, &sv, &st), want);
  ck_assert_int_eq(zkr_wget_children2(z, "/a", watcher, NULL, &sv, &st), want);
  ck_assert_int_eq(zkr_get_acl(z, "/a", &acl, &st), want);
  ck_assert_int_eq(zkr_add_auth(z, "digest", "u:p", 3, cb_void, NULL), want);
  ck_assert_int_eq(zkr_stats(z, &s), want);
  ck_assert_ptr_null(s);
  ck_assert_int_eq(zkr_recv_timeout(z), want);
  ck_assert_int_eq(zkr_close(z), want);
  /* The calls without a code answer as for NULL. */
  ck_assert_int_eq(zkr_state(z), 0);
  ck_assert_ptr_null(zkr_client_id(z));
  ck_assert_ptr_null(zkr_get_context(z));
  zkr_set_context(z, &len);
  ck_assert_ptr_null(zkr_set_watcher(z, watcher));
  ck_assert_int_eq(zkr_is_unrecoverable(z), want == ZBADARGUMENTS ? ZBADARGUMENTS : ZINVALIDSTATE);
  ck_assert_int_eq(completions, 0);
}

/* ---- handles ---- */

START_TEST(null_handle) { every_call_returns(NULL, ZBADARGUMENTS); }
END_TEST

START_TEST(closed_handle) {
  zkr_t *z = open_nowhere();
  ck_assert_int_eq(zkr_close(z), ZOK);
  /* z is freed memory now: under ASan any read of it would abort. */
  every_call_returns(z, ZKR_ECLOSED);
}
END_TEST

START_TEST(double_close) {
  zkr_t *z = open_nowhere();
  ck_assert_int_eq(zkr_close(z), ZOK);
  ck_assert_int_eq(zkr_close(z), ZKR_ECLOSED);
  ck_assert_int_eq(zkr_close(z), ZKR_ECLOSED);
}
END_TEST

/* Pointers zkr_init never returned: on the stack, in static memory, and an
 * odd address.  None is dereferenced. */
START_TEST(stray_pointers) {
  long local[64] = {0};
  static long global[64];
  every_call_returns((zkr_t *)local, ZKR_ECLOSED);
  every_call_returns((zkr_t *)global, ZKR_ECLOSED);
  every_call_returns((zkr_t *)(uintptr_t)0x1001, ZKR_ECLOSED);
  ck_assert_ptr_eq(zkr_from_zh(NULL), NULL);
}
END_TEST

/* Many handles open at once, closed in another order: each stays live
 * until its own close (the registry keeps them apart). */
START_TEST(many_handles) {
  enum { N = 40 };
  zkr_t *z[N];
  for (int i = 0; i < N; i++) z[i] = open_nowhere();
  for (int i = 0; i < N; i += 2) ck_assert_int_eq(zkr_close(z[i]), ZOK);
  for (int i = 0; i < N; i++) {
    zkr_stats_t *s = NULL;
    ck_assert_int_eq(zkr_stats(z[i], &s), i % 2 ? ZOK : ZKR_ECLOSED);
    zkr_stats_free(s);
  }
  for (int i = 1; i < N; i += 2) ck_assert_int_eq(zkr_close(z[i]), ZOK);
  for (int i = 0; i < N; i++) ck_assert_int_eq(zkr_close(z[i]), ZKR_ECLOSED);
}
END_TEST

/* Threads keep calling while another thread closes: every call returns a
 * documented code, each accepted one completes exactly once, and nothing
 * touches freed memory (this is the test that ASan and TSan watch). */
typedef struct {
  zkr_t *z;
  int accepted, refused, other;
} racer_t;

static _Atomic int race_done, race_bad;

static void race_cb(int rc, const char *v, int l, const struct Stat *s, const void *d) {
  (void)v;
  (void)l;
  (void)s;
  (void)d;
  if (rc != ZCLOSING && rc != ZCONNECTIONLOSS) race_bad++;
  race_done++;
}

static void *racer(void *arg) {
  racer_t *r = arg;
  for (unsigned i = 0;; i++) {
    zkr_state(r->z);
    zkr_set_watcher(r->z, NULL);
    int rc = zkr_aget(r->z, "/race", 0, race_cb, NULL);
    if (rc == ZOK) r->accepted++;
    else if (rc == ZKR_ECLOSING || rc == ZKR_ECLOSED) r->refused++;
    else r->other++;
    if (rc == ZKR_ECLOSED) break;
  }
  return NULL;
}

START_TEST(calls_racing_close) {
  enum { T = 4 };
  for (int round = 0; round < 20; round++) {
    zkr_t *z = open_nowhere();
    racer_t r[T];
    pthread_t t[T];
    race_done = race_bad = 0;
    for (int i = 0; i < T; i++) {
      r[i] = (racer_t){.z = z};
      ck_assert_int_eq(pthread_create(&t[i], NULL, racer, &r[i]), 0);
    }
    struct timespec ts = {0, 2000000};
    nanosleep(&ts, NULL);
    ck_assert_int_eq(zkr_close(z), ZOK);
    int accepted = 0;
    for (int i = 0; i < T; i++) {
      /* Each racer stops on its own at ZKR_ECLOSED. */
      pthread_join(t[i], NULL);
      ck_assert_int_eq(r[i].other, 0);
      accepted += r[i].accepted;
    }
    ck_assert_int_eq(race_done, accepted);
    ck_assert_int_eq(race_bad, 0);
  }
}
END_TEST

/* ---- host strings: each has its one code ---- */

static char *repeat_hosts(int n) {
  char *s = malloc((size_t)n * 24 + 1), *p = s;
  for (int i = 0; i < n; i++)
    p += sprintf(p, "%s127.0.9.%d:%d", i ? "," : "", i % 250 + 1, 1 + i / 250);
  return s;
}

static const struct {
  const char *hosts;
  int rc;
} host_cases[] = {
    {"", ZKR_EHOSTS_EMPTY},
    {"/app", ZKR_EHOSTS_EMPTY},
    {",", ZKR_EHOSTS_EMPTY},
    {" ", ZKR_EHOSTS_EMPTY_ENTRY},
    /* White space: skipped at the start of an entry and of a port (as
     * stock), refused inside a name and after a port. */
    {" 127.0.9.1:2181", ZOK},
    {"127.0.9.1:2181, 127.0.9.2:2181", ZOK},
    {"127.0.9.1: 2181", ZOK},
    {"127.0.9.1:2181\n", ZKR_EHOSTS_SPACE},
    {"127.0.9.1 :2181", ZKR_EHOSTS_SPACE},
    {"127.0.9.1", ZKR_EHOSTS_NO_PORT},
    {"127.0.9.1:", ZKR_EHOSTS_BAD_PORT},
    {"127.0.9.1:0", ZKR_EHOSTS_BAD_PORT},
    {"127.0.9.1:70000", ZKR_EHOSTS_BAD_PORT},
    {"127.0.9.1:65536", ZKR_EHOSTS_BAD_PORT},
    {"127.0.9.1:-1", ZKR_EHOSTS_BAD_PORT},
    {"127.0.9.1:+2181", ZOK},
    {"127.0.9.1:0x10", ZKR_EHOSTS_BAD_PORT},
    {"127.0.9.1:99999999999999999999", ZKR_EHOSTS_BAD_PORT},
    {":2181", ZKR_EHOSTS_BAD_HOST},
    {"h*st:2181", ZKR_EHOSTS_BAD_HOST},
    {"[::1]", ZKR_EHOSTS_NO_PORT},
    {"[::1]:", ZKR_EHOSTS_BAD_PORT},
    {"[::1]:0", ZKR_EHOSTS_BAD_PORT},
    {"[::1:2181", ZKR_EHOSTS_BAD_IPV6},
    {"::1:2181", ZOK},
    {"::1", ZKR_EHOSTS_BAD_IPV6},
    {"127.0.9.1:2181:2182", ZKR_EHOSTS_BAD_IPV6},
    {"[]:2181", ZKR_EHOSTS_BAD_IPV6},
    {"[::1]x:2181", ZKR_EHOSTS_BAD_IPV6},
    {"[1.2.3.4]:2181", ZKR_EHOSTS_BAD_IPV6},
    {"[::1%]:2181", ZKR_EHOSTS_BAD_IPV6},
    {"[::g]:2181", ZKR_EHOSTS_BAD_IPV6},
    /* Empty entries are skipped and duplicates merged, as stock. */
    {"127.0.9.1:2181,", ZOK},
    {",127.0.9.1:2181", ZOK},
    {"127.0.9.1:2181,,127.0.9.2:2181", ZOK},
    {"127.0.9.1:2181, ,127.0.9.2:2181", ZKR_EHOSTS_EMPTY_ENTRY},
    {"127.0.9.1:2181,127.0.9.1:2181", ZOK},
    {"[::1]:2181,[0:0::1]:2181", ZOK},
    {"127.0.9.1:1/", ZOK}, /* "/" is no chroot */
    {"127.0.9.1:2181//", ZKR_EHOSTS_BAD_CHROOT},
    {"127.0.9.1:2181/app/", ZKR_EHOSTS_BAD_CHROOT},
    {"127.0.9.1:2181/a/../b", ZKR_EHOSTS_BAD_CHROOT},
    {"127.0.9.1:2181/app,127.0.9.2:2181", ZKR_EHOSTS_BAD_CHROOT},
    {"127.0.9.1:1", ZOK},
    {"[::1]:1", ZOK},
    {"[fe80::1%lo]:1", ZOK},
    {"[::ffff:127.0.9.1]:1,127.0.9.2:1/app", ZOK},
    {"localhost:1,127.0.9.2:01", ZOK},
    /* Names are resolved at init, as stock: one that does not resolve is
     * skipped, and nothing resolving fails the handle (".invalid" never
     * resolves, RFC 6761). */
    {"no-such-host.invalid:2181", ZKR_EHOSTS_UNRESOLVED},
    {"127.0.9.1:2181,no-such-host.invalid:2181", ZOK},
};

START_TEST(host_strings) {
  int i = _i;
  zkr_t *z = (zkr_t *)1;
  int rc = zkr_init_opts(&z, host_cases[i].hosts, NULL, 5000, NULL, NULL, 0, NULL);
  ck_assert_msg(rc == host_cases[i].rc, "\"%s\": %s, expected %s", host_cases[i].hosts,
                zkr_err_name(rc), zkr_err_name(host_cases[i].rc));
  if (rc == ZOK) {
    ck_assert_ptr_nonnull(z);
    ck_assert_int_eq(zkr_close(z), ZOK);
  } else {
    ck_assert_ptr_null(z);
  }
}
END_TEST

START_TEST(host_counts_and_lengths) {
  zkr_t *z = NULL;
  char *h = repeat_hosts(ZKR_MAX_MEMBERS + 1);
  ck_assert_int_eq(zkr_init_opts(&z, h, NULL, 5000, NULL, NULL, 0, NULL), ZKR_EHOSTS_TOO_MANY);
  free(h);
  h = repeat_hosts(1000);
  ck_assert_int_eq(zkr_init_opts(&z, h, NULL, 5000, NULL, NULL, 0, NULL), ZKR_EHOSTS_TOO_MANY);
  free(h);
  /* 1,000 members with the same (duplicate) entry: the count is checked
   * first, so the answer is the same. */
  h = malloc(1000 * 15);
  h[0] = '\0';
  for (int i = 0; i < 1000; i++) strcat(h, i ? ",127.0.9.1:1" : "127.0.9.1:1");
  ck_assert_int_eq(zkr_init_opts(&z, h, NULL, 5000, NULL, NULL, 0, NULL), ZKR_EHOSTS_TOO_MANY);
  free(h);
  /* Exactly ZKR_MAX_MEMBERS members: accepted, one session each. */
  h = repeat_hosts(ZKR_MAX_MEMBERS);
  ck_assert_int_eq(zkr_init_opts(&z, h, NULL, 5000, NULL, NULL, 0, NULL), ZOK);
  zkr_stats_t *s;
  ck_assert_int_eq(zkr_stats(z, &s), ZOK);
  ck_assert_int_eq(s->n_members, ZKR_MAX_MEMBERS);
  zkr_stats_free(s);
  ck_assert_int_eq(zkr_close(z), ZOK);
  free(h);
  /* A 1 MB host string: refused by length before any parsing. */
  h = malloc(ONE_MIB + 1);
  memset(h, 'a', ONE_MIB);
  h[ONE_MIB] = '\0';
  ck_assert_int_eq(zkr_init_opts(&z, h, NULL, 5000, NULL, NULL, 0, NULL), ZKR_EHOSTS_TOO_LONG);
  free(h);
  /* A 256-character name: longer than DNS allows. */
  char name[300];
  memset(name, 'a', 256);
  strcpy(name + 256, ":2181");
  ck_assert_int_eq(zkr_init_opts(&z, name, NULL, 5000, NULL, NULL, 0, NULL), ZKR_EHOSTS_BAD_HOST);
  ck_assert_int_eq(zkr_init_opts(&z, NULL, NULL, 5000, NULL, NULL, 0, NULL), ZBADARGUMENTS);
  ck_assert_int_eq(zkr_init_opts(NULL, NOWHERE, NULL, 5000, NULL, NULL, 0, NULL), ZBADARGUMENTS);
  /* zkr_init reports the same through errno. */
  errno = 0;
  ck_assert_ptr_null(zkr_init("127.0.9.1:0", NULL, 5000, NULL, NULL, 0));
  ck_assert_int_eq(errno, EINVAL);
}
END_TEST

/* ---- paths ---- */

static const char *const bad_paths[] = {
    "",     "a",       "a/b", "//",     "/a//b",  "/.",    "/..",
    "/a/.", "/a/../b", "/a/", "/a\x01", "/a\x7f", "/a\tb", "/a/./b",
};

START_TEST(paths) {
  zkr_t *z = open_nowhere();
  char buf[8];
  int len = sizeof buf;
  struct Stat st;
  struct String_vector sv;
  completions = 0;
  for (size_t i = 0; i < sizeof bad_paths / sizeof bad_paths[0]; i++) {
    const char *p = bad_paths[i];
    ck_assert_msg(zkr_aget(z, p, 0, cb_data, NULL) == ZBADARGUMENTS, "aget \"%s\"", p);
    ck_assert_msg(zkr_aexists(z, p, 1, cb_stat, NULL) == ZBADARGUMENTS, "aexists \"%s\"", p);
    ck_assert_msg(zkr_aset(z, p, "x", 1, -1, cb_stat, NULL) == ZBADARGUMENTS, "aset \"%s\"", p);
    ck_assert_msg(zkr_adelete(z, p, -1, cb_void, NULL) == ZBADARGUMENTS, "adelete \"%s\"", p);
    ck_assert_msg(zkr_aget_children(z, p, 0, cb_strings, NULL) == ZBADARGUMENTS, "ls \"%s\"", p);
    ck_assert_msg(zkr_async(z, p, cb_string, NULL) == ZBADARGUMENTS, "async \"%s\"", p);
    ck_assert_msg(zkr_get(z, p, 0, buf, &len, &st) == ZBADARGUMENTS, "get \"%s\"", p);
    ck_assert_msg(zkr_get_children(z, p, 0, &sv) == ZBADARGUMENTS, "ls \"%s\"", p);
    /* A trailing '/' is a sequential create's prefix: only that is allowed. */
    int seq_ok = strcmp(p, "/a/") == 0;
    ck_assert_msg(zkr_acreate(z, p, "x", 1, &ZOO_OPEN_ACL_UNSAFE, ZOO_SEQUENCE, cb_string, NULL) ==
                      (seq_ok ? ZOK : ZBADARGUMENTS),
                  "create seq \"%s\"", p);
    ck_assert_msg(zkr_acreate(z, p, "x", 1, &ZOO_OPEN_ACL_UNSAFE, 0, cb_string, NULL) ==
                      ZBADARGUMENTS,
                  "create \"%s\"", p);
  }
  ck_assert_int_eq(zkr_aget(z, NULL, 0, cb_data, NULL), ZBADARGUMENTS);
  ck_assert_int_eq(zkr_acreate(z, NULL, "x", 1, &ZOO_OPEN_ACL_UNSAFE, 0, cb_string, NULL),
                   ZBADARGUMENTS);
  ck_assert_int_eq(zkr_aset(z, NULL, "x", 1, -1, cb_stat, NULL), ZBADARGUMENTS);
  ck_assert_int_eq(zkr_adelete(z, NULL, -1, cb_void, NULL), ZBADARGUMENTS);
  ck_assert_int_eq(zkr_aset_acl(z, NULL, -1, &ZOO_OPEN_ACL_UNSAFE, cb_void, NULL), ZBADARGUMENTS);
  ck_assert_int_eq(zkr_aget_acl(z, NULL, cb_acl, NULL), ZBADARGUMENTS);
  /* Only the sequential create above was accepted. */
  ck_assert_int_eq(completions, 0);
  /* An embedded NUL ends a C string: "/a\0/../b" is the valid "/a", as
   * with the stock client (the bytes after the NUL are never read). */
  ck_assert_int_eq(zkr_aget(z, "/a\0/../b", 0, cb_data, NULL), ZOK);
  /* Valid corner cases. */
  ck_assert_int_eq(zkr_aget(z, "/", 0, cb_data, NULL), ZOK);
  ck_assert_int_eq(zkr_aget(z, "/...", 0, cb_data, NULL), ZOK);
  ck_assert_int_eq(zkr_aget(z, "/a.b/.c/..d", 0, cb_data, NULL), ZOK);
  ck_assert_int_eq(zkr_close(z), ZOK);
  ck_assert_int_eq(completions, 5); /* each accepted call: one ZCLOSING */
  ck_assert_int_eq(last_rc, ZCLOSING);
}
END_TEST

/* ---- buffer lengths and sizes ---- */

START_TEST(buffers) {
  zkr_t *z = open_nowhere();
  char buf[8];
  int len;
  struct Stat st;
  completions = 0;
  /* zkr_get: NULL length, negative length, NULL buffer with a length. */
  ck_assert_int_eq(zkr_get(z, "/a", 0, buf, NULL, &st), ZBADARGUMENTS);
  len = -1;
  ck_assert_int_eq(zkr_get(z, "/a", 0, buf, &len, &st), ZBADARGUMENTS);
  len = INT_MIN;
  ck_assert_int_eq(zkr_get(z, "/a", 0, buf, &len, &st), ZBADARGUMENTS);
  len = 8;
  ck_assert_int_eq(zkr_get(z, "/a", 0, NULL, &len, &st), ZBADARGUMENTS);
  ck_assert_int_eq(zkr_wget(z, "/a", watcher, NULL, NULL, &len, &st), ZBADARGUMENTS);
  ck_assert_int_eq(zkr_get_children(z, "/a", 0, NULL), ZBADARGUMENTS);
  ck_assert_int_eq(zkr_get_children2(z, "/a", 0, NULL, &st), ZBADARGUMENTS);
  ck_assert_int_eq(zkr_get_acl(z, "/a", NULL, &st), ZBADARGUMENTS);
  /* Values: NULL with a length, lengths below -1, -1 with a buffer. */
  ck_assert_int_eq(zkr_aset(z, "/a", NULL, 5, -1, cb_stat, NULL), ZBADARGUMENTS);
  ck_assert_int_eq(zkr_aset(z, "/a", "x", -2, -1, cb_stat, NULL), ZBADARGUMENTS);
  ck_assert_int_eq(zkr_aset(z, "/a", "x", INT_MIN, -1, cb_stat, NULL), ZBADARGUMENTS);
  ck_assert_int_eq(zkr_aset(z, "/a", "x", -1, -1, cb_stat, NULL), ZBADARGUMENTS);
  ck_assert_int_eq(zkr_acreate(z, "/a", NULL, 5, &ZOO_OPEN_ACL_UNSAFE, 0, cb_string, NULL),
                   ZBADARGUMENTS);
  ck_assert_int_eq(zkr_acreate(z, "/a", "x", -2, &ZOO_OPEN_ACL_UNSAFE, 0, cb_string, NULL),
                   ZBADARGUMENTS);
  /* Sizes at and over the server's 1 MiB limit (jute.maxbuffer, 1048575
   * bytes for the whole request): refused before anything is sent. */
  char *big = calloc(1, (size_t)ONE_MIB + 2);
  ck_assert_int_eq(zkr_aset(z, "/a", big, ONE_MIB, -1, cb_stat, NULL), ZKR_ETOOBIG);
  ck_assert_int_eq(zkr_aset(z, "/a", big, ONE_MIB - 1, -1, cb_stat, NULL), ZKR_ETOOBIG);
  ck_assert_int_eq(zkr_aset(z, "/a", big, ONE_MIB + 1, -1, cb_stat, NULL), ZKR_ETOOBIG);
  ck_assert_int_eq(zkr_aset(z, "/a", big, INT_MAX, -1, cb_stat, NULL), ZKR_ETOOBIG);
  ck_assert_int_eq(zkr_acreate(z, "/a", big, ONE_MIB, &ZOO_OPEN_ACL_UNSAFE, 0, cb_string, NULL),
                   ZKR_ETOOBIG);
  ck_assert_int_eq(zkr_set(z, "/a", big, ONE_MIB, -1), ZKR_ETOOBIG);
  ck_assert_int_eq(zkr_create(z, "/a", big, ONE_MIB, &ZOO_OPEN_ACL_UNSAFE, 0, NULL, 0),
                   ZKR_ETOOBIG);
  /* The whole request counts: a value that fits alone, plus a long path or
   * a large ACL, does not. */
  char *longpath = malloc(600 * 1024);
  memset(longpath, 'p', 600 * 1024 - 1);
  longpath[0] = '/';
  longpath[600 * 1024 - 1] = '\0';
  ck_assert_int_eq(zkr_aset(z, longpath, big, 600 * 1024, -1, cb_stat, NULL), ZKR_ETOOBIG);
  struct ACL acl_entry = {ZOO_PERM_ALL, {"world", longpath}};
  struct ACL_vector big_acl = {1, &acl_entry};
  ck_assert_int_eq(zkr_acreate(z, "/a", big, 600 * 1024, &big_acl, 0, cb_string, NULL),
                   ZKR_ETOOBIG);
  /* Multi: the sum of its operations. */
  zoo_op_t ops[2];
  zoo_op_result_t res[2];
  zoo_set_op_init(&ops[0], "/a", big, 600 * 1024, -1, NULL);
  zoo_set_op_init(&ops[1], "/b", big, 600 * 1024, -1, NULL);
  ck_assert_int_eq(zkr_amulti(z, 2, ops, res, cb_void, NULL), ZKR_ETOOBIG);
  ck_assert_int_eq(zkr_amulti(z, -1, ops, res, cb_void, NULL), ZBADARGUMENTS);
  ck_assert_int_eq(zkr_amulti(z, 2, NULL, res, cb_void, NULL), ZBADARGUMENTS);
  ck_assert_int_eq(zkr_amulti(z, 2, ops, NULL, cb_void, NULL), ZBADARGUMENTS);
  ops[1].type = 4242;
  ck_assert_int_eq(zkr_amulti(z, 2, ops, res, cb_void, NULL), ZBADARGUMENTS);
  zoo_set_op_init(&ops[1], "relative", "x", 1, -1, NULL);
  ck_assert_int_eq(zkr_amulti(z, 2, ops, res, cb_void, NULL), ZBADARGUMENTS);
  /* ACLs that cannot be sent: NULL fields, a negative count, entries
   * missing.  (NULL and empty ones are sent, as stock sends them, and the
   * server answers ZINVALIDACL: tests/unit/test_errors.c.) */
  struct ACL null_id = {ZOO_PERM_ALL, {NULL, "anyone"}};
  struct ACL_vector null_acl = {1, &null_id};
  struct ACL_vector negative = {-1, NULL}, missing = {2, NULL};
  ck_assert_int_eq(zkr_acreate(z, "/a", "x", 1, &null_acl, 0, cb_string, NULL), ZINVALIDACL);
  ck_assert_int_eq(zkr_acreate(z, "/a", "x", 1, &negative, 0, cb_string, NULL), ZINVALIDACL);
  ck_assert_int_eq(zkr_acreate(z, "/a", "x", 1, &missing, 0, cb_string, NULL), ZINVALIDACL);
  ck_assert_int_eq(zkr_aset_acl(z, "/a", -1, &null_acl, cb_void, NULL), ZINVALIDACL);
  /* Auth arguments. */
  ck_assert_int_eq(zkr_add_auth(z, NULL, "u:p", 3, NULL, NULL), ZBADARGUMENTS);
  ck_assert_int_eq(zkr_add_auth(z, "digest", NULL, 3, NULL, NULL), ZBADARGUMENTS);
  ck_assert_int_eq(zkr_add_auth(z, "digest", "u:p", -1, NULL, NULL), ZBADARGUMENTS);
  ck_assert_int_eq(completions, 0);
  /* Accepted edge values: empty value, null data (-1 with NULL), and the
   * largest value the check lets through. */
  ck_assert_int_eq(zkr_aset(z, "/a", "", 0, -1, cb_stat, NULL), ZOK);
  ck_assert_int_eq(zkr_aset(z, "/a", NULL, -1, -1, cb_stat, NULL), ZOK);
  ck_assert_int_eq(zkr_aset(z, "/a", NULL, 0, -1, cb_stat, NULL), ZOK);
  ck_assert_int_eq(zkr_aset(z, "/a", big, ONE_MIB - 1024, -1, cb_stat, NULL), ZOK);
  ck_assert_int_eq(zkr_close(z), ZOK);
  ck_assert_int_eq(completions, 4);
  free(big);
  free(longpath);
}
END_TEST

/* The size limit is the jute_maxbuffer option: a server started with
 * another jute.maxbuffer gets requests up to its own limit. */
START_TEST(size_limit_is_an_option) {
  zkr_options_t o = ZKR_OPTIONS_INIT;
  zkr_t *z = NULL;
  char *big = calloc(1, (size_t)2 * ONE_MIB);
  completions = 0;
  ck_assert_int_eq(zkr_options_set(&o, "jute_maxbuffer", "4096"), ZOK);
  ck_assert_int_eq(zkr_init_opts(&z, NOWHERE, NULL, 5000, NULL, NULL, 0, &o), ZOK);
  ck_assert_int_eq(zkr_aset(z, "/a", big, 5000, -1, cb_stat, NULL), ZKR_ETOOBIG);
  ck_assert_int_eq(zkr_acreate(z, "/a", big, 4000, &ZOO_OPEN_ACL_UNSAFE, 0, cb_string, NULL),
                   ZKR_ETOOBIG);
  ck_assert_int_eq(completions, 0);
  /* Under the limit: accepted (it waits for a member; ZCLOSING at close). */
  ck_assert_int_eq(zkr_aset(z, "/a", big, 3000, -1, cb_stat, NULL), ZOK);
  ck_assert_int_eq(zkr_close(z), ZOK);
  ck_assert_int_eq(completions, 1);
  ck_assert_int_eq(last_rc, ZCLOSING);
  /* Raised: 1 MiB, refused by default, is accepted; 2 MiB is not. */
  completions = 0;
  ck_assert_int_eq(zkr_options_set(&o, "jute_maxbuffer", "2097152"), ZOK);
  ck_assert_int_eq(zkr_init_opts(&z, NOWHERE, NULL, 5000, NULL, NULL, 0, &o), ZOK);
  ck_assert_int_eq(zkr_aset(z, "/a", big, ONE_MIB, -1, cb_stat, NULL), ZOK);
  ck_assert_int_eq(zkr_aset(z, "/a", big, 2 * ONE_MIB, -1, cb_stat, NULL), ZKR_ETOOBIG);
  ck_assert_int_eq(zkr_close(z), ZOK);
  ck_assert_int_eq(completions, 1);
  /* Its range: at least 1 KiB. */
  ck_assert_int_eq(zkr_options_set(&o, "jute_maxbuffer", "1023"), ZKR_EOPTION_VALUE);
  ck_assert_int_eq(zkr_options_set(&o, "jute_maxbuffer", "0"), ZKR_EOPTION_VALUE);
  o.jute_maxbuffer = 100;
  ck_assert_int_eq(zkr_init_opts(&z, NOWHERE, NULL, 5000, NULL, NULL, 0, &o), ZKR_EOPTION_VALUE);
  free(big);
}
END_TEST

/* ---- callbacks ---- */

typedef struct {
  zkr_t *z;
  int get_rc, set_rc, exists_rc, ls_rc, close_rc, async_rc;
  int calls;
} in_cb_t;

static void blocking_inside(int rc, const char *v, int l, const struct Stat *s, const void *d) {
  (void)rc;
  (void)v;
  (void)l;
  (void)s;
  in_cb_t *c = (in_cb_t *)d;
  char buf[4];
  int len = sizeof buf;
  struct Stat st;
  struct String_vector sv;
  c->calls++;
  c->get_rc = zkr_get(c->z, "/a", 0, buf, &len, &st);
  c->set_rc = zkr_set(c->z, "/a", "x", 1, -1);
  c->exists_rc = zkr_exists(c->z, "/a", 0, &st);
  c->ls_rc = zkr_get_children(c->z, "/a", 0, &sv);
  /* Asynchronous calls are fine in a callback; the handle is closing. */
  c->async_rc = zkr_aget(c->z, "/a", 0, cb_data, NULL);
  c->close_rc = zkr_close(c->z);
}

/* The completion of a parked read runs with ZCLOSING on the handle's
 * delivery thread while the handle closes: blocking calls are allowed in a
 * callback (DESIGN.md section 4), and inside this one they return
 * ZKR_ECLOSING at once instead of waiting, as does a close there. */
START_TEST(blocking_call_in_callback) {
  in_cb_t c = {0};
  c.z = open_nowhere();
  ck_assert_int_eq(zkr_aget(c.z, "/a", 0, blocking_inside, &c), ZOK);
  ck_assert_int_eq(zkr_close(c.z), ZOK);
  ck_assert_int_eq(c.calls, 1);
  ck_assert_int_eq(c.get_rc, ZKR_ECLOSING);
  ck_assert_int_eq(c.set_rc, ZKR_ECLOSING);
  ck_assert_int_eq(c.exists_rc, ZKR_ECLOSING);
  ck_assert_int_eq(c.ls_rc, ZKR_ECLOSING);
  ck_assert_int_eq(c.async_rc, ZKR_ECLOSING);
  ck_assert_int_eq(c.close_rc, ZKR_ECLOSING);
}
END_TEST

/* A close from a completion while the handle is live (the operation failed
 * because its parking expired): the close finishes on a helper thread; the
 * test waits until the handle is gone from the registry. */
static void close_inside(int rc, const char *v, int l, const struct Stat *s, const void *d) {
  (void)v;
  (void)l;
  (void)s;
  in_cb_t *c = (in_cb_t *)d;
  c->calls++;
  c->get_rc = rc;
  c->close_rc = zkr_close(c->z);
  c->set_rc = zkr_close(c->z); /* the second close of the same handle */
}

START_TEST(close_in_callback) {
  in_cb_t c = {0};
  ck_assert_int_eq(zkr_init_opts(&c.z, NOWHERE, NULL, 300, NULL, NULL, 0, NULL), ZOK);
  ck_assert_int_eq(zkr_aget(c.z, "/a", 0, close_inside, &c), ZOK);
  for (int i = 0; i < 1000 && zkr_state(c.z) != 0; i++) {
    struct timespec ts = {0, 10000000};
    nanosleep(&ts, NULL);
  }
  ck_assert_int_eq(zkr_state(c.z), 0);
  ck_assert_int_eq(c.calls, 1);
  ck_assert_int_eq(c.get_rc, ZCONNECTIONLOSS);
  ck_assert_int_eq(c.close_rc, ZOK);
  ck_assert_int_eq(c.set_rc, ZKR_ECLOSING);
  ck_assert_int_eq(zkr_close(c.z), ZKR_ECLOSED);
}
END_TEST

START_TEST(error_texts) {
  for (int c = -3000; c <= 3000; c++) {
    ck_assert_ptr_nonnull(zkr_strerror(c));
    ck_assert_ptr_nonnull(zkr_err_name(c));
  }
  ck_assert_ptr_nonnull(zkr_strerror(INT_MIN));
  ck_assert_ptr_nonnull(zkr_err_name(INT_MAX));
  ck_assert_str_eq(zkr_err_name(ZKR_ECLOSED), "ZKR_ECLOSED");
  ck_assert_ptr_nonnull(zkr_role_name((zkr_role_t)-5));
  ck_assert_ptr_nonnull(zkr_role_name((zkr_role_t)999));
  ck_assert_ptr_nonnull(zkr_policy_name(-1));
  ck_assert_ptr_nonnull(zkr_policy_name(999));
}
END_TEST

int main(void) {
  zoo_set_debug_level(0); /* the refused connections to NOWHERE are expected */
  Suite *s = suite_create("badinput");
  TCase *tc = tcase_create("handles");
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, null_handle);
  tcase_add_test(tc, closed_handle);
  tcase_add_test(tc, double_close);
  tcase_add_test(tc, stray_pointers);
  tcase_add_test(tc, many_handles);
  tcase_add_test(tc, calls_racing_close);
  suite_add_tcase(s, tc);
  tc = tcase_create("input");
  tcase_set_timeout(tc, 60);
  tcase_add_loop_test(tc, host_strings, 0, (int)(sizeof host_cases / sizeof host_cases[0]));
  tcase_add_test(tc, host_counts_and_lengths);
  tcase_add_test(tc, paths);
  tcase_add_test(tc, buffers);
  tcase_add_test(tc, size_limit_is_an_option);
  tcase_add_test(tc, error_texts);
  suite_add_tcase(s, tc);
  tc = tcase_create("callbacks");
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, blocking_call_in_callback);
  tcase_add_test(tc, close_in_callback);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? 1 : 0;
}
