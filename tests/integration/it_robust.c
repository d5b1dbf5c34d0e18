/* The bad-input matrix of docs/robustness.md against a real ensemble
 * (started by tests/integration/integration.sh): values at and over the server's
 * 1 MiB packet limit (plain and in a multi) refused before sending without
 * hurting the member, paths the server itself refuses, IPv6 members, srvr
 * replies that are garbage, truncated, 10 MB, trickled, reset, silent or
 * lying, blocking calls and close from inside callbacks, and 64 threads
 * hammering one handle while a follower and then the leader restart. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "it_common.h"

#define ONE_MIB (1024 * 1024)
#define MAX_PACKET 1048575 /* the server's jute.maxbuffer */

/* ---- helpers ---- */

typedef struct {
  int n;
  int leader, write_member;
  int in_pool[ZKR_MAX_MEMBERS], connected[ZKR_MAX_MEMBERS];
  int64_t session[ZKR_MAX_MEMBERS];
  uint64_t errors[ZKR_MAX_MEMBERS], ejections[ZKR_MAX_MEMBERS];
  int role[ZKR_MAX_MEMBERS];
  uint64_t srvr_failures[ZKR_MAX_MEMBERS];
} snap_t;

static snap_t snap(zkr_t *z) {
  snap_t s = {0};
  zkr_stats_t *st;
  ck_assert_int_eq(zkr_stats(z, &st), ZOK);
  s.n = st->n_members;
  s.leader = st->leader;
  s.write_member = st->write_member;
  for (int i = 0; i < st->n_members; i++) {
    s.in_pool[i] = st->members[i].in_read_pool;
    s.connected[i] = st->members[i].connected;
    s.session[i] = st->members[i].session_id;
    s.errors[i] = st->members[i].errors;
    s.ejections[i] = st->members[i].ejections;
    s.role[i] = st->members[i].role;
    s.srvr_failures[i] = st->members[i].srvr_failures;
  }
  zkr_stats_free(st);
  return s;
}

/* Nothing the caller did may have cost a member its session, its place in
 * the read pool or an error. */
static void assert_unharmed(const snap_t *a, const snap_t *b, int sent) {
  for (int i = 0; i < a->n; i++) {
    ck_assert_msg(b->connected[i], "member %d lost its session", i);
    ck_assert_int_eq(b->session[i], a->session[i]);
    ck_assert_int_eq(b->in_pool[i], a->in_pool[i]);
    ck_assert_uint_eq(b->ejections[i], a->ejections[i]);
    /* A refusal by the server counts in the member's errors statistic (it
     * is not a health signal); a refusal before sending does not. */
    if (!sent) ck_assert_uint_eq(b->errors[i], a->errors[i]);
  }
}

/* Counts session events of the virtual session. */
typedef struct {
  _Atomic int events;
  _Atomic int last_state;
} session_seen_t;

static void count_watcher(zhandle_t *zh, int type, int state, const char *path, void *ctx) {
  (void)zh;
  (void)path;
  session_seen_t *s = ctx;
  if (type != ZOO_SESSION_EVENT || !s) return;
  s->events++;
  s->last_state = state;
}

static int never_called;
static void must_not_run(int rc, const struct Stat *st, const void *d) {
  (void)rc;
  (void)st;
  (void)d;
  never_called++;
}

/* ---- the 1 MiB limit ---- */

START_TEST(too_big_refused_member_unharmed) {
  session_seen_t seen = {0};
  zkr_t *z = it_open(NULL, count_watcher, &seen);
  char path[128];
  it_path(path, sizeof path, "big");
  ck_assert_int_eq(zkr_create(z, path, "", 0, &ZOO_OPEN_ACL_UNSAFE, 0, NULL, 0), ZOK);
  int events0 = seen.events;
  snap_t before = snap(z);
  char *big = calloc(1, 2 * ONE_MIB);
  memset(big, 'v', 2 * ONE_MIB);
  never_called = 0;
  /* At 1 MiB and over: refused here, nothing sent. */
  ck_assert_int_eq(zkr_set(z, path, big, ONE_MIB, -1), ZKR_ETOOBIG);
  ck_assert_int_eq(zkr_set(z, path, big, ONE_MIB + 1, -1), ZKR_ETOOBIG);
  ck_assert_int_eq(zkr_set(z, path, big, 2 * ONE_MIB, -1), ZKR_ETOOBIG);
  ck_assert_int_eq(zkr_aset(z, path, big, ONE_MIB, -1, must_not_run, NULL), ZKR_ETOOBIG);
  char child[160];
  snprintf(child, sizeof child, "%s/c", path);
  ck_assert_int_eq(zkr_create(z, child, big, ONE_MIB, &ZOO_OPEN_ACL_UNSAFE, 0, NULL, 0),
                   ZKR_ETOOBIG);
  ck_assert_int_eq(zkr_create(z, child, big, MAX_PACKET, &ZOO_OPEN_ACL_UNSAFE, 0, NULL, 0),
                   ZKR_ETOOBIG);
  /* The largest value zkroute lets through must be one the server takes:
   * find it by bisection (an accepted set really goes to the leader). */
  int lo = ONE_MIB - 4096, hi = ONE_MIB; /* lo accepted, hi refused */
  while (hi - lo > 1) {
    int mid = lo + (hi - lo) / 2;
    int rc = zkr_set(z, path, big, mid, -1);
    ck_assert_msg(rc == ZOK || rc == ZKR_ETOOBIG, "set of %d bytes: %s", mid, zkr_err_name(rc));
    if (rc == ZOK) lo = mid;
    else hi = mid;
  }
  ck_assert_int_eq(zkr_set(z, path, big, lo, -1), ZOK);
  /* ... and reads back whole from a follower. */
  char *back = malloc(ONE_MIB);
  int len = ONE_MIB;
  struct Stat st;
  ck_assert_int_eq(zkr_get(z, path, 0, back, &len, &st), ZOK);
  ck_assert_int_eq(len, lo);
  ck_assert_int_eq(st.dataLength, lo);
  ck_assert(memcmp(back, big, (size_t)lo) == 0);
  printf("too_big: largest accepted set value %d bytes (packet %d of %d)\n", lo,
         20 + (int)strlen(path) + lo, MAX_PACKET);
  /* A created node at its own limit (path + ACL count too). */
  int clo = ONE_MIB - 4096, chi = ONE_MIB;
  while (chi - clo > 1) {
    int mid = clo + (chi - clo) / 2;
    int rc = zkr_create(z, child, big, mid, &ZOO_OPEN_ACL_UNSAFE, 0, NULL, 0);
    ck_assert_msg(rc == ZOK || rc == ZKR_ETOOBIG, "create of %d bytes: %s", mid, zkr_err_name(rc));
    if (rc == ZOK) {
      clo = mid;
      ck_assert_int_eq(zkr_delete(z, child, -1), ZOK);
    } else {
      chi = mid;
    }
  }
  printf("too_big: largest accepted create value %d bytes\n", clo);
  it_sleep_ms(300);
  snap_t after = snap(z);
  assert_unharmed(&before, &after, 0);
  ck_assert_int_eq(seen.events, events0); /* no session event */
  ck_assert_int_eq(never_called, 0);
  free(back);
  free(big);
  zkr_close(z);
}
END_TEST

