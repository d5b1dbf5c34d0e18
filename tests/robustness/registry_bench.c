/* Cost of the registry of live handles (zkroute/core/registry.c): nanoseconds
 * per call of zkr_state() and of a zkr_aget() refused for its path (the
 * checks and the hold; nothing is sent), with 1 and 2 threads on one
 * handle.  Build it against the library with and without the registry and
 * compare (docs/robustness.md):
 *
 *   gcc -O2 -Iinclude tests/robustness/registry_bench.c -o registry_bench \
 *       -L.libs -lzkroute -lzookeeper_mt -lpthread -Wl,-rpath,$PWD/.libs
 *   ./registry_bench 5000000
 *
 * The handle points at 127.0.9.254:1, where nothing listens: no server is
 * needed. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <zkroute.h>

static zkr_t *z;
static long iters;
static int which;

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static void *run(void *arg) {
  volatile int sink = 0;
  (void)arg;
  for (long i = 0; i < iters; i++)
    sink += which == 0 ? zkr_state(z) : zkr_aget(z, "bad", 0, NULL, NULL);
  return NULL;
}

int main(int argc, char **argv) {
  iters = argc > 1 ? atol(argv[1]) : 5000000;
  zoo_set_debug_level(0);
  if (zkr_init_opts(&z, "127.0.9.254:1", NULL, 5000, NULL, NULL, 0, NULL) != ZOK) return 1;
  for (which = 0; which < 2; which++)
    for (int threads = 1; threads <= 2; threads++) {
      pthread_t t[2];
      double t0 = now();
      for (int i = 0; i < threads; i++) pthread_create(&t[i], NULL, run, NULL);
      for (int i = 0; i < threads; i++) pthread_join(t[i], NULL);
      printf("%-13s threads=%d %6.1f ns/call\n", which ? "aget_refused" : "state", threads,
             (now() - t0) * 1e9 / (double)iters);
    }
  zkr_close(z);
  return 0;
}
