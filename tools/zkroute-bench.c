/* zkroute-bench: a closed-loop benchmark of zkroute's routing policies and
 * of two plain libzookeeper_mt baselines, on one ensemble, in one run.
 *
 * A trial opens one client - a zkr_t for the routed policies (hybrid,
 * round_robin, leader_only, sticky, boltzmann), one zhandle_t for the
 * baselines (stock: zookeeper_init on the whole host list, so one random
 * server; oracle: zookeeper_init on the leader alone, found with srvr) -
 * runs W worker threads against it for a warm-up and then a measured
 * window, and closes it.  Each worker is closed-loop: it issues one
 * operation, waits for its result, records the latency, issues the next.
 * Trials interleave: trial t runs every policy once, in an order rotated
 * by t, so drift of a shared machine hits every policy alike; every
 * reported figure is the median across trials.
 *
 * Fairness: every read is linearizable in every policy.  The routed
 * policies call zkr_get (the library pipelines a sync before the read on
 * the member session it picked); the baselines send zoo_async() and then
 * the read on their one session without waiting for the sync, as the
 * library does.  Writes are zkr_set / zoo_set with version -1.
 *
 * Output: a progress line on stderr; a Markdown report on stdout and in
 * OUT/results.md; OUT/results.json (schema in docs/benchmarks.md); gnuplot
 * data, script and PNG charts (latency CDFs, throughput bars) in OUT.
 *
 * Besides <zkroute.h> it compiles in the library's host list parser and
 * srvr client (zkroute/hosts.c, zkroute/srvr.c): the leader for `oracle`,
 * the roles for the report and each server's Received counter.
 * Exit codes: 0 done, 1 a run failed, 2 usage, 3 a --targets check missed. */
#define _GNU_SOURCE /* asprintf */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <netdb.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "tool-common.h"
#include "zkroute.h"
#include "hosts.h"
#include "srvr.h"

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
static const char *const op_name[N_OPS] = {"read", "write"};

typedef enum { K_ROUTED, K_STOCK, K_ORACLE } kind_t;

typedef struct policy {
  char name[64];
  kind_t kind;
  int zkr_policy;                /* K_ROUTED: zkr_policy_t */
  zkr_read_selector_fn selector; /* K_ROUTED: p2c, same_zone; NULL none */
  char opts[160];                /* K_ROUTED: "+key=value" options of this entry */
} policy_t;

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

/* ---- small helpers ---- */

static volatile sig_atomic_t interrupted;
static void on_signal(int sig) {
  (void)sig;
  interrupted = 1;
}

static uint64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Sleeps s seconds, in slices of at most 0.1 s so that an interrupt
 * (SIGINT, SIGTERM) is noticed promptly. */
static void sleep_s(double s) {
  while (s > 0 && !interrupted) {
    double d = s < 0.1 ? s : 0.1;
    struct timespec ts = {0, (long)(d * 1e9)};
    nanosleep(&ts, NULL);
    s -= d;
  }
}

static void die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
static void die(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fputs("zkroute-bench: ", stderr);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
  exit(EXIT_FAILURE);
}

static void warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void warn(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fputs("\nzkroute-bench: ", stderr);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
}

/* xorshift64*: a worker's private generator, never shared. */
static uint64_t rng_next(uint64_t *s) {
  uint64_t x = *s;
  x ^= x >> 12;
  x ^= x << 25;
  x ^= x >> 27;
  *s = x;
  return x * 0x2545F4914F6CDD1DULL;
}

static uint64_t splitmix(uint64_t x) {
  x += 0x9E3779B97F4A7C15ULL;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
  return x ^ (x >> 31);
}

/* The process's CPU time (user + system, every thread) and context
 * switches (voluntary + involuntary) so far. */
