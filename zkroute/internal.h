/* Internal structures shared by the library's parts: the handle, the member
 * sessions, an operation in flight, the write gate and the in-flight path
 * set.  Each part's functions are declared here, grouped by the file that
 * owns them.  Nothing here is exported (the build uses
 * -fvisibility=hidden; only ZKR_API functions are visible). */
#ifndef ZKR_INTERNAL_H
#define ZKR_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include "zkroute.h"
#include "hosts.h"
#include "health.h"
#include "hedge.h"
#include "zkapi.h"

/* ---- time (clock.c is too small for a file: inline) ---- */
#include <time.h>
static inline uint64_t zkr__now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* ---- random numbers: splitmix64, a bijective 64-bit mix of a counter
 * or seed (policy.c's draws, the hedge target, selector.c's p2c) ---- */
static inline uint64_t zkr__mix64(uint64_t x) {
  x += 0x9E3779B97F4A7C15ULL;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
  return x ^ (x >> 31);
}

/* ---- one member: a ZooKeeper session pinned to one server ---- */
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

  _Atomic int state;        /* ZOO_*_STATE of the session */
  _Atomic int auth_pending; /* add_auth replies still awaited */
  _Atomic int joined;       /* admitted to the pools (auth done) */
  _Atomic int expired;      /* session expired; monitor re-creates it */
  _Atomic int role;         /* zkr_role_t from srvr */
  _Atomic int64_t zxid;     /* from srvr, -1 unknown */
  _Atomic int watches;      /* watch records armed on its session */
  _Atomic int hosted_on;    /* member whose server the session is on: its
                               own; for the owner slot, where the owner
                               session lives now */
  _Atomic uint64_t down_since_ns; /* not connected since, 0 when connected */
  int srvr_fail_streak;     /* consecutive failed srvr polls (monitor) */
  _Atomic uint64_t srvr_fail_since_ns; /* first failed poll of the streak, 0 none */
  _Atomic int suspect;      /* silent to srvr while others answer */

  _Atomic uint64_t reads, writes, syncs, errors, srvr_polls, srvr_failures;
  _Atomic uint64_t rescues;  /* owner re-attached from here (member), or
                                in place (owner slot) */
  _Atomic uint64_t recreated; /* carrier sessions replaced by new ones */
  _Atomic int reopen;       /* its carrier could not be opened again: the
                               monitor retries (rescue.c) */
  _Atomic int parked;       /* no session, by the read_members cap
                               (carriers.c) */
  uint64_t dip_ns;          /* last operation its connection loss failed
                               while the state was dipped (session.c,
                               under state_mu) */
  int dip_pending;          /* ... counted and not yet handed on */
  _Atomic int opening;      /* zkr__member_open between zookeeper_init and
                               storing the zhandle */

  /* Sync coalescing (dispatch.c), under co_mu: the session co_zh has a
   * sync in flight (co_inflight); reads that came meanwhile wait in
   * co_head..co_tail for the next one. */
  pthread_mutex_t co_mu;
  zhandle_t *co_zh;
  int co_inflight;
  struct zkr__op *co_head, *co_tail;
  _Atomic uint64_t coalesced; /* reads that shared a sync sent for others */
  /* Consistency `session` (dispatch.c): the write epoch and zhandle of
   * the last sync sent on this member's session. */
  _Atomic uint64_t synced_epoch;
  zhandle_t *_Atomic synced_zh;
  _Atomic uint64_t hedges;  /* hedge requests sent to it (hedge_apply.c) */
  _Atomic int outstanding;  /* operations sent and not completed */
  _Atomic uint64_t progress_ns; /* last completion, or start of being busy */
  uint64_t nudged_ns;       /* last nudge (monitor) */
  _Atomic uint64_t nudges;

  /* Membership (membership.c). */
  _Atomic int retired;      /* left /zookeeper/config: no new operation;
                               its session closes once idle */
  _Atomic int cfg_observer; /* ":observer" in /zookeeper/config */
  _Atomic int64_t server_id; /* N of server.N, -1 unknown */

  pthread_mutex_t health_mu; /* guards health */
  zkr__health_t health;

  char zone[32];            /* zone label (selector.c), "" none */
  _Atomic uint64_t selected; /* reads the read selector placed here */
} zkr__member_t;

