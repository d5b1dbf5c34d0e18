/* Membership that follows the ensemble (DESIGN.md section 7): the monitor
 * reads /zookeeper/config (a sync first, on the same session, pipelined),
 * keeps a watch on it, and when dynamic reconfiguration adds or removes
 * servers opens a member session for each new server and retires the
 * members that left.  A retired member takes no new operation at once;
 * its session closes when nothing is in flight on it, and its watches are
 * re-armed elsewhere (watch_rearm.c).  The owner session is never closed
 * for this: it stays where it is until it loses its connection, and is
 * then re-attached to a live server like any stranded owner (rescue.c).
 * docs/membership.md.
 *
 * The configuration is followed only when it describes the servers the
 * connect string names: on the first read, every member must be the client
 * address of a server line.  Otherwise (a proxy or load balancer in front,
 * DNS names where the config has addresses, no client addresses in the
 * config) the handle keeps its members and only reports the version.
 *
 * The connect string's host names are followed too (resolve.c re-resolves
 * them every resolve_ms): an address a name gains becomes a member, one it
 * loses is retired, as the stock client re-resolves its host list.  While
 * the configuration is followed it decides alone; DNS applies otherwise.
 * zkr_set_servers replaces the names followed with its list's.
 *
 * Threads: the monitor thread does everything here except the two
 * ZooKeeper callbacks, which run on a member's completion thread, only
 * store what they got under ms->mu and kick the monitor. */
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "resolve.h"
#include "zkconfig.h"

struct zkr__membership {
  pthread_mutex_t mu; /* guards buf, len, rc, got, watch_fired */
  char *buf;          /* the last getconfig reply, not yet applied */
  int len, rc, got;
  int watch_fired;    /* the config changed, or its watch may be lost */

  /* Monitor thread only. */
  int inflight;       /* a sync+getconfig is on its way */
  int on;             /* member whose session holds the watch, -1 none */
  zhandle_t *on_zh;   /* ... and the zhandle it was set on */
  uint64_t retry_ns;  /* no new read before this (after a failure) */

  zkr__hostlist_t *want;      /* zkr_set_servers' list to apply, under mu */

  zkr__dns_t *dns;            /* the host names' re-resolution, NULL none */
  zkr__host_t *dns_want;      /* what they stand for now (ZKR__HOSTS_MAX_MEMBERS) */

  _Atomic int follows;        /* ZKR_CONFIG_* below */
  _Atomic int64_t version;    /* last version seen, -1 none */
  _Atomic uint64_t reads, errors, added, removed;
};

/* follows: whether the membership follows the configuration. */
enum { CFG_UNKNOWN = 0, CFG_FOLLOWING = 1, CFG_NOT_FOLLOWED = -1, CFG_OFF = -2 };

#define CONFIG_PATH "/zookeeper/config"
#define RETRY_MS 500

int zkr__membership_new(zkr_t *z) {
  struct zkr__membership *ms = calloc(1, sizeof *ms);
  if (!ms) return ZKR_ENOMEM;
  pthread_mutex_init(&ms->mu, NULL);
  ms->on = -1;
  ms->version = -1;
  ms->follows = z->opts.follow_config == 1 && zkr__zk->awgetconfig ? CFG_UNKNOWN : CFG_OFF;
  ms->dns_want = calloc(ZKR__HOSTS_MAX_MEMBERS, sizeof *ms->dns_want);
  if (ms->dns_want) ms->dns = zkr__dns_new(&z->hosts);
  z->ms = ms;
  return ZOK;
}

void zkr__membership_free(zkr_t *z) {
  struct zkr__membership *ms = z->ms;
  if (!ms) return;
  pthread_mutex_destroy(&ms->mu);
  if (ms->want) zkr__hosts_free(ms->want);
  free(ms->want);
  zkr__dns_free(ms->dns);
  free(ms->dns_want);
  free(ms->buf);
  free(ms);
  z->ms = NULL;
}

/* ---- ZooKeeper callbacks (a member's completion thread) ---- */

static void sync_done(int rc, const char *value, const void *data) {
  (void)rc;
  (void)value;
  (void)data;
}

/* The watch on /zookeeper/config.  A data change means a new
 * configuration; a session event means the watch may be gone (session
 * lost, or the member was replaced), so the monitor reads again. */
