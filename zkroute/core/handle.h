/* The handle (struct zkr, what zkr_t names): every part's state of one
 * routed handle, with the structures every part shares - the members
 * (member.h) and the operations (op.h) - and the small inline helpers
 * (base.h).  zkr__handle_* creates and closes it.  Each part's functions are in
 * the part's own header; internal.h includes them all.  Nothing here is
 * exported (-fvisibility=hidden; only ZKR_API functions are visible).
 *
 * LOCK ORDER - every mutex and rwlock of the library, in the order a
 * thread may take them: a thread holding one takes only locks further
 * down.  Locks on one line are never held together.  Taken from the code
 * and checked against the nestings a recording of every unit test and 300
 * simulator seeds saw (docs/architecture.md, "Locks").
 *
 *   per handle (struct zkr, its members, its parts)
 *    1 state_mu        the virtual session's state (zkr__session_*)
 *      auth_mu         credentials (zkr__auth_*; zkr_lock_auth holds it
 *                      for the application)
 *      gate_mu         the write gate and the fence (zkr__router_gate_*,
 *                      zkr__router_route): sends, parks and completes failed
 *                      operations under it
 *    2 sel_lock        rwlock, the read selector (zkr__selector_*)
 *    3 m->zh_lock      rwlock, one member's zhandle; read-held around
 *                      every zoo_* call on it, write-held to swap it.  One
 *                      member's at a time
 *    4 m->co_mu        one member's sync coalescing (the co_ queue)
 *    5 watch_mu        watch records and held reads (zkr__watch_*)
 *      order_mu        issue order (zkr__barrier_*)
 *      out_mu          outstanding operations (zkr__dispatch_out_remove, dispatch)
 *    6 hedger's mu     hedge queue and primaries' h_ fields
 *      m->health_mu    one member's health; zkr__pool_* takes
 *                      every member's at once, in slot order
 *      inflight's mu   in-flight write paths (zkr__inflight_*)
 *      ans_mu          credential answers queued for the monitor
 *      membership's mu /zookeeper/config read state
 *      mon_mu          the monitor's kick flag (zkr__kick_monitor)
 *      ticker's mu     the process's ticker (zkr__ticker_*): a leaf,
 *                      taken by kicks under any of the above
 *      a waiter's mu   one blocking call (waiter_wait)
 *    7 delivery's mu   the callback queue (zkr__deliver_*)
 *      ctx_mu          the application's watcher and context
 *      z->log's flag   a spin flag around the log storm limit
 *                      (zkr__log_emit): a leaf, taken by log lines under
 *                      any of the above
 *
 *   per process
 *      ticker life_mu, then the ticker's mu: zkr__ticker_add and _remove
 *      (never from a turn; no turn runs with either held)
 *      metrics life_mu, then metrics mu (the metrics endpoint)
 *      env rec_mu, then plain_mu (the drop-in's statistics records)
 *      preload reg_lock (the interposer's handle registry)
 *      the srvr cache's mu (zkr__srvr_cache_*: shared srvr answers), taken
 *      by the monitor's polls with no library lock held, around its table
 *      only - never across the srvr request itself
 *   Each is taken alone, or only around its own list (plain_mu also
 *   around the stock zookeeper_init of ZKROUTE=off); rec_mu, life_mu and
 *   reg_lock are also held across fork by their atfork handlers.
 *   scripts/lock-order.sh prints the nestings a run really performs.
 *
 * ZooKeeper's own locks come after all of these: zoo_* is called with
 * m->zh_lock read-held, and auth_mu, gate_mu or m->co_mu may be held too.  No library lock is held while an application callback runs
 * (the delivery thread calls them unlocked); the waiter's completion runs
 * on ZooKeeper's thread, taking only its own mu.  "@locks" in a prototype's
 * comment says which of these the function takes (or needs held); see the
 * route/ and core/ headers. */
#ifndef ZKR_HANDLE_H
#define ZKR_HANDLE_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include "model/base.h"
#include "model/health.h"
#include "model/hosts.h"
#include "core/log.h"
#include "core/member.h"
#include "core/ticker.h"
#include "core/op.h"
#include "zkroute.h"

struct zkr {
  /* The upper layers' callbacks (hooks.h), set when the handle is made
   * and never changed; NULL in a handle made without those layers. */
  const struct zkr__session_hooks *session_hooks;
  const struct zkr__route_hooks *route_hooks;

