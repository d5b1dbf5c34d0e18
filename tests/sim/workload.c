/* The seeded workload: several simulated application threads ("tasks",
 * interleaved by the event loop) using one handle the way an application
 * uses libzookeeper_mt (stock mode: the simulated zhandle itself, through
 * the zkapi table; routed mode: the same calls through zkroute): async
 * reads and writes, watches with several (watcher, context) pairs and the
 * global watcher, ephemeral and sequential creates, multi, zoo_async,
 * watch removal, add_auth, and a new handle after the session expires.
 * Every invocation, completion and watcher call is recorded (history.h).
 * Each handle generation works under its own /g<N>, so that histories of
 * different sessions never share a key. */
#include "workload.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim.h"

#define MAXT 6
#define NKEYS 5
#define NX 3 /* keys the external writer writes */
#define EXT_TASK -2
#define MAXMADE 48

typedef struct task {
  int id, outstanding, running;
} task_t;

typedef struct multi_ctx {
  zoo_op_t ops[H_SUBS];
  zoo_op_result_t res[H_SUBS];
  char bufs[H_SUBS][H_PATH];
  char created[H_SUBS][H_PATH];
  struct Stat stats[H_SUBS];
  char vals[H_SUBS][H_VAL];
} multi_ctx_t;

struct wl {
  const wl_blocking_t *B; /* routed mode: blocking calls */
  int in_blocking;
  int blocking_op; /* wl_take_blocking_op: the call being made, -1 none */
  hist_t *h;
  const zkr__zk_t *T;
  zhandle_t *zh;
  int gen, ready, setup_pending, setup_failed, stopping, reopen_pending, timeout_ms, ntasks, seq;
  task_t tasks[MAXT];
  int32_t lastver[NKEYS];
  char made[MAXMADE][H_PATH];
  int nmade;
  multi_ctx_t **multi; /* by op id */
  int capmulti;
  int outstanding;
  const char *hosts;
  /* The other client: a second session (always the stock model) writing
   * /g<N>/x<i>, which the application reads with zoo_async + get. */
  const zkr__zk_t *X;
  zhandle_t *xzh;
  int xout, xgen, xmade[NX], xreopen;
};

static wl_t *W;
static char ctxs[4];
static void wa(zhandle_t *zh, int type, int state, const char *path, void *ctx);
static void wb(zhandle_t *zh, int type, int state, const char *path, void *ctx);
static void wdef(zhandle_t *zh, int type, int state, const char *path, void *ctx);

/* Pair ids: (wa|wb) x ctxs[0..2], and the global pair (wdef, &ctxs[3]). */
static int pair_id(watcher_fn fn, void *ctx) {
  int f = fn == wa ? 0 : fn == wb ? 1 : 2;
  int c = (int)((char *)ctx - ctxs);
  if (f == 2) return 6;
  return f * 3 + c;
}

static watcher_fn pair_fn(int id) { return id == 6 ? wdef : id < 3 ? wa : wb; }
static void *pair_ctx(int id) { return id == 6 ? &ctxs[3] : &ctxs[id % 3]; }

static void record_watch(zhandle_t *zh, watcher_fn fn, int type, int state, const char *path,
                         void *ctx) {
  hev_t *e = hist_ev(W->h, E_WATCH);
  e->t = sim_w->now;
  e->gen = zh == W->zh ? W->gen : -1;
  e->pair = pair_id(fn, ctx);
  e->wtype = type;
  e->wstate = state;
  snprintf(e->path, sizeof e->path, "%s", path ? path : "");
  if (zh == W->zh) {
    const clientid_t *cid = W->T->zoo_client_id(zh);
    e->client_id = cid ? cid->client_id : -1;
  }
}

static void reopen(void *a, uint64_t b);

static void wa(zhandle_t *zh, int type, int state, const char *path, void *ctx) {
  record_watch(zh, wa, type, state, path, ctx);
}
static void wb(zhandle_t *zh, int type, int state, const char *path, void *ctx) {
  record_watch(zh, wb, type, state, path, ctx);
}

