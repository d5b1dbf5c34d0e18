/* One member slot: a ZooKeeper session pinned to one server (its host
 * string is that server plus the chroot), its session state as its own
 * watcher sees it, its health record and its counters.  The slots
 * members[0..n) are the ensemble's members; members[cap] is the owner
 * slot, which holds the owner session once a rescue re-attached it away
 * from the member whose session it first was (zkr__rescue_*). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/auth.h"
#include "core/handle.h"
#include "core/hooks.h"
#include "core/kick.h"
#include "core/latency.h"
#include "zk/zkapi.h"

zkr__member_t *zkr__member_owner_slot(zkr_t *z) { return &z->members[z->cap]; }

/* Opens m's session on the server of member `on` (m's own, or - for the
 * owner slot - a live one).  With cid, the session resumes that ZooKeeper
 * session; without, it is a new one.  m must have no zhandle (detach or
 * close it first: replacing a handle is the caller's decision, since
 * closing a connected one would end its session). */
int zkr__member_open(zkr__member_t *m, int on, const clientid_t *cid) {
  zkr_t *z = m->z;
  /* Nothing of the virtual session outlives its expiry or close. */
  if (z->expired || z->closing) return ZKR_ECLOSING;
  /* Two threads may decide to open the same slot (the init thread and the
   * monitor admitting a member, a re-resolution, the carriers' choice):
   * the first wins, the second has nothing to do.  A second zhandle would
   * replace the first in the slot and leave its session open, unowned. */
  pthread_rwlock_wrlock(&m->zh_lock);
  int busy = m->zh != NULL || m->opening > 0;
  if (!busy) m->opening++;
  pthread_rwlock_unlock(&m->zh_lock);
  if (busy) return ZOK;
  m->down_since_ns = zkr__now_ns();
  m->state = ZOO_CONNECTING_STATE;
  m->expired = 0;
  m->joined = 0;
  m->auth_refused = 0;
  m->auth_missing = 0;
  /* A guard count: the session must not join a pool before the recorded
   * credentials were sent and accepted, even if it connects at once. */
  m->auth_pending++;
  /* Its first event may come before the zhandle is stored below: the
   * member watcher waits for that (opening, counted above). */
  zhandle_t *zh = zkr__zk->zookeeper_init(z->members[on].connect, zkr__member_watcher,
                                          z->recv_timeout, cid, m, z->flags);
  if (!zh) {
    m->opening--;
    m->auth_pending--;
    return ZKR_EINIT;
  }
  /* A member's host string names one server: re-resolving it on every
   * turn of the I/O loop (libzookeeper_mt's default) only burns client CPU
   * (docs/benchmarks.md); it is still resolved on connection loss. */
  if (zkr__zk->zoo_set_servers_resolution_delay) zkr__zk->zoo_set_servers_resolution_delay(zh, -1);
  pthread_rwlock_wrlock(&m->zh_lock);
  m->zh = zh;
  m->hosted_on = on;
  m->opening--;
  pthread_rwlock_unlock(&m->zh_lock);
  /* The recorded credentials go to the new session before it may join a
   * pool (zkr__member_usable waits for them). */
  zkr__auth_replay(m);
  m->auth_pending--;
  zkr__member_maybe_join(m);
  return ZOK;
}

/* Takes m's zhandle out of the slot and returns it (NULL: none), for the
 * caller to close or move.  With only_if_down, a zhandle whose session is
 * connected is left in place and NULL returned: closing it would end the
 * session (zookeeper_close sends close-session on a connected handle), so
 * the check is made here, under the slot's write lock, right before.  With
 * ZKR__KEEP_ASSOCIATING, so is one that is associating (zkr__rescue_*). */
zhandle_t *zkr__member_detach(zkr__member_t *m, int only_if_down) {
  pthread_rwlock_wrlock(&m->zh_lock);
  zhandle_t *zh = m->zh;
  if (zh && only_if_down) {
    int s = zkr__zk->zoo_state ? zkr__zk->zoo_state(zh) : m->state;
    if (s == ZOO_CONNECTED_STATE || s == ZOO_READONLY_STATE ||
        (s == ZOO_ASSOCIATING_STATE && only_if_down == ZKR__KEEP_ASSOCIATING))
      zh = NULL;
  }
  if (zh) {
    m->zh = NULL;
    m->state = ZOO_NOTCONNECTED_STATE;
    m->joined = 0;
  }
  pthread_rwlock_unlock(&m->zh_lock);
  return zh;
}

/* Whether the slot holds a zhandle (read under its lock). */
int zkr__member_has_zh(zkr__member_t *m) {
  pthread_rwlock_rdlock(&m->zh_lock);
  int has = m->zh != NULL;
  pthread_rwlock_unlock(&m->zh_lock);
  return has;
}

/* A connected session whose credentials were all accepted joins the pools,
 * and stays joined across reconnects (ZooKeeper re-sends its credentials
 * itself); a later zkr_add_auth does not take it out. */
