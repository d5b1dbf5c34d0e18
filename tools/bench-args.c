/* zkroute-bench's command line (bench.h): the usage text, the policy
 * entries (with options of their own), the library's -o options, and the
 * checks that send bad input back with exit code 2. */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "tool-common.h"

/* A policy entry's own options: "+key=value+key=value" (see add_policy).
 * Returns ZOK or the first error of zkr_options_set. */
int apply_entry_options(zkr_options_t *o, const char *text) {
  char buf[sizeof((policy_t *)0)->opts], *save = NULL;
  snprintf(buf, sizeof buf, "%s", text);
  for (char *kv = strtok_r(buf, "+", &save); kv; kv = strtok_r(NULL, "+", &save)) {
    char *eq = strchr(kv, '=');
    if (!eq) return ZKR_EOPTION;
    *eq = '\0';
    if (strcmp(kv, "policy") == 0) return ZKR_EOPTION;
    int rc = zkr_options_set(o, kv, eq + 1);
    if (rc != ZOK) return rc;
  }
  return ZOK;
}

static const char usage_text[] =
    "usage: zkroute-bench [OPTIONS] HOSTS\n"
    "Closed-loop benchmark of zkroute's policies and plain libzookeeper_mt baselines.\n"
    "  -p, --policies LIST   comma-separated, run interleaved in this order (default\n"
    "                        hybrid,round_robin,oracle,sticky,stock); any of hybrid,\n"
    "                        round_robin, leader_only, sticky, boltzmann (zkroute) and\n"
    "                        stock (plain session, random server), stock_unsynced\n"
    "                        (the same, reads without a sync), oracle (plain\n"
    "                        session on the leader); p2c and same_zone (hybrid with\n"
    "                        that read selector); an entry BASE+key=value+... gives\n"
    "                        a routed entry options of its own, e.g.\n"
    "                        hybrid+leader_read_weight=0.33\n"
    "  -w, --workers N       closed-loop worker threads (default 32)\n"
    "  -d, --duration S      measured seconds per trial (default 20)\n"
    "      --warmup S        unmeasured seconds before each trial (default 5)\n"
    "      --prewarm S       one unmeasured run of the first policy first (default 10)\n"
    "  -t, --trials N        trials (rounds over all policies; default 3)\n"
    "  -r, --reads PCT       percentage of reads (default 80)\n"
    "  -k, --keys N          key space (default 1000)\n"
    "  -s, --value-size B    value bytes (default 128)\n"
    "      --api sync|async  sync calls, or async call + wait (default sync)\n"
    "      --rate OPS        pace the workers to OPS operations/s in total (default:\n"
    "                        closed loop, no pacing); for CPU per op at equal load\n"
    "      --sticky-member N pin `sticky` to member N (1-based, as in HOSTS)\n"
    "      --degraded-member N  mark member N as degraded in the report\n"
    "      --pool-trace FILE append every read-pool change of zkroute trials to FILE\n"
    "      --fault-cmd CMD   shell command run just before each measured window (a\n"
    "                        fault that starts with the window: its first seconds)\n"
    "      --heal-cmd CMD    shell command run right after each measured window\n"
    "      --watch-pids LIST also report the CPU per operation of these processes\n"
    "                        (comma-separated PID or NAME=PID: the servers, the proxy)\n"
    "  -o KEY=VALUE          zkroute option for the routed policies (repeatable)\n"
    "      --prefix PATH     znode holding the keys (default /zkr-bench)\n"
    "      --no-setup        do not create/reset the keys\n"
    "      --out DIR         results.md, results.json, charts (default: no files)\n"
    "      --label TEXT      scenario name in the report\n"
    "      --targets steady|degraded  check the routing targets (exit 3 on a miss)\n"
    "      --order rotate|fixed  order of the policies in each round (default rotate)\n"
    "      --pause S         pause between trials (default 1)\n"
    "      --seed N          workload seed (default 1)\n"
    "  -q, --quiet           no progress line\n"
    "  -v                    ZooKeeper's log on stderr (repeat for more)\n"
    "  -h, --help            this text\n";

