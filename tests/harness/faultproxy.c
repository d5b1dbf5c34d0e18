/* faultproxy: a fault-injection TCP proxy for zkroute's tests.
 *
 * This machine has no tc netem, so the tests put this proxy between the
 * library and each ZooKeeper server and inject faults per link at run time:
 * one-way delay with jitter, blackhole (a dead network), hold (a network
 * that keeps one direction's bytes and delivers them late, in order),
 * reset (RST every connection, or one side of each), refuse (accept, then
 * RST).  It owns nothing of the library;
 * it is a test tool.  The reference is docs/faultproxy.md.
 *
 * One thread, one epoll set, non-blocking sockets, level-triggered events.
 * Each connection has two directions (up = client->target, down =
 * target->client).  A direction with no delay and nothing queued forwards
 * what it reads at once (the fast path: read, write, no timer).  Otherwise
 * each chunk read gets a due time and waits in the direction's FIFO; a
 * binary heap of directions ordered by their head's due time feeds one
 * absolute CLOCK_MONOTONIC timerfd, so delivery is on time to the
 * microsecond, not to the millisecond of an epoll_wait timeout.
 *
 * Flow control: a direction stops reading its source while its destination
 * is not writable (EPOLLOUT pending) or while it holds queue_cap bytes, so
 * memory stays bounded and the sender feels back-pressure, as over a real
 * network whose receive window is full.
 *
 * Linux only, C11 (gnu11), libc only. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#define BUF_SIZE (64 * 1024)         /* one read, at most */
#define DEFAULT_QUEUE_CAP (4u << 20) /* per direction of a connection */
#define CTL_LINE_MAX 4096            /* longer command lines: error, close */
#define CTL_OUT_MAX (1u << 20)       /* a control client that never reads */
#define LINK_NAME_MAX 63
#define ADDR_STR_MAX 320 /* "[" + host (255) + "]:" + port */
#define MAX_EVENTS 256
#define ACCEPT_BURST 64
#define MAX_MS 3600000.0 /* one hour; longer is a typo */
#define NPOS SIZE_MAX

enum kind { K_LINK, K_EP, K_CTL_LISTEN, K_CTL, K_TIMER, K_SIGNAL };

/* First member of everything registered in epoll: data.ptr points here. */
struct handle {
  enum kind kind;
  int fd;
  uint32_t mask; /* events registered now; 0 = not in the epoll set */
};

/* A queued piece of one direction's byte stream.  len == 0 is the EOF
 * marker: the half-close travels with the same delay as the data. */
struct chunk {
  struct chunk *next;
  uint64_t due; /* CLOCK_MONOTONIC, microseconds */
  size_t len, off;
  char data[];
};

enum { UP = 0, DOWN = 1 };

enum fin {
  FIN_NONE,   /* source still open */
  FIN_OWED,   /* EOF read, not yet queued (blackhole, or not connected) */
  FIN_QUEUED, /* EOF marker in the queue */
  FIN_SENT    /* shutdown(SHUT_WR) done on the destination */
};

enum cstate {
  CS_WAIT,       /* accepted during a blackhole: target not contacted yet */
  CS_CONNECTING, /* non-blocking connect to the target in progress */
  CS_OPEN
};

struct conn;

/* One direction.  d[UP] reads ep[0] (client) and writes ep[1] (target);
 * d[DOWN] the reverse. */
struct dir {
  struct conn *c;
  int idx;
  struct chunk *head, *tail;
  size_t queued;     /* payload bytes not yet written */
  uint64_t last_due; /* due time of the newest chunk: order is kept */
  size_t heap_idx;   /* NPOS when not in the timer heap */
  bool blocked;      /* destination returned EAGAIN: waiting for EPOLLOUT */
  enum fin fin;
};

struct ep {
  struct handle h;
  struct conn *c;
  int side; /* 0 client, 1 target */
};

struct conn {
  struct link *l;
  struct conn *prev, *next; /* link's list; next is reused by the graveyard */
  struct ep ep[2];
  struct dir d[2];
  enum cstate state;
  bool damaged; /* a blackhole dropped some of its bytes */
  bool dead;
  /* gone[s]: side s was reset or failed while the direction reading it
   * held bytes; its fd is closed and those bytes are still owed to the
   * other side (a late copy, as TCP would retransmit it). */
  bool gone[2];
};

struct faults {
  uint64_t delay_us[2], jitter_us[2]; /* per direction */
  bool hold[2];                       /* per direction: queue, forward nothing */
  bool blackhole, refuse;
};

struct link {
  struct handle h; /* the listener */
  struct link *next;
  char name[LINK_NAME_MAX + 1];
  char listen_str[ADDR_STR_MAX]; /* as bound (port 0 resolved) */
  char target_str[ADDR_STR_MAX]; /* as given */
  struct sockaddr_storage target;
  socklen_t target_len;
  struct faults f;
  struct conn *conns;
  uint64_t accepted, active, refused, connect_failed, resets, heal_resets;
  uint64_t bytes[2], dropped[2], qpeak[2];
  bool dead;
};

struct ctl {
  struct handle h;
  struct ctl *prev, *next;
  char in[CTL_LINE_MAX];
  size_t inlen;
  char *out;
  size_t outlen, outcap;
  bool closing; /* close once the output is flushed */
  bool dead;
};

/* A growable string for replies. */
struct sbuf {
  char *p;
  size_t len, cap;
};

static struct {
  int epfd;
  struct handle timer, sig, ctl_listen;
  struct link *links;
  struct ctl *ctls;
  struct dir **heap;
  size_t heap_n, heap_cap;
  uint64_t armed; /* expiry programmed in the timerfd, 0 = none */
  struct conn *dead_conns;
  struct ctl *dead_ctls;
  struct link *dead_links;
  bool quit;
  bool verbose;
  int spare_fd; /* released to shed connections when out of fds */
  uint64_t rng;
  size_t queue_cap;
  char buf[BUF_SIZE];
} P;

/* ---- small helpers ---------------------------------------------------- */

