/* The operation object (op.c): one application call from the API to its
 * completion, its copied arguments, and the copiers of ACLs, child lists
 * and multi ops. */
#ifndef ZKR_OP_H
#define ZKR_OP_H

#include <stddef.h>
#include <stdint.h>

#include "model/queue.h"
#include "zkroute.h"

struct zkr;

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
  int is_write;  /* goes through the write gate as a write */
  int owner_op;  /* session-scoped: an ephemeral create, or a multi holding
                     one; runs on the owner session (DESIGN.md section 4) */
  int ordered;   /* a read that must follow an in-flight write */
  int gated;     /* goes through the write gate (FIFO on the write session) */
  int parked;    /* waited in the gate's queue */
  int resync;    /* an ordered read sent on another session than the writes
                     it follows: needs a sync before it (router.c) */
  int err;       /* why a parked operation could not be sent */
  int member;    /* member slot it was dispatched to, -1 not yet */
  zhandle_t *zh; /* the member's handle it was sent on */
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
  int create2; /* create2 / get_children2 flavour */
  int multi_count;
  zoo_op_t *multi_ops;               /* deep copy */
  zoo_op_result_t *multi_results;    /* the caller's, filled by ZooKeeper */
  char *joining, *leaving, *members; /* reconfig */
  zkr__watch_t *watch;               /* NULL: no watch */
  int watch_reused;                  /* watch is an armed record set again */
  int watch_unbound;                 /* ... whose session was replaced before
                                   the read was sent: sent without it */
  uint64_t watch_id;                 /* the record the read armed (0 none): while
                                        the read is held, that record's event waits
                                        for it, as a server sends a read's reply
                                        before the events of the watch it set */
  int pin;                           /* member it must go to, -1 any */

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

  int probe;                 /* a health probe of an ejected member, not the app's */
  zkr__queue_link_t co_link; /* its member's coalescing queue (dispatch.c) */
  int co_waiting;            /* ... waits in it for the next sync */

  /* The application's order (barrier.c): every operation the application
   * issued, in issue order, until its completion was handed on.  A
   * barrier (zkr_async) is handed on only once every operation before it
   * was. */
  int app;     /* listed */
  int barrier; /* zkr_async */
  int held;    /* its completion waits for the operations before it
                  (session consistency's FIFO order): kept is its reply */
  struct zkr__reply *kept;
  int kept_rc;               /* no kept reply: the result it completes with (0: ZKR_ENOMEM) */
  zkr__queue_link_t wf_link; /* the held reads (watch.c) */
  uint64_t held_ns;          /* ... since when */
  int fifo_read;             /* a read counted in reads_out until it completes (router.c) */
  int fifo_write;            /* a write counted in writes_out until it completes */
  int b_ready;               /* barrier: its own reply came (b_rc, b_path) */
  int b_rc;
  char *b_path;
  zkr__queue_link_t ord_link; /* the handle's issue order, while app */

  /* Hedged reads (hedge_apply.c).  A hedgeable read is the primary: it carries
   * the application's completion, which runs once, with the first reply of
   * either request.  Its hedge is an op of its own (is_hedge, primary set)
   * sent to another member, with no completion of its own.  The h_ fields
   * of the primary are guarded by the hedger's mutex once it is sent. */
  int hedge_ok; /* primary: may be hedged (router.c) */
  int h_armed;  /* primary sent with hedging armed (set before the send,
                     never changed after it) */
  int is_hedge; /* the second request of primary */
  struct zkr__op *primary;
  int h_refs;        /* primary's reply, its queue entry, its hedge */
  int h_attempts;    /* requests sent whose completion has not run */
  int h_delivered;   /* the application's completion ran or is running */
  int h_queued;      /* waits in the hedger's queue */
  int h_deferred_rc; /* an error reply held back while the other was pending */
  uint64_t hedge_at_ns;
  zkr__queue_link_t hq_link; /* the hedger's queue, while h_queued */

  zkr__queue_link_t gate_link; /* the write gate's queue, while parked */
  /* Outstanding list (dispatch.c): every operation handed to ZooKeeper
   * until its completion runs, so close can complete those that
   * zookeeper_close drops (ZOOKEEPER-2894/3868). */
  zkr__queue_link_t out_link;
  int outstanding;
} zkr__op_t;

/* The operation that holds link as its field (NULL for NULL); link is
 * evaluated once, so ZKR__OP_OF(zkr__queue_pop(q), f) pops one. */
static inline zkr__op_t *zkr__op_at(zkr__queue_link_t *link, size_t offset) {
  return link ? (zkr__op_t *)(void *)((char *)link - offset) : NULL;
}
#define ZKR__OP_OF(link, field) zkr__op_at((link), offsetof(zkr__op_t, field))

zkr__op_t *zkr__op_new(struct zkr *z, zkr__op_type_t type, const char *path);
void zkr__op_free(zkr__op_t *op);
int zkr__op_copy_acl(zkr__op_t *op, const struct ACL_vector *acl);
int zkr__op_copy_multi(zkr__op_t *op, int count, const zoo_op_t *ops);
int zkr__acl_copy(struct ACL_vector *dst, const struct ACL_vector *src);
void zkr__acl_free(struct ACL_vector *v);
int zkr__strings_copy(struct String_vector *dst, const struct String_vector *src);
int zkr__mode_ephemeral(int mode);

#endif