/* A multi is encoded with a header per operation: its size check must
 * count them, or a multi of many operations just under the estimate is
 * over the real limit and the server drops the member's connection. */
START_TEST(multi_at_limit) {
  zkr_t *z = it_open(NULL, NULL, NULL);
  char path[128];
  it_path(path, sizeof path, "multi");
  ck_assert_int_eq(zkr_create(z, path, "", 0, &ZOO_OPEN_ACL_UNSAFE, 0, NULL, 0), ZOK);
  snap_t before = snap(z);
  enum { K = 64 };
  zoo_op_t ops[K];
  zoo_op_result_t res[K];
  char *big = calloc(1, ONE_MIB);
  int accepted = -1;
  /* From clearly over the limit down to the first size zkroute accepts:
   * that one must succeed on the server. */
  for (int d = MAX_PACKET / K + 64; d > 0 && accepted < 0; d--) {
    for (int i = 0; i < K; i++) zoo_set_op_init(&ops[i], path, big, d, -1, NULL);
    int rc = zkr_multi(z, K, ops, res);
    if (rc == ZKR_ETOOBIG) continue;
    ck_assert_msg(rc == ZOK, "multi of %d x %d bytes: %s", K, d, zkr_err_name(rc));
    accepted = d;
  }
  printf("multi_at_limit: %d set ops of %d bytes accepted\n", K, accepted);
  /* The same with check and delete ops, which are small but many. */
  static zoo_op_t many[70000];
  static zoo_op_result_t many_res[70000];
  int n_ok = -1;
  for (int n = 70000; n > 0 && n_ok < 0; n -= 500) {
    for (int i = 0; i < n; i++) zoo_check_op_init(&many[i], path, -1);
    int rc = zkr_multi(z, n, many, many_res);
    if (rc == ZKR_ETOOBIG) continue;
    ck_assert_msg(rc == ZOK, "multi of %d checks: %s", n, zkr_err_name(rc));
    n_ok = n;
  }
  printf("multi_at_limit: %d check ops accepted\n", n_ok);
  it_sleep_ms(300);
  snap_t after = snap(z);
  assert_unharmed(&before, &after, 0);
  free(big);
  zkr_close(z);
}
END_TEST

/* ---- paths: what zkroute passes on, the server may still refuse ---- */

