/* Routed mode: the library under test between the workload and the
 * simulated ensemble.  The simulated libzookeeper_mt (client.c) becomes the
 * library's function table (zkr__zkapi_use), the world's clock and loop its
 * runtime (zkr__runtime_use: stepped, no library thread), and the
 * workload's calls go to zkr_* through a table shaped like the zkapi one,
 * so the workload is the same in both modes.  After every world event the
 * driver steps each open zkr_t (zkr__runtime_step) and wakes it again at the time
 * it asks for. */
#include "routed.h"

#include <stdlib.h>
#include <string.h>

#include "core/runtime.h"
#include "sim.h"
#include "zk/zkapi.h"
#include "zkroute.h"
#include "workload.h"

#define MAXZ 32

static zkr_t *open_z[MAXZ];
static uint64_t wake_at[MAXZ];
static int nz;
static uint64_t clock_base;
static int stepping;

static uint64_t now_ns(void) { return clock_base + sim_w->now; }

/* The blocking calls waiting, outermost first: each task runs on this one
 * C stack, so a call made while another waits nests inside its wait. */
typedef struct frame {
  void *arg;
  int (*done)(void *arg);
  int op; /* the workload's op (wl_take_blocking_op), -1 none or recorded */
} frame_t;

#define MAXF 64
static frame_t frames[MAXF];
static int nframes;

static void run_until(void *arg, int (*done)(void *arg)) {
  /* A blocking zkr_ call: the world runs (and steps the library) until
   * its reply came.  An outer call answered meanwhile cannot return
   * before this one: its completion is recorded now, when a thread of
   * its own would have returned (seeds 22770 and 25999: a call answered
   * ZOK before the session's AUTH_FAILED returned after it). */
  int op = wl_take_blocking_op();
  int me = nframes < MAXF ? nframes++ : -1;
  if (me >= 0) frames[me] = (frame_t){arg, done, op};
  while (!done(arg) && !sim_w->livelock && sim_step()) {
    for (int i = 0; i < me; i++)
      if (frames[i].op >= 0 && frames[i].done(frames[i].arg)) {
        wl_blocking_answered(frames[i].op);
        frames[i].op = -1;
      }
  }
  if (me >= 0) nframes--;
}

typedef struct deferred {
  void (*fn)(void *);
  void *arg;
} deferred_t;

static void defer_ev(void *a, uint64_t b) {
  (void)b;
  deferred_t d = *(deferred_t *)a;
  free(a);
  d.fn(d.arg);
}

static void defer(void (*fn)(void *), void *arg) {
  deferred_t *d = malloc(sizeof *d);
  d->fn = fn;
  d->arg = arg;
  sim_after_app(0, defer_ev, d, 0);
}

static const zkr__runtime_t rt = {
    .now_ns = now_ns, .stepped = 1, .run_until = run_until, .defer = defer};

static void wake_ev(void *a, uint64_t b) {
  (void)a, (void)b; /* the step after every event does the work */
}

/* After every world event: each open handle runs what is due. */
static void step_all(void) {
  if (stepping) return;
  stepping = 1;
  for (int i = 0; i < nz; i++) {
    zkr_t *z = open_z[i];
    if (!z) continue;
    uint64_t next = zkr__runtime_step(z);
    if (next != UINT64_MAX && i < nz && open_z[i] == z) {
      uint64_t t = next > clock_base ? next - clock_base : 0;
      if (t <= sim_w->now) t = sim_w->now + 1;
      if (wake_at[i] <= sim_w->now || t < wake_at[i]) {
        wake_at[i] = t;
        sim_after_app(t - sim_w->now, wake_ev, NULL, 0);
      }
    }
  }
  stepping = 0;
}

static zkr_t *Z(zhandle_t *zh) { return zkr_from_zh(zh); }

static int session_mode;   /* routed_begin's session */
static int idle_park_ms_v; /* ... and idle_park_ms */

static zhandle_t *r_zookeeper_init(const char *host, watcher_fn fn, int recv_timeout,
                                   const clientid_t *cid, void *ctx, int flags) {
  zkr_t *z = NULL;
  zkr_options_t o = ZKR_OPTIONS_INIT;
  if (session_mode) o.consistency = ZKR_CONSISTENCY_SESSION;
  o.idle_park_ms = idle_park_ms_v;
  if (zkr_init_opts(&z, host, fn, recv_timeout, cid, ctx, flags, &o) != ZOK || nz == MAXZ)
    return NULL;
  wake_at[nz] = 0;
  open_z[nz++] = z;
  return zkr_as_zh(z);
}

static int r_zookeeper_close(zhandle_t *zh) {
  zkr_t *z = Z(zh);
  for (int i = 0; i < nz; i++)
    if (open_z[i] == z) open_z[i] = NULL;
  return zkr_close(z);
}

static int r_zoo_state(zhandle_t *zh) { return zkr_state(Z(zh)); }

static const clientid_t *r_zoo_client_id(zhandle_t *zh) { return zkr_client_id(Z(zh)); }

static int r_zoo_add_auth(zhandle_t *zh, const char *scheme, const char *cert, int len,
                          void_completion_t c, const void *data) {
  return zkr_add_auth(Z(zh), scheme, cert, len, c, data);
}

static int r_zoo_acreate_ttl(zhandle_t *zh, const char *path, const char *value, int valuelen,
                             const struct ACL_vector *acl, int mode, int64_t ttl,
                             string_completion_t c, const void *data) {
  return zkr_acreate_ttl(Z(zh), path, value, valuelen, acl, mode, ttl, c, data);
}