static void wdef(zhandle_t *zh, int type, int state, const char *path, void *ctx) {
  record_watch(zh, wdef, type, state, path, ctx);
  if (zh != W->zh || type != ZOO_SESSION_EVENT) return;
  hgen_t *g = &W->h->gens[W->gen];
  if (state == ZOO_CONNECTED_STATE && !g->client_id)
    g->client_id = W->T->zoo_client_id(zh)->client_id;
  if ((state == ZOO_EXPIRED_SESSION_STATE || state == ZOO_AUTH_FAILED_STATE) && !g->ended) {
    g->ended = 1;
    g->t_ended = sim_w->now;
    if (!W->stopping && !W->reopen_pending) {
      W->reopen_pending = 1;
      sim_after_app(sim_range(10, 200) * SIM_MS, reopen, NULL, 0);
    }
  }
}

/* ---- recording ---- */

static hop_t *invoke(int task, int kind, const char *path) {
  hop_t *o = hist_op(W->h);
  o->task = task;
  o->gen = W->gen;
  o->kind = kind;
  snprintf(o->path, sizeof o->path, "%s", path ? path : "");
  o->t_inv = sim_w->now;
  hev_t *e = hist_ev(W->h, E_INVOKE);
  e->op = o->id;
  e->t = sim_w->now;
  e->gen = W->gen;
  o->e_inv = W->h->nev - 1;
  return o;
}

static const void *tag(hop_t *o) { return (const void *)(uintptr_t)(o->id + 1); }

static void issued(hop_t *o, int rc) {
  o->call_rc = rc;
  o->e_ret = W->h->nev;
  if (rc == ZOK) {
    W->outstanding++;
    if (o->task >= 0) W->tasks[o->task].outstanding++;
  }
}

static hop_t *complete(const void *data, int rc) {
  int id = (int)(uintptr_t)data - 1;
  hist_t *h = W->h;
  if (id < 0 || id >= h->nops) return NULL;
  hop_t *o = &h->ops[id];
  o->ncompl++;
  hev_t *e = hist_ev(h, E_COMPLETE);
  e->op = id;
  e->t = sim_w->now;
  e->gen = o->gen;
  if (o->ncompl > 1) return NULL; /* the checker reports it; the first result stays */
  o->rc = rc;
  o->t_cmp = sim_w->now;
  o->e_cmp = h->nev - 1;
  if (o->gen == W->gen && W->zh && !o->ext) {
    const clientid_t *cid = W->T->zoo_client_id(W->zh);
    o->client_id = cid ? cid->client_id : -1; /* -1: the call gave none (closing) */
  } else if (o->gen != W->gen && !o->ext) {
    /* Completed after the close of its handle returned (a close called
     * from a callback is carried out after it, as stock's is): the handle
     * may be gone, so nothing was asked - not a client id of 0. */
    o->client_id = -1;
  }
  W->outstanding--;
  if (o->task >= 0 && o->gen == W->gen && W->tasks[o->task].outstanding > 0)
    W->tasks[o->task].outstanding--;
  return o;
}

static void put_stat(hop_t *o, const struct Stat *st) {
  if (!st) return;
  o->exists = 1;
  o->version_out = st->version;
  o->cversion = st->cversion;
  o->nchild = st->numChildren;
  o->mzxid = st->mzxid;
  o->czxid = st->czxid;
  o->pzxid = st->pzxid;
  o->owner = st->ephemeralOwner;
}

