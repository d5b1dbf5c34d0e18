/* Host list parser: turns "h1:2181,h2:2181,[::1]:2181/chroot" into members
 * and a chroot, and formats one member back into a ZooKeeper host string.
 * Pure code: names are checked for shape, never resolved.  The parser is
 * stricter than ZooKeeper's own so that a typo gets a specific error code
 * instead of a session that silently connects somewhere else. */
#include "hosts.h"

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

static int is_space(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' ||
         c == '\f';
}

/* Characters of a host name, and of an IPv6 zone (an interface name). */
static int is_name_char(char c) {
  return is_alnum(c) || c == '-' || c == '.' || c == '_';
}

/* Parses the decimal port in [p, end).  Digits only, so "+2181", "-1" and
 * "0x10" are refused; leading zeros are fine.  The value is checked digit
 * by digit, so a long run of digits cannot overflow. */
static int parse_port(const char *p, const char *end, int *port) {
  long v = 0;

  if (p == end)
    return ZKR_EHOSTS_BAD_PORT;
  for (; p < end; p++) {
    if (!is_digit(*p))
      return ZKR_EHOSTS_BAD_PORT;
    v = v * 10 + (*p - '0');
    if (v > 65535)
      return ZKR_EHOSTS_BAD_PORT;
  }
  if (v == 0)
    return ZKR_EHOSTS_BAD_PORT;
  *port = (int)v;
  return ZOK;
}

/* Splits "addr%zone" and converts addr.  inet_pton() does the real
 * validation (group sizes, a single "::", an embedded IPv4 tail), which
 * also rejects "[1.2.3.4]": brackets are for IPv6 only. */
static int parse_ipv6(const char *s, size_t n, struct in6_addr *addr,
                      const char **zone, size_t *zone_len) {
  char text[ZKR__IPV6_TEXT_MAX];
  const char *pct = memchr(s, '%', n);
  size_t alen = pct ? (size_t)(pct - s) : n;

  if (alen == 0 || alen >= sizeof text)
    return ZKR_EHOSTS_BAD_IPV6;
  memcpy(text, s, alen);
  text[alen] = '\0';
  if (inet_pton(AF_INET6, text, addr) != 1)
    return ZKR_EHOSTS_BAD_IPV6;
  *zone = pct ? pct + 1 : s + n;
  *zone_len = pct ? n - alen - 1 : 0;
  if (pct && *zone_len == 0)
    return ZKR_EHOSTS_BAD_IPV6;
  for (size_t i = 0; i < *zone_len; i++)
    if (!is_name_char((*zone)[i]))
      return ZKR_EHOSTS_BAD_IPV6;
  return ZOK;
}

/* Parses one entry [p, end) into h. */
static int parse_entry(const char *p, const char *end, zkr__host_t *h) {
  const char *name = p, *name_end, *colon;
  size_t n;

  if (p == end)
    return ZKR_EHOSTS_EMPTY_ENTRY;
  if (*p == '[') {
    struct in6_addr addr;
    const char *zone;
    size_t zone_len;
    int rc;

    name = p + 1;
    name_end = memchr(name, ']', (size_t)(end - name));
    if (name_end == NULL || name_end - name > ZKR__HOST_NAME_MAX)
      return ZKR_EHOSTS_BAD_IPV6;
    rc = parse_ipv6(name, (size_t)(name_end - name), &addr, &zone, &zone_len);
    if (rc != ZOK)
      return rc;
    if (name_end + 1 == end)
      return ZKR_EHOSTS_NO_PORT;
    if (name_end[1] != ':')
      return ZKR_EHOSTS_BAD_IPV6;
    colon = name_end + 1;
    h->ipv6 = 1;
  } else {
    colon = memchr(p, ':', (size_t)(end - p));
    if (colon == NULL)
      return ZKR_EHOSTS_NO_PORT;
    /* A second colon means an IPv6 address without brackets: its last
     * group could be read as a port, so it is refused rather than guessed. */
    if (memchr(colon + 1, ':', (size_t)(end - colon - 1)) != NULL)
      return ZKR_EHOSTS_BAD_IPV6;
    name_end = colon;
    if (name == name_end || name_end - name > ZKR__HOST_NAME_MAX)
      return ZKR_EHOSTS_BAD_HOST;
    for (const char *c = name; c < name_end; c++)
      if (!is_name_char(*c))
        return ZKR_EHOSTS_BAD_HOST;
    h->ipv6 = 0;
  }
  n = (size_t)(name_end - name);
  memcpy(h->name, name, n);
  h->name[n] = '\0';
  return parse_port(colon + 1, end, &h->port);
}

/* Two entries name the same member when their ports match and their names
 * match ignoring case; IPv6 addresses are compared as numbers, so
 * "[::1]" and "[0:0::1]" are caught too. */
