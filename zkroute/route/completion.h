/* Replies (zkr__completion_*): the completion trampolines every request
 * zkroute sends names, op_finish's per-part hooks, and the hand-on of the
 * application's completion (to a waiter, or the delivery thread). */
#ifndef ZKR_COMPLETION_H
#define ZKR_COMPLETION_H

#include "core/handle.h"

/* Lock notes (table in core/handle.h).  The hub of route/: the
 * zkr__completion_void, _stat, _data, ... (one per reply shape) are
 * ZooKeeper's completions and run on its completion thread with no
 * library lock held.  A completion takes, one at a time
 * and none inside another: hedger's mu, watch_mu, gate_mu (then as
 * zkr__router_route), order_mu, out_mu, inflight's mu, m->health_mu, state_mu
 * (the session dip), and delivery's mu to queue the application's
 * callback, which runs later on the delivery thread, unlocked.
 * zkr__completion_error runs the same stages, also with gate_mu held
 * (a parked operation that failed): hence gate_mu's place first.  Under
 * gate_mu only for an operation never sent (op->member < 0), which skips
 * the two stages that would break the order there - the session dip
 * (state_mu) and the gate's release (gate_mu again). */

/* Routing (gate_mu held), the monitor or the close path.  @locks as the trampolines below. */
void zkr__completion_error(zkr__op_t *op, int rc);
/* The hedger's turn, nothing held.  @locks as zkr__completion_hand_on. */
void zkr__completion_call_user_error(zkr__op_t *op, int rc);
/* A member zhandle's completion thread, nothing held.  @locks the stages above, one at a time. */
void zkr__completion_void(int rc, const void *data);
/* As zkr__completion_void. */
void zkr__completion_stat(int rc, const struct Stat *stat, const void *data);
/* As zkr__completion_void. */
void zkr__completion_data(int rc, const char *value, int value_len, const struct Stat *stat,
                          const void *data);
/* As zkr__completion_void. */
void zkr__completion_strings(int rc, const struct String_vector *strings, const struct Stat *stat,
                             const void *data);
/* As zkr__completion_void. */
void zkr__completion_strings_stat(int rc, const struct String_vector *strings,
                                  const struct Stat *stat, const void *data);
/* As zkr__completion_void. */
void zkr__completion_string(int rc, const char *value, const void *data);
/* As zkr__completion_void. */
void zkr__completion_string_stat(int rc, const char *value, const struct Stat *stat,
                                 const void *data);
/* As zkr__completion_void. */
void zkr__completion_acl(int rc, struct ACL_vector *acl, struct Stat *stat, const void *data);
/* A completion's thread (or the hedger's, a resume's).  @locks state_mu (the dip hooks),
 * delivery's mu, watch_mu, order_mu, one at a time. */
void zkr__completion_hand_on(zkr__op_t *op, const zkr__result_t *r);
/* The thread whose watch event released the read (hooks.h), no watch_mu held.  @locks as
 * zkr__completion_hand_on, and hedger's mu or order_mu. */
void zkr__completion_resume(zkr__op_t *op);

#endif
