/* <zkroute/compat.h>: route an existing ZooKeeper program by adding one
 * include and linking -lzkroute (docs/dropin.md).
 *
 *   #include <zookeeper/zookeeper.h>   (optional: this header includes it)
 *   #include <zkroute/compat.h>
 *
 * Every zookeeper_init, zookeeper_close and zoo_* call that follows becomes
 * the zkr_ call it mirrors.  The program keeps its zhandle_t pointers: they
 * are routed handles in disguise (zkr_as_zh), and watchers receive the same
 * pointer the program holds.  Options come from the environment as for the
 * LD_PRELOAD interposer (ZKROUTE_POLICY, ZKROUTE_<OPTION>, ZKROUTE_STATS).
 * With ZKROUTE=off, zookeeper_init gives a plain libzookeeper_mt handle
 * (zkr_compat_init) and every call on it goes to the real zoo_ function
 * (each adapter asks zkr_compat_routed): a true pass-through.
 *
 * How: each name is a macro for a static inline adapter, so calls, and
 * function pointers taken of zoo_ functions, both reach zkroute.  Include
 * this header in every file that uses the handle: a file compiled without
 * it would hand a routed handle to the real libzookeeper_mt.  Functions
 * that take no handle (zoo_set_debug_level, zoo_set_log_stream,
 * zoo_deterministic_conn_order, zoo_*_op_init) stay ZooKeeper's.
 *
 * Differences, each documented in docs/dropin.md: zkroute's own error codes
 * (-1000 and below; zerror() here is zkr_strerror() and names them); the
 * log callback of zookeeper_init2/zoo_set_log_callback is not used (member
 * sessions log to ZooKeeper's log stream); zookeeper_interest/process (the
 * single-threaded event loop) return ZUNIMPLEMENTED; zoo_set_servers is a
 * membership change of the virtual session, zoo_get_current_server and
 * zookeeper_get_connected_host name the owner session's server. */
#ifndef ZKROUTE_COMPAT_H
#define ZKROUTE_COMPAT_H

#include <errno.h>

#include "../zkroute.h"

/* zkroute serves libzookeeper_mt programs: built with THREADED, which also
 * declares the synchronous calls this header hands plain handles to.  A
 * program without it runs the single-threaded event loop, which a routed
 * handle cannot take part in. */
#ifndef THREADED
#error "<zkroute/compat.h> needs THREADED (cc -DTHREADED ... -lzookeeper_mt)"
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* Declared by zookeeper.h only without THREADED; a plain handle
 * (ZKROUTE=off) gets the real ones. */
int zookeeper_interest(zhandle_t *zh, int *fd, int *interest,
                       struct timeval *tv);
int zookeeper_process(zhandle_t *zh, int events);
/* Exported by libzookeeper_mt, declared only in its private zk_adaptor.h:
 * programs that use them declare them themselves (a declaration after
 * this header names the adapter, with the same type). */
int zoo_lock_auth(zhandle_t *zh);
int zoo_unlock_auth(zhandle_t *zh);

/* ---- handle life and the session ---- */

static inline zhandle_t *zkr_compat_zookeeper_init(const char *host,
                                                   watcher_fn fn,
                                                   int recv_timeout,
                                                   const clientid_t *clientid,
                                                   void *context, int flags) {
  return zkr_compat_init(host, fn, recv_timeout, clientid, context, flags, NULL);
}

static inline zhandle_t *zkr_compat_zookeeper_init2(
    const char *host, watcher_fn fn, int recv_timeout,
    const clientid_t *clientid, void *context, int flags,
    log_callback_fn log_callback) {
  return zkr_compat_init(host, fn, recv_timeout, clientid, context, flags,
                         log_callback);
}

static inline int zkr_compat_zookeeper_close(zhandle_t *zh) {
  return zkr_compat_close(zh);
}

static inline int zkr_compat_zoo_state(zhandle_t *zh) {
  zkr_t *z_ = zkr_compat_routed(zh);
  if (!z_) return zoo_state(zh);
  return zkr_state(z_);
}

static inline const clientid_t *zkr_compat_zoo_client_id(zhandle_t *zh) {
  zkr_t *z_ = zkr_compat_routed(zh);
  if (!z_) return zoo_client_id(zh);
  static clientid_t none; /* zeros; not const: C++ would want an initialiser */
  const clientid_t *id = zkr_client_id(z_);
  return id ? id : &none;
}

