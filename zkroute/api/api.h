/* zkr__api_check_*, for the calls (zkr__api_write_*, zkr__api_read_*): the argument
 * checks, the one-path operation and the hand-over to the router. */
#ifndef ZKR_API_H
#define ZKR_API_H

#include "core/handle.h"
#include "model/path.h"

/* The application's thread.  @locks none. */
int zkr__api_check_handle(zkr_t *z);
/* The application's thread.  @locks none. */
int zkr__api_check_value(const char *value, int valuelen);
/* The application's thread.  @locks none. */
int zkr__api_check_acl(const struct ACL_vector *acl);
/* The bytes an ACL takes in a request, for the size check.
 * The application's thread.  @locks none. */
size_t zkr__api_check_acl_bytes(const struct ACL_vector *acl);
/* ZKR_ETOOBIG for a request over the servers' jute.maxbuffer.
 * The application's thread.  @locks none. */
int zkr__api_check_size(zkr_t *z, size_t path_len, int valuelen, size_t acl);
/* Lists op in the issue order and routes it; on refusal frees it.
 * The application's thread, nothing held.  @locks mon_mu (a kick), order_mu (zkr__barrier_*),
 * then as zkr__router_route; one at a time. */
int zkr__api_check_submit(zkr__op_t *op);
/* An operation on one existing path (delete, set, set_acl, reads), or
 * NULL with *rc the reason.
 * The application's thread.  @locks none. */
zkr__op_t *zkr__api_check_path_op(zkr_t *z, zkr__op_type_t type, const char *path, const void *data,
                                  int direct, int *rc);

/* Exposed for the blocking calls (waiter_wait): each returns ZOK (the
 * completion will run once) or the error (it will not).
 * The application's thread, nothing held.  @locks as zkr__api_check_submit (and zkr__op_free). */
int zkr__api_write_create(struct zkr *z, const char *path, const char *value, int valuelen,
                          const struct ACL_vector *acl, int mode, int64_t ttl, int create2,
                          void *cb, const void *data, int direct);
/* The application's thread, nothing held.  @locks ctx_mu, watch_mu, inflight's mu, one at a
 * time; then as zkr__api_check_submit. */
int zkr__api_read(struct zkr *z, zkr__op_type_t type, const char *path, int watch,
                  watcher_fn watcher, void *wctx, void *cb, const void *data, int direct);
/* As zkr__api_write_create. */
int zkr__api_write_delete(struct zkr *z, const char *path, int version, void_completion_t cb,
                          const void *data, int direct);
/* As zkr__api_write_create. */
int zkr__api_write_set(struct zkr *z, const char *path, const char *buffer, int buflen, int version,
                       stat_completion_t cb, const void *data, int direct);
/* As zkr__api_write_create. */
int zkr__api_write_set_acl(struct zkr *z, const char *path, int version, struct ACL_vector *acl,
                           void_completion_t cb, const void *data, int direct);
/* As zkr__api_write_create. */
int zkr__api_write_multi(struct zkr *z, int count, const zoo_op_t *ops, zoo_op_result_t *results,
                         void_completion_t cb, const void *data, int direct);
/* As zkr__api_write_create. */
int zkr__api_write_reconfig(struct zkr *z, const char *joining, const char *leaving,
                            const char *members, int64_t version, data_completion_t cb,
                            const void *data, int direct);

#endif
