/* The membership's parts (zkr__membership_*, zkr__ensemble_*,
 * zkr__hostnames_*): their shared state and the steps they share. */
#ifndef ZKR_MEMBERSHIP_H
#define ZKR_MEMBERSHIP_H

#include "model/dynconfig.h"
#include "core/handle.h"
#include "zk/resolve.h"

struct zkr__membership {
  pthread_mutex_t mu; /* guards buf, len, rc, got, watch_fired */
  char *buf;          /* the last getconfig reply, not yet applied */
  int len, rc, got;
  int watch_fired; /* the config changed, or its watch may be lost */

  /* Monitor thread only. */
  int inflight;      /* a sync+getconfig is on its way */
  int on;            /* member whose session holds the watch, -1 none */
  zhandle_t *on_zh;  /* ... and the zhandle it was set on */
  uint64_t retry_ns; /* no new read before this (after a failure) */

  zkr__hostlist_t *want; /* zkr_set_servers' list to apply, under mu */

  zkr__dns_t *dns;       /* the host names' re-resolution, NULL none */
  zkr__host_t *dns_want; /* what they stand for now (ZKR__HOSTS_MAX_MEMBERS) */

  _Atomic int follows;     /* CFG_* below */
  _Atomic int64_t version; /* last version seen, -1 none */
  _Atomic uint64_t reads, errors, added, removed;
};

/* Init.  @locks none. */
int zkr__membership_new(struct zkr *z);
/* The close path (destroy).  @locks none. */
void zkr__membership_free(struct zkr *z);
/* The monitor's turn, nothing held.  @locks membership's mu; then, with none held, the ensemble
 * and hostnames turns' and zkr__membership_become's. */
void zkr__membership_tick(struct zkr *z);
/* zkr_stats' caller.  @locks none (atomics). */
void zkr__membership_stats(struct zkr *z, zkr_stats_t *s);

/* follows: whether the membership follows the configuration. */
enum { CFG_UNKNOWN = 0, CFG_FOLLOWING = 1, CFG_NOT_FOLLOWED = -1, CFG_OFF = -2 };

/* Monitor thread: the member of this address, -1 none.
 * The monitor.  @locks none. */
int zkr__membership_find(zkr_t *z, const zkr__host_t *h);
/* Takes m out: no new operation from now on; in flight finishes.
 * The monitor.  @locks m->health_mu; then as zkr__session_update and zkr__router_gate_flush,
 * none held. */
void zkr__membership_retire(zkr_t *z, zkr__member_t *m);
/* A server (back): a new slot, or a retired one of the same address; s
 * (the configuration's line) may be NULL.
 * The monitor.  @locks m->zh_lock (read, zkr__member_has_zh), then as zkr__member_open. */
void zkr__membership_admit(zkr_t *z, const zkr__host_t *h, const zkr__config_server_t *s);
/* The members become the hosts v[0..n) stand for.
 * The monitor.  @locks as zkr__membership_admit and _retire, then mon_mu (a kick); one at a
 * time. */
void zkr__membership_become(zkr_t *z, const zkr__host_t *v, size_t n);
/* The monitor's turns: the configuration (zkr__ensemble_*), the names
 * (zkr__hostnames_*).
 * The monitor.  @locks membership's mu, m->zh_lock (read), one at a time; applies a
 * configuration as zkr__membership_admit and _retire. */
void zkr__ensemble_turn(zkr_t *z);
/* The monitor.  @locks none itself; as zkr__membership_become. */
void zkr__hostnames_turn(zkr_t *z);

#endif
