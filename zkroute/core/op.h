/* The operation object (zkr__op_*): one application call from the API to its
 * completion, its copied arguments, and the copiers of ACLs, child lists
 * and multi ops. */
#ifndef ZKR_OP_H
#define ZKR_OP_H

#include <stddef.h>
#include <stdint.h>

#include "model/queue.h"
#include "zkroute.h"

struct zkr;
struct zkr__sync;

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

/* What an operation is (zkr__op_t.flags).  Set by the thread that builds
 * the operation, before it is listed or sent (zkr__api_check_submit, the
 * hedger's and the prober's sends), and never written after: no lock
 * guards them because none is needed, which is also why these - and only
 * these - may share a word. */
enum {
  ZKR__OP_F_WRITE = 1u << 0,        /* goes through the write gate as a write */
  ZKR__OP_F_OWNER = 1u << 1,        /* session-scoped: an ephemeral create, or a
                                       multi holding one; runs on the owner
                                       session (DESIGN.md section 4) */
  ZKR__OP_F_CREATE2 = 1u << 2,      /* create2 / get_children2 flavour */
  ZKR__OP_F_DIRECT = 1u << 3,       /* completes on the replying thread (below) */
  ZKR__OP_F_BARRIER = 1u << 4,      /* zkr_async (issue order, below) */
  ZKR__OP_F_WATCH_REUSED = 1u << 5, /* watch is an armed record set again */
  ZKR__OP_F_HAS_ACL = 1u << 6,      /* acl holds a copy */
  ZKR__OP_F_HEDGE = 1u << 7,        /* the second request of primary */
  ZKR__OP_F_PROBE = 1u << 8         /* a health probe of an ejected member */
};

/* A hedged primary's state (zkr__op_t.h_flags): under the hedger's mutex
 * only (zkr__hedger_*). */
enum {
  ZKR__OP_H_DELIVERED = 1u << 0, /* the application's completion ran or is running */
  ZKR__OP_H_QUEUED = 1u << 1     /* waits in the hedger's queue */
};

/* An operation.  Its flags words are grouped by what guards them, and no
 * word holds fields under two different guards: a write of one bit is a
 * write of the whole word, so two guards would race.  The ints left
 * single below are each written under one guard, said beside it, or by
 * threads handing the operation on to each other (a send happens before
 * its completion runs) rather than under a lock; those stay words of
 * their own. */
