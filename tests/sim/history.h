/* The recorded history of one schedule: what the application invoked and
 * what it got back (operations with their values, completions, watcher
 * calls, the client id it saw), and the ensemble's committed log of
 * transactions with their zxids and commit times.  Plain data: the
 * checkers (check_*.c) read only this, never the model or the library. */
#ifndef SIM_HISTORY_H
#define SIM_HISTORY_H

#include <stdint.h>

#define H_PATH 48
#define H_VAL 40
#define H_SUBS 4
#define H_MAXGEN 16
#define H_MAXWIN 32

/* Operation kinds. */
enum {
  H_CREATE = 1,
  H_DELETE,
  H_SET,
  H_GET,
  H_EXISTS,
  H_CHILDREN,
  H_SYNC,
  H_MULTI,
  H_GETACL,
  H_SETACL,
  H_RMWATCH, /* one pair (mode 0) or all (mode 1) */
  H_AUTH,
  H_CLOSE,
  H_CHECK /* a multi's sub-op only */
};

/* Create modes (ZooKeeper's). */
#define H_EPHEMERAL 1
#define H_SEQUENCE 2

typedef struct hsub {
  int kind; /* H_CREATE, H_DELETE, H_SET, H_CHECK */
  char path[H_PATH];
  char value[H_VAL];
  int vlen, version, mode, err;
  char created[H_PATH];
  int32_t newversion; /* a set's stat, when returned */
} hsub_t;

typedef struct hop {
  int id, task, gen, kind;
  char path[H_PATH];
  char value[H_VAL]; /* written value, or the value a get returned */
  int vlen;
  int version; /* expected version of a write (-1 none) */
  int mode;    /* create mode; the watcher type of a removal */
  int pair;    /* watcher pair set by a read or removed, -1 none */
  int stat;    /* 1: the completion carries a Stat (create2) */
  uint64_t t_inv, t_cmp;
  int e_inv, e_cmp; /* positions in the event stream */
  int e_ret;        /* events recorded before the call returned */
  int ext;          /* made by the other client (the external writer), not the handle */
  int blocking;     /* a blocking call: its completion is recorded when it returned */
  int e_sync;       /* a read pipelined after a zoo_async: that sync's invocation, else -1 */
  int call_rc;      /* what the zoo_/zkr_ call returned */
  int rc;           /* what the completion said */
  int ncompl;       /* completions seen (must end at 1 when call_rc is ZOK) */
  int exists;
  int32_t version_out, cversion, nchild;
  int64_t mzxid, czxid, pzxid, owner;
  char created[H_PATH];
  int64_t client_id; /* zoo_client_id when it completed (-1: it returned NULL) */
  int nsub;
  hsub_t sub[H_SUBS];
} hop_t;

/* Event stream entries, in the order they happened. */
enum { E_INVOKE = 1, E_COMPLETE, E_WATCH, E_MARK };

typedef struct hev {
  int type;
  int op; /* E_INVOKE, E_COMPLETE */
  uint64_t t;
  int gen;
  /* E_WATCH */
  int pair, wtype, wstate;
  char path[H_PATH];
  int64_t client_id;
  char mark[48];
  int stale; /* E_MARK: 1 a deposed leader may serve old state from here, 2 no more */
} hev_t;

/* The committed log. */
typedef struct htxn {
  int64_t zxid;
  uint64_t t_commit;
  int close;       /* a closeSession (expiry or close) */
  int close_asked; /* ... a client sent it (not the leader's expiry) */
  int create_session;
  int64_t session;
  int first, n; /* into subs */
} htxn_t;

typedef struct hlsub {
  int kind; /* H_CREATE, H_DELETE, H_SET */
  char path[H_PATH];
  char value[H_VAL];
  int vlen;
  int64_t owner;
  int32_t version; /* after the txn */
} hlsub_t;

/* A read a server served that found no node (any client's): when, the
 * path, and the server's last applied zxid - the state the answer came
 * from, which a ZNONODE answer does not carry. */
typedef struct hnone {
  uint64_t t;
  char path[H_PATH];
  int kind;  /* H_GET, H_EXISTS, H_CHILDREN (0: another read) */
  int watch; /* it set a watch */
  int64_t zxid;
} hnone_t;

typedef struct hgen {
  int default_pair;
  int64_t client_id; /* first non-zero client id seen */
  uint64_t t_open, t_end;
  int ended; /* 1 expired or auth failed, 2 closed by the application */
  uint64_t t_ended;
  int settled; /* closed at the end of the run, after the heal and 2 s of quiet */
} hgen_t;

typedef struct hist {
  hop_t *ops;
  int nops, capops;
  hev_t *ev;
  int nev, capev;
  htxn_t *log;
  int nlog, caplog;
  hlsub_t *subs;
  int nsubs, capsubs;
  hnone_t *nones; /* in the order they were served */
  int nnones, capnones;
  hgen_t gens[H_MAXGEN];
  int ngens;
  int npairs;
  uint64_t t_end;   /* end of the run (quiescent) */
  uint64_t t_quiet; /* from here the ensemble was healed and the client idle */
  int healthy;      /* the ensemble had every server following one leader before
                           the first fault, first at t_healthy */
  uint64_t t_healthy;
  int nmarks; /* E_MARK events so far */
  /* Later spans in which the ensemble was healthy with no incident
   * lasting, after the first fault: [start, end). */
  struct {
    uint64_t start, end;
  } hwin[H_MAXWIN];
  int nhwin;
  uint64_t session_ms;  /* the session timeout asked for */
  int fifo_completions; /* stock mode: every completion in issue order */
  int writes_after_end; /* --writes-after-end: judge acknowledged writes committed
                           after the application's session ended (check_session.c) */
  int misuse;           /* API misuse the model saw (calls on a closed handle...) */
  char misuse_msg[160];
  int no_quiescence; /* the run could not settle */
  int livelock;
} hist_t;

void hist_init(hist_t *h);
void hist_free(hist_t *h);
hop_t *hist_op(hist_t *h);
hev_t *hist_ev(hist_t *h, int type);
htxn_t *hist_txn(hist_t *h);
hlsub_t *hist_lsub(hist_t *h, htxn_t *t);
hnone_t *hist_none(hist_t *h);

#endif
