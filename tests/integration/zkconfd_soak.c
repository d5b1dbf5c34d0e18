/* The soak test's tools for examples/zkconfd (tests/integration/soak-zkconfd.sh),
 * linked to libzookeeper_mt alone: the harness is never routed.
 *
 *   zkconfd_soak init HOSTS ROOT NODES
 *       makes ROOT/gG/nNNN (G = node % 10), each holding "v=0 ..."
 *   zkconfd_soak write HOSTS ROOT NODES SECONDS RATE LOG DIR...
 *       sets random nodes, RATE a second for SECONDS, each value carrying
 *       the node's own version counter ("v=N n=NAME filler"); then a last
 *       burst that deletes 5 nodes, creates a group of 5 and gives one
 *       node a child (a file becomes a directory).  Logs every operation
 *       with CLOCK_MONOTONIC times to LOG.  Then reads the final tree
 *       (after a sync) and waits until every DIR equals it, at most 2 s
 *       after the last write's reply: exit 0 when all did.
 *   zkconfd_soak owners HOSTS REGDIR
 *       prints each child of REGDIR: path, ephemeralOwner, data
 *   zkconfd_soak analyze WRITELOG OWNERS DAEMONLOG...
 *       checks the daemons' logs: no file content older than one already
 *       written (per node version counter), no stale read, the lock never
 *       held by two at once (acquired/released, monotonic clock), each
 *       daemon's registration node (OWNERS, from `owners`) owned by its
 *       current session; prints the time each daemon took to see each
 *       change (from the write's reply to the file's rename), P50/P99.
 *       Exit 0 when every check passed. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <zookeeper/zookeeper.h>

#define GROUPS 10

static uint64_t mono_us(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

static void sleep_us(uint64_t us) {
  struct timespec ts = {(time_t)(us / 1000000u), (long)(us % 1000000u) * 1000L};
  nanosleep(&ts, NULL);
}

static void quiet(zhandle_t *zh, int type, int state, const char *path, void *ctx) {
  (void)zh, (void)type, (void)state, (void)path, (void)ctx;
}

static zhandle_t *connect_zk(const char *hosts) {
  zoo_set_debug_level(ZOO_LOG_LEVEL_ERROR);
  zhandle_t *zh = zookeeper_init(hosts, quiet, 10000, NULL, NULL, 0);
  uint64_t until = mono_us() + 30000000u;
  while (zh && zoo_state(zh) != ZOO_CONNECTED_STATE && mono_us() < until) sleep_us(10000);
  if (!zh || zoo_state(zh) != ZOO_CONNECTED_STATE) {
    fprintf(stderr, "zkconfd_soak: cannot connect to %s\n", hosts);
    exit(1);
  }
  return zh;
}

static int lost(int rc) { return rc == ZCONNECTIONLOSS || rc == ZOPERATIONTIMEOUT; }

/* Harness operations that must happen: retried through connection loss
 * (a retry's ZNODEEXISTS / ZNONODE means the first one was applied). */
static int create_sure(zhandle_t *zh, const char *path, const char *data) {
  int rc, tries = 0;
  do {
    rc =
        zoo_create(zh, path, data, data ? (int)strlen(data) : -1, &ZOO_OPEN_ACL_UNSAFE, 0, NULL, 0);
    if (tries++ && rc == ZNODEEXISTS) rc = ZOK;
    if (lost(rc)) sleep_us(200000);
  } while (lost(rc) && tries < 100);
  return rc;
}

static int delete_sure(zhandle_t *zh, const char *path) {
  int rc, tries = 0;
  do {
    rc = zoo_delete(zh, path, -1);
    if (tries++ && rc == ZNONODE) rc = ZOK;
    if (lost(rc)) sleep_us(200000);
  } while (lost(rc) && tries < 100);
  return rc;
}

static void node_path(char *out, size_t cap, const char *root, int i) {
  snprintf(out, cap, "%s/g%d/n%03d", root, i % GROUPS, i);
}

static void value(char *out, size_t cap, int ver, const char *path, unsigned *seed) {
  int n = snprintf(out, cap, "v=%d n=%s ", ver, strrchr(path, '/') + 1);
  int fill = (int)(rand_r(seed) % 120);
  for (int k = 0; k < fill && n < (int)cap - 1; k++) out[n++] = (char)('a' + k % 26);
  out[n] = 0;
}

