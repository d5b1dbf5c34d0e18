/* Integration tests of the core routing against a real 3-node ensemble
 * (started by tests/integration/integration.sh): writes on the leader's session, reads
 * spread over the followers, read-your-writes (pipelined async and
 * multi-threaded sync), another client's write visible to the next read,
 * chroot, ACL + digest auth on every member, the virtual session's events,
 * watches, and close with operations in flight. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "it_common.h"

static int member_with_role(zkr_t *z, zkr_role_t role, int nth) {
  zkr_stats_t *s;
  ck_assert_int_eq(zkr_stats(z, &s), ZOK);
  int found = -1;
  for (int i = 0; i < s->n_members && found < 0; i++)
    if (s->members[i].role == role && nth-- == 0) found = i;
  zkr_stats_free(s);
  return found;
}

/* ---- writes go to the leader's session, and the servers agree ---- */

static void count_done(int rc, const struct Stat *stat, const void *data) {
  (void)stat;
  ck_assert_int_eq(rc, ZOK);
  __atomic_add_fetch((int *)data, 1, __ATOMIC_SEQ_CST);
}

START_TEST(writes_go_to_leader) {
  zkr_t *z = it_open(NULL, NULL, NULL);
  char path[128];
  it_path(path, sizeof path, "w");
  ck_assert_int_eq(zkr_create(z, path, "0", 1, &ZOO_OPEN_ACL_UNSAFE, 0, NULL, 0), ZOK);
  int leader = member_with_role(z, ZKR_ROLE_LEADER, 0);
  ck_assert_int_eq(leader, it_leader_index());
  int64_t before[IT_MEMBERS];
  for (int i = 0; i < IT_MEMBERS; i++) before[i] = it_received(i);
  const int N = 2000;
  int done = 0;
  for (int i = 0; i < N; i++)
    ck_assert_int_eq(zkr_aset(z, path, "x", 1, -1, count_done, &done), ZOK);
  uint64_t deadline = it_now_ms() + 20000;
  while (__atomic_load_n(&done, __ATOMIC_SEQ_CST) < N && it_now_ms() < deadline) it_sleep_ms(5);
  ck_assert_int_eq(done, N);
  int64_t delta[IT_MEMBERS];
  for (int i = 0; i < IT_MEMBERS; i++) delta[i] = it_received(i) - before[i];
  zkr_stats_t *s;
  ck_assert_int_eq(zkr_stats(z, &s), ZOK);
  ck_assert_int_eq(s->write_member, leader);
  uint64_t writes = 0;
  for (int i = 0; i < IT_MEMBERS; i++) {
    if (i != leader) ck_assert_uint_eq(s->members[i].writes, 0);
    writes += s->members[i].writes;
  }
  ck_assert_uint_eq(s->members[leader].writes, writes);
  ck_assert_uint_ge(writes, (uint64_t)N + 1);
  printf("writes_go_to_leader: library writes per member %llu/%llu/%llu; "
         "srvr Received deltas %lld/%lld/%lld (leader %d)\n",
         (unsigned long long)s->members[0].writes, (unsigned long long)s->members[1].writes,
         (unsigned long long)s->members[2].writes, (long long)delta[0], (long long)delta[1],
         (long long)delta[2], leader);
  zkr_stats_free(s);
  /* The servers' own counters: the leader received every write; each
   * follower only the handle's pings and the srvr polls' packets. */
  for (int i = 0; i < IT_MEMBERS; i++) {
    if (i == leader) ck_assert_int_ge(delta[i], N);
    else ck_assert_int_lt(delta[i], N / 20);
  }
  zkr_close(z);
}
END_TEST

/* ---- reads spread over both followers, never the leader ---- */

static void read_done(int rc, const char *v, int len, const struct Stat *st, const void *data) {
  (void)v;
  (void)len;
  (void)st;
  ck_assert_int_eq(rc, ZOK);
  __atomic_add_fetch((int *)data, 1, __ATOMIC_SEQ_CST);
}

/* _i 0: sync_coalesce off, one sync per read; 1: on (the default), 3,000
 * reads issued at once share far fewer syncs. */
