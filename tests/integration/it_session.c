/* Integration tests of the virtual session as one ZooKeeper session
 * (DESIGN.md section 4), against the real proxied 3-node ensemble of
 * tests/integration/integration.sh:
 * - a watch-only program cut from every server longer than the session
 *   timeout learns its session expired (the owner's expiry is its own);
 * - cut from one carrier longer than the timeout, it still gets the event
 *   of a watch that carrier held, once;
 * - zkr_client_id() is one id for the handle's life - across a leader
 *   kill and a leader restart with the owner on the leader, the rescues
 *   they cause and the loss of each server in turn - and every ephemeral
 *   node the handle made (plain, sequential, in a multi, and creates whose
 *   outcome the application could not know, forced with the fault proxy:
 *   one applied, one lost) is owned by it and outlives the loss of each
 *   one server;
 * - a watch whose carrier is lost is re-armed elsewhere: its event comes
 *   after rescue_ms, and a node deleted and created again meanwhile shows
 *   as CHANGED (stock: DELETED), as docs/dropin.md says;
 * - session events reach every per-path watcher with its own context,
 *   each transition once. */
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "it_common.h"

static int owner_member(zkr_t *z) {
  zkr_stats_t *s;
  ck_assert_int_eq(zkr_stats(z, &s), ZOK);
  int o = s->owner;
  zkr_stats_free(s);
  return o;
}

/* Member whose session served the next read (its read counter moved). */
static uint64_t reads_of(zkr_t *z, int i) {
  zkr_stats_t *s;
  ck_assert_int_eq(zkr_stats(z, &s), ZOK);
  uint64_t r = s->members[i].reads;
  zkr_stats_free(s);
  return r;
}

typedef struct {
  _Atomic int n;
  _Atomic int types[64];
  _Atomic int states[64];
} seen_t;

static void record(zhandle_t *zh, int type, int state, const char *path, void *ctx) {
  (void)zh;
  (void)path;
  seen_t *s = ctx;
  int i = s->n;
  if (i < 64) {
    s->types[i] = type;
    s->states[i] = state;
  }
  s->n = i + 1;
}

/* ANY: every state (states are negative too: EXPIRED is -112). */
#define ANY INT_MIN

static int count(seen_t *s, int type, int state) {
  int c = 0;
  for (int i = 0; i < s->n && i < 64; i++)
    c += s->types[i] == type && (state == ANY || s->states[i] == state);
  return c;
}

static int wait_count(seen_t *s, int type, int state, int n, int ms) {
  uint64_t deadline = it_now_ms() + (uint64_t)ms;
  while (count(s, type, state) < n && it_now_ms() < deadline) it_sleep_ms(20);
  return count(s, type, state);
}

static void dump(const char *what, seen_t *s) {
  fprintf(stderr, "%s:", what);
  for (int i = 0; i < s->n && i < 64; i++) fprintf(stderr, " %d/%d", s->types[i], s->states[i]);
  fprintf(stderr, "\n");
}

/* A plain session on member i's server only (0-based). */
static zhandle_t *stock_on(int i) {
  char hosts[512], *save = NULL, one[128] = "";
  snprintf(hosts, sizeof hosts, "%s", it_hosts());
  char *slash = strchr(hosts, '/');
  if (slash) *slash = '\0';
  int k = 0;
  for (char *h = strtok_r(hosts, ",", &save); h; h = strtok_r(NULL, ",", &save), k++)
    if (k == i) snprintf(one, sizeof one, "%s", h);
  ck_assert(one[0]);
  zhandle_t *zh = zookeeper_init(one, NULL, 10000, NULL, NULL, 0);
  ck_assert_ptr_nonnull(zh);
  uint64_t deadline = it_now_ms() + 15000;
  while (zoo_state(zh) != ZOO_CONNECTED_STATE && it_now_ms() < deadline) it_sleep_ms(10);
  ck_assert_int_eq(zoo_state(zh), ZOO_CONNECTED_STATE);
  return zh;
}

static void fault(const char *fmt, int member) {
  char cmd[64];
  snprintf(cmd, sizeof cmd, fmt, member);
  ck_assert_msg(it_fault(cmd) == 0, "fault '%s': needs a proxied ensemble", cmd);
}

/* ---- a watch-only program, cut from every server ---- */

