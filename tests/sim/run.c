/* One schedule from its seed to its verdict: the world, the ensemble (3 or
 * 5 servers), the network, the workload on one handle, the fault phase,
 * the heal, quiescence, the application's close, then the committed log
 * copied into the history and every checker run on it. */
#include "run.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "faults.h"
#include "routed.h"
#include "sim.h"
#include "workload.h"

extern int sim_cli_misuse;
extern char sim_cli_misuse_msg[160];

static int hkind(int op) {
  switch (op) {
  case OP_CREATE: return H_CREATE;
  case OP_DELETE: return H_DELETE;
  case OP_SET: return H_SET;
  }
  return 0;
}

/* The committed log, as the checkers see it. */
static void copy_log(hist_t *h) {
  sim_ens_t *e = sim_e;
  for (int i = 0; i < e->committed; i++) {
    sim_txn_t *t = &e->log[i];
    if (t->type == OP_ERROR) continue;
    htxn_t *x = hist_txn(h);
    x->zxid = t->zxid;
    x->t_commit = t->t_commit;
    x->close = t->type == OP_CLOSE;
    x->close_asked = x->close && t->origin >= 0;
    x->create_session = t->type == OP_CREATE_SESSION;
    x->session = t->sess >= 0 && t->sess < e->nsess ? e->sess[t->sess].id : 0;
    for (int k = 0; k < t->nops; k++) {
      sim_subop_t *o = &e->ops[t->ops_off + k];
      int kind = hkind(o->kind);
      if (!kind) continue;
      hlsub_t *s = hist_lsub(h, x);
      s->kind = kind;
      snprintf(s->path, sizeof s->path, "%s", e->paths[o->path].name);
      const sim_nver_t *v = ens_state(o->path, i + 1);
      s->vlen = o->dlen < H_VAL ? o->dlen : H_VAL - 1;
      memcpy(s->value, o->data, (size_t)s->vlen);
      s->owner = kind == H_CREATE ? v->owner : 0;
      s->version = v->version;
    }
  }
}

/* The reads served that found no node, as the watch checker sees them. */
static void copy_nones(hist_t *h) {
  sim_ens_t *e = sim_e;
  for (int i = 0; i < e->nserved; i++) {
    hnone_t *x = hist_none(h);
    x->t = e->served[i].t;
    x->zxid = e->served[i].zxid;
    int k = e->served[i].kind;
    x->kind = k == OP_GET ? H_GET : k == OP_EXISTS ? H_EXISTS : k == OP_CHILDREN ? H_CHILDREN : 0;
    x->watch = e->served[i].watch;
    snprintf(x->path, sizeof x->path, "%s", e->paths[e->served[i].path].name);
  }
}

static uint64_t fnv(uint64_t h, const void *p, size_t n) {
  const unsigned char *b = p;
  for (size_t i = 0; i < n; i++) h = (h ^ b[i]) * 1099511628211ULL;
  return h;
}

/* Every recorded field but pointers, so that two runs of one seed can be
 * compared byte for byte. */
static uint64_t digest(const hist_t *h) {
  uint64_t d = 1469598103934665603ULL;
  for (int i = 0; i < h->nops; i++) d = fnv(d, &h->ops[i], sizeof h->ops[i]);
  for (int i = 0; i < h->nev; i++) d = fnv(d, &h->ev[i], sizeof h->ev[i]);
  for (int i = 0; i < h->nlog; i++) d = fnv(d, &h->log[i], sizeof h->log[i]);
  for (int i = 0; i < h->nsubs; i++) d = fnv(d, &h->subs[i], sizeof h->subs[i]);
  return d;
}

static hist_t *H_cur;

static void stale_mark(int s, int on) {
  hev_t *e = hist_ev(H_cur, E_MARK);
  e->t = sim_w->now;
  e->stale = on ? 1 : 2;
  snprintf(e->mark, sizeof e->mark, "sim%d %s", s + 1,
           on ? "deposed, may serve old state" : "no longer deposed");
}

static void fault_mark(const char *what) {
  hev_t *e = hist_ev(H_cur, E_MARK);
  e->t = sim_w->now;
  snprintf(e->mark, sizeof e->mark, "%s", what);
}

/* Opens a span of h->hwin when ok turns 1, closes it when it turns 0. */
static void healthy_span(hist_t *h, int *in, int ok) {
  if (ok && !*in && h->nhwin < H_MAXWIN) {
    *in = 1;
    h->hwin[h->nhwin].start = sim_w->now;
    h->hwin[h->nhwin].end = UINT64_MAX;
  } else if (!ok && *in) {
    *in = 0;
    h->hwin[h->nhwin++].end = sim_w->now;
  }
}

static int quiet(void *a) {
  wl_t *w = a;
  return wl_idle(w) && (wl_connected(w) || wl_ended(w));
}