static void config_watcher(zhandle_t *zh, int type, int state, const char *path,
                           void *ctx) {
  (void)zh;
  (void)state;
  (void)path;
  zkr_t *z = ctx;
  if (z->closing) return;
  if (type == ZOO_SESSION_EVENT && state == ZOO_CONNECTED_STATE) return;
  pthread_mutex_lock(&z->ms->mu);
  z->ms->watch_fired = 1;
  pthread_mutex_unlock(&z->ms->mu);
  zkr__monitor_kick(z);
}

static void config_done(int rc, const char *value, int len,
                        const struct Stat *stat, const void *data) {
  (void)stat;
  zkr_t *z = (zkr_t *)data;
  struct zkr__membership *ms = z->ms;
  char *copy = NULL;
  if (rc == ZOK && len > 0 && (copy = malloc((size_t)len))) memcpy(copy, value, (size_t)len);
  pthread_mutex_lock(&ms->mu);
  free(ms->buf);
  ms->buf = copy;
  ms->len = copy ? len : 0;
  ms->rc = rc == ZOK && len > 0 && !copy ? ZKR_ENOMEM : rc;
  ms->got = 1;
  pthread_mutex_unlock(&ms->mu);
  if (!z->closing) zkr__monitor_kick(z);
}

/* ---- reading ---- */

/* Sends sync + getconfig (with the watch) on a usable member's session,
 * the leader's preferred: it has the newest configuration. */
static void read_config(zkr_t *z) {
  struct zkr__membership *ms = z->ms;
  size_t n = z->n;
  int pick = -1, l = z->leader;
  if (l >= 0 && zkr__member_usable(&z->members[l])) pick = l;
  for (size_t i = 0; pick < 0 && i < n; i++)
    if (zkr__member_usable(&z->members[i])) pick = (int)i;
  if (pick < 0) return;
  zkr__member_t *m = &z->members[pick];
  pthread_rwlock_rdlock(&m->zh_lock);
  int rc = ZINVALIDSTATE;
  if (m->zh) {
    /* Same session, in order: the read runs after the sync, so it sees
     * at least what the leader had committed when the sync was sent. */
    zkr__zk->async(m->zh, CONFIG_PATH, sync_done, NULL);
    rc = zkr__zk->awgetconfig(m->zh, config_watcher, z, config_done, z);
  }
  zhandle_t *zh = m->zh;
  pthread_rwlock_unlock(&m->zh_lock);
  if (rc != ZOK) {
    ms->retry_ns = zkr__now_ns() + RETRY_MS * 1000000ull;
    return;
  }
  ms->inflight = 1;
  ms->on = pick;
  ms->on_zh = zh;
  ms->reads++;
}

/* ---- applying ---- */

static int find_member(zkr_t *z, const zkr__host_t *h) {
  size_t n = z->n;
  for (size_t i = 0; i < n; i++)
    if (zkr__host_same(&z->members[i].host, h)) return (int)i;
  return -1;
}

static const zkr__config_server_t *find_server(const zkr__config_t *c,
                                               const zkr__host_t *h) {
  for (size_t i = 0; i < c->n; i++)
    if (c->v[i].has_client && zkr__host_same(&c->v[i].client, h)) return &c->v[i];
  return NULL;
}

/* Takes member m out: no new operation from now on (usable() is false);
 * operations in flight finish where they are. */
static void retire(zkr_t *z, zkr__member_t *m) {
  m->retired = 1;
  pthread_mutex_lock(&m->health_mu);
  zkr__health_set_usable(&m->health, 0, zkr__now_ns());
  pthread_mutex_unlock(&m->health_mu);
  zkr__session_update(z);
  /* Writes parked behind it may go to the new write session. */
  zkr__gate_flush(z);
  z->ms->removed++;
}

/* A server (back) in the configuration or the list: a new slot, or a
 * retired one of the same address.  s is NULL for zkr_set_servers. */
static void admit_host(zkr_t *z, const zkr__host_t *h, const zkr__config_server_t *s) {
  int i = find_member(z, h);
  zkr__member_t *m;
  if (i >= 0) {
    m = &z->members[i];
    if (s) {
      m->server_id = s->id;
      m->cfg_observer = s->observer;
    }
    if (!m->retired) return;
    m->retired = 0;
    /* Its session was closed (idle), or moved to a live server (it held
     * state): a new one at home, or the rescue brings it home. */
    if (!zkr__member_has_zh(m)) zkr__member_open(m, i, NULL);
  } else {
    size_t n = z->n;
    if (n >= z->cap || zkr__member_setup(z, n, h) != ZOK) {
      z->ms->errors++;
      return;
    }
    m = &z->members[n];
    if (s) {
      m->server_id = s->id;
      m->cfg_observer = s->observer;
    }
    z->n = n + 1; /* published: other threads may route to it once usable */
    if (zkr__member_open(m, (int)n, NULL) != ZOK) {
      m->retired = 1;
      z->ms->errors++;
      return;
    }
  }
  z->ms->added++;
}

