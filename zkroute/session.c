/* The virtual session (DESIGN.md section 4): creating and closing a handle,
 * the one state and stream of session events the application sees,
 * credentials recorded and replayed on every member session, and the
 * session-level calls (context, watcher, client id, timeout). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* ---- callbacks ---- */

/* The application's callbacks of one handle run one at a time, as with a
 * stock session, whose single completion thread runs them all: programs
 * rely on it (shared state without locks, output that must not
 * interleave).  Here each member session has its own completion thread, so
 * a recursive lock serialises them; recursive because a callback may call
 * zkr_ functions that complete something at once.  It also marks the
 * thread as inside a callback (ZKR_EINCALLBACK for blocking calls). */
void zkr__callback_enter(zkr_t *z) {
  pthread_mutex_lock(&z->cb_mu);
  zkr__in_callback++;
}

void zkr__callback_leave(zkr_t *z) {
  zkr__in_callback--;
  pthread_mutex_unlock(&z->cb_mu);
}

/* ---- state ---- */

static int derive_state(zkr_t *z) {
  if (z->expired) return ZOO_EXPIRED_SESSION_STATE;
  if (z->auth_failed) return ZOO_AUTH_FAILED_STATE;
  for (size_t i = 0; i < z->n; i++)
    if (zkr__member_usable(&z->members[i])) return ZOO_CONNECTED_STATE;
  return ZOO_CONNECTING_STATE;
}

/* Recomputes the virtual state and tells the global watcher about a change,
 * once, with the application's handle.  state_mu serialises transitions so
 * the watcher sees them in order. */
void zkr__session_update(zkr_t *z) {
  pthread_mutex_lock(&z->state_mu);
  int s = derive_state(z);
  int changed = s != z->vstate;
  z->vstate = s;
  if (changed && !z->closing) {
    pthread_mutex_lock(&z->ctx_mu);
    watcher_fn fn = z->watcher;
    void *ctx = z->context;
    pthread_mutex_unlock(&z->ctx_mu);
    if (fn) {
      zkr__callback_enter(z);
      fn(zkr_as_zh(z), ZOO_SESSION_EVENT, s, "", ctx);
      zkr__callback_leave(z);
    }
  }
  pthread_mutex_unlock(&z->state_mu);
}

/* The session-level calls below enter through the registry (registry.c)
 * too: on NULL or a closed handle they return what they return for NULL. */

static int state_held(zkr_t *z) { return z->vstate; }

int zkr_state(zkr_t *z) {
  int slot = zkr__hold(z);
  if (slot < 0) return 0;
  int s = state_held(z);
  zkr__unhold(slot);
  return s;
}

static int unrecoverable_held(zkr_t *z) {
  return z->expired || z->auth_failed || z->closing ? ZINVALIDSTATE : ZOK;
}

int zkr_is_unrecoverable(zkr_t *z) {
  int slot = zkr__hold(z);
  if (slot < 0) return slot == ZBADARGUMENTS ? slot : ZINVALIDSTATE;
  int rc = unrecoverable_held(z);
  zkr__unhold(slot);
  return rc;
}

zkr_t *zkr_from_zh(zhandle_t *zh) { return (zkr_t *)zh; }
zhandle_t *zkr_as_zh(zkr_t *z) { return (zhandle_t *)z; }

/* ---- auth ---- */

struct zkr__auth {
  struct zkr__auth *next;
  char *scheme;
  char *cert;
  int len;
};

/* One zkr_add_auth call: the application's completion fires once, when
 * every member that was usable at the time has answered. */
typedef struct {
  zkr_t *z;
  _Atomic int waiting;
  _Atomic int rc;
  void_completion_t cb;
  const void *data;
} auth_call_t;

typedef struct {
  zkr__member_t *m;
  auth_call_t *call; /* NULL: a replay, nobody waits */
} auth_reply_t;

static void auth_call_release(auth_call_t *call, int rc) {
  if (rc != ZOK) {
    int expect = ZOK;
    atomic_compare_exchange_strong(&call->rc, &expect, rc);
  }
  if (--call->waiting > 0) return;
  if (call->cb) {
    zkr__callback_enter(call->z);
    call->cb(call->rc, call->data);
    zkr__callback_leave(call->z);
  }
  free(call);
}

static void auth_done(int rc, const void *data) {
  auth_reply_t *r = (auth_reply_t *)data;
  zkr__member_t *m = r->m;
  auth_call_t *call = r->call;
  free(r);
  m->auth_pending--;
  zkr__member_maybe_join(m);
  if (call) auth_call_release(call, rc);
}

