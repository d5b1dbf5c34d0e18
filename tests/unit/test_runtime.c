/* Server-less unit tests of the stepped runtime (zkroute/core/runtime.h), the
 * seam the simulator drives the library through: time is the test's, the
 * library starts no thread of its own, callbacks run inside zkr__runtime_step on
 * the caller's thread, the monitor turns when zkr__runtime_step says it is due,
 * and a blocking call runs the world until its reply came.  The fake
 * ZooKeeper (tests/harness/fakezk.h) answers on this thread too. */
#include <check.h>
#include <dirent.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fakefix.h"
#include "core/runtime.h"

static uint64_t world_ns = 1000000000ull;
static uint64_t world_now(void) { return world_ns; }

/* The world of run_until: answers the first unanswered GET of /b. */
static int runs;
static void run_until(void *arg, int (*done)(void *arg)) {
  while (!done(arg)) {
    runs++;
    fake_req_t *r = fake_peek(NULL, FK_GET, "/b");
    ck_assert_ptr_nonnull(r);
    fake_reply(r, ZOK, 7, 7, "bee");
  }
}

static void (*deferred_fn)(void *);
static void *deferred_arg;
static void defer(void (*fn)(void *), void *arg) {
  deferred_fn = fn;
  deferred_arg = arg;
}

static const zkr__runtime_t stepped = {
    .now_ns = world_now, .stepped = 1, .run_until = run_until, .defer = defer};

static int threads_now(void) {
  DIR *d = opendir("/proc/self/task");
  int n = 0;
  for (struct dirent *e; d && (e = readdir(d));) n += e->d_name[0] != '.';
  if (d) closedir(d);
  return n;
}

static pthread_t test_thread;
static _Atomic int off_thread;
static void note_thread(zhandle_t *zh, int type, int state, const char *path, void *ctx) {
  if (!pthread_equal(pthread_self(), test_thread)) off_thread = 1;
  watcher(zh, type, state, path, ctx);
}

static void open_stepped(void) {
  zkr_options_t o;
  opts_default(&o);
  ev_reset();
  fake_install();
  zkr__runtime_use(&stepped);
  test_thread = pthread_self();
  off_thread = 0;
  fake_set_role(1, ZKR_ROLE_LEADER, 0x100000005LL);
  fake_set_role(2, ZKR_ROLE_FOLLOWER, 0x100000005LL);
  fake_set_role(3, ZKR_ROLE_FOLLOWER, 0x100000005LL);
  ck_assert_int_eq(zkr_init_opts(&z, HOSTS, note_thread, 3000, NULL, (void *)100, 0, &o), ZOK);
  for (int i = 1; i <= 3; i++) ck_assert_ptr_nonnull(h[i] = fake_handle(i, 0));
}

static void close_stepped(void) {
  if (z) zkr_close(z);
  z = NULL;
  zkr__runtime_use(NULL);
  fake_uninstall();
}

START_TEST(stepped_runs_on_callers_thread) {
  int before = threads_now();
  open_stepped();
  /* No thread of the library's (libzookeeper_mt's are the fake's: none). */
  ck_assert_int_eq(threads_now(), before);
  /* The first step polls srvr and asks to be stepped again at the next
   * tick (the monitor's 50 ms) or poll (20 ms here). */
  uint64_t next = zkr__runtime_step(z);
  ck_assert_uint_gt(next, world_ns);
  ck_assert_uint_le(next, world_ns + 50000000ull);
  ck_assert_int_eq(stat_leader(), 0);
  for (int i = 1; i <= 3; i++) fake_connect(h[i], 0);
  /* Connected, but the application hears of it only inside a step. */
  ck_assert_int_eq(ev_matching(EV_SESSION, 100), 0);
  zkr__runtime_step(z);
  int e = ev_find(0, EV_SESSION, 100);
  ck_assert_int_ge(e, 0);
  ck_assert_int_eq(ev_at(e).state, ZOO_CONNECTED_STATE);
  ck_assert_int_eq(off_thread, 0);
  /* Nothing is due before the time zkr__runtime_step gave. */
  next = zkr__runtime_step(z);
  world_ns = next - 1;
  int polls = 0;
  zkr_stats_t *s;
  ck_assert_int_eq(zkr_stats(z, &s), ZOK);
  polls = (int)s->members[0].srvr_polls;
  zkr_stats_free(s);
  zkr__runtime_step(z);
  ck_assert_int_eq(zkr_stats(z, &s), ZOK);
  ck_assert_int_eq((int)s->members[0].srvr_polls, polls);
  zkr_stats_free(s);
  world_ns = next + 30000000ull;
  zkr__runtime_step(z);
  ck_assert_int_eq(zkr_stats(z, &s), ZOK);
  ck_assert_int_gt((int)s->members[0].srvr_polls, polls);
  zkr_stats_free(s);
  close_stepped();
}
END_TEST

/* A blocking call runs the world (run_until) until its reply came, and
 * returns it; an asynchronous completion waits for the next step. */
START_TEST(stepped_blocking_call_runs_the_world) {
  open_stepped();
  zkr__runtime_step(z);
  for (int i = 1; i <= 3; i++) fake_connect(h[i], 0);
  zkr__runtime_step(z);
  runs = 0;
  char buf[8];
  int len = sizeof buf;
  struct Stat st;
  ck_assert_int_eq(zkr_get(z, "/b", 0, buf, &len, &st), ZOK);
  ck_assert_int_eq(runs, 1);
  ck_assert_int_eq(len, 3);
  ck_assert_int_eq((int)st.mzxid, 7);
  ck_assert_int_eq(zkr_aget(z, "/c", 0, done_data, (void *)5), ZOK);
  fake_req_t *r = fake_peek(NULL, FK_GET, "/c");
  ck_assert_ptr_nonnull(r);
  fake_reply(r, ZOK, 8, 8, "c");
  ck_assert_int_eq(ev_matching(EV_DONE, 5), 0);
  zkr__runtime_step(z);
  ck_assert_int_eq(ev_matching(EV_DONE, 5), 1);
  close_stepped();
}
END_TEST

/* zkr_close inside a callback is deferred to a world event of its own. */
static void close_in_callback(int rc, const struct Stat *s, const void *d) {
  (void)s;
  ev_add(EV_DONE, TAG(d), rc, 0, 0, NULL);
  ck_assert_int_eq(zkr_close(z), ZOK);
}

START_TEST(stepped_close_from_callback_is_deferred) {
  open_stepped();
  zkr__runtime_step(z);
  for (int i = 1; i <= 3; i++) fake_connect(h[i], 0);
  zkr__runtime_step(z);
  deferred_fn = NULL;
  ck_assert_int_eq(zkr_aexists(z, "/d", 0, close_in_callback, (void *)6), ZOK);
  fake_req_t *r = fake_peek(NULL, FK_EXISTS, "/d");
  ck_assert_ptr_nonnull(r);
  fake_reply(r, ZOK, 9, 9, NULL);
  zkr__runtime_step(z);
  ck_assert_int_eq(ev_matching(EV_DONE, 6), 1);
  ck_assert_ptr_nonnull(deferred_fn);
  deferred_fn(deferred_arg); /* the world runs the close */
  z = NULL;
  for (int i = 1; i <= 3; i++) ck_assert(fake_handle_closed(h[i]));
  close_stepped();
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("runtime");
  TCase *tc = tcase_create("stepped");
  tcase_set_timeout(tc, 30);
  tcase_add_test(tc, stepped_runs_on_callers_thread);
  tcase_add_test(tc, stepped_blocking_call_runs_the_world);
  tcase_add_test(tc, stepped_close_from_callback_is_deferred);
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
