/* The monitor's doorbell: a flag and a condition variable of the handle
 * (mon_kick, mon_cv under mon_mu) that the layers below the monitor set
 * when something it must look at changed - a disconnected write session,
 * an epoch no srvr answer showed yet, credentials that failed.  It lives
 * here, below them all, so that ringing it is no call upward: the monitor
 * thread (zkr__monitor_start) and its stepped turn (zkr__monitor_step)
 * read and clear it. */
#include "core/handle.h"
#include "core/kick.h"

void zkr__kick_monitor(zkr_t *z) {
  pthread_mutex_lock(&z->mon_mu);
  z->mon_kick = 1;
  pthread_cond_signal(&z->mon_cv);
  pthread_mutex_unlock(&z->mon_mu);
}
