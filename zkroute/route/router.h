/* The router (zkr__router_*; DESIGN.md sections 2, 3): an operation's
 * classification and ordering, the write gate (one write session at a
 * time, FIFO), and completion's share (the in-flight paths). */
#ifndef ZKR_ROUTER_H
#define ZKR_ROUTER_H

#include "core/handle.h"
#include "core/hooks.h"

/* Lock notes (the table is in core/handle.h): "@locks X" = takes X,
 * "@locks X held" = the caller holds X.  Every function here that takes
 * gate_mu must be called with none of the locks below it in that table
 * held; under gate_mu they send (m->zh_lock, m->co_mu, out_mu, hedger's
 * mu) and complete failed operations (order_mu, delivery's mu). */

/* The application's thread (zkr__api_check_submit): classifies op and sends or
 * parks it.  @locks gate_mu, and what a send and a completion take. */
int zkr__router_route(zkr__op_t *op);
/* A completion's thread.  @locks inflight's mu; gate_mu (to raise the
 * fence, after an unknown outcome), with m->zh_lock inside it. */
void zkr__router_op_done(zkr__op_t *op, int rc);
/* Any thread.  @locks none. */
int zkr__router_fifo(struct zkr *z);
/* A completion's thread.  @locks gate_mu (zkr__router_gate_flush) once the last
 * read before a parked write is done. */
void zkr__router_fifo_done(struct zkr *z, int write);
/* A completion's thread, or close.  @locks gate_mu, then as zkr__router_route. */
void zkr__router_gate_done(struct zkr *z);
void zkr__router_gate_flush(struct zkr *z);
void zkr__router_gate_close(struct zkr *z);
/* The monitor.  @locks gate_mu. */
void zkr__router_gate_adopt_leader(struct zkr *z);
int zkr__router_gate_current(struct zkr *z);
void zkr__router_gate_expire(struct zkr *z, uint64_t older_than_ns);
/* ZooKeeper's watcher thread (a member's session event).  @locks gate_mu
 * when the event lowers the fence. */
void zkr__router_gate_session_event(struct zkr *z, zhandle_t *zh, int state);
/* The monitor (rescue).  @locks gate_mu. */
void zkr__router_gate_fence_moved(struct zkr *z, zhandle_t *from, zhandle_t *to, int slot);
zhandle_t *zkr__router_gate_fence(struct zkr *z, int *slot, clientid_t *cid);
/* The calls the layers below make up to the route layer (hooks.h). */
extern const zkr__route_hooks_t zkr__router_hooks;
/* The monitor.  @locks gate_mu. */
void zkr__router_gate_fence_tick(struct zkr *z, uint64_t now_ns);

#endif
