/* zkconfd: a small configuration daemon.  It mirrors a subtree of znodes
 * into a directory of files, registers itself, and runs a reload hook under
 * a lock whenever the files changed (docs/examples.md).
 *
 *   zkconfd [options] HOSTS ZNODE DIR
 *
 * - A znode without children is a file holding its data; a znode with
 *   children is a directory (its own data is not mirrored).  Every change
 *   is written to a temporary file in the target's directory, then renamed
 *   over it.  Watches are set again with every read; after a reconnect
 *   (CONNECTING, then CONNECTED) the whole tree is read again, and files
 *   that no longer match a znode are removed.  On EXPIRED the handle is
 *   closed and a new one made, and the tree read again through it after a
 *   sync.  A read older than one already applied (a smaller mzxid) is
 *   logged as "stale" and not applied.
 * - It registers with an ephemeral sequential node REGDIR/m-<session>-NNN
 *   holding its name (the host name, or -n), found again by that prefix
 *   after a connection loss.
 * - With -x, after changes (at most once per -i ms) it takes the lock of
 *   LOCKDIR in the style of ZooKeeper's C lock recipe (a node
 *   x-<session>-NNN, found again after a connection loss; it watches the
 *   node just before its own) and runs the hook (/bin/sh -c CMD, with
 *   ZKCONFD_DIR set) while it holds it.
 * - It logs every state change, write, lock step and hook on one line each:
 *   CLOCK_MONOTONIC microseconds, wall time, event.  SIGTERM or SIGINT:
 *   it finishes a running hook, closes the handle and exits 0.  SIGHUP:
 *   full resync.
 *
 * Written against plain <zookeeper/zookeeper.h> (THREADED): it runs
 * stock, routed when built with -DZKCONFD_COMPAT (<zkroute/compat.h>), and
 * routed unmodified under zkroute-run. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <getopt.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <zookeeper/zookeeper.h>
#ifdef ZKCONFD_COMPAT
#include <zkroute/compat.h>
#endif

extern char **environ;

/* ---- options and logging ---- */

static const char *hosts, *root, *dir, *name, *regdir = "/zkconfd/members",
                                              *lockdir = "/zkconfd/lock", *hook, *logpath;
static int timeout_ms = 10000, interval_ms = 500, do_fsync;
static FILE *log_fp;
static pthread_mutex_t log_mu = PTHREAD_MUTEX_INITIALIZER;