START_TEST(reads_spread_over_followers) {
  zkr_options_t o = ZKR_OPTIONS_INIT;
  int coalesce = _i;
  o.sync_coalesce = coalesce ? 1 : -1;
  zkr_t *z = it_open(&o, NULL, NULL);
  char path[128];
  it_path(path, sizeof path, "r");
  ck_assert_int_eq(zkr_create(z, path, "v", 1, &ZOO_OPEN_ACL_UNSAFE, 0, NULL, 0), ZOK);
  int leader = member_with_role(z, ZKR_ROLE_LEADER, 0);
  zkr_stats_t *s0;
  ck_assert_int_eq(zkr_stats(z, &s0), ZOK);
  int64_t before[IT_MEMBERS];
  for (int i = 0; i < IT_MEMBERS; i++) before[i] = it_received(i);
  const int N = 3000;
  int done = 0;
  for (int i = 0; i < N; i++) ck_assert_int_eq(zkr_aget(z, path, 0, read_done, &done), ZOK);
  uint64_t deadline = it_now_ms() + 20000;
  while (__atomic_load_n(&done, __ATOMIC_SEQ_CST) < N && it_now_ms() < deadline) it_sleep_ms(5);
  ck_assert_int_eq(done, N);
  zkr_stats_t *s;
  ck_assert_int_eq(zkr_stats(z, &s), ZOK);
  uint64_t reads[IT_MEMBERS], ejected = 0;
  for (int i = 0; i < IT_MEMBERS; i++)
    ejected += s->members[i].ejections - s0->members[i].ejections;
  for (int i = 0; i < IT_MEMBERS; i++) {
    reads[i] = s->members[i].reads - s0->members[i].reads;
    int64_t d = it_received(i) - before[i];
    printf("reads_spread: member %d (%s) reads %llu syncs %llu srvr Received +%lld\n", i,
           zkr_role_name(s->members[i].role), (unsigned long long)reads[i],
           (unsigned long long)(s->members[i].syncs - s0->members[i].syncs), (long long)d);
    if (i == leader) {
      ck_assert_uint_eq(reads[i], 0);
      ck_assert_int_lt(d, N / 20);
    } else {
      /* Within +-15 % of an even split, unless the health model ejected
       * a follower meanwhile (3,000 reads queued at once on a slowed-down
       * machine, as under valgrind, can make one look slow: then the
       * other takes its share, as it should); every read was synced. */
      if (ejected == 0) {
        ck_assert_uint_ge(reads[i], (uint64_t)(N / 2 * 0.85));
        ck_assert_uint_le(reads[i], (uint64_t)(N / 2 * 1.15));
      } else {
        printf("reads_spread: %llu ejection(s): the split is the health model's\n",
               (unsigned long long)ejected);
      }
      uint64_t syncs = s->members[i].syncs - s0->members[i].syncs;
      if (!coalesce) {
        /* An ejected member is probed (a sync+exists each): more syncs. */
        if (ejected == 0) ck_assert_uint_eq(syncs, reads[i]);
        else ck_assert_uint_ge(syncs, reads[i]);
        /* The server saw a sync and a read for each. */
        ck_assert_int_ge(d, (int64_t)(2 * reads[i]));
      } else {
        printf("reads_spread: member %d: %.1f reads per sync\n", i,
               syncs ? (double)reads[i] / (double)syncs : 0.0);
        ck_assert_uint_ge(syncs, 1);
        ck_assert_uint_le(2 * syncs, reads[i]);
        ck_assert_int_ge(d, (int64_t)(reads[i] + syncs));
      }
    }
  }
  zkr_stats_free(s0);
  zkr_stats_free(s);
  zkr_close(z);
}
END_TEST

/* ---- read-your-writes: 1,000 pipelined async write->read pairs ---- */

typedef struct {
  int expect;
  int got;
  int rc;
  int *done;
} ryw_t;

static void ryw_read(int rc, const char *v, int len, const struct Stat *st, const void *data) {
  (void)st;
  ryw_t *r = (ryw_t *)data;
  r->rc = rc;
  char buf[32] = {0};
  if (rc == ZOK && len > 0 && len < (int)sizeof buf) memcpy(buf, v, (size_t)len);
  r->got = atoi(buf);
  __atomic_add_fetch(r->done, 1, __ATOMIC_SEQ_CST);
}

