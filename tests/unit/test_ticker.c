/* Unit tests of the process's ticker (zkr__ticker_*): it runs each
 * registered handle's monitor and hedger turns at the deadlines they
 * return and at once when kicked, a blocking monitor turn of one handle
 * never stalls another's, a removal waits for the turn in progress and no
 * turn of the handle starts after it, and the ticker's threads end with
 * the last handle.  The handles are bare struct zkr (no session): the
 * turns are the test's own, counting. */
#include <check.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

#include "core/handle.h"
#include "core/ticker.h"

#define NH 64

static uint64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void sleep_ms(int ms) {
  nanosleep(&(struct timespec){ms / 1000, (ms % 1000) * 1000000L}, NULL);
}

/* Per handle: turns run, the period of its monitor (ns), a turn that
 * blocks until released, a turn running now. */
typedef struct {
  _Atomic int mon, hedge, in_turn, after_remove, removed;
  uint64_t period;
  _Atomic int block;
} counts_t;

static counts_t counts[NH];
static zkr_t *hs[NH];

/* The handle's context is its counts (set before it is added). */
static counts_t *of(zkr_t *z) { return z->context; }

static uint64_t monitor_turn(zkr_t *z) {
  counts_t *c = of(z);
  if (atomic_load(&c->removed)) atomic_fetch_add(&c->after_remove, 1);
  atomic_store(&c->in_turn, 1);
  atomic_fetch_add(&c->mon, 1);
  while (atomic_load(&c->block)) sleep_ms(1);
  atomic_store(&c->in_turn, 0);
  return c->period ? now_ns() + c->period : UINT64_MAX;
}

static uint64_t hedger_turn(zkr_t *z) {
  counts_t *c = of(z);
  atomic_fetch_add(&c->hedge, 1);
  return UINT64_MAX;
}

static const zkr__ticker_turns_t turns = {.monitor = monitor_turn, .hedger = hedger_turn};

static zkr_t *add(int i, uint64_t period_ms) {
  hs[i] = calloc(1, sizeof(zkr_t));
  ck_assert_ptr_nonnull(hs[i]);
  counts[i] = (counts_t){.period = period_ms * 1000000u};
  hs[i]->context = &counts[i];
  ck_assert_int_eq(zkr__ticker_add(hs[i], &turns), ZOK);
  return hs[i];
}

static void del(int i) {
  zkr__ticker_remove(hs[i]);
  atomic_store(&counts[i].removed, 1);
}

static void free_all(void) {
  for (int i = 0; i < NH; i++) {
    free(hs[i]);
    hs[i] = NULL;
  }
}

/* Waits up to ms for *v >= want. */
static int reaches(_Atomic int *v, int want, int ms) {
  for (int t = 0; t < ms && atomic_load(v) < want; t++) sleep_ms(1);
  return atomic_load(v) >= want;
}

START_TEST(turns_follow_deadlines) {
  add(0, 20);
  /* The first turn at once, then about one per 20 ms (+ the 5 ms grid). */
  ck_assert(reaches(&counts[0].mon, 1, 1000));
  sleep_ms(400);
  int n = atomic_load(&counts[0].mon);
  ck_assert_int_ge(n, 6);
  ck_assert_int_le(n, 22);
  ck_assert_int_eq(atomic_load(&counts[0].hedge), 0);
  del(0);
  ck_assert_int_eq(zkr__ticker_threads(), 0);
  free_all();
}
END_TEST

START_TEST(kicks_run_turns_at_once) {
  add(0, 0); /* the monitor is due only when kicked */
  ck_assert(reaches(&counts[0].mon, 1, 1000));
  sleep_ms(50);
  ck_assert_int_eq(atomic_load(&counts[0].mon), 1);
  zkr__ticker_kick_monitor(hs[0]);
  ck_assert(reaches(&counts[0].mon, 2, 1000));
  zkr__ticker_kick_hedger(hs[0]);
  ck_assert(reaches(&counts[0].hedge, 1, 1000));
  sleep_ms(50);
  ck_assert_int_eq(atomic_load(&counts[0].hedge), 1);
  del(0);
  free_all();
}
END_TEST

START_TEST(a_blocked_turn_stalls_no_other_handle) {
  add(0, 10);
  ck_assert(reaches(&counts[0].mon, 1, 1000));
  atomic_store(&counts[0].block, 1);
  ck_assert(reaches(&counts[0].mon, 2, 1000)); /* now blocked inside */
  add(1, 10);
  add(2, 10);
  ck_assert(reaches(&counts[1].mon, 10, 2000));
  ck_assert(reaches(&counts[2].mon, 10, 2000));
  /* Its hedger turns, on the timer, are not held up either. */
  zkr__ticker_kick_hedger(hs[0]);
  ck_assert(reaches(&counts[0].hedge, 1, 1000));
  ck_assert_int_eq(atomic_load(&counts[0].mon), 2); /* never overlapped */
  atomic_store(&counts[0].block, 0);
  ck_assert(reaches(&counts[0].mon, 4, 2000));
  for (int i = 0; i < 3; i++) del(i);
  free_all();
}
END_TEST

static void *remover(void *arg) {
  del((int)(intptr_t)arg);
  return NULL;
}

