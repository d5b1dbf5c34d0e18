/* Unit tests of the `srvr` reply buffer, parser and fetch (zkroute/model/srvr.c).
 * The fetch tests talk to tiny TCP servers on the loopback interface; each
 * runs on a thread created inside the test body, because Check forks a
 * process per test. */
#include <arpa/inet.h>
#include <check.h>
#include <dirent.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "model/srvr.h"

#define MODE_LINE "Mode: follower\n"

/* A 3.8 follower's reply, as in DESIGN.md. */
static const char sample[] =
    "Zookeeper version: 3.8.0-${mvngit.commit.id}, built on 2022-02-25 08:49 "
    "UTC\n"
    "Latency min/avg/max: 0/0.5714/2\n"
    "Received: 8\n"
    "Sent: 7\n"
    "Connections: 1\n"
    "Outstanding: 0\n"
    "Zxid: 0x100000003\n" MODE_LINE "Node count: 5\n";

/* Asserts every field of the sample reply. */
static void assert_sample(const zkr__srvr_reply_t *r, zkr_role_t role) {
  ck_assert_int_eq(r->role, role);
  ck_assert_int_eq(r->has_zxid, 1);
  ck_assert_int_eq(r->zxid, 0x100000003);
  ck_assert_uint_eq(r->epoch, 1);
  ck_assert_int_eq(r->received, 8);
  ck_assert_int_eq(r->sent, 7);
  ck_assert_int_eq(r->connections, 1);
  ck_assert_int_eq(r->outstanding, 0);
  ck_assert_int_eq(r->node_count, 5);
  ck_assert_double_eq(r->lat_min, 0);
  ck_assert_double_eq(r->lat_avg, 0.5714);
  ck_assert_double_eq(r->lat_max, 2);
}

/* Parses a C string literal, NUL bytes included (sizeof - 1). */
#define PARSE(lit, out) zkr__srvr_parse(lit, sizeof(lit) - 1, out)

/* ---- parser ---- */

static const struct {
  const char *line;
  zkr_role_t role;
} modes[] = {
    {"Mode: leader\n", ZKR_ROLE_LEADER},       {"Mode: follower\n", ZKR_ROLE_FOLLOWER},
    {"Mode: observer\n", ZKR_ROLE_OBSERVER},   {"Mode: standalone\n", ZKR_ROLE_STANDALONE},
    {"Mode: read-only\n", ZKR_ROLE_READ_ONLY},
};

START_TEST(test_modes) {
  char text[512];
  const char *at = strstr(sample, MODE_LINE);
  zkr__srvr_reply_t r;
  int n = snprintf(text, sizeof text, "%.*s%s%s", (int)(at - sample), sample, modes[_i].line,
                   at + strlen(MODE_LINE));

  ck_assert_int_eq(zkr__srvr_parse(text, (size_t)n, &r), ZOK);
  assert_sample(&r, modes[_i].role);
}
END_TEST

START_TEST(test_leader_with_proposal_sizes) {
  zkr__srvr_reply_t r;

  ck_assert_int_eq(PARSE("Zookeeper version: 3.9.1-abc, built on 2023-10-05 08:34 UTC\n"
                         "Latency min/avg/max: 0/1.0E-4/12\n"
                         "Received: 1234\n"
                         "Sent: 1233\n"
                         "Connections: 3\n"
                         "Outstanding: 0\n"
                         "Zxid: 0x500000a1f\n"
                         "Mode: leader\n"
                         "Node count: 42\n"
                         "Proposal sizes last/min/max: -1/-1/-1\n",
                         &r),
                   ZOK);
  ck_assert_int_eq(r.role, ZKR_ROLE_LEADER);
  ck_assert_int_eq(r.zxid, 0x500000a1f);
  ck_assert_uint_eq(r.epoch, 5);
  ck_assert_double_eq(r.lat_avg, 0.0001);
  ck_assert_double_eq(r.lat_max, 12);
  ck_assert_int_eq(r.received, 1234);
  ck_assert_int_eq(r.node_count, 42);
}
END_TEST