static void ignore_stat(int rc, const struct Stat *st, const void *data) {
  (void)st;
  (void)data;
  ck_assert_int_eq(rc, ZOK);
}

START_TEST(read_your_writes_pipelined) {
  zkr_t *z = it_open(NULL, NULL, NULL);
  enum { KEYS = 20, PAIRS = 1000 };
  char paths[KEYS][128];
  for (int k = 0; k < KEYS; k++) {
    it_path(paths[k], sizeof paths[k], "ryw");
    ck_assert_int_eq(zkr_create(z, paths[k], "-1", 2, &ZOO_OPEN_ACL_UNSAFE, 0, NULL, 0), ZOK);
  }
  static ryw_t r[PAIRS];
  int done = 0;
  for (int i = 0; i < PAIRS; i++) {
    char v[16];
    int n = snprintf(v, sizeof v, "%d", i);
    r[i] = (ryw_t){.expect = i, .got = -2, .rc = -999, .done = &done};
    ck_assert_int_eq(zkr_aset(z, paths[i % KEYS], v, n, -1, ignore_stat, NULL), ZOK);
    ck_assert_int_eq(zkr_aget(z, paths[i % KEYS], 0, ryw_read, &r[i]), ZOK);
  }
  uint64_t deadline = it_now_ms() + 30000;
  while (__atomic_load_n(&done, __ATOMIC_SEQ_CST) < PAIRS && it_now_ms() < deadline) it_sleep_ms(5);
  ck_assert_int_eq(done, PAIRS);
  /* Read i must see write i or a later write of its key: a read whose
   * write had already completed when it was issued is a sync+read on a
   * follower, and a write of the same key issued after it (i + KEYS, ...)
   * may commit before the follower serves it; that is a concurrent write,
   * not a stale read.  Seen under valgrind, where completions can run
   * before the next call of the loop. */
  int stale = 0, newer = 0;
  for (int i = 0; i < PAIRS; i++) {
    ck_assert_int_eq(r[i].rc, ZOK);
    ck_assert_msg(r[i].got % KEYS == i % KEYS && r[i].got < PAIRS,
                  "read %d got %d: not a value of its key", i, r[i].got);
    if (r[i].got < r[i].expect) {
      stale++;
      fprintf(stderr, "read_your_writes_pipelined: read %d saw %d\n", i, r[i].got);
    }
    newer += r[i].got > r[i].expect;
  }
  printf("read_your_writes_pipelined: %d pairs, %d stale, %d saw a later write of their key\n",
         PAIRS, stale, newer);
  ck_assert_int_eq(stale, 0);
  zkr_close(z);
}
END_TEST

/* ---- read-your-writes with sync calls from 8 threads ---- */

typedef struct {
  zkr_t *z;
  char path[128];
  int errors;
} thr_t;

static void *ryw_thread(void *arg) {
  thr_t *t = arg;
  for (int i = 0; i < 150; i++) {
    char v[16], buf[16];
    int n = snprintf(v, sizeof v, "%d", i), len = sizeof buf;
    if (zkr_set(t->z, t->path, v, n, -1) != ZOK) t->errors++;
    if (zkr_get(t->z, t->path, 0, buf, &len, NULL) != ZOK || len != n ||
        memcmp(buf, v, (size_t)n) != 0)
      t->errors++;
  }
  return NULL;
}

