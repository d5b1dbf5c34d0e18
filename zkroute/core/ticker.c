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
 * last one is removed, so a process without handles has none.
 *
 * How many workers.  A queued turn wakes a worker only when none is
 * active (running turns, or woken to): an active worker takes every turn
 * queued until the queue is empty, and the turns of a grid point come in
 * a burst that one worker runs in microseconds.  A turn still queued a
 * grid step after it was queued means the active workers are held (a
 * blocked turn): the timer then wakes, or starts, one more.  So a turn
 * waits at most one grid step more behind a blocked one, and a light load
 * runs on one worker.  Workers beyond the first retire after RETIRE_MS
 * idle; the idle ones wait on a stack, the last idle woken first, so the
 * others stay idle and end: a fleet of idle handles keeps a timer and a
 * worker or two, not the 16 that a burst of turns started. */
#include <errno.h>
#include <pthread.h>
#include <stddef.h>
#include <time.h>

#include "core/handle.h"
#include "core/ticker.h"

#define MAX_WORKERS 16
#define GRID_NS (5u * 1000000u)
#define RETIRE_MS 10000

/* A worker's slot (under mu).  live: its thread runs and will be joined
 * (a retiring worker clears it and detaches itself).  woken: a turn was
 * queued for it, or the ticker stops. */
typedef struct worker {
  pthread_t t;
  pthread_cond_t cv;
  int live, woken;
  struct worker *next_idle;
} worker_t;

