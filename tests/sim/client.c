/* The model of libzookeeper_mt 3.8 behind zkroute's function table
 * (zkroute/zk/zkapi.h): one zhandle per zookeeper_init, with its states
 * (NOTCONNECTED, CONNECTING, ASSOCIATING, CONNECTED, 0 between a loss and
 * the next attempt, EXPIRED_SESSION, AUTH_FAILED), its one connection to
 * one server of its host string at a time, its FIFO of outstanding
 * requests, its timers (a connection silent for 2/3 of the negotiated
 * timeout is dropped; a ping after 1/3 idle), its three watch tables with
 * the stock client's dedup and delivery order, SetWatches with the last
 * zxid on reconnect, and its completion thread (one queue of completions
 * and watcher events, delivered one per world event, never from inside a
 * zoo_a* call).  docs/simulation.md cites the stock source for each rule. */
#include "sim.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <netinet/in.h>

#include "model/srvr.h"
#include "zk/zkapi.h"
#include "zkroute.h"

enum { C_VOID, C_STAT, C_DATA, C_STRINGS, C_STRINGS_STAT, C_STRING, C_STRING_STAT, C_ACL, C_MULTI };
enum { T_DATA, T_EXIST, T_CHILD };

typedef struct creq {
  struct creq *next;
  int kind, xid, ctype, sent, sync_wait, done, rc;
  void *cb;
  const void *data;
  watcher_fn wfn; /* registration on success */
  void *wctx;
  int path;
  int rm, rm_type, rm_all; /* deregistration on success */
  watcher_fn rm_fn;
  void *rm_ctx;
  sim_sreq_t *req; /* payload until sent */
  sim_msg_t *reply;
  zoo_op_result_t *results;
  const zoo_op_t *ops;
  int nres;
} creq_t;

typedef struct wentry {
  int path;
  watcher_fn fn;
  void *ctx;
} wentry_t;

typedef struct wtable {
  wentry_t *e;
  int n, cap;
} wtable_t;

typedef struct pair {
  watcher_fn fn;
  void *ctx;
} pair_t;

typedef struct ditem {
  struct ditem *next;
  creq_t *r; /* a completion, or NULL for a watcher event */
  int type, state, path, npairs;
  pair_t *pairs;
} ditem_t;

typedef struct auth {
  char scheme[32];
  void_completion_t cb;
  const void *data;
} auth_t;

typedef struct sim_zh {
  int id, closed, close_requested, close_deferred;
  uint64_t lose_at; /* --io-loss: the event (events + 1) whose next request on
                       this zhandle finds the connection lost; 0 none */
  int hosts[SIM_MAX_SRV], nhosts, cur;
  watcher_fn fn;
  void *ctx;
  int recv_timeout, state, seen_rw, delay, xid;
  clientid_t cid;
  int64_t last_zxid;
  sim_conn_t *conn;
  uint64_t last_recv, last_send;
  creq_t *head, *tail; /* outstanding, in issue order */
  wtable_t tab[3];
  auth_t *auths;
  int nauth, capauth, auth_pending;
  ditem_t *dq, *dq_tail;
  int dq_sched, in_callback;
  uint32_t timer_gen;
  int timer_pending;
  uint64_t timer_at;
} sim_zh_t;

static sim_zh_t **handles;
static int nhandles, caphandles;
int sim_cli_misuse;
char sim_cli_misuse_msg[160];

static void misuse(const char *what) {
  if (!sim_cli_misuse++)
    snprintf(sim_cli_misuse_msg, sizeof sim_cli_misuse_msg, "%s at %.3f s", what,
             (double)sim_w->now / 1e9);
}

void cli_init(void) { nhandles = 0; }

static void free_item(ditem_t *d);

void cli_free(void) {
  for (int i = 0; i < nhandles; i++) {
    sim_zh_t *h = handles[i];
    for (int t = 0; t < 3; t++) free(h->tab[t].e);
    free(h->auths);
    while (h->head) {
      creq_t *r = h->head;
      h->head = r->next;
      if (r->req) net_req_free(r->req);
      if (r->reply) net_msg_free(r->reply);
      free(r);
    }
    while (h->dq) {
      ditem_t *d = h->dq;
      h->dq = d->next;
      free_item(d);
    }
    free(h);
  }
  free(handles);
  handles = NULL;
  nhandles = caphandles = 0;
  sim_cli_misuse = 0;
}

int cli_handle_count(void) { return nhandles; }

static int timeout_ms_23(sim_zh_t *h) { return h->recv_timeout * 2 / 3; }

/* ---- the completion thread ---- */

static void deliver(void *a, uint64_t b);

static void dq_push(sim_zh_t *h, ditem_t *d) {
  d->next = NULL;
  if (h->dq_tail) h->dq_tail->next = d;
  else h->dq = d;
  h->dq_tail = d;
  if (!h->dq_sched && !h->in_callback) {
    h->dq_sched = 1;
    sim_after_app(sim_range(2, 30) * 1000, deliver, h, 0);
  }
}

static void free_item(ditem_t *d) {
  if (d->r) {
    if (d->r->reply) net_msg_free(d->r->reply);
    if (d->r->req) net_req_free(d->r->req);
    free(d->r);
  }
  free(d->pairs);
  free(d);
}

static const char *pname(int p) { return p >= 0 ? sim_e->paths[p].name : ""; }

