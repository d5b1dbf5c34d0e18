/* faultproxy-bench: measures tests/harness/faultproxy and checks its faults.
 *
 * It starts a TCP echo server (a forked child, one process per connection)
 * and a faultproxy with one link in front of it, then runs modes:
 *
 *   selftest  every fault and the stream rules, pass/fail (the default, so
 *             the binary can sit in TESTS; exit 0, 1 on failure, 77 when
 *             the faultproxy binary is missing)
 *   overhead  ping-pong of small messages straight to the echo server and
 *             through the proxy with no fault, alternating (every round trip
 *             by default) so that other load on the machine hits both
 *             alike; reports percentiles and what the proxy adds; plus bulk
 *             throughput both ways
 *   delay     round trips under `delay L 8 2` (expect P50 = 16 ms),
 *             `delay L 8 0` and `delay L 8 0 up` (accuracy)
 *   all       the three
 *
 * The proxy runs as `sh -c "exec CMD --control ... --link ..."`, so CMD may
 * wrap it: --proxy 'valgrind --leak-check=full ./tests/harness/faultproxy'.  A mode
 * fails if the proxy does not exit with status 0 after `quit`.
 * See docs/faultproxy.md. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/sockios.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <dirent.h>
#include <unistd.h>

#define IO_TIMEOUT_MS 5000
#define PAT_PERIOD 65521     /* prime: a shifted or dropped byte shows */
#define QUEUE_CAP (4u << 20) /* faultproxy's default */

static int echo_port, proxy_port, ctl_port;
static pid_t echo_pid, proxy_pid;
static FILE *ctl_f;
static int ctl_fd = -1;
static char reply[8192];
static unsigned char pat[PAT_PERIOD + 65536];
static int failures;

static void fatal(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
static void fatal(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fputs("faultproxy-bench: ", stderr);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
  if (proxy_pid > 0) kill(proxy_pid, SIGKILL);
  if (echo_pid > 0) kill(-echo_pid, SIGKILL);
  exit(1);
}

static uint64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void set_timeouts(int fd, int ms) {
  struct timeval tv = {.tv_sec = ms / 1000, .tv_usec = (ms % 1000) * 1000};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
}

/* Blocking, TCP_NODELAY, reads and writes time out after IO_TIMEOUT_MS. */
static int tcp_connect(int port) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) fatal("socket: %s", strerror(errno));
  struct sockaddr_in sa = {.sin_family = AF_INET,
                           .sin_port = htons((uint16_t)port),
                           .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
  if (connect(fd, (struct sockaddr *)&sa, sizeof sa) < 0)
    fatal("connect 127.0.0.1:%d: %s", port, strerror(errno));
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  set_timeouts(fd, IO_TIMEOUT_MS);
  return fd;
}

static int listen_any(int *port) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
  socklen_t len = sizeof sa;
  if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof sa) < 0 || listen(fd, 512) < 0 ||
      getsockname(fd, (struct sockaddr *)&sa, &len) < 0)
    fatal("echo listen: %s", strerror(errno));
  *port = ntohs(sa.sin_port);
  return fd;
}

static int write_all(int fd, const void *p, size_t n) {
  const char *c = p;
  while (n) {
    ssize_t w = send(fd, c, n, MSG_NOSIGNAL);
    if (w < 0) {
      if (errno == EINTR) continue;
      return -1;
    }
    c += w;
    n -= (size_t)w;
  }
  return 0;
}

/* Returns n, a short count at EOF, or -1 with errno. */
static ssize_t read_exact(int fd, void *p, size_t n) {
  size_t got = 0;
  while (got < n) {
    ssize_t r = read(fd, (char *)p + got, n - got);
    if (r < 0) {
      if (errno == EINTR) continue;
      return -1;
    }
    if (r == 0) break;
    got += (size_t)r;
  }
  return (ssize_t)got;
}

/* ---- echo server -------------------------------------------------------- */

static void echo_conn(int fd) {
  static char buf[65536];
  for (;;) {
    ssize_t n = read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0 || write_all(fd, buf, (size_t)n) < 0) break;
  }
  close(fd);
  _exit(0);
}

static void echo_start(void) {
  int lfd = listen_any(&echo_port);
  echo_pid = fork();
  if (echo_pid < 0) fatal("fork: %s", strerror(errno));
  if (echo_pid == 0) {
    setpgid(0, 0); /* one kill(-pid) ends it and its children */
    signal(SIGCHLD, SIG_IGN);
    for (;;) {
      int fd = accept(lfd, NULL, NULL);
      if (fd < 0) continue;
      int one = 1;
      setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
      pid_t p = fork();
      if (p == 0) {
        close(lfd);
        echo_conn(fd);
      }
      close(fd);
    }
  }
  setpgid(echo_pid, echo_pid);
  close(lfd);
}

/* ---- the proxy and its control socket ------------------------------------ */