START_TEST(paths_against_server) {
  zkr_t *z = it_open(NULL, NULL, NULL);
  char path[128], nul[160], c1[160];
  it_path(path, sizeof path, "paths");
  snap_t before = snap(z);
  /* An embedded NUL ends the string: the node is the part before it. */
  memcpy(nul, path, strlen(path));
  memcpy(nul + strlen(path), "\0/../junk", 10);
  ck_assert_int_eq(zkr_create(z, nul, "", 0, &ZOO_OPEN_ACL_UNSAFE, 0, NULL, 0), ZOK);
  struct Stat st;
  ck_assert_int_eq(zkr_exists(z, path, 0, &st), ZOK);
  /* U+0085 (C1 control) and a byte that is not UTF-8: zkroute checks
   * bytes, the server checks characters and refuses both with a code. */
  snprintf(c1, sizeof c1, "%s/\xc2\x85", path);
  ck_assert_int_eq(zkr_create(z, c1, "", 0, &ZOO_OPEN_ACL_UNSAFE, 0, NULL, 0), ZBADARGUMENTS);
  snprintf(c1, sizeof c1, "%s/\xff", path);
  ck_assert_int_eq(zkr_create(z, c1, "", 0, &ZOO_OPEN_ACL_UNSAFE, 0, NULL, 0), ZBADARGUMENTS);
  /* Refused locally: nothing sent. */
  ck_assert_int_eq(zkr_create(z, "//", "", 0, &ZOO_OPEN_ACL_UNSAFE, 0, NULL, 0), ZBADARGUMENTS);
  ck_assert_int_eq(zkr_exists(z, "/.", 0, &st), ZBADARGUMENTS);
  ck_assert_int_eq(zkr_delete(z, "", -1), ZBADARGUMENTS);
  char buf[4];
  int len = 0;
  /* A zero-length buffer: a valid read that copies nothing. */
  ck_assert_int_eq(zkr_get(z, path, 0, buf, &len, &st), ZOK);
  ck_assert_int_eq(len, 0);
  len = 0;
  ck_assert_int_eq(zkr_get(z, path, 0, NULL, &len, &st), ZOK);
  it_sleep_ms(200);
  snap_t after = snap(z);
  assert_unharmed(&before, &after, 1);
  zkr_close(z);
}
END_TEST

/* ---- IPv6 members: [::1]:port through a proxy to each server ---- */

static pid_t proxy_start(const char *hosts, char ports[][16], int *n) {
  const char *fp = getenv("ZKR_TEST_FAULTPROXY");
  ck_assert_msg(fp && *fp, "ZKR_TEST_FAULTPROXY not set");
  char *list = strdup(hosts), *save = NULL;
  char *slash = strchr(list, '/');
  if (slash) *slash = '\0';
  char *argv[16] = {(char *)fp, "--control", "127.0.0.1:0"};
  int argc = 3;
  char links[ZKR_MAX_MEMBERS][400];
  *n = 0;
  for (char *h = strtok_r(list, ",", &save); h && *n < 8; h = strtok_r(NULL, ",", &save)) {
    snprintf(links[*n], sizeof links[*n], "m%d=[::1]:0=%s", *n, h);
    argv[argc++] = "--link";
    argv[argc++] = links[*n];
    (*n)++;
  }
  argv[argc] = NULL;
  int out[2];
  ck_assert_int_eq(pipe(out), 0);
  pid_t pid = fork();
  ck_assert_int_ge(pid, 0);
  if (pid == 0) {
    dup2(out[1], 1);
    close(out[0]);
    close(out[1]);
    execv(fp, argv);
    _exit(127);
  }
  close(out[1]);
  FILE *f = fdopen(out[0], "r");
  char line[512];
  int got = 0;
  while (fgets(line, sizeof line, f)) {
    int m;
    char addr[300];
    if (sscanf(line, "listen m%d %299s", &m, addr) == 2 && m >= 0 && m < *n) {
      char *colon = strrchr(addr, ':');
      snprintf(ports[m], 16, "%s", colon ? colon + 1 : "0");
      got++;
    }
    if (strncmp(line, "ready", 5) == 0) break;
  }
  fclose(f);
  free(list);
  if (got != *n) {
    kill(pid, SIGTERM);
    waitpid(pid, NULL, 0);
    return -1;
  }
  return pid;
}

START_TEST(ipv6_members) {
  int s = socket(AF_INET6, SOCK_STREAM, 0);
  struct sockaddr_in6 a = {.sin6_family = AF_INET6, .sin6_addr = IN6ADDR_LOOPBACK_INIT};
  int v6 = s >= 0 && bind(s, (struct sockaddr *)&a, sizeof a) == 0;
  if (s >= 0) close(s);
  if (!v6) {
    printf("ipv6_members: no IPv6 loopback here, nothing to test\n");
    return;
  }
  char ports[8][16];
  int n;
  pid_t proxy = proxy_start(it_hosts(), ports, &n);
  ck_assert_int_gt(proxy, 0);
  char hosts[512] = "";
  for (int i = 0; i < n; i++)
    snprintf(hosts + strlen(hosts), sizeof hosts - strlen(hosts), "%s[::1]:%s", i ? "," : "",
             ports[i]);
  printf("ipv6_members: %s\n", hosts);
  zkr_t *z = it_open_hosts(hosts, NULL, NULL, NULL);
  char path[128], buf[8];
  it_path(path, sizeof path, "v6");
  ck_assert_int_eq(zkr_create(z, path, "6", 1, &ZOO_OPEN_ACL_UNSAFE, 0, NULL, 0), ZOK);
  int len = sizeof buf;
  ck_assert_int_eq(zkr_get(z, path, 0, buf, &len, NULL), ZOK);
  ck_assert_int_eq(len, 1);
  snap_t sn = snap(z);
  ck_assert_int_ge(sn.leader, 0);
  ck_assert_int_eq(sn.write_member, sn.leader);
  zkr_close(z);
  kill(proxy, SIGTERM);
  waitpid(proxy, NULL, 0);
}
END_TEST

/* ---- srvr replies: a fourth member that is not a ZooKeeper server ---- */

enum fake_mode {
  FAKE_GARBAGE,   /* binary junk, then close */
  FAKE_TRUNCATED, /* a reply cut inside the Mode line */
  FAKE_HUGE,      /* 10 MB of text */
  FAKE_TRICKLE,   /* a valid reply, one byte every 10 ms (past the timeout) */
  FAKE_RESET,     /* RST as soon as the command arrives */
  FAKE_SILENT,    /* reads the command, never answers */
  FAKE_LIAR,      /* "Mode: leader" with an epoch far above the real one */
  FAKE_MODES
};

