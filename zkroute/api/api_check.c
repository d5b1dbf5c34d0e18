/* The checks every zkr_ call makes before anything is built (handle,
 * path, value, ACL, request size), the one-path operation they share, and
 * the hand-over to the router through the issue order.  zkr__api_write_* and
 * zkr__api_read_* are the calls; the blocking calls (waiter_wait) are those plus a
 * waiter, so both share one routing, ordering, statistics and close path. */
#include <stdlib.h>
#include <string.h>

#include "api/api.h"
#include "route/barrier.h"
#include "core/handle.h"
#include "core/kick.h"
#include "route/router.h"

/* ---- checks ---- */

int zkr__api_check_handle(zkr_t *z) {
  if (!z) return ZBADARGUMENTS;
  if (z->closing) return ZKR_ECLOSING;
  if (z->expired || z->auth_failed) return ZINVALIDSTATE;
  return ZOK;
}

int zkr__api_check_value(const char *value, int valuelen) {
  if (valuelen > 0 && !value) return ZBADARGUMENTS;
  if (valuelen < -1 || (valuelen < 0 && value)) return ZBADARGUMENTS;
  return ZOK;
}

size_t zkr__api_check_acl_bytes(const struct ACL_vector *acl) {
  size_t n = 4;
  for (int i = 0; acl && i < acl->count; i++)
    n += 4 + 4 + strlen(acl->data[i].id.scheme) + 4 + strlen(acl->data[i].id.id);
  return n;
}

/* An ACL that cannot be sent (a negative count, entries missing, an entry
 * without scheme or id).  NULL and empty ones are sent, as stock sends
 * them (an empty list), and the server answers ZINVALIDACL. */
int zkr__api_check_acl(const struct ACL_vector *acl) {
  if (!acl) return ZOK;
  if (acl->count < 0 || (acl->count > 0 && !acl->data)) return ZINVALIDACL;
  for (int i = 0; i < acl->count; i++)
    if (!acl->data[i].id.scheme || !acl->data[i].id.id) return ZINVALIDACL;
  return ZOK;
}

/* Rejects a request the server would refuse by dropping the connection:
 * header, path, value and ACL against the servers' jute.maxbuffer (the
 * jute_maxbuffer option, 1048575 bytes by default), before anything is
 * sent, so the member is not marked unhealthy for the caller's mistake. */
int zkr__api_check_size(zkr_t *z, size_t path_len, int valuelen, size_t acl) {
  size_t total = 8 + 4 + path_len + 4 + (size_t)(valuelen > 0 ? valuelen : 0) + acl + 4 + 8 + 64;
  size_t limit = z && z->opts.jute_maxbuffer > 0 ? (size_t)z->opts.jute_maxbuffer : 1048575;
  return total > limit ? ZKR_ETOOBIG : ZOK;
}

/* Every application operation enters the issue order (zkr__barrier_*) before
 * it can complete, and leaves it if the router refuses it. */
int zkr__api_check_submit(zkr__op_t *op) {
  zkr_t *z = op->z;
  z->app_ops++;
  /* The monitor polls slowly while idle: the first operation after an
   * idle spell has it poll now, so the leader and the members' state are
   * fresh again within one poll. */
  if (z->poll_idle && atomic_exchange(&z->poll_idle, 0)) zkr__kick_monitor(z);
  zkr__barrier_add(op);
  int rc = zkr__router_route(op);
  if (rc != ZOK) {
    zkr__barrier_cancel(op);
    zkr__op_free(op);
  }
  return rc;
}

/* An operation on one existing path: delete, set, set_acl and all reads. */
zkr__op_t *zkr__api_check_path_op(zkr_t *z, zkr__op_type_t type, const char *path, const void *data,
                                  int direct, int *rc) {
  if ((*rc = zkr__api_check_handle(z)) != ZOK || (*rc = zkr__path_check(path)) != ZOK) return NULL;
  zkr__op_t *op = zkr__op_new(z, type, path);
  if (!op) {
    *rc = ZKR_ENOMEM;
  } else {
    op->data = data;
    zkr__op_set(op, ZKR__OP_F_DIRECT, direct);
  }
  return op;
}
