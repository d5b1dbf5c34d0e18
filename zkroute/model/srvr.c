/* The `srvr` four-letter command, pure part: the capped reply buffer and
 * the parser of the reply of ZooKeeper 3.4 to 3.9 (zkr__srvr_fetch_* asks a
 * server over TCP; zkr__poller_* polls a handle's members).  The reply is untrusted input: the
 * parser never reads past the length it is given (the text may hold NUL
 * bytes), and a reply it cannot vouch for yields an error, not a guess. */
#include "model/srvr.h"

#include <errno.h>
#include <float.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ---- buffer ---- */

void zkr__srvr_buf_init(zkr__srvr_buf_t *b, size_t limit) {
  /* Halving SIZE_MAX keeps every size computed in feed free of overflow. */
  if (limit == 0) limit = ZKR__SRVR_DEFAULT_CAP;
  else if (limit > SIZE_MAX / 2) limit = SIZE_MAX / 2;
  *b = (zkr__srvr_buf_t){NULL, 0, 0, limit, 0};
}

int zkr__srvr_buf_feed(zkr__srvr_buf_t *b, const char *bytes, size_t n) {
  if (b == NULL || (bytes == NULL && n > 0)) return ZBADARGUMENTS;
  if (b->overflow) return ZKR_ESRVR_TOO_BIG;
  if (n == 0) return ZOK;
  if (n > b->limit - b->len) {
    b->overflow = 1;
    return ZKR_ESRVR_TOO_BIG;
  }
  if (b->len + n + 1 > b->cap) {
    size_t need = b->len + n + 1, cap = b->cap ? b->cap : 256;
    char *data;

    while (cap < need) cap *= 2;
    if (cap > b->limit + 1) cap = b->limit + 1;
    data = realloc(b->data, cap);
    if (data == NULL) return ZKR_ENOMEM;
    b->data = data;
    b->cap = cap;
  }
  memcpy(b->data + b->len, bytes, n);
  b->len += n;
  b->data[b->len] = '\0';
  return ZOK;
}

void zkr__srvr_buf_free(zkr__srvr_buf_t *b) {
  if (b == NULL) return;
  free(b->data);
  zkr__srvr_buf_init(b, b->limit);
}

/* ---- parser ---- */

/* The lines the parser reads.  The first three decide routing, so a reply
 * cut inside one of them is reported as truncated. */
enum {
  K_MODE,
  K_ZXID,
  K_NOT_SERVING,
  K_LATENCY,
  K_RECEIVED,
  K_SENT,
  K_CONNECTIONS,
  K_OUTSTANDING,
  K_NODE_COUNT,
  K_COUNT
};

static const char *const keys[K_COUNT] = {
    [K_MODE] = "Mode:",
    [K_ZXID] = "Zxid:",
    [K_NOT_SERVING] = "This ZooKeeper instance is not currently serving requests",
    [K_LATENCY] = "Latency min/avg/max:",
    [K_RECEIVED] = "Received:",
    [K_SENT] = "Sent:",
    [K_CONNECTIONS] = "Connections:",
    [K_OUTSTANDING] = "Outstanding:",
    [K_NODE_COUNT] = "Node count:",
};

static const struct {
  const char *name;
  zkr_role_t role;
} roles[] = {
    {"leader", ZKR_ROLE_LEADER},       {"follower", ZKR_ROLE_FOLLOWER},
    {"observer", ZKR_ROLE_OBSERVER},   {"standalone", ZKR_ROLE_STANDALONE},
    {"read-only", ZKR_ROLE_READ_ONLY},
};

static int is_digit(char c) { return c >= '0' && c <= '9'; }

static int is_blank(char c) { return c == ' ' || c == '\t' || c == '\r'; }

/* Value of one digit in base 10 or 16, or -1. */
static int digit_value(char c, int base) {
  int d = is_digit(c)            ? c - '0'
          : c >= 'a' && c <= 'f' ? c - 'a' + 10
          : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                 : -1;
  return d < base ? d : -1;
}