static void admit(zkr_t *z, const zkr__config_server_t *s) { admit_host(z, &s->client, s); }

/* zkr_set_servers: the members become the list's. */
static void apply_hosts(zkr_t *z, const zkr__hostlist_t *l) {
  size_t n = z->n;
  for (size_t k = 0; k < l->n; k++) admit_host(z, &l->v[k], NULL);
  for (size_t i = 0; i < n; i++) {
    zkr__member_t *m = &z->members[i];
    int listed = 0;
    for (size_t k = 0; k < l->n && !listed; k++) listed = zkr__host_same(&m->host, &l->v[k]);
    if (!listed && !m->retired) retire(z, m);
  }
  zkr__monitor_kick(z);
}

static void apply(zkr_t *z, const char *buf, int len) {
  struct zkr__membership *ms = z->ms;
  zkr__config_t *c = malloc(sizeof *c);
  if (!c) return;
  if (zkr__config_parse(buf, (size_t)(len > 0 ? len : 0), c) != ZOK || c->n == 0) {
    ms->errors++;
    free(c);
    return;
  }
  ms->version = c->version;
  size_t n = z->n;
  if (ms->follows == CFG_UNKNOWN) {
    /* The first configuration decides: every member of the connect string
     * must be a server's client address in it. */
    int match = 1;
    for (size_t i = 0; i < n && match; i++) match = find_server(c, &z->members[i].host) != NULL;
    ms->follows = match ? CFG_FOLLOWING : CFG_NOT_FOLLOWED;
  }
  if (ms->follows != CFG_FOLLOWING) {
    free(c);
    return;
  }
  /* A configuration in which a server has no client address cannot be
   * followed (its clients' address is unknown): keep what we have. */
  for (size_t k = 0; k < c->n; k++) {
    if (!c->v[k].has_client) {
      ms->errors++;
      free(c);
      return;
    }
  }
  for (size_t k = 0; k < c->n; k++) admit(z, &c->v[k]);
  for (size_t i = 0; i < n; i++) {
    zkr__member_t *m = &z->members[i];
    if (!m->retired && !find_server(c, &m->host)) retire(z, m);
  }
  free(c);
  /* New members' roles, and a leader that may have changed. */
  zkr__monitor_kick(z);
}

/* ---- retired members ---- */

/* A retired carrier's session goes once nothing is in flight on it: closed
 * (a carrier owns nothing but watches, which go elsewhere). */
static void settle_retired(zkr_t *z) {
  size_t n = z->n;
  for (size_t i = 0; i < n; i++) {
    zkr__member_t *m = &z->members[i];
    if (!m->retired || m->outstanding > 0 || (int)i == z->owner) continue;
    zhandle_t *zh = zkr__member_detach(m, 0);
    if (!zh) continue;
    zkr__zk->close(zh);
    /* Anything sent to it in the meantime: outcome unknown. */
    zkr__op_complete_dropped(z, zh);
    zkr__watch_rearm_from(z, (int)i, zh);
  }
}

/* ---- the connect string's names (resolve.c) ---- */

/* Makes the members match what the host list stands for now: each
 * address in want without a live member gets one (a retired slot of that
 * address comes back), then each live member not in want is retired.
 * Admitting first means the handle is never left without a member.  A
 * retired member holding the application's session keeps it, and its
 * session-scoped writes, until its server drops it (then the rescue moves
 * it to a member that is not retired, rescue.c). */
static void dns_apply(zkr_t *z, const zkr__host_t *want, size_t nw) {
  size_t n = z->n;
  for (size_t k = 0; k < nw; k++) admit_host(z, &want[k], NULL);
  for (size_t i = 0; i < n; i++) {
    zkr__member_t *m = &z->members[i];
    int wanted = 0;
    if (m->retired) continue;
    for (size_t k = 0; k < nw && !wanted; k++) wanted = zkr__host_equal(&m->host, &want[k]);
    if (!wanted) retire(z, m);
  }
  /* New members' roles, and a leader that may have changed. */
  zkr__monitor_kick(z);
}

/* Resolution rounds run while the configuration is not followed: when it
 * is, it names the servers itself (and a name may stand for a load
 * balancer in front of them). */
