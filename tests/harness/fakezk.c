/* The fake ZooKeeper of fakezk.h: a zkr__zk_t whose zhandles record
 * requests and answer only when the test says so. */
#include "fakezk.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <arpa/inet.h>
#include <netinet/in.h>

#include "core/handle.h"
#include "model/hosts.h"
#include "model/srvr.h"
#include "zk/zkapi.h"
#include "zkroute.h"

#define MAX_HOSTS 8
#define MAX_HANDLES 64
#define WAIT_MS 5000

enum { T_DATA, T_EXIST, T_CHILD };

typedef struct fwatch {
  struct fwatch *next;
  int table;
  char path[256];
  watcher_fn fn;
  void *ctx;
} fwatch_t;

typedef struct freq {
  fake_req_t pub;
  int create2;
  union {
    void_completion_t v;
    stat_completion_t stat;
    data_completion_t data;
    strings_stat_completion_t strings_stat;
    string_completion_t string;
    string_stat_completion_t string_stat;
    acl_completion_t acl;
  } cb;
  const void *data;
  watcher_fn wfn;
  void *wctx;
  zoo_op_result_t *results; /* a multi's, filled at its reply */
  int count;
} freq_t;

struct fake_zh {
  int server; /* N of fakeN */
  watcher_fn fn;
  void *ctx;
  int state;
  int state_at_close;
  clientid_t cid;
  int64_t resumed;
  int closed;
  int recv_timeout;
  fwatch_t *watches;
};

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static fake_zh_t *handles[MAX_HOSTS + 1][MAX_HANDLES];
static int n_handles[MAX_HOSTS + 1];
static freq_t **reqs;
static int n_reqs, cap_reqs;
static int roles[MAX_HOSTS + 1];
static int64_t zxids[MAX_HOSTS + 1];
static int64_t next_sid = 0x1000;
static int fail_kind, fail_rc;
static int hook_kind;
static void (*hook_fn)(fake_zh_t *, void *);
static void *hook_arg;
static int sent_kind;
static char sent_path[256];
static int sent_any_path;
static void (*sent_fn)(fake_req_t *, void *);
static void *sent_arg;

static uint64_t now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

static void timed_wait(uint64_t deadline) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  ts.tv_nsec += 20 * 1000000L;
  if (ts.tv_nsec >= 1000000000L) {
    ts.tv_sec++;
    ts.tv_nsec -= 1000000000L;
  }
  (void)deadline;
  pthread_cond_timedwait(&cv, &mu, &ts);
}

static int server_of(const char *host) {
  int n = 0;
  if (sscanf(host, "fake%d", &n) != 1 || n < 1 || n > MAX_HOSTS) return 0;
  return n;
}

/* ---- the table ---- */

static void (*init_hook_fn)(void *);
static void *init_hook_arg;

void fake_hook_init(void (*fn)(void *), void *arg) {
  pthread_mutex_lock(&mu);
  init_hook_fn = fn;
  init_hook_arg = arg;
  pthread_mutex_unlock(&mu);
}

static void (*close_hook_fn)(fake_zh_t *, void *);
static void *close_hook_arg;

void fake_hook_close(void (*fn)(fake_zh_t *h, void *), void *arg) {
  pthread_mutex_lock(&mu);
  close_hook_fn = fn;
  close_hook_arg = arg;
  pthread_mutex_unlock(&mu);
}

static zhandle_t *f_zookeeper_init(const char *host, watcher_fn fn, int recv_timeout,
                                   const clientid_t *cid, void *context, int flags) {
  (void)flags;
  pthread_mutex_lock(&mu);
  void (*hook)(void *) = init_hook_fn;
  void *ia = init_hook_arg;
  init_hook_fn = NULL;
  pthread_mutex_unlock(&mu);
  if (hook) hook(ia);
  /* The library's contract (zkapi.h): the context of every zhandle it
   * opens is the member the session is for - the interposer's table reads
   * it as one. */
  const zkr__member_t *m = context;
  if (!m || !m->z || m < m->z->members || m > m->z->members + m->z->cap) {
    fprintf(stderr, "fakezk: zookeeper_init's context is not a member\n");
    abort();
  }
  int n = server_of(host);
  if (!n) return NULL;
  fake_zh_t *h = calloc(1, sizeof *h);
  h->server = n;
  h->fn = fn;
  h->ctx = context;
  h->state = ZOO_CONNECTING_STATE;
  h->recv_timeout = recv_timeout;
  if (cid && cid->client_id) {
    h->cid = *cid;
    h->resumed = cid->client_id;
  }
  pthread_mutex_lock(&mu);
  if (n_handles[n] < MAX_HANDLES) handles[n][n_handles[n]++] = h;
  pthread_cond_broadcast(&cv);
  pthread_mutex_unlock(&mu);
  return (zhandle_t *)h;
}

