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
  int keeper; /* a keeper slot: holds a session that moved out of a member
                 (see zkr__member_keep); never routed to */
  zkr__host_t host;
  char address[ZKR__HOST_NAME_MAX + 16]; /* "host:port" for display */
  char *connect;                         /* "host:port/chroot" */

  /* zh is replaced only by the monitor (rescue, re-creation) and cleared by
   * close, both under the write lock; dispatch holds the read lock while it
   * hands a request to zh, so a request never reaches a freed handle. */
  pthread_rwlock_t zh_lock;
  zhandle_t *zh;

  _Atomic int state;        /* ZOO_*_STATE of the session */
  _Atomic int auth_pending; /* add_auth replies still awaited */
  _Atomic int joined;       /* admitted to the pools (auth done) */
  _Atomic int expired;      /* session expired; monitor re-creates it */
  _Atomic int role;         /* zkr_role_t from srvr */
  _Atomic int64_t zxid;     /* from srvr, -1 unknown */
  _Atomic int ephemerals;   /* ephemeral nodes created through it */
  _Atomic int watches;      /* armed watches on it */
  _Atomic int hosted_on;    /* member whose server the session is on: its
                               own, or a live one after a rescue */
  _Atomic uint64_t down_since_ns; /* not connected since, 0 when connected */
  int srvr_fail_streak;     /* consecutive failed srvr polls (monitor) */
  _Atomic int suspect;      /* silent to srvr while others answer */

  _Atomic uint64_t reads, writes, syncs, errors, srvr_polls, srvr_failures;
  _Atomic uint64_t rescues;
  _Atomic uint64_t hedges;  /* hedge requests sent to it (hedger.c) */
  _Atomic int outstanding;  /* operations sent and not completed */
  _Atomic uint64_t progress_ns; /* last completion, or start of being busy */
  uint64_t nudged_ns;       /* last nudge (monitor) */
  _Atomic uint64_t nudges;
  _Atomic int draining;     /* to be replaced once outstanding is 0 */

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
  ZKR__OP_SYNC
} zkr__op_type_t;

typedef struct zkr__watch zkr__watch_t;

typedef struct zkr__op {
  struct zkr *z;
  zkr__op_type_t type;
  int is_write;   /* goes through the write gate as a write */
  int ordered;    /* a read that must follow an in-flight write */
  int gated;      /* goes through the write gate (FIFO on the write session) */
  int err;        /* why a parked operation could not be sent */
  int member;     /* member it was dispatched to, -1 not yet */
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
  zkr__watch_t *watch;          /* NULL: no watch */
  int watch_reused;             /* watch is an armed record set again */
  int pin;                      /* member it must go to, -1 any */

  /* Paths registered in the in-flight set by this write. */
  char **inflight;
  int n_inflight;

  union {
    void_completion_t v;
    stat_completion_t stat;
    data_completion_t data;
    strings_completion_t strings;
    strings_stat_completion_t strings_stat;
    string_completion_t string;
    string_stat_completion_t string_stat;
    acl_completion_t acl;
  } cb;
  const void *data;

  int probe;      /* a health probe of an ejected member, not the app's */

  /* Hedged reads (hedger.c).  A hedgeable read is the primary: it carries
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
  /* Outstanding list (completion.c): every operation handed to ZooKeeper
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
   * member by filling slot n, then publishing n + 1), up to cap.  The
   * keeper slot of member i is members[cap + i].  No slot ever moves, so
   * an index stays valid for the life of the handle. */
  _Atomic size_t n;
  size_t cap;
  zkr__member_t *members;

  int recv_timeout;
  int rescue_ms;   /* resolved: option or a third of recv_timeout */
  int flags;
  clientid_t clientid;
  int has_clientid;

  pthread_mutex_t ctx_mu; /* guards watcher and context */
  watcher_fn watcher;
  void *context;

  /* Virtual session (session.c). */
  pthread_mutex_t state_mu;
  _Atomic int vstate;      /* state last reported to the application */
  _Atomic int expired;     /* a member holding state expired */
  _Atomic int auth_failed;
  _Atomic int closing;

  /* Leader knowledge (monitor.c). */
  _Atomic int leader;      /* member index, -1 unknown */
  _Atomic uint64_t leader_changes;
  int last_leader;         /* last known leader, -1 none yet (monitor) */

  /* Write gate (router.c): one write session at a time, FIFO. */
  pthread_mutex_t gate_mu;
  int gate_cur;            /* member index of the write session, -1 none */
  int gate_inflight;       /* gated operations in flight on gate_cur */
  zkr__op_t *gate_head, *gate_tail;
  uint64_t gate_parked_since_ns;

  /* Reads (policy.c). */
  _Atomic unsigned rr;
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

  /* Auth records (session.c). */
  pthread_mutex_t auth_mu;
  struct zkr__auth *auths;

  /* Serialises the application's callbacks (session.c). */
  pthread_mutex_t cb_mu;

  /* Operations handed to ZooKeeper, not yet completed (completion.c). */
  pthread_mutex_t out_mu;
  zkr__op_t *out_list;

  /* Watch registry (watch.c). */
  pthread_mutex_t watch_mu;
  zkr__watch_t *watch_list;

  /* Monitor thread (monitor.c). */
  pthread_t monitor;
  int monitor_started;
  pthread_mutex_t mon_mu;
  pthread_cond_t mon_cv;
  _Atomic int mon_stop;
  int mon_kick;

  int reg_slot;            /* its slot in the registry (registry.c), -1 none */

  /* Hedged reads (hedger.c); NULL when hedging is off. */
  struct zkr__hedger *hedger;
  /* Membership that follows /zookeeper/config (membership.c). */
  struct zkr__membership *ms;
};

