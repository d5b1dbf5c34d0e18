/* The session the application sees, per handle generation:
 * - zoo_client_id is one value for the life of the handle: once known it
 *   never changes and never goes back to zero;
 * - no operation gets a server's answer before the CONNECTED session event
 *   reached the global watcher, and the client id is known when it does
 *   (stock completes nothing before its session is established);
 * - every ephemeral node the handle made (in the committed log, under its
 *   /g<N>) is owned by the client id the application saw, and an
 *   acknowledged ephemeral create's Stat says so too;
 * - the application's session ends by a client's closeSession only once
 *   the application has closed that handle: a close it did not ask for -
 *   a zhandle of its session that the library closed connected - takes its
 *   ephemerals and its identity with it;
 * - with --writes-after-end: no acknowledged write of the handle commits
 *   after the application's session ended (a lock holder writing on after
 *   its lock vanished). */
#include "simcheck.h"

#include <stdio.h>
#include <string.h>
#include <zookeeper/zookeeper.h>

static int answered(int rc) { return rc == ZOK || check_refused(rc) || rc == ZNOWATCHER; }

void check_session(const hist_t *h, check_out_t *c) {
  int64_t id[H_MAXGEN] = {0};
  int connected[H_MAXGEN] = {0};
  for (int e = 0; e < h->nev; e++) {
    const hev_t *ev = &h->ev[e];
    int g = ev->gen;
    if (g < 0 || g >= H_MAXGEN) continue;
    int64_t seen = 0;
    int have = 0;
    if (ev->type == E_WATCH) {
      seen = ev->client_id;
      have = 1;
      if (ev->wtype == ZOO_SESSION_EVENT && ev->wstate == ZOO_CONNECTED_STATE &&
          ev->pair == h->gens[g].default_pair)
        connected[g] = 1;
    } else if (ev->type == E_COMPLETE) {
      const hop_t *o = &h->ops[ev->op];
      if (e != o->e_cmp || o->ext) continue;
      seen = o->client_id;
      have = 1;
      c->checked[CK_SESSION]++;
      if (answered(o->rc) && o->kind != H_AUTH) {
        if (!connected[g])
          check_fail(c, CK_SESSION,
                     "op %d (kind %d, %s) answered (rc %d) at %.3f s before the session's "
                     "CONNECTED event",
                     o->id, o->kind, o->path, o->rc, (double)o->t_cmp / 1e9);
        else if (o->client_id == 0)
          check_fail(c, CK_SESSION, "op %d answered while zoo_client_id was still 0", o->id);
      }
    }
    if (!have || seen == -1) continue; /* NULL from zoo_client_id: nothing to compare */
    if (seen && !id[g]) id[g] = seen;
    else if (seen && seen != id[g])
      check_fail(c, CK_SESSION,
                 "generation %d: zoo_client_id changed from %#llx to %#llx at %.3f s", g,
                 (unsigned long long)id[g], (unsigned long long)seen, (double)ev->t / 1e9);
    else if (!seen && id[g] && !h->gens[g].ended)
      check_fail(c, CK_SESSION, "generation %d: zoo_client_id went back to 0 at %.3f s", g,
                 (double)ev->t / 1e9);
  }
  for (int i = 0; i < h->nops; i++) {
    const hop_t *o = &h->ops[i];
    if (o->kind != H_CREATE || !(o->mode & H_EPHEMERAL) || o->rc != ZOK || !o->stat) continue;
    if (o->ncompl != 1) continue;
    c->checked[CK_SESSION]++;
    if (o->owner != o->client_id || (o->gen >= 0 && o->owner != h->gens[o->gen].client_id))
      check_fail(c, CK_SESSION,
                 "op %d: ephemeral %s owned by %#llx, the application's session is %#llx", o->id,
                 o->created, (unsigned long long)o->owner,
                 (unsigned long long)(o->gen >= 0 ? h->gens[o->gen].client_id : 0));
  }
  for (int i = 0; i < h->nlog; i++) {
    const htxn_t *t = &h->log[i];
    for (int k = 0; k < t->n; k++) {
      const hlsub_t *s = &h->subs[t->first + k];
      int g = -1, n = 0;
      if (s->kind != H_CREATE || !s->owner) continue;
      if (sscanf(s->path, "/g%d/%n", &g, &n) != 1 || !n || g < 0 || g >= h->ngens) continue;
      c->checked[CK_SESSION]++;
      if (h->gens[g].client_id && s->owner != h->gens[g].client_id)
        check_fail(c, CK_SESSION,
                   "ephemeral %s (zxid %#llx) owned by session %#llx, not by %#llx, the client id "
                   "the application saw",
                   s->path, (unsigned long long)t->zxid, (unsigned long long)s->owner,
                   (unsigned long long)h->gens[g].client_id);
    }
  }
  for (int i = 0; i < h->nlog; i++) {
    const htxn_t *t = &h->log[i];
    if (!t->close_asked) continue;
    for (int g = 0; g < h->ngens; g++) {
      if (!h->gens[g].client_id || t->session != h->gens[g].client_id) continue;
      c->checked[CK_SESSION]++;
      uint64_t asked = UINT64_MAX;
      for (int k = 0; k < h->nops; k++)
        if (h->ops[k].kind == H_CLOSE && h->ops[k].gen == g && h->ops[k].t_inv < asked)
          asked = h->ops[k].t_inv;
      if (asked > t->t_commit)
        check_fail(c, CK_SESSION,
                   "the application's session %#llx (generation %d) ended at %.3f s (zxid %#llx) "
                   "by a closeSession the application did not ask for",
                   (unsigned long long)t->session, g, (double)t->t_commit / 1e9,
                   (unsigned long long)t->zxid);
    }
  }
  /* --writes-after-end: no acknowledged write of the handle commits after
   * its session's end.  A stock session's writes commit on the session
   * itself, which the leader refuses once it ended; zkroute sends them on
   * the leader's member session, and its fence (router.c writes_fenced)
   * does not meet this yet (docs/simulation.md, "Writes after the
   * session's end"): off by default. */
  for (int g = 0; h->writes_after_end && g < h->ngens; g++) {
    int64_t end = 0;
    for (int i = 0; i < h->nlog && !end; i++)
      if (h->log[i].close && h->gens[g].client_id && h->log[i].session == h->gens[g].client_id)
        end = h->log[i].zxid;
    if (!end) continue;
    for (int i = 0; i < h->nops; i++) {
      const hop_t *o = &h->ops[i];
      if (o->gen != g || o->ext || o->rc != ZOK || o->ncompl != 1) continue;
      int64_t zx = o->kind == H_SET ? o->mzxid : o->kind == H_CREATE && o->stat ? o->czxid : 0;
      if (!zx) continue;
      c->checked[CK_SESSION]++;
      if (zx > end)
        check_fail(c, CK_SESSION,
                   "write op %d (%s) acknowledged, committed at zxid %#llx after the application's "
                   "session %#llx ended (zxid %#llx)",
                   o->id, o->path, (unsigned long long)zx, (unsigned long long)h->gens[g].client_id,
                   (unsigned long long)end);
    }
  }
}
