/* zkroute public API: a routed ZooKeeper client that looks like one session.
 *
 * Every zkr_X call mirrors zoo_X of <zookeeper/zookeeper.h>: same parameters
 * apart from the handle, same completion typedefs, same error codes, so
 * migrating is a rename.  Behind one zkr_t the library keeps one ZooKeeper
 * session per ensemble member, sends writes to the leader's session and
 * serves reads as a pipelined sync()+read on a rotating healthy follower.
 *
 * Common rules for every call below (documented once here):
 * - Return codes: ZooKeeper's own codes pass through unchanged (ZOK,
 *   ZBADARGUMENTS for a NULL handle, NULL or invalid path, ZINVALIDSTATE once
 *   the virtual session expired, ZCONNECTIONLOSS / ZOPERATIONTIMEOUT meaning
 *   "outcome unknown" - zkroute never retries a write, ZNONODE, ZNODEEXISTS,
 *   ZBADVERSION, ZNOAUTH, ...).  zkroute's own codes are below -1000 (see
 *   zkroute_errors.h); zkr_strerror() names both.
 * - Handles: every call looks its handle up in a registry of live handles
 *   before touching it.  NULL gets ZBADARGUMENTS; a handle being closed
 *   ZKR_ECLOSING; a handle that zkr_close() finished with (or any pointer
 *   zkr_init() did not return) ZKR_ECLOSED, without its memory being read.
 *   Calls that return no code return what they return for NULL.  A call
 *   racing zkr_close() is safe: the memory is freed only after it left.
 *   One limit: if a later zkr_init() gets the same address from malloc, a
 *   stale pointer names that new handle (docs/robustness.md).
 * - If an asynchronous call returns an error, its completion is never
 *   called.  If it returns ZOK, its completion is called exactly once, also
 *   when the handle is closed (rc = ZCLOSING then).  zkr_async's completion
 *   comes after those of every operation issued before it.
 * - Callbacks: every completion, watch event and session event of a handle
 *   runs on one thread of the handle's own (its delivery thread), one at a
 *   time, in order, as with one stock session's completion thread; what a
 *   callback receives is a copy, valid during the callback.  A callback may
 *   make blocking zkr_ calls (their replies never wait for the delivery
 *   thread) and may block on the application's own locks; while it blocks,
 *   later callbacks of the handle wait.  (Only a read selector must not
 *   call zkr_: ZKR_EINCALLBACK there.)
 * - Watchers and the global watcher receive the application's handle as a
 *   zhandle_t pointer: it is the zkr_t in disguise.  Pass it to zkr_from_zh()
 *   (the compat header does that for you); never to a zoo_ function.
 * - Pointers passed in are borrowed for the duration of the call (values
 *   are copied before the call returns); pointers passed to completions
 *   belong to zkroute and are valid only during the completion.
 * - Every function may be called from any thread, unless it says otherwise.
 */
#ifndef ZKROUTE_H
#define ZKROUTE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <zookeeper/zookeeper.h>

#include "zkroute_errors.h"