static void proxy_start(const char *cmd) {
  int p[2];
  if (pipe(p) < 0) fatal("pipe: %s", strerror(errno));
  char line[8192];
  int len = snprintf(line, sizeof line,
                     "exec %s --control 127.0.0.1:0 "
                     "--link L=127.0.0.1:0=127.0.0.1:%d",
                     cmd, echo_port);
  if (len < 0 || (size_t)len >= sizeof line) fatal("--proxy: too long");
  proxy_pid = fork();
  if (proxy_pid < 0) fatal("fork: %s", strerror(errno));
  if (proxy_pid == 0) {
    dup2(p[1], 1);
    close(p[0]);
    close(p[1]);
    execl("/bin/sh", "sh", "-c", line, (char *)NULL);
    _exit(127);
  }
  close(p[1]);
  FILE *f = fdopen(p[0], "r");
  bool ready = false;
  while (!ready && fgets(line, sizeof line, f)) {
    if (sscanf(line, "control 127.0.0.1:%d", &ctl_port) == 1) continue;
    if (sscanf(line, "listen L 127.0.0.1:%d", &proxy_port) == 1) continue;
    if (strcmp(line, "ready\n") == 0) ready = true;
  }
  fclose(f); /* it prints nothing after "ready" */
  if (!ready || !ctl_port || !proxy_port) fatal("proxy did not start: %s", cmd);
  ctl_fd = tcp_connect(ctl_port);
  ctl_f = fdopen(dup(ctl_fd), "r");
}

/* Sends one command; the reply line (without newline) lands in `reply`.
 * Returns true when it starts with "ok". */