START_TEST(watch_only_cut_from_all_expires) {
  seen_t global = {0}, pw = {0};
  zkr_t *z = NULL;
  const int timeout = 4000;
  ck_assert_int_eq(zkr_init_opts(&z, it_hosts(), record, timeout, NULL, &global, 0, NULL), ZOK);
  it_wait_ready(z);
  char path[128], buf[8];
  it_path(path, sizeof path, "wonly");
  zhandle_t *stock = it_stock();
  ck_assert_int_eq(zoo_create(stock, path, "a", 1, &ZOO_OPEN_ACL_UNSAFE, 0, NULL, 0), ZOK);
  zookeeper_close(stock);
  int len = sizeof buf;
  ck_assert_int_eq(zkr_wget(z, path, record, &pw, buf, &len, NULL), ZOK);
  /* Nothing but a watch: no ephemeral, no write.  Every client link goes
   * silent for twice the session timeout. */
  ck_assert_msg(it_fault("blackhole clients on") == 0, "needs a proxied ensemble");
  it_sleep_ms(2 * timeout);
  ck_assert_int_eq(it_fault("blackhole clients off"), 0);
  wait_count(&global, ZOO_SESSION_EVENT, ZOO_EXPIRED_SESSION_STATE, 1, 20000);
  it_sleep_ms(500);
  dump("watch_only_cut_from_all: global watcher (type/state)", &global);
  dump("watch_only_cut_from_all: path watcher (type/state)", &pw);
  ck_assert_int_eq(count(&global, ZOO_SESSION_EVENT, ZOO_EXPIRED_SESSION_STATE), 1);
  ck_assert_int_eq(zkr_state(z), ZOO_EXPIRED_SESSION_STATE);
  /* The per-path watcher hears it too, as with a stock session. */
  ck_assert_int_eq(wait_count(&pw, ZOO_SESSION_EVENT, ZOO_EXPIRED_SESSION_STATE, 1, 2000), 1);
  ck_assert_int_eq(zkr_get(z, path, 0, buf, &len, NULL), ZINVALIDSTATE);
  printf("watch_only_cut_from_all: EXPIRED after the cut (global watcher %d events, path "
         "watcher %d)\n",
         global.n, pw.n);
  zkr_close(z);
  it_ensemble("wait-leader", -1);
}
END_TEST

/* ---- cut from one carrier: its watch still fires ---- */

START_TEST(carrier_cut_watch_still_fires) {
  seen_t global = {0}, pw = {0};
  zkr_t *z = NULL;
  const int timeout = 4000;
  ck_assert_int_eq(zkr_init_opts(&z, it_hosts(), record, timeout, NULL, &global, 0, NULL), ZOK);
  it_wait_ready(z);
  char path[128], buf[8];
  it_path(path, sizeof path, "ccut");
  zhandle_t *stock = it_stock();
  ck_assert_int_eq(zoo_create(stock, path, "a", 1, &ZOO_OPEN_ACL_UNSAFE, 0, NULL, 0), ZOK);
  int owner = owner_member(z);
  uint64_t before[IT_MEMBERS];
  for (int i = 0; i < IT_MEMBERS; i++) before[i] = reads_of(z, i);
  int len = sizeof buf;
  ck_assert_int_eq(zkr_set_read_selector(z, it_off_owner, (void *)(intptr_t)owner), ZOK);
  ck_assert_int_eq(zkr_wget(z, path, record, &pw, buf, &len, NULL), ZOK);
  ck_assert_int_eq(zkr_set_read_selector(z, NULL, NULL), ZOK);
  int carrier = -1;
  for (int i = 0; i < IT_MEMBERS; i++)
    if (reads_of(z, i) > before[i]) carrier = i;
  ck_assert_int_ge(carrier, 0);
  ck_assert_int_ne(carrier, owner);
  int events0 = global.n;
  /* The writer's own session is on the owner's server, which stays
   * reachable. */
  zookeeper_close(stock);
  stock = stock_on(owner);
  /* The client loses that carrier's server for twice the timeout; the
   * node changes meanwhile, right away: the carrier's session has not
   * noticed yet, so the event can only come from the re-arm elsewhere. */
  fault("blackhole c%d on", carrier + 1);
  uint64_t t0 = it_now_ms();
  ck_assert_int_eq(zoo_set(stock, path, "b", 1, -1), ZOK);
  ck_assert_int_eq(wait_count(&pw, ZOO_CHANGED_EVENT, ANY, 1, 2 * timeout), 1);
  uint64_t took = it_now_ms() - t0;
  while (it_now_ms() < t0 + 2 * timeout) it_sleep_ms(50);
  fault("blackhole c%d off", carrier + 1);
  /* Once, and the application's session never moved. */
  it_sleep_ms(1500);
  ck_assert_int_eq(count(&pw, ZOO_CHANGED_EVENT, ANY), 1);
  ck_assert_int_eq(zoo_set(stock, path, "c", 1, -1), ZOK);
  it_sleep_ms(1000);
  ck_assert_int_eq(count(&pw, ZOO_CHANGED_EVENT, ANY), 1);
  /* The watch dip (docs/decisions.md): while the watch was on no live
   * session the application saw CONNECTING, and CONNECTED once it was set
   * again elsewhere - once each; the owner's connection never dropped. */
  ck_assert_int_eq(global.n, events0 + 2);
  ck_assert_int_eq(global.types[events0], ZOO_SESSION_EVENT);
  ck_assert_int_eq(global.states[events0], ZOO_CONNECTING_STATE);
  ck_assert_int_eq(global.states[events0 + 1], ZOO_CONNECTED_STATE);
  ck_assert_int_eq(zkr_state(z), ZOO_CONNECTED_STATE);
  zkr_stats_t *s;
  ck_assert_int_eq(zkr_stats(z, &s), ZOK);
  printf("carrier_cut: watch on member %d (owner %d) delivered %llu ms into the cut; "
         "carrier re-created %llu time(s), re-arms %llu, missed events delivered %llu\n",
         carrier, owner, (unsigned long long)took,
         (unsigned long long)s->members[carrier].recreated, (unsigned long long)s->watch_rearms,
         (unsigned long long)s->watch_missed_events);
  ck_assert_uint_ge(s->members[carrier].recreated, 1);
  ck_assert_uint_ge(s->watch_missed_events, 1);
  zkr_stats_free(s);
  zookeeper_close(stock);
  zkr_close(z);
  it_fault("clear all");
}
END_TEST

