/* The handle's order guarantees, judged against the committed log:
 * - no acknowledged write lost: the value of every acknowledged create or
 *   set is in the committed log (values are unique);
 * - writes applied in issue order: of two creates/sets of one handle that
 *   both took effect (acknowledged, or an unknown outcome found in the
 *   log), the one issued first has the smaller zxid;
 * - completions of writes come in issue order, and a zoo_async completes
 *   after every operation issued before it (a barrier); with
 *   fifo_completions (stock mode) every completion comes in issue order;
 * - read-your-writes: a read invoked after an acknowledged write of its key
 *   completed sees that write or a later state;
 * - monotonic reads: a read invoked after another read of its key
 *   completed does not see an older state.
 * States are compared by zxid: a node's mzxid; "absent" after a state S is
 * only allowed when the log deletes the key after S before the read
 * completed.  Everything is per handle generation (one session). */
#include "simcheck.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zookeeper/zookeeper.h>

/* ---- an index of the log: value -> zxid, path -> deletes ---- */

typedef struct vent {
  const char *value;
  int64_t zxid;
} vent_t;

typedef struct lindex {
  vent_t *v;
  size_t cap;
} lindex_t;

static uint64_t hs(const char *s) {
  uint64_t h = 1469598103934665603ULL;
  while (*s) h = (h ^ (uint8_t)*s++) * 1099511628211ULL;
  return h;
}

static void index_build(const hist_t *h, lindex_t *x) {
  size_t n = (size_t)h->nsubs;
  x->cap = 16;
  while (x->cap < 2 * n + 2) x->cap *= 2;
  x->v = calloc(x->cap, sizeof *x->v);
  for (int i = 0; i < h->nlog; i++) {
    const htxn_t *t = &h->log[i];
    for (int k = 0; k < t->n; k++) {
      const hlsub_t *s = &h->subs[t->first + k];
      if (s->kind == H_DELETE || !s->vlen) continue;
      size_t j = hs(s->value) & (x->cap - 1);
      while (x->v[j].value && strcmp(x->v[j].value, s->value)) j = (j + 1) & (x->cap - 1);
      x->v[j] = (vent_t){s->value, t->zxid};
    }
  }
}

static int64_t index_zxid(const lindex_t *x, const char *value) {
  size_t j = hs(value) & (x->cap - 1);
  while (x->v[j].value) {
    if (!strcmp(x->v[j].value, value)) return x->v[j].zxid;
    j = (j + 1) & (x->cap - 1);
  }
  return -1;
}

/* A delete of path with zxid > after committed at or before t. */
static int deleted_after(const hist_t *h, const char *path, int64_t after, uint64_t t) {
  for (int i = 0; i < h->nlog; i++) {
    const htxn_t *x = &h->log[i];
    if (x->zxid <= after || x->t_commit > t) continue;
    for (int k = 0; k < x->n; k++) {
      const hlsub_t *s = &h->subs[x->first + k];
      if (s->kind == H_DELETE && !strcmp(s->path, path)) return 1;
    }
  }
  return 0;
}

static int is_read(const hop_t *o) {
  return (o->kind == H_GET || o->kind == H_EXISTS) && o->call_rc == ZOK && o->ncompl >= 1 &&
         (o->rc == ZOK || o->rc == ZNONODE);
}

static int is_write(int k) {
  return k == H_CREATE || k == H_DELETE || k == H_SET || k == H_MULTI || k == H_SETACL;
}

/* ---- per-key state for read-your-writes and monotonic reads ---- */

typedef struct kst {
  char path[H_PATH];
  int gen;
  int64_t w; /* highest zxid of an acknowledged write completed so far */
  int64_t r; /* highest mzxid a completed read returned */
  int wop, rop;
} kst_t;

typedef struct snap {
  int64_t w, r;
  int wop, rop;
} snap_t;

static kst_t *kfind(kst_t **ks, int *nk, int *cap, const char *path, int gen) {
  for (int i = 0; i < *nk; i++)
    if ((*ks)[i].gen == gen && !strcmp((*ks)[i].path, path)) return &(*ks)[i];
  if (*nk == *cap) {
    *cap = *cap ? 2 * *cap : 32;
    *ks = realloc(*ks, (size_t)*cap * sizeof **ks);
  }
  kst_t *k = &(*ks)[(*nk)++];
  memset(k, 0, sizeof *k);
  snprintf(k->path, sizeof k->path, "%s", path);
  k->gen = gen;
  k->w = k->r = -1;
  k->wop = k->rop = -1;
  return k;
}

