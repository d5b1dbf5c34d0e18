/* Storage of the recorded history (history.h): growable arrays, nothing
 * else, so that the checkers' unit tests can build histories by hand. */
#include "history.h"

#include <stdlib.h>
#include <string.h>

void hist_init(hist_t *h) { memset(h, 0, sizeof *h); }

void hist_free(hist_t *h) {
  free(h->ops);
  free(h->ev);
  free(h->log);
  free(h->subs);
  free(h->nones);
  memset(h, 0, sizeof *h);
}

#define GROW(arr, n, cap)                                                                          \
  do {                                                                                             \
    if ((n) == (cap)) {                                                                            \
      (cap) = (cap) ? 2 * (cap) : 256;                                                             \
      (arr) = realloc((arr), (size_t)(cap) * sizeof *(arr));                                       \
    }                                                                                              \
  } while (0)

hop_t *hist_op(hist_t *h) {
  GROW(h->ops, h->nops, h->capops);
  hop_t *o = &h->ops[h->nops];
  memset(o, 0, sizeof *o);
  o->id = h->nops++;
  o->pair = -1;
  o->version = -1;
  o->e_cmp = -1;
  o->e_sync = -1;
  return o;
}

hev_t *hist_ev(hist_t *h, int type) {
  GROW(h->ev, h->nev, h->capev);
  hev_t *e = &h->ev[h->nev++];
  memset(e, 0, sizeof *e);
  e->type = type;
  if (type == E_MARK) h->nmarks++;
  e->op = -1;
  e->pair = -1;
  return e;
}

htxn_t *hist_txn(hist_t *h) {
  GROW(h->log, h->nlog, h->caplog);
  htxn_t *t = &h->log[h->nlog++];
  memset(t, 0, sizeof *t);
  t->first = h->nsubs;
  return t;
}

hlsub_t *hist_lsub(hist_t *h, htxn_t *t) {
  GROW(h->subs, h->nsubs, h->capsubs);
  hlsub_t *s = &h->subs[h->nsubs++];
  memset(s, 0, sizeof *s);
  t->n++;
  return s;
}

hnone_t *hist_none(hist_t *h) {
  GROW(h->nones, h->nnones, h->capnones);
  hnone_t *x = &h->nones[h->nnones++];
  memset(x, 0, sizeof *x);
  return x;
}
