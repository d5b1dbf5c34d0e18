/* The zkr_ mirrors of the zoo_ calls: argument checks (path, value size,
 * ACL), building the operation and handing it to the router; and the
 * synchronous calls, which are the asynchronous ones plus a waiter, so that
 * both share one routing, ordering, statistics and close path. */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* ZooKeeper's default jute.maxbuffer: the server drops a connection whose
 * request packet is larger, which would look like a sick member. */
#define ZKR__MAX_PACKET 1048575

/* ---- checks ---- */

static int check_handle(zkr_t *z) {
  if (!z) return ZBADARGUMENTS;
  if (z->closing) return ZKR_ECLOSING;
  if (z->expired || z->auth_failed) return ZINVALIDSTATE;
  return ZOK;
}

/* ZooKeeper's path rules (PathUtils.validatePath): absolute, no empty,
 * "." or ".." component, no trailing '/' (except a sequential create's
 * prefix), no control characters. */
static int check_path_mode(const char *path, int sequential) {
  if (!path || path[0] != '/') return ZBADARGUMENTS;
  size_t len = strlen(path);
  if (len == 1) return ZOK;
  if (path[len - 1] == '/' && !sequential) return ZBADARGUMENTS;
  for (const char *c = path + 1, *seg = path + 1;; c++) {
    if (*c == '/' || *c == '\0') {
      size_t n = (size_t)(c - seg);
      if (n == 0 && !(*c == '\0' && sequential)) return ZBADARGUMENTS;
      if ((n == 1 && seg[0] == '.') || (n == 2 && seg[0] == '.' && seg[1] == '.'))
        return ZBADARGUMENTS;
      if (*c == '\0') break;
      seg = c + 1;
    } else if ((unsigned char)*c < 0x20 || *c == 0x7f) {
      return ZBADARGUMENTS;
    }
  }
  return ZOK;
}

int zkr__check_path(const char *path) { return check_path_mode(path, 0); }

static int check_value(const char *value, int valuelen) {
  if (valuelen > 0 && !value) return ZBADARGUMENTS;
  if (valuelen < -1 || (valuelen < 0 && value)) return ZBADARGUMENTS;
  return ZOK;
}

static size_t acl_bytes(const struct ACL_vector *acl) {
  size_t n = 4;
  for (int i = 0; acl && i < acl->count; i++)
    n += 4 + 4 + strlen(acl->data[i].id.scheme) + 4 + strlen(acl->data[i].id.id);
  return n;
}

static int check_acl(const struct ACL_vector *acl) {
  if (!acl || acl->count <= 0 || !acl->data) return ZINVALIDACL;
  for (int i = 0; i < acl->count; i++)
    if (!acl->data[i].id.scheme || !acl->data[i].id.id) return ZINVALIDACL;
  return ZOK;
}

/* Rejects a request the server would refuse by dropping the connection:
 * header, path, value and ACL against jute.maxbuffer, before anything is
 * sent, so the member is not marked unhealthy for the caller's mistake. */
static int check_size(size_t path_len, int valuelen, size_t acl) {
  size_t total = 8 + 4 + path_len + 4 + (size_t)(valuelen > 0 ? valuelen : 0) +
                 acl + 4 + 8 + 64;
  return total > ZKR__MAX_PACKET ? ZKR_ETOOBIG : ZOK;
}

static int submit(zkr__op_t *op) {
  int rc = zkr__route(op);
  if (rc != ZOK) zkr__op_free(op);
  return rc;
}

/* ---- writes ---- */

static int create_held(zkr_t *z, const char *path, const char *value,
                       int valuelen, const struct ACL_vector *acl, int mode,
                       int64_t ttl, int create2, void *cb, const void *data) {
  int rc = check_handle(z);
  if (rc == ZOK) rc = check_path_mode(path, mode & ZOO_SEQUENCE);
  if (rc == ZOK) rc = check_value(value, valuelen);
  if (rc == ZOK) rc = check_acl(acl);
  if (rc == ZOK) rc = check_size(strlen(path), valuelen, acl_bytes(acl));
  if (rc != ZOK) return rc;
  zkr__op_t *op = zkr__op_new(z, ZKR__OP_CREATE, path);
  if (!op) return ZKR_ENOMEM;
  op->is_write = 1;
  op->mode = mode;
  op->ttl = ttl;
  op->create2 = create2;
  op->valuelen = valuelen;
  op->data = data;
  if (create2) op->cb.string_stat = (string_stat_completion_t)cb;
  else op->cb.string = (string_completion_t)cb;
  if ((value && !(op->value = malloc(valuelen > 0 ? (size_t)valuelen : 1))) ||
      (rc = zkr__op_copy_acl(op, acl)) != ZOK) {
    zkr__op_free(op);
    return rc != ZOK ? rc : ZKR_ENOMEM;
  }
  if (value && valuelen > 0) memcpy(op->value, value, (size_t)valuelen);
  return submit(op);
}

