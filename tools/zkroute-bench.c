/* zkroute-bench: a closed-loop benchmark of zkroute's routing policies and
 * of two plain libzookeeper_mt baselines, on one ensemble, in one run.
 *
 * A trial opens one client - a zkr_t for the routed policies (hybrid,
 * round_robin, leader_only, sticky, boltzmann), one zhandle_t for the
 * baselines (stock: zookeeper_init on the whole host list, so one random
 * server; oracle: zookeeper_init on the leader alone, found with srvr) -
 * runs W worker threads against it for a warm-up and then a measured
 * window, and closes it.  Each worker is closed-loop: it issues one
 * operation, waits for its result, records the latency, issues the next.
 * Trials interleave: trial t runs every policy once, in an order rotated
 * by t, so drift of a shared machine hits every policy alike; every
 * reported figure is the median across trials.
 *
 * Fairness: every read is linearizable in every policy but stock_unsynced
 * (a plain zoo_get, what an unmodified application sends).  The routed
 * policies call zkr_get (the library pipelines a sync before the read on
 * the member session it picked); the baselines send zoo_async() and then
 * the read on their one session without waiting for the sync, as the
 * library does.  Writes are zkr_set / zoo_set with version -1.
 *
 * Output: a progress line on stderr; a Markdown report on stdout and in
 * OUT/results.md; OUT/results.json (schema in docs/benchmarks.md); gnuplot
 * data, script and PNG charts (latency CDFs, throughput bars) in OUT.
 *
 * Besides <zkroute.h> it uses the library's host list parser and srvr
 * client (tool-internal.h): the leader for `oracle`, the roles for the
 * report and each server's Received counter.
 *
 * This file holds main: the run, round after round of trials, and the
 * report at the end; bench.h lists the other files and their jobs.
 * Exit codes: 0 done, 1 a run failed, 2 usage, 3 a --targets check missed. */
#define _GNU_SOURCE /* asprintf */
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"
#include "tool-common.h"

static void machine_info(report_t *R) {
  R->ncpu = (int)sysconf(_SC_NPROCESSORS_ONLN);
  snprintf(R->cpu_model, sizeof R->cpu_model, "unknown CPU");
  FILE *f = fopen("/proc/cpuinfo", "r");
  if (f) {
    char line[512];
    while (fgets(line, sizeof line, f)) {
      if (strncmp(line, "model name", 10) == 0) {
        char *p = strchr(line, ':');
        if (p) {
          p++;
          while (*p == ' ') p++;
          p[strcspn(p, "\n")] = '\0';
          snprintf(R->cpu_model, sizeof R->cpu_model, "%s", p);
        }
        break;
      }
    }
    fclose(f);
  }
  struct utsname u;
  if (uname(&u) == 0) snprintf(R->kernel, sizeof R->kernel, "%s", u.release);
  time_t now = time(NULL);
  struct tm tm;
  gmtime_r(&now, &tm);
  strftime(R->started, sizeof R->started, "%Y-%m-%d %H:%M:%S UTC", &tm);
}

