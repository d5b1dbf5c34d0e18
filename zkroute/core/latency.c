/* Latency histograms: each reply a server gave to a read or a write of a
 * member counts once in that member's histogram, from the completion path
 * (zkr__pool_op_done), with two relaxed atomic additions and no
 * lock; zkr_stats() copies them.  The buckets are ZKR_LATENCY_BOUNDS_MS,
 * 0.5 ms to 10 s: ZooKeeper's replies take from about half a millisecond
 * on loopback to the session timeout when a server hangs. */
#include <stdlib.h>

#include "core/handle.h"
#include "core/latency.h"

static const uint64_t bounds_ns[ZKR_LATENCY_BUCKETS] = {
    500000,    1000000,   2500000,   5000000,    10000000,    25000000,    50000000,
    100000000, 250000000, 500000000, 1000000000, 2500000000u, 5000000000u, 10000000000u};

/* Replies that came from a server (as opposed to the client library giving
 * up): they measure the member's latency. */
int zkr__latency_server_answered(int rc) {
  return rc == ZOK || rc == ZNONODE || rc == ZNOAUTH || rc == ZBADVERSION || rc == ZNODEEXISTS ||
         rc == ZNOTEMPTY || rc == ZNOCHILDRENFOREPHEMERALS;
}

int zkr__latency_new(zkr_t *z) {
  z->latency = zkr__pages_zalloc((z->cap + 1) * sizeof *z->latency);
  return z->latency ? ZOK : ZKR_ENOMEM;
}

void zkr__latency_add(zkr__latency_t *h, uint64_t ns) {
  int b = 0;
  while (b < ZKR_LATENCY_BUCKETS && ns > bounds_ns[b]) b++;
  atomic_fetch_add_explicit(&h->n[b], 1, memory_order_relaxed);
  atomic_fetch_add_explicit(&h->sum_ns, ns, memory_order_relaxed);
}

void zkr__latency_get(zkr__latency_t *h, zkr_latency_hist_t *out) {
  for (int b = 0; b <= ZKR_LATENCY_BUCKETS; b++)
    out->counts[b] = atomic_load_explicit(&h->n[b], memory_order_relaxed);
  out->sum_ms = (double)atomic_load_explicit(&h->sum_ns, memory_order_relaxed) / 1e6;
}

void zkr__latency_op_done(zkr__op_t *op, int rc, double ms) {
  zkr_t *z = op->z;
  if (zkr__op_has(op, ZKR__OP_F_PROBE) || op->type == ZKR__OP_SYNC ||
      !zkr__latency_server_answered(rc) || !z->latency)
    return;
  zkr__member_latency_t *l = &z->latency[op->member];
  zkr__latency_add(zkr__op_has(op, ZKR__OP_F_WRITE) ? &l->write : &l->read,
                   ms > 0 ? (uint64_t)(ms * 1e6) : 0);
}
