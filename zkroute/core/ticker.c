/* The process's ticker (zkr__ticker_*): one timer thread
 * runs every handle's hedger turns itself and hands each handle's monitor
 * turn, when due, to a pool of workers.  A fleet of idle handles then costs
 * the process one timer and a few workers instead of a monitor and a
 * hedge thread per handle.
 *
 * Why two kinds of thread.  A hedger turn sends hedges (non-blocking
 * zoo_a* calls, callbacks only queued) and is due to the millisecond: the
 * timer runs it.  A monitor turn can block - srvr polls wait up to
 * srvr_timeout_ms for a hung server, zookeeper_close of a parked or
 * rescued session waits for its threads, a credential replay waits for
 * auth_mu that the application may hold - so it runs on a worker, and a
 * new worker is started whenever a turn is due and none is free (up to
 * MAX_WORKERS): one slow handle holds one worker, never the others.  A
 * handle's monitor turns never overlap (queued/mon_busy), nor its hedger
 * turns (hedge_busy), as on their own threads.
 *
 * Monitor deadlines are rounded up to a GRID_MS grid so that the timer
 * wakes a few hundred times a second for any number of handles rather
 * than once per handle's tick; a turn runs at most GRID_MS late, against
 * a tick of 50 ms and polls of 500 ms and more.  Hedge deadlines are
 * exact.  The threads start with the first handle and are joined when the
 * last one is removed, so a process without handles has none. */
#include <errno.h>
#include <pthread.h>
#include <stddef.h>
#include <time.h>

#include "core/handle.h"
#include "core/ticker.h"

#define MAX_WORKERS 16
#define GRID_NS (5u * 1000000u)

static struct {
  pthread_mutex_t life_mu; /* start and stop of the threads (outer) */
  pthread_mutex_t mu;      /* everything below, and every entry */
  pthread_cond_t timer_cv; /* the timer: a deadline moved earlier, stop */
  pthread_cond_t work_cv;  /* the workers: a turn queued, stop */
  pthread_cond_t done_cv;  /* a removal waits for a turn to end */
  zkr__queue_t entries, work;
  size_t n;          /* entries */
  uint64_t sleep_to; /* the timer sleeps until then */
  int stop, running, nworkers, idle;
  int wakes; /* signals to idle workers not yet taken */
  pthread_t timer, workers[MAX_WORKERS];
} T = {
    .life_mu = PTHREAD_MUTEX_INITIALIZER,
    .mu = PTHREAD_MUTEX_INITIALIZER,
};

static pthread_once_t once = PTHREAD_ONCE_INIT;

static uint64_t mono_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void timed_wait(pthread_cond_t *cv, uint64_t until) {
  if (until == UINT64_MAX) {
    pthread_cond_wait(cv, &T.mu);
    return;
  }
  struct timespec ts = {(time_t)(until / 1000000000u), (long)(until % 1000000000u)};
  pthread_cond_timedwait(cv, &T.mu, &ts);
}

static void init_cvs(void) {
  pthread_condattr_t ca;
  pthread_condattr_init(&ca);
  pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
  pthread_cond_init(&T.timer_cv, &ca);
  pthread_cond_init(&T.work_cv, &ca);
  pthread_cond_init(&T.done_cv, &ca);
  pthread_condattr_destroy(&ca);
}

static zkr_t *owner(zkr__ticker_entry_t *e) {
  return (zkr_t *)(void *)((char *)e - offsetof(zkr_t, tick));
}

static uint64_t min64(uint64_t a, uint64_t b) { return a < b ? a : b; }

/* Up to the grid (UINT64_MAX stays). */
static uint64_t on_grid(uint64_t t) {
  if (t == UINT64_MAX || t % GRID_NS == 0) return t;
  uint64_t g = (t / GRID_NS + 1) * GRID_NS;
  return g < t ? UINT64_MAX : g;
}

/* A deadline of e moved (under mu): wake the timer if it sleeps past it. */
static void deadline_moved(uint64_t due) {
  if (due < T.sleep_to) pthread_cond_signal(&T.timer_cv);
}

