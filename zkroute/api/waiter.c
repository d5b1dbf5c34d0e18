/* The blocking calls: each is its asynchronous call plus a waiter.  The
 * waiter's completion is zkroute's own (zkr__op_has(op, ZKR__OP_F_DIRECT)): it runs on the thread
 * that got the reply - a member session's completion thread, or whichever
 * thread completed the operation with an error - and never on the
 * delivery thread, so a blocking call made from inside a callback works,
 * as it does with stock libzookeeper_mt, whose I/O thread finishes
 * synchronous calls.  A waiter only copies the reply into the caller's
 * buffers and signals its own condition: it takes no lock the application
 * could hold. */
#include <stdlib.h>
#include <string.h>

#include "api/api.h"
#include "core/deliver.h"
#include "core/handle.h"
#include "core/registry.h"
#include "core/runtime.h"
#include "core/watch.h"

typedef struct {
  pthread_mutex_t mu;
  pthread_cond_t cv;
  int done;
  int rc;
  /* Where the reply goes: the caller's buffers. */
  char *buf;
  int *buflen;
  struct Stat *stat;
  struct String_vector *strings;
  struct ACL_vector *acl;
} waiter_t;

static void waiter_init(waiter_t *w) {
  memset(w, 0, sizeof *w);
  pthread_mutex_init(&w->mu, NULL);
  pthread_cond_init(&w->cv, NULL);
}

static void waiter_signal(waiter_t *w, int rc) {
  pthread_mutex_lock(&w->mu);
  w->rc = rc;
  w->done = 1;
  pthread_cond_signal(&w->cv);
  pthread_mutex_unlock(&w->mu);
}

static int waiter_done(void *arg) {
  waiter_t *w = arg;
  pthread_mutex_lock(&w->mu);
  int done = w->done;
  pthread_mutex_unlock(&w->mu);
  return done;
}

/* Waits for the completion of an accepted call, or returns the call's
 * error when it was refused (then no completion will come).  Under a
 * stepped runtime the world runs until the completion came. */
static int waiter_wait(waiter_t *w, zkr_t *z, int rc) {
  if (rc == ZOK && zkr__rt->stepped) {
    unsigned serial = z->serial;
    zkr__rt->run_until(w, waiter_done);
    rc = w->rc;
    /* The callbacks queued before the reply run before the call returns
     * (unless the call is made from one of them): an interleaving the
     * delivery thread may give, and the one in which a watch event comes
     * before the new data it announced.  Not when the handle was closed
     * while the world ran (another task closed it, after this call
     * completed or with ZCLOSING): z is gone - or its memory is another
     * handle's, which the registry finds but whose serial differs - as a
     * stock sync call does not touch a closed zhandle again. */
    int slot = rc == ZCLOSING ? -1 : zkr__registry_hold(z);
    int alive = slot >= 0 && z->serial == serial;
    if (slot >= 0) zkr__registry_unhold(slot);
    if (alive) zkr__deliver_drain(z);
  } else if (rc == ZOK) {
    pthread_mutex_lock(&w->mu);
    while (!w->done) pthread_cond_wait(&w->cv, &w->mu);
    pthread_mutex_unlock(&w->mu);
    rc = w->rc;
  }
  pthread_mutex_destroy(&w->mu);
  pthread_cond_destroy(&w->cv);
  return rc;
}

static void copy_stat(waiter_t *w, int rc, const struct Stat *stat) {
  if (rc == ZOK && stat && w->stat) *w->stat = *stat;
}

static void sync_void(int rc, const void *data) { waiter_signal((waiter_t *)data, rc); }

static void sync_stat(int rc, const struct Stat *stat, const void *data) {
  waiter_t *w = (waiter_t *)data;
  copy_stat(w, rc, stat);
  waiter_signal(w, rc);
}

/* As zoo_get: at most *buflen bytes are copied and *buflen says how many
 * (-1 for a node whose data is null); stat->dataLength tells the full size. */
static void sync_data(int rc, const char *value, int len, const struct Stat *stat,
                      const void *data) {
  waiter_t *w = (waiter_t *)data;
  if (rc == ZOK) {
    if (!value || len < 0) {
      *w->buflen = -1;
    } else {
      int n = len < *w->buflen ? len : *w->buflen;
      if (n > 0) memcpy(w->buf, value, (size_t)n);
      *w->buflen = n;
    }
  }
  copy_stat(w, rc, stat);
  waiter_signal(w, rc);
}

static void sync_strings(int rc, const struct String_vector *strings, const void *data) {
  waiter_t *w = (waiter_t *)data;
  if (rc == ZOK && (rc = zkr__op_strings_copy(w->strings, strings)) != ZOK)
    deallocate_String_vector(w->strings);
  waiter_signal(w, rc);
}

