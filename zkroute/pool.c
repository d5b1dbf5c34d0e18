/* The read pool: applies the health model (health.c) to the members.  The
 * monitor calls zkr__health_tick every tick: it re-evaluates the pool of
 * read candidates and sends the sync+exists probes of ejected members. */
#include <stdlib.h>

#include "internal.h"

void zkr__health_cfg_from_options(zkr__health_cfg_t *c, const zkr_options_t *o) {
  c->half_life_ms = o->ewma_half_life_ms;
  c->eject_ratio = o->eject_ratio;
  c->eject_floor_ms = o->eject_floor_ms;
  c->min_samples = (unsigned)o->min_samples;
  c->probe_ms = (unsigned)o->probe_ms;
  c->reinstate_k = (unsigned)o->reinstate_k;
  c->eject_min_ms = (unsigned)o->eject_min_ms;
  c->eject_max_ms = (unsigned)o->eject_max_ms;
  c->eject_reset_ms = 0;
  c->eject_off = o->health < 0;
  zkr__health_cfg_defaults(c);
}

/* Read candidates are followers and observers (and the leader when the
 * options put it in the pool): the members the hybrid policy reads from. */
static int candidate(zkr_t *z, zkr__member_t *m) {
  int role = m->role;
  return role == ZKR_ROLE_FOLLOWER || role == ZKR_ROLE_OBSERVER ||
         (role == ZKR_ROLE_LEADER && z->opts.read_from_leader == 1);
}

typedef struct {
  zkr__member_t *m;
  uint64_t sent_ns;
} probe_t;

static void lock_all(zkr_t *z) {
  for (size_t i = 0; i < z->n; i++) pthread_mutex_lock(&z->members[i].health_mu);
}

static void unlock_all(zkr_t *z) {
  for (size_t i = z->n; i-- > 0;) pthread_mutex_unlock(&z->members[i].health_mu);
}

static void probe_done(int rc, const struct Stat *stat, const void *data) {
  (void)stat;
  probe_t *p = (probe_t *)data;
  zkr__member_t *m = p->m;
  zkr_t *z = m->z;
  uint64_t now = zkr__now_ns();
  double ms = (double)(now - p->sent_ns) / 1e6;
  free(p);
  zkr__health_t *pool[ZKR_MAX_MEMBERS];
  size_t n = 0;
  lock_all(z);
  for (size_t i = 0; i < z->n; i++)
    if (candidate(z, &z->members[i])) pool[n++] = &z->members[i].health;
  double median = zkr__health_pool_median(pool, n, &z->hcfg);
  zkr__health_probe_result(&m->health, &z->hcfg, now, ms,
                           rc == ZOK || rc == ZNONODE, median);
  unlock_all(z);
}

static void probe_sync_done(int rc, const char *value, const void *data) {
  (void)rc;
  (void)value;
  (void)data;
}

/* Sends a sync+exists on m's own session.  Returns ZOK or the error. */
static int send_probe(zkr__member_t *m, uint64_t now) {
  probe_t *p = malloc(sizeof *p);
  if (!p) return ZKR_ENOMEM;
  p->m = m;
  p->sent_ns = now;
  pthread_rwlock_rdlock(&m->zh_lock);
  int rc = m->zh ? zoo_async(m->zh, "/", probe_sync_done, NULL) : ZINVALIDSTATE;
  if (rc == ZOK) rc = zoo_aexists(m->zh, "/", 0, probe_done, p);
  pthread_rwlock_unlock(&m->zh_lock);
  if (rc != ZOK) free(p);
  return rc;
}

void zkr__health_tick(zkr_t *z, uint64_t now) {
  zkr__health_t *pool[ZKR_MAX_MEMBERS];
  zkr__member_t *due[ZKR_MAX_MEMBERS];
  size_t n = 0, nd = 0;
  lock_all(z);
  for (size_t i = 0; i < z->n; i++) {
    zkr__member_t *m = &z->members[i];
    if (!candidate(z, m)) continue;
    pool[n++] = &m->health;
    if (zkr__health_probe_due(&m->health, now)) {
      zkr__health_probe_sent(&m->health, &z->hcfg, now);
      due[nd++] = m;
    }
  }
  zkr__health_evaluate(pool, n, &z->hcfg, now);
  unlock_all(z);
  for (size_t i = 0; i < nd; i++) {
    if (send_probe(due[i], now) == ZOK) continue;
    pthread_mutex_lock(&due[i]->health_mu);
    zkr__health_probe_result(&due[i]->health, &z->hcfg, now, 0, 0, -1);
    pthread_mutex_unlock(&due[i]->health_mu);
  }
}