/* ---- an operation, from the API call to its completion ---- */
typedef enum {
  ZKR__OP_CREATE,
  ZKR__OP_DELETE,
  ZKR__OP_SET,
  ZKR__OP_SET_ACL,
  ZKR__OP_MULTI,
  ZKR__OP_EXISTS,
  ZKR__OP_GET,
  ZKR__OP_GET_CHILDREN,
  ZKR__OP_GET_CHILDREN2,
  ZKR__OP_GET_ACL,
  ZKR__OP_SYNC,
  ZKR__OP_RECONFIG
} zkr__op_type_t;

typedef struct zkr__watch zkr__watch_t;

/* The shape of an operation's reply, which fixes its completion type. */
typedef enum {
  ZKR__CB_VOID,         /* void_completion_t */
  ZKR__CB_STAT,         /* stat_completion_t */
  ZKR__CB_DATA,         /* data_completion_t */
  ZKR__CB_STRINGS,      /* strings_completion_t */
  ZKR__CB_STRINGS_STAT, /* strings_stat_completion_t */
  ZKR__CB_STRING,       /* string_completion_t */
  ZKR__CB_STRING_STAT,  /* string_stat_completion_t */
  ZKR__CB_ACL           /* acl_completion_t */
} zkr__cb_shape_t;

/* One reply as ZooKeeper gave it, borrowed for the completion's duration:
 * value is the data (DATA) or the path (STRING, STRING_STAT). */
typedef struct {
  int rc;
  const char *value;
  int value_len;
  const struct Stat *stat;
  const struct String_vector *strings;
  const struct ACL_vector *acl;
} zkr__result_t;

typedef union {
  void_completion_t v;
  stat_completion_t stat;
  data_completion_t data;
  strings_completion_t strings;
  strings_stat_completion_t strings_stat;
  string_completion_t string;
  string_stat_completion_t string_stat;
  acl_completion_t acl;
} zkr__cb_t;

typedef struct zkr__op {
  struct zkr *z;
  zkr__op_type_t type;
  int is_write;   /* goes through the write gate as a write */
  int owner_op;   /* session-scoped: an ephemeral create, or a multi holding
                     one; runs on the owner session (DESIGN.md section 4) */
  int ordered;    /* a read that must follow an in-flight write */
  int gated;      /* goes through the write gate (FIFO on the write session) */
  int parked;     /* waited in the gate's queue */
  int resync;     /* an ordered read sent on another session than the writes
                     it follows: needs a sync before it (router.c) */
  int err;        /* why a parked operation could not be sent */
  int member;     /* member slot it was dispatched to, -1 not yet */
  zhandle_t *zh;  /* the member's handle it was sent on */
  uint64_t start_ns;

  /* Arguments, copied so a deferred operation owns them. */
  char *path;
  char *value;
  int valuelen;
  struct ACL_vector acl;
  int has_acl;
  int mode;
  int64_t ttl;
  int version;
  int create2;    /* create2 / get_children2 flavour */
  int multi_count;
  zoo_op_t *multi_ops;          /* deep copy */
  zoo_op_result_t *multi_results; /* the caller's, filled by ZooKeeper */
  char *joining, *leaving, *members; /* reconfig */
  zkr__watch_t *watch;          /* NULL: no watch */
  int watch_reused;             /* watch is an armed record set again */
  int watch_unbound;            /* ... whose session was replaced before
                                   the read was sent: sent without it */
  int pin;                      /* member it must go to, -1 any */

  /* Paths registered in the in-flight set by this write. */
  char **inflight;
  int n_inflight;

  zkr__cb_shape_t shape;
  zkr__cb_t cb;
  const void *data;
  /* The completion is zkroute's own blocking-call waiter (waiter.c): it
   * runs on the thread that got the reply, never on the delivery thread,
   * so a blocking call made from a callback completes (stock
   * libzookeeper_mt finishes synchronous calls on its I/O thread too). */
  int direct;

  int probe;      /* a health probe of an ejected member, not the app's */
  struct zkr__op *co_next; /* its member's coalescing queue (dispatch.c) */
  int co_waiting;          /* ... waits in it for the next sync */

  /* The application's order (barrier.c): every operation the application
   * issued, in issue order, until its completion was handed on.  A
   * barrier (zkr_async) is handed on only once every operation before it
   * was. */
  int app;        /* listed */
  int barrier;    /* zkr_async */
  int b_ready;    /* barrier: its own reply came (b_rc, b_path) */
  int b_rc;
  char *b_path;
  struct zkr__op *ord_prev, *ord_next;

  /* Hedged reads (hedge_apply.c).  A hedgeable read is the primary: it carries
   * the application's completion, which runs once, with the first reply of
   * either request.  Its hedge is an op of its own (is_hedge, primary set)
   * sent to another member, with no completion of its own.  The h_ fields
   * of the primary are guarded by the hedger's mutex once it is sent. */
  int hedge_ok;   /* primary: may be hedged (router.c) */
  int h_armed;    /* primary sent with hedging armed (set before the send,
                     never changed after it) */
  int is_hedge;   /* the second request of primary */
  struct zkr__op *primary;
  int h_refs;     /* primary's reply, its queue entry, its hedge */
  int h_attempts; /* requests sent whose completion has not run */
  int h_delivered; /* the application's completion ran or is running */
  int h_queued;   /* waits in the hedger's queue */
  int h_deferred_rc; /* an error reply held back while the other was pending */
  uint64_t hedge_at_ns;
  struct zkr__op *hq_prev, *hq_next;

  struct zkr__op *next; /* write gate queue */
  /* Outstanding list (dispatch.c): every operation handed to ZooKeeper
   * until its completion runs, so close can complete those that
   * zookeeper_close drops (ZOOKEEPER-2894/3868). */
  struct zkr__op *out_prev, *out_next;
  int outstanding;
} zkr__op_t;

