/* `zkroute top`: a live per-member table of routed handles, refreshed every
 * second (docs/cli.md).  Its input is always the library's Prometheus text
 * (docs/stats.md): zkr_stats_prometheus() of its own handle (`top HOSTS`),
 * or a running program's metrics endpoint (`top --metrics URL`), fetched
 * with a plain HTTP/1.0 GET.  Rates come from the difference of two
 * scrapes a second apart: reads/s and writes/s from the counters, syncs
 * per read, and the P99 of the reads of that second from the read latency
 * histogram's buckets (interpolated inside a bucket, as PromQL's
 * histogram_quantile does).
 *
 * On a terminal it draws the table with plain ANSI sequences on the
 * alternate screen; q or Ctrl-C (or SIGTERM) leaves and restores the
 * terminal.  When stdout is not a terminal it writes one line per second,
 * a summary of every handle, for logs and tests. */
#include <arpa/inet.h>
#include <errno.h>
#include <math.h>
#include <netdb.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "zkroute-top.h"

#define MAX_ROWS 256
#define BUCKETS (ZKR_LATENCY_BUCKETS + 1)

/* One member of one handle, as one scrape shows it. */
typedef struct {
  char handle[16], member[128], role[24];
  double reads, writes, syncs, ejections, ewma_s, pool, owner, connected;
  int has_ewma;
  double cum[BUCKETS]; /* read latency buckets, cumulative; [BUCKETS-1]: +Inf */
} row_t;

typedef struct {
  row_t rows[MAX_ROWS];
  int n;
  char owners[512]; /* "handle 1: 0x..." of every handle */
  char states[256]; /* "handle 1: connected" ... */
} snap_t;

/* ---- the Prometheus text ---- */

/* Value of label key in the label text l ("a=\"x\",b=\"y\""), unescaped,
 * into out; "" when absent. */
static void label(const char *l, const char *key, char *out, size_t len) {
  size_t kl = strlen(key), o = 0;
  out[0] = '\0';
  for (const char *p = l; p && *p;) {
    if (strncmp(p, key, kl) == 0 && p[kl] == '=' && p[kl + 1] == '"') {
      for (p += kl + 2; *p && *p != '"' && o + 1 < len; p++) {
        if (*p == '\\' && p[1]) {
          p++;
          out[o++] = *p == 'n' ? '\n' : *p;
        } else {
          out[o++] = *p;
        }
      }
      out[o] = '\0';
      return;
    }
    /* Next label: past the closing quote of this one's value. */
    p = strchr(p, '"');
    if (p) p++;
    while (p && *p && *p != '"') p += *p == '\\' && p[1] ? 2 : 1;
    if (p && *p == '"') p++;
    if (p && *p == ',') p++;
  }
}

static row_t *row_of(snap_t *s, const char *handle, const char *member) {
  for (int i = 0; i < s->n; i++)
    if (!strcmp(s->rows[i].handle, handle) && !strcmp(s->rows[i].member, member))
      return &s->rows[i];
  if (s->n == MAX_ROWS) return NULL;
  row_t *r = &s->rows[s->n++];
  memset(r, 0, sizeof *r);
  snprintf(r->handle, sizeof r->handle, "%s", handle);
  snprintf(r->member, sizeof r->member, "%s", member);
  return r;
}

static void append(char *buf, size_t len, const char *fmt, const char *a, const char *b) {
  size_t n = strlen(buf);
  if (n < len) snprintf(buf + n, len - n, fmt, a, b);
}

