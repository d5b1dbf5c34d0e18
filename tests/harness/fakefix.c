/* The fixture the fake-ZooKeeper unit tests share (fakefix.h). */
#include "fakefix.h"

#include "core/runtime.h"

#include <check.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ---- what the application saw, in order ---- */

static pthread_mutex_t ev_mu = PTHREAD_MUTEX_INITIALIZER;
static ev_t evs[512];
static int n_evs;

void ev_reset(void) {
  pthread_mutex_lock(&ev_mu);
  n_evs = 0;
  pthread_mutex_unlock(&ev_mu);
}

static void ev_push(int kind, int tag, int rc, int type, int state, const char *path,
                    int64_t mzxid) {
  pthread_mutex_lock(&ev_mu);
  if (n_evs < 512) {
    evs[n_evs] =
        (ev_t){.kind = kind, .tag = tag, .rc = rc, .type = type, .state = state, .mzxid = mzxid};
    snprintf(evs[n_evs].path, sizeof evs[n_evs].path, "%s", path ? path : "");
    n_evs++;
  }
  pthread_mutex_unlock(&ev_mu);
}

void ev_add(int kind, int tag, int rc, int type, int state, const char *path) {
  ev_push(kind, tag, rc, type, state, path, 0);
}

int ev_count(void) {
  pthread_mutex_lock(&ev_mu);
  int n = n_evs;
  pthread_mutex_unlock(&ev_mu);
  return n;
}

ev_t ev_at(int i) {
  pthread_mutex_lock(&ev_mu);
  ev_t e = evs[i];
  pthread_mutex_unlock(&ev_mu);
  return e;
}

uint64_t now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

void sleep_ms(int ms) {
  struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
  nanosleep(&ts, NULL);
}

/* Index of the first event matching, at or after from; -1 after 5 s. */
int ev_find(int from, int kind, int tag) {
  uint64_t deadline = now_ms() + 5000;
  for (;;) {
    int n = ev_count();
    for (int i = from; i < n; i++) {
      ev_t e = ev_at(i);
      if (e.kind == kind && (tag < 0 || e.tag == tag)) return i;
    }
    if (now_ms() > deadline) return -1;
    sleep_ms(2);
  }
}

int ev_matching(int kind, int tag) {
  int c = 0, n = ev_count();
  for (int i = 0; i < n; i++) {
    ev_t e = ev_at(i);
    c += e.kind == kind && (tag < 0 || e.tag == tag);
  }
  return c;
}

void done_void(int rc, const void *d) { ev_add(EV_DONE, TAG(d), rc, 0, 0, NULL); }
void done_stat(int rc, const struct Stat *s, const void *d) {
  ev_push(EV_DONE, TAG(d), rc, 0, 0, NULL, s ? s->mzxid : 0);
}
void done_data(int rc, const char *v, int l, const struct Stat *s, const void *d) {
  (void)v, (void)l;
  ev_push(EV_DONE, TAG(d), rc, 0, 0, NULL, s ? s->mzxid : 0);
}

void done_strings(int rc, const struct String_vector *v, const void *d) {
  (void)v;
  ev_add(EV_DONE, TAG(d), rc, 0, 0, NULL);
}
void done_string(int rc, const char *v, const void *d) { ev_add(EV_DONE, TAG(d), rc, 0, 0, v); }

void watcher(zhandle_t *zh, int type, int state, const char *path, void *ctx) {
  (void)zh;
  ev_add(type == ZOO_SESSION_EVENT ? EV_SESSION : EV_WATCH, TAG(ctx), 0, type, state, path);
}

/* ---- the handle ---- */

zkr_t *z;
fake_zh_t *h[4];

void opts_default(zkr_options_t *o) {
  *o = (zkr_options_t)ZKR_OPTIONS_INIT;
  o->leader_poll_ms = 20;
  /* One poll rate: the tests were written for a poll every 20 ms, idle or
   * not (idle polling has its tests in test_monitor.c). */
  o->idle_poll_ms = 20;
  o->hedge = -1;
  o->follow_config = -1;
  /* No rescue unless a test asks for one (open3_rescue): a loaded machine
   * may stall a test thread longer than a short rescue_ms between two
   * session events, and a rescue the test did not expect changes what it
   * checks. */
  o->rescue_ms = 60000;
  o->rescue_down_ms = 60000;
  /* The tests answer every request themselves: sync coalescing (reads
   * waiting for a sync the test has not answered) has tests of its own. */
  o->sync_coalesce = -1;
}

void wait_state(int state) {
  uint64_t deadline = now_ms() + 5000;
  while (zkr_state(z) != state && now_ms() < deadline) sleep_ms(2);
  ck_assert_int_eq(zkr_state(z), state);
}

int stat_owner(void) {
  zkr_stats_t *s;
  ck_assert_int_eq(zkr_stats(z, &s), ZOK);
  int o = s->owner;
  zkr_stats_free(s);
  return o;
}

int stat_leader(void) {
  zkr_stats_t *s;
  ck_assert_int_eq(zkr_stats(z, &s), ZOK);
  int l = s->leader;
  zkr_stats_free(s);
  return l;
}