static int create_common(zkr_t *z, const char *path, const char *value,
                         int valuelen, const struct ACL_vector *acl, int mode,
                         int64_t ttl, int create2, void *cb, const void *data) {
  ZKR__HELD(z, create_held(z, path, value, valuelen, acl, mode, ttl, create2,
                           cb, data));
}

int zkr_acreate(zkr_t *z, const char *path, const char *value, int valuelen,
                const struct ACL_vector *acl, int mode,
                string_completion_t completion, const void *data) {
  return create_common(z, path, value, valuelen, acl, mode, -1, 0,
                       (void *)completion, data);
}

int zkr_acreate_ttl(zkr_t *z, const char *path, const char *value,
                    int valuelen, const struct ACL_vector *acl, int mode,
                    int64_t ttl, string_completion_t completion,
                    const void *data) {
  return create_common(z, path, value, valuelen, acl, mode, ttl, 0,
                       (void *)completion, data);
}

int zkr_acreate2(zkr_t *z, const char *path, const char *value, int valuelen,
                 const struct ACL_vector *acl, int mode,
                 string_stat_completion_t completion, const void *data) {
  return create_common(z, path, value, valuelen, acl, mode, -1, 1,
                       (void *)completion, data);
}

int zkr_acreate2_ttl(zkr_t *z, const char *path, const char *value,
                     int valuelen, const struct ACL_vector *acl, int mode,
                     int64_t ttl, string_stat_completion_t completion,
                     const void *data) {
  return create_common(z, path, value, valuelen, acl, mode, ttl, 1,
                       (void *)completion, data);
}

/* An operation on one existing path: delete, set, set_acl and all reads. */
static zkr__op_t *path_op(zkr_t *z, zkr__op_type_t type, const char *path,
                          const void *data, int *rc) {
  if ((*rc = check_handle(z)) != ZOK || (*rc = zkr__check_path(path)) != ZOK)
    return NULL;
  zkr__op_t *op = zkr__op_new(z, type, path);
  if (!op) *rc = ZKR_ENOMEM;
  else op->data = data;
  return op;
}

static int adelete_held(zkr_t *z, const char *path, int version,
                        void_completion_t completion, const void *data) {
  int rc;
  zkr__op_t *op = path_op(z, ZKR__OP_DELETE, path, data, &rc);
  if (!op) return rc;
  op->is_write = 1;
  op->version = version;
  op->cb.v = completion;
  return submit(op);
}

int zkr_adelete(zkr_t *z, const char *path, int version,
                void_completion_t completion, const void *data) {
  ZKR__HELD(z, adelete_held(z, path, version, completion, data));
}

static int aset_held(zkr_t *z, const char *path, const char *buffer,
                     int buflen, int version, stat_completion_t completion,
                     const void *data) {
  int rc = check_value(buffer, buflen);
  if (rc == ZOK && path) rc = check_size(strlen(path), buflen, 0);
  if (rc != ZOK) return rc;
  zkr__op_t *op = path_op(z, ZKR__OP_SET, path, data, &rc);
  if (!op) return rc;
  op->is_write = 1;
  op->version = version;
  op->valuelen = buflen;
  op->cb.stat = completion;
  if (buffer && !(op->value = malloc(buflen > 0 ? (size_t)buflen : 1))) {
    zkr__op_free(op);
    return ZKR_ENOMEM;
  }
  if (buffer && buflen > 0) memcpy(op->value, buffer, (size_t)buflen);
  return submit(op);
}

int zkr_aset(zkr_t *z, const char *path, const char *buffer, int buflen,
             int version, stat_completion_t completion, const void *data) {
  ZKR__HELD(z, aset_held(z, path, buffer, buflen, version, completion, data));
}

static int aset_acl_held(zkr_t *z, const char *path, int version,
                         struct ACL_vector *acl, void_completion_t completion,
                         const void *data) {
  int rc = check_acl(acl);
  if (rc != ZOK) return rc;
  zkr__op_t *op = path_op(z, ZKR__OP_SET_ACL, path, data, &rc);
  if (!op) return rc;
  op->is_write = 1;
  op->version = version;
  op->cb.v = completion;
  if ((rc = zkr__op_copy_acl(op, acl)) != ZOK) {
    zkr__op_free(op);
    return rc;
  }
  return submit(op);
}

