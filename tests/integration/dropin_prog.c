/* A ZooKeeper client written against plain <zookeeper/zookeeper.h>: sync
 * and async calls, watches of every kind (global and per-call watchers, a
 * watcher that re-arms from inside its callback), multi, ACLs with digest
 * auth, TTL creates, /zookeeper/config, reconfig, watch removal, the
 * server-list calls, contexts, zoo_set_watcher and the session calls.  It prints what it
 * observes, with every path relative to its base node and nothing that
 * depends on time, zxids or session ids, so that its output is the same
 * whichever way it runs: linked to libzookeeper_mt as is, built with
 * -DDROPIN_COMPAT (the one-line change to <zkroute/compat.h>), or run under
 * zkroute-run (tests/integration/it_dropin.sh compares the three).
 *
 * Usage: dropin_prog HOSTS BASE   (BASE: a node path that does not exist)
 * With a third argument "quirks" it prints only where zkroute once
 * differed (watch merging, serial callbacks): it_dropin.sh fails on a
 * difference there too.  With "identity" it makes its handle with
 * zookeeper_init2 and a log callback and prints whether the handle gives
 * the callback back, which only a real libzookeeper_mt handle does
 * (ZKROUTE=off must give one).  With "lockauth" it holds the credential
 * lock (zoo_lock_auth, exported by libzookeeper_mt but declared only in its
 * private zk_adaptor.h) while another thread calls zoo_add_auth, and
 * prints what each call returned and when: the same for every way it
 * runs. */
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#include <zookeeper/zookeeper.h>
#ifdef DROPIN_COMPAT
#include <zkroute/compat.h>
#endif

static zhandle_t *zh;
static const char *base;
static size_t base_len;
static int ctx1, ctx2; /* the handle's contexts: only their addresses matter */

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int connected;
static int session_events;
static char events[64][256];
static int ev_head, ev_tail;
static int pending; /* async completions still to come */

static const char *rc_name(int rc) {
  static char other[32];
  static const struct {
    int rc;
    const char *name;
  } names[] = {
#define N(c) {c, #c}
      N(ZOK),
      N(ZSYSTEMERROR),
      N(ZRUNTIMEINCONSISTENCY),
      N(ZDATAINCONSISTENCY),
      N(ZCONNECTIONLOSS),
      N(ZMARSHALLINGERROR),
      N(ZUNIMPLEMENTED),
      N(ZOPERATIONTIMEOUT),
      N(ZBADARGUMENTS),
      N(ZINVALIDSTATE),
      N(ZAPIERROR),
      N(ZNONODE),
      N(ZNOAUTH),
      N(ZBADVERSION),
      N(ZNOCHILDRENFOREPHEMERALS),
      N(ZNODEEXISTS),
      N(ZNOTEMPTY),
      N(ZSESSIONEXPIRED),
      N(ZINVALIDCALLBACK),
      N(ZINVALIDACL),
      N(ZAUTHFAILED),
      N(ZCLOSING),
      N(ZNOTHING),
      N(ZNOWATCHER),
#undef N
  };
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
    if (names[i].rc == rc) return names[i].name;
  snprintf(other, sizeof other, "rc%d", rc);
  return other;
}

static const char *type_name(int type) {
  if (type == ZOO_CREATED_EVENT) return "CREATED";
  if (type == ZOO_DELETED_EVENT) return "DELETED";
  if (type == ZOO_CHANGED_EVENT) return "CHANGED";
  if (type == ZOO_CHILD_EVENT) return "CHILD";
  if (type == ZOO_SESSION_EVENT) return "SESSION";
  if (type == ZOO_NOTWATCHING_EVENT) return "NOTWATCHING";
  return "?";
}

static const char *state_name(int state) {
  if (state == ZOO_CONNECTED_STATE) return "CONNECTED";
  if (state == ZOO_CONNECTING_STATE) return "CONNECTING";
  if (state == ZOO_EXPIRED_SESSION_STATE) return "EXPIRED";
  if (state == ZOO_AUTH_FAILED_STATE) return "AUTH_FAILED";
  return "?";
}

/* "$B/x" for base "/.../x". */
static const char *rel(const char *path, char *buf, size_t len) {
  if (!path) return "(null)";
  if (strncmp(path, base, base_len) == 0) snprintf(buf, len, "$B%s", path + base_len);
  else snprintf(buf, len, "%s", path);
  return buf;
}

static void at(char *out, size_t len, const char *name) { snprintf(out, len, "%s%s", base, name); }

static void stat_text(const struct Stat *s, char *buf, size_t len) {
  if (!s) {
    snprintf(buf, len, "stat=null");
    return;
  }
  snprintf(buf, len, "version=%d cversion=%d aversion=%d dataLength=%d numChildren=%d ephemeral=%s",
           s->version, s->cversion, s->aversion, s->dataLength, s->numChildren,
           s->ephemeralOwner ? "yes" : "no");
}

static int cmp_str(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

static void strings_text(const struct String_vector *v, char *buf, size_t len) {
  buf[0] = '\0';
  if (!v) {
    snprintf(buf, len, "null");
    return;
  }
  char **s = malloc((size_t)(v->count > 0 ? v->count : 1) * sizeof *s);
  for (int i = 0; i < v->count; i++) s[i] = v->data[i];
  qsort(s, (size_t)v->count, sizeof *s, cmp_str);
  size_t n = 0;
  n += (size_t)snprintf(buf + n, len - n, "[");
  for (int i = 0; i < v->count && n < len; i++)
    n += (size_t)snprintf(buf + n, len - n, "%s%s", i ? "," : "", s[i]);
  if (n < len) snprintf(buf + n, len - n, "]");
  free(s);
}

static void acl_text(const struct ACL_vector *v, char *buf, size_t len) {
  size_t n = 0;
  buf[0] = '\0';
  for (int i = 0; v && i < v->count && n < len; i++)
    n += (size_t)snprintf(buf + n, len - n, "%s%s:%s:%d", i ? "," : "", v->data[i].id.scheme,
                          v->data[i].id.id, v->data[i].perms);
}

static void push_event(const char *fmt, ...) {
  pthread_mutex_lock(&mu);
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(events[ev_tail % 64], sizeof events[0], fmt, ap);
  va_end(ap);
  ev_tail++;
  pthread_cond_broadcast(&cv);
  pthread_mutex_unlock(&mu);
}

static struct timespec deadline(int seconds) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  ts.tv_sec += seconds;
  return ts;
}

