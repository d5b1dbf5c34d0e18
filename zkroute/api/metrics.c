/* The metrics endpoint (docs/operations.md): a handle whose metrics option
 * names an address ("127.0.0.1:9464"; ZKROUTE_METRICS for zkroute-run
 * programs) is listed here at zkr_init, and while the list is not empty
 * one HTTP server serves GET /metrics: the Prometheus text
 * (zkr__stats_prom_write) of every listed handle, each with its handle
 * label.  The server is libmicrohttpd, with its one internal polling
 * thread, a limit of ZKR__METRICS_CONNECTIONS connections (more are
 * closed at accept) and an idle timeout of ZKR__METRICS_TIMEOUT_S
 * seconds: a slow or half-open client costs a socket, never a thread of
 * the library, and a scrape takes each handle's statistics as zkr_stats()
 * does, without stopping it.  Anything but GET or HEAD of /metrics gets 404
 * or 405.
 *
 * libmicrohttpd is loaded with dlopen() when the first handle asks, not
 * linked: it brings GnuTLS and eight more libraries, which a process
 * routed without metrics (every zkroute-run program) should not load.  A
 * build made without its headers (configure found no libmicrohttpd) has
 * no endpoint; the option is then one line on stderr.
 *
 * Nothing here may stop a program: a bad address, a port in use or a
 * missing library is one line on stderr (once per address), and the
 * handle runs on without metrics. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifdef ZKR_HAVE_MHD
#include <microhttpd.h>
#endif

#include "core/handle.h"
#include "core/log.h"
#include "model/hosts.h"
#include "api/metrics.h"
#include "core/registry.h"
#include "api/stats.h"

static _Atomic unsigned serials;

unsigned zkr__metrics_serial(void) { return atomic_fetch_add(&serials, 1) + 1; }

/* life_mu serializes starting and stopping (held across the server's
 * start and stop, never by the server's thread); mu guards the list, which
 * the server's thread reads at each scrape. */
static pthread_mutex_t life_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static zkr_t **list;
static size_t n_list, cap_list;
static char serving[64]; /* the address served, "" while no server runs */
static char failed[64];  /* the last address that could not be served */
static int listen_fd = -1;

/* ---- the page: every listed handle's statistics ---- */

/* The Prometheus text of every listed handle, malloc'd (*len bytes), or
 * NULL.  Each handle is held (zkr__registry_*) while its statistics are taken,
 * so a zkr_close() meanwhile waits for that, and no more. */
static char *scrape(size_t *len) {
  pthread_mutex_lock(&mu);
  size_t n = n_list, k = 0;
  zkr_t **zs = malloc((n ? n : 1) * sizeof *zs);
  int *slots = malloc((n ? n : 1) * sizeof *slots);
  for (size_t i = 0; zs && slots && i < n; i++) {
    int slot = zkr__registry_hold(list[i]);
    if (slot < 0) continue;
    zs[k] = list[i];
    slots[k++] = slot;
  }
  pthread_mutex_unlock(&mu);
  zkr__prom_src_t *src = calloc(k ? k : 1, sizeof *src);
  size_t m = 0;
  for (size_t i = 0; src && i < k; i++) {
    zkr_stats_t *s;
    if (zkr_stats(zs[i], &s) != ZOK) continue;
    src[m++] = (zkr__prom_src_t){.handle = zs[i]->serial, .s = s, .vs = zkr_state(zs[i])};
  }
  for (size_t i = 0; i < k; i++) zkr__registry_unhold(slots[i]);
  zkr__sb_t b = {0};
  if (src) zkr__stats_prom_write(&b, src, m);
  for (size_t i = 0; i < m; i++) zkr_stats_free((zkr_stats_t *)src[i].s);
  free(src);
  free(slots);
  free(zs);
  if (!src || !zs || !slots || b.oom) {
    free(b.p);
    return NULL;
  }
  *len = b.len;
  return b.p ? b.p : calloc(1, 1);
}

/* ---- the server: libmicrohttpd, loaded on first use ---- */

#ifdef ZKR_HAVE_MHD
#define MHD_SONAME "libmicrohttpd.so.12"

static struct {
  struct MHD_Daemon *(*start)(unsigned int, uint16_t, MHD_AcceptPolicyCallback, void *,
                              MHD_AccessHandlerCallback, void *, ...);
  void (*stop)(struct MHD_Daemon *);
  struct MHD_Response *(*create)(size_t, void *, enum MHD_ResponseMemoryMode);
  enum MHD_Result (*header)(struct MHD_Response *, const char *, const char *);
  enum MHD_Result (*queue)(struct MHD_Connection *, unsigned int, struct MHD_Response *);
  void (*destroy)(struct MHD_Response *);
} mhd;
static struct MHD_Daemon *daemon_;