/* As libzookeeper_mt's multi-threaded close may: completions still queued
 * are dropped (never called), except add_auth's, which get ZCLOSING;
 * watchers are freed uncalled.  A dropped request forgets its data
 * pointer, as the library loses the entry that held it: memory zkroute
 * hung there and did not free itself shows as a leak under ASan. */
static int f_zookeeper_close(zhandle_t *zh) {
  fake_zh_t *h = (fake_zh_t *)zh;
  freq_t *auth[256];
  int na = 0;
  pthread_mutex_lock(&mu);
  void (*hook)(fake_zh_t *, void *) = close_hook_fn;
  void *ha = close_hook_arg;
  close_hook_fn = NULL;
  pthread_mutex_unlock(&mu);
  if (hook) hook(h, ha);
  pthread_mutex_lock(&mu);
  h->state_at_close = h->state;
  h->closed = 1;
  for (int i = 0; i < n_reqs; i++) {
    freq_t *r = reqs[i];
    if (r->pub.h != h || r->pub.answered) continue;
    r->pub.answered = 1;
    if (r->pub.kind == FK_AUTH && na < 256) auth[na++] = r;
    else r->data = NULL;
  }
  for (fwatch_t *w = h->watches, *nx; w; w = nx) {
    nx = w->next;
    free(w);
  }
  h->watches = NULL;
  pthread_mutex_unlock(&mu);
  for (int i = 0; i < na; i++)
    if (auth[i]->cb.v) auth[i]->cb.v(ZCLOSING, auth[i]->data);
  return ZOK;
}

static int f_zoo_state(zhandle_t *zh) {
  pthread_mutex_lock(&mu);
  int s = ((fake_zh_t *)zh)->state;
  pthread_mutex_unlock(&mu);
  return s;
}

static const clientid_t *f_zoo_client_id(zhandle_t *zh) { return &((fake_zh_t *)zh)->cid; }
static int f_zoo_recv_timeout(zhandle_t *zh) { return ((fake_zh_t *)zh)->recv_timeout; }
/* Every fake session logs to the callback of fake_set_log_callback. */
static _Atomic(log_callback_fn) log_cb;
void fake_set_log_callback(log_callback_fn cb) { log_cb = cb; }
static log_callback_fn f_zoo_get_log_callback(const zhandle_t *zh) {
  (void)zh;
  return log_cb;
}
static int f_zoo_set_servers_resolution_delay(zhandle_t *zh, int ms) {
  (void)zh;
  (void)ms;
  return ZOK;
}

