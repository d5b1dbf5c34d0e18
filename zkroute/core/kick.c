/* The monitor's doorbell: a flag of the handle (mon_kick under mon_mu)
 * that the layers below the monitor set when something it must look at
 * changed - a disconnected write session, an epoch no srvr answer showed
 * yet, credentials that failed - and the ticker's kick, which makes the
 * monitor's turn due now.  It lives here, below them all, so that ringing
 * it is no call upward: the monitor's turn (zkr__monitor_step, run by the
 * ticker or a stepped runtime) reads and clears it. */
#include "core/handle.h"
#include "core/kick.h"
#include "core/ticker.h"

void zkr__kick_monitor(zkr_t *z) {
  pthread_mutex_lock(&z->mon_mu);
  /* Its poll takes srvr answers asked for from then on (zkr__srvr_cache_*). */
  if (!z->mon_kick) z->mon_kick_ns = zkr__now_ns();
  z->mon_kick = 1;
  pthread_mutex_unlock(&z->mon_mu);
  zkr__ticker_kick_monitor(z);
}