static int parse_num(const char *s, double min, double max, double *out) {
  char *end;
  errno = 0;
  double v = strtod(s, &end);
  if (errno || end == s || *end || !(v >= min && v <= max)) return 0;
  *out = v;
  return 1;
}

static void num_arg(const char *name, const char *s, double min, double max, double *out) {
  if (!parse_num(s, min, max, out)) {
    fprintf(stderr, "zkroute-bench: %s: '%s' is not a number from %g to %g\n", name, s, min, max);
    exit(EXIT_USAGE);
  }
}

static void int_arg(const char *name, const char *s, int min, int max, int *out) {
  double v;
  num_arg(name, s, min, max, &v);
  if (v != floor(v)) {
    fprintf(stderr, "zkroute-bench: %s: '%s' is not an integer\n", name, s);
    exit(EXIT_USAGE);
  }
  *out = (int)v;
}

static void add_policy(cfg_t *c, const char *name) {
  if (c->npol >= MAXP) {
    fprintf(stderr, "zkroute-bench: at most %d policies\n", MAXP);
    exit(EXIT_USAGE);
  }
  policy_t *p = &c->pol[c->npol];
  memset(p, 0, sizeof *p);
  if (strlen(name) >= sizeof p->name) {
    fprintf(stderr, "zkroute-bench: policy entry '%s' is too long\n", name);
    exit(EXIT_USAGE);
  }
  snprintf(p->name, sizeof p->name, "%s", name);
  /* BASE+key=value+...: a routed policy with options of its own. */
  char base[sizeof p->name];
  snprintf(base, sizeof base, "%s", name);
  char *plus = strchr(base, '+');
  if (plus) {
    *plus = '\0';
    snprintf(p->opts, sizeof p->opts, "%s", plus + 1);
  }
  zkr_options_t probe = ZKR_OPTIONS_INIT;
  if (!plus && strcmp(name, "stock") == 0) p->kind = K_STOCK;
  else if (!plus && strcmp(name, "stock_unsynced") == 0) {
    /* what an unmodified application does: a plain read, not linearizable */
    p->kind = K_STOCK;
    p->unsynced = 1;
  } else if (!plus && strcmp(name, "oracle") == 0) p->kind = K_ORACLE;
  else if (strcmp(base, "p2c") == 0 || strcmp(base, "same_zone") == 0) {
    /* hybrid with a ready-made read selector (docs/selectors.md) */
    p->kind = K_ROUTED;
    p->zkr_policy = ZKR_POLICY_HYBRID;
    p->selector = base[0] == 'p' ? zkr_selector_p2c : zkr_selector_same_zone;
  } else if (zkr_options_set(&probe, "policy", base) == ZOK) {
    p->kind = K_ROUTED;
    p->zkr_policy = probe.policy;
  } else {
    fprintf(stderr, "zkroute-bench: unknown policy '%s'\n", name);
    exit(EXIT_USAGE);
  }
  if (p->kind == K_ROUTED && apply_entry_options(&probe, p->opts) != ZOK) {
    fprintf(stderr, "zkroute-bench: policy '%s': bad +key=value option\n", name);
    exit(EXIT_USAGE);
  }
  for (int i = 0; i < c->npol; i++)
    if (strcmp(c->pol[i].name, name) == 0) {
      fprintf(stderr, "zkroute-bench: policy '%s' given twice\n", name);
      exit(EXIT_USAGE);
    }
  c->npol++;
}

void parse_policies(cfg_t *c, const char *list) {
  char *dup = strdup(list), *save = NULL;
  if (!dup) bench_die("out of memory");
  c->npol = 0;
  for (char *tok = strtok_r(dup, ",", &save); tok; tok = strtok_r(NULL, ",", &save))
    if (*tok) add_policy(c, tok);
  free(dup);
  if (c->npol == 0) {
    fprintf(stderr, "zkroute-bench: no policy given\n");
    exit(EXIT_USAGE);
  }
}

