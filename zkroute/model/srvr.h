/* The `srvr` four-letter command: an incremental reply buffer with a size
 * cap, a pure parser of the reply, and a fetch over TCP with timeouts.
 * The reply is untrusted input: a wrong answer may cost a hop, never
 * correctness, and never a crash. */
/* No locks: pure functions of their arguments, but zkr__srvr_fetch (zk/srvr_fetch.c) does
 * blocking TCP I/O; the caller serialises. */
#ifndef ZKR_SRVR_H
#define ZKR_SRVR_H

#include <stddef.h>
#include <stdint.h>
#include "zkroute.h"

#define ZKR__SRVR_DEFAULT_CAP 65536

typedef struct zkr__srvr_reply {
  zkr_role_t role;                  /* ZKR_ROLE_UNKNOWN when no Mode line */
  int has_zxid;                     /* 1 when a Zxid line parsed */
  int64_t zxid;                     /* Zxid as a number */
  uint32_t epoch;                   /* zxid >> 32 */
  int64_t received;                 /* -1 when absent */
  int64_t sent;                     /* -1 when absent */
  int64_t outstanding;              /* -1 when absent */
  int64_t connections;              /* -1 when absent */
  int64_t node_count;               /* -1 when absent */
  double lat_min, lat_avg, lat_max; /* -1 when absent */
} zkr__srvr_reply_t;

/* Accumulates a reply as a socket delivers it. */
typedef struct zkr__srvr_buf {
  char *data; /* NUL-terminated; NULL until the first byte is fed */
  size_t len;
  size_t cap;   /* allocated */
  size_t limit; /* size cap */
  int overflow; /* set once more than limit bytes were fed */
} zkr__srvr_buf_t;

/* limit 0 means ZKR__SRVR_DEFAULT_CAP.  Cannot fail. */
void zkr__srvr_buf_init(zkr__srvr_buf_t *b, size_t limit);
/* ZOK, ZKR_ESRVR_TOO_BIG (and keeps nothing more), or ZKR_ENOMEM;
 * ZBADARGUMENTS for NULL b, or NULL bytes with n > 0.  A chunk that would
 * pass the limit is dropped whole; from then on every feed returns
 * ZKR_ESRVR_TOO_BIG.  The buffer never allocates more than limit + 1. */
int zkr__srvr_buf_feed(zkr__srvr_buf_t *b, const char *bytes, size_t n);
/* Frees the data and empties b (same limit); accepts NULL. */
void zkr__srvr_buf_free(zkr__srvr_buf_t *b);

/* Parses a complete reply.  ZOK; ZKR_ESRVR_NOT_SERVING (role is then
 * ZKR_ROLE_NOT_SERVING); ZKR_ESRVR_GARBAGE when there is no valid Mode line;
 * ZKR_ESRVR_TRUNCATED when the text ends inside a line that matters.
 * Details: reads exactly len bytes (NUL bytes are ordinary bytes); *out is
 * filled on every code but ZBADARGUMENTS (NULL out, or NULL text with
 * len > 0).  The lines that matter are Mode, Zxid and the not-serving
 * sentence: the text ending without a newline inside one of them (or inside
 * a prefix of one, like "Mo") is TRUNCATED; an unterminated statistics line
 * is ignored.  Two Mode lines are GARBAGE; any other line that appears twice,
 * or does not parse, leaves its field absent.  Unknown lines, any line
 * order, "\r\n" and blanks around values are accepted. */
int zkr__srvr_parse(const char *text, size_t len, zkr__srvr_reply_t *out);

/* A reply with nothing known: role UNKNOWN, every counter -1. */
void zkr__srvr_reply_clear(zkr__srvr_reply_t *out);

/* Connects to host:port, sends "srvr", reads to EOF (or cap) and parses.
 * Total time bounded by timeout_ms.  Returns as zkr__srvr_parse, or
 * ZKR_ESRVR_CONNECT, ZKR_ESRVR_TIMEOUT, ZKR_ESRVR_TOO_BIG.
 * Details: host is a name or an address without brackets (zkr__host_t's
 * name); every address it resolves to is tried in turn until one connects.
 * cap 0 means ZKR__SRVR_DEFAULT_CAP.  Also returns ZBADARGUMENTS (NULL host
 * or out, port outside 1..65535, timeout_ms <= 0) and ZKR_ENOMEM.  On
 * ZKR_ESRVR_CONNECT (refused, reset, unresolvable) and ZKR_ESRVR_TIMEOUT,
 * out->role is ZKR_ROLE_UNREACHABLE.  Name resolution itself (getaddrinfo)
 * is not bounded by timeout_ms.  No shared state: any thread may call it.
 * Never raises SIGPIPE; closes its socket on every path. */
int zkr__srvr_fetch(const char *host, int port, int timeout_ms, size_t cap, zkr__srvr_reply_t *out);

#endif