/* Records a request; returns ZOK, or the error the test asked for. */
static int add(zhandle_t *zh, int kind, const char *path, freq_t tmpl) {
  fake_zh_t *h = (fake_zh_t *)zh;
  void (*hook)(fake_zh_t *, void *) = NULL;
  void *harg = NULL;
  pthread_mutex_lock(&mu);
  if (hook_kind == kind) {
    hook = hook_fn;
    harg = hook_arg;
    hook_kind = 0;
  }
  pthread_mutex_unlock(&mu);
  if (hook) hook(h, harg);
  pthread_mutex_lock(&mu);
  if (h->closed) {
    pthread_mutex_unlock(&mu);
    return ZINVALIDSTATE;
  }
  if (fail_kind == kind) {
    int rc = fail_rc;
    fail_kind = 0;
    pthread_mutex_unlock(&mu);
    return rc;
  }
  freq_t *r = malloc(sizeof *r);
  *r = tmpl;
  r->pub.seq = n_reqs + 1;
  r->pub.h = h;
  r->pub.kind = kind;
  r->pub.answered = r->pub.taken = 0;
  snprintf(r->pub.path, sizeof r->pub.path, "%s", path ? path : "");
  r->pub.watched = r->wfn != NULL;
  if (n_reqs == cap_reqs) {
    cap_reqs = cap_reqs ? 2 * cap_reqs : 256;
    reqs = realloc(reqs, (size_t)cap_reqs * sizeof *reqs);
  }
  reqs[n_reqs++] = r;
  void (*after)(fake_req_t *, void *) = NULL;
  void *aarg = NULL;
  if (sent_kind == kind && (sent_any_path || strcmp(sent_path, r->pub.path) == 0)) {
    after = sent_fn;
    aarg = sent_arg;
    sent_kind = 0;
  }
  pthread_cond_broadcast(&cv);
  pthread_mutex_unlock(&mu);
  if (after) after(&r->pub, aarg);
  return ZOK;
}

static int f_zoo_add_auth(zhandle_t *zh, const char *scheme, const char *cert, int len,
                          void_completion_t c, const void *data) {
  (void)cert;
  (void)len;
  freq_t t = {.cb.v = c, .data = data};
  return add(zh, FK_AUTH, scheme, t);
}

static int f_zoo_acreate_ttl(zhandle_t *zh, const char *path, const char *value, int valuelen,
                             const struct ACL_vector *acl, int mode, int64_t ttl,
                             string_completion_t c, const void *data) {
  (void)value, (void)valuelen, (void)acl, (void)ttl;
  freq_t t = {.cb.string = c, .data = data};
  t.pub.mode = mode;
  return add(zh, FK_CREATE, path, t);
}

static int f_zoo_acreate2_ttl(zhandle_t *zh, const char *path, const char *value, int valuelen,
                              const struct ACL_vector *acl, int mode, int64_t ttl,
                              string_stat_completion_t c, const void *data) {
  (void)value, (void)valuelen, (void)acl, (void)ttl;
  freq_t t = {.cb.string_stat = c, .data = data, .create2 = 1};
  t.pub.mode = mode;
  return add(zh, FK_CREATE, path, t);
}

static int f_zoo_adelete(zhandle_t *zh, const char *path, int version, void_completion_t c,
                         const void *data) {
  (void)version;
  freq_t t = {.cb.v = c, .data = data};
  return add(zh, FK_DELETE, path, t);
}

static int f_zoo_aset(zhandle_t *zh, const char *path, const char *buf, int len, int version,
                      stat_completion_t c, const void *data) {
  (void)buf, (void)len, (void)version;
  freq_t t = {.cb.stat = c, .data = data};
  return add(zh, FK_SET, path, t);
}

static int f_zoo_aset_acl(zhandle_t *zh, const char *path, int version, struct ACL_vector *acl,
                          void_completion_t c, const void *data) {
  (void)version, (void)acl;
  freq_t t = {.cb.v = c, .data = data};
  return add(zh, FK_SETACL, path, t);
}

static int f_zoo_amulti(zhandle_t *zh, int count, const zoo_op_t *ops, zoo_op_result_t *results,
                        void_completion_t c, const void *data) {
  freq_t t = {.cb.v = c, .data = data, .results = results, .count = count};
  int mode = 0;
  for (int i = 0; i < count; i++)
    if (ops[i].type == ZOO_CREATE_OP) mode |= ops[i].create_op.flags;
  t.pub.mode = mode;
  return add(zh, FK_MULTI, count > 0 ? "(multi)" : "", t);
}

static int f_zoo_awexists(zhandle_t *zh, const char *path, watcher_fn w, void *wc,
                          stat_completion_t c, const void *data) {
  freq_t t = {.cb.stat = c, .data = data, .wfn = w, .wctx = wc};
  return add(zh, FK_EXISTS, path, t);
}

