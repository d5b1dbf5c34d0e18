/* Linearizability per key, Wing-Gong style with Lowe's memoization (as
 * Knossos and porcupine do): for each znode /g<N>/k<i> of the history, is
 * there a total order of its operations, consistent with real time (an op
 * that completed before another was invoked comes first), in which every
 * op gives the result it gave against a sequential model of one znode
 * (exists, value, version)?  A write with an unknown outcome (connection
 * loss, timeout, closing, expiry) may take effect at any point after its
 * invocation, or never; reads that failed carry no information.  A multi
 * is projected onto the key (its sub-ops on the key, atomically), which is
 * sound: a linearizable history projects to linearizable keys.
 *
 * Real-time order is the order of the recorded event stream (one thread,
 * so invocation and completion positions are exact).  The search is
 * memoized on (linearized set, state) with a 64-bit Zobrist hash of the
 * set; past a step budget the key is reported undecided, not violated. */
#include "simcheck.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zookeeper/zookeeper.h>

#define BUDGET 3000000

typedef struct lstate {
  int exists, value, version;
} lstate_t;

typedef struct lsub {
  int kind; /* H_CREATE, H_DELETE, H_SET, H_CHECK, H_GET, H_EXISTS */
  int value, version, out_version;
} lsub_t;

typedef struct lop {
  int op;    /* history op id */
  int maybe; /* unknown outcome: may apply, or never */
  int rc;    /* the observed result (maybe: ignored) */
  int nsub;
  lsub_t sub[H_SUBS];
  int out_exists, out_value, out_version; /* a read's result */
  int inv, ret;                           /* event positions; ret -1 for maybe */
  uint64_t zob;
  int twin; /* an earlier interchangeable maybe op, which must go first; -1 */
} lop_t;

/* ---- values: strings to small ids ---- */

typedef struct vtab {
  char (*v)[H_VAL];
  int n, cap;
} vtab_t;

static int vid(vtab_t *t, const char *s) {
  for (int i = 0; i < t->n; i++)
    if (strcmp(t->v[i], s) == 0) return i;
  if (t->n == t->cap) {
    t->cap = t->cap ? 2 * t->cap : 64;
    t->v = realloc(t->v, (size_t)t->cap * sizeof *t->v);
  }
  snprintf(t->v[t->n], H_VAL, "%s", s);
  return t->n++;
}

/* ---- the sequential model ---- */

/* Applies one sub-op; returns its error code (ZOK: applied). */
static int model_sub(lstate_t *s, const lsub_t *o) {
  switch (o->kind) {
  case H_CREATE:
    if (s->exists) return ZNODEEXISTS;
    s->exists = 1, s->value = o->value, s->version = 0;
    return ZOK;
  case H_DELETE:
    if (!s->exists) return ZNONODE;
    if (o->version != -1 && s->version != o->version) return ZBADVERSION;
    s->exists = 0, s->value = -1, s->version = 0;
    return ZOK;
  case H_SET:
    if (!s->exists) return ZNONODE;
    if (o->version != -1 && s->version != o->version) return ZBADVERSION;
    s->version++, s->value = o->value;
    return ZOK;
  case H_CHECK:
    if (!s->exists) return ZNONODE;
    if (o->version != -1 && s->version != o->version) return ZBADVERSION;
    return ZOK;
  }
  return ZOK;
}

/* Can op take effect on s giving its observed result?  Fills *out. */
static int step(const lstate_t *s, const lop_t *o, lstate_t *out) {
  *out = *s;
  if (o->nsub == 0) { /* a read */
    if (o->rc == ZNONODE) return !s->exists;
    if (!s->exists || s->version != o->out_version) return 0;
    return o->out_value < 0 || s->value == o->out_value;
  }
  lstate_t t = *s;
  for (int i = 0; i < o->nsub; i++) {
    int err = model_sub(&t, &o->sub[i]);
    if (o->maybe) {
      if (err != ZOK) return 0; /* refused: the same as never applied */
      continue;
    }
    if (o->rc == ZOK) {
      if (err != ZOK) return 0;
      if (o->sub[i].out_version >= 0 && t.version != o->sub[i].out_version) return 0;
    } else if (err != ZOK) {
      /* the op failed here with err: it must be the error observed, and
       * nothing of it took effect */
      return err == o->rc ? (*out = *s, 1) : 0;
    }
  }
  if (o->maybe || o->rc == ZOK) {
    *out = t;
    return 1;
  }
  return 0; /* every sub-op passed, yet it was refused */
}

/* ---- the search ---- */

typedef struct centry {
  uint64_t h;
  lstate_t s;
  int used;
} centry_t;