/* Sends one credential to member m.  Returns ZOK or zoo_add_auth's error. */
static int send_auth(zkr__member_t *m, const struct zkr__auth *a,
                     auth_call_t *call) {
  auth_reply_t *r = malloc(sizeof *r);
  if (!r) return ZKR_ENOMEM;
  r->m = m;
  r->call = call;
  m->auth_pending++;
  pthread_rwlock_rdlock(&m->zh_lock);
  int rc = m->zh ? zkr__zk->add_auth(m->zh, a->scheme, a->cert, a->len, auth_done, r)
                 : ZINVALIDSTATE;
  pthread_rwlock_unlock(&m->zh_lock);
  if (rc != ZOK) {
    m->auth_pending--;
    free(r);
  }
  return rc;
}

void zkr__auth_replay(zkr__member_t *m) {
  zkr_t *z = m->z;
  pthread_mutex_lock(&z->auth_mu);
  for (struct zkr__auth *a = z->auths; a; a = a->next) send_auth(m, a, NULL);
  pthread_mutex_unlock(&z->auth_mu);
}

void zkr__auth_free_all(zkr_t *z) {
  for (struct zkr__auth *a = z->auths, *n; a; a = n) {
    n = a->next;
    /* Credentials are wiped before their memory goes back to malloc. */
    if (a->cert) memset(a->cert, 0, (size_t)a->len);
    free(a->scheme);
    free(a->cert);
    free(a);
  }
  z->auths = NULL;
}

static int add_auth_held(zkr_t *z, const char *scheme, const char *cert,
                         int certLen, void_completion_t completion,
                         const void *data) {
  if (!scheme || certLen < 0 || (certLen > 0 && !cert)) return ZBADARGUMENTS;
  if (unrecoverable_held(z) != ZOK) return ZINVALIDSTATE;
  struct zkr__auth *a = calloc(1, sizeof *a);
  auth_call_t *call = calloc(1, sizeof *call);
  if (!a || !call || !(a->scheme = strdup(scheme)) ||
      !(a->cert = malloc(certLen > 0 ? (size_t)certLen : 1))) {
    if (a) free(a->scheme);
    free(a);
    free(call);
    return ZKR_ENOMEM;
  }
  if (certLen > 0) memcpy(a->cert, cert, (size_t)certLen);
  a->len = certLen;
  call->z = z;
  call->cb = completion;
  call->data = data;
  call->rc = ZOK;
  /* The extra count keeps the call alive until every send was attempted. */
  call->waiting = 1;
  pthread_mutex_lock(&z->auth_mu);
  a->next = z->auths;
  z->auths = a;
  for (size_t i = 0; i < z->n; i++) {
    zkr__member_t *m = &z->members[i];
    int usable = zkr__member_usable(m);
    if (usable) call->waiting++;
    if (send_auth(m, a, usable ? call : NULL) != ZOK && usable) call->waiting--;
  }
  pthread_mutex_unlock(&z->auth_mu);
  auth_call_release(call, ZOK);
  return ZOK;
}

int zkr_add_auth(zkr_t *z, const char *scheme, const char *cert, int certLen,
                 void_completion_t completion, const void *data) {
  ZKR__HELD(z, add_auth_held(z, scheme, cert, certLen, completion, data));
}

/* ---- context and watcher ---- */

const void *zkr_get_context(zkr_t *z) {
  int slot = zkr__hold(z);
  if (slot < 0) return NULL;
  pthread_mutex_lock(&z->ctx_mu);
  void *c = z->context;
  pthread_mutex_unlock(&z->ctx_mu);
  zkr__unhold(slot);
  return c;
}

void zkr_set_context(zkr_t *z, void *context) {
  int slot = zkr__hold(z);
  if (slot < 0) return;
  pthread_mutex_lock(&z->ctx_mu);
  z->context = context;
  pthread_mutex_unlock(&z->ctx_mu);
  zkr__unhold(slot);
}

watcher_fn zkr_set_watcher(zkr_t *z, watcher_fn fn) {
  int slot = zkr__hold(z);
  if (slot < 0) return NULL;
  pthread_mutex_lock(&z->ctx_mu);
  watcher_fn old = z->watcher;
  z->watcher = fn;
  pthread_mutex_unlock(&z->ctx_mu);
  zkr__unhold(slot);
  return old;
}