static uint64_t mono_us(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

static void logm(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void logm(const char *fmt, ...) {
  char wall[40];
  struct timespec ts;
  struct tm tm;
  clock_gettime(CLOCK_REALTIME, &ts);
  gmtime_r(&ts.tv_sec, &tm);
  strftime(wall, sizeof wall, "%Y-%m-%dT%H:%M:%S", &tm);
  va_list ap;
  va_start(ap, fmt);
  pthread_mutex_lock(&log_mu);
  fprintf(log_fp, "%" PRIu64 " %s.%03ldZ ", mono_us(), wall, ts.tv_nsec / 1000000);
  vfprintf(log_fp, fmt, ap);
  fputc('\n', log_fp);
  fflush(log_fp);
  pthread_mutex_unlock(&log_mu);
  va_end(ap);
}

static const char *state_name(int s) {
  if (s == ZOO_CONNECTED_STATE) return "CONNECTED";
  if (s == ZOO_CONNECTING_STATE) return "CONNECTING";
  if (s == ZOO_ASSOCIATING_STATE) return "ASSOCIATING";
  if (s == ZOO_EXPIRED_SESSION_STATE) return "EXPIRED";
  if (s == ZOO_AUTH_FAILED_STATE) return "AUTH_FAILED";
  if (s == ZOO_READONLY_STATE) return "READONLY";
  return "NOTCONNECTED";
}

static int lost(int rc) { /* the call may be retried later on */
  return rc == ZCONNECTIONLOSS || rc == ZOPERATIONTIMEOUT || rc == ZINVALIDSTATE ||
         rc == ZSESSIONEXPIRED || rc == ZCLOSING || rc == ZSESSIONMOVED;
}

static void sleep_ms(int ms) {
  struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
  nanosleep(&ts, NULL);
}

/* ---- the handle: re-made on expiry ---- */

static pthread_rwlock_t hl = PTHREAD_RWLOCK_INITIALIZER; /* zh, gen */
static zhandle_t *zh;
static uintptr_t gen; /* handle generation, the watchers' context */

/* Everything below is under mu. */
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t work_cv;   /* the worker (CLOCK_MONOTONIC) */
static pthread_cond_t reload_cv; /* the reload thread (CLOCK_MONOTONIC) */
static int stopping, exit_code;
static int events[64], ev_n; /* session states, in order, for the worker */
static int connected;        /* the worker's view of the state */
static int dirty;            /* files changed since the last hook started */
static int lock_kick;        /* the predecessor went away, or a session event */

static void global_watcher(zhandle_t *h, int type, int state, const char *path, void *ctx) {
  (void)h, (void)path;
  if (type != ZOO_SESSION_EVENT) return;
  pthread_mutex_lock(&mu);
  if ((uintptr_t)ctx == gen && ev_n < 64) events[ev_n++] = state;
  lock_kick = 1;
  pthread_cond_broadcast(&work_cv);
  pthread_cond_broadcast(&reload_cv);
  pthread_mutex_unlock(&mu);
}

static int new_handle(void) { /* under the write lock */
  pthread_mutex_lock(&mu);    /* the watchers read gen under mu */
  uintptr_t g = ++gen;
  pthread_mutex_unlock(&mu);
  zh = zookeeper_init(hosts, global_watcher, timeout_ms, NULL, (void *)g, 0);
  if (!zh) logm("error zookeeper_init: %s", strerror(errno));
  return zh ? 0 : -1;
}

static int64_t session_id(void) { return zoo_client_id(zh)->client_id; }

/* ---- the mirrored tree ---- */

enum { F_DATA = 1, F_CHILDREN = 2, F_EXISTS = 4 };
enum { K_NONE, K_FILE, K_DIR };

typedef struct node {
  char *path; /* the znode */
  char *file; /* DIR/relative path */
  struct node *hnext, *parent, *child, *sibling, *qnext;
  int queued;   /* F_ flags waiting to be read */
  int inflight; /* F_ flags being read */
  int deferred; /* queued while in flight: back in the queue after */
  int rs;       /* to be read for the resync in progress */
  int present, kind;
  int64_t max_mzxid;  /* newest data ever read (kept after a delete) */
  int64_t file_mzxid; /* data in the file now, 0 none */
} node_t;

#define NBUCKETS 4096
static node_t *buckets[NBUCKETS];
static node_t *qhead, *qtail, *top;
static long n_writes, n_removes, n_stale, n_resyncs, n_hooks, n_locks;

static unsigned hash(const char *s) {
  unsigned h = 2166136261u;
  while (*s) h = (h ^ (unsigned char)*s++) * 16777619u;
  return h % NBUCKETS;
}

static node_t *find(const char *path) {
  for (node_t *n = buckets[hash(path)]; n; n = n->hnext)
    if (strcmp(n->path, path) == 0) return n;
  return NULL;
}

static node_t *get_node(const char *path, node_t *parent) {
  node_t *n = find(path);
  if (n) return n;
  n = calloc(1, sizeof *n);
  n->path = strdup(path);
  const char *rel = path + strlen(root);
  if (strcmp(root, "/") == 0) rel = path;
  if (asprintf(&n->file, "%s%s", dir, rel) < 0) abort();
  unsigned b = hash(path);
  n->hnext = buckets[b];
  buckets[b] = n;
  if (parent) {
    n->parent = parent;
    n->sibling = parent->child;
    parent->child = n;
  }
  return n;
}

static void enqueue(node_t *n, int flags) { /* under mu */
  if (!n->queued) {
    n->qnext = NULL;
    if (qtail) qtail->qnext = n;
    else qhead = n;
    qtail = n;
  }
  n->queued |= flags;
  pthread_cond_broadcast(&work_cv);
}

static void node_watcher(zhandle_t *h, int type, int state, const char *path, void *ctx) {
  (void)h, (void)state;
  if (type == ZOO_SESSION_EVENT) return;
  pthread_mutex_lock(&mu);
  node_t *n = (uintptr_t)ctx == gen ? find(path) : NULL;
  if (n) {
    if (type == ZOO_CHANGED_EVENT) enqueue(n, F_DATA);
    else if (type == ZOO_CHILD_EVENT) enqueue(n, F_CHILDREN);
    else enqueue(n, F_DATA | F_CHILDREN);
  }
  pthread_mutex_unlock(&mu);
}

/* ---- files ---- */

static int rm_entry(const char *p, const struct stat *st, int flag, struct FTW *f) {
  (void)st, (void)f;
  return (flag == FTW_DP ? rmdir(p) : unlink(p)) == 0 || errno == ENOENT ? 0 : -1;
}

static void rm_tree(const char *p) {
  struct stat st;
  if (lstat(p, &st) != 0) return;
  if (S_ISDIR(st.st_mode)) nftw(p, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
  else unlink(p);
}

static int ensure_dir(const char *p) {
  struct stat st;
  if (lstat(p, &st) == 0 && S_ISDIR(st.st_mode)) return 0;
  rm_tree(p);
  if (mkdir(p, 0755) == 0) return 0;
  logm("error mkdir %s: %s", p, strerror(errno));
  return -1;
}

/* Writes DATA to FILE through a temporary file and rename(2). */
static int write_file(const char *file, const char *data, int len) {
  char tmp[4200];
  const char *slash = strrchr(file, '/');
  snprintf(tmp, sizeof tmp, "%.*s/.%s.zkconfd-tmp", (int)(slash - file), file, slash + 1);
  int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) goto fail;
  for (int off = 0; off < len;) {
    ssize_t w = write(fd, data + off, (size_t)(len - off));
    if (w < 0 && errno == EINTR) continue;
    if (w < 0) goto fail_fd;
    off += (int)w;
  }
  if (do_fsync && fsync(fd) != 0) goto fail_fd;
  if (close(fd) != 0) goto fail;
  struct stat st;
  if (lstat(file, &st) == 0 && S_ISDIR(st.st_mode)) rm_tree(file);
  if (rename(tmp, file) == 0) return 0;
  goto fail;
fail_fd:
  close(fd);
fail:
  logm("error write %s: %s", file, strerror(errno));
  unlink(tmp);
  return -1;
}

/* The data as a log field: printable ASCII, at most 64 bytes. */
static void quote(char *out, const char *data, int len) {
  int i, o = 0;
  for (i = 0; i < len && i < 64; i++)
    out[o++] = data[i] >= 32 && data[i] < 127 && data[i] != '"' ? data[i] : '.';
  out[o] = 0;
}

/* The znode is gone (or left the tree): forget it and its files. */
static void gone(node_t *n) {
  for (node_t *c = n->child; c; c = c->sibling)
    if (c->present) gone(c);
  if (n->present && n != top) {
    rm_tree(n->file);
    n_removes++;
    logm("remove path=%s", n->path);
  }
  n->present = 0;
  n->kind = K_NONE;
  n->file_mzxid = 0;
}

/* ---- reading the tree ----
 * The worker issues asynchronous reads, up to WINDOW at a time, one of
 * each kind per node; their completions (on ZooKeeper's completion thread,
 * in the order they were issued) apply the results under mu. */

#define WINDOW 64
typedef struct {
  node_t *n;
  uintptr_t gen;
  int what;
} req_t;
static int inflight_n;    /* reads sent, not completed */
static int resync_left;   /* nodes the resync has still to read */
static uint64_t retry_at; /* after an error: no new read before (mono us) */

static void changed(void) {
  dirty = 1;
  pthread_cond_broadcast(&reload_cv);
}

static void apply_data(node_t *n, const char *data, int len, const struct Stat *st) {
  if (st->mzxid < n->max_mzxid) {
    n_stale++;
    logm("stale path=%s mzxid=0x%" PRIx64 " applied=0x%" PRIx64 " handle=%lu", n->path,
         (uint64_t)st->mzxid, (uint64_t)n->max_mzxid, (unsigned long)gen);
    return;
  }
  n->max_mzxid = st->mzxid;
  n->present = 1;
  /* A directory's data is not mirrored; a leaf that got children is left
   * to the children's read. */
  if (st->numChildren > 0 || n->kind == K_DIR) return;
  if (n->kind == K_FILE && n->file_mzxid == st->mzxid) return;
  if (len < 0) len = 0;
  if (write_file(n->file, data, len) != 0) return;
  n->kind = K_FILE;
  n->file_mzxid = st->mzxid;
  n_writes++;
  char q[80];
  quote(q, data, len);
  logm("write path=%s mzxid=0x%" PRIx64 " version=%d len=%d data=\"%s\"", n->path,
       (uint64_t)st->mzxid, st->version, len, q);
  changed();
}

static void apply_children(node_t *n, const struct String_vector *v) {
  n->present = 1;
  for (node_t *c = n->child; c; c = c->sibling) {
    int keep = 0;
    for (int i = 0; i < v->count && !keep; i++)
      keep = strcmp(c->path + strlen(n->path) + (n->path[1] != 0), v->data[i]) == 0;
    if (!keep && c->present) {
      gone(c);
      changed();
    }
  }
  for (int i = 0; i < v->count; i++) {
    char p[4096];
    snprintf(p, sizeof p, "%s/%s", n->path[1] ? n->path : "", v->data[i]);
    node_t *c = get_node(p, n);
    if (!c->present) {
      c->present = 1;
      enqueue(c, F_DATA | F_CHILDREN);
    }
  }
  if (v->count > 0 || n == top) {
    if (n->kind != K_DIR && ensure_dir(n->file) == 0) {
      if (n->kind == K_FILE) changed();
      n->kind = K_DIR;
      n->file_mzxid = 0;
    }
  } else if (n->kind != K_FILE) { /* a leaf now: its data makes the file */
    n->kind = K_NONE;
    enqueue(n, F_DATA);
  }
}

/* The common end of a completion, under mu: 1 when its result applies. */
static int finish(req_t *r, int rc) {
  node_t *n = r->n;
  n->inflight &= ~r->what;
  inflight_n--;
  int current = r->gen == gen;
  if (current && rc != ZOK && rc != ZNONODE) {
    logm("read error=%s path=%s", zerror(rc), n->path);
    enqueue(n, r->what); /* again, after a pause */
    retry_at = mono_us() + 200000u;
  }
  if (!n->inflight && n->deferred) {
    n->deferred = 0;
    int flags = n->queued;
    n->queued = 0;
    enqueue(n, flags);
  }
  if (n->rs && !n->inflight && !n->queued) { /* read since the resync began */
    n->rs = 0;
    resync_left--;
  }
  pthread_cond_broadcast(&work_cv);
  return current && (rc == ZOK || rc == ZNONODE);
}

static void data_done(int rc, const char *value, int len, const struct Stat *st, const void *data) {
  req_t *r = (req_t *)data;
  pthread_mutex_lock(&mu);
  if (finish(r, rc)) {
    if (rc == ZOK) apply_data(r->n, value, len, st);
    else if (r->n->present) gone(r->n), changed();
  }
  pthread_mutex_unlock(&mu);
  free(r);
}

static void children_done(int rc, const struct String_vector *v, const void *data) {
  req_t *r = (req_t *)data;
  pthread_mutex_lock(&mu);
  if (finish(r, rc)) {
    if (rc == ZOK) {
      apply_children(r->n, v);
    } else {
      if (r->n == top) enqueue(top, F_EXISTS); /* wait for it to be created */
      if (r->n->present) gone(r->n), changed();
    }
  }
  pthread_mutex_unlock(&mu);
  free(r);
}

static void exists_done(int rc, const struct Stat *st, const void *data) {
  (void)st;
  req_t *r = (req_t *)data;
  pthread_mutex_lock(&mu);
  if (finish(r, rc) && rc == ZOK) enqueue(top, F_CHILDREN); /* created meanwhile */
  pthread_mutex_unlock(&mu);
  free(r);
}

/* Sends the reads N's flags ask for; under mu, dropped around the calls. */
static void issue(node_t *n) {
  int flags = n->queued;
  n->queued = 0;
  if (n == top) flags &= ~F_DATA; /* the root is the directory itself */
  if (!flags && n->rs && !n->inflight) n->rs = 0, resync_left--;
  for (int what = 1; what <= F_EXISTS; what <<= 1) {
    if (!(flags & what)) continue;
    req_t *r = malloc(sizeof *r);
    *r = (req_t){n, gen, what};
    n->inflight |= what;
    inflight_n++;
    pthread_mutex_unlock(&mu);
    pthread_rwlock_rdlock(&hl);
    void *wctx = (void *)r->gen;
    int rc = r->gen != gen    ? ZINVALIDSTATE
             : what == F_DATA ? zoo_awget(zh, n->path, node_watcher, wctx, data_done, r)
             : what == F_CHILDREN
                 ? zoo_awget_children(zh, n->path, node_watcher, wctx, children_done, r)
                 : zoo_awexists(zh, n->path, node_watcher, wctx, exists_done, r);
    pthread_rwlock_unlock(&hl);
    pthread_mutex_lock(&mu);
    if (rc != ZOK) { /* not sent: no completion will come */
      n->inflight &= ~what;
      inflight_n--;
      free(r);
      logm("read error=%s path=%s", zerror(rc), n->path);
      enqueue(n, what);
      retry_at = mono_us() + 200000u;
    }
  }
}

/* Files under DIR that no znode stands for. */
static int sweep_entry(const char *p, const struct stat *st, int flag, struct FTW *f) {
  (void)f;
  if (strcmp(p, dir) == 0) return 0;
  char path[4200];
  snprintf(path, sizeof path, "%s%s", strcmp(root, "/") ? root : "", p + strlen(dir));
  node_t *n = find(path);
  if (n && n->present && n->kind == K_NONE) return 0; /* not read yet */
  int want = n && n->present ? n->kind : K_NONE;
  int is = flag == FTW_DP ? K_DIR : S_ISREG(st->st_mode) ? K_FILE : K_NONE;
  if (want != is || !n) {
    logm("remove stray=%s", p);
    n_removes++;
    if (flag == FTW_DP) rm_tree(p);
    else unlink(p);
  }
  return 0;
}

/* ---- registration ---- */

static char reg_path[512];
static int64_t reg_session;

static int mkpath(const char *p) { /* persistent parents, as `mkdir -p` */
  char part[512];
  int rc = ZOK;
  for (const char *s = strchr(p + 1, '/');; s = strchr(s + 1, '/')) {
    size_t l = s ? (size_t)(s - p) : strlen(p);
    snprintf(part, sizeof part, "%.*s", (int)l, p);
    rc = zoo_create(zh, part, NULL, -1, &ZOO_OPEN_ACL_UNSAFE, 0, NULL, 0);
    if (rc != ZOK && rc != ZNODEEXISTS) return rc;
    if (!s) return ZOK;
  }
}

/* Finds a child of DIRPATH named PREFIX..., into OUT. */
static int find_prefixed(const char *dirpath, const char *prefix, char *out, size_t cap) {
  struct String_vector v = {0, NULL};
  int rc = zoo_get_children(zh, dirpath, 0, &v);
  if (rc != ZOK) return rc;
  rc = ZNONODE;
  for (int i = 0; i < v.count; i++)
    if (strncmp(v.data[i], prefix, strlen(prefix)) == 0) {
      snprintf(out, cap, "%s/%s", dirpath, v.data[i]);
      rc = ZOK;
    }
  deallocate_String_vector(&v);
  return rc;
}

static int do_register(void) { /* under the handle's read lock */
  int64_t sid = session_id();
  struct Stat st;
  if (reg_session == sid && zoo_exists(zh, reg_path, 0, &st) == ZOK && st.ephemeralOwner == sid)
    return ZOK;
  char prefix[64];
  snprintf(prefix, sizeof prefix, "m-%016" PRIx64 "-", (uint64_t)sid);
  int rc = mkpath(regdir);
  if (rc == ZOK) rc = find_prefixed(regdir, prefix, reg_path, sizeof reg_path);
  if (rc == ZNONODE) {
    char path[512];
    snprintf(path, sizeof path, "%s/%s", regdir, prefix);
    rc = zoo_create(zh, path, name, (int)strlen(name), &ZOO_OPEN_ACL_UNSAFE,
                    ZOO_EPHEMERAL | ZOO_SEQUENCE, reg_path, sizeof reg_path);
    /* Never retried blindly: the next try looks for the prefix first. */
  }
  if (rc != ZOK) {
    logm("register error=%s", zerror(rc));
    return rc;
  }
  reg_session = sid;
  logm("register node=%s session=0x%" PRIx64 " name=%s", reg_path, (uint64_t)sid, name);
  return ZOK;
}

/* ---- the lock and the reload hook ---- */

static char lock_node[512]; /* ours, "" none */
static uintptr_t lock_gen;

static void lock_watcher(zhandle_t *h, int type, int state, const char *path, void *ctx) {
  (void)h, (void)state, (void)path, (void)ctx;
  if (type == ZOO_SESSION_EVENT) return;
  pthread_mutex_lock(&mu);
  lock_kick = 1;
  pthread_cond_broadcast(&reload_cv);
  pthread_mutex_unlock(&mu);
}

static int seq_of(const char *s) {
  const char *d = strrchr(s, '-');
  return d ? atoi(d + 1) : -1;
}

static int by_seq(const void *a, const void *b) {
  int x = seq_of(*(char *const *)a), y = seq_of(*(char *const *)b);
  return (x > y) - (x < y);
}

/* One step of the recipe: find or make our node, then either we own the
 * lock (returns 1) or a watch is set on the node before ours (0), or an
 * error (< 0: ZooKeeper's code).  Under the handle's read lock. */
static int lock_step(void) {
  int64_t sid = session_id();
  char prefix[64];
  snprintf(prefix, sizeof prefix, "x-%016" PRIx64 "-", (uint64_t)sid);
  if (lock_gen != gen) lock_node[0] = 0; /* the old session took it along */
  lock_gen = gen;
  int rc;
  if (!lock_node[0]) {
    if ((rc = mkpath(lockdir)) != ZOK) return rc;
    rc = find_prefixed(lockdir, prefix, lock_node, sizeof lock_node);
    if (rc == ZOK) logm("lock found node=%s", lock_node);
    if (rc == ZNONODE) {
      char path[512];
      snprintf(path, sizeof path, "%s/%s", lockdir, prefix);
      rc = zoo_create(zh, path, name, (int)strlen(name), &ZOO_OPEN_ACL_UNSAFE,
                      ZOO_EPHEMERAL | ZOO_SEQUENCE, lock_node, sizeof lock_node);
      if (rc != ZOK) lock_node[0] = 0;
    }
    if (rc != ZOK) return rc;
  }
  struct String_vector v = {0, NULL};
  if ((rc = zoo_get_children(zh, lockdir, 0, &v)) != ZOK) return rc;
  qsort(v.data, (size_t)v.count, sizeof *v.data, by_seq);
  const char *mine = strrchr(lock_node, '/') + 1;
  int me = -1;
  for (int i = 0; i < v.count; i++)
    if (strcmp(v.data[i], mine) == 0) me = i;
  char prev[512] = "";
  if (me > 0) snprintf(prev, sizeof prev, "%s/%s", lockdir, v.data[me - 1]);
  deallocate_String_vector(&v);
  if (me < 0) { /* our node is gone: the session lost it */
    logm("lock lost node=%s", lock_node);
    lock_node[0] = 0;
    return ZNONODE;
  }
  if (me == 0) return 1;
  struct Stat st;
  rc = zoo_wexists(zh, prev, lock_watcher, NULL, &st);
  if (rc == ZNONODE) return lock_step();
  return rc == ZOK ? 0 : rc;
}

static int lock_release(void) {
  int rc = ZOK;
  for (int i = 0; lock_node[0] && i < 50; i++) {
    pthread_rwlock_rdlock(&hl);
    rc = lock_gen == gen ? zoo_delete(zh, lock_node, -1) : ZNONODE;
    pthread_rwlock_unlock(&hl);
    if (rc == ZOK || rc == ZNONODE) lock_node[0] = 0;
    else if (!lost(rc)) break;
    else sleep_ms(100);
  }
  if (lock_node[0]) logm("lock delete error=%s node=%s", zerror(rc), lock_node);
  return rc;
}

static int run_hook(void) {
  char *argv[] = {"sh", "-c", (char *)hook, NULL};
  char envdir[4200];
  snprintf(envdir, sizeof envdir, "ZKCONFD_DIR=%s", dir);
  int n = 0;
  while (environ[n]) n++;
  char **env = calloc((size_t)n + 2, sizeof *env);
  for (int i = 0; i < n; i++) env[i] = environ[i];
  env[n] = envdir;
  pid_t pid;
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t none;
  sigemptyset(&none);
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK);
  int err = posix_spawn(&pid, "/bin/sh", NULL, &attr, argv, env);
  posix_spawnattr_destroy(&attr);
  free(env);
  if (err) {
    logm("hook error=%s", strerror(err));
    return -1;
  }
  int status;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

static void *reload_thread(void *arg) {
  (void)arg;
  uint64_t last = 0;
  pthread_mutex_lock(&mu);
  while (!stopping) {
    uint64_t now = mono_us(), due = last + (uint64_t)interval_ms * 1000u;
    if (!dirty || now < due) {
      struct timespec ts;
      clock_gettime(CLOCK_MONOTONIC, &ts);
      uint64_t wait_us = dirty ? due - now : 1000000u;
      ts.tv_sec += (time_t)(wait_us / 1000000u);
      ts.tv_nsec += (long)(wait_us % 1000000u) * 1000;
      if (ts.tv_nsec >= 1000000000L) ts.tv_sec++, ts.tv_nsec -= 1000000000L;
      pthread_cond_timedwait(&reload_cv, &mu, &ts);
      continue;
    }
    dirty = 0;
    uint64_t t0 = mono_us();
    int owner = 0, backoff = 50;
    while (!stopping && owner != 1) {
      lock_kick = 0;
      pthread_mutex_unlock(&mu);
      pthread_rwlock_rdlock(&hl);
      owner = lock_step();
      pthread_rwlock_unlock(&hl);
      pthread_mutex_lock(&mu);
      if (owner == 1) break;
      if (owner < 0 || owner == ZNONODE) { /* an error: try again soon */
        if (owner != ZNONODE) logm("lock error=%s", zerror(owner));
        pthread_mutex_unlock(&mu);
        sleep_ms(backoff);
        backoff = backoff < 1000 ? backoff * 2 : 1000;
        pthread_mutex_lock(&mu);
        continue;
      }
      backoff = 50;
      while (!lock_kick && !stopping) pthread_cond_wait(&reload_cv, &mu);
    }
    if (owner != 1) break; /* stopping */
    pthread_mutex_unlock(&mu);
    n_locks++;
    logm("lock acquired node=%s waited_ms=%.1f", lock_node, (mono_us() - t0) / 1000.0);
    last = mono_us();
    int rc = run_hook();
    n_hooks++;
    logm("hook exit=%d ms=%.1f", rc, (mono_us() - last) / 1000.0);
    logm("lock released node=%s", lock_node);
    lock_release();
    pthread_mutex_lock(&mu);
  }
  pthread_mutex_unlock(&mu);
  lock_release();
  return NULL;
}

/* ---- signals ---- */

static void *signal_thread(void *arg) {
  sigset_t *set = arg;
  for (;;) {
    int sig;
    if (sigwait(set, &sig) != 0) continue;
    pthread_mutex_lock(&mu);
    if (sig == SIGHUP) {
      if (ev_n < 64) events[ev_n++] = -1; /* resync */
    } else {
      logm("signal %s: stopping", sig == SIGTERM ? "TERM" : "INT");
      stopping = 1;
    }
    pthread_cond_broadcast(&work_cv);
    pthread_cond_broadcast(&reload_cv);
    pthread_mutex_unlock(&mu);
  }
  return NULL;
}

/* ---- the worker: the main thread ---- */

static int resyncing;        /* reading the whole tree again */
static int fresh_handle = 1; /* a new handle: sync before the first read */
static int need_resync;      /* at the next CONNECTED */

static void start_resync(const char *why) { /* under mu */
  n_resyncs++;
  logm("resync start reason=%s", why);
  resyncing = 1;
  for (int b = 0; b < NBUCKETS; b++)
    for (node_t *n = buckets[b]; n; n = n->hnext)
      if (n->present || n == top) {
        enqueue(n, F_DATA | F_CHILDREN);
        if (!n->rs) n->rs = 1, resync_left++;
      }
}

static void session_event(int state) { /* under mu; may drop it */
  if (state == -1) {
    start_resync("SIGHUP");
    return;
  }
  pthread_mutex_unlock(&mu);
  if (state == ZOO_CONNECTED_STATE) {
    pthread_rwlock_rdlock(&hl);
    int64_t sid = session_id();
    pthread_rwlock_unlock(&hl);
    logm("state CONNECTED session=0x%" PRIx64 " timeout_ms=%d", (uint64_t)sid,
         zoo_recv_timeout(zh));
  } else {
    logm("state %s", state_name(state));
  }
  if (state == ZOO_EXPIRED_SESSION_STATE) {
    pthread_rwlock_wrlock(&hl);
    zookeeper_close(zh);
    while (new_handle() != 0) sleep_ms(1000);
    pthread_rwlock_unlock(&hl);
    logm("handle re-created");
    fresh_handle = 1;
  }
  pthread_mutex_lock(&mu);
  if (state == ZOO_CONNECTED_STATE) {
    connected = 1;
    if (need_resync) start_resync(fresh_handle ? "new session" : "reconnected");
    need_resync = 0;
  } else {
    connected = 0;
    need_resync = 1;
    if (state == ZOO_AUTH_FAILED_STATE) {
      stopping = 1;
      exit_code = 1;
    }
  }
}

static void sync_done(int rc, const char *value, const void *data) {
  (void)value, (void)data;
  if (rc != ZOK) logm("sync error=%s", zerror(rc));
}

static void usage(void) {
  fprintf(stderr, "usage: zkconfd [-n NAME] [-r REGDIR] [-l LOCKDIR] [-x HOOK] [-i MS] [-L LOG]\n"
                  "               [-t SESSION_MS] [-S] [-d LEVEL] HOSTS ZNODE DIR\n");
  exit(2);
}

int main(int argc, char **argv) {
  char host[256];
  int opt, debug = 1;
  log_fp = stderr;
  gethostname(host, sizeof host);
  name = host;
  while ((opt = getopt(argc, argv, "n:r:l:x:i:L:t:Sd:")) != -1) {
    switch (opt) {
    case 'n': name = optarg; break;
    case 'r': regdir = optarg; break;
    case 'l': lockdir = optarg; break;
    case 'x': hook = optarg; break;
    case 'i': interval_ms = atoi(optarg); break;
    case 'L': logpath = optarg; break;
    case 't': timeout_ms = atoi(optarg); break;
    case 'S': do_fsync = 1; break;
    case 'd': debug = atoi(optarg); break;
    default: usage();
    }
  }
  if (argc - optind != 3) usage();
  hosts = argv[optind];
  root = argv[optind + 1];
  if (root[0] != '/' || (root[1] && root[strlen(root) - 1] == '/')) usage();
  if (!(dir = realpath(argv[optind + 2], NULL))) {
    fprintf(stderr, "zkconfd: %s: %s\n", argv[optind + 2], strerror(errno));
    return 2;
  }
  if (logpath && !(log_fp = fopen(logpath, "a"))) {
    fprintf(stderr, "zkconfd: %s: %s\n", logpath, strerror(errno));
    return 2;
  }
  zoo_set_debug_level((ZooLogLevel)debug);
  pthread_condattr_t ca; /* timed waits on the monotonic clock */
  pthread_condattr_init(&ca);
  pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
  pthread_cond_init(&work_cv, &ca);
  pthread_cond_init(&reload_cv, &ca);

  /* Signals go to the signal thread only; ZooKeeper's threads inherit the
   * mask from here. */
  static sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGHUP);
  pthread_sigmask(SIG_BLOCK, &set, NULL);
  pthread_t sig_t, reload_t;
  pthread_create(&sig_t, NULL, signal_thread, &set);

  logm("start pid=%d name=%s hosts=%s znode=%s dir=%s", (int)getpid(), name, hosts, root, dir);
  pthread_mutex_lock(&mu);
  top = get_node(root, NULL);
  top->present = 1;
  need_resync = 1;
  pthread_mutex_unlock(&mu);
  pthread_rwlock_wrlock(&hl);
  while (new_handle() != 0) sleep_ms(1000);
  pthread_rwlock_unlock(&hl);
  if (hook) pthread_create(&reload_t, NULL, reload_thread, NULL);

  int registered = 0;
  pthread_mutex_lock(&mu);
  while (!stopping) {
    uint64_t now = mono_us(), wait_us = 1000000u;
    if (ev_n) {
      int state = events[0];
      memmove(events, events + 1, sizeof *events * (size_t)--ev_n);
      session_event(state);
      if (state == ZOO_CONNECTED_STATE || state == ZOO_EXPIRED_SESSION_STATE) retry_at = 0;
      if (state == ZOO_EXPIRED_SESSION_STATE) registered = 0;
      continue;
    }
    if (connected && now >= retry_at) {
      if (!registered) {
        pthread_mutex_unlock(&mu);
        pthread_rwlock_rdlock(&hl);
        int rc = do_register();
        pthread_rwlock_unlock(&hl);
        pthread_mutex_lock(&mu);
        if (rc == ZOK) registered = 1;
        else retry_at = mono_us() + 200000u;
        continue;
      }
      if (fresh_handle) {
        /* A new session may be on a server behind what the old one read:
         * a sync first (a session's requests are served in order). */
        pthread_mutex_unlock(&mu);
        pthread_rwlock_rdlock(&hl);
        int rc = zoo_async(zh, root, sync_done, NULL);
        pthread_rwlock_unlock(&hl);
        pthread_mutex_lock(&mu);
        if (rc == ZOK) fresh_handle = 0;
        else retry_at = mono_us() + 200000u;
        continue;
      }
      if (qhead && inflight_n < WINDOW) {
        node_t *n = qhead;
        qhead = n->qnext;
        if (!qhead) qtail = NULL;
        if (n->inflight) n->deferred = 1; /* back in the queue when read */
        else issue(n);
        continue;
      }
      if (resyncing && !resync_left) {
        /* Every node known when it began has been read since.  Under mu:
         * no completion is writing a file meanwhile. */
        resyncing = 0;
        nftw(dir, sweep_entry, 16, FTW_DEPTH | FTW_PHYS);
        pthread_mutex_unlock(&mu);
        pthread_rwlock_rdlock(&hl);
        int rc = do_register(); /* still ours? */
        pthread_rwlock_unlock(&hl);
        pthread_mutex_lock(&mu);
        if (rc != ZOK) registered = 0;
        long nodes = 0;
        for (int b = 0; b < NBUCKETS; b++)
          for (node_t *m = buckets[b]; m; m = m->hnext) nodes += m->present;
        logm("resync done nodes=%ld", nodes);
        changed();
        continue;
      }
    } else if (connected) {
      wait_us = retry_at - now;
    }
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    ts.tv_sec += (time_t)(wait_us / 1000000u);
    ts.tv_nsec += (long)(wait_us % 1000000u) * 1000L;
    if (ts.tv_nsec >= 1000000000L) ts.tv_sec++, ts.tv_nsec -= 1000000000L;
    pthread_cond_timedwait(&work_cv, &mu, &ts);
  }
  pthread_cond_broadcast(&reload_cv);
  pthread_mutex_unlock(&mu);
  if (hook) pthread_join(reload_t, NULL);
  pthread_rwlock_wrlock(&hl);
  int rc = zookeeper_close(zh);
  pthread_rwlock_unlock(&hl);
  logm("exit close=%s writes=%ld removes=%ld stale=%ld resyncs=%ld locks=%ld hooks=%ld", zerror(rc),
       n_writes, n_removes, n_stale, n_resyncs, n_locks, n_hooks);
  return exit_code;
}
