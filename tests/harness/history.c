/* History recorder and linear-time checker (see history.h and
 * docs/history.md).  Pure code: no I/O but the report, no ZooKeeper calls;
 * ZooKeeper's header is included for its return-code constants only. */
#include "history.h"

#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <zookeeper/zookeeper.h>

/* Event log entries: op id (or mark index) << 2 | kind. */
enum { EV_INVOKE = 0, EV_COMPLETE = 1, EV_MARK = 2 };
#define EV_KIND(e) ((e)&3u)
#define EV_ID(e) ((e) >> 2)
#define ZKH_MAX_OPS (1u << 29)

typedef struct {
  uint64_t t_ns;
  uint32_t pos;
  char text[116];
} mark_t;

struct zkh {
  uint32_t max_ops, max_keys, max_marks;
  int max_threads;
  uint64_t t0_ns;
  const char *(*rc_name)(int);

  zkh_op_t *ops;
  uint64_t n_ops;   /* atomic; may run past max_ops (then clamped) */
  uint64_t dropped; /* atomic */
  uint32_t *seq;    /* per thread, atomic */

  uint32_t *events; /* atomic entries */
  uint64_t n_events, max_events;

  pthread_mutex_t mu; /* keys and marks */
  char **paths;
  uint32_t n_keys;
  uint32_t *slots; /* open addressing: key id + 1, 0 empty */
  uint32_t n_slots;
  mark_t *marks;
  uint32_t n_marks;
};

static uint64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* ---- names ---- */

static const char *default_rc_name(int rc) {
  switch (rc) {
  case ZOK: return "ZOK";
  case ZSYSTEMERROR: return "ZSYSTEMERROR";
  case ZRUNTIMEINCONSISTENCY: return "ZRUNTIMEINCONSISTENCY";
  case ZDATAINCONSISTENCY: return "ZDATAINCONSISTENCY";
  case ZCONNECTIONLOSS: return "ZCONNECTIONLOSS";
  case ZMARSHALLINGERROR: return "ZMARSHALLINGERROR";
  case ZUNIMPLEMENTED: return "ZUNIMPLEMENTED";
  case ZOPERATIONTIMEOUT: return "ZOPERATIONTIMEOUT";
  case ZBADARGUMENTS: return "ZBADARGUMENTS";
  case ZINVALIDSTATE: return "ZINVALIDSTATE";
  case ZNONODE: return "ZNONODE";
  case ZNOAUTH: return "ZNOAUTH";
  case ZBADVERSION: return "ZBADVERSION";
  case ZNOCHILDRENFOREPHEMERALS: return "ZNOCHILDRENFOREPHEMERALS";
  case ZNODEEXISTS: return "ZNODEEXISTS";
  case ZNOTEMPTY: return "ZNOTEMPTY";
  case ZSESSIONEXPIRED: return "ZSESSIONEXPIRED";
  case ZINVALIDCALLBACK: return "ZINVALIDCALLBACK";
  case ZINVALIDACL: return "ZINVALIDACL";
  case ZAUTHFAILED: return "ZAUTHFAILED";
  case ZCLOSING: return "ZCLOSING";
  case ZSESSIONMOVED: return "ZSESSIONMOVED";
  default: return NULL;
  }
}

static const char *rc_str(const zkh_t *h, int rc, char *buf, size_t cap) {
  const char *n = h->rc_name ? h->rc_name(rc) : NULL;
  if (!n) n = default_rc_name(rc);
  if (n) return n;
  snprintf(buf, cap, "rc %d", rc);
  return buf;
}

const char *zkh_type_name(int type) {
  static const char *const names[] = {"create", "set", "delete", "get", "exists", "final"};
  return type >= 0 && type < ZKH_N_TYPES ? names[type] : "?";
}

const char *zkh_prop_name(int prop) {
  static const char *const names[] = {"1 lost-write", "2 stale-read", "3 monotonic-read",
                                      "4 write-order", "5 integrity"};
  return prop >= 0 && prop < ZKH_N_PROPS ? names[prop] : "?";
}

static int is_write(int type) {
  return type == ZKH_CREATE || type == ZKH_SET || type == ZKH_DELETE;
}

static int is_read(int type) { return type == ZKH_GET || type == ZKH_EXISTS || type == ZKH_FINAL; }

/* Codes with which the server refused the request: nothing was applied.
 * Everything else that is not ZOK may have been applied. */
static zkh_outcome_t classify(int rc) {
  switch (rc) {
  case ZOK: return ZKH_OK;
  case ZNONODE:
  case ZNOAUTH:
  case ZBADVERSION:
  case ZNOCHILDRENFOREPHEMERALS:
  case ZNODEEXISTS:
  case ZNOTEMPTY:
  case ZINVALIDACL:
  case ZBADARGUMENTS: return ZKH_FAILED;
  default: return ZKH_MAYBE;
  }
}

/* ---- life ---- */