/* Prints the next watch event, waiting for it up to 15 s. */
static void expect_event(const char *what) {
  struct timespec ts = deadline(15);
  pthread_mutex_lock(&mu);
  while (ev_head == ev_tail)
    if (pthread_cond_timedwait(&cv, &mu, &ts) != 0) break;
  if (ev_head == ev_tail) printf("%s: event TIMEOUT\n", what);
  else printf("%s: event %s\n", what, events[ev_head++ % 64]);
  pthread_mutex_unlock(&mu);
}

static void expect_no_event(const char *what) {
  pthread_mutex_lock(&mu);
  if (ev_head != ev_tail) printf("%s: unexpected event %s\n", what, events[ev_head++ % 64]);
  else printf("%s: no other event\n", what);
  pthread_mutex_unlock(&mu);
}

/* ---- watchers ---- */

static void note_session(int state) {
  pthread_mutex_lock(&mu);
  session_events++;
  if (state == ZOO_CONNECTED_STATE) connected = 1;
  pthread_cond_broadcast(&cv);
  pthread_mutex_unlock(&mu);
}

/* The global watcher given to zookeeper_init. */
static void gwatch(zhandle_t *h, int type, int state, const char *path, void *ctx) {
  char r[256];
  if (type == ZOO_SESSION_EVENT) {
    if (ctx != &ctx1) push_event("global SESSION with a wrong context");
    note_session(state);
    return;
  }
  push_event("via=global type=%s path=%s ctx=%s handle=%s", type_name(type), rel(path, r, sizeof r),
             ctx == &ctx1   ? "ctx1"
             : ctx == &ctx2 ? "ctx2"
                            : "?",
             h == zh ? "same" : "OTHER");
}

/* The one zoo_set_watcher installs. */
static void gwatch2(zhandle_t *h, int type, int state, const char *path, void *ctx) {
  char r[256];
  if (type == ZOO_SESSION_EVENT) {
    note_session(state);
    return;
  }
  /* zoo_get_context from inside a callback, on the handle it was given. */
  const void *c = zoo_get_context(h);
  push_event("via=global2 type=%s state=%s path=%s ctx=%s get_context=%s handle=%s",
             type_name(type), state_name(state), rel(path, r, sizeof r),
             ctx == &ctx1   ? "ctx1"
             : ctx == &ctx2 ? "ctx2"
                            : "?",
             c == &ctx2 ? "ctx2" : "?", h == zh ? "same" : "OTHER");
}

static void rearm_done(int rc, const char *value, int len, const struct Stat *st,
                       const void *data) {
  (void)st;
  (void)data;
  push_event("re-armed from the watcher: rc=%s value=%.*s", rc_name(rc), value && len > 0 ? len : 0,
             value ? value : "");
}

/* Per-call watchers; ctx names the watch. */
static void cwatch(zhandle_t *h, int type, int state, const char *path, void *ctx) {
  char r[256];
  const char *name = ctx;
  push_event("via=%s type=%s state=%s path=%s handle=%s", name, type_name(type), state_name(state),
             rel(path, r, sizeof r), h == zh ? "same" : "OTHER");
  if (strcmp(name, "rearm") == 0) {
    /* An asynchronous call from inside the watcher, on its handle. */
    int rc = zoo_awget(h, path, cwatch, (void *)"rearmed", rearm_done, NULL);
    if (rc != ZOK) push_event("re-arm call failed: %s", rc_name(rc));
  }
}

/* ---- async completions: results by issue index ---- */

static char results[40][512];
static int write_order[32], n_write_order;

static void done(int idx, const char *fmt, ...) {
  pthread_mutex_lock(&mu);
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(results[idx], sizeof results[0], fmt, ap);
  va_end(ap);
  pending--;
  pthread_cond_broadcast(&cv);
  pthread_mutex_unlock(&mu);
}

static void wait_pending(void) {
  struct timespec ts = deadline(20);
  pthread_mutex_lock(&mu);
  while (pending > 0)
    if (pthread_cond_timedwait(&cv, &mu, &ts) != 0) break;
  if (pending > 0) printf("TIMEOUT: %d completions missing\n", pending);
  pthread_mutex_unlock(&mu);
}

static void note_write(int idx) {
  pthread_mutex_lock(&mu);
  write_order[n_write_order++] = idx;
  pthread_mutex_unlock(&mu);
}

#define IDX ((int)(intptr_t)data)

static void c_string(int rc, const char *value, const void *data) {
  char r[256];
  if (IDX < 100) note_write(IDX);
  done(IDX % 100, "rc=%s value=%s", rc_name(rc), rc == ZOK ? rel(value, r, sizeof r) : "-");
}

static void c_string_stat(int rc, const char *value, const struct Stat *st, const void *data) {
  char r[256], s[256];
  note_write(IDX);
  stat_text(st, s, sizeof s);
  done(IDX, "rc=%s value=%s %s", rc_name(rc), rc == ZOK ? rel(value, r, sizeof r) : "-", s);
}

static void c_stat(int rc, const struct Stat *st, const void *data) {
  char s[256];
  if (IDX < 100) note_write(IDX);
  stat_text(st, s, sizeof s);
  done(IDX % 100, "rc=%s %s", rc_name(rc), s);
}

static void c_void(int rc, const void *data) {
  if (IDX < 100) note_write(IDX);
  done(IDX % 100, "rc=%s", rc_name(rc));
}

static void c_data(int rc, const char *value, int len, const struct Stat *st, const void *data) {
  char s[256];
  stat_text(st, s, sizeof s);
  done(IDX, "rc=%s value=%.*s len=%d %s", rc_name(rc), value && len > 0 ? len : 0,
       value ? value : "", len, s);
}

