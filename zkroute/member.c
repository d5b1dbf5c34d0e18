/* One member: a ZooKeeper session pinned to one server (its host string is
 * that server plus the chroot), its session state as its own watcher sees
 * it, its health record and its counters. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* Opens m's session on the server of member `on` (m's own, or a live one
 * when m's server is down: a rescue).  With cid, the session resumes that
 * ZooKeeper session (its ephemerals and counters stay); without, it is a
 * new one.  The old zhandle, if any, is closed after the swap. */
int zkr__member_open(zkr__member_t *m, int on, const clientid_t *cid) {
  zkr_t *z = m->z;
  m->down_since_ns = zkr__now_ns();
  m->state = ZOO_CONNECTING_STATE;
  m->expired = 0;
  m->joined = 0;
  m->draining = 0;
  /* A guard count: the session must not join a pool before the recorded
   * credentials were sent and accepted, even if it connects at once. */
  m->auth_pending++;
  zhandle_t *zh = zkr__zk->init(z->members[on].connect, zkr__member_watcher,
                                 z->recv_timeout, cid, m, z->flags);
  if (!zh) {
    m->auth_pending--;
    return ZKR_EINIT;
  }
  /* A member's host string names one server: re-resolving it on every
   * turn of the I/O loop (libzookeeper_mt's default) only burns client CPU
   * (docs/benchmarks.md); it is still resolved on connection loss. */
  if (zkr__zk->set_resolution_delay) zkr__zk->set_resolution_delay(zh, -1);
  pthread_rwlock_wrlock(&m->zh_lock);
  zhandle_t *old = m->zh;
  m->zh = zh;
  m->hosted_on = on;
  if (!cid || cid->client_id == 0) {
    m->ephemerals = 0;
    m->watches = 0;
  }
  pthread_rwlock_unlock(&m->zh_lock);
  /* The recorded credentials go to the new session before it may join a
   * pool (zkr__member_usable waits for them). */
  zkr__auth_replay(m);
  m->auth_pending--;
  zkr__member_maybe_join(m);
  if (old) {
    /* Operations still in flight on old get ZCONNECTIONLOSS (outcome
     * unknown), whether ZooKeeper completes them or drops them. */
    zkr__zk->close(old);
    zkr__op_complete_dropped(z, old);
  }
  return ZOK;
}

/* A connected session whose credentials were all accepted joins the pools,
 * and stays joined across reconnects (ZooKeeper re-sends its credentials
 * itself); a later zkr_add_auth does not take it out. */
void zkr__member_maybe_join(zkr__member_t *m) {
  if (m->joined || m->state != ZOO_CONNECTED_STATE || m->auth_pending > 0)
    return;
  m->joined = 1;
  pthread_mutex_lock(&m->health_mu);
  zkr__health_set_usable(&m->health, zkr__member_usable(m), zkr__now_ns());
  pthread_mutex_unlock(&m->health_mu);
  zkr__session_update(m->z);
  zkr__gate_flush(m->z);
}

void zkr__member_close(zkr__member_t *m) {
  pthread_rwlock_wrlock(&m->zh_lock);
  zhandle_t *zh = m->zh;
  m->zh = NULL;
  pthread_rwlock_unlock(&m->zh_lock);
  /* zookeeper_close fires every outstanding completion (ZCLOSING) through
   * the trampolines before it returns. */
  if (zh) zkr__zk->close(zh);
  m->state = ZOO_NOTCONNECTED_STATE;
}

int zkr__member_usable(const zkr__member_t *m) {
  /* A suspect server (silent to srvr) only matters while the session is
   * on it: a rescued session lives on another server. */
  return m->state == ZOO_CONNECTED_STATE && m->joined && !m->expired &&
         !m->draining && !m->retired && !(m->suspect && m->hosted_on == m->index);
}

/* An observer (srvr said so, or /zookeeper/config did) serves reads and
 * syncs and never takes a write directly (policy.c). */
int zkr__member_observer(const zkr__member_t *m) {
  return m->role == ZKR_ROLE_OBSERVER || m->cfg_observer;
}

zkr__member_t *zkr__keeper_of(zkr__member_t *m) {
  return &m->z->members[m->z->cap + (size_t)(m->index % (int)m->z->cap)];
}

/* Fills slot i (a member, i < cap) and its keeper slot for host: address,
 * connect string, health.  The slots' locks were made at init.  Returns
 * ZOK or ZKR_ENOMEM. */
