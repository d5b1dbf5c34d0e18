/* Server-less unit tests of dispatch (DESIGN.md section 3): the sync
 * before a linearizable read, coalesced so that reads invoked while syncs
 * are in flight share the next one (and are never forgotten when their
 * session goes), and consistency `session`, where reads stick to one
 * member and sync only where no reply of that member's session showed the
 * highest zxid the handle saw (or a completion showed none).  Driven through the
 * function table by the fake ZooKeeper (tests/harness/fakefix.h). */
#include <check.h>
#include <execinfo.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fakefix.h"
#include "zk/zkapi.h"

/* ---- sync coalescing ---- */

/* Every GET on h must follow, on h, a SYNC that arrived after the read was
 * invoked (invoked[i]: fake_seq_now() before read i; gets[i] its GET). */
static void check_synced_after_invoke(fake_zh_t *hh, fake_req_t **gets, const int *invoked, int n) {
  fake_req_t *log[64];
  int kinds[64];
  int nl = fake_log(hh, kinds, log, 64);
  for (int i = 0; i < n; i++) {
    int last_sync = -1, gi = -1;
    for (int k = 0; k < nl && k < 64; k++) {
      if (log[k] == gets[i]) {
        gi = k;
        break;
      }
      if (kinds[k] == FK_SYNC) last_sync = log[k]->seq;
    }
    ck_assert_int_ge(gi, 0);
    ck_assert_msg(last_sync > invoked[i], "read %d (invoked at seq %d) follows sync seq %d", i,
                  invoked[i], last_sync);
  }
}

/* A handle with coalescing at depth and one follower (fake2; fake3 never
 * answers srvr), so every read goes to fake2; the leader is fake1. */
static void open_one_follower_coalescing(int coalesce, int depth) {
  zkr_options_t o;
  opts_default(&o);
  o.sync_coalesce = coalesce;
  o.sync_coalesce_depth = depth;
  ev_reset();
  fake_install();
  fake_set_role(1, ZKR_ROLE_LEADER, 0x100000005LL);
  fake_set_role(2, ZKR_ROLE_FOLLOWER, 0x100000005LL);
  ck_assert_int_eq(zkr_init_opts(&z, HOSTS, watcher, 3000, NULL, (void *)100, 0, &o), ZOK);
  for (int i = 1; i <= 3; i++) ck_assert_ptr_nonnull(h[i] = fake_handle(i, 0));
  wait_leader(0);
  fake_connect(h[1], 0);
  fake_connect(h[2], 0);
  wait_state(ZOO_CONNECTED_STATE);
}

static void open_one_follower(int depth) { open_one_follower_coalescing(1, depth); }

START_TEST(coalesced_reads_share_one_sync) {
  open_one_follower(1);
  int invoked[4];
  fake_req_t *gets[4];
  invoked[0] = fake_seq_now();
  ck_assert_int_eq(zkr_aget(z, "/c0", 0, done_data, (void *)1), ZOK);
  fake_req_t *s1 = fake_wait(h[2], FK_SYNC, NULL);
  ck_assert_ptr_nonnull(s1);
  ck_assert_ptr_nonnull(gets[0] = fake_wait(h[2], FK_GET, "/c0"));
  /* Three more while that sync is in flight: they wait for the next. */
  for (int i = 1; i < 4; i++) {
    char p[8];
    snprintf(p, sizeof p, "/c%d", i);
    invoked[i] = fake_seq_now();
    ck_assert_int_eq(zkr_aget(z, p, 0, done_data, (void *)(intptr_t)(1 + i)), ZOK);
  }
  sleep_ms(50);
  ck_assert_ptr_null(fake_peek(h[2], FK_SYNC, NULL));
  ck_assert_ptr_null(fake_peek(h[2], FK_GET, NULL));
  fake_reply(s1, ZOK, 0, 0, NULL);
  fake_req_t *s2 = fake_wait(h[2], FK_SYNC, NULL);
  ck_assert_ptr_nonnull(s2);
  for (int i = 1; i < 4; i++) {
    char p[8];
    snprintf(p, sizeof p, "/c%d", i);
    ck_assert_ptr_nonnull(gets[i] = fake_wait(h[2], FK_GET, p));
    ck_assert_int_gt(gets[i]->seq, s2->seq);
  }
  check_synced_after_invoke(h[2], gets, invoked, 4);
  /* One sync for the three. */
  ck_assert_ptr_null(fake_peek(h[2], FK_SYNC, NULL));
  for (int i = 0; i < 4; i++) fake_reply(gets[i], ZOK, 5, 5, "v");
  for (int i = 1; i <= 4; i++) ck_assert_int_ge(ev_find(0, EV_DONE, i), 0);
  fake_reply(s2, ZOK, 0, 0, NULL);
  /* No sync in flight now: the next read sends its own, at once. */
  invoked[0] = fake_seq_now();
  ck_assert_int_eq(zkr_aget(z, "/c9", 0, done_data, (void *)9), ZOK);
  ck_assert_ptr_nonnull(fake_wait(h[2], FK_SYNC, NULL));
  ck_assert_ptr_nonnull(gets[0] = fake_wait(h[2], FK_GET, "/c9"));
  check_synced_after_invoke(h[2], gets, invoked, 1);
  zkr_stats_t *st;
  ck_assert_int_eq(zkr_stats(z, &st), ZOK);
  ck_assert_uint_eq(st->members[1].syncs, 3);
  ck_assert_uint_eq(st->members[1].reads, 5);
  zkr_stats_free(st);
}
END_TEST

