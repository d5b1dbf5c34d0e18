/* The simulated ZooKeeper ensemble: N servers with epochs and roles, one
 * global txn log (the committed prefix, then the current leader's pending
 * proposals), a multi-version znode store that every server reads at its
 * own applied index, sessions with their tracker at the leader, server-side
 * watch tables per connection, and the server half of the client protocol
 * (handshake, per-session FIFO pipeline, sync, SetWatches, watch removal).
 *
 * Where it follows ZooKeeper (docs/simulation.md cites each rule):
 * - a write is validated by the leader against the latest proposed state,
 *   gets zxid epoch<<32|counter (a failed write too, as an error txn), and
 *   commits once a quorum of the leader's group is up; followers apply the
 *   committed log in order, each after its own delay (lag);
 * - a server answers a session's requests in the order they came; a read
 *   waits for the session's earlier requests and reads the server's applied
 *   state; a sync is answered once the server has applied what the leader
 *   had committed when the sync reached it;
 * - a leader change drops every uncommitted proposal; a follower whose
 *   leader went silent notices after sync_timeout; a deposed leader (hung,
 *   or cut off with a minority) keeps answering its group's reads and syncs
 *   from its old state until it notices it lost its quorum (ZOOKEEPER-1675);
 * - the leader expires a session it has not heard of for its timeout; a
 *   reconnect moves the session's owner to the server it reached; a server
 *   refuses a client that has seen a zxid newer than its own;
 * - the leader refuses a request of a session whose owner is another
 *   server: every write it orders (a multi too; not a close), as an error
 *   txn, and every request of its own clients (reads, syncs, pings,
 *   SetWatches, watch checks and removals); a follower checks none of its
 *   reads and pings, and the leader answers its syncs unchecked. A refused
 *   request gets no reply: its server closes the connection when the
 *   request's turn to be answered comes, after the replies before it
 *   (ZooKeeper's FinalRequestProcessor, ZOOKEEPER-710), and the client's
 *   reconnect moves the owner back. */
#include "sim.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <stdio.h>

sim_ens_t *sim_e;
void (*sim_stale_hook)(int s, int on);
void (*sim_fault_hook)(const char *what);
static int stale[SIM_MAX_SRV];

static void set_stale(int s, int on) {
  if (stale[s] == on) return;
  stale[s] = on;
  if (sim_stale_hook) sim_stale_hook(s, on);
}

enum { RS_NEW = 0, RS_WAIT, RS_WAIT_APPLY, RS_READY };

static const sim_nver_t absent_ver = {.idx = -1};

/* ---- paths ---- */

static uint32_t hstr(const char *s) {
  uint32_t h = 2166136261u;
  while (*s) h = (h ^ (uint8_t)*s++) * 16777619u;
  return h;
}

static void pidx_grow(sim_ens_t *e) {
  int cap = e->pidx_cap ? 2 * e->pidx_cap : 256;
  int *t = calloc((size_t)cap, sizeof *t);
  for (int i = 0; i < e->npaths; i++) {
    uint32_t j = e->paths[i].hash & (uint32_t)(cap - 1);
    while (t[j]) j = (j + 1) & (uint32_t)(cap - 1);
    t[j] = i + 1;
  }
  free(e->pidx);
  e->pidx = t;
  e->pidx_cap = cap;
}

static int valid_path(const char *p) {
  size_t n = strlen(p);
  if (n == 0 || n >= SIM_MAXPATH || p[0] != '/') return 0;
  if (n == 1) return 1;
  if (p[n - 1] == '/') return 0;
  for (size_t i = 1; i < n; i++) {
    if (p[i] == '/' && p[i - 1] == '/') return 0;
    if ((unsigned char)p[i] < 0x20) return 0;
  }
  return 1;
}

static int intern(const char *p, uint32_t h) {
  sim_ens_t *e = sim_e;
  if (2 * (e->npaths + 1) > e->pidx_cap) pidx_grow(e);
  uint32_t j = h & (uint32_t)(e->pidx_cap - 1);
  while (e->pidx[j]) {
    int id = e->pidx[j] - 1;
    if (e->paths[id].hash == h && strcmp(e->paths[id].name, p) == 0) return id;
    j = (j + 1) & (uint32_t)(e->pidx_cap - 1);
  }
  int parent = -1;
  if (strcmp(p, "/") != 0) {
    char buf[SIM_MAXPATH];
    snprintf(buf, sizeof buf, "%s", p);
    char *slash = strrchr(buf, '/');
    if (slash == buf) slash[1] = '\0';
    else *slash = '\0';
    parent = intern(buf, hstr(buf));
    j = h & (uint32_t)(e->pidx_cap - 1); /* the table may have grown */
    while (e->pidx[j]) j = (j + 1) & (uint32_t)(e->pidx_cap - 1);
  }
  if (e->npaths == e->cappaths) {
    e->cappaths = e->cappaths ? 2 * e->cappaths : 128;
    e->paths = realloc(e->paths, (size_t)e->cappaths * sizeof *e->paths);
  }
  int id = e->npaths++;
  sim_path_t *sp = &e->paths[id];
  memset(sp, 0, sizeof *sp);
  sp->name = strdup(p);
  sp->parent = parent;
  sp->hash = h;
  e->pidx[j] = id + 1;
  if (parent >= 0) {
    sim_path_t *pp = &e->paths[parent];
    if (pp->nkids == pp->capkids) {
      pp->capkids = pp->capkids ? 2 * pp->capkids : 8;
      pp->kids = realloc(pp->kids, (size_t)pp->capkids * sizeof *pp->kids);
    }
    pp->kids[pp->nkids++] = id;
  }
  return id;
}

int ens_path(const char *p) {
  if (!p || !valid_path(p)) return -1;
  return intern(p, hstr(p));
}

/* ---- the multi-version store ---- */

/* The state of path p once the first `a` log entries are applied. */
const sim_nver_t *ens_state(int p, int a) {
  sim_path_t *sp = &sim_e->paths[p];
  int lo = 0, hi = sp->nv; /* first version with idx >= a */
  while (lo < hi) {
    int mid = (lo + hi) / 2;
    if (sp->v[mid].idx < a) lo = mid + 1;
    else hi = mid;
  }
  return lo ? &sp->v[lo - 1] : &absent_ver;
}

static const sim_nver_t *latest(int p) { return ens_state(p, INT_MAX); }

/* The version of p that txn idx writes (made from the latest one). */
static sim_nver_t *newver(int p, int idx) {
  sim_path_t *sp = &sim_e->paths[p];
  if (sp->nv && sp->v[sp->nv - 1].idx == idx) return &sp->v[sp->nv - 1];
  if (sp->nv == sp->capv) {
    sp->capv = sp->capv ? 2 * sp->capv : 4;
    sp->v = realloc(sp->v, (size_t)sp->capv * sizeof *sp->v);
  }
  sim_nver_t *v = &sp->v[sp->nv];
  *v = sp->nv ? sp->v[sp->nv - 1] : absent_ver;
  v->idx = idx;
  sp->nv++;
  return v;
}

