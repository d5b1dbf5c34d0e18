/* zkr_stats_json(): the zkr_stats() snapshot as one line of JSON, the only
 * serializer of the statistics (ZKROUTE_STATS records and `zkroute status
 * --json` are it), with the schema docs/stats.md documents field by field;
 * and the small string builder it is made with. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "env.h"
#include "handle.h"

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

/* One "key":value each, a comma before all but an object's first. */
typedef struct {
  zkr__sb_t b;
  int first;
} js_t;

static void key(js_t *j, const char *k) {
  zkr__sb_printf(&j->b, "%s\"%s\":", j->first ? "" : ",", k);
  j->first = 0;
}
static void open_obj(js_t *j, const char *k) {
  if (k) key(j, k);
  zkr__sb_printf(&j->b, "{");
  j->first = 1;
}
static void close_obj(js_t *j) {
  zkr__sb_printf(&j->b, "}");
  j->first = 0;
}
static void f_int(js_t *j, const char *k, int64_t v) {
  key(j, k);
  zkr__sb_printf(&j->b, "%" PRId64, v);
}
static void f_u64(js_t *j, const char *k, uint64_t v) {
  key(j, k);
  zkr__sb_printf(&j->b, "%" PRIu64, v);
}
static void f_bool(js_t *j, const char *k, int v) {
  key(j, k);
  zkr__sb_printf(&j->b, "%s", v ? "true" : "false");
}
static void f_str(js_t *j, const char *k, const char *v) {
  key(j, k);
  zkr__sb_json_str(&j->b, v);
}
/* 64-bit identifiers as hex strings (JSON numbers lose precision above
 * 2^53); null where unknown (negative). */
static void f_hex(js_t *j, const char *k, int64_t v, int null_if_negative) {
  key(j, k);
  if (v < 0 && null_if_negative) zkr__sb_printf(&j->b, "null");
  else zkr__sb_printf(&j->b, "\"0x%" PRIx64 "\"", (uint64_t)v);
}
/* Milliseconds, 3 decimals; null where there is no value (negative). */
static void f_ms(js_t *j, const char *k, double v) {
  key(j, k);
  if (v < 0) zkr__sb_printf(&j->b, "null");
  else zkr__sb_printf(&j->b, "%.3f", v);
}

/* Field by field as docs/stats.md lists them: change both together, and
 * ZKR_STATS_JSON_VERSION when a field changes meaning or goes. */
static void member(js_t *j, const zkr_member_stats_t *m, int i) {
  open_obj(j, NULL);
  f_int(j, "index", i);
  f_str(j, "address", m->address);
  f_str(j, "zone", m->zone);
  f_int(j, "server_id", m->server_id);
  f_str(j, "role", zkr_role_name(m->role));
  f_hex(j, "zxid", m->zxid, 1);
  f_bool(j, "removed", m->removed);
  f_bool(j, "parked", m->parked);
  f_str(j, "session_state", zkr_state_name(m->session_state));
  f_hex(j, "session_id", m->session_id, 0);
  f_bool(j, "connected", m->connected);
  f_bool(j, "in_read_pool", m->in_read_pool);
  f_bool(j, "is_write_session", m->is_write_session);
  f_bool(j, "is_owner", m->is_owner);
  f_int(j, "hosted_on", m->hosted_on);
  f_u64(j, "reads", m->reads);
  f_u64(j, "writes", m->writes);
  f_u64(j, "syncs", m->syncs);
  f_u64(j, "coalesced", m->coalesced);
  f_u64(j, "errors", m->errors);
  f_int(j, "outstanding", m->outstanding);
  f_u64(j, "hedges", m->hedges);
  f_u64(j, "selector_picks", m->selector_picks);
  f_int(j, "watches", m->watches);
  f_u64(j, "samples", m->samples);
  f_ms(j, "ewma_ms", m->ewma_ms);
  f_u64(j, "ejections", m->ejections);
  f_ms(j, "out_of_pool_ms", m->out_of_pool_ms);
  f_u64(j, "srvr_polls", m->srvr_polls);
  f_u64(j, "srvr_failures", m->srvr_failures);
  f_u64(j, "rescues", m->rescues);
  f_u64(j, "recreated", m->recreated);
  close_obj(j);
}

int zkr_stats_json(zkr_t *z, char **out) {
  if (!z || !out) return ZBADARGUMENTS;
  *out = NULL;
  zkr_stats_t *s;
  int rc = zkr_stats(z, &s);
  if (rc != ZOK) return rc;
  js_t j = {.first = 1};
  open_obj(&j, NULL);
  f_int(&j, "version", ZKR_STATS_JSON_VERSION);
  f_str(&j, "state", zkr_state_name(zkr_state(z)));
  f_str(&j, "policy", zkr_policy_name(s->policy));
  f_int(&j, "n_members", s->n_members);
  f_int(&j, "leader", s->leader);
  f_u64(&j, "leader_changes", s->leader_changes);
  f_int(&j, "write_member", s->write_member);
  open_obj(&j, "owner");
  f_int(&j, "member", s->owner);
  f_bool(&j, "moved", s->owner_moved);
  f_hex(&j, "session_id", s->owner_session_id, 0);
  if (s->owner >= 0) {
    f_str(&j, "state", zkr_state_name(s->owner_state));
  } else {
    key(&j, "state");
    zkr__sb_printf(&j.b, "null"); /* no owner session yet */
  }
  f_u64(&j, "rescues", s->owner_rescues);
  close_obj(&j);
  open_obj(&j, "watches");
  f_int(&j, "registered", s->watches);
  f_int(&j, "lost", s->watches_lost);
  f_u64(&j, "rearms", s->watch_rearms);
  f_u64(&j, "missed_events", s->watch_missed_events);
  close_obj(&j);
  open_obj(&j, "hedge");
  f_bool(&j, "on", s->hedging);
  f_ms(&j, "delay_ms", s->hedge_delay_ms); /* -1 when off */
  f_u64(&j, "eligible", s->hedge_eligible);
  f_u64(&j, "sent", s->hedges_sent);
  f_u64(&j, "won", s->hedges_won);
  f_u64(&j, "capped", s->hedges_capped);
  f_u64(&j, "no_member", s->hedges_no_member);
  f_u64(&j, "discarded", s->hedge_discarded);
  close_obj(&j);
  open_obj(&j, "selector");
  f_bool(&j, "on", s->has_selector);
  f_u64(&j, "picks", s->selector_picks);
  f_u64(&j, "fallbacks", s->selector_fallbacks);
  close_obj(&j);
  open_obj(&j, "membership");
  f_int(&j, "follows_config", s->follows_config);
  f_hex(&j, "config_version", s->config_version, 1);
  f_u64(&j, "config_reads", s->config_reads);
  f_u64(&j, "config_errors", s->config_errors);
  f_u64(&j, "added", s->members_added);
  f_u64(&j, "removed", s->members_removed);
  close_obj(&j);
  key(&j, "members");
  zkr__sb_printf(&j.b, "[");
  for (int i = 0; i < s->n_members; i++) {
    if (i) zkr__sb_printf(&j.b, ",");
    member(&j, &s->members[i], i);
  }
  zkr__sb_printf(&j.b, "]");
  close_obj(&j);
  zkr_stats_free(s);
  if (j.b.oom) {
    free(j.b.p);
    return ZKR_ENOMEM;
  }
  *out = j.b.p;
  return ZOK;
}