static void call_completion(sim_zh_t *h, creq_t *r) {
  (void)h;
  int rc = r->rc;
  sim_sreq_t *q = r->reply ? r->reply->req : NULL;
  struct Stat st;
  memset(&st, 0, sizeof st);
  if (q && rc == ZOK) {
    const sim_nver_t *v = &q->st;
    st.czxid = v->czxid;
    st.mzxid = v->mzxid;
    st.pzxid = v->pzxid;
    st.version = v->version;
    st.cversion = v->cversion;
    st.aversion = v->aversion;
    st.ephemeralOwner = v->owner;
    st.dataLength = v->dlen;
    st.numChildren = v->nchild;
    st.ctime = v->czxid & 0xffffffff;
    st.mtime = v->mzxid & 0xffffffff;
  }
  int ok = q && rc == ZOK;
  if (r->ctype == C_MULTI) ok = q && q->err == ZOK;
  switch (r->ctype) {
  case C_VOID:
    if (r->cb) ((void_completion_t)r->cb)(rc, r->data);
    break;
  case C_STAT: ((stat_completion_t)r->cb)(rc, ok ? &st : NULL, r->data); break;
  case C_DATA:
    ((data_completion_t)r->cb)(rc, ok ? q->st.data : NULL, ok ? q->st.dlen : -1, ok ? &st : NULL,
                               r->data);
    break;
  case C_STRINGS:
  case C_STRINGS_STAT: {
    struct String_vector sv = {0, NULL};
    char *names[SIM_CHMAX];
    if (ok) {
      sv.count = q->nkids;
      sv.data = names;
      for (int i = 0; i < q->nkids; i++) {
        const char *full = pname(q->kids[i]);
        names[i] = (char *)strrchr(full, '/') + 1;
      }
    }
    if (r->ctype == C_STRINGS) ((strings_completion_t)r->cb)(rc, ok ? &sv : NULL, r->data);
    else ((strings_stat_completion_t)r->cb)(rc, ok ? &sv : NULL, ok ? &st : NULL, r->data);
    break;
  }
  case C_STRING:
    ((string_completion_t)r->cb)(rc, ok ? pname(r->kind == OP_SYNC ? r->path : q->res_path) : NULL,
                                 r->data);
    break;
  case C_STRING_STAT:
    ((string_stat_completion_t)r->cb)(rc, ok ? pname(q->res_path) : NULL, ok ? &st : NULL, r->data);
    break;
  case C_ACL: {
    struct ACL acl = {ZOO_PERM_ALL, {"world", "anyone"}};
    struct ACL_vector av = {1, &acl};
    ((acl_completion_t)r->cb)(rc, ok ? &av : NULL, ok ? &st : NULL, r->data);
    break;
  }
  case C_MULTI:
    for (int i = 0; i < r->nres; i++) {
      zoo_op_result_t *res = &r->results[i];
      const zoo_op_t *op = &r->ops[i];
      int e = q && q->err == ZOK ? q->mres_err[i] : rc;
      res->err = e;
      if (op->type == ZOO_CREATE_OP) {
        res->value = op->create_op.buf;
        res->valuelen = op->create_op.buflen;
        if (e == ZOK && q && res->value && res->valuelen > 0) {
          snprintf(res->value, (size_t)res->valuelen, "%s", pname(q->mres_path[i]));
        } else {
          res->value = NULL;
        }
      } else if (op->type == ZOO_SETDATA_OP) {
        res->stat = op->set_op.stat;
        if (res->stat && e == ZOK && q) {
          /* The node's Stat after the multi (stock: the set's
           * SetDataResponse Stat), its version the set's own. */
          const sim_nver_t *v = &q->mres_st[i];
          memset(res->stat, 0, sizeof *res->stat);
          res->stat->czxid = v->czxid;
          res->stat->mzxid = q->zxid;
          res->stat->pzxid = v->pzxid;
          res->stat->cversion = v->cversion;
          res->stat->aversion = v->aversion;
          res->stat->ephemeralOwner = v->owner;
          res->stat->dataLength = v->dlen;
          res->stat->numChildren = v->nchild;
          res->stat->ctime = v->czxid & 0xffffffff;
          res->stat->mtime = q->zxid & 0xffffffff;
          res->stat->version = q->mres_ver[i];
        } else {
          res->stat = NULL;
        }
      }
    }
    if (r->cb) ((void_completion_t)r->cb)(rc, r->data);
    break;
  }
}

static void finish_close(sim_zh_t *h);

static void deliver_one(sim_zh_t *h) {
  ditem_t *d = h->dq;
  h->dq = d->next;
  if (!h->dq) h->dq_tail = NULL;
  h->in_callback = 1;
  if (d->r) {
    call_completion(h, d->r);
  } else {
    const char *path = d->type == ZOO_SESSION_EVENT ? "" : pname(d->path);
    for (int i = 0; i < d->npairs; i++)
      d->pairs[i].fn((zhandle_t *)h, d->type, d->state, path, d->pairs[i].ctx);
  }
  h->in_callback = 0;
  free_item(d);
}

static void deliver(void *a, uint64_t b) {
  (void)b;
  sim_zh_t *h = a;
  h->dq_sched = 0;
  if (h->closed || h->in_callback || !h->dq) return;
  deliver_one(h);
  if (h->close_deferred) {
    /* zookeeper_close from a callback: the completion thread drains the
     * queue (ZCLOSING included), then the handle is destroyed. */
    while (h->dq) deliver_one(h);
    finish_close(h);
    return;
  }
  if (h->dq && !h->dq_sched && !h->closed) {
    h->dq_sched = 1;
    sim_after_app(sim_range(2, 30) * 1000, deliver, h, 0);
  }
}

/* ---- watch tables ---- */

static int tab_find(wtable_t *t, int path, watcher_fn fn, void *ctx) {
  for (int i = 0; i < t->n; i++)
    if (t->e[i].path == path && (!fn || (t->e[i].fn == fn && t->e[i].ctx == ctx))) return i;
  return -1;
}

/* zk_hashtable.c add_to_list: a (watcher, context) pair once per path. */
static void tab_add(wtable_t *t, int path, watcher_fn fn, void *ctx) {
  if (tab_find(t, path, fn, ctx) >= 0) return;
  if (t->n == t->cap) {
    t->cap = t->cap ? 2 * t->cap : 8;
    t->e = realloc(t->e, (size_t)t->cap * sizeof *t->e);
  }
  t->e[t->n++] = (wentry_t){path, fn, ctx};
}

static void tab_remove(wtable_t *t, int path, watcher_fn fn, void *ctx) {
  int j = 0;
  for (int i = 0; i < t->n; i++) {
    int hit = t->e[i].path == path && (!fn || (t->e[i].fn == fn && t->e[i].ctx == ctx));
    if (!hit) t->e[j++] = t->e[i];
  }
  t->n = j;
}

static int in_pairs(pair_t *p, int n, watcher_fn fn, void *ctx) {
  for (int i = 0; i < n; i++)
    if (p[i].fn == fn && p[i].ctx == ctx) return 1;
  return 0;
}

/* Moves path's entries of table t out, registration order, skipping pairs
 * already collected (into out[]: the section starting at *n). */
static int take(wtable_t *t, int path, pair_t *out, int n, int upto) {
  int j = 0;
  for (int i = 0; i < t->n; i++) {
    wentry_t *w = &t->e[i];
    if (w->path != path) {
      t->e[j++] = *w;
      continue;
    }
    if (!in_pairs(out, upto, w->fn, w->ctx) && !in_pairs(out + upto, n - upto, w->fn, w->ctx))
      out[n++] = (pair_t){w->fn, w->ctx};
  }
  t->n = j;
  return n;
}

/* zk_hashtable.c collectWatchers: data watchers (node table) first into
 * the list, then exist, then child, each one prepended, so a later table's
 * section comes first and a pair already listed keeps its first place. */
