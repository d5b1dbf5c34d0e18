/* Integration tests of hedged reads (docs/hedging.md)
 * against the real 3-node ensemble of tests/integration/integration.sh, behind its
 * fault proxy.  One follower's client link is slowed by SLOW_MS each way
 * (`fault delay cN`), so a read it serves takes at least 2 x SLOW_MS; the
 * other follower stays fast.  Ejection is switched off (health=off) so that
 * the slow follower keeps its share of the reads, as in the first moments
 * of a fault before ejection acts.
 *
 *   hedged_reads_beat_slow_member  every read type (get, exists, children,
 *       children2, acl) completes once, with the right result, in less than
 *       SLOW_MS; once the late replies are in, every hedge has exactly one
 *       discarded reply and no completion ran twice;
 *   cap_holds                      default cap (5 %): hedges sent <= 5 % of
 *       hedgeable reads, the rest counted as capped; watched reads and
 *       writes are never hedgeable;
 *   close_with_hedges_outstanding  zkr_close while the slow first requests
 *       are pending: every completion still runs exactly once. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "it_common.h"

#define SLOW_MS 300
#define N_READS 50
#define N_CAP 400
#define MAXR N_CAP

static const char VALUE[] = "hedged-value";

typedef struct {
  _Atomic int calls[MAXR];
  _Atomic int done;
  int rc[MAXR];
  int ok[MAXR];
  uint64_t t0[MAXR], t1[MAXR];
} tally_t;

typedef struct {
  tally_t *t;
  int i;
} ctx_t;

static ctx_t ctxs[MAXR];

static void mark(const void *data, int rc, int ok) {
  const ctx_t *c = data;
  tally_t *t = c->t;
  int n = atomic_fetch_add(&t->calls[c->i], 1);
  if (n == 0) {
    t->rc[c->i] = rc;
    t->ok[c->i] = ok;
    t->t1[c->i] = it_now_ms();
    atomic_fetch_add(&t->done, 1);
  }
}

static int stat_ok(const struct Stat *st, int children) {
  return st && st->dataLength == (int)strlen(VALUE) && st->numChildren == children;
}

static void on_get(int rc, const char *v, int len, const struct Stat *st, const void *d) {
  mark(d, rc,
       rc == ZOK && len == (int)strlen(VALUE) && v && memcmp(v, VALUE, (size_t)len) == 0 &&
           stat_ok(st, 1));
}
static void on_exists(int rc, const struct Stat *st, const void *d) {
  mark(d, rc, rc == ZOK && stat_ok(st, 1));
}
static void on_children(int rc, const struct String_vector *s, const void *d) {
  mark(d, rc, rc == ZOK && s && s->count == 1 && strcmp(s->data[0], "c") == 0);
}
static void on_children2(int rc, const struct String_vector *s, const struct Stat *st,
                         const void *d) {
  mark(d, rc, rc == ZOK && s && s->count == 1 && strcmp(s->data[0], "c") == 0 && stat_ok(st, 1));
}
static void on_acl(int rc, struct ACL_vector *acl, struct Stat *st, const void *d) {
  mark(d, rc,
       rc == ZOK && acl && acl->count == 1 && strcmp(acl->data[0].id.scheme, "world") == 0 &&
           stat_ok(st, 1));
}

/* Read i of t, of type i % 5. */
static void issue(zkr_t *z, const char *path, tally_t *t, int i) {
  ctxs[i].t = t;
  ctxs[i].i = i;
  t->t0[i] = it_now_ms();
  int rc;
  switch (i % 5) {
  case 0: rc = zkr_aget(z, path, 0, on_get, &ctxs[i]); break;
  case 1: rc = zkr_aexists(z, path, 0, on_exists, &ctxs[i]); break;
  case 2: rc = zkr_aget_children(z, path, 0, on_children, &ctxs[i]); break;
  case 3: rc = zkr_aget_children2(z, path, 0, on_children2, &ctxs[i]); break;
  default: rc = zkr_aget_acl(z, path, on_acl, &ctxs[i]); break;
  }
  ck_assert_msg(rc == ZOK, "read %d: %s", i, zkr_strerror(rc));
}

