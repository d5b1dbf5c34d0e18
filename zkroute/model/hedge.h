/* Hedged reads, the pure part (DESIGN.md section 7, "beyond the paper";
 * docs/hedging.md): the adaptive hedge delay and the cap on extra load.
 * No I/O, no threads, no locks (the caller, zkr__hedger_*, holds its own mutex
 * around every call), no clock: unit tests drive it with plain numbers.
 *
 * - Delay.  For every member, the last ZKR__HEDGE_WINDOW sync+read
 *   latencies of the reads it served first (not hedges) are kept in a ring,
 *   and the configured percentile of that window (nearest rank) is its
 *   "slow read" mark, recomputed every ZKR__HEDGE_RECOMPUTE samples (a sort
 *   of 256 floats per 16 reads keeps the completion path short) and known
 *   once the window holds ZKR__HEDGE_MIN_SAMPLES samples.  The hedge delay
 *   is the LOWER median of the members' marks, never below floor_ms (the
 *   floor alone while no member has a mark).  Per member, not over the
 *   pool's reads mixed: with two followers, one of them slow, half of all
 *   reads are slow and the 95th percentile of the mix is the slow member's
 *   latency, so hedging would switch itself off in exactly the fault it is
 *   for.  The lower median is the healthy member's mark there, and with
 *   many members it is not pulled down by one unusually fast member.
 * - Cap.  A token bucket fed by reads: every read that could be hedged adds
 *   max_pct / 100 of a token, up to burst tokens; a hedge spends one whole
 *   token.  The bucket starts empty, so at every instant
 *       hedges sent <= max_pct / 100 * hedgeable reads so far,
 *   and after a quiet spell at most `burst` hedges can go at once, which is
 *   what lets hedging act in the first moments of a fault.
 * - Yield.  A hedge pays only when its reply comes first.  The outcomes of
 *   the last ZKR__HEDGE_OUTCOMES hedges whose reply came are kept (1: it
 *   was the reply the application got); while all of them are known and
 *   fewer than ZKR__HEDGE_MIN_WINS won, the bucket is "lean": a read adds a
 *   ZKR__HEDGE_LEAN_DIVISOR-th of its share.  When every member is slow
 *   alike - servers saturated, the pool's tail its own queueing - a hedge
 *   waits in the same queues as the read it copies and almost never wins
 *   (0-16 of about 1,000 a run, docs/benchmarks.md "Hedges that do not
 *   win"), and the full rate only adds load.  The burst is unchanged, so
 *   the first hedges of a fault still go at once; their wins end the lean
 *   spell. */
/* No locks: pure functions of their arguments; the caller serialises. */
#ifndef ZKR_HEDGE_H
#define ZKR_HEDGE_H

#include <stdint.h>

#define ZKR__HEDGE_WINDOW 256
#define ZKR__HEDGE_RECOMPUTE 16
#define ZKR__HEDGE_MIN_SAMPLES 20
#define ZKR__HEDGE_OUTCOMES 64 /* the yield's window (bits of a uint64_t) */
#define ZKR__HEDGE_MIN_WINS 4  /* wins in it below which the bucket is lean */
#define ZKR__HEDGE_LEAN_DIVISOR 10

typedef struct zkr__hedge_cfg {
  double floor_ms;   /* lowest hedge delay */
  double percentile; /* of the window, 50..99.9 */
  double max_pct;    /* hedges per 100 hedgeable reads, at most */
  double burst;      /* bucket size in hedges */
} zkr__hedge_cfg_t;

typedef struct zkr__hedge_window {
  float v[ZKR__HEDGE_WINDOW];
  unsigned n;     /* samples held, <= ZKR__HEDGE_WINDOW */
  unsigned next;  /* ring position of the next sample */
  unsigned since; /* samples since the mark was computed */
  double mark_ms; /* the percentile of the window, -1 until known */
} zkr__hedge_window_t;

typedef struct zkr__hedge_budget {
  double tokens;
} zkr__hedge_budget_t;

typedef struct zkr__hedge_yield {
  uint64_t won; /* the last outcomes, newest in bit 0; 1: the hedge won */
  unsigned n;   /* outcomes known, <= ZKR__HEDGE_OUTCOMES */
} zkr__hedge_yield_t;

/* The percentile's nearest-rank value of the n latencies in v (any order;
 * v is not changed); -1 when n is below ZKR__HEDGE_MIN_SAMPLES. */
double zkr__hedge_mark_of(const zkr__hedge_cfg_t *c, const float *v, unsigned n);

void zkr__hedge_window_init(zkr__hedge_window_t *w);
/* Adds one latency (ms); returns 1 when it recomputed w->mark_ms. */
int zkr__hedge_window_add(zkr__hedge_window_t *w, const zkr__hedge_cfg_t *c, double ms);

/* The hedge delay from the n members' marks (-1: none yet): max(floor_ms,
 * lower median of the known marks); floor_ms when none is known. */
double zkr__hedge_delay(const zkr__hedge_cfg_t *c, const double *marks, unsigned n);

/* One hedgeable read was sent: the bucket gains max_pct / 100, a
 * ZKR__HEDGE_LEAN_DIVISOR-th of that when lean (zkr__hedge_yield_lean). */
void zkr__hedge_budget_read(zkr__hedge_budget_t *b, const zkr__hedge_cfg_t *c, int lean);
/* Spends one token if there is one: 1 (a hedge may go) or 0 (capped). */
int zkr__hedge_budget_take(zkr__hedge_budget_t *b);

/* A hedge's reply came: won 1 when it was the reply delivered, 0 when the
 * first request's had been. */
void zkr__hedge_yield_add(zkr__hedge_yield_t *y, int won);
/* 1 when the last ZKR__HEDGE_OUTCOMES outcomes are known and fewer than
 * ZKR__HEDGE_MIN_WINS of them won. */
int zkr__hedge_yield_lean(const zkr__hedge_yield_t *y);

#endif
