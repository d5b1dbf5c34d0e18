/* A lock recipe in the style of ZooKeeper's C lock recipe
 * (zookeeper-recipes-lock, zoo_lock.c), and a program that makes N handles
 * of one process contend for it - written against plain
 * <zookeeper/zookeeper.h>, so it runs stock, built with <zkroute/compat.h>
 * (-DLOCK_COMPAT), and unmodified under zkroute-run.  What it relies on is
 * what such recipes rely on:
 * - its node is named after the session id ("x-<16 hex digits>-"), and
 *   after a connection loss it looks for that name to find a node whose
 *   create outcome it does not know, instead of making a second one;
 * - its watcher makes blocking calls (the next step of the recipe runs in
 *   the watcher of the predecessor's node);
 * - an application mutex is held across blocking calls, and the watcher
 *   takes the same mutex.
 *
 * Usage: lock_prog HOSTS SECONDS HANDLES LOCKPATH
 * SIGUSR1 marks the start of a fault, SIGUSR2 its end (the election done):
 * a waiter is stuck when it waits more than 5 s outside fault windows.
 * Prints one summary line; exits 0 when the lock was never held twice, no
 * waiter was stuck and no lock node was left behind, 1 otherwise. */
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <zookeeper/zookeeper.h>
#ifdef LOCK_COMPAT
#include <zkroute/compat.h>
#endif

#define STUCK_MS 5000
#define MAX_HANDLES 64

static uint64_t now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

static void sleep_ms(int ms) {
  struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
  nanosleep(&ts, NULL);
}

/* ---- the recipe ---- */

typedef struct lock {
  zhandle_t *zh;
  const char *dir;
  pthread_mutex_t pmutex; /* the recipe's own mutex, held across calls */
  char *id;               /* our node's name, NULL none */
  int owner;
  int retry;               /* the watcher's step failed: the waiter retries */
  pthread_cond_t cv;       /* owner or retry changed (under pmutex) */
  uint64_t create_unknown; /* creates whose outcome was unknown */
  uint64_t adopted;        /* nodes found again by their session prefix */
} lock_t;

static int seq_of(const char *name) {
  const char *dash = strrchr(name, '-');
  return dash ? atoi(dash + 1) : -1;
}

static int by_seq(const void *a, const void *b) {
  int x = seq_of(*(char *const *)a), y = seq_of(*(char *const *)b);
  return (x > y) - (x < y);
}

static int get_children_retry(zhandle_t *zh, const char *dir, struct String_vector *v) {
  int rc = ZCONNECTIONLOSS;
  for (int i = 0; i < 3 && rc == ZCONNECTIONLOSS; i++) {
    rc = zoo_get_children(zh, dir, 0, v);
    if (rc == ZCONNECTIONLOSS) sleep_ms(1);
  }
  return rc;
}

static void lock_watcher(zhandle_t *zh, int type, int state, const char *path, void *ctx);

/* One step, under pmutex: find or make our node, then own the lock or
 * watch the node just before ours.  Returns ZOK or the error. */
static int lock_step(lock_t *l) {
  const clientid_t *cid = zoo_client_id(l->zh);
  char prefix[40];
  snprintf(prefix, sizeof prefix, "x-%016llx-", (unsigned long long)cid->client_id);
  struct String_vector v = {0, NULL};
  int rc = get_children_retry(l->zh, l->dir, &v);
  if (rc != ZOK) return rc;
  if (!l->id) {
    for (int i = 0; i < v.count && !l->id; i++)
      if (strncmp(v.data[i], prefix, strlen(prefix)) == 0) {
        l->id = strdup(v.data[i]);
        l->adopted++;
      }
  }
  deallocate_String_vector(&v);
  if (!l->id) {
    char path[256], made[300];
    snprintf(path, sizeof path, "%s/%s", l->dir, prefix);
    rc = zoo_create(l->zh, path, NULL, -1, &ZOO_OPEN_ACL_UNSAFE, ZOO_EPHEMERAL_SEQUENTIAL, made,
                    sizeof made);
    /* Never retried: a second create could make a second node. */
    if (rc != ZOK) {
      if (rc == ZCONNECTIONLOSS || rc == ZOPERATIONTIMEOUT) l->create_unknown++;
      return rc;
    }
    l->id = strdup(strrchr(made, '/') + 1);
  }
  if ((rc = get_children_retry(l->zh, l->dir, &v)) != ZOK) return rc;
  qsort(v.data, (size_t)v.count, sizeof *v.data, by_seq);
  int mine = -1;
  for (int i = 0; i < v.count; i++)
    if (strcmp(v.data[i], l->id) == 0) mine = i;
  if (mine < 0) {
    /* Our node is gone (the session lost it): start over. */
    free(l->id);
    l->id = NULL;
    deallocate_String_vector(&v);
    return ZNONODE;
  }
  if (mine == 0) {
    l->owner = 1;
    deallocate_String_vector(&v);
    return ZOK;
  }
  char prev[300];
  snprintf(prev, sizeof prev, "%s/%s", l->dir, v.data[mine - 1]);
  deallocate_String_vector(&v);
  struct Stat st;
  rc = zoo_wexists(l->zh, prev, lock_watcher, l, &st);
  /* Gone already: the next step decides at once. */
  if (rc == ZNONODE) return lock_step(l);
  return rc;
}

