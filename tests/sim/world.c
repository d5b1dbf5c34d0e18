/* The simulated world's event loop: a binary heap of events ordered by
 * time, then by the sequence number they were scheduled with (so ties run
 * in scheduling order), the clock in ns, and the one PRNG (xoshiro256**,
 * seeded by splitmix64) that every choice of a schedule draws from (and a
 * second stream for --slow-calls' durations, so that the option leaves the
 * other draws as they were).  The same seed gives the same run, byte for
 * byte.  sim_pass lets time pass inside a call: the world's own events run,
 * the threads that call into the library wait. */
#include "sim.h"

#include <stdlib.h>
#include <string.h>

sim_world_t *sim_w;
void (*sim_after_event)(void);

static uint64_t splitmix(uint64_t *x) {
  uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

void sim_world_init(sim_world_t *w, uint64_t seed) {
  memset(w, 0, sizeof *w);
  uint64_t x = seed;
  for (int i = 0; i < 4; i++) w->rng[i] = splitmix(&x);
  for (int i = 0; i < 4; i++) w->rng2[i] = splitmix(&x);
  w->cap = 1024;
  w->heap = malloc(w->cap * sizeof *w->heap);
  sim_w = w;
}

void sim_pending_each(sim_fn fn, void (*drop)(void *a)) {
  sim_world_t *w = sim_w;
  for (size_t i = 0; i < w->n; i++)
    if (w->heap[i].fn == fn) {
      drop(w->heap[i].a);
      w->heap[i].fn = NULL;
    }
}

void sim_world_free(sim_world_t *w) {
  free(w->heap);
  w->heap = NULL;
  if (sim_w == w) sim_w = NULL;
}

static inline uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

static uint64_t next(uint64_t *s) {
  uint64_t r = rotl(s[1] * 5, 7) * 9, t = s[1] << 17;
  s[2] ^= s[0];
  s[3] ^= s[1];
  s[1] ^= s[2];
  s[0] ^= s[3];
  s[2] ^= t;
  s[3] = rotl(s[3], 45);
  return r;
}

uint64_t sim_rand(void) { return next(sim_w->rng); }

uint64_t sim_rand2(void) { return next(sim_w->rng2); }

uint64_t sim_range(uint64_t lo, uint64_t hi) {
  if (hi <= lo) return lo;
  return lo + sim_rand() % (hi - lo + 1);
}

int sim_chance(int pct) { return (int)(sim_rand() % 100) < pct; }

static inline int before(const sim_ev_t *a, const sim_ev_t *b) {
  return a->t < b->t || (a->t == b->t && a->seq < b->seq);
}

static void insert(sim_world_t *w, sim_ev_t ev) {
  if (w->n == w->cap) {
    w->cap *= 2;
    w->heap = realloc(w->heap, w->cap * sizeof *w->heap);
  }
  size_t i = w->n++;
  while (i > 0) {
    size_t p = (i - 1) / 2;
    if (!before(&ev, &w->heap[p])) break;
    w->heap[i] = w->heap[p];
    i = p;
  }
  w->heap[i] = ev;
}

static void at(uint64_t t, sim_fn fn, void *a, uint64_t b, int app) {
  sim_world_t *w = sim_w;
  if (t < w->now) t = w->now;
  insert(w, (sim_ev_t){t, w->seq++, fn, a, b, app});
}

void sim_at(uint64_t t, sim_fn fn, void *a, uint64_t b) { at(t, fn, a, b, 0); }

void sim_after(uint64_t dt, sim_fn fn, void *a, uint64_t b) { at(sim_w->now + dt, fn, a, b, 0); }

void sim_after_app(uint64_t dt, sim_fn fn, void *a, uint64_t b) {
  at(sim_w->now + dt, fn, a, b, 1);
}

static sim_ev_t pop(sim_world_t *w) {
  sim_ev_t ev = w->heap[0];
  sim_ev_t last = w->heap[--w->n];
  size_t i = 0;
  for (;;) {
    size_t l = 2 * i + 1, r = l + 1, m = i;
    const sim_ev_t *best = &last;
    if (l < w->n && before(&w->heap[l], best)) m = l, best = &w->heap[l];
    if (r < w->n && before(&w->heap[r], best)) m = r;
    if (m == i) break;
    w->heap[i] = w->heap[m];
    i = m;
  }
  if (w->n) w->heap[i] = last;
  return ev;
}

static void run(sim_world_t *w, sim_ev_t ev) {
  if (ev.t == w->now) {
    if (++w->stuck > 2000000) w->livelock = 1;
  } else {
    w->stuck = 0;
  }
  w->now = ev.t;
  w->events++;
  if (ev.fn) ev.fn(ev.a, ev.b);
}

void sim_pass(uint64_t dt) {
  sim_world_t *w = sim_w;
  if (w->in_pass || !dt) return;
  w->in_pass = 1;
  uint64_t until = w->now + dt;
  sim_ev_t *held = NULL;
  size_t nh = 0, cap = 0;
  while (w->n && w->heap[0].t <= until && !w->livelock) {
    sim_ev_t ev = pop(w);
    if (!ev.app) {
      run(w, ev);
      continue;
    }
    if (nh == cap) {
      cap = cap ? 2 * cap : 16;
      held = realloc(held, cap * sizeof *held);
    }
    held[nh++] = ev;
  }
  if (w->now < until) w->now = until;
  /* Overdue now, in the order they were scheduled in (their seq). */
  for (size_t i = 0; i < nh; i++) {
    if (held[i].t < w->now) held[i].t = w->now;
    insert(w, held[i]);
  }
  free(held);
  w->in_pass = 0;
}

int sim_step(void) {
  sim_world_t *w = sim_w;
  if (!w->n) return 0;
  run(w, pop(w));
  if (sim_after_event) sim_after_event();
  return 1;
}

int sim_run_until(int (*done)(void *), void *arg, uint64_t limit) {
  while (!done(arg) && !sim_w->livelock) {
    if (!sim_w->n || sim_w->heap[0].t > limit) break;
    sim_step();
  }
  return done(arg);
}