/* The write session's: that is where ephemeral nodes live. */
const clientid_t *zkr_client_id(zkr_t *z) {
  int slot = zkr__hold(z);
  if (slot < 0) return NULL;
  int w = zkr__gate_current(z), l = z->leader;
  if (w < 0 && l >= 0 && zkr__member_usable(&z->members[l])) w = l;
  /* No write session yet (the first CONNECTED event comes as soon as any
   * member connects): a connected member's id, not an unconnected one's 0,
   * which a program saving its session id would keep. */
  for (size_t i = 0; w < 0 && i < z->n; i++)
    if (zkr__member_usable(&z->members[i])) w = (int)i;
  if (w < 0) w = 0;
  zkr__member_t *m = &z->members[w];
  pthread_rwlock_rdlock(&m->zh_lock);
  const clientid_t *id = m->zh ? zkr__zk->client_id(m->zh) : NULL;
  pthread_rwlock_unlock(&m->zh_lock);
  zkr__unhold(slot);
  return id;
}

static int recv_timeout_held(zkr_t *z) {
  int w = zkr__gate_current(z);
  if (w < 0) w = 0;
  zkr__member_t *m = &z->members[w];
  pthread_rwlock_rdlock(&m->zh_lock);
  int t = m->zh && m->state == ZOO_CONNECTED_STATE ? zkr__zk->recv_timeout(m->zh)
                                                    : z->recv_timeout;
  pthread_rwlock_unlock(&m->zh_lock);
  return t;
}

int zkr_recv_timeout(zkr_t *z) { ZKR__HELD(z, recv_timeout_held(z)); }

/* ---- create and close ---- */

static void destroy(zkr_t *z) {
  /* Lookups fail from here on, and calls still inside have left. */
  if (z->reg_slot >= 0) zkr__registry_remove(z->reg_slot, z);
  for (size_t i = 0; z->members && i < 2 * z->cap; i++) {
    pthread_rwlock_destroy(&z->members[i].zh_lock);
    pthread_mutex_destroy(&z->members[i].health_mu);
    free(z->members[i].connect);
  }
  free(z->members);
  zkr__membership_free(z);
  zkr__watch_free_all(z);
  zkr__auth_free_all(z);
  zkr__inflight_free(z->inflight);
  zkr__hedger_free(z);
  zkr__hosts_free(&z->hosts);
  pthread_mutex_destroy(&z->ctx_mu);
  pthread_mutex_destroy(&z->state_mu);
  pthread_mutex_destroy(&z->gate_mu);
  pthread_mutex_destroy(&z->auth_mu);
  pthread_mutex_destroy(&z->watch_mu);
  pthread_mutex_destroy(&z->out_mu);
  pthread_mutex_destroy(&z->cb_mu);
  pthread_mutex_destroy(&z->mon_mu);
  pthread_cond_destroy(&z->mon_cv);
  pthread_rwlock_destroy(&z->sel_lock);
  free(z);
}

static void close_now(zkr_t *z) {
  zkr__env_close_hook(z, 0); /* ZKROUTE_STATS record, while still whole */
  z->closing = 1;
  zkr__monitor_stop(z);
  /* No hedge is sent from here on; reads still waiting for theirs complete
   * with their first request (ZCLOSING at the latest). */
  zkr__hedger_stop(z);
  /* Parked operations never reached a server: ZCLOSING now. */
  zkr__gate_flush(z);
  for (size_t i = 0; i < z->n; i++) {
    zkr__member_close(&z->members[i]);
    zkr__member_close(&z->members[z->cap + i]);
  }
  /* No ZooKeeper thread runs any more: what zookeeper_close dropped gets
   * its ZCLOSING here, and nothing can have parked since (closing refuses). */
  zkr__op_complete_abandoned(z);
  zkr__gate_flush(z);
  zkr__env_close_hook(z, 1); /* no callback can run any more */
  destroy(z);
}

static void *close_thread(void *arg) {
  close_now(arg);
  return NULL;
}

