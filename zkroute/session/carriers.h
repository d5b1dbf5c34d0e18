/* The read_members cap (zkr__carriers_*): which follower sessions a handle
 * keeps, re-chosen on the monitor's turn. */
#ifndef ZKR_CARRIERS_H
#define ZKR_CARRIERS_H

#include "core/handle.h"

void zkr__carriers_tick(struct zkr *z, uint64_t now_ns);

#endif