/* Parses all of [p, end) as a non-negative integer without sign.  Returns
 * -1 on junk or when the value does not fit in an int64_t. */
static int parse_int(const char *p, const char *end, int base, int64_t *v) {
  int64_t x = 0;

  if (p == end) return -1;
  for (; p < end; p++) {
    int d = digit_value(*p, base);

    if (d < 0 || x > (INT64_MAX - d) / base) return -1;
    x = x * base + d;
  }
  *v = x;
  return 0;
}

/* Parses all of [p, end) as a non-negative decimal, including the forms
 * Java's Double.toString() prints ("0.5714", "1.0E-4").  strtod() is not
 * used: it needs a NUL terminator and follows the application's locale. */
static int parse_decimal(const char *p, const char *end, double *v) {
  double m = 0, scale = 1, x;
  int digits = 0, exp = 0, exp_sign = 1;

  /* No number ZooKeeper prints is this long; the bound keeps every count
   * below small. */
  if (end - p > 64) return -1;
  for (; p < end && is_digit(*p); p++, digits++) m = m * 10 + (*p - '0');
  if (p < end && *p == '.')
    for (p++; p < end && is_digit(*p); p++, digits++, exp--) m = m * 10 + (*p - '0');
  if (digits == 0) return -1;
  if (p < end && (*p == 'e' || *p == 'E')) {
    int e = 0;

    if (++p < end && (*p == '+' || *p == '-')) exp_sign = *p++ == '-' ? -1 : 1;
    if (p == end) return -1;
    /* With at most 64 digits of mantissa, an exponent past 1000 gives 0 or
     * infinity whatever its exact value, so it stops growing there. */
    for (; p < end && is_digit(*p); p++) e = e < 1000 ? e * 10 + (*p - '0') : e;
    exp += exp_sign * e;
  }
  if (p != end) return -1;
  /* Dividing by an exact power of ten rounds "0.5714" as strtod() does. */
  for (int i = exp < 0 ? -exp : exp; i > 0; i--) scale *= 10;
  x = exp < 0 ? m / scale : m * scale;
  /* Rejects infinity, and the NaN of "0e999" (0 times infinity). */
  if (!(x <= DBL_MAX)) return -1;
  *v = x;
  return 0;
}

/* "min/avg/max", all three or nothing. */
static void parse_latency(const char *p, const char *end, zkr__srvr_reply_t *out) {
  const char *s1 = memchr(p, '/', (size_t)(end - p));
  const char *s2 = s1 ? memchr(s1 + 1, '/', (size_t)(end - s1 - 1)) : NULL;
  double lo, avg, hi;

  if (s2 && parse_decimal(p, s1, &lo) == 0 && parse_decimal(s1 + 1, s2, &avg) == 0 &&
      parse_decimal(s2 + 1, end, &hi) == 0) {
    out->lat_min = lo;
    out->lat_avg = avg;
    out->lat_max = hi;
  }
}

static void parse_zxid(const char *p, const char *end, zkr__srvr_reply_t *out) {
  int hex = end - p > 2 && p[0] == '0' && (p[1] == 'x' || p[1] == 'X');
  int64_t v;

  if (parse_int(p + 2 * hex, end, hex ? 16 : 10, &v) == 0) {
    out->has_zxid = 1;
    out->zxid = v;
    out->epoch = (uint32_t)(v >> 32);
  }
}

void zkr__srvr_reply_clear(zkr__srvr_reply_t *out) {
  *out = (zkr__srvr_reply_t){.role = ZKR_ROLE_UNKNOWN,
                             .received = -1,
                             .sent = -1,
                             .outstanding = -1,
                             .connections = -1,
                             .node_count = -1,
                             .lat_min = -1,
                             .lat_avg = -1,
                             .lat_max = -1};
}

