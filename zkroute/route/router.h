/* The router (router.c; DESIGN.md sections 2, 3): an operation's
 * classification and ordering, the write gate (one write session at a
 * time, FIFO), and completion's share (the in-flight paths). */
#ifndef ZKR_ROUTER_H
#define ZKR_ROUTER_H

#include "core/handle.h"
#include "core/hooks.h"

int zkr__route(zkr__op_t *op);
void zkr__router_op_done(zkr__op_t *op, int rc);
int zkr__router_fifo(struct zkr *z);
void zkr__router_fifo_done(struct zkr *z, int write);
void zkr__gate_done(struct zkr *z);
void zkr__gate_flush(struct zkr *z);
void zkr__gate_close(struct zkr *z);
void zkr__gate_adopt_leader(struct zkr *z);
int zkr__gate_current(struct zkr *z);
void zkr__gate_expire(struct zkr *z, uint64_t older_than_ns);
void zkr__gate_session_event(struct zkr *z, zhandle_t *zh, int state);
void zkr__gate_fence_moved(struct zkr *z, zhandle_t *from, zhandle_t *to, int slot);
zhandle_t *zkr__gate_fence(struct zkr *z, int *slot, clientid_t *cid);
/* The calls the layers below make up to the route layer (hooks.h). */
extern const zkr__route_hooks_t zkr__router_hooks;
void zkr__gate_fence_tick(struct zkr *z, uint64_t now_ns);

#endif
