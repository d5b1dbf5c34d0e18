/* The zkroute command: argument parsing, the status report of every member
 * (a table, the library's statistics JSON or its Prometheus text), routed
 * get/set/create/delete/ls through the synchronous zkr_ calls, `top`
 * (zkroute-top.c), and the Markdown tables of options and metrics that
 * docs/options.md and docs/stats.md are generated from.  It uses only the public API of <zkroute.h>.
 * Exit codes: 0 success, 1 an operation or connection failed, 2 usage. */
#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "zkroute-top.h"
#include "zkroute.h"

#define EXIT_USAGE 2
#define DEFAULT_TIMEOUT_MS 5000
#define POLL_MS 20
#define RECV_TIMEOUT_MS 10000
#define GET_BUFFER (1024 * 1024)

/* Flags a subcommand accepts besides the global options. */
enum {
  F_OPS = 1 << 0,
  F_JSON = 1 << 1,
  F_EPHEMERAL = 1 << 2,
  F_SEQUENTIAL = 1 << 3,
  F_VERSION = 1 << 4,
  F_STATS = 1 << 5,
  F_THREADS = 1 << 6,
  F_READ_RATIO = 1 << 7,
  F_PROMETHEUS = 1 << 8,
  F_COUNT = 1 << 9,
  F_METRICS = 1 << 10,
};

typedef struct {
  zkr_options_t opts;
  int timeout_ms;
  int verbose;
  int ops;
  int version;
  int threads;       /* workload */
  double read_ratio; /* workload */
  int count;         /* top: refreshes, 0 until stopped */
  const char *url;   /* top --metrics */
  unsigned used;     /* F_* flags given on the command line */
  char **args;       /* subcommand and its operands */
  int nargs;
} cli_t;

typedef struct cmd cmd_t;
struct cmd {
  const char *name;
  int min_args, max_args; /* operands after the subcommand name */
  unsigned flags;         /* F_* flags it accepts */
  int own_wait;           /* waits itself (status: for the leader too, and
                             reports even when the wait failed) */
  int (*run)(zkr_t *z, const cli_t *c);
};

static const char usage_text[] =
    "usage: zkroute [OPTIONS] status HOSTS [--ops N] [--json | --prometheus]\n"
    "       zkroute [OPTIONS] get HOSTS PATH\n"
    "       zkroute [OPTIONS] set HOSTS PATH VALUE [--version N]\n"
    "       zkroute [OPTIONS] create HOSTS PATH [VALUE] [--ephemeral] "
    "[--sequential]\n"
    "       zkroute [OPTIONS] delete HOSTS PATH [--version N]\n"
    "       zkroute [OPTIONS] ls HOSTS PATH\n"
    "       zkroute [OPTIONS] workload HOSTS [--ops N] [--threads T] "
    "[--read-ratio R]\n"
    "       zkroute [OPTIONS] top HOSTS [--count N]\n"
    "       zkroute top --metrics URL [--count N]\n"
    "       zkroute options\n"
    "       zkroute metrics\n"
    "options:\n"
    "  -o KEY=VALUE   set a zkroute option (repeatable; see `zkroute "
    "options`)\n"
    "  --timeout MS   wait at most MS ms for the connection (default 5000)\n"
    "  --stats        after get/set/create/delete/ls, print the status table "
    "to stderr\n"
    "  -v             show ZooKeeper's own log on stderr (repeat for more)\n"
    "  -h, --help     show this text\n"
    "HOSTS is a ZooKeeper host list: h1:2181,h2:2181,[::1]:2181[/chroot].\n"
    "Put `--` before a VALUE that starts with '-'.\n";

/* ---- small helpers ---- */

static void usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void usage_error(const char *fmt, ...) {
  if (fmt) {
    va_list ap;
    va_start(ap, fmt);
    fputs("zkroute: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
  }
  fputs(usage_text, stderr);
}

/* One line on stderr naming what failed and the code, by name and text. */
static int fail(const char *what, int rc) {
  fprintf(stderr, "zkroute: %s: %s (%s)\n", what, zkr_strerror(rc), zkr_err_name(rc));
  return EXIT_FAILURE;
}

/* Strict decimal integer in [min, max]; 0 when text is not one. */
static int parse_int(const char *text, long min, long max, int *out) {
  char *end;
  errno = 0;
  long v = strtol(text, &end, 10);
  if (errno || end == text || *end != '\0' || v < min || v > max) return 0;
  *out = (int)v;
  return 1;
}

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static void sleep_ms(int ms) {
  struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
  while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
  }
}