START_TEST(read_your_writes_threads) {
  zkr_t *z = it_open(NULL, NULL, NULL);
  zkr_stats_t *s0;
  ck_assert_int_eq(zkr_stats(z, &s0), ZOK);
  enum { T = 8 };
  thr_t t[T];
  pthread_t th[T];
  for (int i = 0; i < T; i++) {
    t[i].z = z;
    t[i].errors = 0;
    it_path(t[i].path, sizeof t[i].path, "thr");
    ck_assert_int_eq(zkr_create(z, t[i].path, "", 0, &ZOO_OPEN_ACL_UNSAFE, 0, NULL, 0), ZOK);
  }
  for (int i = 0; i < T; i++) pthread_create(&th[i], NULL, ryw_thread, &t[i]);
  for (int i = 0; i < T; i++) pthread_join(th[i], NULL);
  for (int i = 0; i < T; i++) ck_assert_int_eq(t[i].errors, 0);
  /* Each read came after its write completed, so it was free to go to a
   * follower: the per-path tracking must not pull reads to the leader just
   * because other threads' writes are in flight. */
  zkr_stats_t *s;
  ck_assert_int_eq(zkr_stats(z, &s), ZOK);
  uint64_t follower_reads = 0, all = 0;
  for (int i = 0; i < s->n_members; i++) {
    uint64_t d = s->members[i].reads - s0->members[i].reads;
    all += d;
    if (s->members[i].role == ZKR_ROLE_FOLLOWER) follower_reads += d;
  }
  printf("read_your_writes_threads: %llu of %llu reads on followers\n",
         (unsigned long long)follower_reads, (unsigned long long)all);
  ck_assert_uint_eq(all, T * 150);
  ck_assert_uint_ge(follower_reads, all * 9 / 10);
  zkr_stats_free(s0);
  zkr_stats_free(s);
  zkr_close(z);
}
END_TEST

/* ---- another client's acknowledged write is visible to the next read ---- */

START_TEST(other_client_write_visible) {
  zkr_t *z = it_open(NULL, NULL, NULL);
  zhandle_t *stock = it_stock();
  char path[128];
  it_path(path, sizeof path, "other");
  ck_assert_int_eq(zoo_create(stock, path, "", 0, &ZOO_OPEN_ACL_UNSAFE, 0, NULL, 0), ZOK);
  for (int i = 0; i < 200; i++) {
    char v[16], buf[16];
    int n = snprintf(v, sizeof v, "%d", i), len = sizeof buf;
    ck_assert_int_eq(zoo_set(stock, path, v, n, -1), ZOK);
    ck_assert_int_eq(zkr_get(z, path, 0, buf, &len, NULL), ZOK);
    ck_assert_int_eq(len, n);
    ck_assert(memcmp(buf, v, (size_t)n) == 0);
  }
  zookeeper_close(stock);
  zkr_close(z);
}
END_TEST

/* ---- chroot: every member session gets it ---- */

static void stock_synced(int rc, const char *value, const void *data) {
  (void)rc;
  (void)value;
  (void)data;
}

START_TEST(chroot_on_every_member) {
  char root[128], hosts[512];
  it_path(root, sizeof root, "chroot");
  zhandle_t *stock = it_stock();
  ck_assert_int_eq(zoo_create(stock, root, "", 0, &ZOO_OPEN_ACL_UNSAFE, 0, NULL, 0), ZOK);
  snprintf(hosts, sizeof hosts, "%s%s", it_hosts(), root);
  zkr_t *z = it_open_hosts(hosts, NULL, NULL, NULL);
  ck_assert_int_eq(zkr_create(z, "/a", "in-root", 7, &ZOO_OPEN_ACL_UNSAFE, 0, NULL, 0), ZOK);
  char full[256], buf[32];
  snprintf(full, sizeof full, "%s/a", root);
  int len = sizeof buf;
  /* The stock session may sit on a follower that has not applied the
   * create yet: a sync pipelined before the read (same session, FIFO). */
  ck_assert_int_eq(zoo_async(stock, full, stock_synced, NULL), ZOK);
  ck_assert_int_eq(zoo_get(stock, full, 0, buf, &len, NULL), ZOK);
  ck_assert_int_eq(len, 7);
  /* Reads rotate over both followers: each must see the chroot. */
  for (int i = 0; i < 20; i++) {
    len = sizeof buf;
    ck_assert_int_eq(zkr_get(z, "/a", 0, buf, &len, NULL), ZOK);
    ck_assert_int_eq(len, 7);
    ck_assert(memcmp(buf, "in-root", 7) == 0);
    struct String_vector kids;
    ck_assert_int_eq(zkr_get_children(z, "/", 0, &kids), ZOK);
    ck_assert_int_eq(kids.count, 1);
    ck_assert_str_eq(kids.data[0], "a");
    deallocate_String_vector(&kids);
  }
  zkr_stats_t *s;
  ck_assert_int_eq(zkr_stats(z, &s), ZOK);
  for (int i = 0; i < s->n_members; i++)
    if (s->members[i].role == ZKR_ROLE_FOLLOWER) ck_assert_uint_ge(s->members[i].reads, 10);
  zkr_stats_free(s);
  zkr_close(z);
  zookeeper_close(stock);
}
END_TEST