static int f_zoo_awget(zhandle_t *zh, const char *path, watcher_fn w, void *wc, data_completion_t c,
                       const void *data) {
  freq_t t = {.cb.data = c, .data = data, .wfn = w, .wctx = wc};
  return add(zh, FK_GET, path, t);
}

static int f_zoo_awget_children2(zhandle_t *zh, const char *path, watcher_fn w, void *wc,
                                 strings_stat_completion_t c, const void *data) {
  freq_t t = {.cb.strings_stat = c, .data = data, .wfn = w, .wctx = wc};
  return add(zh, FK_CHILDREN, path, t);
}

static int f_zoo_awget_children(zhandle_t *zh, const char *path, watcher_fn w, void *wc,
                                strings_completion_t c, const void *data) {
  (void)zh, (void)path, (void)w, (void)wc, (void)c, (void)data;
  return ZUNIMPLEMENTED; /* zkroute sends get_children2 only */
}

static int f_zoo_aget_acl(zhandle_t *zh, const char *path, acl_completion_t c, const void *data) {
  freq_t t = {.cb.acl = c, .data = data};
  return add(zh, FK_GETACL, path, t);
}

static int f_zoo_async(zhandle_t *zh, const char *path, string_completion_t c, const void *data) {
  freq_t t = {.cb.string = c, .data = data};
  return add(zh, FK_SYNC, path, t);
}

static int f_zoo_awgetconfig(zhandle_t *zh, watcher_fn w, void *wc, data_completion_t c,
                             const void *data) {
  freq_t t = {.cb.data = c, .data = data, .wfn = w, .wctx = wc};
  return add(zh, FK_GETCONFIG, "/zookeeper/config", t);
}

static int f_zoo_areconfig(zhandle_t *zh, const char *joining, const char *leaving,
                           const char *members, int64_t version, data_completion_t c,
                           const void *data) {
  (void)joining, (void)leaving, (void)members, (void)version;
  freq_t t = {.cb.data = c, .data = data};
  return add(zh, FK_RECONFIG, "/zookeeper/config", t);
}

/* Drops h's registrations of path matching the watcher type and, unless
 * all, the watcher and context.  Returns how many went. */
static int unwatch(fake_zh_t *h, const char *path, ZooWatcherType t, int all, watcher_fn fn,
                   void *ctx) {
  int n = 0;
  pthread_mutex_lock(&mu);
  for (fwatch_t **p = &h->watches; *p;) {
    fwatch_t *w = *p;
    int type_ok = t == ZWATCHTYPE_ANY || (t == ZWATCHTYPE_CHILD) == (w->table == T_CHILD);
    if (!strcmp(w->path, path) && type_ok && (all || (w->fn == fn && w->ctx == ctx))) {
      *p = w->next;
      free(w);
      n++;
    } else {
      p = &w->next;
    }
  }
  pthread_mutex_unlock(&mu);
  return n;
}

static int f_zoo_remove_watches(zhandle_t *zh, const char *path, ZooWatcherType t, watcher_fn w,
                                void *wc, int local) {
  if (!local) return ZUNIMPLEMENTED; /* zkroute only removes locally so */
  return unwatch((fake_zh_t *)zh, path, t, w == NULL, w, wc) ? ZOK : ZNOWATCHER;
}

static int f_zoo_aremove_watches(zhandle_t *zh, const char *path, ZooWatcherType t, watcher_fn w,
                                 void *wc, int local, void_completion_t *c, const void *data) {
  if (local) return ZUNIMPLEMENTED;
  freq_t tm = {.cb.v = (void_completion_t)c, .data = data, .wfn = w, .wctx = wc};
  tm.pub.mode = (int)t;
  return add(zh, FK_REMOVE_WATCHES, path, tm);
}

static int f_zoo_aremove_all_watches(zhandle_t *zh, const char *path, ZooWatcherType t, int local,
                                     void_completion_t *c, const void *data) {
  if (local) return ZUNIMPLEMENTED;
  freq_t tm = {.cb.v = (void_completion_t)c, .data = data};
  tm.pub.mode = (int)t;
  return add(zh, FK_REMOVE_ALL_WATCHES, path, tm);
}