/* Fills s from the exposition text. */
static void parse(const char *text, snap_t *s) {
  static const double bounds[ZKR_LATENCY_BUCKETS] = ZKR_LATENCY_BOUNDS_MS;
  memset(s, 0, sizeof *s);
  for (const char *line = text; line && *line;) {
    const char *end = strchr(line, '\n');
    size_t n = end ? (size_t)(end - line) : strlen(line);
    char buf[1024];
    if (n < sizeof buf && line[0] != '#') {
      memcpy(buf, line, n);
      buf[n] = '\0';
      char *brace = strchr(buf, '{'), *close = brace ? strrchr(buf, '}') : NULL;
      if (brace && close) {
        *brace = '\0';
        *close = '\0';
        const char *name = buf, *labels = brace + 1;
        double v = strtod(close + 1, NULL);
        char handle[16], member[128], extra[64];
        label(labels, "handle", handle, sizeof handle);
        label(labels, "member", member, sizeof member);
        row_t *r = member[0] ? row_of(s, handle, member) : NULL;
        if (r) label(labels, "role", r->role, sizeof r->role);
        if (r && !strcmp(name, "zkroute_reads_total")) r->reads = v;
        else if (r && !strcmp(name, "zkroute_writes_total")) r->writes = v;
        else if (r && !strcmp(name, "zkroute_syncs_total")) r->syncs = v;
        else if (r && !strcmp(name, "zkroute_ejections_total")) r->ejections = v;
        else if (r && !strcmp(name, "zkroute_in_read_pool")) r->pool = v;
        else if (r && !strcmp(name, "zkroute_owner_session")) r->owner = v;
        else if (r && !strcmp(name, "zkroute_member_connected")) r->connected = v;
        else if (r && !strcmp(name, "zkroute_latency_ewma_seconds")) {
          r->ewma_s = v;
          r->has_ewma = 1;
        } else if (r && !strcmp(name, "zkroute_read_latency_seconds_bucket")) {
          label(labels, "le", extra, sizeof extra);
          int k = BUCKETS - 1;
          for (int b = 0; b < ZKR_LATENCY_BUCKETS; b++)
            if (fabs(strtod(extra, NULL) - bounds[b] / 1e3) < 1e-9 && strcmp(extra, "+Inf")) k = b;
          r->cum[k] = v;
        } else if (!strcmp(name, "zkroute_owner_info")) {
          label(labels, "session_id", extra, sizeof extra);
          append(s->owners, sizeof s->owners, "%s%s", s->owners[0] ? "  " : "", "");
          append(s->owners, sizeof s->owners, "%s:%s", handle, extra);
        } else if (!strcmp(name, "zkroute_session_state") && v == 1) {
          label(labels, "state", extra, sizeof extra);
          append(s->states, sizeof s->states, "%s%s", s->states[0] ? "  " : "", "");
          append(s->states, sizeof s->states, "%s:%s", handle, extra);
        }
      }
    }
    line = end ? end + 1 : NULL;
  }
}

/* ---- one second's figures ---- */

typedef struct {
  const row_t *r;
  double reads_s, writes_s, syncs_per_read, p99_ms;
  int have_rates, have_p99;
} fig_t;

/* P99 of the reads between two scrapes, in ms, from the difference of
 * their cumulative buckets; -1 without reads, INFINITY past the last
 * bound. */
static double p99(const row_t *now, const row_t *was) {
  static const double bounds[ZKR_LATENCY_BUCKETS] = ZKR_LATENCY_BOUNDS_MS;
  double d[BUCKETS];
  for (int k = 0; k < BUCKETS; k++) d[k] = now->cum[k] - (was ? was->cum[k] : 0);
  double total = d[BUCKETS - 1];
  if (total <= 0) return -1;
  double want = 0.99 * total, below = 0;
  for (int k = 0; k < ZKR_LATENCY_BUCKETS; k++) {
    if (d[k] >= want) {
      double lo = k ? bounds[k - 1] : 0, hi = bounds[k];
      return d[k] > below ? lo + (hi - lo) * (want - below) / (d[k] - below) : hi;
    }
    below = d[k];
  }
  return INFINITY;
}

static const row_t *find(const snap_t *s, const row_t *r) {
  for (int i = 0; s && i < s->n; i++)
    if (!strcmp(s->rows[i].handle, r->handle) && !strcmp(s->rows[i].member, r->member))
      return &s->rows[i];
  return NULL;
}

