/* One member: a ZooKeeper session pinned to one server (zkr__member_*):
 * its record, opening and closing its session, its state as the pools see
 * it, and completion's share for the member (error count, monitor kick). */
#ifndef ZKR_MEMBER_H
#define ZKR_MEMBER_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include "model/health.h"
#include "model/hosts.h"
#include "model/queue.h"
#include "zkroute.h"

/* Lock notes (table in core/handle.h).  zkr__member_open, _detach and
 * _close write-hold m->zh_lock; zkr__member_watcher (ZooKeeper's watcher
 * thread) read- and write-holds it, then takes m->health_mu, and calls
 * up (hooks.h: gate_mu, state_mu) with neither held; _maybe_join,
 * _in_pool and _sample take m->health_mu alone. */

struct zkr;
struct zkr__op;

typedef struct zkr__member {
  struct zkr *z;
  int index;
  int owner_slot; /* the owner slot (members[cap]): holds the owner session
                     once it was re-attached away from its first member;
                     never routed to but for session-scoped writes */
  zkr__host_t host;
  char address[ZKR__HOST_NAME_MAX + 16]; /* "host:port" for display */
  char *connect;                         /* "host:port/chroot" */

  /* zh is replaced only by the monitor (rescue, re-creation, membership)
   * and cleared by close, all under the write lock; dispatch holds the read
   * lock while it hands a request to zh, so a request never reaches a freed
   * handle. */
  pthread_rwlock_t zh_lock;
  zhandle_t *zh;
  /* The session id of cid_zh, learned when it connected (under zh_lock):
   * a fenced write's session can be moved elsewhere by it (zkr__rescue_*). */
  clientid_t cid;
  zhandle_t *cid_zh;

  _Atomic int state;                   /* ZOO_*_STATE of the session */
  _Atomic int timeout_ms;              /* the session timeout its server negotiated, 0 unknown */
  _Atomic int auth_pending;            /* add_auth replies still awaited */
  _Atomic int auth_refused;            /* a credential was refused: never joins */
  _Atomic int auth_missing;            /* a credential could not be given to its
                                          zhandle yet (zkr__auth_* retries): not joined */
  _Atomic int joined;                  /* admitted to the pools (auth done) */
  _Atomic int expired;                 /* session expired; monitor re-creates it */
  _Atomic int role;                    /* zkr_role_t from srvr */
  _Atomic int64_t zxid;                /* from srvr, -1 unknown */
  _Atomic int64_t last_zxid;           /* the last zxid srvr showed, kept when
                                          srvr fails: -1 never */
  _Atomic int watches;                 /* watch records armed on its session */
  _Atomic int hosted_on;               /* member whose server the session is on: its
                               own; for the owner slot, where the owner
                               session lives now */
  _Atomic uint64_t down_since_ns;      /* not connected since, 0 when connected */
  _Atomic uint64_t conn_events;        /* session events of its zhandle so far: a
                                          watch armed there before one may have
                                          been dropped with the connection and set
                                          again silently (zkr__watch_op_done) */
  int srvr_fail_streak;                /* consecutive failed srvr polls (monitor) */
  _Atomic uint64_t srvr_fail_since_ns; /* first failed poll of the streak, 0 none */
  _Atomic int suspect;                 /* silent to srvr while others answer */
  uint64_t behind_since_ns;            /* srvr shows it behind a change of a newer
                                          epoch the handle saw, since (monitor;
                                          zkr__rescue_*), 0 not */

  _Atomic uint64_t reads, writes, syncs, errors, srvr_polls, srvr_failures;
  _Atomic uint64_t srvr_shared; /* srvr answers another handle's request gave */
  _Atomic uint64_t rescues;     /* owner re-attached from here (member), or
                                in place (owner slot) */
  _Atomic uint64_t recreated;   /* carrier sessions replaced by new ones */
  _Atomic int reopen;           /* its carrier could not be opened again: the
                               monitor retries (zkr__rescue_*) */
  _Atomic int parked;           /* no session, by the read_members cap
                               (zkr__carriers_*) */
  uint64_t dip_ns;              /* last operation its connection loss failed
                               while the state was dipped (zkr__session_*,
                               under state_mu) */
  int dip_pending;              /* ... counted and not yet handed on */
  _Atomic int opening;          /* zkr__member_open between zookeeper_init and
                               storing the zhandle */

  /* Sync coalescing (zkr__dispatch_*), under co_mu: the session co_zh has
   * co_inflight syncs in flight (at most sync_coalesce_depth); reads that
   * came while it was full wait in co_q for the next one.  co_syncs lists
   * the coalesced syncs sent whose completion has not run: a closing
   * zhandle may drop it, and zkr__dispatch_complete_dropped frees them. */
  pthread_mutex_t co_mu;
  zhandle_t *co_zh;
  int co_inflight;
  zkr__queue_t co_q;
  zkr__queue_t co_syncs;
  _Atomic uint64_t coalesced;   /* reads that shared a sync sent for others */
  _Atomic uint64_t reads_again; /* reads sent again: their sync was lost with
                                   its connection (zkr__dispatch_read_again) */
  /* Consistency `session` (zkr__dispatch_*): the write epoch and zhandle of
   * the last sync sent on this member's session (synced_zh NULL again
   * when a sync failed), and, under co_mu, the highest zxid the session
   * of zhandle shown_zh has shown: a reply's Stat, or the handle's
   * high-water mark when a sync was sent on it (the reads after it run
   * after it). */
  _Atomic uint64_t synced_epoch;
  zhandle_t *_Atomic synced_zh;
  zhandle_t *shown_zh;
  int64_t shown_zxid;
  _Atomic uint64_t hedges;      /* hedge requests sent to it (zkr__hedger_*) */
  _Atomic int outstanding;      /* operations sent and not completed */
  _Atomic uint64_t progress_ns; /* last completion, or start of being busy */
  uint64_t nudged_ns;           /* last nudge (monitor) */
  _Atomic uint64_t nudges;

  /* Membership (zkr__membership_*). */
  _Atomic int retired;       /* left /zookeeper/config: no new operation;
                               its session closes once idle */
  _Atomic int cfg_observer;  /* ":observer" in /zookeeper/config */
  _Atomic int64_t server_id; /* N of server.N, -1 unknown */

  pthread_mutex_t health_mu; /* guards health */
  zkr__health_t health;

  char zone[32];             /* zone label (zkr__selector_*), "" none */
  _Atomic uint64_t selected; /* reads the read selector placed here */
} zkr__member_t;

