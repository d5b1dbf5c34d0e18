/* libFuzzer target: the /zookeeper/config parser (zkroute/model/dynconfig.c) on
 * untrusted bytes, as a server could send them.  The input sits in a buffer
 * of exactly its size, so ASan catches any read past the length.
 *
 * Invariants: the result is ZOK or ZKR_ECONFIG; a refusal leaves no server
 * and no version; an accepted config has at most 64 servers with distinct
 * ids, ports 1..65535 and non-empty NUL-terminated names, a client address
 * only where one was given, and the same bytes parse the same way twice;
 * every prefix of an input is handled too (a reply cut short). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "model/dynconfig.h"
#include "zkroute.h"

static void check_host(const zkr__host_t *h) {
  size_t n = strnlen(h->name, sizeof h->name);
  if (n == 0 || n >= sizeof h->name) abort();
  if (h->port < 1 || h->port > 65535) abort();
}

static void check(int rc, const zkr__config_t *c) {
  if (rc != ZOK && rc != ZKR_ECONFIG) abort();
  if (rc != ZOK) {
    if (c->n != 0 || c->version != -1) abort();
    return;
  }
  if (c->n > 64 || c->version < -1) abort();
  for (size_t i = 0; i < c->n; i++) {
    const zkr__config_server_t *s = &c->v[i];
    if (s->id < 0 || (s->observer != 0 && s->observer != 1)) abort();
    check_host(&s->quorum);
    if (s->has_client) check_host(&s->client);
    for (size_t j = 0; j < i; j++)
      if (c->v[j].id == s->id) abort();
  }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char *buf = malloc(size ? size : 1);
  if (!buf) return 0;
  memcpy(buf, data, size);
  static zkr__config_t a, b;
  int rc = zkr__dynconfig_parse(buf, size, &a);
  check(rc, &a);
  if (zkr__dynconfig_parse(buf, size, &b) != rc || a.n != b.n || a.version != b.version) abort();
  for (size_t i = 0; i < a.n; i++)
    if (a.v[i].id != b.v[i].id || !zkr__hosts_equal(&a.v[i].client, &b.v[i].client)) abort();
  if (size) check(zkr__dynconfig_parse(buf, (size_t)data[0] % size, &b), &b);
  free(buf);
  return 0;
}
