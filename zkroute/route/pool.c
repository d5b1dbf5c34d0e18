/* The read pool: applies the health model (zkr__health_*) to the members.  The
 * monitor calls zkr__pool_tick every tick: it re-evaluates the pool of
 * read candidates and sends the sync+exists probes of ejected members. */
#include <stdlib.h>

#include "route/completion.h"
#include "route/dispatch.h"
#include "core/handle.h"
#include "route/pool.h"
#include "core/latency.h"
#include "core/policy.h"

void zkr__pool_cfg(zkr__health_cfg_t *c, const zkr_options_t *o) {
  c->half_life_ms = o->ewma_half_life_ms;
  c->eject_ratio = o->eject_ratio;
  c->readmit_ratio = o->readmit_ratio;
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

/* Locks the health of members [0, n) and returns n: the member count is
 * read once, since zkr__membership_* may add a member meanwhile. */
static size_t lock_all(zkr_t *z) {
  size_t n = z->n;
  for (size_t i = 0; i < n; i++) pthread_mutex_lock(&z->members[i].health_mu);
  return n;
}

static void unlock_all(zkr_t *z, size_t n) {
  for (size_t i = n; i-- > 0;) pthread_mutex_unlock(&z->members[i].health_mu);
}

/* Completion's share (zkr__completion_*): a probe's result, or the latency
 * sample of an application read (the sync+read pair) the server answered. */
void zkr__pool_op_done(zkr__op_t *op, int rc, uint64_t now, double ms) {
  zkr__member_t *m = &op->z->members[op->member];
  if (zkr__op_has(op, ZKR__OP_F_PROBE))
    zkr__pool_probe_result(m, now, ms, rc == ZOK || rc == ZNONODE);
  else if (!zkr__op_has(op, ZKR__OP_F_WRITE) && op->type != ZKR__OP_SYNC &&
           zkr__latency_server_answered(rc))
    zkr__member_sample(m, now, ms);
  zkr__latency_op_done(op, rc, ms); /* the histograms: reads and writes */
}

/* A probe's completion: a good probe counts toward reinstatement when it
 * is under the threshold of the current pool. */
void zkr__pool_probe_result(zkr__member_t *m, uint64_t now, double ms, int ok) {
  zkr_t *z = m->z;
  zkr__health_t *pool[ZKR_MAX_MEMBERS] = {0};
  size_t n = 0;
  size_t locked = lock_all(z);
  for (size_t i = 0; i < locked; i++)
    if (zkr__policy_read_candidate(z, &z->members[i])) pool[n++] = &z->members[i].health;
  double median = zkr__health_pool_median(pool, n, &z->hcfg);
  int was_in = m->health.in_pool;
  zkr__health_probe_result(&m->health, &z->hcfg, now, ms, ok, median);
  int back = !was_in && m->health.in_pool;
  double ewma = m->health.ewma_ms;
  unlock_all(z, locked);
  if (back)
    zkr__log_event(z, ZOO_LOG_LEVEL_INFO, "reinstated", m->index,
                   "ewma_ms=%.2f pool_median_ms=%.2f good_probes=%u reason=probes", ewma, median,
                   z->hcfg.reinstate_k);
}

/* The pool's changes of one evaluation, logged once the locks are free. */
typedef struct {
  int member, ejected;
  double ewma_ms;
} pool_change_t;

static void log_changes(zkr_t *z, const pool_change_t *c, size_t n, double median) {
  for (size_t i = 0; i < n; i++) {
    if (c[i].ejected)
      zkr__log_event(z, ZOO_LOG_LEVEL_WARN, "ejected", c[i].member,
                     "ewma_ms=%.2f pool_median_ms=%.2f threshold_ms=%.2f reason=latency",
                     c[i].ewma_ms, median, zkr__health_threshold(&z->hcfg, median));
    else
      zkr__log_event(z, ZOO_LOG_LEVEL_INFO, "reinstated", c[i].member,
                     "ewma_ms=%.2f reason=pool_empty", c[i].ewma_ms);
  }
}

void zkr__pool_tick(zkr_t *z, uint64_t now) {
  zkr__health_t *pool[ZKR_MAX_MEMBERS] = {0};
  zkr__member_t *due[ZKR_MAX_MEMBERS], *cand[ZKR_MAX_MEMBERS];
  int was_in[ZKR_MAX_MEMBERS];
  uint64_t ejections[ZKR_MAX_MEMBERS];
  pool_change_t changes[ZKR_MAX_MEMBERS];
  size_t n = 0, nd = 0, nc = 0;
  size_t locked = lock_all(z);
  for (size_t i = 0; i < locked; i++) {
    zkr__member_t *m = &z->members[i];
    if (!zkr__policy_read_candidate(z, m)) continue;
    was_in[n] = m->health.in_pool;
    ejections[n] = m->health.ejections;
    cand[n] = m;
    pool[n++] = &m->health;
    if (zkr__health_probe_due(&m->health, now)) {
      zkr__health_probe_sent(&m->health, &z->hcfg, now);
      due[nd++] = m;
    }
  }
  double median = zkr__health_pool_median(pool, n, &z->hcfg);
  zkr__health_evaluate(pool, n, &z->hcfg, now);
  for (size_t i = 0; i < n; i++) {
    int ejected = pool[i]->ejections != ejections[i];
    if (ejected || (!was_in[i] && pool[i]->in_pool))
      changes[nc++] = (pool_change_t){cand[i]->index, ejected, pool[i]->ewma_ms};
  }
  unlock_all(z, locked);
  log_changes(z, changes, nc, median);
  for (size_t i = 0; i < nd; i++) {
    if (zkr__dispatch_probe(due[i]) == ZOK) continue;
    pthread_mutex_lock(&due[i]->health_mu);
    zkr__health_probe_result(&due[i]->health, &z->hcfg, now, 0, 0, -1);
    pthread_mutex_unlock(&due[i]->health_mu);
  }
}
