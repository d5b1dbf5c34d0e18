/* The simulated world's shared types: the event loop and PRNG (world.c),
 * the ensemble with its log, sessions and servers (ensemble.c), the
 * network between the client machine and the servers (net.c) and the model
 * of one libzookeeper_mt zhandle per zookeeper_init (client.c).  Everything
 * runs on one thread; time is the world's clock in ns; every choice comes
 * from the one PRNG seeded from the schedule's seed.  docs/simulation.md
 * says what is modelled and where the model simplifies.
 *
 * The checkers (check_*.c) never include this header: they see only the
 * recorded history (history.h). */
#ifndef SIM_H
#define SIM_H

#include <stddef.h>
#include <stdint.h>
#include <zookeeper/zookeeper.h>

#define SIM_MS 1000000ULL
#define SIM_MAX_SRV 5
#define SIM_DMAX 40    /* largest znode value */
#define SIM_CHMAX 64   /* most children one reply lists */
#define SIM_MULTIMAX 4 /* most ops in one multi */
#define SIM_MAXPATH 64

/* ---- world.c: the event queue, the clock and the PRNG ---- */

typedef struct sim_world sim_world_t;
typedef void (*sim_fn)(void *a, uint64_t b);

typedef struct sim_ev {
  uint64_t t, seq;
  sim_fn fn;
  void *a;
  uint64_t b;
  int app; /* an application or completion thread's, or the library's own
              loop: waits out sim_pass (world.c) */
} sim_ev_t;

/* Planted model bugs (tests only): each makes the model break one of
 * ZooKeeper's rules so that a checker must see it. */
enum {
  SIM_BUG_NONE = 0,
  SIM_BUG_SYNC_EARLY = 1,      /* a follower answers sync before applying */
  SIM_BUG_DROP_WATCH = 2,      /* the client drops one watch notification */
  SIM_BUG_REORDER = 3,         /* the client completes two replies out of order */
  SIM_BUG_DUP_WATCHER = 4,     /* a watcher pair is called twice for one event */
  SIM_BUG_STALE_READ = 5,      /* a follower reads before its own session's writes applied */
  SIM_BUG_LOST_COMPLETION = 6, /* one completion is never called */
  SIM_BUG_FALSE_LOSS = 7       /* an answered get completes ZCONNECTIONLOSS */
};

struct sim_world {
  uint64_t now, seq, events;
  sim_ev_t *heap;
  size_t n, cap;
  uint64_t rng[4];
  int bug;        /* SIM_BUG_* */
  int bug_done;   /* a one-shot planted bug fired */
  uint64_t stuck; /* events at the same instant in a row (livelock watchdog) */
  int livelock;
  int io_loss_pct;  /* --io-loss: % of syncs after which the I/O thread drops the
                      connection before the caller's next request (client.c) */
  int slow_calls;   /* --slow-calls: zookeeper_init takes time (client.c) */
  uint64_t rng2[4]; /* the draws of --slow-calls: a stream of their own */
  int in_pass;      /* inside sim_pass */
};

extern sim_world_t *sim_w; /* the world in force (the zkapi table has no argument for it) */
/* At teardown: drop(a) for every event still queued that would call fn, so
 * what its argument owns is freed (messages in flight); the event is then
 * never run. */
void sim_pending_each(sim_fn fn, void (*drop)(void *a));
/* Called after every event (routed mode steps the library there). */
extern void (*sim_after_event)(void);

void sim_world_init(sim_world_t *w, uint64_t seed);
void sim_world_free(sim_world_t *w);
void sim_at(uint64_t t, sim_fn fn, void *a, uint64_t b);
void sim_after(uint64_t dt, sim_fn fn, void *a, uint64_t b);
/* The same for an event of a thread that calls into the library or is
 * called by it (application, completion thread, the library's loops). */
