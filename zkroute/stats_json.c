/* zkr_stats_json(): the zkr_stats() snapshot as one line of JSON, with the
 * schema documented in docs/dropin.md (ZKROUTE_STATS writes it), and the
 * small string builder it is made with. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "env.h"
#include "internal.h"

static int sb_reserve(zkr__sb_t *b, size_t more) {
  if (b->oom) return 0;
  if (b->len + more + 1 <= b->cap) return 1;
  size_t cap = b->cap ? b->cap : 256;
  while (cap < b->len + more + 1) cap *= 2;
  char *p = realloc(b->p, cap);
  if (!p) {
    b->oom = 1;
    return 0;
  }
  b->p = p;
  b->cap = cap;
  return 1;
}

void zkr__sb_printf(zkr__sb_t *b, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(NULL, 0, fmt, ap);
  va_end(ap);
  if (n < 0 || !sb_reserve(b, (size_t)n)) return;
  va_start(ap, fmt);
  vsnprintf(b->p + b->len, b->cap - b->len, fmt, ap);
  va_end(ap);
  b->len += (size_t)n;
}

void zkr__sb_json_str(zkr__sb_t *b, const char *s) {
  zkr__sb_printf(b, "\"");
  for (; s && *s; s++) {
    unsigned char c = (unsigned char)*s;
    if (c == '"' || c == '\\') zkr__sb_printf(b, "\\%c", c);
    else if (c < 0x20 || c == 0x7f) zkr__sb_printf(b, "\\u%04x", c);
    else zkr__sb_printf(b, "%c", c);
  }
  zkr__sb_printf(b, "\"");
}

static const char *json_bool(int v) { return v ? "true" : "false"; }

int zkr_stats_json(zkr_t *z, char **out) {
  if (!z || !out) return ZBADARGUMENTS;
  *out = NULL;
  zkr_stats_t *s;
  int rc = zkr_stats(z, &s);
  if (rc != ZOK) return rc;
  zkr__sb_t b = {0};
  zkr__sb_printf(&b,
                 "{\"n_members\":%d,\"leader\":%d,\"write_member\":%d,"
                 "\"policy\":\"%s\",\"leader_changes\":%" PRIu64 ","
                 "\"follows_config\":%d,\"config_version\":%" PRId64 ","
                 "\"config_reads\":%" PRIu64 ",\"config_errors\":%" PRIu64 ","
                 "\"members_added\":%" PRIu64 ",\"members_removed\":%" PRIu64 ","
                 "\"owner\":{\"member\":%d,\"moved\":%s,\"session_id\":\"0x%" PRIx64
                 "\",\"state\":%d,\"rescues\":%" PRIu64 "},"
                 "\"watches\":{\"registered\":%d,\"lost\":%d,\"rearms\":%" PRIu64
                 ",\"missed_events\":%" PRIu64 "},",
                 s->n_members, s->leader, s->write_member,
                 zkr_policy_name(s->policy), s->leader_changes, s->follows_config,
                 s->config_version, s->config_reads, s->config_errors,
                 s->members_added, s->members_removed, s->owner,
                 json_bool(s->owner_moved), (uint64_t)s->owner_session_id,
                 s->owner_state, s->owner_rescues, s->watches, s->watches_lost,
                 s->watch_rearms, s->watch_missed_events);
  zkr__sb_printf(&b, "\"hedge\":{\"on\":%s,", json_bool(s->hedging));
  if (s->hedge_delay_ms >= 0) zkr__sb_printf(&b, "\"delay_ms\":%.3f,", s->hedge_delay_ms);
  else zkr__sb_printf(&b, "\"delay_ms\":null,");
  zkr__sb_printf(&b,
                 "\"eligible\":%" PRIu64 ",\"sent\":%" PRIu64 ",\"won\":%" PRIu64
                 ",\"capped\":%" PRIu64 ",\"no_member\":%" PRIu64
                 ",\"discarded\":%" PRIu64 "},\"selector\":%s,\"selector_picks\":%" PRIu64
                 ",\"selector_fallbacks\":%" PRIu64 ",\"members\":[",
                 s->hedge_eligible, s->hedges_sent, s->hedges_won, s->hedges_capped,
                 s->hedges_no_member, s->hedge_discarded, json_bool(s->has_selector),
                 s->selector_picks, s->selector_fallbacks);
  for (int i = 0; i < s->n_members; i++) {
    const zkr_member_stats_t *m = &s->members[i];
    zkr__sb_printf(&b, "%s{\"address\":", i ? "," : "");
    zkr__sb_json_str(&b, m->address);
    zkr__sb_printf(&b,
                   ",\"role\":\"%s\",\"zxid\":%" PRId64 ",\"session_state\":%d,"
                   "\"session_id\":\"0x%" PRIx64 "\",\"connected\":%s,"
                   "\"in_read_pool\":%s,\"is_write_session\":%s,"
                   "\"reads\":%" PRIu64 ",\"writes\":%" PRIu64 ",\"syncs\":%" PRIu64
                   ",\"coalesced\":%" PRIu64 ",\"errors\":%" PRIu64 ",\"samples\":%" PRIu64 ",",
                   zkr_role_name(m->role), m->zxid, m->session_state,
                   (uint64_t)m->session_id, json_bool(m->connected),
                   json_bool(m->in_read_pool), json_bool(m->is_write_session),
                   m->reads, m->writes, m->syncs, m->coalesced, m->errors, m->samples);
    if (m->ewma_ms >= 0) zkr__sb_printf(&b, "\"ewma_ms\":%.3f,", m->ewma_ms);
    else zkr__sb_printf(&b, "\"ewma_ms\":null,");
    zkr__sb_printf(&b,
                   "\"ejections\":%" PRIu64 ",\"out_of_pool_ms\":%.1f,"
                   "\"srvr_polls\":%" PRIu64 ",\"srvr_failures\":%" PRIu64
                   ",\"rescues\":%" PRIu64 ",\"recreated\":%" PRIu64
                   ",\"is_owner\":%s,\"hosted_on\":%d,\"hedges\":%" PRIu64
                   ",\"removed\":%s,\"parked\":%s,\"server_id\":%" PRId64 ",\"zone\":",
                   m->ejections, m->out_of_pool_ms, m->srvr_polls,
                   m->srvr_failures, m->rescues, m->recreated, json_bool(m->is_owner),
                   m->hosted_on, m->hedges, json_bool(m->removed), json_bool(m->parked),
                   m->server_id);
    zkr__sb_json_str(&b, m->zone);
    zkr__sb_printf(&b, ",\"outstanding\":%d,\"selector_picks\":%" PRIu64 ",\"watches\":%d}",
                   m->outstanding, m->selector_picks, m->watches);
  }
  zkr__sb_printf(&b, "]}");
  zkr_stats_free(s);
  if (b.oom) {
    free(b.p);
    return ZKR_ENOMEM;
  }
  *out = b.p;
  return ZOK;
}
