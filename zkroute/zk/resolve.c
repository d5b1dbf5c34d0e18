/* Name resolution of the connect string: the library's resolver
 * (getaddrinfo with the hints libzookeeper_mt 3.8 uses, so a name stands
 * for the servers the stock client would try) and the periodic
 * re-resolution of the host list's names (docs/dropin.md, "Host names").
 *
 * Each round resolves every name of the host list on a detached thread of
 * its own: a DNS server that does not answer costs that thread its
 * timeout, never the monitor a leader poll.  The round owns copies of the
 * names and its results; it and the handle each hold a reference, and the
 * last one to let go frees it, so closing a handle never waits for DNS.
 * The monitor (zkr__membership_*) picks the results up on its next turn and
 * adds or retires members.  A name that fails to resolve keeps the
 * addresses it had: a DNS hiccup must not take members away. */
#define _GNU_SOURCE
#include "zk/resolve.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "zkroute.h"

int zkr__resolve_addrinfo(const char *name, int port, zkr__host_t *out, size_t cap, size_t *n) {
  struct addrinfo hints, *res0 = NULL;
  char service[16];
  int rc;

  *n = 0;
  memset(&hints, 0, sizeof hints);
  hints.ai_flags = AI_ADDRCONFIG;
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_protocol = IPPROTO_TCP;
  snprintf(service, sizeof service, "%d", port);
  rc = getaddrinfo(name, service, &hints, &res0);
  if (rc == EAI_BADFLAGS || rc == EAI_ADDRFAMILY) {
    /* What stock does for resolvers that dislike AI_ADDRCONFIG. */
    hints.ai_flags = 0;
    rc = getaddrinfo(name, service, &hints, &res0);
  }
  if (rc != 0) return ZKR_EHOSTS_UNRESOLVED;
  for (struct addrinfo *r = res0; r && *n < cap; r = r->ai_next) {
    zkr__host_t *h = &out[*n];
    char text[INET6_ADDRSTRLEN];
    int dup = 0;

    memset(h, 0, sizeof *h);
    h->port = port;
    h->entry = -1;
    if (r->ai_family == AF_INET) {
      const struct sockaddr_in *a = (const struct sockaddr_in *)r->ai_addr;
      if (!inet_ntop(AF_INET, &a->sin_addr, text, sizeof text)) continue;
      snprintf(h->name, sizeof h->name, "%s", text);
    } else if (r->ai_family == AF_INET6) {
      const struct sockaddr_in6 *a = (const struct sockaddr_in6 *)r->ai_addr;
      if (!inet_ntop(AF_INET6, &a->sin6_addr, text, sizeof text)) continue;
      if (a->sin6_scope_id)
        snprintf(h->name, sizeof h->name, "%s%%%u", text, (unsigned)a->sin6_scope_id);
      else snprintf(h->name, sizeof h->name, "%s", text);
      h->ipv6 = 1;
    } else {
      continue; /* stock skips other families too */
    }
    for (size_t i = 0; i < *n && !dup; i++) dup = zkr__hosts_equal(&out[i], h);
    if (!dup) (*n)++;
  }
  freeaddrinfo(res0);
  return *n > 0 ? ZOK : ZKR_EHOSTS_UNRESOLVED;
}

/* ---- re-resolution ---- */

/* The addresses one entry stands for: itself (a literal), or what its
 * name resolved to. */
typedef struct {
  zkr__host_t entry;
  int is_name;
  size_t n;
  zkr__host_t *addrs; /* malloc'd, n of them */
} known_t;

/* One round: the names to resolve and, once done, what each gave. */
typedef struct {
  _Atomic int refs;
  _Atomic int done;
  zkr__resolve_fn fn;
  size_t n;
  struct {
    zkr__host_t name;
    int entry; /* index into known */
    int rc;
    size_t got;
    zkr__host_t *addrs; /* ZKR__HOSTS_MAX_MEMBERS of them */
  } * r;
} round_t;

struct zkr__dns {
  known_t *known;
  size_t n_known;
  round_t *round;   /* in flight, NULL none (monitor thread only) */
  uint64_t next_ns; /* start of the next round, 0 not scheduled yet */
  _Atomic uint64_t rounds, failures;
};

static void round_release(round_t *r) {
  if (atomic_fetch_sub(&r->refs, 1) != 1) return;
  for (size_t i = 0; i < r->n; i++) free(r->r[i].addrs);
  free(r->r);
  free(r);
}

static void *round_main(void *arg) {
  round_t *r = arg;

  for (size_t i = 0; i < r->n; i++)
    r->r[i].rc = r->fn(r->r[i].name.name, r->r[i].name.port, r->r[i].addrs, ZKR__HOSTS_MAX_MEMBERS,
                       &r->r[i].got);
  atomic_store(&r->done, 1);
  round_release(r);
  return NULL;
}