/* ---- a watch re-armed after its carrier was lost: late, and CHANGED for
 * a node deleted and created again meanwhile (docs/dropin.md, "Known
 * differences") ---- */

START_TEST(rearmed_watch_late_and_changed) {
  seen_t pw = {0}, sw = {0};
  zkr_options_t o = ZKR_OPTIONS_INIT;
  o.rescue_ms = 1000;
  zkr_t *z = NULL;
  ck_assert_int_eq(zkr_init_opts(&z, it_hosts(), NULL, 10000, NULL, NULL, 0, &o), ZOK);
  it_wait_ready(z);
  char path[128], buf[8];
  it_path(path, sizeof path, "recreate");
  int owner = owner_member(z);
  zhandle_t *stock = stock_on(owner);
  ck_assert_int_eq(zoo_create(stock, path, "a", 1, &ZOO_OPEN_ACL_UNSAFE, 0, NULL, 0), ZOK);
  uint64_t before[IT_MEMBERS];
  for (int i = 0; i < IT_MEMBERS; i++) before[i] = reads_of(z, i);
  int len = sizeof buf;
  ck_assert_int_eq(zkr_set_read_selector(z, it_off_owner, (void *)(intptr_t)owner), ZOK);
  ck_assert_int_eq(zkr_wget(z, path, record, &pw, buf, &len, NULL), ZOK);
  ck_assert_int_eq(zkr_set_read_selector(z, NULL, NULL), ZOK);
  int carrier = -1;
  for (int i = 0; i < IT_MEMBERS; i++)
    if (reads_of(z, i) > before[i]) carrier = i;
  ck_assert_int_ge(carrier, 0);
  ck_assert_int_ne(carrier, owner);
  /* A stock session's watch on the same node, on a link left alone. */
  len = sizeof buf;
  ck_assert_int_eq(zoo_wget(stock, path, record, &sw, buf, &len, NULL), ZOK);
  /* The carrier's server refuses the client; the node is deleted and
   * created again while its watch has no session. */
  fault("refuse c%d on", carrier + 1);
  fault("reset c%d", carrier + 1);
  uint64_t t0 = it_now_ms();
  ck_assert_int_eq(zoo_delete(stock, path, -1), ZOK);
  ck_assert_int_eq(zoo_create(stock, path, "b", 1, &ZOO_OPEN_ACL_UNSAFE, 0, NULL, 0), ZOK);
  ck_assert_int_eq(wait_count(&sw, ZOO_DELETED_EVENT, ANY, 1, 5000), 1);
  uint64_t stock_ms = it_now_ms() - t0;
  ck_assert_int_eq(wait_count(&pw, ZOO_CHANGED_EVENT, ANY, 1, 10000), 1);
  uint64_t routed_ms = it_now_ms() - t0;
  fault("refuse c%d off", carrier + 1);
  it_sleep_ms(500);
  ck_assert_int_eq(count(&pw, ZOO_DELETED_EVENT, ANY), 0);
  ck_assert_int_eq(count(&pw, ZOO_CHANGED_EVENT, ANY), 1);
  ck_assert_int_eq(zkr_state(z), ZOO_CONNECTED_STATE);
  printf("rearmed_watch: node deleted and created again while its carrier (member %d) was cut: "
         "stock got DELETED after %llu ms, the routed handle CHANGED after %llu ms (rescue_ms "
         "%d)\n",
         carrier, (unsigned long long)stock_ms, (unsigned long long)routed_ms, o.rescue_ms);
  ck_assert_uint_gt(routed_ms, (uint64_t)o.rescue_ms);
  zookeeper_close(stock);
  zkr_close(z);
  it_fault("clear all");
}
END_TEST