static inline int zkr_compat_zoo_recv_timeout(zhandle_t *zh) {
  zkr_t *z_ = zkr_compat_routed(zh);
  if (!z_) return zoo_recv_timeout(zh);
  return zkr_recv_timeout(z_);
}

static inline const void *zkr_compat_zoo_get_context(zhandle_t *zh) {
  zkr_t *z_ = zkr_compat_routed(zh);
  if (!z_) return zoo_get_context(zh);
  return zkr_get_context(z_);
}

static inline void zkr_compat_zoo_set_context(zhandle_t *zh, void *context) {
  zkr_t *z_ = zkr_compat_routed(zh);
  if (!z_) {
    zoo_set_context(zh, context);
    return;
  }
  zkr_set_context(z_, context);
}

static inline watcher_fn zkr_compat_zoo_set_watcher(zhandle_t *zh,
                                                    watcher_fn newFn) {
  zkr_t *z_ = zkr_compat_routed(zh);
  if (!z_) return zoo_set_watcher(zh, newFn);
  return zkr_set_watcher(z_, newFn);
}

static inline int zkr_compat_is_unrecoverable(zhandle_t *zh) {
  zkr_t *z_ = zkr_compat_routed(zh);
  if (!z_) return is_unrecoverable(zh);
  return zkr_is_unrecoverable(z_);
}

static inline int zkr_compat_zoo_add_auth(zhandle_t *zh, const char *scheme,
                                          const char *cert, int certLen,
                                          void_completion_t completion,
                                          const void *data) {
  zkr_t *z_ = zkr_compat_routed(zh);
  if (!z_) return zoo_add_auth(zh, scheme, cert, certLen, completion, data);
  return zkr_add_auth(z_, scheme, cert, certLen, completion, data);
}

static inline int zkr_compat_zoo_lock_auth(zhandle_t *zh) {
  zkr_t *z_ = zkr_compat_routed(zh);
  if (!z_) return zoo_lock_auth(zh);
  return zkr_lock_auth(z_);
}

static inline int zkr_compat_zoo_unlock_auth(zhandle_t *zh) {
  zkr_t *z_ = zkr_compat_routed(zh);
  if (!z_) return zoo_unlock_auth(zh);
  return zkr_unlock_auth(z_);
}

static inline log_callback_fn zkr_compat_zoo_get_log_callback(const zhandle_t *zh) {
  zkr_t *z_ = zkr_compat_routed((zhandle_t *)zh);
  if (!z_) return zoo_get_log_callback(zh);
  return NULL;
}

static inline void zkr_compat_zoo_set_log_callback(zhandle_t *zh,
                                                   log_callback_fn callback) {
  zkr_t *z_ = zkr_compat_routed(zh);
  if (!z_) {
    zoo_set_log_callback(zh, callback);
    return;
  }
  (void)callback;
}

/* ---- no meaning on a routed handle ---- */

static inline int zkr_compat_zookeeper_interest(zhandle_t *zh, int *fd,
                                                int *interest,
                                                struct timeval *tv) {
  zkr_t *z_ = zkr_compat_routed(zh);
  if (!z_) return zookeeper_interest(zh, fd, interest, tv);
  (void)fd;
  (void)interest;
  (void)tv;
  return ZUNIMPLEMENTED;
}

static inline int zkr_compat_zookeeper_process(zhandle_t *zh, int events) {
  zkr_t *z_ = zkr_compat_routed(zh);
  if (!z_) return zookeeper_process(zh, events);
  (void)events;
  return ZUNIMPLEMENTED;
}

static inline int zkr_compat_zoo_set_servers(zhandle_t *zh, const char *hosts) {
  zkr_t *z_ = zkr_compat_routed(zh);
  if (!z_) return zoo_set_servers(zh, hosts);
  return zkr_set_servers(z_, hosts);
}

static inline int zkr_compat_zoo_set_servers_resolution_delay(zhandle_t *zh,
                                                              int delay_ms) {
  zkr_t *z_ = zkr_compat_routed(zh);
  if (!z_) return zoo_set_servers_resolution_delay(zh, delay_ms);
  /* Stock's codes; the names are re-resolved every resolve_ms. */
  return delay_ms < -1 ? ZBADARGUMENTS : ZOK;
}