int zkr_aset_acl(zkr_t *z, const char *path, int version,
                 struct ACL_vector *acl, void_completion_t completion,
                 const void *data) {
  ZKR__HELD(z, aset_acl_held(z, path, version, acl, completion, data));
}

static int amulti_held(zkr_t *z, int count, const zoo_op_t *ops,
                       zoo_op_result_t *results, void_completion_t completion,
                       const void *data) {
  int rc = check_handle(z);
  if (rc != ZOK) return rc;
  if (count < 0 || (count > 0 && (!ops || !results))) return ZBADARGUMENTS;
  /* Each operation's encoded size, exactly: a multi header (type, done,
   * err: 9 bytes), then the request (strings and buffers carry a 4-byte
   * length).  Many small operations add up: estimates low by even one
   * byte per operation let a multi past the server's limit. */
  size_t bytes = 0;
  int writes = 0;
  for (int i = 0; i < count; i++) {
    const zoo_op_t *o = &ops[i];
    switch (o->type) {
    case ZOO_CREATE_OP:
      rc = check_path_mode(o->create_op.path, o->create_op.flags & ZOO_SEQUENCE);
      if (rc == ZOK) rc = check_value(o->create_op.data, o->create_op.datalen);
      if (rc == ZOK) rc = check_acl(o->create_op.acl);
      if (rc == ZOK)
        bytes += 9 + 4 + strlen(o->create_op.path) + 4 +
                 (size_t)(o->create_op.datalen > 0 ? o->create_op.datalen : 0) +
                 acl_bytes(o->create_op.acl) + 4 /* flags */;
      writes++;
      break;
    case ZOO_DELETE_OP:
      rc = zkr__check_path(o->delete_op.path);
      if (rc == ZOK) bytes += 9 + 4 + strlen(o->delete_op.path) + 4 /* version */;
      writes++;
      break;
    case ZOO_SETDATA_OP:
      rc = zkr__check_path(o->set_op.path);
      if (rc == ZOK) rc = check_value(o->set_op.data, o->set_op.datalen);
      if (rc == ZOK)
        bytes += 9 + 4 + strlen(o->set_op.path) + 4 +
                 (size_t)(o->set_op.datalen > 0 ? o->set_op.datalen : 0) + 4 /* version */;
      writes++;
      break;
    case ZOO_CHECK_OP:
      rc = zkr__check_path(o->check_op.path);
      if (rc == ZOK) bytes += 9 + 4 + strlen(o->check_op.path) + 4 /* version */;
      break;
    default: rc = ZBADARGUMENTS;
    }
    if (rc != ZOK) return rc;
  }
  if ((rc = check_size(bytes, 0, 0)) != ZOK) return rc;
  zkr__op_t *op = zkr__op_new(z, ZKR__OP_MULTI, NULL);
  if (!op) return ZKR_ENOMEM;
  op->is_write = writes > 0;
  op->multi_results = results;
  op->cb.v = completion;
  op->data = data;
  if ((rc = zkr__op_copy_multi(op, count, ops)) != ZOK) {
    zkr__op_free(op);
    return rc;
  }
  return submit(op);
}

int zkr_amulti(zkr_t *z, int count, const zoo_op_t *ops,
               zoo_op_result_t *results, void_completion_t completion,
               const void *data) {
  ZKR__HELD(z, amulti_held(z, count, ops, results, completion, data));
}

/* ---- reads ---- */

/* watch: 0 none, 1 the global watcher; or an explicit watcher. */
static int read_held(zkr_t *z, zkr__op_type_t type, const char *path,
                     int watch, watcher_fn watcher, void *wctx, void *cb,
                     const void *data) {
  int rc;
  zkr__op_t *op = path_op(z, type, path, data, &rc);
  if (!op) return rc;
  op->cb.v = (void_completion_t)cb; /* all members of the union are pointers */
  if (watch || watcher) {
    int kind = type == ZKR__OP_EXISTS ? ZKR__WATCH_EXIST
               : type == ZKR__OP_GET  ? ZKR__WATCH_DATA
                                      : ZKR__WATCH_CHILD;
    /* The same watch set again (same path, kind, watcher and context) is
     * the same registration, as in ZooKeeper, which fires it once: the
     * read goes to the member that holds it, with the same record, and
     * ZooKeeper merges the two.  Not while a write of this handle to the
     * path is in flight: read-your-writes sends that read to the write
     * session (router.c), where a second registration it must be. */
    int armed_on = -1;
    if (!zkr__inflight_contains(z->inflight, path) &&
        (op->watch = zkr__watch_find(z, kind, path, watcher, wctx, &armed_on))) {
      op->watch_reused = 1;
      op->pin = armed_on;
    } else if (!(op->watch = zkr__watch_new(z, watcher, wctx, kind, path))) {
      zkr__op_free(op);
      return ZKR_ENOMEM;
    }
  }
  return submit(op);
}