static void c_void(int rc, const void *data) { complete(data, rc); }
static void c_stat(int rc, const struct Stat *st, const void *data) {
  hop_t *o = complete(data, rc);
  if (o && rc == ZOK) put_stat(o, st);
}
static void c_data(int rc, const char *v, int len, const struct Stat *st, const void *data) {
  hop_t *o = complete(data, rc);
  if (!o || rc != ZOK) return;
  put_stat(o, st);
  if (len < 0) len = 0;
  if (len > H_VAL - 1) len = H_VAL - 1;
  memcpy(o->value, v, (size_t)len);
  o->value[len] = '\0';
  o->vlen = len;
}
static void c_kids(int rc, const struct String_vector *sv, const struct Stat *st,
                   const void *data) {
  hop_t *o = complete(data, rc);
  if (!o || rc != ZOK) return;
  put_stat(o, st);
  o->vlen = sv ? sv->count : 0;
}
static void c_string(int rc, const char *v, const void *data) {
  hop_t *o = complete(data, rc);
  if (o && rc == ZOK && v) snprintf(o->created, sizeof o->created, "%s", v);
  if (o && rc == ZOK && v && o->kind == H_CREATE && o->task >= 0 && o->gen == W->gen &&
      W->nmade < MAXMADE && (strstr(v, "/e/") || strstr(v, "/s/")))
    snprintf(W->made[W->nmade++], H_PATH, "%s", v);
}
static void c_string_stat(int rc, const char *v, const struct Stat *st, const void *data) {
  c_string(rc, v, data);
  hop_t *o = &W->h->ops[(int)(uintptr_t)data - 1];
  if (o->ncompl == 1 && rc == ZOK) put_stat(o, st);
}
static void c_acl(int rc, struct ACL_vector *acl, struct Stat *st, const void *data) {
  (void)acl;
  c_stat(rc, st, data);
}
static void c_multi(int rc, const void *data) {
  int id = (int)(uintptr_t)data - 1;
  hop_t *o = complete(data, rc);
  multi_ctx_t *m = id >= 0 && id < W->capmulti ? W->multi[id] : NULL;
  if (o && m) {
    for (int i = 0; i < o->nsub; i++) {
      hsub_t *s = &o->sub[i];
      s->err = m->res[i].err;
      if (s->kind == H_CREATE && s->err == ZOK && m->res[i].value)
        snprintf(s->created, sizeof s->created, "%s", m->res[i].value);
      if (s->kind == H_SET && s->err == ZOK && m->res[i].stat)
        s->newversion = m->res[i].stat->version;
      else s->newversion = -1;
    }
  }
  if (m && o) {
    free(m);
    W->multi[id] = NULL;
  }
}

/* ---- operations ---- */

static void key(char *buf, int k) { snprintf(buf, H_PATH, "/g%d/k%d", W->gen, k); }

static void value(hop_t *o) {
  o->vlen = snprintf(o->value, sizeof o->value, "g%dt%dn%d", W->gen, o->task, W->seq++);
}

static int pick_pair(void) {
  int r = (int)sim_range(0, 9);
  return r < 3 ? r : r < 6 ? 3 + (r - 3) : r < 8 ? (int)sim_range(0, 5) : 6;
}

static void op_read(int t, int kind) {
  char p[H_PATH];
  if (kind == H_CHILDREN) {
    int w = (int)sim_range(0, 2);
    snprintf(p, sizeof p, w == 0 ? "/g%d" : w == 1 ? "/g%d/s" : "/g%d/e", W->gen);
  } else {
    key(p, (int)sim_range(0, NKEYS - 1));
  }
  hop_t *o = invoke(t, kind, p);
  watcher_fn fn = NULL;
  void *ctx = NULL;
  if (sim_chance(40)) {
    o->pair = pick_pair();
    fn = pair_fn(o->pair);
    ctx = pair_ctx(o->pair);
  }
  int rc;
  if (kind == H_GET) rc = W->T->zoo_awget(W->zh, p, fn, ctx, c_data, tag(o));
  else if (kind == H_EXISTS) rc = W->T->zoo_awexists(W->zh, p, fn, ctx, c_stat, tag(o));
  else rc = W->T->zoo_awget_children2(W->zh, p, fn, ctx, c_kids, tag(o));
  issued(o, rc);
}

static void op_set(int t) {
  char p[H_PATH];
  int k = (int)sim_range(0, NKEYS - 1);
  key(p, k);
  hop_t *o = invoke(t, H_SET, p);
  value(o);
  if (sim_chance(30)) o->version = W->lastver[k];
  issued(o, W->T->zoo_aset(W->zh, p, o->value, o->vlen, o->version, c_stat, tag(o)));
}

static void op_create_key(int t) {
  char p[H_PATH];
  key(p, (int)sim_range(0, NKEYS - 1));
  hop_t *o = invoke(t, H_CREATE, p);
  value(o);
  if (sim_chance(50)) {
    o->stat = 1;
    issued(o, W->T->zoo_acreate2_ttl(W->zh, p, o->value, o->vlen, &ZOO_OPEN_ACL_UNSAFE, 0, -1,
                                     c_string_stat, tag(o)));
  } else {
    issued(o, W->T->zoo_acreate_ttl(W->zh, p, o->value, o->vlen, &ZOO_OPEN_ACL_UNSAFE, 0, -1,
                                    c_string, tag(o)));
  }
}