/* ---- ACL + digest auth, readable through every member ---- */

static void auth_cb(int rc, const void *data) {
  __atomic_store_n((int *)data, rc + 1000, __ATOMIC_SEQ_CST);
}

START_TEST(acl_digest_auth_every_member) {
  zkr_t *z = it_open(NULL, NULL, NULL);
  int auth_rc = 0;
  ck_assert_int_eq(zkr_add_auth(z, "digest", "alice:secret", 12, auth_cb, &auth_rc), ZOK);
  uint64_t deadline = it_now_ms() + 5000;
  while (__atomic_load_n(&auth_rc, __ATOMIC_SEQ_CST) == 0 && it_now_ms() < deadline) it_sleep_ms(5);
  ck_assert_int_eq(auth_rc - 1000, ZOK);
  char path[128];
  it_path(path, sizeof path, "acl");
  ck_assert_int_eq(zkr_create(z, path, "secret", 6, &ZOO_CREATOR_ALL_ACL, 0, NULL, 0), ZOK);
  for (int i = 0; i < 20; i++) {
    char buf[16];
    int len = sizeof buf;
    ck_assert_int_eq(zkr_get(z, path, 0, buf, &len, NULL), ZOK);
    ck_assert_int_eq(len, 6);
  }
  struct ACL_vector acl;
  struct Stat st;
  ck_assert_int_eq(zkr_get_acl(z, path, &acl, &st), ZOK);
  ck_assert_int_eq(acl.count, 1);
  ck_assert_str_eq(acl.data[0].id.scheme, "digest");
  deallocate_ACL_vector(&acl);
  zkr_stats_t *s;
  ck_assert_int_eq(zkr_stats(z, &s), ZOK);
  for (int i = 0; i < s->n_members; i++)
    if (s->members[i].role == ZKR_ROLE_FOLLOWER) ck_assert_uint_ge(s->members[i].reads, 8);
  zkr_stats_free(s);
  /* A handle without the credential is refused, on whichever member. */
  zkr_t *other = it_open(NULL, NULL, NULL);
  for (int i = 0; i < 4; i++) {
    char buf[16];
    int len = sizeof buf;
    ck_assert_int_eq(zkr_get(other, path, 0, buf, &len, NULL), ZNOAUTH);
  }
  ck_assert_int_eq(zkr_set(other, path, "x", 1, -1), ZNOAUTH);
  zkr_close(other);
  ck_assert_int_eq(zkr_delete(z, path, -1), ZOK);
  zkr_close(z);
}
END_TEST

/* ---- the virtual session: one CONNECTED event, the app's handle ---- */

typedef struct {
  int events;
  int state;
  zhandle_t *handle;
  void *ctx;
} session_seen_t;

/* Runs on the handle's delivery thread; the test reads under the same
 * mutex. */
static pthread_mutex_t seen_mu = PTHREAD_MUTEX_INITIALIZER;

static void global_watcher(zhandle_t *zh, int type, int state, const char *path, void *ctx) {
  (void)path;
  session_seen_t *seen = ctx;
  if (type != ZOO_SESSION_EVENT) return;
  pthread_mutex_lock(&seen_mu);
  seen->events++;
  seen->state = state;
  seen->handle = zh;
  seen->ctx = ctx;
  pthread_mutex_unlock(&seen_mu);
}

START_TEST(virtual_session_events) {
  session_seen_t seen = {0};
  zkr_t *z = it_open(NULL, global_watcher, &seen);
  it_sleep_ms(300);
  pthread_mutex_lock(&seen_mu);
  /* Three member sessions connected; the application saw one event. */
  ck_assert_int_eq(seen.events, 1);
  ck_assert_int_eq(seen.state, ZOO_CONNECTED_STATE);
  ck_assert_ptr_eq(seen.handle, zkr_as_zh(z));
  ck_assert_ptr_eq(zkr_from_zh(seen.handle), z);
  ck_assert_ptr_eq(seen.ctx, &seen);
  pthread_mutex_unlock(&seen_mu);
  ck_assert_ptr_eq(zkr_get_context(z), &seen);
  ck_assert_int_eq(zkr_state(z), ZOO_CONNECTED_STATE);
  ck_assert_ptr_nonnull(zkr_client_id(z));
  ck_assert_int_gt(zkr_recv_timeout(z), 0);
  zkr_close(z);
}
END_TEST

