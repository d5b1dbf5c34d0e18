/* One trial of one policy (bench.h): the client (a zkroute handle or a
 * plain zhandle_t), the closed-loop workers and their operations, the
 * warm-up and the measured window, the figures of the window (latencies,
 * throughput, CPU, per-member counts, hedges, syncs, the read pool), and
 * the --pool-trace thread. */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench.h"
#include "tool-common.h"

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

/* A linearizable read: sync pipelined before the get, on one session
 * (stock_unsynced: the get alone). */
static int op_read(worker_t *w, const char *path) {
  run_t *r = w->r;
  struct Stat st;
  int len = w->buflen, rc;
  if (r->z) {
    if (!r->c->async_api) return zkr_get(r->z, path, 0, w->buf, &len, &st);
    rc = zkr_aget(r->z, path, 0, get_done, w);
    return rc == ZOK ? wait_done(w) : rc;
  }
  if (!r->p->unsynced) {
    rc = zoo_async(r->zh, path, sync_ignored, NULL);
    if (rc != ZOK) return rc;
  }
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
      bench_warn("%s: zkr_init_opts: %s", p->name, zkr_strerror(rc));
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
      bench_warn("oracle: no member says it is the leader");
      return 0;
    }
    *oracle_member = l;
    zkr__hosts_format(&c->hl.v[l], c->hl.chroot, connect, sizeof connect);
  }
  atomic_store(&r->zh_state, 0);
  r->zh = zookeeper_init(connect, plain_watcher, RECV_TIMEOUT_MS, NULL, r, 0);
  if (!r->zh) {
    bench_warn("%s: zookeeper_init(%s) failed: %s", p->name, connect, strerror(errno));
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

/* One trial of one policy: open, warm up, measure `secs`, close.  With
 * t == NULL nothing is kept (the pre-warm-up).  Returns 1 when it ran. */
int run_trial(const cfg_t *c, const policy_t *p, char **paths, const char *value, double secs,
              uint64_t seed, const progress_t *pg, trial_t *t) {
  run_t r = {.c = c, .p = p, .paths = paths, .value = value};
  atomic_store(&r.t0, UINT64_MAX);
  atomic_store(&r.t1, 0);
  int oracle_member = -1;
  if (!open_client(&r, &oracle_member)) return 0;
  if (!wait_ready(&r)) {
    bench_warn("%s: client not ready after %d s", p->name, READY_TIMEOUT_MS / 1000);
    close_client(&r);
    return 0;
  }
  worker_t *w = calloc((size_t)c->workers, sizeof *w);
  if (!w) bench_die("out of memory");
  int started = 0;
  for (int i = 0; i < c->workers; i++) {
    w[i].r = &r;
    w[i].id = i;
    w[i].rng = splitmix(seed * 1000003u + (uint64_t)i) | 1;
    w[i].buflen = c->value_size + 64;
    w[i].buf = malloc((size_t)w[i].buflen);
    if (!w[i].buf) bench_die("out of memory");
    pthread_mutex_init(&w[i].mu, NULL);
    pthread_cond_init(&w[i].cv, NULL);
    if (pthread_create(&w[i].th, NULL, worker_main, &w[i]) != 0) {
      bench_warn("%s: cannot start worker %d", p->name, i);
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
    if (c->fault_cmd && system(c->fault_cmd) != 0)
      bench_warn("--fault-cmd failed: %s", c->fault_cmd);
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
    if (c->heal_cmd && system(c->heal_cmd) != 0) bench_warn("--heal-cmd failed: %s", c->heal_cmd);
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
        bench_warn("sticky was meant to stay on member %d, but operations went elsewhere",
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