static int read_common(zkr_t *z, zkr__op_type_t type, const char *path,
                       int watch, watcher_fn watcher, void *wctx, void *cb,
                       const void *data) {
  ZKR__HELD(z, read_held(z, type, path, watch, watcher, wctx, cb, data));
}

int zkr_aexists(zkr_t *z, const char *path, int watch,
                stat_completion_t completion, const void *data) {
  return read_common(z, ZKR__OP_EXISTS, path, watch, NULL, NULL,
                     (void *)completion, data);
}

int zkr_awexists(zkr_t *z, const char *path, watcher_fn watcher,
                 void *watcherCtx, stat_completion_t completion,
                 const void *data) {
  return read_common(z, ZKR__OP_EXISTS, path, 0, watcher, watcherCtx,
                     (void *)completion, data);
}

int zkr_aget(zkr_t *z, const char *path, int watch,
             data_completion_t completion, const void *data) {
  return read_common(z, ZKR__OP_GET, path, watch, NULL, NULL,
                     (void *)completion, data);
}

int zkr_awget(zkr_t *z, const char *path, watcher_fn watcher,
              void *watcherCtx, data_completion_t completion,
              const void *data) {
  return read_common(z, ZKR__OP_GET, path, 0, watcher, watcherCtx,
                     (void *)completion, data);
}

int zkr_aget_children(zkr_t *z, const char *path, int watch,
                      strings_completion_t completion, const void *data) {
  return read_common(z, ZKR__OP_GET_CHILDREN, path, watch, NULL, NULL,
                     (void *)completion, data);
}

int zkr_awget_children(zkr_t *z, const char *path, watcher_fn watcher,
                       void *watcherCtx, strings_completion_t completion,
                       const void *data) {
  return read_common(z, ZKR__OP_GET_CHILDREN, path, 0, watcher, watcherCtx,
                     (void *)completion, data);
}

int zkr_aget_children2(zkr_t *z, const char *path, int watch,
                       strings_stat_completion_t completion,
                       const void *data) {
  return read_common(z, ZKR__OP_GET_CHILDREN2, path, watch, NULL, NULL,
                     (void *)completion, data);
}

int zkr_awget_children2(zkr_t *z, const char *path, watcher_fn watcher,
                        void *watcherCtx, strings_stat_completion_t completion,
                        const void *data) {
  return read_common(z, ZKR__OP_GET_CHILDREN2, path, 0, watcher, watcherCtx,
                     (void *)completion, data);
}

int zkr_aget_acl(zkr_t *z, const char *path, acl_completion_t completion,
                 const void *data) {
  return read_common(z, ZKR__OP_GET_ACL, path, 0, NULL, NULL,
                     (void *)completion, data);
}

int zkr_async(zkr_t *z, const char *path, string_completion_t completion,
              const void *data) {
  return read_common(z, ZKR__OP_SYNC, path, 0, NULL, NULL, (void *)completion,
                     data);
}

/* ---- synchronous calls ---- */

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

/* Waits for the completion of an accepted call, or returns the call's
 * error when it was refused (then no completion will come). */