void sim_after_app(uint64_t dt, sim_fn fn, void *a, uint64_t b);
/* Time passes inside a call: the world's own events due in the next dt
 * run (servers, the network, the client's I/O threads and timers), the
 * threads that would call into the library or be called by it wait
 * (sim_after_app's events): they run after, in their order.  A zkapi call
 * that blocks - a name lookup in zookeeper_init - leaves the caller's
 * lock held and the other zhandles' I/O going on. */
void sim_pass(uint64_t dt);
uint64_t sim_rand2(void);
/* Runs one event; 0 when the queue is empty. */
int sim_step(void);
/* Runs events until done(arg) holds, the queue empties or time passes
 * limit; returns done(arg) at the end. */
int sim_run_until(int (*done)(void *), void *arg, uint64_t limit);
uint64_t sim_rand(void);
/* Uniform in [lo, hi]. */
uint64_t sim_range(uint64_t lo, uint64_t hi);
/* 1 with probability pct/100. */
int sim_chance(int pct);

/* ---- ensemble.c: servers, the log, sessions ---- */

enum { ROLE_DOWN = 0, ROLE_LOOKING, ROLE_FOLLOWER, ROLE_LEADER };

/* One znode version in the multi-version store. */
typedef struct sim_nver {
  int32_t idx; /* log index of the txn that made it (-1: initial) */
  uint8_t exists, dlen;
  int32_t version, cversion, aversion, nchild;
  int64_t czxid, mzxid, pzxid, owner;
  char data[SIM_DMAX];
} sim_nver_t;

typedef struct sim_path {
  char *name; /* full path */
  int parent; /* path id, -1 for "/" */
  int *kids, nkids, capkids;
  sim_nver_t *v;
  int nv, capv;
  uint32_t hash;
} sim_path_t;

/* Kinds of sub-ops in a txn (and of requests). */
enum {
  OP_NONE = 0,
  OP_CREATE,
  OP_DELETE,
  OP_SET,
  OP_CHECK,
  OP_SETACL,
  OP_MULTI,
  OP_GET,
  OP_EXISTS,
  OP_CHILDREN,
  OP_GETACL,
  OP_SYNC,
  OP_PING,
  OP_AUTH,
  OP_SETWATCHES,
  OP_CHECKWATCHES,  /* remove one watcher (server checks) */
  OP_REMOVEWATCHES, /* remove all */
  OP_CLOSE,
  OP_CREATE_SESSION,
  OP_ERROR
};

typedef struct sim_subop {
  int kind; /* OP_CREATE, OP_DELETE, OP_SET, OP_CHECK, OP_SETACL */
  int path; /* path id (the actual one for a sequential create) */
  int mode, version, dlen;
  char data[SIM_DMAX];
  int err; /* per-op result in a multi */
  int32_t newversion;
} sim_subop_t;

typedef struct sim_txn {
  int64_t zxid;
  int type;    /* OP_CREATE.. OP_MULTI, OP_CLOSE, OP_CREATE_SESSION, OP_ERROR */
  int err;     /* OP_ERROR: the error the request got */
  int sess;    /* session index */
  int nops;    /* sub-ops in ops[] (a close lists its ephemeral deletes) */
  int ops_off; /* into ens.ops */
  uint64_t t_prop, t_commit;
  int origin;           /* server that forwarded it, -1 none */
  struct sim_sreq *req; /* the request waiting for it there */
  uint32_t req_gen;
} sim_txn_t;

typedef struct sim_sess {
  int64_t id;
  int create_idx, close_idx; /* log indexes of its createSession / closeSession txns */
  char passwd[16];
  int timeout;
  uint64_t last_touch;
  int owner;   /* server holding its connection */
  int state;   /* SESS_* */
  int eph_cnt; /* ephemerals it owns at the latest state */
} sim_sess_t;

enum { SESS_PROPOSED = 1, SESS_ALIVE, SESS_CLOSING, SESS_CLOSED };

struct sim_conn;

typedef struct sim_apply {
  int idx;
  uint64_t t;
} sim_apply_t;