/* ---- the status report ---- */

enum {
  COL_INDEX,
  COL_ADDRESS,
  COL_ROLE,
  COL_ZXID,
  COL_SESSION,
  COL_POOL,
  COL_WRITE,
  COL_OWNER,
  COL_READS,
  COL_WRITES,
  COL_SYNCS,
  COL_PERSYNC,
  COL_ERRORS,
  COL_SAMPLES,
  COL_EWMA,
  COL_EJECTIONS,
  COL_OUT,
  N_COLS
};

static const char *const col_head[N_COLS] = {
    "#",      "address", "role",   "zxid",   "session", "pool",    "w",         "o",     "reads",
    "writes", "syncs",   "r/sync", "errors", "samples", "ewma_ms", "ejections", "out_ms"};

/* Text columns are left-aligned, numbers right-aligned. */
static int col_left(int col) {
  return col == COL_ADDRESS || col == COL_ROLE || col == COL_SESSION || col == COL_POOL ||
         col == COL_WRITE || col == COL_OWNER;
}

typedef char cell_t[320];

static void member_cells(const zkr_member_stats_t *m, int i, cell_t *row) {
  snprintf(row[COL_INDEX], sizeof row[0], "%d", i);
  snprintf(row[COL_ADDRESS], sizeof row[0], "%s", m->address);
  snprintf(row[COL_ROLE], sizeof row[0], "%s%s", zkr_role_name(m->role),
           m->removed ? ",removed" : "");
  if (m->zxid >= 0) snprintf(row[COL_ZXID], sizeof row[0], "0x%llx", (unsigned long long)m->zxid);
  else snprintf(row[COL_ZXID], sizeof row[0], "-");
  snprintf(row[COL_SESSION], sizeof row[0], "%s", zkr_state_name(m->session_state));
  snprintf(row[COL_POOL], sizeof row[0], "%s", m->in_read_pool ? "yes" : "no");
  snprintf(row[COL_WRITE], sizeof row[0], "%s", m->is_write_session ? "*" : "");
  snprintf(row[COL_READS], sizeof row[0], "%llu", (unsigned long long)m->reads);
  snprintf(row[COL_WRITES], sizeof row[0], "%llu", (unsigned long long)m->writes);
  snprintf(row[COL_OWNER], sizeof row[0], "%s", m->is_owner ? "*" : "");
  snprintf(row[COL_SYNCS], sizeof row[0], "%llu", (unsigned long long)m->syncs);
  if (m->syncs)
    snprintf(row[COL_PERSYNC], sizeof row[0], "%.1f", (double)m->reads / (double)m->syncs);
  else snprintf(row[COL_PERSYNC], sizeof row[0], "-");
  snprintf(row[COL_ERRORS], sizeof row[0], "%llu", (unsigned long long)m->errors);
  snprintf(row[COL_SAMPLES], sizeof row[0], "%llu", (unsigned long long)m->samples);
  if (m->ewma_ms >= 0) snprintf(row[COL_EWMA], sizeof row[0], "%.2f", m->ewma_ms);
  else snprintf(row[COL_EWMA], sizeof row[0], "-");
  snprintf(row[COL_EJECTIONS], sizeof row[0], "%llu", (unsigned long long)m->ejections);
  snprintf(row[COL_OUT], sizeof row[0], "%.0f", m->out_of_pool_ms);
}

static void print_row(FILE *f, const char *const *cells, const int *width) {
  for (int c = 0; c < N_COLS; c++) {
    const char *sep = c + 1 < N_COLS ? "  " : "";
    if (col_left(c) && c + 1 < N_COLS) fprintf(f, "%-*s%s", width[c], cells[c], sep);
    else fprintf(f, "%*s%s", width[c], cells[c], sep);
  }
  fputc('\n', f);
}