/* ZooKeeper 3.4 prints integer latencies. */
START_TEST(test_34_reply) {
  zkr__srvr_reply_t r;

  ck_assert_int_eq(PARSE("Zookeeper version: 3.4.14-4c25d480e66aadd371de8bd2fd8da255ac140bcf"
                         ", built on 03/06/2019 16:18 GMT\n"
                         "Latency min/avg/max: 0/0/0\n"
                         "Received: 2\n"
                         "Sent: 1\n"
                         "Connections: 1\n"
                         "Outstanding: 0\n"
                         "Zxid: 0x0\n"
                         "Mode: standalone\n"
                         "Node count: 4\n",
                         &r),
                   ZOK);
  ck_assert_int_eq(r.role, ZKR_ROLE_STANDALONE);
  ck_assert_int_eq(r.has_zxid, 1);
  ck_assert_int_eq(r.zxid, 0);
  ck_assert_uint_eq(r.epoch, 0);
  ck_assert_double_eq(r.lat_avg, 0);
}
END_TEST

START_TEST(test_not_serving) {
  zkr__srvr_reply_t r;

  ck_assert_int_eq(PARSE("This ZooKeeper instance is not currently serving requests\n", &r),
                   ZKR_ESRVR_NOT_SERVING);
  ck_assert_int_eq(r.role, ZKR_ROLE_NOT_SERVING);
  ck_assert_int_eq(r.has_zxid, 0);
  ck_assert_int_eq(PARSE("This ZooKeeper instance is not currently serving requests\r\n", &r),
                   ZKR_ESRVR_NOT_SERVING);
  ck_assert_int_eq(r.role, ZKR_ROLE_NOT_SERVING);
}
END_TEST

START_TEST(test_crlf) {
  zkr__srvr_reply_t r;

  ck_assert_int_eq(PARSE("Zookeeper version: 3.8.0, built on 2022-02-25 08:49 UTC\r\n"
                         "Latency min/avg/max: 0/0.5714/2\r\n"
                         "Received: 8\r\n"
                         "Sent: 7\r\n"
                         "Connections: 1\r\n"
                         "Outstanding: 0\r\n"
                         "Zxid: 0x100000003\r\n"
                         "Mode: follower\r\n"
                         "Node count: 5\r\n",
                         &r),
                   ZOK);
  assert_sample(&r, ZKR_ROLE_FOLLOWER);
}
END_TEST

/* Lines in any order, unknown lines anywhere, blanks around values. */
START_TEST(test_any_order) {
  zkr__srvr_reply_t r;

  ck_assert_int_eq(PARSE("Node count: 5\n"
                         "\n"
                         "Mode:   follower \t\n"
                         "Something new in 3.10: 1\n"
                         "Zxid: 0x100000003\n"
                         "Outstanding: 0\n"
                         "Connections: 1\n"
                         "Sent: 7\n"
                         "Received: 8\n"
                         "Latency min/avg/max: 0/0.5714/2\n"
                         "Zookeeper version: 3.8.0\n",
                         &r),
                   ZOK);
  assert_sample(&r, ZKR_ROLE_FOLLOWER);

  /* The smallest reply that routes: only the Mode line. */
  ck_assert_int_eq(PARSE("Mode: observer\n", &r), ZOK);
  ck_assert_int_eq(r.role, ZKR_ROLE_OBSERVER);
  ck_assert_int_eq(r.has_zxid, 0);
  ck_assert_int_eq(r.received, -1);
  ck_assert_int_eq(r.sent, -1);
  ck_assert_int_eq(r.connections, -1);
  ck_assert_int_eq(r.outstanding, -1);
  ck_assert_int_eq(r.node_count, -1);
  ck_assert_double_eq(r.lat_min, -1);
  ck_assert_double_eq(r.lat_avg, -1);
  ck_assert_double_eq(r.lat_max, -1);
}
END_TEST

static const struct {
  const char *text;
  size_t len;
} garbage[] = {
#define G(lit)                                                                                     \
  { lit, sizeof(lit) - 1 }
    G(""),
    G("\n"),
    G("hello\n"),
    G("srvr is not executed because it is not in the whitelist.\n"),
    G("Mode:\n"),
    G("Mode: \n"),
    G("Mode: leaderx\n"),
    G("Mode: Leader\n"),
    G("Mode: lead er\n"),
    G("Mode: leader follower\n"),
    G(" Mode: leader\n"),
    G("mode: leader\n"),
    G("Mode leader\n"),
    G("Mode: leader\nMode: leader\n"),
    G("Mode: leader\nMode: follower\n"),
    G("Zxid: 0x100000003\nNode count: 5\n"),
    G("Mode: lea\0der\n"),
    G("\0Mode: leader\n"),
    G("Mode: leader\0\n"),
    G("\xff\xfe\x00\x01\x02garbage\x80\n"),
#undef G
};