static void sync_strings_stat(int rc, const struct String_vector *strings, const struct Stat *stat,
                              const void *data) {
  waiter_t *w = (waiter_t *)data;
  if (rc == ZOK && (rc = zkr__op_strings_copy(w->strings, strings)) != ZOK)
    deallocate_String_vector(w->strings);
  copy_stat(w, rc, stat);
  waiter_signal(w, rc);
}

/* As zoo_create: the created path, truncated to fit, NUL-terminated. */
static void copy_path(waiter_t *w, int rc, const char *value) {
  if (rc != ZOK || !w->buf || !w->buflen || *w->buflen <= 0 || !value) return;
  size_t n = strlen(value);
  if (n > (size_t)*w->buflen - 1) n = (size_t)*w->buflen - 1;
  memcpy(w->buf, value, n);
  w->buf[n] = '\0';
}

static void sync_string_stat(int rc, const char *value, const struct Stat *stat, const void *data) {
  waiter_t *w = (waiter_t *)data;
  copy_path(w, rc, value);
  copy_stat(w, rc, stat);
  waiter_signal(w, rc);
}

static void sync_acl(int rc, struct ACL_vector *acl, struct Stat *stat, const void *data) {
  waiter_t *w = (waiter_t *)data;
  /* The caller owns the copy and frees it with deallocate_ACL_vector. */
  if (rc == ZOK && acl) {
    rc = zkr__op_acl_copy(w->acl, acl);
    if (rc != ZOK) zkr__op_acl_free(w->acl);
  } else if (rc == ZOK) {
    w->acl->count = 0;
    w->acl->data = NULL;
  }
  copy_stat(w, rc, stat);
  waiter_signal(w, rc);
}

#define SYNC_PRELUDE(z)                                                                            \
  waiter_t w;                                                                                      \
  waiter_init(&w)

int zkr_create(zkr_t *z, const char *path, const char *value, int valuelen,
               const struct ACL_vector *acl, int mode, char *path_buffer, int path_buffer_len) {
  return zkr_create2_ttl(z, path, value, valuelen, acl, mode, -1, path_buffer, path_buffer_len,
                         NULL);
}

int zkr_create_ttl(zkr_t *z, const char *path, const char *value, int valuelen,
                   const struct ACL_vector *acl, int mode, int64_t ttl, char *path_buffer,
                   int path_buffer_len) {
  return zkr_create2_ttl(z, path, value, valuelen, acl, mode, ttl, path_buffer, path_buffer_len,
                         NULL);
}

int zkr_create2(zkr_t *z, const char *path, const char *value, int valuelen,
                const struct ACL_vector *acl, int mode, char *path_buffer, int path_buffer_len,
                struct Stat *stat) {
  return zkr_create2_ttl(z, path, value, valuelen, acl, mode, -1, path_buffer, path_buffer_len,
                         stat);
}

int zkr_create2_ttl(zkr_t *z, const char *path, const char *value, int valuelen,
                    const struct ACL_vector *acl, int mode, int64_t ttl, char *path_buffer,
                    int path_buffer_len, struct Stat *stat) {
  SYNC_PRELUDE(z);
  w.buf = path_buffer;
  w.buflen = &path_buffer_len;
  w.stat = stat;
  return waiter_wait(&w, z,
                     zkr__api_write_create(z, path, value, valuelen, acl, mode, ttl, 1,
                                           (void *)sync_string_stat, &w, 1));
}

int zkr_delete(zkr_t *z, const char *path, int version) {
  SYNC_PRELUDE(z);
  return waiter_wait(&w, z, zkr__api_write_delete(z, path, version, sync_void, &w, 1));
}

int zkr_set(zkr_t *z, const char *path, const char *buffer, int buflen, int version) {
  return zkr_set2(z, path, buffer, buflen, version, NULL);
}

int zkr_set2(zkr_t *z, const char *path, const char *buffer, int buflen, int version,
             struct Stat *stat) {
  SYNC_PRELUDE(z);
  w.stat = stat;
  return waiter_wait(&w, z, zkr__api_write_set(z, path, buffer, buflen, version, sync_stat, &w, 1));
}

int zkr_set_acl(zkr_t *z, const char *path, int version, const struct ACL_vector *acl) {
  SYNC_PRELUDE(z);
  return waiter_wait(
      &w, z, zkr__api_write_set_acl(z, path, version, (struct ACL_vector *)acl, sync_void, &w, 1));
}

int zkr_multi(zkr_t *z, int count, const zoo_op_t *ops, zoo_op_result_t *results) {
  SYNC_PRELUDE(z);
  return waiter_wait(&w, z, zkr__api_write_multi(z, count, ops, results, sync_void, &w, 1));
}

int zkr_exists(zkr_t *z, const char *path, int watch, struct Stat *stat) {
  SYNC_PRELUDE(z);
  w.stat = stat;
  return waiter_wait(
      &w, z, zkr__api_read(z, ZKR__OP_EXISTS, path, watch, NULL, NULL, (void *)sync_stat, &w, 1));
}