static void print_table(FILE *f, zkr_t *z, const zkr_stats_t *s) {
  int n = s->n_members, width[N_COLS];
  cell_t *cells = calloc((size_t)(n > 0 ? n : 1) * N_COLS, sizeof(cell_t));
  if (!cells) {
    fail("status", ZKR_ENOMEM);
    return;
  }
  for (int c = 0; c < N_COLS; c++) width[c] = (int)strlen(col_head[c]);
  for (int i = 0; i < n; i++) {
    member_cells(&s->members[i], i, &cells[i * N_COLS]);
    for (int c = 0; c < N_COLS; c++) {
      int w = (int)strlen(cells[i * N_COLS + c]);
      if (w > width[c]) width[c] = w;
    }
  }
  print_row(f, col_head, width);
  for (int i = 0; i < n; i++) {
    const char *row[N_COLS];
    for (int c = 0; c < N_COLS; c++) row[c] = cells[i * N_COLS + c];
    print_row(f, row, width);
  }
  free(cells);
  if (s->leader >= 0 && s->leader < n)
    fprintf(f, "leader: %d (%s)", s->leader, s->members[s->leader].address);
  else fprintf(f, "leader: unknown");
  fprintf(f, "  policy: %s  leader changes: %llu  session: %s\n", zkr_policy_name(s->policy),
          (unsigned long long)s->leader_changes, zkr_state_name(zkr_state(z)));
  if (s->owner >= 0)
    fprintf(f, "owner session: 0x%llx on member %d%s  rescues: %llu  watches: %d (lost %d)\n",
            (unsigned long long)s->owner_session_id, s->owner,
            s->owner_moved ? " (re-attached)" : "", (unsigned long long)s->owner_rescues,
            s->watches, s->watches_lost);
  else fprintf(f, "owner session: not chosen yet\n");
  if (s->hedging)
    fprintf(f,
            "hedging: on  delay: %.2f ms  eligible: %llu  sent: %llu  won: %llu"
            "  capped: %llu  no member: %llu  discarded: %llu\n",
            s->hedge_delay_ms, (unsigned long long)s->hedge_eligible,
            (unsigned long long)s->hedges_sent, (unsigned long long)s->hedges_won,
            (unsigned long long)s->hedges_capped, (unsigned long long)s->hedges_no_member,
            (unsigned long long)s->hedge_discarded);
  else fprintf(f, "hedging: off\n");
  /* Membership (docs/membership.md): only when there is something to say. */
  if (s->follows_config == 1 || s->members_added || s->members_removed)
    fprintf(f, "membership: follows /zookeeper/config version 0x%llx  added: %llu  removed: %llu\n",
            (unsigned long long)s->config_version, (unsigned long long)s->members_added,
            (unsigned long long)s->members_removed);
  else if (s->follows_config == -1)
    fprintf(f, "membership: /zookeeper/config names other addresses: not followed\n");
}

/* The library's statistics JSON (docs/stats.md) with one key of the
 * command's own in front: "ready". */
static int print_json(FILE *f, zkr_t *z, int ready) {
  char *js = NULL;
  int rc = zkr_stats_json(z, &js);
  if (rc != ZOK) return fail("stats", rc);
  fprintf(f, "{\"ready\":%s,%s\n", ready ? "true" : "false", js + 1);
  free(js);
  return EXIT_SUCCESS;
}

/* The library's Prometheus text (docs/stats.md), as the metrics endpoint
 * serves it. */
static int print_prometheus(FILE *f, zkr_t *z) {
  char *text = NULL;
  int rc = zkr_stats_prometheus(z, &text);
  if (rc != ZOK) return fail("stats", rc);
  fputs(text, f);
  free(text);
  return EXIT_SUCCESS;
}

/* Prints the report to f; ready says whether the wait succeeded. */
static int report(FILE *f, zkr_t *z, int json, int ready) {
  if (json == 2) return print_prometheus(f, z);
  if (json) return print_json(f, z, ready);
  zkr_stats_t *s = NULL;
  int rc = zkr_stats(z, &s);
  if (rc != ZOK) return fail("stats", rc);
  print_table(f, z, s);
  zkr_stats_free(s);
  return EXIT_SUCCESS;
}

/* ---- connecting ---- */

static int leader_known(zkr_t *z) {
  zkr_stats_t *s = NULL;
  if (zkr_stats(z, &s) != ZOK) return 0;
  int known = s->leader >= 0;
  zkr_stats_free(s);
  return known;
}

/* Polls every POLL_MS until the virtual session is connected (and, when
 * asked, the leader is known).  Returns ZOK, ZINVALIDSTATE if the session
 * can never connect, or ZOPERATIONTIMEOUT. */