/* Depth 2: a read that finds one sync in flight sends its own at once;
 * only reads that find two wait, and the first completion sends them
 * behind one new sync. */
START_TEST(coalesced_reads_two_syncs_in_flight) {
  open_one_follower(2);
  int invoked[5];
  fake_req_t *gets[5], *syncs[3];
  char p[8];
  for (int i = 0; i < 2; i++) {
    snprintf(p, sizeof p, "/d%d", i);
    invoked[i] = fake_seq_now();
    ck_assert_int_eq(zkr_aget(z, p, 0, done_data, (void *)(intptr_t)(1 + i)), ZOK);
    ck_assert_ptr_nonnull(syncs[i] = fake_wait(h[2], FK_SYNC, NULL));
    ck_assert_ptr_nonnull(gets[i] = fake_wait(h[2], FK_GET, p));
  }
  /* Two syncs in flight: the next three wait. */
  for (int i = 2; i < 5; i++) {
    snprintf(p, sizeof p, "/d%d", i);
    invoked[i] = fake_seq_now();
    ck_assert_int_eq(zkr_aget(z, p, 0, done_data, (void *)(intptr_t)(1 + i)), ZOK);
  }
  sleep_ms(50);
  ck_assert_ptr_null(fake_peek(h[2], FK_SYNC, NULL));
  ck_assert_ptr_null(fake_peek(h[2], FK_GET, NULL));
  /* The older sync completes: one new sync, then the three. */
  fake_reply(syncs[0], ZOK, 0, 0, NULL);
  ck_assert_ptr_nonnull(syncs[2] = fake_wait(h[2], FK_SYNC, NULL));
  for (int i = 2; i < 5; i++) {
    snprintf(p, sizeof p, "/d%d", i);
    ck_assert_ptr_nonnull(gets[i] = fake_wait(h[2], FK_GET, p));
    ck_assert_int_gt(gets[i]->seq, syncs[2]->seq);
  }
  check_synced_after_invoke(h[2], gets, invoked, 5);
  ck_assert_ptr_null(fake_peek(h[2], FK_SYNC, NULL));
  for (int i = 0; i < 5; i++) fake_reply(gets[i], ZOK, 5, 5, "v");
  for (int i = 1; i <= 5; i++) ck_assert_int_ge(ev_find(0, EV_DONE, i), 0);
  fake_reply(syncs[1], ZOK, 0, 0, NULL);
  fake_reply(syncs[2], ZOK, 0, 0, NULL);
  zkr_stats_t *st;
  ck_assert_int_eq(zkr_stats(z, &st), ZOK);
  ck_assert_uint_eq(st->members[1].syncs, 3);
  ck_assert_uint_eq(st->members[1].reads, 5);
  ck_assert_uint_eq(st->members[1].coalesced, 3);
  zkr_stats_free(st);
}
END_TEST

/* Reads waiting for a sync whose session goes complete once each. */
START_TEST(coalesced_reads_complete_when_session_goes) {
  open_one_follower(1);
  for (int i = 1; i <= 3; i++) {
    char p[8];
    snprintf(p, sizeof p, "/q%d", i);
    ck_assert_int_eq(zkr_aget(z, p, 0, done_data, (void *)(intptr_t)i), ZOK);
  }
  ck_assert_ptr_nonnull(fake_wait(h[2], FK_GET, "/q1"));
  /* The carrier expires: its sync and first read are dropped with the
   * zhandle, and the two waiting reads must not be forgotten. */
  fake_session_event(h[2], ZOO_EXPIRED_SESSION_STATE);
  for (int i = 1; i <= 3; i++) {
    int d = ev_find(0, EV_DONE, i);
    ck_assert_int_ge(d, 0);
    ck_assert_int_eq(ev_at(d).rc, ZCONNECTIONLOSS);
  }
  sleep_ms(100);
  for (int i = 1; i <= 3; i++) ck_assert_int_eq(ev_matching(EV_DONE, i), 1);
}
END_TEST

/* ---- a read whose sync was lost with its connection ---- */

