/* The zkr_ mirrors of the asynchronous zoo_ reads: exists, get,
 * get_children(2), get_acl (each with the global watcher or an explicit
 * one) and zkr_async, the barrier - checked (zkr__api_check_*), built into an
 * operation and handed to the router. */
#include <stdlib.h>
#include <string.h>

#include "api/api.h"
#include "core/handle.h"
#include "model/inflight.h"
#include "core/policy.h"
#include "core/registry.h"
#include "core/watch.h"

/* ---- reads ---- */

/* A member a watch read may be pinned to: not behind the handle's epoch
 * (core/policy.h). */
static int pin_current(zkr_t *z, int member) {
  return zkr__policy_epoch_current(z, &z->members[member]);
}

/* watch: 0 none, 1 the global watcher; or an explicit watcher. */
static int read_held(zkr_t *z, zkr__op_type_t type, const char *path, int watch, watcher_fn watcher,
                     void *wctx, void *cb, const void *data, int direct) {
  int rc;
  zkr__op_t *op = zkr__api_check_path_op(z, type, path, data, direct, &rc);
  if (!op) return rc;
  op->read_seq = atomic_fetch_add(&z->read_seqs, 1) + 1;
  op->cb.v = (void_completion_t)cb; /* all members of the union are pointers */
  /* zkr_async: its completion comes after those of everything issued
   * before it (zkr__barrier_*). */
  zkr__op_set(op, ZKR__OP_F_BARRIER, type == ZKR__OP_SYNC);
  if (watch || watcher) {
    int kind = zkr__watch_kind_of(type);
    /* The same watch set again (same path, kind, watcher and context) is
     * the same registration, as in ZooKeeper, which fires it once: the
     * read goes to the member that holds it, with the same record, and
     * ZooKeeper merges the two.  Not while a write of this handle to the
     * path is in flight: read-your-writes sends that read to the write
     * session (zkr__router_*), where a second registration it must be. */
    int armed_on = -1;
    zkr__watch_t *old = NULL;
    zkr__watch_pair(z, &watcher, &wctx);
    int (*pin_ok)(zkr_t *, int) = zkr__inflight_contains(z->inflight, path) ? NULL : pin_current;
    if ((op->watch = zkr__watch_find(z, kind, path, watcher, wctx, pin_ok, &armed_on, &old))) {
      zkr__op_set(op, ZKR__OP_F_WATCH_REUSED, 1);
      op->pin = armed_on;
    } else if (!(op->watch = zkr__watch_new(z, watcher, wctx, kind, path))) {
      if (old) zkr__watch_reuse_done(old, 0, 0, -1, NULL, NULL, 0);
      zkr__op_free(op);
      return ZKR_ENOMEM;
    } else {
      /* A new registration; one of the same pair that its member cannot
       * take now (or that this read, ordered behind a write to the path,
       * may not go to) is superseded once this read armed it. */
      op->watch->supersedes = old;
    }
  }
  return zkr__api_check_submit(op);
}

int zkr__api_read(zkr_t *z, zkr__op_type_t type, const char *path, int watch, watcher_fn watcher,
                  void *wctx, void *cb, const void *data, int direct) {
  ZKR__HELD(z, read_held(z, type, path, watch, watcher, wctx, cb, data, direct));
}

static int read_common(zkr_t *z, zkr__op_type_t type, const char *path, int watch,
                       watcher_fn watcher, void *wctx, void *cb, const void *data) {
  return zkr__api_read(z, type, path, watch, watcher, wctx, cb, data, 0);
}

int zkr_aexists(zkr_t *z, const char *path, int watch, stat_completion_t completion,
                const void *data) {
  return read_common(z, ZKR__OP_EXISTS, path, watch, NULL, NULL, (void *)completion, data);
}

int zkr_awexists(zkr_t *z, const char *path, watcher_fn watcher, void *watcherCtx,
                 stat_completion_t completion, const void *data) {
  return read_common(z, ZKR__OP_EXISTS, path, 0, watcher, watcherCtx, (void *)completion, data);
}

int zkr_aget(zkr_t *z, const char *path, int watch, data_completion_t completion,
             const void *data) {
  return read_common(z, ZKR__OP_GET, path, watch, NULL, NULL, (void *)completion, data);
}

int zkr_awget(zkr_t *z, const char *path, watcher_fn watcher, void *watcherCtx,
              data_completion_t completion, const void *data) {
  return read_common(z, ZKR__OP_GET, path, 0, watcher, watcherCtx, (void *)completion, data);
}

int zkr_aget_children(zkr_t *z, const char *path, int watch, strings_completion_t completion,
                      const void *data) {
  return read_common(z, ZKR__OP_GET_CHILDREN, path, watch, NULL, NULL, (void *)completion, data);
}

int zkr_awget_children(zkr_t *z, const char *path, watcher_fn watcher, void *watcherCtx,
                       strings_completion_t completion, const void *data) {
  return read_common(z, ZKR__OP_GET_CHILDREN, path, 0, watcher, watcherCtx, (void *)completion,
                     data);
}

int zkr_aget_children2(zkr_t *z, const char *path, int watch, strings_stat_completion_t completion,
                       const void *data) {
  return read_common(z, ZKR__OP_GET_CHILDREN2, path, watch, NULL, NULL, (void *)completion, data);
}

int zkr_awget_children2(zkr_t *z, const char *path, watcher_fn watcher, void *watcherCtx,
                        strings_stat_completion_t completion, const void *data) {
  return read_common(z, ZKR__OP_GET_CHILDREN2, path, 0, watcher, watcherCtx, (void *)completion,
                     data);
}

int zkr_aget_acl(zkr_t *z, const char *path, acl_completion_t completion, const void *data) {
  return read_common(z, ZKR__OP_GET_ACL, path, 0, NULL, NULL, (void *)completion, data);
}

int zkr_async(zkr_t *z, const char *path, string_completion_t completion, const void *data) {
  return read_common(z, ZKR__OP_SYNC, path, 0, NULL, NULL, (void *)completion, data);
}
