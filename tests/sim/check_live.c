/* Liveness while healthy: no operation of the handle fails for want of a
 * connection or a session while the ensemble is healthy and has had no
 * fault at all.
 *
 * The window: from the moment every server first followed one leader
 * (h->t_healthy, recorded by the run; before it the first election runs,
 * and a stock client's first operations may fail against servers not yet
 * serving) to the first fault the schedule applied (its first mark:
 * faults.c marks every incident as it starts, the model marks a deposed
 * leader and each lost connection of --io-loss); for each handle only
 * until its session ended (expired, auth failed, or closed by the
 * application; a refused credential ends it at that call's ZAUTHFAILED
 * completion, which comes before the AUTH_FAILED event reaches the
 * watchers: calls made in between return ZINVALIDSTATE).  An operation
 * invoked in that window whose call returned, or whose completion said,
 * ZCONNECTIONLOSS, ZOPERATIONTIMEOUT,
 * ZSESSIONEXPIRED, ZSESSIONMOVED or ZINVALIDSTATE before the first fault
 * failed for a cause of the client's own: a timer that fired early (a
 * clock that wrapped), a session closed by mistake, a healthy member given
 * up on.  Operations still in flight when the first fault came are not
 * judged: from there a failure can be the fault's. */
#include "simcheck.h"

#include <zookeeper/zookeeper.h>

static int connection_class(int rc) {
  return rc == ZCONNECTIONLOSS || rc == ZOPERATIONTIMEOUT || rc == ZSESSIONEXPIRED ||
         rc == ZSESSIONMOVED || rc == ZINVALIDSTATE;
}

void check_live(const hist_t *h, check_out_t *c) {
  uint64_t first = UINT64_MAX;
  for (int i = 0; i < h->nev; i++)
    if (h->ev[i].type == E_MARK) {
      first = h->ev[i].t;
      break;
    }
  if (!h->healthy) return;
  uint64_t end[H_MAXGEN];
  for (int g = 0; g < H_MAXGEN; g++)
    end[g] = g < h->ngens && h->gens[g].ended ? h->gens[g].t_ended : UINT64_MAX;
  for (int i = 0; i < h->nops; i++) {
    const hop_t *o = &h->ops[i];
    if (o->ncompl && o->rc == ZAUTHFAILED && o->gen >= 0 && o->gen < H_MAXGEN &&
        o->t_cmp < end[o->gen])
      end[o->gen] = o->t_cmp;
  }
  for (int i = 0; i < h->nops; i++) {
    const hop_t *o = &h->ops[i];
    if (o->ext || o->kind == H_CLOSE || o->t_inv < h->t_healthy) continue;
    int failed_call = o->call_rc != ZOK;
    if (!failed_call && !o->ncompl) continue;
    uint64_t t = failed_call ? o->t_inv : o->t_cmp;
    if (t >= first) continue;
    if (o->gen >= 0 && o->gen < H_MAXGEN && t >= end[o->gen]) continue;
    c->checked[CK_LIVE]++;
    int rc = failed_call ? o->call_rc : o->rc;
    if (connection_class(rc))
      check_fail(c, CK_LIVE,
                 "op %d (kind %d, %s, issued %.3f s) %s %d at %.3f s, before the first fault "
                 "(at %.3f s): it failed while the ensemble was healthy",
                 o->id, o->kind, o->path, (double)o->t_inv / 1e9,
                 failed_call ? "returned" : "completed with", rc, (double)t / 1e9,
                 first == UINT64_MAX ? -1.0 : (double)first / 1e9);
  }
}