/* Drops every version made by txns at index >= from. */
static void drop_versions(int from) {
  for (int p = 0; p < sim_e->npaths; p++) {
    sim_path_t *sp = &sim_e->paths[p];
    while (sp->nv && sp->v[sp->nv - 1].idx >= from) sp->nv--;
  }
}

/* ---- servers ---- */

static sim_srv_t *S(int s) { return &sim_e->srv[s]; }

int ens_quorum(void) { return sim_e->n / 2 + 1; }

static int alive(int s) { return S(s)->role != ROLE_DOWN && !S(s)->hung; }

static int leader_ok(void) {
  int l = sim_e->leader;
  return l >= 0 && alive(l) && S(l)->role == ROLE_LEADER && S(l)->epoch == sim_e->epoch;
}

/* Follows the current leader and can hear from it. */
static int synced(int s) {
  sim_srv_t *v = S(s);
  if (v->role == ROLE_DOWN) return 0;
  if (s == sim_e->leader) return v->role == ROLE_LEADER && v->epoch == sim_e->epoch;
  return v->role == ROLE_FOLLOWER && v->leader == sim_e->leader && v->epoch == sim_e->epoch &&
         sim_e->leader >= 0 && v->group == S(sim_e->leader)->group;
}

int ens_healthy(void) {
  if (!leader_ok()) return 0;
  for (int s = 0; s < sim_e->n; s++)
    if (!alive(s) || !synced(s) || S(s)->lag) return 0;
  return 1;
}

static int64_t srv_zxid(int s) {
  sim_srv_t *v = S(s);
  int64_t z = (int64_t)v->epoch << 32;
  if (v->applied > 0 && sim_e->log[v->applied - 1].zxid > z) z = sim_e->log[v->applied - 1].zxid;
  return z;
}

int64_t ens_last_zxid(int s) { return srv_zxid(s); }

static void conn_closed(int s, sim_conn_t *c);
static void close_fin(int s, sim_conn_t *c);

static void close_all_conns(int s, int rst) {
  sim_srv_t *v = S(s);
  while (v->nconns) {
    sim_conn_t *c = v->conns[v->nconns - 1];
    if (rst) {
      conn_closed(s, c);
      if (c->cli_open) net_send(net_msg(M_RST, c), 0);
    } else {
      close_fin(s, c);
    }
  }
}

static void set_role(int s, int role) {
  sim_srv_t *v = S(s);
  if (role != ROLE_LEADER) set_stale(s, 0);
  v->role = role;
  v->gen++;
  v->aq_head = v->aq_n = 0;
  v->apply_pending = 0;
  v->bad_since = 0;
  if (role == ROLE_LOOKING) v->looking_since = sim_w->now;
}

static void goto_looking(int s) {
  if (S(s)->role == ROLE_LOOKING) return;
  if (sim_e->leader == s) sim_e->leader = -1;
  set_role(s, ROLE_LOOKING);
  /* A server that leaves the broadcast phase shuts its client port. */
  close_all_conns(s, 0);
}

/* ---- sessions ---- */

static int sess_alive_at(int i, int applied) {
  sim_sess_t *x = &sim_e->sess[i];
  return x->create_idx < applied && x->close_idx >= applied;
}

static int sess_find(int64_t id) {
  for (int i = 0; i < sim_e->nsess; i++)
    if (sim_e->sess[i].id == id) return i;
  return -1;
}

static void touch(int s, int sess) {
  if (sess < 0 || !leader_ok() || !synced(s) || S(s)->hung) return;
  sim_e->sess[sess].last_touch = sim_w->now;
}

/* ---- the log ---- */

static int append_txn(int type, int sess, int origin, sim_sreq_t *r) {
  sim_ens_t *e = sim_e;
  if (e->nlog == e->caplog) {
    e->caplog = e->caplog ? 2 * e->caplog : 256;
    e->log = realloc(e->log, (size_t)e->caplog * sizeof *e->log);
  }
  sim_txn_t *t = &e->log[e->nlog];
  memset(t, 0, sizeof *t);
  t->zxid = ((int64_t)e->epoch << 32) | ++e->counter;
  t->type = type;
  t->sess = sess;
  t->origin = origin;
  t->ops_off = e->nops;
  t->t_prop = sim_w->now;
  if (r) {
    t->req = r;
    r->refs++;
  }
  return e->nlog++;
}

static sim_subop_t *add_op(int idx) {
  sim_ens_t *e = sim_e;
  if (e->nops == e->capops) {
    e->capops = e->capops ? 2 * e->capops : 512;
    e->ops = realloc(e->ops, (size_t)e->capops * sizeof *e->ops);
  }
  e->log[idx].nops++;
  sim_subop_t *o = &e->ops[e->nops++];
  memset(o, 0, sizeof *o);
  return o;
}

static void truncate_uncommitted(void) {
  sim_ens_t *e = sim_e;
  if (e->nlog == e->committed) return;
  for (int i = e->committed; i < e->nlog; i++) {
    sim_txn_t *t = &e->log[i];
    if (t->req && --t->req->refs == 0) net_req_free(t->req);
  }
  e->nops = e->nlog > e->committed ? e->log[e->committed].ops_off : e->nops;
  drop_versions(e->committed);
  for (int i = 0; i < e->nsess; i++) {
    sim_sess_t *x = &e->sess[i];
    if (x->create_idx >= e->committed && x->create_idx != INT_MAX) {
      x->create_idx = INT_MAX;
      x->state = SESS_CLOSED;
    }
    if (x->close_idx >= e->committed && x->close_idx != INT_MAX) {
      x->close_idx = INT_MAX;
      x->state = SESS_ALIVE;
    }
  }
  e->nlog = e->committed;
}