static struct sockaddr *f_zookeeper_get_connected_host(zhandle_t *zh, struct sockaddr *addr,
                                                       socklen_t *len) {
  fake_zh_t *h = (fake_zh_t *)zh;
  if (h->state != ZOO_CONNECTED_STATE || !addr || !len || *len < sizeof(struct sockaddr_in))
    return NULL;
  struct sockaddr_in *in = (struct sockaddr_in *)addr;
  memset(in, 0, sizeof *in);
  in->sin_family = AF_INET;
  in->sin_port = htons(2181);
  in->sin_addr.s_addr = htonl(0x7f000000u | (uint32_t)h->server); /* 127.0.0.N */
  *len = sizeof *in;
  return addr;
}

static int f_srvr(const char *host, int port, int timeout_ms, size_t cap, zkr__srvr_reply_t *out) {
  (void)port, (void)timeout_ms, (void)cap;
  memset(out, 0, sizeof *out);
  int n = server_of(host);
  pthread_mutex_lock(&mu);
  int role = n ? roles[n] : 0;
  int64_t zxid = n ? zxids[n] : 0;
  pthread_mutex_unlock(&mu);
  if (!role) return ZKR_ESRVR_CONNECT;
  out->role = role;
  out->has_zxid = 1;
  out->zxid = zxid;
  out->epoch = (uint32_t)((uint64_t)zxid >> 32);
  return ZOK;
}

/* Every field of the table has its fake, f_<name>: a field added to the
 * call list fails this build until the fake has one. */
#define FAKE_FIELD(gen, tbl, ret, name, ...) ZKR__TBL_##tbl(.name = f_##name, )

static const zkr__zk_t fake_table = {
    ZKR_ZOO_CALLS(FAKE_FIELD, ZKR__ZK_NONE).srvr = f_srvr,
};

/* ---- a fake DNS (fake_install_dns) ---- */

#define MAX_NAMES 8
static pthread_mutex_t dns_mu = PTHREAD_MUTEX_INITIALIZER;
static struct {
  char name[32];
  char addrs[128]; /* "fake1,fake2"; "" does not resolve */
  int delay_ms;
} dns[MAX_NAMES];
static int dns_calls;

static int f_resolve(const char *name, int port, zkr__host_t *out, size_t cap, size_t *n) {
  char addrs[128] = "";
  int delay = 0, found = 0;
  *n = 0;
  pthread_mutex_lock(&dns_mu);
  dns_calls++;
  for (int i = 0; i < MAX_NAMES && !found; i++) {
    if (strcmp(dns[i].name, name) != 0) continue;
    memcpy(addrs, dns[i].addrs, sizeof addrs);
    delay = dns[i].delay_ms;
    found = 1;
  }
  pthread_mutex_unlock(&dns_mu);
  if (delay > 0) nanosleep(&(struct timespec){delay / 1000, (delay % 1000) * 1000000L}, NULL);
  for (char *save = NULL, *a = strtok_r(addrs, ",", &save); a && *n < cap;
       a = strtok_r(NULL, ",", &save)) {
    memset(&out[*n], 0, sizeof out[*n]);
    snprintf(out[*n].name, sizeof out[*n].name, "%s", a);
    out[*n].port = port;
    out[*n].entry = -1;
    (*n)++;
  }
  return *n ? ZOK : ZKR_EHOSTS_UNRESOLVED;
}

static zkr__zk_t dns_table;

void fake_install_dns(void) {
  fake_install();
  pthread_mutex_lock(&dns_mu);
  memset(dns, 0, sizeof dns);
  dns_calls = 0;
  pthread_mutex_unlock(&dns_mu);
  dns_table = fake_table;
  dns_table.resolve = f_resolve;
  zkr__zkapi_use(&dns_table);
}

void fake_set_dns(const char *name, const char *addrs, int delay_ms) {
  pthread_mutex_lock(&dns_mu);
  int slot = -1;
  for (int i = 0; i < MAX_NAMES && slot < 0; i++)
    if (strcmp(dns[i].name, name) == 0 || dns[i].name[0] == '\0') slot = i;
  if (slot >= 0) {
    snprintf(dns[slot].name, sizeof dns[slot].name, "%s", name);
    snprintf(dns[slot].addrs, sizeof dns[slot].addrs, "%s", addrs ? addrs : "");
    dns[slot].delay_ms = delay_ms;
  }
  pthread_mutex_unlock(&dns_mu);
}

