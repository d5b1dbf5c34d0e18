/* Integration tests of failover and the virtual session under faults,
 * against a real 3-node ensemble (tests/integration/integration.sh): leader kill -9
 * with writes running (time to recover, nothing lost, order kept), a hung
 * leader, the rescue of the stranded owner session with its ephemeral node
 * and its id, watches of a lost carrier set again elsewhere (with the
 * missed event delivered), the owner's expiry (the application's) and a
 * carrier's (silent), a server restart within the session timeout, a
 * write with an unknown outcome that a later write must not overtake (its
 * late copy held in the fault proxy), and a refused credential. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "it_common.h"

static int member_of_role(zkr_t *z, zkr_role_t role) {
  zkr_stats_t *s;
  ck_assert_int_eq(zkr_stats(z, &s), ZOK);
  int found = -1;
  for (int i = 0; i < s->n_members && found < 0; i++)
    if (s->members[i].role == role) found = i;
  zkr_stats_free(s);
  return found;
}

/* A member of role whose session is not the owner's (the owner is the
 * member session established first, whichever member it is), -1 none. */
static int carrier_of_role(zkr_t *z, zkr_role_t role) {
  zkr_stats_t *s;
  ck_assert_int_eq(zkr_stats(z, &s), ZOK);
  int found = -1;
  for (int i = 0; i < s->n_members && found < 0; i++)
    if (s->members[i].role == role && i != s->owner) found = i;
  zkr_stats_free(s);
  return found;
}

static int owner_of(zkr_t *z) {
  zkr_stats_t *s;
  ck_assert_int_eq(zkr_stats(z, &s), ZOK);
  int o = s->owner;
  zkr_stats_free(s);
  return o;
}

static zkr_member_stats_t member_stats(zkr_t *z, int i) {
  zkr_stats_t *s;
  ck_assert_int_eq(zkr_stats(z, &s), ZOK);
  zkr_member_stats_t m = s->members[i];
  zkr_stats_free(s);
  return m;
}

/* A stock client's write, retried while its own server is the one a test
 * just killed (ZCONNECTIONLOSS until it reconnects elsewhere). */
static int stock_set(zhandle_t *zh, const char *path, const char *v) {
  int rc = ZCONNECTIONLOSS;
  for (int i = 0; i < 100 && (rc == ZCONNECTIONLOSS || rc == ZOPERATIONTIMEOUT); i++) {
    rc = zoo_set(zh, path, v, (int)strlen(v), -1);
    if (rc == ZCONNECTIONLOSS || rc == ZOPERATIONTIMEOUT) it_sleep_ms(100);
  }
  return rc;
}

/* ---- leader kill -9 while a writer runs ---- */

typedef struct {
  zkr_t *z;
  char path[128];
  _Atomic int stop; /* set by the test thread, read by the writer */
  /* Per write, in issue order. */
  int n;
  int rc[20000];
  int version[20000];
  uint64_t end_ms[20000];
} writer_t;

static void *writer(void *arg) {
  writer_t *w = arg;
  while (!w->stop && w->n < 20000) {
    char v[16];
    int len = snprintf(v, sizeof v, "%d", w->n);
    struct Stat st;
    int rc = zkr_set2(w->z, w->path, v, len, -1, &st);
    w->rc[w->n] = rc;
    w->version[w->n] = rc == ZOK ? st.version : -1;
    w->end_ms[w->n] = it_now_ms();
    w->n++;
    if (rc != ZOK) it_sleep_ms(5);
  }
  return NULL;
}