/* Points at the int64_t field a counter line fills, NULL for other keys. */
static int64_t *counter(zkr__srvr_reply_t *out, int k) {
  switch (k) {
  case K_RECEIVED: return &out->received;
  case K_SENT: return &out->sent;
  case K_CONNECTIONS: return &out->connections;
  case K_OUTSTANDING: return &out->outstanding;
  case K_NODE_COUNT: return &out->node_count;
  default: return NULL;
  }
}

/* Reads the value [p, end) of a complete line with key k. */
static void parse_value(int k, const char *p, const char *end, zkr__srvr_reply_t *out) {
  int64_t *field = counter(out, k);

  if (field != NULL) {
    if (parse_int(p, end, 10, field) != 0) *field = -1;
  } else if (k == K_LATENCY) {
    parse_latency(p, end, out);
  } else if (k == K_ZXID) {
    parse_zxid(p, end, out);
  } else if (k == K_MODE) {
    for (size_t i = 0; i < sizeof roles / sizeof roles[0]; i++)
      if (strlen(roles[i].name) == (size_t)(end - p) &&
          memcmp(roles[i].name, p, (size_t)(end - p)) == 0)
        out->role = roles[i].role;
  }
}

/* A key appearing twice contradicts itself: the value is dropped. */
static void drop_value(int k, zkr__srvr_reply_t *out) {
  int64_t *field = counter(out, k);

  if (field != NULL) *field = -1;
  else if (k == K_LATENCY) out->lat_min = out->lat_avg = out->lat_max = -1;
  else if (k == K_ZXID) out->has_zxid = 0;
  else if (k == K_MODE) out->role = ZKR_ROLE_UNKNOWN;
}

/* The key that starts [p, end), or -1.  With partial set, the line was
 * cut short, so a line that is only the beginning of a key counts too. */
static int find_key(const char *p, const char *end, int partial) {
  size_t n = (size_t)(end - p);

  for (int k = 0; k < K_COUNT; k++) {
    size_t klen = strlen(keys[k]);

    if (memcmp(p, keys[k], n < klen ? n : klen) == 0 && (n >= klen || (partial && n > 0))) return k;
  }
  return -1;
}

int zkr__srvr_parse(const char *text, size_t len, zkr__srvr_reply_t *out) {
  const char *p = text, *end;
  int seen[K_COUNT] = {0};

  if (out == NULL || (text == NULL && len > 0)) return ZBADARGUMENTS;
  zkr__srvr_reply_clear(out);
  /* Returning here also keeps NULL + 0 out of the pointer arithmetic. */
  if (len == 0) return ZKR_ESRVR_GARBAGE;
  end = text + len;
  while (p < end) {
    const char *nl = memchr(p, '\n', (size_t)(end - p));
    const char *line_end = nl ? nl : end;
    int k = find_key(p, line_end, nl == NULL);

    if (nl == NULL) {
      /* Only the three lines that decide routing make a cut fatal; a cut
       * statistics line is ignored, since it may have lost digits. */
      if (k == K_MODE || k == K_ZXID || k == K_NOT_SERVING) return ZKR_ESRVR_TRUNCATED;
      break;
    }
    if (k >= 0 && ++seen[k] == 1) {
      const char *v = p + strlen(keys[k]), *v_end = line_end;

      while (v < v_end && is_blank(*v)) v++;
      while (v_end > v && is_blank(v_end[-1])) v_end--;
      parse_value(k, v, v_end, out);
    }
    p = nl + 1;
  }
  for (int k = 0; k < K_COUNT; k++)
    if (seen[k] > 1) drop_value(k, out);
  if (seen[K_NOT_SERVING]) {
    out->role = ZKR_ROLE_NOT_SERVING;
    return ZKR_ESRVR_NOT_SERVING;
  }
  return out->role == ZKR_ROLE_UNKNOWN ? ZKR_ESRVR_GARBAGE : ZOK;
}