/* ---- member.c ---- */
int zkr__member_open(zkr__member_t *m, int on, const clientid_t *cid);
int zkr__member_client_id(zkr__member_t *m, clientid_t *out);
int zkr__member_keep(zkr__member_t *m);
void zkr__member_close(zkr__member_t *m);
int zkr__member_usable(const zkr__member_t *m);
void zkr__member_maybe_join(zkr__member_t *m);
void zkr__member_watcher(zhandle_t *zh, int type, int state, const char *path,
                         void *ctx);
void zkr__member_sample(zkr__member_t *m, uint64_t now_ns, double ms);
int zkr__member_in_pool(zkr__member_t *m);
void zkr__health_tick(struct zkr *z, uint64_t now_ns);
int zkr__policy_read_candidate(struct zkr *z, const zkr__member_t *m);
void zkr__pool_probe_result(zkr__member_t *m, uint64_t now, double ms, int ok);
void zkr__health_cfg_from_options(zkr__health_cfg_t *c, const zkr_options_t *o);

int zkr__member_observer(const zkr__member_t *m);
zkr__member_t *zkr__keeper_of(zkr__member_t *m);
int zkr__member_setup(struct zkr *z, size_t i, const zkr__host_t *host);

/* ---- membership.c ---- */
int zkr__membership_new(struct zkr *z);
void zkr__membership_free(struct zkr *z);
void zkr__membership_tick(struct zkr *z);
void zkr__membership_stats(struct zkr *z, zkr_stats_t *s);

/* ---- session.c ---- */
void zkr__session_update(struct zkr *z);
void zkr__auth_replay(zkr__member_t *m);
void zkr__auth_free_all(struct zkr *z);
extern _Thread_local int zkr__in_callback;
void zkr__callback_enter(struct zkr *z);
void zkr__callback_leave(struct zkr *z);

/* ---- monitor.c ---- */
int zkr__monitor_start(struct zkr *z);
void zkr__monitor_stop(struct zkr *z);
void zkr__monitor_kick(struct zkr *z);

/* ---- policy.c ---- */
int zkr__policy_read_member(struct zkr *z);
int zkr__policy_write_member(struct zkr *z);
int zkr__policy_hedge_member(struct zkr *z, int exclude);

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

/* ---- completion.c ---- */
zkr__op_t *zkr__op_new(struct zkr *z, zkr__op_type_t type, const char *path);
void zkr__op_free(zkr__op_t *op);
int zkr__op_copy_acl(zkr__op_t *op, const struct ACL_vector *acl);
int zkr__op_copy_multi(zkr__op_t *op, int count, const zoo_op_t *ops);
int zkr__op_dispatch(zkr__op_t *op, zkr__member_t *m);
void zkr__op_complete_error(zkr__op_t *op, int rc);
void zkr__op_complete_abandoned(struct zkr *z);
void zkr__op_complete_dropped(struct zkr *z, zhandle_t *zh);
int zkr__probe(zkr__member_t *m);

void zkr__op_call_user_error(zkr__op_t *op, int rc);
int zkr__op_server_answered(int rc);

/* ---- hedger.c ---- */
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
  ZKR__W_ARMED,     /* live on member */
  ZKR__W_REARMING,  /* being set again on a replaced session */
  ZKR__W_LOST,      /* re-arm failed; the next replacement tries again */
  ZKR__W_CONSUMED,  /* event delivered by a re-arm; the server's is dropped */
  ZKR__W_FIRED      /* over (event delivered or session gone) while reads
                       that set it again are in flight: kept for them */
};
struct zkr__watch {
  struct zkr *z;
  watcher_fn fn;    /* NULL: the global watcher */
  void *ctx;
  int kind;         /* ZKR__WATCH_* */
  char *path;
  int member;       /* member session it is armed on */
  int state;        /* ZKR__W_*, under watch_mu */
  int reuses;       /* reads in flight that set it again, under watch_mu */
  int existed;      /* the node as the arming read saw it */
  int64_t mzxid, pzxid;
  struct zkr__watch *prev, *next;
};
zkr__watch_t *zkr__watch_new(struct zkr *z, watcher_fn fn, void *ctx, int kind,
                             const char *path);
void zkr__watch_armed(zkr__watch_t *w, int member, const struct Stat *stat);
void zkr__watch_discard(zkr__watch_t *w);
zkr__watch_t *zkr__watch_find(struct zkr *z, int kind, const char *path,
                              watcher_fn fn, void *ctx, int *member);
void zkr__watch_reuse_done(zkr__watch_t *w, int armed, int member,
                           const struct Stat *stat);
void zkr__watch_trampoline(zhandle_t *zh, int type, int state,
                           const char *path, void *ctx);
void zkr__watch_rearm_member(struct zkr *z, zkr__member_t *m);
void zkr__watch_move(struct zkr *z, int from, int to);
void zkr__watch_free_all(struct zkr *z);

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

/* ---- options.c: the zones option's syntax ---- */
/* Splits the next entry of a zones string at *s ("addr=label" or "label",
 * comma-separated): copies the address part ("" in the positional form)
 * and the label, advances *s.  Returns 1 for an entry, 0 at the end, -1
 * for a syntax error. */
int zkr__zones_next(const char **s, char *addr, size_t addr_len, char *label,
                    size_t label_len);

#endif