zkr__dns_t *zkr__resolve_new(const zkr__hostlist_t *hosts) {
  zkr__dns_t *d;

  if (!hosts || hosts->n_names == 0 || !hosts->entries) return NULL;
  if (!(d = calloc(1, sizeof *d))) return NULL;
  d->known = calloc(hosts->n_entries, sizeof *d->known);
  d->n_known = hosts->n_entries;
  for (size_t k = 0; d->known && k < hosts->n_entries; k++) {
    known_t *kn = &d->known[k];
    size_t m = 0;

    kn->entry = hosts->entries[k];
    kn->is_name = !zkr__hosts_literal(&kn->entry);
    for (size_t i = 0; i < hosts->n; i++) m += hosts->v[i].entry == (int)k;
    kn->addrs = calloc(m ? m : 1, sizeof *kn->addrs);
    if (!kn->addrs) {
      zkr__resolve_free(d);
      return NULL;
    }
    for (size_t i = 0; i < hosts->n; i++)
      if (hosts->v[i].entry == (int)k) kn->addrs[kn->n++] = hosts->v[i];
  }
  if (!d->known) {
    free(d);
    return NULL;
  }
  return d;
}

void zkr__resolve_free(zkr__dns_t *d) {
  if (!d) return;
  if (d->round) round_release(d->round);
  for (size_t k = 0; d->known && k < d->n_known; k++) free(d->known[k].addrs);
  free(d->known);
  free(d);
}

static round_t *round_new(zkr__dns_t *d, zkr__resolve_fn fn) {
  round_t *r = calloc(1, sizeof *r);
  size_t names = 0;

  if (!r) return NULL;
  for (size_t k = 0; k < d->n_known; k++) names += d->known[k].is_name;
  r->fn = fn;
  r->r = calloc(names, sizeof *r->r);
  if (!r->r) {
    free(r);
    return NULL;
  }
  for (size_t k = 0; k < d->n_known; k++) {
    if (!d->known[k].is_name) continue;
    r->r[r->n].name = d->known[k].entry;
    r->r[r->n].entry = (int)k;
    r->r[r->n].addrs = calloc(ZKR__HOSTS_MAX_MEMBERS, sizeof(zkr__host_t));
    if (!r->r[r->n].addrs) {
      r->refs = 1;
      round_release(r);
      return NULL;
    }
    r->n++;
  }
  return r;
}

/* Starts a round on a detached thread; no round when out of memory or
 * threads (the next turn tries again). */
static void round_start(zkr__dns_t *d, zkr__resolve_fn fn) {
  round_t *r = round_new(d, fn);
  pthread_attr_t at;
  pthread_t t;

  if (!r) return;
  r->refs = 2;
  pthread_attr_init(&at);
  pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
  if (pthread_create(&t, &at, round_main, r) != 0) {
    r->refs = 1;
    round_release(r);
  } else {
    d->round = r;
  }
  pthread_attr_destroy(&at);
}

/* Takes a finished round's answers: a name that resolved gets its new
 * addresses, one that failed keeps its old ones. */
static void round_take(zkr__dns_t *d, round_t *r) {
  for (size_t i = 0; i < r->n; i++) {
    known_t *kn = &d->known[r->r[i].entry];
    zkr__host_t *v;

    if (r->r[i].rc != ZOK || r->r[i].got == 0) {
      d->failures++;
      continue;
    }
    if (!(v = malloc(r->r[i].got * sizeof *v))) continue;
    for (size_t j = 0; j < r->r[i].got; j++) {
      v[j] = r->r[i].addrs[j];
      v[j].entry = r->r[i].entry;
    }
    free(kn->addrs);
    kn->addrs = v;
    kn->n = r->r[i].got;
  }
  d->rounds++;
}

int zkr__resolve_tick(zkr__dns_t *d, zkr__resolve_fn fn, uint64_t now_ns, uint64_t period_ns,
                      zkr__host_t *desired, size_t *n) {
  if (!d || !fn) return 0;
  if (d->round && atomic_load(&d->round->done)) {
    round_take(d, d->round);
    round_release(d->round);
    d->round = NULL;
    *n = 0;
    for (size_t k = 0; k < d->n_known; k++) {
      known_t *kn = &d->known[k];
      const zkr__host_t *v = kn->is_name ? kn->addrs : &kn->entry;
      size_t m = kn->is_name ? kn->n : 1;

      for (size_t j = 0; j < m; j++) {
        int dup = 0;

        for (size_t i = 0; i < *n && !dup; i++) dup = zkr__hosts_equal(&desired[i], &v[j]);
        if (!dup && *n < ZKR__HOSTS_MAX_MEMBERS) {
          desired[*n] = v[j];
          desired[*n].entry = (int)k;
          (*n)++;
        }
      }
    }
    return 1;
  }
  if (d->next_ns == 0) d->next_ns = now_ns + period_ns;
  if (!d->round && now_ns >= d->next_ns) {
    d->next_ns = now_ns + period_ns;
    round_start(d, fn);
  }
  return 0;
}

void zkr__resolve_counts(const zkr__dns_t *d, uint64_t *rounds, uint64_t *failures) {
  *rounds = d ? d->rounds : 0;
  *failures = d ? d->failures : 0;
}
