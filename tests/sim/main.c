/* zkroute-sim: the simulator's driver (docs/simulation.md).
 *
 *   zkroute-sim --seed N            replay one schedule and print its report
 *   zkroute-sim --seeds N           explore N new seeds (from a random start,
 *                                   or from --start S)
 *   zkroute-sim --seconds S         explore new seeds for S seconds of wall time
 *   zkroute-sim --regressions FILE  replay every seed the file lists
 * Options: --mode stock|routed, --consistency linearizable|session (routed:
 * the handles' consistency), --bug K (a planted model bug, tests only),
 * --length S (simulated seconds of the fault phase, default 6), --jobs J
 * (worker processes, default 2), --idle-park MS (routed: the handles'
 * idle_park_ms, so that idle parking happens within a schedule), --io-loss
 * PCT (routed: after PCT % of the syncs a member session sends, its
 * connection is lost before its next request, which goes out on the next
 * connection - the I/O thread's window between two calls), --slow-calls
 * (routed: a zookeeper_init the library makes may take time - a slow name
 * lookup - while the world's other events go on), --writes-after-end (the
 * session checker also judges acknowledged writes committed after the
 * application's session ended, which the library does not meet yet),
 * --verbose,
 * --messages (exploring: each failing seed's checker messages and the wall
 * time since the start).
 *
 * For each failing seed it prints one command that replays it, and at the
 * end how many schedules ran.  Exit status: 0 when no schedule failed. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/wait.h>
#include <zookeeper/zookeeper.h>

#include "run.h"

static sim_opts_t base;
static int messages; /* --messages */
static double t_start;
static const char *prog = "tests/sim/zkroute-sim";

