/* Shows that libzookeeper_mt itself leaks the requests still in flight when
 * zookeeper_close() runs: the evidence behind tests/harness/lsan.supp and
 * tests/harness/valgrind.supp (docs/robustness.md).  No zkroute code is involved.
 *
 *   gcc -fsanitize=address -g -DTHREADED tests/robustness/stock_close_leak.c \
 *       -o stock_close_leak -lzookeeper_mt
 *   ./stock_close_leak HOST:PORT     # any running server
 *
 * It connects, issues 100 zoo_aget() and closes at once.  Every completion
 * fires (ZOK or ZCLOSING), yet LeakSanitizer reports the library's
 * completion entries and buffers as lost. */
#include <stdio.h>
#include <unistd.h>
#include <zookeeper/zookeeper.h>

static int done;

static void completion(int rc, const char *value, int len, const struct Stat *stat,
                       const void *data) {
  (void)rc, (void)value, (void)len, (void)stat, (void)data;
  __atomic_add_fetch(&done, 1, __ATOMIC_SEQ_CST);
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: %s HOST:PORT\n", argv[0]);
    return 2;
  }
  zoo_set_debug_level(ZOO_LOG_LEVEL_WARN);
  zhandle_t *zh = zookeeper_init(argv[1], NULL, 10000, NULL, NULL, 0);
  if (!zh) return 1;
  for (int i = 0; i < 500 && zoo_state(zh) != ZOO_CONNECTED_STATE; i++) usleep(10000);
  for (int i = 0; i < 100; i++) zoo_aget(zh, "/", 0, completion, NULL);
  zookeeper_close(zh);
  printf("completions: %d of 100\n", done);
  fflush(stdout); /* LeakSanitizer exits without flushing stdio */
  return 0;
}
