/* The ensemble's configuration applied (DESIGN.md section 7;
 * docs/membership.md): the monitor reads /zookeeper/config with a sync
 * first, on the same session, pipelined, keeps a watch on it, and makes
 * the members the configuration's servers (zkr__membership_* admits and
 * retires).  Followed only when the first configuration read names every
 * member of the connect string as a server's client address.  The parser
 * is zkr__dynconfig_*. */
#include <stdlib.h>
#include <string.h>

#include "model/dynconfig.h"
#include "core/handle.h"
#include "core/kick.h"
#include "session/membership.h"
#include "zk/zkapi.h"

#define CONFIG_PATH "/zookeeper/config"
#define RETRY_MS 500

/* ---- ZooKeeper callbacks (a member's completion thread) ---- */

static void sync_done(int rc, const char *value, const void *data) {
  (void)rc;
  (void)value;
  (void)data;
}

/* The watch on /zookeeper/config.  A data change means a new
 * configuration; a session event means the watch may be gone (session
 * lost, or the member was replaced), so the monitor reads again. */
static void config_watcher(zhandle_t *zh, int type, int state, const char *path, void *ctx) {
  (void)zh;
  (void)state;
  (void)path;
  zkr_t *z = ctx;
  if (z->closing) return;
  if (type == ZOO_SESSION_EVENT && state == ZOO_CONNECTED_STATE) return;
  pthread_mutex_lock(&z->ms->mu);
  z->ms->watch_fired = 1;
  pthread_mutex_unlock(&z->ms->mu);
  zkr__kick_monitor(z);
}

static void config_done(int rc, const char *value, int len, const struct Stat *stat,
                        const void *data) {
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
  if (!z->closing) zkr__kick_monitor(z);
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
    zkr__zk->zoo_async(m->zh, CONFIG_PATH, sync_done, NULL);
    rc = zkr__zk->zoo_awgetconfig(m->zh, config_watcher, z, config_done, z);
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

static const zkr__config_server_t *find_server(const zkr__config_t *c, const zkr__host_t *h) {
  for (size_t i = 0; i < c->n; i++)
    if (c->v[i].has_client && zkr__hosts_equal(&c->v[i].client, h)) return &c->v[i];
  return NULL;
}

static void admit(zkr_t *z, const zkr__config_server_t *s) {
  zkr__membership_admit(z, &s->client, s);
}

static void apply(zkr_t *z, const char *buf, int len) {
  struct zkr__membership *ms = z->ms;
  zkr__config_t *c = malloc(sizeof *c);
  if (!c) return;
  if (zkr__dynconfig_parse(buf, (size_t)(len > 0 ? len : 0), c) != ZOK || c->n == 0) {
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
    if (!m->retired && !find_server(c, &m->host)) zkr__membership_retire(z, m);
  }
  free(c);
  /* New members' roles, and a leader that may have changed. */
  zkr__kick_monitor(z);
}

/* ---- the monitor's turn ---- */

/* The configuration: what a read brought, and the next read when due. */
void zkr__ensemble_turn(zkr_t *z) {
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
  if (ms->on < 0 && !ms->inflight && now >= ms->retry_ns && ms->follows != CFG_OFF) read_config(z);
}
