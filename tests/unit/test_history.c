/* Unit tests of the history recorder and checker (tests/harness/history.c) with
 * hand-made histories: a clean one, and for each property histories that
 * violate it (and near misses that must not be flagged), then simulated
 * stores run by several threads: a linearizable one (no violation), one
 * with a lagging replica and one that drops acknowledged writes. */
#include <check.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <zookeeper/zookeeper.h>

#include "history.h"

static zkh_t *H;
static zkh_report_t R;

static void setup(void) { H = zkh_new(1024, 64, 8, 64); }
static void teardown(void) {
  zkh_free(H);
  H = NULL;
}

static int64_t inv(int thread, zkh_type_t type, int key) {
  int64_t op = zkh_invoke(H, thread, type, key, -1);
  ck_assert_int_ge(op, 0);
  return op;
}

/* A write acknowledged with its stat. */
static void ack(int64_t op, int64_t mzxid, int64_t czxid, int version) {
  zkh_done(H, op, ZOK, mzxid, czxid, version, NULL, -1);
}

static void failed(int64_t op, int rc) { zkh_done(H, op, rc, -1, -1, -1, NULL, -1); }

/* A read that returned the value of write w. */
static void got(int64_t op, int64_t w, int64_t mzxid, int64_t czxid, int version) {
  char v[64];
  int n = zkh_value(H, w, v, sizeof v);
  ck_assert_int_gt(n, 0);
  zkh_done(H, op, ZOK, mzxid, czxid, version, v, n);
}

static void nonode(int64_t op) { zkh_done(H, op, ZNONODE, -1, -1, -1, NULL, -1); }

/* Runs the checker; prints violations (visible in the test log). */
static uint64_t check(void) { return zkh_check(H, &R, stderr, 5); }

/* create k = c (czxid 0x10), acknowledged. */
static int64_t created(int key) {
  int64_t c = inv(0, ZKH_CREATE, key);
  ack(c, 0x10, 0x10, 0);
  return c;
}

/* A final-state read returning write w. */
static void final_is(int key, int64_t w, int64_t mzxid, int64_t czxid, int version) {
  got(inv(7, ZKH_FINAL, key), w, mzxid, czxid, version);
}

/* ---- a clean history ---- */

START_TEST(clean_history) {
  int k = zkh_key(H, "/a");
  int64_t c = created(k);
  int64_t s = inv(1, ZKH_SET, k);
  ack(s, 0x11, 0x10, 1);
  got(inv(2, ZKH_GET, k), s, 0x11, 0x10, 1);
  zkh_done(H, inv(2, ZKH_EXISTS, k), ZOK, 0x11, 0x10, 1, NULL, -1);
  /* A read concurrent with a set may return either. */
  int64_t s2 = inv(1, ZKH_SET, k);
  int64_t r = inv(2, ZKH_GET, k);
  got(r, s, 0x11, 0x10, 1);
  ack(s2, 0x12, 0x10, 2);
  final_is(k, s2, 0x12, 0x10, 2);
  (void)c;
  ck_assert_uint_eq(check(), 0);
  ck_assert_uint_eq(R.ops, 7);
  ck_assert_uint_eq(R.by_type[ZKH_SET], 2);
  ck_assert_uint_eq(R.outcome[ZKH_GET][ZKH_OK], 2);
  ck_assert_uint_eq(R.final_keys, 1);
  ck_assert_uint_eq(R.unchecked_keys, 0);
  ck_assert_uint_eq(R.maybe_applied, 0);
  ck_assert_uint_gt(R.checks[ZKH_LOST], 0);
  ck_assert_uint_gt(R.checks[ZKH_STALE], 0);
  ck_assert_uint_gt(R.checks[ZKH_MONOTONIC], 0);
  ck_assert_uint_gt(R.checks[ZKH_ORDER], 0);
  ck_assert_uint_gt(R.checks[ZKH_INTEGRITY], 0);
}
END_TEST

/* ---- 1. lost writes ---- */

START_TEST(lost_acked_set) {
  int k = zkh_key(H, "/a");
  created(k);
  int64_t a = inv(1, ZKH_SET, k), b = inv(1, ZKH_SET, k);
  ack(a, 0x11, 0x10, 1);
  ack(b, 0x12, 0x10, 2);
  final_is(k, a, 0x11, 0x10, 1); /* b is gone */
  ck_assert_uint_gt(check(), 0);
  ck_assert_uint_eq(R.violations[ZKH_LOST], 2); /* older state, and the version */
  ck_assert_uint_eq(R.violations[ZKH_STALE], 0);
}
END_TEST