static int cmd_init(int argc, char **argv) {
  if (argc != 5) return 2;
  const char *root = argv[3];
  int nodes = atoi(argv[4]);
  zhandle_t *zh = connect_zk(argv[2]);
  char path[512], val[256];
  unsigned seed = 1;
  /* ROOT's parents too */
  for (char *s = strchr(root + 1, '/'); s; s = strchr(s + 1, '/')) {
    snprintf(path, sizeof path, "%.*s", (int)(s - root), root);
    int rc = create_sure(zh, path, NULL);
    if (rc != ZOK && rc != ZNODEEXISTS) goto fail;
  }
  if (create_sure(zh, root, NULL) != ZOK) goto fail;
  for (int g = 0; g < GROUPS; g++) {
    snprintf(path, sizeof path, "%s/g%d", root, g);
    if (create_sure(zh, path, NULL) != ZOK) goto fail;
  }
  for (int i = 0; i < nodes; i++) {
    node_path(path, sizeof path, root, i);
    value(val, sizeof val, 0, path, &seed);
    if (create_sure(zh, path, val) != ZOK) goto fail;
  }
  zookeeper_close(zh);
  return 0;
fail:
  fprintf(stderr, "zkconfd_soak: init: creating %s failed\n", path);
  return 1;
}

/* ---- the final tree, and comparing a directory with it ---- */

typedef struct {
  char rel[256];
  int is_dir;
  char *data;
  int len;
} entry_t;

static entry_t *tree;
static int tree_n, tree_cap;

/* The tree under PATH, read level by level with pipelined asynchronous
 * calls (a sequential read of 200 nodes takes a second on a loaded
 * machine, half the time allowed). */
typedef struct {
  char path[512], rel[256];
  int rc, done;
  struct String_vector kids;
  char data[4096];
  int len;
} pend_t;
static pthread_mutex_t pmu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t pcv = PTHREAD_COND_INITIALIZER;
static int pending;

static void kids_done(int rc, const struct String_vector *v, const void *data) {
  pend_t *p = (pend_t *)data;
  pthread_mutex_lock(&pmu);
  p->rc = rc;
  if (rc == ZOK) {
    p->kids.count = v->count;
    p->kids.data = calloc((size_t)v->count + 1, sizeof(char *));
    for (int i = 0; i < v->count; i++) p->kids.data[i] = strdup(v->data[i]);
  }
  pending--;
  pthread_cond_broadcast(&pcv);
  pthread_mutex_unlock(&pmu);
}

static void get_done(int rc, const char *value, int len, const struct Stat *st, const void *data) {
  (void)st;
  pend_t *p = (pend_t *)data;
  pthread_mutex_lock(&pmu);
  if (rc != ZOK && p->rc == ZOK) p->rc = rc;
  p->len = rc == ZOK && len > 0 ? (len < 4096 ? len : 4096) : 0;
  if (p->len) memcpy(p->data, value, (size_t)p->len);
  pending--;
  pthread_cond_broadcast(&pcv);
  pthread_mutex_unlock(&pmu);
}

static int read_tree(zhandle_t *zh, const char *path) {
  pend_t *level = calloc(1, sizeof *level);
  int nlevel = 1;
  snprintf(level[0].path, sizeof level[0].path, "%s", path);
  while (nlevel) {
    pending = 2 * nlevel;
    for (int i = 0; i < nlevel; i++) {
      int rc = zoo_aget_children(zh, level[i].path, 0, kids_done, &level[i]);
      int rc2 = zoo_aget(zh, level[i].path, 0, get_done, &level[i]);
      if (rc != ZOK || rc2 != ZOK) return rc != ZOK ? rc : rc2;
    }
    pthread_mutex_lock(&pmu);
    while (pending) pthread_cond_wait(&pcv, &pmu);
    pthread_mutex_unlock(&pmu);
    int next_n = 0;
    for (int i = 0; i < nlevel; i++) {
      if (level[i].rc != ZOK) return level[i].rc; /* the tool exits */
      next_n += level[i].kids.count;
    }
    pend_t *next = calloc((size_t)next_n + 1, sizeof *next);
    int k = 0;
    for (int i = 0; i < nlevel; i++) {
      pend_t *p = &level[i];
      if (tree_n == tree_cap)
        tree = realloc(tree, sizeof *tree * (size_t)(tree_cap = tree_cap * 2 + 64));
      entry_t *e = &tree[tree_n++];
      memset(e, 0, sizeof *e);
      snprintf(e->rel, sizeof e->rel, "%s", p->rel);
      e->is_dir = p->kids.count > 0 || !p->rel[0];
      if (!e->is_dir) {
        e->len = p->len;
        e->data = malloc((size_t)p->len + 1);
        memcpy(e->data, p->data, (size_t)p->len);
      }
      for (int j = 0; j < p->kids.count; j++, k++) {
        snprintf(next[k].path, sizeof next[k].path, "%s/%s", p->path, p->kids.data[j]);
        snprintf(next[k].rel, sizeof next[k].rel, "%s/%s", p->rel, p->kids.data[j]);
        free(p->kids.data[j]);
      }
      free(p->kids.data);
    }
    free(level);
    level = next;
    nlevel = next_n;
  }
  free(level);
  return ZOK;
}

