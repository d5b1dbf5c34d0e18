/* The zkr_ mirrors of the asynchronous zoo_ calls: argument checks (path,
 * value size, ACL), building the operation, listing it in the issue order
 * and handing it to the router.  The blocking calls (waiter.c) are these
 * plus a waiter, so both share one routing, ordering, statistics and close
 * path. */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

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
 * header, path, value and ACL against the servers' jute.maxbuffer (the
 * jute_maxbuffer option, 1048575 bytes by default), before anything is
 * sent, so the member is not marked unhealthy for the caller's mistake. */
static int check_size(zkr_t *z, size_t path_len, int valuelen, size_t acl) {
  size_t total = 8 + 4 + path_len + 4 + (size_t)(valuelen > 0 ? valuelen : 0) +
                 acl + 4 + 8 + 64;
  size_t limit = z && z->opts.jute_maxbuffer > 0 ? (size_t)z->opts.jute_maxbuffer : 1048575;
  return total > limit ? ZKR_ETOOBIG : ZOK;
}

/* Every application operation enters the issue order (barrier.c) before
 * it can complete, and leaves it if the router refuses it. */
static int submit(zkr__op_t *op) {
  zkr__order_add(op);
  int rc = zkr__route(op);
  if (rc != ZOK) {
    zkr__order_cancel(op);
    zkr__op_free(op);
  }
  return rc;
}

/* ---- writes ---- */

static int create_held(zkr_t *z, const char *path, const char *value,
                       int valuelen, const struct ACL_vector *acl, int mode,
                       int64_t ttl, int create2, void *cb, const void *data,
                       int direct) {
  int rc = check_handle(z);
  if (rc == ZOK) rc = check_path_mode(path, mode & ZOO_SEQUENCE);
  if (rc == ZOK) rc = check_value(value, valuelen);
  if (rc == ZOK) rc = check_acl(acl);
  if (rc == ZOK) rc = check_size(z, strlen(path), valuelen, acl_bytes(acl));
  if (rc != ZOK) return rc;
  zkr__op_t *op = zkr__op_new(z, ZKR__OP_CREATE, path);
  if (!op) return ZKR_ENOMEM;
  op->is_write = 1;
  op->owner_op = zkr__mode_ephemeral(mode);
  op->mode = mode;
  op->ttl = ttl;
  op->create2 = create2;
  op->valuelen = valuelen;
  op->data = data;
  op->direct = direct;
  if (create2) {
    op->shape = ZKR__CB_STRING_STAT;
    op->cb.string_stat = (string_stat_completion_t)cb;
  } else {
    op->cb.string = (string_completion_t)cb;
  }
  if ((value && !(op->value = malloc(valuelen > 0 ? (size_t)valuelen : 1))) ||
      (rc = zkr__op_copy_acl(op, acl)) != ZOK) {
    zkr__op_free(op);
    return rc != ZOK ? rc : ZKR_ENOMEM;
  }
  if (value && valuelen > 0) memcpy(op->value, value, (size_t)valuelen);
  return submit(op);
}

int zkr__create(zkr_t *z, const char *path, const char *value, int valuelen,
                const struct ACL_vector *acl, int mode, int64_t ttl, int create2,
                void *cb, const void *data, int direct) {
  ZKR__HELD(z, create_held(z, path, value, valuelen, acl, mode, ttl, create2,
                           cb, data, direct));
}

static int create_common(zkr_t *z, const char *path, const char *value,
                         int valuelen, const struct ACL_vector *acl, int mode,
                         int64_t ttl, int create2, void *cb, const void *data) {
  return zkr__create(z, path, value, valuelen, acl, mode, ttl, create2, cb, data, 0);
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
                          const void *data, int direct, int *rc) {
  if ((*rc = check_handle(z)) != ZOK || (*rc = zkr__check_path(path)) != ZOK)
    return NULL;
  zkr__op_t *op = zkr__op_new(z, type, path);
  if (!op) {
    *rc = ZKR_ENOMEM;
  } else {
    op->data = data;
    op->direct = direct;
  }
  return op;
}

static int adelete_held(zkr_t *z, const char *path, int version,
                        void_completion_t completion, const void *data,
                        int direct) {
  int rc;
  zkr__op_t *op = path_op(z, ZKR__OP_DELETE, path, data, direct, &rc);
  if (!op) return rc;
  op->is_write = 1;
  op->version = version;
  op->cb.v = completion;
  return submit(op);
}

int zkr__delete(zkr_t *z, const char *path, int version,
                void_completion_t cb, const void *data, int direct) {
  ZKR__HELD(z, adelete_held(z, path, version, cb, data, direct));
}

int zkr_adelete(zkr_t *z, const char *path, int version,
                void_completion_t completion, const void *data) {
  return zkr__delete(z, path, version, completion, data, 0);
}

