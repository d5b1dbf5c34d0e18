/* The process's srvr answers (zkr__srvr_cache_*): one entry
 * per server address (and srvr function: a test's fake ZooKeeper keeps its
 * own), with the last answer, when its request started, and whether a
 * request is in flight.  A query names the earliest start of a request
 * whose answer it takes, or joins one in flight that started since.  A
 * monitor's periodic poll takes one asked for at most half its period
 * ago, so however many handles of the process poll one server, it gets
 * about two polls per period of the fastest of them; a kicked poll (the
 * write session lost, an unknown epoch) takes one asked for since its
 * kick, so one request serves every handle that one event kicked.  Failures are answers
 * too: a server that did not answer one handle half a period ago is not
 * asked again for every other handle.
 *
 * At most MAX_ENTRIES addresses are kept; when every entry is taken, the
 * oldest idle one is reused, and with none idle the query goes uncached. */
#include <pthread.h>
#include <string.h>
#include <time.h>

#include "model/base.h"
#include "zk/srvr_cache.h"
#include "zk/zkapi.h"

#define MAX_ENTRIES 64
#define HOST_MAX 256

typedef int (*srvr_fn)(const char *, int, int, size_t, zkr__srvr_reply_t *);

typedef struct {
  char host[HOST_MAX];
  int port;
  srvr_fn fn; /* the srvr function that answers */
  int used, have;
  int busy;            /* requests in flight: the entry is not reused meanwhile */
  int waiters;         /* queries waiting for one: nor while they wait */
  uint64_t at;         /* start of the request that gave the answer */
  uint64_t busy_since; /* start of the request in flight */
  uint64_t last_use;
  int rc;
  zkr__srvr_reply_t reply;
} entry_t;

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static entry_t entries[MAX_ENTRIES];
static pthread_once_t once = PTHREAD_ONCE_INIT;

/* A child of fork starts with no answer: the requests the parent had in
 * flight have no thread in the child to finish them, and a query that
 * joined one would wait for ever (a forked child's first handle hung in
 * its close, which waits for the monitor's turn). */
static void after_fork_child(void) {
  pthread_mutex_init(&mu, NULL);
  pthread_cond_init(&cv, NULL);
  memset(entries, 0, sizeof entries);
}

static void init_once(void) { pthread_atfork(NULL, NULL, after_fork_child); }

/* host:port's entry (under mu), made when missing; NULL when none is
 * free. */
static entry_t *find(const char *host, int port, srvr_fn fn, uint64_t now) {
  entry_t *spare = NULL;
  for (int i = 0; i < MAX_ENTRIES; i++) {
    entry_t *e = &entries[i];
    if (e->used && e->port == port && e->fn == fn && strcmp(e->host, host) == 0) return e;
    if (!e->used) {
      if (!spare || spare->used) spare = e;
    } else if (!e->busy && !e->waiters &&
               (!spare || (spare->used && e->last_use < spare->last_use))) {
      spare = e;
    }
  }
  if (!spare) return NULL;
  memset(spare, 0, sizeof *spare);
  strcpy(spare->host, host);
  spare->port = port;
  spare->fn = fn;
  spare->used = 1;
  spare->last_use = now;
  return spare;
}

int zkr__srvr_cache_query(const char *host, int port, int timeout_ms, size_t cap, uint64_t since,
                          zkr__srvr_reply_t *out, int *sent) {
  srvr_fn fn = zkr__zk->srvr;
  *sent = 1;
  pthread_once(&once, init_once);
  if (!host || strlen(host) >= HOST_MAX) return zkr__zk->srvr(host, port, timeout_ms, cap, out);
  pthread_mutex_lock(&mu);
  uint64_t now = zkr__now_ns();
  entry_t *e = find(host, port, fn, now);
  if (!e) {
    pthread_mutex_unlock(&mu);
    return zkr__zk->srvr(host, port, timeout_ms, cap, out);
  }
  e->last_use = now;
  for (;;) {
    if (e->have && e->at >= since) {
      /* Answered recently enough (possibly the request just joined). */
      *out = e->reply;
      int rc = e->rc;
      *sent = 0;
      pthread_mutex_unlock(&mu);
      return rc;
    }
    if (e->busy > 0 && e->busy_since >= since) {
      /* Its answer will do: wait for it.  The entry is not reused while
       * a request is in flight or a query waits. */
      e->waiters++;
      pthread_cond_wait(&cv, &mu);
      e->waiters--;
      continue;
    }
    break;
  }
  uint64_t start = zkr__now_ns();
  e->busy++;
  e->busy_since = start;
  pthread_mutex_unlock(&mu);
  int rc = zkr__zk->srvr(host, port, timeout_ms, cap, out);
  pthread_mutex_lock(&mu);
  /* A kicked request may overlap another one: the later start wins. */
  if (!e->have || start >= e->at) {
    e->have = 1;
    e->at = start;
    e->rc = rc;
    e->reply = *out;
  }
  e->busy--;
  pthread_cond_broadcast(&cv);
  pthread_mutex_unlock(&mu);
  return rc;
}

int zkr__srvr_cache_fresh(const char *host, int port, uint64_t since, zkr__srvr_reply_t *out,
                          int *rc) {
  int hit = 0;
  if (since == UINT64_MAX || !host) return 0;
  pthread_mutex_lock(&mu);
  uint64_t now = zkr__now_ns();
  for (int i = 0; i < MAX_ENTRIES && !hit; i++) {
    entry_t *e = &entries[i];
    if (!e->used || !e->have || e->port != port || e->fn != zkr__zk->srvr ||
        strcmp(e->host, host) != 0 || e->at < since)
      continue;
    *out = e->reply;
    *rc = e->rc;
    e->last_use = now;
    hit = 1;
  }
  pthread_mutex_unlock(&mu);
  return hit;
}