static ditem_t *collect(sim_zh_t *h, int type, int path) {
  int max = h->tab[0].n + h->tab[1].n + h->tab[2].n + 1;
  pair_t *node = malloc((size_t)max * sizeof *node), *exist = malloc((size_t)max * sizeof *exist),
         *child = malloc((size_t)max * sizeof *child);
  int nn = 0, ne = 0, nc = 0;
  if (type == ZOO_CREATED_EVENT || type == ZOO_CHANGED_EVENT || type == ZOO_DELETED_EVENT) {
    nn = take(&h->tab[T_DATA], path, node, 0, 0);
    /* exist entries not already in node */
    for (int i = 0, j = 0; i < h->tab[T_EXIST].n; i++) {
      wentry_t *w = &h->tab[T_EXIST].e[i];
      if (w->path == path) {
        if (!in_pairs(node, nn, w->fn, w->ctx) && !in_pairs(exist, ne, w->fn, w->ctx))
          exist[ne++] = (pair_t){w->fn, w->ctx};
      } else {
        h->tab[T_EXIST].e[j++] = *w;
      }
      if (i == h->tab[T_EXIST].n - 1) h->tab[T_EXIST].n = j;
    }
  }
  if (type == ZOO_CHILD_EVENT || type == ZOO_DELETED_EVENT) {
    for (int i = 0, j = 0; i < h->tab[T_CHILD].n; i++) {
      wentry_t *w = &h->tab[T_CHILD].e[i];
      if (w->path == path) {
        if (!in_pairs(node, nn, w->fn, w->ctx) && !in_pairs(exist, ne, w->fn, w->ctx) &&
            !in_pairs(child, nc, w->fn, w->ctx))
          child[nc++] = (pair_t){w->fn, w->ctx};
      } else {
        h->tab[T_CHILD].e[j++] = *w;
      }
      if (i == h->tab[T_CHILD].n - 1) h->tab[T_CHILD].n = j;
    }
  }
  ditem_t *d = calloc(1, sizeof *d);
  d->type = type;
  d->state = ZOO_CONNECTED_STATE;
  d->path = path;
  d->pairs = malloc((size_t)(nn + ne + nc + 1) * sizeof *d->pairs);
  memcpy(d->pairs, child, (size_t)nc * sizeof *child);
  memcpy(d->pairs + nc, exist, (size_t)ne * sizeof *exist);
  memcpy(d->pairs + nc + ne, node, (size_t)nn * sizeof *node);
  d->npairs = nn + ne + nc;
  free(node);
  free(exist);
  free(child);
  return d;
}

/* Session events go to every registered pair and the default watcher,
 * which stock's list holds last (it is added first and every other entry
 * is prepended). */
static void session_event(sim_zh_t *h, int state) {
  if (getenv("SIM_TRACE_SESSIONS"))
    fprintf(stderr, "TRACE %.6f zh %d (hosts %d, at sim%d) session %#llx state %d\n",
            (double)sim_w->now / 1e9, h->id, h->nhosts, h->hosts[h->cur] + 1,
            (unsigned long long)h->cid.client_id, state);
  int max = h->tab[0].n + h->tab[1].n + h->tab[2].n + 1;
  ditem_t *d = calloc(1, sizeof *d);
  d->type = ZOO_SESSION_EVENT;
  d->state = state;
  d->path = -1;
  d->pairs = malloc((size_t)max * sizeof *d->pairs);
  int n = 0;
  for (int t = 2; t >= 0; t--)
    for (int i = h->tab[t].n - 1; i >= 0; i--) {
      wentry_t *w = &h->tab[t].e[i];
      if ((w->fn == h->fn && w->ctx == h->ctx) || in_pairs(d->pairs, n, w->fn, w->ctx)) continue;
      d->pairs[n++] = (pair_t){w->fn, w->ctx};
    }
  if (h->fn) d->pairs[n++] = (pair_t){h->fn, h->ctx};
  d->npairs = n;
  dq_push(h, d);
}

/* ---- connection and timers ---- */

static void timer_ev(void *a, uint64_t b);

static void timer_at(sim_zh_t *h, uint64_t t) {
  if (h->timer_pending && h->timer_at <= t) return;
  h->timer_gen++;
  h->timer_pending = 1;
  h->timer_at = t;
  sim_at(t, timer_ev, h, h->timer_gen);
}

static void send_req(sim_zh_t *h, sim_sreq_t *q) {
  sim_msg_t *m = net_msg(M_REQ, h->conn);
  m->req = q;
  q->refs = 1;
  net_send(m, 1);
  h->last_send = sim_w->now;
}

static void send_creq(sim_zh_t *h, creq_t *r) {
  r->sent = 1;
  sim_sreq_t *q = r->req;
  r->req = NULL;
  send_req(h, q);
}

static void fail_all(sim_zh_t *h, int rc) {
  creq_t *r = h->head;
  h->head = h->tail = NULL;
  while (r) {
    creq_t *nx = r->next;
    r->next = NULL;
    r->rc = rc;
    if (r->req) {
      net_req_free(r->req);
      r->req = NULL;
    }
    if (r->sync_wait) {
      r->done = 1; /* a synchronous call: notified, never queued */
    } else {
      ditem_t *d = calloc(1, sizeof *d);
      d->r = r;
      dq_push(h, d);
    }
    r = nx;
  }
  /* free_completions calls the pending add_auth completions itself. */
  if (h->auth_pending) {
    h->auth_pending = 0;
    for (int i = 0; i < h->nauth; i++)
      if (h->auths[i].cb) {
        void_completion_t cb = h->auths[i].cb;
        h->auths[i].cb = NULL;
        cb(rc, h->auths[i].data);
      }
  }
}

static int unrecoverable(sim_zh_t *h) { return h->state < 0; }

/* zookeeper.c cleanup() + handle_error(). */
static void handle_error(sim_zh_t *h, int rc) {
  if (h->conn) {
    sim_conn_t *c = h->conn;
    h->conn = NULL;
    if (c->cli_open) {
      c->cli_open = 0;
      net_send(net_msg(M_FIN, c), 1);
    }
  }
  if (unrecoverable(h)) session_event(h, h->state);
  else if (h->state == ZOO_CONNECTED_STATE) session_event(h, ZOO_CONNECTING_STATE);
  fail_all(h, rc);
  if (!unrecoverable(h)) h->state = 0;
  h->delay = h->cur == h->nhosts - 1;
  if (!unrecoverable(h) && !h->closed) timer_at(h, sim_w->now);
}

static void start_connect(sim_zh_t *h) {
  h->cur = (h->cur + 1) % h->nhosts;
  h->conn = net_conn(h->hosts[h->cur], h);
  h->state = ZOO_CONNECTING_STATE;
  h->last_recv = h->last_send = sim_w->now;
  net_send(net_msg(M_SYN, h->conn), 1);
}