/* ---- one id for the handle's life; its ephemerals are its own ---- */

typedef struct {
  char path[160];
  _Atomic int rc; /* the create's outcome as the application heard it */
  _Atomic int done;
  int expect; /* 1 must exist, 0 must not, -1 either */
} eph_t;

static void eph_done(int rc, const char *value, const void *data) {
  eph_t *e = (eph_t *)data;
  (void)value;
  e->rc = rc;
  e->done = 1;
}

static void sync_done(int rc, const char *value, const void *data) {
  (void)rc, (void)value;
  *(_Atomic int *)data = 1;
}

/* zoo_exists after a sync on the same session: what the quorum has. */
static int synced_exists(zhandle_t *zh, const char *p, struct Stat *st) {
  _Atomic int synced = 0;
  ck_assert_int_eq(zoo_async(zh, p, sync_done, (const void *)&synced), ZOK);
  for (uint64_t end = it_now_ms() + 10000; !synced && it_now_ms() < end;) it_sleep_ms(5);
  ck_assert(synced);
  return zoo_exists(zh, p, 0, st);
}

/* Every ephemeral child of base is owned by sid, there are want of them,
 * and each node of e is there or not as expected; through a stock
 * session on member i's server. */
static void check_owned(int i, const char *base, int64_t sid, eph_t *e, int n, int want,
                        const char *when) {
  zhandle_t *stock = stock_on(i);
  struct Stat st;
  ck_assert_int_eq(synced_exists(stock, base, &st), ZOK);
  struct String_vector kids;
  ck_assert_int_eq(zoo_get_children(stock, base, 0, &kids), ZOK);
  int eph = 0;
  for (int k = 0; k < kids.count; k++) {
    char p[256];
    snprintf(p, sizeof p, "%s/%s", base, kids.data[k]);
    ck_assert_int_eq(zoo_exists(stock, p, 0, &st), ZOK);
    if (st.ephemeralOwner) {
      ck_assert_msg(st.ephemeralOwner == sid, "%s: %s owned by %llx, not %llx", when, p,
                    (unsigned long long)st.ephemeralOwner, (unsigned long long)sid);
      eph++;
    }
  }
  deallocate_String_vector(&kids);
  for (int k = 0; k < n; k++) {
    if (e[k].expect < 0) continue;
    int rc = zoo_exists(stock, e[k].path, 0, &st);
    ck_assert_msg(rc == (e[k].expect ? ZOK : ZNONODE), "%s: %s: %s", when, e[k].path, zerror(rc));
  }
  ck_assert_msg(eph == want, "%s: %d ephemerals, %d expected", when, eph, want);
  zookeeper_close(stock);
}

static int leader_of(zkr_t *z) {
  zkr_stats_t *s;
  ck_assert_int_eq(zkr_stats(z, &s), ZOK);
  int l = s->leader;
  zkr_stats_free(s);
  return l;
}

/* The handle is CONNECTED with its owner on a server other than away
 * (-1: any), and knows the ensemble's leader; 20 s at most. */
static void wait_settled(zkr_t *z, int away) {
  uint64_t deadline = it_now_ms() + 20000;
  for (;;) {
    int o = owner_member(z), l = it_leader_index();
    if (zkr_state(z) == ZOO_CONNECTED_STATE && o >= 0 && o != away && l >= 0 && leader_of(z) == l)
      return;
    ck_assert_msg(it_now_ms() < deadline,
                  "not settled: state %d owner %d (away from %d) leader %d/%d", zkr_state(z), o,
                  away, leader_of(z), l);
    it_sleep_ms(50);
  }
}