/* Applies one sub-op of txn idx to the latest state; returns its error. */
static int apply_op(int idx, sim_subop_t *o, int64_t owner) {
  int64_t zxid = sim_e->log[idx].zxid;
  const sim_nver_t *cur = latest(o->path);
  switch (o->kind) {
  case OP_CREATE: {
    int parent = sim_e->paths[o->path].parent;
    if (parent < 0) return ZNODEEXISTS;
    const sim_nver_t *pv = latest(parent);
    if (!pv->exists) return ZNONODE;
    if (pv->owner) return ZNOCHILDRENFOREPHEMERALS;
    if (o->mode & ZOO_SEQUENCE) {
      char buf[SIM_MAXPATH + 16];
      snprintf(buf, sizeof buf, "%s%010d", sim_e->paths[o->path].name, pv->cversion);
      int np = ens_path(buf);
      if (np < 0) return ZBADARGUMENTS;
      o->path = np;
      cur = latest(np);
    }
    if (cur->exists) return ZNODEEXISTS;
    sim_nver_t *v = newver(o->path, idx);
    v->exists = 1;
    v->version = v->cversion = v->aversion = v->nchild = 0;
    v->czxid = v->mzxid = v->pzxid = zxid;
    v->owner = (o->mode & ZOO_EPHEMERAL) ? owner : 0;
    v->dlen = (uint8_t)o->dlen;
    memcpy(v->data, o->data, (size_t)o->dlen);
    sim_nver_t *p = newver(parent, idx);
    p->cversion++;
    p->nchild++;
    p->pzxid = zxid;
    o->newversion = 0;
    return ZOK;
  }
  case OP_DELETE: {
    if (!cur->exists || o->path == 0) return ZNONODE;
    if (o->version != -1 && cur->version != o->version) return ZBADVERSION;
    if (cur->nchild) return ZNOTEMPTY;
    sim_nver_t *v = newver(o->path, idx);
    int32_t cv = v->cversion;
    *v = absent_ver;
    v->idx = idx;
    v->cversion = cv;
    sim_nver_t *p = newver(sim_e->paths[o->path].parent, idx);
    p->cversion++;
    p->nchild--;
    p->pzxid = zxid;
    return ZOK;
  }
  case OP_SET: {
    if (!cur->exists) return ZNONODE;
    if (o->version != -1 && cur->version != o->version) return ZBADVERSION;
    sim_nver_t *v = newver(o->path, idx);
    v->version++;
    v->mzxid = zxid;
    v->dlen = (uint8_t)o->dlen;
    memcpy(v->data, o->data, (size_t)o->dlen);
    o->newversion = v->version;
    return ZOK;
  }
  case OP_CHECK:
    if (!cur->exists) return ZNONODE;
    if (o->version != -1 && cur->version != o->version) return ZBADVERSION;
    return ZOK;
  case OP_SETACL: {
    if (!cur->exists) return ZNONODE;
    if (o->version != -1 && cur->aversion != o->version) return ZBADVERSION;
    sim_nver_t *v = newver(o->path, idx);
    v->aversion++;
    return ZOK;
  }
  }
  return ZUNIMPLEMENTED;
}

/* ---- commit and apply ---- */

static void apply_ev(void *a, uint64_t b);

static void sched_apply(int s) {
  sim_srv_t *v = S(s);
  if (v->apply_pending || !v->aq_n || v->hung) return;
  v->apply_pending = 1;
  sim_at(v->aq[v->aq_head].t, apply_ev, NULL, (uint64_t)s | ((uint64_t)v->gen << 8));
}

static void aq_push(int s, int idx, uint64_t t) {
  sim_srv_t *v = S(s);
  if (v->aq_head + v->aq_n == v->aq_cap) {
    if (v->aq_head) {
      memmove(v->aq, v->aq + v->aq_head, (size_t)v->aq_n * sizeof *v->aq);
      v->aq_head = 0;
    } else {
      v->aq_cap = v->aq_cap ? 2 * v->aq_cap : 64;
      v->aq = realloc(v->aq, (size_t)v->aq_cap * sizeof *v->aq);
    }
  }
  if (v->aq_n && t < v->aq[v->aq_head + v->aq_n - 1].t) t = v->aq[v->aq_head + v->aq_n - 1].t;
  v->aq[v->aq_head + v->aq_n++] = (sim_apply_t){idx, t};
  sched_apply(s);
}

static int has_quorum(int l) {
  int n = 0;
  for (int s = 0; s < sim_e->n; s++) {
    sim_srv_t *v = S(s);
    if (!alive(s) || v->group != S(l)->group) continue;
    if (s == l || (v->role == ROLE_FOLLOWER && v->leader == l && v->epoch == S(l)->epoch)) n++;
  }
  return n >= ens_quorum();
}

static void commit_ev(void *a, uint64_t b) {
  (void)a;
  int idx = (int)(b & 0xffffffffu);
  uint32_t epoch = (uint32_t)(b >> 32);
  sim_ens_t *e = sim_e;
  if (epoch != e->epoch || idx >= e->nlog || idx < e->committed) return;
  if (!leader_ok() || !has_quorum(e->leader)) {
    sim_after(20 * SIM_MS, commit_ev, NULL, b); /* waits for a quorum, or an election */
    return;
  }
  int l = e->leader;
  while (e->committed <= idx) {
    int i = e->committed++;
    e->log[i].t_commit = sim_w->now;
    for (int s = 0; s < e->n; s++) {
      if (!synced(s)) continue;
      uint64_t t = s == l ? sim_w->now : sim_w->now + e->ss_delay + S(s)->lag;
      aq_push(s, i, t);
    }
  }
  S(l)->commit_seen = e->committed;
}

static void propose(int idx) {
  uint64_t d = sim_range(300, 2000) * 1000;
  sim_after(d, commit_ev, NULL, ((uint64_t)sim_e->epoch << 32) | (uint64_t)idx);
}

static void pump(int s, sim_conn_t *c);
static void notify(sim_conn_t *c, int type, int path);

static int tbl_has(int *t, int n, int p) {
  for (int i = 0; i < n; i++)
    if (t[i] == p) return 1;
  return 0;
}

static void tbl_add(int **t, int *n, int *cap, int p) {
  if (tbl_has(*t, *n, p)) return;
  if (*n == *cap) {
    *cap = *cap ? 2 * *cap : 8;
    *t = realloc(*t, (size_t)*cap * sizeof **t);
  }
  (*t)[(*n)++] = p;
}

static int tbl_del(int *t, int *n, int p) {
  for (int i = 0; i < *n; i++)
    if (t[i] == p) {
      t[i] = t[--*n];
      return 1;
    }
  return 0;
}

/* Fires the watches of server s that txn op triggers (ZooKeeper's
 * DataTree: create -> NodeCreated + parent's NodeChildrenChanged; delete ->
 * one NodeDeleted for data and child watches + parent's; set ->
 * NodeDataChanged). */
