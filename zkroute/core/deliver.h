/* The handle's callback thread (zkr__deliver_*): every application callback
 * runs there, one at a time, in order. */
#ifndef ZKR_DELIVER_H
#define ZKR_DELIVER_H

#include "core/handle.h"

/* Lock notes (table in core/handle.h).  Queuing takes delivery's mu
 * alone, under any lock of the table; the delivery thread runs each
 * callback with no library lock held.  zkr__deliver_session takes ctx_mu,
 * then queues. */

/* Init.  @locks none (starts the delivery thread unless stepped). */
int zkr__deliver_start(struct zkr *z);
/* The close path.  @locks delivery's mu (stops and joins the delivery thread; stepped: as
 * zkr__deliver_drain). */
void zkr__deliver_stop(struct zkr *z);
/* A stepped runtime's driver or a blocking call's wait.  @locks delivery's mu per event,
 * released while the callback runs. */
void zkr__deliver_drain(struct zkr *z); /* stepped runtime (runtime.h) */
/* The close path (destroy).  @locks none. */
void zkr__deliver_free(struct zkr *z);
/* Any thread handing a completion on.  @locks delivery's mu. */
void zkr__deliver_result(struct zkr *z, zkr__cb_shape_t shape, zkr__cb_t cb, const void *data,
                         const zkr__result_t *r);
/* The same, under any lock of the table: returns 0, queuing nothing, when
 * out of memory (the caller then calls zkr__deliver_call with no lock held).
 * @locks delivery's mu. */
int zkr__deliver_result_queue(struct zkr *z, zkr__cb_shape_t shape, zkr__cb_t cb, const void *data,
                              const zkr__result_t *r);
/* Calls a completion of the given shape with r, on the calling thread.
 * The calling thread (a waiter's, the delivery thread).  @locks none. */
void zkr__deliver_call(zkr__cb_shape_t shape, zkr__cb_t cb, const void *data,
                       const zkr__result_t *r);
/* Any thread.  @locks delivery's mu. */
void zkr__deliver_watch(struct zkr *z, watcher_fn fn, void *ctx, int type, int state,
                        const char *path);
/* Any thread, often with state_mu held.  @locks ctx_mu, then watch_mu and
 * inside it delivery's mu (zkr__watch_session_deliver). */
void zkr__deliver_session(struct zkr *z, int state);
/* A reply kept beyond its completion (zkr__barrier_*): a copy, its view, and
 * freeing it.  zkr__deliver_reply_copy returns NULL when out of memory. */
struct zkr__reply;
/* Any thread.  @locks none. */
struct zkr__reply *zkr__deliver_reply_copy(zkr__cb_shape_t shape, const zkr__result_t *r);
/* @locks none. */
zkr__result_t zkr__deliver_reply_view(const struct zkr__reply *k);
/* @locks none. */
void zkr__deliver_reply_free(struct zkr__reply *k);
/* The handle whose delivery thread this is, or NULL. */
extern _Thread_local struct zkr *zkr__delivering;

#endif