zkh_t *zkh_new(uint32_t max_ops, uint32_t max_keys, int max_threads, uint32_t max_marks) {
  if (max_ops == 0 || max_ops > ZKH_MAX_OPS || max_keys == 0 || max_threads <= 0 ||
      max_threads > 65535)
    return NULL;
  zkh_t *h = calloc(1, sizeof *h);
  if (!h) return NULL;
  h->max_ops = max_ops;
  h->max_keys = max_keys;
  h->max_threads = max_threads;
  h->max_marks = max_marks;
  h->max_events = 2 * (uint64_t)max_ops + max_marks;
  h->n_slots = 16;
  while (h->n_slots < 2 * max_keys) h->n_slots *= 2;
  h->ops = calloc(max_ops, sizeof *h->ops);
  h->seq = calloc((size_t)max_threads, sizeof *h->seq);
  h->events = calloc(h->max_events, sizeof *h->events);
  h->paths = calloc(max_keys, sizeof *h->paths);
  h->slots = calloc(h->n_slots, sizeof *h->slots);
  h->marks = calloc(max_marks ? max_marks : 1, sizeof *h->marks);
  pthread_mutex_init(&h->mu, NULL);
  h->t0_ns = now_ns();
  if (!h->ops || !h->seq || !h->events || !h->paths || !h->slots || !h->marks) {
    zkh_free(h);
    return NULL;
  }
  return h;
}

void zkh_free(zkh_t *h) {
  if (!h) return;
  for (uint32_t i = 0; h->paths && i < h->n_keys; i++) free(h->paths[i]);
  free(h->paths);
  free(h->slots);
  free(h->ops);
  free(h->seq);
  free(h->events);
  free(h->marks);
  pthread_mutex_destroy(&h->mu);
  free(h);
}

void zkh_set_rc_name(zkh_t *h, const char *(*fn)(int rc)) { h->rc_name = fn; }

/* ---- keys ---- */

static uint32_t hash_path(const char *s) {
  uint32_t x = 2166136261u; /* FNV-1a */
  for (; *s; s++) x = (x ^ (unsigned char)*s) * 16777619u;
  return x;
}

int zkh_key(zkh_t *h, const char *path) {
  if (!h || !path) return -1;
  int id = -1;
  pthread_mutex_lock(&h->mu);
  uint32_t mask = h->n_slots - 1, i = hash_path(path) & mask;
  for (;; i = (i + 1) & mask) {
    uint32_t s = h->slots[i];
    if (s == 0) break;
    if (strcmp(h->paths[s - 1], path) == 0) {
      id = (int)(s - 1);
      goto out;
    }
  }
  if (h->n_keys < h->max_keys && (h->paths[h->n_keys] = strdup(path))) {
    id = (int)h->n_keys++;
    h->slots[i] = (uint32_t)id + 1;
  }
out:
  pthread_mutex_unlock(&h->mu);
  return id;
}

const char *zkh_key_path(const zkh_t *h, int key) {
  return h && key >= 0 && (uint32_t)key < h->n_keys ? h->paths[key] : "?";
}

/* ---- recording ---- */

static uint32_t append_event(zkh_t *h, uint32_t ev) {
  uint64_t pos = __atomic_fetch_add(&h->n_events, 1, __ATOMIC_SEQ_CST);
  /* Capacity is 2 per op plus the marks: cannot overflow. */
  __atomic_store_n(&h->events[pos], ev, __ATOMIC_RELEASE);
  return (uint32_t)pos;
}

double zkh_elapsed_s(const zkh_t *h) { return (double)(now_ns() - h->t0_ns) / 1e9; }

uint64_t zkh_n_ops(const zkh_t *h) {
  uint64_t n = __atomic_load_n(&h->n_ops, __ATOMIC_ACQUIRE);
  return n < h->max_ops ? n : h->max_ops;
}

const zkh_op_t *zkh_op(const zkh_t *h, int64_t op) {
  return op >= 0 && (uint64_t)op < zkh_n_ops(h) ? &h->ops[op] : NULL;
}

int64_t zkh_invoke(zkh_t *h, int thread, zkh_type_t type, int key, int arg_version) {
  if (thread < 0 || thread >= h->max_threads || key < 0 || (uint32_t)key >= h->n_keys || type < 0 ||
      type >= ZKH_N_TYPES) {
    __atomic_fetch_add(&h->dropped, 1, __ATOMIC_RELAXED);
    return -1;
  }
  uint64_t id = __atomic_fetch_add(&h->n_ops, 1, __ATOMIC_SEQ_CST);
  if (id >= h->max_ops) {
    __atomic_fetch_add(&h->dropped, 1, __ATOMIC_RELAXED);
    return -1;
  }
  zkh_op_t *o = &h->ops[id];
  o->type = (uint8_t)type;
  o->key = (uint32_t)key;
  o->thread = (uint16_t)thread;
  o->seq = __atomic_fetch_add(&h->seq[thread], 1, __ATOMIC_RELAXED);
  o->arg_version = arg_version;
  o->mzxid = o->czxid = -1;
  o->version = -1;
  o->value_op = -1;
  o->member = -1;
  o->start_ns = now_ns();
  __atomic_store_n(&o->outcome, ZKH_PENDING, __ATOMIC_RELEASE);
  o->inv_pos = append_event(h, (uint32_t)id << 2 | EV_INVOKE);
  return (int64_t)id;
}