int fake_dns_calls(void) {
  pthread_mutex_lock(&dns_mu);
  int n = dns_calls;
  pthread_mutex_unlock(&dns_mu);
  return n;
}

/* ---- the test's side ---- */

void fake_install(void) {
  pthread_mutex_lock(&mu);
  memset(handles, 0, sizeof handles);
  memset(n_handles, 0, sizeof n_handles);
  memset(roles, 0, sizeof roles);
  memset(zxids, 0, sizeof zxids);
  n_reqs = 0;
  fail_kind = hook_kind = sent_kind = 0;
  init_hook_fn = NULL;
  close_hook_fn = NULL;
  pthread_mutex_unlock(&mu);
  zkr__zkapi_use(&fake_table);
}

void fake_uninstall(void) { zkr__zkapi_use(NULL); }

void fake_set_role(int n, int role, int64_t zxid) {
  pthread_mutex_lock(&mu);
  roles[n] = role;
  zxids[n] = zxid;
  pthread_mutex_unlock(&mu);
}

fake_zh_t *fake_handle(int n, int k) {
  uint64_t deadline = now_ms() + WAIT_MS;
  pthread_mutex_lock(&mu);
  while (n_handles[n] <= k && now_ms() < deadline) timed_wait(deadline);
  fake_zh_t *h = n_handles[n] > k ? handles[n][k] : NULL;
  pthread_mutex_unlock(&mu);
  return h;
}

int fake_handle_count(int n) {
  pthread_mutex_lock(&mu);
  int c = n_handles[n];
  pthread_mutex_unlock(&mu);
  return c;
}

int fake_handle_closed(fake_zh_t *h) {
  pthread_mutex_lock(&mu);
  int c = h->closed;
  pthread_mutex_unlock(&mu);
  return c;
}

int fake_handle_state_at_close(fake_zh_t *h) { return h->state_at_close; }
int64_t fake_handle_resumed(fake_zh_t *h) { return h->resumed; }
int fake_handle_server(fake_zh_t *h) { return h->server; }
int64_t fake_session_id(fake_zh_t *h) { return h->cid.client_id; }

void fake_set_state(fake_zh_t *h, int state) {
  pthread_mutex_lock(&mu);
  h->state = state;
  pthread_mutex_unlock(&mu);
}

/* Stock's order: per-path watchers (each distinct pair once), then the
 * global watcher; registrations stay. */
void fake_session_event(fake_zh_t *h, int state) {
  watcher_fn fns[64];
  void *ctxs[64];
  int n = 0;
  pthread_mutex_lock(&mu);
  h->state = state;
  for (fwatch_t *w = h->watches; w && n < 63; w = w->next) {
    int dup = 0;
    for (int i = 0; i < n; i++) dup |= fns[i] == w->fn && ctxs[i] == w->ctx;
    if (!dup && (w->fn != h->fn || w->ctx != h->ctx)) {
      fns[n] = w->fn;
      ctxs[n++] = w->ctx;
    }
  }
  pthread_mutex_unlock(&mu);
  for (int i = 0; i < n; i++) fns[i]((zhandle_t *)h, ZOO_SESSION_EVENT, state, "", ctxs[i]);
  if (h->fn) h->fn((zhandle_t *)h, ZOO_SESSION_EVENT, state, "", h->ctx);
}

void fake_connect(fake_zh_t *h, int64_t sid) {
  pthread_mutex_lock(&mu);
  if (sid) h->cid.client_id = sid;
  else if (!h->cid.client_id) h->cid.client_id = next_sid++;
  memcpy(h->cid.passwd, "fakepasswordxxxx", sizeof h->cid.passwd);
  pthread_mutex_unlock(&mu);
  fake_session_event(h, ZOO_CONNECTED_STATE);
}