static int wait_ready(zkr_t *z, int timeout_ms, int need_leader) {
  double deadline = now_ms() + timeout_ms;
  for (;;) {
    int state = zkr_state(z);
    if (state == ZOO_EXPIRED_SESSION_STATE || state == ZOO_AUTH_FAILED_STATE) return ZINVALIDSTATE;
    if (state == ZOO_CONNECTED_STATE && (!need_leader || leader_known(z))) return ZOK;
    if (now_ms() >= deadline) return ZOPERATIONTIMEOUT;
    sleep_ms(POLL_MS);
  }
}

static void wait_failed(zkr_t *z, int rc, int timeout_ms, int need_leader) {
  if (rc == ZOPERATIONTIMEOUT)
    fprintf(stderr, "zkroute: not ready after %d ms (session %s%s): %s (%s)\n", timeout_ms,
            zkr_state_name(zkr_state(z)),
            !need_leader      ? ""
            : leader_known(z) ? ", leader known"
                              : ", leader unknown",
            zkr_strerror(rc), zkr_err_name(rc));
  else
    fprintf(stderr, "zkroute: session %s: %s (%s)\n", zkr_state_name(zkr_state(z)),
            zkr_strerror(rc), zkr_err_name(rc));
}

/* ---- subcommands ---- */

static int cmd_status(zkr_t *z, const cli_t *c) {
  int rc = wait_ready(z, c->timeout_ms, 1);
  if (rc != ZOK) wait_failed(z, rc, c->timeout_ms, 1);
  int exit_code = rc == ZOK ? EXIT_SUCCESS : EXIT_FAILURE;
  for (int i = 0; rc == ZOK && i < c->ops; i++) {
    struct Stat st;
    int prc = zkr_exists(z, "/", 0, &st);
    if (prc != ZOK) {
      fprintf(stderr, "zkroute: probe %d of %d: %s (%s)\n", i + 1, c->ops, zkr_strerror(prc),
              zkr_err_name(prc));
      exit_code = EXIT_FAILURE;
      break;
    }
  }
  int format = c->used & F_PROMETHEUS ? 2 : (c->used & F_JSON) != 0;
  if (report(stdout, z, format, rc == ZOK) != EXIT_SUCCESS) return EXIT_FAILURE;
  return exit_code;
}

static int cmd_get(zkr_t *z, const cli_t *c) {
  const char *path = c->args[2];
  char *buf = malloc(GET_BUFFER);
  if (!buf) return fail("get", ZKR_ENOMEM);
  int len = GET_BUFFER;
  struct Stat st;
  memset(&st, 0, sizeof st);
  int rc = zkr_get(z, path, 0, buf, &len, &st);
  int out = EXIT_SUCCESS;
  if (rc != ZOK) {
    out = fail(path, rc);
  } else if (len > GET_BUFFER || st.dataLength > (len < 0 ? 0 : len)) {
    fprintf(stderr, "zkroute: %s: value is %d bytes, only %d received\n", path, st.dataLength, len);
    out = EXIT_FAILURE;
  } else {
    if (len > 0) fwrite(buf, 1, (size_t)len, stdout);
    fputc('\n', stdout);
  }
  free(buf);
  return out;
}

static int value_len(const char *value) {
  size_t n = strlen(value);
  return n > INT_MAX ? INT_MAX : (int)n;
}

static int cmd_set(zkr_t *z, const cli_t *c) {
  const char *value = c->args[3];
  int rc = zkr_set(z, c->args[2], value, value_len(value), c->version);
  return rc == ZOK ? EXIT_SUCCESS : fail(c->args[2], rc);
}

static int create_mode(unsigned used) {
  int eph = (used & F_EPHEMERAL) != 0, seq = (used & F_SEQUENTIAL) != 0;
  if (eph) return seq ? ZOO_EPHEMERAL_SEQUENTIAL : ZOO_EPHEMERAL;
  return seq ? ZOO_PERSISTENT_SEQUENTIAL : ZOO_PERSISTENT;
}

static int cmd_create(zkr_t *z, const cli_t *c) {
  const char *path = c->args[2];
  const char *value = c->nargs > 3 ? c->args[3] : NULL;
  size_t cap = strlen(path) + 32; /* room for a sequence suffix */
  char *created = malloc(cap);
  if (!created) return fail("create", ZKR_ENOMEM);
  int rc = zkr_create(z, path, value, value ? value_len(value) : -1, &ZOO_OPEN_ACL_UNSAFE,
                      create_mode(c->used), created, (int)cap);
  if (rc == ZOK) printf("%s\n", created);
  free(created);
  return rc == ZOK ? EXIT_SUCCESS : fail(path, rc);
}

