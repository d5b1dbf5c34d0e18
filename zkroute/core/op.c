/* The operation object: one application call (or one internal request)
 * from the API to its completion.  It owns copies of its arguments, so a
 * write the write gate defers needs nothing from the caller, and it knows
 * the shape of its reply (which completion type the application gave).
 * Also the copiers of ZooKeeper's reply types that the delivery thread and
 * the blocking calls share. */
#include <stdlib.h>
#include <string.h>

#include "core/handle.h"
#include "core/hooks.h"
#include "core/watch.h"

static zkr__cb_shape_t shape_of(zkr__op_type_t type) {
  switch (type) {
  case ZKR__OP_CREATE: return ZKR__CB_STRING; /* STRING_STAT for create2 */
  case ZKR__OP_DELETE:
  case ZKR__OP_SET_ACL:
  case ZKR__OP_MULTI: return ZKR__CB_VOID;
  case ZKR__OP_SET:
  case ZKR__OP_EXISTS: return ZKR__CB_STAT;
  case ZKR__OP_GET: return ZKR__CB_DATA;
  case ZKR__OP_GET_CHILDREN: return ZKR__CB_STRINGS;
  case ZKR__OP_GET_CHILDREN2: return ZKR__CB_STRINGS_STAT;
  case ZKR__OP_GET_ACL: return ZKR__CB_ACL;
  case ZKR__OP_SYNC: return ZKR__CB_STRING;
  case ZKR__OP_RECONFIG: return ZKR__CB_DATA;
  }
  return ZKR__CB_VOID;
}

zkr__op_t *zkr__op_new(zkr_t *z, zkr__op_type_t type, const char *path) {
  zkr__op_t *op = calloc(1, sizeof *op);
  if (!op) return NULL;
  op->z = z;
  op->type = type;
  op->shape = shape_of(type);
  op->member = -1;
  op->pin = -1;
  if (path && !(op->path = strdup(path))) {
    free(op);
    return NULL;
  }
  return op;
}

/* EPHEMERAL and EPHEMERAL_SEQUENTIAL.  The TTL modes share the ephemeral
 * bit of the mode word (ZOO_PERSISTENT_WITH_TTL is 5) but are persistent
 * nodes, and containers are persistent too: none of them belongs to a
 * session. */
int zkr__op_mode_ephemeral(int mode) {
  return mode == ZOO_EPHEMERAL || mode == ZOO_EPHEMERAL_SEQUENTIAL;
}

void zkr__op_acl_free(struct ACL_vector *v) {
  for (int i = 0; i < v->count; i++) {
    free(v->data[i].id.scheme);
    free(v->data[i].id.id);
  }
  free(v->data);
  v->data = NULL;
  v->count = 0;
}

/* Deep copy; on failure *dst holds what was copied (free it). */
int zkr__op_acl_copy(struct ACL_vector *dst, const struct ACL_vector *src) {
  dst->count = 0;
  dst->data = NULL;
  if (src->count < 0 || (src->count > 0 && !src->data)) return ZINVALIDACL;
  if (src->count == 0) return ZOK;
  dst->data = calloc((size_t)src->count, sizeof *dst->data);
  if (!dst->data) return ZKR_ENOMEM;
  for (int i = 0; i < src->count; i++) {
    const struct ACL *a = &src->data[i];
    dst->count = i + 1;
    dst->data[i].perms = a->perms;
    if (!a->id.scheme || !a->id.id) return ZINVALIDACL;
    dst->data[i].id.scheme = strdup(a->id.scheme);
    dst->data[i].id.id = strdup(a->id.id);
    if (!dst->data[i].id.scheme || !dst->data[i].id.id) return ZKR_ENOMEM;
  }
  return ZOK;
}

/* Deep copy (malloc'd, as deallocate_String_vector frees); on failure *dst
 * holds what was copied. */
int zkr__op_strings_copy(struct String_vector *dst, const struct String_vector *src) {
  dst->count = 0;
  dst->data = NULL;
  if (!src || src->count <= 0) return ZOK;
  if (!(dst->data = calloc((size_t)src->count, sizeof *dst->data))) return ZKR_ENOMEM;
  for (int i = 0; i < src->count; i++) {
    dst->count = i + 1;
    if (!(dst->data[i] = strdup(src->data[i] ? src->data[i] : ""))) return ZKR_ENOMEM;
  }
  return ZOK;
}

int zkr__op_copy_acl(zkr__op_t *op, const struct ACL_vector *acl) {
  zkr__op_set(op, ZKR__OP_F_HAS_ACL, acl != NULL);
  return acl ? zkr__op_acl_copy(&op->acl, acl) : ZOK;
}

static char *dup_bytes(const char *p, int len) {
  char *d = malloc(len > 0 ? (size_t)len : 1);
  if (d && len > 0) memcpy(d, p, (size_t)len);
  return d;
}