static void c_strings(int rc, const struct String_vector *v, const void *data) {
  char s[512];
  strings_text(v, s, sizeof s);
  done(IDX, "rc=%s children=%s", rc_name(rc), rc == ZOK ? s : "-");
}

static void c_strings_stat(int rc, const struct String_vector *v, const struct Stat *st,
                           const void *data) {
  char s[256], t[256];
  strings_text(v, s, sizeof s);
  stat_text(st, t, sizeof t);
  done(IDX, "rc=%s children=%s %s", rc_name(rc), rc == ZOK ? s : "-", t);
}

static void c_acl(int rc, struct ACL_vector *acl, struct Stat *st, const void *data) {
  char a[256], s[256];
  acl_text(acl, a, sizeof a);
  stat_text(st, s, sizeof s);
  done(IDX, "rc=%s acl=%s %s", rc_name(rc), a, s);
}

static void issued(int rc, int idx, const char *what) {
  if (rc != ZOK) {
    printf("async %d %s: refused %s\n", idx, what, rc_name(rc));
    pthread_mutex_lock(&mu);
    pending--;
    pthread_mutex_unlock(&mu);
  }
}

#define ASYNC(idx, what, call)                                                                     \
  do {                                                                                             \
    pthread_mutex_lock(&mu);                                                                       \
    pending++;                                                                                     \
    pthread_mutex_unlock(&mu);                                                                     \
    snprintf(names[idx], sizeof names[0], "%s", what);                                             \
    issued(call, idx, what);                                                                       \
  } while (0)

#define D(i) ((const void *)(intptr_t)(i))

/* ---- sections ---- */

static void print_rc(const char *what, int rc) { printf("%s: %s\n", what, rc_name(rc)); }

static void sync_calls(void) {
  char p[256], q[256], buf[64], r[256], s[256];
  struct Stat st;
  int rc, len;

  rc = zoo_create(zh, base, "base", 4, &ZOO_OPEN_ACL_UNSAFE, 0, buf, sizeof buf);
  printf("create $B: %s path=%s\n", rc_name(rc), rel(buf, r, sizeof r));
  at(p, sizeof p, "/a");
  rc = zoo_create(zh, p, "v1", 2, &ZOO_OPEN_ACL_UNSAFE, 0, buf, sizeof buf);
  printf("create $B/a: %s path=%s\n", rc_name(rc), rel(buf, r, sizeof r));
  rc = zoo_create(zh, p, "v1", 2, &ZOO_OPEN_ACL_UNSAFE, 0, NULL, 0);
  print_rc("create $B/a again", rc);
  at(q, sizeof q, "/b");
  rc = zoo_create2(zh, q, "bee", 3, &ZOO_OPEN_ACL_UNSAFE, 0, buf, 4, &st);
  stat_text(&st, s, sizeof s);
  printf("create2 $B/b (path buffer of 4): %s path=%s %s\n", rc_name(rc), buf, s);
  rc = zoo_exists(zh, p, 0, &st);
  stat_text(&st, s, sizeof s);
  printf("exists $B/a: %s %s\n", rc_name(rc), s);
  at(q, sizeof q, "/nope");
  print_rc("exists $B/nope", zoo_exists(zh, q, 0, &st));
  print_rc("get $B/nope", (len = sizeof buf, zoo_get(zh, q, 0, buf, &len, &st)));
  len = sizeof buf;
  rc = zoo_get(zh, p, 0, buf, &len, &st);
  stat_text(&st, s, sizeof s);
  printf("get $B/a: %s value=%.*s len=%d %s\n", rc_name(rc), len > 0 ? len : 0, buf, len, s);
  len = 1;
  rc = zoo_get(zh, p, 0, buf, &len, &st);
  printf("get $B/a into 1 byte: %s value=%.*s len=%d dataLength=%d\n", rc_name(rc), len, buf, len,
         st.dataLength);
  print_rc("set $B/a v2 version 0", zoo_set(zh, p, "v2", 2, 0));
  print_rc("set $B/a v2 version 0 again", zoo_set(zh, p, "v2", 2, 0));
  rc = zoo_set2(zh, p, "v3", 2, -1, &st);
  stat_text(&st, s, sizeof s);
  printf("set2 $B/a v3: %s %s\n", rc_name(rc), s);
  len = sizeof buf;
  rc = zoo_get(zh, p, 0, buf, &len, NULL);
  printf("get $B/a after set2: %s value=%.*s\n", rc_name(rc), len > 0 ? len : 0, buf);

  at(q, sizeof q, "/nul");
  print_rc("create $B/nul with null data",
           zoo_create(zh, q, NULL, -1, &ZOO_OPEN_ACL_UNSAFE, 0, NULL, 0));
  len = sizeof buf;
  rc = zoo_get(zh, q, 0, buf, &len, &st);
  printf("get $B/nul: %s len=%d dataLength=%d\n", rc_name(rc), len, st.dataLength);

  at(q, sizeof q, "/seq-");
  for (int i = 0; i < 2; i++) {
    rc = zoo_create(zh, q, "s", 1, &ZOO_OPEN_ACL_UNSAFE, ZOO_SEQUENCE, buf, sizeof buf);
    printf("create sequential $B/seq-: %s path=%s\n", rc_name(rc), rel(buf, r, sizeof r));
  }

  at(q, sizeof q, "/eph");
  print_rc("create ephemeral $B/eph",
           zoo_create(zh, q, "e", 1, &ZOO_OPEN_ACL_UNSAFE, ZOO_EPHEMERAL, NULL, 0));
  rc = zoo_exists(zh, q, 0, &st);
  const clientid_t *id = zoo_client_id(zh);
  printf("exists $B/eph: %s owner is zoo_client_id: %s\n", rc_name(rc),
         id && id->client_id != 0 && st.ephemeralOwner == id->client_id ? "yes" : "no");
  at(r, sizeof r, "/eph/child");
  print_rc("create child of ephemeral",
           zoo_create(zh, r, "c", 1, &ZOO_OPEN_ACL_UNSAFE, 0, NULL, 0));

  struct String_vector v;
  rc = zoo_get_children(zh, base, 0, &v);
  strings_text(&v, s, sizeof s);
  printf("get_children $B: %s %s\n", rc_name(rc), s);
  deallocate_String_vector(&v);
  rc = zoo_get_children2(zh, base, 0, &v, &st);
  printf("get_children2 $B: %s count=%d numChildren=%d\n", rc_name(rc), v.count, st.numChildren);
  deallocate_String_vector(&v);

  at(q, sizeof q, "/b");
  print_rc("delete $B/b version 5", zoo_delete(zh, q, 5));
  print_rc("delete $B/b", zoo_delete(zh, q, -1));
  print_rc("delete $B/b again", zoo_delete(zh, q, -1));
  print_rc("delete $B (not empty)", zoo_delete(zh, base, -1));
  print_rc("create relative path", zoo_create(zh, "rel", "x", 1, &ZOO_OPEN_ACL_UNSAFE, 0, NULL, 0));
  print_rc("get trailing slash", (len = sizeof buf, zoo_get(zh, "/x/", 0, buf, &len, NULL)));
}