static void apply_option(cfg_t *c, const char *kv) {
  char key[128];
  const char *eq = strchr(kv, '=');
  int rc = ZKR_EOPTION;
  if (eq && (size_t)(eq - kv) < sizeof key) {
    memcpy(key, kv, (size_t)(eq - kv));
    key[eq - kv] = '\0';
    if (strcmp(key, "policy") == 0) {
      fprintf(stderr, "zkroute-bench: choose policies with -p, not -o policy=\n");
      exit(EXIT_USAGE);
    }
    rc = zkr_options_set(&c->opts, key, eq + 1);
  }
  if (rc != ZOK) {
    fprintf(stderr, "zkroute-bench: option '%s': %s\n", kv,
            eq ? zkr_strerror(rc) : "expected KEY=VALUE");
    exit(EXIT_USAGE);
  }
  size_t off = strlen(c->opt_text);
  snprintf(c->opt_text + off, sizeof c->opt_text - off, "%s`%s`", off ? ", " : "", kv);
}

enum {
  O_WARMUP = 256,
  O_RATE,
  O_PREWARM,
  O_API,
  O_STICKY,
  O_DEGRADED,
  O_PREFIX,
  O_NOSETUP,
  O_OUT,
  O_LABEL,
  O_TARGETS,
  O_ORDER,
  O_PAUSE,
  O_SEED,
  O_PIDS,
  O_TRACE,
  O_FAULT,
  O_HEAL
};

static const struct option long_opts[] = {
    {"policies", required_argument, NULL, 'p'},
    {"workers", required_argument, NULL, 'w'},
    {"duration", required_argument, NULL, 'd'},
    {"warmup", required_argument, NULL, O_WARMUP},
    {"prewarm", required_argument, NULL, O_PREWARM},
    {"trials", required_argument, NULL, 't'},
    {"reads", required_argument, NULL, 'r'},
    {"keys", required_argument, NULL, 'k'},
    {"value-size", required_argument, NULL, 's'},
    {"api", required_argument, NULL, O_API},
    {"rate", required_argument, NULL, O_RATE},
    {"sticky-member", required_argument, NULL, O_STICKY},
    {"degraded-member", required_argument, NULL, O_DEGRADED},
    {"prefix", required_argument, NULL, O_PREFIX},
    {"no-setup", no_argument, NULL, O_NOSETUP},
    {"out", required_argument, NULL, O_OUT},
    {"label", required_argument, NULL, O_LABEL},
    {"targets", required_argument, NULL, O_TARGETS},
    {"order", required_argument, NULL, O_ORDER},
    {"pause", required_argument, NULL, O_PAUSE},
    {"seed", required_argument, NULL, O_SEED},
    {"watch-pids", required_argument, NULL, O_PIDS},
    {"pool-trace", required_argument, NULL, O_TRACE},
    {"fault-cmd", required_argument, NULL, O_FAULT},
    {"heal-cmd", required_argument, NULL, O_HEAL},
    {"quiet", no_argument, NULL, 'q'},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
};