static bool ctl(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static bool ctl(const char *fmt, ...) {
  char cmd[512];
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(cmd, sizeof cmd - 1, fmt, ap);
  va_end(ap);
  cmd[n++] = '\n';
  if (write_all(ctl_fd, cmd, (size_t)n) < 0 || !fgets(reply, sizeof reply, ctl_f))
    fatal("control: no reply to %.*s", n - 1, cmd);
  reply[strcspn(reply, "\n")] = '\0';
  return strncmp(reply, "ok", 2) == 0 && (reply[2] == ' ' || !reply[2]);
}

static void ctl_ok(const char *cmd) {
  if (!ctl("%s", cmd)) fatal("control: %s -> %s", cmd, reply);
}

/* A key=value field of the last reply, or -1. */
static long long field(const char *key) {
  size_t k = strlen(key);
  for (const char *p = reply; (p = strstr(p, key)); p += k)
    if ((p == reply || p[-1] == ' ') && p[k] == '=') return atoll(p + k + 1);
  return -1;
}

static long long stat_of(const char *key) {
  ctl_ok("stats L");
  return field(key);
}

static int proxy_quit(void) {
  int status;
  if (!ctl("quit") || strcmp(reply, "ok bye") != 0) fatal("quit -> %s", reply);
  for (int i = 0; i < 3000; i++) { /* valgrind takes its time */
    pid_t r = waitpid(proxy_pid, &status, WNOHANG);
    if (r == proxy_pid) {
      proxy_pid = 0;
      fclose(ctl_f);
      close(ctl_fd);
      return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    }
    usleep(10000);
  }
  fatal("proxy did not exit after quit");
}

static int count_fds(pid_t pid) {
  char path[64];
  snprintf(path, sizeof path, "/proc/%d/fd", (int)pid);
  DIR *d = opendir(path);
  if (!d) return -1;
  int n = 0;
  struct dirent *e;
  while ((e = readdir(d)))
    if (e->d_name[0] != '.') n++;
  closedir(d);
  return n;
}

/* ---- measurements --------------------------------------------------------- */

static int cmp_dbl(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static double pct(const double *sorted, size_t n, double p) {
  size_t i = (size_t)(p / 100.0 * (double)(n - 1) + 0.5);
  return sorted[i < n ? i : n - 1];
}

/* k round trips of size bytes; each one's time (us) goes to out. */
static void pingpong(int fd, size_t size, size_t k, double *out) {
  static unsigned char got[65536];
  for (size_t i = 0; i < k; i++) {
    const unsigned char *msg = pat + (i * 7) % PAT_PERIOD;
    uint64_t t0 = now_ns();
    if (write_all(fd, msg, size) < 0) fatal("ping write: %s", strerror(errno));
    ssize_t r = read_exact(fd, got, size);
    uint64_t t1 = now_ns();
    if (r != (ssize_t)size) fatal("ping read: %s", r < 0 ? strerror(errno) : "EOF");
    if (memcmp(got, msg, size) != 0) fatal("ping: echoed bytes differ");
    if (out) out[i] = (double)(t1 - t0) / 1000.0;
  }
}

struct summary {
  double min, p1, p50, p90, p99, p999, max, mean;
};

static struct summary summarize(double *v, size_t n) {
  qsort(v, n, sizeof *v, cmp_dbl);
  double sum = 0;
  for (size_t i = 0; i < n; i++) sum += v[i];
  return (struct summary){v[0],          pct(v, n, 1),    pct(v, n, 50), pct(v, n, 90),
                          pct(v, n, 99), pct(v, n, 99.9), v[n - 1],      sum / (double)n};
}

/* Sends total bytes of the pattern while reading the echo back; half-closes
 * at the end and expects EOF after the last byte.  Returns seconds, or a
 * negative value with *why set. */
static double bulk(int port, size_t total, const char **why) {
  int fd = tcp_connect(port);
  fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
  static unsigned char buf[65536];
  size_t sent = 0, recvd = 0;
  bool shut = false;
  uint64_t t0 = now_ns();
  *why = NULL;
  for (;;) {
    struct pollfd p = {.fd = fd, .events = POLLIN | (shut ? 0 : POLLOUT)};
    int r = poll(&p, 1, IO_TIMEOUT_MS);
    if (r == 0) {
      *why = "stalled";
      break;
    }
    if (r < 0) continue;
    if (!shut && (p.revents & POLLOUT)) {
      size_t n = total - sent < 65536 ? total - sent : 65536;
      ssize_t w = send(fd, pat + sent % PAT_PERIOD, n, MSG_NOSIGNAL);
      if (w > 0) sent += (size_t)w;
      if (w < 0 && errno != EAGAIN) {
        *why = "send failed";
        break;
      }
      if (sent == total) {
        shutdown(fd, SHUT_WR);
        shut = true;
      }
    }
    if (p.revents & (POLLIN | POLLHUP | POLLERR)) {
      ssize_t n = read(fd, buf, sizeof buf);
      if (n < 0 && errno == EAGAIN) continue;
      if (n < 0) {
        *why = "read failed";
        break;
      }
      if (n == 0) {
        if (recvd != total) *why = "early EOF";
        break;
      }
      if (recvd + (size_t)n > total || memcmp(buf, pat + recvd % PAT_PERIOD, (size_t)n) != 0) {
        *why = "corrupted stream";
        break;
      }
      recvd += (size_t)n;
    }
  }
  close(fd);
  double s = (double)(now_ns() - t0) / 1e9;
  return *why ? -1 : s;
}

/* Tails mean little on a busy machine: say how busy it was. */
static void print_load(void) {
  char buf[128] = "?";
  FILE *f = fopen("/proc/loadavg", "r");
  if (f) {
    if (fgets(buf, sizeof buf, f)) buf[strcspn(buf, "\n")] = '\0';
    fclose(f);
  }
  printf("  (load average: %s; %ld CPUs online)\n", buf, sysconf(_SC_NPROCESSORS_ONLN));
}

static void run_overhead(size_t n, size_t size, size_t block, size_t bulk_mib) {
  int dfd = tcp_connect(echo_port), pfd = tcp_connect(proxy_port);
  size_t warm = n / 10 < 1000 ? n / 10 : 1000;
  pingpong(dfd, size, warm, NULL);
  pingpong(pfd, size, warm, NULL);
  double *dv = malloc(n * sizeof *dv), *pv = malloc(n * sizeof *pv);
  for (size_t done = 0; done < n; done += block) {
    size_t k = n - done < block ? n - done : block;
    pingpong(dfd, size, k, dv + done);
    pingpong(pfd, size, k, pv + done);
  }
  close(dfd);
  close(pfd);
  struct summary d = summarize(dv, n), p = summarize(pv, n);
  printf("overhead: %zu round trips of %zu bytes each way, direct and "
         "proxied alternating every %zu\n",
         n, size, block);
  printf("  %-8s %8s %8s %8s %8s %8s %8s %8s  (us)\n", "", "min", "p50", "p90", "p99", "p99.9",
         "max", "mean");
  printf("  %-8s %8.1f %8.1f %8.1f %8.1f %8.1f %8.1f %8.1f\n", "direct", d.min, d.p50, d.p90, d.p99,
         d.p999, d.max, d.mean);
  printf("  %-8s %8.1f %8.1f %8.1f %8.1f %8.1f %8.1f %8.1f\n", "proxy", p.min, p.p50, p.p90, p.p99,
         p.p999, p.max, p.mean);
  printf("  added by the proxy per round trip: p50 %.1f us, p90 %.1f us, "
         "p99 %.1f us, mean %.1f us\n",
         p.p50 - d.p50, p.p90 - d.p90, p.p99 - d.p99, p.mean - d.mean);
  print_load();
  free(dv);
  free(pv);
  if (bulk_mib) {
    const char *why;
    size_t total = bulk_mib << 20;
    double ds = bulk(echo_port, total, &why);
    if (ds < 0) fatal("bulk direct: %s", why);
    double ps = bulk(proxy_port, total, &why);
    if (ps < 0) fatal("bulk proxy: %s", why);
    printf("bulk: %zu MiB echoed (sent and received concurrently): direct "
           "%.0f MiB/s, proxy %.0f MiB/s\n",
           bulk_mib, (double)bulk_mib / ds, (double)bulk_mib / ps);
  }
  fflush(stdout);
}

static void delay_case(const char *cmd, size_t n, double expect_ms) {
  ctl_ok(cmd);
  int fd = tcp_connect(proxy_port);
  double *v = malloc(n * sizeof *v);
  pingpong(fd, 64, 5, NULL);
  pingpong(fd, 64, n, v);
  close(fd);
  ctl_ok("clear L");
  struct summary s = summarize(v, n);
  printf("%-18s n=%zu  min %.3f  p1 %.3f  p50 %.3f  p99 %.3f  max %.3f  "
         "mean %.3f ms  (expected %s%.1f ms)\n",
         cmd, n, s.min / 1e3, s.p1 / 1e3, s.p50 / 1e3, s.p99 / 1e3, s.max / 1e3, s.mean / 1e3,
         strstr(cmd, " 2") ? "p50 " : "", expect_ms);
  fflush(stdout);
  free(v);
}

static void run_delay(size_t n) {
  printf("delay: 64-byte round trips through the proxy, one at a time\n");
  /* Two independent U(6,10) one-way delays: the round trip is triangular on
   * [12,20] ms, so P1 ~ 12.57, P50 = 16, P99 ~ 19.43 (+ the base RTT). */
  delay_case("delay L 8 2", n, 16);
  delay_case("delay L 8 0", n / 4 ? n / 4 : 1, 16);
  delay_case("delay L 8 0 up", n / 4 ? n / 4 : 1, 8);
  print_load();
}

/* ---- selftest ------------------------------------------------------------- */

static void check(bool ok, const char *name, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void check(bool ok, const char *name, const char *fmt, ...) {
  if (ok) {
    printf("ok - %s\n", name);
  } else {
    va_list ap;
    va_start(ap, fmt);
    printf("not ok - %s: ", name);
    vprintf(fmt, ap);
    printf("\n");
    va_end(ap);
    failures++;
  }
  fflush(stdout);
}

/* 1 if fd gets nothing (no data, no EOF, no error) for ms. */
static bool silent_for(int fd, int ms) {
  struct pollfd p = {.fd = fd, .events = POLLIN};
  return poll(&p, 1, ms) == 0;
}

/* Reads once and says how the connection ended: "reset", "eof", "data",
 * "timeout" or "error". */
static const char *read_outcome(int fd) {
  char c[64];
  ssize_t r = read(fd, c, sizeof c);
  if (r > 0) return "data";
  if (r == 0) return "eof";
  if (errno == ECONNRESET) return "reset";
  if (errno == EAGAIN || errno == EWOULDBLOCK) return "timeout";
  return "error";
}

static bool echo_once(int fd, const char *msg) {
  char got[256];
  size_t n = strlen(msg);
  return write_all(fd, msg, n) == 0 && read_exact(fd, got, n) == (ssize_t)n &&
         memcmp(got, msg, n) == 0;
}

/* Sets the fault, times k one-byte round trips on a fresh connection (ms),
 * clears the fault. */
static void rtt_range(const char *fault, int k, double *lo, double *hi) {
  ctl_ok(fault);
  int fd = tcp_connect(proxy_port);
  *lo = 1e9;
  *hi = 0;
  for (int i = 0; i < k; i++) {
    uint64_t t0 = now_ns();
    double ms = echo_once(fd, "x") ? (double)(now_ns() - t0) / 1e6 : 1e9;
    if (ms < *lo) *lo = ms;
    if (ms > *hi) *hi = ms;
  }
  close(fd);
  ctl_ok("clear L");
}

/* ---- hold and one-sided reset, against a sink this process accepts on ---- */

static int sink_lfd = -1, hold_port;

/* Accepts the proxy's connection to the sink; blocking, timeouts set. */
static int sink_accept(void) {
  struct pollfd p = {.fd = sink_lfd, .events = POLLIN};
  if (poll(&p, 1, IO_TIMEOUT_MS) != 1) fatal("sink: no connection from the proxy");
  int fd = accept(sink_lfd, NULL, NULL);
  if (fd < 0) fatal("sink accept: %s", strerror(errno));
  set_timeouts(fd, IO_TIMEOUT_MS);
  return fd;
}

/* Connects a client through link H and returns the sink's end too. */
static int hold_pair(int *sink) {
  int fd = tcp_connect(hold_port);
  *sink = sink_accept();
  return fd;
}

static void rst_close_fd(int fd) {
  struct linger lg = {.l_onoff = 1, .l_linger = 0};
  setsockopt(fd, SOL_SOCKET, SO_LINGER, &lg, sizeof lg);
  close(fd);
}

/* Reads exactly what `want` says, then EOF: "ok", or what went wrong. */
static const char *read_then_eof(int fd, const char *want) {
  char got[256];
  size_t n = strlen(want);
  if (read_exact(fd, got, n) != (ssize_t)n || memcmp(got, want, n) != 0) return "wrong bytes";
  return strcmp(read_outcome(fd), "eof") == 0 ? "ok" : "no EOF after the bytes";
}

static void wait_idle(const char *link) {
  for (int i = 0; i < 500; i++) {
    ctl_ok(link);
    if (field("active") == 0) return;
    usleep(10000);
  }
}

static void run_hold_selftest(void) {
  sink_lfd = listen_any(&(int){0});
  struct sockaddr_in sa;
  socklen_t len = sizeof sa;
  getsockname(sink_lfd, (struct sockaddr *)&sa, &len);
  if (!ctl("add H 127.0.0.1:0 127.0.0.1:%d", ntohs(sa.sin_port))) fatal("add H: %s", reply);
  *strrchr(reply, ' ') = '\0';
  hold_port = atoi(strrchr(reply, ':') + 1);
  int sk, fd = hold_pair(&sk);
  char b[64];

  /* Hold up only: the client's bytes wait, the target's still flow. */
  ctl_ok("hold H on up");
  check(strcmp(reply, "ok hold H up=on down=off") == 0, "hold up: reply", "%s", reply);
  bool sent = true;
  for (int i = 0; i < 100 && sent; i++) sent = write_all(fd, pat + i * 7, 7) == 0;
  bool quiet = sent && silent_for(sk, 300);
  ctl_ok("stats H");
  long long q = field("up_queued");
  check(quiet && q == 700 && strstr(reply, "hold_up=on hold_down=off"),
        "hold up: 100 writes kept in the proxy, nothing delivered", "quiet %d, %s", quiet, reply);
  bool down = write_all(sk, "pong", 4) == 0 && read_exact(fd, b, 4) == 4 && !memcmp(b, "pong", 4);
  check(down, "hold up: the other direction still flows", "no pong");
  ctl_ok("hold H off up");
  check(field("released") == 700, "hold off: releases every held byte at once", "%s", reply);
  unsigned char got[700];
  check(read_exact(sk, got, 700) == 700 && memcmp(got, pat, 700) == 0,
        "hold off: held bytes arrive in order", "stream differs");
  bool after = write_all(fd, "now", 3) == 0 && read_exact(sk, b, 3) == 3 && !memcmp(b, "now", 3);
  check(after, "hold off: new bytes flow at once", "not delivered");
  close(fd);
  close(sk);
  wait_idle("stats H");

  /* The late copy: the client side is reset while its bytes are held; they
   * still reach the target on release, then a FIN. */
  fd = hold_pair(&sk);
  ctl_ok("hold H on up");
  write_all(fd, "late-W1", 7);
  usleep(50000);
  ctl_ok("reset H client");
  check(strcmp(reply, "ok reset H 1") == 0, "reset client: reply", "%s", reply);
  const char *o = read_outcome(fd);
  check(!strcmp(o, "reset"), "reset client: the client sees RST", "%s", o);
  check(silent_for(sk, 200), "reset client: the target hears nothing while held", "it did");
  ctl_ok("hold H off");
  o = read_then_eof(sk, "late-W1");
  check(!strcmp(o, "ok"), "reset client, then hold off: held bytes reach the target, then EOF",
        "%s", o);
  close(fd);
  close(sk);
  wait_idle("stats H");

  /* The same when the client itself dies with an RST (SO_LINGER 0) and
   * when it half-closes: what it sent is delivered late. */
  fd = hold_pair(&sk);
  int sk2, fd2 = hold_pair(&sk2);
  ctl_ok("hold H on");
  write_all(fd, "rst-copy", 8);
  write_all(fd2, "fin-copy", 8);
  usleep(50000);
  rst_close_fd(fd);
  shutdown(fd2, SHUT_WR);
  write_all(sk2, "reply", 5); /* held down: the client never sees it */
  quiet = silent_for(sk, 200) && silent_for(sk2, 0);
  ctl_ok("stats H");
  check(quiet && field("active") == 2, "client RST / FIN while held: targets hear nothing yet",
        "quiet %d, %s", quiet, reply);
  ctl_ok("hold H off");
  const char *o1 = read_then_eof(sk, "rst-copy"), *o2 = read_then_eof(sk2, "fin-copy");
  check(!strcmp(o1, "ok") && !strcmp(o2, "ok"),
        "client RST / FIN, then hold off: the late copies arrive, then EOF", "%s, %s", o1, o2);
  ssize_t r = read_exact(fd2, b, 5);
  check(r == 5 && !memcmp(b, "reply", 5), "hold off: the held reply reaches the half-closed client",
        "read %zd", r);
  close(sk);
  close(sk2);
  close(fd2);
  wait_idle("stats H");
  check(field("active") == 0, "hold: the connections end once the targets close", "%s", reply);

  /* Bytes the client sent right before its RST that the proxy had not
   * read yet when it saw the reset (here the held queue is full, so it
   * stopped reading): on a network they were ahead of the reset, so they
   * all reach the target before the end.  The soak's lost CloseSession:
   * libzookeeper_mt sends it, then closes with replies unread (an RST),
   * and the proxy saw the reset before it read the request. */
  fd = hold_pair(&sk);
  ctl_ok("hold H on up");
  /* Exactly the cap first: once the proxy holds it all, it reads no
   * more, and the next 16 KiB wait in its socket (acknowledged). */
  size_t total = QUEUE_CAP + 16384, put = 0;
  bool wrote = true;
  long long held = 0;
  int unacked = -1;
  for (int phase = 0; phase < 2 && wrote; phase++) {
    size_t upto = phase ? total : QUEUE_CAP;
    while (wrote && put < upto) {
      size_t k = upto - put < 65536 ? upto - put : 65536;
      wrote = write_all(fd, pat + put % PAT_PERIOD, k) == 0;
      put += k;
    }
    for (int i = 0; i < 500 && wrote; i++) {
      ctl_ok("stats H");
      held = field("up_queued");
      if (ioctl(fd, SIOCOUTQ, &unacked) < 0) break;
      if (unacked == 0 && (phase || held == QUEUE_CAP)) break;
      usleep(10000);
    }
  }
  check(wrote && unacked == 0 && held == QUEUE_CAP,
        "hold up, queue full: 16 KiB more wait unread in the proxy's socket",
        "wrote %d, unacked %d, up_queued %lld of %zu", wrote, unacked, held, total);
  rst_close_fd(fd);
  usleep(100000);
  ctl_ok("hold H off");
  size_t got_n = 0;
  bool same = true;
  static unsigned char rb[65536];
  ssize_t rn;
  while ((rn = read(sk, rb, sizeof rb)) > 0) {
    if (got_n + (size_t)rn > total || memcmp(rb, pat + got_n % PAT_PERIOD, (size_t)rn) != 0)
      same = false;
    got_n += (size_t)rn;
  }
  /* The end: a FIN if the proxy still held some of them when it saw the
   * reset, an RST if it had written them all by then (see conn_lost). */
  const char *end = rn == 0 ? "eof" : errno == ECONNRESET ? "reset" : strerror(errno);
  check(same && got_n == total && (!strcmp(end, "eof") || !strcmp(end, "reset")),
        "client RST with bytes unread by the proxy: all of them reach the target, then the end",
        "%zu of %zu bytes, %s, then %s", got_n, total, same ? "in order" : "differing", end);
  close(sk);
  wait_idle("stats H");

  /* A one-sided reset with nothing held: the other side gets its FIN at
   * once.  Resetting the target side mirrors it. */
  fd = hold_pair(&sk);
  fd2 = hold_pair(&sk2);
  ctl_ok("reset H target");
  o1 = read_outcome(fd);
  o2 = read_outcome(sk);
  check(!strcmp(o1, "eof") && !strcmp(o2, "reset"),
        "reset target: the target sees RST, the client EOF", "client %s, target %s", o1, o2);
  close(fd);
  close(sk);
  close(fd2);
  close(sk2);
  wait_idle("stats H");
  check(!ctl("hold H") && !ctl("hold H on sideways") && !ctl("reset H nobody"),
        "hold / reset: bad arguments are errors", "%s", reply);
  ctl_ok("del H");
  close(sink_lfd);
}

static void run_selftest(void) {
  const char *why;
  int fd, fd2, fd3;

  fd = tcp_connect(proxy_port);
  check(echo_once(fd, "hello"), "echo through the proxy", "no echo");
  close(fd);

  double s = bulk(proxy_port, 64u << 20, &why);
  check(s >= 0, "64 MiB, no fault: intact, half-close propagated", "%s", why);

  ctl_ok("delay L 5 3");
  s = bulk(proxy_port, 64u << 20, &why);
  long long qu = stat_of("up_qpeak"), qd = field("down_qpeak");
  ctl_ok("clear L");
  check(s >= 0, "64 MiB, delay 5+-3 ms: intact and in order", "%s", why);
  check(qu > 0 && qu <= QUEUE_CAP + 65536 && qd <= QUEUE_CAP + 65536, "queues bounded by the cap",
        "up_qpeak=%lld down_qpeak=%lld", qu, qd);

  /* Jitter larger than the spacing of the writes: reordering would show. */
  ctl_ok("delay L 2 2");
  fd = tcp_connect(proxy_port);
  unsigned char got[4000];
  bool sent = true;
  for (int i = 0; i < 500 && sent; i++) {
    sent = write_all(fd, pat + i * 8, 8) == 0;
    usleep(100);
  }
  bool inorder = sent && read_exact(fd, got, 4000) == 4000 && memcmp(got, pat, 4000) == 0;
  close(fd);
  ctl_ok("clear L");
  check(inorder, "order kept under jitter (500 writes, delay 2+-2 ms)", "stream differs");

  fd = tcp_connect(proxy_port);
  write_all(fd, "bye", 3);
  shutdown(fd, SHUT_WR);
  char b4[8];
  ssize_t r = read_exact(fd, b4, sizeof b4);
  check(r == 3 && memcmp(b4, "bye", 3) == 0, "half-close: data, then EOF", "read %zd", r);
  close(fd);

  ctl_ok("delay L 20 0");
  fd = tcp_connect(proxy_port);
  uint64_t t0 = now_ns();
  write_all(fd, "late", 4);
  shutdown(fd, SHUT_WR);
  r = read_exact(fd, b4, 4);
  double t_data = (double)(now_ns() - t0) / 1e6;
  ssize_t r2 = read(fd, b4, 1);
  double t_eof = (double)(now_ns() - t0) / 1e6;
  close(fd);
  ctl_ok("clear L");
  check(r == 4 && r2 == 0 && t_data >= 40 && t_eof >= 40 && t_eof < 100,
        "delayed half-close (20 ms each way): EOF after the data, delayed",
        "data %zd at %.1f ms, eof %zd at %.1f ms", r, t_data, r2, t_eof);

  /* Never early; the fastest of a few round trips close to the target, so
   * a loaded machine (valgrind, CI) cannot fail it but a wrong delay can. */
  double lo, hi;
  rtt_range("delay L 10 0", 20, &lo, &hi);
  check(lo >= 20 && lo < 23, "delay 10 ms each way: RTT >= 20 ms, best < 23",
        "min %.3f max %.3f ms", lo, hi);
  rtt_range("delay L 10 0 up", 20, &lo, &hi);
  check(lo >= 10 && lo < 13, "delay 10 ms up only: RTT >= 10 ms, best < 13", "min %.3f max %.3f ms",
        lo, hi);

  /* Blackhole: fd stays idle, fd2 talks into the void, fd3 connects
   * during the blackhole without sending. */
  fd = tcp_connect(proxy_port);
  fd2 = tcp_connect(proxy_port);
  check(echo_once(fd, "a") && echo_once(fd2, "b"), "two connections echo", "no echo");
  long long dropped0 = stat_of("up_dropped");
  ctl_ok("blackhole L on");
  write_all(fd2, "lost", 4);
  fd3 = tcp_connect(proxy_port);
  bool quiet = silent_for(fd2, 300) && silent_for(fd, 0) && silent_for(fd3, 0);
  long long dropped = stat_of("up_dropped") - dropped0;
  check(quiet, "blackhole: nothing delivered, connections stay open", "something arrived");
  check(dropped == 4, "blackhole: sent bytes are dropped", "dropped %lld", dropped);
  ctl_ok("blackhole L off");
  check(field("reset") == 1, "blackhole off: resets only the damaged one", "%s", reply);
  check(strcmp(read_outcome(fd2), "reset") == 0, "blackhole off: damaged connection sees RST",
        "not reset");
  check(echo_once(fd, "still here"), "blackhole off: idle connection lives", "no echo");
  check(echo_once(fd3, "late"), "blackhole off: connection made during it now reaches the target",
        "no echo");
  close(fd);
  close(fd2);
  close(fd3);
  /* The reset below counts connections: let the proxy see these go first
   * (on a loaded machine it may not have yet). */
  for (int i = 0; i < 500 && stat_of("active") != 0; i++) usleep(10000);

  fd = tcp_connect(proxy_port);
  fd2 = tcp_connect(proxy_port);
  echo_once(fd, "1");
  echo_once(fd2, "2");
  ctl("reset L");
  check(strcmp(reply, "ok reset L 2") == 0, "reset: reply counts connections", "%s", reply);
  const char *o1 = read_outcome(fd), *o2 = read_outcome(fd2);
  check(!strcmp(o1, "reset") && !strcmp(o2, "reset"), "reset: clients see RST", "%s, %s", o1, o2);
  close(fd);
  close(fd2);

  ctl_ok("refuse L on");
  fd = tcp_connect(proxy_port);
  o1 = read_outcome(fd);
  close(fd);
  check(!strcmp(o1, "reset") && stat_of("refused") == 1, "refuse: accepted, then RST", "%s, %s", o1,
        reply);
  ctl_ok("refuse L off");
  fd = tcp_connect(proxy_port);
  check(echo_once(fd, "back"), "refuse off: echo again", "no echo");
  close(fd);

  /* A target that is down: take a port, then free it. */
  int dead_port;
  close(listen_any(&dead_port));
  char cmd[128];
  snprintf(cmd, sizeof cmd, "add D 127.0.0.1:0 127.0.0.1:%d", dead_port);
  bool added = ctl("%s", cmd);
  int dport = 0;
  char *colon = strrchr(reply, ':');
  if (added) {
    /* "ok add D 127.0.0.1:PORT 127.0.0.1:DEAD" */
    char *sp = strrchr(reply, ' ');
    *sp = '\0';
    colon = strrchr(reply, ':');
    dport = atoi(colon + 1);
  }
  check(added && dport > 0, "add a link at run time", "%s", reply);
  if (dport) {
    fd = tcp_connect(dport);
    o1 = read_outcome(fd);
    close(fd);
    ctl_ok("stats D");
    check(!strcmp(o1, "reset") && field("connect_failed") == 1, "target down: client gets RST",
          "%s, %s", o1, reply);
    ctl_ok("del D");
    ctl("stats D");
    check(strncmp(reply, "err", 3) == 0, "del removes the link", "%s", reply);
  }

  run_hold_selftest();

  check(!ctl("bogus") && strncmp(reply, "err ", 4) == 0, "unknown command: err", "%s", reply);
  check(!ctl("delay L x 1") && !ctl("delay L 1 1 sideways") && !ctl("stats nope") &&
            !ctl("blackhole L") && !ctl("add L 1 2"),
        "bad arguments: err", "%s", reply);

  /* Many connections at once, then no fd left behind.  The count before
   * is taken once the earlier checks' connections are gone too. */
  for (int i = 0; i < 500 && stat_of("active") != 0; i++) usleep(10000);
  int before = count_fds(proxy_pid);
  enum { MANY = 200 };
  int fds[MANY];
  for (int i = 0; i < MANY; i++) fds[i] = tcp_connect(proxy_port);
  bool all = true;
  for (int i = 0; i < MANY; i++) all = all && echo_once(fds[i], "m");
  check(all && stat_of("active") == MANY, "200 concurrent connections", "%s", reply);
  for (int i = 0; i < MANY; i++) close(fds[i]);
  long long active = -1;
  for (int i = 0; i < 500 && active != 0; i++) {
    usleep(10000);
    active = stat_of("active");
  }
  int after = count_fds(proxy_pid);
  check(active == 0 && before == after, "all closed, no fd leaked",
        "active=%lld fds before %d after %d", active, before, after);
}

static void usage(void) {
  fputs("usage: faultproxy-bench [--proxy CMD] [--n N] [--size BYTES]\n"
        "         [--block N] [--bulk-mib N] [--delay-n N]\n"
        "         [selftest|overhead|delay|all ...]   (default: selftest)\n"
        "CMD defaults to $FAULTPROXY, else the faultproxy next to this "
        "program.\n",
        stderr);
  exit(2);
}

int main(int argc, char **argv) {
  const char *cmd = getenv("FAULTPROXY");
  size_t n = 20000, size = 64, block = 1, bulk_mib = 256, delay_n = 1000;
  bool self = false, over = false, dly = false;
  char deflt[4096];
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    bool v = i + 1 < argc;
    if (!strcmp(a, "--proxy") && v) cmd = argv[++i];
    else if (!strcmp(a, "--n") && v) n = strtoull(argv[++i], NULL, 10);
    else if (!strcmp(a, "--size") && v) size = strtoull(argv[++i], NULL, 10);
    else if (!strcmp(a, "--block") && v) block = strtoull(argv[++i], NULL, 10);
    else if (!strcmp(a, "--bulk-mib") && v) bulk_mib = strtoull(argv[++i], NULL, 10);
    else if (!strcmp(a, "--delay-n") && v) delay_n = strtoull(argv[++i], NULL, 10);
    else if (!strcmp(a, "selftest")) self = true;
    else if (!strcmp(a, "overhead")) over = true;
    else if (!strcmp(a, "delay")) dly = true;
    else if (!strcmp(a, "all")) self = over = dly = true;
    else usage();
  }
  if (!self && !over && !dly) self = true;
  if (n < 1 || size < 1 || size > 65536 || block < 1 || delay_n < 1) usage();
  if (!cmd) {
    char self_path[4096];
    snprintf(self_path, sizeof self_path, "%s", argv[0]);
    snprintf(deflt, sizeof deflt, "%s/faultproxy", dirname(self_path));
    if (access(deflt, X_OK) != 0) {
      fprintf(stderr, "faultproxy-bench: %s not found; skipping\n", deflt);
      return 77;
    }
    cmd = deflt;
  }
  for (size_t i = 0; i < sizeof pat; i++)
    pat[i] = (unsigned char)((i % PAT_PERIOD) * 2654435761u >> 13);
  signal(SIGPIPE, SIG_IGN);
  alarm(1800); /* nothing here may hang a test run */

  echo_start();
  proxy_start(cmd);
  if (self) run_selftest();
  if (over) run_overhead(n, size, block, bulk_mib);
  if (dly) run_delay(delay_n);
  int st = proxy_quit();
  kill(-echo_pid, SIGKILL);
  waitpid(echo_pid, NULL, 0);
  if (self) check(st == 0, "proxy exits 0 after quit", "status %d", st);
  else if (st != 0) {
    fprintf(stderr, "faultproxy-bench: proxy exited with status %d\n", st);
    failures++;
  }
  if (self) printf("%s: %d failure(s)\n", failures ? "FAIL" : "PASS", failures);
  return failures ? 1 : 0;
}
