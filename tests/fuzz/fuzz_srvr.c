/* libFuzzer target: the srvr reply as a socket delivers it (zkroute/model/srvr.c):
 * the capped reply buffer fed in fragments, then the parser.
 *
 * Input layout: byte 0 picks the size cap (default, tiny, exactly the
 * reply, or one byte less), bytes 1-4 seed the fragment sizes, the rest is
 * the reply.  The reply sits in a buffer of exactly its size, so ASan
 * catches any read past the length the parser is given.
 *
 * Invariants: fragmentation never changes what the buffer holds (the
 * bytes, in order, NUL-terminated) nor what the parser makes of it; a
 * reply over the cap is refused whole (ZKR_ESRVR_TOO_BIG) and the buffer
 * never allocates more than cap + 1 bytes; the parser returns a documented
 * code and a reply that is self-consistent (role matches the code, epoch
 * is the zxid's high half, counters >= -1, latencies all set or all -1). */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "model/srvr.h"

static void check_reply(int rc, const zkr__srvr_reply_t *r) {
  switch (rc) {
  case ZOK:
    if (r->role < ZKR_ROLE_LEADER || r->role > ZKR_ROLE_READ_ONLY) abort();
    break;
  case ZKR_ESRVR_NOT_SERVING:
    if (r->role != ZKR_ROLE_NOT_SERVING) abort();
    break;
  case ZKR_ESRVR_GARBAGE:
  case ZKR_ESRVR_TRUNCATED: break;
  default: abort();
  }
  if (r->has_zxid && (r->zxid < 0 || r->epoch != (uint32_t)(r->zxid >> 32))) abort();
  if (r->received < -1 || r->sent < -1 || r->outstanding < -1 || r->connections < -1 ||
      r->node_count < -1)
    abort();
  int lat = r->lat_min != -1;
  if (lat != (r->lat_avg != -1) || lat != (r->lat_max != -1)) abort();
  if (lat && !(r->lat_min >= 0 && r->lat_avg >= 0 && r->lat_max >= 0 && isfinite(r->lat_min) &&
               isfinite(r->lat_avg) && isfinite(r->lat_max)))
    abort();
}

/* Field by field: the struct has padding, which memcmp would compare. */
static int same_reply(const zkr__srvr_reply_t *a, const zkr__srvr_reply_t *b) {
  return a->role == b->role && a->has_zxid == b->has_zxid && a->zxid == b->zxid &&
         a->epoch == b->epoch && a->received == b->received && a->sent == b->sent &&
         a->outstanding == b->outstanding && a->connections == b->connections &&
         a->node_count == b->node_count && a->lat_min == b->lat_min && a->lat_avg == b->lat_avg &&
         a->lat_max == b->lat_max;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 5) return 0;
  const char *reply = (const char *)data + 5;
  size_t len = size - 5;
  size_t cap;
  switch (data[0] % 4) {
  case 0: cap = 0; break;                      /* the default, 64 KiB */
  case 1: cap = 1 + data[0] / 4; break;        /* tiny */
  case 2: cap = len ? len : 1; break;          /* exactly the reply */
  default: cap = len > 1 ? len - 1 : 1; break; /* one byte short */
  }
  uint32_t seed;
  memcpy(&seed, data + 1, 4);
  seed |= 1;

  zkr__srvr_buf_t b;
  zkr__srvr_buf_init(&b, cap);
  size_t limit = b.limit, off = 0;
  int rc = ZOK;
  while (off < len) {
    seed ^= seed << 13, seed ^= seed >> 17, seed ^= seed << 5; /* xorshift32 */
    size_t n = 1 + seed % (seed & 0x100 ? 4096 : 7);
    if (n > len - off) n = len - off;
    rc = zkr__srvr_buf_feed(&b, reply + off, n);
    if (rc != ZOK && rc != ZKR_ESRVR_TOO_BIG) abort();
    if (b.cap > limit + 1) abort();
    off += n;
  }
  if (zkr__srvr_buf_feed(&b, reply, 0) != (len > limit ? ZKR_ESRVR_TOO_BIG : ZOK)) abort();
  if (len > limit) {
    if (!b.overflow || rc != ZKR_ESRVR_TOO_BIG || b.len > limit) abort();
  } else {
    if (b.overflow || b.len != len) abort();
    if (len && (memcmp(b.data, reply, len) != 0 || b.data[len] != '\0')) abort();
  }

  /* The parser on the reply itself, and on what the buffer kept. */
  zkr__srvr_reply_t direct, buffered;
  int rc1 = zkr__srvr_parse(len ? reply : NULL, len, &direct);
  check_reply(rc1, &direct);
  if (!b.overflow) {
    int rc2 = zkr__srvr_parse(b.data, b.len, &buffered);
    if (rc2 != rc1 || !same_reply(&direct, &buffered)) abort();
  }
  /* A reply cut anywhere (as by a reset) is still handled. */
  if (len) {
    zkr__srvr_reply_t cut;
    check_reply(zkr__srvr_parse(reply, seed % len, &cut), &cut);
  }
  zkr__srvr_buf_free(&b);
  return 0;
}
