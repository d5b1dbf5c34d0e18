/* The application's issue order (barrier.c): every operation it issued
 * until its completion was handed on, and zkr_async as a barrier. */
#ifndef ZKR_BARRIER_H
#define ZKR_BARRIER_H

#include "core/handle.h"

void zkr__order_add(zkr__op_t *op);
void zkr__order_cancel(zkr__op_t *op);
void zkr__order_done(zkr__op_t *op);
void zkr__order_barrier(zkr__op_t *op, const zkr__result_t *r);
int zkr__order_hold(zkr__op_t *op, const zkr__result_t *r);

#endif
