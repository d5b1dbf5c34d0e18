/* The connect string's host names followed (docs/dropin.md "Host
 * names"): zkr__resolve_* re-resolves them every resolve_ms on a thread of its
 * own; here, on the monitor's turn, the members become what they stand for
 * now.  Rounds run while the configuration is not followed: when it is,
 * it names the servers itself (and a name may stand for a load balancer
 * in front of them). */
#include "core/handle.h"
#include "session/membership.h"
#include "zk/resolve.h"
#include "zk/zkapi.h"

void zkr__hostnames_turn(zkr_t *z) {
  struct zkr__membership *ms = z->ms;
  size_t n = 0;
  if (!ms->dns || ms->follows == CFG_FOLLOWING) return;
  int ms_period = z->opts.resolve_ms > 0 ? z->opts.resolve_ms : z->opts.leader_poll_ms;
  if (zkr__resolve_tick(ms->dns, zkr__zk->resolve, zkr__now_ns(), (uint64_t)ms_period * 1000000ull,
                        ms->dns_want, &n) &&
      ms->follows != CFG_FOLLOWING)
    zkr__membership_become(z, ms->dns_want, n);
}
