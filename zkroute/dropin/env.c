/* Configuration from the environment (docs/dropin.md): ZKROUTE,
 * ZKROUTE_<OPTION> for every option of the options table, ZKROUTE_STATS and
 * ZKROUTE_VERBOSE, read once per process.  A bad value is reported in one
 * stderr line and replaced by its default: a program run under zkroute must
 * never fail because of a typo in its environment.  Also zkr_init_env(),
 * the compat header's constructor and its list of plain handles
 * (zkr_compat_init: ZKROUTE=off gives real libzookeeper_mt handles), the
 * locks' fork handling, and the ZKROUTE_STATS records,
 * written when a handle closes (zkr_close calls the close hook this file
 * registers)
 * or, for handles still open, when the process that created them exits
 * (a forked child's exit writes only its own handles'). */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/time.h>
#include <unistd.h>

#include "dropin/env.h"
#include "api/stats.h"
#include "core/handle.h"
#include "core/log.h"
#include "model/options.h"

extern char **environ;

void (*zkr__env_destroy_hook)(zkr_t *z);

/* ---- reading the environment ---- */

static zkr__env_t env;
static pthread_once_t env_once = PTHREAD_ONCE_INIT;

/* "leader_poll_ms" -> "ZKROUTE_LEADER_POLL_MS". */
static void var_name(const char *option, char *out, size_t len) {
  size_t n = (size_t)snprintf(out, len, "ZKROUTE_");
  for (; *option && n + 1 < len; option++) out[n++] = (char)toupper((unsigned char)*option);
  out[n] = '\0';
}

static int is_option_var(const char *var, size_t len) {
  const char *name;
  char known[96];
  for (int i = 0; zkr_option_info(i, &name, NULL, NULL) == ZOK; i++) {
    var_name(name, known, sizeof known);
    if (strlen(known) == len && !strncmp(known, var, len)) return 1;
  }
  return 0;
}

static void env_read(void) {
  zkr_options_t o = ZKR_OPTIONS_INIT;
  env.opts = o;
  const char *v = getenv("ZKROUTE");
  if (v && *v) {
    int w = zkr__options_switch_word(v);
    if (w < 0) env.off = 1;
    else if (w == 0) zkr__log_note("ignoring ZKROUTE=%s: expected on or off; routing stays on", v);
  }
  v = getenv("ZKROUTE_VERBOSE");
  if (v && *v) {
    int w = zkr__options_switch_word(v);
    if (w > 0) env.verbose = 1;
    else if (w == 0) zkr__log_note("ignoring ZKROUTE_VERBOSE=%s: expected on or off", v);
  }
  v = getenv("ZKROUTE_STATS");
  if (v && *v && !(env.stats = strdup(v)))
    zkr__log_note("ZKROUTE_STATS: out of memory; no statistics will be written");

  const char *name, *doc;
  double def;
  for (int i = 0; zkr_option_info(i, &name, &doc, &def) == ZOK; i++) {
    char var[96];
    var_name(name, var, sizeof var);
    v = getenv(var);
    if (!v || !*v) continue; /* unset or empty: the default */
    if (zkr_options_set(&env.opts, name, v) != ZOK) {
      char d[64];
      zkr_option_default_text(i, d, sizeof d);
      zkr__log_note("ignoring %s=%s: not a valid %s (%s); using the default, %s", var, v, name, doc,
                    d);
    }
  }

  /* A misspelt variable would otherwise be ignored in silence. */
  for (char **e = environ; e && *e; e++) {
    if (strncmp(*e, "ZKROUTE_", 8) != 0) continue;
    const char *eq = strchr(*e, '=');
    size_t len = eq ? (size_t)(eq - *e) : strlen(*e);
    static const char *const extra[] = {"ZKROUTE_STATS", "ZKROUTE_VERBOSE", "ZKROUTE_PRELOAD"};
    int known = is_option_var(*e, len);
    for (size_t k = 0; !known && k < sizeof extra / sizeof extra[0]; k++)
      known = strlen(extra[k]) == len && !strncmp(extra[k], *e, len);
    if (!known)
      zkr__log_note("ignoring unknown variable %.*s (the variables are listed in "
                    "docs/dropin.md and by `zkroute options`)",
                    (int)len, *e);
  }
}

const zkr__env_t *zkr__env(void) {
  pthread_once(&env_once, env_read);
  return &env;
}

/* ---- ZKROUTE_STATS records ---- */

typedef struct stats_rec {
  struct stats_rec *next;
  zkr_t *z;
  char *hosts;
  unsigned seq;
  pid_t pid; /* the process that created the handle: only it writes */
} stats_rec_t;

static pthread_mutex_t rec_mu = PTHREAD_MUTEX_INITIALIZER;
static stats_rec_t *recs;
static _Atomic int n_recs;
static unsigned rec_seq;
static int exit_registered;
static _Atomic int write_failed;

