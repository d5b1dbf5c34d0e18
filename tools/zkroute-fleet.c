/* zkroute-fleet: what N idle handles cost, stock against routed.
 *
 * A configuration daemon holds one ZooKeeper handle and a few watches and
 * is otherwise idle; a fleet runs thousands of them.  This tool opens N
 * such handles to one ensemble - stock (zookeeper_init on the whole host
 * string: one session on a random server) or routed (zkr_init_opts with
 * the -o options: one session per member, a monitor polling srvr) - sets W
 * watches on each, waits until every handle is connected and a settling
 * time has passed, and measures side by side:
 *  - in this process (/proc/self): resident memory, threads, descriptors;
 *  - on the servers: sessions (the leader's mntr zk_global_sessions),
 *    client connections (srvr), watches (mntr zk_watch_count), requests
 *    received per second over an idle window (srvr Received; for routed
 *    handles split into their monitors' srvr polls, counted by the
 *    handles, and the rest: pings), and with --server-pids each JVM's live
 *    heap: in use after a full collection (jcmd GC.run + GC.heap_info).
 * Each variant of each round runs in a child process of its own, so that
 * one variant's memory never shows in another's.  The report (Markdown,
 * stdout and --out) gives medians over the rounds, per handle and per 100
 * handles.  Besides <zkroute.h> it uses the library's host list parser
 * (tool-internal.h) and fleet-probe.c.
 * Exit codes: 0 done, 1 a run failed (the reason on stderr), 2 usage,
 * including an option the library rejects. */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "tool-common.h"
#include "zkroute.h"
#include "tool-internal.h"
#include "fleet-probe.h"

#define EXIT_USAGE 2
#define MAXM ZKR__HOSTS_MAX_MEMBERS
#define MAXV 8
#define MAXR 64
#define MAX_WATCHES 30
#define PROBE_TIMEOUT_MS 3000
#define JCMD_TIMEOUT_S 60
/* 4lw queries this tool sends per server reading (srvr, mntr): both are
 * counted in the server's Received, so a window's delta holds them. */
#define OWN_QUERIES 2

static const char usage_text[] =
    "usage: zkroute-fleet [OPTIONS] HOSTS\n"
    "Opens N idle handles with W watches each, stock and routed, and reports\n"
    "what they cost the client and the servers (docs/benchmarks.md).\n"
    "  -n, --handles N        handles per variant (default 100; 1..5000)\n"
    "  -m, --variants LIST    comma-separated, run in this order (default\n"
    "                         stock,routed): stock, routed, or\n"
    "                         routed+KEY=VALUE[+KEY=VALUE...] (options of that\n"
    "                         variant only)\n"
    "  -o KEY=VALUE           zkroute option for every routed variant (repeatable;\n"
    "                         `zkroute options` lists them)\n"
    "  -W, --watches N        watches per handle (default 3; 0..30): a data watch,\n"
    "                         an exists watch on an absent node, a child watch,\n"
    "                         then again on the next nodes\n"
    "      --session-timeout MS  requested session timeout (default 10000)\n"
    "      --settle S         seconds from the last watch set to the window (default\n"
    "                         15: longer than the session timeout, so that a session\n"
    "                         abandoned while connecting has expired)\n"
    "      --window S         idle window for the Received counters (default 20)\n"
    "      --baseline S       with --server-pids: the servers' CPU is also measured\n"
    "                         for S seconds before the first handle (default 5)\n"
    "  -r, --rounds R         repeat the variants R times, order rotated; medians\n"
    "                         (default 1)\n"
    "      --server-pids LIST NAME=PID or PID per server, in HOSTS order: JVM live\n"
    "                         heap (jcmd)\n"
    "      --jcmd PATH        jcmd binary (default jcmd; none: no heap figures)\n"
    "      --connect-timeout S  every handle connected within S (default 60)\n"
    "      --prefix PATH      znode holding the watched nodes (default /zkr-fleet)\n"
    "      --pause S          seconds between variants (default: the session timeout\n"
    "                         + 3 s, so that the sessions of the variant before, even\n"
    "                         one left open, have expired before the next baseline)\n"
    "      --label TEXT       title of the report\n"
    "      --out FILE         also write the report to FILE\n"
    "  -v                     libzookeeper log level up (repeatable)\n"
    "  -h, --help\n";

typedef struct variant {
  char name[160];
  int routed;
  zkr_options_t opts;
} variant_t;

typedef struct cfg {
  const char *hosts;
  zkr__hostlist_t hl;
  variant_t var[MAXV];
  int nvar;
  zkr_options_t base_opts; /* -o: every routed variant starts from these */
  char base_text[1024];
  int handles, watches, session_ms, rounds, verbose;
  double settle, window, connect_timeout, pause, baseline;
  int npids;
  int pids[MAXM];
  char pid_names[MAXM][32];
  const char *jcmd, *prefix, *label, *out;
} cfg_t;