START_TEST(maybe_applied_write_may_win) {
  int k = zkh_key(H, "/a");
  created(k);
  int64_t a = inv(1, ZKH_SET, k), b = inv(1, ZKH_SET, k);
  ack(a, 0x11, 0x10, 1);
  failed(b, ZCONNECTIONLOSS);
  final_is(k, b, 0x12, 0x10, 2);
  ck_assert_uint_eq(check(), 0);
  ck_assert_uint_eq(R.maybe_applied, 1);
  /* ... or not have been applied at all. */
  teardown();
  setup();
  k = zkh_key(H, "/a");
  created(k);
  a = inv(1, ZKH_SET, k);
  b = inv(1, ZKH_SET, k);
  ack(a, 0x11, 0x10, 1);
  failed(b, ZOPERATIONTIMEOUT);
  final_is(k, a, 0x11, 0x10, 1);
  ck_assert_uint_eq(check(), 0);
}
END_TEST

START_TEST(lost_create) {
  int k = zkh_key(H, "/a");
  created(k);
  nonode(inv(7, ZKH_FINAL, k));
  ck_assert_uint_eq(check(), 1);
  ck_assert_uint_eq(R.violations[ZKH_LOST], 1);
  /* A delete that may have come after the create explains it. */
  teardown();
  setup();
  k = zkh_key(H, "/a");
  created(k);
  failed(inv(3, ZKH_DELETE, k), ZCONNECTIONLOSS);
  nonode(inv(7, ZKH_FINAL, k));
  ck_assert_uint_eq(check(), 0);
  /* One that completed before the create started does not. */
  teardown();
  setup();
  k = zkh_key(H, "/a");
  ack(inv(3, ZKH_DELETE, k), -1, -1, -1);
  created(k);
  nonode(inv(7, ZKH_FINAL, k));
  ck_assert_uint_eq(check(), 1);
  ck_assert_uint_eq(R.violations[ZKH_LOST], 1);
}
END_TEST

START_TEST(deleted_node_back_in_final_state) {
  int k = zkh_key(H, "/a");
  int64_t c = created(k);
  ack(inv(3, ZKH_DELETE, k), -1, -1, -1);
  final_is(k, c, 0x10, 0x10, 0);
  ck_assert_uint_eq(check(), 1);
  ck_assert_uint_eq(R.violations[ZKH_LOST], 1);
}
END_TEST

START_TEST(write_applied_twice) {
  int k = zkh_key(H, "/a");
  created(k);
  int64_t a = inv(1, ZKH_SET, k);
  ack(a, 0x11, 0x10, 1);
  final_is(k, a, 0x11, 0x10, 2); /* one acked set, version 2 */
  ck_assert_uint_eq(check(), 1);
  ck_assert_uint_eq(R.violations[ZKH_LOST], 1);
}
END_TEST

START_TEST(unread_keys_are_counted) {
  int k = zkh_key(H, "/a");
  zkh_key(H, "/b");
  created(k);
  ck_assert_uint_eq(check(), 0);
  ck_assert_uint_eq(R.unchecked_keys, 1);
}
END_TEST

/* ---- 2. stale reads ---- */

START_TEST(stale_read_after_acked_set) {
  int k = zkh_key(H, "/a");
  int64_t c = created(k);
  ack(inv(1, ZKH_SET, k), 0x11, 0x10, 1);
  got(inv(2, ZKH_GET, k), c, 0x10, 0x10, 0);
  ck_assert_uint_eq(check(), 1);
  ck_assert_uint_eq(R.violations[ZKH_STALE], 1);
  /* exists sees the stat only: the same rule. */
  teardown();
  setup();
  k = zkh_key(H, "/a");
  created(k);
  ack(inv(1, ZKH_SET, k), 0x11, 0x10, 1);
  zkh_done(H, inv(2, ZKH_EXISTS, k), ZOK, 0x10, 0x10, 0, NULL, -1);
  ck_assert_uint_eq(check(), 1);
  ck_assert_uint_eq(R.violations[ZKH_STALE], 1);
}
END_TEST