/* Under life_mu.  NULL, or why the library cannot be used. */
static const char *mhd_load(void) {
  static int loaded;
  static char why[256];
  if (loaded) return loaded > 0 ? NULL : why;
  void *h = dlopen(MHD_SONAME, RTLD_NOW | RTLD_LOCAL);
  if (h) {
    *(void **)&mhd.start = dlsym(h, "MHD_start_daemon");
    *(void **)&mhd.stop = dlsym(h, "MHD_stop_daemon");
    *(void **)&mhd.create = dlsym(h, "MHD_create_response_from_buffer");
    *(void **)&mhd.header = dlsym(h, "MHD_add_response_header");
    *(void **)&mhd.queue = dlsym(h, "MHD_queue_response");
    *(void **)&mhd.destroy = dlsym(h, "MHD_destroy_response");
  }
  if (h && mhd.start && mhd.stop && mhd.create && mhd.header && mhd.queue && mhd.destroy) {
    loaded = 1; /* never unloaded: GnuTLS, which it loaded, does not expect that */
    return NULL;
  }
  snprintf(why, sizeof why, "cannot load %s (%s): install libmicrohttpd12", MHD_SONAME,
           h ? "a function is missing" : dlerror());
  loaded = -1;
  return why;
}

static enum MHD_Result reply(struct MHD_Connection *c, unsigned status, const char *type,
                             char *body, size_t len, int owned, const char *allow) {
  struct MHD_Response *r =
      mhd.create(len, body, owned ? MHD_RESPMEM_MUST_FREE : MHD_RESPMEM_PERSISTENT);
  if (!r) {
    if (owned) free(body);
    return MHD_NO;
  }
  mhd.header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
  if (allow) mhd.header(r, MHD_HTTP_HEADER_ALLOW, allow);
  enum MHD_Result rc = mhd.queue(c, status, r);
  mhd.destroy(r);
  return rc;
}

static int req_seen;

/* Called by the server's thread for each request: first with the headers,
 * then with each piece of a body (read and dropped), then once more. */
static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url,
                                  const char *method, const char *version, const char *upload,
                                  size_t *upload_size, void **state) {
  (void)cls;
  (void)version;
  (void)upload;
  if (!*state) {
    *state = &req_seen;
    return MHD_YES;
  }
  if (*upload_size) {
    *upload_size = 0;
    return MHD_YES;
  }
  static const char text[] = "text/plain; charset=utf-8";
  if (strcmp(url, "/metrics") != 0) {
    static char body[] = "not found: zkroute serves GET /metrics only\n";
    return reply(c, MHD_HTTP_NOT_FOUND, text, body, sizeof body - 1, 0, NULL);
  }
  if (strcmp(method, "GET") != 0 && strcmp(method, "HEAD") != 0) {
    static char body[] = "method not allowed: GET /metrics\n";
    return reply(c, MHD_HTTP_METHOD_NOT_ALLOWED, text, body, sizeof body - 1, 0, "GET, HEAD");
  }
  size_t len = 0;
  char *page = scrape(&len);
  if (!page) {
    static char body[] = "out of memory\n";
    return reply(c, MHD_HTTP_INTERNAL_SERVER_ERROR, text, body, sizeof body - 1, 0, NULL);
  }
  return reply(c, MHD_HTTP_OK, "text/plain; version=0.0.4; charset=utf-8", page, len, 1, NULL);
}

/* Under life_mu: binds addr and starts the server.  NULL, or why not. */
static const char *start(const char *addr, char *why, size_t why_len) {
  struct sockaddr_storage sa;
  socklen_t sl;
  if (!zkr__hosts_parse_listen(addr, &sa, &sl)) return "not an address (IPV4:PORT or [IPV6]:PORT)";
  const char *no = mhd_load();
  if (no) return no;
  int fd = socket(sa.ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  int one = 1;
  if (fd >= 0) setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  if (fd >= 0 && sa.ss_family == AF_INET6)
    setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof one);
  if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sl) != 0 || listen(fd, 16) != 0) {
    snprintf(why, why_len, "cannot listen there: %s", strerror(errno));
    if (fd >= 0) close(fd);
    return why;
  }
  daemon_ = mhd.start(MHD_USE_AUTO_INTERNAL_THREAD, 0, NULL, NULL, on_request, NULL,
                      MHD_OPTION_LISTEN_SOCKET, fd, MHD_OPTION_CONNECTION_LIMIT,
                      (unsigned)ZKR__METRICS_CONNECTIONS, MHD_OPTION_CONNECTION_TIMEOUT,
                      (unsigned)ZKR__METRICS_TIMEOUT_S, MHD_OPTION_END);
  if (!daemon_) {
    snprintf(why, why_len, "libmicrohttpd could not start: %s", strerror(errno));
    close(fd);
    return why;
  }
  listen_fd = fd;
  return NULL;
}

