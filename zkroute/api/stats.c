/* zkr_stats(): a consistent-enough snapshot of every member's role,
 * session, pool state, counters and latency, plus the leader and the write
 * session.  Counters are read atomically one by one; the snapshot is not a
 * single instant, which statistics do not need. */
#include <stdlib.h>
#include <string.h>

#include "core/handle.h"
#include "route/hedger.h"
#include "core/latency.h"
#include "core/log.h"
#include "session/membership.h"
#include "core/policy.h"
#include "core/registry.h"
#include "core/watch.h"
#include "zk/zkapi.h"

static int stats_held(zkr_t *z, zkr_stats_t **out) {
  if (!out) return ZBADARGUMENTS;
  *out = NULL;
  size_t n = z->n; /* once: zkr__membership_* may add a member meanwhile */
  zkr_stats_t *s = calloc(1, sizeof *s + n * sizeof s->members[0]);
  if (!s) return ZKR_ENOMEM;
  s->n_members = (int)n;
  zkr__membership_stats(z, s);
  s->leader = z->leader;
  s->policy = z->opts.policy;
  s->leader_changes = z->leader_changes;
  s->has_selector = z->sel_on;
  s->selector_picks = z->sel_picks;
  s->selector_fallbacks = z->sel_fallbacks;
  pthread_mutex_lock(&z->gate_mu);
  s->write_member = z->gate_cur;
  pthread_mutex_unlock(&z->gate_mu);
  zkr__hedger_stats(z, s);
  int o = z->owner;
  s->owner = -1;
  if (o >= 0) {
    zkr__member_t *om = &z->members[o];
    s->owner = om->hosted_on;
    s->owner_moved = om->owner_slot;
    s->owner_session_id = z->owner_id.client_id;
    s->owner_state = om->state;
  }
  s->owner_rescues = zkr__member_owner_slot(z)->rescues;
  for (size_t i = 0; i < n; i++) s->owner_rescues += z->members[i].rescues;
  zkr__watch_stats(z, s);
  zkr__log_stats(z, s);
  uint64_t now = zkr__now_ns();
  for (size_t i = 0; i < n; i++) {
    zkr__member_t *m = &z->members[i];
    zkr_member_stats_t *ms = &s->members[i];
    strncpy(ms->address, m->address, sizeof ms->address - 1);
    ms->role = (zkr_role_t)m->role;
    ms->zxid = m->zxid;
    ms->session_state = m->state;
    pthread_rwlock_rdlock(&m->zh_lock);
    const clientid_t *cid = m->zh ? zkr__zk->zoo_client_id(m->zh) : NULL;
    ms->session_id = cid ? cid->client_id : 0;
    pthread_rwlock_unlock(&m->zh_lock);
    ms->connected = zkr__member_usable(m);
    ms->is_write_session = (int)i == s->write_member;
    ms->reads = m->reads;
    ms->writes = m->writes;
    ms->syncs = m->syncs;
    ms->coalesced = m->coalesced;
    ms->reads_again = m->reads_again;
    ms->errors = m->errors;
    ms->srvr_polls = m->srvr_polls;
    ms->srvr_shared = m->srvr_shared;
    ms->srvr_failures = m->srvr_failures;
    ms->rescues = m->rescues;
    ms->recreated = m->recreated;
    ms->is_owner = (int)i == o;
    ms->hosted_on = m->hosted_on;
    ms->hedges = m->hedges;
    memcpy(ms->zone, m->zone, sizeof ms->zone);
    ms->outstanding = m->outstanding;
    ms->selector_picks = m->selected;
    ms->watches = m->watches;
    ms->removed = m->retired;
    ms->parked = m->parked;
    ms->server_id = m->server_id;
    zkr__latency_get(&z->latency[i].read, &ms->read_latency);
    zkr__latency_get(&z->latency[i].write, &ms->write_latency);
    pthread_mutex_lock(&m->health_mu);
    ms->in_read_pool = ms->connected && m->health.in_pool && zkr__policy_read_candidate(z, m);
    ms->samples = m->health.samples;
    ms->ewma_ms = m->health.ewma_ms;
    ms->ejections = m->health.ejections;
    ms->out_of_pool_ms = (double)zkr__health_out_ns(&m->health, now) / 1e6;
    pthread_mutex_unlock(&m->health_mu);
  }
  *out = s;
  return ZOK;
}

int zkr_stats(zkr_t *z, zkr_stats_t **out) { ZKR__HELD(z, stats_held(z, out)); }

void zkr_stats_free(zkr_stats_t *s) { free(s); }
