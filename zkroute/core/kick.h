/* The monitor's doorbell (zkr__kick_*): any layer may ring it, from any
 * thread, so that the monitor thread turns at once. */
#ifndef ZKR_KICK_H
#define ZKR_KICK_H

/* Lock notes: zkr__kick_monitor takes mon_mu alone, for the flag, then
 * the ticker's mu alone; callable under any other lock. */

struct zkr;

/* Makes the monitor turn now rather than at its next poll (a stepped
 * runtime's next step then is now).  Takes mon_mu for the flag, then the
 * ticker's mu (a leaf): safe with any other lock held.
 * Any thread.  @locks mon_mu, then the ticker's mu. */
void zkr__kick_monitor(struct zkr *z);

#endif