int zkr__member_setup(zkr_t *z, size_t i, const zkr__host_t *host) {
  uint64_t now = zkr__now_ns();
  for (int k = 0; k < 2; k++) {
    zkr__member_t *m = &z->members[i + (k ? z->cap : 0)];
    m->host = *host;
    m->zxid = -1;
    m->server_id = -1;
    m->hosted_on = (int)i;
    zkr__health_init(&m->health, now);
    zkr__host_format(&m->host, NULL, m->address, sizeof m->address);
    if (m->keeper) continue; /* sessions are moved in, never opened */
    size_t len = sizeof m->address + (z->hosts.chroot ? strlen(z->hosts.chroot) : 0);
    /* libzookeeper_mt 3.8 splits "host:port" at the last ':' and cannot
     * resolve "[::1]": its connect string takes an IPv6 address bare. */
    zkr__host_t bare = m->host;
    bare.ipv6 = 0;
    free(m->connect);
    if (!(m->connect = malloc(len))) return ZKR_ENOMEM;
    zkr__host_format(&bare, z->hosts.chroot, m->connect, len);
  }
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

void zkr__member_sample(zkr__member_t *m, uint64_t now_ns, double ms) {
  pthread_mutex_lock(&m->health_mu);
  zkr__health_sample(&m->health, &m->z->hcfg, now_ns, ms);
  pthread_mutex_unlock(&m->health_mu);
}

/* The member session's global watcher.  Member state is internal: it
 * changes the pools and, through zkr__session_update, the one virtual state
 * the application sees. */
void zkr__member_watcher(zhandle_t *zh, int type, int state, const char *path,
                         void *ctx) {
  (void)path;
  zkr__member_t *m = ctx;
  zkr_t *z = m->z;
  if (type != ZOO_SESSION_EVENT || z->closing) return;
  /* A zhandle being replaced (rescue, re-creation) still reports while it
   * closes: only the current one speaks for the member.  A session moved
   * to the member's keeper slot speaks for the keeper. */
  pthread_rwlock_rdlock(&m->zh_lock);
  int current = zh == m->zh;
  pthread_rwlock_unlock(&m->zh_lock);
  if (!current && !m->keeper) {
    zkr__member_t *k = zkr__keeper_of(m);
    pthread_rwlock_rdlock(&k->zh_lock);
    current = zh == k->zh;
    pthread_rwlock_unlock(&k->zh_lock);
    if (current) m = k;
  }
  if (!current) return;
  int was_usable = zkr__member_usable(m);
  m->state = state;
  if (state == ZOO_CONNECTED_STATE) m->down_since_ns = 0;
  else if (m->down_since_ns == 0) m->down_since_ns = zkr__now_ns();
  if (state == ZOO_CONNECTED_STATE && !m->joined) {
    zkr__member_maybe_join(m);
    return;
  }
  if (state == ZOO_EXPIRED_SESSION_STATE) {
    m->expired = 1;
    /* A session that holds ephemerals or watches cannot be replaced
     * silently: the application must learn, as with a stock session. */
    if (m->ephemerals > 0 || m->watches > 0) z->expired = 1;
  } else if (state == ZOO_AUTH_FAILED_STATE) {
    z->auth_failed = 1;
  }
  pthread_mutex_lock(&m->health_mu);
  zkr__health_set_usable(&m->health, zkr__member_usable(m), zkr__now_ns());
  pthread_mutex_unlock(&m->health_mu);
  zkr__session_update(z);
  if (zkr__member_usable(m)) {
    zkr__gate_flush(z); /* parked operations may go now */
    /* A member back after an election: learn the new leader now rather
     * than at the next poll. */
    zkr__monitor_kick(z);
  } else if (was_usable) {
    /* Losing the write session (or any member) makes the monitor poll at
     * once, so writes move to the new leader without waiting a period. */
    zkr__monitor_kick(z);
  }
  if (m->expired) zkr__monitor_kick(z); /* re-creation happens there */
}

/* The session id and password of m's session, to resume it elsewhere.
 * Returns 0 when the session never got an id (nothing to save). */
int zkr__member_client_id(zkr__member_t *m, clientid_t *out) {
  pthread_rwlock_rdlock(&m->zh_lock);
  const clientid_t *c = m->zh ? zkr__zk->client_id(m->zh) : NULL;
  if (c) *out = *c;
  pthread_rwlock_unlock(&m->zh_lock);
  return c && c->client_id != 0;
}

/* Moves m's session, with the ephemerals and watches it holds, to m's
 * keeper slot, so that m can open a fresh session on its own server.
 * Needed to bring a rescued session home: closing it would close the
 * ZooKeeper session (zookeeper_close of a connected handle ends it, and its
 * ephemeral nodes with it).  Returns ZOK, or -1 when the slot is taken. */
int zkr__member_keep(zkr__member_t *m) {
  zkr_t *z = m->z;
  zkr__member_t *k = zkr__keeper_of(m);
  pthread_rwlock_wrlock(&m->zh_lock);
  pthread_rwlock_wrlock(&k->zh_lock);
  int rc = -1;
  if (!k->zh) {
    k->zh = m->zh;
    m->zh = NULL;
    k->state = m->state;
    k->joined = m->joined;
    k->hosted_on = m->hosted_on;
    k->ephemerals = m->ephemerals;
    k->down_since_ns = m->down_since_ns;
    k->expired = 0;
    m->ephemerals = 0;
    m->state = ZOO_NOTCONNECTED_STATE;
    rc = ZOK;
  }
  pthread_rwlock_unlock(&k->zh_lock);
  pthread_rwlock_unlock(&m->zh_lock);
  if (rc == ZOK) zkr__watch_move(z, m->index, k->index);
  return rc;
}