static int count_entries(const char *d) { /* everything under d, recursively */
  DIR *dp = opendir(d);
  if (!dp) return -1;
  int n = 0;
  struct dirent *de;
  while ((de = readdir(dp))) {
    if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, "..")) continue;
    n++;
    char p[4096];
    snprintf(p, sizeof p, "%s/%s", d, de->d_name);
    struct stat st;
    if (lstat(p, &st) == 0 && S_ISDIR(st.st_mode)) n += count_entries(p);
  }
  closedir(dp);
  return n;
}

/* NULL when DIR equals the tree, else what differs. */
static const char *compare(const char *d, char *why, size_t cap) {
  for (int i = 0; i < tree_n; i++) {
    entry_t *e = &tree[i];
    char p[4096];
    snprintf(p, sizeof p, "%s%s", d, e->rel);
    struct stat st;
    if (lstat(p, &st) != 0) {
      snprintf(why, cap, "%s missing", e->rel);
      return why;
    }
    if (e->is_dir != !!S_ISDIR(st.st_mode)) {
      snprintf(why, cap, "%s is %s", e->rel, e->is_dir ? "not a directory" : "a directory");
      return why;
    }
    if (e->is_dir) continue;
    char buf[4096];
    int fd = open(p, O_RDONLY), len = fd < 0 ? -1 : (int)read(fd, buf, sizeof buf);
    if (fd >= 0) close(fd);
    if (len != e->len || memcmp(buf, e->data, (size_t)len) != 0) {
      snprintf(why, cap, "%s has \"%.20s\", the znode \"%.20s\"", e->rel, len > 0 ? buf : "",
               e->data);
      return why;
    }
  }
  int n = count_entries(d);
  if (n != tree_n - 1) {
    snprintf(why, cap, "%d entries, the tree has %d", n, tree_n - 1);
    return why;
  }
  return NULL;
}

static void sync_done(int rc, const char *v, const void *data) {
  (void)rc, (void)v;
  *(volatile int *)data = 1;
}

/* The writer's sets are asynchronous, at most W_WINDOW in flight, so its
 * rate does not depend on the latency of the server its session is on. */
#define W_WINDOW 64
typedef struct {
  char path[256];
  int ver;
  uint64_t t0;
} wreq_t;
static pthread_mutex_t wmu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t wcv = PTHREAD_COND_INITIALIZER;
static int w_inflight;
static long w_unknown, w_failed;
static uint64_t w_worst, w_last;
static FILE *w_log;

static void set_done(int rc, const struct Stat *st, const void *data) {
  (void)st;
  wreq_t *r = (wreq_t *)data;
  uint64_t t1 = mono_us();
  pthread_mutex_lock(&wmu);
  fprintf(w_log, "set %s %d %" PRIu64 " %" PRIu64 " %s\n", r->path, r->ver, r->t0, t1,
          rc == ZOK  ? "ok"
          : lost(rc) ? "unknown"
                     : zerror(rc));
  if (t1 - r->t0 > w_worst) w_worst = t1 - r->t0;
  if (rc == ZOK && t1 > w_last) w_last = t1;
  else if (lost(rc)) w_unknown++;
  else if (rc != ZOK) w_failed++;
  w_inflight--;
  pthread_cond_broadcast(&wcv);
  pthread_mutex_unlock(&wmu);
  free(r);
}