typedef struct zkr__op {
  struct zkr *z;
  zkr__op_type_t type;
  unsigned flags; /* ZKR__OP_F_*: fixed before it is shared */
  /* Set by the routing thread in zkr__router_route before the send or park (no
   * lock; the send hands them on), read by the completion after. */
  int ordered; /* a read that must follow an in-flight write */
  int gated;   /* goes through the write gate (FIFO on the write session) */
  /* Under gate_mu. */
  int parked;    /* waited in the gate's queue */
  int resync;    /* an ordered read sent on another session than the writes
                 it follows: needs a sync before it (zkr__router_gate_*) */
  int err;       /* why a parked operation could not be sent */
  int member;    /* member slot it was dispatched to, -1 not yet */
  zhandle_t *zh; /* the member's handle it was sent on */
  uint64_t start_ns;

  /* Arguments, copied so a deferred operation owns them. */
  char *path;
  char *value;
  int valuelen;
  struct ACL_vector acl;
  int mode;
  int64_t ttl;
  int version;
  int multi_count;
  zoo_op_t *multi_ops;               /* deep copy */
  zoo_op_result_t *multi_results;    /* the caller's, filled by ZooKeeper */
  char *joining, *leaving, *members; /* reconfig */
  zkr__watch_t *watch;               /* NULL: no watch */
  int watch_unbound;                 /* a reused watch whose session was replaced
                                        before the read was sent: sent without it
                                        (set by the sending thread before the
                                        send; no lock) */
  zkr__watch_t *cover_w;             /* the record a remove_all covered: that call
                                        completes only after this read is handed
                                        on, as on one stock session (the read was
                                        sent first); NULL none */
  uint64_t watch_id;                 /* the record the read armed (0 none): while
                                        the read is held, that record's event waits
                                        for it, as a server sends a read's reply
                                        before the events of the watch it set */
  int watch_merged;                  /* ... set again while armed (zkr__watch_reuse_done):
                                        its event waits for this read's hand-on */
  int pin;                           /* member it must go to, -1 any */

  /* Paths registered in the in-flight set by this write. */
  char **inflight;
  int n_inflight;

  zkr__cb_shape_t shape;
  zkr__cb_t cb;
  const void *data;
  /* The completion is zkroute's own blocking-call waiter (waiter_wait): it
   * runs on the thread that got the reply, never on the delivery thread,
   * so a blocking call made from a callback completes (stock
   * libzookeeper_mt finishes synchronous calls on its I/O thread too):
   * ZKR__OP_F_DIRECT. */

  zkr__queue_link_t co_link; /* its member's coalescing queue (zkr__dispatch_*) */
  int co_waiting;            /* ... waits in it for the next sync: under the
                                member's co_mu, but co_unqueue looks at it
                                first without the lock, so it stays an int */
  struct zkr__sync *sync;    /* the sync it was sent behind, held until its
                                completion looks at it
                                (zkr__dispatch_read_again); NULL none */
  int sync_held;             /* ... its answer came behind that sync, which
                                no lost connection undid: its server read
                                after every change committed before the sync
                                was sent - after the read was issued
                                (zkr__dispatch_read_again sets it) */

  /* The application's order (zkr__barrier_*): every operation the application
   * issued, in issue order, until its completion was handed on.  A
   * barrier (zkr_async, ZKR__OP_F_BARRIER) is handed on only once every
   * operation before it was.  app, held and b_ready are written under
   * order_mu; app is also read without it by the completion (zkr__completion_*),
   * so they are left three ints rather than one word. */
  int app;  /* listed */
  int held; /* its completion waits for the operations before it
               (session consistency's FIFO order): kept is its reply */
  struct zkr__reply *kept;
  int kept_rc;               /* no kept reply: the result it completes with (0: ZKR_ENOMEM) */
  zkr__queue_link_t wf_link; /* the held reads (zkr__watch_*) */
  uint64_t held_ns;          /* ... since when */
  /* An application read's place in the handle's reads (zkr__api_read: 1,
   * 2, ...; 0 for the library's own): a record armed by a read issued
   * after it neither holds it nor gets an event made from what it saw -
   * on one stock session it would have completed before that pair was
   * set (zkr__watch_*). */
  uint64_t read_seq;
  /* Counted in reads_out / writes_out until it completes (zkr__router_*): set
   * by the routing thread (under gate_mu or not), cleared by the
   * completion - no one lock, so two ints. */
  int fifo_read;
  int fifo_write;
  int b_ready; /* barrier: its own reply came (b_rc, b_path) */
  int b_rc;
  char *b_path;
  zkr__queue_link_t ord_link; /* the handle's issue order, while app */
  uint64_t ord_seq;           /* ... its issue number there (zkr__barrier_add) */

  /* Hedged reads (zkr__hedger_*).  A hedgeable read is the primary: it carries
   * the application's completion, which runs once, with the first reply of
   * either request.  Its hedge is an op of its own (ZKR__OP_F_HEDGE,
   * primary set) sent to another member, with no completion of its own.
   * The h_ fields of the primary are guarded by the hedger's mutex once it
   * is sent. */
  int hedge_ok; /* primary: may be hedged (set in zkr__router_route, no lock) */
  int h_armed;  /* primary sent with hedging armed (set before the send,
                   cleared by the sender if the send failed; no lock) */
  struct zkr__op *primary;
  unsigned h_flags;  /* ZKR__OP_H_*, under the hedger's mutex */
  int h_refs;        /* primary's reply, its queue entry, its hedge */
  int h_attempts;    /* requests sent whose completion has not run */
  int h_deferred_rc; /* an error reply held back while the other was pending */
  uint64_t hedge_at_ns;
  zkr__queue_link_t hq_link; /* the hedger's queue, while h_queued */

  zkr__queue_link_t gate_link; /* the write gate's queue, while parked */
  /* Outstanding list (zkr__dispatch_*): every operation handed to ZooKeeper
   * until its completion runs, so close can complete those that
   * zookeeper_close drops (ZOOKEEPER-2894/3868). */
  zkr__queue_link_t out_link;
  int outstanding; /* in out_q; under out_mu */
} zkr__op_t;

/* The operation that holds link as its field (NULL for NULL); link is
 * evaluated once, so ZKR__OP_OF(zkr__queue_pop(q), f) pops one.
 * @locks none. */
static inline zkr__op_t *zkr__op_at(zkr__queue_link_t *link, size_t offset) {
  return link ? (zkr__op_t *)(void *)((char *)link - offset) : NULL;
}
#define ZKR__OP_OF(link, field) zkr__op_at((link), offsetof(zkr__op_t, field))

/* Whether op has flag f (ZKR__OP_F_*), as 0 or 1.
 * @locks none. */
static inline int zkr__op_has(const zkr__op_t *op, unsigned f) { return (op->flags & f) != 0; }

/* Sets (on) or clears flag f; only while op is not yet shared.
 * @locks none: the op's owner thread. */
static inline void zkr__op_set(zkr__op_t *op, unsigned f, int on) {
  op->flags = on ? op->flags | f : op->flags & ~f;
}

/* Any thread.  @locks none. */
zkr__op_t *zkr__op_new(struct zkr *z, zkr__op_type_t type, const char *path);
/* The op's last holder, no watch_mu held.  @locks as zkr__watch_discard or _reuse_done and the
 * remove cover hooks: watch_mu, then hand-ons without it. */
void zkr__op_free(zkr__op_t *op);
/* The application's thread.  @locks none. */
int zkr__op_copy_acl(zkr__op_t *op, const struct ACL_vector *acl);
/* The application's thread.  @locks none. */
int zkr__op_copy_multi(zkr__op_t *op, int count, const zoo_op_t *ops);
/* Any thread.  @locks none. */
int zkr__op_acl_copy(struct ACL_vector *dst, const struct ACL_vector *src);
/* Any thread.  @locks none. */
void zkr__op_acl_free(struct ACL_vector *v);
/* Any thread.  @locks none. */
int zkr__op_strings_copy(struct String_vector *dst, const struct String_vector *src);
/* @locks none. */
int zkr__op_mode_ephemeral(int mode);

#endif