START_TEST(leader_kill_nothing_lost_order_kept) {
  zkr_t *z = it_open(NULL, NULL, NULL);
  static writer_t w;
  memset(&w, 0, sizeof w);
  w.z = z;
  it_path(w.path, sizeof w.path, "failover");
  ck_assert_int_eq(zkr_create(z, w.path, "-1", 2, &ZOO_OPEN_ACL_UNSAFE, 0, NULL, 0), ZOK);
  pthread_t th;
  pthread_create(&th, NULL, writer, &w);
  it_sleep_ms(1000);
  int leader = member_of_role(z, ZKR_ROLE_LEADER);
  ck_assert_int_eq(it_ensemble("kill", leader), 0);
  uint64_t kill_ms = it_now_ms(); /* the leader process is gone */
  ck_assert_int_eq(it_ensemble("wait-leader", -1), 0);
  uint64_t elected_ms = it_now_ms();
  it_sleep_ms(3000);
  w.stop = 1;
  pthread_join(th, NULL);

  /* Recovery: the first acknowledged write after the kill. */
  uint64_t first_ok_ms = 0;
  int failed = 0, last_acked = -1;
  for (int i = 0; i < w.n; i++) {
    if (w.rc[i] == ZOK) {
      last_acked = i;
      if (w.end_ms[i] > kill_ms && !first_ok_ms) first_ok_ms = w.end_ms[i];
    } else {
      failed++;
      /* Outcome unknown, never anything else. */
      ck_assert_msg(w.rc[i] == ZCONNECTIONLOSS || w.rc[i] == ZOPERATIONTIMEOUT,
                    "write %d failed with %s", i, zkr_err_name(w.rc[i]));
    }
  }
  ck_assert_uint_gt(first_ok_ms, 0);
  printf("leader_kill: %d writes, %d failed (outcome unknown); election seen "
         "%llu ms after the kill; first acknowledged write %lld ms after the "
         "election was seen\n",
         w.n, failed, (unsigned long long)(elected_ms - kill_ms),
         (long long)first_ok_ms - (long long)elected_ms);
  ck_assert_int_le((long long)first_ok_ms - (long long)elected_ms, 2000);

  /* Order: acknowledged versions increase with issue order. */
  int violations = 0, prev = -1;
  for (int i = 0; i < w.n; i++)
    if (w.rc[i] == ZOK) {
      if (w.version[i] <= prev) violations++;
      prev = w.version[i];
    }
  ck_assert_int_eq(violations, 0);

  /* Nothing lost: an independent client sees the last acknowledged value,
   * or a later write whose outcome was unknown. */
  it_ensemble_heal();
  zhandle_t *stock = it_stock();
  char buf[16] = {0};
  int len = sizeof buf - 1;
  ck_assert_int_eq(zoo_get(stock, w.path, 0, buf, &len, NULL), ZOK);
  int final = atoi(buf);
  ck_assert_int_ge(final, last_acked);
  for (int i = last_acked + 1; i <= final; i++) ck_assert_int_ne(w.rc[i], ZOK);
  zookeeper_close(stock);
  zkr_close(z);
}
END_TEST

/* ---- a stranded session is rescued: its ephemeral node survives ---- */

START_TEST(rescue_keeps_ephemeral_alive) {
  zkr_options_t o = ZKR_OPTIONS_INIT;
  o.rescue_ms = 1500;
  zkr_t *z = NULL;
  /* Session timeout 8 s: without a rescue the ephemeral would be gone
   * 8 s after its server died. */
  ck_assert_int_eq(zkr_init_opts(&z, it_hosts(), NULL, 8000, NULL, NULL, 0, &o), ZOK);
  it_wait_ready(z);
  char path[128];
  it_path(path, sizeof path, "eph");
  ck_assert_int_eq(zkr_create(z, path, "", 0, &ZOO_OPEN_ACL_UNSAFE, ZOO_EPHEMERAL, NULL, 0), ZOK);
  /* The owner session (the member session established first): the
   * application's id, and the node's owner.  Its server dies. */
  zkr_stats_t *s;
  ck_assert_int_eq(zkr_stats(z, &s), ZOK);
  int home = s->owner;
  ck_assert_int_ge(home, 0);
  int64_t sid = s->owner_session_id;
  zkr_stats_free(s);
  ck_assert_int_eq(zkr_client_id(z)->client_id, sid);
  zhandle_t *stock = it_stock();
  struct Stat st;
  ck_assert_int_eq(zoo_exists(stock, path, 0, &st), ZOK);
  ck_assert_int_eq(st.ephemeralOwner, sid);
  zookeeper_close(stock);
  ck_assert_int_eq(it_ensemble("kill", home), 0);
  ck_assert_int_eq(it_ensemble("wait-leader", -1), 0);
  stock = it_stock();
  /* 8x the rescue threshold, 1.5x the session timeout. */
  it_sleep_ms(12000);
  ck_assert_int_eq(zkr_stats(z, &s), ZOK);
  printf("rescue: owner session %llx re-attached %llu time(s), now on member %d\n",
         (unsigned long long)sid, (unsigned long long)s->owner_rescues, s->owner);
  ck_assert_int_eq(zoo_exists(stock, path, 0, &st), ZOK);
  ck_assert_int_eq(st.ephemeralOwner, sid);
  ck_assert_uint_ge(s->owner_rescues, 1);
  ck_assert_int_ne(s->owner, home);
  ck_assert(s->owner_moved);
  ck_assert_int_eq(s->owner_session_id, sid);
  ck_assert_int_eq(s->owner_state, ZOO_CONNECTED_STATE);
  zkr_stats_free(s);
  ck_assert_int_eq(zkr_client_id(z)->client_id, sid);
  ck_assert_int_eq(zkr_state(z), ZOO_CONNECTED_STATE);
  /* Its server back: the member's fresh carrier connects at home, while
   * the owner stays where it is, connected, holding the node: it outlives
   * another session timeout. */
  it_ensemble_heal();
  uint64_t deadline = it_now_ms() + 10000;
  while (!member_stats(z, home).connected && it_now_ms() < deadline) it_sleep_ms(50);
  zkr_member_stats_t m = member_stats(z, home);
  ck_assert(m.connected);
  ck_assert_int_ne(m.session_id, sid);
  ck_assert(!m.is_owner);
  it_sleep_ms(9000);
  ck_assert_int_eq(zoo_exists(stock, path, 0, &st), ZOK);
  ck_assert_int_eq(st.ephemeralOwner, sid);
  ck_assert_int_eq(zkr_state(z), ZOO_CONNECTED_STATE);
  ck_assert_int_eq(zkr_client_id(z)->client_id, sid);
  zookeeper_close(stock);
  zkr_close(z);
}
END_TEST