START_TEST(test_garbage) {
  zkr__srvr_reply_t r;

  ck_assert_int_eq(zkr__srvr_parse(garbage[_i].text, garbage[_i].len, &r), ZKR_ESRVR_GARBAGE);
  ck_assert_int_eq(r.role, ZKR_ROLE_UNKNOWN);
}
END_TEST

/* NUL bytes are ordinary bytes: a line holding one is read as it is. */
START_TEST(test_nul_bytes) {
  zkr__srvr_reply_t r;

  ck_assert_int_eq(PARSE("junk\0junk\nMode: follower\nZxid: 0x1\0\n"
                         "Received: 8\nSent: 7\0\n",
                         &r),
                   ZOK);
  ck_assert_int_eq(r.role, ZKR_ROLE_FOLLOWER);
  ck_assert_int_eq(r.has_zxid, 0);
  ck_assert_int_eq(r.received, 8);
  ck_assert_int_eq(r.sent, -1);
}
END_TEST

/* The parser must stop at len: the copy has no terminator, and bytes past
 * len in the caller's text must not count. */
START_TEST(test_never_past_len) {
  static const char text[] = "Mode: leader\nZxid: 0x2";
  char *copy = malloc(13);
  zkr__srvr_reply_t r;

  ck_assert_ptr_nonnull(copy);
  memcpy(copy, text, 13);
  ck_assert_int_eq(zkr__srvr_parse(copy, 13, &r), ZOK);
  ck_assert_int_eq(r.role, ZKR_ROLE_LEADER);
  ck_assert_int_eq(zkr__srvr_parse(copy, 12, &r), ZKR_ESRVR_TRUNCATED);
  ck_assert_int_eq(zkr__srvr_parse(text, 13, &r), ZOK);
  ck_assert_int_eq(r.has_zxid, 0);
  free(copy);
}
END_TEST

/* Every prefix of the sample: a cut inside the Mode or Zxid line is
 * truncated; a cut elsewhere is fine once the Mode line is whole, and
 * garbage before that.  The one-byte prefix "Z" could be the start of
 * "Zxid:", so it is truncated too. */
START_TEST(test_truncated_every_prefix) {
  size_t mode = (size_t)(strstr(sample, "Mode:") - sample);
  size_t mode_nl = mode + strlen(MODE_LINE) - 1;
  size_t zxid = (size_t)(strstr(sample, "Zxid:") - sample);
  size_t zxid_nl = (size_t)(strchr(sample + zxid, '\n') - sample);

  for (size_t len = 0; len <= sizeof sample - 1; len++) {
    zkr__srvr_reply_t r;
    int want = (len > mode && len <= mode_nl) || (len > zxid && len <= zxid_nl) || len == 1
                   ? ZKR_ESRVR_TRUNCATED
               : len > mode_nl ? ZOK
                               : ZKR_ESRVR_GARBAGE;
    int rc = zkr__srvr_parse(sample, len, &r);

    ck_assert_msg(rc == want, "prefix %zu: got %d, want %d", len, rc, want);
  }
}
END_TEST

START_TEST(test_truncated) {
  zkr__srvr_reply_t r;

  ck_assert_int_eq(PARSE("Zxid: 0x1\nMode: leader", &r), ZKR_ESRVR_TRUNCATED);
  ck_assert_int_eq(PARSE("Zxid: 0x1\nMode: leader\r", &r), ZKR_ESRVR_TRUNCATED);
  ck_assert_int_eq(PARSE("Zxid: 0x1\nMo", &r), ZKR_ESRVR_TRUNCATED);
  ck_assert_int_eq(PARSE("Mode: leader\nZxid: 0x10000", &r), ZKR_ESRVR_TRUNCATED);
  ck_assert_int_eq(PARSE("Mode: leader\nZ", &r), ZKR_ESRVR_TRUNCATED);
  ck_assert_int_eq(PARSE("This ZooKeeper instance is not curr", &r), ZKR_ESRVR_TRUNCATED);
  /* A cut statistics line is dropped, not trusted. */
  ck_assert_int_eq(PARSE("Mode: leader\nNode count: 12", &r), ZOK);
  ck_assert_int_eq(r.node_count, -1);
  ck_assert_int_eq(PARSE("Mode: leader\nsomething", &r), ZOK);
}
END_TEST