typedef struct sim_srv {
  int id, role, hung, group;
  uint32_t epoch;
  int leader;      /* whom it follows (itself when leading), -1 */
  int applied;     /* log entries applied */
  int commit_seen; /* a leader: what it knows is committed */
  uint64_t lag;    /* extra apply delay */
  sim_apply_t *aq; /* apply queue */
  int aq_head, aq_n, aq_cap;
  int apply_pending;
  struct sim_conn **conns;
  int nconns, capconns;
  /* events held while hung */
  sim_ev_t *inbox;
  int nin, capin;
  uint64_t bad_since;      /* follower: its leader silent since; leader: no quorum since */
  uint64_t stepdown_delay; /* how long it takes to notice */
  uint64_t looking_since;
  uint32_t gen; /* bumps at every role change */
} sim_srv_t;

typedef struct sim_ens {
  int n;
  sim_srv_t srv[SIM_MAX_SRV];
  sim_path_t *paths;
  int npaths, cappaths;
  int *pidx; /* hash -> path id + 1 */
  int pidx_cap;
  sim_txn_t *log;
  int nlog, caplog, committed;
  /* Every read a server served that found no node: when, which path, and
   * the server's last applied zxid (copied into the history for the
   * watch checker: which state a ZNONODE answer came from). */
  struct sim_served {
    uint64_t t;
    int path;
    int kind;  /* OP_GET, OP_EXISTS, OP_CHILDREN, OP_GETACL */
    int watch; /* the read set a watch */
    int64_t zxid;
  } * served;
  int nserved, capserved;
  sim_subop_t *ops;
  int nops, capops;
  sim_sess_t *sess;
  int nsess, capsess;
  uint32_t epoch, counter; /* zxid = epoch << 32 | counter */
  int leader;              /* current leader, -1 none */
  uint64_t election_at;    /* a scheduled election, 0 none */
  uint64_t sync_timeout;   /* followers notice a silent leader after it */
  uint64_t election_delay;
  uint64_t ss_delay; /* server-to-server one way */
  int64_t next_sid;
} sim_ens_t;

extern sim_ens_t *sim_e;

void ens_init(sim_ens_t *e, int n);
void ens_free(sim_ens_t *e);
int ens_path(const char *path); /* interns; -1 if invalid */
const sim_nver_t *ens_state(int path, int applied);
int ens_quorum(void);
/* Faults. */
void ens_kill(int s);
void ens_restart(int s);
void ens_hang(int s);
void ens_resume(int s);
void ens_set_lag(int s, uint64_t lag);
void ens_partition(const int *group); /* group[s]: servers talk only within a group */
void ens_expire(int64_t session_id);
/* srvr of server s (zkr__srvr_reply_t *out, as void to keep srvr.h out). */
/* srvr of server s: 0 answered (*role ROLE_*, *zxid), -1 refused, -2 no
 * answer in time. */
int ens_srvr(int s, int *role, int64_t *zxid);
int64_t ens_last_zxid(int s);
/* Every server up, not hung, without lag and following the current
 * leader in its epoch. */
int ens_healthy(void);
/* Settles: heals everything and lets a leader be elected. */
void ens_heal(void);

/* Called when some server starts (on 1) or stops (on 0) being a deposed
 * leader that may still answer syncs from old state (ZOOKEEPER-1675). */
extern void (*sim_stale_hook)(int s, int on);
/* Called when the client model injects a fault of its own (--io-loss: a
 * connection lost between two requests), so the history marks it. */
extern void (*sim_fault_hook)(const char *what);

/* Server side of the protocol, called by net.c when a message arrives. */
struct sim_msg;
void ens_recv(int s, struct sim_msg *m);
void ens_conn_closed(int s, struct sim_conn *c);

/* ---- net.c: connections and messages ---- */