START_TEST(concurrent_read_may_be_old) {
  int k = zkh_key(H, "/a");
  int64_t c = created(k);
  int64_t r = inv(2, ZKH_GET, k); /* started before the set was acked */
  ack(inv(1, ZKH_SET, k), 0x11, 0x10, 1);
  got(r, c, 0x10, 0x10, 0);
  ck_assert_uint_eq(check(), 0);
}
END_TEST

START_TEST(stale_read_of_deleted_node) {
  int k = zkh_key(H, "/a");
  int64_t c = created(k);
  ack(inv(3, ZKH_DELETE, k), -1, -1, -1);
  got(inv(2, ZKH_GET, k), c, 0x10, 0x10, 0);
  ck_assert_uint_eq(check(), 1);
  ck_assert_uint_eq(R.violations[ZKH_STALE], 1);
  /* A node created again after the delete is fine. */
  teardown();
  setup();
  k = zkh_key(H, "/a");
  created(k);
  ack(inv(3, ZKH_DELETE, k), -1, -1, -1);
  int64_t c2 = inv(1, ZKH_CREATE, k);
  ack(c2, 0x20, 0x20, 0);
  got(inv(2, ZKH_GET, k), c2, 0x20, 0x20, 0);
  ck_assert_uint_eq(check(), 0);
}
END_TEST

START_TEST(delete_kills_what_was_read_before_it) {
  /* The create's outcome is unknown, but a read saw the node before the
   * delete started: after the acked delete, that node must be gone. */
  int k = zkh_key(H, "/a");
  int64_t c = inv(0, ZKH_CREATE, k);
  failed(c, ZCONNECTIONLOSS);
  got(inv(2, ZKH_GET, k), c, 0x10, 0x10, 0);
  ack(inv(3, ZKH_DELETE, k), -1, -1, -1);
  got(inv(2, ZKH_GET, k), c, 0x10, 0x10, 0);
  ck_assert_uint_eq(check(), 1);
  ck_assert_uint_eq(R.violations[ZKH_STALE], 1);
}
END_TEST

START_TEST(stale_nonode_after_acked_create) {
  int k = zkh_key(H, "/a");
  created(k);
  nonode(inv(2, ZKH_GET, k));
  ck_assert_uint_eq(check(), 1);
  ck_assert_uint_eq(R.violations[ZKH_STALE], 1);
  /* With a delete in flight, ZNONODE is possible. */
  teardown();
  setup();
  k = zkh_key(H, "/a");
  created(k);
  int64_t d = inv(3, ZKH_DELETE, k);
  nonode(inv(2, ZKH_GET, k));
  ack(d, -1, -1, -1);
  ck_assert_uint_eq(check(), 0);
  /* A delete refused by the server (ZBADVERSION) explains nothing. */
  teardown();
  setup();
  k = zkh_key(H, "/a");
  created(k);
  failed(inv(3, ZKH_DELETE, k), ZBADVERSION);
  nonode(inv(2, ZKH_GET, k));
  ck_assert_uint_eq(check(), 1);
  ck_assert_uint_eq(R.violations[ZKH_STALE], 1);
}
END_TEST

/* ---- 3. monotonic reads ---- */

START_TEST(non_monotonic_reads) {
  int k = zkh_key(H, "/a");
  int64_t c = created(k);
  int64_t s = inv(1, ZKH_SET, k); /* in flight throughout */
  got(inv(2, ZKH_GET, k), s, 0x11, 0x10, 1);
  got(inv(3, ZKH_GET, k), c, 0x10, 0x10, 0); /* went back in time */
  ack(s, 0x11, 0x10, 1);
  ck_assert_uint_eq(check(), 1);
  ck_assert_uint_eq(R.violations[ZKH_MONOTONIC], 1);
  ck_assert_uint_eq(R.violations[ZKH_STALE], 0);
  /* Overlapping reads may come back in any order. */
  teardown();
  setup();
  k = zkh_key(H, "/a");
  c = created(k);
  s = inv(1, ZKH_SET, k);
  int64_t r1 = inv(2, ZKH_GET, k), r2 = inv(3, ZKH_GET, k);
  got(r1, s, 0x11, 0x10, 1);
  got(r2, c, 0x10, 0x10, 0);
  ack(s, 0x11, 0x10, 1);
  ck_assert_uint_eq(check(), 0);
}
END_TEST