static const char *const fake_names[FAKE_MODES] = {"garbage", "truncated", "10 MB", "trickle",
                                                   "reset",   "silent",    "liar"};

typedef struct {
  enum fake_mode mode;
  int lfd, port;
  _Atomic int stop;
  _Atomic int srvr_seen;
  pthread_t thread;
} fake_t;

typedef struct {
  fake_t *f;
  int fd;
} fake_conn_t;

static void *fake_conn(void *arg) {
  fake_conn_t *c = arg;
  fake_t *f = c->f;
  int fd = c->fd;
  free(c);
  char cmd[4];
  ssize_t got = 0;
  while (got < 4) {
    ssize_t r = recv(fd, cmd + got, (size_t)(4 - got), 0);
    if (r <= 0) break;
    got += r;
  }
  /* Not srvr (a member session's connect request): hang up. */
  if (got < 4 || memcmp(cmd, "srvr", 4) != 0) {
    close(fd);
    return NULL;
  }
  f->srvr_seen++;
  static const char valid[] =
      "Zookeeper version: 3.8.0\nLatency min/avg/max: 0/0.1/3\nReceived: 10\n"
      "Sent: 10\nConnections: 1\nOutstanding: 0\nZxid: 0x100000001\n"
      "Mode: follower\nNode count: 5\n";
  switch (f->mode) {
  case FAKE_GARBAGE: {
    char junk[4096];
    for (size_t i = 0; i < sizeof junk; i++) junk[i] = (char)(i * 7 + 13);
    send(fd, junk, sizeof junk, MSG_NOSIGNAL);
    break;
  }
  case FAKE_TRUNCATED:
    send(fd, "Zookeeper version: 3.8.0\nZxid: 0x100000001\nMo", 46, MSG_NOSIGNAL);
    break;
  case FAKE_HUGE: {
    char *big = malloc(ONE_MIB);
    for (int i = 0; i < ONE_MIB; i++) big[i] = i % 64 == 63 ? '\n' : 'x';
    for (int i = 0; i < 10 && !f->stop; i++)
      if (send(fd, big, ONE_MIB, MSG_NOSIGNAL) < 0) break;
    free(big);
    break;
  }
  case FAKE_TRICKLE:
    for (size_t i = 0; i < sizeof valid - 1 && !f->stop; i++) {
      if (send(fd, valid + i, 1, MSG_NOSIGNAL) < 0) break;
      it_sleep_ms(10);
    }
    break;
  case FAKE_RESET: {
    struct linger lg = {1, 0};
    setsockopt(fd, SOL_SOCKET, SO_LINGER, &lg, sizeof lg);
    break;
  }
  case FAKE_SILENT: {
    char ch;
    while (!f->stop && recv(fd, &ch, 1, 0) > 0) {
    }
    break;
  }
  case FAKE_LIAR: {
    static const char liar[] = "Zookeeper version: 3.8.0\nZxid: 0x7fffffff00000001\nMode: leader\n";
    send(fd, liar, sizeof liar - 1, MSG_NOSIGNAL);
    break;
  }
  case FAKE_MODES: break;
  }
  close(fd);
  return NULL;
}

static void *fake_main(void *arg) {
  fake_t *f = arg;
  while (!f->stop) {
    int fd = accept(f->lfd, NULL, NULL);
    if (fd < 0) {
      if (errno == EINTR || errno == ECONNABORTED) continue;
      break;
    }
    struct timeval tv = {5, 0}; /* a silent client cannot pin a thread forever */
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    fake_conn_t *c = malloc(sizeof *c);
    c->f = f;
    c->fd = fd;
    pthread_t t;
    pthread_attr_t at;
    pthread_attr_init(&at);
    pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
    if (pthread_create(&t, &at, fake_conn, c) != 0) {
      close(fd);
      free(c);
    }
    pthread_attr_destroy(&at);
  }
  return NULL;
}

static void fake_start(fake_t *f, enum fake_mode mode) {
  struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
  socklen_t len = sizeof a;
  f->mode = mode;
  f->stop = 0;
  f->srvr_seen = 0;
  f->lfd = socket(AF_INET, SOCK_STREAM, 0);
  ck_assert_int_ge(f->lfd, 0);
  ck_assert_int_eq(bind(f->lfd, (struct sockaddr *)&a, len), 0);
  ck_assert_int_eq(listen(f->lfd, 64), 0);
  ck_assert_int_eq(getsockname(f->lfd, (struct sockaddr *)&a, &len), 0);
  f->port = ntohs(a.sin_port);
  ck_assert_int_eq(pthread_create(&f->thread, NULL, fake_main, f), 0);
}

static void fake_stop(fake_t *f) {
  f->stop = 1;
  shutdown(f->lfd, SHUT_RDWR);
  close(f->lfd);
  pthread_join(f->thread, NULL);
  it_sleep_ms(50); /* connection threads see stop */
}

/* The handle still works with the real members; the fake one is never in a
 * pool; close does not hang. */
