/* The virtual session (DESIGN.md section 4): the one session the
 * application holds.  It is the owner session - the first member session
 * established, the leader's if srvr named it in time, or the one resuming
 * a clientid passed to zkr_init - and everything the application sees of
 * a session follows it: the state and its transitions, delivered to the
 * global watcher and to every registered per-path watcher as stock does,
 * the client id, the negotiated timeout.  Every other member session is a
 * carrier, invisible here.
 *
 * One exception to "the state follows the owner": when a carrier's
 * connection loss fails operations of the application (ZCONNECTIONLOSS),
 * the state dips to CONNECTING before those completions and comes back to
 * CONNECTED after them, so that the application sees what a stock session
 * shows with each ZCONNECTIONLOSS: a connection was lost; what was in
 * flight has an unknown outcome.
 *
 * Also the session-level calls: state, client id, timeout, context and
 * global watcher. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/auth.h"
#include "core/deliver.h"
#include "core/handle.h"
#include "core/kick.h"
#include "core/policy.h"
#include "core/registry.h"
#include "session/rescue.h"
#include "route/router.h"
#include "session/session.h"
#include "core/watch.h"
#include "zk/zkapi.h"

/* ---- the owner ---- */

int zkr__session_owner(zkr_t *z) { return z->owner; }

/* Under state_mu, when a member session is established: the leader's
 * session if it is connected, else the first connected voter's, else any
 * connected member's.  Not waiting for the leader's session keeps the
 * state CONNECTED as soon as a stock handle's would be (its one session is
 * established); the leader's session is usually the first anyway, since
 * srvr answers before any session is created and a session is created
 * through the leader. */
static void choose_owner_locked(zkr_t *z) {
  if (z->owner >= 0) return;
  size_t n = z->n;
  int l = z->leader, pick = -1, voter = -1, any = -1;
  if (l >= 0 && zkr__member_connected(&z->members[l])) pick = l;
  for (size_t i = 0; pick < 0 && i < n; i++) {
    zkr__member_t *m = &z->members[i];
    if (!zkr__member_connected(m) || m->retired) continue;
    if (any < 0) any = (int)i;
    if (voter < 0 && !zkr__member_observer(m)) voter = (int)i;
  }
  if (pick < 0) pick = voter >= 0 ? voter : any;
  if (pick < 0) return;
  zkr__member_t *m = &z->members[pick];
  pthread_rwlock_rdlock(&m->zh_lock);
  const clientid_t *id = m->zh ? zkr__zk->zoo_client_id(m->zh) : NULL;
  if (id) z->owner_id = *id;
  pthread_rwlock_unlock(&m->zh_lock);
  z->owner = pick;
}

/* ---- state ---- */

static int derive_state(zkr_t *z) {
  /* Once ended, ended: no EXPIRED after AUTH_FAILED (stock's zhandle is
   * over at AUTH_FAILED, and reports no other state after it). */
  if (z->auth_first) return ZOO_AUTH_FAILED_STATE;
  if (z->expired) return ZOO_EXPIRED_SESSION_STATE;
  if (z->auth_failed) return ZOO_AUTH_FAILED_STATE;
  int o = z->owner;
  if (o >= 0 && zkr__member_connected(&z->members[o]))
    return z->dip || z->wdip ? ZOO_CONNECTING_STATE : ZOO_CONNECTED_STATE;
  /* No owner connected, but read-only servers answer (ZOO_READONLY, no
   * quorum): reads work, writes get ZNOTREADONLY, as stock. */
  if (zkr__policy_readonly_any(z)) return ZOO_READONLY_STATE;
  return ZOO_CONNECTING_STATE;
}

/* Recomputes the virtual state and delivers a change, once, to every
 * watcher.  state_mu serialises transitions so they are queued in order. */
void zkr__session_update(zkr_t *z) {
  int chosen = 0;
  pthread_mutex_lock(&z->state_mu);
  if (z->owner < 0) {
    choose_owner_locked(z);
    chosen = z->owner >= 0;
  }
  /* The watch dip: only once established (the first CONNECTED is the
   * owner's), and lock order allows watch_mu inside state_mu. */
  int blip = atomic_exchange(&z->wblip, 0);
  z->wdip = z->established && (blip || zkr__watch_unlive(z));
  int s = derive_state(z);
  int o = z->owner;
  if (o >= 0 && zkr__member_connected(&z->members[o])) z->owner_down_ns = 0;
  else if (z->established && !z->owner_down_ns) z->owner_down_ns = zkr__now_ns();
  int changed = s != z->vstate;
  z->vstate = s;
  if (changed && !z->closing) zkr__deliver_session(z, s);
  /* Established: the CONNECTED event is queued, the client id known;
   * operations may complete from now on (the router held them back). */
  int first = !z->established && (s == ZOO_CONNECTED_STATE || s == ZOO_READONLY_STATE);
  if (first) z->established = 1;
  pthread_mutex_unlock(&z->state_mu);
  if (first) chosen = 1;
  /* Session-scoped writes parked for an owner may go, and add_auth calls
   * waiting for the owner's answer may have it already: the monitor sees
   * to both (zkr__session_tick), since this may run where the write gate
   * is held. */
  if (chosen) zkr__kick_monitor(z);
}

