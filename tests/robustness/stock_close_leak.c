/* Shows that libzookeeper_mt itself leaks the requests still in flight when
 * zookeeper_close() runs: the evidence behind tests/harness/lsan.supp and
 * tests/harness/valgrind.supp (docs/robustness.md).  No zkroute code is involved.
 *
 *   gcc -fsanitize=address -g -DTHREADED tests/robustness/stock_close_leak.c \
 *       -o stock_close_leak -lzookeeper_mt
 *   ./stock_close_leak HOST:PORT [watch]   # any running server
 *
 * It connects, issues 100 zoo_aget() and closes at once.  Every completion
 * fires (ZOK or ZCLOSING), yet LeakSanitizer reports the library's
 * completion entries and buffers as lost.
 *
 * With `watch`, the requests are zoo_awgetconfig() with a watcher, as
 * zkroute's configuration read (ensemble.c) sends it: a dropped
 * request then also leaks its watch registration (32 bytes) and that
 * registration's copy of the path (18 bytes).  In the Debian build both
 * are allocated inline in zoo_awgetconfig (create_watcher_registration is
 * inlined), so their stacks are calloc <- zoo_awgetconfig and malloc <-
 * strdup <- zoo_awgetconfig. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <zookeeper/zookeeper.h>

static int done;

static void completion(int rc, const char *value, int len, const struct Stat *stat,
                       const void *data) {
  (void)rc, (void)value, (void)len, (void)stat, (void)data;
  __atomic_add_fetch(&done, 1, __ATOMIC_SEQ_CST);
}

static void watcher(zhandle_t *zh, int type, int state, const char *path, void *ctx) {
  (void)zh, (void)type, (void)state, (void)path, (void)ctx;
}

int main(int argc, char **argv) {
  if (argc < 2 || argc > 3 || (argc == 3 && strcmp(argv[2], "watch") != 0)) {
    fprintf(stderr, "usage: %s HOST:PORT [watch]\n", argv[0]);
    return 2;
  }
  int watch = argc == 3;
  zoo_set_debug_level(ZOO_LOG_LEVEL_WARN);
  zhandle_t *zh = zookeeper_init(argv[1], NULL, 10000, NULL, NULL, 0);
  if (!zh) return 1;
  for (int i = 0; i < 500 && zoo_state(zh) != ZOO_CONNECTED_STATE; i++) usleep(10000);
  for (int i = 0; i < 100; i++) {
    if (watch) zoo_awgetconfig(zh, watcher, NULL, completion, NULL);
    else zoo_aget(zh, "/", 0, completion, NULL);
  }
  zookeeper_close(zh);
  printf("completions: %d of 100\n", done);
  fflush(stdout); /* LeakSanitizer exits without flushing stdio */
  return 0;
}