/* ---- watches of a lost carrier come back elsewhere; a missed change is
 * delivered ---- */

typedef struct {
  int fired;                /* path events */
  int type;                 /* ... the last one's */
  int sessions, last_state; /* session events (the watch dip) */
} seen_t;

static void watcher(zhandle_t *zh, int type, int state, const char *path, void *ctx) {
  (void)zh;
  (void)path;
  seen_t *s = ctx;
  if (type == ZOO_SESSION_EVENT) {
    s->last_state = state;
    __atomic_add_fetch(&s->sessions, 1, __ATOMIC_SEQ_CST);
    return;
  }
  s->type = type;
  __atomic_add_fetch(&s->fired, 1, __ATOMIC_SEQ_CST);
}

static int wait_fired(seen_t *s, int n, int ms) {
  uint64_t deadline = it_now_ms() + (uint64_t)ms;
  while (__atomic_load_n(&s->fired, __ATOMIC_SEQ_CST) < n && it_now_ms() < deadline)
    it_sleep_ms(10);
  return s->fired;
}

START_TEST(watch_rearmed_after_carrier_loss) {
  zkr_options_t o = ZKR_OPTIONS_INIT;
  o.rescue_ms = 1000;
  zkr_t *z = it_open(&o, NULL, NULL);
  zhandle_t *stock = it_stock();
  char changed[128], quiet[128];
  it_path(changed, sizeof changed, "wchanged");
  it_path(quiet, sizeof quiet, "wquiet");
  ck_assert_int_eq(zoo_create(stock, changed, "a", 1, &ZOO_OPEN_ACL_UNSAFE, 0, NULL, 0), ZOK);
  ck_assert_int_eq(zoo_create(stock, quiet, "a", 1, &ZOO_OPEN_ACL_UNSAFE, 0, NULL, 0), ZOK);
  /* The watch on `changed` is armed on the follower that served the
   * read, found by its read counter; `quiet` goes wherever the rotation
   * sends it. */
  seen_t a = {0}, b = {0};
  zkr_stats_t *s0, *s1;
  ck_assert_int_eq(zkr_stats(z, &s0), ZOK);
  char buf[8];
  int len = sizeof buf;
  /* On a carrier: the owner's server is not the one killed. */
  ck_assert_int_eq(zkr_set_read_selector(z, it_off_owner, (void *)(intptr_t)owner_of(z)), ZOK);
  ck_assert_int_eq(zkr_wget(z, changed, watcher, &a, buf, &len, NULL), ZOK);
  ck_assert_int_eq(zkr_set_read_selector(z, NULL, NULL), ZOK);
  ck_assert_int_eq(zkr_stats(z, &s1), ZOK);
  int f = -1;
  for (int i = 0; i < s1->n_members; i++)
    if (s1->members[i].reads > s0->members[i].reads) f = i;
  zkr_stats_free(s0);
  zkr_stats_free(s1);
  struct Stat st;
  ck_assert_int_eq(zkr_wexists(z, quiet, watcher, &b, &st), ZOK);
  ck_assert_int_ge(f, 0);
  ck_assert_int_eq(member_stats(z, f).role, ZKR_ROLE_FOLLOWER);
  /* Kill the follower holding the watch on `changed`, change the node while
   * nobody watches it for us: after rescue_ms its carrier is replaced and
   * the watch set again elsewhere, with the missed change delivered. */
  ck_assert_int_eq(it_ensemble("kill", f), 0);
  ck_assert_int_eq(stock_set(stock, changed, "b"), ZOK);
  ck_assert_int_eq(wait_fired(&a, 1, 8000), 1);
  ck_assert_int_eq(a.type, ZOO_CHANGED_EVENT);
  ck_assert_uint_ge(member_stats(z, f).recreated, 1);
  /* The watch dip: while the watch was on no live session, the pair had
   * CONNECTING; the missed change used the watch up, so the CONNECTED
   * after the re-arm went to the global watcher only. */
  ck_assert_int_eq(a.sessions, 1);
  ck_assert_int_eq(a.last_state, ZOO_CONNECTING_STATE);
  /* The watch on `quiet` (on whichever member) still works once. */
  ck_assert_int_eq(stock_set(stock, quiet, "b"), ZOK);
  ck_assert_int_eq(wait_fired(&b, 1, 5000), 1);
  ck_assert_int_eq(b.type, ZOO_CHANGED_EVENT);
  /* No duplicates later. */
  ck_assert_int_eq(stock_set(stock, changed, "c"), ZOK);
  it_sleep_ms(500);
  ck_assert_int_eq(a.fired, 1);
  ck_assert_int_eq(b.fired, 1);
  it_ensemble_heal();
  zookeeper_close(stock);
  zkr_close(z);
}
END_TEST