static fig_t figures(const row_t *r, const snap_t *was, double dt) {
  fig_t f = {.r = r, .syncs_per_read = -1, .p99_ms = -1};
  const row_t *w = find(was, r);
  if (w && dt > 0) {
    double reads = r->reads - w->reads;
    f.have_rates = 1;
    f.reads_s = reads / dt;
    f.writes_s = (r->writes - w->writes) / dt;
    if (reads > 0) f.syncs_per_read = (r->syncs - w->syncs) / reads;
    f.p99_ms = p99(r, w);
    f.have_p99 = f.p99_ms >= 0;
  }
  return f;
}

static void fmt_num(char *b, size_t l, int ok, double v, const char *f) {
  if (!ok) snprintf(b, l, "-");
  else if (isinf(v)) snprintf(b, l, ">10000");
  else snprintf(b, l, f, v);
}

/* ---- output ---- */

static void draw_table(FILE *f, const snap_t *s, const snap_t *was, double dt, const char *src) {
  time_t t = time(NULL);
  char when[32];
  strftime(when, sizeof when, "%H:%M:%S", localtime(&t));
  fprintf(f, "\033[H\033[2Jzkroute top - %s - %s - q or Ctrl-C to quit\n", src, when);
  fprintf(f, "session: %s   owner session: %s\n\n", s->states[0] ? s->states : "-",
          s->owners[0] ? s->owners : "-");
  fprintf(f, "%-6s %-22s %-12s %-4s %9s %9s %10s %9s %9s %9s %5s\n", "handle", "member", "role",
          "pool", "reads/s", "writes/s", "syncs/read", "ewma_ms", "p99_ms", "ejections", "owner");
  for (int i = 0; i < s->n; i++) {
    fig_t g = figures(&s->rows[i], was, dt);
    char rs[16], ws[16], spr[16], ew[16], p[16];
    fmt_num(rs, sizeof rs, g.have_rates, g.reads_s, "%.1f");
    fmt_num(ws, sizeof ws, g.have_rates, g.writes_s, "%.1f");
    fmt_num(spr, sizeof spr, g.syncs_per_read >= 0, g.syncs_per_read, "%.2f");
    fmt_num(ew, sizeof ew, g.r->has_ewma, g.r->ewma_s * 1e3, "%.2f");
    fmt_num(p, sizeof p, g.have_p99, g.p99_ms, "%.2f");
    fprintf(f, "%-6s %-22s %-12s %-4s %9s %9s %10s %9s %9s %9.0f %5s\n", g.r->handle, g.r->member,
            g.r->role,
            g.r->pool > 0        ? "yes"
            : g.r->connected > 0 ? "out"
                                 : "down",
            rs, ws, spr, ew, p, g.r->ejections, g.r->owner > 0 ? "*" : "");
  }
  fflush(f);
}

/* One line: every handle's totals and pool, the worst member P99. */
static void draw_line(FILE *f, const snap_t *s, const snap_t *was, double dt) {
  time_t t = time(NULL);
  char when[32];
  strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%S", localtime(&t));
  double rs = 0, ws = 0, syncs = 0, worst = -1, ej = 0;
  int pool = 0, rates = 0;
  char leader[160] = "-", owner[160] = "-";
  for (int i = 0; i < s->n; i++) {
    const row_t *r = &s->rows[i];
    fig_t g = figures(r, was, dt);
    const row_t *w = find(was, r);
    rates |= g.have_rates;
    rs += g.reads_s;
    ws += g.writes_s;
    if (w) syncs += r->syncs - w->syncs;
    if (g.have_p99 && (worst < 0 || g.p99_ms > worst)) worst = g.p99_ms;
    pool += r->pool > 0;
    ej += r->ejections;
    if (!strcmp(r->role, "leader")) snprintf(leader, sizeof leader, "%s", r->member);
    if (r->owner > 0) snprintf(owner, sizeof owner, "%s", r->member);
  }
  char a[16], b[16], c[16], d[16];
  fmt_num(a, sizeof a, rates, rs, "%.1f");
  fmt_num(b, sizeof b, rates, ws, "%.1f");
  fmt_num(c, sizeof c, rates && rs > 0, syncs / (rs * dt), "%.2f");
  fmt_num(d, sizeof d, worst >= 0, worst, "%.2f");
  fprintf(f,
          "%s members=%d leader=%s pool=%d reads/s=%s writes/s=%s syncs/read=%s p99_ms=%s "
          "ejections=%.0f owner=%s session=%s owner_session=%s\n",
          when, s->n, leader, pool, a, b, c, d, ej, owner, s->states[0] ? s->states : "-",
          s->owners[0] ? s->owners : "-");
  fflush(f);
}