static int waiter_wait(waiter_t *w, int rc) {
  if (rc == ZOK) {
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

static void sync_void(int rc, const void *data) {
  waiter_signal((waiter_t *)data, rc);
}

static void sync_stat(int rc, const struct Stat *stat, const void *data) {
  waiter_t *w = (waiter_t *)data;
  copy_stat(w, rc, stat);
  waiter_signal(w, rc);
}

/* As zoo_get: at most *buflen bytes are copied and *buflen says how many
 * (-1 for a node whose data is null); stat->dataLength tells the full size. */
static void sync_data(int rc, const char *value, int len,
                      const struct Stat *stat, const void *data) {
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

static int copy_strings(struct String_vector *dst,
                        const struct String_vector *src) {
  dst->count = 0;
  dst->data = NULL;
  if (!src || src->count <= 0) return ZOK;
  if (!(dst->data = calloc((size_t)src->count, sizeof *dst->data)))
    return ZKR_ENOMEM;
  for (int i = 0; i < src->count; i++) {
    dst->count = i + 1;
    if (!(dst->data[i] = strdup(src->data[i]))) return ZKR_ENOMEM;
  }
  return ZOK;
}

static void sync_strings(int rc, const struct String_vector *strings,
                         const void *data) {
  waiter_t *w = (waiter_t *)data;
  if (rc == ZOK) rc = copy_strings(w->strings, strings);
  waiter_signal(w, rc);
}

static void sync_strings_stat(int rc, const struct String_vector *strings,
                              const struct Stat *stat, const void *data) {
  waiter_t *w = (waiter_t *)data;
  if (rc == ZOK) rc = copy_strings(w->strings, strings);
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

static void sync_string_stat(int rc, const char *value,
                             const struct Stat *stat, const void *data) {
  waiter_t *w = (waiter_t *)data;
  copy_path(w, rc, value);
  copy_stat(w, rc, stat);
  waiter_signal(w, rc);
}

static void sync_acl(int rc, struct ACL_vector *acl, struct Stat *stat,
                     const void *data) {
  waiter_t *w = (waiter_t *)data;
  if (rc == ZOK) {
    /* The caller owns the copy and frees it with deallocate_ACL_vector. */
    w->acl->count = 0;
    w->acl->data = acl && acl->count > 0 ? calloc((size_t)acl->count, sizeof *acl->data) : NULL;
    for (int i = 0; acl && w->acl->data && i < acl->count; i++) {
      w->acl->data[i].perms = acl->data[i].perms;
      w->acl->data[i].id.scheme = strdup(acl->data[i].id.scheme);
      w->acl->data[i].id.id = strdup(acl->data[i].id.id);
      w->acl->count = i + 1;
      if (!w->acl->data[i].id.scheme || !w->acl->data[i].id.id) rc = ZKR_ENOMEM;
    }
    if (acl && acl->count > 0 && !w->acl->data) rc = ZKR_ENOMEM;
  }
  copy_stat(w, rc, stat);
  waiter_signal(w, rc);
}

#define SYNC_PRELUDE(z)                      \
  if (zkr__in_callback) return ZKR_EINCALLBACK; \
  waiter_t w;                                \
  waiter_init(&w)

int zkr_create(zkr_t *z, const char *path, const char *value, int valuelen,
               const struct ACL_vector *acl, int mode, char *path_buffer,
               int path_buffer_len) {
  return zkr_create2_ttl(z, path, value, valuelen, acl, mode, -1, path_buffer,
                         path_buffer_len, NULL);
}

int zkr_create_ttl(zkr_t *z, const char *path, const char *value,
                   int valuelen, const struct ACL_vector *acl, int mode,
                   int64_t ttl, char *path_buffer, int path_buffer_len) {
  return zkr_create2_ttl(z, path, value, valuelen, acl, mode, ttl,
                         path_buffer, path_buffer_len, NULL);
}

int zkr_create2(zkr_t *z, const char *path, const char *value, int valuelen,
                const struct ACL_vector *acl, int mode, char *path_buffer,
                int path_buffer_len, struct Stat *stat) {
  return zkr_create2_ttl(z, path, value, valuelen, acl, mode, -1, path_buffer,
                         path_buffer_len, stat);
}

int zkr_create2_ttl(zkr_t *z, const char *path, const char *value,
                    int valuelen, const struct ACL_vector *acl, int mode,
                    int64_t ttl, char *path_buffer, int path_buffer_len,
                    struct Stat *stat) {
  SYNC_PRELUDE(z);
  w.buf = path_buffer;
  w.buflen = &path_buffer_len;
  w.stat = stat;
  return waiter_wait(&w, create_common(z, path, value, valuelen, acl, mode,
                                       ttl, 1, (void *)sync_string_stat, &w));
}

int zkr_delete(zkr_t *z, const char *path, int version) {
  SYNC_PRELUDE(z);
  return waiter_wait(&w, zkr_adelete(z, path, version, sync_void, &w));
}

int zkr_set(zkr_t *z, const char *path, const char *buffer, int buflen,
            int version) {
  return zkr_set2(z, path, buffer, buflen, version, NULL);
}

int zkr_set2(zkr_t *z, const char *path, const char *buffer, int buflen,
             int version, struct Stat *stat) {
  SYNC_PRELUDE(z);
  w.stat = stat;
  return waiter_wait(&w, zkr_aset(z, path, buffer, buflen, version, sync_stat, &w));
}

int zkr_set_acl(zkr_t *z, const char *path, int version,
                const struct ACL_vector *acl) {
  SYNC_PRELUDE(z);
  return waiter_wait(&w, zkr_aset_acl(z, path, version, (struct ACL_vector *)acl,
                                      sync_void, &w));
}

int zkr_multi(zkr_t *z, int count, const zoo_op_t *ops,
              zoo_op_result_t *results) {
  SYNC_PRELUDE(z);
  return waiter_wait(&w, zkr_amulti(z, count, ops, results, sync_void, &w));
}

int zkr_exists(zkr_t *z, const char *path, int watch, struct Stat *stat) {
  SYNC_PRELUDE(z);
  w.stat = stat;
  return waiter_wait(&w, read_common(z, ZKR__OP_EXISTS, path, watch, NULL,
                                     NULL, (void *)sync_stat, &w));
}

int zkr_wexists(zkr_t *z, const char *path, watcher_fn watcher,
                void *watcherCtx, struct Stat *stat) {
  SYNC_PRELUDE(z);
  w.stat = stat;
  return waiter_wait(&w, read_common(z, ZKR__OP_EXISTS, path, 0, watcher,
                                     watcherCtx, (void *)sync_stat, &w));
}

static int get_common(zkr_t *z, const char *path, int watch,
                      watcher_fn watcher, void *wctx, char *buffer,
                      int *buffer_len, struct Stat *stat) {
  if (!buffer_len || *buffer_len < 0 || (!buffer && *buffer_len > 0))
    return ZBADARGUMENTS;
  SYNC_PRELUDE(z);
  w.buf = buffer;
  w.buflen = buffer_len;
  w.stat = stat;
  return waiter_wait(&w, read_common(z, ZKR__OP_GET, path, watch, watcher,
                                     wctx, (void *)sync_data, &w));
}

int zkr_get(zkr_t *z, const char *path, int watch, char *buffer,
            int *buffer_len, struct Stat *stat) {
  return get_common(z, path, watch, NULL, NULL, buffer, buffer_len, stat);
}

int zkr_wget(zkr_t *z, const char *path, watcher_fn watcher, void *watcherCtx,
             char *buffer, int *buffer_len, struct Stat *stat) {
  return get_common(z, path, 0, watcher, watcherCtx, buffer, buffer_len, stat);
}

static int children_common(zkr_t *z, const char *path, int watch,
                           watcher_fn watcher, void *wctx,
                           struct String_vector *strings, struct Stat *stat) {
  if (!strings) return ZBADARGUMENTS;
  SYNC_PRELUDE(z);
  w.strings = strings;
  w.stat = stat;
  zkr__op_type_t type = stat ? ZKR__OP_GET_CHILDREN2 : ZKR__OP_GET_CHILDREN;
  void *cb = stat ? (void *)sync_strings_stat : (void *)sync_strings;
  return waiter_wait(&w, read_common(z, type, path, watch, watcher, wctx, cb, &w));
}

int zkr_get_children(zkr_t *z, const char *path, int watch,
                     struct String_vector *strings) {
  return children_common(z, path, watch, NULL, NULL, strings, NULL);
}

int zkr_wget_children(zkr_t *z, const char *path, watcher_fn watcher,
                      void *watcherCtx, struct String_vector *strings) {
  return children_common(z, path, 0, watcher, watcherCtx, strings, NULL);
}

int zkr_get_children2(zkr_t *z, const char *path, int watch,
                      struct String_vector *strings, struct Stat *stat) {
  return children_common(z, path, watch, NULL, NULL, strings, stat);
}

int zkr_wget_children2(zkr_t *z, const char *path, watcher_fn watcher,
                       void *watcherCtx, struct String_vector *strings,
                       struct Stat *stat) {
  return children_common(z, path, 0, watcher, watcherCtx, strings, stat);
}

int zkr_get_acl(zkr_t *z, const char *path, struct ACL_vector *acl,
                struct Stat *stat) {
  if (!acl) return ZBADARGUMENTS;
  SYNC_PRELUDE(z);
  w.acl = acl;
  w.stat = stat;
  return waiter_wait(&w, zkr_aget_acl(z, path, sync_acl, &w));
}