START_TEST(node_vanishes_between_reads) {
  int k = zkh_key(H, "/a");
  int64_t c = inv(0, ZKH_CREATE, k);
  failed(c, ZCONNECTIONLOSS); /* unknown outcome: no acked create */
  got(inv(2, ZKH_GET, k), c, 0x10, 0x10, 0);
  nonode(inv(2, ZKH_EXISTS, k));
  ck_assert_uint_eq(check(), 1);
  ck_assert_uint_eq(R.violations[ZKH_MONOTONIC], 1);
}
END_TEST

/* ---- 4. write order ---- */

START_TEST(pipelined_writes_applied_out_of_order) {
  int k = zkh_key(H, "/a");
  created(k);
  int64_t a = inv(1, ZKH_SET, k), b = inv(1, ZKH_SET, k);
  ack(a, 0x12, 0x10, 2);
  ack(b, 0x11, 0x10, 1);
  ck_assert_uint_eq(check(), 1);
  ck_assert_uint_eq(R.violations[ZKH_ORDER], 1);
  /* Across keys too: one write session, one order. */
  teardown();
  setup();
  k = zkh_key(H, "/a");
  int k2 = zkh_key(H, "/b");
  created(k);
  a = inv(1, ZKH_SET, k);
  b = inv(1, ZKH_CREATE, k2);
  ack(a, 0x12, 0x10, 1);
  ack(b, 0x11, 0x11, 0);
  ck_assert_uint_eq(check(), 1);
  ck_assert_uint_eq(R.violations[ZKH_ORDER], 1);
  /* Different threads' concurrent writes may be applied in any order. */
  teardown();
  setup();
  k = zkh_key(H, "/a");
  created(k);
  a = inv(1, ZKH_SET, k);
  b = inv(2, ZKH_SET, k);
  ack(a, 0x12, 0x10, 2);
  ack(b, 0x11, 0x10, 1);
  ck_assert_uint_eq(check(), 0);
}
END_TEST

START_TEST(completions_out_of_issue_order) {
  int k = zkh_key(H, "/a");
  created(k);
  int64_t a = inv(1, ZKH_SET, k), b = inv(1, ZKH_SET, k);
  ack(b, 0x12, 0x10, 2);
  ack(a, 0x11, 0x10, 1);
  ck_assert_uint_eq(check(), 1);
  ck_assert_uint_eq(R.violations[ZKH_ORDER], 1);
  /* Failed writes complete in order too. */
  teardown();
  setup();
  k = zkh_key(H, "/a");
  created(k);
  a = inv(1, ZKH_SET, k);
  b = inv(1, ZKH_DELETE, k);
  failed(b, ZCONNECTIONLOSS);
  failed(a, ZCONNECTIONLOSS);
  ck_assert_uint_eq(check(), 1);
  ck_assert_uint_eq(R.violations[ZKH_ORDER], 1);
  /* A write rejected by the call never completes: not out of order. */
  teardown();
  setup();
  k = zkh_key(H, "/a");
  created(k);
  a = inv(1, ZKH_SET, k);
  b = inv(1, ZKH_SET, k);
  zkh_reject(H, b, ZBADARGUMENTS);
  ack(a, 0x11, 0x10, 1);
  ck_assert_uint_eq(check(), 0);
  ck_assert_uint_eq(R.outcome[ZKH_SET][ZKH_REJECTED], 1);
}
END_TEST

START_TEST(write_after_ack_gets_lower_zxid) {
  int k = zkh_key(H, "/a");
  created(k);
  ack(inv(1, ZKH_SET, k), 0x20, 0x10, 1);
  ack(inv(2, ZKH_SET, zkh_key(H, "/b")), 0x1f, 0x1, 3);
  ck_assert_uint_eq(check(), 1);
  ck_assert_uint_eq(R.violations[ZKH_ORDER], 1);
}
END_TEST

/* ---- 5. integrity ---- */

START_TEST(value_of_failed_write) {
  int k = zkh_key(H, "/a");
  created(k);
  int64_t s = zkh_invoke(H, 1, ZKH_SET, k, 0);
  failed(s, ZBADVERSION);
  got(inv(2, ZKH_GET, k), s, 0x11, 0x10, 1);
  ck_assert_uint_eq(check(), 1);
  ck_assert_uint_eq(R.violations[ZKH_INTEGRITY], 1);
  /* ... or of one the call rejected. */
  teardown();
  setup();
  k = zkh_key(H, "/a");
  created(k);
  s = inv(1, ZKH_SET, k);
  zkh_reject(H, s, -1032);
  got(inv(2, ZKH_GET, k), s, 0x11, 0x10, 1);
  ck_assert_uint_eq(check(), 1);
  ck_assert_uint_eq(R.violations[ZKH_INTEGRITY], 1);
}
END_TEST