/* ---- the handle ---- */
struct zkr {
  zkr_options_t opts;
  zkr__health_cfg_t hcfg;
  zkr__hostlist_t hosts;
  /* Members live in members[0..n); n only grows (membership.c adds a
   * member by filling slot n, then publishing n + 1), up to cap.
   * members[cap] is the owner slot (see owner below).  No slot ever
   * moves, so an index stays valid for the life of the handle. */
  _Atomic size_t n;
  size_t cap;
  zkr__member_t *members;

  int recv_timeout;
  int rescue_ms;   /* resolved: option or a third of recv_timeout */
  int flags;
  uint64_t init_ns;

  pthread_mutex_t ctx_mu; /* guards watcher and context */
  watcher_fn watcher;
  void *context;

  /* The virtual session (session.c; DESIGN.md section 4).  The owner
   * session is the application's session: its slot is a member's while it
   * lives on that member's server (it carries that member's reads and
   * writes too), and the owner slot members[cap] once a rescue re-attached
   * it elsewhere.  -1 until chosen.  owner_id is its id, copied: what
   * zkr_client_id returns for the life of the handle. */
  pthread_mutex_t state_mu;
  _Atomic int owner;
  int owner_told;          /* monitor: what waited for the owner was told */
  clientid_t owner_id;
  int resume;              /* a clientid was passed: the owner resumes it */
  _Atomic int polled;      /* the monitor's first srvr poll is done */
  _Atomic int vstate;      /* state last reported to the application */
  _Atomic int expired;     /* the owner session expired */
  _Atomic int auth_failed;
  _Atomic int closing;
  _Atomic int carriers_closed; /* after expiry: every session closed */
  /* Slots whose connection loss failed an application operation while
   * the state was CONNECTED: the state dips to CONNECTING until their
   * failed operations are all completed (as a stock session reports
   * CONNECTING before its ZCONNECTIONLOSS completions). */
  _Atomic uint64_t dip;

  /* Leader knowledge (monitor.c). */
  _Atomic int leader;      /* member index, -1 unknown */
  _Atomic uint64_t leader_changes;
  int last_leader;         /* last known leader, -1 none yet (monitor) */

  /* Write gate (router.c): one write session at a time, FIFO.  The write
   * session is the leader's for most writes and the owner's for
   * session-scoped ones: a switch between them is a change of session. */
  pthread_mutex_t gate_mu;
  int gate_cur;            /* member slot of the write session, -1 none */
  int gate_inflight;       /* gated operations in flight on gate_cur */
  zkr__op_t *gate_head, *gate_tail;
  uint64_t gate_parked_since_ns;

