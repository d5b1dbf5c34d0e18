/* The zkr_ mirrors of the asynchronous zoo_ writes: create (plain, TTL,
 * with stat), delete, set, set_acl, multi and reconfig - checked
 * (zkr__api_check_*), built into an operation and handed to the router.  The
 * _held forms take a `direct` flag: the blocking calls (waiter_wait) complete
 * on the caller's waiter instead of the delivery thread. */
#include <stdlib.h>
#include <string.h>

#include "api/api.h"
#include "core/handle.h"
#include "core/registry.h"

/* ---- writes ---- */

static int create_held(zkr_t *z, const char *path, const char *value, int valuelen,
                       const struct ACL_vector *acl, int mode, int64_t ttl, int create2, void *cb,
                       const void *data, int direct) {
  int rc = zkr__api_check_handle(z);
  if (rc == ZOK) rc = zkr__path_check_mode(path, mode & ZOO_SEQUENCE);
  if (rc == ZOK) rc = zkr__api_check_value(value, valuelen);
  if (rc == ZOK) rc = zkr__api_check_acl(acl);
  if (rc == ZOK) rc = zkr__api_check_size(z, strlen(path), valuelen, zkr__api_check_acl_bytes(acl));
  if (rc != ZOK) return rc;
  zkr__op_t *op = zkr__op_new(z, ZKR__OP_CREATE, path);
  if (!op) return ZKR_ENOMEM;
  zkr__op_set(op, ZKR__OP_F_WRITE, 1);
  zkr__op_set(op, ZKR__OP_F_OWNER, zkr__op_mode_ephemeral(mode));
  op->mode = mode;
  op->ttl = ttl;
  zkr__op_set(op, ZKR__OP_F_CREATE2, create2);
  op->valuelen = valuelen;
  op->data = data;
  zkr__op_set(op, ZKR__OP_F_DIRECT, direct);
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
  return zkr__api_check_submit(op);
}

int zkr__api_write_create(zkr_t *z, const char *path, const char *value, int valuelen,
                          const struct ACL_vector *acl, int mode, int64_t ttl, int create2,
                          void *cb, const void *data, int direct) {
  ZKR__HELD(z, create_held(z, path, value, valuelen, acl, mode, ttl, create2, cb, data, direct));
}

static int create_common(zkr_t *z, const char *path, const char *value, int valuelen,
                         const struct ACL_vector *acl, int mode, int64_t ttl, int create2, void *cb,
                         const void *data) {
  return zkr__api_write_create(z, path, value, valuelen, acl, mode, ttl, create2, cb, data, 0);
}

int zkr_acreate(zkr_t *z, const char *path, const char *value, int valuelen,
                const struct ACL_vector *acl, int mode, string_completion_t completion,
                const void *data) {
  return create_common(z, path, value, valuelen, acl, mode, -1, 0, (void *)completion, data);
}

int zkr_acreate_ttl(zkr_t *z, const char *path, const char *value, int valuelen,
                    const struct ACL_vector *acl, int mode, int64_t ttl,
                    string_completion_t completion, const void *data) {
  return create_common(z, path, value, valuelen, acl, mode, ttl, 0, (void *)completion, data);
}

int zkr_acreate2(zkr_t *z, const char *path, const char *value, int valuelen,
                 const struct ACL_vector *acl, int mode, string_stat_completion_t completion,
                 const void *data) {
  return create_common(z, path, value, valuelen, acl, mode, -1, 1, (void *)completion, data);
}

int zkr_acreate2_ttl(zkr_t *z, const char *path, const char *value, int valuelen,
                     const struct ACL_vector *acl, int mode, int64_t ttl,
                     string_stat_completion_t completion, const void *data) {
  return create_common(z, path, value, valuelen, acl, mode, ttl, 1, (void *)completion, data);
}
static int adelete_held(zkr_t *z, const char *path, int version, void_completion_t completion,
                        const void *data, int direct) {
  int rc;
  zkr__op_t *op = zkr__api_check_path_op(z, ZKR__OP_DELETE, path, data, direct, &rc);
  if (!op) return rc;
  zkr__op_set(op, ZKR__OP_F_WRITE, 1);
  op->version = version;
  op->cb.v = completion;
  return zkr__api_check_submit(op);
}