/* ---- a watch fires once, with the application's handle and context ---- */

typedef struct {
  int fired;
  int type;
  zhandle_t *zh;
  char path[128];
} watch_seen_t;

static void node_watcher(zhandle_t *zh, int type, int state, const char *path, void *ctx) {
  (void)state;
  watch_seen_t *w = ctx;
  /* Fields first, then the count the test thread waits for (TSan). */
  w->type = type;
  w->zh = zh;
  snprintf(w->path, sizeof w->path, "%s", path);
  __atomic_add_fetch(&w->fired, 1, __ATOMIC_SEQ_CST);
}

/* The same watch set again (same path, watcher and context) while its
 * event is on the way: the read that sets it again joins the armed record.
 * With synchronous calls each set follows a watched read, and the sync
 * before that read makes the server process it after the previous set: its
 * event comes first, then the reply, and the server holds a new watch.  So
 * every set fires exactly one event, and the record must outlive the event
 * for the read that re-registered it (this was a use after free). */
START_TEST(watch_set_again_while_it_fires) {
  zkr_t *z = it_open(NULL, NULL, NULL);
  char path[128], buf[16];
  it_path(path, sizeof path, "wagain");
  ck_assert_int_eq(zkr_create(z, path, "0", 1, &ZOO_OPEN_ACL_UNSAFE, 0, NULL, 0), ZOK);
  static watch_seen_t w;
  memset(&w, 0, sizeof w);
  enum { N = 300 };
  for (int i = 0; i < N; i++) {
    int len = sizeof buf;
    ck_assert_int_eq(zkr_wget(z, path, node_watcher, &w, buf, &len, NULL), ZOK);
    char v[16];
    int n = snprintf(v, sizeof v, "%d", i + 1);
    ck_assert_int_eq(zkr_set(z, path, v, n, -1), ZOK);
  }
  uint64_t deadline = it_now_ms() + 10000;
  while (__atomic_load_n(&w.fired, __ATOMIC_SEQ_CST) < N && it_now_ms() < deadline) it_sleep_ms(5);
  ck_assert_int_eq(__atomic_load_n(&w.fired, __ATOMIC_SEQ_CST), N);
  ck_assert_int_eq(w.type, ZOO_CHANGED_EVENT);
  /* Nothing is armed any more: another change fires nothing. */
  ck_assert_int_eq(zkr_set(z, path, "x", 1, -1), ZOK);
  it_sleep_ms(300);
  ck_assert_int_eq(__atomic_load_n(&w.fired, __ATOMIC_SEQ_CST), N);
  zkr_close(z);
}
END_TEST

START_TEST(watch_with_application_handle) {
  zkr_t *z = it_open(NULL, NULL, NULL);
  zhandle_t *stock = it_stock();
  char path[128], buf[8];
  it_path(path, sizeof path, "watch");
  ck_assert_int_eq(zoo_create(stock, path, "a", 1, &ZOO_OPEN_ACL_UNSAFE, 0, NULL, 0), ZOK);
  watch_seen_t w = {0};
  /* Set three times, as one registration in ZooKeeper: one event. */
  for (int i = 0; i < 3; i++) {
    int len = sizeof buf;
    ck_assert_int_eq(zkr_wget(z, path, node_watcher, &w, buf, &len, NULL), ZOK);
  }
  ck_assert_int_eq(zoo_set(stock, path, "b", 1, -1), ZOK);
  uint64_t deadline = it_now_ms() + 5000;
  while (__atomic_load_n(&w.fired, __ATOMIC_SEQ_CST) == 0 && it_now_ms() < deadline) it_sleep_ms(5);
  ck_assert_int_eq(w.fired, 1);
  ck_assert_int_eq(w.type, ZOO_CHANGED_EVENT);
  ck_assert_ptr_eq(w.zh, zkr_as_zh(z));
  ck_assert_str_eq(w.path, path);
  ck_assert_int_eq(zoo_set(stock, path, "c", 1, -1), ZOK);
  it_sleep_ms(300);
  ck_assert_int_eq(w.fired, 1); /* one-shot */
  zookeeper_close(stock);
  zkr_close(z);
}
END_TEST

