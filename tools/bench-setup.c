/* The keys zkroute-bench works on (bench.h): PREFIX and its keys created,
 * or set to the value size in use, with pipelined calls on one plain
 * session before the first trial. */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"

typedef struct setup_state {
  pthread_mutex_t mu;
  pthread_cond_t cv;
  int pending, failed, first_err;
} setup_state_t;

static void setup_done(setup_state_t *s, int rc) {
  pthread_mutex_lock(&s->mu);
  if (rc != ZOK) {
    s->failed++;
    if (!s->first_err) s->first_err = rc;
  }
  s->pending--;
  pthread_cond_signal(&s->cv);
  pthread_mutex_unlock(&s->mu);
}

static void setup_set_done(int rc, const struct Stat *st, const void *data) {
  (void)st;
  setup_done((setup_state_t *)data, rc);
}

typedef struct setup_key {
  setup_state_t *s;
  zhandle_t *zh;
  const char *path, *value;
  int len;
} setup_key_t;

/* A key that exists already is set, so that its value has the size in
 * use; the set's completion then counts it. */
static void setup_create_cb(int rc, const char *name, const void *data) {
  (void)name;
  setup_key_t *k = (setup_key_t *)data;
  if (rc == ZNODEEXISTS) {
    rc = zoo_aset(k->zh, k->path, k->value, k->len, -1, setup_set_done, k->s);
    if (rc == ZOK) return;
  }
  setup_done(k->s, rc);
}

/* Creates PREFIX and the keys (or sets them to the value size in use) with
 * pipelined asynchronous calls on one plain session. */
void setup_keys(const cfg_t *c, char **paths, const char *value) {
  zhandle_t *zh = zookeeper_init(c->hosts, NULL, RECV_TIMEOUT_MS, NULL, NULL, 0);
  if (!zh) bench_die("setup: zookeeper_init: %s", strerror(errno));
  uint64_t deadline = now_ns() + (uint64_t)READY_TIMEOUT_MS * 1000000u;
  while (zoo_state(zh) != ZOO_CONNECTED_STATE) {
    if (now_ns() > deadline || interrupted) bench_die("setup: no connection to %s", c->hosts);
    sleep_s(0.02);
  }
  int rc = zoo_create(zh, c->prefix, NULL, -1, &ZOO_OPEN_ACL_UNSAFE, 0, NULL, 0);
  if (rc != ZOK && rc != ZNODEEXISTS) bench_die("setup: create %s: %s", c->prefix, zerror(rc));
  setup_state_t s = {.pending = 0};
  pthread_mutex_init(&s.mu, NULL);
  pthread_cond_init(&s.cv, NULL);
  setup_key_t *k = calloc((size_t)c->keys, sizeof *k);
  if (!k) bench_die("out of memory");
  for (int i = 0; i < c->keys; i++) {
    k[i] = (setup_key_t){&s, zh, paths[i], value, c->value_size};
    pthread_mutex_lock(&s.mu);
    s.pending++;
    while (s.pending > 500) pthread_cond_wait(&s.cv, &s.mu);
    pthread_mutex_unlock(&s.mu);
    rc = zoo_acreate(zh, paths[i], value, c->value_size, &ZOO_OPEN_ACL_UNSAFE, 0, setup_create_cb,
                     &k[i]);
    if (rc != ZOK) setup_done(&s, rc);
  }
  pthread_mutex_lock(&s.mu);
  while (s.pending > 0) pthread_cond_wait(&s.cv, &s.mu);
  pthread_mutex_unlock(&s.mu);
  zookeeper_close(zh);
  free(k);
  if (s.failed)
    bench_die("setup: %d of %d keys failed (%s)", s.failed, c->keys, zerror(s.first_err));
}