static inline void zkr_compat_zoo_cycle_next_server(zhandle_t *zh) {
  if (!zkr_compat_routed(zh)) zoo_cycle_next_server(zh);
}

static inline const char *zkr_compat_zoo_get_current_server(zhandle_t *zh) {
  zkr_t *z_ = zkr_compat_routed(zh);
  if (!z_) return zoo_get_current_server(zh);
  return zkr_get_current_server(z_);
}

static inline struct sockaddr *zkr_compat_zookeeper_get_connected_host(
    zhandle_t *zh, struct sockaddr *addr, socklen_t *addr_len) {
  zkr_t *z_ = zkr_compat_routed(zh);
  if (!z_) return zookeeper_get_connected_host(zh, addr, addr_len);
  return zkr_get_connected_host(z_, addr, addr_len);
}

static inline int zkr_compat_zoo_areconfig(zhandle_t *zh, const char *joining,
                                           const char *leaving,
                                           const char *members, int64_t version,
                                           data_completion_t dc,
                                           const void *data) {
  zkr_t *z_ = zkr_compat_routed(zh);
  if (!z_) return zoo_areconfig(zh, joining, leaving, members, version, dc, data);
  return zkr_areconfig(z_, joining, leaving, members, version, dc, data);
}

static inline int zkr_compat_zoo_reconfig(zhandle_t *zh, const char *joining,
                                          const char *leaving,
                                          const char *members, int64_t version,
                                          char *buffer, int *buffer_len,
                                          struct Stat *stat) {
  zkr_t *z_ = zkr_compat_routed(zh);
  if (!z_) return zoo_reconfig(zh, joining, leaving, members, version, buffer, buffer_len, stat);
  return zkr_reconfig(z_, joining, leaving, members, version, buffer,
                      buffer_len, stat);
}

/* ZooKeeper declares the completion as a pointer to one and calls it as
 * the function itself; so does this. */
static inline int zkr_compat_zoo_aremove_watches(
    zhandle_t *zh, const char *path, ZooWatcherType wtype, watcher_fn watcher,
    void *watcherCtx, int local, void_completion_t *completion,
    const void *data) {
  zkr_t *z_ = zkr_compat_routed(zh);
  if (!z_) return zoo_aremove_watches(zh, path, wtype, watcher, watcherCtx, local, completion, data);
  return zkr_aremove_watches(z_, path, wtype, watcher, watcherCtx, local,
                             (void_completion_t)completion, data);
}

static inline int zkr_compat_zoo_remove_watches(zhandle_t *zh, const char *path,
                                                ZooWatcherType wtype,
                                                watcher_fn watcher,
                                                void *watcherCtx, int local) {
  zkr_t *z_ = zkr_compat_routed(zh);
  if (!z_) return zoo_remove_watches(zh, path, wtype, watcher, watcherCtx, local);
  return zkr_remove_watches(z_, path, wtype, watcher, watcherCtx, local);
}

static inline int zkr_compat_zoo_aremove_all_watches(
    zhandle_t *zh, const char *path, ZooWatcherType wtype, int local,
    void_completion_t *completion, const void *data) {
  zkr_t *z_ = zkr_compat_routed(zh);
  if (!z_) return zoo_aremove_all_watches(zh, path, wtype, local, completion, data);
  return zkr_aremove_all_watches(z_, path, wtype, local,
                                 (void_completion_t)completion, data);
}

static inline int zkr_compat_zoo_remove_all_watches(zhandle_t *zh,
                                                    const char *path,
                                                    ZooWatcherType wtype,
                                                    int local) {
  zkr_t *z_ = zkr_compat_routed(zh);
  if (!z_) return zoo_remove_all_watches(zh, path, wtype, local);
  return zkr_remove_all_watches(z_, path, wtype, local);
}

/* ---- asynchronous calls ---- */

static inline int zkr_compat_zoo_acreate(zhandle_t *zh, const char *path,
                                         const char *value, int valuelen,
                                         const struct ACL_vector *acl, int mode,
                                         string_completion_t completion,
                                         const void *data) {
  zkr_t *z_ = zkr_compat_routed(zh);
  if (!z_) return zoo_acreate(zh, path, value, valuelen, acl, mode, completion, data);
  return zkr_acreate(z_, path, value, valuelen, acl, mode,
                     completion, data);
}