static void async_calls(void) {
  char names[16][64];
  char c[256], d[256];
  at(c, sizeof c, "/c");
  at(d, sizeof d, "/d");
  memset(results, 0, sizeof results);
  n_write_order = 0;
  /* Issued back to back; writes complete in issue order, and a read of a
   * path written just before sees the write. */
  ASYNC(0, "acreate $B/c", zoo_acreate(zh, c, "c1", 2, &ZOO_OPEN_ACL_UNSAFE, 0, c_string, D(0)));
  ASYNC(1, "aset $B/c c2", zoo_aset(zh, c, "c2", 2, -1, c_stat, D(1)));
  ASYNC(2, "aget $B/c", zoo_aget(zh, c, 0, c_data, D(2)));
  ASYNC(3, "aexists $B/c", zoo_aexists(zh, c, 0, c_stat, D(103)));
  ASYNC(4, "aget_children $B", zoo_aget_children(zh, base, 0, c_strings, D(4)));
  ASYNC(5, "aget_children2 $B", zoo_aget_children2(zh, base, 0, c_strings_stat, D(5)));
  ASYNC(6, "acreate2 $B/d",
        zoo_acreate2(zh, d, "d", 1, &ZOO_OPEN_ACL_UNSAFE, 0, c_string_stat, D(6)));
  ASYNC(7, "adelete $B/d", zoo_adelete(zh, d, -1, c_void, D(7)));
  ASYNC(8, "aget_acl $B/c", zoo_aget_acl(zh, c, c_acl, D(8)));
  ASYNC(9, "async (sync) $B", zoo_async(zh, base, c_string, D(109)));
  ASYNC(10, "aexists $B/d", zoo_aexists(zh, d, 0, c_stat, D(110)));
  ASYNC(11, "aset $B/c bad version", zoo_aset(zh, c, "x", 1, 99, c_stat, D(11)));
  ASYNC(12, "adelete $B/nope", zoo_adelete(zh, "/zkr-dropin-no/such/node", -1, c_void, D(12)));
  wait_pending();
  for (int i = 0; i < 13; i++) printf("async %d %s: %s\n", i, names[i], results[i]);
  int in_order = 1;
  for (int i = 1; i < n_write_order; i++)
    if (write_order[i] < write_order[i - 1]) in_order = 0;
  printf("async writes completed in issue order: %s (%d writes)\n", in_order ? "yes" : "no",
         n_write_order);
}

static void watches(void) {
  char w[256], w2[256], buf[64], s[512];
  struct Stat st;
  struct String_vector v;
  int len;
  at(w, sizeof w, "/w");
  at(w2, sizeof w2, "/w2");

  zoo_set_context(zh, &ctx2);
  printf("zoo_set_context then zoo_get_context: %s\n", zoo_get_context(zh) == &ctx2 ? "ctx2" : "?");
  watcher_fn old = zoo_set_watcher(zh, gwatch2);
  printf("zoo_set_watcher returned the previous watcher: %s\n", old == gwatch ? "yes" : "no");

  print_rc("exists $B/w with watch=1", zoo_exists(zh, w, 1, &st));
  print_rc("create $B/w", zoo_create(zh, w, "w0", 2, &ZOO_OPEN_ACL_UNSAFE, 0, NULL, 0));
  expect_event("global exists watch");

  len = sizeof buf;
  print_rc("wget $B/w (watcher data-w)", zoo_wget(zh, w, cwatch, (void *)"data-w", buf, &len, &st));
  print_rc("set $B/w", zoo_set(zh, w, "w1", 2, -1));
  expect_event("data watch");

  print_rc("wget_children $B (watcher child-B)",
           zoo_wget_children(zh, base, cwatch, (void *)"child-B", &v));
  deallocate_String_vector(&v);
  print_rc("create $B/w2", zoo_create(zh, w2, "x", 1, &ZOO_OPEN_ACL_UNSAFE, 0, NULL, 0));
  expect_event("child watch");

  print_rc("wexists $B/w (watcher del-w)", zoo_wexists(zh, w, cwatch, (void *)"del-w", &st));
  print_rc("delete $B/w", zoo_delete(zh, w, -1));
  expect_event("exists watch on delete");

  pending = 1;
  print_rc("awget $B/w2 (watcher async-w2)",
           zoo_awget(zh, w2, cwatch, (void *)"async-w2", c_data, D(0)));
  wait_pending();
  printf("awget completion: %s\n", results[0]);
  print_rc("set $B/w2", zoo_set(zh, w2, "y", 1, -1));
  expect_event("async-set watch");

  len = sizeof buf;
  print_rc("wget $B/w2 (watcher rearm)", zoo_wget(zh, w2, cwatch, (void *)"rearm", buf, &len, &st));
  print_rc("set $B/w2", zoo_set(zh, w2, "z", 1, -1));
  expect_event("re-arming watch");
  expect_event("re-arm completion");
  print_rc("set $B/w2", zoo_set(zh, w2, "zz", 1, -1));
  expect_event("re-armed watch");

  pending = 1;
  print_rc("aget_children $B with watch=1", zoo_aget_children(zh, base, 1, c_strings, D(1)));
  wait_pending();
  printf("aget_children completion: %s\n", results[1]);
  print_rc("delete $B/w2", zoo_delete(zh, w2, -1));
  expect_event("global child watch");

  print_rc("wget_children2 $B (watcher child2-B)",
           zoo_wget_children2(zh, base, cwatch, (void *)"child2-B", &v, &st));
  strings_text(&v, s, sizeof s);
  printf("  children %s numChildren=%d\n", s, st.numChildren);
  deallocate_String_vector(&v);
  print_rc("create $B/w3",
           (at(w, sizeof w, "/w3"), zoo_create(zh, w, "x", 1, &ZOO_OPEN_ACL_UNSAFE, 0, NULL, 0)));
  expect_event("child watch 2");
  expect_no_event("watches");
}

