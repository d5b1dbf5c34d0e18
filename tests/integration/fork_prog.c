/* A ZooKeeper program that forks (plain <zookeeper/zookeeper.h>, run by
 * tests/integration/it_dropin.sh plain and under zkroute-run): while two threads call
 * zoo_state() on its handle in a loop - under zkroute-run each call looks
 * the handle up under the interposer's registry lock - the main thread
 * forks CHILDREN times.  Each child opens a handle of its own, creates and
 * reads an ephemeral node, closes the handle and exits through exit(), so
 * that exit handlers run.  A child that has not finished in 30 s is
 * killed and reported as hung: one forked while the lock was held would
 * block in its first zookeeper_init without pthread_atfork handling.  The
 * parent then exits through exit() with its own handle still open.
 *
 * Prints "parent pid N" and one line per child, then a summary; the
 * it_dropin.sh check also reads ZKROUTE_STATS: the exit record of the
 * parent's handle must come from the parent alone.
 *
 * Usage: fork_prog HOSTS BASE CHILDREN */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <zookeeper/zookeeper.h>

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int connected;
static zhandle_t *zh;
static atomic_int stop;

static void watcher(zhandle_t *h, int type, int state, const char *path, void *ctx) {
  (void)h, (void)path, (void)ctx;
  if (type != ZOO_SESSION_EVENT || state != ZOO_CONNECTED_STATE) return;
  pthread_mutex_lock(&mu);
  connected = 1;
  pthread_cond_broadcast(&cv);
  pthread_mutex_unlock(&mu);
}

static zhandle_t *open_handle(const char *hosts) {
  pthread_mutex_lock(&mu);
  connected = 0;
  pthread_mutex_unlock(&mu);
  zhandle_t *h = zookeeper_init(hosts, watcher, 10000, NULL, NULL, 0);
  if (!h) return NULL;
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  ts.tv_sec += 20;
  pthread_mutex_lock(&mu);
  while (!connected && pthread_cond_timedwait(&cv, &mu, &ts) == 0) {
  }
  int ok = connected;
  pthread_mutex_unlock(&mu);
  return ok ? h : NULL;
}

static void *hammer(void *arg) {
  (void)arg;
  while (!atomic_load(&stop)) (void)zoo_state(zh);
  return NULL;
}

/* The child: a handle of its own, used and closed; exit() at the end. */
static void child(const char *hosts, const char *base, int i) {
  zhandle_t *h = open_handle(hosts);
  if (!h) exit(3);
  char path[512], buf[16];
  int len = sizeof buf;
  snprintf(path, sizeof path, "%s/child-%d", base, i);
  int rc = zoo_create(h, path, "c", 1, &ZOO_OPEN_ACL_UNSAFE, ZOO_EPHEMERAL, NULL, 0);
  if (rc == ZOK) rc = zoo_get(h, path, 0, buf, &len, NULL);
  zookeeper_close(h);
  exit(rc == ZOK && len == 1 && buf[0] == 'c' ? 0 : 4);
}

/* Waits up to 30 s for pid: its exit status, or -1 when it hung (then it
 * is killed). */
static int reap(pid_t pid) {
  for (int i = 0; i < 3000; i++) {
    int st;
    pid_t r = waitpid(pid, &st, WNOHANG);
    if (r == pid) return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
    nanosleep(&(struct timespec){0, 10000000}, NULL);
  }
  kill(pid, SIGKILL);
  waitpid(pid, NULL, 0);
  return -1;
}

int main(int argc, char **argv) {
  if (argc != 4) {
    fprintf(stderr, "usage: %s HOSTS BASE CHILDREN\n", argv[0]);
    return 2;
  }
  setvbuf(stdout, NULL, _IOLBF, 0);
  zoo_set_debug_level(ZOO_LOG_LEVEL_ERROR);
  int n = atoi(argv[3]);
  printf("parent pid %d\n", (int)getpid());
  zh = open_handle(argv[1]);
  if (!zh) return printf("parent: no session\n"), 1;
  int rc = zoo_create(zh, argv[2], "p", 1, &ZOO_OPEN_ACL_UNSAFE, 0, NULL, 0);
  printf("parent: create base %s\n", zerror(rc));
  pthread_t t[2];
  for (int i = 0; i < 2; i++) pthread_create(&t[i], NULL, hammer, NULL);
  int good = 0;
  for (int i = 0; i < n; i++) {
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) child(argv[1], argv[2], i);
    if (pid < 0) {
      printf("fork: %s\n", strerror(errno));
      break;
    }
    int st = reap(pid);
    if (st == 0) good++;
    else printf("child %d: %s %d\n", i, st < 0 ? "HUNG" : "exit", st);
  }
  atomic_store(&stop, 1);
  for (int i = 0; i < 2; i++) pthread_join(t[i], NULL);
  printf("children: %d of %d ok\n", good, n);
  struct String_vector v;
  rc = zoo_get_children(zh, argv[2], 0, &v);
  printf("parent: children left %s %d\n", zerror(rc), rc == ZOK ? v.count : -1);
  if (rc == ZOK) deallocate_String_vector(&v);
  printf("parent: delete base %s\n", zerror(zoo_delete(zh, argv[2], -1)));
  /* exit() with the handle open: ZKROUTE_STATS writes its exit record. */
  exit(good == n ? 0 : 1);
}