START_TEST(srvr_bad_replies) {
  enum fake_mode mode = (enum fake_mode)_i;
  fake_t f;
  fake_start(&f, mode);
  char hosts[600];
  snprintf(hosts, sizeof hosts, "%s,127.0.0.1:%d", it_hosts(), f.port);
  zkr_options_t o = ZKR_OPTIONS_INIT;
  o.leader_poll_ms = 100; /* many polls; the silent fake costs a srvr timeout each */
  zkr_t *z = NULL;
  ck_assert_int_eq(zkr_init_opts(&z, hosts, NULL, 10000, NULL, NULL, 0, &o), ZOK);
  int fake = IT_MEMBERS;
  char path[128], buf[8];
  it_path(path, sizeof path, "srvr");
  /* Writes work whatever the fake says (the liar costs a hop at most). */
  int rc = ZCONNECTIONLOSS;
  uint64_t deadline = it_now_ms() + 15000;
  while (it_now_ms() < deadline &&
         (rc = zkr_create(z, path, "v", 1, &ZOO_OPEN_ACL_UNSAFE, 0, NULL, 0)) != ZOK)
    it_sleep_ms(50);
  ck_assert_msg(rc == ZOK, "%s: create: %s", fake_names[mode], zkr_err_name(rc));
  for (int i = 0; i < 50; i++) {
    int len = sizeof buf;
    ck_assert_int_eq(zkr_set(z, path, "w", 1, -1), ZOK);
    ck_assert_int_eq(zkr_get(z, path, 0, buf, &len, NULL), ZOK);
    ck_assert_int_eq(len, 1);
    ck_assert_int_eq(buf[0], 'w');
  }
  /* The view settles (a slow poll of a real member, under valgrind, may
   * leave the leader unknown for a round): wait for it, then check it. */
  snap_t s;
  deadline = it_now_ms() + 20000;
  for (;;) {
    s = snap(z);
    int settled = mode == FAKE_LIAR
                      ? s.leader == fake && s.write_member >= 0 && s.write_member < IT_MEMBERS
                      : s.leader >= 0 && s.leader < IT_MEMBERS && s.write_member == s.leader &&
                            s.srvr_failures[fake] > 0;
    if (settled || it_now_ms() > deadline) break;
    it_sleep_ms(50);
  }
  ck_assert_int_gt(f.srvr_seen, 0);
  ck_assert(!s.connected[fake] && !s.in_pool[fake]);
  if (mode == FAKE_LIAR) {
    /* Believed, but never the write session: its session never connects. */
    ck_assert_int_eq(s.leader, fake);
    ck_assert_int_eq(s.role[fake], ZKR_ROLE_LEADER);
    ck_assert_int_ne(s.write_member, fake);
  } else {
    ck_assert_int_ge(s.leader, 0);
    ck_assert_int_lt(s.leader, IT_MEMBERS);
    ck_assert_int_eq(s.write_member, s.leader);
    ck_assert(s.role[fake] == ZKR_ROLE_UNKNOWN || s.role[fake] == ZKR_ROLE_UNREACHABLE);
    ck_assert_uint_gt(s.srvr_failures[fake], 0);
  }
  uint64_t t0 = it_now_ms();
  ck_assert_int_eq(zkr_close(z), ZOK);
  uint64_t took = it_now_ms() - t0;
  printf("srvr_bad_replies: %-9s polls %d, role %s, leader %d, write member %d, close %llu ms\n",
         fake_names[mode], f.srvr_seen, zkr_role_name((zkr_role_t)s.role[fake]), s.leader,
         s.write_member, (unsigned long long)took);
  ck_assert_uint_lt(took, 10000); /* one srvr timeout (1 s) and a margin */
  fake_stop(&f);
}
END_TEST

/* ---- callbacks ---- */

typedef struct {
  zkr_t *z;
  char path[128];
  _Atomic int done;
  int sync_rc[4];
  int async_rc;
  _Atomic int nested_done;
} cb_ctx_t;

static void nested_done(int rc, const char *v, int l, const struct Stat *s, const void *d) {
  (void)v;
  (void)l;
  (void)s;
  cb_ctx_t *c = (cb_ctx_t *)d;
  if (rc == ZOK) c->nested_done++;
}

static void blocking_in_completion(int rc, const char *v, int l, const struct Stat *s,
                                   const void *d) {
  (void)rc;
  (void)v;
  (void)l;
  (void)s;
  cb_ctx_t *c = (cb_ctx_t *)d;
  char buf[8];
  int len = sizeof buf;
  struct Stat st;
  struct String_vector sv;
  c->sync_rc[0] = zkr_get(c->z, c->path, 0, buf, &len, &st);
  c->sync_rc[1] = zkr_set(c->z, c->path, "x", 1, -1);
  c->sync_rc[2] = zkr_get_children(c->z, c->path, 0, &sv);
  if (c->sync_rc[2] == ZOK) deallocate_String_vector(&sv);
  char child[160];
  snprintf(child, sizeof child, "%s/child", c->path);
  c->sync_rc[3] = zkr_create(c->z, child, "", 0, &ZOO_OPEN_ACL_UNSAFE, 0, NULL, 0);
  /* Asynchronous calls from a callback are fine. */
  c->async_rc = zkr_aget(c->z, c->path, 0, nested_done, c);
  c->done++;
}

static _Atomic int global_sync_rc;