static int cmd_write(int argc, char **argv) {
  if (argc < 8) return 2;
  const char *root = argv[3], *logpath = argv[7];
  int nodes = atoi(argv[4]), seconds = atoi(argv[5]);
  double rate = atof(argv[6]);
  const char *seed_env = getenv("ZKR_SOAK_SEED");
  unsigned seed = seed_env ? (unsigned)strtoul(seed_env, NULL, 10) : (unsigned)time(NULL);
  FILE *log = w_log = fopen(logpath, "w");
  if (!log || nodes < 50 || nodes > 1000 || rate <= 0) return 2;
  zhandle_t *zh = connect_zk(argv[2]);
  int *ver = calloc((size_t)nodes, sizeof *ver);
  fprintf(log, "seed %u\n", seed);
  char path[512], val[256];
  uint64_t start = mono_us(), end = start + (uint64_t)seconds * 1000000u, next = start, last;
  long ops = 0, unsent = 0, full = 0;
  while (mono_us() < end) {
    uint64_t now = mono_us();
    if (now < next) sleep_us(next - now);
    else if (now > next + 1000000u) next = now; /* after a stall: no burst */
    next += (uint64_t)(1e6 / rate);
    pthread_mutex_lock(&wmu);
    if (w_inflight >= W_WINDOW) full++;
    while (w_inflight >= W_WINDOW) pthread_cond_wait(&wcv, &wmu);
    w_inflight++;
    pthread_mutex_unlock(&wmu);
    int i = (int)(rand_r(&seed) % (unsigned)nodes);
    wreq_t *r = malloc(sizeof *r);
    node_path(r->path, sizeof r->path, root, i);
    value(val, sizeof val, r->ver = ++ver[i], r->path, &seed);
    r->t0 = mono_us();
    int rc = zoo_aset(zh, r->path, val, (int)strlen(val), -1, set_done, r);
    ops++;
    if (rc != ZOK) { /* never sent: no completion */
      pthread_mutex_lock(&wmu);
      fprintf(log, "set %s %d %" PRIu64 " %" PRIu64 " notsent\n", r->path, r->ver, r->t0, r->t0);
      w_inflight--;
      pthread_mutex_unlock(&wmu);
      free(r);
      unsent++;
      sleep_us(10000);
    }
  }
  pthread_mutex_lock(&wmu);
  while (w_inflight) pthread_cond_wait(&wcv, &wmu);
  pthread_mutex_unlock(&wmu);
  /* The last burst: deletes, creates, a file that becomes a directory. */
  int rc = ZOK;
  for (int i = 0; i < nodes && rc == ZOK; i += nodes / 5) {
    node_path(path, sizeof path, root, i);
    rc = delete_sure(zh, path);
    fprintf(log, "delete %s %" PRIu64 " %s\n", path, mono_us(), zerror(rc));
  }
  snprintf(path, sizeof path, "%s/gnew", root);
  if (rc == ZOK) rc = create_sure(zh, path, NULL);
  for (int i = 0; i < 5 && rc == ZOK; i++) {
    snprintf(path, sizeof path, "%s/gnew/n%03d", root, i);
    value(val, sizeof val, 1, path, &seed);
    uint64_t t0 = mono_us();
    rc = create_sure(zh, path, val);
    fprintf(log, "create %s 1 %" PRIu64 " %" PRIu64 " %s\n", path, t0, mono_us(),
            rc == ZOK ? "ok" : zerror(rc));
  }
  node_path(path, sizeof path, root, 1);
  strcat(path, "/child");
  if (rc == ZOK) rc = create_sure(zh, path, "v=1 n=child");
  fprintf(log, "create %s 1 %" PRIu64 " %" PRIu64 " %s\n", path, mono_us(), mono_us(),
          rc == ZOK ? "ok" : zerror(rc));
  last = mono_us();
  fprintf(log, "end %" PRIu64 "\n", last);
  fclose(log);
  printf("writer: %ld sets in %d s (%.1f/s), %ld with unknown outcome, %ld failed, %ld not sent, "
         "%ld waited for a free slot, slowest %.0f ms; seed %u\n",
         ops, seconds, ops / (double)seconds, w_unknown, w_failed, unsent, full, w_worst / 1000.0,
         seed);
  if (rc != ZOK) {
    printf("writer: the last burst failed: %s\n", zerror(rc));
    return 1;
  }
  /* The final tree, read after a sync. */
  volatile int synced = 0;
  zoo_async(zh, root, sync_done, (const void *)&synced);
  while (!synced) sleep_us(1000);
  if ((rc = read_tree(zh, root)) != ZOK) {
    printf("writer: reading the final tree: %s\n", zerror(rc));
    return 1;
  }
  uint64_t deadline = last + 2000000u; /* equal no later than this */
  int n = argc - 8, left = n, failures = 0;
  uint64_t *done = calloc((size_t)n, sizeof *done);
  char why[512];
  printf("writer: final tree read %.0f ms after the last write: %d znodes\n",
         (mono_us() - last) / 1000.0, tree_n - 1);
  for (;;) {
    uint64_t now = mono_us();
    for (int k = 0; k < n && now <= deadline; k++)
      if (!done[k] && !compare(argv[8 + k], why, sizeof why)) {
        done[k] = now;
        left--;
      }
    if (!left || now > deadline) break;
    sleep_us(20000);
  }
  for (int k = 0; k < n; k++) {
    if (done[k]) {
      printf("converged %s %.0f ms after the last write\n", argv[8 + k], (done[k] - last) / 1000.0);
    } else {
      failures++;
      printf("NOT converged %s within 2 s of the last write: %s\n", argv[8 + k],
             compare(argv[8 + k], why, sizeof why) ? why : "equal only later");
    }
  }
  zookeeper_close(zh);
  free(done);
  free(ver);
  return failures ? 1 : 0;
}