int zkh_value(const zkh_t *h, int64_t op, char *buf, size_t cap) {
  const zkh_op_t *o = &h->ops[op];
  int n = snprintf(buf, cap, "t%u.%u#%" PRId64, (unsigned)o->thread, (unsigned)o->seq, op);
  return n >= 0 && (size_t)n < cap ? n : -1;
}

/* Parses "t<thread>.<seq>#<op>" exactly; -2 if it is anything else. */
static int parse_u(const char **p, const char *end, uint64_t *out) {
  const char *s = *p;
  uint64_t v = 0;
  while (*p < end && **p >= '0' && **p <= '9' && v < (1ull << 40))
    v = v * 10 + (uint64_t)(*(*p)++ - '0');
  *out = v;
  return *p > s && *p - s <= 12;
}

static void parse_value(zkh_op_t *o, const char *v, int len) {
  o->value_op = -1;
  if (!v || len <= 0) return;
  const char *p = v, *end = v + len;
  uint64_t th, seq, op;
  o->value_op = -2;
  if (*p++ != 't' || !parse_u(&p, end, &th) || p >= end || *p++ != '.' || !parse_u(&p, end, &seq) ||
      p >= end || *p++ != '#' || !parse_u(&p, end, &op) || p != end || th > 65535 ||
      seq > UINT32_MAX || op >= ZKH_MAX_OPS)
    return;
  o->value_op = (int32_t)op;
  o->value_thread = (uint16_t)th;
  o->value_seq = (uint32_t)seq;
}

void zkh_done(zkh_t *h, int64_t op, int rc, int64_t mzxid, int64_t czxid, int32_t version,
              const char *value, int len) {
  if (op < 0 || (uint64_t)op >= h->max_ops) return;
  zkh_op_t *o = &h->ops[op];
  o->end_ns = now_ns();
  o->rc = rc;
  o->mzxid = mzxid;
  o->czxid = czxid;
  o->version = version;
  if ((o->type == ZKH_GET || o->type == ZKH_FINAL) && rc == ZOK) parse_value(o, value, len);
  __atomic_store_n(&o->outcome, (uint8_t)classify(rc), __ATOMIC_RELEASE);
  o->end_pos = append_event(h, (uint32_t)op << 2 | EV_COMPLETE);
}

void zkh_reject(zkh_t *h, int64_t op, int rc) {
  if (op < 0 || (uint64_t)op >= h->max_ops) return;
  zkh_op_t *o = &h->ops[op];
  o->end_ns = now_ns();
  o->rc = rc;
  __atomic_store_n(&o->outcome, ZKH_REJECTED, __ATOMIC_RELEASE);
  o->end_pos = append_event(h, (uint32_t)op << 2 | EV_COMPLETE);
}

void zkh_set_member(zkh_t *h, int64_t op, int member) {
  if (op >= 0 && (uint64_t)op < h->max_ops) h->ops[op].member = (int8_t)member;
}

void zkh_mark(zkh_t *h, const char *fmt, ...) {
  pthread_mutex_lock(&h->mu);
  if (h->n_marks < h->max_marks) {
    mark_t *m = &h->marks[h->n_marks];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(m->text, sizeof m->text, fmt, ap);
    va_end(ap);
    m->t_ns = now_ns();
    m->pos = append_event(h, h->n_marks << 2 | EV_MARK);
    h->n_marks++;
  }
  pthread_mutex_unlock(&h->mu);
}

/* ---- the checker ---- */

/* What an op saw of its key (and of all writes) when it was invoked. */
typedef struct {
  int64_t fm;   /* highest mzxid of an acked create/set of the key */
  int64_t fd;   /* nodes with czxid <= fd were deleted by an acked delete */
  int64_t rd;   /* highest mzxid a completed read of the key returned */
  int64_t gmax; /* highest mzxid of any acked write */
  int64_t seen; /* writes: the mzxid its value was first read with */
  uint32_t fm_inv, rd_inv;
  int32_t fm_op, fd_op, rd_op, gmax_op;
} snap_t;

typedef struct {
  int64_t fm, fd, rd;
  uint32_t fm_inv, rd_inv;
  int32_t fm_op, fd_op, rd_op;
  int32_t del_inflight; /* deletes invoked, not completed */
  int64_t del_done_pos; /* last completion of a delete that may have applied */
  int32_t final_op;     /* last final-state read, -1 none */
  uint32_t creates_ok, creates_maybe, sets_ok, sets_maybe, deletes, acked_writes;
} keyst_t;

typedef struct {
  const zkh_t *h;
  FILE *out;
  int max_examples;
  zkh_report_t *r;
  snap_t *snap;
  keyst_t *keys;
  int32_t cur_mark; /* latest mark before the event being checked */
} ctx_t;