static void lock_watcher(zhandle_t *zh, int type, int state, const char *path, void *ctx) {
  (void)zh, (void)state, (void)path;
  if (type == ZOO_SESSION_EVENT) return;
  lock_t *l = ctx;
  /* The recipe's next step runs here, in the watcher: blocking calls,
   * under the recipe's mutex. */
  pthread_mutex_lock(&l->pmutex);
  if (!l->owner && l->id) {
    if (lock_step(l) != ZOK) l->retry = 1;
    pthread_cond_broadcast(&l->cv);
  }
  pthread_mutex_unlock(&l->pmutex);
}

/* Waits until owner, or until `until` (monotonic ms).  Returns 1 owner,
 * 0 timed out. */
static int lock_lock(lock_t *l, uint64_t until) {
  pthread_mutex_lock(&l->pmutex);
  l->retry = 1;
  while (!l->owner) {
    if (l->retry) {
      l->retry = 0;
      if (lock_step(l) != ZOK && !l->owner) {
        l->retry = 1;
        pthread_mutex_unlock(&l->pmutex);
        sleep_ms(50);
        pthread_mutex_lock(&l->pmutex);
        if (now_ms() > until) break;
        continue;
      }
      continue;
    }
    if (now_ms() > until) break;
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    ts.tv_sec += 1;
    pthread_cond_timedwait(&l->cv, &l->pmutex, &ts);
  }
  int owner = l->owner;
  pthread_mutex_unlock(&l->pmutex);
  return owner;
}

static int lock_unlock(lock_t *l) {
  pthread_mutex_lock(&l->pmutex);
  int rc = ZOK;
  if (l->id) {
    char path[300];
    snprintf(path, sizeof path, "%s/%s", l->dir, l->id);
    rc = ZCONNECTIONLOSS;
    for (int i = 0; i < 50 && (rc == ZCONNECTIONLOSS || rc == ZOPERATIONTIMEOUT); i++) {
      rc = zoo_delete(l->zh, path, -1);
      if (rc == ZCONNECTIONLOSS || rc == ZOPERATIONTIMEOUT) sleep_ms(100);
    }
    if (rc == ZOK || rc == ZNONODE) {
      free(l->id);
      l->id = NULL;
      rc = ZOK;
    }
  }
  l->owner = 0;
  pthread_mutex_unlock(&l->pmutex);
  return rc;
}

/* ---- the program ---- */

static _Atomic int holder = -1;
static _Atomic long violations, acquisitions, stuck, unlock_errors;
static _Atomic uint64_t max_wait_ms;
static uint64_t deadline_ms;

/* Fault windows, from the signals. */
static volatile sig_atomic_t faults;
static uint64_t fault_start[16], fault_end[16];

static void on_signal(int sig) {
  int i = faults;
  if (sig == SIGUSR1 && i < 16) {
    fault_start[i] = now_ms();
    fault_end[i] = 0;
  } else if (sig == SIGUSR2 && i < 16) {
    fault_end[i] = now_ms();
    faults = i + 1;
  }
}

/* Milliseconds of [a, b] outside every fault window. */
static uint64_t outside_faults(uint64_t a, uint64_t b) {
  uint64_t t = b - a;
  int n = faults;
  for (int i = 0; i <= n && i < 16; i++) {
    uint64_t fs = fault_start[i], fe = fault_end[i] ? fault_end[i] : (i == n && fs ? b : 0);
    if (!fs || !fe) continue;
    uint64_t lo = fs > a ? fs : a, hi = fe < b ? fe : b;
    if (hi > lo) t -= hi - lo < t ? hi - lo : t;
  }
  return t;
}

typedef struct {
  int me;
  lock_t lock;
  long got;
} worker_t;