static void wait_done(eph_t *e) {
  for (uint64_t end = it_now_ms() + 20000; !e->done && it_now_ms() < end;) it_sleep_ms(10);
  ck_assert_msg(e->done, "%s: no completion", e->path);
}

/* An ephemeral create whose reply (down) or request (up) the owner's link
 * holds back, until that link is reset: the application hears
 * ZCONNECTIONLOSS, an outcome it cannot know; the test knows it. */
static zkr_member_stats_t member_now(zkr_t *z, int i) {
  zkr_stats_t *s;
  ck_assert_int_eq(zkr_stats(z, &s), ZOK);
  zkr_member_stats_t m = s->members[i];
  zkr_stats_free(s);
  return m;
}

static void create_cut(zkr_t *z, eph_t *e, const char *dir, int other) {
  int o = owner_member(z);
  char cmd[64];
  zkr_stats_t *st;
  ck_assert_int_eq(zkr_stats(z, &st), ZOK);
  int moved = st->owner_moved;
  zkr_stats_free(st);
  ck_assert_int_eq(moved, 0); /* its member's counters are its own */
  /* The owner's member usable (srvr answers it: a member srvr cannot
   * reach keeps the owner's creates parked), so the create is sent at
   * once; then the link holds back what the test says. */
  uint64_t deadline = it_now_ms() + 10000;
  while (!member_now(z, o).connected && it_now_ms() < deadline) it_sleep_ms(20);
  ck_assert(member_now(z, o).connected);
  uint64_t writes = member_now(z, o).writes;
  snprintf(cmd, sizeof cmd, "delay c%d 4000 0 %s", o + 1, dir);
  ck_assert_int_eq(it_fault(cmd), 0);
  ck_assert_int_eq(zkr_acreate(z, e->path, "", 0, &ZOO_OPEN_ACL_UNSAFE, ZOO_EPHEMERAL, eph_done, e),
                   ZOK);
  /* Handed to the owner's session (not parked). */
  ck_assert_uint_eq(member_now(z, o).writes, writes + 1);
  if (!strcmp(dir, "down")) {
    /* The server applied it: another server has it (no sync: the poll
     * ends when the commit got there). */
    zhandle_t *stock = stock_on(other);
    int rc = ZNONODE;
    for (uint64_t end = it_now_ms() + 3000; rc != ZOK && it_now_ms() < end; it_sleep_ms(10))
      rc = zoo_exists(stock, e->path, 0, NULL);
    zookeeper_close(stock);
    ck_assert_int_eq(rc, ZOK);
  } else {
    it_sleep_ms(300); /* the request sits in the proxy */
  }
  ck_assert_int_eq(e->done, 0);
  /* The bytes still held back keep their due time; the reset drops them. */
  snprintf(cmd, sizeof cmd, "clear c%d", o + 1);
  ck_assert_int_eq(it_fault(cmd), 0);
  fault("reset c%d", o + 1);
  wait_done(e);
  ck_assert_msg(e->rc == ZCONNECTIONLOSS, "%s (%s held back): %s", e->path, dir, zerror(e->rc));
}

/* An ephemeral create that must succeed; on failure, what the handle
 * looked like, to tell a test's race from the library's. */
static void create_eph(zkr_t *z, const char *path, const char *when) {
  uint64_t t0 = it_now_ms();
  int rc = zkr_create(z, path, "", 0, &ZOO_OPEN_ACL_UNSAFE, ZOO_EPHEMERAL, NULL, 0);
  if (rc != ZOK) {
    zkr_stats_t *s;
    ck_assert_int_eq(zkr_stats(z, &s), ZOK);
    fprintf(stderr,
            "%s: create %s: %s after %llu ms; state %d, owner on %d (moved %d, state %d, "
            "rescues %llu), leader %d, write member %d\n",
            when, path, zerror(rc), (unsigned long long)(it_now_ms() - t0), zkr_state(z), s->owner,
            s->owner_moved, s->owner_state, (unsigned long long)s->owner_rescues, s->leader,
            s->write_member);
    for (int i = 0; i < s->n_members; i++)
      fprintf(stderr, "  member %d: role %d session %d connected %d errors %llu\n", i,
              s->members[i].role, s->members[i].session_state, s->members[i].connected,
              (unsigned long long)s->members[i].errors);
    zkr_stats_free(s);
  }
  ck_assert_msg(rc == ZOK, "%s: create %s: %s", when, path, zerror(rc));
}