/* ---- expiry of a member session: with state -> EXPIRED, without -> silent ---- */

typedef struct {
  int events;
  int expired;
  int last;
} session_t;

static void session_watcher(zhandle_t *zh, int type, int state, const char *path, void *ctx) {
  (void)zh;
  (void)path;
  session_t *s = ctx;
  if (type != ZOO_SESSION_EVENT) return;
  s->last = state;
  if (state == ZOO_EXPIRED_SESSION_STATE) s->expired++;
  __atomic_add_fetch(&s->events, 1, __ATOMIC_SEQ_CST);
}

START_TEST(expiry_with_ephemeral_expires_virtual_session) {
  zkr_options_t o = ZKR_OPTIONS_INIT;
  o.rescue_ms = 600000; /* no rescue: let the session expire */
  o.rescue_down_ms = 600000;
  session_t seen = {0};
  zkr_t *z = NULL;
  ck_assert_int_eq(zkr_init_opts(&z, it_hosts(), session_watcher, 2000, NULL, &seen, 0, &o), ZOK);
  it_wait_ready(z);
  ck_assert_int_eq(seen.events, 1);
  char path[128];
  it_path(path, sizeof path, "exp");
  ck_assert_int_eq(zkr_create(z, path, "", 0, &ZOO_OPEN_ACL_UNSAFE, ZOO_EPHEMERAL, NULL, 0), ZOK);
  /* The owner's server dies (the leader's or a follower's). */
  int home = owner_of(z);
  ck_assert_int_eq(it_ensemble("kill", home), 0);
  /* Restart the member only once the ensemble has expired the session (its
   * ephemeral is gone): the session timeout runs from the new leader's
   * start, and an election slower than the timeout would otherwise let the
   * member session reconnect in time. */
  zhandle_t *stock = it_stock();
  uint64_t gone_by = it_now_ms() + 20000;
  int ex;
  while ((ex = zoo_exists(stock, path, 0, NULL)) != ZNONODE && it_now_ms() < gone_by)
    it_sleep_ms(100);
  ck_assert_int_eq(ex, ZNONODE);
  zookeeper_close(stock);
  ck_assert_int_eq(it_ensemble("restart", home), 0);
  uint64_t deadline = it_now_ms() + 15000;
  while (zkr_state(z) != ZOO_EXPIRED_SESSION_STATE && it_now_ms() < deadline) it_sleep_ms(20);
  ck_assert_int_eq(zkr_state(z), ZOO_EXPIRED_SESSION_STATE);
  /* The election in between made every member reconnect (CONNECTING, then
   * CONNECTED again); the expiry itself is reported once, last. */
  ck_assert_int_eq(seen.last, ZOO_EXPIRED_SESSION_STATE);
  ck_assert_int_eq(seen.expired, 1);
  char buf[4];
  int len = sizeof buf;
  ck_assert_int_eq(zkr_get(z, path, 0, buf, &len, NULL), ZINVALIDSTATE);
  ck_assert_int_eq(zkr_is_unrecoverable(z), ZINVALIDSTATE);
  zkr_close(z);
  it_ensemble_heal();
}
END_TEST