static void op_delete_key(int t) {
  char p[H_PATH];
  int k = (int)sim_range(0, NKEYS - 1);
  key(p, k);
  hop_t *o = invoke(t, H_DELETE, p);
  if (sim_chance(30)) o->version = W->lastver[k];
  issued(o, W->T->zoo_adelete(W->zh, p, o->version, c_void, tag(o)));
}

static void op_create_child(int t) {
  char p[H_PATH];
  int kind = (int)sim_range(0, 2), mode;
  if (W->nmade >= MAXMADE - 4) return;
  if (kind == 0) {
    snprintf(p, sizeof p, "/g%d/e/x%d-%d", W->gen, t, W->seq);
    mode = ZOO_EPHEMERAL;
  } else if (kind == 1) {
    snprintf(p, sizeof p, "/g%d/s/q-", W->gen);
    mode = ZOO_PERSISTENT_SEQUENTIAL;
  } else {
    snprintf(p, sizeof p, "/g%d/e/es-", W->gen);
    mode = ZOO_EPHEMERAL_SEQUENTIAL;
  }
  hop_t *o = invoke(t, H_CREATE, p);
  o->mode = mode;
  value(o);
  o->stat = 1;
  issued(o, W->T->zoo_acreate2_ttl(W->zh, p, o->value, o->vlen, &ZOO_OPEN_ACL_UNSAFE, mode, -1,
                                   c_string_stat, tag(o)));
}

static void op_delete_child(int t) {
  if (!W->nmade) return;
  int i = (int)sim_range(0, (uint64_t)W->nmade - 1);
  char p[H_PATH];
  snprintf(p, sizeof p, "%s", W->made[i]);
  memmove(W->made[i], W->made[i + 1], (size_t)(W->nmade - i - 1) * H_PATH);
  W->nmade--;
  hop_t *o = invoke(t, H_DELETE, p);
  issued(o, W->T->zoo_adelete(W->zh, p, -1, c_void, tag(o)));
}

static void op_multi(int t) {
  hop_t *o = invoke(t, H_MULTI, "");
  multi_ctx_t *m = calloc(1, sizeof *m);
  int a = (int)sim_range(0, NKEYS - 1), b = (int)sim_range(0, NKEYS - 1),
      shape = (int)sim_range(0, 2);
  int kinds[2];
  if (shape == 0) kinds[0] = H_CHECK, kinds[1] = H_SET;
  else if (shape == 1) kinds[0] = H_CREATE, kinds[1] = H_DELETE;
  else kinds[0] = H_SET, kinds[1] = H_SET;
  o->nsub = 2;
  for (int i = 0; i < 2; i++) {
    hsub_t *s = &o->sub[i];
    s->kind = kinds[i];
    int k = i ? b : a;
    snprintf(s->path, sizeof s->path, "/g%d/k%d", W->gen, k);
    s->version = (kinds[i] == H_CHECK || sim_chance(20)) ? W->lastver[k] : -1;
    if (kinds[i] == H_SET || kinds[i] == H_CREATE)
      s->vlen = snprintf(s->value, sizeof s->value, "g%dt%dn%d", W->gen, t, W->seq++);
    memcpy(m->vals[i], s->value, sizeof s->value);
    /* zoo_*_op_init's fields, filled here: paths and values live in m. */
    snprintf(m->bufs[i], H_PATH, "%s", s->path);
    zoo_op_t *op = &m->ops[i];
    memset(op, 0, sizeof *op);
    switch (kinds[i]) {
    case H_CHECK:
      op->type = ZOO_CHECK_OP;
      op->check_op.path = m->bufs[i];
      op->check_op.version = s->version;
      break;
    case H_SET:
      op->type = ZOO_SETDATA_OP;
      op->set_op.path = m->bufs[i];
      op->set_op.data = m->vals[i];
      op->set_op.datalen = s->vlen;
      op->set_op.version = s->version;
      op->set_op.stat = &m->stats[i];
      break;
    case H_CREATE:
      op->type = ZOO_CREATE_OP;
      op->create_op.path = m->bufs[i];
      op->create_op.data = m->vals[i];
      op->create_op.datalen = s->vlen;
      op->create_op.acl = &ZOO_OPEN_ACL_UNSAFE;
      op->create_op.flags = 0;
      op->create_op.buf = m->created[i];
      op->create_op.buflen = H_PATH;
      break;
    case H_DELETE:
      op->type = ZOO_DELETE_OP;
      op->delete_op.path = m->bufs[i];
      op->delete_op.version = s->version;
      break;
    }
  }
  if (o->id >= W->capmulti) {
    int cap = W->capmulti ? W->capmulti : 256;
    while (cap <= o->id) cap *= 2;
    W->multi = realloc(W->multi, (size_t)cap * sizeof *W->multi);
    memset(W->multi + W->capmulti, 0, (size_t)(cap - W->capmulti) * sizeof *W->multi);
    W->capmulti = cap;
  }
  W->multi[o->id] = m;
  int rc = W->T->zoo_amulti(W->zh, 2, m->ops, m->res, c_multi, tag(o));
  issued(o, rc);
  if (rc != ZOK) {
    free(m);
    W->multi[o->id] = NULL;
  }
}