static int cmd_owners(int argc, char **argv) {
  if (argc != 4) return 2;
  zhandle_t *zh = connect_zk(argv[2]);
  struct String_vector v = {0, NULL};
  int rc = zoo_get_children(zh, argv[3], 0, &v);
  for (int i = 0; rc == ZOK && i < v.count; i++) {
    char p[512], buf[512];
    int len = sizeof buf - 1;
    struct Stat st;
    snprintf(p, sizeof p, "%s/%s", argv[3], v.data[i]);
    if (zoo_get(zh, p, 0, buf, &len, &st) != ZOK) continue;
    buf[len < 0 ? 0 : len] = 0;
    printf("%s 0x%" PRIx64 " %s\n", p, (uint64_t)st.ephemeralOwner, buf);
  }
  if (rc == ZOK) deallocate_String_vector(&v);
  zookeeper_close(zh);
  return rc == ZOK || rc == ZNONODE ? 0 : 1;
}

/* ---- analyze ---- */

typedef struct {
  char *path;
  int ver;
  uint64_t t, t0; /* the reply (for the writer's: t0 when it was sent) */
} rec_t;

typedef struct {
  rec_t *r;
  int n, cap;
} recs_t;

static void add(recs_t *a, const char *path, int ver, uint64_t t0, uint64_t t) {
  if (a->n == a->cap) a->r = realloc(a->r, sizeof *a->r * (size_t)(a->cap = a->cap * 2 + 256));
  a->r[a->n++] = (rec_t){strdup(path), ver, t, t0};
}

static int by_path_time(const void *x, const void *y) {
  const rec_t *a = x, *b = y;
  int c = strcmp(a->path, b->path);
  if (c) return c;
  return (a->t > b->t) - (a->t < b->t);
}

static int by_path_ver(const void *x, const void *y) {
  const rec_t *a = x, *b = y;
  int c = strcmp(a->path, b->path);
  return c ? c : (a->ver > b->ver) - (a->ver < b->ver);
}

static int cmp_d(const void *x, const void *y) {
  double a = *(const double *)x, b = *(const double *)y;
  return (a > b) - (a < b);
}

static double pct(const double *v, int n, double p) {
  if (!n) return 0;
  int i = (int)(p * (n - 1) + 0.5);
  return v[i];
}

typedef struct {
  uint64_t a, b;
  int who;
} span_t;

static int by_start(const void *x, const void *y) {
  const span_t *a = x, *b = y;
  return (a->a > b->a) - (a->a < b->a);
}

