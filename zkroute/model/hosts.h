/* Host list parser: "h1:2181,h2:2181,[::1]:2181/chroot" -> entries +
 * chroot, and the expansion of the entries into member addresses through
 * a resolver function the caller passes in.  Pure code, no I/O: names are
 * resolved only by that function (the library's is zkr__resolve_addrinfo). */
/* No locks: pure functions of their arguments (zkr__hosts_expand calls the resolver it is
 * given); the caller serialises. */
#ifndef ZKR_HOSTS_H
#define ZKR_HOSTS_H

#include <stddef.h>
#include <sys/socket.h>

#define ZKR__HOSTS_MAX_MEMBERS 64 /* larger lists: ZKR_EHOSTS_TOO_MANY */
#define ZKR__HOSTS_MAX_LEN 16384  /* longer strings: ZKR_EHOSTS_TOO_LONG */
#define ZKR__HOST_NAME_MAX 255    /* DNS limit; longer: ZKR_EHOSTS_BAD_HOST */

typedef struct zkr__host {
  char name[ZKR__HOST_NAME_MAX + 1]; /* host name or address, no brackets */
  int port;                          /* 1..65535 */
  int ipv6;                          /* 1 for an IPv6 address (bracketed or
                                        bare): shown in brackets */
  int entry;                         /* the host list entry it comes from
                                        (index into entries after
                                        zkr__hosts_expand), -1 none */
} zkr__host_t;

typedef struct zkr__hostlist {
  zkr__host_t *v; /* n entries, malloc'd; after zkr__hosts_expand: the
                     member addresses */
  size_t n;
  char *chroot; /* malloc'd, NULL when there is none (or it was "/") */
  /* Set by zkr__hosts_expand: the entries as parsed (malloc'd), and how
   * many of them are names the resolver was asked about (re-resolved
   * later by zkr__resolve_*). */
  zkr__host_t *entries;
  size_t n_entries;
  size_t n_names;
} zkr__hostlist_t;

/* Parses s as libzookeeper_mt 3.8 reads a connect string, but strictly
 * (docs/dropin.md, "Host strings").  Returns ZOK and fills *out (free with
 * zkr__hosts_free), or a ZKR_EHOSTS_* code (or ZBADARGUMENTS for NULL,
 * ZKR_ENOMEM) and leaves *out empty (safe to free).
 *
 * As stock: the chroot is everything from the first '/' ("/" is none);
 * entries are split on ',' and empty ones are ignored; white space at the
 * start of an entry is skipped; the port follows the entry's last ':'
 * (white space and a '+' may precede its digits), so a bare IPv6 address
 * works ("::1:2181", "fe80::1%eth0:2181").  Beyond stock: the bracketed
 * form "[::1]:2181".  Entries naming the same member twice are merged.
 *
 * Checks run in this order, so one input gets one code: NULL s or out
 * (ZBADARGUMENTS); "" (EMPTY); length (TOO_LONG); no entry before the
 * chroot, as in "/app" or "," (EMPTY); entry count (TOO_MANY); each entry
 * left to right (EMPTY_ENTRY for one of white space only, NO_PORT,
 * SPACE, BAD_HOST, BAD_IPV6, BAD_PORT); the chroot (BAD_CHROOT).
 * Stricter than stock, each for a reason given in docs/dropin.md: a port
 * must be 1..65535 in decimal; a name has only letters, digits, '-', '.'
 * and '_'; a host with a ':' must be an IPv6 address; the chroot may hold
 * no ',' (a misplaced chroot, "h1:2181/app,h2:2181"), no control
 * character (C0, DEL, C1) and no "." or ".." component. */
int zkr__hosts_parse(const char *s, zkr__hostlist_t *out);
void zkr__hosts_free(zkr__hostlist_t *l);

/* Resolves one name: up to cap addresses (numeric text in name, ipv6 set
 * for IPv6, port copied) into out, their count in *n.  Returns ZOK, or a
 * nonzero code when the name does not resolve (then *n is 0). */
typedef int (*zkr__resolve_fn)(const char *name, int port, zkr__host_t *out, size_t cap, size_t *n);

/* 1 when h is an address already (IPv6, or IPv4 in dotted-quad form): it
 * is used as written, never resolved. */
int zkr__hosts_literal(const zkr__host_t *h);

/* Turns the parsed entries of l into member addresses, as the stock client
 * does: each name becomes every address resolve gives it, in resolve's
 * order; addresses are used as written; an entry that does not resolve is
 * skipped; an address reached twice counts once.  l->v then holds the
 * addresses (each with the index of its entry), l->entries the entries.
 * With resolve NULL the entries are the members, unresolved.  Returns ZOK,
 * ZKR_EHOSTS_UNRESOLVED (no entry resolved), ZKR_EHOSTS_TOO_MANY (more than
 * ZKR__HOSTS_MAX_MEMBERS addresses), ZKR_ENOMEM or ZBADARGUMENTS; on error
 * l is left as it was. */
int zkr__hosts_expand(zkr__hostlist_t *l, zkr__resolve_fn resolve);

/* 1 when a and b are the same member: same port and name ignoring case;
 * IPv6 addresses compare as numbers ("::1" = "0:0::1"), zones ignoring
 * case. */
int zkr__hosts_equal(const zkr__host_t *a, const zkr__host_t *b);

/* Formats one member as "name:port" or "[v6]:port", followed by chroot
 * when chroot is not NULL.  (libzookeeper_mt wants IPv6 bare: format a
 * copy with ipv6 = 0 for it.)  Returns the length written (excluding NUL)
 * or -1 when buf is too small. */
int zkr__hosts_format(const zkr__host_t *h, const char *chroot, char *buf, size_t len);

/* An address to listen on (the metrics option): "IPV4:PORT" or
 * "[IPV6]:PORT", a numeric address and a port 1-65535, nothing else.
 * Returns 1 and fills *out and *len (each when not NULL), or 0. */
int zkr__hosts_parse_listen(const char *text, struct sockaddr_storage *out, socklen_t *len);

#endif