static void multi(void) {
  char m1[256], m2[256], m3[256], m4[256], a[256], c[256], pb1[64], pb2[64], r[256];
  struct Stat st1;
  at(m1, sizeof m1, "/m1");
  at(m2, sizeof m2, "/m2");
  at(m3, sizeof m3, "/m3");
  at(m4, sizeof m4, "/m4");
  at(a, sizeof a, "/a");
  at(c, sizeof c, "/c");

  zoo_op_t ops[5];
  zoo_op_result_t res[5];
  zoo_create_op_init(&ops[0], m1, "m1", 2, &ZOO_OPEN_ACL_UNSAFE, 0, pb1, sizeof pb1);
  zoo_create_op_init(&ops[1], m2, "m2", 2, &ZOO_OPEN_ACL_UNSAFE, 0, pb2, sizeof pb2);
  zoo_set_op_init(&ops[2], c, "multi", 5, -1, &st1);
  zoo_check_op_init(&ops[3], a, 2);
  zoo_delete_op_init(&ops[4], m2, -1);
  int rc = zoo_multi(zh, 5, ops, res);
  printf("multi create,create,set,check,delete: %s\n", rc_name(rc));
  for (int i = 0; i < 5; i++) printf("  result %d: %s\n", i, rc_name(res[i].err));
  printf("  create path %s; set version=%d\n", rel(pb1, r, sizeof r), st1.version);

  zoo_create_op_init(&ops[0], m3, "m3", 2, &ZOO_OPEN_ACL_UNSAFE, 0, NULL, 0);
  zoo_check_op_init(&ops[1], a, 99);
  rc = zoo_multi(zh, 2, ops, res);
  printf("multi create,check(bad version): %s results %s,%s\n", rc_name(rc), rc_name(res[0].err),
         rc_name(res[1].err));
  struct Stat st;
  print_rc("exists $B/m3 after the failed multi", zoo_exists(zh, m3, 0, &st));

  zoo_check_op_init(&ops[0], a, 2);
  zoo_check_op_init(&ops[1], m1, 0);
  rc = zoo_multi(zh, 2, ops, res);
  printf("multi of checks only: %s results %s,%s\n", rc_name(rc), rc_name(res[0].err),
         rc_name(res[1].err));

  zoo_create_op_init(&ops[0], m4, "m4", 2, &ZOO_OPEN_ACL_UNSAFE, 0, pb1, sizeof pb1);
  zoo_set_op_init(&ops[1], m4, "m4b", 3, 0, &st1);
  pending = 1;
  rc = zoo_amulti(zh, 2, ops, res, c_void, D(120));
  print_rc("amulti create,set", rc);
  wait_pending();
  printf("  completion %s; results %s,%s; set version=%d\n", results[20], rc_name(res[0].err),
         rc_name(res[1].err), st1.version);
  char buf[16];
  int len = sizeof buf;
  rc = zoo_get(zh, m4, 0, buf, &len, NULL);
  printf("get $B/m4 after amulti: %s value=%.*s\n", rc_name(rc), len > 0 ? len : 0, buf);
}

static void auth_done(int rc, const void *data) { done(IDX, "rc=%s", rc_name(rc)); }

static void acls(void) {
  char p[256], q[256], s[512], buf[64];
  struct Stat st;
  struct ACL_vector got;
  int rc, len;
  /* digest of "zkr:secret": base64(sha1("zkr:secret")) */
  struct ACL entries[2] = {
      {ZOO_PERM_ALL, {"digest", "zkr:H5yHITd507RoCVSip+dOQ0AYC1w="}},
      {ZOO_PERM_READ, {"world", "anyone"}},
  };
  struct ACL_vector acl = {2, entries};
  at(p, sizeof p, "/acl");
  at(q, sizeof q, "/creator");

  print_rc("create $B/acl with digest+world-read ACL",
           zoo_create(zh, p, "secret", 6, &acl, 0, NULL, 0));
  rc = zoo_get_acl(zh, p, &got, &st);
  acl_text(&got, s, sizeof s);
  printf("get_acl $B/acl: %s %s aversion=%d\n", rc_name(rc), s, st.aversion);
  deallocate_ACL_vector(&got);
  print_rc("set $B/acl without auth", zoo_set(zh, p, "x", 1, -1));
  len = sizeof buf;
  rc = zoo_get(zh, p, 0, buf, &len, NULL);
  printf("get $B/acl (world may read): %s value=%.*s\n", rc_name(rc), len > 0 ? len : 0, buf);
  print_rc("create with CREATOR_ALL_ACL without auth",
           zoo_create(zh, q, "x", 1, &ZOO_CREATOR_ALL_ACL, 0, NULL, 0));

  pending = 1;
  print_rc("add_auth digest zkr:secret",
           zoo_add_auth(zh, "digest", "zkr:secret", 10, auth_done, D(21)));
  wait_pending();
  printf("add_auth completion: %s\n", results[21]);
  print_rc("set $B/acl with auth", zoo_set(zh, p, "x", 1, -1));
  print_rc("create with CREATOR_ALL_ACL with auth",
           zoo_create(zh, q, "x", 1, &ZOO_CREATOR_ALL_ACL, 0, NULL, 0));
  rc = zoo_get_acl(zh, q, &got, &st);
  acl_text(&got, s, sizeof s);
  printf("get_acl $B/creator: %s %s\n", rc_name(rc), s);
  deallocate_ACL_vector(&got);
  print_rc("set_acl $B/acl version 0 to OPEN", zoo_set_acl(zh, p, 0, &ZOO_OPEN_ACL_UNSAFE));
  print_rc("set_acl $B/acl version 0 again", zoo_set_acl(zh, p, 0, &ZOO_OPEN_ACL_UNSAFE));
  rc = zoo_get_acl(zh, p, &got, &st);
  acl_text(&got, s, sizeof s);
  printf("get_acl $B/acl: %s %s aversion=%d\n", rc_name(rc), s, st.aversion);
  deallocate_ACL_vector(&got);

  pending = 2;
  rc = zoo_aset_acl(zh, p, 1, &acl, c_void, D(122));
  print_rc("aset_acl $B/acl version 1", rc);
  rc = zoo_aget_acl(zh, p, c_acl, D(23));
  print_rc("aget_acl $B/acl", rc);
  wait_pending();
  printf("  aset_acl completion %s\n  aget_acl completion %s\n", results[22], results[23]);
}