typedef struct sim_sreq {
  struct sim_sreq *next;
  uint32_t gen;
  int refs, orphan;
  struct sim_conn *conn;
  int kind, xid, state;
  int64_t sid; /* handshake: session id asked for (0 new), then given */
  char passwd[16];
  int timeout, valid;
  int path, mode, version, watch, dlen;
  char data[SIM_DMAX];
  int nops;
  sim_subop_t ops[SIM_MULTIMAX];
  int wtype; /* remove-watches type */
  /* SetWatches */
  int *wpaths, nwd, nwe, nwc;
  int64_t relzxid;
  int target; /* sync: index the server must have applied */
  int txn;    /* write: log index */
  int err;
  /* Refused for a moved session (the owner check of the leader's
   * PrepRequestProcessor): it gets no reply, and the connection is closed
   * when its turn to be answered comes (FinalRequestProcessor). */
  int moved;
  int64_t zxid; /* reply header zxid */
  int res_path; /* created path */
  sim_nver_t st;
  int nkids, kids[SIM_CHMAX];
  int mres_err[SIM_MULTIMAX], mres_path[SIM_MULTIMAX];
  int32_t mres_ver[SIM_MULTIMAX];
  /* A multi's set: the node's Stat after the multi (the C client gives a
   * set's SetDataResponse Stat in its result: zookeeper.c
   * deserialize_multi -> deserialize_response, COMPLETION_STAT). */
  sim_nver_t mres_st[SIM_MULTIMAX];
} sim_sreq_t;

/* Message types. */
enum { M_SYN = 1, M_SYNACK, M_RST, M_FIN, M_CONNREQ, M_CONNRESP, M_REQ, M_REPLY, M_NOTIFY };

typedef struct sim_msg {
  struct sim_msg *next;
  int type;
  struct sim_conn *conn;
  int to_server; /* direction */
  /* M_CONNREQ / M_CONNRESP */
  int64_t sid, last_zxid;
  char passwd[16];
  int timeout;
  /* M_REQ: a request; M_REPLY: the answered request */
  sim_sreq_t *req;
  /* M_NOTIFY */
  int ntype, npath;
} sim_msg_t;

typedef struct sim_conn {
  int id, server;
  struct sim_zh *zh;
  int cli_open, srv_open, accepted;
  int sess; /* server side: the session bound to it, -1 */
  uint64_t last_c2s, last_s2c;
  /* server side */
  sim_sreq_t *qhead, *qtail;    /* session pipeline */
  int *wdata, nwdata, capwdata; /* server watch tables (path ids) */
  int *wchild, nwchild, capwchild;
  int refs;
} sim_conn_t;

typedef struct sim_net {
  int cut[SIM_MAX_SRV];        /* client machine <-> server */
  uint64_t delay[SIM_MAX_SRV]; /* extra one-way delay */
  uint64_t base;               /* one-way base delay */
  sim_msg_t *free_msgs;
  sim_sreq_t *free_reqs;
  sim_conn_t **conns;
  int nconns, capconns;
} sim_net_t;

extern sim_net_t *sim_n;

void net_init(sim_net_t *n);
void net_free(sim_net_t *n);
sim_msg_t *net_msg(int type, sim_conn_t *c);
void net_msg_free(sim_msg_t *m);
sim_sreq_t *net_req(void);
void net_req_free(sim_sreq_t *r);
sim_conn_t *net_conn(int server, struct sim_zh *zh);
/* Sends m over its connection toward the server or the client. */
void net_send(sim_msg_t *m, int to_server);
/* The client machine <-> server link. */
void net_cut(int s, int on);
/* Resets every connection to server s (both sides closed at once). */
void net_reset(int s);

/* ---- client.c: the zhandle model ---- */

/* Client callbacks into the client model from net.c. */
void cli_recv(sim_msg_t *m);

/* The table of zkapi.h. */
struct zkr__zk;
const struct zkr__zk *cli_table(void);
void cli_init(void);
void cli_free(void);
/* The sessions of every handle opened so far (the ensemble-wide view). */
int cli_handle_count(void);

/* Hooks the recorder sets: every watcher call and every completion of a
 * handle made through the table pass through the application's own
 * functions, so the recorder lives in workload.c, not here. */

#endif
