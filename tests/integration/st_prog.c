/* A single-threaded ZooKeeper client, built against libzookeeper_st
 * (without THREADED): it runs ZooKeeper's event loop itself with
 * zookeeper_interest(), select() and zookeeper_process(), and prints what
 * its asynchronous calls return.  tests/integration/it_dropin.sh runs it plain and
 * under zkroute-run, which must pass it through to the real library
 * (docs/dropin.md, "Single-threaded programs").
 *
 * Usage: st_prog HOSTS BASE   (BASE: a node path that does not exist) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/select.h>
#include <time.h>

#include <zookeeper/zookeeper.h>

static zhandle_t *zh;
static int connected, done, rc_seen;
static char text[256];

static void watcher(zhandle_t *h, int type, int state, const char *path, void *ctx) {
  (void)h, (void)path, (void)ctx;
  if (type == ZOO_SESSION_EVENT && state == ZOO_CONNECTED_STATE) connected = 1;
}

static void on_string(int rc, const char *value, const void *data) {
  (void)value, (void)data;
  rc_seen = rc;
  done = 1;
}

static void on_data(int rc, const char *value, int len, const struct Stat *st, const void *data) {
  (void)st, (void)data;
  rc_seen = rc;
  snprintf(text, sizeof text, "%.*s", len > 0 ? len : 0, value ? value : "");
  done = 1;
}

static void on_void(int rc, const void *data) {
  (void)data;
  rc_seen = rc;
  done = 1;
}

/* Turns the event loop until *flag is set; 0 after 20 s without. */
static int run_until(int *flag) {
  time_t end = time(NULL) + 20;
  while (!*flag) {
    int fd = -1, interest = 0;
    struct timeval tv;
    int rc = zookeeper_interest(zh, &fd, &interest, &tv);
    if (rc != ZOK && rc != ZCONNECTIONLOSS && rc != ZOPERATIONTIMEOUT) {
      printf("zookeeper_interest: %s\n", zerror(rc));
      return 0;
    }
    fd_set r, w;
    FD_ZERO(&r);
    FD_ZERO(&w);
    if (fd != -1) {
      if (interest & ZOOKEEPER_READ) FD_SET(fd, &r);
      if (interest & ZOOKEEPER_WRITE) FD_SET(fd, &w);
    }
    if (tv.tv_sec > 1) tv = (struct timeval){1, 0};
    select(fd + 1, &r, &w, NULL, &tv);
    int events = 0;
    if (fd != -1 && FD_ISSET(fd, &r)) events |= ZOOKEEPER_READ;
    if (fd != -1 && FD_ISSET(fd, &w)) events |= ZOOKEEPER_WRITE;
    zookeeper_process(zh, events);
    if (time(NULL) > end) return 0;
  }
  return 1;
}

int main(int argc, char **argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: %s HOSTS BASE\n", argv[0]);
    return 2;
  }
  setvbuf(stdout, NULL, _IOLBF, 0);
  zoo_set_debug_level(ZOO_LOG_LEVEL_ERROR);
  zh = zookeeper_init(argv[1], watcher, 10000, NULL, NULL, 0);
  if (!zh) {
    printf("zookeeper_init: NULL\n");
    return 1;
  }
  printf("session: %s\n", run_until(&connected) ? "connected" : "TIMEOUT");
  if (!connected) return 1;
  done = 0;
  printf("acreate: %s\n",
         zoo_acreate(zh, argv[2], "st", 2, &ZOO_OPEN_ACL_UNSAFE, 0, on_string, NULL) == ZOK &&
                 run_until(&done)
             ? zerror(rc_seen)
             : "not sent");
  done = 0;
  printf("aget: %s", zoo_aget(zh, argv[2], 0, on_data, NULL) == ZOK && run_until(&done)
                         ? zerror(rc_seen)
                         : "not sent");
  printf(" value=%s\n", text);
  done = 0;
  printf("adelete: %s\n", zoo_adelete(zh, argv[2], -1, on_void, NULL) == ZOK && run_until(&done)
                              ? zerror(rc_seen)
                              : "not sent");
  printf("zoo_state connected: %s\n", zoo_state(zh) == ZOO_CONNECTED_STATE ? "yes" : "no");
  printf("zookeeper_close: %s\n", zerror(zookeeper_close(zh)));
  return 0;
}