START_TEST(value_with_wrong_mzxid) {
  int k = zkh_key(H, "/a");
  created(k);
  int64_t s = inv(1, ZKH_SET, k);
  ack(s, 0x11, 0x10, 1);
  got(inv(2, ZKH_GET, k), s, 0x13, 0x10, 1);
  ck_assert_uint_eq(check(), 1);
  ck_assert_uint_eq(R.violations[ZKH_INTEGRITY], 1);
}
END_TEST

START_TEST(value_applied_twice) {
  int k = zkh_key(H, "/a");
  created(k);
  int64_t s = inv(1, ZKH_SET, k);
  failed(s, ZCONNECTIONLOSS);
  got(inv(2, ZKH_GET, k), s, 0x11, 0x10, 1);
  got(inv(2, ZKH_GET, k), s, 0x14, 0x10, 2);
  ck_assert_uint_eq(check(), 1);
  ck_assert_uint_eq(R.violations[ZKH_INTEGRITY], 1);
}
END_TEST

START_TEST(foreign_and_misplaced_values) {
  int k = zkh_key(H, "/a"), k2 = zkh_key(H, "/b");
  created(k);
  int64_t other = inv(1, ZKH_CREATE, k2);
  ack(other, 0x11, 0x11, 0);
  zkh_done(H, inv(2, ZKH_GET, k), ZOK, 0x10, 0x10, 0, "garbage", 7);
  zkh_done(H, inv(2, ZKH_GET, k), ZOK, 0x10, 0x10, 0, NULL, -1);
  got(inv(2, ZKH_GET, k), other, 0x10, 0x10, 0); /* another key's value */
  /* A value naming an op that wrote something else. */
  zkh_done(H, inv(2, ZKH_GET, k), ZOK, 0x10, 0x10, 0, "t5.9#0", 6);
  /* A value from the future: its write is issued after the read ended. */
  int64_t r = inv(2, ZKH_GET, k);
  zkh_done(H, r, ZOK, 0x12, 0x10, 1, "t1.1#7", 6);
  int64_t late = inv(1, ZKH_SET, k);
  ck_assert_int_eq(late, 7);
  ack(late, 0x12, 0x10, 1);
  ck_assert_uint_eq(check(), 5);
  ck_assert_uint_eq(R.violations[ZKH_INTEGRITY], 5);
}
END_TEST

START_TEST(value_parse_is_strict) {
  int k = zkh_key(H, "/a");
  int64_t c = created(k);
  char v[64];
  int n = zkh_value(H, c, v, sizeof v);
  ck_assert_str_eq(v, "t0.0#0");
  ck_assert_int_eq(n, 6);
  ck_assert_int_eq(zkh_value(H, c, v, 4), -1);
  const char *bad[] = {
      "t0.0#", "t0.0#0x", "t0.0", "x0.0#0", "t.0#0", "t0.0##0", "t0.0#00000000000000"};
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    int64_t r = inv(2, ZKH_GET, k);
    zkh_done(H, r, ZOK, 0x10, 0x10, 0, bad[i], (int)strlen(bad[i]));
    ck_assert_int_eq(zkh_op(H, r)->value_op, -2);
  }
  int64_t r = inv(2, ZKH_GET, k);
  zkh_done(H, r, ZOK, 0x10, 0x10, 0, "t0.0#0trailing", 6); /* len wins */
  ck_assert_int_eq(zkh_op(H, r)->value_op, 0);
  ck_assert_uint_eq(check(), 7);
  ck_assert_uint_eq(R.violations[ZKH_INTEGRITY], 7);
}
END_TEST

/* ---- recorder ---- */

