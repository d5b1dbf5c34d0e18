/* The history test: a routed multi-threaded workload runs against the real
 * 3-node ensemble while a fault schedule runs (leader kill -9, follower
 * kill, follower paused, follower slowed, client<->leader blackhole, leader
 * paused, member restart, a partition of the client from one carrier longer
 * than the session timeout, a kill of the owner session's server, the
 * client cut from the leader and healed between 2/3 and 1x the session
 * timeout with its bytes held); then, in a second case, against a 5-member
 * proxied ensemble of its own while a follower is left following a deposed
 * leader.  Every
 * operation is recorded (tests/harness/history.c),
 * the final state is read with an independent plain libzookeeper_mt
 * client, and the checker must find no lost write, no stale or
 * non-monotonic read, no reordered write and no foreign value; no
 * operation may hang or complete with ZCLOSING while the handle is open.
 * The report goes to stdout.
 *
 * Environment (all optional):
 *   ZKR_HISTORY_SECONDS   length of the faulted run (default 60)
 *   ZKR_HISTORY_THREADS   worker threads (default 4)
 *   ZKR_HISTORY_RATE      ops per second over all workers (default 2000;
 *                         0 = as fast as the depth limits allow)
 *   ZKR_HISTORY_TIMEOUT   session timeout of the handle in ms (default 4000)
 *   ZKR_HISTORY_SEED      seed of the workload and of the schedule's choices
 *   ZKR_HISTORY_EXAMPLES  violations printed per property (default 10)
 *   ZKR_HISTORY_STEPS     schedule steps to run, a comma list of leader-kill,
 *                         follower-kill, follower-pause, follower-slow,
 *                         blackhole, leader-pause, member-restart,
 *                         carrier-partition, owner-kill, leader-cut-heal
 *                         (default: all, in that order), deposed-leader
 *                         (5 proxied members only: the second case's)
 *   ZKR_HISTORY_DEPOSED   0: leave the deposed-leader case out
 *   ZKR_HISTORY_DEPOSED_SECONDS, _TIMEOUT, _SYNC
 *                         that case's run length (10), session timeout
 *                         (8000 ms) and its ensemble's syncLimit (40)
 *   ZKR_HISTORY_NET       its ensemble's network (default: ZKR_TEST_NET's
 *                         next one)
 *   ZKR_HISTORY_OPTIONS   handle options, "key=value,key=value" (e.g.
 *                         consistency=local: reads without sync, which the
 *                         checker should catch as stale)
 * The workload also creates ephemeral sequential nodes, outside the
 * checked history: every one the handle was told it created must exist at
 * the end, every one that exists must be owned by zkr_client_id(), whose
 * value never changes, and all of them go when the handle closes.
 * The blackhole, slow and partition steps need a proxied ensemble (ensemble.sh start
 * DIR --proxied); on a plain one they are skipped and the report says so.
 * See docs/history.md. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "history.h"
#include "it_common.h"

enum {
  SHARED_KEYS = 4,
  OWN_KEYS = 3, /* per worker: pipelined sets */
  CD_KEYS = 2,  /* per worker: create/delete cycles */
  MAX_WORKERS = 32,
  WRITE_DEPTH = 8, /* outstanding writes per worker */
  READ_DEPTH = 4,  /* outstanding reads per worker */
  BURST = 4        /* pipelined sets to one own key */
};

static int env_int(const char *name, int def) {
  const char *v = getenv(name);
  return v && *v ? atoi(v) : def;
}

/* ---- the ensemble script ---- */

/* Runs `bash ensemble.sh ARGS` (printf format); the first line of its
 * stdout goes to out (may be NULL).  Returns the exit status. */