static void assert_same_id(zkr_t *z, const clientid_t *idp, const clientid_t *id) {
  ck_assert_ptr_eq(zkr_client_id(z), idp);
  ck_assert_int_eq(zkr_client_id(z)->client_id, id->client_id);
  ck_assert(memcmp(zkr_client_id(z)->passwd, id->passwd, sizeof id->passwd) == 0);
}

START_TEST(client_id_stable_ephemerals_owned) {
  zkr_options_t o = ZKR_OPTIONS_INIT;
  o.rescue_ms = 1500;
  zkr_t *z = NULL;
  ck_assert_int_eq(zkr_init_opts(&z, it_hosts(), NULL, 8000, NULL, NULL, 0, &o), ZOK);
  it_wait_ready(z);
  wait_settled(z, -1);
  const clientid_t *idp = zkr_client_id(z);
  clientid_t id = *idp;
  ck_assert(id.client_id != 0);
  int64_t sid = id.client_id;
  char base[128];
  it_path(base, sizeof base, "owned");
  ck_assert_int_eq(zkr_create(z, base, "", 0, &ZOO_OPEN_ACL_UNSAFE, 0, NULL, 0), ZOK);
  enum { PLAIN, SEQ, MULTI, APPLIED, LOST, AFTER_KILL, AFTER_RESTART, N_EPH };
  eph_t e[N_EPH];
  memset(e, 0, sizeof e);
  for (int k = 0; k < N_EPH; k++) e[k].expect = -1; /* not made yet */
  char p[160];
  snprintf(e[PLAIN].path, sizeof e[PLAIN].path, "%s/plain", base);
  ck_assert_int_eq(
      zkr_create(z, e[PLAIN].path, "", 0, &ZOO_OPEN_ACL_UNSAFE, ZOO_EPHEMERAL, NULL, 0), ZOK);
  snprintf(p, sizeof p, "%s/seq-", base);
  ck_assert_int_eq(zkr_create(z, p, "", 0, &ZOO_OPEN_ACL_UNSAFE, ZOO_EPHEMERAL_SEQUENTIAL,
                              e[SEQ].path, sizeof e[SEQ].path),
                   ZOK);
  zoo_op_t ops[2];
  zoo_op_result_t res[2];
  char m1[160];
  snprintf(m1, sizeof m1, "%s/multi-persistent", base);
  snprintf(e[MULTI].path, sizeof e[MULTI].path, "%s/multi-eph", base);
  zoo_create_op_init(&ops[0], m1, "", 0, &ZOO_OPEN_ACL_UNSAFE, 0, NULL, 0);
  zoo_create_op_init(&ops[1], e[MULTI].path, "", 0, &ZOO_OPEN_ACL_UNSAFE, ZOO_EPHEMERAL, NULL, 0);
  ck_assert_int_eq(zkr_multi(z, 2, ops, res), ZOK);
  e[PLAIN].expect = e[SEQ].expect = e[MULTI].expect = 1;
  /* TTL nodes are not the session's. */
  snprintf(p, sizeof p, "%s/ttl", base);
  int ttl_rc =
      zkr_create_ttl(z, p, "", 0, &ZOO_OPEN_ACL_UNSAFE, ZOO_PERSISTENT_WITH_TTL, 60000, NULL, 0);
  ck_assert(ttl_rc == ZOK || ttl_rc == ZUNIMPLEMENTED); /* extendedTypesEnabled */
  int owner = owner_member(z), other = (owner + 1) % IT_MEMBERS;
  check_owned(other, base, sid, e, N_EPH, 3, "created");
  /* Two ephemeral creates with an unknown outcome: the owner's link is
   * reset while the reply (applied) or the request (lost) is held back. */
  snprintf(e[APPLIED].path, sizeof e[APPLIED].path, "%s/unknown-applied", base);
  create_cut(z, &e[APPLIED], "down", other);
  snprintf(e[LOST].path, sizeof e[LOST].path, "%s/unknown-lost", base);
  create_cut(z, &e[LOST], "up", other);
  e[APPLIED].expect = 1;
  e[LOST].expect = 0;
  wait_settled(z, -1);
  assert_same_id(z, idp, &id);
  check_owned(other, base, sid, e, N_EPH, 4, "after the unknown outcomes");
  /* A real kill of the owner's server (the leader's or a follower's,
   * whichever session was established first): the owner is rescued. */
  int leader = owner_member(z);
  ck_assert_int_ge(leader, 0);
  ck_assert_int_eq(it_ensemble("kill", leader), 0);
  ck_assert_int_eq(it_ensemble("wait-leader", -1), 0);
  wait_settled(z, leader);
  assert_same_id(z, idp, &id);
  snprintf(e[AFTER_KILL].path, sizeof e[AFTER_KILL].path, "%s/after-kill", base);
  create_eph(z, e[AFTER_KILL].path, "after the leader kill");
  e[AFTER_KILL].expect = 1;
  check_owned(owner_member(z), base, sid, e, N_EPH, 5, "after the leader kill");
  it_ensemble_heal();
  wait_settled(z, -1);
  /* The rescue went to the leader if it knew one by then, else to the
   * other voter: from there a rescue of its own (its server refuses the
   * client for longer than rescue_ms) takes it to the leader. */
  int moved = 0;
  leader = it_leader_index();
  if (owner_member(z) != leader) {
    int from = owner_member(z);
    fault("refuse c%d on", from + 1);
    fault("reset c%d", from + 1);
    wait_settled(z, from);
    fault("refuse c%d off", from + 1);
    moved = 1;
  }
  wait_settled(z, -1);
  assert_same_id(z, idp, &id);
  /* A leader restart, the owner on the leader. */
  leader = it_leader_index();
  ck_assert_int_eq(owner_member(z), leader);
  ck_assert_int_eq(it_ensemble("kill", leader), 0);
  ck_assert_int_eq(it_ensemble("restart", leader), 0);
  ck_assert_int_eq(it_ensemble("wait-leader", -1), 0);
  wait_settled(z, -1);
  assert_same_id(z, idp, &id);
  snprintf(e[AFTER_RESTART].path, sizeof e[AFTER_RESTART].path, "%s/after-restart", base);
  create_eph(z, e[AFTER_RESTART].path, "after the leader restart");
  e[AFTER_RESTART].expect = 1;
  check_owned(other, base, sid, e, N_EPH, 6, "after the leader restart");
  /* The loss of each one server in turn: every ephemeral stays. */
  for (int i = 0; i < IT_MEMBERS; i++) {
    char when[64];
    int was_owner = owner_member(z) == i, was_leader = it_leader_index() == i;
    ck_assert_int_eq(it_ensemble("kill", i), 0);
    ck_assert_int_eq(it_ensemble("wait-leader", -1), 0);
    wait_settled(z, i);
    assert_same_id(z, idp, &id);
    snprintf(when, sizeof when, "server %d down%s%s", i, was_owner ? " (the owner's)" : "",
             was_leader ? " (the leader)" : "");
    check_owned((i + 1) % IT_MEMBERS, base, sid, e, N_EPH, 6, when);
    it_ensemble_heal();
    wait_settled(z, -1);
  }
  /* Past a session timeout: nothing expired. */
  it_sleep_ms(9000);
  check_owned(0, base, sid, e, N_EPH, 6, "a session timeout later");
  ck_assert_int_eq(zkr_state(z), ZOO_CONNECTED_STATE);
  assert_same_id(z, idp, &id);
  zkr_stats_t *s;
  ck_assert_int_eq(zkr_stats(z, &s), ZOK);
  printf("client_id_stable: id %llx through a leader kill, %sa leader restart and the loss of "
         "each server (%llu rescues); 6 ephemerals owned, one of them an unknown-outcome create "
         "that was applied (the one whose request was lost is not there)\n",
         (unsigned long long)sid, moved ? "a rescue onto the leader, " : "",
         (unsigned long long)s->owner_rescues);
  zkr_stats_free(s);
  /* Closing the handle ends the session: every ephemeral goes. */
  ck_assert_int_eq(zkr_close(z), ZOK);
  zhandle_t *stock = it_stock();
  uint64_t deadline = it_now_ms() + 10000;
  int left = -1;
  while (left != 0 && it_now_ms() < deadline) {
    struct String_vector kids;
    left = 0;
    if (zoo_get_children(stock, base, 0, &kids) == ZOK) {
      for (int k = 0; k < kids.count; k++) {
        char q[256];
        struct Stat st;
        snprintf(q, sizeof q, "%s/%s", base, kids.data[k]);
        if (zoo_exists(stock, q, 0, &st) == ZOK && st.ephemeralOwner) left++;
      }
      deallocate_String_vector(&kids);
    }
    if (left) it_sleep_ms(100);
  }
  ck_assert_int_eq(left, 0);
  zookeeper_close(stock);
}
END_TEST

