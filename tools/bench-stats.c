/* zkroute-bench's statistics (bench.h): the latency samples of a trial,
 * their quantiles on the CDF grid, and the medians across trials that
 * every reported figure is. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"

static int cmp_float(const void *a, const void *b) {
  float x = *(const float *)a, y = *(const float *)b;
  return (x > y) - (x < y);
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* Median of n values (mean of the middle two for even n); NAN for n = 0.
 * Sorts v. */
double median(double *v, int n) {
  if (n <= 0) return NAN;
  qsort(v, (size_t)n, sizeof *v, cmp_double);
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

double qgrid[NQ];

void qgrid_init(void) {
  for (int i = 0; i < NQ_LIN; i++) qgrid[i] = i * 0.005;
  for (int i = 0; i < NQ_TAIL; i++)
    qgrid[NQ_LIN + i] = 1 - 0.01 * pow(10, -2.0 * i / (NQ_TAIL - 1));
}

/* Nearest-rank quantile of sorted v[0..n). */
static double quantile(const float *v, size_t n, double q) {
  if (n == 0) return NAN;
  double r = ceil(q * (double)n);
  size_t i = r < 1 ? 0 : (size_t)r - 1;
  if (i >= n) i = n - 1;
  return v[i];
}

void push(samples_t *s, float x) {
  if (s->n == s->cap) {
    size_t cap = s->cap ? s->cap * 2 : 4096;
    float *v = realloc(s->v, cap * sizeof *v);
    if (!v) bench_die("out of memory");
    s->v = v;
    s->cap = cap;
  }
  s->v[s->n++] = x;
}

void lat_of(samples_t *s, lat_t *l, float *cdf) {
  memset(l, 0, sizeof *l);
  l->n = s->n;
  if (s->n == 0) {
    l->p50 = l->p90 = l->p99 = l->p999 = l->mean = l->max = NAN;
    for (int q = 0; q < NQ; q++) cdf[q] = NAN;
    return;
  }
  qsort(s->v, s->n, sizeof *s->v, cmp_float);
  double sum = 0;
  for (size_t i = 0; i < s->n; i++) sum += s->v[i];
  l->mean = sum / (double)s->n;
  l->max = s->v[s->n - 1];
  l->p50 = quantile(s->v, s->n, 0.5);
  l->p90 = quantile(s->v, s->n, 0.9);
  l->p99 = quantile(s->v, s->n, 0.99);
  l->p999 = quantile(s->v, s->n, 0.999);
  for (int q = 0; q < NQ; q++) cdf[q] = (float)quantile(s->v, s->n, qgrid[q]);
}

#define MED_FIELD(dst, expr)                                                                       \
  do {                                                                                             \
    int k_ = 0;                                                                                    \
    for (int t_ = 0; t_ < ntr; t_++)                                                               \
      if (tr[t_].ran) v[k_++] = (expr(tr[t_]));                                                    \
    (dst) = median(v, k_);                                                                         \
  } while (0)

void summarize(const cfg_t *c, const trial_t *tr, int ntr, summary_t *s) {
  double *v = calloc((size_t)ntr + 1, sizeof *v);
  if (!v) bench_die("out of memory");
  memset(s, 0, sizeof *s);
  s->thr_min = INFINITY;
  s->thr_max = -INFINITY;
  for (size_t i = 0; i < c->hl.n; i++) s->m_recv[i] = 0;
  for (int t = 0; t < ntr; t++) {
    if (!tr[t].ran) continue;
    s->n++;
    if (tr[t].thr < s->thr_min) s->thr_min = tr[t].thr;
    if (tr[t].thr > s->thr_max) s->thr_max = tr[t].thr;
    for (int op = 0; op < N_OPS; op++) {
      s->ok[op] += tr[t].ok[op];
      s->err[op] += tr[t].err[op];
      for (size_t i = 0; i < c->hl.n; i++) s->m_ops[op][i] += tr[t].m_ops[op][i];
    }
    for (size_t i = 0; i < c->hl.n; i++)
      s->m_recv[i] = s->m_recv[i] < 0 || tr[t].m_recv[i] < 0 ? -1 : s->m_recv[i] + tr[t].m_recv[i];
  }
#define THR(x) (x).thr
#define CPU(x) (x).cpu_us
#define CPUP(x) (x).cpu_pct
#define CSW(x) (x).csw
#define SRV(x) (x).srv_us
  MED_FIELD(s->csw, CSW);
  MED_FIELD(s->srv_us, SRV);
  MED_FIELD(s->thr, THR);
  MED_FIELD(s->cpu_us, CPU);
  MED_FIELD(s->cpu_pct, CPUP);
  for (int op = 0; op < N_OPS; op++) {
#define P50(x) (x).lat[op].p50
#define P90(x) (x).lat[op].p90
#define P99(x) (x).lat[op].p99
#define P999(x) (x).lat[op].p999
#define MEAN(x) (x).lat[op].mean
#define MAX(x) (x).lat[op].max
    MED_FIELD(s->lat[op].p50, P50);
    MED_FIELD(s->lat[op].p90, P90);
    MED_FIELD(s->lat[op].p99, P99);
    MED_FIELD(s->lat[op].p999, P999);
    MED_FIELD(s->lat[op].mean, MEAN);
    MED_FIELD(s->lat[op].max, MAX);
    s->lat[op].n = s->ok[op];
    for (int q = 0; q < NQ; q++) {
#define CDFQ(x) (double)(x).cdf[op][q]
      MED_FIELD(s->cdf[op][q], CDFQ);
    }
  }
  free(v);
}

/* Median over trials of a.metric / b.metric, pairing trial t of a with
 * trial t of b (same round, so same machine conditions). */

double paired_ratio(const trial_t *a, const trial_t *b, int ntr, metric_fn f) {
  double v[1024];
  int k = 0;
  for (int t = 0; t < ntr && k < 1024; t++)
    if (a[t].ran && b[t].ran && f(&b[t]) > 0) v[k++] = f(&a[t]) / f(&b[t]);
  return median(v, k);
}
