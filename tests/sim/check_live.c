/* Liveness while healthy: no operation of the handle fails for want of a
 * connection or a session while the ensemble is healthy and has had no
 * fault at all.
 *
 * The window: from the moment every server first followed one leader
 * (h->t_healthy, recorded by the run; before it the first election runs,
 * and a stock client's first operations may fail against servers not yet
 * serving), and FIRST_SETTLE more (a refusal a server sent just before
 * then still reaches the client after it and fails what was queued on
 * that connection attempt: stock seed 6839 had a connection to sim3,
 * tried at 0.449 s, refused at 0.4502 s, 0.2 ms after t_healthy, with the
 * setup's creates of 0.4501 s queued on it), to the first fault the schedule applied (its first mark:
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
 * judged: from there a failure can be the fault's.
 *
 * Later spans (h->hwin, recorded by the run): after the first fault, each
 * time the ensemble is healthy again with no incident lasting, up to the
 * next incident (and after the heal, up to the workload's stop).  There
 * an operation is judged the same way if it was invoked a session timeout
 * or more after the span began (a stock client's reconnection from the
 * fault before is over by then: a connection attempt gives up after two
 * thirds of it) and no fault was marked from the span's start to its end
 * (resets, expiries and --io-loss's lost connections last no time, so no
 * span ends at them). */
#include "simcheck.h"

#include <string.h>
#include <zookeeper/zookeeper.h>

/* ZSESSIONMOVED is judged with them: ZooKeeper never answers it (its
 * FinalRequestProcessor closes the connection of a request refused for a
 * moved session, ZOOKEEPER-710, and the reconnect moves the owner back),
 * and neither client makes it up, so an application sees it only from a
 * server that answers it - as the model did before it closed the
 * connection (CI's stock seed 899818503013; docs/simulation.md). */
static int connection_class(int rc) {
  return rc == ZCONNECTIONLOSS || rc == ZOPERATIONTIMEOUT || rc == ZSESSIONEXPIRED ||
         rc == ZINVALIDSTATE || rc == ZSESSIONMOVED;
}

/* A mark that begins a fault (not an incident's end, a deposed leader's
 * end, or the heal). */
static int fault_mark(const hev_t *e) {
  return e->type == E_MARK && e->stale != 2 && strncmp(e->mark, "end ", 4) != 0 &&
         strcmp(e->mark, "heal") != 0;
}

/* The later span (h->hwin) that judges an operation invoked at inv and
 * over at t: invoked a session timeout or more after the span began (the
 * client's reconnections of the fault before it are over), over before
 * it ended, and no fault marked from its start to t (a reset, an expiry
 * and a lost connection of --io-loss last no time, so no span ends at
 * them).  -1 none. */
static int later_span(const hist_t *h, uint64_t inv, uint64_t t) {
  uint64_t settle = h->session_ms * 1000000ULL;
  for (int w = 0; w < h->nhwin; w++) {
    if (inv < h->hwin[w].start + settle || t >= h->hwin[w].end) continue;
    int clean = 1;
    for (int i = 0; i < h->nev && clean; i++) {
      const hev_t *e = &h->ev[i];
      if (e->t > t) break;
      if (e->t >= h->hwin[w].start && fault_mark(e)) clean = 0;
    }
    if (clean) return w;
  }
  return -1;
}

/* Ten times the longest round trip of a healthy link of the model
 * (docs/simulation.md: 0.1-0.4 ms base and up to 0.15 ms more, each way). */
#define FIRST_SETTLE (10 * 1000000ull)

void check_live(const hist_t *h, check_out_t *c) {
  uint64_t first = UINT64_MAX;
  for (int i = 0; i < h->nev; i++)
    if (h->ev[i].type == E_MARK) {
      first = h->ev[i].t;
      break;
    }
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
    if (o->ext || o->kind == H_CLOSE) continue;
    int failed_call = o->call_rc != ZOK;
    if (!failed_call && !o->ncompl) continue;
    uint64_t t = failed_call ? o->t_inv : o->t_cmp;
    if (o->gen >= 0 && o->gen < H_MAXGEN && t >= end[o->gen]) continue;
    int w = -1;
    int before_faults = h->healthy && o->t_inv >= h->t_healthy + FIRST_SETTLE && t < first;
    if (!before_faults && (w = later_span(h, o->t_inv, t)) < 0) continue;
    c->checked[CK_LIVE]++;
    if (w >= 0) c->live_later++;
    int rc = failed_call ? o->call_rc : o->rc;
    if (!connection_class(rc)) continue;
    if (before_faults)
      check_fail(c, CK_LIVE,
                 "op %d (kind %d, %s, issued %.3f s) %s %d at %.3f s, before the first fault "
                 "(at %.3f s): it failed while the ensemble was healthy",
                 o->id, o->kind, o->path, (double)o->t_inv / 1e9,
                 failed_call ? "returned" : "completed with", rc, (double)t / 1e9,
                 first == UINT64_MAX ? -1.0 : (double)first / 1e9);
    else
      check_fail(c, CK_LIVE,
                 "op %d (kind %d, %s, issued %.3f s) %s %d at %.3f s, while the ensemble had "
                 "been healthy with no fault since %.3f s: it failed without a cause",
                 o->id, o->kind, o->path, (double)o->t_inv / 1e9,
                 failed_call ? "returned" : "completed with", rc, (double)t / 1e9,
                 (double)h->hwin[w].start / 1e9);
  }
}
