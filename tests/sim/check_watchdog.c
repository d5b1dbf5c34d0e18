/* No deadlock, judged on simulated time: no operation waits longer than
 * a stock session could make it wait (four session timeouts and 2 s: a
 * stock request fails at the latest when its connection attempt does,
 * 2/3 of the timeout after it started), the run settled after the heal
 * (every operation answered, the handle connected), the event loop made
 * progress (no livelock at one instant), and the model saw no API misuse
 * (a call on a closed handle, a second close). */
#include "simcheck.h"

#include <zookeeper/zookeeper.h>

void check_watchdog(const hist_t *h, check_out_t *c) {
  uint64_t bound = (4 * h->session_ms + 2000) * 1000000ULL;
  for (int i = 0; i < h->nops; i++) {
    const hop_t *o = &h->ops[i];
    if (o->call_rc != ZOK || o->kind == H_CLOSE) continue;
    c->checked[CK_WATCHDOG]++;
    uint64_t end = o->ncompl ? o->t_cmp : h->t_end;
    if (end - o->t_inv > bound)
      check_fail(c, CK_WATCHDOG, "op %d (kind %d, %s) waited %.3f s (issued %.3f s)%s", o->id,
                 o->kind, o->path, (double)(end - o->t_inv) / 1e9, (double)o->t_inv / 1e9,
                 o->ncompl ? "" : ", never answered");
  }
  if (h->no_quiescence)
    check_fail(c, CK_WATCHDOG,
               "the run did not settle after the heal (ops pending or not connected)");
  if (h->livelock) check_fail(c, CK_WATCHDOG, "the event loop made no progress in time (livelock)");
  if (h->misuse) check_fail(c, CK_WATCHDOG, "API misuse: %s", h->misuse_msg);
}
