/* History recorder and checker of the fault-schedule test (docs/history.md).
 *
 * The recorder keeps every operation of a workload: which client thread
 * issued it, op type, key, the value written or read, return code, the
 * stat's version, mzxid and czxid, and start/end times.  One event log
 * orders everything: an "invoke" event is appended just before the call is
 * made, a "complete" event inside the completion, so if A's complete event
 * precedes B's invoke event, A really finished before B started.  Marks
 * (fault-schedule steps) go into the same log.
 *
 * The checker makes one pass over the log (hash map of paths to dense key
 * ids, per-key and per-thread state in arrays) and one pass over the ops,
 * so it runs in time linear in the history.  It checks:
 *   1. LOST      no acknowledged write lost: the final state (read by an
 *                independent client, recorded as ZKH_FINAL reads) is the
 *                last acknowledged write of its key or a later write whose
 *                outcome is unknown; an acknowledged create exists unless a
 *                delete may have come after it; per-key version accounting.
 *   2. STALE     no read returns a state older than a write (or delete) the
 *                handle had seen acknowledged before the read started.
 *   3. MONOTONIC a read that starts after another read of the key ended
 *                never returns an older state.
 *   4. ORDER     writes are applied in issue order: per issuing thread,
 *                acknowledged zxids increase in issue order and completions
 *                arrive in issue order; a write issued after another write
 *                was acknowledged gets a higher zxid.
 *   5. INTEGRITY a value read was written by a write of that key, issued
 *                before the read ended, that did not fail; its mzxid is that
 *                write's; no write is applied twice.
 * See docs/history.md for the exact rules and why each is sound.
 *
 * Threads: zkh_invoke/zkh_done/zkh_reject/zkh_mark may be called from any
 * thread at once (lock-free except marks and key interning).  zkh_key is
 * for set-up (takes a mutex).  zkh_check must run after every recording
 * thread has stopped (it reads the log without locks). */
#ifndef ZKH_HISTORY_H
#define ZKH_HISTORY_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

typedef enum {
  ZKH_CREATE = 0,
  ZKH_SET,
  ZKH_DELETE,
  ZKH_GET,
  ZKH_EXISTS,
  ZKH_FINAL, /* the final state, read by an independent client at the end */
  ZKH_N_TYPES
} zkh_type_t;

typedef enum {
  ZKH_LOST = 0,
  ZKH_STALE,
  ZKH_MONOTONIC,
  ZKH_ORDER,
  ZKH_INTEGRITY,
  ZKH_N_PROPS
} zkh_prop_t;

/* Outcome classes of a completed operation. */
typedef enum {
  ZKH_PENDING = 0, /* invoked, no completion yet */
  ZKH_OK,          /* rc ZOK */
  ZKH_FAILED,      /* the server answered with an error: not applied */
  ZKH_MAYBE,       /* outcome unknown (connection loss, timeout, closing,
                      library errors): a write may have been applied */
  ZKH_REJECTED     /* the call itself returned an error: never sent */
} zkh_outcome_t;

typedef struct zkh zkh_t;

/* One operation.  Owned by the history; read-only for callers. */
typedef struct zkh_op {
  uint64_t start_ns, end_ns; /* CLOCK_MONOTONIC */
  int64_t mzxid, czxid;      /* from the stat, -1 unknown */
  int32_t version;           /* stat version, -1 unknown */
  int32_t arg_version;       /* conditional set/delete version, -1 none */
  int32_t rc;
  int32_t value_op; /* reads: op whose value was read; -1 none
                                (no data), -2 not a workload value */
  uint32_t key;
  uint32_t seq;       /* per-thread issue sequence */
  uint32_t value_seq; /* reads: thread and seq spelled in the value */
  uint16_t value_thread;
  uint32_t inv_pos, end_pos; /* positions in the event log */
  uint16_t thread;
  uint8_t type;    /* zkh_type_t */
  uint8_t outcome; /* zkh_outcome_t */
  int8_t member;   /* member that served it, -1 unknown */
} zkh_op_t;

