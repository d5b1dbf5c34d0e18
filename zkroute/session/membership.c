/* Membership that follows the ensemble (DESIGN.md section 7): the monitor
 * reads /zookeeper/config (a sync first, on the same session, pipelined),
 * keeps a watch on it, and when dynamic reconfiguration adds or removes
 * servers opens a member session for each new server and retires the
 * members that left.  A retired member takes no new operation at once;
 * its session closes when nothing is in flight on it, and its watches are
 * re-armed elsewhere (zkr__watch_rearm_*).  The owner session is never closed
 * for this: it stays where it is until it loses its connection, and is
 * then re-attached to a live server like any stranded owner (zkr__rescue_*).
 * docs/membership.md.
 *
 * The configuration is followed only when it describes the servers the
 * connect string names: on the first read, every member must be the client
 * address of a server line.  Otherwise (a proxy or load balancer in front,
 * DNS names where the config has addresses, no client addresses in the
 * config) the handle keeps its members and only reports the version.
 *
 * The connect string's host names are followed too (zkr__resolve_* re-resolves
 * them every resolve_ms): an address a name gains becomes a member, one it
 * loses is retired, as the stock client re-resolves its host list.  While
 * the configuration is followed it decides alone; DNS applies otherwise.
 * zkr_set_servers replaces the names followed with its list's.
 *
 * This file: the members admitted, retired and settled, the monitor's
 * turn, zkr_set_servers.  zkr__ensemble_* reads and applies the
 * configuration, zkr__hostnames_* the names' re-resolution.
 *
 * Threads: the monitor thread does everything here except the two
 * ZooKeeper callbacks (zkr__ensemble_*), which run on a member's
 * completion thread, only store what they got under ms->mu and kick the
 * monitor. */
#include <stdlib.h>
#include <string.h>

#include "route/dispatch.h"
#include "model/dynconfig.h"
#include "core/handle.h"
#include "core/kick.h"
#include "session/membership.h"
#include "core/registry.h"
#include "zk/resolve.h"
#include "route/router.h"
#include "session/session.h"
#include "core/watch.h"
#include "zk/zkapi.h"

/* Follows the host names of hosts (none when they are all addresses),
 * with the buffer of a turn's addresses made only then: 17 KiB that a
 * fleet of handles given addresses would pay each for nothing.  Out of
 * memory: no name is followed, as before. */
static void follow_names(struct zkr__membership *ms, const zkr__hostlist_t *hosts) {
  zkr__resolve_free(ms->dns);
  ms->dns = zkr__resolve_new(hosts);
  if (ms->dns && !ms->dns_want &&
      !(ms->dns_want = calloc(ZKR__HOSTS_MAX_MEMBERS, sizeof *ms->dns_want))) {
    zkr__resolve_free(ms->dns);
    ms->dns = NULL;
  }
}

int zkr__membership_new(zkr_t *z) {
  struct zkr__membership *ms = calloc(1, sizeof *ms);
  if (!ms) return ZKR_ENOMEM;
  pthread_mutex_init(&ms->mu, NULL);
  ms->on = -1;
  ms->version = -1;
  ms->follows = z->opts.follow_config == 1 && zkr__zk->zoo_awgetconfig ? CFG_UNKNOWN : CFG_OFF;
  follow_names(ms, &z->hosts);
  z->ms = ms;
  return ZOK;
}

void zkr__membership_free(zkr_t *z) {
  struct zkr__membership *ms = z->ms;
  if (!ms) return;
  pthread_mutex_destroy(&ms->mu);
  if (ms->want) zkr__hosts_free(ms->want);
  free(ms->want);
  zkr__resolve_free(ms->dns);
  free(ms->dns_want);
  free(ms->buf);
  free(ms);
  z->ms = NULL;
}

int zkr__membership_find(zkr_t *z, const zkr__host_t *h) {
  size_t n = z->n;
  for (size_t i = 0; i < n; i++)
    if (zkr__hosts_equal(&z->members[i].host, h)) return (int)i;
  return -1;
}