static void trigger(int s, const sim_subop_t *o) {
  sim_srv_t *v = S(s);
  int parent = sim_e->paths[o->path].parent;
  for (int i = 0; i < v->nconns; i++) {
    sim_conn_t *c = v->conns[i];
    if (!c->nwdata && !c->nwchild) continue;
    switch (o->kind) {
    case OP_CREATE:
      if (tbl_del(c->wdata, &c->nwdata, o->path)) notify(c, ZOO_CREATED_EVENT, o->path);
      if (parent >= 0 && tbl_del(c->wchild, &c->nwchild, parent))
        notify(c, ZOO_CHILD_EVENT, parent);
      break;
    case OP_DELETE: {
      int d = tbl_del(c->wdata, &c->nwdata, o->path);
      d |= tbl_del(c->wchild, &c->nwchild, o->path);
      if (d) notify(c, ZOO_DELETED_EVENT, o->path);
      if (parent >= 0 && tbl_del(c->wchild, &c->nwchild, parent))
        notify(c, ZOO_CHILD_EVENT, parent);
      break;
    }
    case OP_SET:
      if (tbl_del(c->wdata, &c->nwdata, o->path)) notify(c, ZOO_CHANGED_EVENT, o->path);
      break;
    }
  }
}

static void fill_stat(sim_sreq_t *r, int path, int applied) { r->st = *ens_state(path, applied); }

static void do_apply(int s, int idx) {
  sim_srv_t *v = S(s);
  sim_txn_t *t = &sim_e->log[idx];
  v->applied = idx + 1;
  for (int k = 0; k < t->nops; k++) {
    sim_subop_t *o = &sim_e->ops[t->ops_off + k];
    if (t->type == OP_MULTI && o->err) continue;
    trigger(s, o);
  }
  if (t->type == OP_CLOSE) {
    /* The session's connection here is closed (expiry or its close). */
    for (int i = 0; i < v->nconns; i++) {
      sim_conn_t *c = v->conns[i];
      if (c->sess == t->sess && (!t->req || c != t->req->conn)) {
        close_fin(s, c);
        i--;
      }
    }
  }
  sim_sreq_t *r = t->req;
  if (t->origin == s && r) {
    t->req = NULL;
    if (!r->orphan) {
      r->zxid = t->zxid;
      r->err = t->type == OP_ERROR ? t->err : ZOK;
      /* FinalRequestProcessor turns a moved session's error txn (or a
       * multi's op refused so) into SessionMovedException: no reply, the
       * connection closes. */
      if (t->type == OP_ERROR && t->err == ZSESSIONMOVED) r->moved = 1;
      /* A multi that failed on one of its ops answers ZOK with each op's
       * result; the C client takes the first error as the call's. */
      if (r->kind == OP_MULTI && t->err != ZSESSIONEXPIRED && t->err != ZSESSIONMOVED) r->err = ZOK;
      if (t->type == OP_CREATE_SESSION) {
        r->valid = 1;
      } else if (t->type == OP_MULTI) {
        for (int k = 0; k < t->nops && k < SIM_MULTIMAX; k++) {
          sim_subop_t *o = &sim_e->ops[t->ops_off + k];
          r->mres_err[k] = o->err;
          r->mres_path[k] = o->path;
          r->mres_ver[k] = o->newversion;
          if (o->kind == OP_SET && !o->err) r->mres_st[k] = *ens_state(o->path, idx + 1);
        }
      } else if (t->type != OP_ERROR && t->nops) {
        sim_subop_t *o = &sim_e->ops[t->ops_off];
        r->res_path = o->path;
        fill_stat(r, o->path, idx + 1);
      }
      r->state = RS_READY;
      pump(s, r->conn);
      if (t->type == OP_CLOSE && r->conn->srv_open) close_fin(s, r->conn);
    }
    if (--r->refs == 0) net_req_free(r);
  }
  /* Requests of this server's sessions waiting for a sync to apply. */
  for (int i = 0; i < v->nconns; i++) {
    sim_conn_t *c = v->conns[i];
    int hit = 0;
    for (sim_sreq_t *q = c->qhead; q; q = q->next)
      if (q->state == RS_WAIT_APPLY && q->target <= v->applied) {
        q->state = RS_READY;
        hit = 1;
      }
    if (hit) pump(s, c);
  }
}

static void apply_ev(void *a, uint64_t b) {
  (void)a;
  int s = (int)(b & 0xff);
  sim_srv_t *v = S(s);
  if ((uint32_t)(b >> 8) != v->gen) return;
  v->apply_pending = 0;
  if (v->hung || v->role == ROLE_DOWN) return;
  while (v->aq_n && v->aq[v->aq_head].t <= sim_w->now) {
    int idx = v->aq[v->aq_head].idx;
    v->aq_head++;
    v->aq_n--;
    if (idx == v->applied) do_apply(s, idx);
    if (v->gen != (uint32_t)(b >> 8)) return;
  }
  sched_apply(s);
}

/* ---- server to server messages ---- */

typedef void (*ss_fn)(int to, int from, sim_sreq_t *r, uint64_t x);

typedef struct env {
  struct env *next;
  ss_fn fn;
  int to, from;
  sim_sreq_t *r;
  uint64_t x;
} env_t;

static env_t *free_env;
static uint64_t ss_last[SIM_MAX_SRV][SIM_MAX_SRV]; /* server links are FIFO (TCP) */

static void inbox_push(int s, sim_fn fn, void *a, uint64_t b) {
  sim_srv_t *v = S(s);
  if (v->nin == v->capin) {
    v->capin = v->capin ? 2 * v->capin : 32;
    v->inbox = realloc(v->inbox, (size_t)v->capin * sizeof *v->inbox);
  }
  v->inbox[v->nin++] = (sim_ev_t){0, 0, fn, a, b, 0};
}

static void env_arrive(void *a, uint64_t b) {
  (void)b;
  env_t *m = a;
  sim_srv_t *to = S(m->to);
  if (to->role != ROLE_DOWN && to->hung) {
    inbox_push(m->to, env_arrive, m, 0);
    return;
  }
  if (to->role != ROLE_DOWN && to->group == S(m->from)->group) m->fn(m->to, m->from, m->r, m->x);
  if (m->r && --m->r->refs == 0) net_req_free(m->r);
  m->next = free_env;
  free_env = m;
}

static void ss_send(int from, int to, ss_fn fn, sim_sreq_t *r, uint64_t x) {
  env_t *m = free_env;
  if (m) free_env = m->next;
  else m = malloc(sizeof *m);
  *m = (env_t){NULL, fn, to, from, r, x};
  if (r) r->refs++;
  if (from == to) {
    sim_after(0, env_arrive, m, 0); /* never re-entrant */
    return;
  }
  uint64_t t = sim_w->now + sim_e->ss_delay + sim_range(0, 200) * 1000;
  if (t <= ss_last[from][to]) t = ss_last[from][to] + 1;
  ss_last[from][to] = t;
  sim_at(t, env_arrive, m, 0);
}

/* ---- the leader ---- */