  zkr_options_t opts;
  zkr__health_cfg_t hcfg;
  zkr__hostlist_t hosts;
  /* Members live in members[0..n); n only grows (zkr__membership_* adds a
   * member by filling slot n, then publishing n + 1), up to cap.
   * members[cap] is the owner slot (see owner below).  No slot ever
   * moves, so an index stays valid for the life of the handle. */
  _Atomic size_t n;
  size_t cap;
  zkr__member_t *members;

  int recv_timeout;
  int rescue_ms; /* resolved: option or a third of recv_timeout */
  int flags;
  uint64_t init_ns;

  pthread_mutex_t ctx_mu; /* guards watcher and context */
  watcher_fn watcher;
  void *context;

  /* The virtual session (zkr__session_*; DESIGN.md section 4).  The owner
   * session is the application's session: its slot is a member's while it
   * lives on that member's server (it carries that member's reads and
   * writes too), and the owner slot members[cap] once a rescue re-attached
   * it elsewhere.  -1 until chosen.  owner_id is its id, copied: what
   * zkr_client_id returns for the life of the handle. */
  pthread_mutex_t state_mu;
  _Atomic int owner;
  int owner_told; /* monitor: what waited for the owner was told */
  /* The virtual session was established (CONNECTED or READ-ONLY once, its
   * event queued): until then no operation is sent, so none completes
   * before it, as with stock (zkr__router_*).  est_told: the monitor let the
   * held operations go. */
  _Atomic int established;
  int est_told;
  /* Since when the owner session is not connected, 0 while it is
   * (zkr__session_*): two thirds of its timeout later a stock session may be
   * gone, and writes are fenced (DESIGN.md section 4). */
  _Atomic uint64_t owner_down_ns;
  clientid_t owner_id;
  int resume;          /* a clientid was passed: the owner resumes it */
  _Atomic int vstate;  /* state last reported to the application */
  _Atomic int expired; /* the owner session expired */
  _Atomic int auth_failed;
  _Atomic int auth_first; /* AUTH_FAILED came before any EXPIRED: it is the
                             session's end, and EXPIRED after it is not reported */
  _Atomic int closing;
  _Atomic int carriers_closed; /* after expiry: every session closed */
  /* Slots whose connection loss failed an application operation while
   * the state was CONNECTED: the state dips to CONNECTING until their
   * failed operations are all completed (as a stock session reports
   * CONNECTING before its ZCONNECTIONLOSS completions). */
  _Atomic uint64_t dip;
  /* The watch dip (zkr__session_update, zkr__watch_unlive): a watch of the
   * application is on a member session that is not connected, or is being
   * set again elsewhere.  Its events may be lost meanwhile (a server fires
   * into a lost connection; SetWatches re-adds an exists watch on a
   * missing node silently), so the state is CONNECTING, as a stock
   * session's is while its one connection is down. */
  _Atomic int wdip;
  /* A watch dip of one turn (zkr__watch_armed): a pair's exists watch on
   * a missing node was set again on another member, which found the node
   * missing too, while the member it was set on could not take the read.
   * A creation and deletion between the two was missed, as stock misses
   * it across SetWatches, and stock says so with CONNECTING first.  The
   * next zkr__session_update reports CONNECTING, the tick after it
   * CONNECTED. */
  _Atomic int wblip;

  /* Leader knowledge (zkr__monitor_*). */
  _Atomic int leader; /* member index, -1 unknown */
  /* Monotonic reads across leader changes (DESIGN.md section 3, rule 5):
   * the highest zxid in any reply the handle had (zkr__completion_*), and the
   * highest epoch a srvr answer showed for a member with a working session
   * (zkr__poller_*).  A member whose srvr epoch is below either serves no
   * read (zkr__policy_*). */
  _Atomic int64_t hwm_zxid;
  _Atomic uint32_t srvr_epoch;
  _Atomic uint64_t leader_changes;
  int last_leader; /* last known leader, -1 none yet (monitor) */