int sim_run(const sim_opts_t *o, sim_result_t *r) {
  memset(r, 0, sizeof *r);
  sim_world_t w;
  sim_net_t net;
  sim_ens_t ens;
  hist_t h;
  sim_world_init(&w, o->seed);
  w.bug = o->bug;
  w.io_loss_pct = o->io_loss_pct;
  w.slow_calls = o->slow_calls;
  int n = sim_chance(30) ? 5 : 3;
  net_init(&net);
  ens_init(&ens, n);
  cli_init();
  hist_init(&h);
  h.fifo_completions = o->mode == SIM_STOCK;
  h.writes_after_end = o->writes_after_end;
  char hosts[128];
  size_t len = 0;
  for (int s = 0; s < n; s++)
    len += (size_t)snprintf(hosts + len, sizeof hosts - len, "%ssim%d:2181", s ? "," : "", s + 1);
  int timeout = (int)sim_range(1500, 4000);
  uint64_t span = (uint64_t)(o->seconds > 0 ? o->seconds : 6) * 1000 * SIM_MS;

  sim_stale_hook = stale_mark;
  sim_fault_hook = fault_mark;
  H_cur = &h;
  const zkr__zk_t *stock = cli_table();
  const zkr__zk_t *app = o->mode == SIM_ROUTED ? routed_begin(o->session, o->idle_park_ms) : stock;
  wl_t *wl = wl_start(&h, app, stock, hosts, timeout);
  if (o->mode == SIM_ROUTED) wl_set_blocking(wl, routed_blocking());
  r->faults = faults_plan(&h, span, (uint64_t)timeout * SIM_MS);
  int in_win = 0;
  while (sim_w->now < span && !w.livelock && sim_step()) {
    if (!h.healthy && !h.nmarks && ens_healthy()) {
      h.healthy = 1;
      h.t_healthy = sim_w->now;
    }
    if (h.nmarks) healthy_span(&h, &in_win, ens_healthy() && !faults_active());
  }
  healthy_span(&h, &in_win, 0);
  faults_heal();
  uint64_t t_stop = span + 1500 * SIM_MS;
  while (sim_w->now < t_stop && !w.livelock && sim_step()) {
    healthy_span(&h, &in_win, ens_healthy());
  }
  wl_stop(wl);
  healthy_span(&h, &in_win, 0);
  /* Quiescence: every operation answered and the handle connected, then
   * time for the last notifications to arrive. */
  uint64_t limit = t_stop + 60000 * SIM_MS;
  if (!sim_run_until(quiet, wl, limit)) h.no_quiescence = 1;
  uint64_t grace = sim_w->now + 2000 * SIM_MS;
  while (sim_w->now < grace && !w.livelock && sim_step()) {
  }
  h.t_quiet = sim_w->now;
  wl_close(wl);
  uint64_t end = sim_w->now + 500 * SIM_MS;
  while (sim_w->now < end && !w.livelock && sim_step()) {
  }
  if (o->mode == SIM_ROUTED) routed_end();
  h.t_end = sim_w->now;
  h.livelock = w.livelock;
  h.misuse = sim_cli_misuse;
  memcpy(h.misuse_msg, sim_cli_misuse_msg, sizeof h.misuse_msg);
  copy_log(&h);
  copy_nones(&h);

  check_init(&r->check);
  check_all(&h, &r->check);
  r->violations = check_total(&r->check);
  r->servers = n;
  r->events = w.events;
  r->sim_ns = sim_w->now;
  r->ops = h.nops;
  r->txns = h.nlog;
  r->digest = digest(&h);
  if (o->verbose) {
    for (int i = 0; i < h.nev; i++)
      if (h.ev[i].type == E_MARK) printf("  %8.3f s  %s\n", (double)h.ev[i].t / 1e9, h.ev[i].mark);
    if (getenv("SIM_DUMP")) {
      for (int i = 0; i < h.nev; i++) {
        const hev_t *e = &h.ev[i];
        if (e->type == E_MARK) {
          printf("%6d %9.6f MARK %s\n", i, (double)e->t / 1e9, e->mark);
        } else if (e->type == E_WATCH) {
          printf("%6d %9.6f WATCH g%d pair %d type %d state %d %s\n", i, (double)e->t / 1e9, e->gen,
                 e->pair, e->wtype, e->wstate, e->path);
        } else {
          const hop_t *p = &h.ops[e->op];
          printf("%6d %9.6f %s op %d g%d t%d kind %d %s v'%s' ver %d pair %d call %d rc %d "
                 "mz %#llx cz %#llx vo %d cid %#llx\n",
                 i, (double)e->t / 1e9, e->type == E_INVOKE ? "INV" : "CMP", p->id, p->gen, p->task,
                 p->kind, p->path, p->value, p->version, p->pair, p->call_rc, p->rc,
                 (unsigned long long)p->mzxid, (unsigned long long)p->czxid, p->version_out,
                 (unsigned long long)p->client_id);
        }
      }
      for (int i = 0; i < h.nlog; i++) {
        const htxn_t *t = &h.log[i];
        printf("TXN %#llx t %.6f sess %#llx close %d cs %d:", (unsigned long long)t->zxid,
               (double)t->t_commit / 1e9, (unsigned long long)t->session, t->close,
               t->create_session);
        for (int k = 0; k < t->n; k++) {
          const hlsub_t *s = &h.subs[t->first + k];
          printf(" [%d %s '%s' v%d o%#llx]", s->kind, s->path, s->value, s->version,
                 (unsigned long long)s->owner);
        }
        printf("\n");
      }
    }
  }
  wl_free(wl);
  cli_free();
  ens_free(&ens);
  net_free(&net);
  sim_world_free(&w);
  hist_free(&h);
  return r->violations;
}
