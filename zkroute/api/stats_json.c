/* zkr_stats_json(): the zkr_stats() snapshot as one line of JSON
 * (ZKROUTE_STATS records and `zkroute status --json` are it), written by
 * expanding the one schema of stats_schema.h, which docs/stats.md
 * documents field by field; and the small string builder it and the
 * Prometheus writer (zkr__stats_prom_*) are made with. */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/handle.h"
#include "api/stats.h"
#include "model/stats_schema.h"

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

void zkr__stats_json_printf(zkr__sb_t *b, const char *fmt, ...) {
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

void zkr__stats_json_str(zkr__sb_t *b, const char *s) {
  zkr__stats_json_printf(b, "\"");
  for (; s && *s; s++) {
    unsigned char c = (unsigned char)*s;
    if (c == '"' || c == '\\') zkr__stats_json_printf(b, "\\%c", c);
    else if (c < 0x20 || c == 0x7f) zkr__stats_json_printf(b, "\\u%04x", c);
    else zkr__stats_json_printf(b, "%c", c);
  }
  zkr__stats_json_printf(b, "\"");
}

/* One "key":value each, a comma before all but an object's first. */
typedef struct {
  zkr__sb_t b;
  int first;
} js_t;

static void key(js_t *j, const char *k) {
  zkr__stats_json_printf(&j->b, "%s\"%s\":", j->first ? "" : ",", k);
  j->first = 0;
}
static void open_obj(js_t *j, const char *k) {
  if (k) key(j, k);
  zkr__stats_json_printf(&j->b, "{");
  j->first = 1;
}
static void close_obj(js_t *j) {
  zkr__stats_json_printf(&j->b, "}");
  j->first = 0;
}
static void f_int(js_t *j, const char *k, int64_t v) {
  key(j, k);
  zkr__stats_json_printf(&j->b, "%" PRId64, v);
}
static void f_u64(js_t *j, const char *k, uint64_t v) {
  key(j, k);
  zkr__stats_json_printf(&j->b, "%" PRIu64, v);
}
static void f_bool(js_t *j, const char *k, int v) {
  key(j, k);
  zkr__stats_json_printf(&j->b, "%s", v ? "true" : "false");
}
static void f_str(js_t *j, const char *k, const char *v) {
  key(j, k);
  zkr__stats_json_str(&j->b, v);
}
/* 64-bit identifiers as hex strings (JSON numbers lose precision above
 * 2^53); null where unknown (negative). */
static void f_hex(js_t *j, const char *k, int64_t v, int null_if_negative) {
  key(j, k);
  if (v < 0 && null_if_negative) zkr__stats_json_printf(&j->b, "null");
  else zkr__stats_json_printf(&j->b, "\"0x%" PRIx64 "\"", (uint64_t)v);
}
/* Milliseconds, 3 decimals; null where there is no value (negative). */
static void f_ms(js_t *j, const char *k, double v) {
  key(j, k);
  if (v < 0) zkr__stats_json_printf(&j->b, "null");
  else zkr__stats_json_printf(&j->b, "%.3f", v);
}

/* One writer per kind of the schema (stats_schema.h). */
static void j_INT(js_t *j, const char *k, int64_t v) { f_int(j, k, v); }
static void j_COUNT(js_t *j, const char *k, uint64_t v) { f_u64(j, k, v); }
static void j_BOOL(js_t *j, const char *k, int v) { f_bool(j, k, v); }
static void j_MS(js_t *j, const char *k, double v) { f_ms(j, k, v); }
static void j_HEX(js_t *j, const char *k, int64_t v) { f_hex(j, k, v, 0); }
static void j_HEX_NULL(js_t *j, const char *k, int64_t v) { f_hex(j, k, v, 1); }
static void j_STR(js_t *j, const char *k, const char *v) { f_str(j, k, v); }
static void j_STATE(js_t *j, const char *k, int v) { f_str(j, k, zkr_state_name(v)); }
static void j_STATE_NULL(js_t *j, const char *k, int v) {
  if (v != ZKR__STATE_NULL) {
    j_STATE(j, k, v);
  } else {
    key(j, k);
    zkr__stats_json_printf(&j->b, "null");
  }
}
static void j_ROLE(js_t *j, const char *k, int v) { f_str(j, k, zkr_role_name((zkr_role_t)v)); }
static void j_POLICY(js_t *j, const char *k, int v) { f_str(j, k, zkr_policy_name(v)); }
static void j_OBJ(js_t *j, const char *k, int unused) { open_obj(j, k); }
static void j_END(js_t *j, const char *k, int unused) { close_obj(j); }
/* Samples per bucket (ZKR_LATENCY_BOUNDS_MS, then above the last bound)
 * and their sum. */
static void j_HIST(js_t *j, const char *k, const zkr_latency_hist_t *h) {
  open_obj(j, k);
  key(j, "counts");
  for (int b = 0; b <= ZKR_LATENCY_BUCKETS; b++)
    zkr__stats_json_printf(&j->b, "%s%" PRIu64, b ? "," : "[", h->counts[b]);
  zkr__stats_json_printf(&j->b, "]");
  f_ms(j, "sum_ms", h->sum_ms);
  close_obj(j);
}

#define J_FIELD(kind, path, k, value, mtype, metric, help) j_##kind(j, k, value);

static void member(js_t *j, const zkr_member_stats_t *m, int i) {
  open_obj(j, NULL);
  ZKR__STATS_MEMBER(J_FIELD)
  close_obj(j);
}

static void j_MEMBERS(js_t *j, const char *k, const zkr_stats_t *s) {
  key(j, k);
  zkr__stats_json_printf(&j->b, "[");
  for (int i = 0; i < s->n_members; i++) {
    if (i) zkr__stats_json_printf(&j->b, ",");
    member(j, &s->members[i], i);
  }
  zkr__stats_json_printf(&j->b, "]");
}

/* The members array takes the whole snapshot, every other field its
 * value. */
#define J_TOP(kind, path, k, value, mtype, metric, help) J_TOP_##kind(kind, k, value)
#define J_TOP_MEMBERS(kind, k, value) j_MEMBERS(j, k, s);
#define J_TOP_INT(kind, k, value) j_##kind(j, k, value);
#define J_TOP_COUNT J_TOP_INT
#define J_TOP_BOOL J_TOP_INT
#define J_TOP_MS J_TOP_INT
#define J_TOP_HEX J_TOP_INT
#define J_TOP_HEX_NULL J_TOP_INT
#define J_TOP_STR J_TOP_INT
#define J_TOP_STATE J_TOP_INT
#define J_TOP_STATE_NULL J_TOP_INT
#define J_TOP_POLICY J_TOP_INT
#define J_TOP_OBJ J_TOP_INT
#define J_TOP_END J_TOP_INT

void zkr__stats_json_write(zkr__sb_t *b, const zkr_stats_t *s, int vs) {
  js_t jv = {.b = *b, .first = 1}, *j = &jv;
  open_obj(j, NULL);
  ZKR__STATS_TOP(J_TOP)
  close_obj(j);
  *b = jv.b;
}

int zkr_stats_json(zkr_t *z, char **out) {
  if (!z || !out) return ZBADARGUMENTS;
  *out = NULL;
  zkr_stats_t *s;
  int rc = zkr_stats(z, &s);
  if (rc != ZOK) return rc;
  zkr__sb_t b = {0};
  zkr__stats_json_write(&b, s, zkr_state(z));
  zkr_stats_free(s);
  if (b.oom) {
    free(b.p);
    return ZKR_ENOMEM;
  }
  *out = b.p;
  return ZOK;
}
