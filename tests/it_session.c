/* Integration tests of the virtual session as one ZooKeeper session
 * (DESIGN.md section 4), against the real proxied 3-node ensemble of
 * tests/integration.sh:
 * - a watch-only program cut from every server longer than the session
 *   timeout learns its session expired (the owner's expiry is its own);
 * - cut from one carrier longer than the timeout, it still gets the event
 *   of a watch that carrier held, once;
 * - zkr_client_id() is one id for the handle's life - across a leader
 *   kill, a rescue, a restart and a second rescue - and every ephemeral
 *   node the handle made (plain, sequential, in a multi, with an unknown
 *   outcome) is owned by it and outlives the loss of any one server;
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
         "watcher %d)\n", global.n, pw.n);
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
  ck_assert_int_eq(zkr_wget(z, path, record, &pw, buf, &len, NULL), ZOK);
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
  ck_assert_int_eq(global.n, events0);
  ck_assert_int_eq(zkr_state(z), ZOO_CONNECTED_STATE);
  zkr_stats_t *s;
  ck_assert_int_eq(zkr_stats(z, &s), ZOK);
  printf("carrier_cut: watch on member %d (owner %d) delivered %llu ms into the cut; "
         "carrier re-created %llu time(s), re-arms %llu, missed events delivered %llu\n",
         carrier, owner, (unsigned long long)took,
         (unsigned long long)s->members[carrier].recreated,
         (unsigned long long)s->watch_rearms, (unsigned long long)s->watch_missed_events);
  ck_assert_uint_ge(s->members[carrier].recreated, 1);
  ck_assert_uint_ge(s->watch_missed_events, 1);
  zkr_stats_free(s);
  zookeeper_close(stock);
  zkr_close(z);
  it_fault("clear all");
}
END_TEST

/* ---- one id for the handle's life; its ephemerals are its own ---- */

typedef struct {
  char path[160];
  int known;  /* created for sure (ZOK) */
} eph_t;

/* known: 1 created (ZOK), -1 the application was told it failed (for a
 * connection loss, the node may exist: then it must be the session's). */
static void eph_done(int rc, const char *value, const void *data) {
  eph_t *e = (eph_t *)data;
  (void)value;
  e->known = rc == ZOK ? 1 : -1;
}

/* Every node of base's children that is ephemeral is owned by sid; the
 * known ones exist.  Returns how many ephemerals there are. */
static int check_owned(zhandle_t *stock, const char *base, int64_t sid, eph_t *known, int n) {
  struct String_vector kids;
  ck_assert_int_eq(zoo_get_children(stock, base, 0, &kids), ZOK);
  int eph = 0;
  for (int i = 0; i < kids.count; i++) {
    char p[256];
    struct Stat st;
    snprintf(p, sizeof p, "%s/%s", base, kids.data[i]);
    ck_assert_int_eq(zoo_exists(stock, p, 0, &st), ZOK);
    if (st.ephemeralOwner) {
      ck_assert_msg(st.ephemeralOwner == sid, "%s owned by %llx, not %llx", p,
                    (unsigned long long)st.ephemeralOwner, (unsigned long long)sid);
      eph++;
    }
  }
  deallocate_String_vector(&kids);
  for (int i = 0; i < n; i++)
    if (known[i].known == 1) ck_assert_int_eq(zoo_exists(stock, known[i].path, 0, NULL), ZOK);
  return eph;
}

static int stock_retry_exists(zhandle_t *stock, const char *p) {
  int rc = ZCONNECTIONLOSS;
  for (int i = 0; i < 100 && (rc == ZCONNECTIONLOSS || rc == ZOPERATIONTIMEOUT); i++) {
    rc = zoo_exists(stock, p, 0, NULL);
    if (rc == ZCONNECTIONLOSS || rc == ZOPERATIONTIMEOUT) it_sleep_ms(100);
  }
  return rc;
}