/* The connection of a session is lost after a read's sync went out and
 * before the read did (libzookeeper_mt takes requests while it
 * reconnects, and sends them on the next connection): the sync fails with
 * the old connection, the read runs on the new one with no sync before
 * it, and a server that is behind answers it from behind.  Its reply must
 * not be handed on: the read goes again behind a new sync on the same
 * session.  Loop index: sync coalescing off (0) or on (1). */
START_TEST(read_behind_a_lost_sync_is_read_again) {
  open_one_follower_coalescing(_i, 1);
  ck_assert_int_eq(zkr_aget(z, "/u", 0, done_data, (void *)1), ZOK);
  fake_req_t *s1 = fake_wait(h[2], FK_SYNC, NULL), *g1 = fake_wait(h[2], FK_GET, "/u");
  ck_assert_ptr_nonnull(s1);
  ck_assert_ptr_nonnull(g1);
  ck_assert_int_gt(g1->seq, s1->seq);
  fake_reply(s1, ZCONNECTIONLOSS, 0, 0, NULL);
  fake_reply(g1, ZOK, 5, 5, "old");
  fake_req_t *s2 = fake_wait(h[2], FK_SYNC, NULL), *g2 = fake_wait(h[2], FK_GET, "/u");
  ck_assert_ptr_nonnull(s2);
  ck_assert_ptr_nonnull(g2);
  ck_assert_int_gt(g2->seq, s2->seq);
  ck_assert_int_eq(ev_matching(EV_DONE, 1), 0);
  fake_reply(s2, ZOK, 0, 0, NULL);
  fake_reply(g2, ZOK, 9, 9, "new");
  int d = ev_find(0, EV_DONE, 1);
  ck_assert_int_ge(d, 0);
  ck_assert_int_eq(ev_at(d).rc, ZOK);
  ck_assert_int_eq(ev_at(d).mzxid, 9);
  sleep_ms(50);
  ck_assert_int_eq(ev_matching(EV_DONE, 1), 1);
  /* A read whose sync failed and that failed too is not read again: it
   * completes with the loss (it never ran). */
  ck_assert_int_eq(zkr_aget(z, "/v", 0, done_data, (void *)2), ZOK);
  fake_req_t *s3 = fake_wait(h[2], FK_SYNC, NULL), *g3 = fake_wait(h[2], FK_GET, "/v");
  ck_assert_ptr_nonnull(s3);
  ck_assert_ptr_nonnull(g3);
  fake_reply(s3, ZCONNECTIONLOSS, 0, 0, NULL);
  fake_reply(g3, ZCONNECTIONLOSS, 0, 0, NULL);
  ck_assert_int_ge(d = ev_find(0, EV_DONE, 2), 0);
  ck_assert_int_eq(ev_at(d).rc, ZCONNECTIONLOSS);
  sleep_ms(50);
  ck_assert_ptr_null(fake_peek(h[2], FK_GET, "/v"));
}
END_TEST

/* The same inside a coalesced batch: the sync sent for the waiting reads
 * is lost and the reads behind it are answered on the next connection;
 * the read that ran behind the earlier, successful sync is handed on. */
START_TEST(coalesced_reads_behind_a_lost_sync_are_read_again) {
  open_one_follower(1);
  ck_assert_int_eq(zkr_aget(z, "/a", 0, done_data, (void *)1), ZOK);
  fake_req_t *s1 = fake_wait(h[2], FK_SYNC, NULL), *ga = fake_wait(h[2], FK_GET, "/a");
  ck_assert_ptr_nonnull(s1);
  ck_assert_ptr_nonnull(ga);
  ck_assert_int_eq(zkr_aget(z, "/b", 0, done_data, (void *)2), ZOK);
  ck_assert_int_eq(zkr_aget(z, "/c", 0, done_data, (void *)3), ZOK);
  fake_reply(s1, ZOK, 0, 0, NULL);
  fake_req_t *s2 = fake_wait(h[2], FK_SYNC, NULL), *gb = fake_wait(h[2], FK_GET, "/b"),
             *gc = fake_wait(h[2], FK_GET, "/c");
  ck_assert_ptr_nonnull(s2);
  ck_assert_ptr_nonnull(gb);
  ck_assert_ptr_nonnull(gc);
  fake_reply(ga, ZOK, 5, 5, "a");
  fake_reply(s2, ZCONNECTIONLOSS, 0, 0, NULL);
  fake_reply(gb, ZOK, 5, 5, "old");
  fake_reply(gc, ZOK, 5, 5, "old");
  int d = ev_find(0, EV_DONE, 1);
  ck_assert_int_ge(d, 0);
  ck_assert_int_eq(ev_at(d).mzxid, 5);
  /* /b and /c again, each behind a sync sent after the loss (/c waits
   * for the sync of /b at depth 1, then goes behind one of its own). */
  fake_req_t *gb2 = fake_wait(h[2], FK_GET, "/b");
  ck_assert_ptr_nonnull(gb2);
  for (fake_req_t *s; (s = fake_peek(h[2], FK_SYNC, NULL));) fake_reply(s, ZOK, 0, 0, NULL);
  fake_req_t *gc2 = fake_wait(h[2], FK_GET, "/c");
  ck_assert_ptr_nonnull(gc2);
  int invoked[2] = {s2->seq, s2->seq};
  fake_req_t *gets[2] = {gb2, gc2};
  check_synced_after_invoke(h[2], gets, invoked, 2);
  ck_assert_int_eq(ev_matching(EV_DONE, 2), 0);
  ck_assert_int_eq(ev_matching(EV_DONE, 3), 0);
  for (fake_req_t *s; (s = fake_peek(h[2], FK_SYNC, NULL));) fake_reply(s, ZOK, 0, 0, NULL);
  fake_reply(gb2, ZOK, 9, 9, "new");
  fake_reply(gc2, ZOK, 9, 9, "new");
  for (int tag = 2; tag <= 3; tag++) {
    ck_assert_int_ge(d = ev_find(0, EV_DONE, tag), 0);
    ck_assert_int_eq(ev_at(d).rc, ZOK);
    ck_assert_int_eq(ev_at(d).mzxid, 9);
  }
  for (fake_req_t *s; (s = fake_peek(h[2], FK_SYNC, NULL));) fake_reply(s, ZOK, 0, 0, NULL);
  sleep_ms(50);
  for (int tag = 1; tag <= 3; tag++) ck_assert_int_eq(ev_matching(EV_DONE, tag), 1);
}
END_TEST