static void write_record(zkr_t *z, const stats_rec_t *r, const char *reason) {
  char *js = NULL;
  if (zkr_stats_json(z, &js) != ZOK) return;
  struct timeval tv;
  gettimeofday(&tv, NULL);
  zkr__sb_t b = {0};
  zkr__stats_json_printf(&b, "{\"schema\":1,\"pid\":%d,\"program\":", (int)getpid());
  zkr__stats_json_str(&b, program_invocation_short_name);
  zkr__stats_json_printf(&b, ",\"handle\":%u,\"hosts\":", r->seq);
  zkr__stats_json_str(&b, r->hosts);
  zkr__stats_json_printf(&b, ",\"reason\":\"%s\",\"unix_ms\":%lld,\"stats\":%s}\n", reason,
                         (long long)tv.tv_sec * 1000 + tv.tv_usec / 1000, js);
  free(js);
  if (b.oom) {
    free(b.p);
    return;
  }
  /* One write in append mode: records of several processes sharing the
   * file do not interleave. */
  int fd = open(env.stats, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  ssize_t w = fd >= 0 ? write(fd, b.p, b.len) : -1;
  int err = errno;
  if (fd >= 0) close(fd);
  if (w != (ssize_t)b.len && !atomic_exchange(&write_failed, 1))
    zkr__log_note("ZKROUTE_STATS=%s: cannot write: %s", env.stats, strerror(err));
  free(b.p);
}

static void rec_free(stats_rec_t *r) {
  free(r->hosts);
  free(r);
}

/* Handles still open at exit: their statistics so far.  The handles are
 * not closed (the process is going away, as with the stock client).  Only
 * the process that created a handle writes its record: a forked child
 * that exits has the parent's handles in memory, not their threads. */
static void at_exit(void) {
  pthread_mutex_lock(&rec_mu);
  stats_rec_t *list = recs;
  recs = NULL;
  n_recs = 0;
  pthread_mutex_unlock(&rec_mu);
  pid_t self = getpid();
  while (list) {
    stats_rec_t *n = list->next;
    if (list->pid == self) write_record(list->z, list, "exit");
    rec_free(list);
    list = n;
  }
}

/* ---- the compat header's plain handles (ZKROUTE=off) ---- */

static pthread_mutex_t plain_mu = PTHREAD_MUTEX_INITIALIZER;
static zhandle_t **plain;
static size_t plain_cap;
static _Atomic size_t plain_n; /* read without the lock: 0, nothing to look up */

/* fork(): rec_mu and plain_mu are taken around it, so that a child never
 * starts with one held by a thread it does not have; the child drops the
 * parent's records (its own handles get new ones).  Registered once per
 * process. */
static void rec_prefork(void) {
  pthread_mutex_lock(&rec_mu);
  pthread_mutex_lock(&plain_mu);
}
static void rec_parent(void) {
  pthread_mutex_unlock(&plain_mu);
  pthread_mutex_unlock(&rec_mu);
}
static void rec_child(void) {
  stats_rec_t *list = recs;
  pthread_mutex_t fresh = PTHREAD_MUTEX_INITIALIZER;
  recs = NULL;
  n_recs = 0;
  /* Locked by the parent's thread, not by this one. */
  rec_mu = fresh;
  plain_mu = fresh;
  while (list) {
    stats_rec_t *n = list->next;
    rec_free(list);
    list = n;
  }
}

static void track(zkr_t *z, const char *host) {
  stats_rec_t *r = calloc(1, sizeof *r);
  if (!r || !(r->hosts = strdup(host))) {
    free(r);
    zkr__log_note("ZKROUTE_STATS: out of memory; this handle's statistics will not be written");
    return;
  }
  r->z = z;
  r->pid = getpid();
  pthread_mutex_lock(&rec_mu);
  r->seq = ++rec_seq;
  r->next = recs;
  recs = r;
  n_recs++;
  if (!exit_registered) exit_registered = atexit(at_exit) == 0;
  pthread_mutex_unlock(&rec_mu);
}

/* zkr_close's close hook (zkr__handle_set_close_hook): phase 0 when the
 * close starts (the handle is still whole: its record is written), phase
 * 1 after the last callback, just before the handle is freed. */
static void on_close(zkr_t *z, int phase) {
  if (phase == 1) {
    if (zkr__env_destroy_hook) zkr__env_destroy_hook(z);
    return;
  }
  if (n_recs == 0) return;
  pthread_mutex_lock(&rec_mu);
  stats_rec_t **pp = &recs, *r = NULL;
  while (*pp && (*pp)->z != z) pp = &(*pp)->next;
  if (*pp) {
    r = *pp;
    *pp = r->next;
    n_recs--;
  }
  pthread_mutex_unlock(&rec_mu);
  if (r) {
    write_record(z, r, "close");
    rec_free(r);
  }
}

/* Once per process, as the library loads: the fork handling, and the close
 * hook (before any handle exists, so that every close calls it). */
__attribute__((constructor)) static void env_setup(void) {
  pthread_atfork(rec_prefork, rec_parent, rec_child);
  zkr__handle_set_close_hook(on_close);
}

/* ---- creating handles ---- */

int zkr__env_create(zkr_t **out, const char *host, watcher_fn fn, int recv_timeout,
                    const clientid_t *clientid, void *context, int flags,
                    const zkr_options_t *opts) {
  const zkr__env_t *e = zkr__env();
  int rc = zkr_init_opts(out, host, fn, recv_timeout, clientid, context, flags, opts);
  if (rc != ZOK) return rc;
  if (e->stats) track(*out, host);
  if (e->verbose) {
    zkr_stats_t *s;
    if (zkr_stats(*out, &s) == ZOK) {
      zkr__log_note("routing %s: %d members, policy %s", host, s->n_members,
                    zkr_policy_name(s->policy));
      zkr_stats_free(s);
    }
  }
  return ZOK;
}

zkr_t *zkr_init_env(const char *host, watcher_fn fn, int recv_timeout, const clientid_t *clientid,
                    void *context, int flags) {
  const zkr__env_t *e = zkr__env();
  zkr_options_t o = e->opts;
  if (e->off) {
    /* A zkr_t must come back: the closest thing to no zkroute is what the
     * stock client does, one session for everything.  (The compat header
     * bypasses zkroute truly: zkr_compat_init.) */
    static _Atomic int told;
    if (!atomic_exchange(&told, 1))
      zkr__log_note("ZKROUTE=off: zkr_init_env() returns a routed handle all "
                    "the same; using policy sticky and consistency local, one "
                    "session for every operation as the stock client does");
    o.policy = ZKR_POLICY_STICKY;
    o.consistency = ZKR_CONSISTENCY_LOCAL;
  }
  zkr_t *z;
  int rc = zkr__env_create(&z, host, fn, recv_timeout, clientid, context, flags, &o);
  if (rc == ZOK) return z;
  errno = rc == ZKR_ENOMEM ? ENOMEM : rc == ZKR_EINIT || rc == ZKR_ETHREAD ? EAGAIN : EINVAL;
  return NULL;
}

/* ---- the compat header ---- */

zhandle_t *zkr_compat_init(const char *host, watcher_fn fn, int recv_timeout,
                           const clientid_t *clientid, void *context, int flags,
                           log_callback_fn log_callback) {
  const zkr__env_t *e = zkr__env();
  if (!e->off) return zkr_as_zh(zkr_init_env(host, fn, recv_timeout, clientid, context, flags));
  /* ZKROUTE=off: the stock client itself.  The table's init is the real
   * zookeeper_init, but the log callback needs zookeeper_init2. */
  pthread_mutex_lock(&plain_mu);
  if (plain_n == plain_cap) {
    size_t cap = plain_cap ? 2 * plain_cap : 8;
    zhandle_t **v = realloc(plain, cap * sizeof *v);
    if (!v) {
      pthread_mutex_unlock(&plain_mu);
      errno = ENOMEM;
      return NULL;
    }
    plain = v;
    plain_cap = cap;
  }
  zhandle_t *zh = zookeeper_init2(host, fn, recv_timeout, clientid, context, flags, log_callback);
  int err = errno;
  if (zh) {
    plain[plain_n] = zh;
    atomic_store(&plain_n, plain_n + 1);
  }
  pthread_mutex_unlock(&plain_mu);
  if (e->verbose)
    zkr__log_note("not routing %s: ZKROUTE=off; using the stock client", host ? host : "(null)");
  errno = err;
  return zh;
}

/* Takes zh out of the plain handles: 1 if it was one. */
static int plain_take(zhandle_t *zh, int remove) {
  int found = 0;
  pthread_mutex_lock(&plain_mu);
  size_t n = plain_n;
  for (size_t i = 0; i < n && !found; i++) {
    if (plain[i] != zh) continue;
    found = 1;
    if (remove) {
      plain[i] = plain[n - 1];
      atomic_store(&plain_n, n - 1);
    }
  }
  pthread_mutex_unlock(&plain_mu);
  return found;
}

zkr_t *zkr_compat_routed(zhandle_t *zh) {
  if (atomic_load_explicit(&plain_n, memory_order_acquire) == 0 || !plain_take(zh, 0))
    return zkr_from_zh(zh);
  return NULL;
}

int zkr_compat_close(zhandle_t *zh) {
  /* Out of the list before the real close frees it: a routed handle later
   * allocated at the same address is never taken for it. */
  if (zh && atomic_load(&plain_n) > 0 && plain_take(zh, 1)) return zookeeper_close(zh);
  return zkr_close(zkr_from_zh(zh));
}
