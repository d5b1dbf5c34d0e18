/* scripts/cpu-ops/ops.c: a fixed number of operations for scripts/cpu-ops.sh
 * to count the client's instructions of under callgrind.
 *
 *   ops HOSTS THREADS OPS WARMUP [KEY=VALUE...]
 *
 * THREADS closed-loop threads each run WARMUP operations, then OPS
 * measured ones: 80 % zkr_aget, 20 % zkr_aset of 128 bytes, on keys
 * /zkr-cpu-ops/k0000..k0999 (made first), each call waited for as
 * zkroute-bench --api async does.  The callgrind counters are zeroed when
 * every thread finished its warm-up and dumped ("measured") when every
 * thread finished its measured operations, so the dump holds THREADS x
 * OPS operations and whatever the library's other threads ran meanwhile.
 * A routed handle (policy hybrid, options KEY=VALUE), or with STOCK=1 in
 * the environment a plain libzookeeper_mt session with a sync before each
 * get, as zkroute-bench's `stock` (STOCK_RESOLVE_DELAY: see below).  Prints the operations, errors, and the
 * window's wall time and CPU (getrusage) per operation.
 *
 * PACE_US=N in the environment paces the load instead: each thread starts
 * an operation every N microseconds (absolute deadlines from the end of
 * the warm-up; a late operation starts at once and the next keeps its own
 * deadline), so the window holds the same operations at an equal offered
 * rate for every variant, and the library's background work (pings, srvr
 * polls, ticks) between them counts too.  Prints the rate it reached. */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>
#include <valgrind/callgrind.h>
#include <zkroute.h>

#define KEYS 1000

static zkr_t *z;
static zhandle_t *zh;
static int n_ops, n_warm;
static char value[128];
static pthread_barrier_t bar;
static long errs;
static struct rusage ru0, ru1;
static struct timespec t0, t1;
static long pace_ns; /* PACE_US, in ns; 0: closed loop */
static long late;    /* paced operations started after their deadline */

typedef struct {
  pthread_mutex_t mu;
  pthread_cond_t cv;
  int done, rc;
  uint64_t rng;
} worker_t;

static void post(worker_t *w, int rc) {
  pthread_mutex_lock(&w->mu);
  w->rc = rc;
  w->done = 1;
  pthread_cond_signal(&w->cv);
  pthread_mutex_unlock(&w->mu);
}

static int wait_done(worker_t *w) {
  pthread_mutex_lock(&w->mu);
  while (!w->done) pthread_cond_wait(&w->cv, &w->mu);
  w->done = 0;
  int rc = w->rc;
  pthread_mutex_unlock(&w->mu);
  return rc;
}

static void get_done(int rc, const char *v, int len, const struct Stat *st, const void *data) {
  (void)v;
  (void)len;
  (void)st;
  post((worker_t *)data, rc);
}

static void set_done(int rc, const struct Stat *st, const void *data) {
  (void)st;
  post((worker_t *)data, rc);
}

static void sync_ignored(int rc, const char *v, const void *data) {
  (void)rc;
  (void)v;
  (void)data;
}

static uint64_t rng_next(uint64_t *s) {
  *s ^= *s << 13;
  *s ^= *s >> 7;
  *s ^= *s << 17;
  return *s;
}

static void one_op(worker_t *w) {
  char path[64];
  snprintf(path, sizeof path, "/zkr-cpu-ops/k%04d", (int)(rng_next(&w->rng) % KEYS));
  int read = rng_next(&w->rng) % 100 < 80, rc;
  if (zh && read) {
    rc = zoo_async(zh, path, sync_ignored, NULL);
    if (rc == ZOK) rc = zoo_aget(zh, path, 0, get_done, w);
  } else if (zh) {
    rc = zoo_aset(zh, path, value, sizeof value, -1, set_done, w);
  } else if (read) {
    rc = zkr_aget(z, path, 0, get_done, w);
  } else {
    rc = zkr_aset(z, path, value, sizeof value, -1, set_done, w);
  }
  if (rc == ZOK) rc = wait_done(w);
  if (rc != ZOK) __atomic_fetch_add(&errs, 1, __ATOMIC_RELAXED);
}

static void *worker_main(void *arg) {
  worker_t w;
  memset(&w, 0, sizeof w);
  pthread_mutex_init(&w.mu, NULL);
  pthread_cond_init(&w.cv, NULL);
  w.rng = 0x9e3779b97f4a7c15ull * (uint64_t)((intptr_t)arg + 1);
  for (int i = 0; i < n_warm; i++) one_op(&w);
  if (pthread_barrier_wait(&bar) == PTHREAD_BARRIER_SERIAL_THREAD) {
    CALLGRIND_ZERO_STATS;
    getrusage(RUSAGE_SELF, &ru0);
    clock_gettime(CLOCK_MONOTONIC, &t0);
  }
  pthread_barrier_wait(&bar);
  struct timespec next;
  clock_gettime(CLOCK_MONOTONIC, &next);
  for (int i = 0; i < n_ops; i++) {
    if (pace_ns) {
      struct timespec now;
      clock_gettime(CLOCK_MONOTONIC, &now);
      if (now.tv_sec > next.tv_sec || (now.tv_sec == next.tv_sec && now.tv_nsec > next.tv_nsec))
        __atomic_fetch_add(&late, 1, __ATOMIC_RELAXED);
      else
        while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL) != 0) {
        }
      next.tv_nsec += pace_ns;
      next.tv_sec += next.tv_nsec / 1000000000L;
      next.tv_nsec %= 1000000000L;
    }
    one_op(&w);
  }
  if (pthread_barrier_wait(&bar) == PTHREAD_BARRIER_SERIAL_THREAD) {
    CALLGRIND_DUMP_STATS_AT("measured");
    getrusage(RUSAGE_SELF, &ru1);
    clock_gettime(CLOCK_MONOTONIC, &t1);
  }
  return NULL;
}