/* What one variant measured in one round: the child writes it to the pipe. */
typedef struct result {
  int n;
  double connect_s; /* first init to the last watch set */
  fleet_self_t c0, c1;
  fleet_server_t s0[MAXM], sa[MAXM], sb[MAXM]; /* before; window start, end */
  double window_s;
  int64_t heap0[MAXM], heap1[MAXM];          /* JVM live heap, KiB */
  double base_cores[MAXM], idle_cores[MAXM]; /* JVM CPU: no handles; window */
  char heap_why[128];
  int64_t srvr_polls; /* routed: the handles' srvr polls in the window */
  int64_t events;     /* watcher events in the window (idle: none) */
  double load0, load1;
} result_t;

static volatile sig_atomic_t interrupted;
static void on_signal(int sig) {
  (void)sig;
  interrupted = 1;
}

static void die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
static void die(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fputs("zkroute-fleet: ", stderr);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
  exit(EXIT_FAILURE);
}

static void usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
static void usage_error(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fputs("zkroute-fleet: ", stderr);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
  exit(EXIT_USAGE);
}

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static void sleep_s(double s) {
  double end = now_s() + s;
  while (!interrupted) {
    double left = end - now_s();
    if (left <= 0) break;
    if (left > 0.1) left = 0.1;
    struct timespec ts = {0, (long)(left * 1e9)};
    nanosleep(&ts, NULL);
  }
}

static void num_arg(const char *name, const char *s, double lo, double hi, double *out) {
  char *end;
  errno = 0;
  double v = strtod(s, &end);
  if (!*s || *end || errno || !(v >= lo && v <= hi))
    usage_error("%s: expected a number from %g to %g, got '%s'", name, lo, hi, s);
  *out = v;
}

static void int_arg(const char *name, const char *s, int lo, int hi, int *out) {
  double v;
  num_arg(name, s, lo, hi, &v);
  if (v != (int)v) usage_error("%s: expected a whole number, got '%s'", name, s);
  *out = (int)v;
}

/* Applies one KEY=VALUE to opts; a rejected option is a usage error that
 * names the option and the library's reason. */
static void apply_option(zkr_options_t *opts, const char *kv, const char *where) {
  char key[128];
  const char *eq = strchr(kv, '=');
  if (!eq || eq == kv || (size_t)(eq - kv) >= sizeof key)
    usage_error("%s '%s': expected KEY=VALUE", where, kv);
  memcpy(key, kv, (size_t)(eq - kv));
  key[eq - kv] = '\0';
  int rc = zkr_options_set(opts, key, eq + 1);
  if (rc != ZOK)
    usage_error("%s '%s' rejected by the library: %s (%s); `zkroute options` lists the options",
                where, kv, zkr_strerror(rc), zkr_err_name(rc));
}