/* A watched read of /w (watcher context 7, completion tag 1) on fake2
 * whose sync is lost with its connection while the read is answered on
 * the next one, from behind: the sync and read it is sent again with. */
static void watched_read_behind_a_lost_sync(fake_req_t **s2, fake_req_t **g2) {
  open_one_follower_coalescing(0, 1);
  ck_assert_int_eq(zkr_awget(z, "/w", watcher, (void *)7, done_data, (void *)1), ZOK);
  fake_req_t *s1 = fake_wait(h[2], FK_SYNC, NULL), *g1 = fake_wait(h[2], FK_GET, "/w");
  ck_assert_ptr_nonnull(s1);
  ck_assert_ptr_nonnull(g1);
  fake_reply(s1, ZCONNECTIONLOSS, 0, 0, NULL);
  fake_reply(g1, ZOK, 5, 5, "old");
  ck_assert_ptr_nonnull(*s2 = fake_wait(h[2], FK_SYNC, NULL));
  ck_assert_ptr_nonnull(*g2 = fake_wait(h[2], FK_GET, "/w"));
}

/* A watched read behind a lost sync: the client registered the watch
 * with the reply from behind, and the change the new sync waits for
 * fires the server's watch before the read's second reply.  That change
 * is in what the read returns, so its event is not delivered (the first
 * registration was taken off the client: nothing fires); the watch the
 * second read set fires once, for the next change. */
START_TEST(watched_read_behind_a_lost_sync_gets_the_next_change_only) {
  fake_req_t *s2, *g2;
  watched_read_behind_a_lost_sync(&s2, &g2);
  ck_assert_int_eq(fake_watch_count(h[2], "/w"), 0);
  ck_assert_int_eq(fake_fire(h[2], "/w", ZOO_CHANGED_EVENT), 0);
  fake_reply(s2, ZOK, 0, 0, NULL);
  fake_reply(g2, ZOK, 9, 9, "new");
  int d = ev_find(0, EV_DONE, 1);
  ck_assert_int_ge(d, 0);
  ck_assert_int_eq(ev_at(d).mzxid, 9);
  sleep_ms(100);
  ck_assert_int_eq(ev_matching(EV_WATCH, 7), 0);
  ck_assert_int_eq(fake_watch_count(h[2], "/w"), 1);
  ck_assert_int_eq(fake_fire(h[2], "/w", ZOO_CHANGED_EVENT), 1);
  ck_assert_int_ge(ev_find(0, EV_WATCH, 7), 0);
  sleep_ms(50);
  ck_assert_int_eq(ev_matching(EV_WATCH, 7), 1);
}
END_TEST

/* The same, and the second read fails with its connection too: the read
 * completes with the loss, no watch is left on the client, and a change
 * afterwards calls nobody (the record went with the failed read). */