void parse_args(cfg_t *c, int argc, char **argv) {
  int opt, v;
  double d;
  /* The report names the program, not libtool's wrapper or its path. */
  char *argv0 = argv[0];
  argv[0] = (char *)"zkroute-bench";
  c->command = tool_shell_join(argc, argv);
  if (!c->command) bench_die("out of memory");
  argv[0] = argv0;
  while ((opt = getopt_long(argc, argv, "p:w:d:t:r:k:s:o:qvh", long_opts, NULL)) != -1) {
    switch (opt) {
    case 'p': parse_policies(c, optarg); break;
    case 'w': int_arg("--workers", optarg, 1, 4096, &c->workers); break;
    case 'd': num_arg("--duration", optarg, 0.1, 86400, &c->duration); break;
    case O_WARMUP: num_arg("--warmup", optarg, 0, 3600, &c->warmup); break;
    case O_PREWARM: num_arg("--prewarm", optarg, 0, 3600, &c->prewarm); break;
    case 't': int_arg("--trials", optarg, 1, 1000, &c->trials); break;
    case 'r':
      num_arg("--reads", optarg, 0, 100, &d);
      c->read_frac = d / 100;
      break;
    case 'k': int_arg("--keys", optarg, 1, 10000000, &c->keys); break;
    case 's': int_arg("--value-size", optarg, 0, 1000000, &c->value_size); break;
    case O_RATE: num_arg("--rate", optarg, 0, 1e9, &c->rate); break;
    case O_API:
      if (strcmp(optarg, "sync") == 0) c->async_api = 0;
      else if (strcmp(optarg, "async") == 0) c->async_api = 1;
      else {
        fprintf(stderr, "zkroute-bench: --api: sync or async\n");
        exit(EXIT_USAGE);
      }
      break;
    case O_STICKY:
      int_arg("--sticky-member", optarg, 1, MAXM, &v);
      c->sticky_member = v - 1;
      break;
    case O_DEGRADED:
      int_arg("--degraded-member", optarg, 1, MAXM, &v);
      c->degraded_member = v - 1;
      break;
    case 'o': apply_option(c, optarg); break;
    case O_PREFIX: c->prefix = optarg; break;
    case O_NOSETUP: c->setup = 0; break;
    case O_OUT: c->out_dir = optarg; break;
    case O_LABEL: c->label = optarg; break;
    case O_TARGETS:
      if (strcmp(optarg, "steady") && strcmp(optarg, "degraded")) {
        fprintf(stderr, "zkroute-bench: --targets: steady or degraded\n");
        exit(EXIT_USAGE);
      }
      c->targets = optarg;
      break;
    case O_ORDER:
      if (strcmp(optarg, "rotate") == 0) c->rotate = 1;
      else if (strcmp(optarg, "fixed") == 0) c->rotate = 0;
      else {
        fprintf(stderr, "zkroute-bench: --order: rotate or fixed\n");
        exit(EXIT_USAGE);
      }
      break;
    case O_PAUSE: num_arg("--pause", optarg, 0, 3600, &c->pause); break;
    case O_SEED:
      num_arg("--seed", optarg, 0, 1e15, &d);
      c->seed = (uint64_t)d;
      break;
    case O_PIDS: {
      char *dup = strdup(optarg), *save = NULL;
      if (!dup) bench_die("out of memory");
      c->npids = 0;
      for (char *tok = strtok_r(dup, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        if (c->npids >= MAXM) break;
        char *eq = strchr(tok, '=');
        if (eq) *eq = '\0';
        snprintf(c->pid_names[c->npids], sizeof c->pid_names[0], "%s%s", eq ? "" : "pid ", tok);
        int_arg("--watch-pids", eq ? eq + 1 : tok, 1, INT32_MAX, &c->pids[c->npids++]);
      }
      free(dup);
      break;
    }
    case O_TRACE: c->pool_trace = optarg; break;
    case O_FAULT: c->fault_cmd = optarg; break;
    case O_HEAL: c->heal_cmd = optarg; break;
    case 'q': c->quiet = 1; break;
    case 'v': c->verbose++; break;
    case 'h': fputs(usage_text, stdout); exit(EXIT_SUCCESS);
    default: fputs(usage_text, stderr); exit(EXIT_USAGE);
    }
  }
  if (optind + 1 != argc) {
    fprintf(stderr, "zkroute-bench: expected one HOSTS operand\n%s", usage_text);
    exit(EXIT_USAGE);
  }
  c->hosts = argv[optind];
  int rc = zkr__hosts_parse(c->hosts, &c->hl);
  if (rc != ZOK) {
    fprintf(stderr, "zkroute-bench: host list '%s': %s\n", c->hosts, zkr_strerror(rc));
    exit(EXIT_USAGE);
  }
  if (c->sticky_member >= (int)c->hl.n || c->degraded_member >= (int)c->hl.n) {
    fprintf(stderr, "zkroute-bench: member numbers go from 1 to %zu\n", c->hl.n);
    exit(EXIT_USAGE);
  }
  size_t pl = strlen(c->prefix);
  if (pl < 2 || c->prefix[0] != '/' || c->prefix[pl - 1] == '/') {
    fprintf(stderr, "zkroute-bench: --prefix must be an absolute znode path other than /\n");
    exit(EXIT_USAGE);
  }
}