int zkr_close(zkr_t *z) {
  int slot = zkr__hold(z);
  if (slot < 0) return slot;
  /* One close per handle: a second one, while the first runs, is told so
   * (ZKR_ECLOSED once the first finished: the registry no longer has it). */
  int again = atomic_exchange(&z->closing, 1);
  zkr__unhold(slot);
  if (again) return ZKR_ECLOSING;
  if (zkr__in_callback) {
    /* Inside a callback this thread is one of a member's completion
     * threads, which zookeeper_close must join: hand the close to a thread
     * of its own that finishes after this callback returns. */
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

int zkr_init_opts(zkr_t **out, const char *host, watcher_fn fn,
                  int recv_timeout, const clientid_t *clientid, void *context,
                  int flags, const zkr_options_t *opts) {
  if (!out || !host) return ZBADARGUMENTS;
  *out = NULL;
  zkr_t *z = calloc(1, sizeof *z);
  if (!z) return ZKR_ENOMEM;
  pthread_mutex_init(&z->ctx_mu, NULL);
  pthread_mutex_init(&z->state_mu, NULL);
  pthread_mutex_init(&z->gate_mu, NULL);
  pthread_mutex_init(&z->auth_mu, NULL);
  pthread_mutex_init(&z->watch_mu, NULL);
  pthread_mutex_init(&z->out_mu, NULL);
  pthread_mutexattr_t ra;
  pthread_mutexattr_init(&ra);
  pthread_mutexattr_settype(&ra, PTHREAD_MUTEX_RECURSIVE);
  pthread_mutex_init(&z->cb_mu, &ra);
  pthread_mutexattr_destroy(&ra);
  pthread_mutex_init(&z->mon_mu, NULL);
  pthread_rwlock_init(&z->sel_lock, NULL);
  if ((z->reg_slot = zkr__registry_add(z)) < 0) {
    destroy(z);
    return ZKR_ENOMEM;
  }
  z->leader = -1;
  z->last_leader = -1;
  z->gate_cur = -1;
  z->vstate = ZOO_CONNECTING_STATE;
  z->watcher = fn;
  z->context = context;
  z->recv_timeout = recv_timeout > 0 ? recv_timeout : 10000;
  z->flags = flags;
  int rc = zkr__options_resolve(opts, &z->opts);
  if (rc == ZOK) rc = zkr__hosts_parse(host, &z->hosts);
  if (rc == ZOK && !(z->inflight = zkr__inflight_new())) rc = ZKR_ENOMEM;
  /* Member slots, then as many keeper slots (member.c, zkr__member_keep).
   * Following /zookeeper/config needs room for members added later
   * (membership.c): then every slot up to ZKR_MAX_MEMBERS is made now. */
  if (rc == ZOK) {
    z->cap = z->opts.follow_config == 1 ? ZKR_MAX_MEMBERS : z->hosts.n;
    if (!(z->members = calloc(2 * z->cap, sizeof *z->members))) rc = ZKR_ENOMEM;
  }
  for (size_t i = 0; rc == ZOK && i < 2 * z->cap; i++) {
    zkr__member_t *m = &z->members[i];
    m->z = z;
    m->index = (int)i;
    m->keeper = i >= z->cap;
    m->server_id = -1;
    pthread_rwlock_init(&m->zh_lock, NULL);
    pthread_mutex_init(&m->health_mu, NULL);
  }
  if (rc == ZOK) rc = zkr__membership_new(z);
  if (rc != ZOK) {
    destroy(z);
    return rc;
  }
  if (z->opts.seed == 0) z->opts.seed = (int)(zkr__now_ns() & 0x7fffffff);
  zkr__health_cfg_from_options(&z->hcfg, &z->opts);
  z->rescue_ms = z->opts.rescue_ms > 0 ? z->opts.rescue_ms : z->recv_timeout / 3;
  z->n = z->hosts.n;
  unsigned seed = (unsigned)z->opts.seed;
  z->sticky = rand_r(&seed) % (int)z->n;
  for (size_t i = 0; rc == ZOK && i < z->n; i++)
    rc = zkr__member_setup(z, i, &z->hosts.v[i]);
  if (rc == ZOK) rc = zkr__hedger_new(z);
  if (rc == ZOK) rc = zkr__selector_init(z);
  if (rc == ZOK) rc = zkr__monitor_start(z);
  for (size_t i = 0; rc == ZOK && i < z->n; i++)
    rc = zkr__member_open(&z->members[i], (int)i, i == 0 ? clientid : NULL);
  if (rc != ZOK) {
    close_now(z);
    return rc;
  }
  *out = z;
  return ZOK;
}

zkr_t *zkr_init(const char *host, watcher_fn fn, int recv_timeout,
                const clientid_t *clientid, void *context, int flags) {
  zkr_t *z;
  int rc = zkr_init_opts(&z, host, fn, recv_timeout, clientid, context, flags, NULL);
  if (rc == ZOK) return z;
  errno = rc == ZKR_ENOMEM ? ENOMEM
          : rc == ZKR_EINIT || rc == ZKR_ETHREAD ? EAGAIN
                                                 : EINVAL;
  return NULL;
}