static const struct {
  const char *line;
  int has_zxid;
  int64_t zxid;
  uint32_t epoch;
} zxids[] = {
    {"Zxid: 0x0\n", 1, 0, 0},
    {"Zxid: 0X1F\n", 1, 0x1f, 0},
    {"Zxid: 0xabcdef0123\n", 1, 0xabcdef0123, 0xab},
    {"Zxid: 0x500000000\n", 1, 0x500000000, 5},
    {"Zxid: 0x7fffffffffffffff\n", 1, INT64_MAX, 0x7fffffff},
    {"Zxid: 0x00000000000000000000001\n", 1, 1, 0},
    {"Zxid: 12345\n", 1, 12345, 0},
    {"Zxid: 9223372036854775807\n", 1, INT64_MAX, 0x7fffffff},
    {"Zxid: 0x8000000000000000\n", 0, 0, 0},
    {"Zxid: 0xffffffffffffffffff\n", 0, 0, 0},
    {"Zxid: 9223372036854775808\n", 0, 0, 0},
    {"Zxid: 0x\n", 0, 0, 0},
    {"Zxid: 0xg\n", 0, 0, 0},
    {"Zxid: 0x1g\n", 0, 0, 0},
    {"Zxid: 0x 1\n", 0, 0, 0},
    {"Zxid: -1\n", 0, 0, 0},
    {"Zxid: +1\n", 0, 0, 0},
    {"Zxid: 1f\n", 0, 0, 0},
    {"Zxid:\n", 0, 0, 0},
    {"Zxid: 0x1\nZxid: 0x1\n", 0, 0, 0},
};

START_TEST(test_zxid) {
  char text[128];
  zkr__srvr_reply_t r;
  int n = snprintf(text, sizeof text, "Mode: follower\n%s", zxids[_i].line);

  ck_assert_int_eq(zkr__srvr_parse(text, (size_t)n, &r), ZOK);
  ck_assert_msg(r.has_zxid == zxids[_i].has_zxid, "%s", zxids[_i].line);
  if (r.has_zxid) {
    ck_assert_int_eq(r.zxid, zxids[_i].zxid);
    ck_assert_uint_eq(r.epoch, zxids[_i].epoch);
  }
}
END_TEST

START_TEST(test_numbers) {
  zkr__srvr_reply_t r;

  ck_assert_int_eq(PARSE("Mode: leader\nLatency min/avg/max: 1/2.5E+1/3.25\n"
                         "Received: 9223372036854775807\n"
                         "Sent: 9223372036854775808\n"
                         "Connections: -1\n"
                         "Outstanding: 1.5\n"
                         "Node count: \n",
                         &r),
                   ZOK);
  ck_assert_double_eq(r.lat_min, 1);
  ck_assert_double_eq(r.lat_avg, 25);
  ck_assert_double_eq(r.lat_max, 3.25);
  ck_assert_int_eq(r.received, INT64_MAX);
  ck_assert_int_eq(r.sent, -1);
  ck_assert_int_eq(r.connections, -1);
  ck_assert_int_eq(r.outstanding, -1);
  ck_assert_int_eq(r.node_count, -1);

  /* Latency is all three numbers or none. */
  static const char *const bad_latency[] = {"1/2",          "1/2/3/4",   "a/b/c",     "NaN/NaN/NaN",
                                            "1/Infinity/2", "1/1e999/2", "0/0e999/0", "-1/0/0",
                                            "1//2",         "1/2./3x",   "1/.5e/2",   "1/2/",
                                            "/1/2",         "1/1e/2",    ""};
  for (size_t i = 0; i < sizeof bad_latency / sizeof bad_latency[0]; i++) {
    char text[128];
    int n = snprintf(text, sizeof text, "Mode: leader\nLatency min/avg/max: %s\n", bad_latency[i]);

    ck_assert_int_eq(zkr__srvr_parse(text, (size_t)n, &r), ZOK);
    ck_assert_msg(r.lat_min == -1 && r.lat_avg == -1 && r.lat_max == -1,
                  "latency \"%s\" was accepted", bad_latency[i]);
  }
  ck_assert_int_eq(PARSE("Mode: leader\nLatency min/avg/max: .5/5./1e-3\n", &r), ZOK);
  ck_assert_double_eq(r.lat_min, 0.5);
  ck_assert_double_eq(r.lat_avg, 5);
  ck_assert_double_eq(r.lat_max, 0.001);

  /* A repeated statistics line contradicts itself and is dropped. */
  ck_assert_int_eq(PARSE("Mode: leader\nReceived: 1\nReceived: 1\n", &r), ZOK);
  ck_assert_int_eq(r.received, -1);
}
END_TEST