static double cpu_us(const struct rusage *a, const struct rusage *b) {
  return (double)(b->ru_utime.tv_sec - a->ru_utime.tv_sec + b->ru_stime.tv_sec -
                  a->ru_stime.tv_sec) *
             1e6 +
         (double)(b->ru_utime.tv_usec - a->ru_utime.tv_usec + b->ru_stime.tv_usec -
                  a->ru_stime.tv_usec);
}

int main(int argc, char **argv) {
  if (argc < 5) {
    fprintf(stderr, "usage: ops HOSTS THREADS OPS WARMUP [KEY=VALUE...]\n");
    return 2;
  }
  int threads = atoi(argv[2]);
  n_ops = atoi(argv[3]);
  n_warm = atoi(argv[4]);
  if (threads < 1 || threads > 256 || n_ops < 1 || n_warm < 0) return 2;
  memset(value, 'x', sizeof value);
  if (getenv("PACE_US")) {
    long us = atol(getenv("PACE_US"));
    if (us < 1 || us > 10000000) {
      fprintf(stderr, "ops: PACE_US must be 1..10000000\n");
      return 2;
    }
    pace_ns = us * 1000;
  }
  zkr_options_t o = ZKR_OPTIONS_INIT;
  o.policy = ZKR_POLICY_HYBRID;
  for (int i = 5; i < argc; i++) {
    char *eq = strchr(argv[i], '=');
    if (!eq) return 2;
    *eq = 0;
    if (zkr_options_set(&o, argv[i], eq + 1) != ZOK) {
      fprintf(stderr, "ops: bad option %s\n", argv[i]);
      return 2;
    }
  }
  zoo_set_debug_level(ZOO_LOG_LEVEL_ERROR);
  int rc;
  if (getenv("STOCK")) {
    zh = zookeeper_init(argv[1], NULL, 10000, NULL, NULL, 0);
    /* STOCK_RESOLVE_DELAY=-1: the host list is resolved once, as zkroute's
     * member sessions have it; by default libzookeeper_mt resolves it
     * again whenever it computes its interest (getaddrinfo). */
    if (zh && getenv("STOCK_RESOLVE_DELAY"))
      zoo_set_servers_resolution_delay(zh, atoi(getenv("STOCK_RESOLVE_DELAY")));
    for (int i = 0; zh && i < 400 && zoo_state(zh) != ZOO_CONNECTED_STATE; i++) usleep(50000);
  } else if ((rc = zkr_init_opts(&z, argv[1], NULL, 10000, NULL, NULL, 0, &o)) != ZOK) {
    fprintf(stderr, "ops: zkr_init_opts: %s\n", zkr_strerror(rc));
    return 1;
  } else {
    for (int i = 0; i < 400 && zkr_state(z) != ZOO_CONNECTED_STATE; i++) usleep(50000);
  }
  for (int k = -1; k < KEYS; k++) {
    char path[64] = "/zkr-cpu-ops";
    if (k >= 0) snprintf(path, sizeof path, "/zkr-cpu-ops/k%04d", k);
    rc = zh ? zoo_create(zh, path, value, sizeof value, &ZOO_OPEN_ACL_UNSAFE, 0, NULL, 0)
            : zkr_create(z, path, value, sizeof value, &ZOO_OPEN_ACL_UNSAFE, 0, NULL, 0);
    if (rc != ZOK && rc != ZNODEEXISTS) {
      fprintf(stderr, "ops: create %s: %s\n", path, zerror(rc));
      return 1;
    }
  }
  pthread_barrier_init(&bar, NULL, (unsigned)threads);
  pthread_t th[256];
  for (intptr_t i = 0; i < threads; i++) pthread_create(&th[i], NULL, worker_main, (void *)i);
  for (int i = 0; i < threads; i++) pthread_join(th[i], NULL);
  long ops = (long)threads * n_ops;
  double wall = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
  printf("ops %ld errors %ld wall %.2f s cpu/op %.1f us rate %.0f/s", ops, errs, wall,
         cpu_us(&ru0, &ru1) / (double)ops, wall > 0 ? (double)ops / wall : 0);
  if (pace_ns) printf(" paced %ld us late %ld", pace_ns / 1000, late);
  printf("\n");
  if (zh) zookeeper_close(zh);
  zkr_close(z);
  return errs ? 1 : 0;
}
