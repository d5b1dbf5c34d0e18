/* What the files of zkroute-bench share (zkroute-bench.c says what the
 * benchmark does): its configuration, the records of trials and their
 * summaries, the report, and the functions one file offers the others.
 * Each file has one job: bench-args.c the command line, bench-members.c
 * the ensemble's members (srvr, the leader), bench-setup.c the keys,
 * bench-trial.c one trial (the workers, the client, the measured window),
 * bench-stats.c latencies and medians, bench-report.c the Markdown report
 * and the --targets checks, bench-json.c results.json, bench-charts.c the
 * gnuplot data and charts, bench-util.c the clock, signals, messages and
 * random numbers. */
#ifndef ZKR_BENCH_H
#define ZKR_BENCH_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "tool-internal.h"
#include "zkroute.h"

#define EXIT_USAGE 2
#define EXIT_TARGETS 3
#define MAXM ZKR__HOSTS_MAX_MEMBERS
#define MAXP 16
#define RECV_TIMEOUT_MS 10000
#define READY_TIMEOUT_MS 30000
#define SRVR_TIMEOUT_MS 2000
#define NQ_LIN 198 /* CDF grid: q = 0, 0.005, ..., 0.985 */
#define NQ_TAIL 41 /* ... then 0.99 .. 0.9999, log-spaced in 1-q */
#define NQ (NQ_LIN + NQ_TAIL)

enum { OP_READ, OP_WRITE, N_OPS };

typedef enum { K_ROUTED, K_STOCK, K_ORACLE } kind_t;

/* One entry of --policies. */
typedef struct policy {
  char name[64];
  kind_t kind;
  int zkr_policy;                /* K_ROUTED: zkr_policy_t */
  zkr_read_selector_fn selector; /* K_ROUTED: p2c, same_zone; NULL none */
  char opts[160];                /* K_ROUTED: "+key=value" options of this entry */
  int unsynced;                  /* K_STOCK: plain zoo_get, no sync (stock_unsynced) */
} policy_t;

/* The run's configuration, from the command line. */
typedef struct cfg {
  const char *hosts;
  zkr__hostlist_t hl;
  policy_t pol[MAXP];
  int npol;
  int workers, trials, keys, value_size, async_api, rotate, setup, quiet;
  int verbose;
  double duration, warmup, prewarm, pause, read_frac;
  double rate; /* total operations per second, paced; 0: closed loop */
  int npids;   /* --watch-pids: processes whose CPU is charged per op */
  int pids[MAXM];
  char pid_names[MAXM][32];
  int sticky_member;   /* 0-based; -1: the library's own random choice */
  int degraded_member; /* 0-based, for the report; -1 none */
  zkr_options_t opts;
  char opt_text[1024]; /* the -o options, for the report */
  const char *prefix, *out_dir, *label, *targets;
  const char *pool_trace;           /* --pool-trace FILE */
  const char *fault_cmd, *heal_cmd; /* run at the start / end of each window */
  uint64_t seed;
  char *command;
} cfg_t;

/* Latency of one kind of operation, in ms. */
typedef struct lat {
  uint64_t n;
  double p50, p90, p99, p999, mean, max;
} lat_t;

/* What one trial of one policy measured. */
typedef struct trial {
  int ran;
  int order; /* position in its round */
  double seconds;
  uint64_t ok[N_OPS], err[N_OPS];
  int first_err;
  lat_t lat[N_OPS];
  float cdf[N_OPS][NQ];
  double thr;     /* successful operations per second */
  double cpu_us;  /* client CPU per operation */
  double cpu_pct; /* client CPU, % of one core */
  double csw;     /* client context switches per operation */
  double srv_us;  /* --watch-pids: their CPU per operation, NAN unknown */
  double pid_us[MAXM];
  uint64_t m_ops[N_OPS][MAXM]; /* per member (routed: zkr_stats deltas) */
  int64_t m_recv[MAXM];        /* srvr Received deltas, -1 unknown */
  int member;                  /* baselines: the member connected to; -2 it changed */
  int pinned;                  /* sticky with --sticky-member: 1 all ops on it, 0 not */
  int leader;                  /* at the start of the window */
  double load_start, load_end;
  double ewma[MAXM];                        /* routed: each member's EWMA at the end, -1 none */
  int in_pool[MAXM];                        /* routed: in the read pool at the end */
  uint64_t ejections[MAXM];                 /* routed: latency ejections in the window */
  double out_ms[MAXM];                      /* routed: time out of the read pool in it */
  int hedging;                              /* routed: hedged reads on */
  uint64_t h_elig, h_sent, h_won, h_capped; /* hedge counters in the window */
  uint64_t syncs, m_reads;                  /* routed: syncs sent and reads served in the window,
                              over every member session (reads per sync) */
} trial_t;

