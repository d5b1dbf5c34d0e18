/* Host list parser: turns "h1:2181,h2:2181,[::1]:2181/chroot" into entries
 * and a chroot, expands the entries into member addresses through a
 * resolver function it is given, and formats one member back into a
 * ZooKeeper host string.  Pure code: no I/O of its own.  It reads every
 * connect string libzookeeper_mt 3.8 reads as stock does (tests/unit/test_hosts.c
 * checks that against the real library), and refuses with a specific code
 * the few that stock would take and then misuse: a typo must not give a
 * session that silently connects somewhere else. */
#include "model/hosts.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "zkroute.h"

/* Longest text inet_pton() may be handed; longer is never a valid IPv6. */
#define ZKR__IPV6_TEXT_MAX 64

/* Plain ASCII tests: the <ctype.h> ones depend on the locale, and a host
 * list must mean the same thing whatever locale the application set. */
static int is_digit(char c) { return c >= '0' && c <= '9'; }

static int is_alnum(char c) {
  return is_digit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

/* isspace() of the C locale, which is what stock skips. */
static int is_space(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

/* Characters of a host name, and of an IPv6 zone (an interface name). */
static int is_name_char(char c) { return is_alnum(c) || c == '-' || c == '.' || c == '_'; }

/* Parses the port in [p, end).  Stock checks it with strtol() and then
 * hands the text to getaddrinfo(), which reads it in decimal: so white
 * space and one '+' may come first, and the digits are decimal ("0217" is
 * port 217 for stock too).  A value outside 1..65535 is refused (stock
 * would truncate it to 16 bits); white space after the digits is SPACE,
 * anything else BAD_PORT.  The value is checked digit by digit, so a long
 * run of digits cannot overflow. */
static int parse_port(const char *p, const char *end, int *port) {
  long v = 0;
  const char *digits;

  while (p < end && is_space(*p)) p++;
  if (p < end && *p == '+') p++;
  for (digits = p; p < end && is_digit(*p); p++) {
    v = v * 10 + (*p - '0');
    if (v > 65535) return ZKR_EHOSTS_BAD_PORT;
  }
  if (p == digits) return ZKR_EHOSTS_BAD_PORT;
  if (p < end) return is_space(*p) ? ZKR_EHOSTS_SPACE : ZKR_EHOSTS_BAD_PORT;
  if (v == 0) return ZKR_EHOSTS_BAD_PORT;
  *port = (int)v;
  return ZOK;
}

/* Splits "addr%zone" and converts addr.  inet_pton() does the real
 * validation (group sizes, a single "::", an embedded IPv4 tail), which
 * also rejects "[1.2.3.4]": brackets are for IPv6 only. */
static int parse_ipv6(const char *s, size_t n, struct in6_addr *addr, const char **zone,
                      size_t *zone_len) {
  char text[ZKR__IPV6_TEXT_MAX];
  const char *pct = memchr(s, '%', n);
  size_t alen = pct ? (size_t)(pct - s) : n;

  if (alen == 0 || alen >= sizeof text) return ZKR_EHOSTS_BAD_IPV6;
  memcpy(text, s, alen);
  text[alen] = '\0';
  if (inet_pton(AF_INET6, text, addr) != 1) return ZKR_EHOSTS_BAD_IPV6;
  *zone = pct ? pct + 1 : s + n;
  *zone_len = pct ? n - alen - 1 : 0;
  if (pct && *zone_len == 0) return ZKR_EHOSTS_BAD_IPV6;
  for (size_t i = 0; i < *zone_len; i++)
    if (!is_name_char((*zone)[i])) return ZKR_EHOSTS_BAD_IPV6;
  return ZOK;
}

static int check_ipv6(const char *s, size_t n) {
  struct in6_addr addr;
  const char *zone;
  size_t zone_len;

  return parse_ipv6(s, n, &addr, &zone, &zone_len);
}

/* Parses one entry [p, end) into h.  Leading white space is skipped, as
 * stock skips it. */
static int parse_entry(const char *p, const char *end, zkr__host_t *h) {
  const char *name, *name_end, *colon;
  size_t n;

  while (p < end && is_space(*p)) p++;
  if (p == end) return ZKR_EHOSTS_EMPTY_ENTRY;
  if (*p == '[') {
    name = p + 1;
    name_end = memchr(name, ']', (size_t)(end - name));
    if (name_end == NULL || name_end - name > ZKR__HOST_NAME_MAX) return ZKR_EHOSTS_BAD_IPV6;
    if (check_ipv6(name, (size_t)(name_end - name)) != ZOK) return ZKR_EHOSTS_BAD_IPV6;
    if (name_end + 1 == end) return ZKR_EHOSTS_NO_PORT;
    if (name_end[1] != ':') return ZKR_EHOSTS_BAD_IPV6;
    colon = name_end + 1;
    h->ipv6 = 1;
  } else {
    /* The port follows the last ':', as stock reads it (strrchr): a bare
     * IPv6 address keeps its own colons. */
    colon = NULL;
    for (const char *c = p; c < end; c++)
      if (*c == ':') colon = c;
    if (colon == NULL) return ZKR_EHOSTS_NO_PORT;
    name = p;
    name_end = colon;
    for (const char *c = name; c < name_end; c++)
      if (is_space(*c)) return ZKR_EHOSTS_SPACE;
    if (name == name_end || name_end - name > ZKR__HOST_NAME_MAX) return ZKR_EHOSTS_BAD_HOST;
    if (memchr(name, ':', (size_t)(name_end - name)) != NULL) {
      /* "h1:2181:2182" lands here too: its host would be "h1:2181". */
      if (check_ipv6(name, (size_t)(name_end - name)) != ZOK) return ZKR_EHOSTS_BAD_IPV6;
      h->ipv6 = 1;
    } else {
      for (const char *c = name; c < name_end; c++)
        if (!is_name_char(*c)) return ZKR_EHOSTS_BAD_HOST;
      h->ipv6 = 0;
    }
  }
  n = (size_t)(name_end - name);
  memcpy(h->name, name, n);
  h->name[n] = '\0';
  h->entry = -1;
  return parse_port(colon + 1, end, &h->port);
}

int zkr__hosts_equal(const zkr__host_t *a, const zkr__host_t *b) {
  struct in6_addr aa, ba;
  const char *az, *bz;
  size_t azl, bzl;

  if (a->port != b->port || a->ipv6 != b->ipv6) return 0;
  if (!a->ipv6) return strcasecmp(a->name, b->name) == 0;
  if (parse_ipv6(a->name, strlen(a->name), &aa, &az, &azl) != ZOK ||
      parse_ipv6(b->name, strlen(b->name), &ba, &bz, &bzl) != ZOK)
    return strcasecmp(a->name, b->name) == 0;
  return memcmp(&aa, &ba, sizeof aa) == 0 && azl == bzl && strncasecmp(az, bz, azl) == 0;
}

int zkr__hosts_literal(const zkr__host_t *h) {
  struct in_addr a;

  return h->ipv6 || inet_pton(AF_INET, h->name, &a) == 1;
}

/* A chroot must be a path stock accepts (its isValidPath: absolute, no
 * empty, "." or ".." component, no trailing '/', no byte 0x01..0x1e) that
 * the server accepts too: zkroute also refuses 0x1f, DEL and C1 (in UTF-8),
 * which stock lets through and the server then refuses in every request.
 * A ',' is refused: legal in a znode name, but in a host list it nearly
 * always means a chroot written in the middle ("h1:2181/app,h2:2181"),
 * which stock silently reads as one member and the chroot
 * "/app,h2:2181". */
static int check_chroot(const char *p) {
  const unsigned char *c = (const unsigned char *)p;

  for (; *c; c++) {
    if (*c < 0x20 || *c == 0x7f || *c == ',' || (*c == 0xc2 && c[1] >= 0x80 && c[1] <= 0x9f))
      return ZKR_EHOSTS_BAD_CHROOT;
    if (*c == '/') {
      const unsigned char *s = c + 1;
      size_t dots = 0;

      while (s[dots] == '.') dots++;
      if (*s == '\0' || *s == '/' ||
          ((dots == 1 || dots == 2) && (s[dots] == '/' || s[dots] == '\0')))
        return ZKR_EHOSTS_BAD_CHROOT;
    }
  }
  return ZOK;
}

void zkr__hosts_free(zkr__hostlist_t *l) {
  if (l == NULL) return;
  free(l->v);
  free(l->chroot);
  free(l->entries);
  *l = (zkr__hostlist_t){NULL, 0, NULL, NULL, 0, 0};
}

/* Next non-empty entry of [*p, end), as strtok_r() would give it: empty
 * entries (",,", a leading or trailing ',') are skipped. */
static int next_entry(const char **p, const char *end, const char **s, const char **e) {
  while (*p < end && **p == ',') (*p)++;
  if (*p >= end) return 0;
  *s = *p;
  while (*p < end && **p != ',') (*p)++;
  *e = *p;
  return 1;
}

int zkr__hosts_parse(const char *s, zkr__hostlist_t *out) {
  const char *slash, *end, *p, *es, *ee;
  size_t len, count = 0;
  int rc = ZOK;

  if (out != NULL) *out = (zkr__hostlist_t){NULL, 0, NULL, NULL, 0, 0};
  if (s == NULL || out == NULL) return ZBADARGUMENTS;
  len = strnlen(s, ZKR__HOSTS_MAX_LEN + 1);
  if (len == 0) return ZKR_EHOSTS_EMPTY;
  if (len > ZKR__HOSTS_MAX_LEN) return ZKR_EHOSTS_TOO_LONG;

  /* No member can contain '/', so the first one starts the chroot. */
  slash = strchr(s, '/');
  end = slash ? slash : s + len;
  for (p = s; next_entry(&p, end, &es, &ee);) count++;
  if (count == 0) return ZKR_EHOSTS_EMPTY;
  if (count > ZKR__HOSTS_MAX_MEMBERS) return ZKR_EHOSTS_TOO_MANY;

  out->v = calloc(count, sizeof *out->v);
  if (out->v == NULL) return ZKR_ENOMEM;
  for (p = s; rc == ZOK && next_entry(&p, end, &es, &ee);) {
    zkr__host_t *h = &out->v[out->n];
    int dup = 0;

    rc = parse_entry(es, ee, h);
    /* Stock connects to a server listed twice as to any other; one
     * session to it is enough. */
    for (size_t i = 0; rc == ZOK && i < out->n && !dup; i++) dup = zkr__hosts_equal(&out->v[i], h);
    if (rc == ZOK && !dup) out->n++;
  }
  if (rc == ZOK && slash != NULL && strcmp(slash, "/") != 0) {
    rc = check_chroot(slash);
    if (rc == ZOK && (out->chroot = strdup(slash)) == NULL) rc = ZKR_ENOMEM;
  }
  if (rc != ZOK) zkr__hosts_free(out);
  return rc;
}

int zkr__hosts_expand(zkr__hostlist_t *l, zkr__resolve_fn resolve) {
  zkr__host_t *v, *got;
  size_t n = 0, names = 0;
  int rc = ZOK;

  if (l == NULL || l->entries != NULL) return ZBADARGUMENTS;
  v = calloc(ZKR__HOSTS_MAX_MEMBERS, sizeof *v);
  /* One more than fits: a name with too many addresses is refused, not
   * cut short. */
  got = calloc(ZKR__HOSTS_MAX_MEMBERS + 1, sizeof *got);
  if (v == NULL || got == NULL) {
    free(v);
    free(got);
    return ZKR_ENOMEM;
  }
  for (size_t k = 0; rc == ZOK && k < l->n; k++) {
    const zkr__host_t *e = &l->v[k];
    size_t m = 1;

    if (resolve == NULL || zkr__hosts_literal(e)) {
      got[0] = *e;
    } else {
      names++;
      m = 0;
      if (resolve(e->name, e->port, got, ZKR__HOSTS_MAX_MEMBERS + 1, &m) != ZOK)
        m = 0; /* as stock: skipped; zkr__resolve_* tries again later */
    }
    for (size_t j = 0; j < m && rc == ZOK; j++) {
      int dup = 0;

      got[j].entry = (int)k;
      for (size_t i = 0; i < n && !dup; i++) dup = zkr__hosts_equal(&v[i], &got[j]);
      if (dup) continue;
      if (n == ZKR__HOSTS_MAX_MEMBERS) rc = ZKR_EHOSTS_TOO_MANY;
      else v[n++] = got[j];
    }
  }
  free(got);
  if (rc == ZOK && n == 0) rc = ZKR_EHOSTS_UNRESOLVED;
  if (rc != ZOK) {
    free(v);
    return rc;
  }
  for (size_t k = 0; k < l->n; k++) l->v[k].entry = (int)k;
  l->entries = l->v;
  l->n_entries = l->n;
  l->n_names = names;
  l->v = v;
  l->n = n;
  return ZOK;
}

int zkr__hosts_format(const zkr__host_t *h, const char *chroot, char *buf, size_t len) {
  int n;

  if (h == NULL || buf == NULL) return -1;
  n = snprintf(buf, len, h->ipv6 ? "[%s]:%d%s" : "%s:%d%s", h->name, h->port, chroot ? chroot : "");
  return n < 0 || (size_t)n >= len ? -1 : n;
}

/* ---- an address to listen on (the metrics option) ---- */

int zkr__hosts_parse_listen(const char *text, struct sockaddr_storage *out, socklen_t *len) {
  char host[64];
  const char *port;
  int v6 = text[0] == '[';
  if (v6) {
    const char *close = strchr(text, ']');
    if (!close || close[1] != ':' || (size_t)(close - text - 1) >= sizeof host) return 0;
    memcpy(host, text + 1, (size_t)(close - text - 1));
    host[close - text - 1] = '\0';
    port = close + 2;
  } else {
    const char *colon = strrchr(text, ':');
    if (!colon || (size_t)(colon - text) >= sizeof host) return 0;
    memcpy(host, text, (size_t)(colon - text));
    host[colon - text] = '\0';
    port = colon + 1;
  }
  long p = 0;
  for (const char *c = port; *c; c++) {
    if (*c < '0' || *c > '9' || p > 65535) return 0;
    p = p * 10 + (*c - '0');
  }
  if (!*port || p < 1 || p > 65535) return 0;
  struct sockaddr_storage a;
  memset(&a, 0, sizeof a);
  socklen_t l;
  if (v6) {
    struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&a;
    s6->sin6_family = AF_INET6;
    s6->sin6_port = htons((uint16_t)p);
    if (inet_pton(AF_INET6, host, &s6->sin6_addr) != 1) return 0;
    l = sizeof *s6;
  } else {
    struct sockaddr_in *s4 = (struct sockaddr_in *)&a;
    s4->sin_family = AF_INET;
    s4->sin_port = htons((uint16_t)p);
    if (inet_pton(AF_INET, host, &s4->sin_addr) != 1) return 0;
    l = sizeof *s4;
  }
  if (out) *out = a;
  if (len) *len = l;
  return 1;
}