static void blocking_in_watcher(zhandle_t *zh, int type, int state, const char *path, void *ctx) {
  (void)type;
  (void)state;
  (void)path;
  cb_ctx_t *c = ctx;
  struct Stat st;
  c->sync_rc[0] = zkr_exists(zkr_from_zh(zh), c->path, 0, &st);
  c->done++;
}

static void blocking_in_global(zhandle_t *zh, int type, int state, const char *path, void *ctx) {
  (void)type;
  (void)path;
  (void)ctx;
  struct Stat st;
  /* 1: not called yet (no ZooKeeper code is 1). */
  if (state == ZOO_CONNECTED_STATE && global_sync_rc == 1)
    global_sync_rc = zkr_exists(zkr_from_zh(zh), "/", 0, &st);
}

START_TEST(blocking_calls_in_callbacks) {
  global_sync_rc = 1;
  cb_ctx_t c = {0};
  c.z = it_open(NULL, blocking_in_global, NULL);
  it_path(c.path, sizeof c.path, "incb");
  ck_assert_int_eq(zkr_create(c.z, c.path, "v", 1, &ZOO_OPEN_ACL_UNSAFE, 0, NULL, 0), ZOK);
  /* Blocking calls work in every kind of callback, as with stock
   * libzookeeper_mt (DESIGN.md section 4).  In the global watcher (the
   * CONNECTED event): */
  ck_assert_int_eq(global_sync_rc, ZOK);
  /* In a completion. */
  ck_assert_int_eq(zkr_aget(c.z, c.path, 0, blocking_in_completion, &c), ZOK);
  uint64_t deadline = it_now_ms() + 10000;
  while ((c.done < 1 || c.nested_done < 1) && it_now_ms() < deadline) it_sleep_ms(5);
  ck_assert_int_eq(c.done, 1);
  for (int i = 0; i < 4; i++) ck_assert_int_eq(c.sync_rc[i], ZOK);
  ck_assert_int_eq(c.async_rc, ZOK);
  ck_assert_int_eq(c.nested_done, 1);
  /* In a watcher. */
  cb_ctx_t w = {0};
  strcpy(w.path, c.path);
  char buf[8];
  int len = sizeof buf;
  ck_assert_int_eq(zkr_wget(c.z, c.path, blocking_in_watcher, &w, buf, &len, NULL), ZOK);
  ck_assert_int_eq(zkr_set(c.z, c.path, "y", 1, -1), ZOK);
  deadline = it_now_ms() + 10000;
  while (w.done < 1 && it_now_ms() < deadline) it_sleep_ms(5);
  ck_assert_int_eq(w.done, 1);
  ck_assert_int_eq(w.sync_rc[0], ZOK);
  /* And outside callbacks, as before. */
  len = sizeof buf;
  ck_assert_int_eq(zkr_get(c.z, c.path, 0, buf, &len, NULL), ZOK);
  zkr_close(c.z);
}
END_TEST

/* zkr_close from inside a watcher, with 200 operations in flight: the
 * close finishes on its own thread, each operation completes exactly once,
 * and the handle is then gone from the registry. */
static int inflight_calls[200];
static _Atomic int close_rc_in_watcher = 1;

static void count_completion(int rc, const struct Stat *st, const void *d) {
  (void)rc;
  (void)st;
  __atomic_add_fetch(&inflight_calls[(intptr_t)d], 1, __ATOMIC_SEQ_CST);
}

static void closing_watcher(zhandle_t *zh, int type, int state, const char *path, void *ctx) {
  (void)type;
  (void)state;
  (void)path;
  zkr_t *z = zkr_from_zh(zh);
  intptr_t *issued = ctx;
  /* More operations right before the close, from the watcher itself. */
  for (int i = 0; i < 100; i++) {
    intptr_t k = 100 + i;
    if (zkr_aexists(z, "/", 0, count_completion, (void *)k) == ZOK) issued[k] = 1;
  }
  close_rc_in_watcher = zkr_close(z);
}

START_TEST(close_in_watcher) {
  zkr_t *z = it_open(NULL, NULL, NULL);
  zhandle_t *stock = it_stock();
  char path[128], other[128];
  it_path(path, sizeof path, "closew");
  it_path(other, sizeof other, "closew-sets");
  ck_assert_int_eq(zoo_create(stock, path, "a", 1, &ZOO_OPEN_ACL_UNSAFE, 0, NULL, 0), ZOK);
  ck_assert_int_eq(zoo_create(stock, other, "a", 1, &ZOO_OPEN_ACL_UNSAFE, 0, NULL, 0), ZOK);
  memset(inflight_calls, 0, sizeof inflight_calls);
  static intptr_t issued[200];
  memset(issued, 0, sizeof issued);
  close_rc_in_watcher = 1;
  struct Stat st;
  ck_assert_int_eq(zkr_wexists(z, path, closing_watcher, issued, &st), ZOK);
  for (intptr_t i = 0; i < 100; i++) {
    ck_assert_int_eq(zkr_aset(z, other, "v", 1, -1, count_completion, (void *)i), ZOK);
    issued[i] = 1;
  }
  ck_assert_int_eq(zoo_set(stock, path, "b", 1, -1), ZOK);
  uint64_t deadline = it_now_ms() + 15000;
  while (zkr_state(z) != 0 && it_now_ms() < deadline) it_sleep_ms(10);
  ck_assert_int_eq(zkr_state(z), 0); /* closed and gone */
  ck_assert_int_eq(close_rc_in_watcher, ZOK);
  ck_assert_int_eq(zkr_close(z), ZKR_ECLOSED);
  int n = 0;
  for (int i = 0; i < 200; i++) {
    ck_assert_int_eq(inflight_calls[i], issued[i] ? 1 : 0);
    n += issued[i];
  }
  printf("close_in_watcher: %d operations, each completed once\n", n);
  zookeeper_close(stock);
}
END_TEST