/* Under life_mu, with the list empty: the server's thread ends (a scrape
 * in progress finishes first), the socket is closed. */
static void stop(void) {
  if (!daemon_) return;
  mhd.stop(daemon_); /* closes the listening socket too */
  daemon_ = NULL;
  pthread_mutex_lock(&mu);
  listen_fd = -1;
  pthread_mutex_unlock(&mu);
}
#else
static const char *start(const char *addr, char *why, size_t why_len) {
  (void)why;
  (void)why_len;
  if (!zkr__hosts_parse_listen(addr, NULL, NULL))
    return "not an address (IPV4:PORT or [IPV6]:PORT)";
  return "this build of zkroute has no metrics endpoint (configure found no libmicrohttpd)";
}
static void stop(void) {}
#endif

/* ---- fork: a child has no server thread, and must not keep the port ---- */

/* Both locks are taken around fork() by the forking thread, so that a
 * child never starts with one held by a thread it does not have; the
 * child, that same thread, releases them after dropping the parent's
 * state. */
static void prefork(void) {
  pthread_mutex_lock(&life_mu);
  pthread_mutex_lock(&mu);
}
static void parent(void) {
  pthread_mutex_unlock(&mu);
  pthread_mutex_unlock(&life_mu);
}
static void child(void) {
  if (listen_fd >= 0) close(listen_fd);
  listen_fd = -1;
  list = NULL; /* the parent's handles; left allocated, as they are */
  n_list = cap_list = 0;
  serving[0] = '\0';
#ifdef ZKR_HAVE_MHD
  daemon_ = NULL;
#endif
  pthread_mutex_unlock(&mu);
  pthread_mutex_unlock(&life_mu);
}

__attribute__((constructor)) static void metrics_atfork(void) {
  pthread_atfork(prefork, parent, child);
}

/* ---- handles ---- */

void zkr__metrics_join(zkr_t *z) {
  const char *addr = z->opts.metrics;
  if (!addr[0]) return;
  pthread_mutex_lock(&life_mu);
  pthread_mutex_lock(&mu);
  int listed = 1;
  if (n_list == cap_list) {
    size_t cap = cap_list ? 2 * cap_list : 8;
    zkr_t **v = realloc(list, cap * sizeof *v);
    if (v) {
      list = v;
      cap_list = cap;
    } else {
      listed = 0;
    }
  }
  if (listed) list[n_list++] = z;
  pthread_mutex_unlock(&mu);
  if (!listed) {
    zkr__log_note("metrics=%s: out of memory; this handle is not served", addr);
  } else if (serving[0]) {
    if (strcmp(serving, addr) != 0)
      zkr__log_note("metrics=%s: this process serves /metrics on %s already; this handle is "
                    "served there",
                    addr, serving);
  } else {
    char why[300];
    const char *no = start(addr, why, sizeof why);
    if (!no) {
      snprintf(serving, sizeof serving, "%s", addr);
      failed[0] = '\0';
    } else if (strcmp(failed, addr) != 0) {
      snprintf(failed, sizeof failed, "%s", addr);
      zkr__log_note("metrics=%s: %s; running without metrics", addr, no);
    }
  }
  z->metrics_on = listed;
  pthread_mutex_unlock(&life_mu);
}

void zkr__metrics_leave(zkr_t *z) {
  if (!z->metrics_on) return;
  pthread_mutex_lock(&life_mu);
  pthread_mutex_lock(&mu);
  for (size_t i = 0; i < n_list; i++) {
    if (list[i] != z) continue;
    list[i] = list[--n_list];
    break;
  }
  size_t left = n_list;
  pthread_mutex_unlock(&mu);
  z->metrics_on = 0;
  if (left == 0) {
    stop();
    serving[0] = '\0';
  }
  pthread_mutex_unlock(&life_mu);
}