static inline int zkr_compat_zoo_acreate_ttl(zhandle_t *zh, const char *path,
                                             const char *value, int valuelen,
                                             const struct ACL_vector *acl,
                                             int mode, int64_t ttl,
                                             string_completion_t completion,
                                             const void *data) {
  zkr_t *z_ = zkr_compat_routed(zh);
  if (!z_) return zoo_acreate_ttl(zh, path, value, valuelen, acl, mode, ttl, completion, data);
  return zkr_acreate_ttl(z_, path, value, valuelen, acl, mode,
                         ttl, completion, data);
}

static inline int zkr_compat_zoo_acreate2(zhandle_t *zh, const char *path,
                                          const char *value, int valuelen,
                                          const struct ACL_vector *acl,
                                          int mode,
                                          string_stat_completion_t completion,
                                          const void *data) {
  zkr_t *z_ = zkr_compat_routed(zh);
  if (!z_) return zoo_acreate2(zh, path, value, valuelen, acl, mode, completion, data);
  return zkr_acreate2(z_, path, value, valuelen, acl, mode,
                      completion, data);
}

static inline int zkr_compat_zoo_acreate2_ttl(
    zhandle_t *zh, const char *path, const char *value, int valuelen,
    const struct ACL_vector *acl, int mode, int64_t ttl,
    string_stat_completion_t completion, const void *data) {
  zkr_t *z_ = zkr_compat_routed(zh);
  if (!z_) return zoo_acreate2_ttl(zh, path, value, valuelen, acl, mode, ttl, completion, data);
  return zkr_acreate2_ttl(z_, path, value, valuelen, acl, mode,
                          ttl, completion, data);
}

static inline int zkr_compat_zoo_adelete(zhandle_t *zh, const char *path,
                                         int version,
                                         void_completion_t completion,
                                         const void *data) {
  zkr_t *z_ = zkr_compat_routed(zh);
  if (!z_) return zoo_adelete(zh, path, version, completion, data);
  return zkr_adelete(z_, path, version, completion, data);
}

static inline int zkr_compat_zoo_aexists(zhandle_t *zh, const char *path,
                                         int watch, stat_completion_t completion,
                                         const void *data) {
  zkr_t *z_ = zkr_compat_routed(zh);
  if (!z_) return zoo_aexists(zh, path, watch, completion, data);
  return zkr_aexists(z_, path, watch, completion, data);
}

static inline int zkr_compat_zoo_awexists(zhandle_t *zh, const char *path,
                                          watcher_fn watcher, void *watcherCtx,
                                          stat_completion_t completion,
                                          const void *data) {
  zkr_t *z_ = zkr_compat_routed(zh);
  if (!z_) return zoo_awexists(zh, path, watcher, watcherCtx, completion, data);
  return zkr_awexists(z_, path, watcher, watcherCtx, completion,
                      data);
}

static inline int zkr_compat_zoo_aget(zhandle_t *zh, const char *path,
                                      int watch, data_completion_t completion,
                                      const void *data) {
  zkr_t *z_ = zkr_compat_routed(zh);
  if (!z_) return zoo_aget(zh, path, watch, completion, data);
  return zkr_aget(z_, path, watch, completion, data);
}

static inline int zkr_compat_zoo_awget(zhandle_t *zh, const char *path,
                                       watcher_fn watcher, void *watcherCtx,
                                       data_completion_t completion,
                                       const void *data) {
  zkr_t *z_ = zkr_compat_routed(zh);
  if (!z_) return zoo_awget(zh, path, watcher, watcherCtx, completion, data);
  return zkr_awget(z_, path, watcher, watcherCtx, completion,
                   data);
}

/* getconfig is a routed read of ZOO_CONFIG_NODE (not with a chroot). */
static inline int zkr_compat_zoo_agetconfig(zhandle_t *zh, int watch,
                                            data_completion_t completion,
                                            const void *data) {
  zkr_t *z_ = zkr_compat_routed(zh);
  if (!z_) return zoo_agetconfig(zh, watch, completion, data);
  return zkr_aget(z_, ZOO_CONFIG_NODE, watch, completion, data);
}