static void logmsg(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void logmsg(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fputs("faultproxy: ", stderr);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
}

#define VLOG(...)                                                                                  \
  do {                                                                                             \
    if (P.verbose) logmsg(__VA_ARGS__);                                                            \
  } while (0)

static void die(const char *what) {
  logmsg("%s: %s", what, strerror(errno));
  exit(1);
}

static void *xmalloc(size_t n) {
  void *p = malloc(n);
  if (!p) die("malloc");
  return p;
}

static void *xcalloc(size_t n, size_t m) {
  void *p = calloc(n, m);
  if (!p) die("calloc");
  return p;
}

static uint64_t now_us(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

/* splitmix64: jitter needs speed and reproducibility (--seed), not quality. */
static uint64_t rnd(void) {
  uint64_t z = (P.rng += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

static void set_nodelay(int fd) {
  int one = 1;
  /* Nagle would hold small writes back while data is unacknowledged and
   * add up to an RTT to ZooKeeper's small requests. */
  (void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

/* Close with SO_LINGER 0: the kernel sends RST instead of FIN. */
static void rst_close(int fd) {
  struct linger lg = {.l_onoff = 1, .l_linger = 0};
  (void)setsockopt(fd, SOL_SOCKET, SO_LINGER, &lg, sizeof lg);
  close(fd);
}

static void set_interest(struct handle *h, uint32_t want) {
  if (want == h->mask) return;
  struct epoll_event ev = {.events = want, .data.ptr = h};
  int op = want == 0 ? EPOLL_CTL_DEL : h->mask == 0 ? EPOLL_CTL_ADD : EPOLL_CTL_MOD;
  /* Fds that want nothing are taken out of the set: epoll reports
   * EPOLLHUP/EPOLLERR even with an empty mask, which would spin a paused
   * socket whose peer has gone. */
  if (epoll_ctl(P.epfd, op, h->fd, &ev) < 0) die("epoll_ctl");
  h->mask = want;
}

static void sb_printf(struct sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void sb_printf(struct sbuf *b, const char *fmt, ...) {
  for (;;) {
    va_list ap;
    va_start(ap, fmt);
    size_t room = b->cap - b->len;
    int n = vsnprintf(b->p ? b->p + b->len : NULL, room, fmt, ap);
    va_end(ap);
    if (n < 0) return;
    if ((size_t)n < room) {
      b->len += (size_t)n;
      return;
    }
    size_t cap = b->cap ? b->cap : 256;
    while (cap < b->len + (size_t)n + 1) cap *= 2;
    char *p = realloc(b->p, cap);
    if (!p) die("realloc");
    b->p = p;
    b->cap = cap;
  }
}

/* ---- addresses -------------------------------------------------------- */

/* "host:port", "[v6]:port" or "*:port" (wildcard, listen only). */
static int resolve(const char *spec, bool passive, struct sockaddr_storage *ss, socklen_t *len,
                   const char **err) {
  char host[256];
  const char *port;
  if (spec[0] == '[') {
    const char *e = strchr(spec, ']');
    if (!e || e[1] != ':' || (size_t)(e - spec - 1) >= sizeof host) {
      *err = "bad address (want [v6]:port)";
      return -1;
    }
    memcpy(host, spec + 1, (size_t)(e - spec - 1));
    host[e - spec - 1] = '\0';
    port = e + 2;
  } else {
    const char *c = strrchr(spec, ':');
    if (!c || c == spec || (size_t)(c - spec) >= sizeof host ||
        memchr(spec, ':', (size_t)(c - spec))) {
      *err = "bad address (want host:port)";
      return -1;
    }
    memcpy(host, spec, (size_t)(c - spec));
    host[c - spec] = '\0';
    port = c + 1;
  }
  char *end;
  errno = 0;
  long pn = strtol(port, &end, 10);
  if (!*port || *end || errno || pn < 0 || pn > 65535 || (!passive && pn == 0)) {
    *err = "bad port";
    return -1;
  }
  struct addrinfo hints = {.ai_family = AF_UNSPEC,
                           .ai_socktype = SOCK_STREAM,
                           .ai_flags = AI_NUMERICSERV | (passive ? AI_PASSIVE : 0)};
  struct addrinfo *ai = NULL;
  bool any = passive && strcmp(host, "*") == 0;
  int rc = getaddrinfo(any ? NULL : host, port, &hints, &ai);
  if (rc != 0 || !ai) {
    *err = rc == 0 ? "no address" : gai_strerror(rc);
    return -1;
  }
  memcpy(ss, ai->ai_addr, ai->ai_addrlen);
  *len = ai->ai_addrlen;
  freeaddrinfo(ai);
  return 0;
}

static void addr_str(const struct sockaddr *sa, char *out, size_t n) {
  char host[NI_MAXHOST], serv[NI_MAXSERV];
  socklen_t len =
      sa->sa_family == AF_INET6 ? sizeof(struct sockaddr_in6) : sizeof(struct sockaddr_in);
  if (getnameinfo(sa, len, host, sizeof host, serv, sizeof serv, NI_NUMERICHOST | NI_NUMERICSERV) !=
      0) {
    snprintf(out, n, "?");
    return;
  }
  snprintf(out, n, sa->sa_family == AF_INET6 ? "[%s]:%s" : "%s:%s", host, serv);
}

/* Returns a non-blocking listening socket, or -1 with errno set. */
static int listen_on(const struct sockaddr_storage *ss, socklen_t len) {
  int fd = socket(ss->ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  int one = 1;
  (void)setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  if (bind(fd, (const struct sockaddr *)ss, len) < 0 || listen(fd, 512) < 0) {
    int e = errno;
    close(fd);
    errno = e;
    return -1;
  }
  return fd;
}

/* ---- timer heap: directions ordered by their head chunk's due time ---- */

static uint64_t hkey(size_t i) { return P.heap[i]->head->due; }

static void hswap(size_t i, size_t j) {
  struct dir *t = P.heap[i];
  P.heap[i] = P.heap[j];
  P.heap[j] = t;
  P.heap[i]->heap_idx = i;
  P.heap[j]->heap_idx = j;
}

static void hup(size_t i) {
  while (i > 0) {
    size_t p = (i - 1) / 2;
    if (hkey(p) <= hkey(i)) break;
    hswap(i, p);
    i = p;
  }
}

static void hdown(size_t i) {
  for (;;) {
    size_t l = 2 * i + 1, r = l + 1, m = i;
    if (l < P.heap_n && hkey(l) < hkey(m)) m = l;
    if (r < P.heap_n && hkey(r) < hkey(m)) m = r;
    if (m == i) return;
    hswap(i, m);
    i = m;
  }
}

static void heap_remove(struct dir *d) {
  size_t i = d->heap_idx;
  if (i == NPOS) return;
  d->heap_idx = NPOS;
  size_t last = --P.heap_n;
  if (i == last) return;
  P.heap[i] = P.heap[last];
  P.heap[i]->heap_idx = i;
  hup(i);
  hdown(P.heap[i]->heap_idx);
}

/* Inserts d, or restores the order after its head changed. */
static void heap_set(struct dir *d) {
  if (d->heap_idx == NPOS) {
    if (P.heap_n == P.heap_cap) {
      size_t cap = P.heap_cap ? P.heap_cap * 2 : 64;
      struct dir **h = realloc(P.heap, cap * sizeof *h);
      if (!h) die("realloc");
      P.heap = h;
      P.heap_cap = cap;
    }
    d->heap_idx = P.heap_n;
    P.heap[P.heap_n++] = d;
    hup(d->heap_idx);
  } else {
    hup(d->heap_idx);
    hdown(d->heap_idx);
  }
}

/* Programs the timerfd for the earliest due chunk.  An expiry already
 * pending at or before it is left alone; a later one only costs a spurious
 * wake-up, after which this runs again. */
static void arm_timer(uint64_t now) {
  if (P.heap_n == 0) return;
  uint64_t top = hkey(0);
  if (P.armed > now && P.armed <= top) return;
  struct itimerspec its = {0};
  its.it_value.tv_sec = (time_t)(top / 1000000u);
  its.it_value.tv_nsec = (long)(top % 1000000u) * 1000;
  if (its.it_value.tv_sec == 0 && its.it_value.tv_nsec == 0)
    its.it_value.tv_nsec = 1; /* zero would disarm */
  if (timerfd_settime(P.timer.fd, TFD_TIMER_ABSTIME, &its, NULL) < 0) die("timerfd_settime");
  P.armed = top;
}

/* ---- connections ------------------------------------------------------ */

static bool fast_path(const struct link *l, int idx) {
  return l->f.delay_us[idx] == 0 && l->f.jitter_us[idx] == 0 && !l->f.hold[idx];
}

static int dst_fd(const struct dir *d) { return d->c->ep[1 - d->idx].h.fd; }

static void dir_drop_queue(struct dir *d) {
  heap_remove(d); /* its key is its head */
  struct chunk *ch = d->head;
  while (ch) {
    struct chunk *n = ch->next;
    free(ch);
    ch = n;
  }
  d->head = d->tail = NULL;
  d->queued = 0;
  if (d->fin == FIN_QUEUED) d->fin = FIN_OWED;
}

static void conn_kill(struct conn *c, bool rst) {
  if (c->dead) return;
  c->dead = true;
  struct link *l = c->l;
  for (int i = 0; i < 2; i++) {
    heap_remove(&c->d[i]);
    dir_drop_queue(&c->d[i]);
    int fd = c->ep[i].h.fd;
    if (fd >= 0) {
      /* close() also takes the fd out of the epoll set. */
      if (rst) rst_close(fd);
      else close(fd);
      c->ep[i].h.fd = -1;
      c->ep[i].h.mask = 0;
    }
  }
  if (c->prev) c->prev->next = c->next;
  else l->conns = c->next;
  if (c->next) c->next->prev = c->prev;
  l->active--;
  VLOG("%s: connection closed (%s)", l->name, rst ? "reset" : "fin");
  /* Events for c may follow in this epoll batch: free it after the batch. */
  c->next = P.dead_conns;
  P.dead_conns = c;
}

static uint32_t ep_want(const struct conn *c, int s) {
  const struct link *l = c->l;
  if (c->ep[s].h.fd < 0) return 0;
  uint32_t m = 0;
  const struct dir *in = &c->d[s];
  /* The target is read only once connected; the client always (bytes
   * that arrive before the target is connected wait in its socket, or are
   * dropped by a blackhole). */
  bool may_read = s == 0 || c->state == CS_OPEN;
  if (may_read && in->fin == FIN_NONE &&
      (l->f.blackhole || (c->state == CS_OPEN && !in->blocked && in->queued < P.queue_cap)))
    m |= EPOLLIN;
  if (s == 1 && c->state == CS_CONNECTING) m |= EPOLLOUT;
  else if (c->d[1 - s].blocked) m |= EPOLLOUT;
  return m;
}

static void dir_resched(struct dir *d) {
  struct conn *c = d->c;
  if (!c->dead && c->state == CS_OPEN && !c->l->f.blackhole && !c->l->f.hold[d->idx] &&
      !d->blocked && d->head)
    heap_set(d);
  else heap_remove(d);
}

/* Brings the epoll interests and timer entries of c in line with its state,
 * and closes it once both half-closes went through. */
static void conn_update(struct conn *c) {
  if (c->dead) return;
  if (c->d[UP].fin == FIN_SENT && c->d[DOWN].fin == FIN_SENT) {
    conn_kill(c, false);
    return;
  }
  for (int s = 0; s < 2; s++) set_interest(&c->ep[s].h, ep_want(c, s));
  for (int i = 0; i < 2; i++) dir_resched(&c->d[i]);
}

static uint64_t next_due(struct dir *d, uint64_t now) {
  const struct faults *f = &d->c->l->f;
  int64_t due = (int64_t)now + (int64_t)f->delay_us[d->idx];
  uint64_t j = f->jitter_us[d->idx];
  if (j) due += (int64_t)(rnd() % (2 * j + 1)) - (int64_t)j;
  if (due < (int64_t)now) due = (int64_t)now;
  /* Keep the stream in order: a chunk never overtakes the one before. */
  if ((uint64_t)due < d->last_due) due = (int64_t)d->last_due;
  d->last_due = (uint64_t)due;
  return (uint64_t)due;
}

static void dir_enqueue(struct dir *d, const char *p, size_t n, uint64_t due) {
  struct chunk *ch = xmalloc(sizeof *ch + n);
  ch->next = NULL;
  ch->due = due;
  ch->len = n;
  ch->off = 0;
  if (n) memcpy(ch->data, p, n);
  if (d->tail) d->tail->next = ch;
  else d->head = ch;
  d->tail = ch;
  d->queued += n;
  struct link *l = d->c->l;
  if (d->queued > l->qpeak[d->idx]) l->qpeak[d->idx] = d->queued;
}

static void conn_lost(struct conn *c, int side);

/* Writes every chunk due by now.  Returns false if c was killed, or lost
 * its destination side (conn_lost). */
static bool dir_flush(struct dir *d, uint64_t now) {
  struct conn *c = d->c;
  struct link *l = c->l;
  int fd = dst_fd(d);
  struct chunk *ch;
  /* The heap is keyed by the head, which is about to change: the caller's
   * conn_update puts d back in its place. */
  heap_remove(d);
  if (l->f.hold[d->idx]) return true; /* released by `hold NAME off` */
  while ((ch = d->head) && ch->due <= now) {
    if (ch->len == 0) {
      (void)shutdown(fd, SHUT_WR);
      d->fin = FIN_SENT;
    } else {
      ssize_t w = write(fd, ch->data + ch->off, ch->len - ch->off);
      if (w < 0) {
        if (errno == EINTR) continue;
        if (errno == EAGAIN || errno == EWOULDBLOCK) {
          d->blocked = true;
          return true;
        }
        VLOG("%s: write: %s", l->name, strerror(errno));
        conn_lost(c, 1 - d->idx);
        return false;
      }
      ch->off += (size_t)w;
      d->queued -= (size_t)w;
      l->bytes[d->idx] += (uint64_t)w;
      if (ch->off < ch->len) {
        d->blocked = true;
        return true;
      }
    }
    d->head = ch->next;
    if (!d->head) d->tail = NULL;
    free(ch);
  }
  return true;
}

/* Forwards the source's EOF as a half-close, after the data before it. */
static void dir_push_eof(struct dir *d) {
  struct conn *c = d->c;
  if (!d->head && fast_path(c->l, d->idx)) {
    (void)shutdown(dst_fd(d), SHUT_WR);
    d->fin = FIN_SENT;
    return;
  }
  uint64_t now = now_us();
  dir_enqueue(d, NULL, 0, next_due(d, now));
  d->fin = FIN_QUEUED;
  if (d->head->due <= now && !d->blocked) (void)dir_flush(d, now);
}

/* Sends the half-closes that had to wait (blackhole, connect). */
static void conn_kick(struct conn *c) {
  for (int i = 0; i < 2 && !c->dead; i++)
    if (c->state == CS_OPEN && !c->l->f.blackhole && c->d[i].fin == FIN_OWED)
      dir_push_eof(&c->d[i]);
}

/* Closes side s now (RST when rst, else a plain close of a socket that
 * already failed).  Whatever the proxy still holds of what s sent goes on
 * to the other side, followed by a FIN; what was on its way to s is
 * dropped, and what the other side sends from now on is read and dropped.
 * The connection ends when the other side closes. */
static void conn_side_close(struct conn *c, int s, bool rst) {
  struct link *l = c->l;
  int r = 1 - s;
  if (c->state != CS_OPEN || c->gone[r]) {
    conn_kill(c, true);
    return;
  }
  int fd = c->ep[s].h.fd;
  if (rst) rst_close(fd);
  else close(fd);
  c->ep[s].h.fd = -1;
  c->ep[s].h.mask = 0;
  c->gone[s] = true;
  l->dropped[r] += c->d[r].queued;
  dir_drop_queue(&c->d[r]);
  c->d[r].blocked = false;
  c->d[r].fin = FIN_NONE;
  VLOG("%s: %s side closed, %zu bytes still owed to the %s", l->name, s ? "target" : "client",
       c->d[s].queued, r ? "target" : "client");
  if (c->d[s].fin == FIN_NONE) {
    c->d[s].fin = FIN_OWED;
    dir_push_eof(&c->d[s]);
  }
  conn_update(c);
}

/* Side s failed: what it sent before the failure and the proxy has not
 * read yet (Linux keeps a socket's received bytes readable after an RST
 * arrives) joins the bytes s sent that wait for their due time, as on a
 * network those segments were ahead of the reset.  Only while they have
 * somewhere to go: the connection open, the other side still there, s's
 * EOF not read yet.  A blackhole drops them, as it drops everything. */
static void side_drain(struct conn *c, int s) {
  struct link *l = c->l;
  struct dir *d = &c->d[s];
  int fd = c->ep[s].h.fd;
  if (fd < 0 || c->state != CS_OPEN || c->gone[1 - s] || d->fin != FIN_NONE) return;
  for (;;) {
    ssize_t n = read(fd, P.buf, sizeof P.buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return; /* drained: EOF, EAGAIN, or the error itself */
    if (l->f.blackhole) {
      l->dropped[s] += (uint64_t)n;
      c->damaged = true;
      continue;
    }
    dir_enqueue(d, P.buf, (size_t)n, next_due(d, now_us()));
  }
}

/* Side s failed (read or write error, RST).  The bytes s sent that a
 * delay or a hold still keeps, or that wait unread in its socket, are in
 * flight: they arrive, then the end, as a real network delivers a segment
 * sent before its sender reset (a client's CloseSession, then the RST of
 * its close with replies unread: dropped, the session and its ephemerals
 * outlived the client).  With nothing in flight the whole connection is
 * reset, at once. */
static void conn_lost(struct conn *c, int s) {
  if (c->dead) return;
  side_drain(c, s);
  if (c->d[s].head && !c->gone[s]) conn_side_close(c, s, true);
  else conn_kill(c, true);
}

static void conn_connect(struct conn *c) {
  struct link *l = c->l;
  int fd = socket(l->target.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    logmsg("%s: socket: %s", l->name, strerror(errno));
    l->connect_failed++;
    conn_kill(c, true);
    return;
  }
  set_nodelay(fd);
  c->ep[1].h.fd = fd;
  if (connect(fd, (struct sockaddr *)&l->target, l->target_len) == 0) {
    c->state = CS_OPEN;
    conn_kick(c);
  } else if (errno == EINPROGRESS) {
    c->state = CS_CONNECTING;
  } else {
    VLOG("%s: connect: %s", l->name, strerror(errno));
    l->connect_failed++;
    conn_kill(c, true);
    return;
  }
  conn_update(c);
}

static void conn_new(struct link *l, int fd) {
  struct conn *c = xcalloc(1, sizeof *c);
  c->l = l;
  for (int i = 0; i < 2; i++) {
    c->ep[i].h.kind = K_EP;
    c->ep[i].h.fd = -1;
    c->ep[i].c = c;
    c->ep[i].side = i;
    c->d[i].c = c;
    c->d[i].idx = i;
    c->d[i].heap_idx = NPOS;
  }
  c->ep[0].h.fd = fd;
  set_nodelay(fd);
  c->next = l->conns;
  if (l->conns) l->conns->prev = c;
  l->conns = c;
  l->accepted++;
  l->active++;
  VLOG("%s: connection accepted", l->name);
  if (l->f.blackhole) {
    /* A dead network would lose the SYN: the target hears of this
     * connection only when the blackhole is lifted. */
    c->state = CS_WAIT;
    conn_update(c);
  } else {
    conn_connect(c);
  }
}

static void ep_in(struct ep *e) {
  struct conn *c = e->c;
  struct link *l = c->l;
  int s = e->side;
  struct dir *d = &c->d[s];
  ssize_t n = read(e->h.fd, P.buf, sizeof P.buf);
  if (n < 0) {
    if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) return;
    VLOG("%s: read: %s", l->name, strerror(errno));
    conn_lost(c, s);
    return;
  }
  if (c->gone[1 - s]) {
    /* Its destination is gone: nobody will read this.  Its EOF ends the
     * connection (what was owed to it has been sent, or never will be). */
    if (n == 0) conn_kill(c, false);
    else l->dropped[s] += (uint64_t)n;
    return;
  }
  if (n == 0) {
    d->fin = FIN_OWED;
    if (!l->f.blackhole) dir_push_eof(d);
    conn_update(c);
    return;
  }
  if (l->f.blackhole) {
    l->dropped[s] += (uint64_t)n;
    c->damaged = true;
    return;
  }
  if (!d->head && fast_path(l, s)) {
    ssize_t w = write(dst_fd(d), P.buf, (size_t)n);
    if (w < 0) {
      if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
        VLOG("%s: write: %s", l->name, strerror(errno));
        conn_lost(c, 1 - s);
        return;
      }
      w = 0;
    }
    l->bytes[s] += (uint64_t)w;
    if (w == n) return; /* the common case: no state changed */
    dir_enqueue(d, P.buf + w, (size_t)(n - w), 0);
    d->blocked = true;
    conn_update(c);
    return;
  }
  uint64_t now = now_us();
  dir_enqueue(d, P.buf, (size_t)n, next_due(d, now));
  if (d->head->due <= now && !d->blocked && !dir_flush(d, now)) return;
  conn_update(c);
}

static void ep_out(struct ep *e) {
  struct conn *c = e->c;
  struct link *l = c->l;
  if (e->side == 1 && c->state == CS_CONNECTING) {
    int err = 0;
    socklen_t len = sizeof err;
    if (getsockopt(e->h.fd, SOL_SOCKET, SO_ERROR, &err, &len) < 0) err = errno;
    if (err) {
      /* The client was already accepted: a reset is the nearest thing to
       * the refusal it would have seen without the proxy. */
      VLOG("%s: connect: %s", l->name, strerror(err));
      l->connect_failed++;
      conn_kill(c, true);
      return;
    }
    c->state = CS_OPEN;
    conn_kick(c);
    conn_update(c);
    return;
  }
  struct dir *d = &c->d[1 - e->side];
  d->blocked = false;
  if (!dir_flush(d, now_us())) return;
  conn_update(c);
}

static void ep_event(struct ep *e, uint32_t ev) {
  struct conn *c = e->c;
  if (c->dead || e->h.fd < 0) return; /* a side closed earlier in this batch */
  if ((ev & EPOLLERR) && !(e->side == 1 && c->state == CS_CONNECTING)) {
    int err = 0;
    socklen_t len = sizeof err;
    (void)getsockopt(e->h.fd, SOL_SOCKET, SO_ERROR, &err, &len);
    VLOG("%s: socket error: %s", c->l->name, strerror(err));
    conn_lost(c, e->side);
    return;
  }
  if ((ev & (EPOLLIN | EPOLLHUP)) && (e->h.mask & EPOLLIN)) ep_in(e);
  if (c->dead) return;
  if ((ev & (EPOLLOUT | EPOLLERR | EPOLLHUP)) && (e->h.mask & EPOLLOUT)) {
    ep_out(e);
    /* A hung-up socket that still cannot take our bytes never will; what
     * it sent before still goes on (conn_lost). */
    if (!c->dead && (ev & EPOLLHUP) && !(ev & EPOLLIN) && (e->h.mask & EPOLLOUT) && e->h.fd >= 0)
      conn_lost(c, e->side);
  }
}

/* ---- links ------------------------------------------------------------ */

static struct link *link_find(const char *name) {
  for (struct link *l = P.links; l; l = l->next)
    if (strcmp(l->name, name) == 0) return l;
  return NULL;
}

static bool name_ok(const char *s) {
  size_t n = strlen(s);
  if (n == 0 || n > LINK_NAME_MAX) return false;
  for (; *s; s++)
    if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') ||
          *s == '_' || *s == '-' || *s == '.'))
      return false;
  return true;
}

/* Returns the new link, or NULL with *err set (points to static text or
 * to errbuf). */
static struct link *link_add(const char *name, const char *lspec, const char *tspec, char *errbuf,
                             size_t errlen, const char **err) {
  if (!name_ok(name)) {
    *err = "bad link name (1-63 of [A-Za-z0-9_.-])";
    return NULL;
  }
  if (link_find(name)) {
    *err = "link exists";
    return NULL;
  }
  if (strlen(tspec) >= ADDR_STR_MAX) {
    *err = "target address too long";
    return NULL;
  }
  struct sockaddr_storage ls, ts;
  socklen_t llen, tlen;
  const char *e;
  if (resolve(lspec, true, &ls, &llen, &e) < 0) {
    snprintf(errbuf, errlen, "listen %s: %s", lspec, e);
    *err = errbuf;
    return NULL;
  }
  if (resolve(tspec, false, &ts, &tlen, &e) < 0) {
    snprintf(errbuf, errlen, "target %s: %s", tspec, e);
    *err = errbuf;
    return NULL;
  }
  int fd = listen_on(&ls, llen);
  if (fd < 0) {
    snprintf(errbuf, errlen, "listen %s: %s", lspec, strerror(errno));
    *err = errbuf;
    return NULL;
  }
  struct link *l = xcalloc(1, sizeof *l);
  l->h.kind = K_LINK;
  l->h.fd = fd;
  snprintf(l->name, sizeof l->name, "%s", name);
  struct sockaddr_storage bound;
  socklen_t blen = sizeof bound;
  if (getsockname(fd, (struct sockaddr *)&bound, &blen) == 0)
    addr_str((struct sockaddr *)&bound, l->listen_str, sizeof l->listen_str);
  else snprintf(l->listen_str, sizeof l->listen_str, "%s", lspec);
  snprintf(l->target_str, sizeof l->target_str, "%s", tspec);
  l->target = ts;
  l->target_len = tlen;
  set_interest(&l->h, EPOLLIN);
  /* Append: `list` shows links in the order they were made. */
  struct link **pp = &P.links;
  while (*pp) pp = &(*pp)->next;
  *pp = l;
  return l;
}

/* accept4 that copes with running out of fds: the listener stays readable
 * under level-triggered epoll, so shed the connection rather than spin.
 * Returns the fd, or -1 when there is nothing more to accept now. */
static int accept_one(int lfd, const char *who) {
  for (;;) {
    int fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd >= 0) return fd;
    if (errno == EINTR || errno == ECONNABORTED) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) return -1;
    logmsg("%s: accept: %s", who, strerror(errno));
    if ((errno == EMFILE || errno == ENFILE) && P.spare_fd >= 0) {
      close(P.spare_fd);
      fd = accept(lfd, NULL, NULL);
      if (fd >= 0) rst_close(fd);
      P.spare_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
    }
    return -1;
  }
}

static void link_accept(struct link *l) {
  for (int i = 0; i < ACCEPT_BURST; i++) {
    int fd = accept_one(l->h.fd, l->name);
    if (fd < 0) return;
    if (l->f.refuse) {
      l->refused++;
      rst_close(fd);
      continue;
    }
    conn_new(l, fd);
  }
}

static void link_reset_all(struct link *l, bool rst) {
  while (l->conns) conn_kill(l->conns, rst);
}

static void link_blackhole(struct link *l, bool on, uint64_t *reset) {
  *reset = 0;
  if (l->f.blackhole == on) return;
  l->f.blackhole = on;
  struct conn *next;
  for (struct conn *c = l->conns; c; c = next) {
    next = c->next;
    if (on) {
      /* Bytes in flight die with the network. */
      for (int i = 0; i < 2; i++) {
        struct dir *d = &c->d[i];
        if (d->queued) c->damaged = true;
        l->dropped[i] += d->queued;
        dir_drop_queue(d);
        d->blocked = false;
      }
      conn_update(c);
    } else if (c->damaged) {
      /* TCP would have retransmitted what we dropped; forwarding the rest
       * would hand the peers a stream with a hole in it.  Reset instead. */
      (*reset)++;
      l->heal_resets++;
      conn_kill(c, true);
    } else if (c->state == CS_WAIT) {
      conn_connect(c);
    } else {
      conn_kick(c);
      conn_update(c);
    }
  }
}

/* Sets or lifts the hold on the directions in dir[].  Lifting it sends
 * what was held at once, in order (what a delay has not made due yet
 * keeps its due time); *released counts the bytes handed on. */
static void link_hold(struct link *l, const bool dir[2], bool on, uint64_t *released) {
  *released = 0;
  for (int i = 0; i < 2; i++)
    if (dir[i]) l->f.hold[i] = on;
  if (on) return;
  uint64_t now = now_us();
  struct conn *next;
  for (struct conn *c = l->conns; c; c = next) {
    next = c->next;
    for (int i = 0; i < 2 && !c->dead; i++) {
      struct dir *d = &c->d[i];
      if (!dir[i] || !d->head || c->state != CS_OPEN || l->f.blackhole) continue;
      size_t before = d->queued;
      bool alive = d->blocked || dir_flush(d, now);
      *released += before - d->queued;
      if (!alive) break;
    }
    if (!c->dead) {
      conn_kick(c);
      conn_update(c);
    }
  }
}

static void link_free(struct link *l) {
  link_reset_all(l, false);
  if (l->h.fd >= 0) close(l->h.fd);
  free(l);
}

/* ---- control ---------------------------------------------------------- */

static void ctl_close(struct ctl *k) {
  if (k->dead) return;
  k->dead = true;
  close(k->h.fd);
  k->h.fd = -1;
  if (k->prev) k->prev->next = k->next;
  else P.ctls = k->next;
  if (k->next) k->next->prev = k->prev;
  k->next = P.dead_ctls;
  P.dead_ctls = k;
}

static void ctl_flush(struct ctl *k) {
  size_t off = 0;
  while (off < k->outlen) {
    ssize_t w = send(k->h.fd, k->out + off, k->outlen - off, MSG_NOSIGNAL);
    if (w < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) break;
      ctl_close(k);
      return;
    }
    off += (size_t)w;
  }
  memmove(k->out, k->out + off, k->outlen - off);
  k->outlen -= off;
  if (k->outlen == 0 && k->closing) {
    ctl_close(k);
    return;
  }
  set_interest(&k->h, k->outlen ? EPOLLOUT : k->closing ? 0 : EPOLLIN);
}

static void ctl_send(struct ctl *k, const char *s, size_t n) {
  if (k->dead) return;
  if (k->outlen + n > CTL_OUT_MAX) {
    ctl_close(k);
    return;
  }
  if (k->outlen + n > k->outcap) {
    size_t cap = k->outcap ? k->outcap : 1024;
    while (cap < k->outlen + n) cap *= 2;
    char *p = realloc(k->out, cap);
    if (!p) die("realloc");
    k->out = p;
    k->outcap = cap;
  }
  memcpy(k->out + k->outlen, s, n);
  k->outlen += n;
}

static bool parse_onoff(const char *s, bool *v) {
  if (strcmp(s, "on") == 0) {
    *v = true;
    return true;
  }
  if (strcmp(s, "off") == 0) {
    *v = false;
    return true;
  }
  return false;
}

static bool parse_ms(const char *s, uint64_t *us) {
  char *end;
  errno = 0;
  double v = strtod(s, &end);
  if (!*s || *end || errno || !(v >= 0 && v <= MAX_MS)) /* NaN fails too */
    return false;
  *us = (uint64_t)(v * 1000.0 + 0.5);
  return true;
}

static void fmt_ms(struct sbuf *b, uint64_t us) {
  sb_printf(b, "%llu.%03llu", (unsigned long long)(us / 1000), (unsigned long long)(us % 1000));
}

static void link_stats(struct sbuf *b, const struct link *l) {
  uint64_t queued[2] = {0, 0};
  for (const struct conn *c = l->conns; c; c = c->next)
    for (int i = 0; i < 2; i++) queued[i] += c->d[i].queued;
  sb_printf(b,
            "ok %s accepted=%llu active=%llu refused=%llu connect_failed=%llu "
            "resets=%llu heal_resets=%llu up_bytes=%llu down_bytes=%llu "
            "up_dropped=%llu down_dropped=%llu up_queued=%llu "
            "down_queued=%llu up_qpeak=%llu down_qpeak=%llu",
            l->name, (unsigned long long)l->accepted, (unsigned long long)l->active,
            (unsigned long long)l->refused, (unsigned long long)l->connect_failed,
            (unsigned long long)l->resets, (unsigned long long)l->heal_resets,
            (unsigned long long)l->bytes[UP], (unsigned long long)l->bytes[DOWN],
            (unsigned long long)l->dropped[UP], (unsigned long long)l->dropped[DOWN],
            (unsigned long long)queued[UP], (unsigned long long)queued[DOWN],
            (unsigned long long)l->qpeak[UP], (unsigned long long)l->qpeak[DOWN]);
  sb_printf(b, " delay_up_ms=");
  fmt_ms(b, l->f.delay_us[UP]);
  sb_printf(b, " jitter_up_ms=");
  fmt_ms(b, l->f.jitter_us[UP]);
  sb_printf(b, " delay_down_ms=");
  fmt_ms(b, l->f.delay_us[DOWN]);
  sb_printf(b, " jitter_down_ms=");
  fmt_ms(b, l->f.jitter_us[DOWN]);
  sb_printf(b, " blackhole=%s refuse=%s hold_up=%s hold_down=%s", l->f.blackhole ? "on" : "off",
            l->f.refuse ? "on" : "off", l->f.hold[UP] ? "on" : "off",
            l->f.hold[DOWN] ? "on" : "off");
}

static const char HELP[] = "ok commands: delay NAME MS JITTER_MS [up|down]; blackhole NAME on|off; "
                           "hold NAME on|off [up|down]; reset NAME [client|target]; "
                           "refuse NAME on|off; add NAME LISTEN TARGET; del NAME; "
                           "clear NAME; stats NAME; list; help; quit";

/* Runs one command line; appends exactly one reply line to b. */
static void ctl_command(char *line, struct sbuf *b) {
  char *argv[8];
  int argc = 0;
  char *save = NULL;
  for (char *t = strtok_r(line, " \t", &save); t; t = strtok_r(NULL, " \t", &save)) {
    if (argc == 8) {
      sb_printf(b, "err too many arguments");
      return;
    }
    argv[argc++] = t;
  }
  const char *cmd = argv[0];
  static const char *const link_cmds[] = {"delay",  "blackhole", "hold",  "reset",
                                          "refuse", "clear",     "stats", "del"};
  struct link *l = NULL;
  for (size_t i = 0; i < sizeof link_cmds / sizeof link_cmds[0]; i++) {
    if (strcmp(cmd, link_cmds[i]) != 0) continue;
    if (argc < 2) {
      sb_printf(b, "err usage: %s NAME ...", cmd);
      return;
    }
    l = link_find(argv[1]);
    if (!l) {
      sb_printf(b, "err no such link: %s", argv[1]);
      return;
    }
  }
  if (strcmp(cmd, "delay") == 0) {
    uint64_t ms, jit;
    if (argc < 4 || argc > 5) {
      sb_printf(b, "err usage: delay NAME MS JITTER_MS [up|down]");
      return;
    }
    if (!parse_ms(argv[2], &ms) || !parse_ms(argv[3], &jit)) {
      sb_printf(b, "err bad milliseconds (0..%.0f, decimals allowed)", MAX_MS);
      return;
    }
    bool dir[2] = {true, true};
    if (argc == 5) {
      if (strcmp(argv[4], "up") == 0) dir[DOWN] = false;
      else if (strcmp(argv[4], "down") == 0) dir[UP] = false;
      else {
        sb_printf(b, "err direction must be up or down");
        return;
      }
    }
    /* Queued chunks keep their due times: a shorter delay does not let new
     * bytes overtake old ones (next_due keeps the order). */
    for (int i = 0; i < 2; i++)
      if (dir[i]) {
        l->f.delay_us[i] = ms;
        l->f.jitter_us[i] = jit;
      }
    sb_printf(b, "ok delay %s up=", l->name);
    fmt_ms(b, l->f.delay_us[UP]);
    sb_printf(b, "+-");
    fmt_ms(b, l->f.jitter_us[UP]);
    sb_printf(b, "ms down=");
    fmt_ms(b, l->f.delay_us[DOWN]);
    sb_printf(b, "+-");
    fmt_ms(b, l->f.jitter_us[DOWN]);
    sb_printf(b, "ms");
  } else if (strcmp(cmd, "blackhole") == 0 || strcmp(cmd, "refuse") == 0) {
    bool on;
    if (argc != 3 || !parse_onoff(argv[2], &on)) {
      sb_printf(b, "err usage: %s NAME on|off", cmd);
      return;
    }
    if (cmd[0] == 'b') {
      uint64_t n;
      link_blackhole(l, on, &n);
      sb_printf(b, "ok blackhole %s %s", l->name, on ? "on" : "off");
      if (!on) sb_printf(b, " reset=%llu", (unsigned long long)n);
    } else {
      l->f.refuse = on;
      sb_printf(b, "ok refuse %s %s", l->name, on ? "on" : "off");
    }
  } else if (strcmp(cmd, "hold") == 0) {
    bool on, dir[2] = {true, true};
    if (argc < 3 || argc > 4 || !parse_onoff(argv[2], &on)) {
      sb_printf(b, "err usage: hold NAME on|off [up|down]");
      return;
    }
    if (argc == 4) {
      if (strcmp(argv[3], "up") == 0) dir[DOWN] = false;
      else if (strcmp(argv[3], "down") == 0) dir[UP] = false;
      else {
        sb_printf(b, "err direction must be up or down");
        return;
      }
    }
    uint64_t n;
    link_hold(l, dir, on, &n);
    sb_printf(b, "ok hold %s up=%s down=%s", l->name, l->f.hold[UP] ? "on" : "off",
              l->f.hold[DOWN] ? "on" : "off");
    if (!on) sb_printf(b, " released=%llu", (unsigned long long)n);
  } else if (strcmp(cmd, "reset") == 0) {
    int side = -1;
    if (argc == 3 && strcmp(argv[2], "client") == 0) side = 0;
    else if (argc == 3 && strcmp(argv[2], "target") == 0) side = 1;
    else if (argc != 2) {
      sb_printf(b, "err usage: reset NAME [client|target]");
      return;
    }
    uint64_t n = 0;
    if (side < 0) {
      n = l->active;
      link_reset_all(l, true);
    } else {
      struct conn *next;
      for (struct conn *c = l->conns; c; c = next) {
        next = c->next;
        if (c->gone[side]) continue;
        n++;
        conn_side_close(c, side, true);
      }
    }
    l->resets += n;
    sb_printf(b, "ok reset %s %llu", l->name, (unsigned long long)n);
  } else if (strcmp(cmd, "clear") == 0) {
    if (argc != 2) {
      sb_printf(b, "err usage: clear NAME");
      return;
    }
    uint64_t n;
    const bool both[2] = {true, true};
    memset(l->f.delay_us, 0, sizeof l->f.delay_us);
    memset(l->f.jitter_us, 0, sizeof l->f.jitter_us);
    l->f.refuse = false;
    link_hold(l, both, false, &n);
    link_blackhole(l, false, &n);
    sb_printf(b, "ok clear %s reset=%llu", l->name, (unsigned long long)n);
  } else if (strcmp(cmd, "stats") == 0) {
    if (argc != 2) {
      sb_printf(b, "err usage: stats NAME");
      return;
    }
    link_stats(b, l);
  } else if (strcmp(cmd, "add") == 0) {
    if (argc != 4) {
      sb_printf(b, "err usage: add NAME LISTEN_HOST:PORT TARGET_HOST:PORT");
      return;
    }
    char eb[512];
    const char *err;
    struct link *n = link_add(argv[1], argv[2], argv[3], eb, sizeof eb, &err);
    if (!n) sb_printf(b, "err %s", err);
    else sb_printf(b, "ok add %s %s %s", n->name, n->listen_str, n->target_str);
  } else if (strcmp(cmd, "del") == 0) {
    if (argc != 2) {
      sb_printf(b, "err usage: del NAME");
      return;
    }
    uint64_t n = l->active;
    link_reset_all(l, true);
    struct link **pp = &P.links;
    while (*pp != l) pp = &(*pp)->next;
    *pp = l->next;
    close(l->h.fd);
    l->h.fd = -1;
    l->dead = true;
    l->next = P.dead_links;
    P.dead_links = l;
    sb_printf(b, "ok del %s reset=%llu", argv[1], (unsigned long long)n);
  } else if (strcmp(cmd, "list") == 0) {
    size_t n = 0;
    for (struct link *k = P.links; k; k = k->next) n++;
    sb_printf(b, "ok %zu", n);
    for (struct link *k = P.links; k; k = k->next)
      sb_printf(b, " %s=%s=%s", k->name, k->listen_str, k->target_str);
  } else if (strcmp(cmd, "help") == 0) {
    sb_printf(b, "%s", HELP);
  } else if (strcmp(cmd, "quit") == 0) {
    sb_printf(b, "ok bye");
    P.quit = true;
  } else {
    sb_printf(b, "err unknown command: %s (try help)", cmd);
  }
}

static void ctl_in(struct ctl *k) {
  ssize_t n = read(k->h.fd, k->in + k->inlen, sizeof k->in - k->inlen);
  if (n < 0) {
    if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) return;
    ctl_close(k);
    return;
  }
  if (n == 0) {
    /* The client is done sending; finish the replies, then close. */
    k->closing = true;
    ctl_flush(k);
    return;
  }
  k->inlen += (size_t)n;
  size_t start = 0;
  struct sbuf b = {0};
  for (size_t i = 0; i < k->inlen; i++) {
    if (k->in[i] != '\n') continue;
    k->in[i] = '\0';
    char *line = k->in + start;
    start = i + 1;
    size_t len = strlen(line);
    if (len && line[len - 1] == '\r') line[--len] = '\0';
    char *p = line + strspn(line, " \t");
    if (*p == '\0' || *p == '#') continue; /* blank lines, comments */
    b.len = 0;
    ctl_command(p, &b);
    sb_printf(&b, "\n");
    ctl_send(k, b.p, b.len);
    if (P.quit) break;
  }
  free(b.p);
  if (k->dead) return;
  memmove(k->in, k->in + start, k->inlen - start);
  k->inlen -= start;
  if (k->inlen == sizeof k->in) {
    static const char msg[] = "err line too long\n";
    ctl_send(k, msg, sizeof msg - 1);
    k->closing = true;
  }
  ctl_flush(k);
}

static void ctl_accept(void) {
  for (int i = 0; i < ACCEPT_BURST; i++) {
    int fd = accept_one(P.ctl_listen.fd, "control");
    if (fd < 0) return;
    struct ctl *k = xcalloc(1, sizeof *k);
    k->h.kind = K_CTL;
    k->h.fd = fd;
    k->next = P.ctls;
    if (P.ctls) P.ctls->prev = k;
    P.ctls = k;
    set_interest(&k->h, EPOLLIN);
  }
}

/* ---- main loop -------------------------------------------------------- */

static void run_due(uint64_t now) {
  while (P.heap_n && hkey(0) <= now) {
    struct dir *d = P.heap[0];
    if (dir_flush(d, now)) conn_update(d->c);
    /* Progress: the head is now later than now, gone, or blocked. */
  }
}

static void reap(void) {
  while (P.dead_conns) {
    struct conn *c = P.dead_conns;
    P.dead_conns = c->next;
    free(c);
  }
  while (P.dead_ctls) {
    struct ctl *k = P.dead_ctls;
    P.dead_ctls = k->next;
    free(k->out);
    free(k);
  }
  while (P.dead_links) {
    struct link *l = P.dead_links;
    P.dead_links = l->next;
    free(l);
  }
}

static void dispatch(struct epoll_event *ev) {
  struct handle *h = ev->data.ptr;
  switch (h->kind) {
  case K_EP: ep_event((struct ep *)h, ev->events); break;
  case K_LINK: {
    struct link *l = (struct link *)h;
    if (!l->dead) link_accept(l);
    break;
  }
  case K_CTL: {
    struct ctl *k = (struct ctl *)h;
    if (k->dead) break;
    if (ev->events & (EPOLLERR)) {
      ctl_close(k);
      break;
    }
    if (k->h.mask & EPOLLOUT) ctl_flush(k);
    else if (ev->events & (EPOLLIN | EPOLLHUP)) ctl_in(k);
    break;
  }
  case K_CTL_LISTEN: ctl_accept(); break;
  case K_TIMER: {
    uint64_t ticks;
    (void)!read(h->fd, &ticks, sizeof ticks);
    break;
  }
  case K_SIGNAL: {
    struct signalfd_siginfo si;
    if (read(h->fd, &si, sizeof si) == (ssize_t)sizeof si) {
      logmsg("signal %u, exiting", si.ssi_signo);
      P.quit = true;
    }
    break;
  }
  }
}

static void usage(FILE *f) {
  fputs("usage: faultproxy --control HOST:PORT\n"
        "         [--link NAME=LISTEN_HOST:PORT=TARGET_HOST:PORT ...]\n"
        "         [--pidfile FILE] [--queue-cap BYTES] [--seed N] [-v]\n"
        "Prints \"ready\" on stdout once every listener is bound (preceded by\n"
        "\"control ADDR\" / \"listen NAME ADDR\" for those bound to port 0).\n"
        "Control: one command per line, one reply line each (\"ok ...\" or\n"
        "\"err REASON\"); send \"help\" for the list.  See docs/faultproxy.md.\n",
        f);
}

int main(int argc, char **argv) {
  const char *control = NULL, *pidfile = NULL;
  const char *links[256];
  int nlinks = 0;
  bool seeded = false;
  P.queue_cap = DEFAULT_QUEUE_CAP;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    bool has_val = i + 1 < argc;
    if ((strcmp(a, "--control") == 0) && has_val) control = argv[++i];
    else if (strcmp(a, "--link") == 0 && has_val) {
      if (nlinks == (int)(sizeof links / sizeof links[0])) {
        logmsg("too many --link");
        return 2;
      }
      links[nlinks++] = argv[++i];
    } else if (strcmp(a, "--pidfile") == 0 && has_val) pidfile = argv[++i];
    else if (strcmp(a, "--queue-cap") == 0 && has_val) {
      char *end;
      unsigned long long v = strtoull(argv[++i], &end, 10);
      if (*end || v < 1 || v > (1ull << 32)) {
        logmsg("bad --queue-cap");
        return 2;
      }
      P.queue_cap = (size_t)v;
    } else if (strcmp(a, "--seed") == 0 && has_val) {
      P.rng = strtoull(argv[++i], NULL, 0);
      seeded = true;
    } else if (strcmp(a, "-v") == 0 || strcmp(a, "--verbose") == 0) P.verbose = true;
    else if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
      usage(stdout);
      return 0;
    } else {
      usage(stderr);
      return 2;
    }
  }
  if (!control) {
    usage(stderr);
    return 2;
  }
  if (!seeded) P.rng = now_us() ^ ((uint64_t)getpid() << 32);

  /* Writes to a peer that has gone must fail with EPIPE, not kill us. */
  signal(SIGPIPE, SIG_IGN);
  /* Delay precision: do not let the kernel coalesce our timer wake-ups
   * (the default slack is 50 us). */
  (void)prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL);

  P.epfd = epoll_create1(EPOLL_CLOEXEC);
  if (P.epfd < 0) die("epoll_create1");
  P.spare_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);

  P.timer.kind = K_TIMER;
  P.timer.fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
  if (P.timer.fd < 0) die("timerfd_create");
  set_interest(&P.timer, EPOLLIN);

  sigset_t ss;
  sigemptyset(&ss);
  sigaddset(&ss, SIGINT);
  sigaddset(&ss, SIGTERM);
  sigaddset(&ss, SIGHUP);
  if (sigprocmask(SIG_BLOCK, &ss, NULL) < 0) die("sigprocmask");
  P.sig.kind = K_SIGNAL;
  P.sig.fd = signalfd(-1, &ss, SFD_NONBLOCK | SFD_CLOEXEC);
  if (P.sig.fd < 0) die("signalfd");
  set_interest(&P.sig, EPOLLIN);

  struct sockaddr_storage cs;
  socklen_t clen;
  const char *err;
  if (resolve(control, true, &cs, &clen, &err) < 0) {
    logmsg("--control %s: %s", control, err);
    return 2;
  }
  P.ctl_listen.kind = K_CTL_LISTEN;
  P.ctl_listen.fd = listen_on(&cs, clen);
  if (P.ctl_listen.fd < 0) {
    logmsg("--control %s: %s", control, strerror(errno));
    return 1;
  }
  set_interest(&P.ctl_listen, EPOLLIN);
  if (((struct sockaddr_in *)&cs)->sin_port == 0) {
    struct sockaddr_storage b;
    socklen_t blen = sizeof b;
    char s[ADDR_STR_MAX];
    if (getsockname(P.ctl_listen.fd, (struct sockaddr *)&b, &blen) == 0) {
      addr_str((struct sockaddr *)&b, s, sizeof s);
      printf("control %s\n", s);
    }
  }

  for (int i = 0; i < nlinks; i++) {
    /* NAME=LISTEN=TARGET: '=' cannot appear in a host, even in [v6]. */
    char spec[3 * ADDR_STR_MAX];
    snprintf(spec, sizeof spec, "%s", links[i]);
    char *a = strchr(spec, '=');
    char *b2 = a ? strchr(a + 1, '=') : NULL;
    if (!a || !b2 || strchr(b2 + 1, '=')) {
      logmsg("--link %s: want NAME=LISTEN_HOST:PORT=TARGET_HOST:PORT", links[i]);
      return 2;
    }
    *a = *b2 = '\0';
    char eb[512];
    struct link *l = link_add(spec, a + 1, b2 + 1, eb, sizeof eb, &err);
    if (!l) {
      logmsg("--link %s: %s", links[i], err);
      return 1;
    }
    const char *colon = strrchr(a + 1, ':');
    if (colon && strcmp(colon, ":0") == 0) printf("listen %s %s\n", l->name, l->listen_str);
  }

  if (pidfile) {
    FILE *f = fopen(pidfile, "w");
    if (!f || fprintf(f, "%ld\n", (long)getpid()) < 0 || fclose(f) != 0) {
      logmsg("--pidfile %s: %s", pidfile, strerror(errno));
      return 1;
    }
  }
  printf("ready\n");
  fflush(stdout);

  struct epoll_event evs[MAX_EVENTS];
  while (!P.quit) {
    uint64_t now = now_us();
    run_due(now);
    arm_timer(now);
    reap();
    int n = epoll_wait(P.epfd, evs, MAX_EVENTS, -1);
    if (n < 0) {
      if (errno == EINTR) continue;
      die("epoll_wait");
    }
    for (int i = 0; i < n; i++) dispatch(&evs[i]);
  }

  /* Clean exit: flush what the control clients are owed (best effort),
   * then free everything so valgrind sees no leak. */
  while (P.ctls) {
    struct ctl *k = P.ctls;
    if (k->outlen) (void)!send(k->h.fd, k->out, k->outlen, MSG_NOSIGNAL | MSG_DONTWAIT);
    ctl_close(k);
  }
  while (P.links) {
    struct link *l = P.links;
    P.links = l->next;
    link_free(l);
  }
  reap();
  free(P.heap);
  close(P.ctl_listen.fd);
  close(P.timer.fd);
  close(P.sig.fd);
  close(P.epfd);
  if (P.spare_fd >= 0) close(P.spare_fd);
  if (pidfile) unlink(pidfile);
  return 0;
}
