/* Hedged reads, the pure part: the adaptive delay and the load cap (see
 * hedge.h for the model; zkr__hedger_* applies it to operations). */
#include "model/hedge.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The k-th smallest of s[0..n-1] (0-based; s is reordered): Hoare's
 * selection, which gives the value a full sort would put at k for a
 * fraction of the work - the window is recomputed every
 * ZKR__HEDGE_RECOMPUTE samples of every member, on the completion thread,
 * and sorting it was the largest single cost of a read there. */
static float select_kth(float *s, int n, int k) {
  int lo = 0, hi = n - 1;
  while (lo < hi) {
    float a = s[lo], b = s[lo + (hi - lo) / 2], c = s[hi];
    float p = a < b ? (b < c ? b : (a < c ? c : a)) : (a < c ? a : (b < c ? c : b));
    int i = lo, j = hi;
    while (i <= j) {
      while (i <= hi && s[i] < p) i++;
      while (j >= lo && s[j] > p) j--;
      if (i <= j) {
        float t = s[i];
        s[i++] = s[j];
        s[j--] = t;
      }
    }
    /* Now s[lo..j] <= p <= s[i..hi], and what lies between equals p. */
    if (k <= j) hi = j;
    else if (k >= i) lo = i;
    else return s[k];
  }
  return s[k];
}

double zkr__hedge_mark_of(const zkr__hedge_cfg_t *c, const float *v, unsigned n) {
  if (n < ZKR__HEDGE_MIN_SAMPLES || n > ZKR__HEDGE_WINDOW) return -1;
  float s[ZKR__HEDGE_WINDOW];
  memcpy(s, v, n * sizeof *s);
  /* Nearest rank: the smallest sample with at least p % of the window at
   * or below it. */
  double rank = ceil(c->percentile / 100.0 * n);
  unsigned k = rank < 1 ? 0 : (unsigned)rank - 1;
  if (k >= n) k = n - 1;
  return select_kth(s, (int)n, (int)k);
}

void zkr__hedge_window_init(zkr__hedge_window_t *w) {
  memset(w, 0, sizeof *w);
  w->mark_ms = -1;
}

int zkr__hedge_window_add(zkr__hedge_window_t *w, const zkr__hedge_cfg_t *c, double ms) {
  if (!(ms >= 0) || !isfinite(ms)) return 0;
  w->v[w->next] = (float)ms;
  w->next = (w->next + 1) % ZKR__HEDGE_WINDOW;
  if (w->n < ZKR__HEDGE_WINDOW) w->n++;
  /* The ring's order does not matter to a percentile. */
  if (++w->since < ZKR__HEDGE_RECOMPUTE && w->n != ZKR__HEDGE_MIN_SAMPLES) return 0;
  w->since = 0;
  w->mark_ms = zkr__hedge_mark_of(c, w->v, w->n);
  return 1;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

double zkr__hedge_delay(const zkr__hedge_cfg_t *c, const double *marks, unsigned n) {
  double known[64];
  unsigned k = 0;
  for (unsigned i = 0; i < n && k < 64; i++)
    if (marks[i] >= 0) known[k++] = marks[i];
  if (k == 0) return c->floor_ms;
  qsort(known, k, sizeof *known, cmp_double);
  double d = known[(k - 1) / 2]; /* lower median */
  return d > c->floor_ms ? d : c->floor_ms;
}

void zkr__hedge_budget_read(zkr__hedge_budget_t *b, const zkr__hedge_cfg_t *c, int lean) {
  b->tokens += c->max_pct / 100.0 / (lean ? ZKR__HEDGE_LEAN_DIVISOR : 1);
  if (b->tokens > c->burst) b->tokens = c->burst;
}

int zkr__hedge_budget_take(zkr__hedge_budget_t *b) {
  /* A hair of tolerance: twenty additions of 0.05 must make one token. */
  if (b->tokens < 1.0 - 1e-9) return 0;
  b->tokens -= 1.0;
  return 1;
}

void zkr__hedge_yield_add(zkr__hedge_yield_t *y, int won) {
  y->won = y->won << 1 | (won ? 1u : 0u);
  if (y->n < ZKR__HEDGE_OUTCOMES) y->n++;
}

int zkr__hedge_yield_lean(const zkr__hedge_yield_t *y) {
  return y->n >= ZKR__HEDGE_OUTCOMES && __builtin_popcountll(y->won) < ZKR__HEDGE_MIN_WINS;
}