static inline int zkr_compat_zoo_awgetconfig(zhandle_t *zh, watcher_fn watcher,
                                             void *watcherCtx,
                                             data_completion_t completion,
                                             const void *data) {
  zkr_t *z_ = zkr_compat_routed(zh);
  if (!z_) return zoo_awgetconfig(zh, watcher, watcherCtx, completion, data);
  return zkr_awget(z_, ZOO_CONFIG_NODE, watcher, watcherCtx,
                   completion, data);
}

static inline int zkr_compat_zoo_aset(zhandle_t *zh, const char *path,
                                      const char *buffer, int buflen,
                                      int version, stat_completion_t completion,
                                      const void *data) {
  zkr_t *z_ = zkr_compat_routed(zh);
  if (!z_) return zoo_aset(zh, path, buffer, buflen, version, completion, data);
  return zkr_aset(z_, path, buffer, buflen, version, completion,
                  data);
}

static inline int zkr_compat_zoo_aget_children(zhandle_t *zh, const char *path,
                                               int watch,
                                               strings_completion_t completion,
                                               const void *data) {
  zkr_t *z_ = zkr_compat_routed(zh);
  if (!z_) return zoo_aget_children(zh, path, watch, completion, data);
  return zkr_aget_children(z_, path, watch, completion, data);
}

static inline int zkr_compat_zoo_awget_children(
    zhandle_t *zh, const char *path, watcher_fn watcher, void *watcherCtx,
    strings_completion_t completion, const void *data) {
  zkr_t *z_ = zkr_compat_routed(zh);
  if (!z_) return zoo_awget_children(zh, path, watcher, watcherCtx, completion, data);
  return zkr_awget_children(z_, path, watcher, watcherCtx,
                            completion, data);
}

static inline int zkr_compat_zoo_aget_children2(
    zhandle_t *zh, const char *path, int watch,
    strings_stat_completion_t completion, const void *data) {
  zkr_t *z_ = zkr_compat_routed(zh);
  if (!z_) return zoo_aget_children2(zh, path, watch, completion, data);
  return zkr_aget_children2(z_, path, watch, completion, data);
}

static inline int zkr_compat_zoo_awget_children2(
    zhandle_t *zh, const char *path, watcher_fn watcher, void *watcherCtx,
    strings_stat_completion_t completion, const void *data) {
  zkr_t *z_ = zkr_compat_routed(zh);
  if (!z_) return zoo_awget_children2(zh, path, watcher, watcherCtx, completion, data);
  return zkr_awget_children2(z_, path, watcher, watcherCtx,
                             completion, data);
}

static inline int zkr_compat_zoo_async(zhandle_t *zh, const char *path,
                                       string_completion_t completion,
                                       const void *data) {
  zkr_t *z_ = zkr_compat_routed(zh);
  if (!z_) return zoo_async(zh, path, completion, data);
  return zkr_async(z_, path, completion, data);
}

static inline int zkr_compat_zoo_aget_acl(zhandle_t *zh, const char *path,
                                          acl_completion_t completion,
                                          const void *data) {
  zkr_t *z_ = zkr_compat_routed(zh);
  if (!z_) return zoo_aget_acl(zh, path, completion, data);
  return zkr_aget_acl(z_, path, completion, data);
}

static inline int zkr_compat_zoo_aset_acl(zhandle_t *zh, const char *path,
                                          int version, struct ACL_vector *acl,
                                          void_completion_t completion,
                                          const void *data) {
  zkr_t *z_ = zkr_compat_routed(zh);
  if (!z_) return zoo_aset_acl(zh, path, version, acl, completion, data);
  return zkr_aset_acl(z_, path, version, acl, completion, data);
}

static inline int zkr_compat_zoo_amulti(zhandle_t *zh, int count,
                                        const zoo_op_t *ops,
                                        zoo_op_result_t *results,
                                        void_completion_t completion,
                                        const void *data) {
  zkr_t *z_ = zkr_compat_routed(zh);
  if (!z_) return zoo_amulti(zh, count, ops, results, completion, data);
  return zkr_amulti(z_, count, ops, results, completion, data);
}

/* ---- synchronous calls ---- */

static inline int zkr_compat_zoo_create(zhandle_t *zh, const char *path,
                                        const char *value, int valuelen,
                                        const struct ACL_vector *acl, int mode,
                                        char *path_buffer, int path_buffer_len) {
  zkr_t *z_ = zkr_compat_routed(zh);
  if (!z_) return zoo_create(zh, path, value, valuelen, acl, mode, path_buffer, path_buffer_len);
  return zkr_create(z_, path, value, valuelen, acl, mode,
                    path_buffer, path_buffer_len);
}