/* The asynchronous watching reads, TTL creates, /zookeeper/config, watch
 * removal and the server-list calls: what each returns, and the events. */
/* Only whether it is a config: each server names its peers its way. */
static const char *server_lines(const char *value, int len) {
  char copy[1024];
  if (!value || len <= 0) return "no";
  snprintf(copy, sizeof copy, "%.*s", len, value);
  return strstr(copy, "server.") ? "yes" : "no";
}

static void c_config(int rc, const char *value, int len, const struct Stat *st, const void *data) {
  (void)st;
  done(IDX, "rc=%s server lines=%s", rc_name(rc), server_lines(value, len));
}

static const char *hosts_arg;

static void more_calls(void) {
  char p[256], q[256], buf[512], r[256];
  struct Stat st;
  int len;
  at(p, sizeof p, "/more");
  print_rc("create $B/more", zoo_create(zh, p, "m", 1, &ZOO_OPEN_ACL_UNSAFE, 0, NULL, 0));
  at(q, sizeof q, "/more/x");

  pending = 1;
  print_rc("awexists $B/more/x (watcher aw-exists)",
           zoo_awexists(zh, q, cwatch, (void *)"aw-exists", c_stat, D(25)));
  wait_pending();
  printf("  completion %s\n", results[25]);
  print_rc("create $B/more/x", zoo_create(zh, q, "x", 1, &ZOO_OPEN_ACL_UNSAFE, 0, NULL, 0));
  expect_event("awexists watch");
  pending = 1;
  print_rc("awget_children $B/more (watcher aw-children)",
           zoo_awget_children(zh, p, cwatch, (void *)"aw-children", c_strings, D(26)));
  wait_pending();
  printf("  completion %s\n", results[26]);
  print_rc("delete $B/more/x", zoo_delete(zh, q, -1));
  expect_event("awget_children watch");
  pending = 1;
  print_rc("awget_children2 $B/more (watcher aw-children2)",
           zoo_awget_children2(zh, p, cwatch, (void *)"aw-children2", c_strings_stat, D(27)));
  wait_pending();
  printf("  completion %s\n", results[27]);
  print_rc("create $B/more/x", zoo_create(zh, q, "x", 1, &ZOO_OPEN_ACL_UNSAFE, 0, NULL, 0));
  expect_event("awget_children2 watch");

  /* TTL nodes: the servers' answer (ZUNIMPLEMENTED without
   * extendedTypesEnabled), the same routed. */
  char t[256];
  at(t, sizeof t, "/more/ttl");
  print_rc("create_ttl $B/more/ttl", zoo_create_ttl(zh, t, "", 0, &ZOO_OPEN_ACL_UNSAFE,
                                                    ZOO_PERSISTENT_WITH_TTL, 60000, NULL, 0));
  print_rc("create2_ttl $B/more/ttl",
           zoo_create2_ttl(zh, t, "", 0, &ZOO_OPEN_ACL_UNSAFE, ZOO_PERSISTENT_WITH_TTL, 60000, NULL,
                           0, &st));
  pending = 1;
  print_rc("acreate_ttl $B/more/ttl",
           zoo_acreate_ttl(zh, t, "", 0, &ZOO_OPEN_ACL_UNSAFE, ZOO_PERSISTENT_WITH_TTL, 60000,
                           c_string, D(128)));
  wait_pending();
  pending = 1;
  print_rc("acreate2_ttl $B/more/ttl",
           zoo_acreate2_ttl(zh, t, "", 0, &ZOO_OPEN_ACL_UNSAFE, ZOO_PERSISTENT_WITH_TTL, 60000,
                            c_string_stat, D(29)));
  wait_pending();
  printf("  acreate_ttl completion %s\n  acreate2_ttl completion %s\n", results[28], results[29]);

  /* /zookeeper/config, the four ways. */
  len = sizeof buf;
  int rc = zoo_getconfig(zh, 0, buf, &len, &st);
  printf("getconfig: %s server lines=%s\n", rc_name(rc), rc == ZOK ? server_lines(buf, len) : "-");
  len = sizeof buf;
  rc = zoo_wgetconfig(zh, cwatch, (void *)"config", buf, &len, &st);
  printf("wgetconfig (watcher config): %s server lines=%s\n", rc_name(rc),
         rc == ZOK ? server_lines(buf, len) : "-");
  pending = 1;
  print_rc("agetconfig", zoo_agetconfig(zh, 0, c_config, D(30)));
  wait_pending();
  printf("  completion %s\n", results[30]);
  pending = 1;
  print_rc("awgetconfig (watcher config2)",
           zoo_awgetconfig(zh, cwatch, (void *)"config2", c_config, D(31)));
  wait_pending();
  printf("  completion %s\n", results[31]);
  print_rc("remove_all_watches /zookeeper/config",
           zoo_remove_all_watches(zh, ZOO_CONFIG_NODE, ZWATCHTYPE_ANY, 0));

  /* A reconfiguration (these servers have it disabled: their answer). */
  len = sizeof buf;
  print_rc("reconfig leaving server 99", zoo_reconfig(zh, NULL, "99", NULL, -1, buf, &len, &st));
  pending = 1;
  print_rc("areconfig leaving server 99", zoo_areconfig(zh, NULL, "99", NULL, -1, c_config, D(34)));
  wait_pending();
  printf("  completion %s\n", results[34]);

  /* Watch removal, each form. */
  len = sizeof buf;
  print_rc("wget $B/more (watcher rm-1)", zoo_wget(zh, p, cwatch, (void *)"rm-1", buf, &len, &st));
  print_rc("remove_watches rm-1 data",
           zoo_remove_watches(zh, p, ZWATCHTYPE_DATA, cwatch, (void *)"rm-1", 0));
  print_rc("remove_watches rm-1 data again",
           zoo_remove_watches(zh, p, ZWATCHTYPE_DATA, cwatch, (void *)"rm-1", 0));
  print_rc("wexists $B/more (watcher rm-2)", zoo_wexists(zh, p, cwatch, (void *)"rm-2", &st));
  pending = 1;
  print_rc("aremove_watches rm-2 any",
           zoo_aremove_watches(zh, p, ZWATCHTYPE_ANY, cwatch, (void *)"rm-2", 0,
                               (void_completion_t *)c_void, D(132)));
  wait_pending();
  printf("  completion %s\n", results[32]);
  len = sizeof buf;
  print_rc("wget $B/more (watcher rm-3)", zoo_wget(zh, p, cwatch, (void *)"rm-3", buf, &len, &st));
  struct String_vector v;
  print_rc("wget_children $B/more (watcher rm-4)",
           zoo_wget_children(zh, p, cwatch, (void *)"rm-4", &v));
  deallocate_String_vector(&v);
  print_rc("remove_all_watches $B/more local", zoo_remove_all_watches(zh, p, ZWATCHTYPE_ANY, 1));
  pending = 1;
  print_rc("aremove_all_watches $B/more",
           zoo_aremove_all_watches(zh, p, ZWATCHTYPE_ANY, 0, (void_completion_t *)c_void, D(133)));
  wait_pending();
  printf("  completion %s\n", results[33]);
  print_rc("set $B/more", zoo_set(zh, p, "n", 1, -1));
  print_rc("delete $B/more/x", zoo_delete(zh, q, -1));
  nanosleep(&(struct timespec){0, 300000000}, NULL);
  expect_no_event("removed watchers");

  /* The server list and where the session is. */
  print_rc("set_servers_resolution_delay -2", zoo_set_servers_resolution_delay(zh, -2));
  print_rc("set_servers_resolution_delay -1", zoo_set_servers_resolution_delay(zh, -1));
  print_rc("set_servers_resolution_delay 0", zoo_set_servers_resolution_delay(zh, 0));
  print_rc("set_servers (the same list)", zoo_set_servers(zh, hosts_arg));
  print_rc("set_servers NULL", zoo_set_servers(zh, NULL));
  zoo_cycle_next_server(zh);
  printf("zoo_cycle_next_server: returned\n");
  const char *cur = zoo_get_current_server(zh);
  printf("zoo_get_current_server: %s\n", cur && strstr(hosts_arg, cur) ? "one of the list" : "?");
  struct sockaddr_storage ss;
  socklen_t sl = sizeof ss;
  struct sockaddr *sa = zookeeper_get_connected_host(zh, (struct sockaddr *)&ss, &sl);
  printf("zookeeper_get_connected_host: %s\n", sa && ss.ss_family == AF_INET ? "an IPv4 address"
                                               : sa                          ? "an address"
                                                                             : "NULL");
  zoo_deterministic_conn_order(0);
  zoo_set_log_stream(NULL);
  printf("zoo_deterministic_conn_order, zoo_set_log_stream: returned\n");
  (void)r;
}