/* ---- session events reach per-path watchers ---- */

START_TEST(session_events_reach_path_watchers) {
  seen_t global = {0}, a = {0}, b = {0};
  zkr_t *z = NULL;
  ck_assert_int_eq(zkr_init_opts(&z, it_hosts(), record, 10000, NULL, &global, 0, NULL), ZOK);
  it_wait_ready(z);
  char p1[128], p2[128], buf[8];
  it_path(p1, sizeof p1, "sev1");
  it_path(p2, sizeof p2, "sev2");
  ck_assert_int_eq(zkr_create(z, p1, "a", 1, &ZOO_OPEN_ACL_UNSAFE, 0, NULL, 0), ZOK);
  int len = sizeof buf;
  struct Stat st;
  /* a: two watches (one registration for session events); b: one. */
  ck_assert_int_eq(zkr_wget(z, p1, record, &a, buf, &len, NULL), ZOK);
  ck_assert_int_eq(zkr_wexists(z, p2, record, &a, &st), ZNONODE);
  ck_assert_int_eq(zkr_wexists(z, p1, record, &b, &st), ZOK);
  int g0 = global.n;
  ck_assert_int_eq(a.n, 0);
  ck_assert_int_eq(b.n, 0);
  /* Every connection to the owner's server is reset: the owner session
   * reconnects at once, to the same server. */
  int owner = owner_member(z);
  fault("reset c%d", owner + 1);
  ck_assert_int_eq(wait_count(&global, ZOO_SESSION_EVENT, ZOO_CONNECTED_STATE, 2, 10000), 2);
  it_sleep_ms(500);
  ck_assert_int_eq(count(&global, ZOO_SESSION_EVENT, ZOO_CONNECTING_STATE), 1);
  ck_assert_int_eq(global.n - g0, 2);
  ck_assert_int_eq(count(&a, ZOO_SESSION_EVENT, ZOO_CONNECTING_STATE), 1);
  ck_assert_int_eq(count(&a, ZOO_SESSION_EVENT, ZOO_CONNECTED_STATE), 1);
  ck_assert_int_eq(count(&b, ZOO_SESSION_EVENT, ZOO_CONNECTING_STATE), 1);
  ck_assert_int_eq(count(&b, ZOO_SESSION_EVENT, ZOO_CONNECTED_STATE), 1);
  ck_assert_int_eq(a.n, 2);
  ck_assert_int_eq(b.n, 2);
  /* The watches themselves still work, once each. */
  zhandle_t *stock = it_stock();
  ck_assert_int_eq(zoo_set(stock, p1, "b", 1, -1), ZOK);
  ck_assert_int_eq(wait_count(&a, ZOO_CHANGED_EVENT, ANY, 1, 5000), 1);
  ck_assert_int_eq(wait_count(&b, ZOO_CHANGED_EVENT, ANY, 1, 5000), 1);
  ck_assert_int_eq(zoo_create(stock, p2, "", 0, &ZOO_OPEN_ACL_UNSAFE, 0, NULL, 0), ZOK);
  ck_assert_int_eq(wait_count(&a, ZOO_CREATED_EVENT, ANY, 1, 5000), 1);
  zookeeper_close(stock);
  /* No watch registered any more: no session event for them. */
  int an = a.n, bn = b.n;
  fault("reset c%d", owner_member(z) + 1);
  ck_assert_int_eq(wait_count(&global, ZOO_SESSION_EVENT, ZOO_CONNECTED_STATE, 3, 10000), 3);
  it_sleep_ms(300);
  ck_assert_int_eq(a.n, an);
  ck_assert_int_eq(b.n, bn);
  zkr_close(z);
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("session");
  /* Every test here cuts, delays or resets client links at the fault
   * proxy (the unknown-outcome creates of client_id_stable_ephemerals_owned
   * too). */
  if (it_have_proxy("it_session: case proxy (session_events_reach_path_watchers, "
                    "carrier_cut_watch_still_fires, watch_only_cut_from_all_expires, "
                    "rearmed_watch_late_and_changed, client_id_stable_ephemerals_owned)")) {
    TCase *px = tcase_create("proxy");
    tcase_set_timeout(px, 180);
    tcase_add_test(px, session_events_reach_path_watchers);
    tcase_add_test(px, carrier_cut_watch_still_fires);
    tcase_add_test(px, watch_only_cut_from_all_expires);
    tcase_add_test(px, rearmed_watch_late_and_changed);
    tcase_add_test(px, client_id_stable_ephemerals_owned);
    suite_add_tcase(s, px);
  }
  return s;
}

int main(void) { return it_run(suite()); }
