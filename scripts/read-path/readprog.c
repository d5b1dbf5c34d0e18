/* scripts/read-path/readprog.c: the program of scripts/read-path.sh - one routed, blocking
 * zkr_get under instrumentation.  zkr_init on HOSTS, wait until zkr_stats knows the leader,
 * 3 s more, zkr_create PATH (an existing one is fine), one warm-up zkr_get; then two windows
 * of the hook in instr.c: IDLE_OUT records 50 ms with no call (which threads run library
 * code anyway), READ_OUT one zkr_get of PATH and the 50 ms after it.  Each dump's first
 * line: "# main_tid TID read 0|1 rc RC len LEN ms MS", MS how long the zkr_get took (when
 * longer than the hedge delay, hedge_floor_ms or more, the hedger thread runs the hedge
 * decision too).  Uses only calls that are the same in the old API (bf8636c's
 * include/zkroute.h) and the current one.
 *
 *   readprog HOSTS PATH READ_OUT IDLE_OUT     (built and run by scripts/read-path.sh [REV])
 */
#define _GNU_SOURCE
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <zookeeper/zookeeper.h>
#include "zkroute.h"
#include "instr.h"

static void msleep(int ms) {
  struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
  nanosleep(&ts, NULL);
}

/* One window: recording on, the read (do_read), 50 ms, recording off, dump to out. */
static int window(const char *out, zkr_t *z, const char *path, int do_read) {
  char buf[256];
  int len = sizeof buf, rc = 0;
  struct Stat st;
  struct timespec t0, t1;
  instr_reset();
  atomic_store(&instr_on, 1);
  clock_gettime(CLOCK_MONOTONIC, &t0);
  if (do_read) rc = zkr_get(z, path, 0, buf, &len, &st);
  clock_gettime(CLOCK_MONOTONIC, &t1);
  msleep(50);
  atomic_store(&instr_on, 0);
  FILE *f = fopen(out, "w");
  if (!f) {
    perror(out);
    return -1;
  }
  double ms = (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6;
  fprintf(f, "# main_tid %d read %d rc %d len %d ms %.2f\n", instr_gettid(), do_read, rc, len, ms);
  int lost = instr_dump(f);
  if (fclose(f) != 0) {
    perror(out);
    return -1;
  }
  fprintf(stderr, "readprog: %s: read=%d rc=%d len=%d\n", out, do_read, rc, len);
  if (lost) fprintf(stderr, "readprog: %s: records lost (buffer full)\n", out);
  return rc == ZOK && !lost ? 0 : -1;
}

int main(int argc, char **argv) {
  if (argc != 5) {
    fprintf(stderr, "usage: readprog HOSTS PATH READ_OUT IDLE_OUT\n");
    return 2;
  }
  zoo_set_debug_level(ZOO_LOG_LEVEL_ERROR);
  zkr_t *z = zkr_init(argv[1], NULL, 10000, NULL, NULL, 0);
  if (!z) {
    perror("readprog: zkr_init");
    return 1;
  }
  int leader = -1;
  for (int i = 0; i < 100 && leader < 0; i++) {
    zkr_stats_t *s;
    if (zkr_stats(z, &s) == ZOK) {
      leader = s->leader;
      zkr_stats_free(s);
    }
    if (leader < 0) msleep(100);
  }
  fprintf(stderr, "readprog: leader index %d\n", leader);
  if (leader < 0) return 1;
  msleep(3000);
  char buf[256];
  int len = sizeof buf;
  struct Stat st;
  int rc = zkr_create(z, argv[2], "hello", 5, &ZOO_OPEN_ACL_UNSAFE, 0, NULL, 0);
  fprintf(stderr, "readprog: create rc=%d\n", rc);
  if (rc != ZOK && rc != ZNODEEXISTS) return 1;
  rc = zkr_get(z, argv[2], 0, buf, &len, &st);
  fprintf(stderr, "readprog: warm-up get rc=%d\n", rc);
  if (rc != ZOK) return 1;
  msleep(200);
  int bad = window(argv[4], z, argv[2], 0) != 0;
  bad |= window(argv[3], z, argv[2], 1) != 0;
  zkr_stats_t *s;
  if (zkr_stats(z, &s) == ZOK) {
    for (int i = 0; i < s->n_members; i++)
      fprintf(stderr, "readprog: member %d reads %llu syncs %llu%s\n", i,
              (unsigned long long)s->members[i].reads, (unsigned long long)s->members[i].syncs,
              i == s->leader ? " (leader)" : "");
    fprintf(stderr, "readprog: hedges_sent %llu\n", (unsigned long long)s->hedges_sent);
    zkr_stats_free(s);
  }
  zkr_close(z);
  return bad;
}