START_TEST(test_parse_args) {
  zkr__srvr_reply_t r;

  ck_assert_int_eq(zkr__srvr_parse("Mode: leader\n", 13, NULL), ZBADARGUMENTS);
  ck_assert_int_eq(zkr__srvr_parse(NULL, 5, &r), ZBADARGUMENTS);
  ck_assert_int_eq(zkr__srvr_parse(NULL, 0, &r), ZKR_ESRVR_GARBAGE);
}
END_TEST

/* ---- buffer ---- */

START_TEST(test_buf_cap) {
  static char chunk[4096];
  zkr__srvr_buf_t b;
  size_t fed = 0;
  int ok = 0;

  memset(chunk, 'x', sizeof chunk);
  zkr__srvr_buf_init(&b, 65536);
  while (fed < 10 * 1024 * 1024) {
    int rc = zkr__srvr_buf_feed(&b, chunk, sizeof chunk);

    ck_assert_int_eq(rc, ok < 16 ? ZOK : ZKR_ESRVR_TOO_BIG);
    ok += rc == ZOK;
    fed += sizeof chunk;
  }
  ck_assert_int_eq(ok, 16);
  ck_assert_uint_eq(b.len, 65536);
  ck_assert_uint_le(b.cap, 65537);
  ck_assert_int_eq(b.overflow, 1);
  ck_assert_int_eq(b.data[b.len], '\0');
  /* Once over the cap, even an empty feed reports it. */
  ck_assert_int_eq(zkr__srvr_buf_feed(&b, chunk, 0), ZKR_ESRVR_TOO_BIG);
  zkr__srvr_buf_free(&b);
  ck_assert_ptr_null(b.data);
  ck_assert_uint_eq(b.len, 0);
  zkr__srvr_buf_free(&b);
}
END_TEST

/* Exactly the limit fits; one more byte does not, and is not kept. */
START_TEST(test_buf_exact_limit) {
  zkr__srvr_buf_t b;

  zkr__srvr_buf_init(&b, 10);
  ck_assert_int_eq(zkr__srvr_buf_feed(&b, "0123456", 7), ZOK);
  ck_assert_int_eq(zkr__srvr_buf_feed(&b, "789", 3), ZOK);
  ck_assert_str_eq(b.data, "0123456789");
  ck_assert_int_eq(zkr__srvr_buf_feed(&b, "a", 1), ZKR_ESRVR_TOO_BIG);
  ck_assert_str_eq(b.data, "0123456789");
  ck_assert_uint_eq(b.len, 10);
  zkr__srvr_buf_free(&b);

  /* A limit of 0 means the default cap. */
  zkr__srvr_buf_init(&b, 0);
  ck_assert_uint_eq(b.limit, ZKR__SRVR_DEFAULT_CAP);
  ck_assert_ptr_null(b.data);
  ck_assert_int_eq(zkr__srvr_buf_feed(&b, NULL, 0), ZOK);
  ck_assert_int_eq(zkr__srvr_buf_feed(&b, NULL, 1), ZBADARGUMENTS);
  ck_assert_int_eq(zkr__srvr_buf_feed(NULL, "a", 1), ZBADARGUMENTS);
  zkr__srvr_buf_free(&b);
  zkr__srvr_buf_free(NULL);
}
END_TEST

START_TEST(test_buf_byte_by_byte) {
  zkr__srvr_buf_t b;
  zkr__srvr_reply_t r;

  zkr__srvr_buf_init(&b, 0);
  for (size_t i = 0; i < sizeof sample - 1; i++)
    ck_assert_int_eq(zkr__srvr_buf_feed(&b, sample + i, 1), ZOK);
  ck_assert_uint_eq(b.len, sizeof sample - 1);
  ck_assert_str_eq(b.data, sample);
  ck_assert_int_eq(zkr__srvr_parse(b.data, b.len, &r), ZOK);
  assert_sample(&r, ZKR_ROLE_FOLLOWER);
  zkr__srvr_buf_free(&b);
}
END_TEST

/* ---- fetch ---- */

enum behaviour {
  SRV_REPLY,   /* reads the command, writes the reply, closes */
  SRV_TRICKLE, /* the same, one byte every delay_ms */
  SRV_SILENT,  /* reads the command, then says nothing until the client
                  goes away */
  SRV_RESET,   /* accepts and resets at once (SO_LINGER 0) */
};

struct server {
  enum behaviour how;
  const char *reply;
  size_t reply_len;
  int delay_ms;
  int family;
  int lfd;
  int port;
  char got[5]; /* the command the client sent */
  pthread_t thread;
};

