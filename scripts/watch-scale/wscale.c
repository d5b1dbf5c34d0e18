/* scripts/watch-scale/wscale.c: what a handle with many watches pays (scripts/watch-scale.sh).
 * N data watches on N nodes (/ws/key-NNNNNN), set with pipelined zoo_awget;
 * then M watched re-reads of those nodes; prints wall and CPU per watch and
 * per re-read.  A plain libzookeeper_mt program: stock as it is, routed
 * under zkroute-run.  Usage: wscale HOSTS N M [LABEL] */
#include <zookeeper/zookeeper.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/resource.h>
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static long pending, errs;
static void done(int rc, const char *v, int l, const struct Stat *s, const void *d) {
  (void)v;
  (void)l;
  (void)s;
  (void)d;
  pthread_mutex_lock(&mu);
  if (rc) errs++;
  pending--;
  pthread_cond_signal(&cv);
  pthread_mutex_unlock(&mu);
}
static void sdone(int rc, const char *v, const void *d) {
  (void)v;
  done(rc == ZNODEEXISTS ? 0 : rc, 0, 0, 0, d);
}
static void wat(zhandle_t *z, int t, int s, const char *p, void *c) {
  (void)z;
  (void)t;
  (void)s;
  (void)p;
  (void)c;
}
static void conn(zhandle_t *z, int t, int s, const char *p, void *c) {
  (void)z;
  (void)t;
  (void)s;
  (void)p;
  (void)c;
}
static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec / 1e9;
}
static double cpu(void) {
  struct rusage r;
  getrusage(RUSAGE_SELF, &r);
  return r.ru_utime.tv_sec + r.ru_stime.tv_sec + (r.ru_utime.tv_usec + r.ru_stime.tv_usec) / 1e6;
}
static void waitfor(long maxp) {
  pthread_mutex_lock(&mu);
  while (pending > maxp) pthread_cond_wait(&cv, &mu);
  pthread_mutex_unlock(&mu);
}
int main(int argc, char **argv) {
  const char *hosts = argv[1];
  int n = atoi(argv[2]), m = atoi(argv[3]);
  const char *tag = argc > 4 ? argv[4] : "";
  zoo_set_debug_level(ZOO_LOG_LEVEL_ERROR);
  zhandle_t *zh = zookeeper_init(hosts, conn, 10000, 0, 0, 0);
  for (int i = 0; i < 100 && zoo_state(zh) != ZOO_CONNECTED_STATE; i++) usleep(100000);
  char p[64];
  zoo_create(zh, "/ws", "", 0, &ZOO_OPEN_ACL_UNSAFE, 0, NULL, 0);
  for (int i = 0; i < n; i++) {
    snprintf(p, sizeof p, "/ws/key-%06d", i);
    pthread_mutex_lock(&mu);
    pending++;
    pthread_mutex_unlock(&mu);
    zoo_acreate(zh, p, "v", 1, &ZOO_OPEN_ACL_UNSAFE, 0, sdone, NULL);
    waitfor(500);
  }
  waitfor(0);
  double t0 = now(), c0 = cpu();
  for (int i = 0; i < n; i++) {
    snprintf(p, sizeof p, "/ws/key-%06d", i);
    pthread_mutex_lock(&mu);
    pending++;
    pthread_mutex_unlock(&mu);
    zoo_awget(zh, p, wat, (void *)(long)i, done, NULL);
    waitfor(500);
  }
  waitfor(0);
  double t1 = now(), c1 = cpu();
  for (int i = 0; i < m; i++) {
    snprintf(p, sizeof p, "/ws/key-%06d", i % n);
    pthread_mutex_lock(&mu);
    pending++;
    pthread_mutex_unlock(&mu);
    zoo_awget(zh, p, wat, (void *)(long)(i % n), done, NULL);
    waitfor(200);
  }
  waitfor(0);
  double t2 = now(), c2 = cpu();
  printf("%s n=%d set: %.2f s wall, %.1f us cpu/watch; m=%d rereads: %.1f us wall/op, %.1f us "
         "cpu/op; errors %ld\n",
         tag, n, t1 - t0, (c1 - c0) * 1e6 / n, m, (t2 - t1) * 1e6 / m, (c2 - c1) * 1e6 / m, errs);
  zookeeper_close(zh);
  return 0;
}