static void timer_ev(void *a, uint64_t b) {
  sim_zh_t *h = a;
  if ((uint32_t)b != h->timer_gen) return;
  h->timer_pending = 0;
  if (h->closed || unrecoverable(h)) return;
  uint64_t now = sim_w->now, ms = SIM_MS;
  if (!h->conn) {
    if (h->delay) {
      h->delay = 0;
      timer_at(h, now + (uint64_t)(h->recv_timeout / 60) * ms);
      return;
    }
    start_connect(h);
  } else if (now - h->last_recv >= (uint64_t)timeout_ms_23(h) * ms) {
    handle_error(h, ZOPERATIONTIMEOUT);
    return;
  } else if (h->state == ZOO_CONNECTED_STATE &&
             now - h->last_send >= (uint64_t)(h->recv_timeout / 3) * ms && !h->head) {
    sim_sreq_t *q = net_req();
    q->kind = OP_PING;
    send_req(h, q);
  }
  uint64_t next = h->last_recv + (uint64_t)timeout_ms_23(h) * ms;
  if (h->state == ZOO_CONNECTED_STATE) {
    uint64_t p = h->last_send + (uint64_t)(h->recv_timeout / 3) * ms;
    if (p < next) next = p;
  }
  if (next <= now) next = now + ms;
  timer_at(h, next);
}

static void send_setwatches(sim_zh_t *h) {
  int n = h->tab[0].n + h->tab[1].n + h->tab[2].n;
  if (!n) return;
  sim_sreq_t *q = net_req();
  q->kind = OP_SETWATCHES;
  q->wpaths = malloc((size_t)n * sizeof *q->wpaths);
  int k = 0;
  int *cnt[3] = {&q->nwd, &q->nwe, &q->nwc};
  for (int t = 0; t < 3; t++) {
    int start = k;
    for (int i = 0; i < h->tab[t].n; i++) {
      int p = h->tab[t].e[i].path, dup = 0;
      for (int j = start; j < k; j++) dup |= q->wpaths[j] == p;
      if (!dup) q->wpaths[k++] = p;
    }
    *cnt[t] = k - start;
  }
  q->relzxid = h->last_zxid;
  send_req(h, q);
}

static void send_auth(sim_zh_t *h, const char *scheme) {
  sim_sreq_t *q = net_req();
  q->kind = OP_AUTH;
  q->dlen = (int)strlen(scheme);
  if (q->dlen > SIM_DMAX) q->dlen = SIM_DMAX;
  memcpy(q->data, scheme, (size_t)q->dlen);
  send_req(h, q);
}

/* finalize_session_establishment(): auth, watches, the queued requests. */
static void connected(sim_zh_t *h, sim_sreq_t *resp) {
  h->recv_timeout = resp->timeout;
  h->cid.client_id = resp->sid;
  memcpy(h->cid.passwd, resp->passwd, 16);
  h->seen_rw = 1;
  h->state = ZOO_CONNECTED_STATE;
  for (int i = 0; i < h->nauth; i++) send_auth(h, h->auths[i].scheme);
  send_setwatches(h);
  for (creq_t *r = h->head; r; r = r->next)
    if (!r->sent) send_creq(h, r);
  session_event(h, ZOO_CONNECTED_STATE);
  timer_at(h, sim_w->now + (uint64_t)(h->recv_timeout / 3) * SIM_MS);
}

static void reply(sim_zh_t *h, sim_msg_t *m) {
  sim_sreq_t *q = m->req;
  if (q->kind == OP_PING || q->kind == OP_SETWATCHES) {
    net_msg_free(m);
    return;
  }
  if (q->kind == OP_AUTH) {
    /* auth_completion_func: every pending auth completion gets this answer. */
    int rc = q->err;
    net_msg_free(m);
    if (rc) h->state = ZOO_AUTH_FAILED_STATE;
    if (h->auth_pending) {
      h->auth_pending = 0;
      for (int i = 0; i < h->nauth; i++)
        if (h->auths[i].cb) {
          void_completion_t cb = h->auths[i].cb;
          h->auths[i].cb = NULL;
          cb(rc, h->auths[i].data);
        }
    }
    if (rc && !h->closed) handle_error(h, ZAUTHFAILED);
    return;
  }
  creq_t *r = h->head;
  if (!r || !r->sent) {
    net_msg_free(m);
    handle_error(h, ZRUNTIMEINCONSISTENCY);
    return;
  }
  h->head = r->next;
  if (!h->head) h->tail = NULL;
  r->next = NULL;
  if (q->zxid > 0) h->last_zxid = q->zxid;
  int rc = q->err;
  /* activateWatcher: exists registers on ZOK (data) or ZNONODE (exist). */
  if (r->wfn) {
    int t = -1;
    if (r->kind == OP_EXISTS) t = rc == ZOK ? T_DATA : rc == ZNONODE ? T_EXIST : -1;
    else if (r->kind == OP_GET && rc == ZOK) t = T_DATA;
    else if (r->kind == OP_CHILDREN && rc == ZOK) t = T_CHILD;
    if (t >= 0) tab_add(&h->tab[t], r->path, r->wfn, r->wctx);
  }
  if (r->rm && rc == ZOK) {
    watcher_fn fn = r->rm_all ? NULL : r->rm_fn;
    if (r->rm_type != ZWATCHTYPE_DATA) tab_remove(&h->tab[T_CHILD], r->path, fn, r->rm_ctx);
    if (r->rm_type != ZWATCHTYPE_CHILD) {
      tab_remove(&h->tab[T_DATA], r->path, fn, r->rm_ctx);
      tab_remove(&h->tab[T_EXIST], r->path, fn, r->rm_ctx);
    }
  }
  r->rc = rc;
  r->reply = m;
  if (r->kind == OP_MULTI && rc == ZOK) {
    /* deserialize_multi: the first error other than ZRUNTIMEINCONSISTENCY. */
    for (int i = 0; i < r->nres; i++)
      if (q->mres_err[i] && q->mres_err[i] != ZRUNTIMEINCONSISTENCY) {
        r->rc = q->mres_err[i];
        break;
      }
  }
  if (sim_w->bug == SIM_BUG_FALSE_LOSS && !sim_w->bug_done && r->kind == OP_GET && !r->wfn &&
      r->rc == ZOK && sim_chance(5)) {
    sim_w->bug_done = 1;
    r->rc = ZCONNECTIONLOSS; /* the connection stays up: no cause */
  }
  if (r->sync_wait) {
    r->done = 1;
    return;
  }
  ditem_t *d = calloc(1, sizeof *d);
  d->r = r;
  if (sim_w->bug == SIM_BUG_LOST_COMPLETION && !sim_w->bug_done && sim_chance(5)) {
    sim_w->bug_done = 1;
    free_item(d);
    return;
  }
  dq_push(h, d);
  if (sim_w->bug == SIM_BUG_REORDER && !sim_w->bug_done && h->dq != d && sim_chance(10)) {
    /* swaps the last two queued completions */
    ditem_t *p = h->dq;
    while (p->next && p->next != d) p = p->next;
    if (p->r && p != d) {
      creq_t *tmp = p->r;
      p->r = d->r;
      d->r = tmp;
      sim_w->bug_done = 1;
    }
  }
}