/* ---- 64 threads on one handle while a follower, then the leader restart ---- */

enum { HAMMER_THREADS = 64 };

typedef struct {
  zkr_t *z;
  int id;
  char path[160];
  _Atomic int *stop;
  long ops, acked, write_unknown, read_fail, ryw_violations, bad_rc;
  long async_issued;
  _Atomic long async_done;
  int last_bad;
  /* The first violations, for the failure message: what the read
   * returned, the last acknowledged value, when (ms into the test), and
   * the outcomes of the thread's last writes (newest last). */
  struct {
    long got, acked, next;
    uint64_t at_ms, read_ms;
    char writes[40];
  } seen[4];
  int n_seen;
  char wlog[40]; /* outcome of the last writes: '+' acked, '?' unknown */
} hammer_t;

static uint64_t hammer_t0;

static int allowed(int rc) {
  /* Outcome unknown, or refused while the session moves: documented. */
  return rc == ZOK || rc == ZCONNECTIONLOSS || rc == ZOPERATIONTIMEOUT || rc == ZSESSIONMOVED ||
         rc == ZKR_ENOMEMBER;
}

static void hammer_async(int rc, const char *v, int l, const struct Stat *s, const void *d) {
  (void)v;
  (void)l;
  (void)s;
  hammer_t *h = (hammer_t *)d;
  if (!allowed(rc) && rc != ZNONODE) {
    h->bad_rc++;
    h->last_bad = rc;
  }
  h->async_done++;
}

static void *hammer_main(void *arg) {
  hammer_t *h = arg;
  long next = 1, acked = 0;
  char buf[32];
  while (!*h->stop) {
    int len = snprintf(buf, sizeof buf, "%ld", next);
    int rc = zkr_set(h->z, h->path, buf, len, -1);
    h->ops++;
    if (rc == ZOK) acked = next, h->acked++;
    else if (allowed(rc)) h->write_unknown++;
    else h->bad_rc++, h->last_bad = rc;
    size_t wl = strlen(h->wlog);
    if (wl + 1 >= sizeof h->wlog) memmove(h->wlog, h->wlog + 1, wl--);
    h->wlog[wl] = rc == ZOK ? '+' : '?';
    h->wlog[wl + 1] = '\0';
    next++;
    /* Read-your-writes: never older than the last acknowledged write. */
    char got[32];
    int glen = sizeof got - 1;
    uint64_t r0 = it_now_ms();
    rc = zkr_get(h->z, h->path, 0, got, &glen, NULL);
    h->ops++;
    if (rc == ZOK) {
      got[glen > 0 ? glen : 0] = '\0';
      long v = atol(got);
      if (v < acked || v >= next) {
        h->ryw_violations++;
        if (h->n_seen < 4) {
          __typeof__(h->seen[0]) *e = &h->seen[h->n_seen++];
          e->got = v, e->acked = acked, e->next = next;
          e->at_ms = r0 - hammer_t0, e->read_ms = it_now_ms() - r0;
          memcpy(e->writes, h->wlog, sizeof e->writes);
        }
      }
    } else if (allowed(rc)) {
      h->read_fail++;
    } else {
      h->bad_rc++, h->last_bad = rc;
    }
    struct Stat st;
    rc = zkr_exists(h->z, "/", 0, &st);
    h->ops++;
    if (!allowed(rc)) h->bad_rc++, h->last_bad = rc;
    if (zkr_aget(h->z, h->path, 0, hammer_async, h) == ZOK) h->async_issued++;
    zkr_stats_t *s;
    if (h->id % 8 == 0 && zkr_stats(h->z, &s) == ZOK) zkr_stats_free(s);
  }
  return NULL;
}

static int ensemble_cmd(const char *cmd, int member0) {
  const char *sh = getenv("ZKR_TEST_ENSEMBLE_SH"), *dir = getenv("ZKR_TEST_DIR");
  if (!sh || !dir) return 77;
  char line[1024];
  /* setsid: a restarted server must outlive this test, whose process
   * group Check kills when the test ends. */
  snprintf(line, sizeof line, "setsid bash '%s' %s '%s' %d >/dev/null 2>&1", sh, cmd, dir,
           member0 + 1);
  int rc = system(line);
  return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}