static int matches(freq_t *r, fake_zh_t *h, int kind, const char *path) {
  return !r->pub.answered && !r->pub.taken && r->pub.kind == kind && (!h || r->pub.h == h) &&
         (!path || strcmp(r->pub.path, path) == 0);
}

fake_req_t *fake_peek(fake_zh_t *h, int kind, const char *path) {
  fake_req_t *found = NULL;
  pthread_mutex_lock(&mu);
  for (int i = 0; i < n_reqs && !found; i++)
    if (matches(reqs[i], h, kind, path)) {
      reqs[i]->pub.taken = 1;
      found = &reqs[i]->pub;
    }
  pthread_mutex_unlock(&mu);
  return found;
}

fake_req_t *fake_wait(fake_zh_t *h, int kind, const char *path) {
  uint64_t deadline = now_ms() + WAIT_MS;
  for (;;) {
    fake_req_t *r = fake_peek(h, kind, path);
    if (r || now_ms() >= deadline) return r;
    pthread_mutex_lock(&mu);
    timed_wait(deadline);
    pthread_mutex_unlock(&mu);
  }
}

int fake_seq_now(void) {
  pthread_mutex_lock(&mu);
  int n = n_reqs;
  pthread_mutex_unlock(&mu);
  return n;
}

int fake_log(fake_zh_t *h, int *kinds, fake_req_t **out, int cap) {
  int n = 0;
  pthread_mutex_lock(&mu);
  for (int i = 0; i < n_reqs; i++) {
    if (reqs[i]->pub.h != h) continue;
    if (n < cap) {
      if (kinds) kinds[n] = reqs[i]->pub.kind;
      if (out) out[n] = &reqs[i]->pub;
    }
    n++;
  }
  pthread_mutex_unlock(&mu);
  return n;
}

static void watch_add(fake_zh_t *h, int table, const char *path, watcher_fn fn, void *ctx) {
  fwatch_t *w = calloc(1, sizeof *w);
  w->table = table;
  snprintf(w->path, sizeof w->path, "%s", path);
  w->fn = fn;
  w->ctx = ctx;
  pthread_mutex_lock(&mu);
  /* ZooKeeper keeps one registration per (path, watcher, context). */
  for (fwatch_t *x = h->watches; x; x = x->next)
    if (x->table == table && x->fn == fn && x->ctx == ctx && !strcmp(x->path, path)) {
      free(w);
      w = NULL;
      break;
    }
  if (w) {
    w->next = h->watches;
    h->watches = w;
  }
  pthread_mutex_unlock(&mu);
}

void fake_reply(fake_req_t *pr, int rc, int64_t mzxid, int64_t pzxid, const char *value) {
  fake_reply_cz(pr, rc, 0, mzxid, pzxid, value);
}