/* Deep-copies the request part of a multi.  Output pointers (create's path
 * buffer, set's Stat) stay the caller's, as with zoo_amulti. */
int zkr__op_copy_multi(zkr__op_t *op, int count, const zoo_op_t *ops) {
  op->multi_ops = calloc((size_t)(count > 0 ? count : 1), sizeof *op->multi_ops);
  if (!op->multi_ops) return ZKR_ENOMEM;
  op->multi_count = count;
  for (int i = 0; i < count; i++) {
    zoo_op_t *d = &op->multi_ops[i];
    const zoo_op_t *s = &ops[i];
    d->type = s->type;
    const char *path = NULL;
    switch (s->type) {
    case ZOO_CREATE_OP:
      d->create_op = s->create_op;
      d->create_op.path = path = s->create_op.path ? strdup(s->create_op.path) : NULL;
      d->create_op.data = NULL;
      d->create_op.acl = NULL;
      if (s->create_op.data && s->create_op.datalen >= 0 &&
          !(d->create_op.data = dup_bytes(s->create_op.data, s->create_op.datalen)))
        return ZKR_ENOMEM;
      if (s->create_op.acl) {
        struct ACL_vector *a = calloc(1, sizeof *a);
        d->create_op.acl = a;
        if (!a) return ZKR_ENOMEM;
        int rc = zkr__op_acl_copy(a, s->create_op.acl);
        if (rc != ZOK) return rc;
      }
      break;
    case ZOO_DELETE_OP:
      d->delete_op = s->delete_op;
      d->delete_op.path = path = s->delete_op.path ? strdup(s->delete_op.path) : NULL;
      break;
    case ZOO_SETDATA_OP:
      d->set_op = s->set_op;
      d->set_op.path = path = s->set_op.path ? strdup(s->set_op.path) : NULL;
      d->set_op.data = NULL;
      if (s->set_op.data && s->set_op.datalen >= 0 &&
          !(d->set_op.data = dup_bytes(s->set_op.data, s->set_op.datalen)))
        return ZKR_ENOMEM;
      break;
    case ZOO_CHECK_OP:
      d->check_op = s->check_op;
      d->check_op.path = path = s->check_op.path ? strdup(s->check_op.path) : NULL;
      break;
    default: return ZBADARGUMENTS;
    }
    if (!path) return ZBADARGUMENTS; /* NULL path, or strdup failed */
  }
  return ZOK;
}

static void free_multi(zkr__op_t *op) {
  for (int i = 0; i < op->multi_count; i++) {
    zoo_op_t *d = &op->multi_ops[i];
    switch (d->type) {
    case ZOO_CREATE_OP:
      free((char *)d->create_op.path);
      free((char *)d->create_op.data);
      if (d->create_op.acl) {
        zkr__op_acl_free((struct ACL_vector *)d->create_op.acl);
        free((struct ACL_vector *)d->create_op.acl);
      }
      break;
    case ZOO_DELETE_OP: free((char *)d->delete_op.path); break;
    case ZOO_SETDATA_OP:
      free((char *)d->set_op.path);
      free((char *)d->set_op.data);
      break;
    case ZOO_CHECK_OP: free((char *)d->check_op.path); break;
    }
  }
  free(op->multi_ops);
}

void zkr__op_free(zkr__op_t *op) {
  if (!op) return;
  if (op->watch && !zkr__op_has(op, ZKR__OP_F_WATCH_REUSED)) {
    /* A remove_all that waits for this read learns it set nothing. */
    zkr__watch_t *w = op->watch;
    int covered = zkr__hooks_cover_held(op->z, w);
    zkr__watch_discard(w);
    if (covered) {
      zkr__hooks_covered(op->z, w);
      zkr__hooks_cover_end(op->z, w);
    }
  } else if (op->watch) {
    zkr__watch_reuse_done(op->watch, 1, 0, -1, NULL, NULL, 0);
  }
  /* A read that set an armed record again, freed without its hand-on:
   * the record's event waits no more. */
  if (op->watch_merged) zkr__watch_merged_handed_on(op->z, op->watch_id);
  /* A covered read freed without its hand-on (a hedge's other request). */
  if (op->cover_w) zkr__hooks_cover_end(op->z, op->cover_w);
  for (int i = 0; i < op->n_inflight; i++) free(op->inflight[i]);
  free(op->inflight);
  free(op->path);
  free(op->value);
  free(op->b_path);
  free(op->joining);
  free(op->leaving);
  free(op->members);
  if (zkr__op_has(op, ZKR__OP_F_HAS_ACL)) zkr__op_acl_free(&op->acl);
  if (op->multi_ops) free_multi(op);
  free(op);
}