START_TEST(keys_capacity_marks_report) {
  zkh_t *h = zkh_new(3, 2, 2, 1);
  ck_assert_ptr_nonnull(h);
  ck_assert_int_eq(zkh_key(h, "/x"), 0);
  ck_assert_int_eq(zkh_key(h, "/y"), 1);
  ck_assert_int_eq(zkh_key(h, "/x"), 0);
  ck_assert_int_eq(zkh_key(h, "/z"), -1);
  ck_assert_int_eq(zkh_key(h, NULL), -1);
  ck_assert_str_eq(zkh_key_path(h, 1), "/y");
  ck_assert_int_eq(zkh_invoke(h, 2, ZKH_GET, 0, -1), -1); /* bad thread */
  ck_assert_int_eq(zkh_invoke(h, 0, ZKH_GET, 5, -1), -1); /* bad key */
  int64_t a = zkh_invoke(h, 0, ZKH_CREATE, 0, -1);
  zkh_mark(h, "step %d", 1);
  zkh_mark(h, "dropped: only one mark fits");
  int64_t b = zkh_invoke(h, 1, ZKH_SET, 0, -1);
  int64_t c = zkh_invoke(h, 1, ZKH_GET, 0, -1);
  ck_assert_int_eq(zkh_invoke(h, 1, ZKH_GET, 0, -1), -1); /* full */
  zkh_done(h, a, ZOK, 0x10, 0x10, 0, NULL, -1);
  zkh_done(h, b, ZCONNECTIONLOSS, -1, -1, -1, NULL, -1);
  /* c never completes: a hang */
  zkh_report_t r;
  ck_assert_uint_eq(zkh_check(h, &r, stderr, 5), 0);
  ck_assert_uint_eq(r.ops, 3);
  ck_assert_uint_eq(r.dropped, 3);
  ck_assert_uint_eq(r.marks, 1);
  ck_assert_uint_eq(r.incomplete, 1);
  ck_assert_uint_eq(r.maybe_applied, 1);
  ck_assert_uint_eq(r.outcome[ZKH_GET][ZKH_PENDING], 1);
  ck_assert_int_eq(r.n_rcs, 2);
  (void)c;
  zkh_free(h);
  zkh_free(NULL);
  ck_assert_ptr_null(zkh_new(0, 1, 1, 0));
}
END_TEST

/* ---- simulated stores, several threads ---- */

enum { SIM_KEYS = 6, SIM_THREADS = 4, SIM_OPS = 4000 };

typedef struct {
  int exists;
  int64_t value_op, mzxid, czxid;
  int version;
} node_t;

typedef enum { SIM_GOOD, SIM_LAGGING, SIM_LOSSY } sim_kind_t;

typedef struct {
  pthread_mutex_t mu;
  node_t node[SIM_KEYS], lag[SIM_KEYS];
  int64_t zxid;
  sim_kind_t kind;
  unsigned lag_tick;
} store_t;

static store_t S;

typedef struct {
  int thread;
  unsigned seed;
} sim_arg_t;

/* Applies one op atomically, as the leader would; a lagging store serves
 * some reads from a copy refreshed only now and then, a lossy one
 * acknowledges some sets it does not apply. */
static void sim_op(int thread, unsigned *seed) {
  int key = (int)(rand_r(seed) % SIM_KEYS);
  int kind = (int)(rand_r(seed) % 10);
  zkh_type_t t = kind < 2   ? ZKH_CREATE
                 : kind < 5 ? ZKH_SET
                 : kind < 6 ? ZKH_DELETE
                 : kind < 9 ? ZKH_GET
                            : ZKH_EXISTS;
  int64_t op = zkh_invoke(H, thread, t, key, -1);
  ck_assert_int_ge(op, 0);
  char v[64];
  int vn = zkh_value(H, op, v, sizeof v);
  pthread_mutex_lock(&S.mu);
  node_t *n = &S.node[key];
  int rc = ZOK;
  node_t res = *n;
  switch (t) {
  case ZKH_CREATE:
    if (n->exists) {
      rc = ZNODEEXISTS;
    } else {
      *n = (node_t){1, op, ++S.zxid, S.zxid, 0};
      res = *n;
    }
    break;
  case ZKH_SET:
    if (!n->exists) {
      rc = ZNONODE;
    } else if (S.kind == SIM_LOSSY && rand_r(seed) % 50 == 0) {
      res.mzxid = ++S.zxid; /* acknowledged, never applied */
      res.version++;
    } else {
      n->value_op = op;
      n->mzxid = ++S.zxid;
      n->version++;
      res = *n;
    }
    break;
  case ZKH_DELETE:
    if (!n->exists) rc = ZNONODE;
    else n->exists = 0, ++S.zxid;
    break;
  default:
    if (S.kind == SIM_LAGGING && rand_r(seed) % 3 == 0) res = S.lag[key];
    if (!res.exists) rc = ZNONODE;
    break;
  }
  if (S.kind == SIM_LAGGING && ++S.lag_tick % 40 == 0) memcpy(S.lag, S.node, sizeof S.lag);
  pthread_mutex_unlock(&S.mu);
  if (rc != ZOK) {
    zkh_done(H, op, rc, -1, -1, -1, NULL, -1);
  } else if (t == ZKH_DELETE) {
    zkh_done(H, op, rc, -1, -1, -1, NULL, -1);
  } else if (t == ZKH_GET) {
    vn = zkh_value(H, res.value_op, v, sizeof v);
    zkh_done(H, op, rc, res.mzxid, res.czxid, res.version, v, vn);
  } else {
    zkh_done(H, op, rc, res.mzxid, res.czxid, res.version, NULL, -1);
  }
}