static int ens(char *out, size_t cap, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int ens(char *out, size_t cap, const char *fmt, ...) {
  const char *sh = getenv("ZKR_TEST_ENSEMBLE_SH");
  char args[512], cmd[1024], line[256] = "";
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(args, sizeof args, fmt, ap);
  va_end(ap);
  snprintf(cmd, sizeof cmd, "bash '%s' %s", sh ? sh : "tests/harness/ensemble.sh", args);
  FILE *p = popen(cmd, "r");
  if (!p) return -1;
  if (!fgets(line, sizeof line, p)) line[0] = '\0';
  char sink[256];
  while (fgets(sink, sizeof sink, p)) {
  }
  int st = pclose(p);
  line[strcspn(line, "\n")] = '\0';
  if (out) snprintf(out, cap, "%s", line);
  return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* The ensemble a run works on: the harness's (ZKR_TEST_DIR,
 * ZKR_TEST_HOSTS, 3 members) unless the deposed-leader case set its own
 * 5-member one here. */
static struct {
  const char *dir, *hosts;
  int members;
} E;

static const char *ens_dir(void) {
  if (E.dir) return E.dir;
  const char *d = getenv("ZKR_TEST_DIR");
  return d && *d ? d : NULL;
}

static const char *ens_hosts(void) { return E.hosts ? E.hosts : it_hosts(); }

static int ens_members(void) { return E.members ? E.members : IT_MEMBERS; }

/* A plain stock session on any member of the run's ensemble, connected. */
static zhandle_t *stock_open(void) { return it_stock_hosts(ens_hosts()); }

/* 1-based leader, waiting for one; -1 if none comes. */
static int wait_leader(void) {
  char out[64];
  if (ens(out, sizeof out, "wait-leader '%s'", ens_dir()) != 0) return -1;
  return atoi(out);
}

static int proxied(void) {
  char path[1024], line[256];
  snprintf(path, sizeof path, "%s/ensemble.env", ens_dir());
  FILE *f = fopen(path, "r");
  int yes = 0;
  while (f && fgets(line, sizeof line, f))
    if (strncmp(line, "mode=proxied", 12) == 0) yes = 1;
  if (f) fclose(f);
  return yes;
}

/* Everything running, resumed, unfaulted; a leader.  Idempotent: used by
 * the schedule's end and by the fixture after a failed run. */
static int heal_ensemble(void) {
  if (!ens_dir()) return 0;
  int rc = 0;
  for (int i = 1; i <= ens_members(); i++) {
    if (ens(NULL, 0, "pid '%s' %d", ens_dir(), i) != 0 &&
        ens(NULL, 0, "restart '%s' %d", ens_dir(), i) != 0)
      rc = -1;
    ens(NULL, 0, "resume '%s' %d", ens_dir(), i);
  }
  if (proxied()) ens(NULL, 0, "heal '%s' all", ens_dir());
  if (wait_leader() < 0) rc = -1;
  return rc;
}

/* ---- the workload ---- */

typedef struct worker worker_t;

typedef struct {
  zkh_t *h;
  zkr_t *z;
  char base[64];
  _Atomic long eph_acked, eph_unknown, eph_failed; /* ephemeral creates */
  int n_workers;
  int key_shared[SHARED_KEYS];
  char path[MAX_WORKERS * (OWN_KEYS + CD_KEYS) + SHARED_KEYS][128];
  int stop;            /* atomic */
  uint64_t ops_issued; /* atomic */
  double per_worker_rate;
} run_t;

struct worker {
  run_t *run;
  int id; /* thread id in the history: 1..n */
  unsigned seed;
  pthread_t th;
  pthread_mutex_t mu;
  pthread_cond_t cv;
  int writes_out, reads_out;
  int key_own[OWN_KEYS], key_cd[CD_KEYS];
  int cd_present[CD_KEYS];       /* belief, under mu */
  int version_seen[SHARED_KEYS]; /* for conditional sets, under mu */
};

static worker_t W[MAX_WORKERS];

typedef struct {
  worker_t *w;
  int64_t op;
  int is_write;
  int cd;     /* index into key_cd, -1 */
  int shared; /* index into key_shared, -1 */
} opctx_t;

static void finish(opctx_t *c) {
  worker_t *w = c->w;
  pthread_mutex_lock(&w->mu);
  if (c->is_write) w->writes_out--;
  else w->reads_out--;
  pthread_cond_broadcast(&w->cv);
  pthread_mutex_unlock(&w->mu);
  free(c);
}

/* Writes of w still outstanding, read under its mutex like every update
 * (an atomic load against finish()'s locked decrement is a race to TSan). */
static int writes_outstanding(worker_t *w) {
  pthread_mutex_lock(&w->mu);
  int n = w->writes_out;
  pthread_mutex_unlock(&w->mu);
  return n;
}

static void stat_fields(const struct Stat *st, int64_t *m, int64_t *cz, int32_t *v) {
  *m = st ? st->mzxid : -1;
  *cz = st ? st->czxid : -1;
  *v = st ? st->version : -1;
}

static void note_version(opctx_t *c, int rc, const struct Stat *st) {
  if (c->shared < 0 || rc != ZOK || !st) return;
  pthread_mutex_lock(&c->w->mu);
  c->w->version_seen[c->shared] = st->version;
  pthread_mutex_unlock(&c->w->mu);
}

static void on_stat(int rc, const struct Stat *st, const void *data) {
  opctx_t *c = (opctx_t *)data;
  int64_t m, cz;
  int32_t v;
  stat_fields(rc == ZOK ? st : NULL, &m, &cz, &v);
  zkh_done(c->w->run->h, c->op, rc, m, cz, v, NULL, -1);
  note_version(c, rc, rc == ZOK ? st : NULL);
  finish(c);
}

static void on_data(int rc, const char *value, int len, const struct Stat *st, const void *data) {
  opctx_t *c = (opctx_t *)data;
  int64_t m, cz;
  int32_t v;
  stat_fields(rc == ZOK ? st : NULL, &m, &cz, &v);
  zkh_done(c->w->run->h, c->op, rc, m, cz, v, value, len);
  note_version(c, rc, rc == ZOK ? st : NULL);
  finish(c);
}

static void on_create(int rc, const char *path, const struct Stat *st, const void *data) {
  (void)path;
  opctx_t *c = (opctx_t *)data;
  int64_t m, cz;
  int32_t v;
  stat_fields(rc == ZOK ? st : NULL, &m, &cz, &v);
  zkh_done(c->w->run->h, c->op, rc, m, cz, v, NULL, -1);
  if (c->cd >= 0 && (rc == ZOK || rc == ZNODEEXISTS)) {
    pthread_mutex_lock(&c->w->mu);
    c->w->cd_present[c->cd] = 1;
    pthread_mutex_unlock(&c->w->mu);
  }
  finish(c);
}

static void on_delete(int rc, const void *data) {
  opctx_t *c = (opctx_t *)data;
  zkh_done(c->w->run->h, c->op, rc, -1, -1, -1, NULL, -1);
  if (c->cd >= 0 && (rc == ZOK || rc == ZNONODE)) {
    pthread_mutex_lock(&c->w->mu);
    c->w->cd_present[c->cd] = 0;
    pthread_mutex_unlock(&c->w->mu);
  }
  finish(c);
}

typedef enum { A_SET_OWN, A_SET_SHARED, A_CAS_SHARED, A_CD, A_EPH, A_GET, A_EXISTS } action_t;

/* An ephemeral sequential create, outside the checked history (its name
 * is the server's): counted, and checked against the final tree. */
static void on_eph(int rc, const char *path, const void *data) {
  (void)path;
  opctx_t *c = (opctx_t *)data;
  run_t *r = c->w->run;
  if (rc == ZOK) r->eph_acked++;
  else if (rc == ZCONNECTIONLOSS || rc == ZOPERATIONTIMEOUT) r->eph_unknown++;
  else r->eph_failed++;
  finish(c);
}

static int issue_eph(worker_t *w) {
  run_t *r = w->run;
  opctx_t *c = calloc(1, sizeof *c);
  ck_assert_ptr_nonnull(c);
  c->w = w;
  c->cd = c->shared = -1;
  c->is_write = 1;
  pthread_mutex_lock(&w->mu);
  w->writes_out++;
  pthread_mutex_unlock(&w->mu);
  char path[128];
  snprintf(path, sizeof path, "%s/e-t%d-", r->base, w->id);
  int rc =
      zkr_acreate(r->z, path, "", 0, &ZOO_OPEN_ACL_UNSAFE, ZOO_EPHEMERAL_SEQUENTIAL, on_eph, c);
  __atomic_add_fetch(&r->ops_issued, 1, __ATOMIC_RELAXED);
  if (rc != ZOK) {
    r->eph_failed++;
    finish(c);
  }
  return 0;
}

/* Issues one operation: records the invoke, calls zkr_a*, records a
 * rejection if the call fails (its completion will then never run). */
static int issue(worker_t *w, action_t a, int idx) {
  run_t *r = w->run;
  if (a == A_EPH) return issue_eph(w);
  int key, version = -1;
  zkh_type_t type;
  opctx_t *c = calloc(1, sizeof *c);
  ck_assert_ptr_nonnull(c);
  c->w = w;
  c->cd = c->shared = -1;
  switch (a) {
  case A_SET_OWN: key = w->key_own[idx], type = ZKH_SET; break;
  case A_SET_SHARED: key = r->key_shared[idx], type = ZKH_SET, c->shared = idx; break;
  case A_CAS_SHARED:
    key = r->key_shared[idx], type = ZKH_SET, c->shared = idx;
    pthread_mutex_lock(&w->mu);
    version = w->version_seen[idx];
    pthread_mutex_unlock(&w->mu);
    break;
  case A_CD:
    key = w->key_cd[idx], c->cd = idx;
    pthread_mutex_lock(&w->mu);
    type = w->cd_present[idx] ? ZKH_DELETE : ZKH_CREATE;
    pthread_mutex_unlock(&w->mu);
    break;
  case A_GET: key = idx, type = ZKH_GET; break;
  default: key = idx, type = ZKH_EXISTS; break;
  }
  c->is_write = type == ZKH_CREATE || type == ZKH_SET || type == ZKH_DELETE;
  c->op = zkh_invoke(r->h, w->id, type, key, version);
  if (c->op < 0) { /* history full: stop issuing */
    free(c);
    return -1;
  }
  pthread_mutex_lock(&w->mu);
  if (c->is_write) w->writes_out++;
  else w->reads_out++;
  pthread_mutex_unlock(&w->mu);
  const char *path = r->path[key];
  char v[64];
  int vn = zkh_value(r->h, c->op, v, sizeof v), rc;
  switch (type) {
  case ZKH_SET: rc = zkr_aset(r->z, path, v, vn, version, on_stat, c); break;
  case ZKH_CREATE:
    rc = zkr_acreate2(r->z, path, v, vn, &ZOO_OPEN_ACL_UNSAFE, 0, on_create, c);
    break;
  case ZKH_DELETE: rc = zkr_adelete(r->z, path, -1, on_delete, c); break;
  case ZKH_GET: rc = zkr_aget(r->z, path, 0, on_data, c); break;
  default: rc = zkr_aexists(r->z, path, 0, on_stat, c); break;
  }
  __atomic_add_fetch(&r->ops_issued, 1, __ATOMIC_RELAXED);
  if (rc != ZOK) {
    zkh_reject(r->h, c->op, rc);
    finish(c);
  }
  return 0;
}

/* Waits for room for an operation: 1 for a write slot, 0 for a read slot,
 * -1 when stopping.  The wanted kind first; when its slots are all taken,
 * the other kind, so that writes parked during a failover do not stop the
 * reads, and reads stuck on a hung follower do not stop the writes (the
 * figures then measure the library, not this loop). */
static int wait_slot(worker_t *w, int want_write) {
  pthread_mutex_lock(&w->mu);
  int got = -1;
  while (!__atomic_load_n(&w->run->stop, __ATOMIC_ACQUIRE)) {
    int can_w = w->writes_out < WRITE_DEPTH, can_r = w->reads_out < READ_DEPTH;
    if (can_w && (want_write || !can_r)) {
      got = 1;
      break;
    }
    if (can_r) {
      got = 0;
      break;
    }
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    ts.tv_nsec += 50 * 1000000L;
    if (ts.tv_nsec >= 1000000000L) ts.tv_sec++, ts.tv_nsec -= 1000000000L;
    pthread_cond_timedwait(&w->cv, &w->mu, &ts);
  }
  pthread_mutex_unlock(&w->mu);
  return got;
}

static void pace(worker_t *w, uint64_t t0_ms, uint64_t done) {
  double rate = w->run->per_worker_rate;
  if (rate <= 0) return;
  double due_ms = (double)done * 1000.0 / rate;
  double now = (double)(it_now_ms() - t0_ms);
  if (due_ms > now + 1) it_sleep_ms((int)(due_ms - now));
}

static void *worker_main(void *arg) {
  worker_t *w = arg;
  run_t *r = w->run;
  uint64_t t0 = it_now_ms(), done = 0;
  int n_keys = r->n_workers * (OWN_KEYS + CD_KEYS) + SHARED_KEYS;
  while (!__atomic_load_n(&r->stop, __ATOMIC_ACQUIRE)) {
    int dice = (int)(rand_r(&w->seed) % 100);
    action_t a = dice < 25   ? A_SET_OWN
                 : dice < 37 ? A_SET_SHARED
                 : dice < 42 ? A_CAS_SHARED
                 : dice < 50 ? A_CD
                 : dice < 53 ? A_EPH
                 : dice < 88 ? A_GET
                             : A_EXISTS;
    int want_write = a <= A_EPH;
    int n = a == A_SET_OWN ? BURST : 1;
    int idx = a == A_SET_OWN ? (int)(rand_r(&w->seed) % OWN_KEYS)
              : a == A_CD    ? (int)(rand_r(&w->seed) % CD_KEYS)
              : want_write   ? (int)(rand_r(&w->seed) % SHARED_KEYS)
                             : (int)(rand_r(&w->seed) % (unsigned)n_keys);
    for (int i = 0; i < n; i++) {
      int slot = wait_slot(w, want_write), rc;
      if (slot < 0) return NULL;
      if (slot == want_write) rc = issue(w, a, idx);
      else if (slot) rc = issue(w, A_SET_SHARED, (int)(rand_r(&w->seed) % SHARED_KEYS));
      else
        rc = issue(w, rand_r(&w->seed) % 4 ? A_GET : A_EXISTS,
                   (int)(rand_r(&w->seed) % (unsigned)n_keys));
      if (rc < 0) return NULL;
      pace(w, t0, ++done);
      if (slot != want_write) break; /* the burst is off while writes are parked */
    }
  }
  return NULL;
}

/* Waits until every worker's operations completed; returns how many are
 * still outstanding at the deadline (a hang). */
static int drain(run_t *r, int deadline_ms) {
  uint64_t end = it_now_ms() + (uint64_t)deadline_ms;
  for (;;) {
    int out = 0;
    for (int i = 0; i < r->n_workers; i++) {
      pthread_mutex_lock(&W[i].mu);
      out += W[i].writes_out + W[i].reads_out;
      pthread_mutex_unlock(&W[i].mu);
    }
    if (out == 0 || it_now_ms() >= end) return out;
    it_sleep_ms(20);
  }
}

/* ---- topology sampler: marks leader / write-session changes ---- */

typedef struct {
  run_t *run;
  int stop;
  pthread_t th;
} sampler_t;

static void *sampler_main(void *arg) {
  sampler_t *s = arg;
  char last[160] = "";
  while (!__atomic_load_n(&s->stop, __ATOMIC_ACQUIRE)) {
    zkr_stats_t *st;
    if (zkr_stats(s->run->z, &st) == ZOK) {
      char now[160], pool[32] = "";
      for (int i = 0; i < st->n_members; i++)
        if (st->members[i].in_read_pool)
          snprintf(pool + strlen(pool), sizeof pool - strlen(pool), "%sm%d", pool[0] ? "," : "",
                   i + 1);
      snprintf(now, sizeof now, "handle: leader m%d, write session m%d, read pool {%s}",
               st->leader + 1, st->write_member + 1, pool);
      if (strcmp(now, last) != 0) {
        zkh_mark(s->run->h, "%s", now);
        snprintf(last, sizeof last, "%s", now);
      }
      zkr_stats_free(st);
    }
    it_sleep_ms(100);
  }
  return NULL;
}

/* ---- the fault schedule ---- */

typedef struct {
  zkh_t *h;
  zkr_t *z;
  int proxied;
  int session_ms;
  unsigned seed;
  int steps_done;
  char skipped[256];
  int failures; /* ensemble commands that failed */
  /* deposed-leader attempts made, and the longest two leaders stood */
  int deposed_steps;
  uint64_t deposed_ms;
} sched_t;

static void step_mark(sched_t *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void step_mark(sched_t *s, const char *fmt, ...) {
  char text[160];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(text, sizeof text, fmt, ap);
  va_end(ap);
  zkh_mark(s->h, "%s", text);
  printf("history: %7.3f s  %s\n", zkh_elapsed_s(s->h), text);
  fflush(stdout);
}

static void must(sched_t *s, int rc, const char *what) {
  if (rc != 0) {
    s->failures++;
    step_mark(s, "ensemble command failed (%d): %s", rc, what);
  }
}

static int leader_now(sched_t *s) {
  int l = wait_leader();
  if (l < 0) must(s, 1, "wait-leader");
  return l;
}

/* A follower other than `not`, chosen by the seed. */
static int pick_follower(sched_t *s, int leader) {
  int f = 1 + (int)(rand_r(&s->seed) % (ens_members() - 1));
  return f >= leader ? f + 1 : f;
}

static void step_leader_kill(sched_t *s) {
  int l = leader_now(s);
  if (l < 0) return;
  must(s, ens(NULL, 0, "kill '%s' %d", ens_dir(), l), "kill leader");
  step_mark(s, "leader m%d killed (-9)", l);
  int nl = leader_now(s);
  step_mark(s, "new leader elected: m%d", nl);
  it_sleep_ms(3000);
  must(s, ens(NULL, 0, "restart '%s' %d", ens_dir(), l), "restart");
  step_mark(s, "old leader m%d restarted (serving)", l);
  leader_now(s);
  it_sleep_ms(2000);
}

static void step_follower_kill(sched_t *s) {
  int l = leader_now(s);
  if (l < 0) return;
  int f = pick_follower(s, l);
  must(s, ens(NULL, 0, "kill '%s' %d", ens_dir(), f), "kill follower");
  step_mark(s, "follower m%d killed (-9) (leader m%d)", f, l);
  leader_now(s);
  it_sleep_ms(4000);
  must(s, ens(NULL, 0, "restart '%s' %d", ens_dir(), f), "restart");
  step_mark(s, "follower m%d restarted (serving)", f);
  leader_now(s);
  it_sleep_ms(2000);
}

static void step_follower_pause(sched_t *s) {
  int l = leader_now(s);
  if (l < 0) return;
  int f = pick_follower(s, l);
  must(s, ens(NULL, 0, "pause '%s' %d", ens_dir(), f), "pause");
  step_mark(s, "follower m%d paused (SIGSTOP)", f);
  it_sleep_ms(3000);
  must(s, ens(NULL, 0, "resume '%s' %d", ens_dir(), f), "resume");
  step_mark(s, "follower m%d resumed (SIGCONT)", f);
  leader_now(s);
  it_sleep_ms(2000);
}

static void step_follower_slow(sched_t *s) {
  if (!s->proxied) {
    if (!strstr(s->skipped, "slow")) strcat(s->skipped, " follower-slow(proxy delay)");
    return;
  }
  int l = leader_now(s);
  if (l < 0) return;
  int f = pick_follower(s, l);
  must(s, ens(NULL, 0, "slow '%s' %d 150 30", ens_dir(), f), "slow");
  step_mark(s, "follower m%d slow (proxy delay 150+-30 ms on each of its links)", f);
  it_sleep_ms(4000);
  must(s, ens(NULL, 0, "heal '%s' %d", ens_dir(), f), "heal");
  step_mark(s, "follower m%d healed", f);
  leader_now(s);
  it_sleep_ms(2000);
}

static void step_blackhole(sched_t *s) {
  if (!s->proxied) {
    if (!strstr(s->skipped, "blackhole")) strcat(s->skipped, " client-leader-blackhole");
    return;
  }
  int l = leader_now(s);
  if (l < 0) return;
  must(s, ens(NULL, 0, "fault '%s' blackhole c%d on", ens_dir(), l), "blackhole on");
  step_mark(s, "client<->leader blackhole on c%d (followers still reach m%d)", l, l);
  /* Longer than the client's detection (2/3 of the session timeout). */
  it_sleep_ms(s->session_ms + 3000);
  must(s, ens(NULL, 0, "fault '%s' blackhole c%d off", ens_dir(), l), "blackhole off");
  step_mark(s, "client<->leader blackhole off c%d", l);
  leader_now(s);
  it_sleep_ms(2000);
}

/* The client is cut off from the leader for longer than it takes to give
 * its connection up (2/3 of the session timeout) and shorter than the
 * session timeout, then healed.  The proxy holds the bytes of both
 * directions, as a network whose partition heals holds unacknowledged
 * segments for retransmission: the writes the client gave up on (unknown
 * outcome) still reach the leader, late, on their old connection, and the
 * session itself is still alive there. */
static void step_leader_cut_heal(sched_t *s) {
  if (!s->proxied) {
    if (!strstr(s->skipped, "leader-cut")) strcat(s->skipped, " leader-cut-heal");
    return;
  }
  int l = leader_now(s);
  if (l < 0) return;
  int heal_ms = s->session_ms * 5 / 6;
  must(s, ens(NULL, 0, "fault '%s' hold c%d on", ens_dir(), l), "hold on");
  step_mark(s, "client<->leader cut on c%d (bytes held), healing after %d ms", l, heal_ms);
  it_sleep_ms(heal_ms);
  must(s, ens(NULL, 0, "fault '%s' hold c%d off", ens_dir(), l), "hold off");
  step_mark(s, "client<->leader cut healed on c%d: held bytes delivered", l);
  leader_now(s);
  it_sleep_ms(2000);
}

/* Not in the issue's list, but DESIGN.md names it: the old leader hangs
 * with writes in flight on its session, a new one is elected, and the old
 * one comes back still claiming an old epoch. */
static void step_leader_pause(sched_t *s) {
  int l = leader_now(s);
  if (l < 0) return;
  must(s, ens(NULL, 0, "pause '%s' %d", ens_dir(), l), "pause leader");
  step_mark(s, "leader m%d paused (SIGSTOP)", l);
  int nl = leader_now(s);
  step_mark(s, "new leader elected: m%d", nl);
  it_sleep_ms(s->session_ms);
  must(s, ens(NULL, 0, "resume '%s' %d", ens_dir(), l), "resume leader");
  step_mark(s, "old leader m%d resumed (SIGCONT)", l);
  leader_now(s);
  it_sleep_ms(2000);
}

static void step_member_restart(sched_t *s) {
  int l = leader_now(s);
  if (l < 0) return;
  int m = 1 + (int)(rand_r(&s->seed) % ens_members());
  must(s, ens(NULL, 0, "kill '%s' %d", ens_dir(), m), "kill");
  step_mark(s, "member restart: m%d%s killed (-9), starting it again", m,
            m == l ? " (leader)" : "");
  must(s, ens(NULL, 0, "restart '%s' %d", ens_dir(), m), "restart");
  step_mark(s, "member m%d restarted (serving)", m);
  leader_now(s);
  it_sleep_ms(2000);
}

/* The member (1-based) whose server holds the handle's owner session. */
static int owner_now(sched_t *s) {
  zkr_stats_t *st;
  int o = -1;
  if (zkr_stats(s->z, &st) == ZOK) {
    o = st->owner >= 0 ? st->owner + 1 : -1;
    zkr_stats_free(st);
  }
  return o;
}

/* The client loses one carrier - a follower that does not hold the owner
 * session - for longer than the session timeout: its session expires or
 * is replaced, silently; its watches and reads move on. */
static void step_carrier_partition(sched_t *s) {
  if (!s->proxied) {
    if (!strstr(s->skipped, "carrier")) strcat(s->skipped, " carrier-partition");
    return;
  }
  int l = leader_now(s);
  if (l < 0) return;
  int o = owner_now(s), f = -1;
  for (int k = 1; k <= ens_members() && f < 0; k++)
    if (k != l && k != o) f = k;
  if (f < 0) f = pick_follower(s, l);
  must(s, ens(NULL, 0, "fault '%s' blackhole c%d on", ens_dir(), f), "blackhole on");
  step_mark(s, "client<->carrier blackhole on c%d (owner on m%d, leader m%d)", f, o, l);
  it_sleep_ms(s->session_ms + 3000);
  must(s, ens(NULL, 0, "fault '%s' blackhole c%d off", ens_dir(), f), "blackhole off");
  step_mark(s, "client<->carrier blackhole off c%d", f);
  leader_now(s);
  it_sleep_ms(2000);
}

/* The server holding the owner session dies: the session is re-attached
 * to a live server before its timeout, with its id. */
static void step_owner_kill(sched_t *s) {
  int o = owner_now(s);
  if (o < 0) return;
  must(s, ens(NULL, 0, "kill '%s' %d", ens_dir(), o), "kill owner's server");
  step_mark(s, "owner session's server m%d killed (-9)", o);
  int nl = leader_now(s);
  step_mark(s, "leader after the kill: m%d", nl);
  it_sleep_ms(4000);
  must(s, ens(NULL, 0, "restart '%s' %d", ens_dir(), o), "restart");
  step_mark(s, "m%d restarted (serving); owner now on m%d", o, owner_now(s));
  leader_now(s);
  it_sleep_ms(2000);
}

/* Member m's (1-based) mode from its own srvr, asked on the server's own
 * port (proxied: the client port + 10000, past the proxy, whose client
 * links a step may hold): 2 leader, 1 follower, 0 any other answer (not
 * serving), -1 no answer. */
static int srvr_mode(int m) {
  char hosts[512], *save = NULL, *hp = NULL;
  snprintf(hosts, sizeof hosts, "%s", ens_hosts());
  char *t = strtok_r(hosts, ",", &save);
  for (int i = 1; t && i < m; i++) t = strtok_r(NULL, ",", &save);
  if (!t || !(hp = strrchr(t, ':'))) return -1;
  *hp = '\0';
  const char *sh = getenv("ZKR_TEST_ENSEMBLE_SH");
  char cmd[1024], line[256];
  snprintf(cmd, sizeof cmd, "bash '%s' srvr %s %d 2>/dev/null",
           sh ? sh : "tests/harness/ensemble.sh", t, atoi(hp + 1) + (proxied() ? 10000 : 0));
  FILE *p = popen(cmd, "r");
  if (!p) return -1;
  int mode = -1;
  while (fgets(line, sizeof line, p)) {
    if (strncmp(line, "Mode: leader", 12) == 0) mode = 2;
    else if (strncmp(line, "Mode: follower", 14) == 0) mode = 1;
    else if (mode < 0) mode = 0;
  }
  pclose(p);
  return mode;
}

/* Sends n control lines to the run's fault proxy on one connection, so
 * that they take effect together (ensemble.sh fault sends one command per
 * call); returns how many replies were not "ok". */
static int fp_batch(const char *lines, int n) {
  char path[1024], line[256], host[64] = "";
  int port = 0;
  snprintf(path, sizeof path, "%s/ensemble.env", ens_dir());
  FILE *f = fopen(path, "r");
  while (f && fgets(line, sizeof line, f))
    if (sscanf(line, "control=%63[^:]:%d", host, &port) == 2) break;
  if (f) fclose(f);
  struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0 || !port || inet_pton(AF_INET, host, &sa.sin_addr) != 1 ||
      connect(fd, (struct sockaddr *)&sa, sizeof sa) != 0) {
    if (fd >= 0) close(fd);
    return n;
  }
  FILE *io = fdopen(fd, "r+");
  fputs(lines, io);
  fflush(io);
  int bad = 0;
  for (int i = 0; i < n; i++)
    if (!fgets(line, sizeof line, io) || strncmp(line, "ok", 2) != 0) bad++;
  fclose(io);
  return bad;
}

/* A follower left following a deposed leader (DESIGN.md section 3, rule 5;
 * ZOOKEEPER-1675).  Five members, started with syncLimit 40 (8 s): the
 * leader L is cut from three of them, whose quorum connections to L the
 * proxy resets on their side only while it holds L's side, so they drop L
 * at once and elect a new leader N, while L hears nothing and leads on,
 * with its one follower A, until its own sync limit passes.  The client
 * still reaches L and A: a sync+read on A is answered from L's old state.
 * The handle must keep reads of such a member from the history. */
/* One attempt; returns how long two leaders stood (ms): from the first
 * srvr poll that saw N leading while L still led, to L giving up; 0 if
 * none did. */
static uint64_t deposed_attempt(sched_t *s) {
  int l = leader_now(s);
  if (l < 0) return 0;
  int a = pick_follower(s, l), cut[8], n = 0;
  for (int k = 1; k <= ens_members(); k++)
    if (k != l && k != a) cut[n++] = k;
  /* L must have no proposal in flight when it is cut: a leader answers a
   * sync only once its pending proposals are committed, so A's sync+reads
   * would wait with them for ever and never come back stale (a run with
   * the epoch floor disabled found nothing that way).  So the client's
   * requests to L wait in the proxy from now on, and what was sent before
   * is committed within 300 ms. */
  must(s, ens(NULL, 0, "fault '%s' hold c%d on up", ens_dir(), l), "hold client");
  it_sleep_ms(300);
  for (int i = 0; i < n; i++)
    must(s, ens(NULL, 0, "fault '%s' hold p%d%d on", ens_dir(), l, cut[i]), "hold");
  /* All three at once, and no way back to L: a member that drops L
   * while the others still follow it sees a quorum for L (itself, A and
   * those still following) and follows L again, waits initLimit for it in
   * vain, and so on - they may not elect a new leader before L gives up. */
  char batch[512] = "";
  for (int i = 0; i < n; i++)
    snprintf(batch + strlen(batch), sizeof batch - strlen(batch),
             "refuse q%d%d on\nreset q%d%d client\n", cut[i], l, cut[i], l);
  must(s, fp_batch(batch, 2 * n), "refuse and reset");
  uint64_t t0 = it_now_ms(), elected = 0, gave_up = 0, two = 0;
  step_mark(
      s,
      "deposed leader: m%d cut from m%d,m%d,m%d (held on its side, reset and refused on theirs); "
      "its follower m%d still reaches it, and the client's requests to it are held",
      l, cut[0], cut[1], cut[2], a);
  int nl = -1;
  /* Until L gives up: healing then at once matters, as the cut members,
   * if they have no leader yet, may elect L again (its uncommitted
   * proposals give it the highest zxid) and wait for it in vain. */
  while (it_now_ms() < t0 + 30000 && !gave_up) {
    for (int i = 0; i < n && nl < 0; i++)
      if (srvr_mode(cut[i]) == 2) {
        nl = cut[i];
        elected = it_now_ms();
        int lm = srvr_mode(l);
        step_mark(s, "new leader m%d elected by the cut members; old leader m%d %s", nl, l,
                  lm == 2 ? "still leads (two leaders)" : "no longer leads");
        if (lm == 2) two = elected;
      }
    if (!gave_up) {
      int lm = srvr_mode(l);
      if (lm >= 0 && lm != 2) {
        gave_up = it_now_ms();
        step_mark(s, "old leader m%d gave up leading, %llu ms after the cut", l,
                  (unsigned long long)(gave_up - t0));
      }
    }
    it_sleep_ms(50);
  }
  uint64_t window = two && gave_up > two ? gave_up - two : 0;
  for (int i = 0; i < n; i++)
    must(s, ens(NULL, 0, "fault '%s' clear p%d%d", ens_dir(), l, cut[i]), "clear");
  must(s, ens(NULL, 0, "fault '%s' clear c%d", ens_dir(), l), "clear client");
  step_mark(s, "deposed leader m%d healed; two leaders stood for %llu ms", l,
            (unsigned long long)window);
  leader_now(s);
  it_sleep_ms(2000);
  return window;
}

/* Under load the cut members sometimes elect no new leader before L gives
 * up (seen with L the member of the highest id; then the new leader is
 * another one): the situation was not made, nothing was tested.  A second
 * attempt is made then, on the new leader; the histories of both are
 * checked.  The case fails unless one attempt had two leaders for 1 s. */
static void step_deposed_leader(sched_t *s) {
  if (!s->proxied || ens_members() < 5) {
    if (!strstr(s->skipped, "deposed")) strcat(s->skipped, " deposed-leader(5 proxied members)");
    return;
  }
  for (int attempt = 0; attempt < 2 && s->deposed_ms < 1000; attempt++) {
    uint64_t w = deposed_attempt(s);
    s->deposed_steps++;
    if (w > s->deposed_ms) s->deposed_ms = w;
  }
}

typedef void (*step_fn)(sched_t *);
static const struct {
  const char *name;
  step_fn fn;
  int est_ms; /* rough duration, to stop the cycle in time */
  int own;    /* 1: not in the default schedule (needs its own ensemble) */
} STEPS[] = {
    {"leader-kill", step_leader_kill, 7000, 0},
    {"follower-kill", step_follower_kill, 7500, 0},
    {"follower-pause", step_follower_pause, 5500, 0},
    {"follower-slow", step_follower_slow, 6500, 0},
    {"blackhole", step_blackhole, 10000, 0},
    {"leader-pause", step_leader_pause, 8000, 0},
    {"member-restart", step_member_restart, 4000, 0},
    {"carrier-partition", step_carrier_partition, 9000, 0},
    {"owner-kill", step_owner_kill, 8000, 0},
    {"leader-cut-heal", step_leader_cut_heal, 6000, 0},
    {"deposed-leader", step_deposed_leader, 14000, 1},
};
#define N_STEPS (int)(sizeof STEPS / sizeof STEPS[0])

/* Runs the schedule (only: a comma list of step names; NULL or empty:
 * every step of the default schedule) once, then more steps while time
 * remains. */
static void run_schedule(sched_t *s, uint64_t end_ms, const char *only) {
  int pick[N_STEPS], n = 0;
  for (int k = 0; k < N_STEPS; k++) {
    if (!(only && *only) && STEPS[k].own) continue;
    if (only && *only) {
      const char *p = strstr(only, STEPS[k].name);
      size_t len = strlen(STEPS[k].name);
      if (!p || (p != only && p[-1] != ',') || (p[len] != '\0' && p[len] != ',')) continue;
    }
    pick[n++] = k;
  }
  ck_assert_msg(n > 0, "ZKR_HISTORY_STEPS names no step: '%s'", only);
  for (int i = 0;; i++) {
    int k = pick[i % n];
    if (i >= n && it_now_ms() + (uint64_t)STEPS[k].est_ms > end_ms) break;
    STEPS[k].fn(s);
    s->steps_done++;
  }
}

/* ---- the test ---- */

static const char *rc_name(int rc) { return zkr_err_name(rc); }

static void sync_done(int rc, const char *value, const void *data) {
  (void)rc;
  (void)value;
  (void)data;
}

static void heal_fixture(void) { heal_ensemble(); }

/* One run: the workload on the run's ensemble (E), with a handle of
 * session timeout session_ms, while the schedule (steps: as
 * run_schedule's `only`) runs, for at least `seconds`; then the checks. */
static void history_run(const char *steps, int seconds, int session_ms) {
  ck_assert_msg(ens_dir() != NULL,
                "ZKR_TEST_DIR not set: run through tests/integration/integration.sh");
  int n_workers = env_int("ZKR_HISTORY_THREADS", 4);
  int rate = env_int("ZKR_HISTORY_RATE", 2000);
  unsigned seed = (unsigned)env_int("ZKR_HISTORY_SEED", (int)(time(NULL) % 100000));
  int examples = env_int("ZKR_HISTORY_EXAMPLES", 10);
  if (n_workers < 1) n_workers = 1;
  if (n_workers > MAX_WORKERS) n_workers = MAX_WORKERS;

  static run_t run;
  memset(&run, 0, sizeof run);
  run.n_workers = n_workers;
  run.per_worker_rate = rate > 0 ? (double)rate / n_workers : 0;
  uint32_t max_ops = 1200000;
  run.h = zkh_new(max_ops, (uint32_t)(n_workers * (OWN_KEYS + CD_KEYS) + SHARED_KEYS),
                  n_workers + 2, 4096);
  ck_assert_ptr_nonnull(run.h);
  zkh_set_rc_name(run.h, rc_name);

  /* Keys under a fresh base node, made by an independent client. */
  char *base = run.base;
  snprintf(run.base, sizeof run.base, "/zkh-%d-%llu", (int)getpid(),
           (unsigned long long)it_now_ms());
  zhandle_t *stock = stock_open();
  ck_assert_int_eq(zoo_create(stock, base, NULL, -1, &ZOO_OPEN_ACL_UNSAFE, 0, NULL, 0), ZOK);
  zookeeper_close(stock);
  int nk = 0;
  for (int j = 0; j < SHARED_KEYS; j++) {
    snprintf(run.path[nk], sizeof run.path[nk], "%s/s%d", base, j);
    run.key_shared[j] = zkh_key(run.h, run.path[nk]);
    ck_assert_int_eq(run.key_shared[j], nk++);
  }
  for (int i = 0; i < n_workers; i++) {
    worker_t *w = &W[i];
    memset(w, 0, sizeof *w);
    w->run = &run;
    w->id = i + 1;
    w->seed = seed * 7919u + (unsigned)i;
    pthread_mutex_init(&w->mu, NULL);
    pthread_cond_init(&w->cv, NULL);
    for (int j = 0; j < OWN_KEYS; j++) {
      snprintf(run.path[nk], sizeof run.path[nk], "%s/t%dk%d", base, w->id, j);
      w->key_own[j] = zkh_key(run.h, run.path[nk]);
      ck_assert_int_eq(w->key_own[j], nk++);
    }
    for (int j = 0; j < CD_KEYS; j++) {
      snprintf(run.path[nk], sizeof run.path[nk], "%s/t%dc%d", base, w->id, j);
      w->key_cd[j] = zkh_key(run.h, run.path[nk]);
      ck_assert_int_eq(w->key_cd[j], nk++);
    }
  }

  zkr_options_t o = ZKR_OPTIONS_INIT;
  const char *extra = getenv("ZKR_HISTORY_OPTIONS"); /* "key=value,key=value" */
  if (extra && *extra) {
    char buf[512], *save = NULL;
    snprintf(buf, sizeof buf, "%s", extra);
    for (char *kv = strtok_r(buf, ",", &save); kv; kv = strtok_r(NULL, ",", &save)) {
      char *eq = strchr(kv, '=');
      ck_assert_msg(eq != NULL, "ZKR_HISTORY_OPTIONS: '%s' is not key=value", kv);
      *eq = '\0';
      int orc = zkr_options_set(&o, kv, eq + 1);
      ck_assert_msg(orc == ZOK, "ZKR_HISTORY_OPTIONS: %s=%s: %s", kv, eq + 1, zkr_strerror(orc));
    }
  }
  zkr_t *z = NULL;
  int rc = zkr_init_opts(&z, ens_hosts(), NULL, session_ms, NULL, NULL, 0, &o);
  ck_assert_msg(rc == ZOK, "zkr_init_opts: %s", zkr_strerror(rc));
  it_wait_ready(z);
  run.z = z;
  const clientid_t *idp = zkr_client_id(z);
  clientid_t id0 = *idp;

  /* Set-up writes are recorded too (thread 0), so every value is known. */
  static worker_t setup_w;
  memset(&setup_w, 0, sizeof setup_w);
  setup_w.run = &run;
  setup_w.id = 0;
  pthread_mutex_init(&setup_w.mu, NULL);
  pthread_cond_init(&setup_w.cv, NULL);
  for (int k = 0; k < nk; k++) {
    int is_cd = 0;
    for (int i = 0; i < n_workers; i++)
      for (int j = 0; j < CD_KEYS; j++) is_cd |= W[i].key_cd[j] == k;
    if (is_cd) continue;
    opctx_t *c = calloc(1, sizeof *c);
    c->w = &setup_w;
    c->is_write = 1;
    c->cd = c->shared = -1;
    c->op = zkh_invoke(run.h, 0, ZKH_CREATE, k, -1);
    char v[64];
    int vn = zkh_value(run.h, c->op, v, sizeof v);
    pthread_mutex_lock(&setup_w.mu); /* completions decrement it under mu */
    setup_w.writes_out++;
    pthread_mutex_unlock(&setup_w.mu);
    ck_assert_int_eq(zkr_acreate2(z, run.path[k], v, vn, &ZOO_OPEN_ACL_UNSAFE, 0, on_create, c),
                     ZOK);
  }
  for (uint64_t end = it_now_ms() + 10000; writes_outstanding(&setup_w) > 0 && it_now_ms() < end;)
    it_sleep_ms(5);
  ck_assert_int_eq(writes_outstanding(&setup_w), 0);

  int is_proxied = proxied();
  printf("history: run of %d s, %d workers, rate %d ops/s, session timeout %d ms, seed %u, "
         "options '%s', %s ensemble %s, base %s\n",
         seconds, n_workers, rate, session_ms, seed, extra ? extra : "",
         is_proxied ? "proxied" : "plain", ens_hosts(), base);
  fflush(stdout);

  sampler_t sampler = {.run = &run};
  pthread_create(&sampler.th, NULL, sampler_main, &sampler);
  uint64_t t_start = it_now_ms();
  zkh_mark(run.h, "workload start");
  for (int i = 0; i < n_workers; i++) pthread_create(&W[i].th, NULL, worker_main, &W[i]);

  sched_t sched = {
      .h = run.h, .z = z, .proxied = is_proxied, .session_ms = session_ms, .seed = seed};
  it_sleep_ms(2000);
  run_schedule(&sched, t_start + (uint64_t)seconds * 1000u - 3000u, steps);
  step_mark(&sched, "schedule done: healing the ensemble");
  int healed = heal_ensemble();
  while (it_now_ms() < t_start + (uint64_t)seconds * 1000u) it_sleep_ms(100);
  it_sleep_ms(2000); /* a healthy tail, whatever the schedule did */
  zkh_mark(run.h, "workload stop");
  __atomic_store_n(&run.stop, 1, __ATOMIC_RELEASE);
  for (int i = 0; i < n_workers; i++) {
    pthread_mutex_lock(&W[i].mu);
    pthread_cond_broadcast(&W[i].cv);
    pthread_mutex_unlock(&W[i].mu);
    pthread_join(W[i].th, NULL);
  }
  double run_s = (double)(it_now_ms() - t_start) / 1000.0;
  /* Anything still out after two session timeouts and 10 s is a hang. */
  int hung = drain(&run, 2 * session_ms + 10000);
  if (hung > 0) {
    /* Which ones: a hang is a finding; close below completes them. */
    int shown = 0;
    for (uint64_t id = 0; id < zkh_n_ops(run.h) && shown < 10; id++) {
      if (__atomic_load_n(&zkh_op(run.h, (int64_t)id)->outcome, __ATOMIC_ACQUIRE) != ZKH_PENDING)
        continue;
      char d[320];
      zkh_describe(run.h, (int64_t)id, d, sizeof d);
      printf("history: HUNG %s\n", d);
      shown++;
    }
    printf("history: %d operations had no completion %d ms after the workload stopped\n", hung,
           2 * session_ms + 10000);
  }
  __atomic_store_n(&sampler.stop, 1, __ATOMIC_RELEASE);
  pthread_join(sampler.th, NULL);
  zkr_stats_t *st;
  ck_assert_int_eq(zkr_stats(z, &st), ZOK);
  printf("history: handle stats at the end: leader m%d, write session m%d, leader changes %llu\n",
         st->leader + 1, st->write_member + 1, (unsigned long long)st->leader_changes);
  for (int i = 0; i < st->n_members; i++)
    printf("  m%d %-9s reads %llu writes %llu syncs %llu errors %llu ejections %llu owner moves "
           "%llu\n",
           i + 1, zkr_role_name(st->members[i].role), (unsigned long long)st->members[i].reads,
           (unsigned long long)st->members[i].writes, (unsigned long long)st->members[i].syncs,
           (unsigned long long)st->members[i].errors, (unsigned long long)st->members[i].ejections,
           (unsigned long long)st->members[i].rescues);
  zkr_stats_free(st);
  /* The session's ephemerals, from an independent client after a sync:
   * each acknowledged one is there, each one there is the session's, and
   * the session's id never changed. */
  int eph_present = 0, eph_foreign = 0;
  ck_assert_ptr_eq(zkr_client_id(z), idp);
  int id_same = zkr_client_id(z)->client_id == id0.client_id;
  stock = stock_open();
  ck_assert_int_eq(zoo_async(stock, base, sync_done, NULL), ZOK);
  struct String_vector kids;
  ck_assert_int_eq(zoo_get_children(stock, base, 0, &kids), ZOK);
  for (int i = 0; i < kids.count; i++) {
    if (strncmp(kids.data[i], "e-", 2) != 0) continue;
    char ep[256];
    struct Stat est;
    snprintf(ep, sizeof ep, "%s/%s", base, kids.data[i]);
    if (zoo_exists(stock, ep, 0, &est) != ZOK) continue;
    eph_present++;
    if (est.ephemeralOwner != id0.client_id) {
      if (eph_foreign++ < 5)
        printf("history: ephemeral %s owned by %llx, not the handle's %llx\n", ep,
               (unsigned long long)est.ephemeralOwner, (unsigned long long)id0.client_id);
    }
  }
  deallocate_String_vector(&kids);
  printf("history: ephemerals: %ld created, %ld unknown outcome, %ld failed; %d present, "
         "%d not owned by session %llx (id %s)\n",
         (long)run.eph_acked, (long)run.eph_unknown, (long)run.eph_failed, eph_present, eph_foreign,
         (unsigned long long)id0.client_id, id_same ? "unchanged" : "CHANGED");
  struct timespec close_ts;
  clock_gettime(CLOCK_MONOTONIC, &close_ts);
  uint64_t close_ns = (uint64_t)close_ts.tv_sec * 1000000000u + (uint64_t)close_ts.tv_nsec;
  zkr_close(z); /* completes what hung, with ZCLOSING */
  /* ZCLOSING means "the handle is closing" (zkr_close): before that, the
   * application closed nothing, so such a completion means a member session
   * was closed under operations in flight. */
  int early_closing = 0;
  for (uint64_t id = 0; id < zkh_n_ops(run.h); id++) {
    const zkh_op_t *op = zkh_op(run.h, (int64_t)id);
    if (op->rc != ZCLOSING || op->end_ns >= close_ns) continue;
    if (early_closing++ < 5) {
      char d[320];
      zkh_describe(run.h, (int64_t)id, d, sizeof d);
      printf("history: ZCLOSING before zkr_close: %s\n", d);
    }
  }
  if (early_closing)
    printf("history: %d operations completed with ZCLOSING before zkr_close was called\n",
           early_closing);

  /* The final state, from an independent plain client: sync, then read. */
  ck_assert_int_eq(zoo_async(stock, "/", sync_done, NULL), ZOK); /* queued before the gets */
  for (int k = 0; k < nk; k++) {
    char buf[128];
    int len = sizeof buf;
    struct Stat sst;
    int64_t op = zkh_invoke(run.h, n_workers + 1, ZKH_FINAL, k, -1);
    int frc = zoo_get(stock, run.path[k], 0, buf, &len, &sst);
    if (frc == ZOK) zkh_done(run.h, op, frc, sst.mzxid, sst.czxid, sst.version, buf, len);
    else zkh_done(run.h, op, frc, -1, -1, -1, NULL, -1);
    ck_assert_msg(frc == ZOK || frc == ZNONODE, "final read of %s: %s", run.path[k], zerror(frc));
  }
  /* The handle closed: its session and every ephemeral of it are gone. */
  int eph_after = -1;
  for (uint64_t end = it_now_ms() + 5000; eph_after != 0 && it_now_ms() < end;) {
    if (zoo_get_children(stock, base, 0, &kids) == ZOK) {
      eph_after = 0;
      for (int i = 0; i < kids.count; i++) eph_after += strncmp(kids.data[i], "e-", 2) == 0;
      deallocate_String_vector(&kids);
    }
    if (eph_after != 0) it_sleep_ms(100);
  }
  /* Clean up the keys (best effort). */
  for (int k = 0; k < nk; k++) zoo_delete(stock, run.path[k], -1);
  zoo_delete(stock, base, -1);
  zookeeper_close(stock);

  printf("history: %.1f s of workload, %d schedule steps, %d ensemble command failures%s%s\n",
         run_s, sched.steps_done, sched.failures,
         sched.skipped[0] ? "; skipped (not proxied):" : "", sched.skipped);
  if (sched.deposed_steps)
    printf("history: %d deposed-leader attempts, two leaders for %llu ms at most\n",
           sched.deposed_steps, (unsigned long long)sched.deposed_ms);
  zkh_report_t rep;
  uint64_t v = zkh_check(run.h, &rep, stdout, examples);
  uint64_t acked_w = rep.outcome[ZKH_CREATE][ZKH_OK] + rep.outcome[ZKH_SET][ZKH_OK] +
                     rep.outcome[ZKH_DELETE][ZKH_OK];
  uint64_t ok_r = rep.outcome[ZKH_GET][ZKH_OK] + rep.outcome[ZKH_EXISTS][ZKH_OK];
  printf("history: %.0f ops/s; %llu acked writes, %llu ok reads; %d ops hung past the drain "
         "deadline\n",
         (double)rep.ops / run_s, (unsigned long long)acked_w, (unsigned long long)ok_r, hung);
  fflush(stdout);
  zkh_free(run.h);
  ck_assert_int_eq(healed, 0);
  ck_assert_int_eq(sched.failures, 0);
  ck_assert_msg(hung == 0, "%d operations never completed", hung);
  ck_assert_msg(early_closing == 0,
                "%d operations completed with ZCLOSING while the handle was open", early_closing);
  ck_assert_msg(v == 0, "the checker found %llu violations (see the report above)",
                (unsigned long long)v);
  ck_assert_msg(id_same, "zkr_client_id changed during the run");
  ck_assert_msg(eph_foreign == 0, "%d ephemerals of another session", eph_foreign);
  ck_assert_msg(eph_present >= run.eph_acked && eph_present <= run.eph_acked + run.eph_unknown,
                "ephemerals: %d present, %ld acknowledged, %ld unknown", eph_present,
                (long)run.eph_acked, (long)run.eph_unknown);
  ck_assert_msg(eph_after == 0, "%d ephemerals outlived zkr_close", eph_after);
  ck_assert_uint_eq(rep.dropped, 0);
  ck_assert_uint_eq(rep.unchecked_keys, 0);
  /* The workload really ran through the faults. */
  ck_assert_uint_gt(acked_w, (uint64_t)seconds * 20);
  ck_assert_uint_gt(ok_r, (uint64_t)seconds * 20);
  /* A deposed-leader step in which the old leader gave up before the new
   * one was elected made no second leader: it tested nothing. */
  ck_assert_msg(sched.deposed_steps == 0 || sched.deposed_ms >= 1000,
                "no deposed-leader attempt had two leaders at once for 1 s");
}

START_TEST(history_under_faults) {
  history_run(getenv("ZKR_HISTORY_STEPS"), env_int("ZKR_HISTORY_SECONDS", 60),
              env_int("ZKR_HISTORY_TIMEOUT", 4000));
}
END_TEST

/* ---- the deposed-leader case: a 5-member proxied ensemble of its own,
 * on ZKR_HISTORY_NET, else ZKR_TEST_NET's next network (as it_membership,
 * which runs after this program; 127.0.1 by default) ---- */

static char dep_dir[256], dep_hosts[512];
static int dep_up; /* 1 started, -1 failed to start */

/* Unchecked (in the parent): the ensemble outlives a crashed test and is
 * stopped whatever happened. */
static void deposed_start(void) {
  char net[32];
  const char *n = getenv("ZKR_HISTORY_NET"), *sh = getenv("ZKR_TEST_ENSEMBLE_SH");
  if (n && *n) snprintf(net, sizeof net, "%s", n);
  else {
    const char *base = getenv("ZKR_TEST_NET");
    int a = 127, b = 0, c = 0;
    if (!base || sscanf(base, "%d.%d.%d", &a, &b, &c) != 3) a = 127, b = 0, c = 0;
    snprintf(net, sizeof net, "%d.%d.%d", a, b, (c + 1) % 256);
  }
  snprintf(dep_dir, sizeof dep_dir, "%s/zkr-ith.XXXXXX",
           getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
  dep_up = -1;
  if (!mkdtemp(dep_dir)) return;
  char cmd[1024];
  /* syncLimit 40 ticks of 200 ms (ZKR_HISTORY_DEPOSED_SYNC): a leader
   * that hears nothing from its followers leads on for 8 s
   * (step_deposed_leader). */
  snprintf(cmd, sizeof cmd,
           "ZKR_TEST_NET=%s ZKR_TEST_ZOO_CFG=syncLimit=%d bash '%s' start '%s' --proxied "
           "--members 5",
           net, env_int("ZKR_HISTORY_DEPOSED_SYNC", 40), sh ? sh : "tests/harness/ensemble.sh",
           dep_dir);
  FILE *p = popen(cmd, "r");
  if (!p) return;
  if (!fgets(dep_hosts, sizeof dep_hosts, p)) dep_hosts[0] = '\0';
  dep_hosts[strcspn(dep_hosts, "\n")] = '\0';
  if (pclose(p) == 0 && dep_hosts[0]) dep_up = 1;
  printf("history: deposed-leader ensemble %s on %s (dir %s)%s\n", dep_hosts, net, dep_dir,
         dep_up == 1 ? "" : ": FAILED to start");
  E.dir = dep_dir;
  E.hosts = dep_hosts;
  E.members = 5;
}

static void deposed_stop(void) {
  const char *sh = getenv("ZKR_TEST_ENSEMBLE_SH");
  char cmd[1024];
  snprintf(cmd, sizeof cmd, "bash '%s' stop '%s' >/dev/null 2>&1; rm -rf '%s'",
           sh ? sh : "tests/harness/ensemble.sh", dep_dir, dep_dir);
  if (system(cmd) != 0) fprintf(stderr, "history: could not stop the ensemble in %s\n", dep_dir);
  E.dir = E.hosts = NULL;
  E.members = 0;
}

START_TEST(history_deposed_leader) {
  ck_assert_msg(dep_up == 1, "the 5-member proxied ensemble did not start");
  /* The old leader leads on for 8 s (syncLimit 40) and keeps answering
   * the pings of the sessions connected to it, while the new quorum, from
   * its election on (about 3 s after the cut), hears nothing of them: a
   * session timeout of 8 s lets a session that sits on the old leader's
   * side (the owner's, rescued there when its own server dropped out)
   * move to the new side before the new leader expires it.  With a
   * lead-on time longer than the session timeout it expires: see "The
   * owner session on a deposed leader's side" in docs/history.md. */
  history_run("deposed-leader", env_int("ZKR_HISTORY_DEPOSED_SECONDS", 10),
              env_int("ZKR_HISTORY_DEPOSED_TIMEOUT", 8000));
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("history");
  TCase *tc = tcase_create("faults");
  /* In the parent: whatever happened to the test, the ensemble is left
   * whole for the next integration test. */
  tcase_add_unchecked_fixture(tc, NULL, heal_fixture);
  tcase_set_timeout(tc, env_int("ZKR_HISTORY_SECONDS", 60) + 240);
  tcase_add_test(tc, history_under_faults);
  suite_add_tcase(s, tc);
  if (it_have_proxy("it_history: case deposed (history_deposed_leader)") &&
      strcmp(getenv("ZKR_HISTORY_DEPOSED") ? getenv("ZKR_HISTORY_DEPOSED") : "1", "0") != 0) {
    TCase *dep = tcase_create("deposed");
    tcase_add_unchecked_fixture(dep, deposed_start, deposed_stop);
    tcase_set_timeout(dep, env_int("ZKR_HISTORY_DEPOSED_SECONDS", 10) + 240);
    tcase_add_test(dep, history_deposed_leader);
    suite_add_tcase(s, dep);
  }
  return s;
}

int main(void) {
  setvbuf(stdout, NULL, _IOLBF, 0);
  return it_run(suite());
}