int zkr__api_write_delete(zkr_t *z, const char *path, int version, void_completion_t cb,
                          const void *data, int direct) {
  ZKR__HELD(z, adelete_held(z, path, version, cb, data, direct));
}

int zkr_adelete(zkr_t *z, const char *path, int version, void_completion_t completion,
                const void *data) {
  return zkr__api_write_delete(z, path, version, completion, data, 0);
}

static int aset_held(zkr_t *z, const char *path, const char *buffer, int buflen, int version,
                     stat_completion_t completion, const void *data, int direct) {
  int rc = zkr__api_check_value(buffer, buflen);
  if (rc == ZOK && path) rc = zkr__api_check_size(z, strlen(path), buflen, 0);
  if (rc != ZOK) return rc;
  zkr__op_t *op = zkr__api_check_path_op(z, ZKR__OP_SET, path, data, direct, &rc);
  if (!op) return rc;
  zkr__op_set(op, ZKR__OP_F_WRITE, 1);
  op->version = version;
  op->valuelen = buflen;
  op->cb.stat = completion;
  if (buffer && !(op->value = malloc(buflen > 0 ? (size_t)buflen : 1))) {
    zkr__op_free(op);
    return ZKR_ENOMEM;
  }
  if (buffer && buflen > 0) memcpy(op->value, buffer, (size_t)buflen);
  return zkr__api_check_submit(op);
}

int zkr__api_write_set(zkr_t *z, const char *path, const char *buffer, int buflen, int version,
                       stat_completion_t cb, const void *data, int direct) {
  ZKR__HELD(z, aset_held(z, path, buffer, buflen, version, cb, data, direct));
}

int zkr_aset(zkr_t *z, const char *path, const char *buffer, int buflen, int version,
             stat_completion_t completion, const void *data) {
  return zkr__api_write_set(z, path, buffer, buflen, version, completion, data, 0);
}

static int aset_acl_held(zkr_t *z, const char *path, int version, struct ACL_vector *acl,
                         void_completion_t completion, const void *data, int direct) {
  int rc = zkr__api_check_acl(acl);
  if (rc != ZOK) return rc;
  zkr__op_t *op = zkr__api_check_path_op(z, ZKR__OP_SET_ACL, path, data, direct, &rc);
  if (!op) return rc;
  zkr__op_set(op, ZKR__OP_F_WRITE, 1);
  op->version = version;
  op->cb.v = completion;
  if ((rc = zkr__op_copy_acl(op, acl)) != ZOK) {
    zkr__op_free(op);
    return rc;
  }
  return zkr__api_check_submit(op);
}

int zkr__api_write_set_acl(zkr_t *z, const char *path, int version, struct ACL_vector *acl,
                           void_completion_t cb, const void *data, int direct) {
  ZKR__HELD(z, aset_acl_held(z, path, version, acl, cb, data, direct));
}

int zkr_aset_acl(zkr_t *z, const char *path, int version, struct ACL_vector *acl,
                 void_completion_t completion, const void *data) {
  return zkr__api_write_set_acl(z, path, version, acl, completion, data, 0);
}

