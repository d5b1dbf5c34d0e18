/* libFuzzer target: the host list parser (zkroute/model/hosts.c), the first
 * thing zkroute does with a string it did not write.
 *
 * Invariants checked on every input, besides "no crash, no leak, no UB":
 * - an error leaves the list empty and is one of the documented codes;
 * - a parsed list has 1..ZKR__HOSTS_MAX_MEMBERS members, each with a
 *   non-empty name of allowed characters (no white space, no ':' unless
 *   IPv6) and a port in 1..65535, no two alike (duplicates are merged),
 *   and a chroot that is NULL or a valid absolute path;
 * - formatting the members back (zkr__hosts_format) and parsing the result
 *   gives the same list: what zkroute prints, it reads back; so does the
 *   bare form libzookeeper_mt is given ("::1:2181");
 * - expanding the list through a fake resolver (names whose first letter
 *   picks 0, 1 or 3 addresses) gives at most ZKR__HOSTS_MAX_MEMBERS
 *   distinct members, each pointing at a valid entry, or a documented
 *   code that leaves the list as parsed. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/hosts.h"
#include "zkroute.h"

static int documented(int rc) {
  switch (rc) {
  case ZKR_EHOSTS_EMPTY:
  case ZKR_EHOSTS_SPACE:
  case ZKR_EHOSTS_EMPTY_ENTRY:
  case ZKR_EHOSTS_NO_PORT:
  case ZKR_EHOSTS_BAD_PORT:
  case ZKR_EHOSTS_BAD_HOST:
  case ZKR_EHOSTS_BAD_IPV6:
  case ZKR_EHOSTS_BAD_CHROOT:
  case ZKR_EHOSTS_TOO_MANY:
  case ZKR_EHOSTS_TOO_LONG: return 1; /* DUPLICATE is documented but no longer returned */
  default: return 0;
  }
}

static void check_list(const zkr__hostlist_t *l) {
  if (l->n < 1 || l->n > ZKR__HOSTS_MAX_MEMBERS) abort();
  for (size_t i = 0; i < l->n; i++) {
    const zkr__host_t *h = &l->v[i];
    size_t len = strnlen(h->name, sizeof h->name);
    if (len == 0 || len > ZKR__HOST_NAME_MAX) abort();
    if (h->port < 1 || h->port > 65535) abort();
    if (!h->ipv6 && strchr(h->name, ':')) abort();
    if (strchr(h->name, ',') || strchr(h->name, '/') || strchr(h->name, '[')) abort();
    for (const char *c = h->name; *c; c++)
      if (*c == ' ' || *c == '\t' || *c == '\n' || *c == '\r' || *c == '\v' || *c == '\f') abort();
    for (size_t j = 0; j < i; j++)
      if (zkr__hosts_equal(&l->v[j], h)) abort();
  }
  if (l->chroot && (l->chroot[0] != '/' || strcmp(l->chroot, "/") == 0)) abort();
}

static int same(const zkr__hostlist_t *a, const zkr__hostlist_t *b) {
  if (a->n != b->n) return 0;
  if (!a->chroot != !b->chroot || (a->chroot && strcmp(a->chroot, b->chroot))) return 0;
  for (size_t i = 0; i < a->n; i++)
    if (strcmp(a->v[i].name, b->v[i].name) || a->v[i].port != b->v[i].port ||
        a->v[i].ipv6 != b->v[i].ipv6)
      return 0;
  return 1;
}

/* A fake DNS: a name starting with a-h has no address, i-p one, q-z and
 * the rest three, derived from the name so that two names can share one. */
static int fake_resolve(const char *name, int port, zkr__host_t *out, size_t cap, size_t *n) {
  unsigned char c = (unsigned char)name[0] | 0x20;
  size_t want = c >= 'a' && c <= 'h' ? 0 : c >= 'i' && c <= 'p' ? 1 : 3;
  *n = 0;
  for (size_t i = 0; i < want && *n < cap; i++, (*n)++) {
    memset(&out[*n], 0, sizeof out[*n]);
    snprintf(out[*n].name, sizeof out[*n].name, "10.%u.%zu.%zu", c, strlen(name) % 256, i);
    out[*n].port = port;
    out[*n].entry = -1;
  }
  return *n ? ZOK : ZKR_EHOSTS_UNRESOLVED;
}

static void check_expand(const zkr__hostlist_t *parsed, const char *s) {
  zkr__hostlist_t l;
  if (zkr__hosts_parse(s, &l) != ZOK) abort();
  int rc = zkr__hosts_expand(&l, fake_resolve);
  if (rc == ZOK) {
    if (l.n < 1 || l.n > ZKR__HOSTS_MAX_MEMBERS || l.n_entries != parsed->n) abort();
    for (size_t i = 0; i < l.n; i++) {
      if (l.v[i].entry < 0 || (size_t)l.v[i].entry >= l.n_entries) abort();
      for (size_t j = 0; j < i; j++)
        if (zkr__hosts_equal(&l.v[i], &l.v[j])) abort();
    }
  } else if ((rc != ZKR_EHOSTS_UNRESOLVED && rc != ZKR_EHOSTS_TOO_MANY) || l.entries ||
             l.n != parsed->n) {
    abort();
  }
  zkr__hosts_free(&l);
}

/* The members formatted as libzookeeper_mt is given them (IPv6 bare),
 * parsed again: the same list. */
static void check_bare(const zkr__hostlist_t *l) {
  size_t cap = l->n * (ZKR__HOST_NAME_MAX + 16) + (l->chroot ? strlen(l->chroot) : 0) + 1;
  char *out = malloc(cap), *p = out;
  for (size_t i = 0; i < l->n; i++) {
    zkr__host_t bare = l->v[i];
    bare.ipv6 = 0;
    if (i) *p++ = ',';
    int n = zkr__hosts_format(&bare, i + 1 == l->n ? l->chroot : NULL, p, cap - (size_t)(p - out));
    if (n < 0) abort();
    p += n;
  }
  zkr__hostlist_t l2;
  if (zkr__hosts_parse(out, &l2) != ZOK || !same(l, &l2)) {
    fprintf(stderr, "bare round trip: -> \"%s\"\n", out);
    abort();
  }
  zkr__hosts_free(&l2);
  free(out);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char *s = malloc(size + 1);
  if (!s) return 0;
  memcpy(s, data, size);
  s[size] = '\0';
  zkr__hostlist_t l;
  int rc = zkr__hosts_parse(s, &l);
  if (rc != ZOK) {
    if (!documented(rc) || l.v || l.n || l.chroot) abort();
  } else {
    check_list(&l);
    /* Round trip. */
    size_t cap = l.n * (ZKR__HOST_NAME_MAX + 16) + (l.chroot ? strlen(l.chroot) : 0) + 1;
    char *out = malloc(cap), *p = out;
    for (size_t i = 0; i < l.n; i++) {
      if (i) *p++ = ',';
      int n =
          zkr__hosts_format(&l.v[i], i + 1 == l.n ? l.chroot : NULL, p, cap - (size_t)(p - out));
      if (n < 0) abort();
      p += n;
    }
    zkr__hostlist_t l2;
    if (zkr__hosts_parse(out, &l2) != ZOK || !same(&l, &l2)) {
      fprintf(stderr, "round trip: \"%s\" -> \"%s\"\n", s, out);
      abort();
    }
    zkr__hosts_free(&l2);
    free(out);
    check_bare(&l);
    check_expand(&l, s);
  }
  zkr__hosts_free(&l);
  free(s);
  return 0;
}