static void wait_done(tally_t *t, int n, int limit_ms) {
  uint64_t end = it_now_ms() + (uint64_t)limit_ms;
  while (atomic_load(&t->done) < n) {
    ck_assert_msg(it_now_ms() < end, "%d of %d reads completed after %d ms", atomic_load(&t->done),
                  n, limit_ms);
    it_sleep_ms(5);
  }
}

static zkr_stats_t *stats(zkr_t *z) {
  zkr_stats_t *s;
  ck_assert_int_eq(zkr_stats(z, &s), ZOK);
  return s;
}

static char node[128];

/* The node every test reads: VALUE and one child "c". */
static void make_node(zkr_t *z) {
  it_path(node, sizeof node, "hedge");
  char child[160];
  snprintf(child, sizeof child, "%s/c", node);
  ck_assert_int_eq(zkr_create(z, node, VALUE, (int)strlen(VALUE), &ZOO_OPEN_ACL_UNSAFE, 0, NULL, 0),
                   ZOK);
  ck_assert_int_eq(zkr_create(z, child, "", 0, &ZOO_OPEN_ACL_UNSAFE, 0, NULL, 0), ZOK);
}

/* A handle with ejection off and the given cap, warmed up: every follower
 * has served enough reads for its hedge mark. */
static zkr_t *open_hedging(const char *max_pct, const char *burst) {
  zkr_options_t o = ZKR_OPTIONS_INIT;
  ck_assert_int_eq(zkr_options_set(&o, "health", "off"), ZOK);
  ck_assert_int_eq(zkr_options_set(&o, "hedge_floor_ms", "20"), ZOK);
  if (max_pct) ck_assert_int_eq(zkr_options_set(&o, "hedge_max_pct", max_pct), ZOK);
  if (burst) ck_assert_int_eq(zkr_options_set(&o, "hedge_burst", burst), ZOK);
  zkr_t *z = it_open(&o, NULL, NULL);
  make_node(z);
  for (int i = 0; i < 120; i++) {
    char buf[64];
    int len = sizeof buf;
    ck_assert_int_eq(zkr_get(z, node, 0, buf, &len, NULL), ZOK);
  }
  zkr_stats_t *s = stats(z);
  ck_assert_int_eq(s->hedging, 1);
  printf("hedge: warmed up, delay %.2f ms, %llu hedges so far\n", s->hedge_delay_ms,
         (unsigned long long)s->hedges_sent);
  zkr_stats_free(s);
  return z;
}

static int slow_member(zkr_t *z) {
  zkr_stats_t *s = stats(z);
  int f = -1;
  for (int i = 0; i < s->n_members && f < 0; i++)
    if (s->members[i].role == ZKR_ROLE_FOLLOWER) f = i;
  zkr_stats_free(s);
  ck_assert_int_ge(f, 0);
  return f;
}

static void slow(int member, int ms) {
  char cmd[64];
  snprintf(cmd, sizeof cmd, "delay c%d %d 0", member + 1, ms);
  ck_assert_msg(it_fault(cmd) == 0,
                "needs a proxied ensemble (tests/integration/integration.sh starts one)");
}

static void heal(void) { it_fault("clear all"); }

static void noop_watcher(zhandle_t *zh, int type, int state, const char *path, void *ctx) {
  (void)zh;
  (void)type;
  (void)state;
  (void)path;
  (void)ctx;
}