/* ---- input: the handle's text, or an HTTP GET ---- */

/* "http://HOST:PORT/PATH" (HOST may be [IPV6]); 1 when understood. */
static int parse_url(const char *url, char *host, size_t hl, char *port, size_t pl, char *path,
                     size_t ml) {
  if (strncmp(url, "http://", 7) != 0) return 0;
  const char *h = url + 7, *slash = strchr(h, '/'), *hend, *colon;
  if (!slash) slash = h + strlen(h);
  if (*h == '[') {
    hend = memchr(h, ']', (size_t)(slash - h));
    if (!hend) return 0;
    colon = hend[1] == ':' ? hend + 1 : NULL;
    h++;
  } else {
    colon = memchr(h, ':', (size_t)(slash - h));
    hend = colon ? colon : slash;
  }
  if (hend <= h || (size_t)(hend - h) >= hl) return 0;
  memcpy(host, h, (size_t)(hend - h));
  host[hend - h] = '\0';
  const char *p = colon ? colon + 1 : "80", *pend = colon ? slash : p + 2;
  if ((size_t)(pend - p) >= pl || pend == p) return 0;
  memcpy(port, p, (size_t)(pend - p));
  port[pend - p] = '\0';
  snprintf(path, ml, "%s", *slash ? slash : "/metrics");
  return 1;
}

/* GET url: the body of a 200 reply (malloc'd), or NULL with why. */
static char *fetch(const char *url, char *why, size_t wl) {
  char host[256], port[16], path[512];
  if (!parse_url(url, host, sizeof host, port, sizeof port, path, sizeof path)) {
    snprintf(why, wl, "not an http://HOST:PORT/PATH URL");
    return NULL;
  }
  struct addrinfo hints = {.ai_socktype = SOCK_STREAM}, *ai = NULL;
  int rc = getaddrinfo(host, port, &hints, &ai);
  if (rc != 0) {
    snprintf(why, wl, "%s", gai_strerror(rc));
    return NULL;
  }
  int fd = socket(ai->ai_family, SOCK_STREAM, 0);
  if (fd < 0 || connect(fd, ai->ai_addr, ai->ai_addrlen) != 0) {
    snprintf(why, wl, "%s", strerror(errno));
    if (fd >= 0) close(fd);
    freeaddrinfo(ai);
    return NULL;
  }
  freeaddrinfo(ai);
  char req[1024];
  int n = snprintf(req, sizeof req, "GET %s HTTP/1.0\r\nHost: %s:%s\r\n\r\n", path, host, port);
  size_t cap = 1 << 16, len = 0;
  char *buf = malloc(cap);
  int ok = buf && write(fd, req, (size_t)n) == n;
  while (ok) {
    struct pollfd p = {.fd = fd, .events = POLLIN};
    if (poll(&p, 1, 2000) <= 0) {
      ok = 0;
      snprintf(why, wl, "no reply within 2 s");
      break;
    }
    if (len + 4096 > cap) {
      char *b = realloc(buf, cap *= 2);
      if (!b) {
        ok = 0;
        break;
      }
      buf = b;
    }
    ssize_t r = read(fd, buf + len, cap - len - 1);
    if (r <= 0) break;
    len += (size_t)r;
  }
  close(fd);
  if (!ok) {
    free(buf);
    return NULL;
  }
  buf[len] = '\0';
  char *body = strstr(buf, "\r\n\r\n");
  if (strncmp(buf, "HTTP/1.", 7) != 0 || strncmp(buf + 8, " 200", 4) != 0 || !body) {
    snprintf(why, wl, "reply: %.60s", strtok(buf, "\r\n") ? buf : "(empty)");
    free(buf);
    return NULL;
  }
  memmove(buf, body + 4, strlen(body + 4) + 1);
  return buf;
}

