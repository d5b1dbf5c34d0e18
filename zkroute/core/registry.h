/* Live handles (zkr__registry_*): every public call holds its handle while
 * it runs, so a NULL, closed or foreign pointer gets a code, not a crash. */
#ifndef ZKR_REGISTRY_H
#define ZKR_REGISTRY_H

#include "core/handle.h"

/* Init.  @locks none (atomics). */
int zkr__registry_add(struct zkr *z); /* slot, or -1 when full */
/* The close path.  @locks none (waits on atomics). */
void zkr__registry_remove(int slot, struct zkr *z); /* waits for callers */
/* Enters a public call: the slot (>= 0), or ZBADARGUMENTS for NULL and
 * ZKR_ECLOSED for a handle that is not live.  zkr__registry_unhold(slot) leaves.
 * Any public call's thread.  @locks none (atomics). */
int zkr__registry_hold(struct zkr *z);
/* @locks none (atomics). */
void zkr__registry_unhold(int slot);
/* Returns call's result, evaluated inside a hold of z: z stays allocated
 * meanwhile, and a NULL or closed handle gets its code untouched. */
#define ZKR__HELD(z, call)                                                                         \
  do {                                                                                             \
    int slot_ = zkr__registry_hold(z);                                                             \
    if (slot_ < 0) return slot_;                                                                   \
    int rc_ = (call);                                                                              \
    zkr__registry_unhold(slot_);                                                                   \
    return rc_;                                                                                    \
  } while (0)

#endif