START_TEST(hedged_reads_beat_slow_member) {
  static tally_t t;
  memset(&t, 0, sizeof t);
  zkr_t *z = open_hedging("100", "1000");
  int sm = slow_member(z);
  zkr_stats_t *a = stats(z);
  slow(sm, SLOW_MS);
  for (int i = 0; i < N_READS; i++) {
    issue(z, node, &t, i);
    it_sleep_ms(10);
  }
  wait_done(&t, N_READS, 5000);
  uint64_t worst = 0;
  for (int i = 0; i < N_READS; i++) {
    uint64_t l = t.t1[i] - t.t0[i];
    if (l > worst) worst = l;
    ck_assert_msg(t.rc[i] == ZOK && t.ok[i], "read %d (type %d): rc %s, result %s", i, i % 5,
                  zkr_err_name(t.rc[i]), t.ok[i] ? "right" : "wrong");
  }
  /* Every late first request has its reply by now. */
  it_sleep_ms(4 * SLOW_MS);
  zkr_stats_t *b = stats(z);
  uint64_t on_slow = b->members[sm].reads - a->members[sm].reads;
  printf("hedge: %d reads, %llu first sent to the slow member (%d ms each way), worst %llu ms; "
         "hedges sent %llu, won %llu, discarded %llu, delay %.2f ms\n",
         N_READS, (unsigned long long)on_slow, SLOW_MS, (unsigned long long)worst,
         (unsigned long long)(b->hedges_sent - a->hedges_sent),
         (unsigned long long)(b->hedges_won - a->hedges_won),
         (unsigned long long)(b->hedge_discarded - a->hedge_discarded), b->hedge_delay_ms);
  heal();
  for (int i = 0; i < N_READS; i++)
    ck_assert_msg(atomic_load(&t.calls[i]) == 1, "read %d completed %d times", i,
                  atomic_load(&t.calls[i]));
  /* The slow member served a share of first requests, and none of those
   * reads waited for it: they finished well before its reply could come. */
  ck_assert_uint_ge(on_slow, N_READS / 5);
  ck_assert_uint_lt(worst, SLOW_MS);
  uint64_t sent = b->hedges_sent - a->hedges_sent;
  ck_assert_uint_ge(b->hedges_won - a->hedges_won, on_slow);
  /* Every pair left exactly one reply to discard. */
  ck_assert_uint_eq(b->hedge_discarded - a->hedge_discarded, sent);
  zkr_stats_free(a);
  zkr_stats_free(b);
  ck_assert_int_eq(zkr_close(z), ZOK);
}
END_TEST