  /* Reads (policy.c). */
  _Atomic unsigned rr;
  _Atomic int session_reader;   /* consistency session: the member reads
                                   stick to, -1 none yet */
  _Atomic int session_last;     /* ... the member of the last read sent */
  _Atomic uint64_t write_epoch; /* writes of this handle completed (any
                                   outcome): a session-mode read syncs when
                                   its member last synced before one */
  _Atomic int sticky;
  _Atomic uint64_t hedge_draws; /* counter behind the hedge target draw */
  _Atomic unsigned leader_rr; /* hybrid's leader_read_weight counter */

  /* Read selector (selector.c): sel_on says whether to look at all;
   * sel_lock (read-held while the selector runs) lets a new selector
   * replace the old one only once no call of the old one is running. */
  _Atomic int sel_on;
  pthread_rwlock_t sel_lock;
  zkr_read_selector_fn sel_fn;
  void *sel_ctx;
  _Atomic uint64_t sel_picks, sel_fallbacks;

  /* In-flight write paths (inflight.c). */
  struct zkr__inflight *inflight;

  /* Auth records (auth.c). */
  pthread_mutex_t auth_mu;
  struct zkr__auth *auths;

  /* The delivery thread (deliver.c): runs every application callback. */
  struct zkr__deliver *dl;

  /* The application's operations in issue order (barrier.c). */
  pthread_mutex_t order_mu;
  zkr__op_t *ord_head, *ord_tail;

  /* Operations handed to ZooKeeper, not yet completed (dispatch.c). */
  pthread_mutex_t out_mu;
  zkr__op_t *out_list;

  /* Watch registry (watch.c). */
  pthread_mutex_t watch_mu;
  zkr__watch_t *watch_list;
  struct zkr__rm_req *rm_list; /* removals sent, not answered (watch_remove.c) */
  _Atomic int watch_lost;  /* records waiting for a re-arm retry */
  uint64_t watch_retry_ns; /* monitor: next retry of lost records */
  _Atomic unsigned rearm_rr;
  _Atomic uint64_t watch_rearms, watch_missed_events, watch_rearm_retries;

  /* Monitor thread (monitor.c). */
  pthread_t monitor;
  int monitor_started;
  pthread_mutex_t mon_mu;
  pthread_cond_t mon_cv;
  _Atomic int mon_stop;
  int mon_kick;

  int reg_slot;            /* its slot in the registry (registry.c), -1 none */

  /* Hedged reads (hedge_apply.c); NULL when hedging is off. */
  struct zkr__hedger *hedger;
  /* Membership that follows /zookeeper/config (membership.c). */
  struct zkr__membership *ms;
};

/* ---- member.c: one member session ---- */
int zkr__member_open(zkr__member_t *m, int on, const clientid_t *cid);
#define ZKR__KEEP_ASSOCIATING 2 /* only_if_down: an associating zhandle stays too */
zhandle_t *zkr__member_detach(zkr__member_t *m, int only_if_down);
int zkr__member_has_zh(zkr__member_t *m);
void zkr__member_close(zkr__member_t *m);
int zkr__member_holds_session(const zkr__member_t *m);
int zkr__member_usable(const zkr__member_t *m);
int zkr__member_connected(const zkr__member_t *m);
int zkr__member_readonly(const zkr__member_t *m);
void zkr__member_maybe_join(zkr__member_t *m);
void zkr__member_watcher(zhandle_t *zh, int type, int state, const char *path,
                         void *ctx);
void zkr__member_sample(zkr__member_t *m, uint64_t now_ns, double ms);
int zkr__member_in_pool(zkr__member_t *m);
int zkr__member_observer(const zkr__member_t *m);
int zkr__member_setup(struct zkr *z, size_t i, const zkr__host_t *host);
zkr__member_t *zkr__owner_slot(struct zkr *z);

/* ---- health_apply.c: the health model applied ---- */
void zkr__health_tick(struct zkr *z, uint64_t now_ns);
int zkr__policy_read_candidate(struct zkr *z, const zkr__member_t *m);
void zkr__pool_probe_result(zkr__member_t *m, uint64_t now, double ms, int ok);
void zkr__health_cfg_from_options(zkr__health_cfg_t *c, const zkr_options_t *o);

/* ---- carriers.c: the read_members cap ---- */
void zkr__carriers_tick(struct zkr *z, uint64_t now_ns);

