/* Handing an operation to a member session (zkr__dispatch_*): the pipelined
 * pre-sync and its coalescing, the send, the outstanding list that close
 * completes, probes, and completion's share (outstanding list, write
 * epoch). */
#ifndef ZKR_DISPATCH_H
#define ZKR_DISPATCH_H

#include "core/handle.h"

/* Lock notes (table in core/handle.h). */

/* The routing thread, often with gate_mu held.  @locks m->zh_lock (read),
 * inside it m->co_mu, out_mu, watch_mu (a reused watch), and the hedger's
 * mu after the send; calls zoo_a* with m->zh_lock read-held. */
int zkr__dispatch(zkr__op_t *op, zkr__member_t *m);
/* The monitor.  @locks as zkr__dispatch. */
int zkr__dispatch_probe(zkr__member_t *m);
/* A watch removal of path is about to be sent on m's zh: the reads with a
 * watch of path waiting there for a coalesced sync go first (with every
 * read waiting with them).  The application's thread.  @locks as
 * zkr__dispatch, and out_mu after (a refused read's completion). */
void zkr__dispatch_send_watched_before(zkr__member_t *m, zhandle_t *zh, const char *path);
/* A completion's thread.  @locks out_mu. */
void zkr__dispatch_out_remove(zkr__op_t *op);
/* A completion's thread, first thing.  @locks m->zh_lock (read), inside it
 * m->co_mu and out_mu, as zkr__dispatch. */
int zkr__dispatch_read_again(zkr__op_t *op, int rc);
/* A completion's thread.  @locks out_mu (zkr__dispatch_out_remove), then m->co_mu alone
 * (`session` consistency, a reply's zxid). */
void zkr__dispatch_op_done(zkr__op_t *op, int rc, const struct Stat *stat);
/* Close or the monitor, after zookeeper_close returned (no ZooKeeper
 * thread of that zhandle runs).  @locks out_mu, then m->co_mu; completes
 * what it took off without either. */
void zkr__dispatch_complete_abandoned(struct zkr *z);
void zkr__dispatch_complete_dropped(struct zkr *z, zhandle_t *zh);

#endif