static int aset_held(zkr_t *z, const char *path, const char *buffer,
                     int buflen, int version, stat_completion_t completion,
                     const void *data, int direct) {
  int rc = check_value(buffer, buflen);
  if (rc == ZOK && path) rc = check_size(z, strlen(path), buflen, 0);
  if (rc != ZOK) return rc;
  zkr__op_t *op = path_op(z, ZKR__OP_SET, path, data, direct, &rc);
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

int zkr__set(zkr_t *z, const char *path, const char *buffer, int buflen,
             int version, stat_completion_t cb, const void *data, int direct) {
  ZKR__HELD(z, aset_held(z, path, buffer, buflen, version, cb, data, direct));
}

int zkr_aset(zkr_t *z, const char *path, const char *buffer, int buflen,
             int version, stat_completion_t completion, const void *data) {
  return zkr__set(z, path, buffer, buflen, version, completion, data, 0);
}

static int aset_acl_held(zkr_t *z, const char *path, int version,
                         struct ACL_vector *acl, void_completion_t completion,
                         const void *data, int direct) {
  int rc = check_acl(acl);
  if (rc != ZOK) return rc;
  zkr__op_t *op = path_op(z, ZKR__OP_SET_ACL, path, data, direct, &rc);
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

int zkr__set_acl(zkr_t *z, const char *path, int version,
                 struct ACL_vector *acl, void_completion_t cb, const void *data,
                 int direct) {
  ZKR__HELD(z, aset_acl_held(z, path, version, acl, cb, data, direct));
}

int zkr_aset_acl(zkr_t *z, const char *path, int version,
                 struct ACL_vector *acl, void_completion_t completion,
                 const void *data) {
  return zkr__set_acl(z, path, version, acl, completion, data, 0);
}

static int amulti_held(zkr_t *z, int count, const zoo_op_t *ops,
                       zoo_op_result_t *results, void_completion_t completion,
                       const void *data, int direct) {
  int rc = check_handle(z);
  if (rc != ZOK) return rc;
  if (count < 0 || (count > 0 && (!ops || !results))) return ZBADARGUMENTS;
  /* Each operation's encoded size, exactly: a multi header (type, done,
   * err: 9 bytes), then the request (strings and buffers carry a 4-byte
   * length).  Many small operations add up: estimates low by even one
   * byte per operation let a multi past the server's limit. */
  size_t bytes = 0;
  int writes = 0, ephemeral = 0;
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
      ephemeral |= zkr__mode_ephemeral(o->create_op.flags);
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
  if ((rc = check_size(z, bytes, 0, 0)) != ZOK) return rc;
  zkr__op_t *op = zkr__op_new(z, ZKR__OP_MULTI, NULL);
  if (!op) return ZKR_ENOMEM;
  op->is_write = writes > 0;
  /* A multi that creates an ephemeral node is session-scoped as a whole. */
  op->owner_op = ephemeral;
  op->multi_results = results;
  op->cb.v = completion;
  op->data = data;
  op->direct = direct;
  if ((rc = zkr__op_copy_multi(op, count, ops)) != ZOK) {
    zkr__op_free(op);
    return rc;
  }
  return submit(op);
}

int zkr__multi(zkr_t *z, int count, const zoo_op_t *ops,
               zoo_op_result_t *results, void_completion_t cb,
               const void *data, int direct) {
  ZKR__HELD(z, amulti_held(z, count, ops, results, cb, data, direct));
}

int zkr_amulti(zkr_t *z, int count, const zoo_op_t *ops,
               zoo_op_result_t *results, void_completion_t completion,
               const void *data) {
  return zkr__multi(z, count, ops, results, completion, data, 0);
}

/* ---- reconfiguration: a write to the leader ---- */

static char *dup_or_null(const char *s, int *rc) {
  if (!s) return NULL;
  char *d = strdup(s);
  if (!d) *rc = ZKR_ENOMEM;
  return d;
}

static int reconfig_held(zkr_t *z, const char *joining, const char *leaving,
                         const char *members, int64_t version, data_completion_t cb,
                         const void *data, int direct) {
  int rc = check_handle(z);
  if (rc != ZOK) return rc;
  if (!joining && !leaving && !members) return ZBADARGUMENTS;
  zkr__op_t *op = zkr__op_new(z, ZKR__OP_RECONFIG, "/zookeeper/config");
  if (!op) return ZKR_ENOMEM;
  op->is_write = 1;
  op->ttl = version; /* the config version it must apply to */
  op->cb.data = cb;
  op->data = data;
  op->direct = direct;
  op->joining = dup_or_null(joining, &rc);
  op->leaving = dup_or_null(leaving, &rc);
  op->members = dup_or_null(members, &rc);
  if (rc != ZOK) {
    zkr__op_free(op);
    return rc;
  }
  return submit(op);
}

int zkr__reconfig(zkr_t *z, const char *joining, const char *leaving,
                  const char *members, int64_t version, data_completion_t cb,
                  const void *data, int direct) {
  ZKR__HELD(z, reconfig_held(z, joining, leaving, members, version, cb, data, direct));
}

int zkr_areconfig(zkr_t *z, const char *joining, const char *leaving,
                  const char *members, int64_t version, data_completion_t completion,
                  const void *data) {
  return zkr__reconfig(z, joining, leaving, members, version, completion, data, 0);
}

/* ---- reads ---- */

/* watch: 0 none, 1 the global watcher; or an explicit watcher. */
static int read_held(zkr_t *z, zkr__op_type_t type, const char *path,
                     int watch, watcher_fn watcher, void *wctx, void *cb,
                     const void *data, int direct) {
  int rc;
  zkr__op_t *op = path_op(z, type, path, data, direct, &rc);
  if (!op) return rc;
  op->cb.v = (void_completion_t)cb; /* all members of the union are pointers */
  /* zkr_async: its completion comes after those of everything issued
   * before it (barrier.c). */
  op->barrier = type == ZKR__OP_SYNC;
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

int zkr__read(zkr_t *z, zkr__op_type_t type, const char *path, int watch,
              watcher_fn watcher, void *wctx, void *cb, const void *data,
              int direct) {
  ZKR__HELD(z, read_held(z, type, path, watch, watcher, wctx, cb, data, direct));
}

static int read_common(zkr_t *z, zkr__op_type_t type, const char *path,
                       int watch, watcher_fn watcher, void *wctx, void *cb,
                       const void *data) {
  return zkr__read(z, type, path, watch, watcher, wctx, cb, data, 0);
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