static int r_zoo_acreate2_ttl(zhandle_t *zh, const char *path, const char *value, int valuelen,
                              const struct ACL_vector *acl, int mode, int64_t ttl,
                              string_stat_completion_t c, const void *data) {
  return zkr_acreate2_ttl(Z(zh), path, value, valuelen, acl, mode, ttl, c, data);
}

static int r_zoo_adelete(zhandle_t *zh, const char *path, int version, void_completion_t c,
                         const void *data) {
  return zkr_adelete(Z(zh), path, version, c, data);
}

static int r_zoo_aset(zhandle_t *zh, const char *path, const char *buf, int len, int version,
                      stat_completion_t c, const void *data) {
  return zkr_aset(Z(zh), path, buf, len, version, c, data);
}

static int r_zoo_aset_acl(zhandle_t *zh, const char *path, int version, struct ACL_vector *acl,
                          void_completion_t c, const void *data) {
  return zkr_aset_acl(Z(zh), path, version, acl, c, data);
}

static int r_zoo_amulti(zhandle_t *zh, int count, const zoo_op_t *ops, zoo_op_result_t *results,
                        void_completion_t c, const void *data) {
  return zkr_amulti(Z(zh), count, ops, results, c, data);
}

static int r_zoo_awexists(zhandle_t *zh, const char *path, watcher_fn w, void *wc,
                          stat_completion_t c, const void *data) {
  return zkr_awexists(Z(zh), path, w, wc, c, data);
}

static int r_zoo_awget(zhandle_t *zh, const char *path, watcher_fn w, void *wc, data_completion_t c,
                       const void *data) {
  return zkr_awget(Z(zh), path, w, wc, c, data);
}

static int r_zoo_awget_children2(zhandle_t *zh, const char *path, watcher_fn w, void *wc,
                                 strings_stat_completion_t c, const void *data) {
  return zkr_awget_children2(Z(zh), path, w, wc, c, data);
}

static int r_zoo_aget_acl(zhandle_t *zh, const char *path, acl_completion_t c, const void *data) {
  return zkr_aget_acl(Z(zh), path, c, data);
}

static int r_zoo_async(zhandle_t *zh, const char *path, string_completion_t c, const void *data) {
  return zkr_async(Z(zh), path, c, data);
}

static int r_zoo_aremove_watches(zhandle_t *zh, const char *path, ZooWatcherType t, watcher_fn w,
                                 void *wc, int local, void_completion_t *c, const void *data) {
  return zkr_aremove_watches(Z(zh), path, t, w, wc, local, (void_completion_t)c, data);
}

static int r_zoo_aremove_all_watches(zhandle_t *zh, const char *path, ZooWatcherType t, int local,
                                     void_completion_t *c, const void *data) {
  return zkr_aremove_all_watches(Z(zh), path, t, local, (void_completion_t)c, data);
}

static int b_get(zhandle_t *zh, const char *path, char *buf, int *len, struct Stat *st) {
  return zkr_get(Z(zh), path, 0, buf, len, st);
}

static int b_set(zhandle_t *zh, const char *path, const char *buf, int len, int version,
                 struct Stat *st) {
  return zkr_set2(Z(zh), path, buf, len, version, st);
}

static int b_exists(zhandle_t *zh, const char *path, struct Stat *st) {
  return zkr_exists(Z(zh), path, 0, st);
}

static const wl_blocking_t blocking = {b_get, b_set, b_exists};

const wl_blocking_t *routed_blocking(void) { return &blocking; }

/* Only the fields the workload calls. */
static const zkr__zk_t app = {
    .zookeeper_init = r_zookeeper_init,
    .zookeeper_close = r_zookeeper_close,
    .zoo_state = r_zoo_state,
    .zoo_client_id = r_zoo_client_id,
    .zoo_add_auth = r_zoo_add_auth,
    .zoo_acreate_ttl = r_zoo_acreate_ttl,
    .zoo_acreate2_ttl = r_zoo_acreate2_ttl,
    .zoo_adelete = r_zoo_adelete,
    .zoo_aset = r_zoo_aset,
    .zoo_aset_acl = r_zoo_aset_acl,
    .zoo_amulti = r_zoo_amulti,
    .zoo_awexists = r_zoo_awexists,
    .zoo_awget = r_zoo_awget,
    .zoo_awget_children2 = r_zoo_awget_children2,
    .zoo_aget_acl = r_zoo_aget_acl,
    .zoo_async = r_zoo_async,
    .zoo_aremove_watches = r_zoo_aremove_watches,
    .zoo_aremove_all_watches = r_zoo_aremove_all_watches,
};

const zkr__zk_t *routed_begin(int session, int idle_park_ms) {
  session_mode = session;
  idle_park_ms_v = idle_park_ms;
  nz = 0;
  memset(open_z, 0, sizeof open_z);
  /* The library's clock (CLOCK_MONOTONIC) counts from boot: an uptime of
   * 1 to 100,000 s, or, in 2 % of the schedules, 2 ms to 4 s - a service
   * started with its machine (a container or VM booted for it), where a
   * session timeout is longer than the clock has run.  One draw either
   * way, so the other draws of a seed stay as they were. */
  uint64_t up = sim_range(1, 100000);
  clock_base = up <= 2000 ? up * 2 * SIM_MS : up * 1000000000ULL;
  zkr__zkapi_use(cli_table());
  zkr__runtime_use(&rt);
  sim_after_event = step_all;
  return &app;
}

void routed_end(void) {
  for (int i = 0; i < nz; i++)
    if (open_z[i]) {
      zkr_close(open_z[i]);
      open_z[i] = NULL;
    }
  sim_after_event = NULL;
  zkr__runtime_use(NULL);
  zkr__zkapi_use(NULL);
}