static void lead_write(int l, int from, sim_sreq_t *r, uint64_t x) {
  (void)x;
  sim_ens_t *e = sim_e;
  /* A deposed leader cannot commit: the request is never answered. */
  if (S(l)->role != ROLE_LEADER || l != e->leader) return;
  int si = r->conn->sess;
  sim_sess_t *ss = si >= 0 ? &e->sess[si] : NULL;
  int err = ZOK;
  if (!ss || ss->state != SESS_ALIVE) err = ZSESSIONEXPIRED;
  /* ZooKeeper's PrepRequestProcessor does not check a close's owner (the
   * expirer queues closes without being the owner). */
  else if (ss->owner != from && r->kind != OP_CLOSE) err = ZSESSIONMOVED;
  if (err) {
    int idx = append_txn(OP_ERROR, si, from, r);
    e->log[idx].err = err;
    propose(idx);
    return;
  }
  if (r->kind == OP_CLOSE) {
    int idx = append_txn(OP_CLOSE, si, from, r);
    for (int p = 0; p < e->npaths; p++) {
      const sim_nver_t *v = latest(p);
      if (v->exists && v->owner == ss->id) {
        sim_subop_t *o = add_op(idx);
        o->kind = OP_DELETE;
        o->path = p;
        o->version = -1;
        apply_op(idx, o, 0);
      }
    }
    ss->state = SESS_CLOSING;
    ss->close_idx = idx;
    propose(idx);
    return;
  }
  int type = r->kind;
  int idx = append_txn(type, si, from, r);
  int n = type == OP_MULTI ? r->nops : 1;
  int failed = -1, ferr = ZOK;
  for (int k = 0; k < n; k++) {
    sim_subop_t *o = add_op(idx);
    if (type == OP_MULTI) {
      *o = r->ops[k];
    } else {
      o->kind = type;
      o->path = r->path;
      o->mode = r->mode;
      o->version = r->version;
      o->dlen = r->dlen;
      memcpy(o->data, r->data, (size_t)r->dlen);
    }
    o->err = failed >= 0 ? ZRUNTIMEINCONSISTENCY : apply_op(idx, o, ss->id);
    if (o->err && failed < 0) {
      failed = k;
      ferr = o->err;
    }
  }
  if (failed >= 0) {
    /* Nothing of it happened: an error txn with each op's result. */
    drop_versions(idx);
    sim_txn_t *t = &e->log[idx];
    t->type = OP_ERROR;
    t->err = ferr;
    for (int k = 0; k < failed; k++) e->ops[t->ops_off + k].err = ZOK;
    if (type == OP_MULTI) {
      for (int k = 0; k < n && k < SIM_MULTIMAX; k++) r->mres_err[k] = e->ops[t->ops_off + k].err;
    }
    e->nops = t->ops_off;
    t->nops = 0;
  } else {
    for (int k = 0; k < n; k++)
      if (e->ops[e->log[idx].ops_off + k].kind == OP_CREATE &&
          (e->ops[e->log[idx].ops_off + k].mode & ZOO_EPHEMERAL))
        ss->eph_cnt++;
  }
  propose(idx);
}

static void sync_resp(int o, int l, sim_sreq_t *r, uint64_t target) {
  (void)l;
  if (r->orphan || S(o)->role == ROLE_DOWN) return;
  r->target = (int)target;
  r->state = RS_WAIT_APPLY;
  if (S(o)->applied >= r->target || sim_w->bug == SIM_BUG_SYNC_EARLY) r->state = RS_READY;
  pump(o, r->conn);
}

static void lead_sync(int l, int from, sim_sreq_t *r, uint64_t x) {
  (void)x;
  if (S(l)->role != ROLE_LEADER) return;
  ss_send(l, from, sync_resp, r, (uint64_t)S(l)->commit_seen);
}

static void reval_resp(int o, int l, sim_sreq_t *r, uint64_t valid) {
  (void)l;
  if (r->orphan) return;
  r->valid = (int)valid;
  r->state = RS_READY;
  pump(o, r->conn);
}

static void lead_session(int l, int from, sim_sreq_t *r, uint64_t x) {
  (void)x;
  sim_ens_t *e = sim_e;
  if (S(l)->role != ROLE_LEADER) return;
  if (r->sid == 0) {
    if (l != e->leader) return;
    if (e->nsess == e->capsess) {
      e->capsess = e->capsess ? 2 * e->capsess : 16;
      e->sess = realloc(e->sess, (size_t)e->capsess * sizeof *e->sess);
    }
    int si = e->nsess++;
    sim_sess_t *ss = &e->sess[si];
    memset(ss, 0, sizeof *ss);
    ss->id = e->next_sid++;
    for (int i = 0; i < 16; i++) ss->passwd[i] = (char)('a' + sim_range(0, 25));
    ss->timeout = r->timeout;
    ss->last_touch = sim_w->now;
    ss->owner = from;
    ss->state = SESS_ALIVE;
    ss->close_idx = INT_MAX;
    int idx = append_txn(OP_CREATE_SESSION, si, from, r);
    ss->create_idx = idx;
    r->sid = ss->id;
    memcpy(r->passwd, ss->passwd, 16);
    propose(idx);
    return;
  }
  int si = sess_find(r->sid);
  int valid =
      si >= 0 && sess_alive_at(si, S(l)->applied) && memcmp(e->sess[si].passwd, r->passwd, 16) == 0;
  if (l == e->leader) {
    valid = valid && e->sess[si].state == SESS_ALIVE;
    if (valid) {
      e->sess[si].owner = from;
      e->sess[si].last_touch = sim_w->now;
    }
  }
  if (valid) r->timeout = e->sess[si].timeout;
  ss_send(l, from, reval_resp, r, (uint64_t)valid);
}

/* ---- the server side of client connections ---- */

static void conn_closed(int s, sim_conn_t *c) {
  sim_srv_t *v = S(s);
  if (!c->srv_open) return;
  c->srv_open = 0;
  for (int i = 0; i < v->nconns; i++)
    if (v->conns[i] == c) {
      v->conns[i] = v->conns[--v->nconns];
      break;
    }
  for (sim_sreq_t *q = c->qhead, *nx; q; q = nx) {
    nx = q->next;
    q->orphan = 1;
    if (--q->refs == 0) net_req_free(q);
  }
  c->qhead = c->qtail = NULL;
  if (getenv("SIM_TRACE_WATCH"))
    fprintf(stderr, "TRACE %.6f connclosed s%d sess %d nw %d %d\n", (double)sim_w->now / 1e9, s + 1,
            c->sess, c->nwdata, c->nwchild);
  c->nwdata = c->nwchild = 0;
}

void ens_conn_closed(int s, sim_conn_t *c) { conn_closed(s, c); }

static void close_fin(int s, sim_conn_t *c) {
  conn_closed(s, c);
  if (c->cli_open) net_send(net_msg(M_FIN, c), 0);
}