static void op_sync(int t) {
  char p[H_PATH];
  if (sim_chance(50)) key(p, (int)sim_range(0, NKEYS - 1));
  else snprintf(p, sizeof p, "/g%d", W->gen);
  hop_t *o = invoke(t, H_SYNC, p);
  issued(o, W->T->zoo_async(W->zh, p, c_string, tag(o)));
}

static void op_rmwatch(int t) {
  char p[H_PATH];
  key(p, (int)sim_range(0, NKEYS - 1));
  hop_t *o = invoke(t, H_RMWATCH, p);
  static const ZooWatcherType types[3] = {ZWATCHTYPE_DATA, ZWATCHTYPE_CHILD, ZWATCHTYPE_ANY};
  ZooWatcherType wt = types[sim_range(0, 2)];
  o->version = (int)wt;
  if (sim_chance(50)) {
    o->mode = 1;
    issued(o, W->T->zoo_aremove_all_watches(W->zh, p, wt, 0, (void_completion_t *)c_void, tag(o)));
  } else {
    o->pair = pick_pair();
    issued(o, W->T->zoo_aremove_watches(W->zh, p, wt, pair_fn(o->pair), pair_ctx(o->pair), 0,
                                        (void_completion_t *)c_void, tag(o)));
  }
}

static void op_auth(int t) {
  hop_t *o = invoke(t, H_AUTH, "");
  const char *scheme = sim_chance(3) ? "bogus" : "digest";
  issued(o, W->T->zoo_add_auth(W->zh, scheme, "u:p", 3, c_void, tag(o)));
}

static void op_acl(int t) {
  char p[H_PATH];
  key(p, (int)sim_range(0, NKEYS - 1));
  if (sim_chance(50)) {
    hop_t *o = invoke(t, H_GETACL, p);
    issued(o, W->T->zoo_aget_acl(W->zh, p, c_acl, tag(o)));
  } else {
    hop_t *o = invoke(t, H_SETACL, p);
    issued(o, W->T->zoo_aset_acl(W->zh, p, -1, &ZOO_OPEN_ACL_UNSAFE, c_void, tag(o)));
  }
}

/* ---- the external writer ---- */

static void ext_open(void);

static void ext_watcher(zhandle_t *zh, int type, int state, const char *path, void *ctx) {
  (void)path, (void)ctx;
  if (zh == W->xzh && type == ZOO_SESSION_EVENT &&
      (state == ZOO_EXPIRED_SESSION_STATE || state == ZOO_AUTH_FAILED_STATE))
    W->xreopen = 1;
}

static void ext_done(hop_t *o, int rc) {
  W->xout--;
  if (o->gen != W->xgen) return;
  int i = o->path[strlen(o->path) - 1] - '0';
  if (i < 0 || i >= NX) return;
  if (o->kind == H_CREATE && (rc == ZOK || rc == ZNODEEXISTS)) W->xmade[i] = 1;
  if (o->kind == H_SET && rc == ZNONODE) W->xmade[i] = 0;
}

