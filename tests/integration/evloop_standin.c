/* A stand-in for a program that runs ZooKeeper's single-threaded event
 * loop itself: linked to libzookeeper_mt like any other (so the test needs
 * no libzookeeper_st), it imports zookeeper_interest and
 * zookeeper_process - the calls such a program makes - and probes them
 * with a NULL handle, which the real library answers ZBADARGUMENTS.  Then
 * it uses two handles, one after the other, with synchronous calls.
 * Under zkroute-run the interposer must see the imports, pass every call
 * through and say so in exactly one stderr line (tests/integration/it_dropin.sh;
 * docs/dropin.md, "Single-threaded programs").
 *
 * Usage: evloop_standin HOSTS BASE */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <zookeeper/zookeeper.h>

/* Declared by zookeeper.h only without THREADED. */
int zookeeper_interest(zhandle_t *zh, int *fd, int *interest, struct timeval *tv);
int zookeeper_process(zhandle_t *zh, int events);

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int connected;

static void watcher(zhandle_t *zh, int type, int state, const char *path, void *ctx) {
  (void)zh, (void)path, (void)ctx;
  if (type != ZOO_SESSION_EVENT || state != ZOO_CONNECTED_STATE) return;
  pthread_mutex_lock(&mu);
  connected = 1;
  pthread_cond_broadcast(&cv);
  pthread_mutex_unlock(&mu);
}

static int session(const char *hosts, const char *path, int round) {
  pthread_mutex_lock(&mu);
  connected = 0;
  pthread_mutex_unlock(&mu);
  zhandle_t *zh = zookeeper_init(hosts, watcher, 10000, NULL, NULL, 0);
  if (!zh) return printf("handle %d: zookeeper_init NULL\n", round), 1;
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  ts.tv_sec += 20;
  pthread_mutex_lock(&mu);
  while (!connected && pthread_cond_timedwait(&cv, &mu, &ts) == 0) {
  }
  int ok = connected;
  pthread_mutex_unlock(&mu);
  printf("handle %d: %s\n", round, ok ? "connected" : "TIMEOUT");
  char buf[16];
  int len = sizeof buf;
  printf("handle %d: create %s\n", round,
         zerror(zoo_create(zh, path, "v", 1, &ZOO_OPEN_ACL_UNSAFE, 0, NULL, 0)));
  int rc = zoo_get(zh, path, 0, buf, &len, NULL);
  printf("handle %d: get %s value=%.*s\n", round, zerror(rc), len > 0 ? len : 0, buf);
  printf("handle %d: delete %s\n", round, zerror(zoo_delete(zh, path, -1)));
  printf("handle %d: close %s\n", round, zerror(zookeeper_close(zh)));
  return !ok;
}

int main(int argc, char **argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: %s HOSTS BASE\n", argv[0]);
    return 2;
  }
  setvbuf(stdout, NULL, _IOLBF, 0);
  zoo_set_debug_level(ZOO_LOG_LEVEL_ERROR);
  int fd, interest;
  struct timeval tv;
  printf("zookeeper_interest(NULL): %s\n", zerror(zookeeper_interest(NULL, &fd, &interest, &tv)));
  printf("zookeeper_process(NULL): %s\n", zerror(zookeeper_process(NULL, 0)));
  int bad = session(argv[1], argv[2], 1);
  bad |= session(argv[1], argv[2], 2);
  return bad;
}