START_TEST(client_id_stable_ephemerals_owned) {
  zkr_options_t o = ZKR_OPTIONS_INIT;
  o.rescue_ms = 1500;
  zkr_t *z = NULL;
  ck_assert_int_eq(zkr_init_opts(&z, it_hosts(), NULL, 8000, NULL, NULL, 0, &o), ZOK);
  it_wait_ready(z);
  const clientid_t *idp = zkr_client_id(z);
  clientid_t id = *idp;
  ck_assert(id.client_id != 0);
  char base[128];
  it_path(base, sizeof base, "owned");
  ck_assert_int_eq(zkr_create(z, base, "", 0, &ZOO_OPEN_ACL_UNSAFE, 0, NULL, 0), ZOK);
  eph_t e[5];
  memset(e, 0, sizeof e);
  char p[160];
  snprintf(e[0].path, sizeof e[0].path, "%s/plain", base);
  ck_assert_int_eq(zkr_create(z, e[0].path, "", 0, &ZOO_OPEN_ACL_UNSAFE, ZOO_EPHEMERAL, NULL, 0), ZOK);
  e[0].known = 1;
  snprintf(p, sizeof p, "%s/seq-", base);
  ck_assert_int_eq(zkr_create(z, p, "", 0, &ZOO_OPEN_ACL_UNSAFE, ZOO_EPHEMERAL_SEQUENTIAL,
                              e[1].path, sizeof e[1].path), ZOK);
  e[1].known = 1;
  zoo_op_t ops[2];
  zoo_op_result_t res[2];
  char m1[160], m2[160];
  snprintf(m1, sizeof m1, "%s/multi-persistent", base);
  snprintf(m2, sizeof m2, "%s/multi-eph", base);
  zoo_create_op_init(&ops[0], m1, "", 0, &ZOO_OPEN_ACL_UNSAFE, 0, NULL, 0);
  zoo_create_op_init(&ops[1], m2, "", 0, &ZOO_OPEN_ACL_UNSAFE, ZOO_EPHEMERAL, NULL, 0);
  ck_assert_int_eq(zkr_multi(z, 2, ops, res), ZOK);
  snprintf(e[2].path, sizeof e[2].path, "%s", m2);
  e[2].known = 1;
  /* TTL nodes are not the session's. */
  snprintf(p, sizeof p, "%s/ttl", base);
  int ttl_rc = zkr_create_ttl(z, p, "", 0, &ZOO_OPEN_ACL_UNSAFE, ZOO_PERSISTENT_WITH_TTL,
                              60000, NULL, 0);
  ck_assert(ttl_rc == ZOK || ttl_rc == ZUNIMPLEMENTED); /* extendedTypesEnabled */
  zhandle_t *stock = it_stock();
  ck_assert_int_eq(check_owned(stock, base, id.client_id, e, 3), 3);
  /* The owner's server (the leader's) dies with an ephemeral create in
   * flight: its outcome is unknown to the application. */
  int owner = owner_member(z);
  snprintf(e[3].path, sizeof e[3].path, "%s/unknown", base);
  ck_assert_int_eq(zkr_acreate(z, e[3].path, "", 0, &ZOO_OPEN_ACL_UNSAFE, ZOO_EPHEMERAL,
                               eph_done, &e[3]), ZOK);
  ck_assert_int_eq(it_ensemble("kill", owner), 0);
  ck_assert_int_eq(it_ensemble("wait-leader", -1), 0);
  uint64_t deadline = it_now_ms() + 15000;
  while ((owner_member(z) == owner || zkr_state(z) != ZOO_CONNECTED_STATE) &&
         it_now_ms() < deadline)
    it_sleep_ms(50);
  ck_assert_int_ne(owner_member(z), owner);
  ck_assert_ptr_eq(zkr_client_id(z), idp);
  ck_assert_int_eq(zkr_client_id(z)->client_id, id.client_id);
  ck_assert(memcmp(zkr_client_id(z)->passwd, id.passwd, sizeof id.passwd) == 0);
  /* A new ephemeral after the rescue is the same session's. */
  snprintf(e[4].path, sizeof e[4].path, "%s/after", base);
  ck_assert_int_eq(zkr_create(z, e[4].path, "", 0, &ZOO_OPEN_ACL_UNSAFE, ZOO_EPHEMERAL, NULL, 0), ZOK);
  e[4].known = 1;
  ck_assert_int_eq(stock_retry_exists(stock, base), ZOK);
  int n1 = check_owned(stock, base, id.client_id, e, 5);
  /* The killed leader comes back; then the server holding the owner now
   * dies too (a second rescue). */
  it_ensemble_heal();
  ck_assert_int_eq(stock_retry_exists(stock, base), ZOK);
  ck_assert_int_eq(check_owned(stock, base, id.client_id, e, 5), n1);
  int owner2 = owner_member(z);
  ck_assert_int_eq(it_ensemble("kill", owner2), 0);
  ck_assert_int_eq(it_ensemble("wait-leader", -1), 0);
  deadline = it_now_ms() + 15000;
  while ((owner_member(z) == owner2 || zkr_state(z) != ZOO_CONNECTED_STATE) &&
         it_now_ms() < deadline)
    it_sleep_ms(50);
  ck_assert_int_ne(owner_member(z), owner2);
  ck_assert_int_eq(zkr_client_id(z)->client_id, id.client_id);
  /* Past a session timeout: nothing expired. */
  it_sleep_ms(9000);
  ck_assert_int_eq(stock_retry_exists(stock, base), ZOK);
  ck_assert_int_eq(check_owned(stock, base, id.client_id, e, 5), n1);
  ck_assert_int_eq(zkr_state(z), ZOO_CONNECTED_STATE);
  it_ensemble_heal();
  zkr_stats_t *s;
  ck_assert_int_eq(zkr_stats(z, &s), ZOK);
  printf("client_id_stable: id %llx through 2 owner-server kills (%llu rescues), %d ephemerals "
         "owned (unknown-outcome create: %s)\n",
         (unsigned long long)id.client_id, (unsigned long long)s->owner_rescues, n1,
         e[3].known == 1 ? "applied" : "reported failed");
  zkr_stats_free(s);
  /* Closing the handle ends the session: every ephemeral goes. */
  ck_assert_int_eq(zkr_close(z), ZOK);
  deadline = it_now_ms() + 10000;
  int left = -1;
  while (left != 0 && it_now_ms() < deadline) {
    struct String_vector kids;
    left = 0;
    if (zoo_get_children(stock, base, 0, &kids) == ZOK) {
      for (int i = 0; i < kids.count; i++) {
        char q[256];
        struct Stat st;
        snprintf(q, sizeof q, "%s/%s", base, kids.data[i]);
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
  /* These three cut or reset client links at the fault proxy. */
  if (it_have_proxy("it_session: case proxy (session_events_reach_path_watchers, "
                    "carrier_cut_watch_still_fires, watch_only_cut_from_all_expires)")) {
    TCase *px = tcase_create("proxy");
    tcase_set_timeout(px, 180);
    tcase_add_test(px, session_events_reach_path_watchers);
    tcase_add_test(px, carrier_cut_watch_still_fires);
    tcase_add_test(px, watch_only_cut_from_all_expires);
    suite_add_tcase(s, px);
  }
  TCase *tc = tcase_create("ensemble");
  tcase_set_timeout(tc, 180);
  tcase_add_test(tc, client_id_stable_ephemerals_owned);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return it_run(suite()); }