static void dns_turn(zkr_t *z) {
  struct zkr__membership *ms = z->ms;
  size_t n = 0;
  if (!ms->dns || ms->follows == CFG_FOLLOWING) return;
  int ms_period = z->opts.resolve_ms > 0 ? z->opts.resolve_ms : z->opts.leader_poll_ms;
  if (zkr__dns_tick(ms->dns, zkr__zk->resolve, zkr__now_ns(),
                    (uint64_t)ms_period * 1000000ull, ms->dns_want, &n) &&
      ms->follows != CFG_FOLLOWING)
    dns_apply(z, ms->dns_want, n);
}

/* ---- the monitor's turn ---- */

/* The configuration: what a read brought, and the next read when due. */
static void config_turn(zkr_t *z) {
  struct zkr__membership *ms = z->ms;
  pthread_mutex_lock(&ms->mu);
  int got = ms->got, rc = ms->rc, len = ms->len, fired = ms->watch_fired;
  char *buf = ms->buf;
  ms->buf = NULL;
  ms->got = 0;
  ms->watch_fired = 0;
  pthread_mutex_unlock(&ms->mu);
  uint64_t now = zkr__now_ns();
  if (got) {
    ms->inflight = 0;
    if (rc == ZOK) {
      apply(z, buf, len);
    } else {
      /* Connection loss and the like: read again, from another member if
       * this one went (ZNONODE: a server older than 3.5, nothing to follow). */
      if (rc == ZNONODE) ms->follows = CFG_OFF;
      ms->errors++;
      ms->on = -1;
      ms->retry_ns = now + RETRY_MS * 1000000ull;
    }
    free(buf);
  }
  if (fired) ms->on = -1;
  /* The watch lives on ms->on's session: gone with that session. */
  if (ms->on >= 0) {
    zkr__member_t *m = &z->members[ms->on];
    pthread_rwlock_rdlock(&m->zh_lock);
    int same = m->zh == ms->on_zh;
    pthread_rwlock_unlock(&m->zh_lock);
    if (!same || !zkr__member_usable(m)) ms->on = -1;
  }
  if (ms->on < 0 && !ms->inflight && now >= ms->retry_ns && ms->follows != CFG_OFF)
    read_config(z);
}

void zkr__membership_tick(zkr_t *z) {
  struct zkr__membership *ms = z->ms;
  if (z->closing) return;
  pthread_mutex_lock(&ms->mu);
  zkr__hostlist_t *want = ms->want;
  ms->want = NULL;
  pthread_mutex_unlock(&ms->mu);
  if (want) {
    apply_hosts(z, want);
    /* Its names are the ones followed from now on. */
    zkr__dns_free(ms->dns);
    ms->dns = ms->dns_want ? zkr__dns_new(want) : NULL;
    zkr__hosts_free(want);
    free(want);
  }
  dns_turn(z);
  if (ms->follows != CFG_OFF) config_turn(z);
  settle_retired(z);
}

void zkr__membership_stats(zkr_t *z, zkr_stats_t *s) {
  struct zkr__membership *ms = z->ms;
  s->follows_config = ms->follows;
  s->config_version = ms->version;
  s->config_reads = ms->reads;
  s->config_errors = ms->errors;
  s->members_added = ms->added;
  s->members_removed = ms->removed;
}

/* ---- zkr_set_servers ---- */

static int set_servers_held(zkr_t *z, const char *hosts) {
  if (!hosts) return ZBADARGUMENTS;
  if (z->closing) return ZKR_ECLOSING;
  zkr__hostlist_t *l = calloc(1, sizeof *l);
  if (!l) return ZKR_ENOMEM;
  int rc = zkr__hosts_parse(hosts, l);
  /* A name is every address it resolves to, as at init. */
  if (rc == ZOK) rc = zkr__hosts_expand(l, zkr__zk->resolve);
  if (rc != ZOK) {
    zkr__hosts_free(l);
    free(l);
    return rc;
  }
  const char *a = z->hosts.chroot, *b = l->chroot;
  if ((a || b) && (!a || !b || strcmp(a, b) != 0)) {
    zkr__hosts_free(l);
    free(l);
    return ZBADARGUMENTS; /* the chroot is the session's, for good */
  }
  struct zkr__membership *ms = z->ms;
  pthread_mutex_lock(&ms->mu);
  if (ms->want) {
    zkr__hosts_free(ms->want);
    free(ms->want);
  }
  ms->want = l;
  pthread_mutex_unlock(&ms->mu);
  zkr__monitor_kick(z);
  return ZOK;
}

int zkr_set_servers(zkr_t *z, const char *hosts) { ZKR__HELD(z, set_servers_held(z, hosts)); }