START_TEST(expiry_without_state_is_silent) {
  zkr_options_t o = ZKR_OPTIONS_INIT;
  o.rescue_ms = 600000;
  o.rescue_down_ms = 600000;
  session_t seen = {0};
  zkr_t *z = NULL;
  ck_assert_int_eq(zkr_init_opts(&z, it_hosts(), session_watcher, 2000, NULL, &seen, 0, &o), ZOK);
  it_wait_ready(z);
  int f = carrier_of_role(z, ZKR_ROLE_FOLLOWER);
  ck_assert_int_ge(f, 0);
  int64_t sid = member_stats(z, f).session_id;
  ck_assert_int_eq(it_ensemble("kill", f), 0);
  it_sleep_ms(4000);
  ck_assert_int_eq(it_ensemble("restart", f), 0);
  /* The member comes back with a new session; the application saw
   * nothing but its first CONNECTED. */
  uint64_t deadline = it_now_ms() + 15000;
  while ((member_stats(z, f).session_id == sid || !member_stats(z, f).connected) &&
         it_now_ms() < deadline)
    it_sleep_ms(50);
  ck_assert_int_ne(member_stats(z, f).session_id, sid);
  ck_assert(member_stats(z, f).connected);
  ck_assert_int_eq(seen.events, 1);
  ck_assert_int_eq(zkr_state(z), ZOO_CONNECTED_STATE);
  zkr_close(z);
  it_ensemble_heal();
}
END_TEST

/* ---- a server restart within the session timeout: sessions, auth and
 * watches come back ---- */

START_TEST(restart_within_timeout_resumes) {
  zkr_options_t o = ZKR_OPTIONS_INIT;
  o.rescue_ms = 600000; /* this is about resuming in place, not rescue */
  o.rescue_down_ms = 600000;
  zkr_t *z = it_open(&o, NULL, NULL);
  ck_assert_int_eq(zkr_add_auth(z, "digest", "bob:pw", 6, NULL, NULL), ZOK);
  char path[128];
  it_path(path, sizeof path, "restart");
  ck_assert_int_eq(zkr_create(z, path, "x", 1, &ZOO_CREATOR_ALL_ACL, 0, NULL, 0), ZOK);
  seen_t w = {0};
  char buf[8];
  int len = sizeof buf;
  ck_assert_int_eq(zkr_wget(z, path, watcher, &w, buf, &len, NULL), ZOK);
  int64_t sid[IT_MEMBERS];
  for (int i = 0; i < IT_MEMBERS; i++) sid[i] = member_stats(z, i).session_id;
  /* A carrier's server: the watch (on either follower) hears no session
   * event of the owner's. */
  int f = carrier_of_role(z, ZKR_ROLE_FOLLOWER);
  ck_assert_int_ge(f, 0);
  ck_assert_int_eq(it_ensemble("kill", f), 0);
  ck_assert_int_eq(it_ensemble("restart", f), 0);
  it_wait_ready(z);
  for (int i = 0; i < IT_MEMBERS; i++) ck_assert_int_eq(member_stats(z, i).session_id, sid[i]);
  /* Auth still applies on every member (reads rotate over both). */
  for (int i = 0; i < 6; i++) {
    len = sizeof buf;
    ck_assert_int_eq(zkr_get(z, path, 0, buf, &len, NULL), ZOK);
  }
  ck_assert_int_eq(zkr_set(z, path, "y", 1, -1), ZOK);
  ck_assert_int_eq(wait_fired(&w, 1, 5000), 1);
  ck_assert_int_eq(w.type, ZOO_CHANGED_EVENT);
  /* None of the owner's; the watch dip's two (CONNECTING, CONNECTED) when
   * the watch was on the restarted follower. */
  ck_assert_msg(w.sessions == 0 || (w.sessions == 2 && w.last_state == ZOO_CONNECTED_STATE),
                "the watch had %d session events", w.sessions);
  ck_assert_int_eq(zkr_delete(z, path, -1), ZOK);
  zkr_close(z);
}
END_TEST

/* ---- a hung leader (SIGSTOP): writes move to the new one ---- */

