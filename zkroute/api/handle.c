/* A handle's life: zkr_init_opts builds it (options, host list, member
 * slots and the owner slot, the delivery thread, the monitor's and the
 * hedger's turns on the process's ticker, one session per member), zkr_close takes it down so that every outstanding
 * completion fires exactly once, and destroy frees it once no call is
 * inside it any more (zkr__registry_*). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core/auth.h"
#include "core/deliver.h"
#include "route/dispatch.h"
#include "core/handle.h"
#include "route/pool.h"
#include "route/hedger.h"
#include "model/inflight.h"
#include "core/latency.h"
#include "session/membership.h"
#include "api/metrics.h"
#include "session/monitor.h"
#include "model/options.h"
#include "core/registry.h"
#include "session/rescue.h"
#include "route/router.h"
#include "core/runtime.h"
#include "core/selector.h"
#include "core/ticker.h"
#include "session/session.h"
#include "core/watch.h"
#include "zk/zkapi.h"

/* The drop-in layer's (registered once, as the library loads): zkr_close
 * tells it of every close, above the handle without calling up. */
static void (*close_hook)(zkr_t *z, int phase);

void zkr__handle_set_close_hook(void (*hook)(zkr_t *z, int phase)) { close_hook = hook; }

/* The handle's background turns, for the ticker (calls go down). */
static const zkr__ticker_turns_t turns = {.monitor = zkr__monitor_step, .hedger = zkr__hedger_step};

static void destroy(zkr_t *z) {
  /* Lookups fail from here on, and calls still inside have left. */
  if (z->reg_slot >= 0) zkr__registry_remove(z->reg_slot, z);
  zkr__pages_free(z->latency, (z->cap + 1) * sizeof *z->latency);
  for (size_t i = 0; z->members && i <= z->cap; i++) {
    if (!z->members[i].z) continue; /* never filled */
    pthread_rwlock_destroy(&z->members[i].zh_lock);
    pthread_mutex_destroy(&z->members[i].health_mu);
    pthread_mutex_destroy(&z->members[i].co_mu);
    free(z->members[i].connect);
  }
  zkr__pages_free(z->members, (z->cap + 1) * sizeof *z->members);
  zkr__membership_free(z);
  zkr__watch_rearm_free_all(z);
  zkr__watch_free_all(z);
  zkr__auth_free_all(z);
  zkr__inflight_free(z->inflight);
  zkr__hedger_free(z);
  zkr__deliver_free(z);
  zkr__hosts_free(&z->hosts);
  pthread_mutex_destroy(&z->ctx_mu);
  pthread_mutex_destroy(&z->state_mu);
  pthread_mutex_destroy(&z->gate_mu);
  pthread_mutex_destroy(&z->auth_mu);
  pthread_mutex_destroy(&z->ans_mu);
  pthread_mutex_destroy(&z->watch_mu);
  pthread_mutex_destroy(&z->out_mu);
  pthread_mutex_destroy(&z->order_mu);
  pthread_mutex_destroy(&z->mon_mu);
  pthread_rwlock_destroy(&z->sel_lock);
  free(z);
}

static void close_now(zkr_t *z) {
  zkr__metrics_leave(z);            /* off the endpoint, which stops with the last */
  if (close_hook) close_hook(z, 0); /* e.g. a statistics record, while still whole */
  z->closing = 1;
  zkr__monitor_stop(z);
  zkr__ticker_remove(z);      /* no turn runs from here on */
  zkr__rescue_mover_close(z); /* the monitor's, stopped now */
  /* No hedge is sent from here on; reads still waiting for theirs complete
   * with their first request (ZCLOSING at the latest). */
  zkr__hedger_stop(z);
  /* Parked operations never reached a server: ZCLOSING now - after the
   * gated ones in flight, which were issued before them (zkr__router_*). */
  zkr__router_gate_flush(z);
  for (size_t i = 0; z->members && i <= z->cap; i++)
    if (z->members[i].z) zkr__member_close(&z->members[i]);
  /* No ZooKeeper thread runs any more: what zookeeper_close dropped gets
   * its ZCLOSING here, and nothing can have parked since (closing refuses);
   * the credentials' answers queued meanwhile are applied. */
  zkr__dispatch_complete_abandoned(z);
  zkr__auth_tick(z);
  zkr__watch_release_all_held(z);
  zkr__watch_remove_dropped(z, NULL);
  zkr__router_gate_close(z);
  /* Every completion is queued: the delivery thread runs them, then ends. */
  zkr__deliver_stop(z);
  if (close_hook) close_hook(z, 1); /* no callback can run any more */
  destroy(z);
}

static void *close_thread(void *arg) {
  close_now(arg);
  return NULL;
}

static void close_deferred(void *arg) { close_now(arg); }

int zkr_close(zkr_t *z) {
  int slot = zkr__registry_hold(z);
  if (slot < 0) return slot;
  /* One close per handle: a second one, while the first runs, is told so
   * (ZKR_ECLOSED once the first finished: the registry no longer has it). */
  int again = atomic_exchange(&z->closing, 1);
  zkr__registry_unhold(slot);
  if (again) return ZKR_ECLOSING;
  if (zkr__delivering == z && zkr__rt->stepped) {
    /* The same under a stepped runtime: the close is a world event. */
    zkr__rt->defer(close_deferred, z);
    return ZOK;
  }
  if (zkr__delivering == z) {
    /* From one of its own callbacks: the delivery thread must finish the
     * callbacks queued behind this one before it can end, so the close
     * runs on a thread of its own, which joins it. */
    pthread_t t;
    pthread_attr_t at;
    pthread_attr_init(&at);
    pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
    int rc = pthread_create(&t, &at, close_thread, z);
    pthread_attr_destroy(&at);
    return rc == 0 ? ZOK : ZKR_ETHREAD;
  }
  close_now(z);
  return ZOK;
}

