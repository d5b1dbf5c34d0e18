/* A paced workload on plain zookeeper.h for tests/integration/it_prometheus.sh
 * and the dashboard's picture (docs/operations.md): run unmodified under
 * zkroute-run with ZKROUTE_METRICS, it is what a real Prometheus scrapes.
 * It counts its own operations, so the test can hold the scraped rates
 * against them.
 *
 *   metrics_load HOSTS SECONDS READS_PER_SECOND
 *
 * One thread issues a zoo_get of /zkr-metrics-load on a fixed schedule of
 * READS_PER_SECOND, and a zoo_set after every 10th read; every second it
 * prints its counters so far, "UNIX_MS reads=N writes=N errors=N" (reads
 * and writes: calls issued; errors: calls that did not return ZOK).  It
 * also keeps one data watch, on /zkr-metrics-load-w, which nothing
 * changes, set again whenever it fires: the watch a carrier session holds
 * and loses in the faults of scripts/metrics-demo.sh.
 * Exits 0 after SECONDS, 1 when it never connected. */
#include <stdio.h>
#include <stdlib.h>
#include <sys/time.h>
#include <time.h>
#include <zookeeper/zookeeper.h>

static double mono_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static long long unix_ms(void) {
  struct timeval tv;
  gettimeofday(&tv, NULL);
  return (long long)tv.tv_sec * 1000 + tv.tv_usec / 1000;
}

static void sleep_until(double t) {
  double left = t - mono_s();
  if (left <= 0) return;
  struct timespec ts = {(time_t)left, (long)((left - (double)(time_t)left) * 1e9)};
  nanosleep(&ts, NULL);
}

static const char *const watched = "/zkr-metrics-load-w";

static void watch_again(zhandle_t *zh, int type, int state, const char *path, void *ctx);

static void set_watch(zhandle_t *zh) {
  char buf[8];
  int len = sizeof buf;
  zoo_wget(zh, watched, watch_again, NULL, buf, &len, NULL);
}

/* On ZooKeeper's completion thread: a blocking call is fine there. */
static void watch_again(zhandle_t *zh, int type, int state, const char *path, void *ctx) {
  (void)state, (void)path, (void)ctx;
  if (type != ZOO_SESSION_EVENT) set_watch(zh);
}

static void watcher(zhandle_t *zh, int type, int state, const char *path, void *ctx) {
  (void)zh, (void)type, (void)state, (void)path, (void)ctx;
}

int main(int argc, char **argv) {
  if (argc != 4) {
    fprintf(stderr, "usage: metrics_load HOSTS SECONDS READS_PER_SECOND\n");
    return 2;
  }
  double seconds = atof(argv[2]), rate = atof(argv[3]);
  if (seconds <= 0 || rate <= 0) return 2;
  zhandle_t *zh = zookeeper_init(argv[1], watcher, 10000, NULL, NULL, 0);
  if (!zh) return 1;
  double t0 = mono_s();
  while (zoo_state(zh) != ZOO_CONNECTED_STATE && mono_s() - t0 < 10) sleep_until(mono_s() + 0.02);
  if (zoo_state(zh) != ZOO_CONNECTED_STATE) {
    fprintf(stderr, "metrics_load: not connected after 10 s\n");
    return 1;
  }
  const char *path = "/zkr-metrics-load";
  int rc = zoo_create(zh, path, "0", 1, &ZOO_OPEN_ACL_UNSAFE, 0, NULL, 0);
  if (rc != ZOK && rc != ZNODEEXISTS) fprintf(stderr, "metrics_load: create: %s\n", zerror(rc));
  rc = zoo_create(zh, watched, "0", 1, &ZOO_OPEN_ACL_UNSAFE, 0, NULL, 0);
  if (rc != ZOK && rc != ZNODEEXISTS) fprintf(stderr, "metrics_load: create: %s\n", zerror(rc));
  set_watch(zh);
  unsigned long reads = 0, writes = 0, errors = 0;
  double start = mono_s(), next = start, report = start + 1;
  while (mono_s() - start < seconds) {
    sleep_until(next);
    next += 1 / rate;
    char buf[32];
    int len = sizeof buf;
    reads++;
    if (zoo_get(zh, path, 0, buf, &len, NULL) != ZOK) errors++;
    if (reads % 10 == 0) {
      writes++;
      char v[24];
      int n = snprintf(v, sizeof v, "%lu", reads);
      if (zoo_set(zh, path, v, n, -1) != ZOK) errors++;
    }
    if (mono_s() >= report) {
      report += 1;
      printf("%lld reads=%lu writes=%lu errors=%lu\n", unix_ms(), reads, writes, errors);
      fflush(stdout);
    }
  }
  printf("%lld reads=%lu writes=%lu errors=%lu\n", unix_ms(), reads, writes, errors);
  zookeeper_close(zh);
  return 0;
}