static int amulti_held(zkr_t *z, int count, const zoo_op_t *ops, zoo_op_result_t *results,
                       void_completion_t completion, const void *data, int direct) {
  int rc = zkr__api_check_handle(z);
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
      rc = zkr__path_check_mode(o->create_op.path, o->create_op.flags & ZOO_SEQUENCE);
      if (rc == ZOK) rc = zkr__api_check_value(o->create_op.data, o->create_op.datalen);
      if (rc == ZOK) rc = zkr__api_check_acl(o->create_op.acl);
      if (rc == ZOK)
        bytes += 9 + 4 + strlen(o->create_op.path) + 4 +
                 (size_t)(o->create_op.datalen > 0 ? o->create_op.datalen : 0) +
                 zkr__api_check_acl_bytes(o->create_op.acl) + 4 /* flags */;
      writes++;
      ephemeral |= zkr__op_mode_ephemeral(o->create_op.flags);
      break;
    case ZOO_DELETE_OP:
      rc = zkr__path_check(o->delete_op.path);
      if (rc == ZOK) bytes += 9 + 4 + strlen(o->delete_op.path) + 4 /* version */;
      writes++;
      break;
    case ZOO_SETDATA_OP:
      rc = zkr__path_check(o->set_op.path);
      if (rc == ZOK) rc = zkr__api_check_value(o->set_op.data, o->set_op.datalen);
      if (rc == ZOK)
        bytes += 9 + 4 + strlen(o->set_op.path) + 4 +
                 (size_t)(o->set_op.datalen > 0 ? o->set_op.datalen : 0) + 4 /* version */;
      writes++;
      break;
    case ZOO_CHECK_OP:
      rc = zkr__path_check(o->check_op.path);
      if (rc == ZOK) bytes += 9 + 4 + strlen(o->check_op.path) + 4 /* version */;
      break;
    default: rc = ZBADARGUMENTS;
    }
    if (rc != ZOK) return rc;
  }
  if ((rc = zkr__api_check_size(z, bytes, 0, 0)) != ZOK) return rc;
  zkr__op_t *op = zkr__op_new(z, ZKR__OP_MULTI, NULL);
  if (!op) return ZKR_ENOMEM;
  zkr__op_set(op, ZKR__OP_F_WRITE, writes > 0);
  /* A multi that creates an ephemeral node is session-scoped as a whole. */
  zkr__op_set(op, ZKR__OP_F_OWNER, ephemeral);
  op->multi_results = results;
  op->cb.v = completion;
  op->data = data;
  zkr__op_set(op, ZKR__OP_F_DIRECT, direct);
  if ((rc = zkr__op_copy_multi(op, count, ops)) != ZOK) {
    zkr__op_free(op);
    return rc;
  }
  return zkr__api_check_submit(op);
}

int zkr__api_write_multi(zkr_t *z, int count, const zoo_op_t *ops, zoo_op_result_t *results,
                         void_completion_t cb, const void *data, int direct) {
  ZKR__HELD(z, amulti_held(z, count, ops, results, cb, data, direct));
}

int zkr_amulti(zkr_t *z, int count, const zoo_op_t *ops, zoo_op_result_t *results,
               void_completion_t completion, const void *data) {
  return zkr__api_write_multi(z, count, ops, results, completion, data, 0);
}

/* ---- reconfiguration: a write to the leader ---- */

static char *dup_or_null(const char *s, int *rc) {
  if (!s) return NULL;
  char *d = strdup(s);
  if (!d) *rc = ZKR_ENOMEM;
  return d;
}

static int reconfig_held(zkr_t *z, const char *joining, const char *leaving, const char *members,
                         int64_t version, data_completion_t cb, const void *data, int direct) {
  int rc = zkr__api_check_handle(z);
  if (rc != ZOK) return rc;
  if (!joining && !leaving && !members) return ZBADARGUMENTS;
  zkr__op_t *op = zkr__op_new(z, ZKR__OP_RECONFIG, "/zookeeper/config");
  if (!op) return ZKR_ENOMEM;
  zkr__op_set(op, ZKR__OP_F_WRITE, 1);
  op->ttl = version; /* the config version it must apply to */
  op->cb.data = cb;
  op->data = data;
  zkr__op_set(op, ZKR__OP_F_DIRECT, direct);
  op->joining = dup_or_null(joining, &rc);
  op->leaving = dup_or_null(leaving, &rc);
  op->members = dup_or_null(members, &rc);
  if (rc != ZOK) {
    zkr__op_free(op);
    return rc;
  }
  return zkr__api_check_submit(op);
}

int zkr__api_write_reconfig(zkr_t *z, const char *joining, const char *leaving, const char *members,
                            int64_t version, data_completion_t cb, const void *data, int direct) {
  ZKR__HELD(z, reconfig_held(z, joining, leaving, members, version, cb, data, direct));
}

int zkr_areconfig(zkr_t *z, const char *joining, const char *leaving, const char *members,
                  int64_t version, data_completion_t completion, const void *data) {
  return zkr__api_write_reconfig(z, joining, leaving, members, version, completion, data, 0);
}
