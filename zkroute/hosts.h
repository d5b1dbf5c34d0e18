/* Host list parser: "h1:2181,h2:2181,[::1]:2181/chroot" -> members + chroot.
 * Pure code, no I/O (names are not resolved here). */
#ifndef ZKR_HOSTS_H
#define ZKR_HOSTS_H

#include <stddef.h>

#define ZKR__HOSTS_MAX_MEMBERS 64    /* larger lists: ZKR_EHOSTS_TOO_MANY */
#define ZKR__HOSTS_MAX_LEN 16384     /* longer strings: ZKR_EHOSTS_TOO_LONG */
#define ZKR__HOST_NAME_MAX 255       /* DNS limit; longer: ZKR_EHOSTS_BAD_HOST */

typedef struct zkr__host {
  char name[ZKR__HOST_NAME_MAX + 1]; /* host name or address, no brackets */
  int port;                          /* 1..65535 */
  int ipv6;                          /* 1 when it was given in brackets */
} zkr__host_t;

typedef struct zkr__hostlist {
  zkr__host_t *v; /* n entries, malloc'd */
  size_t n;
  char *chroot; /* malloc'd, NULL when there is none (or it was "/") */
} zkr__hostlist_t;

/* Parses s.  Returns ZOK and fills *out (free with zkr__hosts_free), or a
 * ZKR_EHOSTS_* code (or ZBADARGUMENTS for NULL, ZKR_ENOMEM) and leaves *out
 * empty (safe to free).
 * Checks run in this order, so one input gets one code: NULL s or out
 * (ZBADARGUMENTS); "" (EMPTY); length (TOO_LONG); white space anywhere
 * (SPACE); no member before the chroot, as in "/app" (EMPTY); member count
 * (TOO_MANY); each entry left to right (EMPTY_ENTRY, NO_PORT, BAD_PORT,
 * BAD_HOST, BAD_IPV6, DUPLICATE with an earlier entry); the chroot
 * (BAD_CHROOT).  The chroot starts at the first '/'; a ',' in it is refused,
 * because "h1:2181/app,h2:2181" is a misplaced chroot far more often than a
 * znode name with a comma.  Duplicates: same port and same name ignoring
 * case; IPv6 addresses compare as numbers ("[::1]" = "[0::1]"), zones
 * ignoring case. */
int zkr__hosts_parse(const char *s, zkr__hostlist_t *out);
void zkr__hosts_free(zkr__hostlist_t *l);

/* Formats one member as ZooKeeper expects it: "name:port" or "[v6]:port",
 * followed by chroot when chroot is not NULL.  Returns the length written
 * (excluding NUL) or -1 when buf is too small. */
int zkr__host_format(const zkr__host_t *h, const char *chroot, char *buf,
                     size_t len);

#endif