/* ---- rescue.c: the owner re-attached, carriers re-created ---- */
void zkr__rescue_tick(struct zkr *z, uint64_t now_ns);
int zkr__carrier_replace(zkr__member_t *m, int reopen);
void zkr__sessions_close_expired(struct zkr *z);

/* ---- membership.c ---- */
int zkr__membership_new(struct zkr *z);
void zkr__membership_free(struct zkr *z);
void zkr__membership_tick(struct zkr *z);
void zkr__membership_stats(struct zkr *z, zkr_stats_t *s);

/* ---- session.c: the virtual session ---- */
void zkr__session_update(struct zkr *z);
void zkr__session_tick(struct zkr *z);
int zkr__session_owner(struct zkr *z);
int zkr__session_is_owner(struct zkr *z, const zkr__member_t *m);
int zkr__session_dip(struct zkr *z, int slot);
void zkr__session_dip_check(struct zkr *z, int slot, int counted);

/* ---- auth.c ---- */
void zkr__auth_replay(zkr__member_t *m);
void zkr__auth_owner_known(struct zkr *z);
void zkr__auth_free_all(struct zkr *z);

/* ---- deliver.c: the handle's callback thread ---- */
int zkr__deliver_start(struct zkr *z);
void zkr__deliver_stop(struct zkr *z);
void zkr__deliver_free(struct zkr *z);
void zkr__deliver_result(struct zkr *z, zkr__cb_shape_t shape, zkr__cb_t cb,
                         const void *data, const zkr__result_t *r);
void zkr__deliver_watch(struct zkr *z, watcher_fn fn, void *ctx, int type,
                        int state, const char *path);
void zkr__deliver_session(struct zkr *z, int state);
/* The handle whose delivery thread this is, or NULL. */
extern _Thread_local struct zkr *zkr__delivering;

/* ---- barrier.c: issue order, zkr_async as a barrier ---- */
void zkr__order_add(zkr__op_t *op);
void zkr__order_cancel(zkr__op_t *op);
void zkr__order_done(zkr__op_t *op);
void zkr__order_barrier(zkr__op_t *op, const zkr__result_t *r);

/* ---- monitor.c ---- */
int zkr__monitor_start(struct zkr *z);
void zkr__monitor_stop(struct zkr *z);
void zkr__monitor_kick(struct zkr *z);

/* ---- srvr_apply.c: the srvr poll of every member, the leader ---- */
void zkr__srvr_poll_members(struct zkr *z);

/* ---- policy.c ---- */
int zkr__policy_read_member(struct zkr *z);
int zkr__policy_write_member(struct zkr *z);
int zkr__policy_hedge_member(struct zkr *z, int exclude);
int zkr__policy_any_member(struct zkr *z, int exclude);
int zkr__policy_readonly_member(struct zkr *z);
int zkr__policy_readonly_any(struct zkr *z);

/* ---- selector.c ---- */
int zkr__selector_init(struct zkr *z);    /* zones option -> members */
int zkr__selector_pick(struct zkr *z);    /* member, or -1: default policy */
extern _Thread_local int zkr__in_selector;

/* ---- router.c ---- */
int zkr__route(zkr__op_t *op);
void zkr__gate_done(struct zkr *z);
void zkr__gate_flush(struct zkr *z);
void zkr__gate_adopt_leader(struct zkr *z);
int zkr__gate_current(struct zkr *z);
void zkr__gate_expire(struct zkr *z, uint64_t older_than_ns);

/* ---- op.c: the operation object ---- */
zkr__op_t *zkr__op_new(struct zkr *z, zkr__op_type_t type, const char *path);
void zkr__op_free(zkr__op_t *op);
int zkr__op_copy_acl(zkr__op_t *op, const struct ACL_vector *acl);
int zkr__op_copy_multi(zkr__op_t *op, int count, const zoo_op_t *ops);
int zkr__acl_copy(struct ACL_vector *dst, const struct ACL_vector *src);
void zkr__acl_free(struct ACL_vector *v);
int zkr__strings_copy(struct String_vector *dst, const struct String_vector *src);
int zkr__mode_ephemeral(int mode);