/* ---- the workers ---- */

static void *worker_main(void *arg) {
  (void)arg;
  pthread_mutex_lock(&T.mu);
  for (;;) {
    zkr__queue_link_t *l = zkr__queue_pop(&T.work);
    if (!l) {
      if (T.stop) break;
      T.idle++;
      pthread_cond_wait(&T.work_cv, &T.mu);
      T.idle--;
      if (T.wakes > 0) T.wakes--;
      continue;
    }
    zkr__ticker_entry_t *e = ZKR__QUEUE_DATA(l, zkr__ticker_entry_t, wlink);
    e->queued = 0;
    e->mon_busy = 1;
    pthread_mutex_unlock(&T.mu);
    uint64_t next = e->turns->monitor(owner(e));
    pthread_mutex_lock(&T.mu);
    e->mon_busy = 0;
    if (!e->on) {
      pthread_cond_broadcast(&T.done_cv);
      continue;
    }
    /* A kick during the turn set mon_due to now: it stays. */
    e->mon_due = min64(e->mon_due, on_grid(next));
    deadline_moved(e->mon_due);
  }
  pthread_mutex_unlock(&T.mu);
  return NULL;
}

/* Queues e's monitor turn (under mu), starting a worker when none is
 * free. */
static void queue_turn(zkr__ticker_entry_t *e) {
  e->queued = 1;
  e->mon_due = UINT64_MAX;
  zkr__queue_push(&T.work, &e->wlink);
  if (T.idle > T.wakes) {
    /* That worker is taken: the next turn may need another. */
    T.wakes++;
    pthread_cond_signal(&T.work_cv);
    return;
  }
  if (T.nworkers < MAX_WORKERS &&
      pthread_create(&T.workers[T.nworkers], NULL, worker_main, NULL) == 0)
    T.nworkers++;
  /* At the cap, the turn waits for the first worker that is free. */
}

/* ---- the timer ---- */

static void *timer_main(void *arg) {
  (void)arg;
  pthread_mutex_lock(&T.mu);
  while (!T.stop) {
    uint64_t now = mono_ns(), next = UINT64_MAX;
    ZKR__QUEUE_FOREACH_SAFE(l, nl, &T.entries) {
      zkr__ticker_entry_t *e = ZKR__QUEUE_DATA(l, zkr__ticker_entry_t, link);
      if (!e->queued && !e->mon_busy && e->mon_due <= now) queue_turn(e);
      if (!e->hedge_busy && e->hedge_due <= now) {
        /* Run here: the entry stays listed (its removal waits for
         * hedge_busy to fall), but the entry after it may go meanwhile,
         * so the walk starts over from the list's head. */
        e->hedge_busy = 1;
        e->hedge_due = UINT64_MAX;
        pthread_mutex_unlock(&T.mu);
        uint64_t hn = e->turns->hedger ? e->turns->hedger(owner(e)) : UINT64_MAX;
        pthread_mutex_lock(&T.mu);
        e->hedge_busy = 0;
        e->hedge_due = min64(e->hedge_due, hn);
        if (!e->on) pthread_cond_broadcast(&T.done_cv);
        next = 0; /* walk again at once */
        break;
      }
      if (!e->queued && !e->mon_busy) next = min64(next, e->mon_due);
      if (!e->hedge_busy) next = min64(next, e->hedge_due);
    }
    if (next == 0 || T.stop) continue;
    T.sleep_to = next;
    timed_wait(&T.timer_cv, next);
    T.sleep_to = 0;
  }
  pthread_mutex_unlock(&T.mu);
  return NULL;
}

/* ---- life (under life_mu) ---- */

static int start_threads(void) {
  T.stop = 0;
  T.nworkers = 0;
  T.idle = 0;
  T.wakes = 0;
  if (pthread_create(&T.timer, NULL, timer_main, NULL) != 0) return ZKR_ETHREAD;
  T.running = 1;
  return ZOK;
}