START_TEST(cap_holds) {
  static tally_t t;
  memset(&t, 0, sizeof t);
  zkr_t *z = open_hedging(NULL, NULL); /* defaults: 5 %, burst 20 */
  int sm = slow_member(z);
  /* Neither watched reads nor writes are hedgeable. */
  zkr_stats_t *a = stats(z);
  /* (Distinct watch contexts, and writes to another node: a watched get
   * and a set of the same node in a tight loop crash the watch registry,
   * with or without hedging - reported separately.) */
  char other[200];
  snprintf(other, sizeof other, "%s/c", node);
  static int wctx[10];
  for (int i = 0; i < 10; i++) {
    char buf[64];
    int len = sizeof buf;
    ck_assert_int_eq(zkr_wget(z, node, noop_watcher, &wctx[i], buf, &len, NULL), ZOK);
    ck_assert_int_eq(zkr_set(z, other, "", 0, -1), ZOK);
  }
  zkr_stats_t *b = stats(z);
  ck_assert_uint_eq(b->hedge_eligible, a->hedge_eligible);
  zkr_stats_free(a);
  zkr_stats_free(b);
  a = stats(z);
  slow(sm, SLOW_MS);
  for (int i = 0; i < N_CAP; i++) {
    issue(z, node, &t, i);
    if (i % 4 == 3) it_sleep_ms(2);
  }
  wait_done(&t, N_CAP, 20000);
  it_sleep_ms(4 * SLOW_MS);
  b = stats(z);
  heal();
  uint64_t eligible = b->hedge_eligible - a->hedge_eligible;
  uint64_t sent = b->hedges_sent - a->hedges_sent;
  uint64_t capped = b->hedges_capped - a->hedges_capped;
  uint64_t on_slow = b->members[sm].reads - a->members[sm].reads;
  printf("hedge cap: %llu hedgeable reads, %llu first sent to the slow member, hedges sent %llu "
         "(%.1f %%), capped %llu; over the handle's life %llu of %llu (%.2f %%)\n",
         (unsigned long long)eligible, (unsigned long long)on_slow, (unsigned long long)sent,
         eligible ? 100.0 * (double)sent / (double)eligible : 0.0, (unsigned long long)capped,
         (unsigned long long)b->hedges_sent, (unsigned long long)b->hedge_eligible,
         b->hedge_eligible ? 100.0 * (double)b->hedges_sent / (double)b->hedge_eligible : 0.0);
  for (int i = 0; i < N_CAP; i++) {
    ck_assert_msg(atomic_load(&t.calls[i]) == 1, "read %d completed %d times", i,
                  atomic_load(&t.calls[i]));
    ck_assert_msg(t.rc[i] == ZOK && t.ok[i], "read %d: %s", i, zkr_err_name(t.rc[i]));
  }
  ck_assert_uint_eq(eligible, N_CAP);
  /* The cap over the handle's whole life (the bucket starts empty). */
  ck_assert_uint_le(b->hedges_sent * 100, b->hedge_eligible * 5);
  ck_assert_uint_gt(sent, 0);
  ck_assert_uint_gt(capped, 0);
  ck_assert_uint_eq(b->hedge_discarded - a->hedge_discarded, sent);
  zkr_stats_free(a);
  zkr_stats_free(b);
  ck_assert_int_eq(zkr_close(z), ZOK);
}
END_TEST

START_TEST(close_with_hedges_outstanding) {
  static tally_t t;
  memset(&t, 0, sizeof t);
  zkr_t *z = open_hedging("100", "1000");
  int sm = slow_member(z);
  slow(sm, SLOW_MS);
  for (int i = 0; i < 20; i++) issue(z, node, &t, i);
  /* Hedges of the slow member's reads have gone and won; its first
   * requests are still on their way. */
  it_sleep_ms(SLOW_MS / 2);
  zkr_stats_t *s = stats(z);
  uint64_t sent = s->hedges_sent;
  zkr_stats_free(s);
  ck_assert_int_eq(zkr_close(z), ZOK);
  heal();
  int ok = 0, closing = 0;
  for (int i = 0; i < 20; i++) {
    ck_assert_msg(atomic_load(&t.calls[i]) == 1, "read %d completed %d times", i,
                  atomic_load(&t.calls[i]));
    ck_assert_msg(t.rc[i] == ZOK || t.rc[i] == ZCLOSING, "read %d: %s", i, zkr_err_name(t.rc[i]));
    ok += t.rc[i] == ZOK;
    closing += t.rc[i] == ZCLOSING;
  }
  printf("hedge close: 20 reads, %llu hedges sent before the close, %d ZOK, %d ZCLOSING\n",
         (unsigned long long)sent, ok, closing);
  ck_assert_uint_gt(sent, 0);
}
END_TEST

static void teardown(void) { heal(); }

int main(void) {
  Suite *s = suite_create("it_hedge");
  /* Every test slows a member's client link at the fault proxy. */
  if (it_have_proxy("it_hedge: case hedge (every test)")) {
    TCase *tc = tcase_create("hedge");
    tcase_set_timeout(tc, 40);
    tcase_add_unchecked_fixture(tc, NULL, teardown);
    tcase_add_checked_fixture(tc, NULL, teardown);
    tcase_add_test(tc, hedged_reads_beat_slow_member);
    tcase_add_test(tc, cap_holds);
    tcase_add_test(tc, close_with_hedges_outstanding);
    suite_add_tcase(s, tc);
  }
  return it_run(s);
}