static struct {
  pthread_mutex_t life_mu; /* start and stop of the threads (outer) */
  pthread_mutex_t mu;      /* everything below, and every entry */
  pthread_cond_t timer_cv; /* the timer: a deadline moved earlier, stop */
  pthread_cond_t done_cv;  /* a removal waits for a turn to end */
  zkr__queue_t entries, work;
  size_t n;          /* entries */
  uint64_t sleep_to; /* the timer sleeps until then */
  int stop, running, nworkers;
  int active;         /* workers running turns or woken to */
  int retire_ms;      /* RETIRE_MS (tests shorten it) */
  int stalls;         /* workers added for a turn found stalled (tests) */
  worker_t *idle_top; /* idle workers, the last to become idle first */
  worker_t workers[MAX_WORKERS];
  pthread_t timer;
} T = {
    .life_mu = PTHREAD_MUTEX_INITIALIZER,
    .mu = PTHREAD_MUTEX_INITIALIZER,
    .retire_ms = RETIRE_MS,
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
  pthread_cond_init(&T.done_cv, &ca);
  for (int i = 0; i < MAX_WORKERS; i++) pthread_cond_init(&T.workers[i].cv, &ca);
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

/* Takes w off the idle stack (under mu). */
static void unstack(worker_t *w) {
  for (worker_t **p = &T.idle_top; *p; p = &(*p)->next_idle)
    if (*p == w) {
      *p = w->next_idle;
      break;
    }
  w->next_idle = NULL;
}

/* Waits idle on top of the stack until woken or retire_ms passed; returns
 * 1 when the worker should end: it retired (not the last one) and is
 * detached, or the ticker stops. */
static int idle_wait(worker_t *w) {
  w->woken = 0;
  T.active--;
  w->next_idle = T.idle_top;
  T.idle_top = w;
  uint64_t until = mono_ns() + (uint64_t)T.retire_ms * 1000000u;
  while (!w->woken && !T.stop) {
    if (mono_ns() >= until) {
      if (T.nworkers > 1) {
        unstack(w);
        w->live = 0;
        T.nworkers--;
        pthread_detach(pthread_self());
        return 1;
      }
      until = mono_ns() + (uint64_t)T.retire_ms * 1000000u; /* the last one stays */
    }
    timed_wait(&w->cv, until);
  }
  if (!w->woken) {
    unstack(w); /* stopping */
    T.active++;
  }
  return T.stop && !T.work.first;
}

static void *worker_main(void *arg) {
  worker_t *w = arg;
  pthread_mutex_lock(&T.mu);
  for (;;) {
    zkr__queue_link_t *l = zkr__queue_pop(&T.work);
    if (!l) {
      if (T.stop || idle_wait(w)) break;
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

/* One more worker runs turns (under mu): the one idle last, or a new one
 * when none is idle and the cap allows. */
static void add_worker(void) {
  worker_t *w = T.idle_top;
  if (w) {
    /* That worker is taken: the next turn may need another. */
    T.idle_top = w->next_idle;
    w->next_idle = NULL;
    w->woken = 1;
    T.active++;
    pthread_cond_signal(&w->cv);
    return;
  }
  if (T.nworkers >= MAX_WORKERS) return; /* the turn waits for the first free one */
  for (int i = 0; i < MAX_WORKERS; i++) {
    worker_t *s = &T.workers[i];
    if (s->live) continue;
    if (pthread_create(&s->t, NULL, worker_main, s) == 0) {
      s->live = 1;
      T.nworkers++;
      T.active++;
    }
    return;
  }
}

/* Queues e's monitor turn (under mu); a worker is woken only when none is
 * active (the timer adds one when a turn waits too long, stalled). */
static void queue_turn(zkr__ticker_entry_t *e, uint64_t now) {
  e->queued = 1;
  e->queued_ns = now;
  e->mon_due = UINT64_MAX;
  zkr__queue_push(&T.work, &e->wlink);
  if (T.active == 0) add_worker();
}

/* The oldest queued turn waited a grid step (under mu): the active
 * workers are held; returns when that is due to be checked next. */
static uint64_t check_stalled(uint64_t now) {
  zkr__queue_link_t *l = T.work.first;
  if (!l) return UINT64_MAX;
  zkr__ticker_entry_t *e = ZKR__QUEUE_DATA(l, zkr__ticker_entry_t, wlink);
  if (now < e->queued_ns + GRID_NS) return e->queued_ns + GRID_NS;
  T.stalls++;
  add_worker();
  e->queued_ns = now; /* the next one after another step */
  return now + GRID_NS;
}

/* ---- the timer ---- */

static void *timer_main(void *arg) {
  (void)arg;
  pthread_mutex_lock(&T.mu);
  while (!T.stop) {
    uint64_t now = mono_ns(), next = UINT64_MAX;
    ZKR__QUEUE_FOREACH_SAFE(l, nl, &T.entries) {
      zkr__ticker_entry_t *e = ZKR__QUEUE_DATA(l, zkr__ticker_entry_t, link);
      if (!e->queued && !e->mon_busy && e->mon_due <= now) queue_turn(e, now);
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
    next = min64(next, check_stalled(mono_ns()));
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
  T.active = 0;
  T.idle_top = NULL;
  if (pthread_create(&T.timer, NULL, timer_main, NULL) != 0) return ZKR_ETHREAD;
  T.running = 1;
  return ZOK;
}

static void stop_threads(void) {
  pthread_mutex_lock(&T.mu);
  T.stop = 1;
  pthread_cond_broadcast(&T.timer_cv);
  for (int i = 0; i < MAX_WORKERS; i++) pthread_cond_signal(&T.workers[i].cv);
  pthread_mutex_unlock(&T.mu);
  pthread_join(T.timer, NULL);
  /* Workers start only on the timer thread, which has ended, and none
   * retires once stop is set: the live ones are the ones to join. */
  pthread_t live[MAX_WORKERS];
  int nl = 0;
  pthread_mutex_lock(&T.mu);
  for (int i = 0; i < MAX_WORKERS; i++)
    if (T.workers[i].live) {
      live[nl++] = T.workers[i].t;
      T.workers[i].live = 0;
    }
  pthread_mutex_unlock(&T.mu);
  for (int i = 0; i < nl; i++) pthread_join(live[i], NULL);
  T.nworkers = 0;
  T.idle_top = NULL;
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
  T.active = 0;
  T.idle_top = NULL;
  for (int i = 0; i < MAX_WORKERS; i++) T.workers[i].live = T.workers[i].woken = 0;
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

void zkr__ticker_set_retire_ms(int ms) {
  pthread_mutex_lock(&T.mu);
  T.retire_ms = ms > 0 ? ms : RETIRE_MS;
  pthread_mutex_unlock(&T.mu);
}

int zkr__ticker_stalls(void) {
  pthread_mutex_lock(&T.mu);
  int n = T.stalls;
  pthread_mutex_unlock(&T.mu);
  return n;
}

int zkr__ticker_threads(void) {
  pthread_mutex_lock(&T.mu);
  int n = T.running ? 1 + T.nworkers : 0;
  pthread_mutex_unlock(&T.mu);
  return n;
}