static void stop_threads(void) {
  pthread_mutex_lock(&T.mu);
  T.stop = 1;
  pthread_cond_broadcast(&T.timer_cv);
  pthread_cond_broadcast(&T.work_cv);
  int nw = T.nworkers;
  pthread_mutex_unlock(&T.mu);
  pthread_join(T.timer, NULL);
  /* nworkers only grows under mu on the timer thread, which has ended. */
  for (int i = 0; i < nw; i++) pthread_join(T.workers[i], NULL);
  T.nworkers = 0;
  T.running = 0;
}

/* A child of fork has none of the parent's threads: its handles (copies,
 * unusable as after any fork) are forgotten, and its first new handle
 * starts the ticker afresh. */
static void after_fork_child(void) {
  ZKR__QUEUE_FOREACH(l, &T.entries) {
    zkr__ticker_entry_t *e = ZKR__QUEUE_DATA(l, zkr__ticker_entry_t, link);
    e->on = e->queued = e->mon_busy = e->hedge_busy = 0;
  }
  pthread_mutex_init(&T.life_mu, NULL);
  pthread_mutex_init(&T.mu, NULL);
  init_cvs();
  T.entries = (zkr__queue_t){0};
  T.work = (zkr__queue_t){0};
  T.n = 0;
  T.running = 0;
  T.nworkers = 0;
  T.idle = 0;
  T.wakes = 0;
  T.stop = 0;
}

static void init_once(void) {
  init_cvs();
  pthread_atfork(NULL, NULL, after_fork_child);
}

int zkr__ticker_add(zkr_t *z, const zkr__ticker_turns_t *turns) {
  pthread_once(&once, init_once);
  zkr__ticker_entry_t *e = &z->tick;
  pthread_mutex_lock(&T.life_mu);
  int rc = T.running ? ZOK : start_threads();
  if (rc == ZOK) {
    pthread_mutex_lock(&T.mu);
    e->turns = turns;
    e->mon_due = 0;
    e->hedge_due = UINT64_MAX;
    e->on = 1;
    zkr__queue_push(&T.entries, &e->link);
    T.n++;
    pthread_cond_signal(&T.timer_cv);
    pthread_mutex_unlock(&T.mu);
  }
  pthread_mutex_unlock(&T.life_mu);
  return rc;
}

void zkr__ticker_remove(zkr_t *z) {
  zkr__ticker_entry_t *e = &z->tick;
  pthread_mutex_lock(&T.life_mu);
  pthread_mutex_lock(&T.mu);
  if (!e->on) {
    pthread_mutex_unlock(&T.mu);
    pthread_mutex_unlock(&T.life_mu);
    return;
  }
  e->on = 0;
  zkr__queue_remove(&T.entries, &e->link);
  if (e->queued) zkr__queue_remove(&T.work, &e->wlink);
  e->queued = 0;
  while (e->mon_busy || e->hedge_busy) pthread_cond_wait(&T.done_cv, &T.mu);
  int last = --T.n == 0;
  pthread_mutex_unlock(&T.mu);
  if (last && T.running) stop_threads();
  pthread_mutex_unlock(&T.life_mu);
}

static void kick(zkr_t *z, int hedger) {
  zkr__ticker_entry_t *e = &z->tick;
  pthread_once(&once, init_once);
  pthread_mutex_lock(&T.mu);
  if (e->on) {
    uint64_t *due = hedger ? &e->hedge_due : &e->mon_due;
    /* A turn queued or running: its end keeps the earlier deadline. */
    *due = 0;
    if (!e->queued) deadline_moved(0);
  }
  pthread_mutex_unlock(&T.mu);
}

void zkr__ticker_kick_monitor(zkr_t *z) { kick(z, 0); }

void zkr__ticker_kick_hedger(zkr_t *z) { kick(z, 1); }

int zkr__ticker_threads(void) {
  pthread_mutex_lock(&T.mu);
  int n = T.running ? 1 + T.nworkers : 0;
  pthread_mutex_unlock(&T.mu);
  return n;
}