void cli_recv(sim_msg_t *m) {
  sim_conn_t *c = m->conn;
  sim_zh_t *h = c->zh;
  if (!h || h->closed || h->conn != c) {
    net_msg_free(m);
    return;
  }
  h->last_recv = sim_w->now;
  switch (m->type) {
  case M_SYNACK: {
    net_msg_free(m);
    if (h->state != ZOO_CONNECTING_STATE) return;
    sim_msg_t *r = net_msg(M_CONNREQ, c);
    r->sid = h->seen_rw ? h->cid.client_id : 0;
    memcpy(r->passwd, h->cid.passwd, 16);
    r->timeout = h->recv_timeout;
    r->last_zxid = h->last_zxid;
    net_send(r, 1);
    h->last_send = sim_w->now;
    h->state = ZOO_ASSOCIATING_STATE;
    return;
  }
  case M_RST:
  case M_FIN:
    net_msg_free(m);
    handle_error(h, ZCONNECTIONLOSS);
    return;
  case M_CONNRESP: {
    sim_sreq_t *q = m->req;
    int64_t oldid = h->seen_rw ? h->cid.client_id : 0;
    if (oldid != 0 && oldid != q->sid) {
      net_msg_free(m);
      h->state = ZOO_EXPIRED_SESSION_STATE;
      handle_error(h, ZSESSIONEXPIRED);
      return;
    }
    connected(h, q);
    net_msg_free(m);
    return;
  }
  case M_REPLY: reply(h, m); return;
  case M_NOTIFY: {
    if (sim_w->bug == SIM_BUG_DROP_WATCH && !sim_w->bug_done && sim_chance(20)) {
      sim_w->bug_done = 1;
      net_msg_free(m);
      return;
    }
    ditem_t *d = collect(h, m->ntype, m->npath);
    if (sim_w->bug == SIM_BUG_DUP_WATCHER && !sim_w->bug_done && d->npairs) {
      d->pairs = realloc(d->pairs, (size_t)(d->npairs + 1) * sizeof *d->pairs);
      d->pairs[d->npairs] = d->pairs[0];
      d->npairs++;
      sim_w->bug_done = 1;
    }
    net_msg_free(m);
    dq_push(h, d);
    return;
  }
  }
  net_msg_free(m);
}

/* ---- the table ---- */

static sim_zh_t *H(zhandle_t *zh, const char *fn) {
  sim_zh_t *h = (sim_zh_t *)zh;
  if (!h) return NULL;
  if (h->closed) {
    misuse(fn);
    return NULL;
  }
  return h;
}

/* --slow-calls: zookeeper_init looks every host up (resolve_hosts,
 * getaddrinfo) before the handle exists; a slow resolver makes that take
 * long, while the caller's other zhandles go on (their I/O threads) and
 * whatever the caller checked before the call may change.  60 % of the
 * calls take no time, 30 % 0.1-3 ms, 10 % 20-800 ms. */
static uint64_t init_time(void) {
  uint64_t r = sim_rand2() % 100;
  if (r < 60) return 0;
  if (r < 90) return (100 + sim_rand2() % 2901) * 1000;
  return (20 + sim_rand2() % 781) * SIM_MS;
}

static zhandle_t *c_zookeeper_init(const char *host, watcher_fn fn, int recv_timeout,
                                   const clientid_t *cid, void *context, int flags) {
  (void)flags;
  if (!host || !*host) {
    errno = EINVAL;
    return NULL;
  }
  if (sim_w->slow_calls) sim_pass(init_time());
  sim_zh_t *h = calloc(1, sizeof *h);
  const char *p = host;
  while (*p && *p != '/') {
    int n = 0, port = 0, used = 0;
    if (sscanf(p, "sim%d:%d%n", &n, &port, &used) != 2 || n < 1 || n > sim_e->n ||
        h->nhosts == SIM_MAX_SRV) {
      free(h);
      errno = EINVAL;
      return NULL;
    }
    h->hosts[h->nhosts++] = n - 1;
    p += used;
    if (*p == ',') p++;
  }
  if (!h->nhosts) {
    free(h);
    errno = EINVAL;
    return NULL;
  }
  /* resolve_hosts shuffles the list (addrvec_shuffle). */
  for (int i = h->nhosts - 1; i > 0; i--) {
    int j = (int)sim_range(0, (uint64_t)i), t = h->hosts[i];
    h->hosts[i] = h->hosts[j];
    h->hosts[j] = t;
  }
  h->cur = h->nhosts - 1;
  h->fn = fn;
  h->ctx = context;
  h->recv_timeout = recv_timeout;
  h->state = ZOO_NOTCONNECTED_STATE;
  if (cid && cid->client_id) {
    h->cid = *cid;
    h->seen_rw = 1;
  }
  if (nhandles == caphandles) {
    caphandles = caphandles ? 2 * caphandles : 16;
    handles = realloc(handles, (size_t)caphandles * sizeof *handles);
  }
  h->id = nhandles;
  handles[nhandles++] = h;
  timer_at(h, sim_w->now);
  return (zhandle_t *)h;
}

static void finish_close(sim_zh_t *h) {
  if (h->conn) {
    sim_conn_t *c = h->conn;
    if (h->state == ZOO_CONNECTED_STATE && c->cli_open) {
      sim_sreq_t *q = net_req();
      q->kind = OP_CLOSE;
      send_req(h, q);
    }
    h->conn = NULL;
    if (c->cli_open) {
      c->cli_open = 0;
      net_send(net_msg(M_FIN, c), 1);
    }
  }
  h->closed = 1;
  h->cid.client_id = (int64_t)0xdeadbeefdeadbeefULL; /* freed memory in stock */
  for (int t = 0; t < 3; t++) h->tab[t].n = 0;
}

/* zookeeper_close: completions still outstanding get ZCLOSING; from
 * outside a callback they (and whatever was queued) are delivered inside
 * the call, from a callback after it returns; a CONNECTED handle sends
 * CloseSession, any other sends nothing. */
static int c_zookeeper_close(zhandle_t *zh) {
  sim_zh_t *h = H(zh, "zookeeper_close on a closed handle");
  if (!h) return ZBADARGUMENTS;
  if (h->close_requested) {
    misuse("zookeeper_close called twice");
    return ZOK;
  }
  h->close_requested = 1;
  fail_all(h, ZCLOSING);
  if (h->in_callback) {
    h->close_deferred = 1;
    return ZOK;
  }
  while (h->dq) deliver_one(h);
  finish_close(h);
  return ZOK;
}

static int c_zoo_state(zhandle_t *zh) {
  sim_zh_t *h = H(zh, "zoo_state on a closed handle");
  return h ? h->state : 0;
}