static void notify(sim_conn_t *c, int type, int path) {
  if (getenv("SIM_TRACE_WATCH"))
    fprintf(stderr, "TRACE %.6f notify sess %d type %d %s\n", (double)sim_w->now / 1e9, c->sess,
            type, sim_e->paths[path].name);
  sim_msg_t *m = net_msg(M_NOTIFY, c);
  m->ntype = type;
  m->npath = path;
  net_send(m, 0);
}

static void send_reply(int s, sim_conn_t *c, sim_sreq_t *r) {
  (void)s;
  sim_msg_t *m = net_msg(r->kind == OP_CREATE_SESSION ? M_CONNRESP : M_REPLY, c);
  m->req = r; /* the message owns the request now */
  net_send(m, 0);
}

static void do_read(int s, sim_conn_t *c, sim_sreq_t *r) {
  sim_srv_t *v = S(s);
  const sim_nver_t *st = ens_state(r->path, v->applied);
  r->zxid = srv_zxid(s);
  r->st = *st;
  if (!st->exists) {
    sim_ens_t *e = sim_e;
    if (e->nserved == e->capserved) {
      e->capserved = e->capserved ? 2 * e->capserved : 256;
      e->served = realloc(e->served, (size_t)e->capserved * sizeof *e->served);
    }
    e->served[e->nserved++] = (struct sim_served){sim_w->now, r->path, r->kind, r->watch, r->zxid};
  }
  if (getenv("SIM_TRACE_READS"))
    fprintf(stderr,
            "TRACE %.6f read s%d sess %d kind %d w %d %s mz %#llx srvzxid %#llx stale %d role %d\n",
            (double)sim_w->now / 1e9, s + 1, c->sess, r->kind, r->watch, sim_e->paths[r->path].name,
            (unsigned long long)st->mzxid, (unsigned long long)r->zxid, stale[s], v->role);
  switch (r->kind) {
  case OP_GET:
  case OP_GETACL:
    r->err = st->exists ? ZOK : ZNONODE;
    if (r->watch && st->exists && r->kind == OP_GET)
      tbl_add(&c->wdata, &c->nwdata, &c->capwdata, r->path);
    break;
  case OP_EXISTS:
    r->err = st->exists ? ZOK : ZNONODE;
    if (r->watch) tbl_add(&c->wdata, &c->nwdata, &c->capwdata, r->path);
    break;
  case OP_CHILDREN: {
    r->err = st->exists ? ZOK : ZNONODE;
    if (!st->exists) break;
    if (r->watch) tbl_add(&c->wchild, &c->nwchild, &c->capwchild, r->path);
    sim_path_t *sp = &sim_e->paths[r->path];
    r->nkids = 0;
    for (int i = 0; i < sp->nkids && r->nkids < SIM_CHMAX; i++)
      if (ens_state(sp->kids[i], v->applied)->exists) r->kids[r->nkids++] = sp->kids[i];
    break;
  }
  }
}

/* ZooKeeper's DataTree.setWatches: fire at once what changed since
 * relativeZxid, register the rest. */
static void do_setwatches(int s, sim_conn_t *c, sim_sreq_t *r) {
  int a = S(s)->applied;
  for (int i = 0; i < r->nwd + r->nwe + r->nwc; i++) {
    int p = r->wpaths[i];
    const sim_nver_t *st = ens_state(p, a);
    if (i < r->nwd) {
      if (!st->exists) notify(c, ZOO_DELETED_EVENT, p);
      else if (st->mzxid > r->relzxid) notify(c, ZOO_CHANGED_EVENT, p);
      else tbl_add(&c->wdata, &c->nwdata, &c->capwdata, p);
    } else if (i < r->nwd + r->nwe) {
      if (st->exists) notify(c, ZOO_CREATED_EVENT, p);
      else tbl_add(&c->wdata, &c->nwdata, &c->capwdata, p);
    } else {
      if (!st->exists) notify(c, ZOO_DELETED_EVENT, p);
      else if (st->pzxid > r->relzxid) notify(c, ZOO_CHILD_EVENT, p);
      else tbl_add(&c->wchild, &c->nwchild, &c->capwchild, p);
    }
  }
  r->err = ZOK;
  r->zxid = srv_zxid(s);
}

static void do_rmwatch(sim_conn_t *c, sim_sreq_t *r) {
  int child = r->wtype == ZWATCHTYPE_CHILD || r->wtype == ZWATCHTYPE_ANY;
  int data = r->wtype == ZWATCHTYPE_DATA || r->wtype == ZWATCHTYPE_ANY;
  int found = (child && tbl_has(c->wchild, c->nwchild, r->path)) ||
              (data && tbl_has(c->wdata, c->nwdata, r->path));
  if (found && r->kind == OP_REMOVEWATCHES) {
    if (child) tbl_del(c->wchild, &c->nwchild, r->path);
    if (data) tbl_del(c->wdata, &c->nwdata, r->path);
  }
  r->err = found ? ZOK : ZNOWATCHER;
}

static int is_write(int k) {
  return k == OP_CREATE || k == OP_DELETE || k == OP_SET || k == OP_SETACL || k == OP_MULTI ||
         k == OP_CLOSE;
}

/* Moves the session pipeline of c on: writes and syncs go to the leader
 * as they come; everything else waits for the requests before it;
 * replies leave in order. */
static void pump(int s, sim_conn_t *c) {
  sim_srv_t *v = S(s);
  if (!c->srv_open || v->hung || v->role == ROLE_DOWN) return;
  int head = 1;
  for (sim_sreq_t *r = c->qhead; r; r = r->next) {
    if (r->state == RS_NEW) {
      if (is_write(r->kind)) {
        r->state = RS_WAIT;
        ss_send(s, v->leader, lead_write, r, 0);
      } else if (r->kind == OP_SYNC) {
        r->state = RS_WAIT;
        ss_send(s, v->leader, lead_sync, r, 0);
      } else if (r->kind == OP_CREATE_SESSION) {
        r->state = RS_WAIT;
        ss_send(s, v->leader, lead_session, r, 0);
      } else if (head || sim_w->bug == SIM_BUG_STALE_READ) {
        if (r->moved) (void)0; /* refused: nothing read, no watch set */
        else if (r->kind == OP_PING) r->err = ZOK, r->zxid = srv_zxid(s);
        else if (r->kind == OP_SETWATCHES) do_setwatches(s, c, r);
        else if (r->kind == OP_CHECKWATCHES || r->kind == OP_REMOVEWATCHES) do_rmwatch(c, r);
        else do_read(s, c, r);
        r->state = RS_READY;
      }
    }
    if (r->state != RS_READY) head = 0;
  }
  while (c->qhead && c->qhead->state == RS_READY && c->srv_open) {
    sim_sreq_t *r = c->qhead;
    c->qhead = r->next;
    if (!c->qhead) c->qtail = NULL;
    r->next = NULL;
    if (r->kind == OP_CREATE_SESSION) {
      if (r->valid) {
        /* ZooKeeper closes this server's other connections of the session. */
        int si = sess_find(r->sid);
        for (int i = 0; i < v->nconns; i++)
          if (v->conns[i] != c && v->conns[i]->sess == si) {
            close_fin(s, v->conns[i]);
            i--;
          }
        c->sess = si;
      } else {
        r->sid = 0;
        r->timeout = 0;
      }
      int valid = r->valid;
      send_reply(s, c, r); /* the queue's reference goes with the reply */
      if (!valid) close_fin(s, c);
      continue;
    }
    if (r->moved) {
      /* cnxn.sendCloseSession(): the replies before it go, then the close. */
      if (--r->refs == 0) net_req_free(r);
      close_fin(s, c);
      break;
    }
    int kind = r->kind;
    send_reply(s, c, r);
    if (kind == OP_CLOSE) break;
  }
}