/* ---- dispatch.c: handing an operation to a member session ---- */
int zkr__op_dispatch(zkr__op_t *op, zkr__member_t *m);
int zkr__probe(zkr__member_t *m);
void zkr__out_remove(zkr__op_t *op);
void zkr__op_complete_abandoned(struct zkr *z);
void zkr__op_complete_dropped(struct zkr *z, zhandle_t *zh);

/* ---- completion.c: replies ---- */
void zkr__op_complete_error(zkr__op_t *op, int rc);
void zkr__op_call_user_error(zkr__op_t *op, int rc);
int zkr__op_server_answered(int rc);
void zkr__op_done_void(int rc, const void *data);
void zkr__op_done_stat(int rc, const struct Stat *stat, const void *data);
void zkr__op_done_data(int rc, const char *value, int value_len,
                       const struct Stat *stat, const void *data);
void zkr__op_done_strings(int rc, const struct String_vector *strings,
                          const struct Stat *stat, const void *data);
void zkr__op_done_strings_stat(int rc, const struct String_vector *strings,
                               const struct Stat *stat, const void *data);
void zkr__op_done_string(int rc, const char *value, const void *data);
void zkr__op_done_string_stat(int rc, const char *value,
                              const struct Stat *stat, const void *data);
void zkr__op_done_acl(int rc, struct ACL_vector *acl, struct Stat *stat,
                      const void *data);
void zkr__op_hand_on(zkr__op_t *op, const zkr__result_t *r);

/* ---- hedge_apply.c ---- */
int zkr__hedger_new(struct zkr *z);   /* ZOK, ZKR_ENOMEM or ZKR_ETHREAD */
void zkr__hedger_stop(struct zkr *z); /* joins its thread; queue stays */
void zkr__hedger_free(struct zkr *z);
int zkr__hedger_eligible(const zkr__op_t *op);
void zkr__hedger_sent(zkr__op_t *op);
void zkr__hedger_sample(struct zkr *z, int member, double ms);
zkr__op_t *zkr__hedger_claim(zkr__op_t *op, int rc);
void zkr__hedger_release(zkr__op_t *op);
void zkr__hedger_stats(struct zkr *z, zkr_stats_t *s);

/* ---- inflight.c ---- */
struct zkr__inflight *zkr__inflight_new(void);
void zkr__inflight_free(struct zkr__inflight *s);
int zkr__inflight_add(struct zkr__inflight *s, const char *path);
void zkr__inflight_remove(struct zkr__inflight *s, const char *path);
int zkr__inflight_contains(struct zkr__inflight *s, const char *path);

/* ---- watch.c ---- */
enum { ZKR__WATCH_DATA, ZKR__WATCH_EXIST, ZKR__WATCH_CHILD };
enum {
  ZKR__W_PENDING,   /* the read that sets it is in flight */
  ZKR__W_ARMED,     /* live on member's session zh */
  ZKR__W_REARMING,  /* being set again on another session (watch_rearm.c) */
  ZKR__W_LOST,      /* its session is gone and no re-arm got through yet:
                       the monitor retries until one does */
  ZKR__W_CONSUMED,  /* event delivered by a re-arm; the server's is dropped */
  ZKR__W_FIRED,     /* over (event delivered) while reads that set it
                       again are in flight: kept for them */
  ZKR__W_REMOVED    /* removed by the application (watch_remove.c): never
                       called again; freed a while later, once no event
                       ZooKeeper may have collected before can still
                       reach it */
};
struct zkr__watch {
  struct zkr *z;
  watcher_fn fn;    /* NULL: the global watcher */
  void *ctx;
  int kind;         /* ZKR__WATCH_* */
  char *path;
  int member;       /* member slot whose session it is armed on */
  zhandle_t *zh;    /* ... the session's zhandle: events from any other
                       zhandle are stale and ignored */
  int state;        /* ZKR__W_*, under watch_mu */
  int reuses;       /* reads in flight that set it again, under watch_mu */
  int existed;      /* the node as the arming read saw it */
  int64_t mzxid, pzxid;
  int removing;     /* a removal is on its way (watch_remove.c) */
  uint64_t removed_ns;
  struct zkr__watch *prev, *next;
};
zkr__watch_t *zkr__watch_new(struct zkr *z, watcher_fn fn, void *ctx, int kind,
                             const char *path);
void zkr__watch_armed(zkr__watch_t *w, int member, zhandle_t *zh,
                      const struct Stat *stat);