void zkr__member_maybe_join(zkr__member_t *m) {
  int up = m->state == ZOO_CONNECTED_STATE || m->state == ZOO_READONLY_STATE;
  if (m->joined || !up || m->auth_pending > 0 || m->auth_refused || m->auth_missing) return;
  m->joined = 1;
  pthread_mutex_lock(&m->health_mu);
  zkr__health_set_usable(&m->health, zkr__member_usable(m), zkr__now_ns());
  pthread_mutex_unlock(&m->health_mu);
  zkr__hooks_session_update(m->z);
  zkr__hooks_gate_flush(m->z);
}

void zkr__member_close(zkr__member_t *m) {
  zhandle_t *zh = zkr__member_detach(m, 0);
  /* zookeeper_close fires the outstanding completions it still can
   * (ZCLOSING) through the trampolines before it returns; the close path
   * completes the ones it drops. */
  if (zh) zkr__zk->zookeeper_close(zh);
}

/* Connected, credentials accepted (and none missing), not expired: the
 * session works. */
int zkr__member_connected(const zkr__member_t *m) {
  return m->state == ZOO_CONNECTED_STATE && m->joined && !m->expired && !m->auth_missing;
}

int zkr__member_is_owner(const zkr__member_t *m) { return m->z->owner == m->index; }

/* Connected to a read-only server (the handle asked for ZOO_READONLY and
 * the server has no quorum): it serves reads, unsynced, and nothing else. */
int zkr__member_readonly(const zkr__member_t *m) {
  return m->state == ZOO_READONLY_STATE && m->joined && !m->expired && !m->retired;
}

/* May take new operations: connected, not retired, and its server not
 * suspect (silent to srvr while others answer).  For the owner slot the
 * server is the one it lives on. */
int zkr__member_usable(const zkr__member_t *m) {
  return !m->retired && zkr__member_holds_session(m);
}

/* May take the owner's session-scoped writes: as usable, but a retired
 * member still may.  Its server still serves the application's session
 * until it drops it (the rescue then moves the session to a member that
 * is not retired): parking those writes meanwhile would only stall them. */
int zkr__member_holds_session(const zkr__member_t *m) {
  if (!zkr__member_connected(m)) return 0;
  int host = m->hosted_on;
  if (m->owner_slot && host < 0) return 0;
  /* The owner session is the application's: while it is connected it
   * takes the session-scoped writes, as a stock session takes them on its
   * connection, whatever srvr says of its server (srvr may be refused
   * there while the session works; a hung server drops the session after
   * two thirds of its timeout, and the rescue moves it). */
  if (m->z->owner == m->index) return 1;
  const zkr__member_t *h = m->owner_slot ? &m->z->members[host] : m;
  return !h->suspect;
}

/* An observer (srvr said so, or /zookeeper/config did) serves reads and
 * syncs and never takes a write directly (zkr__policy_*). */
int zkr__member_observer(const zkr__member_t *m) {
  return m->role == ZKR_ROLE_OBSERVER || m->cfg_observer;
}

/* Fills member slot i (i < cap) for host: address, connect string,
 * health.  The slot's locks were made at init.  Returns ZOK or
 * ZKR_ENOMEM. */
void zkr__member_slot_init(zkr_t *z, size_t i) {
  zkr__member_t *m = &z->members[i];
  if (m->z) return; /* a setup that failed is tried again on the same slot */
  m->z = z;
  m->index = (int)i;
  m->owner_slot = i == z->cap;
  m->server_id = -1;
  m->zxid = -1;
  m->last_zxid = -1;
  m->hosted_on = i == z->cap ? -1 : (int)i;
  pthread_rwlock_init(&m->zh_lock, NULL);
  pthread_mutex_init(&m->health_mu, NULL);
  pthread_mutex_init(&m->co_mu, NULL);
}

int zkr__member_setup(zkr_t *z, size_t i, const zkr__host_t *host) {
  zkr__member_slot_init(z, i);
  zkr__member_t *m = &z->members[i];
  m->host = *host;
  m->zxid = -1;
  m->last_zxid = -1;
  m->server_id = -1;
  m->hosted_on = (int)i;
  zkr__health_init(&m->health, zkr__now_ns());
  zkr__hosts_format(&m->host, NULL, m->address, sizeof m->address);
  size_t len = sizeof m->address + (z->hosts.chroot ? strlen(z->hosts.chroot) : 0);
  /* libzookeeper_mt 3.8 splits "host:port" at the last ':' and cannot
   * resolve "[::1]": its connect string takes an IPv6 address bare. */
  zkr__host_t bare = m->host;
  bare.ipv6 = 0;
  free(m->connect);
  if (!(m->connect = malloc(len))) return ZKR_ENOMEM;
  zkr__hosts_format(&bare, z->hosts.chroot, m->connect, len);
  return ZOK;
}

/* Health as the router sees it: in the read pool, or not. */
int zkr__member_in_pool(zkr__member_t *m) {
  if (!zkr__member_usable(m)) return 0;
  pthread_mutex_lock(&m->health_mu);
  int in = m->health.in_pool;
  pthread_mutex_unlock(&m->health_mu);
  return in;
}