void fake_reply_cz(fake_req_t *pr, int rc, int64_t czxid, int64_t mzxid, int64_t pzxid,
                   const char *value) {
  freq_t *r = (freq_t *)pr;
  fake_zh_t *h = pr->h;
  pthread_mutex_lock(&mu);
  int skip = pr->answered || h->closed;
  pr->answered = 1;
  pthread_mutex_unlock(&mu);
  if (skip) return;
  struct Stat st;
  memset(&st, 0, sizeof st);
  st.czxid = czxid;
  st.mzxid = mzxid;
  st.pzxid = pzxid;
  st.version = (int32_t)mzxid;
  st.dataLength = value ? (int32_t)strlen(value) : 0;
  int is_read = pr->kind == FK_GET || pr->kind == FK_EXISTS || pr->kind == FK_CHILDREN ||
                pr->kind == FK_GETCONFIG;
  if (is_read && r->wfn && (rc == ZOK || (pr->kind == FK_EXISTS && rc == ZNONODE))) {
    int table = pr->kind == FK_CHILDREN                  ? T_CHILD
                : pr->kind == FK_EXISTS && rc == ZNONODE ? T_EXIST
                                                         : T_DATA;
    watch_add(h, table, pr->path, r->wfn, r->wctx);
  }
  struct String_vector sv = {0, NULL};
  struct ACL_vector acl = {0, NULL};
  const struct Stat *sp = rc == ZOK ? &st : NULL;
  if ((pr->kind == FK_REMOVE_WATCHES || pr->kind == FK_REMOVE_ALL_WATCHES) && rc == ZOK)
    unwatch(h, pr->path, (ZooWatcherType)pr->mode, pr->kind == FK_REMOVE_ALL_WATCHES, r->wfn,
            r->wctx);
  switch (pr->kind) {
  case FK_GET:
  case FK_GETCONFIG:
  case FK_RECONFIG: r->cb.data(rc, value, value ? (int)strlen(value) : -1, sp, r->data); break;
  case FK_EXISTS:
  case FK_SET: r->cb.stat(rc, sp, r->data); break;
  case FK_CHILDREN: r->cb.strings_stat(rc, rc == ZOK ? &sv : NULL, sp, r->data); break;
  case FK_GETACL: r->cb.acl(rc, rc == ZOK ? &acl : NULL, (struct Stat *)sp, r->data); break;
  case FK_CREATE:
    if (r->create2) r->cb.string_stat(rc, rc == ZOK ? pr->path : NULL, sp, r->data);
    else r->cb.string(rc, rc == ZOK ? pr->path : NULL, r->data);
    break;
  case FK_SYNC: r->cb.string(rc, rc == ZOK ? pr->path : NULL, r->data); break;
  case FK_MULTI:
    /* As libzookeeper_mt, the results before the completion: each op's
     * outcome (here the multi's); values and Stats left as they are. */
    for (int i = 0; r->results && i < r->count; i++) r->results[i].err = rc;
    if (r->cb.v) r->cb.v(rc, r->data);
    break;
  default:
    if (r->cb.v) r->cb.v(rc, r->data);
    break;
  }
}

int fake_fire(fake_zh_t *h, const char *path, int type) {
  watcher_fn fns[64];
  void *ctxs[64];
  int n = 0;
  pthread_mutex_lock(&mu);
  for (fwatch_t **p = &h->watches; *p;) {
    fwatch_t *w = *p;
    int hit = !strcmp(w->path, path) &&
              ((type == ZOO_CHANGED_EVENT && w->table == T_DATA) ||
               (type == ZOO_DELETED_EVENT && (w->table == T_DATA || w->table == T_CHILD)) ||
               (type == ZOO_CREATED_EVENT && w->table == T_EXIST) ||
               (type == ZOO_CHILD_EVENT && w->table == T_CHILD));
    if (!hit) {
      p = &w->next;
      continue;
    }
    int dup = 0;
    for (int i = 0; i < n; i++) dup |= fns[i] == w->fn && ctxs[i] == w->ctx;
    if (!dup && n < 64) {
      fns[n] = w->fn;
      ctxs[n++] = w->ctx;
    }
    *p = w->next;
    free(w);
  }
  pthread_mutex_unlock(&mu);
  for (int i = 0; i < n; i++) fns[i]((zhandle_t *)h, type, ZOO_CONNECTED_STATE, path, ctxs[i]);
  return n;
}

int fake_watch_count(fake_zh_t *h, const char *path) {
  int n = 0;
  pthread_mutex_lock(&mu);
  for (fwatch_t *w = h->watches; w; w = w->next) n += !strcmp(w->path, path);
  pthread_mutex_unlock(&mu);
  return n;
}

void fake_fail_next(int kind, int rc) {
  pthread_mutex_lock(&mu);
  fail_kind = kind;
  fail_rc = rc;
  pthread_mutex_unlock(&mu);
}

void fake_hook_next(int kind, void (*fn)(fake_zh_t *, void *), void *arg) {
  pthread_mutex_lock(&mu);
  hook_kind = kind;
  hook_fn = fn;
  hook_arg = arg;
  pthread_mutex_unlock(&mu);
}

void fake_hook_sent(int kind, const char *path, void (*fn)(fake_req_t *, void *), void *arg) {
  pthread_mutex_lock(&mu);
  sent_kind = kind;
  sent_any_path = path == NULL;
  snprintf(sent_path, sizeof sent_path, "%s", path ? path : "");
  sent_fn = fn;
  sent_arg = arg;
  pthread_mutex_unlock(&mu);
}