/* How long after the last failure of a slot's lost connection its dip
 * ends, when operations sent to the slot since keep it from draining:
 * libzookeeper_mt fails everything pending on a connection at once, so
 * the failures of one loss come together. */
#define DIP_QUIET_MS 100

/* Called before a failed operation of the application is handed on.
 * Returns 1 when the operation counts in the slot's dip: the caller then
 * calls zkr__session_dip_check(z, slot, 1) once it handed it on. */
int zkr__session_dip(zkr_t *z, int slot) {
  if (slot < 0 || slot >= 64) return 0;
  uint64_t bit = (uint64_t)1 << slot;
  zkr__member_t *m = &z->members[slot];
  pthread_mutex_lock(&z->state_mu);
  int counted = 0, start = 0;
  if (z->dip & bit) {
    counted = 1;
  } else if (z->vstate == ZOO_CONNECTED_STATE) {
    atomic_fetch_or(&z->dip, bit);
    counted = start = 1;
  }
  if (counted) {
    m->dip_ns = zkr__now_ns();
    m->dip_pending++;
  }
  pthread_mutex_unlock(&z->state_mu);
  if (start) zkr__session_update(z);
  return counted;
}

/* After an operation of slot was handed on (counted: it was one of the
 * dip's failures), and at every monitor tick: the dip ends once every
 * failure it counted was handed on and nothing sent to the slot is left
 * in flight, or DIP_QUIET_MS after its last failure. */
void zkr__session_dip_check(zkr_t *z, int slot, int counted) {
  if (slot < 0 || slot >= 64) return;
  uint64_t bit = (uint64_t)1 << slot;
  zkr__member_t *m = &z->members[slot];
  pthread_mutex_lock(&z->state_mu);
  if (counted) m->dip_pending--;
  int end =
      (z->dip & bit) && m->dip_pending == 0 &&
      (m->outstanding == 0 || zkr__since(zkr__now_ns(), m->dip_ns) >= DIP_QUIET_MS * 1000000ull);
  if (end) atomic_fetch_and(&z->dip, ~bit);
  pthread_mutex_unlock(&z->state_mu);
  if (end) zkr__session_update(z);
}

/* The monitor's turn: an owner chosen by time (and what waited for one),
 * dips whose operations all completed, and every session closed once the
 * owner expired. */
void zkr__session_tick(zkr_t *z) {
  if (z->owner < 0) zkr__session_update(z);
  if (z->owner >= 0 && !z->owner_told) {
    z->owner_told = 1;
    zkr__auth_owner_known(z);
    zkr__router_gate_flush(z);
  }
  /* Operations held back until the session was established, or that can
   * never be sent now (expired, auth failed). */
  if ((z->established && !z->est_told) || z->expired || z->auth_failed) {
    z->est_told = z->established;
    zkr__router_gate_flush(z);
  }
  /* A watch dip ends when every watch is live again: re-armed elsewhere
   * or its member reconnected (SetWatches registered it again). */
  if (z->wdip) zkr__session_update(z);
  uint64_t dip = z->dip;
  for (int i = 0; dip && i < 64; i++)
    if (dip & ((uint64_t)1 << i)) zkr__session_dip_check(z, i, 0);
  if (z->expired && !z->carriers_closed) zkr__rescue_close_expired(z);
  /* Reads held for a watch's event that will not come any more (nothing
   * is delivered after EXPIRED or AUTH_FAILED). */
  if ((z->expired || z->auth_failed) && z->wf_count) zkr__watch_done(z, NULL);
}

/* The session-level calls below enter through the registry (zkr__registry_*)
 * too: on NULL or a closed handle they return what they return for NULL. */

int zkr_state(zkr_t *z) {
  int slot = zkr__registry_hold(z);
  if (slot < 0) return 0;
  int s = z->vstate;
  zkr__registry_unhold(slot);
  return s;
}