static void *sim_thread(void *p) {
  sim_arg_t *a = p;
  for (int i = 0; i < SIM_OPS; i++) sim_op(a->thread, &a->seed);
  return NULL;
}

static uint64_t simulate(sim_kind_t kind) {
  zkh_free(H);
  H = zkh_new(SIM_THREADS * SIM_OPS + SIM_KEYS, SIM_KEYS, SIM_THREADS + 1, 8);
  ck_assert_ptr_nonnull(H);
  memset(&S, 0, sizeof S);
  pthread_mutex_init(&S.mu, NULL);
  S.kind = kind;
  for (int k = 0; k < SIM_KEYS; k++) {
    char p[16];
    snprintf(p, sizeof p, "/k%d", k);
    ck_assert_int_eq(zkh_key(H, p), k);
  }
  zkh_mark(H, "simulation %d", (int)kind);
  pthread_t th[SIM_THREADS];
  sim_arg_t args[SIM_THREADS];
  for (int i = 0; i < SIM_THREADS; i++) {
    args[i] = (sim_arg_t){i, 1234u + (unsigned)i};
    pthread_create(&th[i], NULL, sim_thread, &args[i]);
  }
  for (int i = 0; i < SIM_THREADS; i++) pthread_join(th[i], NULL);
  /* The final state, read from the store itself. */
  for (int k = 0; k < SIM_KEYS; k++) {
    int64_t op = zkh_invoke(H, SIM_THREADS, ZKH_FINAL, k, -1);
    node_t *n = &S.node[k];
    if (!n->exists) {
      zkh_done(H, op, ZNONODE, -1, -1, -1, NULL, -1);
    } else {
      char v[64];
      int vn = zkh_value(H, n->value_op, v, sizeof v);
      zkh_done(H, op, ZOK, n->mzxid, n->czxid, n->version, v, vn);
    }
  }
  pthread_mutex_destroy(&S.mu);
  return zkh_check(H, &R, stderr, 2);
}

START_TEST(simulated_linearizable_store) {
  ck_assert_uint_eq(simulate(SIM_GOOD), 0);
  ck_assert_uint_eq(R.ops, SIM_THREADS * SIM_OPS + SIM_KEYS);
  ck_assert_uint_eq(R.incomplete, 0);
  ck_assert_uint_gt(R.outcome[ZKH_DELETE][ZKH_OK], 100);
  ck_assert_uint_gt(R.outcome[ZKH_GET][ZKH_FAILED], 100); /* ZNONODE */
  ck_assert_uint_gt(R.checks[ZKH_STALE], 5000);
}
END_TEST

START_TEST(simulated_lagging_replica) {
  ck_assert_uint_gt(simulate(SIM_LAGGING), 0);
  ck_assert_uint_gt(R.violations[ZKH_STALE], 0);
  ck_assert_uint_gt(R.violations[ZKH_MONOTONIC], 0);
  ck_assert_uint_eq(R.violations[ZKH_ORDER], 0);
}
END_TEST

START_TEST(simulated_lossy_store) {
  ck_assert_uint_gt(simulate(SIM_LOSSY), 0);
  ck_assert_uint_gt(R.violations[ZKH_STALE] + R.violations[ZKH_LOST], 0);
  ck_assert_uint_eq(R.violations[ZKH_ORDER], 0);
}
END_TEST

/* ---- linear time ---- */