static inline int zkr_compat_zoo_create_ttl(zhandle_t *zh, const char *path,
                                            const char *value, int valuelen,
                                            const struct ACL_vector *acl,
                                            int mode, int64_t ttl,
                                            char *path_buffer,
                                            int path_buffer_len) {
  zkr_t *z_ = zkr_compat_routed(zh);
  if (!z_) return zoo_create_ttl(zh, path, value, valuelen, acl, mode, ttl, path_buffer, path_buffer_len);
  return zkr_create_ttl(z_, path, value, valuelen, acl, mode, ttl,
                        path_buffer, path_buffer_len);
}

static inline int zkr_compat_zoo_create2(zhandle_t *zh, const char *path,
                                         const char *value, int valuelen,
                                         const struct ACL_vector *acl, int mode,
                                         char *path_buffer, int path_buffer_len,
                                         struct Stat *stat) {
  zkr_t *z_ = zkr_compat_routed(zh);
  if (!z_) return zoo_create2(zh, path, value, valuelen, acl, mode, path_buffer, path_buffer_len, stat);
  return zkr_create2(z_, path, value, valuelen, acl, mode,
                     path_buffer, path_buffer_len, stat);
}

static inline int zkr_compat_zoo_create2_ttl(
    zhandle_t *zh, const char *path, const char *value, int valuelen,
    const struct ACL_vector *acl, int mode, int64_t ttl, char *path_buffer,
    int path_buffer_len, struct Stat *stat) {
  zkr_t *z_ = zkr_compat_routed(zh);
  if (!z_) return zoo_create2_ttl(zh, path, value, valuelen, acl, mode, ttl, path_buffer, path_buffer_len, stat);
  return zkr_create2_ttl(z_, path, value, valuelen, acl, mode,
                         ttl, path_buffer, path_buffer_len, stat);
}

static inline int zkr_compat_zoo_delete(zhandle_t *zh, const char *path,
                                        int version) {
  zkr_t *z_ = zkr_compat_routed(zh);
  if (!z_) return zoo_delete(zh, path, version);
  return zkr_delete(z_, path, version);
}

static inline int zkr_compat_zoo_exists(zhandle_t *zh, const char *path,
                                        int watch, struct Stat *stat) {
  zkr_t *z_ = zkr_compat_routed(zh);
  if (!z_) return zoo_exists(zh, path, watch, stat);
  return zkr_exists(z_, path, watch, stat);
}

static inline int zkr_compat_zoo_wexists(zhandle_t *zh, const char *path,
                                         watcher_fn watcher, void *watcherCtx,
                                         struct Stat *stat) {
  zkr_t *z_ = zkr_compat_routed(zh);
  if (!z_) return zoo_wexists(zh, path, watcher, watcherCtx, stat);
  return zkr_wexists(z_, path, watcher, watcherCtx, stat);
}

static inline int zkr_compat_zoo_get(zhandle_t *zh, const char *path, int watch,
                                     char *buffer, int *buffer_len,
                                     struct Stat *stat) {
  zkr_t *z_ = zkr_compat_routed(zh);
  if (!z_) return zoo_get(zh, path, watch, buffer, buffer_len, stat);
  return zkr_get(z_, path, watch, buffer, buffer_len, stat);
}

static inline int zkr_compat_zoo_wget(zhandle_t *zh, const char *path,
                                      watcher_fn watcher, void *watcherCtx,
                                      char *buffer, int *buffer_len,
                                      struct Stat *stat) {
  zkr_t *z_ = zkr_compat_routed(zh);
  if (!z_) return zoo_wget(zh, path, watcher, watcherCtx, buffer, buffer_len, stat);
  return zkr_wget(z_, path, watcher, watcherCtx, buffer,
                  buffer_len, stat);
}

static inline int zkr_compat_zoo_getconfig(zhandle_t *zh, int watch,
                                           char *buffer, int *buffer_len,
                                           struct Stat *stat) {
  zkr_t *z_ = zkr_compat_routed(zh);
  if (!z_) return zoo_getconfig(zh, watch, buffer, buffer_len, stat);
  return zkr_get(z_, ZOO_CONFIG_NODE, watch, buffer, buffer_len,
                 stat);
}

