/* Calls up, through tables (DESIGN.md section 9): what the core and route
 * layers must tell the layers above them, they tell through a small const
 * table of callbacks that the upper layer hands the handle when it is made
 * (zkr_init_opts), as hiredis's redisContextFuncs: the session layer's
 * (zkr__session_hooks) and the route layer's (zkr__router_hooks).  The
 * callers below name the hook, not the function behind it.  A handle made
 * without an upper layer (a unit test's) has NULL tables: each call here
 * then does nothing, and a dip is not counted. */
#ifndef ZKR_HOOKS_H
#define ZKR_HOOKS_H

#include "core/handle.h"

/* The virtual session's (session layer). */
typedef struct zkr__session_hooks {
  /* Recomputes the virtual state after a member's changed
   * (zkr__session_update).  Takes state_mu. */
  void (*update)(struct zkr *z);
  /* Before a failed operation of the application is handed on: 1 when it
   * counts in its slot's dip (zkr__session_dip). */
  int (*dip)(struct zkr *z, int slot);
  /* After it was handed on (zkr__session_dip_check). */
  void (*dip_check)(struct zkr *z, int slot, int counted);
} zkr__session_hooks_t;

/* An operation's life (route layer). */
typedef struct zkr__route_hooks {
  /* Sends the write gate's parked operations (zkr__router_gate_flush). */
  void (*gate_flush)(struct zkr *z);
  /* A member zhandle's session event, for the fence
   * (zkr__router_gate_session_event). */
  void (*gate_session_event)(struct zkr *z, zhandle_t *zh, int state);
  /* A read held for a watch's event is handed on (zkr__completion_resume). */
  void (*resume)(zkr__op_t *op);
  /* A watched read that never completed is freed: whether a remove_all
   * covers its record (held then), and, once the record is discarded, the
   * end of that cover (zkr__watch_remove_cover_held, zkr__watch_remove_covered). */
  int (*cover_held)(struct zkr *z, zkr__watch_t *w);
  void (*covered)(struct zkr *z, zkr__watch_t *w);
  void (*cover_end)(struct zkr *z, zkr__watch_t *w);
  /* Records changed (zkr__watch_done) or the monitor's turn: removal
   * calls whose completion waits for an event of a record they remove
   * may complete now (zkr__watch_remove_events_out). */
  void (*events_out)(struct zkr *z);
} zkr__route_hooks_t;

/* The caller's thread.  @locks as zkr__session_update. */
static inline void zkr__hooks_session_update(struct zkr *z) {
  if (z->session_hooks) z->session_hooks->update(z);
}

/* A completion's thread.  @locks as zkr__session_dip. */
static inline int zkr__hooks_session_dip(struct zkr *z, int slot) {
  return z->session_hooks ? z->session_hooks->dip(z, slot) : 0;
}

/* A completion's thread.  @locks as zkr__session_dip_check. */
static inline void zkr__hooks_session_dip_check(struct zkr *z, int slot, int counted) {
  if (z->session_hooks) z->session_hooks->dip_check(z, slot, counted);
}

/* The caller's thread, none of gate_mu and below held.  @locks as zkr__router_gate_flush. */
static inline void zkr__hooks_gate_flush(struct zkr *z) {
  if (z->route_hooks) z->route_hooks->gate_flush(z);
}

/* A member zhandle's completion thread (its watcher).  @locks as zkr__router_gate_session_event. */
static inline void zkr__hooks_gate_session_event(struct zkr *z, zhandle_t *zh, int state) {
  if (z->route_hooks) z->route_hooks->gate_session_event(z, zh, state);
}

/* The thread that released the held read, no watch_mu held.  @locks as zkr__completion_resume. */
static inline void zkr__hooks_resume(zkr__op_t *op) {
  if (op->z->route_hooks) op->z->route_hooks->resume(op);
}

/* A completion's thread or an op's free, no watch_mu held.  @locks watch_mu. */
static inline int zkr__hooks_cover_held(struct zkr *z, zkr__watch_t *w) {
  return z->route_hooks ? z->route_hooks->cover_held(z, w) : 0;
}

/* As zkr__hooks_cover_held.  @locks watch_mu, then (without it) m->zh_lock (read) and what a
 * hand-on takes. */
static inline void zkr__hooks_covered(struct zkr *z, zkr__watch_t *w) {
  if (z->route_hooks) z->route_hooks->covered(z, w);
}

/* An op's free or held reads' release (done_with), no watch_mu held.  @locks as
 * zkr__watch_remove_cover_end. */
static inline void zkr__hooks_cover_end(struct zkr *z, zkr__watch_t *w) {
  if (z->route_hooks) z->route_hooks->cover_end(z, w);
}

/* After held reads were handed on (done_with) or the monitor's turn, no
 * watch_mu held.  @locks as zkr__watch_remove_events_out. */
static inline void zkr__hooks_events_out(struct zkr *z) {
  if (z->route_hooks && z->rm_waiting) z->route_hooks->events_out(z);
}

#endif