START_TEST(watched_read_behind_a_lost_sync_that_fails_again_leaves_no_watch) {
  fake_req_t *s2, *g2;
  watched_read_behind_a_lost_sync(&s2, &g2);
  fake_reply(s2, ZCONNECTIONLOSS, 0, 0, NULL);
  fake_reply(g2, ZCONNECTIONLOSS, 0, 0, NULL);
  int d = ev_find(0, EV_DONE, 1);
  ck_assert_int_ge(d, 0);
  ck_assert_int_eq(ev_at(d).rc, ZCONNECTIONLOSS);
  ck_assert_int_eq(fake_watch_count(h[2], "/w"), 0);
  ck_assert_int_eq(fake_fire(h[2], "/w", ZOO_CHANGED_EVENT), 0);
  sleep_ms(100);
  ck_assert_int_eq(ev_matching(EV_WATCH, 7), 0);
  ck_assert_int_eq(ev_matching(EV_DONE, 1), 1);
}
END_TEST

/* ---- consistency session: reads stick, sync on a switch or a write ---- */

START_TEST(session_mode_syncs_only_when_needed) {
  zkr_options_t o;
  opts_default(&o);
  o.consistency = ZKR_CONSISTENCY_SESSION;
  ev_reset();
  fake_install();
  fake_set_role(1, ZKR_ROLE_LEADER, 0x100000005LL);
  fake_set_role(2, ZKR_ROLE_FOLLOWER, 0x100000005LL);
  fake_set_role(3, ZKR_ROLE_FOLLOWER, 0x100000005LL);
  ck_assert_int_eq(zkr_init_opts(&z, HOSTS, watcher, 3000, NULL, (void *)100, 0, &o), ZOK);
  for (int i = 1; i <= 3; i++) ck_assert_ptr_nonnull(h[i] = fake_handle(i, 0));
  wait_leader(0);
  for (int i = 1; i <= 3; i++) fake_connect(h[i], 0);
  wait_state(ZOO_CONNECTED_STATE);
  /* First read: a sync (never synced); the next ones on the same member:
   * none. */
  fake_zh_t *rh = NULL;
  for (int i = 0; i < 4; i++) {
    ck_assert_int_eq(zkr_aget(z, "/s", 0, done_data, (void *)(intptr_t)(10 + i)), ZOK);
    fake_req_t *g = fake_wait(NULL, FK_GET, "/s");
    ck_assert_ptr_nonnull(g);
    if (!rh) rh = g->h;
    ck_assert_ptr_eq(g->h, rh);
    fake_reply(g, ZOK, 5, 5, "v");
  }
  int kinds[16];
  int n = fake_log(rh, kinds, NULL, 16), syncs = 0;
  for (int i = 0; i < n; i++) syncs += kinds[i] == FK_SYNC;
  ck_assert_int_eq(syncs, 1);
  /* A write of the handle completes: the next read syncs again. */
  ck_assert_int_eq(zkr_aset(z, "/s", "w", 1, -1, done_stat, (void *)20), ZOK);
  fake_req_t *w = fake_wait(h[1], FK_SET, "/s");
  fake_reply(w, ZOK, 6, 6, NULL);
  ck_assert_int_ge(ev_find(0, EV_DONE, 20), 0);
  ck_assert_int_eq(zkr_aget(z, "/s", 0, done_data, (void *)21), ZOK);
  fake_req_t *g = fake_wait(rh, FK_GET, "/s");
  ck_assert_ptr_nonnull(g);
  n = fake_log(rh, kinds, NULL, 16);
  ck_assert_int_eq(kinds[n - 2], FK_SYNC);
  fake_reply(g, ZOK, 6, 6, "w");
  /* Its member leaves: the reads move, with a sync. */
  fake_zh_t *other = rh == h[2] ? h[3] : h[2];
  fake_session_event(rh, ZOO_CONNECTING_STATE);
  ck_assert_int_eq(zkr_aget(z, "/s", 0, done_data, (void *)22), ZOK);
  g = fake_wait(other, FK_GET, "/s");
  ck_assert_ptr_nonnull(g);
  n = fake_log(other, kinds, NULL, 16);
  ck_assert_int_eq(kinds[n - 2], FK_SYNC);
  fake_reply(g, ZOK, 6, 6, "w");
  ck_assert_int_ge(ev_find(0, EV_DONE, 22), 0);
}
END_TEST

/* ---- consistency `session`: no sync where a reply already proves it ---- */

/* A session-mode handle on three connected members (fake1 leads). */
static void open_session3(void) {
  zkr_options_t o;
  opts_default(&o);
  o.consistency = ZKR_CONSISTENCY_SESSION;
  open3_opts(&o, NULL);
  wait_state(ZOO_CONNECTED_STATE);
}

/* open_session3, then a first read of /s (tag 10): it syncs (nothing
 * shown yet on that session) on follower *a and shows zxid 5; *b is the
 * other follower. */
