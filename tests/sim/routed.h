/* Routed mode (routed.c): the library between the workload and the
 * simulated ensemble. */
#ifndef SIM_ROUTED_H
#define SIM_ROUTED_H

#include "workload.h"
#include "zk/zkapi.h"

/* Installs the simulated client as the library's table and the world as
 * its runtime; returns the table of zkr_ calls the workload uses.
 * session: handles open with consistency=session; idle_park_ms > 0: with
 * that idle_park_ms (idle parking within the schedule). */
const zkr__zk_t *routed_begin(int session, int idle_park_ms);
/* The blocking calls (zkr_get, zkr_set2, zkr_exists). */
const wl_blocking_t *routed_blocking(void);
/* Closes what is still open and puts the library back as it was. */
void routed_end(void);

#endif