static double check_seconds(uint32_t n) {
  zkh_free(H);
  H = zkh_new(n, 16, 4, 4);
  ck_assert_ptr_nonnull(H);
  int64_t last[16], mz[16], zx = 0;
  int ver[16] = {0};
  for (int k = 0; k < 16; k++) {
    char p[16];
    snprintf(p, sizeof p, "/k%d", k);
    zkh_key(H, p);
    last[k] = inv(0, ZKH_CREATE, k);
    mz[k] = ++zx;
    ack(last[k], mz[k], mz[k], 0);
  }
  for (uint32_t i = 16; i < n; i++) {
    int k = (int)(i % 16);
    if (i % 3 == 0) {
      last[k] = inv((int)(i % 4), ZKH_SET, k);
      mz[k] = ++zx;
      ack(last[k], mz[k], 1 + k, ++ver[k]);
    } else {
      got(inv((int)(i % 4), ZKH_GET, k), last[k], mz[k], 1 + k, ver[k]);
    }
  }
  struct timespec a, b;
  clock_gettime(CLOCK_MONOTONIC, &a);
  uint64_t v = zkh_check(H, &R, NULL, 0);
  clock_gettime(CLOCK_MONOTONIC, &b);
  ck_assert_uint_eq(v, 0);
  ck_assert_uint_eq(R.ops, n);
  return (double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) / 1e9;
}

/* One pass: a million ops check in well under the timeout (a quadratic
 * checker would need hours).  The times are printed; no ratio is asserted
 * because the machine is shared and the small run fits in the cache.  The
 * bound is 5 s in a normal build, stretched as Check's timeouts are
 * (CK_TIMEOUT_MULTIPLIER, which the sanitizer stages set): under
 * ThreadSanitizer, beside another test, it took 5.05 s. */
START_TEST(checker_is_linear) {
  double t1 = check_seconds(100000), t2 = check_seconds(1000000);
  const char *m = getenv("CK_TIMEOUT_MULTIPLIER");
  double bound = 5.0 * (m && atof(m) > 1 ? atof(m) : 1);
  fprintf(stderr,
          "checker: 100000 ops in %.3f s, 1000000 ops in %.3f s (%.0f ns/op), bound %.0f s\n", t1,
          t2, t2 / 1000000 * 1e9, bound);
  ck_assert(t2 < bound);
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("history");
  TCase *tc = tcase_create("hand-made");
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_set_timeout(tc, 30);
  tcase_add_test(tc, clean_history);
  tcase_add_test(tc, lost_acked_set);
  tcase_add_test(tc, maybe_applied_write_may_win);
  tcase_add_test(tc, lost_create);
  tcase_add_test(tc, deleted_node_back_in_final_state);
  tcase_add_test(tc, write_applied_twice);
  tcase_add_test(tc, unread_keys_are_counted);
  tcase_add_test(tc, stale_read_after_acked_set);
  tcase_add_test(tc, concurrent_read_may_be_old);
  tcase_add_test(tc, stale_read_of_deleted_node);
  tcase_add_test(tc, delete_kills_what_was_read_before_it);
  tcase_add_test(tc, stale_nonode_after_acked_create);
  tcase_add_test(tc, non_monotonic_reads);
  tcase_add_test(tc, node_vanishes_between_reads);
  tcase_add_test(tc, pipelined_writes_applied_out_of_order);
  tcase_add_test(tc, completions_out_of_issue_order);
  tcase_add_test(tc, write_after_ack_gets_lower_zxid);
  tcase_add_test(tc, value_of_failed_write);
  tcase_add_test(tc, value_with_wrong_mzxid);
  tcase_add_test(tc, value_applied_twice);
  tcase_add_test(tc, foreign_and_misplaced_values);
  tcase_add_test(tc, value_parse_is_strict);
  tcase_add_test(tc, keys_capacity_marks_report);
  suite_add_tcase(s, tc);
  TCase *sim = tcase_create("simulated");
  tcase_add_checked_fixture(sim, setup, teardown);
  tcase_set_timeout(sim, 60);
  tcase_add_test(sim, simulated_linearizable_store);
  tcase_add_test(sim, simulated_lagging_replica);
  tcase_add_test(sim, simulated_lossy_store);
  tcase_add_test(sim, checker_is_linear);
  suite_add_tcase(s, sim);
  return s;
}

int main(void) {
  SRunner *sr = srunner_create(suite());
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed == 0 ? 0 : 1;
}