static double rel_s(const zkh_t *h, uint64_t ns) {
  return ns ? (double)(int64_t)(ns - h->t0_ns) / 1e9 : 0.0;
}

static void describe(const ctx_t *c, int64_t id, char *buf, size_t cap) {
  const zkh_t *h = c->h;
  if (id < 0 || (uint64_t)id >= zkh_n_ops(h)) {
    snprintf(buf, cap, "(none)");
    return;
  }
  const zkh_op_t *o = &h->ops[id];
  char rcb[24], val[64] = "";
  const char *oc = "";
  if (o->outcome == ZKH_PENDING) oc = " (no completion)";
  else if (o->outcome == ZKH_REJECTED) oc = " (rejected by the call)";
  if (is_write(o->type) && o->type != ZKH_DELETE) {
    zkh_value(h, id, val, sizeof val);
  } else if (o->type == ZKH_GET || o->type == ZKH_FINAL) {
    if (o->value_op >= 0)
      snprintf(val, sizeof val, "read t%u.%u#%d", o->value_thread, o->value_seq, o->value_op);
    else if (o->outcome == ZKH_OK)
      snprintf(val, sizeof val, "read %s", o->value_op == -1 ? "no data" : "a foreign value");
  }
  char cond[24] = "", stat[96] = "", end[24] = "...";
  if (o->arg_version >= 0) snprintf(cond, sizeof cond, " if-version %d", o->arg_version);
  if (o->mzxid >= 0)
    snprintf(stat, sizeof stat, " mzxid 0x%" PRIx64 " czxid 0x%" PRIx64 " version %d",
             (uint64_t)o->mzxid, (uint64_t)o->czxid, o->version);
  if (o->outcome != ZKH_PENDING) snprintf(end, sizeof end, "%.3f", rel_s(h, o->end_ns));
  snprintf(buf, cap, "op %" PRId64 " t%u %s %s%s [%.3f-%s s] -> %s%s%s%s%s", id, o->thread,
           zkh_type_name(o->type), zkh_key_path(h, (int)o->key), cond, rel_s(h, o->start_ns), end,
           o->outcome == ZKH_PENDING ? "-" : rc_str(h, o->rc, rcb, sizeof rcb), oc, stat,
           val[0] ? ", " : "", val);
}

void zkh_describe(const zkh_t *h, int64_t op, char *buf, size_t cap) {
  ctx_t c = {.h = h};
  describe(&c, op, buf, cap);
}

static void mark_text(const ctx_t *c, int32_t m, char *buf, size_t cap) {
  if (m < 0) snprintf(buf, cap, "before any mark");
  else
    snprintf(buf, cap, "after mark %d \"%s\" at %.3f s", m, c->h->marks[m].text,
             rel_s(c->h, c->h->marks[m].t_ns));
}