static int scrape(zkr_t *z, const char *url, snap_t *s, char *why, size_t wl) {
  char *text = NULL;
  if (url) {
    text = fetch(url, why, wl);
  } else {
    int rc = zkr_stats_prometheus(z, &text);
    if (rc != ZOK) snprintf(why, wl, "%s (%s)", zkr_strerror(rc), zkr_err_name(rc));
  }
  if (!text) return 0;
  parse(text, s);
  free(text);
  return 1;
}

/* ---- the terminal ---- */

static volatile sig_atomic_t stop;
static void on_signal(int sig) {
  (void)sig;
  stop = 1;
}

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Waits until `until` (monotonic seconds), reading keys from a raw
 * terminal: 1 when q was pressed. */
static int wait_keys(int tty_in, double until) {
  for (;;) {
    double left = until - now_s();
    if (left <= 0 || stop) return 0;
    struct pollfd p = {.fd = 0, .events = POLLIN};
    int r = poll(tty_in ? &p : NULL, tty_in ? 1 : 0, (int)(left * 1000) + 1);
    if (r > 0) {
      char c;
      if (read(0, &c, 1) == 1 && (c == 'q' || c == 'Q')) return 1;
    }
  }
}

int tool_top(zkr_t *z, const char *url, int count) {
  int tty = isatty(1), tty_in = tty && isatty(0);
  struct termios saved;
  struct sigaction sa = {.sa_handler = on_signal}; /* no SA_RESTART: poll returns */
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, NULL);
  sigaction(SIGTERM, &sa, NULL);
  if (tty_in && tcgetattr(0, &saved) == 0) {
    struct termios raw = saved;
    raw.c_lflag &= (tcflag_t) ~(ICANON | ECHO); /* ISIG stays: Ctrl-C is SIGINT */
    raw.c_cc[VMIN] = 0;
    raw.c_cc[VTIME] = 0;
    tcsetattr(0, TCSANOW, &raw);
  } else {
    tty_in = 0;
  }
  if (tty) fputs("\033[?1049h\033[?25l", stdout); /* alternate screen, no cursor */
  static snap_t snaps[2];
  snap_t *was = &snaps[0], *cur = &snaps[1];
  char why[160] = "";
  int have_was = scrape(z, url, was, why, sizeof why), out = 0, shown = 0, failures = 0;
  double t_was = now_s(), next = t_was + 1;
  /* On a terminal the table is there at once (rates from the next
   * refresh on), not after the first second: a key pressed before it
   * must not leave an empty screen. */
  if (tty && have_was) {
    draw_table(stdout, was, NULL, 0, url ? url : "own handle");
    fflush(stdout);
  }
  while (!stop && (count <= 0 || shown < count)) {
    if (wait_keys(tty_in, next)) break;
    if (stop) break;
    next += 1;
    double t = now_s();
    if (!scrape(z, url, cur, why, sizeof why)) {
      /* A program restarting, a missed scrape: say so, keep trying. */
      if (tty) fprintf(stdout, "\033[H\033[2Jzkroute top: %s: %s\n", url ? url : "stats", why);
      else fprintf(stdout, "zkroute top: %s: %s\n", url ? url : "stats", why);
      fflush(stdout);
      if (++failures >= 3 && !have_was) {
        out = 1;
        break;
      }
      continue;
    }
    if (tty) draw_table(stdout, cur, have_was ? was : NULL, t - t_was, url ? url : "own handle");
    else draw_line(stdout, cur, have_was ? was : NULL, t - t_was);
    snap_t *tmp = was;
    was = cur;
    cur = tmp;
    have_was = 1;
    t_was = t;
    shown++;
  }
  if (tty) fputs("\033[?25h\033[?1049l", stdout); /* cursor, the screen as it was */
  if (tty_in) tcsetattr(0, TCSANOW, &saved);
  fflush(stdout);
  if (out) fprintf(stderr, "zkroute: top: %s: %s\n", url ? url : "stats", why);
  return out;
}