/* The zxid a create/set took effect with, -1 unknown. */
static int64_t write_zxid(const hop_t *o, const lindex_t *x) {
  if (o->kind != H_CREATE && o->kind != H_SET) return -1;
  if (o->rc == ZOK && o->kind == H_SET && o->exists) return o->mzxid;
  if (o->rc == ZOK && o->kind == H_CREATE && o->stat && o->exists) return o->czxid;
  if (o->rc == ZOK || check_maybe(o->rc)) return o->vlen ? index_zxid(x, o->value) : -1;
  return -1;
}

void check_order(const hist_t *h, check_out_t *c) {
  lindex_t x;
  index_build(h, &x);

  /* Lost acknowledged writes; write order by issue. */
  int64_t maxz[H_MAXGEN];
  int maxop[H_MAXGEN];
  for (int g = 0; g < H_MAXGEN; g++) maxz[g] = -1, maxop[g] = -1;
  for (int i = 0; i < h->nops; i++) {
    const hop_t *o = &h->ops[i];
    if (o->call_rc != ZOK || o->ncompl < 1 || o->gen < 0 || o->gen >= H_MAXGEN) continue;
    if (o->ext && o->rc == ZOK && o->vlen && index_zxid(&x, o->value) < 0)
      check_fail(c, CK_ORDER, "op %d: the other client's acknowledged write '%s' is not in the log",
                 o->id, o->value);
    if (o->ext) continue;
    int64_t zs[H_SUBS + 1];
    int nz = 0;
    if (o->kind == H_MULTI) {
      if (o->rc != ZOK && !check_maybe(o->rc)) continue;
      for (int k = 0; k < o->nsub; k++) {
        if (o->sub[k].kind != H_CREATE && o->sub[k].kind != H_SET) continue;
        int64_t z = index_zxid(&x, o->sub[k].value);
        if (z < 0 && o->rc == ZOK)
          check_fail(c, CK_ORDER, "op %d: acknowledged multi's value '%s' is not in the log", o->id,
                     o->sub[k].value);
        if (z >= 0) zs[nz++] = z;
      }
    } else if (o->kind == H_CREATE || o->kind == H_SET) {
      if (o->task < 0 && o->kind == H_CREATE && o->rc == ZNODEEXISTS) continue;
      int64_t z = write_zxid(o, &x);
      c->checked[CK_ORDER]++;
      if (o->rc == ZOK && o->vlen && index_zxid(&x, o->value) < 0)
        check_fail(c, CK_ORDER, "op %d: acknowledged write '%s' of %s is not in the log (lost)",
                   o->id, o->value, o->path);
      else if (o->rc == ZOK && z >= 0 && index_zxid(&x, o->value) != z)
        check_fail(c, CK_ORDER, "op %d: %s acknowledged at zxid %#llx, the log has it at %#llx",
                   o->id, o->path, (unsigned long long)z,
                   (unsigned long long)index_zxid(&x, o->value));
      if (z >= 0) zs[nz++] = z;
    }
    for (int k = 0; k < nz; k++) {
      if (zs[k] < maxz[o->gen]) {
        check_fail(c, CK_ORDER,
                   "op %d (%s '%s', issued %.3f s) applied at zxid %#llx, before op %d issued "
                   "earlier (zxid %#llx): writes out of issue order",
                   o->id, o->path, o->kind == H_MULTI ? "(multi)" : o->value,
                   (double)o->t_inv / 1e9, (unsigned long long)zs[k], maxop[o->gen],
                   (unsigned long long)maxz[o->gen]);
      }
    }
    for (int k = 0; k < nz; k++)
      if (zs[k] > maxz[o->gen]) maxz[o->gen] = zs[k], maxop[o->gen] = o->id;
  }

  /* Completion order of writes, the barrier, stock's FIFO; then
   * read-your-writes and monotonic reads, in one pass of the stream. */
  int last_w_cmp[H_MAXGEN], last_any_cmp[H_MAXGEN], last_w_op[H_MAXGEN], last_any_op[H_MAXGEN];
  for (int g = 0; g < H_MAXGEN; g++)
    last_w_cmp[g] = last_any_cmp[g] = -1, last_w_op[g] = last_any_op[g] = -1;
  kst_t *ks = NULL;
  int nk = 0, capk = 0;
  snap_t *snaps = calloc((size_t)h->nops + 1, sizeof *snaps);
  for (int e = 0; e < h->nev; e++) {
    const hev_t *ev = &h->ev[e];
    if (ev->type != E_INVOKE && ev->type != E_COMPLETE) continue;
    const hop_t *o = &h->ops[ev->op];
    if (o->gen < 0 || o->gen >= H_MAXGEN || o->call_rc != ZOK || o->ext) continue;
    if (ev->type == E_INVOKE) {
      if (is_read(o) || (o->kind == H_GET || o->kind == H_EXISTS)) {
        kst_t *k = kfind(&ks, &nk, &capk, o->path, o->gen);
        snaps[o->id] = (snap_t){k->w, k->r, k->wop, k->rop};
      }
      continue;
    }
    if (e != o->e_cmp) continue; /* a second completion: check_once reports it */
    int g = o->gen;
    if (o->kind == H_AUTH || o->kind == H_CLOSE) continue;
    /* Order of completions: positions of invocations must grow.  A
     * blocking call's completion is recorded when it returned, which may
     * be after later callbacks ran: it only takes part by its zxid. */
    if (is_write(o->kind) && !o->blocking) {
      if (last_w_op[g] >= 0 && h->ops[last_w_op[g]].e_inv > o->e_inv)
        check_fail(c, CK_ORDER, "write op %d completed before write op %d issued earlier",
                   last_w_op[g], o->id);
      if (last_w_op[g] < 0 || h->ops[last_w_op[g]].e_inv < o->e_inv) last_w_op[g] = o->id;
    }
    if (o->kind == H_SYNC) {
      /* every op issued before it has completed already */
      for (int j = o->id - 1; j >= 0; j--) {
        const hop_t *p = &h->ops[j];
        if (p->gen != g) break;
        if (p->call_rc != ZOK || p->kind == H_AUTH || p->kind == H_CLOSE || p->ext || p->blocking)
          continue;
        if (p->e_cmp < 0 || p->e_cmp > e) {
          check_fail(c, CK_ORDER, "zoo_async op %d completed before op %d issued before it", o->id,
                     p->id);
          break;
        }
      }
    }
    if (h->fifo_completions && !o->blocking) {
      if (last_any_op[g] >= 0 && h->ops[last_any_op[g]].e_inv > o->e_inv)
        check_fail(c, CK_ORDER,
                   "op %d completed after op %d issued later (stock completes in order)", o->id,
                   last_any_op[g]);
      if (last_any_op[g] < 0 || h->ops[last_any_op[g]].e_inv < o->e_inv) last_any_op[g] = o->id;
    }
    (void)last_w_cmp, (void)last_any_cmp;
    /* Read-your-writes and monotonic reads. */
    if (is_read(o)) {
      c->checked[CK_ORDER]++;
      snap_t s = snaps[o->id];
      kst_t *k = kfind(&ks, &nk, &capk, o->path, g);
      if (o->rc == ZOK) {
        if (s.w >= 0 && o->mzxid < s.w)
          check_fail(c, CK_ORDER,
                     "read op %d of %s saw mzxid %#llx, older than write op %d (zxid %#llx) "
                     "acknowledged before it was issued (read-your-writes)",
                     o->id, o->path, (unsigned long long)o->mzxid, s.wop, (unsigned long long)s.w);
        else if (s.r >= 0 && o->mzxid < s.r)
          check_fail(
              c, CK_ORDER,
              "read op %d of %s saw mzxid %#llx after read op %d saw %#llx (monotonic reads)",
              o->id, o->path, (unsigned long long)o->mzxid, s.rop, (unsigned long long)s.r);
        if (o->mzxid > k->r) k->r = o->mzxid, k->rop = o->id;
      } else {
        int64_t need = s.w > s.r ? s.w : s.r;
        if (need >= 0 && !deleted_after(h, o->path, need, o->t_cmp))
          check_fail(c, CK_ORDER,
                     "read op %d of %s found no node, but the state at zxid %#llx (op %d) it must "
                     "not be older than has no later delete",
                     o->id, o->path, (unsigned long long)need, s.w > s.r ? s.wop : s.rop);
      }
    } else if ((o->kind == H_CREATE || o->kind == H_SET) && o->rc == ZOK) {
      int64_t z = write_zxid(o, &x);
      kst_t *k = kfind(&ks, &nk, &capk, o->path, g);
      if (z > k->w) k->w = z, k->wop = o->id;
    }
  }
  free(snaps);
  free(ks);
  free(x.v);
}