void zkr__watch_discard(zkr__watch_t *w);
zkr__watch_t *zkr__watch_find(struct zkr *z, int kind, const char *path,
                              watcher_fn fn, void *ctx, int *member);
int zkr__watch_reuse_bound(zkr__watch_t *w, zhandle_t *zh);
void zkr__watch_reuse_done(zkr__watch_t *w, int armed, int member,
                           zhandle_t *zh, const struct Stat *stat);
void zkr__watch_trampoline(zhandle_t *zh, int type, int state,
                           const char *path, void *ctx);
void zkr__watch_free_all(struct zkr *z);
void zkr__watch_stats(struct zkr *z, zkr_stats_t *s);
int zkr__watch_session_watchers(struct zkr *z, watcher_fn *fns, void **ctxs,
                                int cap);
/* watch_rearm.c */
void zkr__watch_rearm_from(struct zkr *z, int slot, zhandle_t *old);
void zkr__watch_retry_lost(struct zkr *z, uint64_t now_ns);
/* watch_remove.c */
int zkr__remove_watches(struct zkr *z, const char *path, ZooWatcherType wtype,
                        int all, watcher_fn watcher, void *ctx, int local,
                        void_completion_t cb, const void *data, int direct);
void zkr__watch_remove_dropped(struct zkr *z, zhandle_t *zh);
void zkr__watch_removed_gc(struct zkr *z, uint64_t now_ns);

/* ---- env.c (ZKROUTE_STATS records; the interposer's destroy hook) ---- */
void zkr__env_close_hook(struct zkr *z, int phase);

/* ---- registry.c: live handles ---- */
int zkr__registry_add(struct zkr *z);      /* slot, or -1 when full */
void zkr__registry_remove(int slot, struct zkr *z); /* waits for callers */
/* Enters a public call: the slot (>= 0), or ZBADARGUMENTS for NULL and
 * ZKR_ECLOSED for a handle that is not live.  zkr__unhold(slot) leaves. */
int zkr__hold(struct zkr *z);
void zkr__unhold(int slot);
/* Returns call's result, evaluated inside a hold of z: z stays allocated
 * meanwhile, and a NULL or closed handle gets its code untouched. */
#define ZKR__HELD(z, call)          \
  do {                              \
    int slot_ = zkr__hold(z);       \
    if (slot_ < 0) return slot_;    \
    int rc_ = (call);               \
    zkr__unhold(slot_);             \
    return rc_;                     \
  } while (0)

/* ---- validation (api.c) ---- */
int zkr__check_path(const char *path);
int zkr__options_resolve(const zkr_options_t *in, zkr_options_t *out);
/* Exposed for the blocking calls (waiter.c): each returns ZOK (the
 * completion will run once) or the error (it will not). */
int zkr__create(struct zkr *z, const char *path, const char *value,
                int valuelen, const struct ACL_vector *acl, int mode,
                int64_t ttl, int create2, void *cb, const void *data,
                int direct);
int zkr__read(struct zkr *z, zkr__op_type_t type, const char *path, int watch,
              watcher_fn watcher, void *wctx, void *cb, const void *data,
              int direct);
int zkr__delete(struct zkr *z, const char *path, int version,
                void_completion_t cb, const void *data, int direct);
int zkr__set(struct zkr *z, const char *path, const char *buffer, int buflen,
             int version, stat_completion_t cb, const void *data, int direct);
int zkr__set_acl(struct zkr *z, const char *path, int version,
                 struct ACL_vector *acl, void_completion_t cb,
                 const void *data, int direct);
int zkr__multi(struct zkr *z, int count, const zoo_op_t *ops,
               zoo_op_result_t *results, void_completion_t cb,
               const void *data, int direct);
int zkr__reconfig(struct zkr *z, const char *joining, const char *leaving,
                  const char *members, int64_t version, data_completion_t cb,
                  const void *data, int direct);

/* ---- options.c: the zones option's syntax ---- */
/* Splits the next entry of a zones string at *s ("addr=label" or "label",
 * comma-separated): copies the address part ("" in the positional form)
 * and the label, advances *s.  Returns 1 for an entry, 0 at the end, -1
 * for a syntax error. */
int zkr__zones_next(const char **s, char *addr, size_t addr_len, char *label,
                    size_t label_len);

#endif
