/* api_check.c, for the calls (api_write.c, api_read.c): the argument
 * checks, the one-path operation and the hand-over to the router. */
#ifndef ZKR_API_H
#define ZKR_API_H

#include "internal.h"

int zkr__api_check_handle(zkr_t *z);
/* ZooKeeper's path rules; a sequential create's prefix may end in '/'. */
int zkr__api_check_path_mode(const char *path, int sequential);
int zkr__api_check_value(const char *value, int valuelen);
int zkr__api_check_acl(const struct ACL_vector *acl);
/* The bytes an ACL takes in a request, for the size check. */
size_t zkr__api_acl_bytes(const struct ACL_vector *acl);
/* ZKR_ETOOBIG for a request over the servers' jute.maxbuffer. */
int zkr__api_check_size(zkr_t *z, size_t path_len, int valuelen, size_t acl);
/* Lists op in the issue order and routes it; on refusal frees it. */
int zkr__api_submit(zkr__op_t *op);
/* An operation on one existing path (delete, set, set_acl, reads), or
 * NULL with *rc the reason. */
zkr__op_t *zkr__api_path_op(zkr_t *z, zkr__op_type_t type, const char *path,
                            const void *data, int direct, int *rc);

#endif