static void sleep_ms(int ms) {
  struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000};

  nanosleep(&ts, NULL);
}

static int64_t mono_ms(void) {
  struct timespec ts;

  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Open descriptors of this process: a fetch must leave none behind. */
static int open_fds(void) {
  DIR *d = opendir("/proc/self/fd");
  int n = 0;

  ck_assert_ptr_nonnull(d);
  while (readdir(d) != NULL) n++;
  closedir(d);
  return n;
}

static void *server_main(void *arg) {
  struct server *s = arg;
  int fd = accept(s->lfd, NULL, NULL);
  size_t got = 0;
  char c;

  if (fd < 0) return NULL;
  if (s->how == SRV_RESET) {
    struct linger lg = {1, 0};

    setsockopt(fd, SOL_SOCKET, SO_LINGER, &lg, sizeof lg);
    close(fd);
    return NULL;
  }
  while (got < 4) {
    ssize_t n = recv(fd, s->got + got, 4 - got, 0);

    if (n <= 0) break;
    got += (size_t)n;
  }
  if (s->how == SRV_SILENT) {
    while (recv(fd, &c, 1, 0) > 0)
      ;
  } else {
    size_t step = s->how == SRV_TRICKLE ? 1 : s->reply_len;

    /* The client closes early when the reply is too big or too slow: the
     * send then fails, and MSG_NOSIGNAL keeps SIGPIPE away. */
    for (size_t off = 0; off < s->reply_len; off += step) {
      size_t n = s->reply_len - off < step ? s->reply_len - off : step;

      if (send(fd, s->reply + off, n, MSG_NOSIGNAL) < 0) break;
      if (s->delay_ms > 0) sleep_ms(s->delay_ms);
    }
  }
  close(fd);
  return NULL;
}

/* Listens on the loopback address of family and starts the thread.
 * Returns 0, or -1 when the address family is not available here. */
static int server_start(struct server *s, int family) {
  struct sockaddr_storage ss = {0};
  struct sockaddr_in *in4 = (struct sockaddr_in *)&ss;
  struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&ss;
  socklen_t len = family == AF_INET ? sizeof *in4 : sizeof *in6;

  memset(s->got, 0, sizeof s->got);
  s->family = family;
  if (family == AF_INET) {
    in4->sin_family = AF_INET;
    in4->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  } else {
    in6->sin6_family = AF_INET6;
    in6->sin6_addr = in6addr_loopback;
  }
  s->lfd = socket(family, SOCK_STREAM, 0);
  if (s->lfd < 0) return -1;
  if (bind(s->lfd, (struct sockaddr *)&ss, len) != 0 || listen(s->lfd, 4) != 0) {
    close(s->lfd);
    return -1;
  }
  ck_assert_int_eq(getsockname(s->lfd, (struct sockaddr *)&ss, &len), 0);
  s->port = ntohs(family == AF_INET ? in4->sin_port : in6->sin6_port);
  ck_assert_int_eq(pthread_create(&s->thread, NULL, server_main, s), 0);
  return 0;
}

static void server_stop(struct server *s) {
  ck_assert_int_eq(pthread_join(s->thread, NULL), 0);
  close(s->lfd);
}

START_TEST(test_fetch_reply) {
  struct server s = {.how = SRV_REPLY, .reply = sample, .reply_len = sizeof sample - 1};
  zkr__srvr_reply_t r;
  int fds = open_fds();

  ck_assert_int_eq(server_start(&s, AF_INET), 0);
  ck_assert_int_eq(zkr__srvr_fetch("127.0.0.1", s.port, 5000, 0, &r), ZOK);
  server_stop(&s);
  ck_assert_str_eq(s.got, "srvr");
  assert_sample(&r, ZKR_ROLE_FOLLOWER);
  ck_assert_int_eq(open_fds(), fds);
}
END_TEST

/* A name, not an address: goes through the resolver. */
START_TEST(test_fetch_localhost) {
  struct server s = {.how = SRV_REPLY, .reply = "Mode: leader\n", .reply_len = 13};
  zkr__srvr_reply_t r;

  ck_assert_int_eq(server_start(&s, AF_INET), 0);
  ck_assert_int_eq(zkr__srvr_fetch("localhost", s.port, 5000, 0, &r), ZOK);
  server_stop(&s);
  ck_assert_int_eq(r.role, ZKR_ROLE_LEADER);
}
END_TEST

START_TEST(test_fetch_ipv6) {
  struct server s = {.how = SRV_REPLY, .reply = "Mode: observer\n", .reply_len = 15};
  zkr__srvr_reply_t r;

  if (server_start(&s, AF_INET6) != 0) {
    printf("test_fetch_ipv6: no IPv6 loopback here, nothing to test\n");
    return;
  }
  ck_assert_int_eq(zkr__srvr_fetch("::1", s.port, 5000, 0, &r), ZOK);
  server_stop(&s);
  ck_assert_int_eq(r.role, ZKR_ROLE_OBSERVER);
}
END_TEST

START_TEST(test_fetch_trickle) {
  struct server s = {
      .how = SRV_TRICKLE, .reply = sample, .reply_len = sizeof sample - 1, .delay_ms = 1};
  zkr__srvr_reply_t r;
  int fds = open_fds();

  ck_assert_int_eq(server_start(&s, AF_INET), 0);
  ck_assert_int_eq(zkr__srvr_fetch("127.0.0.1", s.port, 20000, 0, &r), ZOK);
  server_stop(&s);
  assert_sample(&r, ZKR_ROLE_FOLLOWER);
  ck_assert_int_eq(open_fds(), fds);
}
END_TEST

/* The timeout bounds the whole exchange, not each read: a server that
 * keeps sending a byte now and then is still cut off on time. */
START_TEST(test_fetch_trickle_past_deadline) {
  struct server s = {
      .how = SRV_TRICKLE, .reply = sample, .reply_len = sizeof sample - 1, .delay_ms = 20};
  zkr__srvr_reply_t r;
  int fds = open_fds();
  int64_t t0;

  ck_assert_int_eq(server_start(&s, AF_INET), 0);
  t0 = mono_ms();
  ck_assert_int_eq(zkr__srvr_fetch("127.0.0.1", s.port, 300, 0, &r), ZKR_ESRVR_TIMEOUT);
  ck_assert_int_ge(mono_ms() - t0, 290);
  ck_assert_int_lt(mono_ms() - t0, 2000);
  ck_assert_int_eq(r.role, ZKR_ROLE_UNREACHABLE);
  server_stop(&s);
  ck_assert_int_eq(open_fds(), fds);
}
END_TEST

START_TEST(test_fetch_silent) {
  struct server s = {.how = SRV_SILENT};
  zkr__srvr_reply_t r;
  int fds = open_fds();
  int64_t t0;

  ck_assert_int_eq(server_start(&s, AF_INET), 0);
  t0 = mono_ms();
  ck_assert_int_eq(zkr__srvr_fetch("127.0.0.1", s.port, 300, 0, &r), ZKR_ESRVR_TIMEOUT);
  ck_assert_int_ge(mono_ms() - t0, 290);
  ck_assert_int_lt(mono_ms() - t0, 2000);
  ck_assert_int_eq(r.role, ZKR_ROLE_UNREACHABLE);
  server_stop(&s);
  ck_assert_str_eq(s.got, "srvr");
  ck_assert_int_eq(open_fds(), fds);
}
END_TEST

START_TEST(test_fetch_reset) {
  struct server s = {.how = SRV_RESET};
  zkr__srvr_reply_t r;
  int fds = open_fds();

  ck_assert_int_eq(server_start(&s, AF_INET), 0);
  ck_assert_int_eq(zkr__srvr_fetch("127.0.0.1", s.port, 5000, 0, &r), ZKR_ESRVR_CONNECT);
  ck_assert_int_eq(r.role, ZKR_ROLE_UNREACHABLE);
  server_stop(&s);
  ck_assert_int_eq(open_fds(), fds);
}
END_TEST

/* 10 MB against the default 64 KB cap stops at the cap; the same reply
 * under a cap that fits it is read whole. */
START_TEST(test_fetch_big) {
  size_t len = 10 * 1024 * 1024;
  char *big = malloc(len);
  struct server s = {.how = SRV_REPLY, .reply = big, .reply_len = len};
  zkr__srvr_reply_t r;
  int fds = open_fds();

  ck_assert_ptr_nonnull(big);
  /* Unknown lines, then the Mode line at the very end. */
  for (size_t i = 0; i < len; i++) big[i] = i % 64 == 63 ? '\n' : 'x';
  memcpy(big + len - 14, "\nMode: leader\n", 14);

  ck_assert_int_eq(server_start(&s, AF_INET), 0);
  ck_assert_int_eq(zkr__srvr_fetch("127.0.0.1", s.port, 10000, 0, &r), ZKR_ESRVR_TOO_BIG);
  ck_assert_int_eq(r.role, ZKR_ROLE_UNKNOWN);
  server_stop(&s);

  ck_assert_int_eq(server_start(&s, AF_INET), 0);
  ck_assert_int_eq(zkr__srvr_fetch("127.0.0.1", s.port, 20000, len, &r), ZOK);
  ck_assert_int_eq(r.role, ZKR_ROLE_LEADER);
  server_stop(&s);
  free(big);
  ck_assert_int_eq(open_fds(), fds);
}
END_TEST

/* A bound socket that does not listen: the port is ours, and refuses. */
START_TEST(test_fetch_refused) {
  struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
  socklen_t len = sizeof a;
  int fd = socket(AF_INET, SOCK_STREAM, 0), fds;
  zkr__srvr_reply_t r;
  int64_t t0;

  ck_assert_int_ge(fd, 0);
  ck_assert_int_eq(bind(fd, (struct sockaddr *)&a, len), 0);
  ck_assert_int_eq(getsockname(fd, (struct sockaddr *)&a, &len), 0);
  fds = open_fds();
  t0 = mono_ms();
  ck_assert_int_eq(zkr__srvr_fetch("127.0.0.1", ntohs(a.sin_port), 5000, 0, &r), ZKR_ESRVR_CONNECT);
  ck_assert_int_lt(mono_ms() - t0, 1000);
  ck_assert_int_eq(r.role, ZKR_ROLE_UNREACHABLE);
  ck_assert_int_eq(open_fds(), fds);
  close(fd);
}
END_TEST

START_TEST(test_fetch_args) {
  zkr__srvr_reply_t r;

  ck_assert_int_eq(zkr__srvr_fetch(NULL, 2181, 100, 0, &r), ZBADARGUMENTS);
  ck_assert_int_eq(zkr__srvr_fetch("127.0.0.1", 2181, 100, 0, NULL), ZBADARGUMENTS);
  ck_assert_int_eq(zkr__srvr_fetch("127.0.0.1", 0, 100, 0, &r), ZBADARGUMENTS);
  ck_assert_int_eq(zkr__srvr_fetch("127.0.0.1", 65536, 100, 0, &r), ZBADARGUMENTS);
  ck_assert_int_eq(zkr__srvr_fetch("127.0.0.1", 2181, 0, 0, &r), ZBADARGUMENTS);
}
END_TEST

static Suite *srvr_suite(void) {
  Suite *s = suite_create("srvr");
  TCase *tc = tcase_create("parse");

  tcase_set_timeout(tc, 10);
  tcase_add_loop_test(tc, test_modes, 0, (int)(sizeof modes / sizeof modes[0]));
  tcase_add_test(tc, test_leader_with_proposal_sizes);
  tcase_add_test(tc, test_34_reply);
  tcase_add_test(tc, test_not_serving);
  tcase_add_test(tc, test_crlf);
  tcase_add_test(tc, test_any_order);
  tcase_add_loop_test(tc, test_garbage, 0, (int)(sizeof garbage / sizeof garbage[0]));
  tcase_add_test(tc, test_nul_bytes);
  tcase_add_test(tc, test_never_past_len);
  tcase_add_test(tc, test_truncated_every_prefix);
  tcase_add_test(tc, test_truncated);
  tcase_add_loop_test(tc, test_zxid, 0, (int)(sizeof zxids / sizeof zxids[0]));
  tcase_add_test(tc, test_numbers);
  tcase_add_test(tc, test_parse_args);
  suite_add_tcase(s, tc);

  tc = tcase_create("buffer");
  tcase_set_timeout(tc, 30);
  tcase_add_test(tc, test_buf_cap);
  tcase_add_test(tc, test_buf_exact_limit);
  tcase_add_test(tc, test_buf_byte_by_byte);
  suite_add_tcase(s, tc);

  tc = tcase_create("fetch");
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, test_fetch_reply);
  tcase_add_test(tc, test_fetch_localhost);
  tcase_add_test(tc, test_fetch_ipv6);
  tcase_add_test(tc, test_fetch_trickle);
  tcase_add_test(tc, test_fetch_trickle_past_deadline);
  tcase_add_test(tc, test_fetch_silent);
  tcase_add_test(tc, test_fetch_reset);
  tcase_add_test(tc, test_fetch_big);
  tcase_add_test(tc, test_fetch_refused);
  tcase_add_test(tc, test_fetch_args);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) {
  SRunner *sr = srunner_create(srvr_suite());
  int failed;

  srunner_run_all(sr, CK_NORMAL);
  failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