START_TEST(hammer_while_member_restarts) {
  zkr_t *z = it_open(NULL, NULL, NULL);
  char base[128];
  it_path(base, sizeof base, "hammer");
  ck_assert_int_eq(zkr_create(z, base, "", 0, &ZOO_OPEN_ACL_UNSAFE, 0, NULL, 0), ZOK);
  static hammer_t h[HAMMER_THREADS];
  pthread_t t[HAMMER_THREADS];
  _Atomic int stop = 0;
  hammer_t0 = it_now_ms();
  for (int i = 0; i < HAMMER_THREADS; i++) {
    memset(&h[i], 0, sizeof h[i]);
    h[i].z = z;
    h[i].id = i;
    h[i].stop = &stop;
    snprintf(h[i].path, sizeof h[i].path, "%s/t%d", base, i);
    ck_assert_int_eq(zkr_create(z, h[i].path, "0", 1, &ZOO_OPEN_ACL_UNSAFE, 0, NULL, 0), ZOK);
  }
  for (int i = 0; i < HAMMER_THREADS; i++)
    ck_assert_int_eq(pthread_create(&t[i], NULL, hammer_main, &h[i]), 0);
  it_sleep_ms(1500);
  /* A follower goes down and comes back, then the leader. */
  int leader = snap(z).leader;
  int follower = (leader + 1) % IT_MEMBERS;
  int restarted = 0;
  int kill_rc = ensemble_cmd("kill", follower);
  if (kill_rc == 0) {
    printf("hammer: [%llu ms] follower m%d killed\n", (unsigned long long)(it_now_ms() - hammer_t0),
           follower + 1);
    it_sleep_ms(2000);
    ck_assert_int_eq(ensemble_cmd("restart", follower), 0);
    printf("hammer: [%llu ms] follower m%d serves again\n",
           (unsigned long long)(it_now_ms() - hammer_t0), follower + 1);
    it_sleep_ms(1500);
    ck_assert_int_eq(ensemble_cmd("kill", leader), 0);
    printf("hammer: [%llu ms] leader m%d killed\n", (unsigned long long)(it_now_ms() - hammer_t0),
           leader + 1);
    it_sleep_ms(2000);
    ck_assert_int_eq(ensemble_cmd("restart", leader), 0);
    printf("hammer: [%llu ms] m%d serves again\n", (unsigned long long)(it_now_ms() - hammer_t0),
           leader + 1);
    restarted = 2;
  } else {
    printf("hammer: no local ensemble (kill: %d): hammering without restarts\n", kill_rc);
    it_sleep_ms(5000);
  }
  it_sleep_ms(2000);
  stop = 1;
  long ops = 0, acked = 0, unknown = 0, read_fail = 0, ryw = 0, bad = 0, issued = 0;
  for (int i = 0; i < HAMMER_THREADS; i++) {
    pthread_join(t[i], NULL);
  }
  /* Every accepted asynchronous read completes exactly once. */
  uint64_t deadline = it_now_ms() + 30000;
  for (int i = 0; i < HAMMER_THREADS; i++)
    while (h[i].async_done < h[i].async_issued && it_now_ms() < deadline) it_sleep_ms(10);
  for (int i = 0; i < HAMMER_THREADS; i++) {
    ops += h[i].ops;
    acked += h[i].acked;
    unknown += h[i].write_unknown;
    read_fail += h[i].read_fail;
    ryw += h[i].ryw_violations;
    bad += h[i].bad_rc;
    issued += h[i].async_issued;
    ck_assert_int_eq(h[i].async_done, h[i].async_issued);
    ck_assert_msg(h[i].bad_rc == 0, "thread %d: unexpected %s", i, zkr_err_name(h[i].last_bad));
    for (int k = 0; k < h[i].n_seen; k++)
      printf("hammer: RYW violation, thread %d: read at %llu ms (took %llu ms) returned %ld, last "
             "acknowledged %ld, next %ld; last writes (+ acked, ? unknown) %s\n",
             i, (unsigned long long)h[i].seen[k].at_ms, (unsigned long long)h[i].seen[k].read_ms,
             h[i].seen[k].got, h[i].seen[k].acked, h[i].seen[k].next, h[i].seen[k].writes);
  }
  uint64_t again = 0;
  zkr_stats_t *st;
  if (zkr_stats(z, &st) == ZOK) {
    for (int i = 0; i < st->n_members; i++) again += st->members[i].reads_again;
    zkr_stats_free(st);
  }
  printf("hammer: %d threads, %d restarts: %ld sync ops, %ld writes acked, %ld writes "
         "outcome-unknown, %ld reads failed, %ld async reads, %ld RYW violations, %llu reads sent "
         "again after a lost sync\n",
         HAMMER_THREADS, restarted, ops, acked, unknown, read_fail, issued, ryw,
         (unsigned long long)again);
  /* Check's fork mode ends a failing test without flushing its output. */
  fflush(stdout);
  ck_assert_int_eq(ryw, 0);
  ck_assert_int_gt(acked, HAMMER_THREADS);
  /* After the restarts the handle serves again, with every member back. */
  it_wait_ready(z);
  char buf[8];
  int len = sizeof buf;
  ck_assert_int_eq(zkr_set(z, h[0].path, "end", 3, -1), ZOK);
  ck_assert_int_eq(zkr_get(z, h[0].path, 0, buf, &len, NULL), ZOK);
  ck_assert_int_eq(len, 3);
  ck_assert_int_eq(zkr_close(z), ZOK);
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("robust");
  TCase *tc = tcase_create("ensemble");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, too_big_refused_member_unharmed);
  tcase_add_test(tc, multi_at_limit);
  tcase_add_test(tc, paths_against_server);
  tcase_add_test(tc, ipv6_members);
  tcase_add_loop_test(tc, srvr_bad_replies, 0, FAKE_MODES);
  tcase_add_test(tc, blocking_calls_in_callbacks);
  tcase_add_test(tc, close_in_watcher);
  tcase_add_test(tc, hammer_while_member_restarts);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) {
  signal(SIGPIPE, SIG_IGN);
  return it_run(suite());
}