static const clientid_t *c_zoo_client_id(zhandle_t *zh) {
  sim_zh_t *h = (sim_zh_t *)zh;
  if (!h) return NULL;
  if (h->closed) misuse("zoo_client_id on a closed handle");
  return &h->cid;
}

static int c_zoo_recv_timeout(zhandle_t *zh) {
  sim_zh_t *h = H(zh, "zoo_recv_timeout on a closed handle");
  return h ? h->recv_timeout : 0;
}

static int c_zoo_set_servers_resolution_delay(zhandle_t *zh, int delay_ms) {
  (void)delay_ms;
  return H(zh, "zoo_set_servers_resolution_delay on a closed handle") ? ZOK : ZBADARGUMENTS;
}

static struct sockaddr *c_zookeeper_get_connected_host(zhandle_t *zh, struct sockaddr *addr,
                                                       socklen_t *len) {
  sim_zh_t *h = H(zh, "zookeeper_get_connected_host on a closed handle");
  if (!h || h->state != ZOO_CONNECTED_STATE || !h->conn || !addr || !len ||
      *len < sizeof(struct sockaddr_in))
    return NULL;
  struct sockaddr_in *in = (struct sockaddr_in *)addr;
  memset(in, 0, sizeof *in);
  in->sin_family = AF_INET;
  in->sin_port = htons(2181);
  in->sin_addr.s_addr = htonl(0x7f000100u | (uint32_t)(h->conn->server + 1));
  *len = sizeof *in;
  return addr;
}

static int c_zoo_add_auth(zhandle_t *zh, const char *scheme, const char *cert, int certLen,
                          void_completion_t completion, const void *data) {
  (void)cert, (void)certLen;
  sim_zh_t *h = H(zh, "zoo_add_auth on a closed handle");
  if (!h || !scheme) return ZBADARGUMENTS;
  if (unrecoverable(h) || h->state == 0 || h->close_requested) return ZINVALIDSTATE;
  if (h->nauth == h->capauth) {
    h->capauth = h->capauth ? 2 * h->capauth : 4;
    h->auths = realloc(h->auths, (size_t)h->capauth * sizeof *h->auths);
  }
  auth_t *a = &h->auths[h->nauth++];
  snprintf(a->scheme, sizeof a->scheme, "%s", scheme);
  a->cb = completion;
  a->data = data;
  if (completion) h->auth_pending = 1;
  if (h->state == ZOO_CONNECTED_STATE) send_auth(h, scheme);
  return ZOK;
}

static int valid_client_path(const char *p, int mode) {
  if (!p || p[0] != '/') return 0;
  size_t n = strlen(p);
  if (n >= SIM_MAXPATH - 12) return 0;
  if (n > 1 && p[n - 1] == '/' && !(mode & ZOO_SEQUENCE)) return 0;
  for (size_t i = 1; i < n; i++)
    if ((p[i] == '/' && p[i - 1] == '/') || (unsigned char)p[i] < 0x20) return 0;
  return 1;
}

/* Queues a request; sends it at once when connected.
 *
 * --io-loss (sim_w->io_loss_pct): the I/O thread runs beside the caller's
 * thread, so a connection can be lost between two requests one thread
 * makes back to back - a sync and the read behind it.  The sync was sent
 * (or queued) on the old connection and fails with it; the next request,
 * taken while the handle reconnects, goes out on the next connection
 * (zookeeper.c: zoo_a* queue whenever the handle is not unrecoverable,
 * cleanup() fails only what was queued before).  Modelled inside one
 * world event: after a sync taken while connected, by chance, the next
 * request on the same zhandle in the same event finds the connection
 * lost first. */
static int submit(sim_zh_t *h, creq_t *r, sim_sreq_t *q) {
  if (unrecoverable(h) || h->close_requested) {
    net_req_free(q);
    free(r);
    return ZINVALIDSTATE;
  }
  if (h->lose_at) {
    int now = h->lose_at == sim_w->events + 1;
    h->lose_at = 0;
    if (now && h->state == ZOO_CONNECTED_STATE && h->conn) {
      if (sim_fault_hook) sim_fault_hook("io-loss: a connection lost between two requests");
      handle_error(h, ZCONNECTIONLOSS);
    }
  }
  r->xid = ++h->xid;
  q->xid = r->xid;
  r->kind = q->kind;
  r->req = q;
  if (h->tail) h->tail->next = r;
  else h->head = r;
  h->tail = r;
  if (h->state == ZOO_CONNECTED_STATE && h->conn) {
    send_creq(h, r);
    if (r->kind == OP_SYNC && sim_w->io_loss_pct && sim_chance(sim_w->io_loss_pct))
      h->lose_at = sim_w->events + 1;
  }
  return ZOK;
}

static int start(zhandle_t *zh, const char *fn, const char *path, int mode, int kind, int ctype,
                 void *cb, const void *data, creq_t **rp, sim_sreq_t **qp) {
  sim_zh_t *h = H(zh, fn);
  if (!h || !valid_client_path(path, mode)) return ZBADARGUMENTS;
  if (unrecoverable(h)) return ZINVALIDSTATE;
  int p = ens_path(path);
  if (p < 0) return ZBADARGUMENTS;
  creq_t *r = calloc(1, sizeof *r);
  sim_sreq_t *q = net_req();
  q->kind = kind;
  q->path = p;
  q->mode = mode;
  q->version = -1;
  r->ctype = ctype;
  r->cb = cb;
  r->data = data;
  r->path = p;
  *rp = r;
  *qp = q;
  return ZOK;
}

static void set_data(sim_sreq_t *q, const char *v, int len) {
  if (!v || len < 0) len = 0;
  if (len > SIM_DMAX) len = SIM_DMAX;
  q->dlen = len;
  if (len) memcpy(q->data, v, (size_t)len);
}

static int c_create(zhandle_t *zh, const char *path, const char *value, int valuelen, int mode,
                    int64_t ttl, int ctype, void *cb, const void *data) {
  if (mode < 0 || mode > 3 || ttl >= 0) return ZBADARGUMENTS; /* no TTL or container nodes */
  creq_t *r;
  sim_sreq_t *q;
  int rc =
      start(zh, "zoo_acreate on a closed handle", path, mode, OP_CREATE, ctype, cb, data, &r, &q);
  if (rc) return rc;
  set_data(q, value, valuelen);
  return submit((sim_zh_t *)zh, r, q);
}

static int c_zoo_acreate_ttl(zhandle_t *zh, const char *path, const char *value, int valuelen,
                             const struct ACL_vector *acl, int mode, int64_t ttl,
                             string_completion_t c, const void *data) {
  (void)acl;
  return c_create(zh, path, value, valuelen, mode, ttl, C_STRING, (void *)c, data);
}