static void *worker(void *arg) {
  worker_t *w = arg;
  while (now_ms() < deadline_ms) {
    uint64_t t0 = now_ms();
    int owner = lock_lock(&w->lock, deadline_ms + 10000);
    uint64_t t1 = now_ms(), waited = t1 - t0;
    if (waited > max_wait_ms) max_wait_ms = waited;
    if (outside_faults(t0, t1) > STUCK_MS) {
      stuck++;
      fprintf(stderr, "lock_prog: handle %d waited %llu ms (%llu outside faults)\n", w->me,
              (unsigned long long)waited, (unsigned long long)outside_faults(t0, t1));
    }
    if (!owner) break;
    int prev = atomic_exchange(&holder, w->me);
    if (prev != -1) {
      violations++;
      fprintf(stderr, "lock_prog: handle %d got the lock held by %d\n", w->me, prev);
    }
    sleep_ms(2);
    if (atomic_exchange(&holder, -1) != w->me) violations++;
    w->got++;
    acquisitions++;
    if (lock_unlock(&w->lock) != ZOK) unlock_errors++;
  }
  return NULL;
}

static void quiet_watcher(zhandle_t *zh, int type, int state, const char *path, void *ctx) {
  (void)zh, (void)type, (void)state, (void)path, (void)ctx;
}

int main(int argc, char **argv) {
  if (argc != 5) {
    fprintf(stderr, "usage: lock_prog HOSTS SECONDS HANDLES LOCKPATH\n");
    return 2;
  }
  const char *hosts = argv[1], *dir = argv[4];
  int seconds = atoi(argv[2]), n = atoi(argv[3]);
  if (n < 1 || n > MAX_HANDLES || seconds < 1) return 2;
  zoo_set_debug_level(ZOO_LOG_LEVEL_ERROR);
  signal(SIGUSR1, on_signal);
  signal(SIGUSR2, on_signal);
  static worker_t w[MAX_HANDLES];
  for (int i = 0; i < n; i++) {
    w[i].me = i;
    w[i].lock.dir = dir;
    pthread_mutex_init(&w[i].lock.pmutex, NULL);
    pthread_cond_init(&w[i].lock.cv, NULL);
    w[i].lock.zh = zookeeper_init(hosts, quiet_watcher, 10000, NULL, NULL, 0);
    if (!w[i].lock.zh) {
      fprintf(stderr, "lock_prog: zookeeper_init failed\n");
      return 1;
    }
  }
  for (int i = 0; i < n; i++) {
    uint64_t until = now_ms() + 15000;
    while (zoo_state(w[i].lock.zh) != ZOO_CONNECTED_STATE && now_ms() < until) sleep_ms(10);
  }
  int rc = zoo_create(w[0].lock.zh, dir, NULL, -1, &ZOO_OPEN_ACL_UNSAFE, 0, NULL, 0);
  if (rc != ZOK && rc != ZNODEEXISTS) {
    fprintf(stderr, "lock_prog: create %s: %s\n", dir, zerror(rc));
    return 1;
  }
  deadline_ms = now_ms() + (uint64_t)seconds * 1000u;
  pthread_t t[MAX_HANDLES];
  for (int i = 0; i < n; i++) pthread_create(&t[i], NULL, worker, &w[i]);
  for (int i = 0; i < n; i++) pthread_join(t[i], NULL);
  /* Every worker unlocked: no node may be left. */
  long left = -1;
  for (int k = 0; k < 50 && left != 0; k++) {
    struct String_vector v;
    if (zoo_get_children(w[0].lock.zh, dir, 0, &v) == ZOK) {
      left = v.count;
      for (int i = 0; i < v.count; i++) fprintf(stderr, "lock_prog: left behind: %s\n", v.data[i]);
      deallocate_String_vector(&v);
    }
    if (left != 0) sleep_ms(200);
  }
  uint64_t unknown = 0, adopted = 0;
  for (int i = 0; i < n; i++) {
    unknown += w[i].lock.create_unknown;
    adopted += w[i].lock.adopted;
  }
  printf("lock_prog: %d handles, %d s: acquisitions %ld, violations %ld, stuck %ld, "
         "max wait %llu ms, nodes left %ld, creates with unknown outcome %llu, nodes found "
         "again %llu, unlock errors %ld, faults %d\n",
         n, seconds, (long)acquisitions, (long)violations, (long)stuck,
         (unsigned long long)max_wait_ms, left, (unsigned long long)unknown,
         (unsigned long long)adopted, (long)unlock_errors, (int)faults);
  fflush(stdout);
  for (int i = 0; i < n; i++) zookeeper_close(w[i].lock.zh);
  return violations == 0 && stuck == 0 && left == 0 && acquisitions > 0 ? 0 : 1;
}