typedef struct cache {
  centry_t *e;
  size_t cap, n;
} cache_t;

static uint64_t mix(uint64_t x) {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdULL;
  x ^= x >> 33;
  x *= 0xc4ceb9fe1a85ec53ULL;
  return x ^ (x >> 33);
}

static uint64_t shash(uint64_t h, const lstate_t *s) {
  return mix(h ^ mix(((uint64_t)(uint32_t)s->exists << 62) ^ ((uint64_t)(uint32_t)s->value << 31) ^
                     (uint64_t)(uint32_t)s->version));
}

/* 1 if (h, s) was new. */
static int cache_add(cache_t *c, uint64_t h, const lstate_t *s) {
  if (2 * (c->n + 1) > c->cap) {
    size_t cap = c->cap ? 2 * c->cap : 1024;
    centry_t *e = calloc(cap, sizeof *e);
    for (size_t i = 0; i < c->cap; i++)
      if (c->e[i].used) {
        size_t j = shash(c->e[i].h, &c->e[i].s) & (cap - 1);
        while (e[j].used) j = (j + 1) & (cap - 1);
        e[j] = c->e[i];
      }
    free(c->e);
    c->e = e;
    c->cap = cap;
  }
  size_t j = shash(h, s) & (c->cap - 1);
  while (c->e[j].used) {
    if (c->e[j].h == h && !memcmp(&c->e[j].s, s, sizeof *s)) return 0;
    j = (j + 1) & (c->cap - 1);
  }
  c->e[j] = (centry_t){h, *s, 1};
  c->n++;
  return 1;
}

typedef struct node {
  int op, call; /* call or return entry of lops[op] */
  int pos;
  struct node *prev, *next, *match;
} node_t;

typedef struct frame {
  node_t *call;
  lstate_t s;
} frame_t;

static int cmp_node(const void *a, const void *b) {
  const node_t *x = a, *y = b;
  return x->pos - y->pos;
}

static void lift(node_t *n) {
  n->prev->next = n->next;
  if (n->next) n->next->prev = n->prev;
  node_t *m = n->match;
  if (m) {
    m->prev->next = m->next;
    if (m->next) m->next->prev = m->prev;
  }
}

static void unlift(node_t *n) {
  node_t *m = n->match;
  if (m) {
    m->prev->next = m;
    if (m->next) m->next->prev = m;
  }
  n->prev->next = n;
  if (n->next) n->next->prev = n;
}

/* 1 linearizable, 0 not, -1 undecided.  *stuck: the op it failed at. */
static int wgl(lop_t *ops, int n, int *stuck) {
  int nn = 0;
  node_t *nodes = calloc((size_t)(2 * n + 1), sizeof *nodes);
  for (int i = 0; i < n; i++) {
    nodes[nn++] = (node_t){.op = i, .call = 1, .pos = ops[i].inv};
    if (!ops[i].maybe) nodes[nn++] = (node_t){.op = i, .call = 0, .pos = ops[i].ret};
  }
  qsort(nodes, (size_t)nn, sizeof *nodes, cmp_node);
  node_t *callof = NULL;
  node_t **calls = calloc((size_t)n, sizeof *calls);
  for (int i = 0; i < nn; i++)
    if (nodes[i].call) calls[nodes[i].op] = &nodes[i];
  for (int i = 0; i < nn; i++)
    if (!nodes[i].call) calls[nodes[i].op]->match = &nodes[i];
  (void)callof;
  node_t head = {.op = -1};
  node_t *prev = &head;
  for (int i = 0; i < nn; i++) {
    nodes[i].prev = prev;
    prev->next = &nodes[i];
    prev = &nodes[i];
  }
  int definite = 0;
  for (int i = 0; i < n; i++) definite += !ops[i].maybe;
  frame_t *stack = malloc((size_t)(n + 1) * sizeof *stack);
  char *lin = calloc((size_t)n + 1, 1);
  int sp = 0, done = 0, result = -1;
  cache_t cache = {0};
  lstate_t s = {0, -1, 0};
  uint64_t h = 0;
  long steps = 0;
  node_t *cur = head.next;
  int best = 0;
  *stuck = -1;
  while (1) {
    if (done == definite) {
      result = 1;
      break;
    }
    if (++steps > BUDGET) break;
    if (!cur) cur = NULL;
    if (cur && cur->call) {
      lop_t *o = &ops[cur->op];
      lstate_t t;
      if ((o->twin < 0 || lin[o->twin]) && step(&s, o, &t) && cache_add(&cache, h ^ o->zob, &t)) {
        lin[cur->op] = 1;
        stack[sp++] = (frame_t){cur, s};
        s = t;
        h ^= o->zob;
        done += !o->maybe;
        if (sp > best) best = sp, *stuck = cur->op;
        lift(cur);
        cur = head.next;
      } else {
        cur = cur->next;
      }
      continue;
    }
    /* a return entry (or the end): something before it must be undone */
    if (!sp) {
      result = 0;
      if (cur) *stuck = cur->op;
      break;
    }
    frame_t f = stack[--sp];
    lop_t *o = &ops[f.call->op];
    lin[f.call->op] = 0;
    h ^= o->zob;
    done -= !o->maybe;
    s = f.s;
    unlift(f.call);
    cur = f.call->next;
  }
  free(cache.e);
  free(lin);
  free(stack);
  free(calls);
  free(nodes);
  return result;
}