static void parse_variants(cfg_t *c, const char *list) {
  char *dup = strdup(list), *save = NULL;
  if (!dup) die("out of memory");
  c->nvar = 0;
  for (char *tok = strtok_r(dup, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
    if (c->nvar >= MAXV) usage_error("--variants: at most %d", MAXV);
    variant_t *v = &c->var[c->nvar++];
    memset(v, 0, sizeof *v);
    if (strlen(tok) >= sizeof v->name) usage_error("--variants: '%s' is too long", tok);
    snprintf(v->name, sizeof v->name, "%s", tok);
    char *plus = strchr(tok, '+');
    if (plus) *plus = '\0';
    if (strcmp(tok, "stock") == 0) {
      if (plus) usage_error("--variants: stock takes no options ('%s')", v->name);
    } else if (strcmp(tok, "routed") == 0) {
      v->routed = 1;
    } else {
      usage_error("--variants: unknown variant '%s' (stock, routed, routed+KEY=VALUE...)", tok);
    }
  }
  free(dup);
  if (c->nvar == 0) usage_error("--variants: empty list");
}

/* Routed variants: the -o options, then the variant's own.  Called after
 * every -o was read, so that the order of the arguments does not matter. */
static void resolve_variants(cfg_t *c) {
  for (int i = 0; i < c->nvar; i++) {
    variant_t *v = &c->var[i];
    if (!v->routed) continue;
    v->opts = c->base_opts;
    char *dup = strdup(v->name), *save = NULL;
    if (!dup) die("out of memory");
    char *rest = strchr(dup, '+');
    if (rest)
      for (char *kv = strtok_r(rest + 1, "+", &save); kv; kv = strtok_r(NULL, "+", &save))
        apply_option(&v->opts, kv, "--variants option");
    free(dup);
  }
}

enum {
  O_TIMEOUT = 256,
  O_SETTLE,
  O_WINDOW,
  O_BASELINE,
  O_PIDS,
  O_JCMD,
  O_CONNECT,
  O_PREFIX,
  O_PAUSE,
  O_LABEL,
  O_OUT
};
static const struct option long_opts[] = {
    {"handles", required_argument, NULL, 'n'},
    {"variants", required_argument, NULL, 'm'},
    {"watches", required_argument, NULL, 'W'},
    {"rounds", required_argument, NULL, 'r'},
    {"session-timeout", required_argument, NULL, O_TIMEOUT},
    {"settle", required_argument, NULL, O_SETTLE},
    {"window", required_argument, NULL, O_WINDOW},
    {"baseline", required_argument, NULL, O_BASELINE},
    {"server-pids", required_argument, NULL, O_PIDS},
    {"jcmd", required_argument, NULL, O_JCMD},
    {"connect-timeout", required_argument, NULL, O_CONNECT},
    {"prefix", required_argument, NULL, O_PREFIX},
    {"pause", required_argument, NULL, O_PAUSE},
    {"label", required_argument, NULL, O_LABEL},
    {"out", required_argument, NULL, O_OUT},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
};

static void parse_pids(cfg_t *c, const char *list) {
  char *dup = strdup(list), *save = NULL;
  if (!dup) die("out of memory");
  c->npids = 0;
  for (char *tok = strtok_r(dup, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
    if (c->npids >= MAXM) usage_error("--server-pids: at most %d", MAXM);
    char *eq = strchr(tok, '=');
    if (eq) *eq = '\0';
    snprintf(c->pid_names[c->npids], sizeof c->pid_names[0], "%s", eq ? tok : "");
    int_arg("--server-pids", eq ? eq + 1 : tok, 1, INT32_MAX, &c->pids[c->npids++]);
  }
  free(dup);
}

static void parse_args(cfg_t *c, int argc, char **argv) {
  int opt;
  const char *variants = "stock,routed";
  while ((opt = getopt_long(argc, argv, "n:m:o:W:r:vh", long_opts, NULL)) != -1) {
    switch (opt) {
    case 'n': int_arg("--handles", optarg, 1, 5000, &c->handles); break;
    case 'm': variants = optarg; break;
    case 'o':
      apply_option(&c->base_opts, optarg, "-o");
      snprintf(c->base_text + strlen(c->base_text), sizeof c->base_text - strlen(c->base_text),
               "%s-o %s", *c->base_text ? " " : "", optarg);
      break;
    case 'W': int_arg("--watches", optarg, 0, MAX_WATCHES, &c->watches); break;
    case 'r': int_arg("--rounds", optarg, 1, MAXR, &c->rounds); break;
    case O_TIMEOUT: int_arg("--session-timeout", optarg, 100, 600000, &c->session_ms); break;
    case O_SETTLE: num_arg("--settle", optarg, 0, 3600, &c->settle); break;
    case O_WINDOW: num_arg("--window", optarg, 1, 3600, &c->window); break;
    case O_BASELINE: num_arg("--baseline", optarg, 1, 3600, &c->baseline); break;
    case O_PIDS: parse_pids(c, optarg); break;
    case O_JCMD: c->jcmd = strcmp(optarg, "none") == 0 ? NULL : optarg; break;
    case O_CONNECT: num_arg("--connect-timeout", optarg, 1, 3600, &c->connect_timeout); break;
    case O_PREFIX: c->prefix = optarg; break;
    case O_PAUSE: num_arg("--pause", optarg, 0, 3600, &c->pause); break;
    case O_LABEL: c->label = optarg; break;
    case O_OUT: c->out = optarg; break;
    case 'v': c->verbose++; break;
    case 'h': fputs(usage_text, stdout); exit(EXIT_SUCCESS);
    default: fputs(usage_text, stderr); exit(EXIT_USAGE);
    }
  }
  if (optind + 1 != argc) {
    fprintf(stderr, "zkroute-fleet: expected one HOSTS operand\n%s", usage_text);
    exit(EXIT_USAGE);
  }
  c->hosts = argv[optind];
  int rc = zkr__hosts_parse(c->hosts, &c->hl);
  if (rc != ZOK) usage_error("host list '%s': %s", c->hosts, zkr_strerror(rc));
  if (c->hl.chroot)
    usage_error("host list '%s': no chroot, please (--prefix places the nodes)", c->hosts);
  if (c->npids && c->npids != (int)c->hl.n)
    usage_error("--server-pids names %d processes for %zu servers", c->npids, c->hl.n);
  size_t pl = strlen(c->prefix);
  if (pl < 2 || c->prefix[0] != '/' || c->prefix[pl - 1] == '/' || pl > 200)
    usage_error("--prefix must be an absolute znode path other than / (at most 200 bytes)");
  parse_variants(c, variants);
  resolve_variants(c);
  if (c->pause < 0) c->pause = c->session_ms / 1000.0 + 3;
}

/* ---- the watched nodes ---- */

/* Watch j of a handle: a data watch on PREFIX/cfg-K, an exists watch on the
 * absent PREFIX/absent-K, a child watch on PREFIX/dir-K, K = j / 3.  Every
 * handle watches the same nodes, as daemons sharing a configuration do. */
static void watch_path(const cfg_t *c, int j, char *buf, size_t n) {
  static const char *const kind[] = {"cfg", "absent", "dir"};
  snprintf(buf, n, "%s/%s-%d", c->prefix, kind[j % 3], j / 3);
}

static void noop_watcher(zhandle_t *zh, int type, int state, const char *path, void *ctx) {
  (void)zh, (void)type, (void)state, (void)path, (void)ctx;
}

static void setup_nodes(const cfg_t *c) {
  zhandle_t *zh = zookeeper_init(c->hosts, noop_watcher, c->session_ms, NULL, NULL, 0);
  if (!zh) die("zookeeper_init(%s): %s", c->hosts, strerror(errno));
  double end = now_s() + c->connect_timeout;
  while (zoo_state(zh) != ZOO_CONNECTED_STATE && now_s() < end && !interrupted) sleep_s(0.05);
  if (zoo_state(zh) != ZOO_CONNECTED_STATE) {
    zookeeper_close(zh);
    die("no session to %s within %g s (is the ensemble up?)", c->hosts, c->connect_timeout);
  }
  char path[256];
  int rc = zoo_create(zh, c->prefix, "", 0, &ZOO_OPEN_ACL_UNSAFE, 0, NULL, 0);
  if (rc != ZOK && rc != ZNODEEXISTS) die("create %s: %s", c->prefix, zerror(rc));
  for (int j = 0; j < c->watches; j++) {
    if (j % 3 == 1) continue; /* the exists watches' nodes stay absent */
    watch_path(c, j, path, sizeof path);
    rc = zoo_create(zh, path, "v", 1, &ZOO_OPEN_ACL_UNSAFE, 0, NULL, 0);
    if (rc != ZOK && rc != ZNODEEXISTS) die("create %s: %s", path, zerror(rc));
  }
  zookeeper_close(zh);
}

/* ---- one variant, in a child process ---- */

static _Atomic int64_t n_events; /* watcher events (session events apart) */

static void count_watcher(zhandle_t *zh, int type, int state, const char *path, void *ctx) {
  (void)zh, (void)state, (void)path, (void)ctx;
  if (type != ZOO_SESSION_EVENT) atomic_fetch_add(&n_events, 1);
}

typedef struct fleet {
  const cfg_t *c;
  const variant_t *v;
  zhandle_t **zh;
  zkr_t **z;
  int n; /* opened */
} fleet_t;

/* 1 when handle i is connected; routed: the virtual session is, a leader
 * is known and every member session is connected (the steady state); a
 * member left without a session by the read_members cap (parked) counts
 * as settled. */
static int handle_ready(fleet_t *f, int i) {
  if (!f->v->routed) return zoo_state(f->zh[i]) == ZOO_CONNECTED_STATE;
  if (zkr_state(f->z[i]) != ZOO_CONNECTED_STATE) return 0;
  zkr_stats_t *s;
  if (zkr_stats(f->z[i], &s) != ZOK) return 0;
  int ok = s->leader >= 0;
  for (int m = 0; m < s->n_members && ok; m++)
    if (!s->members[m].removed && !s->members[m].parked && !s->members[m].connected) ok = 0;
  zkr_stats_free(s);
  return ok;
}

/* What keeps handle i from being ready, in words. */
static void describe_unready(fleet_t *f, int i, char *buf, size_t n) {
  if (!f->v->routed) {
    snprintf(buf, n, "session state %d", zoo_state(f->zh[i]));
    return;
  }
  zkr_stats_t *s;
  if (zkr_stats(f->z[i], &s) != ZOK) {
    snprintf(buf, n, "zkr_stats failed");
    return;
  }
  size_t len = (size_t)snprintf(buf, n, "state %d, leader %d;", zkr_state(f->z[i]), s->leader);
  for (int m = 0; m < s->n_members && len < n; m++)
    len += (size_t)snprintf(
        buf + len, n - len, " member %d: %s, session state %d, 0x%llx%s%s%s", m + 1,
        s->members[m].connected ? "connected" : "not connected", s->members[m].session_state,
        (unsigned long long)s->members[m].session_id, s->members[m].is_owner ? ", owner" : "",
        s->members[m].removed ? ", removed" : "", s->members[m].parked ? ", parked" : "");
  zkr_stats_free(s);
}

static int64_t routed_srvr_polls(fleet_t *f) {
  int64_t sum = 0;
  for (int i = 0; f->v->routed && i < f->n; i++) {
    zkr_stats_t *s;
    if (zkr_stats(f->z[i], &s) != ZOK) return -1;
    for (int m = 0; m < s->n_members; m++) sum += (int64_t)s->members[m].srvr_polls;
    zkr_stats_free(s);
  }
  return sum;
}

static const char *rc_text(int rc) { return zkr_strerror(rc); }

/* Sets the watches of handle i; returns ZOK or the first unexpected code. */
static int set_watches(fleet_t *f, int i, int *failed_watch) {
  const cfg_t *c = f->c;
  char path[256], buf[64];
  for (int j = 0; j < c->watches; j++) {
    int len = sizeof buf, rc;
    struct Stat st;
    struct String_vector sv = {0, NULL};
    watch_path(c, j, path, sizeof path);
    if (f->v->routed) {
      zkr_t *z = f->z[i];
      rc = j % 3 == 0   ? zkr_wget(z, path, count_watcher, NULL, buf, &len, &st)
           : j % 3 == 1 ? zkr_wexists(z, path, count_watcher, NULL, &st)
                        : zkr_wget_children(z, path, count_watcher, NULL, &sv);
    } else {
      zhandle_t *zh = f->zh[i];
      rc = j % 3 == 0   ? zoo_wget(zh, path, count_watcher, NULL, buf, &len, &st)
           : j % 3 == 1 ? zoo_wexists(zh, path, count_watcher, NULL, &st)
                        : zoo_wget_children(zh, path, count_watcher, NULL, &sv);
    }
    if (rc == ZOK && j % 3 == 2) deallocate_String_vector(&sv);
    if (j % 3 == 1 && rc == ZNONODE) rc = ZOK; /* an exists watch on an absent node */
    if (rc != ZOK) {
      *failed_watch = j;
      return rc;
    }
  }
  return ZOK;
}

static void close_all(fleet_t *f) {
  for (int i = 0; i < f->n; i++) {
    if (f->v->routed) zkr_close(f->z[i]);
    else zookeeper_close(f->zh[i]);
  }
  f->n = 0;
}

static void servers_read(const cfg_t *c, fleet_server_t *s) {
  for (size_t m = 0; m < c->hl.n; m++)
    if (fleet_server_read(c->hl.v[m].name, c->hl.v[m].port, PROBE_TIMEOUT_MS, &s[m]) != 0)
      fprintf(stderr, "zkroute-fleet: no srvr reply from %s:%d\n", c->hl.v[m].name,
              c->hl.v[m].port);
}

static void jvms_read(const cfg_t *c, int64_t *heap, char *why, size_t wn) {
  for (size_t m = 0; m < c->hl.n; m++) {
    heap[m] = -1;
    if (!c->npids) continue;
    const char *w;
    fleet_jvm_read(c->pids[m], c->jcmd, JCMD_TIMEOUT_S, &heap[m], &w);
    if (w && !*why) snprintf(why, wn, "%s", w);
  }
}

/* Each server JVM's CPU time now (seconds; -1 unknown). */
static void jvms_cpu(const cfg_t *c, double *cpu) {
  for (size_t m = 0; m < c->hl.n; m++) cpu[m] = c->npids ? tool_pid_cpu_s(c->pids[m]) : -1;
}

/* Cores used by each JVM between two readings taken dt seconds apart. */
static void cores(const cfg_t *c, const double *a, const double *b, double dt, double *out) {
  for (size_t m = 0; m < c->hl.n; m++) out[m] = a[m] < 0 || b[m] < 0 ? NAN : (b[m] - a[m]) / dt;
}

/* Fails the child: closes what it opened, says why. */
static void child_fail(fleet_t *f, const char *fmt, ...)
    __attribute__((format(printf, 2, 3), noreturn));
static void child_fail(fleet_t *f, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fprintf(stderr, "zkroute-fleet: %s: ", f->v->name);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
  close_all(f);
  _exit(EXIT_FAILURE);
}

static void run_variant(const cfg_t *c, const variant_t *v, result_t *r) {
  fleet_t f = {.c = c, .v = v};
  f.zh = calloc((size_t)c->handles, sizeof *f.zh);
  f.z = calloc((size_t)c->handles, sizeof *f.z);
  if (!f.zh || !f.z) die("out of memory");
  memset(r, 0, sizeof *r);
  r->load0 = tool_loadavg1();
  fleet_self_read(&r->c0);
  servers_read(c, r->s0);
  jvms_read(c, r->heap0, r->heap_why, sizeof r->heap_why);
  double cpu_a[MAXM], cpu_b[MAXM];
  for (size_t m = 0; m < c->hl.n; m++) r->base_cores[m] = r->idle_cores[m] = NAN;
  if (c->npids) {
    jvms_cpu(c, cpu_a);
    double tb = now_s();
    sleep_s(c->baseline);
    jvms_cpu(c, cpu_b);
    cores(c, cpu_a, cpu_b, now_s() - tb, r->base_cores);
  }

  double t_open = now_s();
  for (int i = 0; i < c->handles && !interrupted; i++) {
    if (v->routed) {
      int rc =
          zkr_init_opts(&f.z[i], c->hosts, count_watcher, c->session_ms, NULL, NULL, 0, &v->opts);
      if (rc != ZOK)
        child_fail(&f, "zkr_init_opts of handle %d: %s (%s)", i + 1, rc_text(rc), zkr_err_name(rc));
    } else {
      f.zh[i] = zookeeper_init(c->hosts, count_watcher, c->session_ms, NULL, NULL, 0);
      if (!f.zh[i]) child_fail(&f, "zookeeper_init of handle %d: %s", i + 1, strerror(errno));
    }
    f.n = i + 1;
  }
  double deadline = now_s() + c->connect_timeout;
  for (int i = 0; i < f.n && !interrupted; i++) {
    while (!handle_ready(&f, i) && !interrupted) {
      if (now_s() > deadline) {
        int ready = 0;
        for (int k = 0; k < f.n; k++) ready += handle_ready(&f, k);
        char why[512];
        describe_unready(&f, i, why, sizeof why);
        child_fail(&f, "only %d of %d handles ready after %g s (--connect-timeout); handle %d: %s",
                   ready, f.n, c->connect_timeout, i + 1, why);
      }
      sleep_s(0.02);
    }
  }
  for (int i = 0; i < f.n && !interrupted; i++) {
    int j = -1, rc = set_watches(&f, i, &j);
    if (rc != ZOK) {
      char path[256];
      watch_path(c, j, path, sizeof path);
      child_fail(&f, "handle %d: setting watch %d on %s: %s", i + 1, j + 1, path, rc_text(rc));
    }
  }
  r->connect_s = now_s() - t_open;
  r->n = f.n;
  sleep_s(c->settle);

  fleet_self_read(&r->c1);
  servers_read(c, r->sa);
  int64_t polls0 = routed_srvr_polls(&f), ev0 = atomic_load(&n_events);
  jvms_cpu(c, cpu_a);
  double t0 = now_s();
  sleep_s(c->window);
  jvms_cpu(c, cpu_b);
  servers_read(c, r->sb);
  r->window_s = now_s() - t0;
  cores(c, cpu_a, cpu_b, r->window_s, r->idle_cores);
  int64_t polls1 = routed_srvr_polls(&f);
  r->srvr_polls = v->routed && polls0 >= 0 && polls1 >= 0 ? polls1 - polls0 : -1;
  r->events = atomic_load(&n_events) - ev0;
  jvms_read(c, r->heap1, r->heap_why, sizeof r->heap_why);
  r->load1 = tool_loadavg1();
  close_all(&f);
  free(f.zh);
  free(f.z);
  if (interrupted) _exit(130);
}

/* Runs variant v in a child process; returns 0 and fills r, or -1. */
static int run_child(const cfg_t *c, const variant_t *v, result_t *r) {
  int p[2];
  if (pipe(p) != 0) die("pipe: %s", strerror(errno));
  fflush(NULL);
  pid_t pid = fork();
  if (pid < 0) die("fork: %s", strerror(errno));
  if (pid == 0) {
    close(p[0]);
    result_t res;
    run_variant(c, v, &res);
    const char *b = (const char *)&res;
    size_t left = sizeof res;
    while (left > 0) {
      ssize_t w = write(p[1], b, left);
      if (w < 0 && errno == EINTR) continue;
      if (w <= 0) _exit(EXIT_FAILURE);
      b += w;
      left -= (size_t)w;
    }
    _exit(EXIT_SUCCESS);
  }
  close(p[1]);
  size_t got = 0;
  char *b = (char *)r;
  while (got < sizeof *r) {
    ssize_t n = read(p[0], b + got, sizeof *r - got);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    got += (size_t)n;
  }
  close(p[0]);
  int st;
  while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {
  }
  return got == sizeof *r && WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : -1;
}

/* ---- the report ---- */

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* Median of the finite values (NAN when none). */
static double median(double *v, int n) {
  int k = 0;
  for (int i = 0; i < n; i++)
    if (isfinite(v[i])) v[k++] = v[i];
  if (!k) return NAN;
  qsort(v, (size_t)k, sizeof *v, cmp_double);
  return k % 2 ? v[k / 2] : (v[k / 2 - 1] + v[k / 2]) / 2;
}

typedef double (*metric_fn)(const cfg_t *c, const result_t *r);

static double d64(int64_t a, int64_t b) { return a < 0 || b < 0 ? NAN : (double)(b - a); }

static double m_rss(const cfg_t *c, const result_t *r) {
  (void)c;
  return d64(r->c0.rss_kib, r->c1.rss_kib) / r->n;
}
static double m_threads(const cfg_t *c, const result_t *r) {
  (void)c;
  return d64(r->c0.threads, r->c1.threads) / r->n;
}
static double m_fds(const cfg_t *c, const result_t *r) {
  (void)c;
  return d64(r->c0.fds, r->c1.fds) / r->n;
}
static double m_connect(const cfg_t *c, const result_t *r) {
  (void)c;
  return r->connect_s;
}

static double sum_servers(const cfg_t *c, const result_t *r, int what) {
  double sum = 0;
  for (size_t m = 0; m < c->hl.n; m++) {
    double d;
    switch (what) {
    case 0: d = d64(r->s0[m].connections, r->sa[m].connections); break;
    case 1: d = d64(r->s0[m].watches, r->sa[m].watches); break;
    case 2: d = d64(r->sa[m].received, r->sb[m].received) - OWN_QUERIES; break;
    default: d = d64(r->heap0[m], r->heap1[m]); break;
    }
    sum += d;
  }
  return sum;
}

static double per100(const result_t *r, double v) { return v * 100.0 / r->n; }
static double m_sessions(const cfg_t *c, const result_t *r) {
  for (size_t m = 0; m < c->hl.n; m++)
    if (r->sa[m].leader) return per100(r, d64(r->s0[m].sessions, r->sa[m].sessions));
  return NAN;
}
static double m_conns(const cfg_t *c, const result_t *r) { return per100(r, sum_servers(c, r, 0)); }
static double m_watches(const cfg_t *c, const result_t *r) {
  return per100(r, sum_servers(c, r, 1));
}
static double m_recv(const cfg_t *c, const result_t *r) {
  return per100(r, sum_servers(c, r, 2) / r->window_s);
}
static double m_polls(const cfg_t *c, const result_t *r) {
  (void)c;
  return r->srvr_polls < 0 ? 0 : per100(r, (double)r->srvr_polls / r->window_s);
}
static double m_pings(const cfg_t *c, const result_t *r) { return m_recv(c, r) - m_polls(c, r); }
static double m_heap(const cfg_t *c, const result_t *r) { return per100(r, sum_servers(c, r, 3)); }
/* Server CPU the idle handles cost: window minus baseline, % of a core. */
static double m_cpu(const cfg_t *c, const result_t *r) {
  double sum = 0;
  for (size_t m = 0; m < c->hl.n; m++) sum += r->idle_cores[m] - r->base_cores[m];
  return per100(r, sum * 100);
}
static double m_events(const cfg_t *c, const result_t *r) {
  (void)c;
  return (double)r->events;
}

typedef struct row {
  const char *what;
  metric_fn fn;
  const char *fmt;
} row_t;

static const row_t client_rows[] = {
    {"client resident memory (KiB)", m_rss, "%.0f"},
    {"client threads", m_threads, "%.2f"},
    {"client file descriptors", m_fds, "%.2f"},
};
static const row_t server_rows[] = {
    {"ZooKeeper sessions (leader's `mntr` zk_global_sessions)", m_sessions, "%.0f"},
    {"client connections on the servers (`srvr` Connections, all servers)", m_conns, "%.0f"},
    {"watches on the servers (`mntr` zk_watch_count, all servers)", m_watches, "%.0f"},
    {"requests received per second, idle (`srvr` Received, all servers)", m_recv, "%.1f"},
    {"... of which `srvr` polls of the handles' monitors per second", m_polls, "%.1f"},
    {"... the rest (pings) per second", m_pings, "%.1f"},
    {"JVM live heap: old generation after a full GC (KiB, all servers)", m_heap, "%.0f"},
    {"JVM CPU while idle, above the no-handle baseline (% of a core, all servers)", m_cpu, "%.1f"},
};

static double med_metric(const cfg_t *c, const result_t *res, int v, metric_fn fn) {
  double vals[MAXR];
  for (int r = 0; r < c->rounds; r++) vals[r] = fn(c, &res[r * c->nvar + v]);
  return median(vals, c->rounds);
}

static void cell(FILE *o, const char *fmt, double v) {
  if (isfinite(v)) {
    fputs(" | ", o);
    fprintf(o, fmt, v);
  } else {
    fputs(" | n/a", o);
  }
}

static void table(FILE *o, const cfg_t *c, const result_t *res, const char *head, const row_t *rows,
                  size_t nrows) {
  fprintf(o, "| %s", head);
  for (int v = 0; v < c->nvar; v++) fprintf(o, " | %s", c->var[v].name);
  fputs(" |\n| ---", o);
  for (int v = 0; v < c->nvar; v++) fputs(" | --:", o);
  fputs(" |\n", o);
  for (size_t i = 0; i < nrows; i++) {
    fprintf(o, "| %s", rows[i].what);
    for (int v = 0; v < c->nvar; v++) cell(o, rows[i].fmt, med_metric(c, res, v, rows[i].fn));
    fputs(" |\n", o);
  }
}

static void report(FILE *o, const cfg_t *c, const result_t *res, const char *command, double load0,
                   double load1) {
  fprintf(o, "## %s\n\n", c->label ? c->label : "zkroute-fleet");
  fprintf(o, "`%s`\n\n", command);
  fprintf(o,
          "%d idle handles per variant, %d watches each, session timeout %d ms; "
          "settle %g s, idle window %g s; %d round(s), medians; load average %.2f -> %.2f.\n\n",
          c->handles, c->watches, c->session_ms, c->settle, c->window, c->rounds, load0, load1);
  table(o, c, res, "per handle", client_rows, sizeof client_rows / sizeof *client_rows);
  fputs("\n", o);
  table(o, c, res, "per 100 idle handles", server_rows, sizeof server_rows / sizeof *server_rows);
  fputs("\n", o);
  static const row_t other[] = {
      {"seconds to open every handle and set its watches", m_connect, "%.2f"},
      {"watch events during the idle window (expected: 0)", m_events, "%.0f"},
  };
  table(o, c, res, "the run", other, sizeof other / sizeof *other);
  fputs("\nPer server, per 100 handles (median): client connections, watches, requests "
        "received per second, JVM heap after a full GC (KiB).\n\n| server",
        o);
  for (int v = 0; v < c->nvar; v++) fprintf(o, " | %s", c->var[v].name);
  fputs(" |\n| ---", o);
  for (int v = 0; v < c->nvar; v++) fputs(" | ---", o);
  fputs(" |\n", o);
  for (size_t m = 0; m < c->hl.n; m++) {
    char addr[300];
    zkr__hosts_format(&c->hl.v[m], NULL, addr, sizeof addr);
    fprintf(o, "| %s%s%s%s", addr, c->npids ? " (" : "", c->npids ? c->pid_names[m] : "",
            c->npids ? ")" : "");
    for (int v = 0; v < c->nvar; v++) {
      double k[4][MAXR];
      for (int r = 0; r < c->rounds; r++) {
        const result_t *x = &res[r * c->nvar + v];
        k[0][r] = per100(x, d64(x->s0[m].connections, x->sa[m].connections));
        k[1][r] = per100(x, d64(x->s0[m].watches, x->sa[m].watches));
        k[2][r] =
            per100(x, (d64(x->sa[m].received, x->sb[m].received) - OWN_QUERIES) / x->window_s);
        k[3][r] = per100(x, d64(x->heap0[m], x->heap1[m]));
      }
      double a = median(k[0], c->rounds), b = median(k[1], c->rounds), d = median(k[2], c->rounds),
             e = median(k[3], c->rounds);
      fprintf(o, " | %.0f conn, %.0f watches, %.1f/s, ", a, b, d);
      if (isfinite(e)) fprintf(o, "%.0f KiB", e);
      else fputs("heap n/a", o);
    }
    fputs(" |\n", o);
  }
  const char *why = NULL;
  for (int i = 0; i < c->rounds * c->nvar && !why; i++)
    if (res[i].heap_why[0]) why = res[i].heap_why;
  fputs(
      "\nSources: client figures from /proc/self (VmRSS, Threads, fd/) at steady state minus "
      "before the first handle; sessions, connections and watches are deltas over the same span; "
      "requests received are the `srvr` Received delta over the idle window minus this tool's own "
      "2 queries per server; srvr polls are the routed handles' own count (zkr_stats).",
      o);
  if (c->npids)
    fprintf(
        o,
        " Heap: `%s PID GC.run` then `GC.heap_info`, the old generation's used figure "
        "(the live set after a full collection), after minus before. JVM CPU: /proc/PID/stat over "
        "the idle window, minus the same over --baseline seconds before the first handle.%s%s",
        c->jcmd ? c->jcmd : "(no jcmd)", why ? " Heap missing: " : "", why ? why : "");
  else fputs(" No --server-pids: no JVM figures.", o);
  fputs("\n", o);
}

int main(int argc, char **argv) {
  static cfg_t c = {.handles = 100,
                    .watches = 3,
                    .session_ms = 10000,
                    .rounds = 1,
                    .settle = 15,
                    .window = 20,
                    .baseline = 5,
                    .connect_timeout = 60,
                    .pause = -1,
                    .jcmd = "jcmd",
                    .prefix = "/zkr-fleet",
                    .base_opts = ZKR_OPTIONS_INIT};
  char *argv0 = argv[0];
  argv[0] = (char *)"zkroute-fleet";
  char *command = tool_shell_join(argc, argv);
  if (!command) die("out of memory");
  argv[0] = argv0;
  parse_args(&c, argc, argv);
  static const ZooLogLevel levels[] = {ZOO_LOG_LEVEL_ERROR, ZOO_LOG_LEVEL_WARN, ZOO_LOG_LEVEL_INFO,
                                       ZOO_LOG_LEVEL_DEBUG};
  zoo_set_debug_level(c.verbose <= 0 ? (ZooLogLevel)0 : levels[c.verbose > 4 ? 3 : c.verbose - 1]);
  signal(SIGPIPE, SIG_IGN);
  struct sigaction sa = {.sa_handler = on_signal};
  sigaction(SIGINT, &sa, NULL);
  sigaction(SIGTERM, &sa, NULL);
  /* A routed handle holds a descriptor or more per member: lift the soft
   * limit to the hard one. */
  struct rlimit rl;
  if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
    rl.rlim_cur = rl.rlim_max;
    setrlimit(RLIMIT_NOFILE, &rl);
  }

  double load0 = tool_loadavg1();
  setup_nodes(&c);
  result_t *res = calloc((size_t)c.rounds * (size_t)c.nvar, sizeof *res);
  if (!res) die("out of memory");
  for (int r = 0; r < c.rounds && !interrupted; r++) {
    for (int k = 0; k < c.nvar && !interrupted; k++) {
      int v = (k + r) % c.nvar;
      result_t *x = &res[r * c.nvar + v];
      fprintf(stderr, "zkroute-fleet: round %d/%d: %s, %d handles...\n", r + 1, c.rounds,
              c.var[v].name, c.handles);
      if (run_child(&c, &c.var[v], x) != 0) {
        if (interrupted) die("interrupted");
        die("variant %s failed (round %d)", c.var[v].name, r + 1);
      }
      fprintf(stderr,
              "zkroute-fleet:   %.0f KiB, %.2f threads, %.2f fds per handle; "
              "%.1f requests/s per 100 handles; connected in %.1f s\n",
              m_rss(&c, x), m_threads(&c, x), m_fds(&c, x), m_recv(&c, x), x->connect_s);
      if (r + 1 < c.rounds || k + 1 < c.nvar) sleep_s(c.pause);
    }
  }
  if (interrupted) die("interrupted");
  double load1 = tool_loadavg1();
  report(stdout, &c, res, command, load0, load1);
  if (c.out) {
    FILE *f = fopen(c.out, "w");
    if (!f) die("%s: %s", c.out, strerror(errno));
    report(f, &c, res, command, load0, load1);
    if (fclose(f) != 0) die("%s: %s", c.out, strerror(errno));
  }
  free(res);
  free(command);
  zkr__hosts_free(&c.hl);
  return EXIT_SUCCESS;
}