static int unrecoverable_held(zkr_t *z) {
  return z->expired || z->auth_failed || z->closing ? ZINVALIDSTATE : ZOK;
}

int zkr_is_unrecoverable(zkr_t *z) {
  int slot = zkr__registry_hold(z);
  if (slot < 0) return slot == ZBADARGUMENTS ? slot : ZINVALIDSTATE;
  int rc = unrecoverable_held(z);
  zkr__registry_unhold(slot);
  return rc;
}

zkr_t *zkr_from_zh(zhandle_t *zh) { return (zkr_t *)zh; }
zhandle_t *zkr_as_zh(zkr_t *z) { return (zhandle_t *)z; }

/* ---- context and watcher ---- */

const void *zkr_get_context(zkr_t *z) {
  int slot = zkr__registry_hold(z);
  if (slot < 0) return NULL;
  pthread_mutex_lock(&z->ctx_mu);
  void *c = z->context;
  pthread_mutex_unlock(&z->ctx_mu);
  zkr__registry_unhold(slot);
  return c;
}

void zkr_set_context(zkr_t *z, void *context) {
  int slot = zkr__registry_hold(z);
  if (slot < 0) return;
  pthread_mutex_lock(&z->ctx_mu);
  z->context = context;
  pthread_mutex_unlock(&z->ctx_mu);
  zkr__registry_unhold(slot);
}

watcher_fn zkr_set_watcher(zkr_t *z, watcher_fn fn) {
  int slot = zkr__registry_hold(z);
  if (slot < 0) return NULL;
  pthread_mutex_lock(&z->ctx_mu);
  watcher_fn old = z->watcher;
  z->watcher = fn;
  pthread_mutex_unlock(&z->ctx_mu);
  zkr__registry_unhold(slot);
  return old;
}

/* The owner's id, kept in the handle: the same pointer and value for the
 * life of the handle (zeros, or the clientid passed to zkr_init, until the
 * owner is chosen, which happens before the first CONNECTED event). */
const clientid_t *zkr_client_id(zkr_t *z) {
  int slot = zkr__registry_hold(z);
  if (slot < 0) return NULL;
  const clientid_t *id = &z->owner_id;
  zkr__registry_unhold(slot);
  return id;
}

/* The timeout the owner session negotiated, once it is connected. */
static int recv_timeout_held(zkr_t *z) {
  int o = z->owner, t = z->recv_timeout;
  if (o < 0) return t;
  zkr__member_t *m = &z->members[o];
  pthread_rwlock_rdlock(&m->zh_lock);
  if (m->zh && m->state == ZOO_CONNECTED_STATE) t = zkr__zk->zoo_recv_timeout(m->zh);
  pthread_rwlock_unlock(&m->zh_lock);
  return t;
}

int zkr_recv_timeout(zkr_t *z) { ZKR__HELD(z, recv_timeout_held(z)); }

/* ---- where the owner session is ---- */

static _Thread_local char current_server[ZKR__HOST_NAME_MAX + 16];

const char *zkr_get_current_server(zkr_t *z) {
  int slot = zkr__registry_hold(z);
  if (slot < 0) return NULL;
  int o = z->owner, host = 0;
  if (o >= 0 && z->members[o].hosted_on >= 0) host = z->members[o].hosted_on;
  snprintf(current_server, sizeof current_server, "%s", z->members[host].address);
  zkr__registry_unhold(slot);
  return current_server;
}

static struct sockaddr *connected_host_held(zkr_t *z, struct sockaddr *addr, socklen_t *addr_len) {
  int o = z->owner;
  if (o < 0 || !addr || !addr_len || !zkr__zk->zookeeper_get_connected_host) return NULL;
  zkr__member_t *m = &z->members[o];
  struct sockaddr *r = NULL;
  pthread_rwlock_rdlock(&m->zh_lock);
  if (m->zh && m->state == ZOO_CONNECTED_STATE)
    r = zkr__zk->zookeeper_get_connected_host(m->zh, addr, addr_len);
  pthread_rwlock_unlock(&m->zh_lock);
  return r;
}

struct sockaddr *zkr_get_connected_host(zkr_t *z, struct sockaddr *addr, socklen_t *addr_len) {
  int slot = zkr__registry_hold(z);
  if (slot < 0) return NULL;
  struct sockaddr *r = connected_host_held(z, addr, addr_len);
  zkr__registry_unhold(slot);
  return r;
}

/* The layers below call these through the handle (hooks.h). */
const zkr__session_hooks_t zkr__session_hooks = {
    .update = zkr__session_update,
    .dip = zkr__session_dip,
    .dip_check = zkr__session_dip_check,
};