static void session_calls(void) {
  printf("zoo_state: %s\n", state_name(zoo_state(zh)));
  printf("is_unrecoverable: %s\n", rc_name(is_unrecoverable(zh)));
  printf("zoo_recv_timeout: %d\n", zoo_recv_timeout(zh));
  printf("zerror(ZNONODE): %s\n", zerror(ZNONODE));
}

/* ---- "quirks": where zkroute is known to differ (docs/dropin.md) ---- */

static _Atomic int in_callback, max_in_callback, quirk_done;

static void busy_cb(int rc, const char *value, int len, const struct Stat *st, const void *data) {
  (void)rc, (void)value, (void)len, (void)st, (void)data;
  int n = ++in_callback;
  for (int m = max_in_callback; n > m && !atomic_compare_exchange_weak(&max_in_callback, &m, n);)
    ;
  struct timespec ts = {0, 300000};
  nanosleep(&ts, NULL); /* long enough for another callback to overlap */
  in_callback--;
  quirk_done++;
}

/* A stock session delivers a watcher/context pair once per change however
 * often it was set, and runs every callback on one thread. */
static void quirks(void) {
  char q[256];
  struct Stat st;
  char buf[16];
  int len;
  zoo_create(zh, base, "q", 1, &ZOO_OPEN_ACL_UNSAFE, 0, NULL, 0);
  at(q, sizeof q, "/q");
  zoo_create(zh, q, "q", 1, &ZOO_OPEN_ACL_UNSAFE, 0, NULL, 0);
  for (int i = 0; i < 4; i++) {
    zoo_exists(zh, q, 1, &st);
    len = sizeof buf;
    zoo_get(zh, q, 1, buf, &len, &st);
  }
  zoo_set(zh, q, "r", 1, -1);
  struct timespec ts = {1, 0};
  nanosleep(&ts, NULL);
  pthread_mutex_lock(&mu);
  int n = ev_tail - ev_head;
  pthread_mutex_unlock(&mu);
  printf("one change after the global watcher was set 8 times: %d event(s)\n", n);

  const int N = 400;
  for (int i = 0; i < N; i++) zoo_aget(zh, q, 0, busy_cb, NULL);
  for (int i = 0; i < 200 && quirk_done < N; i++) nanosleep(&(struct timespec){0, 50000000}, NULL);
  printf("completions: %d; at most %d callback(s) running at once\n", (int)quirk_done,
         (int)max_in_callback);
  zoo_delete(zh, q, -1);
  zoo_delete(zh, base, -1);
}