static double cpu_seconds(double *csw) {
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  *csw = (double)ru.ru_nvcsw + (double)ru.ru_nivcsw;
  return (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 + (double)ru.ru_stime.tv_sec +
         ru.ru_stime.tv_usec / 1e6;
}

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
static double median(double *v, int n) {
  if (n <= 0) return NAN;
  qsort(v, (size_t)n, sizeof *v, cmp_double);
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* ---- the CDF grid ---- */

static double qgrid[NQ];

static void qgrid_init(void) {
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

/* ---- members ---- */

static void member_addr(const cfg_t *c, int i, char *buf, size_t n) {
  zkr__host_format(&c->hl.v[i], NULL, buf, n);
}

/* srvr of every member, in order; r[i].role is ZKR_ROLE_UNREACHABLE when
 * it did not answer. */
static void srvr_all(const cfg_t *c, zkr__srvr_reply_t *r) {
  for (size_t i = 0; i < c->hl.n; i++) {
    if (zkr__srvr_fetch(c->hl.v[i].name, c->hl.v[i].port, SRVR_TIMEOUT_MS, 0, &r[i]) != ZOK &&
        r[i].role != ZKR_ROLE_NOT_SERVING)
      r[i].role = ZKR_ROLE_UNREACHABLE;
  }
}

static int find_leader(const cfg_t *c, zkr_role_t *roles) {
  zkr__srvr_reply_t r[MAXM];
  srvr_all(c, r);
  int leader = -1;
  for (size_t i = 0; i < c->hl.n; i++) {
    if (roles) roles[i] = r[i].role;
    if (r[i].role == ZKR_ROLE_LEADER) leader = (int)i;
  }
  return leader;
}

/* Index of the member whose address a plain session is connected to, -1
 * when unknown.  zookeeper_get_connected_host() is getpeername() on the
 * session's socket (zoo_get_current_server is avoided: ZOOKEEPER-4810). */
static int connected_member(const cfg_t *c, zhandle_t *zh) {
  struct sockaddr_storage ss;
  socklen_t len = sizeof ss;
  if (!zookeeper_get_connected_host(zh, (struct sockaddr *)&ss, &len)) return -1;
  char host[NI_MAXHOST], serv[NI_MAXSERV];
  if (getnameinfo((struct sockaddr *)&ss, len, host, sizeof host, serv, sizeof serv,
                  NI_NUMERICHOST | NI_NUMERICSERV) != 0)
    return -1;
  for (size_t i = 0; i < c->hl.n; i++) {
    if (atoi(serv) != c->hl.v[i].port) continue;
    struct addrinfo hints = {.ai_socktype = SOCK_STREAM}, *res = NULL;
    if (getaddrinfo(c->hl.v[i].name, NULL, &hints, &res) != 0) continue;
    int match = 0;
    for (struct addrinfo *a = res; a && !match; a = a->ai_next) {
      char h2[NI_MAXHOST];
      if (getnameinfo(a->ai_addr, a->ai_addrlen, h2, sizeof h2, NULL, 0, NI_NUMERICHOST) == 0)
        match = strcmp(h2, host) == 0;
    }
    freeaddrinfo(res);
    if (match) return (int)i;
  }
  return -1;
}

/* A seed for which the library's sticky policy starts on member m of n: it
 * draws its member as rand_r(&seed) % n.  The trial checks afterwards that
 * every operation did go to m. */
static int seed_for_member(int m, int n) {
  for (int s = 1; s < 10000000; s++) {
    unsigned u = (unsigned)s;
    if (rand_r(&u) % n == m) return s;
  }
  return 0;
}

/* ---- one trial ---- */

typedef struct lat {
  uint64_t n;
  double p50, p90, p99, p999, mean, max;
} lat_t;

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

typedef struct samples {
  float *v;
  size_t n, cap;
} samples_t;

static void push(samples_t *s, float x) {
  if (s->n == s->cap) {
    size_t cap = s->cap ? s->cap * 2 : 4096;
    float *v = realloc(s->v, cap * sizeof *v);
    if (!v) die("out of memory");
    s->v = v;
    s->cap = cap;
  }
  s->v[s->n++] = x;
}

typedef struct run run_t;

typedef struct worker {
  run_t *r;
  int id;
  uint64_t rng;
  pthread_t th;
  samples_t s[N_OPS];
  uint64_t err[N_OPS];
  int first_err;
  pthread_mutex_t mu; /* async calls: the completion posts here */
  pthread_cond_t cv;
  int done, rc;
  char *buf;
  int buflen;
} worker_t;

struct run {
  const cfg_t *c;
  const policy_t *p;
  char **paths;
  const char *value;
  zkr_t *z;
  zhandle_t *zh;
  _Atomic int zh_state;
  _Atomic int stop;
  _Atomic uint64_t t0, t1; /* measured window; UINT64_MAX until known */
  _Atomic uint64_t ops, errs;
};

static void post(worker_t *w, int rc) {
  pthread_mutex_lock(&w->mu);
  w->rc = rc;
  w->done = 1;
  pthread_cond_signal(&w->cv);
  pthread_mutex_unlock(&w->mu);
}

static int wait_done(worker_t *w) {
  pthread_mutex_lock(&w->mu);
  while (!w->done) pthread_cond_wait(&w->cv, &w->mu);
  w->done = 0;
  int rc = w->rc;
  pthread_mutex_unlock(&w->mu);
  return rc;
}

static void sync_ignored(int rc, const char *value, const void *data) {
  (void)rc;
  (void)value;
  (void)data;
}

static void get_done(int rc, const char *value, int len, const struct Stat *st, const void *data) {
  (void)value;
  (void)len;
  (void)st;
  post((worker_t *)data, rc);
}

static void set_done(int rc, const struct Stat *st, const void *data) {
  (void)st;
  post((worker_t *)data, rc);
}

/* A linearizable read: sync pipelined before the get, on one session. */
static int op_read(worker_t *w, const char *path) {
  run_t *r = w->r;
  struct Stat st;
  int len = w->buflen, rc;
  if (r->z) {
    if (!r->c->async_api) return zkr_get(r->z, path, 0, w->buf, &len, &st);
    rc = zkr_aget(r->z, path, 0, get_done, w);
    return rc == ZOK ? wait_done(w) : rc;
  }
  rc = zoo_async(r->zh, path, sync_ignored, NULL);
  if (rc != ZOK) return rc;
  if (!r->c->async_api) return zoo_get(r->zh, path, 0, w->buf, &len, &st);
  rc = zoo_aget(r->zh, path, 0, get_done, w);
  return rc == ZOK ? wait_done(w) : rc;
}

static int op_write(worker_t *w, const char *path) {
  run_t *r = w->r;
  int vs = r->c->value_size, rc;
  if (r->z) {
    if (!r->c->async_api) return zkr_set(r->z, path, r->value, vs, -1);
    rc = zkr_aset(r->z, path, r->value, vs, -1, set_done, w);
  } else {
    if (!r->c->async_api) return zoo_set(r->zh, path, r->value, vs, -1);
    rc = zoo_aset(r->zh, path, r->value, vs, -1, set_done, w);
  }
  return rc == ZOK ? wait_done(w) : rc;
}

static void *worker_main(void *arg) {
  worker_t *w = arg;
  run_t *r = w->r;
  const cfg_t *c = r->c;
  /* With --rate each worker starts one operation every workers/rate
   * seconds (starting at a random phase), and never bursts to catch up. */
  double gap = c->rate > 0 ? c->workers / c->rate : 0;
  uint64_t next = now_ns() + (uint64_t)(gap * 1e9 * ((double)(rng_next(&w->rng) >> 11) * 0x1p-53));
  while (!atomic_load_explicit(&r->stop, memory_order_relaxed)) {
    if (gap > 0) {
      uint64_t t = now_ns();
      if (t < next) sleep_s((double)(next - t) / 1e9);
      else if (t - next > (uint64_t)(gap * 1e9)) next = t;
      next += (uint64_t)(gap * 1e9);
      if (atomic_load_explicit(&r->stop, memory_order_relaxed)) break;
    }
    int op = (double)(rng_next(&w->rng) >> 11) * 0x1p-53 < c->read_frac ? OP_READ : OP_WRITE;
    const char *path = r->paths[rng_next(&w->rng) % (uint64_t)c->keys];
    uint64_t a = now_ns();
    int rc = op == OP_READ ? op_read(w, path) : op_write(w, path);
    uint64_t b = now_ns();
    atomic_fetch_add_explicit(&r->ops, 1, memory_order_relaxed);
    if (rc != ZOK) atomic_fetch_add_explicit(&r->errs, 1, memory_order_relaxed);
    int in_window = a >= atomic_load(&r->t0) && b <= atomic_load(&r->t1);
    if (in_window) {
      if (rc == ZOK) {
        push(&w->s[op], (float)((double)(b - a) / 1e6));
      } else {
        w->err[op]++;
        if (!w->first_err) w->first_err = rc;
      }
    }
    /* A closed loop would spin on a dead session: pace errors. */
    if (rc != ZOK) sleep_s(0.001);
  }
  return NULL;
}

/* --pool-trace: a thread that samples zkr_stats every 10 ms and appends a
 * line for every change of a member's read-pool membership, ejection count
 * or connection, with the EWMAs and sample counts of all members. */
typedef struct tracer {
  run_t *r;
  FILE *f;
  pthread_t th;
  uint64_t t0;
} tracer_t;

static void *tracer_main(void *arg) {
  tracer_t *tr = arg;
  int last_pool[MAXM], last_conn[MAXM];
  uint64_t last_ej[MAXM];
  for (int i = 0; i < MAXM; i++) last_pool[i] = last_conn[i] = -1, last_ej[i] = UINT64_MAX;
  while (!atomic_load(&tr->r->stop)) {
    zkr_stats_t *s = NULL;
    if (zkr_stats(tr->r->z, &s) == ZOK) {
      int changed = 0;
      for (int i = 0; i < s->n_members && i < MAXM; i++) {
        const zkr_member_stats_t *m = &s->members[i];
        if (m->in_read_pool != last_pool[i] || m->connected != last_conn[i] ||
            m->ejections != last_ej[i])
          changed = 1;
        last_pool[i] = m->in_read_pool;
        last_conn[i] = m->connected;
        last_ej[i] = m->ejections;
      }
      if (changed) {
        fprintf(tr->f, "%9.3f", (double)(now_ns() - tr->t0) / 1e9);
        for (int i = 0; i < s->n_members && i < MAXM; i++) {
          const zkr_member_stats_t *m = &s->members[i];
          fprintf(tr->f, "  m%d %s%s pool=%d ewma=%.1f samples=%llu ej=%llu", i + 1,
                  zkr_role_name(m->role), m->connected ? "" : "(down)", m->in_read_pool, m->ewma_ms,
                  (unsigned long long)m->samples, (unsigned long long)m->ejections);
        }
        fputc('\n', tr->f);
        fflush(tr->f);
      }
      zkr_stats_free(s);
    }
    sleep_s(0.01);
  }
  return NULL;
}

static void plain_watcher(zhandle_t *zh, int type, int state, const char *path, void *ctx) {
  (void)zh;
  (void)path;
  if (type == ZOO_SESSION_EVENT) atomic_store(&((run_t *)ctx)->zh_state, state);
}

/* Connected, leader known and every member session connected (routed);
 * connected (plain).  Returns 1, or 0 after READY_TIMEOUT_MS. */
static int wait_ready(run_t *r) {
  uint64_t deadline = now_ns() + (uint64_t)READY_TIMEOUT_MS * 1000000u;
  while (!interrupted) {
    if (r->z) {
      zkr_stats_t *s = NULL;
      int ready = 0;
      if (zkr_state(r->z) == ZOO_CONNECTED_STATE && zkr_stats(r->z, &s) == ZOK) {
        ready = s->leader >= 0;
        for (int i = 0; i < s->n_members; i++) ready &= s->members[i].connected;
      }
      zkr_stats_free(s);
      if (ready) return 1;
    } else if (atomic_load(&r->zh_state) == ZOO_CONNECTED_STATE) {
      return 1;
    }
    if (now_ns() > deadline) return 0;
    sleep_s(0.02);
  }
  return 0;
}

/* A policy entry's own options: "+key=value+key=value" (see add_policy).
 * Returns ZOK or the first error of zkr_options_set. */
static int apply_entry_options(zkr_options_t *o, const char *text) {
  char buf[sizeof((policy_t *)0)->opts], *save = NULL;
  snprintf(buf, sizeof buf, "%s", text);
  for (char *kv = strtok_r(buf, "+", &save); kv; kv = strtok_r(NULL, "+", &save)) {
    char *eq = strchr(kv, '=');
    if (!eq) return ZKR_EOPTION;
    *eq = '\0';
    if (strcmp(kv, "policy") == 0) return ZKR_EOPTION;
    int rc = zkr_options_set(o, kv, eq + 1);
    if (rc != ZOK) return rc;
  }
  return ZOK;
}

static int open_client(run_t *r, int *oracle_member) {
  const cfg_t *c = r->c;
  const policy_t *p = r->p;
  if (p->kind == K_ROUTED) {
    zkr_options_t o = c->opts;
    o.policy = p->zkr_policy;
    if (p->zkr_policy == ZKR_POLICY_STICKY && c->sticky_member >= 0)
      o.seed = seed_for_member(c->sticky_member, (int)c->hl.n);
    apply_entry_options(&o, p->opts); /* checked by add_policy */
    int rc = zkr_init_opts(&r->z, c->hosts, NULL, RECV_TIMEOUT_MS, NULL, NULL, 0, &o);
    if (rc != ZOK) {
      warn("%s: zkr_init_opts: %s", p->name, zkr_strerror(rc));
      return 0;
    }
    if (p->selector) zkr_set_read_selector(r->z, p->selector, NULL);
    return 1;
  }
  char connect[ZKR__HOSTS_MAX_LEN + 1];
  if (p->kind == K_STOCK) {
    snprintf(connect, sizeof connect, "%s", c->hosts);
  } else {
    int l = find_leader(c, NULL);
    if (l < 0) {
      warn("oracle: no member says it is the leader");
      return 0;
    }
    *oracle_member = l;
    zkr__host_format(&c->hl.v[l], c->hl.chroot, connect, sizeof connect);
  }
  atomic_store(&r->zh_state, 0);
  r->zh = zookeeper_init(connect, plain_watcher, RECV_TIMEOUT_MS, NULL, r, 0);
  if (!r->zh) {
    warn("%s: zookeeper_init(%s) failed: %s", p->name, connect, strerror(errno));
    return 0;
  }
  return 1;
}

static void close_client(run_t *r) {
  if (r->z) zkr_close(r->z);
  if (r->zh) zookeeper_close(r->zh);
  r->z = NULL;
  r->zh = NULL;
}

typedef struct progress {
  int round, rounds;
  const char *what;
} progress_t;

static void show_progress(const cfg_t *c, const progress_t *pg, const run_t *r, const char *phase,
                          double done, double total, double rate) {
  if (c->quiet || !isatty(STDERR_FILENO)) return;
  fprintf(stderr,
          "\r\033[K[%s %d/%d] %-12s %-8s %5.1f/%-4.0f s  %8.0f ops/s  errors %llu  load %.2f",
          pg->what, pg->round, pg->rounds, r->p->name, phase, done, total, rate,
          (unsigned long long)atomic_load(&r->errs), tool_loadavg1());
  fflush(stderr);
}

/* Runs phase for secs seconds, updating the progress line. */
static void run_phase(run_t *r, const progress_t *pg, const char *phase, double secs) {
  uint64_t start = now_ns(), last_t = start, last_ops = atomic_load(&r->ops);
  double rate = 0;
  for (;;) {
    double el = (double)(now_ns() - start) / 1e9;
    if (el >= secs || interrupted) break;
    double step = secs - el < 0.5 ? secs - el : 0.5;
    sleep_s(step);
    uint64_t t = now_ns(), ops = atomic_load(&r->ops);
    if (t > last_t) rate = (double)(ops - last_ops) / ((double)(t - last_t) / 1e9);
    last_t = t;
    last_ops = ops;
    show_progress(r->c, pg, r, phase, (double)(t - start) / 1e9, secs, rate);
  }
}

/* Each member's counters; with t, also its health at the end of the
 * window, and ejections / time out of the pool since the snapshot h0. */
typedef struct health_snap {
  uint64_t ejections[MAXM];
  double out_ms[MAXM];
} health_snap_t;

static void stats_ops(zkr_t *z, uint64_t m_ops[N_OPS][MAXM], health_snap_t *h, trial_t *t,
                      const health_snap_t *h0) {
  zkr_stats_t *s = NULL;
  if (zkr_stats(z, &s) != ZOK) return;
  for (int i = 0; i < s->n_members && i < MAXM; i++) {
    m_ops[OP_READ][i] = s->members[i].reads;
    m_ops[OP_WRITE][i] = s->members[i].writes;
    if (h) {
      h->ejections[i] = s->members[i].ejections;
      h->out_ms[i] = s->members[i].out_of_pool_ms;
    }
    if (t) {
      t->ewma[i] = s->members[i].ewma_ms;
      t->in_pool[i] = s->members[i].in_read_pool;
      t->ejections[i] = s->members[i].ejections - h0->ejections[i];
      t->out_ms[i] = s->members[i].out_of_pool_ms - h0->out_ms[i];
    }
  }
  zkr_stats_free(s);
}

static void recv_counts(const cfg_t *c, int64_t *out) {
  zkr__srvr_reply_t r[MAXM];
  srvr_all(c, r);
  for (size_t i = 0; i < c->hl.n; i++)
    out[i] = r[i].role == ZKR_ROLE_UNREACHABLE ? -1 : r[i].received;
}

static void lat_of(samples_t *s, lat_t *l, float *cdf) {
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

/* One trial of one policy: open, warm up, measure `secs`, close.  With
 * t == NULL nothing is kept (the pre-warm-up).  Returns 1 when it ran. */
static int run_trial(const cfg_t *c, const policy_t *p, char **paths, const char *value,
                     double secs, uint64_t seed, const progress_t *pg, trial_t *t) {
  run_t r = {.c = c, .p = p, .paths = paths, .value = value};
  atomic_store(&r.t0, UINT64_MAX);
  atomic_store(&r.t1, 0);
  int oracle_member = -1;
  if (!open_client(&r, &oracle_member)) return 0;
  if (!wait_ready(&r)) {
    warn("%s: client not ready after %d s", p->name, READY_TIMEOUT_MS / 1000);
    close_client(&r);
    return 0;
  }
  worker_t *w = calloc((size_t)c->workers, sizeof *w);
  if (!w) die("out of memory");
  int started = 0;
  for (int i = 0; i < c->workers; i++) {
    w[i].r = &r;
    w[i].id = i;
    w[i].rng = splitmix(seed * 1000003u + (uint64_t)i) | 1;
    w[i].buflen = c->value_size + 64;
    w[i].buf = malloc((size_t)w[i].buflen);
    if (!w[i].buf) die("out of memory");
    pthread_mutex_init(&w[i].mu, NULL);
    pthread_cond_init(&w[i].cv, NULL);
    if (pthread_create(&w[i].th, NULL, worker_main, &w[i]) != 0) {
      warn("%s: cannot start worker %d", p->name, i);
      break;
    }
    started++;
  }
  int ok = started == c->workers;
  tracer_t tracer = {.r = &r};
  int tracing = 0;
  if (ok && t && c->pool_trace && r.z && (tracer.f = fopen(c->pool_trace, "a"))) {
    tracer.t0 = now_ns();
    fprintf(tracer.f,
            "# %s, time from the start of the warm-up (s); measured window %.0f..%.0f s\n", p->name,
            c->warmup, c->warmup + secs);
    tracing = pthread_create(&tracer.th, NULL, tracer_main, &tracer) == 0;
  }
  if (ok) run_phase(&r, pg, "warm-up", t ? c->warmup : secs);
  uint64_t m0[N_OPS][MAXM] = {{0}}, m1[N_OPS][MAXM] = {{0}};
  health_snap_t h0 = {{0}, {0}};
  int64_t rv0[MAXM], rv1[MAXM];
  double cpu0 = 0, cpu1 = 0, csw0 = 0, csw1 = 0, pc0[MAXM], pc1[MAXM];
  uint64_t t0 = 0, t1 = 0;
  int member0 = -1, member1 = -1;
  if (ok && t && !interrupted) {
    t->load_start = tool_loadavg1();
    recv_counts(c, rv0);
    if (r.z) stats_ops(r.z, m0, &h0, NULL, NULL);
    else member0 = p->kind == K_ORACLE ? oracle_member : connected_member(c, r.zh);
    t->leader = find_leader(c, NULL);
    for (int i = 0; i < c->npids; i++) pc0[i] = tool_pid_cpu_s(c->pids[i]);
    if (c->fault_cmd && system(c->fault_cmd) != 0) warn("--fault-cmd failed: %s", c->fault_cmd);
    zkr_stats_t *hs0 = NULL;
    if (r.z && zkr_stats(r.z, &hs0) == ZOK) {
      t->hedging = hs0->hedging;
      t->h_elig = hs0->hedge_eligible;
      t->h_sent = hs0->hedges_sent;
      t->h_won = hs0->hedges_won;
      t->h_capped = hs0->hedges_capped;
      t->syncs = t->m_reads = 0;
      for (int i = 0; i < hs0->n_members; i++) {
        t->syncs += hs0->members[i].syncs;
        t->m_reads += hs0->members[i].reads;
      }
      zkr_stats_free(hs0);
    }
    cpu0 = cpu_seconds(&csw0);
    t0 = now_ns();
    t1 = t0 + (uint64_t)(secs * 1e9);
    atomic_store(&r.t1, t1);
    atomic_store(&r.t0, t0);
    run_phase(&r, pg, "measure", secs);
    if (now_ns() < t1) sleep_s((double)(t1 - now_ns()) / 1e9);
    cpu1 = cpu_seconds(&csw1);
    for (int i = 0; i < c->npids; i++) pc1[i] = tool_pid_cpu_s(c->pids[i]);
    if (r.z) stats_ops(r.z, m1, NULL, t, &h0);
    zkr_stats_t *hs1 = NULL;
    if (r.z && zkr_stats(r.z, &hs1) == ZOK) {
      t->h_elig = hs1->hedge_eligible - t->h_elig;
      t->h_sent = hs1->hedges_sent - t->h_sent;
      t->h_won = hs1->hedges_won - t->h_won;
      t->h_capped = hs1->hedges_capped - t->h_capped;
      uint64_t sy = 0, rd = 0;
      for (int i = 0; i < hs1->n_members; i++) {
        sy += hs1->members[i].syncs;
        rd += hs1->members[i].reads;
      }
      t->syncs = sy - t->syncs;
      t->m_reads = rd - t->m_reads;
      zkr_stats_free(hs1);
    }
    if (c->heal_cmd && system(c->heal_cmd) != 0) warn("--heal-cmd failed: %s", c->heal_cmd);
  }
  atomic_store(&r.stop, 1);
  for (int i = 0; i < started; i++) pthread_join(w[i].th, NULL);
  if (tracing) pthread_join(tracer.th, NULL);
  if (tracer.f) fclose(tracer.f);
  if (ok && t && !interrupted) {
    recv_counts(c, rv1);
    t->load_end = tool_loadavg1();
    if (r.zh) member1 = p->kind == K_ORACLE ? oracle_member : connected_member(c, r.zh);
  }
  close_client(&r);
  int ran = ok && t && !interrupted;
  if (ran) {
    samples_t all[N_OPS] = {{0}};
    for (int i = 0; i < started; i++) {
      for (int op = 0; op < N_OPS; op++) {
        for (size_t k = 0; k < w[i].s[op].n; k++) push(&all[op], w[i].s[op].v[k]);
        t->err[op] += w[i].err[op];
      }
      if (!t->first_err) t->first_err = w[i].first_err;
    }
    t->ran = 1;
    t->seconds = (double)(t1 - t0) / 1e9;
    for (int op = 0; op < N_OPS; op++) {
      t->ok[op] = all[op].n;
      lat_of(&all[op], &t->lat[op], t->cdf[op]);
      free(all[op].v);
    }
    uint64_t total = t->ok[OP_READ] + t->ok[OP_WRITE];
    uint64_t tried = total + t->err[OP_READ] + t->err[OP_WRITE];
    t->thr = (double)total / t->seconds;
    t->cpu_us = tried ? (cpu1 - cpu0) * 1e6 / (double)tried : NAN;
    t->cpu_pct = (cpu1 - cpu0) / t->seconds * 100;
    t->csw = tried ? (csw1 - csw0) / (double)tried : NAN;
    t->srv_us = c->npids && tried ? 0 : NAN;
    for (int i = 0; i < c->npids; i++) {
      t->pid_us[i] =
          pc0[i] >= 0 && pc1[i] >= 0 && tried ? (pc1[i] - pc0[i]) * 1e6 / (double)tried : NAN;
      t->srv_us += t->pid_us[i];
    }
    for (size_t i = 0; i < c->hl.n; i++) {
      t->m_recv[i] = rv0[i] >= 0 && rv1[i] >= 0 ? rv1[i] - rv0[i] : -1;
      if (p->kind != K_ROUTED) t->ewma[i] = -1;
    }
    if (p->kind == K_ROUTED) {
      for (int op = 0; op < N_OPS; op++)
        for (size_t i = 0; i < c->hl.n; i++) t->m_ops[op][i] = m1[op][i] - m0[op][i];
      t->member = -1;
    } else {
      t->member = member0 == member1 ? member0 : -2;
      if (t->member >= 0)
        for (int op = 0; op < N_OPS; op++) t->m_ops[op][t->member] = t->ok[op] + t->err[op];
    }
    t->pinned = 1;
    if (p->kind == K_ROUTED && p->zkr_policy == ZKR_POLICY_STICKY && c->sticky_member >= 0) {
      for (size_t i = 0; i < c->hl.n; i++)
        if ((int)i != c->sticky_member && (t->m_ops[OP_READ][i] || t->m_ops[OP_WRITE][i]))
          t->pinned = 0;
      if (!t->pinned)
        warn("sticky was meant to stay on member %d, but operations went elsewhere",
             c->sticky_member + 1);
    }
  }
  for (int i = 0; i < c->workers; i++) {
    for (int op = 0; op < N_OPS; op++) free(w[i].s[op].v);
    free(w[i].buf);
    if (i < started) {
      pthread_mutex_destroy(&w[i].mu);
      pthread_cond_destroy(&w[i].cv);
    }
  }
  free(w);
  return ran;
}

/* ---- key setup ---- */

typedef struct setup_state {
  pthread_mutex_t mu;
  pthread_cond_t cv;
  int pending, failed, first_err;
} setup_state_t;

static void setup_done(setup_state_t *s, int rc) {
  pthread_mutex_lock(&s->mu);
  if (rc != ZOK) {
    s->failed++;
    if (!s->first_err) s->first_err = rc;
  }
  s->pending--;
  pthread_cond_signal(&s->cv);
  pthread_mutex_unlock(&s->mu);
}

static void setup_set_done(int rc, const struct Stat *st, const void *data) {
  (void)st;
  setup_done((setup_state_t *)data, rc);
}

typedef struct setup_key {
  setup_state_t *s;
  zhandle_t *zh;
  const char *path, *value;
  int len;
} setup_key_t;

/* A key that exists already is set, so that its value has the size in
 * use; the set's completion then counts it. */
static void setup_create_cb(int rc, const char *name, const void *data) {
  (void)name;
  setup_key_t *k = (setup_key_t *)data;
  if (rc == ZNODEEXISTS) {
    rc = zoo_aset(k->zh, k->path, k->value, k->len, -1, setup_set_done, k->s);
    if (rc == ZOK) return;
  }
  setup_done(k->s, rc);
}

/* Creates PREFIX and the keys (or sets them to the value size in use) with
 * pipelined asynchronous calls on one plain session. */
static void setup_keys(const cfg_t *c, char **paths, const char *value) {
  zhandle_t *zh = zookeeper_init(c->hosts, NULL, RECV_TIMEOUT_MS, NULL, NULL, 0);
  if (!zh) die("setup: zookeeper_init: %s", strerror(errno));
  uint64_t deadline = now_ns() + (uint64_t)READY_TIMEOUT_MS * 1000000u;
  while (zoo_state(zh) != ZOO_CONNECTED_STATE) {
    if (now_ns() > deadline || interrupted) die("setup: no connection to %s", c->hosts);
    sleep_s(0.02);
  }
  int rc = zoo_create(zh, c->prefix, NULL, -1, &ZOO_OPEN_ACL_UNSAFE, 0, NULL, 0);
  if (rc != ZOK && rc != ZNODEEXISTS) die("setup: create %s: %s", c->prefix, zerror(rc));
  setup_state_t s = {.pending = 0};
  pthread_mutex_init(&s.mu, NULL);
  pthread_cond_init(&s.cv, NULL);
  setup_key_t *k = calloc((size_t)c->keys, sizeof *k);
  if (!k) die("out of memory");
  for (int i = 0; i < c->keys; i++) {
    k[i] = (setup_key_t){&s, zh, paths[i], value, c->value_size};
    pthread_mutex_lock(&s.mu);
    s.pending++;
    while (s.pending > 500) pthread_cond_wait(&s.cv, &s.mu);
    pthread_mutex_unlock(&s.mu);
    rc = zoo_acreate(zh, paths[i], value, c->value_size, &ZOO_OPEN_ACL_UNSAFE, 0, setup_create_cb,
                     &k[i]);
    if (rc != ZOK) setup_done(&s, rc);
  }
  pthread_mutex_lock(&s.mu);
  while (s.pending > 0) pthread_cond_wait(&s.cv, &s.mu);
  pthread_mutex_unlock(&s.mu);
  zookeeper_close(zh);
  free(k);
  if (s.failed) die("setup: %d of %d keys failed (%s)", s.failed, c->keys, zerror(s.first_err));
}

/* ---- summaries ---- */

typedef struct summary {
  int n; /* trials that ran */
  double thr, thr_min, thr_max, cpu_us, cpu_pct, csw, srv_us;
  lat_t lat[N_OPS];
  uint64_t ok[N_OPS], err[N_OPS]; /* sums over trials */
  uint64_t m_ops[N_OPS][MAXM];    /* sums over trials */
  int64_t m_recv[MAXM];           /* sums, -1 unknown */
  float cdf[N_OPS][NQ];
} summary_t;

#define MED_FIELD(dst, expr)                                                                       \
  do {                                                                                             \
    int k_ = 0;                                                                                    \
    for (int t_ = 0; t_ < ntr; t_++)                                                               \
      if (tr[t_].ran) v[k_++] = (expr(tr[t_]));                                                    \
    (dst) = median(v, k_);                                                                         \
  } while (0)

static void summarize(const cfg_t *c, const trial_t *tr, int ntr, summary_t *s) {
  double *v = calloc((size_t)ntr + 1, sizeof *v);
  if (!v) die("out of memory");
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
typedef double (*metric_fn)(const trial_t *);
static double m_thr(const trial_t *t) { return t->thr; }
static double m_cpu(const trial_t *t) { return t->cpu_us; }
static double m_r50(const trial_t *t) { return t->lat[OP_READ].p50; }
static double m_r99(const trial_t *t) { return t->lat[OP_READ].p99; }
static double m_w50(const trial_t *t) { return t->lat[OP_WRITE].p50; }
static double m_w99(const trial_t *t) { return t->lat[OP_WRITE].p99; }

static double paired_ratio(const trial_t *a, const trial_t *b, int ntr, metric_fn f) {
  double v[1024];
  int k = 0;
  for (int t = 0; t < ntr && k < 1024; t++)
    if (a[t].ran && b[t].ran && f(&b[t]) > 0) v[k++] = f(&a[t]) / f(&b[t]);
  return median(v, k);
}

/* ---- the report ---- */

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

static trial_t *trials_of(const report_t *R, int p) {
  return &R->tr[(size_t)p * (size_t)R->c->trials];
}

static int policy_index(const cfg_t *c, const char *name) {
  for (int i = 0; i < c->npol; i++)
    if (strcmp(c->pol[i].name, name) == 0) return i;
  return -1;
}

static void fmt_ms(char *buf, size_t n, double ms) {
  if (isnan(ms)) snprintf(buf, n, "-");
  else if (ms < 10) snprintf(buf, n, "%.2f", ms);
  else if (ms < 100) snprintf(buf, n, "%.1f", ms);
  else snprintf(buf, n, "%.0f", ms);
}

static void shares(const report_t *R, const summary_t *s, int op, char *buf, size_t n) {
  uint64_t tot = 0;
  size_t m = R->c->hl.n, off = 0;
  for (size_t i = 0; i < m; i++) tot += s->m_ops[op][i];
  buf[0] = '\0';
  for (size_t i = 0; i < m && off < n; i++) {
    double pct = tot ? 100.0 * (double)s->m_ops[op][i] / (double)tot : NAN;
    int w;
    if (isnan(pct)) w = snprintf(buf + off, n - off, "%s?", i ? " · " : "");
    else if (pct > 0 && pct < 0.95) w = snprintf(buf + off, n - off, "%s%.1f", i ? " · " : "", pct);
    else w = snprintf(buf + off, n - off, "%s%.0f", i ? " · " : "", pct);
    if (w < 0) break;
    off += (size_t)w;
  }
}

static const char *role_word(const report_t *R, int i) {
  switch (R->roles[i]) {
  case ZKR_ROLE_LEADER: return "leader";
  case ZKR_ROLE_FOLLOWER: return "follower";
  case ZKR_ROLE_OBSERVER: return "observer";
  default: return zkr_role_name(R->roles[i]);
  }
}

static void ratio_cell(FILE *f, double a, double b, double paired) {
  if (isnan(a) || isnan(b) || b == 0) fprintf(f, " - |");
  else fprintf(f, " %.2f (%.2f) |", a / b, paired);
}

/* Target checks of issue 6; each line: what, value, limit, verdict. */
typedef struct check {
  const char *what;
  double value, limit;
  int at_most; /* 1: value <= limit passes; 0: value >= limit */
} check_t;

static int collect_checks(const report_t *R, check_t *ck) {
  const cfg_t *c = R->c;
  int n = 0, h = policy_index(c, "hybrid");
  if (!c->targets || h < 0) return 0;
  const summary_t *H = &R->sum[h];
  int rr = policy_index(c, "round_robin"), orc = policy_index(c, "oracle");
  int st = policy_index(c, "sticky"), stock = policy_index(c, "stock");
  if (strcmp(c->targets, "steady") == 0) {
    if (rr >= 0) {
      ck[n++] = (check_t){"hybrid write P50 / round_robin write P50",
                          H->lat[OP_WRITE].p50 / R->sum[rr].lat[OP_WRITE].p50, 0.75, 1};
    }
    if (orc >= 0)
      ck[n++] = (check_t){"hybrid write P50 / oracle write P50",
                          H->lat[OP_WRITE].p50 / R->sum[orc].lat[OP_WRITE].p50, 1.10, 1};
    if (rr >= 0)
      ck[n++] =
          (check_t){"hybrid throughput / round_robin throughput", H->thr / R->sum[rr].thr, 1.0, 0};
  } else if (strcmp(c->targets, "degraded") == 0) {
    if (rr >= 0) {
      const summary_t *B = &R->sum[rr];
      ck[n++] = (check_t){"hybrid read P99 / round_robin read P99",
                          H->lat[OP_READ].p99 / B->lat[OP_READ].p99, 0.40, 1};
      ck[n++] = (check_t){"hybrid write P99 / round_robin write P99",
                          H->lat[OP_WRITE].p99 / B->lat[OP_WRITE].p99, 0.35, 1};
      ck[n++] = (check_t){"hybrid throughput / round_robin throughput", H->thr / B->thr, 1.5, 0};
    }
    if (st >= 0)
      ck[n++] = (check_t){"hybrid throughput / sticky (on the degraded follower) throughput",
                          H->thr / R->sum[st].thr, 3.0, 0};
  }
  if (stock >= 0)
    ck[n++] = (check_t){"hybrid client CPU per op / stock (plain libzookeeper_mt) CPU per op",
                        H->cpu_us / R->sum[stock].cpu_us, 1.15, 1};
  if (orc >= 0)
    ck[n++] = (check_t){"hybrid client CPU per op / oracle (plain libzookeeper_mt) CPU per op",
                        H->cpu_us / R->sum[orc].cpu_us, 1.15, 1};
  return n;
}

static int check_pass(const check_t *k) {
  if (isnan(k->value)) return 0;
  return k->at_most ? k->value <= k->limit : k->value >= k->limit;
}

static void write_markdown(FILE *f, const report_t *R) {
  const cfg_t *c = R->c;
  char a[64];
  fprintf(f, "## zkroute-bench%s%s\n\n", c->label ? ": " : "", c->label ? c->label : "");
  fprintf(f, "- command: `%s`\n", c->command);
  fprintf(
      f,
      "- started: %s; machine: %d × %s, Linux %s; load average (1 min) %.2f before, %.2f after\n",
      R->started, R->ncpu, R->cpu_model, R->kernel, R->load_before, R->load_after);
  fprintf(f, "- workload: %d closed-loop workers (%s calls) on one client", c->workers,
          c->async_api ? "async+wait" : "sync");
  if (c->rate > 0) fprintf(f, ", paced to %.0f ops/s in total", c->rate);
  fprintf(f,
          "; %.0f %% reads (sync+get, linearizable in every policy) / %.0f %% writes (set); "
          "%d keys of %d bytes\n",
          c->read_frac * 100, 100 - c->read_frac * 100, c->keys, c->value_size);
  fprintf(f,
          "- trials: %d × %.0f s measured after %.0f s warm-up each, policies interleaved "
          "(order %s each round); figures are medians across trials; shares are over all trials\n",
          c->trials, c->duration, c->warmup, c->rotate ? "rotated" : "fixed");
  if (c->opt_text[0]) fprintf(f, "- library options: %s\n", c->opt_text);
  fprintf(f, "- members:");
  for (size_t i = 0; i < c->hl.n; i++) {
    member_addr(c, (int)i, a, sizeof a);
    fprintf(f, "%s %zu = %s (%s%s)", i ? "," : "", i + 1, a, role_word(R, (int)i),
            (int)i == c->degraded_member ? ", degraded" : "");
  }
  if (c->sticky_member >= 0) fprintf(f, "; sticky pinned to member %d", c->sticky_member + 1);
  fprintf(f, "\n\n");
  fprintf(
      f,
      "| policy | trials | ops/s | read P50 | P90 | P99 | P99.9 | write P50 | P90 | P99 | P99.9 "
      "| errors r/w | client CPU µs/op | ctx sw/op | reads by member %% | writes by member %% |\n");
  fprintf(f, "| --- | --: | --: | --: | --: | --: | --: | --: | --: | --: | --: | --: | --: | --: "
             "| --- | --- |\n");
  for (int p = 0; p < c->npol; p++) {
    const summary_t *s = &R->sum[p];
    char v[8][16], sr[256], sw[256];
    fmt_ms(v[0], 16, s->lat[OP_READ].p50);
    fmt_ms(v[1], 16, s->lat[OP_READ].p90);
    fmt_ms(v[2], 16, s->lat[OP_READ].p99);
    fmt_ms(v[3], 16, s->lat[OP_READ].p999);
    fmt_ms(v[4], 16, s->lat[OP_WRITE].p50);
    fmt_ms(v[5], 16, s->lat[OP_WRITE].p90);
    fmt_ms(v[6], 16, s->lat[OP_WRITE].p99);
    fmt_ms(v[7], 16, s->lat[OP_WRITE].p999);
    shares(R, s, OP_READ, sr, sizeof sr);
    shares(R, s, OP_WRITE, sw, sizeof sw);
    fprintf(f,
            "| %s | %d | %.0f | %s | %s | %s | %s | %s | %s | %s | %s | %llu/%llu | %.1f | %.1f | "
            "%s | %s |\n",
            c->pol[p].name, s->n, s->thr, v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7],
            (unsigned long long)s->err[OP_READ], (unsigned long long)s->err[OP_WRITE], s->cpu_us,
            s->csw, sr, sw);
  }
  fprintf(f, "\nLatencies in ms.  Shares list members 1..%zu in order.\n", c->hl.n);
  if (c->npids) {
    fprintf(f, "\nCPU per operation of the watched processes (--watch-pids; µs/op, median across "
               "trials), next to the client's:\n\n| policy | client |");
    for (int i = 0; i < c->npids; i++) fprintf(f, " %s |", c->pid_names[i]);
    fprintf(f, " watched total | all |\n| --- | --: |");
    for (int i = 0; i < c->npids; i++) fprintf(f, " --: |");
    fprintf(f, " --: | --: |\n");
    for (int p = 0; p < c->npol; p++) {
      const trial_t *T = trials_of(R, p);
      double v[1024];
      fprintf(f, "| %s | %.0f |", c->pol[p].name, R->sum[p].cpu_us);
      for (int i = 0; i < c->npids; i++) {
        int k = 0;
        for (int t = 0; t < c->trials && k < 1024; t++)
          if (T[t].ran) v[k++] = T[t].pid_us[i];
        fprintf(f, " %.0f |", median(v, k));
      }
      fprintf(f, " %.0f | %.0f |\n", R->sum[p].srv_us, R->sum[p].srv_us + R->sum[p].cpu_us);
    }
  }
  int base = policy_index(c, "hybrid");
  if (base < 0) base = 0;
  if (c->npol > 1) {
    fprintf(f,
            "\n%s ÷ each other policy: ratio of the medians (in brackets: median of the "
            "per-round ratios)\n\n",
            c->pol[base].name);
    fprintf(f, "| vs | read P50 | read P99 | write P50 | write P99 | throughput | CPU/op |\n");
    fprintf(f, "| --- | --: | --: | --: | --: | --: | --: |\n");
    const trial_t *A = trials_of(R, base);
    const summary_t *H = &R->sum[base];
    for (int p = 0; p < c->npol; p++) {
      if (p == base) continue;
      const summary_t *s = &R->sum[p];
      const trial_t *B = trials_of(R, p);
      fprintf(f, "| %s |", c->pol[p].name);
      ratio_cell(f, H->lat[OP_READ].p50, s->lat[OP_READ].p50, paired_ratio(A, B, c->trials, m_r50));
      ratio_cell(f, H->lat[OP_READ].p99, s->lat[OP_READ].p99, paired_ratio(A, B, c->trials, m_r99));
      ratio_cell(f, H->lat[OP_WRITE].p50, s->lat[OP_WRITE].p50,
                 paired_ratio(A, B, c->trials, m_w50));
      ratio_cell(f, H->lat[OP_WRITE].p99, s->lat[OP_WRITE].p99,
                 paired_ratio(A, B, c->trials, m_w99));
      ratio_cell(f, H->thr, s->thr, paired_ratio(A, B, c->trials, m_thr));
      ratio_cell(f, H->cpu_us, s->cpu_us, paired_ratio(A, B, c->trials, m_cpu));
      fputc('\n', f);
    }
  }
  check_t ck[16];
  int nck = collect_checks(R, ck);
  if (nck) {
    fprintf(f,
            "\nTargets (issue 6, %s):\n\n| target | measured | limit | verdict |\n| --- | --: | "
            "--: | --- |\n",
            c->targets);
    for (int i = 0; i < nck; i++)
      fprintf(f, "| %s | %.2f | %s %.2f | %s |\n", ck[i].what, ck[i].value,
              ck[i].at_most ? "≤" : "≥", ck[i].limit, check_pass(&ck[i]) ? "pass" : "**miss**");
  }
  fprintf(f, "\nPer trial (round: ops/s, read P99, write P99 ms, client CPU µs/op):\n\n");
  for (int p = 0; p < c->npol; p++) {
    const trial_t *T = trials_of(R, p);
    fprintf(f, "- %s:", c->pol[p].name);
    for (int t = 0; t < c->trials; t++) {
      if (!T[t].ran) {
        fprintf(f, " %d: -;", t + 1);
        continue;
      }
      fprintf(f, " %d: %.0f, %.1f, %.1f, %.1f", t + 1, T[t].thr, T[t].lat[OP_READ].p99,
              T[t].lat[OP_WRITE].p99, T[t].cpu_us);
      if (c->pol[p].kind != K_ROUTED) {
        if (T[t].member >= 0) fprintf(f, " (member %d)", T[t].member + 1);
        else fprintf(f, " (member %s)", T[t].member == -2 ? "changed" : "?");
      }
      if (c->pol[p].kind == K_ROUTED && c->degraded_member >= 0) {
        int d = c->degraded_member;
        fprintf(f, " (EWMA by member");
        for (size_t i = 0; i < c->hl.n; i++) fprintf(f, "%s%.1f", i ? "/" : " ", T[t].ewma[i]);
        fprintf(f,
                " ms; degraded member %d: %llu ejections, out of the pool %.0f %% of the window)",
                d + 1, (unsigned long long)T[t].ejections[d],
                T[t].seconds > 0 ? T[t].out_ms[d] / (T[t].seconds * 10) : 0);
      }
      if (c->pol[p].kind == K_ROUTED && T[t].hedging)
        fprintf(f, " (hedges %llu = %.1f %% of %llu hedgeable reads, won %llu, capped %llu)",
                (unsigned long long)T[t].h_sent,
                T[t].h_elig ? 100.0 * (double)T[t].h_sent / (double)T[t].h_elig : 0.0,
                (unsigned long long)T[t].h_elig, (unsigned long long)T[t].h_won,
                (unsigned long long)T[t].h_capped);
      if (c->pol[p].kind == K_ROUTED && T[t].syncs)
        fprintf(f, " (syncs %llu for %llu reads: %.2f reads per sync)",
                (unsigned long long)T[t].syncs, (unsigned long long)T[t].m_reads,
                (double)T[t].m_reads / (double)T[t].syncs);
      if (T[t].first_err)
        fprintf(f, " (%llu errors, first %s)",
                (unsigned long long)(T[t].err[OP_READ] + T[t].err[OP_WRITE]),
                zkr_err_name(T[t].first_err));
      fputc(';', f);
    }
    fputc('\n', f);
  }
}

static void json_str(FILE *f, const char *s) {
  fputc('"', f);
  for (; s && *s; s++) {
    unsigned char ch = (unsigned char)*s;
    if (ch == '"' || ch == '\\') fprintf(f, "\\%c", ch);
    else if (ch < 0x20) fprintf(f, "\\u%04x", ch);
    else fputc(ch, f);
  }
  fputc('"', f);
}

static void json_num(FILE *f, double x) {
  if (isnan(x) || isinf(x)) fputs("null", f);
  else fprintf(f, "%.6g", x);
}

static void json_lat(FILE *f, const lat_t *l) {
  fprintf(f, "{\"n\": %llu, \"p50\": ", (unsigned long long)l->n);
  json_num(f, l->p50);
  fputs(", \"p90\": ", f);
  json_num(f, l->p90);
  fputs(", \"p99\": ", f);
  json_num(f, l->p99);
  fputs(", \"p999\": ", f);
  json_num(f, l->p999);
  fputs(", \"mean\": ", f);
  json_num(f, l->mean);
  fputs(", \"max\": ", f);
  json_num(f, l->max);
  fputc('}', f);
}

static void json_members(FILE *f, const cfg_t *c, const uint64_t m[N_OPS][MAXM],
                         const int64_t *recv) {
  fputc('[', f);
  for (size_t i = 0; i < c->hl.n; i++)
    fprintf(f, "%s{\"reads\": %llu, \"writes\": %llu, \"received\": %lld}", i ? ", " : "",
            (unsigned long long)m[OP_READ][i], (unsigned long long)m[OP_WRITE][i],
            (long long)recv[i]);
  fputc(']', f);
}

static void write_json(FILE *f, const report_t *R) {
  const cfg_t *c = R->c;
  char a[64];
  fputs("{\n  \"schema\": \"zkroute-bench/1\",\n  \"label\": ", f);
  json_str(f, c->label ? c->label : "");
  fputs(",\n  \"command\": ", f);
  json_str(f, c->command);
  fputs(",\n  \"started\": ", f);
  json_str(f, R->started);
  fprintf(f, ",\n  \"machine\": {\"cpus\": %d, \"cpu_model\": ", R->ncpu);
  json_str(f, R->cpu_model);
  fputs(", \"kernel\": ", f);
  json_str(f, R->kernel);
  fputs(", \"load_before\": ", f);
  json_num(f, R->load_before);
  fputs(", \"load_after\": ", f);
  json_num(f, R->load_after);
  fprintf(
      f,
      "},\n  \"config\": {\"workers\": %d, \"read_fraction\": %g, \"keys\": %d, "
      "\"value_size\": %d, \"api\": \"%s\", \"rate\": %g, \"duration_s\": %g, \"warmup_s\": %g, "
      "\"trials\": %d, \"order\": \"%s\", \"sticky_member\": %d, \"degraded_member\": %d, "
      "\"library_options\": ",
      c->workers, c->read_frac, c->keys, c->value_size, c->async_api ? "async" : "sync", c->rate,
      c->duration, c->warmup, c->trials, c->rotate ? "rotated" : "fixed",
      c->sticky_member >= 0 ? c->sticky_member + 1 : 0,
      c->degraded_member >= 0 ? c->degraded_member + 1 : 0);
  json_str(f, c->opt_text);
  fputs("},\n  \"members\": [", f);
  for (size_t i = 0; i < c->hl.n; i++) {
    member_addr(c, (int)i, a, sizeof a);
    fprintf(f, "%s{\"member\": %zu, \"address\": ", i ? ", " : "", i + 1);
    json_str(f, a);
    fprintf(f, ", \"role\": \"%s\", \"degraded\": %s}", role_word(R, (int)i),
            (int)i == c->degraded_member ? "true" : "false");
  }
  fputs("],\n  \"policies\": [\n", f);
  for (int p = 0; p < c->npol; p++) {
    const summary_t *s = &R->sum[p];
    const trial_t *T = trials_of(R, p);
    fputs("    {\"name\": ", f);
    json_str(f, c->pol[p].name);
    fprintf(f, ", \"kind\": \"%s\", \"trials_run\": %d,\n     \"median\": {\"throughput\": ",
            c->pol[p].kind == K_ROUTED ? "zkroute" : "plain", s->n);
    json_num(f, s->thr);
    fputs(", \"throughput_min\": ", f);
    json_num(f, s->n ? s->thr_min : NAN);
    fputs(", \"throughput_max\": ", f);
    json_num(f, s->n ? s->thr_max : NAN);
    fputs(", \"cpu_us_per_op\": ", f);
    json_num(f, s->cpu_us);
    fputs(", \"cpu_percent\": ", f);
    json_num(f, s->cpu_pct);
    fputs(", \"context_switches_per_op\": ", f);
    json_num(f, s->csw);
    fputs(", \"watched_cpu_us_per_op\": ", f);
    json_num(f, s->srv_us);
    fputs(", \"read\": ", f);
    json_lat(f, &s->lat[OP_READ]);
    fputs(", \"write\": ", f);
    json_lat(f, &s->lat[OP_WRITE]);
    fprintf(f, "},\n     \"errors\": {\"read\": %llu, \"write\": %llu},\n     \"members\": ",
            (unsigned long long)s->err[OP_READ], (unsigned long long)s->err[OP_WRITE]);
    json_members(f, c, s->m_ops, s->m_recv);
    fputs(",\n     \"trials\": [\n", f);
    for (int t = 0; t < c->trials; t++) {
      const trial_t *x = &T[t];
      fprintf(f, "       {\"round\": %d, \"ran\": %s", t + 1, x->ran ? "true" : "false");
      if (x->ran) {
        fprintf(f, ", \"order\": %d, \"seconds\": %.3f, \"throughput\": ", x->order + 1,
                x->seconds);
        json_num(f, x->thr);
        fputs(", \"cpu_us_per_op\": ", f);
        json_num(f, x->cpu_us);
        fputs(", \"cpu_percent\": ", f);
        json_num(f, x->cpu_pct);
        fputs(", \"context_switches_per_op\": ", f);
        json_num(f, x->csw);
        fputs(", \"watched_cpu_us_per_op\": [", f);
        for (int i = 0; i < c->npids; i++) {
          if (i) fputs(", ", f);
          json_num(f, x->pid_us[i]);
        }
        fputs("], \"read\": ", f);
        json_lat(f, &x->lat[OP_READ]);
        fputs(", \"write\": ", f);
        json_lat(f, &x->lat[OP_WRITE]);
        fprintf(f, ", \"errors\": {\"read\": %llu, \"write\": %llu, \"first\": \"%s\"}",
                (unsigned long long)x->err[OP_READ], (unsigned long long)x->err[OP_WRITE],
                x->first_err ? zkr_err_name(x->first_err) : "");
        fputs(", \"members\": ", f);
        json_members(f, c, x->m_ops, x->m_recv);
        fprintf(f, ", \"connected_member\": %d, \"leader\": %d, \"pinned\": %s, \"ewma_ms\": [",
                x->member >= 0    ? x->member + 1
                : x->member == -2 ? -1
                                  : 0,
                x->leader + 1, x->pinned ? "true" : "false");
        for (size_t i = 0; i < c->hl.n; i++) {
          if (i) fputs(", ", f);
          json_num(f, x->ewma[i] >= 0 ? x->ewma[i] : NAN);
        }
        fputs("], \"in_read_pool\": [", f);
        for (size_t i = 0; i < c->hl.n; i++)
          fprintf(f, "%s%s", i ? ", " : "", x->in_pool[i] ? "true" : "false");
        fputs("], \"ejections\": [", f);
        for (size_t i = 0; i < c->hl.n; i++)
          fprintf(f, "%s%llu", i ? ", " : "", (unsigned long long)x->ejections[i]);
        fputs("], \"out_of_pool_ms\": [", f);
        for (size_t i = 0; i < c->hl.n; i++) {
          if (i) fputs(", ", f);
          json_num(f, c->pol[p].kind == K_ROUTED ? x->out_ms[i] : NAN);
        }
        fprintf(f, "], \"syncs\": %llu, \"member_reads\": %llu", (unsigned long long)x->syncs,
                (unsigned long long)x->m_reads);
        fputs(", \"load_start\": ", f);
        json_num(f, x->load_start);
        fputs(", \"load_end\": ", f);
        json_num(f, x->load_end);
      }
      fprintf(f, "}%s\n", t + 1 < c->trials ? "," : "");
    }
    fprintf(f, "     ]}%s\n", p + 1 < c->npol ? "," : "");
  }
  fputs("  ],\n  \"targets\": [", f);
  check_t ck[16];
  int nck = collect_checks(R, ck);
  for (int i = 0; i < nck; i++) {
    fputs(i ? ",\n    {\"target\": " : "\n    {\"target\": ", f);
    json_str(f, ck[i].what);
    fputs(", \"measured\": ", f);
    json_num(f, ck[i].value);
    fprintf(f, ", \"limit\": %g, \"at_most\": %s, \"pass\": %s}", ck[i].limit,
            ck[i].at_most ? "true" : "false", check_pass(&ck[i]) ? "true" : "false");
  }
  fputs(nck ? "\n  ]\n}\n" : "]\n}\n", f);
}

/* ---- charts ---- */

static FILE *open_out(const cfg_t *c, const char *name) {
  char path[4096];
  snprintf(path, sizeof path, "%s/%s", c->out_dir, name);
  FILE *f = fopen(path, "w");
  if (!f) warn("%s: %s", path, strerror(errno));
  return f;
}

static void write_plots(const report_t *R) {
  const cfg_t *c = R->c;
  for (int op = 0; op < N_OPS; op++) {
    char name[64];
    snprintf(name, sizeof name, "cdf-%s.dat", op_name[op]);
    FILE *f = open_out(c, name);
    if (!f) return;
    fprintf(f, "q nines");
    for (int p = 0; p < c->npol; p++) fprintf(f, " %s", c->pol[p].name);
    fputc('\n', f);
    for (int q = 0; q < NQ; q++) {
      if (q > 0 && qgrid[q] <= qgrid[q - 1]) continue;
      fprintf(f, "%.6f %.6f", qgrid[q], -log10(1 - qgrid[q]));
      for (int p = 0; p < c->npol; p++) {
        float x = R->sum[p].cdf[op][q];
        if (isnan(x)) fprintf(f, " NaN");
        else fprintf(f, " %.4f", x);
      }
      fputc('\n', f);
    }
    fclose(f);
  }
  FILE *f = open_out(c, "throughput.dat");
  if (!f) return;
  fprintf(f, "policy median min max\n");
  for (int p = 0; p < c->npol; p++)
    fprintf(f, "%s %.1f %.1f %.1f\n", c->pol[p].name, R->sum[p].thr,
            R->sum[p].n ? R->sum[p].thr_min : 0, R->sum[p].n ? R->sum[p].thr_max : 0);
  fclose(f);
  f = open_out(c, "plot.gp");
  if (!f) return;
  const char *label = c->label ? c->label : "zkroute-bench";
  fprintf(f, "# Generated by zkroute-bench; run `gnuplot plot.gp` in this directory.\n");
  fprintf(f, "set terminal pngcairo size 900,560 noenhanced font ',10'\n");
  fprintf(f, "set key top left box opaque\nset grid\nset datafile missing 'NaN'\n");
  fprintf(f, "n = %d\n", c->npol);
  for (int op = 0; op < N_OPS; op++) {
    /* No samples of this kind (-r 100 or -r 0): gnuplot would fail on an
     * empty range, so no chart for it. */
    int any = 0;
    for (int p = 0; p < c->npol; p++) any |= !isnan(R->sum[p].cdf[op][0]);
    if (!any) continue;
    fprintf(f, "set output 'cdf-%s.png'\n", op_name[op]);
    fprintf(f, "set title '%s: %s latency CDF (median across trials)'\n", label, op_name[op]);
    fprintf(f, "set xlabel '%s latency (ms, log scale)'\nset ylabel 'fraction of operations'\n",
            op_name[op]);
    fprintf(f, "set logscale x\nset yrange [0:1]\nset ytics 0.1\nunset y2tics\n");
    fprintf(f, "plot for [i=3:n+2] 'cdf-%s.dat' using i:1 with lines lw 2 title columnheader(i)\n",
            op_name[op]);
    fprintf(f, "set output 'tail-%s.png'\n", op_name[op]);
    fprintf(f, "set title '%s: %s latency by percentile (median across trials)'\n", label,
            op_name[op]);
    fprintf(f, "set ylabel 'percentile'\nset yrange [0:4]\n");
    fprintf(f, "set ytics ('0' 0, '90' 1, '99' 2, '99.9' 3, '99.99' 4)\n");
    fprintf(f, "plot for [i=3:n+2] 'cdf-%s.dat' using i:2 with lines lw 2 title columnheader(i)\n",
            op_name[op]);
    fprintf(f, "set ytics autofreq\nunset logscale x\n");
  }
  fprintf(f, "set output 'throughput.png'\n");
  fprintf(f, "set title '%s: throughput (median; bars: min-max across trials)'\n", label);
  fprintf(f, "set xlabel ''\nset ylabel 'operations per second'\nset yrange [0:*]\nset key off\n");
  fprintf(f, "set style fill solid 0.5\nset boxwidth 0.6\nset xtics nomirror\n");
  fprintf(f, "plot 'throughput.dat' using 0:2:xtic(1) every ::1 with boxes, \\\n"
             "     '' using 0:2:3:4 every ::1 with yerrorbars lc rgb 'black' pt 0, \\\n"
             "     '' using 0:4:(sprintf('%%.0f', $2)) every ::1 with labels offset 0,1\n");
  fclose(f);
  char cmd[4400];
  snprintf(cmd, sizeof cmd, "cd '%s' && gnuplot plot.gp", c->out_dir);
  if (system("command -v gnuplot >/dev/null 2>&1") != 0) {
    warn("gnuplot not found: charts not drawn (data and %s/plot.gp are there)", c->out_dir);
    return;
  }
  if (system(cmd) != 0) warn("gnuplot failed on %s/plot.gp", c->out_dir);
}

/* ---- arguments ---- */

static const char usage_text[] =
    "usage: zkroute-bench [OPTIONS] HOSTS\n"
    "Closed-loop benchmark of zkroute's policies and plain libzookeeper_mt baselines.\n"
    "  -p, --policies LIST   comma-separated, run interleaved in this order (default\n"
    "                        hybrid,round_robin,oracle,sticky,stock); any of hybrid,\n"
    "                        round_robin, leader_only, sticky, boltzmann (zkroute) and\n"
    "                        stock (plain session, random server), oracle (plain\n"
    "                        session on the leader); p2c and same_zone (hybrid with\n"
    "                        that read selector); an entry BASE+key=value+... gives\n"
    "                        a routed entry options of its own, e.g.\n"
    "                        hybrid+leader_read_weight=0.33\n"
    "  -w, --workers N       closed-loop worker threads (default 32)\n"
    "  -d, --duration S      measured seconds per trial (default 20)\n"
    "      --warmup S        unmeasured seconds before each trial (default 5)\n"
    "      --prewarm S       one unmeasured run of the first policy first (default 10)\n"
    "  -t, --trials N        trials (rounds over all policies; default 3)\n"
    "  -r, --reads PCT       percentage of reads (default 80)\n"
    "  -k, --keys N          key space (default 1000)\n"
    "  -s, --value-size B    value bytes (default 128)\n"
    "      --api sync|async  sync calls, or async call + wait (default sync)\n"
    "      --rate OPS        pace the workers to OPS operations/s in total (default:\n"
    "                        closed loop, no pacing); for CPU per op at equal load\n"
    "      --sticky-member N pin `sticky` to member N (1-based, as in HOSTS)\n"
    "      --degraded-member N  mark member N as degraded in the report\n"
    "      --pool-trace FILE append every read-pool change of zkroute trials to FILE\n"
    "      --fault-cmd CMD   shell command run just before each measured window (a\n"
    "                        fault that starts with the window: its first seconds)\n"
    "      --heal-cmd CMD    shell command run right after each measured window\n"
    "      --watch-pids LIST also report the CPU per operation of these processes\n"
    "                        (comma-separated PID or NAME=PID: the servers, the proxy)\n"
    "  -o KEY=VALUE          zkroute option for the routed policies (repeatable)\n"
    "      --prefix PATH     znode holding the keys (default /zkr-bench)\n"
    "      --no-setup        do not create/reset the keys\n"
    "      --out DIR         results.md, results.json, charts (default: no files)\n"
    "      --label TEXT      scenario name in the report\n"
    "      --targets steady|degraded  check the issue's targets (exit 3 on a miss)\n"
    "      --order rotate|fixed  order of the policies in each round (default rotate)\n"
    "      --pause S         pause between trials (default 1)\n"
    "      --seed N          workload seed (default 1)\n"
    "  -q, --quiet           no progress line\n"
    "  -v                    ZooKeeper's log on stderr (repeat for more)\n"
    "  -h, --help            this text\n";

static int parse_num(const char *s, double min, double max, double *out) {
  char *end;
  errno = 0;
  double v = strtod(s, &end);
  if (errno || end == s || *end || !(v >= min && v <= max)) return 0;
  *out = v;
  return 1;
}

static void num_arg(const char *name, const char *s, double min, double max, double *out) {
  if (!parse_num(s, min, max, out)) {
    fprintf(stderr, "zkroute-bench: %s: '%s' is not a number from %g to %g\n", name, s, min, max);
    exit(EXIT_USAGE);
  }
}

static void int_arg(const char *name, const char *s, int min, int max, int *out) {
  double v;
  num_arg(name, s, min, max, &v);
  if (v != floor(v)) {
    fprintf(stderr, "zkroute-bench: %s: '%s' is not an integer\n", name, s);
    exit(EXIT_USAGE);
  }
  *out = (int)v;
}

static void add_policy(cfg_t *c, const char *name) {
  if (c->npol >= MAXP) {
    fprintf(stderr, "zkroute-bench: at most %d policies\n", MAXP);
    exit(EXIT_USAGE);
  }
  policy_t *p = &c->pol[c->npol];
  memset(p, 0, sizeof *p);
  if (strlen(name) >= sizeof p->name) {
    fprintf(stderr, "zkroute-bench: policy entry '%s' is too long\n", name);
    exit(EXIT_USAGE);
  }
  snprintf(p->name, sizeof p->name, "%s", name);
  /* BASE+key=value+...: a routed policy with options of its own. */
  char base[sizeof p->name];
  snprintf(base, sizeof base, "%s", name);
  char *plus = strchr(base, '+');
  if (plus) {
    *plus = '\0';
    snprintf(p->opts, sizeof p->opts, "%s", plus + 1);
  }
  zkr_options_t probe = ZKR_OPTIONS_INIT;
  if (!plus && strcmp(name, "stock") == 0) p->kind = K_STOCK;
  else if (!plus && strcmp(name, "oracle") == 0) p->kind = K_ORACLE;
  else if (strcmp(base, "p2c") == 0 || strcmp(base, "same_zone") == 0) {
    /* hybrid with a ready-made read selector (docs/selectors.md) */
    p->kind = K_ROUTED;
    p->zkr_policy = ZKR_POLICY_HYBRID;
    p->selector = base[0] == 'p' ? zkr_selector_p2c : zkr_selector_same_zone;
  } else if (zkr_options_set(&probe, "policy", base) == ZOK) {
    p->kind = K_ROUTED;
    p->zkr_policy = probe.policy;
  } else {
    fprintf(stderr, "zkroute-bench: unknown policy '%s'\n", name);
    exit(EXIT_USAGE);
  }
  if (p->kind == K_ROUTED && apply_entry_options(&probe, p->opts) != ZOK) {
    fprintf(stderr, "zkroute-bench: policy '%s': bad +key=value option\n", name);
    exit(EXIT_USAGE);
  }
  for (int i = 0; i < c->npol; i++)
    if (strcmp(c->pol[i].name, name) == 0) {
      fprintf(stderr, "zkroute-bench: policy '%s' given twice\n", name);
      exit(EXIT_USAGE);
    }
  c->npol++;
}

static void parse_policies(cfg_t *c, const char *list) {
  char *dup = strdup(list), *save = NULL;
  if (!dup) die("out of memory");
  c->npol = 0;
  for (char *tok = strtok_r(dup, ",", &save); tok; tok = strtok_r(NULL, ",", &save))
    if (*tok) add_policy(c, tok);
  free(dup);
  if (c->npol == 0) {
    fprintf(stderr, "zkroute-bench: no policy given\n");
    exit(EXIT_USAGE);
  }
}

static void apply_option(cfg_t *c, const char *kv) {
  char key[128];
  const char *eq = strchr(kv, '=');
  int rc = ZKR_EOPTION;
  if (eq && (size_t)(eq - kv) < sizeof key) {
    memcpy(key, kv, (size_t)(eq - kv));
    key[eq - kv] = '\0';
    if (strcmp(key, "policy") == 0) {
      fprintf(stderr, "zkroute-bench: choose policies with -p, not -o policy=\n");
      exit(EXIT_USAGE);
    }
    rc = zkr_options_set(&c->opts, key, eq + 1);
  }
  if (rc != ZOK) {
    fprintf(stderr, "zkroute-bench: option '%s': %s\n", kv,
            eq ? zkr_strerror(rc) : "expected KEY=VALUE");
    exit(EXIT_USAGE);
  }
  size_t off = strlen(c->opt_text);
  snprintf(c->opt_text + off, sizeof c->opt_text - off, "%s`%s`", off ? ", " : "", kv);
}

enum {
  O_WARMUP = 256,
  O_RATE,
  O_PREWARM,
  O_API,
  O_STICKY,
  O_DEGRADED,
  O_PREFIX,
  O_NOSETUP,
  O_OUT,
  O_LABEL,
  O_TARGETS,
  O_ORDER,
  O_PAUSE,
  O_SEED,
  O_PIDS,
  O_TRACE,
  O_FAULT,
  O_HEAL
};

static const struct option long_opts[] = {
    {"policies", required_argument, NULL, 'p'},
    {"workers", required_argument, NULL, 'w'},
    {"duration", required_argument, NULL, 'd'},
    {"warmup", required_argument, NULL, O_WARMUP},
    {"prewarm", required_argument, NULL, O_PREWARM},
    {"trials", required_argument, NULL, 't'},
    {"reads", required_argument, NULL, 'r'},
    {"keys", required_argument, NULL, 'k'},
    {"value-size", required_argument, NULL, 's'},
    {"api", required_argument, NULL, O_API},
    {"rate", required_argument, NULL, O_RATE},
    {"sticky-member", required_argument, NULL, O_STICKY},
    {"degraded-member", required_argument, NULL, O_DEGRADED},
    {"prefix", required_argument, NULL, O_PREFIX},
    {"no-setup", no_argument, NULL, O_NOSETUP},
    {"out", required_argument, NULL, O_OUT},
    {"label", required_argument, NULL, O_LABEL},
    {"targets", required_argument, NULL, O_TARGETS},
    {"order", required_argument, NULL, O_ORDER},
    {"pause", required_argument, NULL, O_PAUSE},
    {"seed", required_argument, NULL, O_SEED},
    {"watch-pids", required_argument, NULL, O_PIDS},
    {"pool-trace", required_argument, NULL, O_TRACE},
    {"fault-cmd", required_argument, NULL, O_FAULT},
    {"heal-cmd", required_argument, NULL, O_HEAL},
    {"quiet", no_argument, NULL, 'q'},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
};

static void parse_args(cfg_t *c, int argc, char **argv) {
  int opt, v;
  double d;
  /* The report names the program, not libtool's wrapper or its path. */
  char *argv0 = argv[0];
  argv[0] = (char *)"zkroute-bench";
  c->command = tool_shell_join(argc, argv);
  if (!c->command) die("out of memory");
  argv[0] = argv0;
  while ((opt = getopt_long(argc, argv, "p:w:d:t:r:k:s:o:qvh", long_opts, NULL)) != -1) {
    switch (opt) {
    case 'p': parse_policies(c, optarg); break;
    case 'w': int_arg("--workers", optarg, 1, 4096, &c->workers); break;
    case 'd': num_arg("--duration", optarg, 0.1, 86400, &c->duration); break;
    case O_WARMUP: num_arg("--warmup", optarg, 0, 3600, &c->warmup); break;
    case O_PREWARM: num_arg("--prewarm", optarg, 0, 3600, &c->prewarm); break;
    case 't': int_arg("--trials", optarg, 1, 1000, &c->trials); break;
    case 'r':
      num_arg("--reads", optarg, 0, 100, &d);
      c->read_frac = d / 100;
      break;
    case 'k': int_arg("--keys", optarg, 1, 10000000, &c->keys); break;
    case 's': int_arg("--value-size", optarg, 0, 1000000, &c->value_size); break;
    case O_RATE: num_arg("--rate", optarg, 0, 1e9, &c->rate); break;
    case O_API:
      if (strcmp(optarg, "sync") == 0) c->async_api = 0;
      else if (strcmp(optarg, "async") == 0) c->async_api = 1;
      else {
        fprintf(stderr, "zkroute-bench: --api: sync or async\n");
        exit(EXIT_USAGE);
      }
      break;
    case O_STICKY:
      int_arg("--sticky-member", optarg, 1, MAXM, &v);
      c->sticky_member = v - 1;
      break;
    case O_DEGRADED:
      int_arg("--degraded-member", optarg, 1, MAXM, &v);
      c->degraded_member = v - 1;
      break;
    case 'o': apply_option(c, optarg); break;
    case O_PREFIX: c->prefix = optarg; break;
    case O_NOSETUP: c->setup = 0; break;
    case O_OUT: c->out_dir = optarg; break;
    case O_LABEL: c->label = optarg; break;
    case O_TARGETS:
      if (strcmp(optarg, "steady") && strcmp(optarg, "degraded")) {
        fprintf(stderr, "zkroute-bench: --targets: steady or degraded\n");
        exit(EXIT_USAGE);
      }
      c->targets = optarg;
      break;
    case O_ORDER:
      if (strcmp(optarg, "rotate") == 0) c->rotate = 1;
      else if (strcmp(optarg, "fixed") == 0) c->rotate = 0;
      else {
        fprintf(stderr, "zkroute-bench: --order: rotate or fixed\n");
        exit(EXIT_USAGE);
      }
      break;
    case O_PAUSE: num_arg("--pause", optarg, 0, 3600, &c->pause); break;
    case O_SEED:
      num_arg("--seed", optarg, 0, 1e15, &d);
      c->seed = (uint64_t)d;
      break;
    case O_PIDS: {
      char *dup = strdup(optarg), *save = NULL;
      if (!dup) die("out of memory");
      c->npids = 0;
      for (char *tok = strtok_r(dup, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        if (c->npids >= MAXM) break;
        char *eq = strchr(tok, '=');
        if (eq) *eq = '\0';
        snprintf(c->pid_names[c->npids], sizeof c->pid_names[0], "%s%s", eq ? "" : "pid ", tok);
        int_arg("--watch-pids", eq ? eq + 1 : tok, 1, INT32_MAX, &c->pids[c->npids++]);
      }
      free(dup);
      break;
    }
    case O_TRACE: c->pool_trace = optarg; break;
    case O_FAULT: c->fault_cmd = optarg; break;
    case O_HEAL: c->heal_cmd = optarg; break;
    case 'q': c->quiet = 1; break;
    case 'v': c->verbose++; break;
    case 'h': fputs(usage_text, stdout); exit(EXIT_SUCCESS);
    default: fputs(usage_text, stderr); exit(EXIT_USAGE);
    }
  }
  if (optind + 1 != argc) {
    fprintf(stderr, "zkroute-bench: expected one HOSTS operand\n%s", usage_text);
    exit(EXIT_USAGE);
  }
  c->hosts = argv[optind];
  int rc = zkr__hosts_parse(c->hosts, &c->hl);
  if (rc != ZOK) {
    fprintf(stderr, "zkroute-bench: host list '%s': %s\n", c->hosts, zkr_strerror(rc));
    exit(EXIT_USAGE);
  }
  if (c->sticky_member >= (int)c->hl.n || c->degraded_member >= (int)c->hl.n) {
    fprintf(stderr, "zkroute-bench: member numbers go from 1 to %zu\n", c->hl.n);
    exit(EXIT_USAGE);
  }
  size_t pl = strlen(c->prefix);
  if (pl < 2 || c->prefix[0] != '/' || c->prefix[pl - 1] == '/') {
    fprintf(stderr, "zkroute-bench: --prefix must be an absolute znode path other than /\n");
    exit(EXIT_USAGE);
  }
}

static void machine_info(report_t *R) {
  R->ncpu = (int)sysconf(_SC_NPROCESSORS_ONLN);
  snprintf(R->cpu_model, sizeof R->cpu_model, "unknown CPU");
  FILE *f = fopen("/proc/cpuinfo", "r");
  if (f) {
    char line[512];
    while (fgets(line, sizeof line, f)) {
      if (strncmp(line, "model name", 10) == 0) {
        char *p = strchr(line, ':');
        if (p) {
          p++;
          while (*p == ' ') p++;
          p[strcspn(p, "\n")] = '\0';
          snprintf(R->cpu_model, sizeof R->cpu_model, "%s", p);
        }
        break;
      }
    }
    fclose(f);
  }
  struct utsname u;
  if (uname(&u) == 0) snprintf(R->kernel, sizeof R->kernel, "%s", u.release);
  time_t now = time(NULL);
  struct tm tm;
  gmtime_r(&now, &tm);
  strftime(R->started, sizeof R->started, "%Y-%m-%d %H:%M:%S UTC", &tm);
}

int main(int argc, char **argv) {
  static cfg_t c = {.workers = 32,
                    .trials = 3,
                    .keys = 1000,
                    .value_size = 128,
                    .rotate = 1,
                    .setup = 1,
                    .duration = 20,
                    .warmup = 5,
                    .prewarm = 10,
                    .pause = 1,
                    .read_frac = 0.8,
                    .sticky_member = -1,
                    .degraded_member = -1,
                    .opts = ZKR_OPTIONS_INIT,
                    .prefix = "/zkr-bench",
                    .seed = 1};
  parse_policies(&c, "hybrid,round_robin,oracle,sticky,stock");
  parse_args(&c, argc, argv);
  qgrid_init();
  static const ZooLogLevel levels[] = {ZOO_LOG_LEVEL_ERROR, ZOO_LOG_LEVEL_WARN, ZOO_LOG_LEVEL_INFO,
                                       ZOO_LOG_LEVEL_DEBUG};
  zoo_set_debug_level(c.verbose <= 0 ? (ZooLogLevel)0 : levels[c.verbose > 4 ? 3 : c.verbose - 1]);
  signal(SIGPIPE, SIG_IGN);
  struct sigaction sa = {.sa_handler = on_signal};
  sigaction(SIGINT, &sa, NULL);
  sigaction(SIGTERM, &sa, NULL);
  if (c.out_dir && mkdir(c.out_dir, 0777) != 0 && errno != EEXIST)
    die("%s: %s", c.out_dir, strerror(errno));

  char **paths = calloc((size_t)c.keys, sizeof *paths);
  char *value = malloc((size_t)c.value_size + 1);
  if (!paths || !value) die("out of memory");
  for (int i = 0; i < c.value_size; i++) value[i] = (char)('a' + i % 26);
  for (int i = 0; i < c.keys; i++)
    if (asprintf(&paths[i], "%s/k%07d", c.prefix, i) < 0) die("out of memory");

  static report_t R;
  R.c = &c;
  machine_info(&R);
  R.load_before = tool_loadavg1();
  R.leader = find_leader(&c, R.roles);
  if (R.leader < 0) die("no member of %s says it is the leader (is srvr whitelisted?)", c.hosts);
  if (c.setup) setup_keys(&c, paths, value);
  R.tr = calloc((size_t)c.npol * (size_t)c.trials, sizeof *R.tr);
  if (!R.tr) die("out of memory");

  int failures = 0;
  if (c.prewarm > 0) {
    progress_t pg = {1, 1, "prewarm"};
    run_trial(&c, &c.pol[0], paths, value, c.prewarm, c.seed, &pg, NULL);
    sleep_s(c.pause);
  }
  for (int t = 0; t < c.trials && !interrupted; t++) {
    for (int k = 0; k < c.npol && !interrupted; k++) {
      int p = c.rotate ? (k + t) % c.npol : k;
      trial_t *tr = &trials_of(&R, p)[t];
      tr->order = k;
      progress_t pg = {t + 1, c.trials, "round"};
      uint64_t seed = splitmix(c.seed + (uint64_t)t * 7919u);
      if (!run_trial(&c, &c.pol[p], paths, value, c.duration, seed, &pg, tr)) {
        if (!interrupted) failures++;
      } else if (!c.quiet) {
        fprintf(
            stderr,
            "%s[round %d/%d] %-12s %8.0f ops/s  read P50 %.2f P99 %.2f  write P50 %.2f P99 %.2f ms"
            "  errors %llu/%llu%s%s  CPU %.1f µs/op  load %.2f\n",
            isatty(STDERR_FILENO) ? "\r\033[K" : "", t + 1, c.trials, c.pol[p].name, tr->thr,
            tr->lat[OP_READ].p50, tr->lat[OP_READ].p99, tr->lat[OP_WRITE].p50,
            tr->lat[OP_WRITE].p99, (unsigned long long)tr->err[OP_READ],
            (unsigned long long)tr->err[OP_WRITE], tr->first_err ? " first " : "",
            tr->first_err ? zkr_err_name(tr->first_err) : "", tr->cpu_us, tr->load_end);
      }
      if (!interrupted) sleep_s(c.pause);
    }
  }
  if (interrupted) fprintf(stderr, "\nzkroute-bench: interrupted; reporting the trials that ran\n");
  R.load_after = tool_loadavg1();
  find_leader(&c, NULL);
  for (int p = 0; p < c.npol; p++) summarize(&c, trials_of(&R, p), c.trials, &R.sum[p]);

  write_markdown(stdout, &R);
  fflush(stdout);
  if (c.out_dir) {
    FILE *f = open_out(&c, "results.md");
    if (f) {
      write_markdown(f, &R);
      fclose(f);
    }
    f = open_out(&c, "results.json");
    if (f) {
      write_json(f, &R);
      fclose(f);
    }
    write_plots(&R);
  }
  check_t ck[16];
  int nck = collect_checks(&R, ck), missed = 0;
  for (int i = 0; i < nck; i++) missed += !check_pass(&ck[i]);
  for (int i = 0; i < c.keys; i++) free(paths[i]);
  free(paths);
  free(value);
  free(R.tr);
  zkr__hosts_free(&c.hl);
  free(c.command);
  if (failures) return EXIT_FAILURE;
  return missed ? EXIT_TARGETS : EXIT_SUCCESS;
}