typedef struct zkh_report {
  uint64_t ops, events, marks, keys, dropped;
  uint64_t by_type[ZKH_N_TYPES];
  uint64_t outcome[ZKH_N_TYPES][ZKH_REJECTED + 1];
  struct {
    int rc;
    uint64_t n;
  } rcs[32]; /* rc -> count, all ops */
  int n_rcs;
  uint64_t maybe_applied;  /* writes with an unknown outcome */
  uint64_t incomplete;     /* ops never completed (a hang) */
  uint64_t final_keys;     /* keys with a final-state read */
  uint64_t unchecked_keys; /* keys with acked writes but no final read */
  uint64_t checks[ZKH_N_PROPS];
  uint64_t violations[ZKH_N_PROPS];
  uint64_t total_violations;
  double max_write_gap_ms; /* longest time without an acked write */
  double check_ms;         /* time the checker took */
} zkh_report_t;

/* A history for at most max_ops operations, max_keys keys, max_threads
 * issuing threads (ids 0..max_threads-1) and max_marks marks.  NULL on
 * allocation failure.  Free with zkh_free (NULL accepted). */
zkh_t *zkh_new(uint32_t max_ops, uint32_t max_keys, int max_threads, uint32_t max_marks);
void zkh_free(zkh_t *h);

/* Names return codes in reports (default: a built-in table of
 * ZooKeeper's codes).  Set before recording. */
void zkh_set_rc_name(zkh_t *h, const char *(*fn)(int rc));

/* Interns path; returns its key id (>= 0), or -1 if the table is full or
 * the path is NULL.  The same path always gets the same id. */
int zkh_key(zkh_t *h, const char *path);
const char *zkh_key_path(const zkh_t *h, int key);

/* Records the start of an operation and returns its id, or -1 when the
 * history is full (the op must then not be issued: counted as dropped).
 * arg_version: the expected version of a conditional set/delete, -1 none. */
int64_t zkh_invoke(zkh_t *h, int thread, zkh_type_t type, int key, int arg_version);

/* The unique value a write op writes: "t<thread>.<seq>#<op>".  Returns its
 * length (< cap), or -1 if cap is too small. */
int zkh_value(const zkh_t *h, int64_t op, char *buf, size_t cap);

/* Records the completion.  mzxid/czxid/version: from the stat, -1 when
 * there is none.  value/len: the data a get or final read returned (NULL
 * or len < 0 for none); ignored for other ops.  Call exactly once per op
 * (or zkh_reject instead). */
void zkh_done(zkh_t *h, int64_t op, int rc, int64_t mzxid, int64_t czxid, int32_t version,
              const char *value, int len);
/* The call that should have issued op returned rc: it was never sent. */
void zkh_reject(zkh_t *h, int64_t op, int rc);
/* Records which member served op (if known).  Optional. */
void zkh_set_member(zkh_t *h, int64_t op, int member);

/* Appends a mark (a fault-schedule step) to the log; printf format. */
void zkh_mark(zkh_t *h, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Seconds since the history was created: the time base of reports. */
double zkh_elapsed_s(const zkh_t *h);

/* One line about op: thread, type, key, times, outcome, stat, value. */
void zkh_describe(const zkh_t *h, int64_t op, char *buf, size_t cap);

/* Number of ops recorded, and one of them (NULL if out of range). */
uint64_t zkh_n_ops(const zkh_t *h);
const zkh_op_t *zkh_op(const zkh_t *h, int64_t op);

/* Runs the checker.  Fills *r (may be NULL), prints up to max_examples
 * violations per property and the report to out (may be NULL).  Returns
 * the number of violations.  Must not run while recording goes on. */
uint64_t zkh_check(const zkh_t *h, zkh_report_t *r, FILE *out, int max_examples);

/* Prints a report as zkh_check does (counts only). */
void zkh_print_report(const zkh_t *h, const zkh_report_t *r, FILE *out);

const char *zkh_type_name(int type);
const char *zkh_prop_name(int prop);

#endif
