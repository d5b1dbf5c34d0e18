/* The ensemble's members as zkroute-bench sees them (bench.h): their
 * addresses, srvr of each (the leader, the roles, the Received counter),
 * which member a plain session is connected to, and the seed that pins
 * `sticky` to a member. */
#include <netdb.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "bench.h"

void member_addr(const cfg_t *c, int i, char *buf, size_t n) {
  zkr__hosts_format(&c->hl.v[i], NULL, buf, n);
}

/* srvr of every member, in order; r[i].role is ZKR_ROLE_UNREACHABLE when
 * it did not answer. */
static void srvr_all(const cfg_t *c, zkr__srvr_reply_t *r) {
  for (size_t i = 0; i < c->hl.n; i++) {
    if (zkr__srvr_fetch(c->hl.v[i].name, c->hl.v[i].port, SRVR_TIMEOUT_MS, 0, &r[i]) != ZOK &&
        r[i].role != ZKR_ROLE_NOT_SERVING)
      r[i].role = ZKR_ROLE_UNREACHABLE;
  }
}

int find_leader(const cfg_t *c, zkr_role_t *roles) {
  zkr__srvr_reply_t r[MAXM];
  srvr_all(c, r);
  int leader = -1;
  for (size_t i = 0; i < c->hl.n; i++) {
    if (roles) roles[i] = r[i].role;
    if (r[i].role == ZKR_ROLE_LEADER) leader = (int)i;
  }
  return leader;
}

/* Index of the member whose address a plain session is connected to, -1
 * when unknown.  zookeeper_get_connected_host() is getpeername() on the
 * session's socket (zoo_get_current_server is avoided: ZOOKEEPER-4810). */
int connected_member(const cfg_t *c, zhandle_t *zh) {
  struct sockaddr_storage ss;
  socklen_t len = sizeof ss;
  if (!zookeeper_get_connected_host(zh, (struct sockaddr *)&ss, &len)) return -1;
  char host[NI_MAXHOST], serv[NI_MAXSERV];
  if (getnameinfo((struct sockaddr *)&ss, len, host, sizeof host, serv, sizeof serv,
                  NI_NUMERICHOST | NI_NUMERICSERV) != 0)
    return -1;
  for (size_t i = 0; i < c->hl.n; i++) {
    if (atoi(serv) != c->hl.v[i].port) continue;
    struct addrinfo hints = {.ai_socktype = SOCK_STREAM}, *res = NULL;
    if (getaddrinfo(c->hl.v[i].name, NULL, &hints, &res) != 0) continue;
    int match = 0;
    for (struct addrinfo *a = res; a && !match; a = a->ai_next) {
      char h2[NI_MAXHOST];
      if (getnameinfo(a->ai_addr, a->ai_addrlen, h2, sizeof h2, NULL, 0, NI_NUMERICHOST) == 0)
        match = strcmp(h2, host) == 0;
    }
    freeaddrinfo(res);
    if (match) return (int)i;
  }
  return -1;
}

/* A seed for which the library's sticky policy starts on member m of n: it
 * draws its member as rand_r(&seed) % n.  The trial checks afterwards that
 * every operation did go to m. */
int seed_for_member(int m, int n) {
  for (int s = 1; s < 10000000; s++) {
    unsigned u = (unsigned)s;
    if (rand_r(&u) % n == m) return s;
  }
  return 0;
}

void recv_counts(const cfg_t *c, int64_t *out) {
  zkr__srvr_reply_t r[MAXM];
  srvr_all(c, r);
  for (size_t i = 0; i < c->hl.n; i++)
    out[i] = r[i].role == ZKR_ROLE_UNREACHABLE ? -1 : r[i].received;
}