static double wall(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void replay_cmd(char *buf, size_t n, uint64_t seed) {
  int k = snprintf(buf, n, "%s --seed %llu", prog, (unsigned long long)seed);
  if (base.mode == SIM_ROUTED) k += snprintf(buf + k, n - (size_t)k, " --mode routed");
  if (base.session) k += snprintf(buf + k, n - (size_t)k, " --consistency session");
  if (base.idle_park_ms)
    k += snprintf(buf + k, n - (size_t)k, " --idle-park %d", base.idle_park_ms);
  if (base.io_loss_pct) k += snprintf(buf + k, n - (size_t)k, " --io-loss %d", base.io_loss_pct);
  if (base.slow_calls) k += snprintf(buf + k, n - (size_t)k, " --slow-calls");
  if (base.writes_after_end) k += snprintf(buf + k, n - (size_t)k, " --writes-after-end");
  if (base.bug) k += snprintf(buf + k, n - (size_t)k, " --bug %d", base.bug);
  if (base.seconds) snprintf(buf + k, n - (size_t)k, " --length %d", base.seconds);
}

static void summary_line(const sim_result_t *r, char *buf, size_t n) {
  size_t k = 0;
  for (int i = 0; i < CK_COUNT; i++)
    if (r->check.violations[i])
      k += (size_t)snprintf(buf + k, n - k, "%s%s %d", k ? ", " : "", check_name(i),
                            r->check.violations[i]);
}

static int one(uint64_t seed) {
  sim_opts_t o = base;
  o.seed = seed;
  sim_result_t r;
  int v = sim_run(&o, &r);
  printf("seed %llu (%s): %d servers, %d faults, %d ops, %d txns, %llu events, %.1f simulated s, "
         "history digest %016llx\n",
         (unsigned long long)seed, base.mode == SIM_ROUTED ? "routed" : "stock", r.servers,
         r.faults, r.ops, r.txns, (unsigned long long)r.events, (double)r.sim_ns / 1e9,
         (unsigned long long)r.digest);
  printf("checked: lin %d keys (%d undecided), order %d, once %d, watch %d, session %d, "
         "watchdog %d, liveness %d (%d in later spans)\n",
         r.check.checked[CK_LIN], r.check.undecided, r.check.checked[CK_ORDER],
         r.check.checked[CK_ONCE], r.check.checked[CK_WATCH], r.check.checked[CK_SESSION],
         r.check.checked[CK_WATCHDOG], r.check.checked[CK_LIVE], r.check.live_later);
  if (v) {
    char s[256];
    summary_line(&r, s, sizeof s);
    printf("VIOLATIONS: %d (%s)\n%s", v, s, r.check.text);
  } else {
    printf("no violation\n");
  }
  return v ? 1 : 0;
}

/* A worker explores seeds start + w, start + w + jobs, ...; writes one
 * line per failing seed and a final count to fd. */
static void worker(int w, int jobs, uint64_t start, long count, double deadline, int fd) {
  long ran = 0, failed = 0, undecided = 0;
  for (long i = w; count < 0 || i < count; i += jobs) {
    if (deadline > 0 && wall() >= deadline) break;
    sim_opts_t o = base;
    o.seed = start + (uint64_t)i;
    sim_result_t r;
    int v = sim_run(&o, &r);
    ran++;
    undecided += r.check.undecided;
    if (v) {
      failed++;
      char cmd[200], s[256], line[600 + CHECK_TEXT];
      replay_cmd(cmd, sizeof cmd, o.seed);
      summary_line(&r, s, sizeof s);
      int n = snprintf(line, sizeof line, "FAIL seed %llu: %d violations (%s)\n  replay: %s\n",
                       (unsigned long long)o.seed, v, s, cmd);
      if (messages)
        n += snprintf(line + n, sizeof line - (size_t)n, "  at %.1f s, schedule %ld\n%s",
                      wall() - t_start, i + 1, r.check.text);
      if (write(fd, line, (size_t)n) < 0) break;
    }
  }
  char line[128];
  int n = snprintf(line, sizeof line, "COUNT %ld %ld %ld\n", ran, failed, undecided);
  if (write(fd, line, (size_t)n) < 0) _exit(2);
}

static int explore(uint64_t start, long count, double seconds, int jobs) {
  double t0 = t_start = wall(), deadline = seconds > 0 ? t0 + seconds : 0;
  int fds[2];
  if (pipe(fds) < 0) return 2;
  for (int w = 0; w < jobs; w++) {
    pid_t p = fork();
    if (p == 0) {
      close(fds[0]);
      worker(w, jobs, start, count, deadline, fds[1]);
      _exit(0);
    }
  }
  close(fds[1]);
  FILE *in = fdopen(fds[0], "r");
  char line[700 + CHECK_TEXT];
  long ran = 0, failed = 0, undecided = 0;
  while (fgets(line, sizeof line, in)) {
    long a, b, c;
    if (sscanf(line, "COUNT %ld %ld %ld", &a, &b, &c) == 3) {
      ran += a, failed += b, undecided += c;
      continue;
    }
    fputs(line, stdout);
    fflush(stdout);
  }
  fclose(in);
  while (wait(NULL) > 0) {
  }
  double dt = wall() - t0;
  printf("%ld schedules (seeds from %llu), %ld failing, %ld undecided keys, %.1f s, %.0f "
         "schedules/minute, mode %s%s\n",
         ran, (unsigned long long)start, failed, undecided, dt, dt > 0 ? ran * 60.0 / dt : 0.0,
         base.mode == SIM_ROUTED ? "routed" : "stock", base.bug ? " (planted bug)" : "");
  return failed ? 1 : 0;
}

static int regressions(const char *file) {
  FILE *f = fopen(file, "r");
  if (!f) {
    fprintf(stderr, "%s: %s\n", file, strerror(errno));
    return 2;
  }
  /* Whole lines, however long their comment (a fixed buffer cut a long
   * line in two, and a piece that began with a number ran as a seed). */
  char *line = NULL;
  size_t cap = 0;
  int failed = 0, ran = 0;
  while (getline(&line, &cap, f) > 0) {
    unsigned long long seed;
    char mode[16] = "stock", w[3][16] = {"", "", ""};
    if (line[0] == '#' ||
        sscanf(line, "%llu %15s %15s %15s %15s", &seed, mode, w[0], w[1], w[2]) < 1)
      continue;
    sim_opts_t save = base;
    base.mode = strcmp(mode, "routed") == 0 ? SIM_ROUTED : SIM_STOCK;
    /* After the mode, in any order: "session", "idle=MS" (--idle-park),
     * "ioloss=PCT" (--io-loss), "slowcalls" (--slow-calls). */
    base.session = 0;
    base.idle_park_ms = base.io_loss_pct = base.slow_calls = 0;
    base.writes_after_end = 0;
    for (int i = 0; i < 3; i++) {
      if (!strcmp(w[i], "session")) base.session = 1;
      else if (!strncmp(w[i], "idle=", 5)) base.idle_park_ms = atoi(w[i] + 5);
      else if (!strncmp(w[i], "ioloss=", 7)) base.io_loss_pct = atoi(w[i] + 7);
      else if (!strcmp(w[i], "slowcalls")) base.slow_calls = 1;
    }
    sim_opts_t o = base;
    o.seed = seed;
    sim_result_t r;
    int v = sim_run(&o, &r);
    ran++;
    if (v) {
      char cmd[200];
      replay_cmd(cmd, sizeof cmd, seed);
      printf("FAIL seed %llu (%s): %d violations\n%s  replay: %s\n", seed, mode, v, r.check.text,
             cmd);
      failed++;
    }
    base = save;
  }
  free(line);
  fclose(f);
  printf("%d regression seeds, %d failing\n", ran, failed);
  return failed ? 1 : 0;
}

static void usage(void) {
  fprintf(stderr, "usage: zkroute-sim (--seed N | --seeds N [--start S] | --seconds S | "
                  "--regressions FILE) [--mode stock|routed] [--consistency linearizable|session] "
                  "[--length S] [--jobs J] [--idle-park MS] [--io-loss PCT] [--slow-calls] "
                  "[--writes-after-end] [--bug K] [--verbose] [--messages]\n");
  exit(2);
}

int main(int argc, char **argv) {
  /* SIM_LOG=N: libzookeeper_mt's log level (the library's own log lines,
   * wall-clock stamped) for a replay; quiet (errors) otherwise. */
  const char *lv = getenv("SIM_LOG");
  zoo_set_debug_level(lv ? (ZooLogLevel)atoi(lv) : ZOO_LOG_LEVEL_ERROR);
  long seeds = -1;
  double seconds = 0;
  int jobs = 2, have_seed = 0, have_start = 0;
  uint64_t seed = 0, start = 0;
  const char *reg = NULL;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    if (!strcmp(a, "--verbose")) {
      base.verbose = 1;
      continue;
    }
    if (!strcmp(a, "--messages")) {
      messages = 1;
      continue;
    }
    if (!strcmp(a, "--slow-calls")) {
      base.slow_calls = 1;
      continue;
    }
    if (!strcmp(a, "--writes-after-end")) {
      base.writes_after_end = 1;
      continue;
    }
    if (!v) usage();
    i++;
    if (!strcmp(a, "--seed")) seed = strtoull(v, NULL, 0), have_seed = 1;
    else if (!strcmp(a, "--seeds")) seeds = strtol(v, NULL, 0);
    else if (!strcmp(a, "--start")) start = strtoull(v, NULL, 0), have_start = 1;
    else if (!strcmp(a, "--seconds")) seconds = strtod(v, NULL);
    else if (!strcmp(a, "--jobs")) jobs = atoi(v);
    else if (!strcmp(a, "--bug")) base.bug = atoi(v);
    else if (!strcmp(a, "--length")) base.seconds = atoi(v);
    else if (!strcmp(a, "--idle-park")) base.idle_park_ms = atoi(v);
    else if (!strcmp(a, "--io-loss")) base.io_loss_pct = atoi(v);
    else if (!strcmp(a, "--regressions")) reg = v;
    else if (!strcmp(a, "--mode")) base.mode = !strcmp(v, "routed") ? SIM_ROUTED : SIM_STOCK;
    else if (!strcmp(a, "--consistency") && !strcmp(v, "session")) base.session = 1;
    else if (!strcmp(a, "--consistency") && !strcmp(v, "linearizable")) base.session = 0;
    else usage();
  }
  if (jobs < 1) jobs = 1;
  if (base.idle_park_ms && (base.mode != SIM_ROUTED || base.idle_park_ms < 100)) usage();
  if (base.io_loss_pct &&
      (base.mode != SIM_ROUTED || base.io_loss_pct < 0 || base.io_loss_pct > 100))
    usage();
  if (base.slow_calls && base.mode != SIM_ROUTED) usage();
  if (reg) return regressions(reg);
  if (have_seed) return one(seed);
  if (seeds < 0 && seconds <= 0) usage();
  if (!have_start) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    start = ((uint64_t)ts.tv_sec * 1000003u) ^ ((uint64_t)getpid() << 20) ^ (uint64_t)ts.tv_nsec;
    start &= 0xffffffffffULL;
  }
  return explore(start, seeds, seconds, jobs);
}