  /* Write gate (zkr__router_*): one write session at a time, FIFO.  The write
   * session is the leader's for most writes and the owner's for
   * session-scoped ones: a switch between them is a change of session. */
  pthread_mutex_t gate_mu;
  int gate_cur;        /* member slot of the write session, -1 none */
  int gate_inflight;   /* gated operations in flight on gate_cur */
  zkr__queue_t gate_q; /* parked operations, in issue order */
  uint64_t gate_parked_since_ns;
  /* The fence (zkr__router_*; DESIGN.md section 3, rule 6): the zhandle on
   * which a write's outcome became unknown, NULL none.  No gated
   * operation goes to any other session until that one reconnected,
   * expired, was moved, or the session timeout passed since (fence_ns).
   * Under gate_mu. */
  /* Consistency `session`'s FIFO order (zkr__router_*): reads sent and not
   * completed, writes accepted and not completed. */
  _Atomic int reads_out, writes_out;
  zhandle_t *fence_zh;
  int fence_slot;
  clientid_t fence_cid; /* its session, when known (client_id 0: not) */
  uint64_t fence_ns;
  /* A zhandle that resumes a fenced carrier's session on another server
   * to fence it (zkr__rescue_*; the monitor's), NULL none. */
  zhandle_t *mover;
  uint64_t mover_ns;
  int mover_slot;        /* the carrier whose session it resumed ... */
  zhandle_t *mover_from; /* ... and that carrier's zhandle then */
  /* The longest session timeout a server negotiated for a member session
   * (zkr__member_*), for the fence's bound. */
  _Atomic int negotiated_ms;

  /* Reads (zkr__policy_*). */
  _Atomic unsigned rr;
  _Atomic int session_reader;   /* consistency session: the member reads
                                   stick to, -1 none yet */
  _Atomic uint64_t write_epoch; /* completions that showed no zxid (a write
                                   without a Stat or that failed, a read
                                   that found no node): a session-mode read
                                   syncs when its member last synced before
                                   one (zkr__dispatch_*) */
  _Atomic int sticky;
  _Atomic uint64_t hedge_draws; /* counter behind the hedge target draw */
  _Atomic unsigned leader_rr;   /* hybrid's leader_read_weight counter */

  /* Read selector (zkr__selector_*): sel_on says whether to look at all;
   * sel_lock (read-held while the selector runs) lets a new selector
   * replace the old one only once no call of the old one is running. */
  _Atomic int sel_on;
  pthread_rwlock_t sel_lock;
  zkr_read_selector_fn sel_fn;
  void *sel_ctx;
  _Atomic uint64_t sel_picks, sel_fallbacks;

  /* In-flight write paths (zkr__inflight_*). */
  struct zkr__inflight *inflight;

  /* Auth records (zkr__auth_*).  ans_mu guards the answers queued by
   * libzookeeper's threads for the monitor to apply. */
  pthread_mutex_t auth_mu;
  struct zkr__auth *auths;
  pthread_mutex_t ans_mu;
  struct auth_reply *auth_answers;

  /* The delivery thread (zkr__deliver_*): runs every application callback. */
  struct zkr__deliver *dl;

  /* The application's operations in issue order (zkr__barrier_*). */
  pthread_mutex_t order_mu;
  zkr__queue_t ord_q;
  /* Issue numbers (1, 2, ...; under order_mu): the last given, and the
   * oldest operation still listed (ord_issued + 1 when none is) - what
   * the application has not seen complete yet is at or after ord_head. */
  uint64_t ord_issued;
  _Atomic uint64_t ord_head;
  /* The issue number of the last removal call whose completion was
   * queued in session mode's issue order (complete_call in
   * watch_remove.c, under watch_mu): the application sees every removal
   * up to it complete before any event queued after it. */
  uint64_t rm_queued_seq;

  /* Operations handed to ZooKeeper, not yet completed (zkr__dispatch_*). */
  pthread_mutex_t out_mu;
  zkr__queue_t out_q;