static int same_member(const zkr__host_t *a, const zkr__host_t *b) {
  struct in6_addr aa, ba;
  const char *az, *bz;
  size_t azl, bzl;

  if (a->port != b->port || a->ipv6 != b->ipv6)
    return 0;
  if (!a->ipv6)
    return strcasecmp(a->name, b->name) == 0;
  /* Both were validated by parse_entry(), so these cannot fail. */
  parse_ipv6(a->name, strlen(a->name), &aa, &az, &azl);
  parse_ipv6(b->name, strlen(b->name), &ba, &bz, &bzl);
  return memcmp(&aa, &ba, sizeof aa) == 0 && azl == bzl &&
         strncasecmp(az, bz, azl) == 0;
}

/* A chroot must be a path ZooKeeper would accept: absolute, no empty,
 * "." or ".." component, no trailing '/', no control character (C0, DEL,
 * and C1 in its UTF-8 form).  A ',' is refused too: it is legal in a znode
 * name, but in a host list it nearly always means a chroot written in the
 * middle ("h1:2181/app,h2:2181"), which ZooKeeper would silently read as
 * one member with the chroot "/app,h2:2181". */
static int check_chroot(const char *p) {
  const unsigned char *c = (const unsigned char *)p;

  for (; *c; c++) {
    if (*c < 0x20 || *c == 0x7f || *c == ',' ||
        (*c == 0xc2 && c[1] >= 0x80 && c[1] <= 0x9f))
      return ZKR_EHOSTS_BAD_CHROOT;
    if (*c == '/') {
      const unsigned char *s = c + 1;
      size_t dots = 0;

      while (s[dots] == '.')
        dots++;
      if (*s == '\0' || *s == '/' ||
          ((dots == 1 || dots == 2) && (s[dots] == '/' || s[dots] == '\0')))
        return ZKR_EHOSTS_BAD_CHROOT;
    }
  }
  return ZOK;
}

void zkr__hosts_free(zkr__hostlist_t *l) {
  if (l == NULL)
    return;
  free(l->v);
  free(l->chroot);
  l->v = NULL;
  l->n = 0;
  l->chroot = NULL;
}

int zkr__hosts_parse(const char *s, zkr__hostlist_t *out) {
  const char *slash, *end, *p;
  size_t len, count = 1;
  int rc = ZOK;

  if (out != NULL)
    *out = (zkr__hostlist_t){NULL, 0, NULL};
  if (s == NULL || out == NULL)
    return ZBADARGUMENTS;
  len = strnlen(s, ZKR__HOSTS_MAX_LEN + 1);
  if (len == 0)
    return ZKR_EHOSTS_EMPTY;
  if (len > ZKR__HOSTS_MAX_LEN)
    return ZKR_EHOSTS_TOO_LONG;
  for (p = s; *p; p++)
    if (is_space(*p))
      return ZKR_EHOSTS_SPACE;

  /* No member can contain '/', so the first one starts the chroot. */
  slash = strchr(s, '/');
  end = slash ? slash : s + len;
  if (end == s)
    return ZKR_EHOSTS_EMPTY;
  for (p = s; p < end; p++)
    count += *p == ',';
  if (count > ZKR__HOSTS_MAX_MEMBERS)
    return ZKR_EHOSTS_TOO_MANY;

  out->v = calloc(count, sizeof *out->v);
  if (out->v == NULL)
    return ZKR_ENOMEM;
  for (p = s; rc == ZOK && p <= end; p++) {
    const char *comma = memchr(p, ',', (size_t)(end - p));
    const char *entry_end = comma ? comma : end;
    zkr__host_t *h = &out->v[out->n];

    rc = parse_entry(p, entry_end, h);
    for (size_t i = 0; rc == ZOK && i < out->n; i++)
      if (same_member(&out->v[i], h))
        rc = ZKR_EHOSTS_DUPLICATE;
    if (rc == ZOK)
      out->n++;
    p = entry_end;
  }
  if (rc == ZOK && slash != NULL && strcmp(slash, "/") != 0) {
    rc = check_chroot(slash);
    if (rc == ZOK && (out->chroot = strdup(slash)) == NULL)
      rc = ZKR_ENOMEM;
  }
  if (rc != ZOK)
    zkr__hosts_free(out);
  return rc;
}

int zkr__host_format(const zkr__host_t *h, const char *chroot, char *buf,
                     size_t len) {
  int n;

  if (h == NULL || buf == NULL)
    return -1;
  n = snprintf(buf, len, h->ipv6 ? "[%s]:%d%s" : "%s:%d%s", h->name, h->port,
               chroot ? chroot : "");
  return n < 0 || (size_t)n >= len ? -1 : n;
}
