/* Latency histograms (zkr__latency_*): per member, the replies servers gave to
 * reads and to writes, counted in the buckets of ZKR_LATENCY_BOUNDS_MS,
 * for zkr_stats() and the Prometheus histograms (docs/stats.md). */
#ifndef ZKR_LATENCY_H
#define ZKR_LATENCY_H

#include <stdatomic.h>
#include <stdint.h>

#include "zkroute.h"

struct zkr;
struct zkr__op;

/* One histogram: lock-free, two relaxed atomic additions per sample. */
typedef struct zkr__latency {
  _Atomic uint64_t n[ZKR_LATENCY_BUCKETS + 1];
  _Atomic uint64_t sum_ns;
} zkr__latency_t;

/* A member slot's pair; the handle has one per slot (z->latency). */
typedef struct zkr__member_latency {
  zkr__latency_t read, write;
} zkr__member_latency_t;

/* 1 when rc is a server's answer (as opposed to the client library giving
 * up): only those count as latency samples.
 * Any thread.  @locks none. */
int zkr__latency_server_answered(int rc);
/* Allocates z->latency, one pair per member slot: ZOK or ZKR_ENOMEM.
 * Init.  @locks none. */
int zkr__latency_new(struct zkr *z);
/* Counts one sample of ns nanoseconds.
 * A completion's thread.  @locks none (atomics). */
void zkr__latency_add(zkr__latency_t *h, uint64_t ns);
/* Copies h into a zkr_latency_hist_t.
 * zkr_stats' caller.  @locks none (atomics). */
void zkr__latency_get(zkr__latency_t *h, zkr_latency_hist_t *out);
/* Completion's share: a read (not a probe, not a sync) or a write that a
 * server answered, ms after it was sent.
 * A completion's thread.  @locks none (atomics). */
void zkr__latency_op_done(struct zkr__op *op, int rc, double ms);

#endif