static int c_zoo_acreate2_ttl(zhandle_t *zh, const char *path, const char *value, int valuelen,
                              const struct ACL_vector *acl, int mode, int64_t ttl,
                              string_stat_completion_t c, const void *data) {
  (void)acl;
  return c_create(zh, path, value, valuelen, mode, ttl, C_STRING_STAT, (void *)c, data);
}

static int c_zoo_adelete(zhandle_t *zh, const char *path, int version, void_completion_t c,
                         const void *data) {
  creq_t *r;
  sim_sreq_t *q;
  int rc = start(zh, "zoo_adelete on a closed handle", path, 0, OP_DELETE, C_VOID, (void *)c, data,
                 &r, &q);
  if (rc) return rc;
  q->version = version;
  return submit((sim_zh_t *)zh, r, q);
}

static int c_zoo_aset(zhandle_t *zh, const char *path, const char *buf, int len, int version,
                      stat_completion_t c, const void *data) {
  creq_t *r;
  sim_sreq_t *q;
  int rc =
      start(zh, "zoo_aset on a closed handle", path, 0, OP_SET, C_STAT, (void *)c, data, &r, &q);
  if (rc) return rc;
  q->version = version;
  set_data(q, buf, len);
  return submit((sim_zh_t *)zh, r, q);
}

static int c_zoo_aset_acl(zhandle_t *zh, const char *path, int version, struct ACL_vector *acl,
                          void_completion_t c, const void *data) {
  if (!acl) return ZBADARGUMENTS; /* stock dereferences it */
  creq_t *r;
  sim_sreq_t *q;
  int rc = start(zh, "zoo_aset_acl on a closed handle", path, 0, OP_SETACL, C_VOID, (void *)c, data,
                 &r, &q);
  if (rc) return rc;
  q->version = version;
  return submit((sim_zh_t *)zh, r, q);
}

static int c_zoo_amulti(zhandle_t *zh, int count, const zoo_op_t *ops, zoo_op_result_t *results,
                        void_completion_t c, const void *data) {
  sim_zh_t *h = H(zh, "zoo_amulti on a closed handle");
  if (!h || count < 0 || count > SIM_MULTIMAX || (count && (!ops || !results)))
    return ZBADARGUMENTS;
  if (unrecoverable(h)) return ZINVALIDSTATE;
  sim_sreq_t *q = net_req();
  q->kind = OP_MULTI;
  q->nops = count;
  for (int i = 0; i < count; i++) {
    const zoo_op_t *op = &ops[i];
    sim_subop_t *o = &q->ops[i];
    const char *path = NULL;
    int mode = 0;
    switch (op->type) {
    case ZOO_CREATE_OP:
      o->kind = OP_CREATE;
      path = op->create_op.path;
      mode = op->create_op.flags;
      o->mode = mode;
      o->dlen = op->create_op.datalen > SIM_DMAX ? SIM_DMAX : op->create_op.datalen;
      if (o->dlen < 0) o->dlen = 0;
      if (o->dlen) memcpy(o->data, op->create_op.data, (size_t)o->dlen);
      break;
    case ZOO_DELETE_OP:
      o->kind = OP_DELETE;
      path = op->delete_op.path;
      o->version = op->delete_op.version;
      break;
    case ZOO_SETDATA_OP:
      o->kind = OP_SET;
      path = op->set_op.path;
      o->version = op->set_op.version;
      o->dlen = op->set_op.datalen > SIM_DMAX ? SIM_DMAX : op->set_op.datalen;
      if (o->dlen < 0) o->dlen = 0;
      if (o->dlen) memcpy(o->data, op->set_op.data, (size_t)o->dlen);
      break;
    case ZOO_CHECK_OP:
      o->kind = OP_CHECK;
      path = op->check_op.path;
      o->version = op->check_op.version;
      break;
    default: net_req_free(q); return ZUNIMPLEMENTED;
    }
    if (!valid_client_path(path, mode) || (o->path = ens_path(path)) < 0) {
      net_req_free(q);
      return ZBADARGUMENTS;
    }
  }
  creq_t *r = calloc(1, sizeof *r);
  r->ctype = C_MULTI;
  r->cb = (void *)c;
  r->data = data;
  r->results = results;
  r->ops = ops;
  r->nres = count;
  r->path = -1;
  return submit(h, r, q);
}

static int read_req(zhandle_t *zh, const char *fn, const char *path, int kind, int ctype,
                    watcher_fn w, void *wctx, void *cb, const void *data) {
  creq_t *r;
  sim_sreq_t *q;
  int rc = start(zh, fn, path, 0, kind, ctype, cb, data, &r, &q);
  if (rc) return rc;
  q->watch = w != NULL;
  r->wfn = w;
  r->wctx = wctx;
  return submit((sim_zh_t *)zh, r, q);
}

static int c_zoo_awexists(zhandle_t *zh, const char *path, watcher_fn w, void *wctx,
                          stat_completion_t c, const void *data) {
  return read_req(zh, "zoo_awexists on a closed handle", path, OP_EXISTS, C_STAT, w, wctx,
                  (void *)c, data);
}

static int c_zoo_awget(zhandle_t *zh, const char *path, watcher_fn w, void *wctx,
                       data_completion_t c, const void *data) {
  return read_req(zh, "zoo_awget on a closed handle", path, OP_GET, C_DATA, w, wctx, (void *)c,
                  data);
}

static int c_zoo_awget_children(zhandle_t *zh, const char *path, watcher_fn w, void *wctx,
                                strings_completion_t c, const void *data) {
  return read_req(zh, "zoo_awget_children on a closed handle", path, OP_CHILDREN, C_STRINGS, w,
                  wctx, (void *)c, data);
}

static int c_zoo_awget_children2(zhandle_t *zh, const char *path, watcher_fn w, void *wctx,
                                 strings_stat_completion_t c, const void *data) {
  return read_req(zh, "zoo_awget_children2 on a closed handle", path, OP_CHILDREN, C_STRINGS_STAT,
                  w, wctx, (void *)c, data);
}

static int c_zoo_aget_acl(zhandle_t *zh, const char *path, acl_completion_t c, const void *data) {
  return read_req(zh, "zoo_aget_acl on a closed handle", path, OP_GETACL, C_ACL, NULL, NULL,
                  (void *)c, data);
}

static int c_zoo_async(zhandle_t *zh, const char *path, string_completion_t c, const void *data) {
  return read_req(zh, "zoo_async on a closed handle", path, OP_SYNC, C_STRING, NULL, NULL,
                  (void *)c, data);
}

static int has_watcher(sim_zh_t *h, int path, int wtype, watcher_fn fn, void *ctx) {
  if (wtype != ZWATCHTYPE_DATA && tab_find(&h->tab[T_CHILD], path, fn, ctx) >= 0) return 1;
  if (wtype != ZWATCHTYPE_CHILD && (tab_find(&h->tab[T_DATA], path, fn, ctx) >= 0 ||
                                    tab_find(&h->tab[T_EXIST], path, fn, ctx) >= 0))
    return 1;
  return 0;
}