/* A growing array of latencies (ms). */
typedef struct samples {
  float *v;
  size_t n, cap;
} samples_t;

/* The progress line: which round of how many. */
typedef struct progress {
  int round, rounds;
  const char *what;
} progress_t;

/* One policy over all its trials: medians, and sums of the counts. */
typedef struct summary {
  int n; /* trials that ran */
  double thr, thr_min, thr_max, cpu_us, cpu_pct, csw, srv_us;
  lat_t lat[N_OPS];
  uint64_t ok[N_OPS], err[N_OPS]; /* sums over trials */
  uint64_t m_ops[N_OPS][MAXM];    /* sums over trials */
  int64_t m_recv[MAXM];           /* sums, -1 unknown */
  float cdf[N_OPS][NQ];
} summary_t;

/* One figure of a trial, for paired_ratio. */
typedef double (*metric_fn)(const trial_t *);

/* Everything the report writers read. */
typedef struct report {
  const cfg_t *c;
  trial_t *tr; /* npol x trials */
  summary_t sum[MAXP];
  zkr_role_t roles[MAXM];
  int leader;
  char started[64];
  double load_before, load_after;
  char cpu_model[256];
  int ncpu;
  char kernel[256];
} report_t;

/* A target of --targets: what, the value measured, its limit. */
typedef struct check {
  const char *what;
  double value, limit;
  int at_most; /* 1: value <= limit passes; 0: value >= limit */
} check_t;

/* ---- bench-util.c ---- */

extern volatile sig_atomic_t interrupted; /* SIGINT or SIGTERM came */
void on_signal(int sig);
uint64_t now_ns(void);
void sleep_s(double s);
void bench_die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
void bench_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
uint64_t rng_next(uint64_t *s);
uint64_t splitmix(uint64_t x);
double cpu_seconds(double *csw);

/* ---- bench-stats.c ---- */

extern double qgrid[NQ]; /* the quantiles of the CDFs */
void qgrid_init(void);
double median(double *v, int n);
void push(samples_t *s, float x);
void lat_of(samples_t *s, lat_t *l, float *cdf);
void summarize(const cfg_t *c, const trial_t *tr, int ntr, summary_t *s);
double paired_ratio(const trial_t *a, const trial_t *b, int ntr, metric_fn f);

/* ---- bench-members.c ---- */

void member_addr(const cfg_t *c, int i, char *buf, size_t n);
int find_leader(const cfg_t *c, zkr_role_t *roles);
int connected_member(const cfg_t *c, zhandle_t *zh);
int seed_for_member(int m, int n);
void recv_counts(const cfg_t *c, int64_t *out);

/* ---- bench-args.c ---- */

int apply_entry_options(zkr_options_t *o, const char *text);
void parse_policies(cfg_t *c, const char *list);
void parse_args(cfg_t *c, int argc, char **argv);

/* ---- bench-setup.c, bench-trial.c ---- */

void setup_keys(const cfg_t *c, char **paths, const char *value);
int run_trial(const cfg_t *c, const policy_t *p, char **paths, const char *value, double secs,
              uint64_t seed, const progress_t *pg, trial_t *t);

/* ---- bench-report.c, bench-json.c, bench-charts.c ---- */

trial_t *trials_of(const report_t *R, int p);
int policy_index(const cfg_t *c, const char *name);
const char *role_word(const report_t *R, int i);
int collect_checks(const report_t *R, check_t *ck);
int check_pass(const check_t *k);
void write_markdown(FILE *f, const report_t *R);
void write_json(FILE *f, const report_t *R);
FILE *open_out(const cfg_t *c, const char *name);
void write_plots(const report_t *R);

#endif