/* ---- building per-key histories ---- */

static int write_kind(int k) { return k == H_CREATE || k == H_DELETE || k == H_SET; }

static int on_key(const hop_t *o, const char *key) {
  if (o->kind == H_MULTI) {
    for (int i = 0; i < o->nsub; i++)
      if (!strcmp(o->sub[i].path, key)) return 1;
    return 0;
  }
  return !strcmp(o->path, key) && (write_kind(o->kind) || o->kind == H_GET || o->kind == H_EXISTS);
}

static int is_key(const char *p) {
  int g, k, n = 0;
  char c;
  return sscanf(p, "/g%d/%c%d%n", &g, &c, &k, &n) == 3 && (c == 'k' || c == 'x') && p[n] == '\0';
}

/* Windows in which a deposed leader may answer syncs from old state
 * (ZOOKEEPER-1675): sync is not a quorum operation, so a read pipelined
 * after a sync that overlaps one proves nothing about other clients'
 * writes.  The model marks them (E_MARK stale 1, then 2). */
static int in_stale_window(const hist_t *h, uint64_t from, uint64_t to) {
  int open = 0;
  uint64_t since = 0;
  for (int i = 0; i < h->nev; i++) {
    const hev_t *e = &h->ev[i];
    if (e->type != E_MARK || !e->stale) continue;
    if (e->stale == 1) {
      if (!open++) since = e->t;
    } else if (open && !--open) {
      if (since <= to && e->t >= from) return 1;
    }
  }
  return open && since <= to;
}

static uint64_t zob_seed;
static const hist_t *h_cur;

/* Turns history op o into a key op; 0 if it tells nothing about key. */
static int build(const hop_t *o, const char *key, vtab_t *vt, lop_t *l) {
  memset(l, 0, sizeof *l);
  l->op = o->id;
  l->inv = o->e_inv;
  l->ret = o->e_cmp;
  l->out_value = -1;
  if (o->call_rc != ZOK || o->ncompl < 1) return 0; /* never sent, or never answered (once) */
  int rc = o->rc;
  if (o->kind == H_GET || o->kind == H_EXISTS) {
    if (rc != ZOK && rc != ZNONODE) return 0;
    if (o->e_sync >= 0) {
      /* sync + read: linearized in [the sync's invocation, the read's end] */
      if (in_stale_window(h_cur, h_cur->ev[o->e_sync].t, o->t_cmp)) return 0;
      l->inv = o->e_sync;
    } else if (key[strlen(key) - 2] == 'x') {
      return 0; /* a plain read of another client's key: ZooKeeper promises it nothing */
    }
    l->rc = rc;
    l->out_version = o->version_out;
    if (o->kind == H_GET && rc == ZOK) l->out_value = vid(vt, o->value);
    return 1;
  }
  l->maybe = check_maybe(rc);
  l->rc = rc;
  if (l->maybe) l->ret = -1;
  if (o->kind == H_MULTI) {
    if (!l->maybe && rc != ZOK) {
      /* refused: informative only when the failing sub-op is on this key */
      int f = -1;
      for (int i = 0; i < o->nsub; i++)
        if (o->sub[i].err != ZOK && o->sub[i].err != ZRUNTIMEINCONSISTENCY) {
          f = i;
          break;
        }
      if (f < 0 || strcmp(o->sub[f].path, key) != 0) return 0;
      for (int i = 0; i <= f; i++) {
        if (strcmp(o->sub[i].path, key) != 0) continue;
        lsub_t *s = &l->sub[l->nsub++];
        s->kind = o->sub[i].kind;
        s->version = o->sub[i].version;
        s->value = vid(vt, o->sub[i].value);
        s->out_version = -1;
      }
      return 1;
    }
    for (int i = 0; i < o->nsub; i++) {
      if (strcmp(o->sub[i].path, key) != 0) continue;
      lsub_t *s = &l->sub[l->nsub++];
      s->kind = o->sub[i].kind;
      s->version = o->sub[i].version;
      s->value = vid(vt, o->sub[i].value);
      s->out_version = rc == ZOK && o->sub[i].kind == H_SET ? o->sub[i].newversion : -1;
    }
    return l->nsub > 0;
  }
  lsub_t *s = &l->sub[l->nsub++];
  s->kind = o->kind;
  s->version = o->version;
  s->value = vid(vt, o->value);
  s->out_version = -1;
  if (rc == ZOK && o->kind == H_SET) s->out_version = o->version_out;
  if (rc == ZOK && o->kind == H_CREATE && o->stat) s->out_version = o->version_out;
  if (!l->maybe && !(rc == ZOK || check_refused(rc))) return 0;
  return 1;
}