int zkr_wexists(zkr_t *z, const char *path, watcher_fn watcher, void *watcherCtx,
                struct Stat *stat) {
  SYNC_PRELUDE(z);
  w.stat = stat;
  return waiter_wait(
      &w, z,
      zkr__api_read(z, ZKR__OP_EXISTS, path, 0, watcher, watcherCtx, (void *)sync_stat, &w, 1));
}

static int get_common(zkr_t *z, const char *path, int watch, watcher_fn watcher, void *wctx,
                      char *buffer, int *buffer_len, struct Stat *stat) {
  if (!buffer_len || *buffer_len < 0 || (!buffer && *buffer_len > 0)) return ZBADARGUMENTS;
  SYNC_PRELUDE(z);
  w.buf = buffer;
  w.buflen = buffer_len;
  w.stat = stat;
  return waiter_wait(
      &w, z, zkr__api_read(z, ZKR__OP_GET, path, watch, watcher, wctx, (void *)sync_data, &w, 1));
}

int zkr_get(zkr_t *z, const char *path, int watch, char *buffer, int *buffer_len,
            struct Stat *stat) {
  return get_common(z, path, watch, NULL, NULL, buffer, buffer_len, stat);
}

int zkr_wget(zkr_t *z, const char *path, watcher_fn watcher, void *watcherCtx, char *buffer,
             int *buffer_len, struct Stat *stat) {
  return get_common(z, path, 0, watcher, watcherCtx, buffer, buffer_len, stat);
}

static int children_common(zkr_t *z, const char *path, int watch, watcher_fn watcher, void *wctx,
                           struct String_vector *strings, struct Stat *stat) {
  if (!strings) return ZBADARGUMENTS;
  SYNC_PRELUDE(z);
  w.strings = strings;
  w.stat = stat;
  zkr__op_type_t type = stat ? ZKR__OP_GET_CHILDREN2 : ZKR__OP_GET_CHILDREN;
  void *cb = stat ? (void *)sync_strings_stat : (void *)sync_strings;
  return waiter_wait(&w, z, zkr__api_read(z, type, path, watch, watcher, wctx, cb, &w, 1));
}

int zkr_get_children(zkr_t *z, const char *path, int watch, struct String_vector *strings) {
  return children_common(z, path, watch, NULL, NULL, strings, NULL);
}

int zkr_wget_children(zkr_t *z, const char *path, watcher_fn watcher, void *watcherCtx,
                      struct String_vector *strings) {
  return children_common(z, path, 0, watcher, watcherCtx, strings, NULL);
}

int zkr_get_children2(zkr_t *z, const char *path, int watch, struct String_vector *strings,
                      struct Stat *stat) {
  return children_common(z, path, watch, NULL, NULL, strings, stat);
}

int zkr_wget_children2(zkr_t *z, const char *path, watcher_fn watcher, void *watcherCtx,
                       struct String_vector *strings, struct Stat *stat) {
  return children_common(z, path, 0, watcher, watcherCtx, strings, stat);
}

int zkr_get_acl(zkr_t *z, const char *path, struct ACL_vector *acl, struct Stat *stat) {
  if (!acl) return ZBADARGUMENTS;
  SYNC_PRELUDE(z);
  w.acl = acl;
  w.stat = stat;
  return waiter_wait(
      &w, z, zkr__api_read(z, ZKR__OP_GET_ACL, path, 0, NULL, NULL, (void *)sync_acl, &w, 1));
}

int zkr_reconfig(zkr_t *z, const char *joining, const char *leaving, const char *members,
                 int64_t version, char *buffer, int *buffer_len, struct Stat *stat) {
  if (!buffer_len || *buffer_len < 0 || (!buffer && *buffer_len > 0)) return ZBADARGUMENTS;
  SYNC_PRELUDE(z);
  w.buf = buffer;
  w.buflen = buffer_len;
  w.stat = stat;
  return waiter_wait(
      &w, z, zkr__api_write_reconfig(z, joining, leaving, members, version, sync_data, &w, 1));
}

int zkr_remove_watches(zkr_t *z, const char *path, ZooWatcherType wtype, watcher_fn watcher,
                       void *watcherCtx, int local) {
  SYNC_PRELUDE(z);
  return waiter_wait(
      &w, z,
      zkr__watch_remove_watches(z, path, wtype, 0, watcher, watcherCtx, local, sync_void, &w, 1));
}

int zkr_remove_all_watches(zkr_t *z, const char *path, ZooWatcherType wtype, int local) {
  SYNC_PRELUDE(z);
  return waiter_wait(
      &w, z, zkr__watch_remove_watches(z, path, wtype, 1, NULL, NULL, local, sync_void, &w, 1));
}