static inline int zkr_compat_zoo_wgetconfig(zhandle_t *zh, watcher_fn watcher,
                                            void *watcherCtx, char *buffer,
                                            int *buffer_len, struct Stat *stat) {
  zkr_t *z_ = zkr_compat_routed(zh);
  if (!z_) return zoo_wgetconfig(zh, watcher, watcherCtx, buffer, buffer_len, stat);
  return zkr_wget(z_, ZOO_CONFIG_NODE, watcher, watcherCtx,
                  buffer, buffer_len, stat);
}

static inline int zkr_compat_zoo_set(zhandle_t *zh, const char *path,
                                     const char *buffer, int buflen,
                                     int version) {
  zkr_t *z_ = zkr_compat_routed(zh);
  if (!z_) return zoo_set(zh, path, buffer, buflen, version);
  return zkr_set(z_, path, buffer, buflen, version);
}

static inline int zkr_compat_zoo_set2(zhandle_t *zh, const char *path,
                                      const char *buffer, int buflen,
                                      int version, struct Stat *stat) {
  zkr_t *z_ = zkr_compat_routed(zh);
  if (!z_) return zoo_set2(zh, path, buffer, buflen, version, stat);
  return zkr_set2(z_, path, buffer, buflen, version, stat);
}

static inline int zkr_compat_zoo_get_children(zhandle_t *zh, const char *path,
                                              int watch,
                                              struct String_vector *strings) {
  zkr_t *z_ = zkr_compat_routed(zh);
  if (!z_) return zoo_get_children(zh, path, watch, strings);
  return zkr_get_children(z_, path, watch, strings);
}

static inline int zkr_compat_zoo_wget_children(zhandle_t *zh, const char *path,
                                               watcher_fn watcher,
                                               void *watcherCtx,
                                               struct String_vector *strings) {
  zkr_t *z_ = zkr_compat_routed(zh);
  if (!z_) return zoo_wget_children(zh, path, watcher, watcherCtx, strings);
  return zkr_wget_children(z_, path, watcher, watcherCtx, strings);
}

static inline int zkr_compat_zoo_get_children2(zhandle_t *zh, const char *path,
                                               int watch,
                                               struct String_vector *strings,
                                               struct Stat *stat) {
  zkr_t *z_ = zkr_compat_routed(zh);
  if (!z_) return zoo_get_children2(zh, path, watch, strings, stat);
  return zkr_get_children2(z_, path, watch, strings, stat);
}

static inline int zkr_compat_zoo_wget_children2(zhandle_t *zh, const char *path,
                                                watcher_fn watcher,
                                                void *watcherCtx,
                                                struct String_vector *strings,
                                                struct Stat *stat) {
  zkr_t *z_ = zkr_compat_routed(zh);
  if (!z_) return zoo_wget_children2(zh, path, watcher, watcherCtx, strings, stat);
  return zkr_wget_children2(z_, path, watcher, watcherCtx,
                            strings, stat);
}

static inline int zkr_compat_zoo_get_acl(zhandle_t *zh, const char *path,
                                         struct ACL_vector *acl,
                                         struct Stat *stat) {
  zkr_t *z_ = zkr_compat_routed(zh);
  if (!z_) return zoo_get_acl(zh, path, acl, stat);
  return zkr_get_acl(z_, path, acl, stat);
}

static inline int zkr_compat_zoo_set_acl(zhandle_t *zh, const char *path,
                                         int version,
                                         const struct ACL_vector *acl) {
  zkr_t *z_ = zkr_compat_routed(zh);
  if (!z_) return zoo_set_acl(zh, path, version, acl);
  return zkr_set_acl(z_, path, version, acl);
}

static inline int zkr_compat_zoo_multi(zhandle_t *zh, int count,
                                       const zoo_op_t *ops,
                                       zoo_op_result_t *results) {
  zkr_t *z_ = zkr_compat_routed(zh);
  if (!z_) return zoo_multi(zh, count, ops, results);
  return zkr_multi(z_, count, ops, results);
}

#ifdef __cplusplus
}
#endif