START_TEST(hung_leader_writes_move) {
  zkr_t *z = it_open(NULL, NULL, NULL);
  char path[128];
  it_path(path, sizeof path, "hung");
  ck_assert_int_eq(zkr_create(z, path, "", 0, &ZOO_OPEN_ACL_UNSAFE, 0, NULL, 0), ZOK);
  int leader = member_of_role(z, ZKR_ROLE_LEADER);
  ck_assert_int_eq(it_ensemble("pause", leader), 0);
  uint64_t paused = it_now_ms();
  /* Writes fail (outcome unknown) or succeed; within the session timeout
   * they succeed again through the new leader. */
  uint64_t ok_at = 0;
  while (it_now_ms() < paused + 20000 && !ok_at) {
    if (zkr_set(z, path, "v", 1, -1) == ZOK) ok_at = it_now_ms();
    else it_sleep_ms(20);
  }
  ck_assert_uint_gt(ok_at, 0);
  int now_leader = member_stats(z, member_of_role(z, ZKR_ROLE_LEADER)).is_write_session
                       ? member_of_role(z, ZKR_ROLE_LEADER)
                       : -1;
  printf("hung_leader: writes back %llu ms after SIGSTOP of the leader (member %d), "
         "write session now member %d\n",
         (unsigned long long)(ok_at - paused), leader, now_leader);
  ck_assert_int_ne(now_leader, leader);
  ck_assert_int_eq(it_ensemble("resume", leader), 0);
  ck_assert_int_eq(it_ensemble("wait-leader", -1), 0);
  /* The old leader rejoins as a follower: the higher epoch stayed leader. */
  uint64_t deadline = it_now_ms() + 10000;
  while (member_stats(z, leader).role != ZKR_ROLE_FOLLOWER && it_now_ms() < deadline)
    it_sleep_ms(50);
  ck_assert_int_eq(member_stats(z, leader).role, ZKR_ROLE_FOLLOWER);
  ck_assert_int_eq(zkr_set(z, path, "w", 1, -1), ZOK);
  zkr_close(z);
}
END_TEST

/* ---- the client cut off from the leader, the followers still reach it:
 * writes go through a follower session after the detection window ---- */

START_TEST(client_cut_from_leader_writes_via_follower) {
  zkr_t *z = NULL;
  /* Session timeout 4 s: the leader's session notices the silence after
   * two thirds of it (2.67 s); srvr marks the leader suspect after two
   * silent polls.  The window below adds one poll period and a second of
   * slack for this shared machine. */
  const int timeout = 4000, window = 4000 * 2 / 3 + 500 + 1000;
  ck_assert_int_eq(zkr_init_opts(&z, it_hosts(), NULL, timeout, NULL, NULL, 0, NULL), ZOK);
  it_wait_ready(z);
  char path[128], cmd[64];
  it_path(path, sizeof path, "cut");
  ck_assert_int_eq(zkr_create(z, path, "", 0, &ZOO_OPEN_ACL_UNSAFE, 0, NULL, 0), ZOK);
  int leader = member_of_role(z, ZKR_ROLE_LEADER);
  uint64_t leader_writes = member_stats(z, leader).writes;
  snprintf(cmd, sizeof cmd, "blackhole c%d on", leader + 1);
  ck_assert_msg(it_fault(cmd) == 0,
                "needs a proxied ensemble (tests/integration/integration.sh starts one)");
  uint64_t t0 = it_now_ms();
  int after = 0, after_ok = 0, before_ok = 0, first_ok_ms = -1;
  while (it_now_ms() < t0 + (uint64_t)window + 4000) {
    uint64_t start = it_now_ms();
    int rc = zkr_set(z, path, "v", 1, -1);
    if (start >= t0 + (uint64_t)window) {
      after++;
      after_ok += rc == ZOK;
      if (rc != ZOK)
        fprintf(stderr, "cut: write at +%llu ms failed: %s\n", (unsigned long long)(start - t0),
                zkr_err_name(rc));
    } else if (rc == ZOK) {
      before_ok++;
      if (first_ok_ms < 0) first_ok_ms = (int)(it_now_ms() - t0);
    }
    if (rc != ZOK) it_sleep_ms(20);
  }
  zkr_stats_t *s;
  ck_assert_int_eq(zkr_stats(z, &s), ZOK);
  int write_member = s->write_member;
  uint64_t on_leader = s->members[leader].writes - leader_writes;
  zkr_stats_free(s);
  printf("client_cut_from_leader: first write through a follower %d ms after the "
         "cut; after the %d ms window %d of %d writes succeeded; write session "
         "member %d (leader %d)\n",
         first_ok_ms, window, after_ok, after, write_member, leader);
  snprintf(cmd, sizeof cmd, "blackhole c%d off", leader + 1);
  ck_assert_int_eq(it_fault(cmd), 0);
  ck_assert_int_gt(after, 0);
  ck_assert_int_eq(after_ok, after);
  ck_assert_int_ne(write_member, leader);
  ck_assert_uint_le(on_leader, 1); /* at most the write caught by the cut */
  zkr_close(z);
}
END_TEST