/* Init, or the monitor (membership, rescue, carriers).  @locks m->zh_lock (write), then auth_mu
 * (zkr__auth_replay) and zkr__member_maybe_join's, none held. */
int zkr__member_open(zkr__member_t *m, int on, const clientid_t *cid);
#define ZKR__KEEP_ASSOCIATING 2 /* only_if_down: an associating zhandle stays too */
/* The monitor or the close path.  @locks m->zh_lock (write). */
zhandle_t *zkr__member_detach(zkr__member_t *m, int only_if_down);
/* The monitor.  @locks m->zh_lock (read). */
int zkr__member_has_zh(zkr__member_t *m);
/* The close path.  @locks m->zh_lock (write); zookeeper_close with none held. */
void zkr__member_close(zkr__member_t *m);
/* Any thread.  @locks none. */
int zkr__member_holds_session(const zkr__member_t *m);
/* Any thread.  @locks none. */
int zkr__member_usable(const zkr__member_t *m);
/* Any thread.  @locks none. */
int zkr__member_connected(const zkr__member_t *m);
/* Whether m is the owner: the slot whose session the application's is.
 * A member's watcher.  @locks none. */
int zkr__member_is_owner(const zkr__member_t *m);
/* Any thread.  @locks none. */
int zkr__member_readonly(const zkr__member_t *m);
/* A member's watcher, the monitor, init.  @locks m->health_mu, then (none held) the hooks: as
 * zkr__session_update and zkr__router_gate_flush. */
void zkr__member_maybe_join(zkr__member_t *m);
/* The member zhandle's completion thread.  @locks m->zh_lock (read/write, alone), m->health_mu,
 * then the hooks (session update, gate flush, gate session event) and mon_mu, none held. */
void zkr__member_watcher(zhandle_t *zh, int type, int state, const char *path, void *ctx);
/* A completion's thread.  @locks m->health_mu. */
void zkr__member_sample(zkr__member_t *m, uint64_t now_ns, double ms);
/* A completion's thread.  @locks mon_mu (zkr__kick_monitor), nothing held. */
void zkr__member_op_done(struct zkr__op *op, int rc);
/* The monitor or zkr_stats' caller.  @locks m->health_mu. */
int zkr__member_in_pool(zkr__member_t *m);
/* Any thread.  @locks none. */
int zkr__member_observer(const zkr__member_t *m);
/* Makes slot i (its locks, its index) once; the slots of members not yet
 * added stay untouched memory.  Init (the owner slot) and
 * zkr__member_setup.  @locks none. */
void zkr__member_slot_init(struct zkr *z, size_t i);
/* Init, or the monitor admitting a member before it is published: makes
 * the slot first.  @locks none. */
int zkr__member_setup(struct zkr *z, size_t i, const zkr__host_t *host);
/* Any thread.  @locks none. */
zkr__member_t *zkr__member_owner_slot(struct zkr *z);

#endif
