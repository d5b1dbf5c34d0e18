/* Handing an operation to a member session (dispatch.c): the pipelined
 * pre-sync and its coalescing, the send, the outstanding list that close
 * completes, probes, and completion's share (outstanding list, write
 * epoch). */
#ifndef ZKR_DISPATCH_H
#define ZKR_DISPATCH_H

#include "core/handle.h"

int zkr__op_dispatch(zkr__op_t *op, zkr__member_t *m);
int zkr__probe(zkr__member_t *m);
void zkr__out_remove(zkr__op_t *op);
void zkr__dispatch_op_done(zkr__op_t *op, int rc, const struct Stat *stat);
void zkr__op_complete_abandoned(struct zkr *z);
void zkr__op_complete_dropped(struct zkr *z, zhandle_t *zh);

#endif