#ifdef __cplusplus
extern "C" {
#endif

#if defined(ZKR_BUILDING_LIBRARY) && defined(__GNUC__)
#define ZKR_API __attribute__((visibility("default")))
#else
#define ZKR_API
#endif

/* Largest ensemble one handle will manage. */
#define ZKR_MAX_MEMBERS 64

typedef struct zkr zkr_t;

/* A member's role as its last `srvr` reply said. */
typedef enum {
  ZKR_ROLE_UNKNOWN = 0, /* not polled yet, or reply not understood */
  ZKR_ROLE_LEADER,
  ZKR_ROLE_FOLLOWER,
  ZKR_ROLE_OBSERVER,
  ZKR_ROLE_STANDALONE,
  ZKR_ROLE_READ_ONLY,
  ZKR_ROLE_NOT_SERVING, /* "not currently serving requests" */
  ZKR_ROLE_UNREACHABLE  /* srvr connect failed or timed out */
} zkr_role_t;

/* Which member serves an operation (DESIGN.md section 7). */
typedef enum {
  ZKR_POLICY_DEFAULT = 0, /* hybrid */
  ZKR_POLICY_HYBRID,      /* writes: leader; reads: rotating healthy followers */
  ZKR_POLICY_ROUND_ROBIN, /* every operation: all members in turn */
  ZKR_POLICY_LEADER_ONLY, /* every operation: the leader */
  ZKR_POLICY_STICKY,      /* every operation: one random member (stock) */
  ZKR_POLICY_BOLTZMANN    /* every operation: a usable member drawn with
                             probability ~ exp(-latency EWMA / temperature) */
} zkr_policy_t;

/* How reads are made consistent (DESIGN.md section 3). */
typedef enum {
  ZKR_CONSISTENCY_DEFAULT = 0,  /* linearizable */
  ZKR_CONSISTENCY_LINEARIZABLE, /* every read is a pipelined sync+read */
  ZKR_CONSISTENCY_LOCAL,        /* no sync: a follower may serve stale data */
  ZKR_CONSISTENCY_SESSION       /* a stock session's guarantees (FIFO,
                                   read-your-writes, monotonic reads): reads
                                   stick to one member and sync only when
                                   they switch member or after the handle's
                                   own writes (docs/guarantees.md) */
} zkr_consistency_t;

#define ZKR_OPTIONS_VERSION 1

/* Options.  A zero field means "the default"; every default is listed in
 * docs/options.md.  Initialise with ZKR_OPTIONS_INIT, then set fields or use
 * zkr_options_set(). */
typedef struct zkr_options {
  int version;          /* ZKR_OPTIONS_VERSION */
  int policy;           /* zkr_policy_t */
  int consistency;      /* zkr_consistency_t */
  int leader_poll_ms;   /* srvr poll period (default 500) */
  int srvr_timeout_ms;  /* srvr connect+reply timeout (default 1000) */
  int srvr_max_reply;   /* srvr reply size cap in bytes (default 65536) */
  int read_from_leader; /* 1: leader is in the read pool (default 0: only
                             when no follower is usable) */
  int seed;             /* random seed for sticky's member (default: time) */
  /* Health (DESIGN.md section 6; docs/health.md). */
  double ewma_half_life_ms; /* latency EWMA half-life (default 1000) */
  double eject_ratio;       /* eject above ratio x pool median (default 3) */
  double readmit_ratio;     /* a probe is good below ratio x pool median
                             (default 2; at most eject_ratio) */
  double eject_floor_ms;    /* ... and above median + floor (default 2) */
  int min_samples;          /* samples before a member can be judged */
  int probe_ms;             /* probe period of an ejected member */
  int reinstate_k;          /* consecutive good probes to come back */
  int eject_min_ms;         /* minimum time out after a first ejection */
  int eject_max_ms;         /* cap of the repeated-ejection backoff */
  int health;               /* 1 on (default), -1 off: no ejection */
  /* Failover (DESIGN.md section 4; docs/failover.md). */
  int rescue_ms; /* re-attach a stranded session after this long
                             (default: a third of the session timeout) */
  /* Policy boltzmann (DESIGN.md section 7; docs/benchmarks.md). */
  double boltzmann_temperature; /* softmax temperature in ms (default 1) */
  /* Hedged reads (DESIGN.md section 7; docs/hedging.md). */
  int hedge;               /* 1 on (default), -1 off */
  double hedge_floor_ms;   /* lowest hedge delay (default 5) */
  double hedge_percentile; /* delay = this percentile of recent reads (95) */
  double hedge_max_pct;    /* hedges per 100 hedgeable reads, at most (5) */
  int hedge_burst;         /* hedges that may go at once after a quiet spell (20) */
  /* Read selection (docs/selectors.md). */
  double leader_read_weight; /* share of hybrid's reads the leader serves,
                                0..1 (default 0: none while a follower is
                                usable) */
  char zones[1024];          /* zone label of each member: "a,a,b" in host list
                             order, or "host:port=a,..." (default: none) */
  char local_zone[32];       /* the client's zone, for zkr_selector_same_zone
                             (default: none) */
  /* Membership (docs/membership.md). */
  int follow_config; /* 1 on (default): read and watch /zookeeper/config
                             and open/close member sessions to match it;
                             -1 off: the connect string's members only */
  /* Sync coalescing (docs/guarantees.md, docs/benchmarks.md). */
  int sync_coalesce; /* 1 on (default): a read that arrives while
                             sync_coalesce_depth syncs are in flight on its
                             member session waits for the next sync, shared
                             by every read that waited; -1 off: one sync per
                             read */
  /* Fleet scale (docs/benchmarks.md). */
  int read_members; /* cap on the follower sessions a handle keeps:
                             the leader's and the owner's sessions plus the
                             N best other members (in the read pool, lowest
                             latency), re-chosen as health changes; the
                             others have no session.  0 (default): every
                             member */
  int resolve_ms;   /* period of the re-resolution of the connect
                             string's host names (default 0: leader_poll_ms);
                             docs/dropin.md */
  /* Requests (docs/robustness.md). */
  int jute_maxbuffer;      /* largest request zkroute sends, in bytes: the
                             servers' jute.maxbuffer (default 1048575);
                             larger ones get ZKR_ETOOBIG */
  int idle_poll_ms;        /* srvr poll period while the handle is idle: no
                             operation since the last poll, leader known,
                             every member answering (default 5000; at or
                             below leader_poll_ms: one rate).  The first
                             operation after an idle spell polls at once. */
  int rescue_down_ms;      /* re-attach the owner session this long after its
                             server went silent to srvr while another member
                             answers (the server is down or cut off), even
                             before rescue_ms (default 250) */
  int sync_coalesce_depth; /* with sync_coalesce on: how many syncs may
                             be in flight at once on one member session
                             before arriving reads wait to share the next
                             (1-16, default 4; 1: a read that finds any sync
                             in flight waits for it) */
  /* Operations (docs/operations.md). */
  char metrics[64]; /* "ADDRESS:PORT" (127.0.0.1:9464, [::1]:9464): serve
                             GET /metrics there, the Prometheus text of every
                             handle of the process that asks, from the first
                             such handle's zkr_init to the last one's
                             zkr_close (default: none) */
  /* Idle fleets (docs/benchmarks.md, docs/decisions.md). */
  int idle_read_members; /* the read_members cap while the handle is idle
                             (no operation for idle_park_ms): the follower
                             sessions beyond it are closed, their watches
                             set again on a kept session, and opened again
                             at the next operation (default 1; -1 off) */
  int idle_park_ms;      /* how long without an operation makes a handle
                             idle for idle_read_members (default 60000) */
} zkr_options_t;

#define ZKR_OPTIONS_INIT                                                                           \
  { .version = ZKR_OPTIONS_VERSION }

/* Sets one option from text ("policy", "round_robin").  Serves the CLI,
 * the benchmark and environment variables.  Returns ZOK, ZKR_EOPTION
 * (unknown key), ZKR_EOPTION_VALUE or ZBADARGUMENTS (NULL argument).  The
 * text options (zones, local_zone) are copied into the struct and checked
 * for syntax here; whether zones names the members of the host list is
 * checked by zkr_init_opts() (ZKR_EZONES_*). */
ZKR_API int zkr_options_set(zkr_options_t *opts, const char *key, const char *value);

/* Describes option i (0, 1, ... until it returns ZBADARGUMENTS): its name,
 * one line of meaning and its default (enums and switches as numbers).  The
 * table behind it is the one zkr_options_set() uses; docs/options.md is
 * generated from it by `zkroute options`. */
ZKR_API int zkr_option_info(int i, const char **name, const char **doc, double *default_value);

/* Option i's default as zkr_options_set() takes it ("hybrid", "on", "500";
 * "(none)" for the text options), in buf (len bytes, truncated to fit).
 * Returns ZOK, or ZBADARGUMENTS (no option i, NULL buf, len 0). */
ZKR_API int zkr_option_default_text(int i, char *buf, size_t len);

/* Creates a routed handle, like zookeeper_init().  host is a ZooKeeper host
 * list ("h1:2181,h2:2181,[::1]:2181/chroot"), strictly parsed.  fn is the
 * global watcher (may be NULL); it sees virtual-session events only.
 * clientid, when not NULL and not 0, is resumed by the owner session (one
 * member's, drawn at random): if that session no longer exists, the handle
 * reports ZOO_EXPIRED_SESSION_STATE, as stock does.  flags are passed to
 * each member's zookeeper_init.  Starts the monitor and delivery threads
 * and one session per member; returns at once (state CONNECTING).
 * Returns NULL with errno EINVAL (bad host list), ENOMEM, or EAGAIN (thread
 * or session creation failed); zkr_init_opts() returns the exact code. */
ZKR_API zkr_t *zkr_init(const char *host, watcher_fn fn, int recv_timeout,
                        const clientid_t *clientid, void *context, int flags);

/* As zkr_init() with options (NULL: all defaults).  Returns ZOK and sets
 * *out, or a ZKR_EHOSTS_* code, ZKR_EOPTION_VALUE, ZKR_EOPTIONS_VERSION,
 * a ZKR_EZONES_* code (the zones option does not fit the host list),
 * ZKR_ENOMEM, ZKR_EINIT, ZKR_ETHREAD, ZBADARGUMENTS (NULL host or out). */
ZKR_API int zkr_init_opts(zkr_t **out, const char *host, watcher_fn fn, int recv_timeout,
                          const clientid_t *clientid, void *context, int flags,
                          const zkr_options_t *opts);

/* As zkr_init(), configured by the environment, as the LD_PRELOAD
 * interposer is (docs/dropin.md): ZKROUTE_POLICY and one ZKROUTE_<OPTION>
 * per option (a bad value prints one line on stderr and keeps the
 * default), ZKROUTE_STATS=FILE (the handle's zkr_stats_json() is appended
 * to FILE, with the pid and program name, when it closes or when the
 * process exits with it open), ZKROUTE_VERBOSE=1.  ZKROUTE=off: since it
 * must return a routed handle, it selects policy sticky and consistency
 * local (one session for everything, as the stock client) and says so on
 * stderr; the compat header is bypassed truly (zkr_compat_init).  The
 * environment is read once per process, at the first call.  Returns as
 * zkr_init(). */
ZKR_API zkr_t *zkr_init_env(const char *host, watcher_fn fn, int recv_timeout,
                            const clientid_t *clientid, void *context, int flags);

/* ---- for <zkroute/compat.h> (docs/dropin.md) ----
 * zkr_compat_init() is the compat header's zookeeper_init2: with the
 * environment's ZKROUTE on, zkr_init_env()'s routed handle in disguise
 * (log_callback unused); with ZKROUTE=off, a plain handle of the real
 * zookeeper_init2(), log callback and all, which zkroute remembers.
 * Returns NULL with errno as those do.  zkr_compat_routed() is what each
 * compat call asks: the routed handle zh stands for, or NULL for such a
 * plain handle (which the call then gives to the real zoo_ function).
 * While no plain handle exists it costs one atomic load.
 * zkr_compat_close() closes either kind (zkr_close or the real
 * zookeeper_close) and returns what that returns.  Any thread. */
ZKR_API zhandle_t *zkr_compat_init(const char *host, watcher_fn fn, int recv_timeout,
                                   const clientid_t *clientid, void *context, int flags,
                                   log_callback_fn log_callback);
ZKR_API zkr_t *zkr_compat_routed(zhandle_t *zh);
ZKR_API int zkr_compat_close(zhandle_t *zh);

/* Closes every member session.  Every outstanding completion fires exactly
 * once (ZCLOSING where it did not finish).  May be called from a callback:
 * the close then finishes on a helper thread after the callback returns.
 * Returns ZOK; ZBADARGUMENTS for NULL; ZKR_ECLOSING when another
 * zkr_close() of the handle is running; ZKR_ECLOSED when the handle was
 * closed already (double close) or is not a handle. */
ZKR_API int zkr_close(zkr_t *z);

/* ---- the virtual session (DESIGN.md section 4) ---- */

/* zoo_state: the virtual session's ZOO_*_STATE (it follows the owner
 * session); 0 for NULL or a closed handle. */
ZKR_API int zkr_state(zkr_t *z);
/* zoo_client_id: the owner session's id, a pointer into the handle, the
 * same pointer and value for the handle's whole life (zeros, or the
 * clientid passed to zkr_init, until the first CONNECTED).  Every
 * ephemeral node the handle creates is owned by it.  NULL for NULL or a
 * closed handle. */
ZKR_API const clientid_t *zkr_client_id(zkr_t *z);
/* zoo_recv_timeout: the session timeout the owner session negotiated, in
 * ms, or the one asked for until it is connected; the handle codes for a
 * NULL or closed handle. */
ZKR_API int zkr_recv_timeout(zkr_t *z);
/* zoo_get_context / zoo_set_context: the context given to zkr_init;
 * NULL (nothing) for a NULL or closed handle. */
ZKR_API const void *zkr_get_context(zkr_t *z);
ZKR_API void zkr_set_context(zkr_t *z, void *context);
/* zoo_set_watcher: replaces the global watcher, returns the old one (NULL
 * for a NULL or closed handle). */
ZKR_API watcher_fn zkr_set_watcher(zkr_t *z, watcher_fn fn);
/* is_unrecoverable: ZINVALIDSTATE once the session expired, failed auth
 * or the handle is closing or closed, else ZOK; ZBADARGUMENTS for NULL. */
ZKR_API int zkr_is_unrecoverable(zkr_t *z);
ZKR_API zkr_t *zkr_from_zh(zhandle_t *zh); /* handle given to watchers */
ZKR_API zhandle_t *zkr_as_zh(zkr_t *z);    /* the disguise itself */

/* zoo_add_auth: records the credential and applies it to every member
 * session, now and on sessions created later.  completion (may be NULL) fires once with the
 * owner session's answer (ZOK, ZAUTHFAILED; ZCLOSING if the handle closes
 * first).  Returns ZOK, ZBADARGUMENTS, ZINVALIDSTATE (expired, auth failed
 * or closing) or ZKR_ENOMEM.  Credentials are never logged. */
ZKR_API int zkr_add_auth(zkr_t *z, const char *scheme, const char *cert, int certLen,
                         void_completion_t completion, const void *data);

/* ---- the ZooKeeper calls ----
 * Each mirrors its zoo_ call of <zookeeper/zookeeper.h> and says, as
 * zookeeper.h does, what it returns and what its completion's rc may be.
 * "The handle codes" are the same for all: ZBADARGUMENTS (NULL handle),
 * ZKR_ECLOSING (being closed), ZKR_ECLOSED (closed, or not a handle),
 * ZKR_EINCALLBACK (called from a read selector).  "Unknown outcome" is
 * ZCONNECTIONLOSS or ZOPERATIONTIMEOUT: the request may or may not have
 * been applied; zkroute never retries a write.  Every completion may also
 * get ZSESSIONEXPIRED and ZAUTHFAILED (the virtual session ended while the
 * operation waited) and ZCLOSING (the handle was closed first).  A
 * synchronous call returns what the completion would get. */

/* ---- asynchronous calls: writes (leader's session; ephemeral ones on the
 * owner session) ---- */

/* zoo_acreate: creates path with value (valuelen bytes; NULL and -1 for
 * null data), acl and mode (ZOO_PERSISTENT, ZOO_EPHEMERAL, ZOO_SEQUENCE
 * flags, ZOO_CONTAINER, ZOO_PERSISTENT_WITH_TTL...).
 * Returns ZOK or: the handle codes; ZBADARGUMENTS (invalid path - a
 * sequential create's may end in '/' -, value/valuelen that disagree);
 * ZINVALIDACL (NULL or empty acl, an entry without scheme or id);
 * ZINVALIDSTATE (session expired or auth failed); ZKR_ETOOBIG (request
 * over jute_maxbuffer); ZNOTREADONLY (only read-only servers answer);
 * ZKR_ENOMEM.
 * Completion rc: ZOK (value: the created path, sequence suffix included);
 * ZNODEEXISTS; ZNONODE (no parent); ZNOAUTH; ZNOCHILDRENFOREPHEMERALS
 * (the parent is ephemeral); ZINVALIDACL; unknown outcome. */
ZKR_API int zkr_acreate(zkr_t *z, const char *path, const char *value, int valuelen,
                        const struct ACL_vector *acl, int mode, string_completion_t completion,
                        const void *data);
/* zoo_acreate_ttl: as zkr_acreate, with ttl in ms for the TTL modes
 * (ZOO_PERSISTENT_WITH_TTL, ZOO_PERSISTENT_SEQUENTIAL_WITH_TTL; -1 for the
 * others).  Returns and completes as zkr_acreate, and the server answers
 * a TTL it refuses with ZBADARGUMENTS (ZUNIMPLEMENTED where TTL nodes are
 * not enabled). */
ZKR_API int zkr_acreate_ttl(zkr_t *z, const char *path, const char *value, int valuelen,
                            const struct ACL_vector *acl, int mode, int64_t ttl,
                            string_completion_t completion, const void *data);
/* zoo_acreate2: as zkr_acreate; the completion gets the node's Stat too. */
ZKR_API int zkr_acreate2(zkr_t *z, const char *path, const char *value, int valuelen,
                         const struct ACL_vector *acl, int mode,
                         string_stat_completion_t completion, const void *data);
/* zoo_acreate2_ttl: as zkr_acreate_ttl, with the Stat. */
ZKR_API int zkr_acreate2_ttl(zkr_t *z, const char *path, const char *value, int valuelen,
                             const struct ACL_vector *acl, int mode, int64_t ttl,
                             string_stat_completion_t completion, const void *data);
/* zoo_adelete: deletes path if its version is version (-1: any).
 * Returns ZOK or: the handle codes; ZBADARGUMENTS (invalid path);
 * ZINVALIDSTATE; ZNOTREADONLY; ZKR_ENOMEM.
 * Completion rc: ZOK; ZNONODE; ZNOAUTH; ZBADVERSION; ZNOTEMPTY (it has
 * children); unknown outcome. */
ZKR_API int zkr_adelete(zkr_t *z, const char *path, int version, void_completion_t completion,
                        const void *data);
/* zoo_aset: sets path's data to buffer (buflen bytes; NULL and -1 for
 * null data) if its version is version (-1: any).
 * Returns ZOK or: the handle codes; ZBADARGUMENTS (invalid path,
 * buffer/buflen that disagree); ZINVALIDSTATE; ZKR_ETOOBIG; ZNOTREADONLY;
 * ZKR_ENOMEM.
 * Completion rc: ZOK (with the new Stat); ZNONODE; ZNOAUTH; ZBADVERSION;
 * unknown outcome. */
ZKR_API int zkr_aset(zkr_t *z, const char *path, const char *buffer, int buflen, int version,
                     stat_completion_t completion, const void *data);
/* zoo_aset_acl: sets path's ACL if its ACL version is version (-1: any).
 * Returns ZOK or: the handle codes; ZBADARGUMENTS (invalid path);
 * ZINVALIDACL (NULL or empty acl, an entry without scheme or id);
 * ZINVALIDSTATE; ZNOTREADONLY; ZKR_ENOMEM.
 * Completion rc: ZOK; ZNONODE; ZNOAUTH; ZINVALIDACL; ZBADVERSION; unknown
 * outcome. */
ZKR_API int zkr_aset_acl(zkr_t *z, const char *path, int version, struct ACL_vector *acl,
                         void_completion_t completion, const void *data);
/* zoo_amulti: count operations (zoo_*_op_init) applied all or none.  A
 * multi with any write op is a write (on the owner session if it creates
 * an ephemeral node); a multi of checks only is routed as a read.  results
 * (count entries) must stay valid until the completion ran.
 * Returns ZOK or: the handle codes; ZBADARGUMENTS (count < 0, NULL ops or
 * results, an op of unknown type or with an invalid path or value);
 * ZINVALIDACL (a create's acl); ZINVALIDSTATE; ZKR_ETOOBIG (the whole
 * multi over jute_maxbuffer); ZNOTREADONLY; ZKR_ENOMEM.
 * Completion rc: ZOK; the failed op's code (ZNONODE, ZNODEEXISTS,
 * ZBADVERSION, ZNOTEMPTY, ZNOAUTH, ...), each results[i].err giving its
 * op's own; unknown outcome. */
ZKR_API int zkr_amulti(zkr_t *z, int count, const zoo_op_t *ops, zoo_op_result_t *results,
                       void_completion_t completion, const void *data);

/* ---- asynchronous calls: reads (sync+read on a follower) ----
 * Each returns ZOK or: the handle codes; ZBADARGUMENTS (invalid path);
 * ZINVALIDSTATE (session expired or auth failed); ZKR_ENOMEM.  Completion
 * rc: ZOK; ZNONODE (an exists completes with ZNONODE and sets its watch:
 * the node's creation fires it); ZNOAUTH; unknown outcome.  watch = 1
 * sets a watch for the global watcher; the w forms set one for
 * watcher/watcherCtx.  A watch is set when rc is ZOK (or ZNONODE for
 * exists) and fires once. */
ZKR_API int zkr_aexists(zkr_t *z, const char *path, int watch, stat_completion_t completion,
                        const void *data);
ZKR_API int zkr_awexists(zkr_t *z, const char *path, watcher_fn watcher, void *watcherCtx,
                         stat_completion_t completion, const void *data);
/* The completion gets the data (value_len -1 for null data) and Stat. */
ZKR_API int zkr_aget(zkr_t *z, const char *path, int watch, data_completion_t completion,
                     const void *data);
ZKR_API int zkr_awget(zkr_t *z, const char *path, watcher_fn watcher, void *watcherCtx,
                      data_completion_t completion, const void *data);
ZKR_API int zkr_aget_children(zkr_t *z, const char *path, int watch,
                              strings_completion_t completion, const void *data);
ZKR_API int zkr_awget_children(zkr_t *z, const char *path, watcher_fn watcher, void *watcherCtx,
                               strings_completion_t completion, const void *data);
ZKR_API int zkr_aget_children2(zkr_t *z, const char *path, int watch,
                               strings_stat_completion_t completion, const void *data);
ZKR_API int zkr_awget_children2(zkr_t *z, const char *path, watcher_fn watcher, void *watcherCtx,
                                strings_stat_completion_t completion, const void *data);
/* No watch; the completion gets the ACL and the Stat. */
ZKR_API int zkr_aget_acl(zkr_t *z, const char *path, acl_completion_t completion, const void *data);
/* zoo_async's mirror: a sync() on the member the next read would use; its
 * completion comes after those of every operation issued before it.
 * Returns as the reads; completion rc: ZOK (value: path), unknown
 * outcome. */
ZKR_API int zkr_async(zkr_t *z, const char *path, string_completion_t completion, const void *data);

/* ---- synchronous calls: same routing; block the calling thread ----
 * Each returns the codes its asynchronous form returns, or else what its
 * completion would get; a call from inside a callback works (the reply
 * never waits for the delivery thread). */
/* path_buffer (path_buffer_len bytes, may be NULL with 0) gets the created
 * path, truncated to fit and NUL-terminated. */
ZKR_API int zkr_create(zkr_t *z, const char *path, const char *value, int valuelen,
                       const struct ACL_vector *acl, int mode, char *path_buffer,
                       int path_buffer_len);
ZKR_API int zkr_create_ttl(zkr_t *z, const char *path, const char *value, int valuelen,
                           const struct ACL_vector *acl, int mode, int64_t ttl, char *path_buffer,
                           int path_buffer_len);
ZKR_API int zkr_create2(zkr_t *z, const char *path, const char *value, int valuelen,
                        const struct ACL_vector *acl, int mode, char *path_buffer,
                        int path_buffer_len, struct Stat *stat);
ZKR_API int zkr_create2_ttl(zkr_t *z, const char *path, const char *value, int valuelen,
                            const struct ACL_vector *acl, int mode, int64_t ttl, char *path_buffer,
                            int path_buffer_len, struct Stat *stat);
ZKR_API int zkr_delete(zkr_t *z, const char *path, int version);
ZKR_API int zkr_set(zkr_t *z, const char *path, const char *buffer, int buflen, int version);
ZKR_API int zkr_set2(zkr_t *z, const char *path, const char *buffer, int buflen, int version,
                     struct Stat *stat);
ZKR_API int zkr_set_acl(zkr_t *z, const char *path, int version, const struct ACL_vector *acl);
ZKR_API int zkr_multi(zkr_t *z, int count, const zoo_op_t *ops, zoo_op_result_t *results);
ZKR_API int zkr_exists(zkr_t *z, const char *path, int watch, struct Stat *stat);
ZKR_API int zkr_wexists(zkr_t *z, const char *path, watcher_fn watcher, void *watcherCtx,
                        struct Stat *stat);
/* As zoo_get: *buffer_len in = capacity, out = bytes copied (-1 for a
 * node with null data); stat->dataLength gives the full length.  Also
 * ZBADARGUMENTS for a NULL buffer_len, a negative *buffer_len, or a NULL
 * buffer with *buffer_len > 0. */
ZKR_API int zkr_get(zkr_t *z, const char *path, int watch, char *buffer, int *buffer_len,
                    struct Stat *stat);
ZKR_API int zkr_wget(zkr_t *z, const char *path, watcher_fn watcher, void *watcherCtx, char *buffer,
                     int *buffer_len, struct Stat *stat);
/* strings is filled with malloc'd memory: free with
 * deallocate_String_vector.  Also ZBADARGUMENTS for a NULL strings. */
ZKR_API int zkr_get_children(zkr_t *z, const char *path, int watch, struct String_vector *strings);
ZKR_API int zkr_wget_children(zkr_t *z, const char *path, watcher_fn watcher, void *watcherCtx,
                              struct String_vector *strings);
ZKR_API int zkr_get_children2(zkr_t *z, const char *path, int watch, struct String_vector *strings,
                              struct Stat *stat);
ZKR_API int zkr_wget_children2(zkr_t *z, const char *path, watcher_fn watcher, void *watcherCtx,
                               struct String_vector *strings, struct Stat *stat);
/* acl is filled with malloc'd memory: free with deallocate_ACL_vector.
 * Also ZBADARGUMENTS for a NULL acl. */
ZKR_API int zkr_get_acl(zkr_t *z, const char *path, struct ACL_vector *acl, struct Stat *stat);

/* ---- the server list, reconfiguration, watch removal (zookeeper.h's
 * zoo_set_servers, zoo_get_current_server, zookeeper_get_connected_host,
 * zoo_reconfig, zoo_remove_watches and their async forms) ---- */

/* Changes the virtual session's members to hosts (same syntax as zkr_init;
 * the chroot, if any, must be the handle's): servers new to the list get a
 * member session, members no longer in it are retired (they take no new
 * operation; their sessions close once idle; the owner session is never
 * closed for this - it moves when its connection drops).  Applied by the
 * monitor thread within milliseconds.  With follow_config on and following,
 * /zookeeper/config stays authoritative: its next change is applied over
 * this list.  Returns ZOK, a ZKR_EHOSTS_* code, ZBADARGUMENTS (NULL, or a
 * different chroot), ZKR_ECLOSING/ZKR_ECLOSED. */
ZKR_API int zkr_set_servers(zkr_t *z, const char *hosts);

/* zoo_set_servers_resolution_delay's mirror: accepted and ignored (each
 * member session has one address; the host names are re-resolved every
 * resolve_ms).  Returns ZOK, ZBADARGUMENTS (NULL, or delay_ms below -1,
 * as stock),
 * ZKR_ECLOSING/ZKR_ECLOSED. */
ZKR_API int zkr_set_servers_resolution_delay(zkr_t *z, int delay_ms);

/* "host:port" of the server holding the owner session (as given in the
 * host list; before the owner is chosen, the first member's), in a buffer
 * of the calling thread that the next call on that thread overwrites, as
 * stock's is.  NULL only for NULL or a closed handle. */
ZKR_API const char *zkr_get_current_server(zkr_t *z);

/* The owner session's server address (getpeername), into *addr; NULL while
 * the owner session is not connected, as stock. */
ZKR_API struct sockaddr *zkr_get_connected_host(zkr_t *z, struct sockaddr *addr,
                                                socklen_t *addr_len);

/* zoo_areconfig's mirror: a write, on the leader's session.  joining,
 * leaving, members and version as zoo_areconfig; the completion gets the
 * new configuration's data and Stat.  Returns as zkr_aset, plus
 * ZBADARGUMENTS when joining, leaving and members are all NULL. */
ZKR_API int zkr_areconfig(zkr_t *z, const char *joining, const char *leaving, const char *members,
                          int64_t version, data_completion_t completion, const void *data);
ZKR_API int zkr_reconfig(zkr_t *z, const char *joining, const char *leaving, const char *members,
                         int64_t version, char *buffer, int *buffer_len, struct Stat *stat);

/* zoo_remove_watches's mirrors: remove the watches of path of type wtype
 * (ZWATCHTYPE_CHILD, _DATA - data and exists -, _ANY) set with watcher and
 * watcherCtx (a watch set with watch=1 is the global watcher's), or every
 * watcher (_all_).  local: on the client only, no server request; else
 * each member session holding one asks its server, and the registration
 * goes when the server says ZOK.  A removed watcher is never called again.
 * Returns ZOK; ZNOWATCHER at once when no such watch is registered (not
 * for _all_: as stock asks its server, every working member session is
 * asked, and the completion gets ZNOWATCHER unless a server still held a
 * watch the client had removed only locally); ZBADARGUMENTS (path,
 * wtype); ZINVALIDSTATE (not local, session expired or auth failed);
 * ZKR_ECLOSING, ZKR_ENOMEM.  The completion (may be NULL; unlike
 * zoo_aremove_watches it is the function itself, not a pointer to it)
 * gets ZOK, ZNOWATCHER when every server answered so, or the first other
 * error (ZCONNECTIONLOSS, ZCLOSING, ...). */
ZKR_API int zkr_aremove_watches(zkr_t *z, const char *path, ZooWatcherType wtype,
                                watcher_fn watcher, void *watcherCtx, int local,
                                void_completion_t completion, const void *data);
ZKR_API int zkr_aremove_all_watches(zkr_t *z, const char *path, ZooWatcherType wtype, int local,
                                    void_completion_t completion, const void *data);
ZKR_API int zkr_remove_watches(zkr_t *z, const char *path, ZooWatcherType wtype, watcher_fn watcher,
                               void *watcherCtx, int local);
ZKR_API int zkr_remove_all_watches(zkr_t *z, const char *path, ZooWatcherType wtype, int local);

/* zoo_lock_auth/zoo_unlock_auth's mirrors: hold and release the lock of
 * the handle's credential list (zkr_add_auth and the replays wait while it
 * is held).  Return ZOK, ZBADARGUMENTS, ZKR_ECLOSED. */
ZKR_API int zkr_lock_auth(zkr_t *z);
ZKR_API int zkr_unlock_auth(zkr_t *z);

/* ---- read selection (docs/selectors.md) ---- */

/* What a read selector sees of one member.  Filled by zkroute for each
 * call of the selector, in an array on the calling thread's stack: valid
 * only during that call (copy what you keep). */
typedef struct zkr_member_info {
  int index;           /* member index, as in zkr_stats() */
  const char *address; /* "host:port" as given in the host list */
  zkr_role_t role;     /* from the last srvr reply */
  const char *zone;    /* zone label from the zones option, "" none */
  int local;           /* zone is the local_zone option (both non-empty) */
  int usable;          /* session connected and authenticated: a pick of
                            this member is accepted */
  int in_pool;         /* in the read pool: a usable, healthy read
                            candidate (follower, observer; the leader only
                            with read_from_leader or leader_read_weight) */
  int is_leader;       /* the member zkroute takes for the leader */
  double ewma_ms;      /* sync+read latency EWMA, -1 before a sample */
  int outstanding;     /* requests sent on its session, not completed
                            (reads, writes, probes) */
} zkr_member_info_t;

/* Picks the member for one read: returns an index into members (0..n-1).
 * Anything else (-1, out of range), or a member that is not usable, means
 * "use the default policy" (counted as a fallback in zkr_stats()).
 * Threads: called on whichever thread routes the read - the thread calling
 * a zkr_ read, a ZooKeeper completion thread (a read issued from a
 * completion, or one that was parked), or zkroute's monitor thread - and
 * possibly on several threads at once, so it must be thread-safe with
 * respect to ctx.  It runs inside zkroute's routing critical section: it
 * must be quick and must not block; any zkr_ call from inside it returns
 * ZKR_EINCALLBACK (calls that return no code return what they return for
 * NULL).  members and the strings it points to belong to zkroute. */
typedef int (*zkr_read_selector_fn)(const zkr_member_info_t *members, int n, void *ctx);

/* Installs fn (with ctx) as the read selector of z; fn NULL restores the
 * default policy.  Applies to reads the policy places: not to a read of a
 * path that a write of this handle has in flight (it follows the write, for
 * read-your-writes), nor to a watch set again where it lives.  When it
 * returns, no call of the previous selector is running or will start: its
 * ctx may be freed.  Returns ZOK, ZBADARGUMENTS (NULL handle),
 * ZKR_ECLOSING/ZKR_ECLOSED, or ZKR_EINCALLBACK from inside a selector. */
ZKR_API int zkr_set_read_selector(zkr_t *z, zkr_read_selector_fn fn, void *ctx);

/* Context of the ready-made selectors (NULL: every field its default).
 * One context may serve any number of handles and threads. */
typedef struct zkr_selector_ctx {
  const char *zone; /* same_zone: zone to prefer; NULL: the members
                            flagged local (the local_zone option) */
  uint64_t seed;    /* random draws: seed (0: a fixed constant); the
                            draw counter next to it is advanced atomically */
  uint64_t draws;   /* zkroute's counter; leave it 0 */
} zkr_selector_ctx_t;

/* Power of two choices: draws two distinct members of the read pool and
 * takes the one with the lower load, load = (outstanding + 1) x latency
 * EWMA (a member without a sample counts at the mean of those with one).
 * Returns -1 (the default policy) when the pool is empty.  ctx: a
 * zkr_selector_ctx_t or NULL (draws from a shared counter). */
ZKR_API int zkr_selector_p2c(const zkr_member_info_t *members, int n, void *ctx);

/* Same zone: as zkr_selector_p2c over the read-pool members of one zone
 * (ctx->zone, or the local_zone option); -1 (the default policy, over
 * every zone) when none of them is in the pool. */
ZKR_API int zkr_selector_same_zone(const zkr_member_info_t *members, int n, void *ctx);

/* ---- statistics ---- */
/* Latency histograms: the upper bounds of the buckets, in ms, chosen for
 * ZooKeeper (a loopback read takes about 0.5 ms, a session timeout is
 * seconds); a last bucket holds what took longer than the last bound. */
#define ZKR_LATENCY_BUCKETS 14
#define ZKR_LATENCY_BOUNDS_MS                                                                      \
  { 0.5, 1, 2.5, 5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10000 }
typedef struct zkr_latency_hist {
  uint64_t counts[ZKR_LATENCY_BUCKETS + 1]; /* samples per bucket (not
                                               cumulative); the last one:
                                               above the last bound */
  double sum_ms;                            /* of every sample */
} zkr_latency_hist_t;

typedef struct zkr_member_stats {
  char address[300]; /* "host:port" as given */
  zkr_role_t role;   /* from the last srvr reply */
  int64_t zxid;      /* from the last srvr reply, -1 unknown */
  int session_state; /* ZOO_*_STATE of this member's session */
  int64_t session_id;
  int connected; /* session connected and authenticated */
  int in_read_pool;
  int is_write_session;
  uint64_t reads, writes, syncs, errors;
  uint64_t coalesced;    /* reads that shared a sync sent for others
                            (sync_coalesce); reads per sync = reads / syncs */
  uint64_t samples;      /* latency samples taken */
  double ewma_ms;        /* read (sync+read) latency EWMA, -1 none */
  uint64_t ejections;    /* latency ejections from the read pool */
  double out_of_pool_ms; /* total time out of the read pool */
  uint64_t srvr_polls, srvr_failures;
  uint64_t srvr_shared;    /* srvr answers taken from another handle's
                            request (the process shares them) */
  uint64_t rescues;        /* times the owner session left this member for a
                            live server (docs/failover.md) */
  uint64_t recreated;      /* times its carrier session was replaced by a new
                            one (expired, or unreachable with watches) */
  int is_owner;            /* its session is the owner session */
  int hosted_on;           /* member whose server holds its session (its own) */
  uint64_t hedges;         /* hedge sync+read pairs sent to it (docs/hedging.md);
                            not in reads or syncs, which count the
                            application's reads sent to it first */
  char zone[32];           /* zone label (zones option), "" none */
  int outstanding;         /* requests sent, not completed */
  uint64_t selector_picks; /* reads the read selector sent here */
  int watches;             /* watches armed on its session now */
  int removed;             /* left /zookeeper/config: takes no operation */
  int parked;              /* no session, by the read_members cap (or
                              idle_read_members while idle) */
  int64_t server_id;       /* N of server.N in /zookeeper/config, -1 unknown */
  uint64_t reads_again;    /* reads sent again behind a new sync: their sync
                              was lost with its connection, and a server
                              answered them on the next one, after no sync
                              (docs/guarantees.md) */
  /* Latency of the replies servers gave, from send to reply: reads (the
   * samples of ewma_ms: a sync+read pair, a hedge, no probe) and writes. */
  zkr_latency_hist_t read_latency, write_latency;
} zkr_member_stats_t;

typedef struct zkr_stats {
  int n_members;
  int leader;       /* index of the leader, -1 unknown */
  int write_member; /* index of the write session, -1 none; the owner
                            session's member while it takes a
                            session-scoped write after a rescue */
  int policy;       /* zkr_policy_t in force */
  uint64_t leader_changes;
  /* The owner session: the application's session (docs/failover.md). */
  int owner;                /* member whose server holds it, -1 none yet */
  int owner_moved;          /* 1: re-attached away from its first member */
  int64_t owner_session_id; /* what zkr_client_id() says, 0 none yet */
  int owner_state;          /* ZOO_*_STATE of its zhandle */
  uint64_t owner_rescues;   /* re-attachments to a live server */
  /* Watches (docs/guarantees.md). */
  int watches;                  /* registered (armed, being re-armed, lost) */
  int watches_lost;             /* waiting for a re-arm to get through */
  uint64_t watch_rearms;        /* re-arms sent after a session was lost */
  uint64_t watch_missed_events; /* events a re-arm found missed, delivered */
  /* Hedged reads (docs/hedging.md).  A hedge is a second sync+read of an
   * unanswered read, on another member of the read pool. */
  int hedging;                 /* 1: hedge option on and policy hybrid */
  double hedge_delay_ms;       /* current hedge delay */
  uint64_t hedge_eligible;     /* reads sent that could be hedged */
  uint64_t hedges_sent;        /* second requests sent */
  uint64_t hedges_won;         /* ... whose reply was the one delivered */
  uint64_t hedges_capped;      /* hedges due but refused by hedge_max_pct */
  uint64_t hedges_no_member;   /* hedges due with no other pool member */
  uint64_t hedge_discarded;    /* replies dropped: the loser of each pair, and
                                an error while the other request was pending */
  int has_selector;            /* a read selector is installed */
  uint64_t selector_picks;     /* reads placed by the selector */
  uint64_t selector_fallbacks; /* selector said -1, out of range or an
                                  unusable member: default policy */
  /* Membership (docs/membership.md).  follows_config: 1 following
   * /zookeeper/config, 0 not read yet, -1 read but not followed (its
   * client addresses are not the connect string's), -2 off (option, or
   * a server without /zookeeper/config). */
  int follows_config;
  int64_t config_version; /* version of the last config read, -1 none */
  uint64_t config_reads, config_errors;
  uint64_t members_added, members_removed;
  /* Log lines of routing state changes (docs/operations.md): written to
   * ZooKeeper's log, and dropped by the storm limit. */
  uint64_t log_lines, log_dropped;
  zkr_member_stats_t members[]; /* n_members entries, removed ones too */
} zkr_stats_t;

/* Snapshot of the handle's statistics.  Returns ZOK and a malloc'd
 * snapshot in *out (free with zkr_stats_free), ZBADARGUMENTS or ZKR_ENOMEM. */
ZKR_API int zkr_stats(zkr_t *z, zkr_stats_t **out);
ZKR_API void zkr_stats_free(zkr_stats_t *s);

/* The same snapshot as one line of JSON (no newline), the one serializer
 * of the statistics: ZKROUTE_STATS records and `zkroute status --json`
 * are it.  Every field, its type, unit and meaning: docs/stats.md.  Its
 * "version" is ZKR_STATS_JSON_VERSION, raised when a field changes meaning
 * or is removed (fields may be added without it).  Returns ZOK and a
 * malloc'd string in *out (free it with free()), ZBADARGUMENTS (NULL z or
 * out), ZKR_ECLOSED or ZKR_ENOMEM. */
#define ZKR_STATS_JSON_VERSION 1
ZKR_API int zkr_stats_json(zkr_t *z, char **out);

/* The same snapshot in the Prometheus text exposition format (version
 * 0.0.4), written from the same schema as zkr_stats_json(): every metric,
 * its type and its JSON counterpart are in docs/stats.md.  Every sample
 * has a label handle, the handle's number in the process (counted from 1
 * at zkr_init, as the ZKROUTE_STATS records count them); member metrics
 * have member ("host:port") and role too.  The metrics option serves the
 * same text over HTTP for every handle that asks.  Returns ZOK and a
 * malloc'd string in *out (free it with free()), ZBADARGUMENTS (NULL z or
 * out), ZKR_ECLOSED or ZKR_ENOMEM. */
ZKR_API int zkr_stats_prometheus(zkr_t *z, char **out);

/* Describes Prometheus metric i (0, 1, ... until it returns
 * ZBADARGUMENTS): its name, its type ("counter", "gauge", "histogram"),
 * its labels besides handle ("member,role" or ""), the JSON field it
 * comes from ("leader_changes", "members[].reads") and one line of
 * meaning.  The table behind it is the schema both writers use;
 * `zkroute metrics` prints it, and docs/stats.md keeps that table.  Any
 * pointer may be NULL; the strings are static. */
ZKR_API int zkr_metric_info(int i, const char **name, const char **type, const char **labels,
                            const char **json, const char **help);

/* ---- names ---- */
/* Text for any code, ZooKeeper's or zkroute's; never NULL. */
ZKR_API const char *zkr_strerror(int code);
/* Symbolic name ("ZCONNECTIONLOSS", "ZKR_EHOSTS_BAD_PORT"); never NULL. */
ZKR_API const char *zkr_err_name(int code);
/* The words of zkr_stats_json() and the CLI; never NULL ("unknown"). */
ZKR_API const char *zkr_role_name(zkr_role_t role); /* "leader", ... */
ZKR_API const char *zkr_policy_name(int policy);    /* "hybrid", ... */
/* A ZOO_*_STATE: "connected", "connecting", "associating", "expired",
 * "auth-failed", "read-only", "not-connected"; 0 (a closed handle's
 * zkr_state) is "closed". */
ZKR_API const char *zkr_state_name(int state);

#ifdef __cplusplus
}
#endif
#endif