static int connection_trouble(int rc) {
  return rc == ZCONNECTIONLOSS || rc == ZOPERATIONTIMEOUT || rc == ZSESSIONEXPIRED ||
         rc == ZSESSIONMOVED;
}

/* Completion's share (zkr__completion_*): a request that failed without a
 * server's answer counts as the member's error, and a write's connection
 * trouble asks the monitor for a srvr poll at once (DESIGN.md section 5). */
void zkr__member_op_done(zkr__op_t *op, int rc) {
  zkr__member_t *m = &op->z->members[op->member];
  if (rc != ZOK && !zkr__latency_server_answered(rc) && rc != ZCLOSING) m->errors++;
  if (connection_trouble(rc) && zkr__op_has(op, ZKR__OP_F_WRITE)) zkr__kick_monitor(op->z);
}

void zkr__member_sample(zkr__member_t *m, uint64_t now_ns, double ms) {
  pthread_mutex_lock(&m->health_mu);
  zkr__health_sample(&m->health, &m->z->hcfg, now_ns, ms);
  pthread_mutex_unlock(&m->health_mu);
}

/* The member session's global watcher.  Member state is internal: it
 * changes the pools and, through zkr__session_update, the one virtual state
 * the application sees - which follows the owner alone.  A carrier's
 * expiry is silent (the monitor re-creates it); the owner's is the
 * application's. */
void zkr__member_watcher(zhandle_t *zh, int type, int state, const char *path, void *ctx) {
  (void)path;
  zkr__member_t *m = ctx;
  zkr_t *z = m->z;
  if (type != ZOO_SESSION_EVENT || z->closing) return;
  /* A zhandle being replaced still reports while it closes: only the
   * slot's current one speaks for it. */
  pthread_rwlock_rdlock(&m->zh_lock);
  int current = zh == m->zh, opening = m->opening;
  pthread_rwlock_unlock(&m->zh_lock);
  /* An event of a zhandle zkr__member_open is about to store (it came
   * before zookeeper_init returned to the opener): wait for it, at most a
   * second - the opener only takes the slot's lock. */
  for (int i = 0; !current && opening && i < 10000; i++) {
    struct timespec ts = {0, 100000};
    nanosleep(&ts, NULL);
    pthread_rwlock_rdlock(&m->zh_lock);
    current = zh == m->zh;
    opening = m->opening;
    pthread_rwlock_unlock(&m->zh_lock);
  }
  if (!current) return;
  m->conn_events++; /* (before the replies that came after it: zkr__watch_op_done) */
  if (state == ZOO_CONNECTED_STATE || state == ZOO_READONLY_STATE) {
    int t = zkr__zk->zoo_recv_timeout(zh);
    m->timeout_ms = t;
    if (t > z->negotiated_ms) z->negotiated_ms = t;
    const clientid_t *id = zkr__zk->zoo_client_id(zh);
    pthread_rwlock_wrlock(&m->zh_lock);
    if (id && m->zh == zh) {
      m->cid = *id;
      m->cid_zh = zh;
    }
    pthread_rwlock_unlock(&m->zh_lock);
  }
  int was_usable = zkr__member_usable(m);
  m->state = state;
  /* After the state: a rescue that moves the fence to zh right now checks
   * the state after moving it (the rescue of the owner, zkr__rescue_tick). */
  zkr__hooks_gate_session_event(z, zh, state);
  if (state == ZOO_CONNECTED_STATE) m->down_since_ns = 0;
  else if (m->down_since_ns == 0) m->down_since_ns = zkr__now_ns();
  if ((state == ZOO_CONNECTED_STATE || state == ZOO_READONLY_STATE) && !m->joined) {
    zkr__member_maybe_join(m);
    zkr__kick_monitor(z);
    return;
  }
  if (state == ZOO_EXPIRED_SESSION_STATE) {
    m->expired = 1;
    if (zkr__member_is_owner(m)) z->expired = 1;
    zkr__log_event(z, z->expired ? ZOO_LOG_LEVEL_ERROR : ZOO_LOG_LEVEL_WARN, "session_expired",
                   m->index, "owner=%s", zkr__member_is_owner(m) ? "yes" : "no");
  } else if (state == ZOO_AUTH_FAILED_STATE) {
    /* The same credentials go to every session: what one server refuses,
     * the owner's refuses too.  The first of the two ends is the
     * session's end (zkr__handle_ended_rc). */
    if (!z->expired) z->auth_first = 1;
    z->auth_failed = 1;
  }
  pthread_mutex_lock(&m->health_mu);
  zkr__health_set_usable(&m->health, zkr__member_usable(m), zkr__now_ns());
  pthread_mutex_unlock(&m->health_mu);
  zkr__hooks_session_update(z);
  if (zkr__member_usable(m)) {
    zkr__hooks_gate_flush(z); /* parked operations may go now */
    /* A member back after an election: learn the new leader now rather
     * than at the next poll. */
    zkr__kick_monitor(z);
  } else if (was_usable || m->expired) {
    /* Losing the write session (or any member) makes the monitor poll at
     * once, so writes move to the new leader without waiting a period;
     * an expired carrier is re-created there. */
    zkr__kick_monitor(z);
  }
}
