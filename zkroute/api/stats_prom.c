/* zkr_stats_prometheus(): the zkr_stats() snapshot in the Prometheus text
 * exposition format (version 0.0.4), written by expanding the one schema
 * of stats_schema.h, as zkr_stats_json() is: a field that becomes a metric
 * says so there, with its name and HELP line, and nothing here names a
 * field.  Each metric family is written once, with the samples of every
 * handle given (the metrics endpoint, zkr__metrics_*, passes all of its
 * handles); every sample has a label handle, member metrics member and
 * role.  Also zkr_metric_info(), the list of metrics from the same schema,
 * which `zkroute metrics` prints for docs/stats.md. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/handle.h"
#include "core/registry.h"
#include "api/stats.h"
#include "model/stats_schema.h"

/* A label value: backslash, double quote and line feed escaped. */
static void esc(zkr__sb_t *b, const char *v) {
  for (; *v; v++) {
    if (*v == '\\') zkr__stats_json_printf(b, "\\\\");
    else if (*v == '"') zkr__stats_json_printf(b, "\\\"");
    else if (*v == '\n') zkr__stats_json_printf(b, "\\n");
    else zkr__stats_json_printf(b, "%c", *v);
  }
}

static void family(zkr__sb_t *b, const char *name, const char *type, const char *help) {
  zkr__stats_json_printf(b, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* The labels of a sample, without braces: of the handle, or of one of its
 * members. */
typedef struct {
  zkr__sb_t b;
} labels_t;

static const char *handle_labels(labels_t *l, const zkr__prom_src_t *h) {
  l->b.len = 0;
  zkr__stats_json_printf(&l->b, "handle=\"%u\"", h->handle);
  return l->b.p ? l->b.p : "";
}

static const char *member_labels(labels_t *l, const zkr__prom_src_t *h,
                                 const zkr_member_stats_t *m) {
  l->b.len = 0;
  zkr__stats_json_printf(&l->b, "handle=\"%u\",member=\"", h->handle);
  esc(&l->b, m->address);
  zkr__stats_json_printf(&l->b, "\",role=\"%s\"", zkr_role_name(m->role));
  return l->b.p ? l->b.p : "";
}

/* Samples, one writer per kind that a counter or gauge can be. */
static void p_INT(zkr__sb_t *b, const char *name, const char *l, int64_t v) {
  zkr__stats_json_printf(b, "%s{%s} %" PRId64 "\n", name, l, v);
}
static void p_COUNT(zkr__sb_t *b, const char *name, const char *l, uint64_t v) {
  zkr__stats_json_printf(b, "%s{%s} %" PRIu64 "\n", name, l, v);
}
static void p_BOOL(zkr__sb_t *b, const char *name, const char *l, int v) {
  zkr__stats_json_printf(b, "%s{%s} %d\n", name, l, v ? 1 : 0);
}
/* Milliseconds become seconds; no value (negative), no sample. */
static void p_MS(zkr__sb_t *b, const char *name, const char *l, double v) {
  if (v >= 0) zkr__stats_json_printf(b, "%s{%s} %.9g\n", name, l, v / 1e3);
}

/* A state set: one sample per state word, 1 for the current state. */
static void p_stateset(zkr__sb_t *b, const char *name, const char *l, int state) {
  static const int *const states[] = {&ZOO_CONNECTING_STATE,      &ZOO_ASSOCIATING_STATE,
                                      &ZOO_CONNECTED_STATE,       &ZOO_READONLY_STATE,
                                      &ZOO_EXPIRED_SESSION_STATE, &ZOO_AUTH_FAILED_STATE,
                                      &ZOO_NOTCONNECTED_STATE};
  int known = 0;
  for (size_t k = 0; k < sizeof states / sizeof states[0]; k++) {
    int on = *states[k] == state;
    known |= on;
    zkr__stats_json_printf(b, "%s{%s,state=\"%s\"} %d\n", name, l, zkr_state_name(*states[k]), on);
  }
  zkr__stats_json_printf(b, "%s{%s,state=\"closed\"} %d\n", name, l, !known);
}

/* An info gauge: the value as a label, the sample 1. */
static void t_HEX(char *t, size_t len, int64_t v) { snprintf(t, len, "0x%" PRIx64, (uint64_t)v); }
static void t_POLICY(char *t, size_t len, int v) { snprintf(t, len, "%s", zkr_policy_name(v)); }
static void p_info(zkr__sb_t *b, const char *name, const char *l, const char *key,
                   const char *text) {
  zkr__stats_json_printf(b, "%s{%s,%s=\"", name, l, key);
  esc(b, text);
  zkr__stats_json_printf(b, "\"} 1\n");
}

/* A histogram: cumulative buckets in seconds, the sum, the count. */
static void p_hist(zkr__sb_t *b, const char *name, const char *l, const zkr_latency_hist_t *h) {
  static const double bounds_ms[ZKR_LATENCY_BUCKETS] = ZKR_LATENCY_BOUNDS_MS;
  uint64_t cum = 0;
  for (int k = 0; k < ZKR_LATENCY_BUCKETS; k++) {
    cum += h->counts[k];
    zkr__stats_json_printf(b, "%s_bucket{%s,le=\"%g\"} %" PRIu64 "\n", name, l, bounds_ms[k] / 1e3,
                           cum);
  }
  cum += h->counts[ZKR_LATENCY_BUCKETS];
  zkr__stats_json_printf(b, "%s_bucket{%s,le=\"+Inf\"} %" PRIu64 "\n", name, l, cum);
  zkr__stats_json_printf(b, "%s_sum{%s} %.9g\n", name, l, h->sum_ms / 1e3);
  zkr__stats_json_printf(b, "%s_count{%s} %" PRIu64 "\n", name, l, cum);
}

/* Every sample of one family: the handle's fields (TOP) or every member of
 * every handle (MEM), with s, vs, m and i as the schema's values name
 * them. */
#define EACH_TOP(stmt)                                                                             \
  for (size_t h_ = 0; h_ < n; h_++) {                                                              \
    const zkr_stats_t *s = src[h_].s;                                                              \
    int vs = src[h_].vs;                                                                           \
    const char *l_ = handle_labels(&lb, &src[h_]);                                                 \
    (void)s;                                                                                       \
    (void)vs;                                                                                      \
    stmt;                                                                                          \
  }
#define EACH_MEM(stmt)                                                                             \
  for (size_t h_ = 0; h_ < n; h_++)                                                                \
    for (int i = 0; i < src[h_].s->n_members; i++) {                                               \
      const zkr_member_stats_t *m = &src[h_].s->members[i];                                        \
      const char *l_ = member_labels(&lb, &src[h_], m);                                            \
      (void)i;                                                                                     \
      stmt;                                                                                        \
    }

#define P_NONE(...)
#define P_COUNTER(where, kind, key, value, name, help)                                             \
  family(b, name, "counter", help);                                                                \
  EACH_##where(p_##kind(b, name, l_, value))
#define P_GAUGE(where, kind, key, value, name, help)                                               \
  family(b, name, "gauge", help);                                                                  \
  EACH_##where(p_##kind(b, name, l_, value))
#define P_STATESET(where, kind, key, value, name, help)                                            \
  family(b, name, "gauge", help);                                                                  \
  EACH_##where(p_stateset(b, name, l_, value))
#define P_INFO(where, kind, key, value, name, help)                                                \
  family(b, name, "gauge", help);                                                                  \
  EACH_##where(char t_[64]; t_##kind(t_, sizeof t_, value); p_info(b, name, l_, key, t_))
#define P_HISTOGRAM(where, kind, key, value, name, help)                                           \
  family(b, name, "histogram", help);                                                              \
  EACH_##where(p_hist(b, name, l_, value))

#define P_TOP(kind, path, key, value, mtype, metric, help)                                         \
  P_##mtype(TOP, kind, key, value, "zkroute_" #metric, help)
#define P_MEM(kind, path, key, value, mtype, metric, help)                                         \
  P_##mtype(MEM, kind, key, value, "zkroute_" #metric, help)

void zkr__stats_prom_write(zkr__sb_t *b, const zkr__prom_src_t *src, size_t n) {
  labels_t lb = {{0}};
  ZKR__STATS_TOP(P_TOP)
  ZKR__STATS_MEMBER(P_MEM)
  if (lb.b.oom) b->oom = 1;
  free(lb.b.p);
}

static int prometheus_held(zkr_t *z, char **out) {
  if (!out) return ZBADARGUMENTS;
  *out = NULL;
  zkr_stats_t *s;
  int rc = zkr_stats(z, &s);
  if (rc != ZOK) return rc;
  zkr__prom_src_t src = {.handle = z->serial, .s = s, .vs = zkr_state(z)};
  zkr__sb_t b = {0};
  zkr__stats_prom_write(&b, &src, 1);
  zkr_stats_free(s);
  if (b.oom || !b.p) {
    free(b.p);
    return ZKR_ENOMEM;
  }
  *out = b.p;
  return ZOK;
}

int zkr_stats_prometheus(zkr_t *z, char **out) { ZKR__HELD(z, prometheus_held(z, out)); }

/* ---- the list of metrics ---- */

typedef struct {
  const char *name, *type, *labels, *json, *help;
} metric_t;

#define I_NONE(...)
#define I_COUNTER(json, key, name, help, labels) {name, "counter", labels, json, help},
#define I_GAUGE(json, key, name, help, labels) {name, "gauge", labels, json, help},
#define I_HISTOGRAM(json, key, name, help, labels) {name, "histogram", labels, json, help},
#define I_STATESET(json, key, name, help, labels) {name, "gauge", "state", json, help},
#define I_INFO(json, key, name, help, labels) {name, "gauge", key, json, help},
#define I_TOP(kind, path, key, value, mtype, metric, help)                                         \
  I_##mtype(path key, key, "zkroute_" #metric, help, "")
#define I_MEM(kind, path, key, value, mtype, metric, help)                                         \
  I_##mtype(path key, key, "zkroute_" #metric, help, "member,role")

static const metric_t metrics[] = {ZKR__STATS_TOP(I_TOP) ZKR__STATS_MEMBER(I_MEM)};

int zkr_metric_info(int i, const char **name, const char **type, const char **labels,
                    const char **json, const char **help) {
  if (i < 0 || (size_t)i >= sizeof metrics / sizeof metrics[0]) return ZBADARGUMENTS;
  const metric_t *m = &metrics[i];
  if (name) *name = m->name;
  if (type) *type = m->type;
  if (labels) *labels = m->labels;
  if (json) *json = m->json;
  if (help) *help = m->help;
  return ZOK;
}