/* ---- close with 100 operations in flight: each completes exactly once ---- */

static int calls[100];

static void close_stat(int rc, const struct Stat *st, const void *data) {
  (void)st;
  (void)rc;
  __atomic_add_fetch(&calls[(intptr_t)data], 1, __ATOMIC_SEQ_CST);
}

static void close_data(int rc, const char *v, int len, const struct Stat *st, const void *data) {
  (void)v;
  (void)len;
  close_stat(rc, st, data);
}

START_TEST(close_with_ops_in_flight) {
  zkr_t *z = it_open(NULL, NULL, NULL);
  char path[128];
  it_path(path, sizeof path, "close");
  ck_assert_int_eq(zkr_create(z, path, "", 0, &ZOO_OPEN_ACL_UNSAFE, 0, NULL, 0), ZOK);
  memset(calls, 0, sizeof calls);
  for (intptr_t i = 0; i < 100; i++) {
    int rc = i % 2 ? zkr_aset(z, path, "v", 1, -1, close_stat, (void *)i)
                   : zkr_aget(z, path, 0, close_data, (void *)i);
    ck_assert_int_eq(rc, ZOK);
  }
  ck_assert_int_eq(zkr_close(z), ZOK);
  for (int i = 0; i < 100; i++) ck_assert_int_eq(calls[i], 1);
}
END_TEST

/* ---- policies route as documented ---- */

START_TEST(policy_leader_only_and_round_robin) {
  for (int p = 0; p < 2; p++) {
    zkr_options_t o = ZKR_OPTIONS_INIT;
    o.policy = p == 0 ? ZKR_POLICY_LEADER_ONLY : ZKR_POLICY_ROUND_ROBIN;
    zkr_t *z = it_open(&o, NULL, NULL);
    char path[128];
    it_path(path, sizeof path, "policy");
    ck_assert_int_eq(zkr_create(z, path, "", 0, &ZOO_OPEN_ACL_UNSAFE, 0, NULL, 0), ZOK);
    for (int i = 0; i < 300; i++) {
      char buf[8];
      int len = sizeof buf;
      ck_assert_int_eq(zkr_set(z, path, "v", 1, -1), ZOK);
      ck_assert_int_eq(zkr_get(z, path, 0, buf, &len, NULL), ZOK);
    }
    zkr_stats_t *s;
    ck_assert_int_eq(zkr_stats(z, &s), ZOK);
    for (int i = 0; i < s->n_members; i++) {
      zkr_member_stats_t *m = &s->members[i];
      if (p == 0 && i != s->leader) ck_assert_uint_eq(m->reads + m->writes, 0);
      if (p == 1) {
        ck_assert_uint_ge(m->reads, 60); /* about 100 each */
        ck_assert_uint_ge(m->writes, 60);
      }
    }
    zkr_stats_free(s);
    zkr_close(z);
  }
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("routing");
  TCase *tc = tcase_create("ensemble");
  tcase_set_timeout(tc, 90);
  tcase_add_test(tc, writes_go_to_leader);
  tcase_add_loop_test(tc, reads_spread_over_followers, 0, 2);
  tcase_add_test(tc, read_your_writes_pipelined);
  tcase_add_test(tc, read_your_writes_threads);
  tcase_add_test(tc, other_client_write_visible);
  tcase_add_test(tc, chroot_on_every_member);
  tcase_add_test(tc, acl_digest_auth_every_member);
  tcase_add_test(tc, virtual_session_events);
  tcase_add_test(tc, watch_with_application_handle);
  tcase_add_test(tc, watch_set_again_while_it_fires);
  tcase_add_test(tc, close_with_ops_in_flight);
  tcase_add_test(tc, policy_leader_only_and_round_robin);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return it_run(suite()); }
