/* Exactly once: every operation whose call returned ZOK gets exactly one
 * completion (none lost, none twice), a call that returned an error gets
 * none (libuv's rule, and stock's), and no completion runs inside the call
 * that asked for it (stock never calls back from a zoo_a* call). */
#include "simcheck.h"

#include <zookeeper/zookeeper.h>

void check_once(const hist_t *h, check_out_t *c) {
  for (int i = 0; i < h->nops; i++) {
    const hop_t *o = &h->ops[i];
    if (o->kind == H_CLOSE) continue; /* no completion */
    c->checked[CK_ONCE]++;
    if (o->call_rc == ZOK && o->ncompl == 0)
      check_fail(c, CK_ONCE, "op %d (kind %d, %s, issued %.3f s) never completed", o->id, o->kind,
                 o->path, (double)o->t_inv / 1e9);
    else if (o->call_rc == ZOK && o->ncompl > 1)
      check_fail(c, CK_ONCE, "op %d (kind %d, %s) completed %d times", o->id, o->kind, o->path,
                 o->ncompl);
    else if (o->call_rc != ZOK && o->ncompl)
      check_fail(c, CK_ONCE, "op %d (kind %d, %s): the call returned %d, yet it completed", o->id,
                 o->kind, o->path, o->call_rc);
    if (o->ncompl && o->e_cmp >= 0 && o->e_cmp < o->e_ret)
      check_fail(c, CK_ONCE, "op %d (kind %d, %s) completed inside its own call", o->id, o->kind,
                 o->path);
  }
}