static void x_stat(int rc, const struct Stat *st, const void *data) {
  hop_t *o = complete(data, rc);
  if (o && rc == ZOK) put_stat(o, st);
  ext_done(&W->h->ops[(int)(uintptr_t)data - 1], rc);
}

static void x_string(int rc, const char *v, const void *data) {
  hop_t *o = complete(data, rc);
  if (o && rc == ZOK && v) snprintf(o->created, sizeof o->created, "%s", v);
  ext_done(&W->h->ops[(int)(uintptr_t)data - 1], rc);
}

static void ext_step(void *a, uint64_t b) {
  (void)a, (void)b;
  if (W->stopping) return;
  sim_after_app(sim_range(5, 40) * SIM_MS, ext_step, NULL, 0);
  if (!W->ready || W->xout >= 2) return;
  if (W->xreopen) {
    W->X->zookeeper_close(W->xzh);
    ext_open();
  }
  if (W->xgen != W->gen) {
    W->xgen = W->gen;
    memset(W->xmade, 0, sizeof W->xmade);
  }
  char p[H_PATH];
  int i = (int)sim_range(0, NX - 1);
  snprintf(p, sizeof p, "/g%d/x%d", W->gen, i);
  hop_t *o = invoke(EXT_TASK, W->xmade[i] ? H_SET : H_CREATE, p);
  o->ext = 1;
  o->vlen = snprintf(o->value, sizeof o->value, "g%dx%dn%d", W->gen, i, W->seq++);
  int rc = o->kind == H_SET ? W->X->zoo_aset(W->xzh, p, o->value, o->vlen, -1, x_stat, tag(o))
                            : W->X->zoo_acreate_ttl(W->xzh, p, o->value, o->vlen,
                                                    &ZOO_OPEN_ACL_UNSAFE, 0, -1, x_string, tag(o));
  issued(o, rc);
  if (rc == ZOK) W->xout++;
}

static void ext_open(void) {
  W->xreopen = 0;
  W->xout = 0;
  W->xzh = W->X->zookeeper_init(W->hosts, ext_watcher, W->timeout_ms, NULL, NULL, 0);
}

/* A read of an external writer's key, pipelined after a zoo_async on the
 * same path: it must see every write completed before the sync began. */
static void op_synced_read(int t) {
  char p[H_PATH];
  snprintf(p, sizeof p, "/g%d/x%d", W->gen, (int)sim_range(0, NX - 1));
  hop_t *s = invoke(t, H_SYNC, p);
  issued(s, W->T->zoo_async(W->zh, p, c_string, tag(s)));
  int e_sync = s->call_rc == ZOK ? s->e_inv : -1;
  hop_t *o = invoke(t, H_GET, p); /* s may have moved */
  o->e_sync = e_sync;
  watcher_fn fn = NULL;
  void *ctx = NULL;
  if (sim_chance(30)) {
    o->pair = pick_pair();
    fn = pair_fn(o->pair);
    ctx = pair_ctx(o->pair);
  }
  issued(o, W->T->zoo_awget(W->zh, p, fn, ctx, c_data, tag(o)));
}

/* A blocking call (routed mode): the world runs inside it; recorded as an
 * operation whose completion is its return. */
static void op_blocking(int t) {
  char p[H_PATH];
  int k = (int)sim_range(0, NKEYS - 1);
  key(p, k);
  int kind = (int)sim_range(0, 2) == 0 ? H_SET : sim_chance(50) ? H_GET : H_EXISTS;
  hop_t *o = invoke(t, kind, p);
  o->blocking = 1;
  int id = o->id;
  char buf[H_VAL];
  int len = sizeof buf - 1;
  struct Stat st;
  memset(&st, 0, sizeof st);
  int rc;
  W->in_blocking++;
  W->outstanding++;
  W->blocking_op = id;
  if (kind == H_SET) {
    value(o);
    rc = W->B->set(W->zh, p, o->value, o->vlen, -1, &st);
  } else if (kind == H_GET) {
    rc = W->B->get(W->zh, p, buf, &len, &st);
  } else {
    rc = W->B->exists(W->zh, p, &st);
  }
  W->blocking_op = -1;
  W->in_blocking--;
  o = &W->h->ops[id];
  o->call_rc = ZOK;
  hop_t *d;
  if (o->ncompl == 1) {
    /* Recorded when its answer came, while a nested call held it
     * (wl_blocking_answered). */
    d = o;
    d->rc = rc;
  } else {
    o->e_ret = W->h->nev;
    d = complete(tag(o), rc);
  }
  if (!d || rc != ZOK) return;
  put_stat(d, &st);
  if (kind == H_GET) {
    if (len < 0) len = 0;
    if (len > H_VAL - 1) len = H_VAL - 1;
    memcpy(d->value, buf, (size_t)len);
    d->value[len] = '\0';
    d->vlen = len;
  }
}

