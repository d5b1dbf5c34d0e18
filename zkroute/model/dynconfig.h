/* Parser of the ensemble configuration that ZooKeeper (3.5 and later)
 * serves at /zookeeper/config: which servers there are, their roles and
 * where clients reach them.  Pure code, no I/O: the bytes come from a
 * server and are untrusted (tests/fuzz/fuzz_config.c). */
/* No locks: pure functions of their arguments; the caller serialises. */
#ifndef ZKR_DYNCONFIG_H
#define ZKR_DYNCONFIG_H

#include <stddef.h>
#include <stdint.h>

#include "model/hosts.h"

#define ZKR__CONFIG_MAX_LEN 65536 /* longer input: ZKR_ECONFIG */

typedef struct zkr__config_server {
  int64_t id;         /* N of "server.N" (0 .. 2^62) */
  int observer;       /* role "observer"; participant otherwise */
  zkr__host_t quorum; /* first quorum address: host and quorum port */
  int has_client;     /* a client address was given after ';' */
  /* Where clients connect: the client host, or the quorum host when the
   * client host is absent or a wildcard (0.0.0.0, ::); the client port. */
  zkr__host_t client;
} zkr__config_server_t;

typedef struct zkr__config {
  int64_t version;            /* "version=" (hexadecimal), -1 when absent */
  size_t n;                   /* servers, in input order */
  zkr__config_server_t v[64]; /* ZKR_MAX_MEMBERS */
} zkr__config_t;

/* Parses len bytes at buf (no NUL needed; a NUL byte is refused).  Lines
 * are separated by '\n' (a '\r' before it is refused, as is any other
 * white space); empty lines are skipped.  Accepted lines:
 *   server.N=HOST:QPORT:EPORT[:participant|:observer][|HOST:QPORT:EPORT...]
 *            [;[CLIENTHOST:]CLIENTPORT]
 *   version=HEX
 *   group.N=... and weight.N=... (hierarchical quorums: checked for a
 *            non-empty value, otherwise ignored)
 * HOST may be an IPv6 address in brackets.  Anything else, a duplicate
 * server id or version, more than 64 servers, or more than
 * ZKR__CONFIG_MAX_LEN bytes is refused.  Returns ZOK and fills *out, or
 * ZKR_ECONFIG (out->n is then 0), or ZBADARGUMENTS for a NULL out (or NULL
 * buf with len > 0). */
int zkr__dynconfig_parse(const char *buf, size_t len, zkr__config_t *out);

#endif