void check_lin(const hist_t *h, check_out_t *c) {
  /* The keys, each once. */
  char(*keys)[H_PATH] = NULL;
  int nkeys = 0, capkeys = 0;
  for (int i = 0; i < h->nops; i++) {
    const hop_t *o = &h->ops[i];
    const char *cand[H_SUBS + 1];
    int nc = 0;
    if (o->kind == H_MULTI)
      for (int k = 0; k < o->nsub; k++) cand[nc++] = o->sub[k].path;
    else cand[nc++] = o->path;
    for (int k = 0; k < nc; k++) {
      if (!is_key(cand[k])) continue;
      int seen = 0;
      for (int j = 0; j < nkeys && !seen; j++) seen = !strcmp(keys[j], cand[k]);
      if (seen) continue;
      if (nkeys == capkeys) {
        capkeys = capkeys ? 2 * capkeys : 32;
        keys = realloc(keys, (size_t)capkeys * sizeof *keys);
      }
      snprintf(keys[nkeys++], H_PATH, "%s", cand[k]);
    }
  }
  lop_t *ops = malloc((size_t)(h->nops + 1) * sizeof *ops);
  h_cur = h;
  zob_seed = 0x9e3779b97f4a7c15ULL;
  for (int k = 0; k < nkeys; k++) {
    vtab_t vt = {0};
    int n = 0;
    for (int i = 0; i < h->nops; i++) {
      const hop_t *o = &h->ops[i];
      if (!on_key(o, keys[k])) continue;
      if (build(o, keys[k], &vt, &ops[n])) {
        ops[n].zob = mix((uint64_t)n + 1 + zob_seed);
        n++;
      }
    }
    /* Values no read returned are all alike: one id, so that unknown
     * writes that differ only in such a value are interchangeable; of
     * those, the one invoked first is tried first (any linearization can
     * be rewritten so), which keeps the search from trying every subset. */
    char *seen = calloc((size_t)vt.n + 1, 1);
    for (int i = 0; i < n; i++)
      if (ops[i].nsub == 0 && ops[i].out_value >= 0) seen[ops[i].out_value] = 1;
    for (int i = 0; i < n; i++)
      for (int k2 = 0; k2 < ops[i].nsub; k2++)
        if (ops[i].sub[k2].value >= 0 && !seen[ops[i].sub[k2].value]) ops[i].sub[k2].value = -2;
    free(seen);
    for (int i = 0; i < n; i++) {
      ops[i].twin = -1;
      if (!ops[i].maybe || ops[i].nsub != 1) continue;
      for (int j = i - 1; j >= 0; j--)
        if (ops[j].maybe && ops[j].nsub == 1 && ops[j].sub[0].kind == ops[i].sub[0].kind &&
            ops[j].sub[0].version == ops[i].sub[0].version &&
            ops[j].sub[0].value == ops[i].sub[0].value && ops[j].inv < ops[i].inv) {
          ops[i].twin = j;
          break;
        }
    }
    c->checked[CK_LIN]++;
    int stuck = -1;
    int r = wgl(ops, n, &stuck);
    if (r < 0) {
      c->undecided++;
    } else if (r == 0) {
      const hop_t *o = stuck >= 0 ? &h->ops[ops[stuck].op] : NULL;
      if (o)
        check_fail(c, CK_LIN,
                   "%s: no linearization (%d ops); stuck at op %d (kind %d, rc %d, value '%s', "
                   "version %d, [%.3f-%.3f s])",
                   keys[k], n, o->id, o->kind, o->rc, o->value, o->version_out,
                   (double)o->t_inv / 1e9, (double)o->t_cmp / 1e9);
      else check_fail(c, CK_LIN, "%s: no linearization (%d ops)", keys[k], n);
    }
    free(vt.v);
  }
  free(ops);
  free(keys);
}
