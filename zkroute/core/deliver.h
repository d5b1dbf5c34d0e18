/* The handle's callback thread (zkr__deliver_*): every application callback
 * runs there, one at a time, in order. */
#ifndef ZKR_DELIVER_H
#define ZKR_DELIVER_H

#include "core/handle.h"

/* Lock notes (table in core/handle.h).  Queuing takes delivery's mu
 * alone, under any lock of the table; the delivery thread runs each
 * callback with no library lock held.  zkr__deliver_session takes ctx_mu,
 * then queues. */

int zkr__deliver_start(struct zkr *z);
void zkr__deliver_stop(struct zkr *z);
void zkr__deliver_drain(struct zkr *z); /* stepped runtime (runtime.h) */
void zkr__deliver_free(struct zkr *z);
void zkr__deliver_result(struct zkr *z, zkr__cb_shape_t shape, zkr__cb_t cb, const void *data,
                         const zkr__result_t *r);
/* Calls a completion of the given shape with r, on the calling thread. */
void zkr__deliver_call(zkr__cb_shape_t shape, zkr__cb_t cb, const void *data,
                       const zkr__result_t *r);
void zkr__deliver_watch(struct zkr *z, watcher_fn fn, void *ctx, int type, int state,
                        const char *path);
void zkr__deliver_session(struct zkr *z, int state);
/* A reply kept beyond its completion (zkr__barrier_*): a copy, its view, and
 * freeing it.  zkr__deliver_reply_copy returns NULL when out of memory. */
struct zkr__reply;
struct zkr__reply *zkr__deliver_reply_copy(zkr__cb_shape_t shape, const zkr__result_t *r);
zkr__result_t zkr__deliver_reply_view(const struct zkr__reply *k);
void zkr__deliver_reply_free(struct zkr__reply *k);
/* The handle whose delivery thread this is, or NULL. */
extern _Thread_local struct zkr *zkr__delivering;

#endif
