/* Name resolution of the connect string (zkr__resolve_*): the resolver the
 * library uses (getaddrinfo, with stock libzookeeper_mt's hints), and the
 * periodic re-resolution of the connect string's host names, run off the
 * monitor thread so that a slow DNS never delays a leader poll. */
#ifndef ZKR_RESOLVE_H
#define ZKR_RESOLVE_H

#include <stddef.h>
#include <stdint.h>

#include "model/hosts.h"

/* zkr__resolve_fn over getaddrinfo(): AF_UNSPEC, SOCK_STREAM, IPPROTO_TCP
 * and AI_ADDRCONFIG (retried without it on EAI_BADFLAGS/EAI_ADDRFAMILY),
 * as libzookeeper_mt 3.8 resolves its host list, so a name gives the
 * addresses the stock client would use.  IPv4 and IPv6 addresses only;
 * numeric text; IPv6 scope ids as "%N".  Returns ZOK or
 * ZKR_EHOSTS_UNRESOLVED.
 * Any thread (a round's, or a session's via zkr__zk).  @locks none. */
int zkr__resolve_addrinfo(const char *name, int port, zkr__host_t *out, size_t cap, size_t *n);

/* The re-resolution state of one handle: the entries of its host list
 * and the last addresses each one resolved to. */
typedef struct zkr__dns zkr__dns_t;

/* NULL when the list has no name to resolve (hosts->n_names == 0, or
 * zkr__hosts_expand ran without a resolver); also NULL when out of memory,
 * which only means the names are not re-resolved.
 * Init or the monitor.  @locks none. */
zkr__dns_t *zkr__resolve_new(const zkr__hostlist_t *hosts);
/* Safe while a round runs: the round's thread frees what it still uses.
 * Init, the monitor or the close path.  @locks none (atomics shared with the round's thread). */
void zkr__resolve_free(zkr__dns_t *d);

/* One turn (monitor thread).  When a round finished since the last turn,
 * copies into desired (room for ZKR__HOSTS_MAX_MEMBERS) the addresses the
 * host list stands for now - every literal entry, and for each name the
 * addresses of its last successful resolution (a name that failed keeps
 * its previous ones) - sets *n and returns 1.  Otherwise returns 0, first
 * starting a round on a thread of its own when the last one started
 * period_ns ago or more.
 * The monitor.  @locks none (atomics; starts a round's thread). */
int zkr__resolve_tick(zkr__dns_t *d, zkr__resolve_fn fn, uint64_t now_ns, uint64_t period_ns,
                      zkr__host_t *desired, size_t *n);

/* Rounds finished and names that failed in them, for the statistics.
 * Any thread.  @locks none. */
void zkr__resolve_counts(const zkr__dns_t *d, uint64_t *rounds, uint64_t *failures);

#endif