void wait_leader(int member) {
  uint64_t deadline = now_ms() + 5000;
  while (stat_leader() != member && now_ms() < deadline) sleep_ms(2);
  ck_assert_int_eq(stat_leader(), member);
}

/* fake1 leads; every member connects; the owner is the leader's session. */
void open3_opts(const zkr_options_t *o, const clientid_t *cid) {
  ev_reset();
  fake_install();
  fake_set_role(1, ZKR_ROLE_LEADER, 0x100000005LL);
  fake_set_role(2, ZKR_ROLE_FOLLOWER, 0x100000005LL);
  fake_set_role(3, ZKR_ROLE_FOLLOWER, 0x100000005LL);
  ck_assert_int_eq(zkr_init_opts(&z, HOSTS, watcher, 3000, cid, (void *)100, 0, o), ZOK);
  for (int i = 1; i <= 3; i++) ck_assert_ptr_nonnull(h[i] = fake_handle(i, 0));
  wait_leader(0);
  if (!cid)
    for (int i = 1; i <= 3; i++) fake_connect(h[i], 0);
}

void open3_with(int rescue_ms) {
  zkr_options_t o;
  opts_default(&o);
  if (rescue_ms > 0) o.rescue_ms = rescue_ms;
  open3_opts(&o, NULL);
  wait_state(ZOO_CONNECTED_STATE);
  ck_assert_int_eq(stat_owner(), 0);
  /* The application has had its CONNECTED event. */
  int e = ev_find(0, EV_SESSION, 100);
  ck_assert_int_ge(e, 0);
  ck_assert_int_eq(ev_at(e).state, ZOO_CONNECTED_STATE);
}

void open3(void) { open3_with(0); }

/* For the tests of the rescue: the owner or a carrier is moved after
 * 300 ms away. */
void open3_rescue(void) { open3_with(300); }

/* ---- stepped ---- */

static uint64_t fx_clock_ns = 5000000000ull;
static uint64_t fx_now(void) { return fx_clock_ns; }

/* A blocking call in a stepped test: nothing but the test answers, so the
 * reply must already be there. */
static void fx_run_until(void *arg, int (*done)(void *arg)) {
  ck_assert_msg(done(arg), "a blocking call waited in a stepped test");
}

static void fx_defer(void (*fn)(void *), void *arg) { fn(arg); }

static const zkr__runtime_t fx_runtime = {
    .now_ns = fx_now, .stepped = 1, .run_until = fx_run_until, .defer = fx_defer};

uint64_t step(void) { return zkr__runtime_step(z); }

void advance_ms(int ms) { fx_clock_ns += (uint64_t)ms * 1000000u; }

void open3_stepped(void) {
  zkr_options_t o;
  opts_default(&o);
  open3_stepped_opts(&o);
}

void open3_stepped_opts(const zkr_options_t *opts) {
  zkr_options_t o = *opts;
  ev_reset();
  fake_install();
  zkr__runtime_use(&fx_runtime);
  fake_set_role(1, ZKR_ROLE_LEADER, 0x100000005LL);
  fake_set_role(2, ZKR_ROLE_FOLLOWER, 0x100000005LL);
  fake_set_role(3, ZKR_ROLE_FOLLOWER, 0x100000005LL);
  ck_assert_int_eq(zkr_init_opts(&z, HOSTS, watcher, 3000, NULL, (void *)100, 0, &o), ZOK);
  for (int i = 1; i <= 3; i++) ck_assert_ptr_nonnull(h[i] = fake_handle(i, 0));
  step(); /* the first poll: fake1 leads */
  for (int i = 1; i <= 3; i++) fake_connect(h[i], 0);
  step();
  ck_assert_int_eq(zkr_state(z), ZOO_CONNECTED_STATE);
  ck_assert_int_eq(stat_owner(), 0);
}

void teardown(void) {
  if (z) zkr_close(z);
  z = NULL;
  zkr__runtime_use(NULL);
  fake_uninstall();
}

fake_req_t *sent_now(int kind) {
  step();
  fake_req_t *r = fake_peek(NULL, kind, "/n");
  ck_assert_ptr_nonnull(r);
  return r;
}

void pair_set_again_behind_a_sync(fake_zh_t **x, fake_req_t **g2, fake_req_t **s2) {
  ck_assert_int_eq(zkr_awget(z, "/n", watcher, (void *)1, done_data, (void *)11), ZOK);
  fake_req_t *g1 = sent_now(FK_GET);
  *x = g1->h;
  fake_req_t *s1 = fake_peek(*x, FK_SYNC, NULL);
  ck_assert_ptr_nonnull(s1);
  fake_reply(s1, ZOK, 0, 0, NULL);
  fake_reply(g1, ZOK, 5, 5, "a");
  step();
  ck_assert_int_eq(ev_matching(EV_DONE, 11), 1);
  ck_assert_int_eq(zkr_awget(z, "/n", watcher, (void *)1, done_data, (void *)12), ZOK);
  *g2 = sent_now(FK_GET);
  ck_assert_ptr_eq((*g2)->h, *x);
  *s2 = fake_peek(*x, FK_SYNC, NULL);
  ck_assert_ptr_nonnull(*s2);
  ck_assert_int_lt((*s2)->seq, (*g2)->seq);
}