static int cmd_delete(zkr_t *z, const cli_t *c) {
  int rc = zkr_delete(z, c->args[2], c->version);
  return rc == ZOK ? EXIT_SUCCESS : fail(c->args[2], rc);
}

static int cmp_str(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

static int cmd_ls(zkr_t *z, const cli_t *c) {
  struct String_vector kids = {0, NULL};
  int rc = zkr_get_children(z, c->args[2], 0, &kids);
  if (rc != ZOK) return fail(c->args[2], rc);
  if (kids.count > 0 && kids.data)
    qsort(kids.data, (size_t)kids.count, sizeof kids.data[0], cmp_str);
  for (int i = 0; i < kids.count; i++) printf("%s\n", kids.data[i]);
  deallocate_String_vector(&kids);
  return EXIT_SUCCESS;
}

/* Markdown table of every option; docs/options.md is generated from it. */
static int cmd_options(void) {
  puts("| option | default | meaning |");
  puts("| --- | --- | --- |");
  const char *name, *doc;
  for (int i = 0; zkr_option_info(i, &name, &doc, NULL) == ZOK; i++) {
    char text[64];
    zkr_option_default_text(i, text, sizeof text);
    printf("| `%s` | %s | ", name, text);
    for (const char *p = doc; *p; p++) {
      if (*p == '|') fputs("\\|", stdout);
      else putchar(*p);
    }
    puts(" |");
  }
  puts("");
  puts("Set with `-o key=value`; switches accept on/off, yes/no, true/false "
       "or 1/0.");
  return EXIT_SUCCESS;
}

/* Markdown table of every Prometheus metric (zkr_metric_info); the table
 * of docs/stats.md is generated from it. */
static int cmd_metrics(void) {
  puts("| metric | type | labels | JSON | meaning |");
  puts("| --- | --- | --- | --- | --- |");
  const char *name, *type, *labels, *json, *help;
  for (int i = 0; zkr_metric_info(i, &name, &type, &labels, &json, &help) == ZOK; i++)
    printf("| `%s` | %s | handle%s%s | `%s` | %s |\n", name, type, *labels ? "," : "", labels, json,
           help);
  return EXIT_SUCCESS;
}

/* ---- workload: the demo's routed read/write mix ---- */

#define WL_KEYS 50

typedef struct {
  zkr_t *z;
  int ops;
  double read_ratio;
  unsigned seed;
  int reads, writes, errors;
} worker_t;

static void *workload_thread(void *arg) {
  worker_t *w = arg;
  for (int i = 0; i < w->ops; i++) {
    char path[64], buf[64];
    int len = sizeof buf, rc;
    snprintf(path, sizeof path, "/zkroute-demo/k%02d", rand_r(&w->seed) % WL_KEYS);
    if (rand_r(&w->seed) < w->read_ratio * ((double)RAND_MAX + 1)) {
      rc = zkr_get(w->z, path, 0, buf, &len, NULL);
      w->reads++;
    } else {
      len = snprintf(buf, sizeof buf, "v%d", i);
      rc = zkr_set(w->z, path, buf, len, -1);
      w->writes++;
    }
    if (rc != ZOK) w->errors++;
  }
  return NULL;
}

/* Runs --ops operations (default 5000) from --threads threads (default 8),
 * a --read-ratio share of them reads (default 0.8), over 50 keys under
 * /zkroute-demo, then prints where they went. */
static int cmd_workload(zkr_t *z, const cli_t *c) {
  int rc = wait_ready(z, c->timeout_ms, 1);
  if (rc != ZOK) {
    wait_failed(z, rc, c->timeout_ms, 1);
    return EXIT_FAILURE;
  }
  rc = zkr_create(z, "/zkroute-demo", NULL, -1, &ZOO_OPEN_ACL_UNSAFE, 0, NULL, 0);
  if (rc != ZOK && rc != ZNODEEXISTS) return fail("create /zkroute-demo", rc);
  for (int k = 0; k < WL_KEYS; k++) {
    char path[64];
    snprintf(path, sizeof path, "/zkroute-demo/k%02d", k);
    rc = zkr_create(z, path, "", 0, &ZOO_OPEN_ACL_UNSAFE, 0, NULL, 0);
    if (rc != ZOK && rc != ZNODEEXISTS) return fail(path, rc);
  }
  int threads = c->used & F_THREADS ? c->threads : 8;
  int ops = c->used & F_OPS ? c->ops : 5000;
  double ratio = c->used & F_READ_RATIO ? c->read_ratio : 0.8;
  worker_t w[64];
  pthread_t th[64];
  double t0 = now_ms();
  for (int i = 0; i < threads; i++) {
    w[i] = (worker_t){.z = z,
                      .ops = ops / threads + (i < ops % threads),
                      .read_ratio = ratio,
                      .seed = (unsigned)i * 7919u + 1};
    pthread_create(&th[i], NULL, workload_thread, &w[i]);
  }
  int reads = 0, writes = 0, errors = 0;
  for (int i = 0; i < threads; i++) {
    pthread_join(th[i], NULL);
    reads += w[i].reads;
    writes += w[i].writes;
    errors += w[i].errors;
  }
  double secs = (now_ms() - t0) / 1000.0;
  printf("%d operations (%d reads, %d writes) from %d threads in %.2f s "
         "(%.0f ops/s), %d errors\n\n",
         reads + writes, reads, writes, threads, secs, secs > 0 ? (reads + writes) / secs : 0.0,
         errors);
  report(stdout, z, 0, 1);
  return errors ? EXIT_FAILURE : EXIT_SUCCESS;
}

/* A live table of the members, from this handle (docs/cli.md); --metrics
 * needs no handle and is run from main. */
static int cmd_top(zkr_t *z, const cli_t *c) {
  int rc = wait_ready(z, c->timeout_ms, 1);
  if (rc != ZOK) wait_failed(z, rc, c->timeout_ms, 1);
  return tool_top(z, NULL, c->count) ? EXIT_FAILURE : EXIT_SUCCESS;
}

static const cmd_t commands[] = {
    {"status", 1, 1, F_OPS | F_JSON | F_PROMETHEUS, 1, cmd_status},
    {"get", 2, 2, F_STATS, 0, cmd_get},
    {"set", 3, 3, F_STATS | F_VERSION, 0, cmd_set},
    {"create", 2, 3, F_STATS | F_EPHEMERAL | F_SEQUENTIAL, 0, cmd_create},
    {"delete", 2, 2, F_STATS | F_VERSION, 0, cmd_delete},
    {"ls", 2, 2, F_STATS, 0, cmd_ls},
    {"workload", 1, 1, F_OPS | F_THREADS | F_READ_RATIO, 1, cmd_workload},
    {"top", 0, 1, F_COUNT | F_METRICS, 1, cmd_top},
};

/* ---- argument parsing ---- */

enum {
  OPT_TIMEOUT = 256,
  OPT_STATS,
  OPT_JSON,
  OPT_OPS,
  OPT_EPHEMERAL,
  OPT_SEQUENTIAL,
  OPT_VERSION,
  OPT_THREADS,
  OPT_READ_RATIO,
  OPT_PROMETHEUS,
  OPT_COUNT,
  OPT_METRICS
};

static const struct option long_opts[] = {
    {"timeout", required_argument, NULL, OPT_TIMEOUT},
    {"stats", no_argument, NULL, OPT_STATS},
    {"json", no_argument, NULL, OPT_JSON},
    {"ops", required_argument, NULL, OPT_OPS},
    {"ephemeral", no_argument, NULL, OPT_EPHEMERAL},
    {"sequential", no_argument, NULL, OPT_SEQUENTIAL},
    {"version", required_argument, NULL, OPT_VERSION},
    {"threads", required_argument, NULL, OPT_THREADS},
    {"read-ratio", required_argument, NULL, OPT_READ_RATIO},
    {"prometheus", no_argument, NULL, OPT_PROMETHEUS},
    {"count", required_argument, NULL, OPT_COUNT},
    {"metrics", required_argument, NULL, OPT_METRICS},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
};

/* Applies "-o key=value"; prints the error itself. */
static int apply_option(cli_t *c, const char *kv) {
  char key[128];
  const char *eq = strchr(kv, '=');
  int rc = ZKR_EOPTION; /* also for a key too long to be an option */
  if (eq && (size_t)(eq - kv) < sizeof key) {
    memcpy(key, kv, (size_t)(eq - kv));
    key[eq - kv] = '\0';
    rc = zkr_options_set(&c->opts, key, eq + 1);
  }
  if (rc == ZOK) return 1;
  if (!eq) fprintf(stderr, "zkroute: option '%s': expected KEY=VALUE\n", kv);
  else fprintf(stderr, "zkroute: option '%s': %s\n", kv, zkr_strerror(rc));
  return 0;
}

static int number_arg(const char *name, const char *text, long min, long max, int *out) {
  if (parse_int(text, min, max, out)) return 1;
  usage_error("%s: '%s' is not an integer from %ld to %ld", name, text, min, max);
  return 0;
}

/* Handles one option; returns 0 to go on, else the exit code. */
static int parse_one(cli_t *c, int opt) {
  switch (opt) {
  case 'o': return apply_option(c, optarg) ? 0 : EXIT_USAGE;
  case 'v': c->verbose++; return 0;
  case 'h': fputs(usage_text, stdout); return -1;
  case OPT_TIMEOUT:
    return number_arg("--timeout", optarg, 1, 86400000, &c->timeout_ms) ? 0 : EXIT_USAGE;
  case OPT_OPS:
    c->used |= F_OPS;
    return number_arg("--ops", optarg, 0, 100000000, &c->ops) ? 0 : EXIT_USAGE;
  case OPT_VERSION:
    c->used |= F_VERSION;
    return number_arg("--version", optarg, -1, INT_MAX, &c->version) ? 0 : EXIT_USAGE;
  case OPT_THREADS:
    c->used |= F_THREADS;
    return number_arg("--threads", optarg, 1, 64, &c->threads) ? 0 : EXIT_USAGE;
  case OPT_READ_RATIO: {
    char *end;
    c->used |= F_READ_RATIO;
    c->read_ratio = strtod(optarg, &end);
    if (end != optarg && *end == '\0' && c->read_ratio >= 0 && c->read_ratio <= 1) return 0;
    usage_error("--read-ratio: '%s' is not a number from 0 to 1", optarg);
    return EXIT_USAGE;
  }
  case OPT_STATS: c->used |= F_STATS; return 0;
  case OPT_JSON: c->used |= F_JSON; return 0;
  case OPT_PROMETHEUS: c->used |= F_PROMETHEUS; return 0;
  case OPT_COUNT:
    c->used |= F_COUNT;
    return number_arg("--count", optarg, 0, 100000000, &c->count) ? 0 : EXIT_USAGE;
  case OPT_METRICS:
    c->used |= F_METRICS;
    c->url = optarg;
    return 0;
  case OPT_EPHEMERAL: c->used |= F_EPHEMERAL; return 0;
  case OPT_SEQUENTIAL: c->used |= F_SEQUENTIAL; return 0;
  default: usage_error(NULL); return EXIT_USAGE;
  }
}

/* Returns 0 when c is filled, -1 after --help, else the exit code. */
static int parse_args(cli_t *c, int argc, char **argv) {
  int opt;
  opterr = 1;
  argv[0] = (char *)"zkroute"; /* getopt's messages name argv[0] */
  while ((opt = getopt_long(argc, argv, "o:vh", long_opts, NULL)) != -1) {
    int rc = parse_one(c, opt);
    if (rc != 0) return rc;
  }
  c->args = argv + optind;
  c->nargs = argc - optind;
  if (c->nargs == 0) {
    usage_error("no subcommand");
    return EXIT_USAGE;
  }
  return 0;
}

/* Indexed by the bit number of the F_* flags. */
static const char *const flag_names[] = {"--ops",        "--json",  "--ephemeral", "--sequential",
                                         "--version",    "--stats", "--threads",   "--read-ratio",
                                         "--prometheus", "--count", "--metrics"};

static const cmd_t *find_command(const cli_t *c) {
  for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
    if (strcmp(commands[i].name, c->args[0]) == 0) return &commands[i];
  return NULL;
}

/* Checks operand count and flags against the subcommand. */
static int check_command(const cmd_t *cmd, const cli_t *c) {
  int n = c->nargs - 1;
  if (n < cmd->min_args || n > cmd->max_args) {
    if (cmd->max_args > cmd->min_args)
      usage_error("%s: expected %d or %d operands, got %d", cmd->name, cmd->min_args, cmd->max_args,
                  n);
    else
      usage_error("%s: expected %d operand%s, got %d", cmd->name, cmd->min_args,
                  cmd->min_args == 1 ? "" : "s", n);
    return 0;
  }
  int n_flags = (int)(sizeof flag_names / sizeof flag_names[0]);
  for (int b = 0; b < n_flags; b++) {
    if ((c->used & (1u << b)) && !(cmd->flags & (1u << b))) {
      usage_error("%s does not take %s", cmd->name, flag_names[b]);
      return 0;
    }
  }
  return 1;
}

static void set_zk_log(int verbose) {
  static const ZooLogLevel levels[] = {ZOO_LOG_LEVEL_ERROR, ZOO_LOG_LEVEL_WARN, ZOO_LOG_LEVEL_INFO,
                                       ZOO_LOG_LEVEL_DEBUG};
  /* Level 0 turns ZooKeeper's log off: a CLI's stderr is for its own
   * messages unless the user asks. */
  if (verbose <= 0) zoo_set_debug_level((ZooLogLevel)0);
  else zoo_set_debug_level(levels[verbose > 4 ? 3 : verbose - 1]);
}

/* A failed write to stdout is a failure; a reader that went away (EPIPE,
 * `| head`) is not worth a message, as with the usual tools. */
static int finish_stdout(int out) {
  if (fflush(stdout) == 0 && !ferror(stdout)) return out;
  if (errno != EPIPE) fprintf(stderr, "zkroute: stdout: %s\n", strerror(errno));
  return EXIT_FAILURE;
}

/* Creates the handle, runs the subcommand, prints --stats, closes. */
static int run(const cmd_t *cmd, cli_t *c) {
  zkr_t *z = NULL;
  int rc = zkr_init_opts(&z, c->args[1], NULL, RECV_TIMEOUT_MS, NULL, NULL, 0, &c->opts);
  if (rc != ZOK) {
    char what[400];
    snprintf(what, sizeof what, "host list '%.300s'", c->args[1]);
    return fail(what, rc);
  }
  int out;
  if (cmd->own_wait) {
    out = cmd->run(z, c);
  } else if ((rc = wait_ready(z, c->timeout_ms, 0)) != ZOK) {
    wait_failed(z, rc, c->timeout_ms, 0);
    out = EXIT_FAILURE;
  } else {
    out = cmd->run(z, c);
  }
  if (c->used & F_STATS) report(stderr, z, 0, 1);
  zkr_close(z);
  return finish_stdout(out);
}

int main(int argc, char **argv) {
  cli_t c = {.opts = ZKR_OPTIONS_INIT, .timeout_ms = DEFAULT_TIMEOUT_MS, .version = -1};
  int rc = parse_args(&c, argc, argv);
  if (rc != 0) return rc < 0 ? EXIT_SUCCESS : rc;
  if (strcmp(c.args[0], "options") == 0) {
    if (c.nargs != 1 || c.used) {
      usage_error("options takes no operands or flags");
      return EXIT_USAGE;
    }
    return finish_stdout(cmd_options());
  }
  if (strcmp(c.args[0], "metrics") == 0) {
    if (c.nargs != 1 || c.used) {
      usage_error("metrics takes no operands or flags");
      return EXIT_USAGE;
    }
    return finish_stdout(cmd_metrics());
  }
  const cmd_t *cmd = find_command(&c);
  if (!cmd) {
    usage_error("unknown subcommand '%s'", c.args[0]);
    return EXIT_USAGE;
  }
  if (!check_command(cmd, &c)) return EXIT_USAGE;
  if ((c.used & F_JSON) && (c.used & F_PROMETHEUS)) {
    usage_error("--json and --prometheus exclude each other");
    return EXIT_USAGE;
  }
  if (cmd->run == cmd_top && (c.nargs == 2) == ((c.used & F_METRICS) != 0)) {
    usage_error("top: expected HOSTS, or --metrics URL");
    return EXIT_USAGE;
  }
  if (cmd->run == cmd_top && (c.used & F_METRICS)) {
    signal(SIGPIPE, SIG_IGN);
    return finish_stdout(tool_top(NULL, c.url, c.count) ? EXIT_FAILURE : EXIT_SUCCESS);
  }
  set_zk_log(c.verbose);
  /* Without this a closed pipe would kill us before zkr_close. */
  signal(SIGPIPE, SIG_IGN);
  return run(cmd, &c);
}