/* ---- the names ---- */
#define zookeeper_init zkr_compat_zookeeper_init
#define zookeeper_init2 zkr_compat_zookeeper_init2
#define zookeeper_close zkr_compat_zookeeper_close
#define zookeeper_interest zkr_compat_zookeeper_interest
#define zookeeper_process zkr_compat_zookeeper_process
#define zookeeper_get_connected_host zkr_compat_zookeeper_get_connected_host
#define zoo_state zkr_compat_zoo_state
#define zoo_client_id zkr_compat_zoo_client_id
#define zoo_recv_timeout zkr_compat_zoo_recv_timeout
#define zoo_get_context zkr_compat_zoo_get_context
#define zoo_set_context zkr_compat_zoo_set_context
#define zoo_set_watcher zkr_compat_zoo_set_watcher
#define is_unrecoverable zkr_compat_is_unrecoverable
#define zoo_add_auth zkr_compat_zoo_add_auth
#define zoo_lock_auth zkr_compat_zoo_lock_auth
#define zoo_unlock_auth zkr_compat_zoo_unlock_auth
#define zoo_get_log_callback zkr_compat_zoo_get_log_callback
#define zoo_set_log_callback zkr_compat_zoo_set_log_callback
#define zoo_set_servers zkr_compat_zoo_set_servers
#define zoo_set_servers_resolution_delay zkr_compat_zoo_set_servers_resolution_delay
#define zoo_cycle_next_server zkr_compat_zoo_cycle_next_server
#define zoo_get_current_server zkr_compat_zoo_get_current_server
#define zoo_areconfig zkr_compat_zoo_areconfig
#define zoo_reconfig zkr_compat_zoo_reconfig
#define zoo_aremove_watches zkr_compat_zoo_aremove_watches
#define zoo_remove_watches zkr_compat_zoo_remove_watches
#define zoo_aremove_all_watches zkr_compat_zoo_aremove_all_watches
#define zoo_remove_all_watches zkr_compat_zoo_remove_all_watches
#define zoo_acreate zkr_compat_zoo_acreate
#define zoo_acreate_ttl zkr_compat_zoo_acreate_ttl
#define zoo_acreate2 zkr_compat_zoo_acreate2
#define zoo_acreate2_ttl zkr_compat_zoo_acreate2_ttl
#define zoo_adelete zkr_compat_zoo_adelete
#define zoo_aexists zkr_compat_zoo_aexists
#define zoo_awexists zkr_compat_zoo_awexists
#define zoo_aget zkr_compat_zoo_aget
#define zoo_awget zkr_compat_zoo_awget
#define zoo_agetconfig zkr_compat_zoo_agetconfig
#define zoo_awgetconfig zkr_compat_zoo_awgetconfig
#define zoo_aset zkr_compat_zoo_aset
#define zoo_aget_children zkr_compat_zoo_aget_children
#define zoo_awget_children zkr_compat_zoo_awget_children
#define zoo_aget_children2 zkr_compat_zoo_aget_children2
#define zoo_awget_children2 zkr_compat_zoo_awget_children2
#define zoo_async zkr_compat_zoo_async
#define zoo_aget_acl zkr_compat_zoo_aget_acl
#define zoo_aset_acl zkr_compat_zoo_aset_acl
#define zoo_amulti zkr_compat_zoo_amulti
#define zoo_create zkr_compat_zoo_create
#define zoo_create_ttl zkr_compat_zoo_create_ttl
#define zoo_create2 zkr_compat_zoo_create2
#define zoo_create2_ttl zkr_compat_zoo_create2_ttl
#define zoo_delete zkr_compat_zoo_delete
#define zoo_exists zkr_compat_zoo_exists
#define zoo_wexists zkr_compat_zoo_wexists
#define zoo_get zkr_compat_zoo_get
#define zoo_wget zkr_compat_zoo_wget
#define zoo_getconfig zkr_compat_zoo_getconfig
#define zoo_wgetconfig zkr_compat_zoo_wgetconfig
#define zoo_set zkr_compat_zoo_set
#define zoo_set2 zkr_compat_zoo_set2
#define zoo_get_children zkr_compat_zoo_get_children
#define zoo_wget_children zkr_compat_zoo_wget_children
#define zoo_get_children2 zkr_compat_zoo_get_children2
#define zoo_wget_children2 zkr_compat_zoo_wget_children2
#define zoo_get_acl zkr_compat_zoo_get_acl
#define zoo_set_acl zkr_compat_zoo_set_acl
#define zoo_multi zkr_compat_zoo_multi
#define zerror zkr_strerror

#endif