START_TEST(remove_waits_for_the_turn_in_progress) {
  add(0, 5);
  add(1, 5); /* keeps the ticker running after 0 leaves */
  ck_assert(reaches(&counts[0].mon, 1, 1000));
  atomic_store(&counts[0].block, 1);
  int n = atomic_load(&counts[0].mon);
  ck_assert(reaches(&counts[0].mon, n + 1, 1000));
  pthread_t t;
  ck_assert_int_eq(pthread_create(&t, NULL, remover, (void *)(intptr_t)0), 0);
  sleep_ms(100);
  ck_assert_int_eq(atomic_load(&counts[0].removed), 0); /* still waiting */
  ck_assert_int_eq(atomic_load(&counts[0].in_turn), 1);
  atomic_store(&counts[0].block, 0);
  pthread_join(t, NULL);
  ck_assert_int_eq(atomic_load(&counts[0].in_turn), 0);
  int after = atomic_load(&counts[0].mon);
  zkr__ticker_kick_monitor(hs[0]); /* no-op now */
  sleep_ms(100);
  ck_assert_int_eq(atomic_load(&counts[0].mon), after);
  ck_assert_int_eq(atomic_load(&counts[0].after_remove), 0);
  ck_assert_int_gt(atomic_load(&counts[1].mon), 5);
  del(1);
  free_all();
}
END_TEST

START_TEST(many_handles_few_threads) {
  for (int i = 0; i < NH; i++) add(i, 50);
  sleep_ms(500);
  for (int i = 0; i < NH; i++) ck_assert_int_ge(atomic_load(&counts[i].mon), 4);
  /* A timer and a few workers for all of them. */
  ck_assert_int_le(zkr__ticker_threads(), 17);
  ck_assert_int_ge(zkr__ticker_threads(), 2);
  for (int i = 0; i < NH; i++) del(i);
  ck_assert_int_eq(zkr__ticker_threads(), 0);
  /* And it starts again with the next handle. */
  free_all();
  add(0, 10);
  ck_assert(reaches(&counts[0].mon, 3, 1000));
  del(0);
  free_all();
}
END_TEST

/* Waits up to ms for the ticker to run at most want threads. */
static int threads_fall_to(int want, int ms) {
  for (int t = 0; t < ms && zkr__ticker_threads() > want; t += 10) sleep_ms(10);
  return zkr__ticker_threads() <= want;
}

/* Three blocked turns hold three workers, and the others' turns still run
 * (more workers start); once they are released, a light load needs one
 * worker and the others end after the retire period. */
START_TEST(surplus_workers_retire) {
  zkr__ticker_set_retire_ms(200);
  for (int i = 0; i < 8; i++) add(i, 10);
  for (int i = 0; i < 3; i++) {
    ck_assert(reaches(&counts[i].mon, 1, 1000));
    atomic_store(&counts[i].block, 1);
  }
  for (int i = 0; i < 3; i++) ck_assert(reaches(&counts[i].mon, 2, 2000)); /* held inside */
  for (int i = 3; i < 8; i++) {
    int n = atomic_load(&counts[i].mon);
    ck_assert(reaches(&counts[i].mon, n + 10, 2000));
  }
  ck_assert_int_ge(zkr__ticker_threads(), 5); /* timer, 3 held, 1 or more running */
  for (int i = 0; i < 3; i++) atomic_store(&counts[i].block, 0);
  ck_assert(threads_fall_to(3, 10000));
  for (int i = 0; i < 8; i++) {
    int n = atomic_load(&counts[i].mon);
    ck_assert(reaches(&counts[i].mon, n + 5, 2000)); /* and every handle's turns go on */
  }
  for (int i = 0; i < 8; i++) del(i);
  ck_assert_int_eq(zkr__ticker_threads(), 0);
  zkr__ticker_set_retire_ms(0);
  free_all();
}
END_TEST

/* 64 handles whose turns come due on the same grid steps: one worker runs
 * them all - a burst of quick turns does not start a worker per turn.  The
 * only other workers are those the timer adds when the oldest queued turn
 * waited a grid step (5 ms): on a loaded machine (the sanitizer stages run
 * two tests at once on two cores) a worker not scheduled for that long
 * looks held, and one is added per step - by design; an idle machine
 * sees none or one or two.  So: the timer, one worker, and those. */
START_TEST(bursts_of_quick_turns_start_few_workers) {
  for (int i = 0; i < NH; i++) add(i, 20);
  sleep_ms(500);
  for (int i = 0; i < NH; i++) ck_assert_int_ge(atomic_load(&counts[i].mon), 4);
  int stalls = zkr__ticker_stalls();
  ck_assert_int_le(zkr__ticker_threads(), 2 + stalls);
  for (int i = 0; i < NH; i++) del(i);
  free_all();
}
END_TEST

int main(void) {
  Suite *s = suite_create("ticker");
  TCase *tc = tcase_create("ticker");
  tcase_set_timeout(tc, 30);
  tcase_add_test(tc, turns_follow_deadlines);
  tcase_add_test(tc, kicks_run_turns_at_once);
  tcase_add_test(tc, a_blocked_turn_stalls_no_other_handle);
  tcase_add_test(tc, remove_waits_for_the_turn_in_progress);
  tcase_add_test(tc, many_handles_few_threads);
  tcase_add_test(tc, surplus_workers_retire);
  tcase_add_test(tc, bursts_of_quick_turns_start_few_workers);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