int wl_take_blocking_op(void) {
  if (!W) return -1;
  int op = W->blocking_op;
  W->blocking_op = -1;
  return op;
}

void wl_blocking_answered(int op) {
  if (!W || op < 0 || op >= W->h->nops || W->h->ops[op].ncompl) return;
  hop_t *o = &W->h->ops[op];
  o->call_rc = ZOK;
  /* Its call returns here, in a threaded program: the completion is not
   * inside the call. */
  o->e_ret = W->h->nev;
  complete(tag(o), ZOK); /* the result's code is filled in at the return */
}

static void task_step(void *a, uint64_t b);

static void schedule_task(task_t *t, uint64_t dt) {
  t->running = 1;
  sim_after_app(dt, task_step, t, (uint64_t)W->gen);
}

static void task_step(void *a, uint64_t b) {
  task_t *t = a;
  t->running = 0;
  if (W->stopping || (int)b != W->gen || !W->ready) return;
  if (t->outstanding >= 3) {
    schedule_task(t, 5 * SIM_MS);
    return;
  }
  int r = (int)sim_range(0, 99);
  if (r < 12) op_read(t->id, H_GET);
  else if (r < 20) op_synced_read(t->id);
  else if (r < 30) op_read(t->id, H_EXISTS);
  else if (r < 37) op_read(t->id, H_CHILDREN);
  else if (r < 55) op_set(t->id);
  else if (r < 63) op_create_key(t->id);
  else if (r < 69) op_delete_key(t->id);
  else if (r < 78) op_create_child(t->id);
  else if (r < 81) op_delete_child(t->id);
  else if (r < 87) op_multi(t->id);
  else if (r < 90) op_sync(t->id);
  else if (r < 92) op_synced_read(t->id);
  else if (r < 96) op_rmwatch(t->id);
  else if (r < 97) op_auth(t->id);
  else if (r < 98) op_acl(t->id);
  else if (W->B) op_blocking(t->id);
  else op_acl(t->id);
  if (sim_range(0, 999) < 2 && !W->h->gens[W->gen].ended) sim_after_app(0, reopen, NULL, 1);
  schedule_task(t, sim_range(1, 40) * SIM_MS);
}

/* ---- handle life ---- */

static void setup_done(int rc, const char *v, const void *data);

static void setup(void) {
  static const char *sub[3] = {"", "/s", "/e"};
  W->setup_pending = 3;
  W->setup_failed = 0;
  for (int i = 0; i < 3; i++) {
    char p[H_PATH];
    snprintf(p, sizeof p, "/g%d%s", W->gen, sub[i]);
    hop_t *o = invoke(-1, H_CREATE, p);
    o->vlen = snprintf(o->value, sizeof o->value, "g%dsetup%dn%d", W->gen, i, W->seq++);
    int rc = W->T->zoo_acreate_ttl(W->zh, p, o->value, o->vlen, &ZOO_OPEN_ACL_UNSAFE, 0, -1,
                                   setup_done, tag(o));
    issued(o, rc);
    if (rc != ZOK) {
      W->setup_failed = 1;
      W->setup_pending--;
    }
  }
}

static void setup_retry(void *a, uint64_t b) {
  (void)a;
  if ((int)b == W->gen && !W->stopping && !W->h->gens[W->gen].ended) setup();
}

static void setup_done(int rc, const char *v, const void *data) {
  c_string(rc, v, data);
  hop_t *o = &W->h->ops[(int)(uintptr_t)data - 1];
  if (o->gen != W->gen || o->ncompl != 1) return;
  if (rc != ZOK && rc != ZNODEEXISTS) W->setup_failed = 1;
  if (--W->setup_pending > 0) return;
  if (W->setup_failed) {
    if (!W->stopping) sim_after_app(100 * SIM_MS, setup_retry, NULL, (uint64_t)W->gen);
    return;
  }
  W->ready = 1;
  for (int i = 0; i < W->ntasks; i++) schedule_task(&W->tasks[i], sim_range(0, 20) * SIM_MS);
}