static void open_session3_first_read(fake_zh_t **a, fake_zh_t **b) {
  open_session3();
  ck_assert_int_eq(zkr_aget(z, "/s", 0, done_data, (void *)10), ZOK);
  fake_req_t *s = fake_wait(NULL, FK_SYNC, NULL);
  ck_assert_ptr_nonnull(s);
  *a = s->h;
  *b = *a == h[2] ? h[3] : h[2];
  fake_req_t *g = fake_wait(*a, FK_GET, "/s");
  fake_reply(s, ZOK, 0, 0, NULL);
  fake_reply(g, ZOK, 5, 5, "v");
  ck_assert_int_ge(ev_find(0, EV_DONE, 10), 0);
}

static void done_acl(int rc, struct ACL_vector *acl, struct Stat *st, const void *d) {
  (void)acl;
  (void)st;
  ev_add(EV_DONE, TAG(d), rc, 0, 0, "");
}

static int syncs_on(fake_zh_t *hh) {
  int kinds[64];
  int n = fake_log(hh, kinds, NULL, 64), s = 0;
  for (int i = 0; i < n && i < 64; i++) s += kinds[i] == FK_SYNC;
  return s;
}

/* One read of path that must land on hh; whether a sync came before it
 * there (answered, as is the read: rc and the zxid of its Stat). */
static int read_on(fake_zh_t *hh, const char *path, int tag, int rc, int64_t zxid) {
  int before = syncs_on(hh);
  ck_assert_int_eq(zkr_aget(z, path, 0, done_data, (void *)(intptr_t)tag), ZOK);
  fake_req_t *g = fake_wait(hh, FK_GET, path);
  ck_assert_msg(g != NULL, "read %d not on its member", tag);
  int synced = syncs_on(hh) > before;
  if (synced) {
    fake_req_t *s = fake_wait(hh, FK_SYNC, path);
    ck_assert_ptr_nonnull(s);
    fake_reply(s, ZOK, 0, 0, NULL);
  }
  fake_reply(g, rc, zxid, zxid, "v");
  ck_assert_int_ge(ev_find(0, EV_DONE, tag), 0);
  return synced;
}

/* Member n's zxid as the handle's last srvr poll saw it. */
static int64_t srvr_zxid(int n) {
  zkr_stats_t *st = NULL;
  ck_assert_int_eq(zkr_stats(z, &st), ZOK);
  int64_t x = st->members[n - 1].zxid;
  zkr_stats_free(st);
  return x;
}

/* Reads move from member a to member b: srvr shows a in an older epoch
 * (it serves no read then, policy.c) and b in the current one.  Neither
 * session is touched, so no health probe (a sync of its own) is sent. */
static void move_reads(fake_zh_t *a, fake_zh_t *b) {
  int na = fake_handle_server(a), nb = fake_handle_server(b);
  fake_set_role(nb, ZKR_ROLE_FOLLOWER, 0x100000005LL);
  fake_set_role(na, ZKR_ROLE_FOLLOWER, 0x5LL);
  uint64_t deadline = now_ms() + 5000;
  while ((srvr_zxid(na) != 0x5LL || srvr_zxid(nb) != 0x100000005LL) && now_ms() < deadline)
    sleep_ms(5);
  ck_assert_int_eq(srvr_zxid(na), 0x5LL);
}

START_TEST(session_mode_no_sync_where_the_session_showed_the_zxid) {
  fake_zh_t *a, *b;
  open_session3_first_read(&a, &b); /* it synced: nothing shown yet */
  /* a goes: the read moves to b, whose session showed nothing: a sync. */
  move_reads(a, b);
  ck_assert_int_eq(read_on(b, "/s", 11, ZOK, 5), 1);
  /* Back to a: its session showed zxid 5, the handle saw nothing newer,
   * so the switch needs no sync (it did before: any switch synced). */
  move_reads(b, a);
  ck_assert_int_eq(read_on(a, "/s", 12, ZOK, 5), 0);
  /* A write of the handle completes with zxid 6: a showed only 5, so its
   * next read syncs; b then too (it showed 5). */
  ck_assert_int_eq(zkr_aset(z, "/s", "w", 1, -1, done_stat, (void *)20), ZOK);
  fake_req_t *w = fake_wait(h[1], FK_SET, "/s");
  fake_reply(w, ZOK, 6, 6, NULL);
  ck_assert_int_ge(ev_find(0, EV_DONE, 20), 0);
  ck_assert_int_eq(read_on(a, "/s", 21, ZOK, 6), 1);
  ck_assert_int_eq(read_on(a, "/s", 22, ZOK, 6), 0);
  move_reads(a, b);
  ck_assert_int_eq(read_on(b, "/s", 23, ZOK, 6), 1);
  /* Both sessions showed 6: switching back and forth syncs no more. */
  move_reads(b, a);
  ck_assert_int_eq(read_on(a, "/t", 24, ZOK, 2), 0);
  move_reads(a, b);
  ck_assert_int_eq(read_on(b, "/t", 25, ZOK, 2), 0);
}
END_TEST