static void handshake(int s, sim_conn_t *c, sim_msg_t *m) {
  sim_srv_t *v = S(s);
  if (v->role != ROLE_LEADER && v->role != ROLE_FOLLOWER) {
    close_fin(s, c); /* ZooKeeperServer not running */
    return;
  }
  if (m->last_zxid > srv_zxid(s)) {
    close_fin(s, c); /* the client has seen a newer zxid than this server */
    return;
  }
  sim_sreq_t *r = net_req();
  r->kind = OP_CREATE_SESSION;
  r->conn = c;
  r->refs = 1;
  r->sid = m->sid;
  memcpy(r->passwd, m->passwd, 16);
  r->timeout = m->timeout;
  if (c->qtail) c->qtail->next = r;
  else c->qhead = r;
  c->qtail = r;
  pump(s, c);
}

static void recv_later(void *a, uint64_t b) { ens_recv((int)b, a); }

void ens_recv(int s, sim_msg_t *m) {
  sim_srv_t *v = S(s);
  sim_conn_t *c = m->conn;
  if (v->role == ROLE_DOWN) {
    /* No process: the kernel resets the connection. */
    if (m->type != M_RST && m->type != M_FIN && c->cli_open) net_send(net_msg(M_RST, c), 0);
    net_msg_free(m);
    return;
  }
  if (m->type == M_SYN) {
    /* The kernel accepts, even for a hung or not-serving server. */
    c->accepted = 1;
    c->srv_open = 1;
    if (v->nconns == v->capconns) {
      v->capconns = v->capconns ? 2 * v->capconns : 8;
      v->conns = realloc(v->conns, (size_t)v->capconns * sizeof *v->conns);
    }
    v->conns[v->nconns++] = c;
    net_send(net_msg(M_SYNACK, c), 0);
    net_msg_free(m);
    return;
  }
  if (!c->srv_open) {
    net_msg_free(m);
    return;
  }
  if (v->hung) {
    inbox_push(s, recv_later, m, (uint64_t)s);
    return;
  }
  switch (m->type) {
  case M_FIN:
  case M_RST: conn_closed(s, c); break;
  case M_CONNREQ: handshake(s, c, m); break;
  case M_REQ: {
    sim_sreq_t *r = m->req;
    m->req = NULL;
    if (c->sess < 0) {
      net_req_free(r);
      break;
    }
    touch(s, c->sess);
    /* The leader's PrepRequestProcessor checks the owner of every request
     * of its own clients as it comes (writes: in lead_write). */
    if (v->role == ROLE_LEADER && sim_e->leader == s && !is_write(r->kind) && r->kind != OP_AUTH &&
        sim_e->sess[c->sess].state == SESS_ALIVE && sim_e->sess[c->sess].owner != s)
      r->moved = 1;
    if (r->kind == OP_AUTH) {
      /* Out of band: answered at once; a refused credential closes it. */
      r->err = (r->dlen == 6 && memcmp(r->data, "digest", 6) == 0) ? ZOK : ZAUTHFAILED;
      r->refs = 1;
      send_reply(s, c, r);
      if (r->err) close_fin(s, c);
      break;
    }
    r->conn = c;
    r->refs = 1;
    if (c->qtail) c->qtail->next = r;
    else c->qhead = r;
    c->qtail = r;
    pump(s, c);
    break;
  }
  }
  net_msg_free(m);
}

/* ---- elections, the tick ---- */

static void elect(int group) {
  sim_ens_t *e = sim_e;
  int best = -1;
  for (int s = 0; s < e->n; s++) {
    if (!alive(s) || S(s)->role != ROLE_LOOKING || S(s)->group != group) continue;
    if (best < 0 || S(s)->applied > S(best)->applied ||
        (S(s)->applied == S(best)->applied && s > best))
      best = s;
  }
  truncate_uncommitted();
  for (int s = 0; s < e->n; s++)
    if (S(s)->role == ROLE_LEADER) set_stale(s, 1); /* deposed, and may not know it yet */
  e->epoch++;
  e->counter = 0;
  e->leader = best;
  for (int s = 0; s < e->n; s++) {
    if (!alive(s) || S(s)->role != ROLE_LOOKING || S(s)->group != group) continue;
    set_role(s, s == best ? ROLE_LEADER : ROLE_FOLLOWER);
    S(s)->epoch = e->epoch;
    S(s)->leader = best;
    S(s)->applied = e->committed; /* synced with the new leader */
  }
  S(best)->commit_seen = e->committed;
  for (int i = 0; i < e->nsess; i++) e->sess[i].last_touch = sim_w->now;
}