static int cmd_analyze(int argc, char **argv) {
  if (argc < 5) return 2;
  int nd = argc - 4, bad = 0;
  char line[8192], path[1024], rcs[64];
  /* the writer's acknowledged values */
  recs_t acked = {0};
  FILE *f = fopen(argv[2], "r");
  if (!f) return 2;
  while (fgets(line, sizeof line, f)) {
    int ver;
    uint64_t t0, t1;
    if ((sscanf(line, "set %1023s %d %" SCNu64 " %" SCNu64 " %63s", path, &ver, &t0, &t1, rcs) ==
             5 ||
         sscanf(line, "create %1023s %d %" SCNu64 " %" SCNu64 " %63s", path, &ver, &t0, &t1, rcs) ==
             5) &&
        strcmp(rcs, "ok") == 0)
      add(&acked, path, ver, t0, t1);
  }
  fclose(f);
  qsort(acked.r, (size_t)acked.n, sizeof *acked.r, by_path_ver);
  /* the registration nodes */
  char owners[64][2][256];
  int no = 0;
  if (!(f = fopen(argv[3], "r"))) return 2;
  while (no < 64 && fgets(line, sizeof line, f))
    if (sscanf(line, "%255s %255s", owners[no][0], owners[no][1]) == 2) no++;
  fclose(f);
  span_t *spans = NULL;
  int ns = 0, cs = 0;
  double *all = malloc(sizeof *all * (size_t)(acked.n * nd + 1));
  double *all0 = malloc(sizeof *all0 * (size_t)(acked.n * nd + 1));
  int nall = 0;
  for (int d = 0; d < nd; d++) {
    const char *name = argv[4 + d];
    if (!(f = fopen(name, "r"))) {
      printf("%s: cannot open\n", name);
      bad++;
      continue;
    }
    recs_t w = {0};
    long stale = 0, older = 0, lock_errors = 0, exits = 0;
    char session[64] = "", reg_node[512] = "", reg_session[64] = "";
    uint64_t held = 0, t;
    int holding = 0, sessions = 0;
    while (fgets(line, sizeof line, f)) {
      int ver;
      char *p;
      if (sscanf(line, "%" SCNu64, &t) != 1) continue;
      if ((p = strstr(line, " write path="))) {
        char *q = strstr(line, "data=\"v=");
        if (sscanf(p, " write path=%1023s", path) == 1 && q && sscanf(q + 8, "%d", &ver) == 1)
          add(&w, path, ver, t, t);
      } else if (strstr(line, " stale ")) {
        stale++;
        if (stale <= 3) printf("%s: %s", name, line);
      } else if ((p = strstr(line, " state CONNECTED session="))) {
        sscanf(p, " state CONNECTED session=%63s", session);
        sessions++;
      } else if ((p = strstr(line, " register node="))) {
        sscanf(p, " register node=%511s session=%63s", reg_node, reg_session);
      } else if (strstr(line, " lock acquired ")) {
        if (holding) lock_errors++;
        holding = 1;
        held = t;
      } else if (strstr(line, " lock released ")) {
        if (!holding) lock_errors++;
        if (ns == cs) spans = realloc(spans, sizeof *spans * (size_t)(cs = cs * 2 + 64));
        spans[ns++] = (span_t){held, t, d};
        holding = 0;
      } else if (strstr(line, " exit close=")) {
        exits++;
      }
    }
    fclose(f);
    if (holding) { /* held at the end of its log */
      if (ns == cs) spans = realloc(spans, sizeof *spans * (size_t)(cs = cs * 2 + 64));
      spans[ns++] = (span_t){held, UINT64_MAX, d};
    }
    /* 1. never older than a content already written */
    for (int i = 0; i < w.n; i++) { /* in log order */
      for (int j = i - 1; j >= 0; j--)
        if (strcmp(w.r[j].path, w.r[i].path) == 0) {
          if (w.r[i].ver < w.r[j].ver) {
            if (older++ < 3)
              printf("%s: %s: wrote v=%d after v=%d\n", name, w.r[i].path, w.r[i].ver, w.r[j].ver);
          }
          break;
        }
    }
    /* 2. the time to see each change */
    qsort(w.r, (size_t)w.n, sizeof *w.r, by_path_time);
    double *lat = malloc(sizeof *lat * (size_t)(acked.n + 1));
    double *lat0 = malloc(sizeof *lat0 * (size_t)(acked.n + 1));
    int nl = 0, unseen = 0;
    for (int i = 0, j = 0; i < acked.n; i++) {
      rec_t *a = &acked.r[i];
      while (j < w.n && strcmp(w.r[j].path, a->path) < 0) j++;
      int k = j;
      while (k < w.n && strcmp(w.r[k].path, a->path) == 0 && w.r[k].ver < a->ver) k++;
      if (k < w.n && strcmp(w.r[k].path, a->path) == 0) {
        lat0[nl] = ((double)w.r[k].t - (double)a->t0) / 1000.0;
        lat[nl++] = ((double)w.r[k].t - (double)a->t) / 1000.0;
      } else {
        unseen++;
      }
    }
    qsort(lat, (size_t)nl, sizeof *lat, cmp_d);
    qsort(lat0, (size_t)nl, sizeof *lat0, cmp_d);
    memcpy(all + nall, lat, sizeof *lat * (size_t)nl);
    memcpy(all0 + nall, lat0, sizeof *lat0 * (size_t)nl);
    nall += nl;
    /* 3. the registration */
    int reg_ok = 0;
    for (int i = 0; i < no; i++)
      if (strcmp(owners[i][0], reg_node) == 0 && strcmp(owners[i][1], session) == 0 &&
          strcmp(reg_session, session) == 0)
        reg_ok = 1;
    printf("%s: writes %d, older %ld, stale %ld, sessions %d, see-change ms from the reply p50 "
           "%.1f p99 %.1f max %.1f, from the request p50 %.1f p99 %.1f (n %d, not seen %d), "
           "registration %s %s %s\n",
           name, w.n, older, stale, sessions, pct(lat, nl, 0.5), pct(lat, nl, 0.99),
           nl ? lat[nl - 1] : 0, pct(lat0, nl, 0.5), pct(lat0, nl, 0.99), nl, unseen,
           reg_node[0] ? reg_node : "(none)", session,
           reg_ok ? "ok" : "NOT OWNED BY THE CURRENT SESSION");
    if (older || stale || !reg_ok || lock_errors) bad++;
    if (lock_errors) printf("%s: %ld lock acquire/release out of order\n", name, lock_errors);
    free(lat);
    free(lat0);
    for (int i = 0; i < w.n; i++) free(w.r[i].path);
    free(w.r);
  }
  if (no != nd) {
    printf("registration nodes: %d, daemons %d\n", no, nd);
    bad++;
  }
  /* 4. the lock never held twice */
  qsort(spans, (size_t)ns, sizeof *spans, by_start);
  int overlaps = 0;
  uint64_t end = 0, min_gap = UINT64_MAX;
  int end_who = -1;
  for (int i = 0; i < ns; i++) {
    if (i && spans[i].a < end) {
      if (overlaps++ < 3)
        printf("lock held twice: %s acquired at %" PRIu64 ", %s released at %" PRIu64 "\n",
               argv[4 + spans[i].who], spans[i].a, argv[4 + end_who], end);
    } else if (i && spans[i].a - end < min_gap) {
      min_gap = spans[i].a - end;
    }
    if (spans[i].b > end) end = spans[i].b, end_who = spans[i].who;
  }
  printf("lock: %d holds, %d overlaps, smallest gap between holders %.3f ms\n", ns, overlaps,
         min_gap == UINT64_MAX ? 0 : min_gap / 1000.0);
  if (overlaps || !ns) bad++;
  qsort(all, (size_t)nall, sizeof *all, cmp_d);
  qsort(all0, (size_t)nall, sizeof *all0, cmp_d);
  printf("all daemons: see-change ms from the reply p50 %.1f p99 %.1f max %.1f, from the request "
         "p50 %.1f p99 %.1f max %.1f (n %d)\n",
         pct(all, nall, 0.5), pct(all, nall, 0.99), nall ? all[nall - 1] : 0, pct(all0, nall, 0.5),
         pct(all0, nall, 0.99), nall ? all0[nall - 1] : 0, nall);
  printf("analyze: %s\n", bad ? "FAILED" : "passed");
  for (int i = 0; i < acked.n; i++) free(acked.r[i].path);
  free(acked.r);
  free(all);
  free(all0);
  free(spans);
  return bad ? 1 : 0;
}

int main(int argc, char **argv) {
  int rc = 2;
  if (argc >= 2 && !strcmp(argv[1], "init")) rc = cmd_init(argc, argv);
  else if (argc >= 2 && !strcmp(argv[1], "write")) rc = cmd_write(argc, argv);
  else if (argc >= 2 && !strcmp(argv[1], "owners")) rc = cmd_owners(argc, argv);
  else if (argc >= 2 && !strcmp(argv[1], "analyze")) rc = cmd_analyze(argc, argv);
  if (rc == 2) fprintf(stderr, "usage: see the top of tests/integration/zkconfd_soak.c\n");
  return rc;
}