static void open_gen(void) {
  hgen_t *g = &W->h->gens[W->gen];
  memset(g, 0, sizeof *g);
  g->default_pair = 6;
  g->t_open = sim_w->now;
  W->h->ngens = W->gen + 1;
  W->ready = 0;
  W->nmade = 0;
  for (int k = 0; k < NKEYS; k++) W->lastver[k] = 0;
  for (int i = 0; i < W->ntasks; i++) W->tasks[i].outstanding = 0;
  W->zh = W->T->zookeeper_init(W->hosts, wdef, W->timeout_ms, NULL, &ctxs[3], 0);
  setup();
}

/* Closes the current handle (b = 1: the application's choice, mid-run;
 * 0: its session ended) and opens the next generation. */
static void reopen(void *a, uint64_t b) {
  (void)a;
  if (!b) W->reopen_pending = 0;
  if (W->stopping || W->gen + 1 >= H_MAXGEN || !W->zh) return;
  hgen_t *g = &W->h->gens[W->gen];
  if (b && g->ended) return;
  if (!g->ended) {
    g->ended = 2;
    g->t_ended = sim_w->now;
  }
  int id = invoke(-1, H_CLOSE, "")->id;
  int rc = W->T->zookeeper_close(W->zh);
  hop_t *o = &W->h->ops[id]; /* callbacks inside the close may have added ops */
  o->call_rc = rc;
  o->e_ret = W->h->nev;
  o->ncompl = 1;
  o->rc = rc;
  o->t_cmp = sim_w->now;
  g->t_end = sim_w->now;
  W->zh = NULL;
  W->gen++;
  open_gen();
}

wl_t *wl_start(hist_t *h, const zkr__zk_t *T, const zkr__zk_t *X, const char *hosts,
               int timeout_ms) {
  W = calloc(1, sizeof *W);
  if (W) W->blocking_op = -1;
  W->h = h;
  W->T = T;
  W->X = X;
  W->hosts = hosts;
  W->timeout_ms = timeout_ms;
  W->ntasks = (int)sim_range(2, MAXT);
  for (int i = 0; i < W->ntasks; i++) W->tasks[i].id = i;
  h->npairs = 7;
  h->session_ms = (uint64_t)timeout_ms;
  open_gen();
  ext_open();
  sim_after_app(sim_range(5, 40) * SIM_MS, ext_step, NULL, 0);
  return W;
}

void wl_stop(wl_t *w) { w->stopping = 1; }

void wl_set_blocking(wl_t *w, const wl_blocking_t *b) { w->B = b; }

int wl_idle(wl_t *w) { return w->outstanding <= 0; }

int wl_connected(wl_t *w) { return w->zh && w->T->zoo_state(w->zh) == ZOO_CONNECTED_STATE; }

int wl_ended(wl_t *w) { return w->h->gens[w->gen].ended != 0; }

void wl_close(wl_t *w) {
  if (!w->zh) return;
  hgen_t *g = &w->h->gens[w->gen];
  if (!g->ended) {
    g->ended = 2;
    g->t_ended = sim_w->now;
    g->settled = 1;
  }
  int id = invoke(-1, H_CLOSE, "")->id;
  int rc = w->T->zookeeper_close(w->zh);
  hop_t *o = &w->h->ops[id];
  o->call_rc = rc;
  o->e_ret = w->h->nev;
  o->ncompl = 1;
  o->rc = rc;
  o->t_cmp = sim_w->now;
  g->t_end = sim_w->now;
  w->zh = NULL;
  if (w->xzh) {
    w->X->zookeeper_close(w->xzh);
    w->xzh = NULL;
  }
}

int64_t wl_session(wl_t *w) { return w->h->gens[w->gen].client_id; }

void wl_free(wl_t *w) {
  for (int i = 0; i < w->capmulti; i++) free(w->multi[i]);
  free(w->multi);
  free(w);
  if (W == w) W = NULL;
}