/* ---- a write with an unknown outcome is never overtaken (DESIGN.md
 * section 3, rule 6) ----
 * The proxy holds write W1's bytes on the leader's session S, then resets
 * the client's side of that connection: W1 completes with ZCONNECTIONLOSS
 * while its late copy still waits in the proxy, with the server's side of
 * the connection open, as in a kernel buffer after a partition.  W2 to the
 * same node is issued at once; a library that sends it elsewhere gets it
 * acknowledged within milliseconds.  Then W1's bytes are released, long
 * before the session timeout, and S's reconnection is let through.  The
 * node must end with W2's value: W2 may be applied only after every late
 * copy of W1 is applied or refused. */

typedef struct {
  _Atomic int rc; /* 1 until the completion */
  struct Stat st;
} done_t;

static void set_done(int rc, const struct Stat *st, const void *data) {
  done_t *d = (done_t *)data;
  if (st) d->st = *st;
  d->rc = rc;
}

static void sync_done(int rc, const char *value, const void *data) {
  (void)rc, (void)value, (void)data;
}

static int wait_done(done_t *d, int ms) {
  uint64_t deadline = it_now_ms() + (uint64_t)ms;
  while (d->rc == 1 && it_now_ms() < deadline) it_sleep_ms(5);
  return d->rc;
}

START_TEST(unknown_outcome_write_not_overtaken) {
  zkr_t *z = NULL;
  /* A 6 s session: the release below (about 1 s after W1 is lost) comes
   * long before the servers could expire S.  No rescue in the meantime:
   * a session moved to another server makes the old server refuse the
   * late copy (ZSESSIONMOVED), and the copy must be applied for the test
   * to prove anything. */
  zkr_options_t o = ZKR_OPTIONS_INIT;
  o.rescue_ms = o.rescue_down_ms = 60000;
  ck_assert_int_eq(zkr_init_opts(&z, it_hosts(), NULL, 6000, NULL, NULL, 0, &o), ZOK);
  it_wait_ready(z);
  char path[128], cmd[64];
  it_path(path, sizeof path, "overtake");
  ck_assert_int_eq(zkr_create(z, path, "w0", 2, &ZOO_OPEN_ACL_UNSAFE, 0, NULL, 0), ZOK);
  int leader = member_of_role(z, ZKR_ROLE_LEADER), owner = owner_of(z);
  ck_assert_int_ge(leader, 0);
  ck_assert_int_eq(member_stats(z, leader).is_write_session, 1);

  /* W1's bytes stay in the proxy; then the client loses its connection. */
  snprintf(cmd, sizeof cmd, "hold c%d on up", leader + 1);
  ck_assert_msg(it_fault(cmd) == 0,
                "needs a proxied ensemble (tests/integration/integration.sh starts one)");
  static done_t w1, w2;
  w1.rc = w2.rc = 1;
  ck_assert_int_eq(zkr_aset(z, path, "w1", 2, -1, set_done, &w1), ZOK);
  it_sleep_ms(300); /* on its way: in the proxy, held */
  snprintf(cmd, sizeof cmd, "refuse c%d on", leader + 1);
  ck_assert_int_eq(it_fault(cmd), 0);
  snprintf(cmd, sizeof cmd, "reset c%d client", leader + 1);
  ck_assert_int_eq(it_fault(cmd), 0);
  uint64_t lost_at = it_now_ms();
  int rc1 = wait_done(&w1, 10000);
  ck_assert_msg(rc1 == ZCONNECTIONLOSS || rc1 == ZOPERATIONTIMEOUT,
                "W1 ended with %s, not an unknown outcome", zkr_err_name(rc1));

  /* W2 right away.  A library without the fence has it acknowledged
   * through a follower's session before W1's copy is released. */
  uint64_t w2_at = it_now_ms();
  ck_assert_int_eq(zkr_aset(z, path, "w2", 2, -1, set_done, &w2), ZOK);
  int early = wait_done(&w2, 1000);

  /* Release W1's copy (the server's side of S's old connection is still
   * open, and S has not reconnected anywhere), then let S reconnect. */
  uint64_t released_at = it_now_ms();
  snprintf(cmd, sizeof cmd, "hold c%d off", leader + 1);
  ck_assert_int_eq(it_fault(cmd), 0);
  snprintf(cmd, sizeof cmd, "refuse c%d off", leader + 1);
  ck_assert_int_eq(it_fault(cmd), 0);
  int rc2 = wait_done(&w2, 20000);
  uint64_t w2_done = it_now_ms();

  zhandle_t *zh = it_stock();
  char buf[16];
  int len = sizeof buf - 1;
  struct Stat st;
  ck_assert_int_eq(zoo_async(zh, "/", sync_done, NULL), ZOK);
  ck_assert_int_eq(zoo_get(zh, path, 0, buf, &len, &st), ZOK);
  buf[len < 0 ? 0 : len] = '\0';
  zookeeper_close(zh);
  printf("unknown_outcome: leader %d, owner %d; W1 %s; W2 issued %llu ms after the reset, %s, "
         "%s before the release (%llu ms after it was issued); W1's copy released %llu ms "
         "after the loss; final value %s, version %d (%s)\n",
         leader, owner, zkr_err_name(rc1), (unsigned long long)(w2_at - lost_at), zkr_err_name(rc2),
         early == 1 ? "not completed" : "completed", (unsigned long long)(w2_done - w2_at),
         (unsigned long long)(released_at - lost_at), buf, st.version,
         st.version == 2 ? "the late W1 was applied" : "W1 was not applied");
  fflush(stdout); /* before a failed check ends the test's process */
  ck_assert_int_eq(rc2, ZOK);
  /* W1 applied late (version 2) is the case under test; a W1 refused
   * would make this run prove nothing. */
  ck_assert_msg(st.version == 2, "the late copy of W1 was not applied: nothing was tested");
  ck_assert_msg(strcmp(buf, "w2") == 0,
                "the node holds %s: W1, whose outcome was unknown, was applied after the "
                "acknowledged W2",
                buf);
  zkr_close(z);
}
END_TEST