  /* Watch registry (zkr__watch_*). */
  pthread_mutex_t watch_mu;
  zkr__queue_t watch_q;      /* the records, newest first (zkr__watch_first) */
  zkr__queue_t *watch_paths; /* the same records by path: watch_nbuckets buckets
                                  (a power of two), each newest first
                                  (zkr__watch_path_first) */
  zkr__queue_t *watch_by_id; /* ... and by id, as many buckets
                                  (zkr__watch_by_id_locked) */
  size_t watch_nbuckets, watch_count;
  struct zkr__rm_req *rm_list; /* removals sent, not answered (zkr__watch_remove_*) */
  void *rm_wait;               /* removal calls answered whose completion waits for
                                  an event of a record they remove (its turn):
                                  zkr__watch_remove_events_out, under watch_mu */
  _Atomic int rm_waiting;      /* ... how many: read without the lock */
  zkr__queue_t rearm_q;        /* re-arms sent, not answered (zkr__watch_rearm_*) */
  _Atomic uint64_t read_seqs;  /* application reads issued (zkr__op_t read_seq) */
  _Atomic int watch_lost;      /* records waiting for a re-arm retry */
  uint64_t watch_retry_ns;     /* monitor: next retry of lost records */
  _Atomic unsigned rearm_rr;
  _Atomic uint64_t watch_rearms, watch_missed_events, watch_rearm_retries;
  uint64_t watch_seq; /* the last seq given to a record (zkr__watch_*) */
  /* Reads whose reply shows a change a watch of the handle has not fired
   * for yet: held until it did (zkr__watch_*), as a stock client sees a watch
   * event before the new data.  Under watch_mu. */
  zkr__queue_t wf_held;
  _Atomic int wf_count;
  uint64_t watch_ids; /* the last id given to a record (zkr__watch_*) */
  /* The order in which records were armed and their own events came, on
   * whichever zhandle (zkr__watch_*: armed_tick, came_tick).  Under
   * watch_mu. */
  uint64_t watch_ticks;
  /* Records with an outlive_seq (zkr__watch_*): a synced read's answer
   * looks for them only when there are some.  Changed under watch_mu,
   * read without it first. */
  _Atomic int watch_outlive;
  /* The drop-in interposer's name for the program's global pair
   * (zkr__preload_*): maps (fn, ctx) to the pair the library knows as the
   * global one; NULL none. */
  void (*watch_alias)(void *arg, watcher_fn *fn, void **ctx);
  void *watch_alias_arg;

  /* Monitor (zkr__monitor_*), whose turns the process's ticker runs
   * (zkr__ticker_*, the hedger's too): the handle's entry there. */
  zkr__ticker_entry_t tick;
  pthread_mutex_t mon_mu;
  _Atomic int mon_stop;
  int mon_kick;
  uint64_t mon_kick_ns; /* the first kick not yet taken (under mon_mu) */
  /* The monitor's own (zkr__monitor_*): next srvr poll, settled polls in a
   * row, app_ops at the last poll; a stepped runtime's next turn. */
  uint64_t mon_next_poll;
  int mon_settled;
  uint64_t mon_last_ops;
  uint64_t mon_wake;
  /* Idle polling (zkr__monitor_*): operations submitted (zkr__api_check_* counts
   * them), and whether the monitor polls at the idle rate now (the next
   * operation then kicks it). */
  _Atomic uint64_t app_ops;
  _Atomic int poll_idle;

  /* Idle parking (zkr__carriers_*, the monitor's only): app_ops when the
   * monitor last saw it change, and when (0: not yet). */
  uint64_t carriers_ops;
  uint64_t carriers_active_ns;

  int reg_slot; /* its slot in the registry (zkr__registry_*), -1 none */

  /* Hedged reads (zkr__hedger_*); NULL when hedging is off. */
  struct zkr__hedger *hedger;
  /* Membership that follows /zookeeper/config (zkr__membership_*). */
  struct zkr__membership *ms;

  /* Operations: latency histograms, one pair per member slot (zkr__latency_*);
   * the log lines' storm limit (zkr__log_*); the handle's number in the
   * process and whether it is listed on the metrics endpoint
   * (zkr__metrics_*). */
  struct zkr__member_latency *latency;
  zkr__log_t log;
  unsigned serial;
  _Atomic int metrics_on;
};

/* Registers the hook zkr_close calls for every handle: phase 0 when the
 * close starts (the handle is still whole), phase 1 after its last
 * callback, just before it is freed.  One hook per process, registered
 * before any handle exists (a library constructor): it is read without a
 * lock.  A library constructor's thread.  @locks none. */
void zkr__handle_set_close_hook(void (*hook)(struct zkr *z, int phase));

/* How what is still pending for the application completes once the
 * session is over: ZCLOSING (the handle closes), ZSESSIONEXPIRED (the
 * owner expired), ZAUTHFAILED (a server refused the credentials), 0 while
 * it goes on.  Any thread.  @locks none. */
static inline int zkr__handle_ended_rc(const struct zkr *self) {
  return self->closing       ? ZCLOSING
         : self->auth_first  ? ZAUTHFAILED
         : self->expired     ? ZSESSIONEXPIRED
         : self->auth_failed ? ZAUTHFAILED
                             : 0;
}

#endif