START_TEST(session_mode_syncs_where_no_zxid_proves_it) {
  fake_zh_t *a, *b;
  open_session3_first_read(&a, &b);
  move_reads(a, b);
  ck_assert_int_eq(read_on(b, "/s", 11, ZOK, 5), 1);
  /* A delete's reply carries no zxid: the next read syncs, though the
   * session showed the handle's highest zxid. */
  ck_assert_int_eq(zkr_adelete(z, "/d", -1, done_void, (void *)20), ZOK);
  fake_req_t *d = fake_wait(h[1], FK_DELETE, "/d");
  fake_reply(d, ZOK, 0, 0, NULL);
  ck_assert_int_ge(ev_find(0, EV_DONE, 20), 0);
  ck_assert_int_eq(read_on(b, "/s", 21, ZOK, 5), 1);
  ck_assert_int_eq(read_on(b, "/s", 22, ZOK, 5), 0);
  /* A read that found no node showed no zxid either (the node may have
   * gone after everything the handle saw): a read on another member then
   * syncs, though a's session showed the highest zxid. */
  move_reads(b, a);
  ck_assert_int_eq(read_on(a, "/s", 23, ZOK, 5), 1);
  move_reads(a, b);
  ck_assert_int_eq(read_on(b, "/gone", 24, ZNONODE, 0), 0);
  move_reads(b, a);
  ck_assert_int_eq(read_on(a, "/gone", 25, ZNONODE, 0), 1);
  /* a's session answered it, and had synced after every such completion
   * before: it needs no sync for its own answer (a poller of a missing
   * node reads on without syncs); b does. */
  ck_assert_int_eq(read_on(a, "/gone", 26, ZNONODE, 0), 0);
  ck_assert_int_eq(read_on(a, "/s", 27, ZOK, 5), 0);
  move_reads(a, b);
  ck_assert_int_eq(read_on(b, "/s", 28, ZOK, 5), 1);
  move_reads(b, a);
  /* A sync that failed proves nothing: the next read on that session
   * syncs again. */
  ck_assert_int_eq(zkr_aset(z, "/s", "w", 1, -1, done_stat, (void *)30), ZOK);
  fake_req_t *w = fake_wait(h[1], FK_SET, "/s");
  fake_reply(w, ZOK, 7, 7, NULL);
  ck_assert_int_ge(ev_find(0, EV_DONE, 30), 0);
  int before = syncs_on(a);
  ck_assert_int_eq(zkr_aget(z, "/s", 0, done_data, (void *)31), ZOK);
  fake_req_t *g = fake_wait(a, FK_GET, "/s");
  ck_assert_ptr_nonnull(g);
  ck_assert_int_eq(syncs_on(a), before + 1);
  fake_req_t *s = fake_wait(a, FK_SYNC, NULL);
  fake_reply(s, ZCONNECTIONLOSS, 0, 0, NULL);
  fake_reply(g, ZCONNECTIONLOSS, 0, 0, NULL);
  ck_assert_int_ge(ev_find(0, EV_DONE, 31), 0);
  ck_assert_int_eq(read_on(a, "/s", 32, ZOK, 7), 1);
  /* An ACL read: no zxid records an ACL change (setACL raises aversion,
   * not mzxid), so a read on another member syncs, though that member's
   * session showed the mark. */
  move_reads(a, b);
  ck_assert_int_eq(read_on(b, "/s", 33, ZOK, 7), 1);
  move_reads(b, a);
  ck_assert_int_eq(read_on(a, "/s", 34, ZOK, 7), 0);
  ck_assert_int_eq(zkr_aget_acl(z, "/s", done_acl, (void *)40), ZOK);
  fake_req_t *ga = fake_wait(a, FK_GETACL, "/s");
  ck_assert_ptr_nonnull(ga);
  fake_reply(ga, ZOK, 7, 7, NULL);
  ck_assert_int_ge(ev_find(0, EV_DONE, 40), 0);
  move_reads(a, b);
  ck_assert_int_eq(read_on(b, "/s", 41, ZOK, 7), 1);
}
END_TEST

/* ---- the frame LeakSanitizer's suppression needs ----
 * libzookeeper_mt 3.8.0 (Debian) makes zoo_awget_children2 a jump into a
 * static function, so no frame of its name is in the stack of what it
 * allocates; zookeeper_close may drop such a request with its memory
 * (docs/robustness.md), and tests/harness/lsan.supp suppresses that leak by
 * a frame named zoo_a* only.  A get_children2 zkroute sends on its own - a
 * read that waited behind a coalesced sync, sent from that sync's
 * completion - must still have one: the soak test's d4 exited 1 under ASan
 * with such a leak.  The spy stands in the table where the library's
 * function would be, and looks at the frames above it as LeakSanitizer
 * would (its symbolizer).  It exists in an ASan build only (`./configure
 * --enable-sanitizers`, CI's asan+ubsan stage): elsewhere there is no
 * LeakSanitizer and nothing to check, and no test is counted. */
