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
#include "calls.h"

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

/* Every function of the call list, declared from it (zookeeper.h
 * declares zookeeper_interest/process only without THREADED, and
 * zoo_lock_auth/zoo_unlock_auth nowhere); a plain handle (ZKROUTE=off) gets
 * the real ones. */
#define ZKR__COMPAT_NONE(...)
ZKR_ZOO_CALLS(ZKR__DECLARE_X, ZKR__COMPAT_NONE)

/* ---- the adapters written here (gen C and H in the list) ---- */

static inline zhandle_t *zkr_compat_zookeeper_init(const char *host, watcher_fn fn,
                                                   int recv_timeout, const clientid_t *clientid,
                                                   void *context, int flags) {
  return zkr_compat_init(host, fn, recv_timeout, clientid, context, flags, NULL);
}

static inline zhandle_t *zkr_compat_zookeeper_init2(const char *host, watcher_fn fn,
                                                    int recv_timeout, const clientid_t *clientid,
                                                    void *context, int flags,
                                                    log_callback_fn log_callback) {
  return zkr_compat_init(host, fn, recv_timeout, clientid, context, flags, log_callback);
}

/* Either kind of handle: zkroute keeps the list of plain ones. */
static inline int zkr_compat_zookeeper_close(zhandle_t *zh) { return zkr_compat_close(zh); }

/* Zeros until the owner session has an id, never NULL, as stock. */
static inline const clientid_t *zkr_compat_zoo_client_id(zhandle_t *zh) {
  zkr_t *z_ = zkr_compat_routed(zh);
  if (!z_) return zoo_client_id(zh);
  static clientid_t none; /* zeros; not const: C++ would want an initialiser */
  const clientid_t *id = zkr_client_id(z_);
  return id ? id : &none;
}

static inline void zkr_compat_zoo_set_context(zhandle_t *zh, void *context) {
  zkr_t *z_ = zkr_compat_routed(zh);
  if (!z_) {
    zoo_set_context(zh, context);
    return;
  }
  zkr_set_context(z_, context);
}

/* The log callback is not used: member sessions log to ZooKeeper's log
 * stream. */
static inline log_callback_fn zkr_compat_zoo_get_log_callback(const zhandle_t *zh) {
  zkr_t *z_ = zkr_compat_routed((zhandle_t *)zh);
  if (!z_) return zoo_get_log_callback(zh);
  return NULL;
}

static inline void zkr_compat_zoo_set_log_callback(zhandle_t *zh, log_callback_fn callback) {
  zkr_t *z_ = zkr_compat_routed(zh);
  if (!z_) {
    zoo_set_log_callback(zh, callback);
    return;
  }
  (void)callback;
}

/* The single-threaded event loop: a routed handle runs its own threads. */
static inline int zkr_compat_zookeeper_interest(zhandle_t *zh, int *fd, int *interest,
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

/* Nothing to do on a routed handle: each member session has one server. */
static inline void zkr_compat_zoo_cycle_next_server(zhandle_t *zh) {
  if (!zkr_compat_routed(zh)) zoo_cycle_next_server(zh);
}

/* ---- the adapters generated from the call list (gen G and P) ---- */

#define ZKR__COMPAT_ADAPTER(ret, name, params, args, zkr_fn, zargs)                                \
  static inline ret zkr_compat_##name params {                                                     \
    zkr_t *z_ = zkr_compat_routed(zh);                                                             \
    if (!z_) return name args;                                                                     \
    return zkr_fn zargs;                                                                           \
  }
#define ZKR__COMPAT_X(gen, tbl, ...) ZKR__CO_##gen(ZKR__COMPAT_ADAPTER(__VA_ARGS__))
ZKR_ZOO_CALLS(ZKR__COMPAT_X, ZKR__COMPAT_NONE)

#ifdef __cplusplus
}
#endif

/* ---- the names ----
 * One per function of the call list that takes a handle, and zerror: the
 * preprocessor cannot generate #define lines, so tests/unit/test_calls.c checks
 * this list against ZKR_ZOO_CALLS both ways. */
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
#define zoo_get_log_callback zkr_compat_zoo_get_log_callback
#define zoo_set_log_callback zkr_compat_zoo_set_log_callback
#define zoo_set_servers zkr_compat_zoo_set_servers
#define zoo_set_servers_resolution_delay zkr_compat_zoo_set_servers_resolution_delay
#define zoo_cycle_next_server zkr_compat_zoo_cycle_next_server
#define zoo_get_current_server zkr_compat_zoo_get_current_server
#define zoo_lock_auth zkr_compat_zoo_lock_auth
#define zoo_unlock_auth zkr_compat_zoo_unlock_auth
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