int zkr_init_opts(zkr_t **out, const char *host, watcher_fn fn, int recv_timeout,
                  const clientid_t *clientid, void *context, int flags, const zkr_options_t *opts) {
  if (!out || !host) return ZBADARGUMENTS;
  *out = NULL;
  zkr_t *z = calloc(1, sizeof *z);
  if (!z) return ZKR_ENOMEM;
  /* The upper layers' callbacks, before anything can call them. */
  z->session_hooks = &zkr__session_hooks;
  z->route_hooks = &zkr__router_hooks;
  pthread_mutex_init(&z->ctx_mu, NULL);
  pthread_mutex_init(&z->state_mu, NULL);
  pthread_mutex_init(&z->gate_mu, NULL);
  pthread_mutex_init(&z->auth_mu, NULL);
  pthread_mutex_init(&z->ans_mu, NULL);
  pthread_mutex_init(&z->watch_mu, NULL);
  pthread_mutex_init(&z->out_mu, NULL);
  pthread_mutex_init(&z->order_mu, NULL);
  z->ord_head = 1; /* nothing listed */
  pthread_mutex_init(&z->mon_mu, NULL);
  pthread_rwlock_init(&z->sel_lock, NULL);
  if ((z->reg_slot = zkr__registry_add(z)) < 0) {
    destroy(z);
    return ZKR_ENOMEM;
  }
  z->init_ns = zkr__now_ns();
  z->serial = zkr__metrics_serial();
  z->leader = -1;
  z->last_leader = -1;
  z->gate_cur = -1;
  z->owner = -1;
  z->session_reader = -1;
  z->vstate = ZOO_CONNECTING_STATE;
  z->watcher = fn;
  z->context = context;
  z->recv_timeout = recv_timeout > 0 ? recv_timeout : 10000;
  z->flags = flags;
  int rc = zkr__options_resolve(opts, &z->opts);
  if (rc == ZOK) rc = zkr__hosts_parse(host, &z->hosts);
  /* One member per address a name resolves to, as stock (zkr__resolve_*). */
  if (rc == ZOK) rc = zkr__hosts_expand(&z->hosts, zkr__zk->resolve);
  if (rc == ZOK && !(z->inflight = zkr__inflight_new())) rc = ZKR_ENOMEM;
  /* Member slots, then the owner slot.  Members can be added later (by
   * /zookeeper/config or zkr_set_servers, zkr__membership_*), and no slot may
   * ever move: every slot up to ZKR_MAX_MEMBERS is allocated now, but a slot
   * is written only when a member fills it (zkr__member_setup), so the
   * pages of slots never used stay untouched (an idle fleet's memory). */
  if (rc == ZOK) {
    z->cap = ZKR_MAX_MEMBERS;
    if (!(z->members = zkr__pages_zalloc((z->cap + 1) * sizeof *z->members))) rc = ZKR_ENOMEM;
  }
  if (rc == ZOK) zkr__member_slot_init(z, z->cap);
  if (rc == ZOK) rc = zkr__latency_new(z);
  if (rc == ZOK) rc = zkr__membership_new(z);
  if (rc != ZOK) {
    destroy(z);
    return rc;
  }
  if (z->opts.seed == 0) z->opts.seed = (int)(zkr__now_ns() & 0x7fffffff);
  zkr__pool_cfg(&z->hcfg, &z->opts);
  z->rescue_ms = z->opts.rescue_ms > 0 ? z->opts.rescue_ms : z->recv_timeout / 3;
  z->n = z->hosts.n;
  unsigned seed = (unsigned)z->opts.seed;
  z->sticky = rand_r(&seed) % (int)z->n;
  /* A clientid to resume: the owner is the session that resumes it, on a
   * member drawn as the sticky policy draws one (stock's host order is
   * random too), and the application learns if it is gone (EXPIRED). */
  int resume_on = -1;
  if (clientid && clientid->client_id != 0) {
    resume_on = z->sticky;
    z->resume = 1;
    z->owner_id = *clientid;
    z->owner = resume_on;
  }
  for (size_t i = 0; rc == ZOK && i < z->n; i++) rc = zkr__member_setup(z, i, &z->hosts.v[i]);
  if (rc == ZOK) rc = zkr__deliver_start(z);
  if (rc == ZOK) rc = zkr__hedger_new(z);
  if (rc == ZOK) rc = zkr__selector_init(z);
  /* The monitor's and the hedger's turns: the process's ticker runs them
   * (a stepped runtime's driver instead). */
  if (rc == ZOK && !zkr__rt->stepped) rc = zkr__ticker_add(z, &turns);
  /* The connect string's members only: the monitor, already running, may
   * admit more (z->n grows) and opens those itself. */
  for (size_t i = 0; rc == ZOK && i < z->hosts.n; i++)
    rc = zkr__member_open(&z->members[i], (int)i, (int)i == resume_on ? clientid : NULL);
  if (rc != ZOK) {
    close_now(z);
    return rc;
  }
  zkr__metrics_join(z); /* the metrics option: listed on the endpoint */
  *out = z;
  return ZOK;
}

zkr_t *zkr_init(const char *host, watcher_fn fn, int recv_timeout, const clientid_t *clientid,
                void *context, int flags) {
  zkr_t *z;
  int rc = zkr_init_opts(&z, host, fn, recv_timeout, clientid, context, flags, NULL);
  if (rc == ZOK) return z;
  errno = rc == ZKR_ENOMEM ? ENOMEM : rc == ZKR_EINIT || rc == ZKR_ETHREAD ? EAGAIN : EINVAL;
  return NULL;
}