#ifdef __SANITIZE_ADDRESS__

extern void __sanitizer_symbolize_pc(void *pc, const char *fmt, char *out, size_t len);

static char supp[8][64];
static int n_supp;
static _Atomic int spy_calls, spy_unmatched;
static zkr__zk_t spy_table;
static int (*spied)(zhandle_t *, const char *, watcher_fn, void *, strings_stat_completion_t,
                    const void *);

static void read_lsan_supp(void) {
  const char *top = getenv("top_srcdir");
  char file[4096];
  snprintf(file, sizeof file, "%s/tests/harness/lsan.supp", top && *top ? top : ".");
  FILE *f = fopen(file, "r");
  ck_assert_msg(f != NULL, "cannot read %s", file);
  char line[256];
  n_supp = 0;
  while (fgets(line, sizeof line, f) && n_supp < 8)
    if (sscanf(line, "leak:%63s", supp[n_supp]) == 1) n_supp++;
  fclose(f);
  ck_assert_int_gt(n_supp, 0);
}

/* Whether a frame above the caller's, inlined ones included, is named by
 * a pattern of lsan.supp (LeakSanitizer matches substrings). */
static int stack_suppressed(void) {
  void *pcs[64];
  int n = backtrace(pcs, 64);
  for (int i = 1; i < n; i++) { /* 0: the spy, which the library's function replaces */
    char names[1024] = "";
    __sanitizer_symbolize_pc((char *)pcs[i] - 1, "%f", names, sizeof names);
    for (const char *f = names; *f; f += strlen(f) + 1)
      for (int k = 0; k < n_supp; k++)
        if (strstr(f, supp[k])) return 1;
  }
  return 0;
}

static int spy_children2(zhandle_t *zh, const char *path, watcher_fn w, void *wc,
                         strings_stat_completion_t c, const void *d) {
  spy_calls++;
  if (!stack_suppressed()) spy_unmatched++;
  return spied(zh, path, w, wc, c, d);
}

START_TEST(children_read_sent_by_zkroute_has_a_frame_lsan_supp_names) {
  read_lsan_supp();
  open_one_follower(1);
  spy_table = *zkr__zk;
  spied = spy_table.zoo_awget_children2;
  spy_table.zoo_awget_children2 = spy_children2;
  zkr__zkapi_use(&spy_table);
  /* The first goes at once, behind a sync; the second waits for that
   * sync, and goes from its completion. */
  ck_assert_int_eq(zkr_aget_children(z, "/k1", 0, done_strings, (void *)1), ZOK);
  fake_req_t *s1 = fake_wait(h[2], FK_SYNC, NULL);
  ck_assert_ptr_nonnull(s1);
  ck_assert_ptr_nonnull(fake_wait(h[2], FK_CHILDREN, "/k1"));
  ck_assert_int_eq(zkr_aget_children(z, "/k2", 0, done_strings, (void *)2), ZOK);
  sleep_ms(50);
  ck_assert_ptr_null(fake_peek(h[2], FK_CHILDREN, "/k2"));
  fake_reply(s1, ZOK, 0, 0, NULL);
  ck_assert_ptr_nonnull(fake_wait(h[2], FK_CHILDREN, "/k2"));
  ck_assert_int_eq(spy_calls, 2);
  ck_assert_msg(spy_unmatched == 0,
                "%d of 2 get_children2 sent with no frame that lsan.supp names above the call",
                (int)spy_unmatched);
}
END_TEST

#endif

static Suite *suite(void) {
  Suite *s = suite_create("dispatch");
  TCase *tc = tcase_create("fake");
  tcase_set_timeout(tc, 30);
  tcase_add_checked_fixture(tc, NULL, teardown);
  tcase_add_test(tc, coalesced_reads_share_one_sync);
  tcase_add_test(tc, coalesced_reads_two_syncs_in_flight);
  tcase_add_test(tc, coalesced_reads_complete_when_session_goes);
  tcase_add_loop_test(tc, read_behind_a_lost_sync_is_read_again, 0, 2);
  tcase_add_test(tc, coalesced_reads_behind_a_lost_sync_are_read_again);
  tcase_add_test(tc, watched_read_behind_a_lost_sync_gets_the_next_change_only);
  tcase_add_test(tc, watched_read_behind_a_lost_sync_that_fails_again_leaves_no_watch);
  tcase_add_test(tc, session_mode_syncs_only_when_needed);
  tcase_add_test(tc, session_mode_no_sync_where_the_session_showed_the_zxid);
  tcase_add_test(tc, session_mode_syncs_where_no_zxid_proves_it);
#ifdef __SANITIZE_ADDRESS__
  tcase_add_test(tc, children_read_sent_by_zkroute_has_a_frame_lsan_supp_names);
#endif
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