int main(int argc, char **argv) {
  static cfg_t c = {.workers = 32,
                    .trials = 3,
                    .keys = 1000,
                    .value_size = 128,
                    .rotate = 1,
                    .setup = 1,
                    .duration = 20,
                    .warmup = 5,
                    .prewarm = 10,
                    .pause = 1,
                    .read_frac = 0.8,
                    .sticky_member = -1,
                    .degraded_member = -1,
                    .opts = ZKR_OPTIONS_INIT,
                    .prefix = "/zkr-bench",
                    .seed = 1};
  parse_policies(&c, "hybrid,round_robin,oracle,sticky,stock");
  parse_args(&c, argc, argv);
  qgrid_init();
  static const ZooLogLevel levels[] = {ZOO_LOG_LEVEL_ERROR, ZOO_LOG_LEVEL_WARN, ZOO_LOG_LEVEL_INFO,
                                       ZOO_LOG_LEVEL_DEBUG};
  zoo_set_debug_level(c.verbose <= 0 ? (ZooLogLevel)0 : levels[c.verbose > 4 ? 3 : c.verbose - 1]);
  signal(SIGPIPE, SIG_IGN);
  struct sigaction sa = {.sa_handler = on_signal};
  sigaction(SIGINT, &sa, NULL);
  sigaction(SIGTERM, &sa, NULL);
  if (c.out_dir && mkdir(c.out_dir, 0777) != 0 && errno != EEXIST)
    bench_die("%s: %s", c.out_dir, strerror(errno));

  char **paths = calloc((size_t)c.keys, sizeof *paths);
  char *value = malloc((size_t)c.value_size + 1);
  if (!paths || !value) bench_die("out of memory");
  for (int i = 0; i < c.value_size; i++) value[i] = (char)('a' + i % 26);
  for (int i = 0; i < c.keys; i++)
    if (asprintf(&paths[i], "%s/k%07d", c.prefix, i) < 0) bench_die("out of memory");

  static report_t R;
  R.c = &c;
  machine_info(&R);
  R.load_before = tool_loadavg1();
  R.leader = find_leader(&c, R.roles);
  if (R.leader < 0)
    bench_die("no member of %s says it is the leader (is srvr whitelisted?)", c.hosts);
  if (c.setup) setup_keys(&c, paths, value);
  R.tr = calloc((size_t)c.npol * (size_t)c.trials, sizeof *R.tr);
  if (!R.tr) bench_die("out of memory");

  int failures = 0;
  if (c.prewarm > 0) {
    progress_t pg = {1, 1, "prewarm"};
    run_trial(&c, &c.pol[0], paths, value, c.prewarm, c.seed, &pg, NULL);
    sleep_s(c.pause);
  }
  for (int t = 0; t < c.trials && !interrupted; t++) {
    for (int k = 0; k < c.npol && !interrupted; k++) {
      int p = c.rotate ? (k + t) % c.npol : k;
      trial_t *tr = &trials_of(&R, p)[t];
      tr->order = k;
      progress_t pg = {t + 1, c.trials, "round"};
      uint64_t seed = splitmix(c.seed + (uint64_t)t * 7919u);
      if (!run_trial(&c, &c.pol[p], paths, value, c.duration, seed, &pg, tr)) {
        if (!interrupted) failures++;
      } else if (!c.quiet) {
        fprintf(
            stderr,
            "%s[round %d/%d] %-12s %8.0f ops/s  read P50 %.2f P99 %.2f  write P50 %.2f P99 %.2f ms"
            "  errors %llu/%llu%s%s  CPU %.1f µs/op  load %.2f\n",
            isatty(STDERR_FILENO) ? "\r\033[K" : "", t + 1, c.trials, c.pol[p].name, tr->thr,
            tr->lat[OP_READ].p50, tr->lat[OP_READ].p99, tr->lat[OP_WRITE].p50,
            tr->lat[OP_WRITE].p99, (unsigned long long)tr->err[OP_READ],
            (unsigned long long)tr->err[OP_WRITE], tr->first_err ? " first " : "",
            tr->first_err ? zkr_err_name(tr->first_err) : "", tr->cpu_us, tr->load_end);
      }
      if (!interrupted) sleep_s(c.pause);
    }
  }
  if (interrupted) fprintf(stderr, "\nzkroute-bench: interrupted; reporting the trials that ran\n");
  R.load_after = tool_loadavg1();
  find_leader(&c, NULL);
  for (int p = 0; p < c.npol; p++) summarize(&c, trials_of(&R, p), c.trials, &R.sum[p]);

  write_markdown(stdout, &R);
  fflush(stdout);
  if (c.out_dir) {
    FILE *f = open_out(&c, "results.md");
    if (f) {
      write_markdown(f, &R);
      fclose(f);
    }
    f = open_out(&c, "results.json");
    if (f) {
      write_json(f, &R);
      fclose(f);
    }
    write_plots(&R);
  }
  check_t ck[16];
  int nck = collect_checks(&R, ck), missed = 0;
  for (int i = 0; i < nck; i++) missed += !check_pass(&ck[i]);
  for (int i = 0; i < c.keys; i++) free(paths[i]);
  free(paths);
  free(value);
  free(R.tr);
  zkr__hosts_free(&c.hl);
  free(c.command);
  if (failures) return EXIT_FAILURE;
  return missed ? EXIT_TARGETS : EXIT_SUCCESS;
}