static void tick(void *a, uint64_t b) {
  (void)a, (void)b;
  sim_ens_t *e = sim_e;
  uint64_t now = sim_w->now;
  for (int s = 0; s < e->n; s++) {
    sim_srv_t *v = S(s);
    if (!alive(s)) continue;
    if (v->role == ROLE_FOLLOWER) {
      int l = v->leader;
      if (l < 0 || S(l)->role != ROLE_LEADER || S(l)->epoch != v->epoch) {
        goto_looking(s); /* its leader's connection broke */
      } else if (S(l)->hung || S(l)->group != v->group) {
        if (!v->bad_since) v->bad_since = now;
        else if (now - v->bad_since >= e->sync_timeout) goto_looking(s);
      } else {
        v->bad_since = 0;
      }
    } else if (v->role == ROLE_LEADER) {
      if (has_quorum(s) && s == e->leader) {
        v->bad_since = 0;
      } else if (!has_quorum(s) || s != e->leader) {
        if (!v->bad_since) {
          v->bad_since = now;
          v->stepdown_delay = sim_range(e->sync_timeout, 3 * e->sync_timeout);
        } else if (now - v->bad_since >= v->stepdown_delay) {
          goto_looking(s);
        }
      }
    }
  }
  /* Joins and elections. */
  if (leader_ok()) {
    for (int s = 0; s < e->n; s++) {
      sim_srv_t *v = S(s);
      if (alive(s) && v->role == ROLE_LOOKING && v->group == S(e->leader)->group &&
          now - v->looking_since >= e->election_delay / 2) {
        set_role(s, ROLE_FOLLOWER);
        v->epoch = e->epoch;
        v->leader = e->leader;
        v->applied = e->committed;
      }
    }
  } else {
    int cnt[SIM_MAX_SRV] = {0}, ready[SIM_MAX_SRV] = {0};
    for (int s = 0; s < e->n; s++) {
      if (!alive(s) || S(s)->role != ROLE_LOOKING) continue;
      cnt[S(s)->group]++;
      if (now - S(s)->looking_since >= e->election_delay) ready[S(s)->group]++;
    }
    for (int g = 0; g < SIM_MAX_SRV; g++)
      if (cnt[g] >= ens_quorum() && ready[g] >= ens_quorum()) {
        elect(g);
        break;
      }
  }
  /* The leader's session tracker. */
  if (leader_ok()) {
    for (int i = 0; i < e->nsess; i++) {
      sim_sess_t *x = &e->sess[i];
      if (x->state == SESS_ALIVE && now - x->last_touch > (uint64_t)x->timeout * SIM_MS) {
        x->state = SESS_CLOSING;
        int idx = append_txn(OP_CLOSE, i, -1, NULL);
        for (int p = 0; p < e->npaths; p++) {
          const sim_nver_t *v = latest(p);
          if (v->exists && v->owner == x->id) {
            sim_subop_t *o = add_op(idx);
            o->kind = OP_DELETE;
            o->path = p;
            o->version = -1;
            apply_op(idx, o, 0);
          }
        }
        x->close_idx = idx;
        propose(idx);
      }
    }
  }
  sim_after(50 * SIM_MS, tick, NULL, 0);
}

/* ---- set-up and faults ---- */

void ens_init(sim_ens_t *e, int n) {
  memset(e, 0, sizeof *e);
  memset(ss_last, 0, sizeof ss_last);
  memset(stale, 0, sizeof stale);
  sim_e = e;
  e->n = n;
  e->leader = -1;
  e->next_sid = 0x1000000000000LL + (int64_t)sim_range(1, 0xffff) * 0x100000000LL;
  e->sync_timeout = sim_range(400, 1500) * SIM_MS;
  e->election_delay = sim_range(100, 600) * SIM_MS;
  e->ss_delay = sim_range(100, 600) * 1000;
  int root = ens_path("/");
  sim_path_t *sp = &e->paths[root];
  sp->capv = 4;
  sp->v = calloc(4, sizeof *sp->v);
  sp->v[0] = absent_ver;
  sp->v[0].exists = 1;
  sp->nv = 1;
  for (int s = 0; s < n; s++) {
    S(s)->id = s;
    S(s)->leader = -1;
    set_role(s, ROLE_LOOKING);
    S(s)->looking_since = 0;
  }
  sim_after(50 * SIM_MS, tick, NULL, 0);
}

static void env_drop(void *a) {
  env_t *m = a;
  if (m->r && --m->r->refs == 0) net_req_free(m->r);
  m->next = free_env;
  free_env = m;
}

/* What a hung server held, dropped (it died, or the world ends). */
static void inbox_drop(sim_srv_t *v) {
  for (int i = 0; i < v->nin; i++) {
    sim_ev_t *ev = &v->inbox[i];
    if (ev->fn == env_arrive) env_drop(ev->a);
    else if (ev->fn == recv_later) net_msg_free(ev->a);
  }
  v->nin = 0;
}

/* Before net_free (the requests go back to its pool). */
void ens_free(sim_ens_t *e) {
  sim_pending_each(env_arrive, env_drop);
  for (int s = 0; s < e->n; s++) inbox_drop(&e->srv[s]);
  for (int i = 0; i < e->nlog; i++)
    if (e->log[i].req && --e->log[i].req->refs == 0) net_req_free(e->log[i].req);
  for (int p = 0; p < e->npaths; p++) {
    free(e->paths[p].name);
    free(e->paths[p].kids);
    free(e->paths[p].v);
  }
  free(e->paths);
  free(e->pidx);
  free(e->log);
  free(e->served);
  free(e->ops);
  free(e->sess);
  for (int s = 0; s < e->n; s++) {
    free(e->srv[s].aq);
    free(e->srv[s].conns);
    free(e->srv[s].inbox);
  }
  while (free_env) {
    env_t *nx = free_env->next;
    free(free_env);
    free_env = nx;
  }
  if (sim_e == e) sim_e = NULL;
}

void ens_kill(int s) {
  sim_srv_t *v = S(s);
  if (v->role == ROLE_DOWN) return;
  close_all_conns(s, 1);
  if (sim_e->leader == s) sim_e->leader = -1;
  set_role(s, ROLE_DOWN);
  v->hung = 0;
  inbox_drop(v);
}

void ens_restart(int s) {
  if (S(s)->role != ROLE_DOWN) return;
  set_role(s, ROLE_LOOKING);
}

void ens_hang(int s) {
  if (S(s)->role != ROLE_DOWN) S(s)->hung = 1;
}

void ens_resume(int s) {
  sim_srv_t *v = S(s);
  if (!v->hung) return;
  v->hung = 0;
  v->bad_since = 0;
  int n = v->nin;
  sim_ev_t *in = v->inbox;
  v->inbox = NULL;
  v->nin = v->capin = 0;
  for (int i = 0; i < n; i++) sim_after(0, in[i].fn, in[i].a, in[i].b);
  free(in);
  sched_apply(s);
}

void ens_set_lag(int s, uint64_t lag) { S(s)->lag = lag; }

void ens_partition(const int *group) {
  for (int s = 0; s < sim_e->n; s++) S(s)->group = group ? group[s] : 0;
}

void ens_expire(int64_t id) {
  int i = sess_find(id);
  if (i >= 0) sim_e->sess[i].last_touch = 0;
}

void ens_heal(void) {
  for (int s = 0; s < sim_e->n; s++) {
    ens_resume(s);
    ens_restart(s);
    ens_set_lag(s, 0);
  }
  ens_partition(NULL);
}

int ens_srvr(int s, int *role, int64_t *zxid) {
  sim_srv_t *v = S(s);
  if (v->role == ROLE_DOWN) return -1;
  if (v->hung) return -2;
  *role = v->role;
  *zxid = srv_zxid(s);
  return 0;
}