/* ---- "identity": what only a real libzookeeper_mt handle answers ---- */

/* The handle is made with zookeeper_init2 and this log callback.  A real
 * handle gives it back; a routed one does not use it (docs/dropin.md), and
 * its zoo_get_log_callback says so. */
static void id_log(const char *message) { (void)message; }

static void identity(void) {
  printf("zoo_get_log_callback gives ours: %s\n",
         zoo_get_log_callback(zh) == id_log ? "yes" : "no");
}

/* ---- "lockauth": the credential lock ---- */

/* Not in zookeeper.h: programs declare them themselves. */
int zoo_lock_auth(zhandle_t *zh);
int zoo_unlock_auth(zhandle_t *zh);

static _Atomic int add_auth_returned = 0, add_auth_rc = 0;

static void *add_auth_main(void *arg) {
  (void)arg;
  add_auth_rc = zoo_add_auth(zh, "digest", "zkr:lock", 8, c_void, D(24));
  add_auth_returned = 1;
  return NULL;
}

/* Stock holds the handle's auth list lock across zoo_add_auth (and its
 * replies): a zoo_add_auth made while the program holds it waits. */
static void lockauth(void) {
  printf("zoo_lock_auth: %d\n", zoo_lock_auth(zh));
  pending = 1;
  pthread_t t;
  pthread_create(&t, NULL, add_auth_main, NULL);
  nanosleep(&(struct timespec){0, 500000000}, NULL);
  printf("zoo_add_auth from another thread, 0.5 s into the lock: %s\n",
         add_auth_returned ? "returned" : "waiting");
  printf("zoo_unlock_auth: %d\n", zoo_unlock_auth(zh));
  pthread_join(t, NULL);
  printf("zoo_add_auth after zoo_unlock_auth: %s\n", rc_name(add_auth_rc));
  wait_pending();
  printf("  add_auth completion %s\n", results[24]);
  printf("zoo_lock_auth again: %d\n", zoo_lock_auth(zh));
  printf("zoo_unlock_auth again: %d\n", zoo_unlock_auth(zh));
  print_rc("create $B after the lock",
           zoo_create(zh, base, "", 0, &ZOO_OPEN_ACL_UNSAFE, 0, NULL, 0));
  print_rc("delete $B", zoo_delete(zh, base, -1));
}

static void delete_tree(const char *path) {
  struct String_vector v;
  if (zoo_get_children(zh, path, 0, &v) == ZOK) {
    for (int i = 0; i < v.count; i++) {
      char child[512];
      snprintf(child, sizeof child, "%s/%s", path, v.data[i]);
      delete_tree(child);
    }
    deallocate_String_vector(&v);
  }
  int rc = zoo_delete(zh, path, -1);
  if (rc != ZOK && rc != ZNONODE) {
    char r[256];
    printf("cleanup: delete %s: %s\n", rel(path, r, sizeof r), rc_name(rc));
  }
}

int main(int argc, char **argv) {
  if (argc != 3 &&
      !(argc == 4 && (strcmp(argv[3], "quirks") == 0 || strcmp(argv[3], "identity") == 0 ||
                      strcmp(argv[3], "lockauth") == 0))) {
    fprintf(stderr, "usage: %s HOSTS BASE [quirks|identity|lockauth]\n", argv[0]);
    return 2;
  }
  setvbuf(stdout, NULL, _IOLBF, 0);
  base = argv[2];
  base_len = strlen(base);
  hosts_arg = argv[1];
  zoo_set_debug_level(ZOO_LOG_LEVEL_WARN);

  if (argc == 4 && strcmp(argv[3], "identity") == 0)
    zh = zookeeper_init2(argv[1], gwatch, 10000, NULL, &ctx1, 0, id_log);
  else zh = zookeeper_init(argv[1], gwatch, 10000, NULL, &ctx1, 0);
  printf("zookeeper_init: %s\n", zh ? "handle" : "NULL");
  if (!zh) return 1;
  struct timespec ts = deadline(20);
  pthread_mutex_lock(&mu);
  while (!connected)
    if (pthread_cond_timedwait(&cv, &mu, &ts) != 0) break;
  pthread_mutex_unlock(&mu);
  printf("session: %s\n", connected ? "connected" : "TIMEOUT");
  if (!connected) return 1;
  /* A routed handle is CONNECTED as soon as one member is: a second lets
   * the others and the leader's srvr poll catch up, so that the statistics
   * it_dropin.sh checks show steady-state routing. */
  nanosleep(&(struct timespec){1, 0}, NULL);
  printf("zoo_get_context: %s\n", zoo_get_context(zh) == &ctx1 ? "ctx1" : "?");
  if (argc == 4 && strcmp(argv[3], "identity") == 0) {
    identity();
    zookeeper_close(zh);
    return 0;
  }
  if (argc == 4 && strcmp(argv[3], "lockauth") == 0) {
    lockauth();
    zookeeper_close(zh);
    return 0;
  }
  if (argc == 4) {
    quirks();
    zookeeper_close(zh);
    return 0;
  }

  sync_calls();
  async_calls();
  watches();
  multi();
  acls();
  more_calls();
  session_calls();
  delete_tree(base);
  struct Stat st;
  print_rc("cleanup: exists $B", zoo_exists(zh, base, 0, &st));
  print_rc("zookeeper_close", zookeeper_close(zh));
  printf("session events seen: %d\n", session_events);
  return 0;
}