/* ---- a refused credential: ZAUTHFAILED, virtual AUTH_FAILED ---- */

static void auth_cb(int rc, const void *data) {
  __atomic_store_n((int *)data, rc + 1000, __ATOMIC_SEQ_CST);
}

START_TEST(auth_failure_reported) {
  session_t seen = {0};
  zkr_t *z = it_open(NULL, session_watcher, &seen);
  int rc = 0;
  ck_assert_int_eq(zkr_add_auth(z, "nosuchscheme", "x", 1, auth_cb, &rc), ZOK);
  uint64_t deadline = it_now_ms() + 5000;
  while (!__atomic_load_n(&rc, __ATOMIC_SEQ_CST) && it_now_ms() < deadline) it_sleep_ms(10);
  ck_assert_int_eq(rc - 1000, ZAUTHFAILED);
  deadline = it_now_ms() + 5000;
  while (zkr_state(z) != ZOO_AUTH_FAILED_STATE && it_now_ms() < deadline) it_sleep_ms(10);
  ck_assert_int_eq(zkr_state(z), ZOO_AUTH_FAILED_STATE);
  ck_assert_int_eq(seen.last, ZOO_AUTH_FAILED_STATE);
  zkr_close(z);
}
END_TEST

/* A test that failed half-way leaves its faults in the proxy: clear every
 * link (held bytes are delivered), then heal the members. */
static void net_heal(void) {
  ck_assert_int_eq(it_fault("clear all"), 0);
  it_ensemble_heal();
}

static Suite *suite(void) {
  Suite *s = suite_create("failover");
  TCase *tc = tcase_create("ensemble");
  tcase_set_timeout(tc, 120);
  /* Each test starts on a whole ensemble, even after one that failed
   * half-way through a fault. */
  tcase_add_checked_fixture(tc, it_ensemble_heal, NULL);
  tcase_add_test(tc, leader_kill_nothing_lost_order_kept);
  tcase_add_test(tc, rescue_keeps_ephemeral_alive);
  tcase_add_test(tc, watch_rearmed_after_carrier_loss);
  tcase_add_test(tc, expiry_with_ephemeral_expires_virtual_session);
  tcase_add_test(tc, expiry_without_state_is_silent);
  tcase_add_test(tc, restart_within_timeout_resumes);
  tcase_add_test(tc, hung_leader_writes_move);
  tcase_add_test(tc, auth_failure_reported);
  suite_add_tcase(s, tc);
  /* Faults of the proxied ensemble's network (tests/integration/integration.sh). */
  if (it_have_proxy("it_failover: case network (client_cut_from_leader_writes_via_follower, "
                    "unknown_outcome_write_not_overtaken)")) {
    TCase *net = tcase_create("network");
    tcase_set_timeout(net, 120);
    tcase_add_checked_fixture(net, net_heal, NULL);
    tcase_add_test(net, client_cut_from_leader_writes_via_follower);
    tcase_add_test(net, unknown_outcome_write_not_overtaken);
    suite_add_tcase(s, net);
  }
  return s;
}

int main(void) { return it_run(suite()); }