/* Takes member m out: no new operation from now on (usable() is false);
 * operations in flight finish where they are.  Counted first: zkr_stats
 * never shows a retired member that the count of removals leaves out. */
void zkr__membership_retire(zkr_t *z, zkr__member_t *m) {
  z->ms->removed++;
  m->retired = 1;
  pthread_mutex_lock(&m->health_mu);
  zkr__health_set_usable(&m->health, 0, zkr__now_ns());
  pthread_mutex_unlock(&m->health_mu);
  zkr__session_update(z);
  /* Writes parked behind it may go to the new write session. */
  zkr__router_gate_flush(z);
}

/* A server (back) in the configuration or the list: a new slot, or a
 * retired one of the same address.  s is NULL for zkr_set_servers.
 * Counted before it is live in zkr_stats' list (a clean-clone CI run saw
 * a live member with the count not yet raised: test_resolve
 * member_back_is_counted_before_it_is_live); a new slot whose session
 * cannot be opened was added and is removed again, both counted (the
 * counters only go up). */
void zkr__membership_admit(zkr_t *z, const zkr__host_t *h, const zkr__config_server_t *s) {
  int i = zkr__membership_find(z, h);
  zkr__member_t *m;
  if (i >= 0) {
    m = &z->members[i];
    if (s) {
      m->server_id = s->id;
      m->cfg_observer = s->observer;
    }
    if (!m->retired) return;
    z->ms->added++;
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
    z->ms->added++;
    z->n = n + 1; /* published: other threads may route to it once usable */
    if (zkr__member_open(m, (int)n, NULL) != ZOK) {
      z->ms->removed++;
      m->retired = 1;
      z->ms->errors++;
    }
  }
}

/* The members become the hosts v[0..n) stand for (zkr_set_servers, a
 * re-resolution of the connect string's names): each address without a
 * live member gets one (a retired slot of that address comes back), then
 * each live member not listed is retired.  Admitting first means the
 * handle is never left without a member.  A retired member holding the
 * application's session keeps it, and its session-scoped writes, until
 * its server drops it (then the rescue moves it to a member that is not
 * retired, zkr__rescue_*). */
void zkr__membership_become(zkr_t *z, const zkr__host_t *v, size_t nv) {
  size_t n = z->n;
  for (size_t k = 0; k < nv; k++) zkr__membership_admit(z, &v[k], NULL);
  for (size_t i = 0; i < n; i++) {
    zkr__member_t *m = &z->members[i];
    int listed = 0;
    if (m->retired) continue;
    for (size_t k = 0; k < nv && !listed; k++) listed = zkr__hosts_equal(&m->host, &v[k]);
    if (!listed) zkr__membership_retire(z, m);
  }
  /* New members' roles, and a leader that may have changed. */
  zkr__kick_monitor(z);
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
    zkr__zk->zookeeper_close(zh);
    /* Anything sent to it in the meantime: outcome unknown. */
    zkr__dispatch_complete_dropped(z, zh);
    zkr__watch_rearm_from(z, (int)i, zh);
  }
}

void zkr__membership_tick(zkr_t *z) {
  struct zkr__membership *ms = z->ms;
  if (z->closing) return;
  pthread_mutex_lock(&ms->mu);
  zkr__hostlist_t *want = ms->want;
  ms->want = NULL;
  pthread_mutex_unlock(&ms->mu);
  if (want) {
    zkr__membership_become(z, want->v, want->n);
    /* Its names are the ones followed from now on. */
    follow_names(ms, want);
    zkr__hosts_free(want);
    free(want);
  }
  zkr__hostnames_turn(z);
  if (ms->follows != CFG_OFF) zkr__ensemble_turn(z);
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
  zkr__kick_monitor(z);
  return ZOK;
}

int zkr_set_servers(zkr_t *z, const char *hosts) { ZKR__HELD(z, set_servers_held(z, hosts)); }

int zkr_set_servers_resolution_delay(zkr_t *z, int delay_ms) {
  /* Stock's codes: -1 (no routine re-resolution) and up are valid. */
  ZKR__HELD(z, delay_ms < -1 ? ZBADARGUMENTS : ZOK);
}