/* Counts a violation of prop by op id; prints the first max_examples. */
static void violation(ctx_t *c, int prop, int64_t id, int32_t mark, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
static void violation(ctx_t *c, int prop, int64_t id, int32_t mark, const char *fmt, ...) {
  uint64_t n = ++c->r->violations[prop];
  c->r->total_violations++;
  if (!c->out || n > (uint64_t)c->max_examples) return;
  char what[512], d[320], mt[200];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(what, sizeof what, fmt, ap);
  va_end(ap);
  describe(c, id, d, sizeof d);
  mark_text(c, mark, mt, sizeof mt);
  fprintf(c->out, "VIOLATION %s #%" PRIu64 " (%s)\n  %s\n  %s\n", zkh_prop_name(prop), n, mt, d,
          what);
}

static void count_rc(zkh_report_t *r, int rc) {
  for (int i = 0; i < r->n_rcs; i++)
    if (r->rcs[i].rc == rc) {
      r->rcs[i].n++;
      return;
    }
  if (r->n_rcs < (int)(sizeof r->rcs / sizeof r->rcs[0])) {
    r->rcs[r->n_rcs].rc = rc;
    r->rcs[r->n_rcs++].n = 1;
  }
}

static void on_invoke(ctx_t *c, int64_t id, const int64_t gmax, int32_t gmax_op) {
  const zkh_op_t *o = &c->h->ops[id];
  keyst_t *k = &c->keys[o->key];
  snap_t *s = &c->snap[id];
  s->fm = k->fm;
  s->fm_inv = k->fm_inv;
  s->fm_op = k->fm_op;
  s->fd = k->fd;
  s->fd_op = k->fd_op;
  s->rd = k->rd;
  s->rd_inv = k->rd_inv;
  s->rd_op = k->rd_op;
  s->gmax = gmax;
  s->gmax_op = gmax_op;
  s->seen = -1;
  if (o->type == ZKH_DELETE) k->del_inflight++;
}

/* Could a delete of k have been applied after the event at position pos?
 * Yes if one is still in flight, or one that may have applied completed
 * after pos (one that completed before pos was applied before it). */
static int delete_after(const keyst_t *k, uint32_t pos) {
  return k->del_inflight > 0 || k->del_done_pos > (int64_t)pos;
}

/* Property 5 for a read that returned a value. */
static void check_value(ctx_t *c, int64_t id, const zkh_op_t *o) {
  const zkh_t *h = c->h;
  c->r->checks[ZKH_INTEGRITY]++;
  if (o->value_op < 0) {
    violation(c, ZKH_INTEGRITY, id, c->cur_mark,
              "the value read (%s) was written by no write of the workload",
              o->value_op == -1 ? "no data" : "unparsable");
    return;
  }
  int64_t w = o->value_op;
  const zkh_op_t *wo = zkh_op(h, w);
  if (!wo || !is_write(wo->type) || wo->type == ZKH_DELETE || wo->thread != o->value_thread ||
      wo->seq != o->value_seq) {
    violation(c, ZKH_INTEGRITY, id, c->cur_mark,
              "the value names op %" PRId64 ", which did not write it", w);
    return;
  }
  char d[320];
  if (wo->key != o->key) {
    describe(c, w, d, sizeof d);
    violation(c, ZKH_INTEGRITY, id, c->cur_mark, "the value belongs to another key: %s", d);
    return;
  }
  if (wo->inv_pos > o->end_pos) {
    describe(c, w, d, sizeof d);
    violation(c, ZKH_INTEGRITY, id, c->cur_mark, "read a value before its write was issued: %s", d);
    return;
  }
  if (wo->outcome == ZKH_FAILED || wo->outcome == ZKH_REJECTED) {
    /* Decided by the final outcome even if it came later: a refused write
     * is never applied. */
    describe(c, w, d, sizeof d);
    violation(c, ZKH_INTEGRITY, id, c->cur_mark, "read the value of a write that %s: %s",
              wo->outcome == ZKH_FAILED ? "failed" : "was never sent", d);
    return;
  }
  if (wo->outcome == ZKH_OK && wo->mzxid >= 0 && o->mzxid != wo->mzxid) {
    describe(c, w, d, sizeof d);
    violation(c, ZKH_INTEGRITY, id, c->cur_mark,
              "mzxid 0x%" PRIx64 " read with the value of a write acked as mzxid 0x%" PRIx64 ": %s",
              (uint64_t)o->mzxid, (uint64_t)wo->mzxid, d);
    return;
  }
  snap_t *ws = &c->snap[w];
  if (ws->seen < 0) {
    ws->seen = o->mzxid;
  } else if (ws->seen != o->mzxid) {
    describe(c, w, d, sizeof d);
    violation(c, ZKH_INTEGRITY, id, c->cur_mark,
              "value seen with mzxid 0x%" PRIx64 " and earlier with 0x%" PRIx64
              " (applied twice?): %s",
              (uint64_t)o->mzxid, (uint64_t)ws->seen, d);
  }
}

static void on_read_done(ctx_t *c, int64_t id, const zkh_op_t *o) {
  keyst_t *k = &c->keys[o->key];
  const snap_t *s = &c->snap[id];
  int final = o->type == ZKH_FINAL;
  int p_stale = final ? ZKH_LOST : ZKH_STALE;
  int p_mono = final ? ZKH_LOST : ZKH_MONOTONIC;
  char d[320];
  if (final) k->final_op = (int32_t)id;
  if (o->rc == ZOK) {
    if (o->mzxid < 0 || o->czxid < 0) {
      c->r->checks[ZKH_INTEGRITY]++;
      violation(c, ZKH_INTEGRITY, id, c->cur_mark, "ZOK without a stat");
      return;
    }
    if (o->type != ZKH_EXISTS) check_value(c, id, o);
    c->r->checks[p_stale]++;
    if (s->fm > 0 && o->mzxid < s->fm) {
      describe(c, s->fm_op, d, sizeof d);
      violation(c, p_stale, id, c->cur_mark,
                "%s mzxid 0x%" PRIx64 " is older than the acked write 0x%" PRIx64
                " completed before it started: %s",
                final ? "final state" : "read", (uint64_t)o->mzxid, (uint64_t)s->fm, d);
    } else if (s->fd > 0 && o->czxid <= s->fd) {
      describe(c, s->fd_op, d, sizeof d);
      violation(c, p_stale, id, c->cur_mark,
                "%s a node (czxid 0x%" PRIx64 ") that an acked delete had removed before it "
                "started: %s",
                final ? "final state has" : "read", (uint64_t)o->czxid, d);
    }
    c->r->checks[p_mono]++;
    if (s->rd > 0 && o->mzxid < s->rd) {
      describe(c, s->rd_op, d, sizeof d);
      violation(c, p_mono, id, c->cur_mark,
                "mzxid 0x%" PRIx64 " is older than 0x%" PRIx64
                " returned by a read that ended before this one started: %s",
                (uint64_t)o->mzxid, (uint64_t)s->rd, d);
    }
    if (!final && o->mzxid > k->rd) {
      k->rd = o->mzxid;
      k->rd_inv = o->inv_pos;
      k->rd_op = (int32_t)id;
    }
  } else if (o->rc == ZNONODE) {
    c->r->checks[p_stale]++;
    if (s->fm > 0 && !delete_after(k, s->fm_inv)) {
      describe(c, s->fm_op, d, sizeof d);
      violation(c, p_stale, id, c->cur_mark,
                "%s, yet this write was acked before it started and no delete can have "
                "come after it: %s",
                final ? "the node is gone from the final state" : "no node", d);
    }
    c->r->checks[p_mono]++;
    if (s->rd > 0 && !delete_after(k, s->rd_inv)) {
      describe(c, s->rd_op, d, sizeof d);
      violation(c, p_mono, id, c->cur_mark,
                "no node, yet a read that ended before this one started saw it, and no "
                "delete can have come after that read: %s",
                d);
    }
  }
}

static void on_write_done(ctx_t *c, int64_t id, const zkh_op_t *o, int64_t *gmax, int32_t *gmax_op,
                          int64_t *last_seq) {
  keyst_t *k = &c->keys[o->key];
  const snap_t *s = &c->snap[id];
  char d[320];
  int ok = o->outcome == ZKH_OK, maybe = o->outcome == ZKH_MAYBE;
  if (o->type == ZKH_DELETE) {
    k->del_inflight--;
    if (o->outcome != ZKH_REJECTED) k->deletes++;
    if (ok) {
      /* The delete came after every write acked before it started and
       * after every read that ended before it started. */
      int64_t dead = s->fm > s->rd ? s->fm : s->rd;
      if (dead > k->fd) {
        k->fd = dead;
        k->fd_op = (int32_t)id;
      }
    }
    if (ok || maybe) k->del_done_pos = o->end_pos;
  } else {
    if (o->type == ZKH_CREATE) {
      k->creates_ok += ok;
      k->creates_maybe += maybe;
    } else if (o->type == ZKH_SET) {
      k->sets_ok += ok;
      k->sets_maybe += maybe;
    }
    if (ok && o->mzxid > 0) {
      c->r->checks[ZKH_ORDER]++;
      if (o->mzxid <= s->gmax) {
        describe(c, s->gmax_op, d, sizeof d);
        violation(c, ZKH_ORDER, id, c->cur_mark,
                  "acked as zxid 0x%" PRIx64 ", not after 0x%" PRIx64
                  " of a write acked before this one was issued: %s",
                  (uint64_t)o->mzxid, (uint64_t)s->gmax, d);
      }
      if (o->mzxid > k->fm) {
        k->fm = o->mzxid;
        k->fm_inv = o->inv_pos;
        k->fm_op = (int32_t)id;
      }
      if (o->mzxid > *gmax) {
        *gmax = o->mzxid;
        *gmax_op = (int32_t)id;
      }
    }
  }
  if (ok) k->acked_writes++;
  if (o->outcome == ZKH_REJECTED) return;
  /* Completions of one thread's writes come in issue order. */
  c->r->checks[ZKH_ORDER]++;
  int64_t *last = &last_seq[o->thread];
  if ((int64_t)o->seq < *last) {
    violation(c, ZKH_ORDER, id, c->cur_mark,
              "completed after a write this thread issued later (its seq %" PRId64
              " > %u): completions out of issue order",
              *last, o->seq);
  } else {
    *last = o->seq;
  }
}

static int32_t mark_at(const zkh_t *h, uint32_t pos) {
  int32_t lo = 0, hi = (int32_t)h->n_marks - 1, best = -1;
  while (lo <= hi) {
    int32_t mid = (lo + hi) / 2;
    if (h->marks[mid].pos < pos) {
      best = mid;
      lo = mid + 1;
    } else {
      hi = mid - 1;
    }
  }
  return best;
}

/* For every mark already in the log that no successful op issued after
 * it has answered yet: o (successful, issued after it) answers it.  Marks
 * are in time order, so the unanswered ones are a suffix: linear. */
static void resolve_marks(const zkh_t *h, int32_t cur_mark, const zkh_op_t *o, int32_t *pend,
                          double *ms) {
  while (*pend <= cur_mark && h->marks[*pend].t_ns <= o->start_ns) {
    ms[*pend] = (double)(o->end_ns - h->marks[*pend].t_ns) / 1e6;
    (*pend)++;
  }
}

uint64_t zkh_check(const zkh_t *h, zkh_report_t *rout, FILE *out, int max_examples) {
  uint64_t t_start = now_ns();
  zkh_report_t rlocal;
  zkh_report_t *r = rout ? rout : &rlocal;
  memset(r, 0, sizeof *r);
  uint64_t n_ops = zkh_n_ops(h);
  uint64_t n_events = __atomic_load_n(&h->n_events, __ATOMIC_ACQUIRE);
  r->ops = n_ops;
  r->events = n_events;
  r->marks = h->n_marks;
  r->keys = h->n_keys;
  r->dropped = __atomic_load_n(&h->dropped, __ATOMIC_RELAXED);

  ctx_t c = {.h = h, .out = out, .max_examples = max_examples, .r = r, .cur_mark = -1};
  c.snap = calloc(n_ops ? n_ops : 1, sizeof *c.snap);
  c.keys = calloc(h->n_keys ? h->n_keys : 1, sizeof *c.keys);
  int64_t *last_seq = malloc((size_t)h->max_threads * sizeof *last_seq);
  double *mark_write_ms = malloc((h->n_marks + 1) * sizeof(double));
  double *mark_read_ms = malloc((h->n_marks + 1) * sizeof(double));
  uint32_t *mark_unknown = calloc(h->n_marks + 1, sizeof *mark_unknown);
  if (!c.snap || !c.keys || !last_seq || !mark_write_ms || !mark_read_ms || !mark_unknown) {
    if (out) fprintf(out, "history: out of memory in the checker\n");
    free(c.snap);
    free(c.keys);
    free(last_seq);
    free(mark_write_ms);
    free(mark_read_ms);
    free(mark_unknown);
    r->total_violations = 1;
    return 1;
  }
  for (int i = 0; i < h->max_threads; i++) last_seq[i] = -1;
  for (uint32_t i = 0; i < h->n_keys; i++) {
    c.keys[i].fm_op = c.keys[i].fd_op = c.keys[i].rd_op = c.keys[i].final_op = -1;
    c.keys[i].del_done_pos = -1;
  }
  for (uint32_t i = 0; i <= h->n_marks; i++) mark_write_ms[i] = mark_read_ms[i] = -1;

  /* Pass 1: the log, in order. */
  int64_t gmax = 0;
  int32_t gmax_op = -1;
  uint64_t last_write_ns = 0;
  int32_t gap_mark = -1, pend_w = 0, pend_r = 0;
  for (uint64_t p = 0; p < n_events; p++) {
    uint32_t ev = __atomic_load_n(&h->events[p], __ATOMIC_ACQUIRE);
    uint32_t id = EV_ID(ev);
    if (EV_KIND(ev) == EV_MARK) {
      c.cur_mark = (int32_t)id;
      continue;
    }
    if (id >= n_ops) continue; /* cannot happen: ids are allocated first */
    const zkh_op_t *o = &h->ops[id];
    if (EV_KIND(ev) == EV_INVOKE) {
      on_invoke(&c, id, gmax, gmax_op);
      continue;
    }
    uint8_t oc = __atomic_load_n(&o->outcome, __ATOMIC_ACQUIRE);
    if (o->type == ZKH_FINAL) r->final_keys++;
    if (oc == ZKH_MAYBE) mark_unknown[c.cur_mark + 1]++; /* [0]: before any mark */
    if (is_write(o->type)) {
      on_write_done(&c, id, o, &gmax, &gmax_op, last_seq);
      if (oc == ZKH_OK) {
        if (last_write_ns && o->end_ns > last_write_ns &&
            (double)(o->end_ns - last_write_ns) / 1e6 > r->max_write_gap_ms) {
          r->max_write_gap_ms = (double)(o->end_ns - last_write_ns) / 1e6;
          gap_mark = c.cur_mark;
        }
        if (o->end_ns > last_write_ns) last_write_ns = o->end_ns;
        resolve_marks(h, c.cur_mark, o, &pend_w, mark_write_ms);
      }
    } else if (is_read(o->type) && oc != ZKH_REJECTED) {
      on_read_done(&c, id, o);
      if (oc == ZKH_OK && o->type != ZKH_FINAL)
        resolve_marks(h, c.cur_mark, o, &pend_r, mark_read_ms);
    }
  }

  /* Pass 2: ops in id order, which is each thread's issue order. */
  for (int i = 0; i < h->max_threads; i++) last_seq[i] = -1; /* reused: op id */
  int64_t *last_mz = calloc((size_t)h->max_threads, sizeof *last_mz);
  for (uint64_t id = 0; id < n_ops; id++) {
    const zkh_op_t *o = &h->ops[id];
    uint8_t oc = __atomic_load_n(&o->outcome, __ATOMIC_ACQUIRE);
    r->by_type[o->type]++;
    r->outcome[o->type][oc]++;
    if (oc == ZKH_PENDING) r->incomplete++;
    else count_rc(r, o->rc);
    if (is_write(o->type) && (oc == ZKH_MAYBE || oc == ZKH_PENDING)) r->maybe_applied++;
    if (!last_mz || !is_write(o->type) || oc != ZKH_OK || o->mzxid <= 0) continue;
    c.r->checks[ZKH_ORDER]++;
    if (o->mzxid <= last_mz[o->thread]) {
      char d[320];
      describe(&c, last_seq[o->thread], d, sizeof d);
      violation(&c, ZKH_ORDER, (int64_t)id, mark_at(h, o->end_pos),
                "acked as zxid 0x%" PRIx64 ", not after 0x%" PRIx64
                " of a write this thread issued before it: %s",
                (uint64_t)o->mzxid, (uint64_t)last_mz[o->thread], d);
    }
    last_mz[o->thread] = o->mzxid;
    last_seq[o->thread] = (int64_t)id;
  }
  free(last_mz);

  /* Pass 3: per key, the final state's version accounts for the sets. */
  for (uint32_t i = 0; i < h->n_keys; i++) {
    keyst_t *k = &c.keys[i];
    if (k->final_op < 0) {
      if (k->acked_writes > 0) r->unchecked_keys++;
      continue;
    }
    const zkh_op_t *f = &h->ops[k->final_op];
    /* Only a key created once and never deleted: its version counts the
     * sets applied since. */
    if (k->deletes || k->creates_ok != 1 || f->rc != ZOK) continue;
    r->checks[ZKH_LOST]++;
    if ((uint32_t)f->version < k->sets_ok) {
      violation(&c, ZKH_LOST, k->final_op, mark_at(h, f->end_pos),
                "final version %d, but %u sets were acked: %u acked sets lost", f->version,
                k->sets_ok, k->sets_ok - (uint32_t)f->version);
    } else if ((uint64_t)f->version > (uint64_t)k->sets_ok + k->sets_maybe) {
      violation(&c, ZKH_LOST, k->final_op, mark_at(h, f->end_pos),
                "final version %d, more than the %u acked + %u maybe-applied sets: a write "
                "was applied twice",
                f->version, k->sets_ok, k->sets_maybe);
    }
  }

  r->check_ms = (double)(now_ns() - t_start) / 1e6;
  if (out) {
    zkh_print_report(h, r, out);
    if (h->n_marks) {
      fprintf(out, "  after each mark: when the first acked write / ok read issued after it "
                   "completed; ops completed with an unknown outcome before the next mark\n");
      for (uint32_t m = 0; m < h->n_marks; m++) {
        char w[32] = "none", rd[32] = "none", u[24] = "";
        if (mark_write_ms[m] >= 0) snprintf(w, sizeof w, "+%.0f ms", mark_write_ms[m]);
        if (mark_read_ms[m] >= 0) snprintf(rd, sizeof rd, "+%.0f ms", mark_read_ms[m]);
        if (mark_unknown[m + 1]) snprintf(u, sizeof u, "unknown %u", mark_unknown[m + 1]);
        fprintf(out, "    %8.3f s  %-52s write %-10s read %-10s %s\n", rel_s(h, h->marks[m].t_ns),
                h->marks[m].text, w, rd, u);
      }
    }
    char mt[200];
    mark_text(&c, gap_mark, mt, sizeof mt);
    fprintf(out, "  longest time without an acked write: %.1f ms (%s)\n", r->max_write_gap_ms, mt);
  }
  free(c.snap);
  free(c.keys);
  free(last_seq);
  free(mark_write_ms);
  free(mark_read_ms);
  free(mark_unknown);
  return r->total_violations;
}

void zkh_print_report(const zkh_t *h, const zkh_report_t *r, FILE *out) {
  static const char *const oc_names[] = {"pending", "ok", "failed", "maybe", "rejected"};
  fprintf(out,
          "history: %" PRIu64 " ops, %" PRIu64 " events, %" PRIu64 " marks, %" PRIu64
          " keys; checked in %.1f ms\n",
          r->ops, r->events, r->marks, r->keys, r->check_ms);
  fprintf(out, "  %-8s %9s", "op", "total");
  for (int k = 0; k <= ZKH_REJECTED; k++) fprintf(out, " %9s", oc_names[(k + 1) % 5]);
  fprintf(out, "\n");
  for (int t = 0; t < ZKH_N_TYPES; t++) {
    fprintf(out, "  %-8s %9" PRIu64, zkh_type_name(t), r->by_type[t]);
    for (int k = 0; k <= ZKH_REJECTED; k++) fprintf(out, " %9" PRIu64, r->outcome[t][(k + 1) % 5]);
    fprintf(out, "\n");
  }
  fprintf(out, "  return codes:");
  for (int i = 0; i < r->n_rcs; i++) {
    char b[24];
    fprintf(out, " %s %" PRIu64, rc_str(h, r->rcs[i].rc, b, sizeof b), r->rcs[i].n);
  }
  fprintf(out,
          "\n  writes with unknown outcome (maybe applied): %" PRIu64
          "; ops never completed: %" PRIu64 "; not recorded (history full): %" PRIu64 "\n",
          r->maybe_applied, r->incomplete, r->dropped);
  fprintf(out,
          "  final state: %" PRIu64 " keys read; %" PRIu64
          " keys with acked writes but no final read\n",
          r->final_keys, r->unchecked_keys);
  fprintf(out, "  %-20s %10s %10s\n", "property", "checks", "violations");
  for (int p = 0; p < ZKH_N_PROPS; p++)
    fprintf(out, "  %-20s %10" PRIu64 " %10" PRIu64 "\n", zkh_prop_name(p), r->checks[p],
            r->violations[p]);
  fprintf(out, "  total violations: %" PRIu64 "\n", r->total_violations);
}
