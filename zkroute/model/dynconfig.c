/* Parser of /zookeeper/config (see dynconfig.h): strict, because the bytes
 * come from the network and a misread server list would open sessions to
 * the wrong places.  Addresses go through the host list parser (zkr__hosts_*),
 * so a name or port means exactly what it means in a connect string. */
#include "model/dynconfig.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "zkroute.h"

static int is_digit(char c) { return c >= '0' && c <= '9'; }

static int is_hex(char c) {
  return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

/* Decimal digits only, at most 18 (no overflow), no sign. */
static int parse_id(const char *p, const char *end, int64_t *out) {
  if (p == end || end - p > 18) return 0;
  int64_t v = 0;
  for (; p < end; p++) {
    if (!is_digit(*p)) return 0;
    v = v * 10 + (*p - '0');
  }
  *out = v;
  return 1;
}

/* "host:port" (or "[v6]:port") in [p, end) through the host list parser,
 * which must find exactly one member and no chroot. */
static int parse_hostport(const char *p, const char *end, zkr__host_t *out) {
  char tmp[ZKR__HOST_NAME_MAX + 16];
  size_t len = (size_t)(end - p);
  if (len == 0 || len >= sizeof tmp || memchr(p, ',', len) || memchr(p, '/', len)) return 0;
  memcpy(tmp, p, len);
  tmp[len] = '\0';
  zkr__hostlist_t l;
  int rc = zkr__hosts_parse(tmp, &l);
  int ok = rc == ZOK && l.n == 1 && !l.chroot;
  if (ok) *out = l.v[0];
  zkr__hosts_free(&l);
  return ok;
}

/* End of the host part of an address that starts at p: after "]" for a
 * bracketed IPv6 address, else at the first ':'.  NULL when malformed. */
static const char *host_end(const char *p, const char *end) {
  if (p < end && *p == '[') {
    const char *q = memchr(p, ']', (size_t)(end - p));
    return q ? q + 1 : NULL;
  }
  const char *q = memchr(p, ':', (size_t)(end - p));
  return q ? q : NULL;
}

/* One quorum address "HOST:QPORT:EPORT[:ROLE]" in [p, end).  Sets *role to
 * 0 (none given), 1 (participant) or 2 (observer). */
static int parse_quorum(const char *p, const char *end, zkr__host_t *out, int *role) {
  const char *h = host_end(p, end);
  if (!h || h >= end || *h != ':') return 0;
  const char *q = h + 1;
  const char *c2 = memchr(q, ':', (size_t)(end - q));
  if (!c2) return 0;
  const char *e = c2 + 1;
  const char *c3 = memchr(e, ':', (size_t)(end - e));
  const char *eend = c3 ? c3 : end;
  zkr__host_t qh, eh;
  if (!parse_hostport(p, c2, &qh)) return 0;
  /* The election port: checked as a port of the same host. */
  char tmp[ZKR__HOST_NAME_MAX + 16];
  size_t hl = (size_t)(h - p), el = (size_t)(eend - e);
  if (hl + 1 + el >= sizeof tmp) return 0;
  memcpy(tmp, p, hl);
  tmp[hl] = ':';
  memcpy(tmp + hl + 1, e, el);
  if (!parse_hostport(tmp, tmp + hl + 1 + el, &eh)) return 0;
  *role = 0;
  if (c3) {
    size_t rl = (size_t)(end - c3 - 1);
    if (rl == 11 && !memcmp(c3 + 1, "participant", 11)) *role = 1;
    else if (rl == 8 && !memcmp(c3 + 1, "observer", 8)) *role = 2;
    else return 0;
  }
  *out = qh;
  return 1;
}

static int is_wildcard(const char *name) {
  return !strcmp(name, "0.0.0.0") || !strcmp(name, "::") || !strcmp(name, "0:0:0:0:0:0:0:0");
}

/* The value of a server.N line in [p, end). */
static int parse_server(const char *p, const char *end, zkr__config_server_t *s) {
  const char *semi = memchr(p, ';', (size_t)(end - p));
  const char *qend = semi ? semi : end;
  int first = 1, role_seen = -1;
  while (p <= qend) {
    const char *bar = memchr(p, '|', (size_t)(qend - p));
    const char *aend = bar ? bar : qend;
    zkr__host_t h;
    int role;
    if (!parse_quorum(p, aend, &h, &role)) return 0;
    /* Every address of a multi-address server states the same role. */
    if (role_seen >= 0 && role != role_seen) return 0;
    role_seen = role;
    if (first) s->quorum = h;
    first = 0;
    if (!bar) break;
    p = bar + 1;
  }
  s->observer = role_seen == 2;
  s->has_client = 0;
  if (!semi) return 1;
  const char *c = semi + 1;
  if (c == end || memchr(c, ';', (size_t)(end - c))) return 0;
  char tmp[ZKR__HOST_NAME_MAX + 16];
  size_t len = (size_t)(end - c);
  const char *colon = NULL;
  if (*c == '[') {
    const char *rb = memchr(c, ']', len);
    if (!rb || rb + 1 >= end || rb[1] != ':') return 0;
    colon = rb + 1;
  } else {
    colon = memchr(c, ':', len);
  }
  if (!colon) {
    /* Only a port: the server listens on every address. */
    int n = snprintf(tmp, sizeof tmp, "h:%.*s", (int)len, c);
    if (n < 0 || (size_t)n >= sizeof tmp || !parse_hostport(tmp, tmp + n, &s->client)) return 0;
  } else if (!parse_hostport(c, end, &s->client)) {
    return 0;
  }
  if (!colon || is_wildcard(s->client.name)) {
    int port = s->client.port;
    s->client = s->quorum;
    s->client.port = port;
  }
  s->has_client = 1;
  return 1;
}

static int key_is(const char *p, const char *eq, const char *prefix, const char **num) {
  size_t pl = strlen(prefix);
  if ((size_t)(eq - p) <= pl || memcmp(p, prefix, pl) != 0) return 0;
  *num = p + pl;
  return 1;
}

static int parse_line(const char *p, const char *end, zkr__config_t *out, int *have_version) {
  const char *eq = memchr(p, '=', (size_t)(end - p));
  if (!eq) return 0;
  const char *v = eq + 1, *num;
  int64_t id;
  if ((size_t)(eq - p) == 7 && !memcmp(p, "version", 7)) {
    if (*have_version || v == end || end - v > 15) return 0;
    int64_t x = 0;
    for (const char *q = v; q < end; q++) {
      if (!is_hex(*q)) return 0;
      x = x * 16 + (is_digit(*q) ? *q - '0' : (*q | 0x20) - 'a' + 10);
    }
    out->version = x;
    *have_version = 1;
    return 1;
  }
  if (key_is(p, eq, "server.", &num)) {
    if (!parse_id(num, eq, &id)) return 0;
    for (size_t i = 0; i < out->n; i++)
      if (out->v[i].id == id) return 0;
    if (out->n >= sizeof out->v / sizeof out->v[0]) return 0;
    zkr__config_server_t s = {.id = id};
    if (!parse_server(v, end, &s)) return 0;
    out->v[out->n++] = s;
    return 1;
  }
  if (key_is(p, eq, "group.", &num) || key_is(p, eq, "weight.", &num))
    return parse_id(num, eq, &id) && v < end;
  return 0;
}

int zkr__dynconfig_parse(const char *buf, size_t len, zkr__config_t *out) {
  if (!out || (!buf && len > 0)) return ZBADARGUMENTS;
  out->n = 0;
  out->version = -1;
  if (len > ZKR__CONFIG_MAX_LEN) return ZKR_ECONFIG;
  int have_version = 0;
  const char *p = buf, *end = buf + len;
  while (p < end) {
    const char *nl = memchr(p, '\n', (size_t)(end - p));
    const char *le = nl ? nl : end;
    for (const char *q = p; q < le; q++) {
      unsigned char c = (unsigned char)*q;
      if (c <= ' ' || c >= 0x7f) goto bad;
    }
    if (le > p && !parse_line(p, le, out, &have_version)) goto bad;
    p = nl ? nl + 1 : end;
  }
  return ZOK;
bad:
  out->n = 0;
  out->version = -1;
  return ZKR_ECONFIG;
}