static void remove_local(sim_zh_t *h, int path, int wtype, watcher_fn fn, void *ctx) {
  if (wtype != ZWATCHTYPE_DATA) tab_remove(&h->tab[T_CHILD], path, fn, ctx);
  if (wtype != ZWATCHTYPE_CHILD) {
    tab_remove(&h->tab[T_DATA], path, fn, ctx);
    tab_remove(&h->tab[T_EXIST], path, fn, ctx);
  }
}

/* aremove_watches(): ZNOWATCHER at once when this handle holds no such
 * watcher - for one watcher only: a remove_all (no watcher) always asks
 * the server, as zk_hashtable.c containsWatcher takes a NULL watcher for
 * a match ("If watcher is NULL, we return TRUE") before pathHasWatcher
 * looks at the path; local removal needs no server; otherwise the server
 * is asked (CHECK_WATCHES for one watcher, REMOVE_WATCHES for all) and the
 * local entry goes when it says ZOK. */
static int rm_watches(zhandle_t *zh, const char *path, ZooWatcherType wtype, watcher_fn w,
                      void *wctx, int local, void *cb, const void *data, int all, creq_t **out) {
  sim_zh_t *h = H(zh, "zoo_remove_watches on a closed handle");
  if (!h || !valid_client_path(path, 0)) return ZBADARGUMENTS;
  if (!local && unrecoverable(h)) return ZINVALIDSTATE;
  int p = ens_path(path);
  if (p < 0) return ZBADARGUMENTS;
  if (!all && !has_watcher(h, p, wtype, w, wctx)) return ZNOWATCHER;
  if (local) {
    remove_local(h, p, wtype, all ? NULL : w, wctx);
    return ZOK;
  }
  creq_t *r;
  sim_sreq_t *q;
  int rc = start(zh, "zoo_aremove_watches", path, 0, all ? OP_REMOVEWATCHES : OP_CHECKWATCHES,
                 C_VOID, cb, data, &r, &q);
  if (rc) return rc;
  q->wtype = wtype;
  r->rm = 1;
  r->rm_type = wtype;
  r->rm_all = all;
  r->rm_fn = w;
  r->rm_ctx = wctx;
  if (out) *out = r;
  return submit(h, r, q);
}

static int req_done(void *a) { return ((creq_t *)a)->done; }

static int c_zoo_remove_watches(zhandle_t *zh, const char *path, ZooWatcherType wtype, watcher_fn w,
                                void *wctx, int local) {
  if (local) return rm_watches(zh, path, wtype, w, wctx, 1, NULL, NULL, 0, NULL);
  /* A blocking call: the world runs until the reply (the I/O thread
   * notifies it, not the completion thread). */
  creq_t *r = NULL;
  int rc = rm_watches(zh, path, wtype, w, wctx, 0, NULL, NULL, 0, &r);
  if (rc != ZOK) return rc;
  r->sync_wait = 1;
  sim_run_until(req_done, r, UINT64_MAX);
  rc = r->done ? r->rc : ZOPERATIONTIMEOUT;
  if (r->reply) net_msg_free(r->reply);
  free(r);
  return rc;
}

static int c_zoo_aremove_watches(zhandle_t *zh, const char *path, ZooWatcherType wtype,
                                 watcher_fn w, void *wctx, int local, void_completion_t *c,
                                 const void *data) {
  if (local) misuse("zoo_aremove_watches local=1: stock 3.8 treats data as a sync completion");
  return rm_watches(zh, path, wtype, w, wctx, local, (void *)c, data, 0, NULL);
}

static int c_zoo_aremove_all_watches(zhandle_t *zh, const char *path, ZooWatcherType wtype,
                                     int local, void_completion_t *c, const void *data) {
  if (local) misuse("zoo_aremove_all_watches local=1: stock 3.8 treats data as a sync completion");
  return rm_watches(zh, path, wtype, NULL, NULL, local, (void *)c, data, 1, NULL);
}

static int c_zoo_areconfig(zhandle_t *zh, const char *joining, const char *leaving,
                           const char *members, int64_t version, data_completion_t dc,
                           const void *data) {
  (void)zh, (void)joining, (void)leaving, (void)members, (void)version, (void)dc, (void)data;
  return ZUNIMPLEMENTED;
}

/* srvr: answered from the server's state at once; a dead or hung server,
 * or one cut off from the client machine, times out. */
static int c_srvr(const char *host, int port, int timeout_ms, size_t cap, zkr__srvr_reply_t *out) {
  (void)port, (void)timeout_ms, (void)cap;
  memset(out, 0, sizeof *out);
  out->received = out->sent = out->outstanding = out->connections = out->node_count = -1;
  out->lat_min = out->lat_avg = out->lat_max = -1;
  int n = 0;
  if (!host || sscanf(host, "sim%d", &n) != 1 || n < 1 || n > sim_e->n) {
    out->role = ZKR_ROLE_UNREACHABLE;
    return ZKR_ESRVR_CONNECT;
  }
  int s = n - 1, role = 0;
  int64_t zxid = 0;
  int rc = sim_n->cut[s] ? -2 : ens_srvr(s, &role, &zxid);
  if (rc) {
    /* Dead, hung or cut off: the srvr timeout, as the simulator's brief
     * asks (a dead process on a live machine would refuse at once). */
    out->role = ZKR_ROLE_UNREACHABLE;
    return ZKR_ESRVR_TIMEOUT;
  }
  if (role == ROLE_LOOKING) {
    out->role = ZKR_ROLE_NOT_SERVING;
    return ZKR_ESRVR_NOT_SERVING;
  }
  out->role = role == ROLE_LEADER ? ZKR_ROLE_LEADER : ZKR_ROLE_FOLLOWER;
  out->has_zxid = 1;
  out->zxid = zxid;
  out->epoch = (uint32_t)((uint64_t)zxid >> 32);
  out->connections = sim_e->srv[s].nconns;
  return ZOK;
}

/* No handle of the model has a log callback of its own: the library's log
 * lines go to libzookeeper_mt's stream (quiet at the level the driver
 * sets). */
static log_callback_fn c_zoo_get_log_callback(const zhandle_t *zh) {
  (void)zh;
  return NULL;
}

#define SIM_FIELD(gen, tbl, ret, name, ...) ZKR__TBL_##tbl(.name = c_##name, )
#define c_zoo_awgetconfig NULL

static const zkr__zk_t sim_table = {
    ZKR_ZOO_CALLS(SIM_FIELD, ZKR__ZK_NONE).srvr = c_srvr,
    .resolve = NULL,
};

const zkr__zk_t *cli_table(void) { return &sim_table; }
