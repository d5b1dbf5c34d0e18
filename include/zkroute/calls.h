/* <zkroute/calls.h>: the one list of libzookeeper_mt's functions that
 * zkroute reaches, routes or stands in for, as X-macros (libuv writes its
 * error table the same way).  Every other list is generated from it by the
 * preprocessor: the library's function table (zkroute/zk/zkapi.h), the
 * LD_PRELOAD interposer's real functions, their dlsym and its wrappers
 * (zkroute/dropin/preload_calls.c), and the compat header's adapters
 * (<zkroute/compat.h>).  The compat header's #define lines cannot be
 * generated; tests/unit/test_calls.c checks them against this list.
 *
 * ZKR_ZOO_CALLS(X, N) expands X once per function that takes a handle
 * (zookeeper_init and zookeeper_init2 too, which make one) and N once per
 * function that takes none:
 *
 *   X(gen, tbl, ret, name, params, args, zkr_fn, zargs)
 *   N(gen, rv, ret, name, params, args)
 *
 * - gen: which wrappers are generated.  G both; P the compat adapter only
 *   (zkroute/dropin/preload.c writes the interposer's by hand); C the interposer's
 *   only (compat.h writes its adapter by hand); H neither.  For N: G the
 *   interposer passes the call on, H preload.c writes it (zerror).
 * - tbl: T when the library calls the function itself, through its
 *   function table (zkroute/zk/zkapi.h; a field of that name), 0 otherwise.
 * - ret, name, params: the declaration as zookeeper.h has it; every
 *   generated wrapper names its handle zh.  Each is also declared from
 *   here, so a difference with zookeeper.h is a compile error.
 * - args: params' names, to call the real function.
 * - zkr_fn, zargs: the call a routed handle z_ gets: zkroute.h's mirror
 *   with the same arguments, or a close relative (getconfig is a read of
 *   ZOO_CONFIG_NODE; watch removal takes its completion by value).  The
 *   library compiles every generated wrapper with conversion warnings as
 *   errors, so a zkr_ call that no longer takes these arguments unchanged
 *   fails the build (0 and () where no wrapper is generated).
 * - rv: return, or nothing for a function returning void.
 *
 * Order: handle life and the session, the server list, watch removal and
 * reconfiguration, asynchronous writes and reads, synchronous calls, then
 * the functions without a handle.  Writes (create in every form, delete,
 * set, set_acl, reconfig; multi when it holds one) go to the leader's
 * session, reads (exists, get, get_children(2), get_acl, getconfig) to the
 * read pool; the rest act on the virtual session (DESIGN.md sections 2, 4). */
#ifndef ZKROUTE_CALLS_H
#define ZKROUTE_CALLS_H

/* clang-format off */
#define ZKR_ZOO_CALLS(X, N)                                                    \
  /* ---- handle life and the session ---- */                                \
  X(H, T, zhandle_t *, zookeeper_init,                                         \
    (const char *host, watcher_fn fn, int recv_timeout,                        \
     const clientid_t *clientid, void *context, int flags),                    \
    (host, fn, recv_timeout, clientid, context, flags), 0, ())                 \
  X(H, 0, zhandle_t *, zookeeper_init2,                                        \
    (const char *host, watcher_fn fn, int recv_timeout,                        \
     const clientid_t *clientid, void *context, int flags,                     \
     log_callback_fn log_callback),                                            \
    (host, fn, recv_timeout, clientid, context, flags, log_callback), 0, ())   \
  X(C, T, int, zookeeper_close, (zhandle_t *zh), (zh), zkr_close, (z_))        \
  X(H, 0, int, zookeeper_interest,                                             \
    (zhandle_t *zh, int *fd, int *interest, struct timeval *tv),               \
    (zh, fd, interest, tv), 0, ())                                             \
  X(H, 0, int, zookeeper_process, (zhandle_t *zh, int events), (zh, events),   \
    0, ())                                                                     \
  X(G, T, int, zoo_state, (zhandle_t *zh), (zh), zkr_state, (z_))              \
  X(H, T, const clientid_t *, zoo_client_id, (zhandle_t *zh), (zh), 0, ())     \
  X(G, T, int, zoo_recv_timeout, (zhandle_t *zh), (zh), zkr_recv_timeout,      \
    (z_))                                                                      \
  X(P, 0, const void *, zoo_get_context, (zhandle_t *zh), (zh),                \
    zkr_get_context, (z_))                                                     \
  X(H, 0, void, zoo_set_context, (zhandle_t *zh, void *context),               \
    (zh, context), 0, ())                                                      \
  X(P, 0, watcher_fn, zoo_set_watcher, (zhandle_t *zh, watcher_fn newFn),      \
    (zh, newFn), zkr_set_watcher, (z_, newFn))                                 \
  X(G, 0, int, is_unrecoverable, (zhandle_t *zh), (zh), zkr_is_unrecoverable,  \
    (z_))                                                                      \
  X(G, T, int, zoo_add_auth,                                                   \
    (zhandle_t *zh, const char *scheme, const char *cert, int certLen,         \
     void_completion_t completion, const void *data),                          \
    (zh, scheme, cert, certLen, completion, data), zkr_add_auth,               \
    (z_, scheme, cert, certLen, completion, data))                             \
  X(G, 0, int, zoo_lock_auth, (zhandle_t *zh), (zh), zkr_lock_auth, (z_))      \
  X(G, 0, int, zoo_unlock_auth, (zhandle_t *zh), (zh), zkr_unlock_auth, (z_))  \
  X(H, T, log_callback_fn, zoo_get_log_callback, (const zhandle_t *zh), (zh),  \
    0, ())                                                                     \
  X(H, 0, void, zoo_set_log_callback,                                          \
    (zhandle_t *zh, log_callback_fn callback), (zh, callback), 0, ())          \
  /* ---- the server list ---- */                                            \
  X(G, 0, int, zoo_set_servers, (zhandle_t *zh, const char *hosts),            \
    (zh, hosts), zkr_set_servers, (z_, hosts))                                 \
  X(G, T, int, zoo_set_servers_resolution_delay,                               \
    (zhandle_t *zh, int delay_ms), (zh, delay_ms),                             \
    zkr_set_servers_resolution_delay, (z_, delay_ms))                          \
  X(H, 0, void, zoo_cycle_next_server, (zhandle_t *zh), (zh), 0, ())           \
  X(G, 0, const char *, zoo_get_current_server, (zhandle_t *zh), (zh),         \
    zkr_get_current_server, (z_))                                              \
  X(G, T, struct sockaddr *, zookeeper_get_connected_host,                     \
    (zhandle_t *zh, struct sockaddr *addr, socklen_t *addr_len),               \
    (zh, addr, addr_len), zkr_get_connected_host, (z_, addr, addr_len))        \
  /* ---- watch removal, reconfiguration ---- */                             \
  X(P, T, int, zoo_remove_watches,                                             \
    (zhandle_t *zh, const char *path, ZooWatcherType wtype,                    \
     watcher_fn watcher, void *watcherCtx, int local),                         \
    (zh, path, wtype, watcher, watcherCtx, local), zkr_remove_watches,         \
    (z_, path, wtype, watcher, watcherCtx, local))                             \
  X(P, T, int, zoo_aremove_watches,                                            \
    (zhandle_t *zh, const char *path, ZooWatcherType wtype,                    \
     watcher_fn watcher, void *watcherCtx, int local,                          \
     void_completion_t *completion, const void *data),                         \
    (zh, path, wtype, watcher, watcherCtx, local, completion, data),           \
    zkr_aremove_watches,                                                       \
    (z_, path, wtype, watcher, watcherCtx, local,                              \
     (void_completion_t)completion, data))                                     \
  X(G, 0, int, zoo_remove_all_watches,                                         \
    (zhandle_t *zh, const char *path, ZooWatcherType wtype, int local),        \
    (zh, path, wtype, local), zkr_remove_all_watches, (z_, path, wtype, local))\
  X(G, T, int, zoo_aremove_all_watches,                                        \
    (zhandle_t *zh, const char *path, ZooWatcherType wtype, int local,         \
     void_completion_t *completion, const void *data),                         \
    (zh, path, wtype, local, completion, data), zkr_aremove_all_watches,       \
    (z_, path, wtype, local, (void_completion_t)completion, data))             \
  X(G, T, int, zoo_areconfig,                                                  \
    (zhandle_t *zh, const char *joining, const char *leaving,                  \
     const char *members, int64_t version, data_completion_t dc,               \
     const void *data),                                                        \
    (zh, joining, leaving, members, version, dc, data), zkr_areconfig,         \
    (z_, joining, leaving, members, version, dc, data))                        \
  X(G, 0, int, zoo_reconfig,                                                   \
    (zhandle_t *zh, const char *joining, const char *leaving,                  \
     const char *members, int64_t version, char *buffer, int *buffer_len,      \
     struct Stat *stat),                                                       \
    (zh, joining, leaving, members, version, buffer, buffer_len, stat),        \
    zkr_reconfig,                                                              \
    (z_, joining, leaving, members, version, buffer, buffer_len, stat))        \
  /* ---- asynchronous writes ---- */                                        \
  X(G, 0, int, zoo_acreate,                                                    \
    (zhandle_t *zh, const char *path, const char *value, int valuelen,         \
     const struct ACL_vector *acl, int mode, string_completion_t completion,   \
     const void *data),                                                        \
    (zh, path, value, valuelen, acl, mode, completion, data), zkr_acreate,     \
    (z_, path, value, valuelen, acl, mode, completion, data))                  \
  X(G, T, int, zoo_acreate_ttl,                                                \
    (zhandle_t *zh, const char *path, const char *value, int valuelen,         \
     const struct ACL_vector *acl, int mode, int64_t ttl,                      \
     string_completion_t completion, const void *data),                        \
    (zh, path, value, valuelen, acl, mode, ttl, completion, data),             \
    zkr_acreate_ttl,                                                           \
    (z_, path, value, valuelen, acl, mode, ttl, completion, data))             \
  X(G, 0, int, zoo_acreate2,                                                   \
    (zhandle_t *zh, const char *path, const char *value, int valuelen,         \
     const struct ACL_vector *acl, int mode,                                   \
     string_stat_completion_t completion, const void *data),                   \
    (zh, path, value, valuelen, acl, mode, completion, data), zkr_acreate2,    \
    (z_, path, value, valuelen, acl, mode, completion, data))                  \
  X(G, T, int, zoo_acreate2_ttl,                                               \
    (zhandle_t *zh, const char *path, const char *value, int valuelen,         \
     const struct ACL_vector *acl, int mode, int64_t ttl,                      \
     string_stat_completion_t completion, const void *data),                   \
    (zh, path, value, valuelen, acl, mode, ttl, completion, data),             \
    zkr_acreate2_ttl,                                                          \
    (z_, path, value, valuelen, acl, mode, ttl, completion, data))             \
  X(G, T, int, zoo_adelete,                                                    \
    (zhandle_t *zh, const char *path, int version,                             \
     void_completion_t completion, const void *data),                          \
    (zh, path, version, completion, data), zkr_adelete,                        \
    (z_, path, version, completion, data))                                     \
  X(G, T, int, zoo_aset,                                                       \
    (zhandle_t *zh, const char *path, const char *buffer, int buflen,          \
     int version, stat_completion_t completion, const void *data),             \
    (zh, path, buffer, buflen, version, completion, data), zkr_aset,           \
    (z_, path, buffer, buflen, version, completion, data))                     \
  X(G, T, int, zoo_aset_acl,                                                   \
    (zhandle_t *zh, const char *path, int version, struct ACL_vector *acl,     \
     void_completion_t completion, const void *data),                          \
    (zh, path, version, acl, completion, data), zkr_aset_acl,                  \
    (z_, path, version, acl, completion, data))                                \
  /* A write when any op is one, else a read: decided per call. */           \
  X(G, T, int, zoo_amulti,                                                     \
    (zhandle_t *zh, int count, const zoo_op_t *ops,                            \
     zoo_op_result_t *results, void_completion_t completion,                   \
     const void *data),                                                        \
    (zh, count, ops, results, completion, data), zkr_amulti,                   \
    (z_, count, ops, results, completion, data))                               \
  /* ---- asynchronous reads ---- */                                         \
  X(G, 0, int, zoo_aexists,                                                    \
    (zhandle_t *zh, const char *path, int watch, stat_completion_t completion, \
     const void *data),                                                        \
    (zh, path, watch, completion, data), zkr_aexists,                          \
    (z_, path, watch, completion, data))                                       \
  X(G, T, int, zoo_awexists,                                                   \
    (zhandle_t *zh, const char *path, watcher_fn watcher, void *watcherCtx,    \
     stat_completion_t completion, const void *data),                          \
    (zh, path, watcher, watcherCtx, completion, data), zkr_awexists,           \
    (z_, path, watcher, watcherCtx, completion, data))                         \
  X(G, 0, int, zoo_aget,                                                       \
    (zhandle_t *zh, const char *path, int watch, data_completion_t completion, \
     const void *data),                                                        \
    (zh, path, watch, completion, data), zkr_aget,                             \
    (z_, path, watch, completion, data))                                       \
  X(G, T, int, zoo_awget,                                                      \
    (zhandle_t *zh, const char *path, watcher_fn watcher, void *watcherCtx,    \
     data_completion_t completion, const void *data),                          \
    (zh, path, watcher, watcherCtx, completion, data), zkr_awget,              \
    (z_, path, watcher, watcherCtx, completion, data))                         \
  X(G, 0, int, zoo_agetconfig,                                                 \
    (zhandle_t *zh, int watch, data_completion_t completion,                   \
     const void *data),                                                        \
    (zh, watch, completion, data), zkr_aget,                                   \
    (z_, ZOO_CONFIG_NODE, watch, completion, data))                            \
  X(G, T, int, zoo_awgetconfig,                                                \
    (zhandle_t *zh, watcher_fn watcher, void *watcherCtx,                      \
     data_completion_t completion, const void *data),                          \
    (zh, watcher, watcherCtx, completion, data), zkr_awget,                    \
    (z_, ZOO_CONFIG_NODE, watcher, watcherCtx, completion, data))              \
  X(G, 0, int, zoo_aget_children,                                              \
    (zhandle_t *zh, const char *path, int watch,                               \
     strings_completion_t completion, const void *data),                       \
    (zh, path, watch, completion, data), zkr_aget_children,                    \
    (z_, path, watch, completion, data))                                       \
  X(G, T, int, zoo_awget_children,                                             \
    (zhandle_t *zh, const char *path, watcher_fn watcher, void *watcherCtx,    \
     strings_completion_t completion, const void *data),                       \
    (zh, path, watcher, watcherCtx, completion, data), zkr_awget_children,     \
    (z_, path, watcher, watcherCtx, completion, data))                         \
  X(G, 0, int, zoo_aget_children2,                                             \
    (zhandle_t *zh, const char *path, int watch,                               \
     strings_stat_completion_t completion, const void *data),                  \
    (zh, path, watch, completion, data), zkr_aget_children2,                   \
    (z_, path, watch, completion, data))                                       \
  X(G, T, int, zoo_awget_children2,                                            \
    (zhandle_t *zh, const char *path, watcher_fn watcher, void *watcherCtx,    \
     strings_stat_completion_t completion, const void *data),                  \
    (zh, path, watcher, watcherCtx, completion, data), zkr_awget_children2,    \
    (z_, path, watcher, watcherCtx, completion, data))                         \
  X(G, T, int, zoo_aget_acl,                                                   \
    (zhandle_t *zh, const char *path, acl_completion_t completion,             \
     const void *data),                                                        \
    (zh, path, completion, data), zkr_aget_acl, (z_, path, completion, data))  \
  /* A barrier: completes after everything issued before it. */              \
  X(G, T, int, zoo_async,                                                      \
    (zhandle_t *zh, const char *path, string_completion_t completion,          \
     const void *data),                                                        \
    (zh, path, completion, data), zkr_async, (z_, path, completion, data))     \
  /* ---- synchronous calls: the same routing ---- */                        \
  X(G, 0, int, zoo_create,                                                     \
    (zhandle_t *zh, const char *path, const char *value, int valuelen,         \
     const struct ACL_vector *acl, int mode, char *path_buffer,                \
     int path_buffer_len),                                                     \
    (zh, path, value, valuelen, acl, mode, path_buffer, path_buffer_len),      \
    zkr_create,                                                                \
    (z_, path, value, valuelen, acl, mode, path_buffer, path_buffer_len))      \
  X(G, 0, int, zoo_create_ttl,                                                 \
    (zhandle_t *zh, const char *path, const char *value, int valuelen,         \
     const struct ACL_vector *acl, int mode, int64_t ttl, char *path_buffer,   \
     int path_buffer_len),                                                     \
    (zh, path, value, valuelen, acl, mode, ttl, path_buffer,                   \
     path_buffer_len),                                                         \
    zkr_create_ttl,                                                            \
    (z_, path, value, valuelen, acl, mode, ttl, path_buffer,                   \
     path_buffer_len))                                                         \
  X(G, 0, int, zoo_create2,                                                    \
    (zhandle_t *zh, const char *path, const char *value, int valuelen,         \
     const struct ACL_vector *acl, int mode, char *path_buffer,                \
     int path_buffer_len, struct Stat *stat),                                  \
    (zh, path, value, valuelen, acl, mode, path_buffer, path_buffer_len,       \
     stat),                                                                    \
    zkr_create2,                                                               \
    (z_, path, value, valuelen, acl, mode, path_buffer, path_buffer_len,       \
     stat))                                                                    \
  X(G, 0, int, zoo_create2_ttl,                                                \
    (zhandle_t *zh, const char *path, const char *value, int valuelen,         \
     const struct ACL_vector *acl, int mode, int64_t ttl, char *path_buffer,   \
     int path_buffer_len, struct Stat *stat),                                  \
    (zh, path, value, valuelen, acl, mode, ttl, path_buffer,                   \
     path_buffer_len, stat),                                                   \
    zkr_create2_ttl,                                                           \
    (z_, path, value, valuelen, acl, mode, ttl, path_buffer,                   \
     path_buffer_len, stat))                                                   \
  X(G, 0, int, zoo_delete, (zhandle_t *zh, const char *path, int version),     \
    (zh, path, version), zkr_delete, (z_, path, version))                      \
  X(G, 0, int, zoo_set,                                                        \
    (zhandle_t *zh, const char *path, const char *buffer, int buflen,          \
     int version),                                                             \
    (zh, path, buffer, buflen, version), zkr_set,                              \
    (z_, path, buffer, buflen, version))                                       \
  X(G, 0, int, zoo_set2,                                                       \
    (zhandle_t *zh, const char *path, const char *buffer, int buflen,          \
     int version, struct Stat *stat),                                          \
    (zh, path, buffer, buflen, version, stat), zkr_set2,                       \
    (z_, path, buffer, buflen, version, stat))                                 \
  X(G, 0, int, zoo_set_acl,                                                    \
    (zhandle_t *zh, const char *path, int version,                             \
     const struct ACL_vector *acl),                                            \
    (zh, path, version, acl), zkr_set_acl, (z_, path, version, acl))           \
  X(G, 0, int, zoo_multi,                                                      \
    (zhandle_t *zh, int count, const zoo_op_t *ops,                            \
     zoo_op_result_t *results),                                                \
    (zh, count, ops, results), zkr_multi, (z_, count, ops, results))           \
  X(G, 0, int, zoo_exists,                                                     \
    (zhandle_t *zh, const char *path, int watch, struct Stat *stat),           \
    (zh, path, watch, stat), zkr_exists, (z_, path, watch, stat))              \
  X(G, 0, int, zoo_wexists,                                                    \
    (zhandle_t *zh, const char *path, watcher_fn watcher, void *watcherCtx,    \
     struct Stat *stat),                                                       \
    (zh, path, watcher, watcherCtx, stat), zkr_wexists,                        \
    (z_, path, watcher, watcherCtx, stat))                                     \
  X(G, 0, int, zoo_get,                                                        \
    (zhandle_t *zh, const char *path, int watch, char *buffer,                 \
     int *buffer_len, struct Stat *stat),                                      \
    (zh, path, watch, buffer, buffer_len, stat), zkr_get,                      \
    (z_, path, watch, buffer, buffer_len, stat))                               \
  X(G, 0, int, zoo_wget,                                                       \
    (zhandle_t *zh, const char *path, watcher_fn watcher, void *watcherCtx,    \
     char *buffer, int *buffer_len, struct Stat *stat),                        \
    (zh, path, watcher, watcherCtx, buffer, buffer_len, stat), zkr_wget,       \
    (z_, path, watcher, watcherCtx, buffer, buffer_len, stat))                 \
  X(G, 0, int, zoo_getconfig,                                                  \
    (zhandle_t *zh, int watch, char *buffer, int *buffer_len,                  \
     struct Stat *stat),                                                       \
    (zh, watch, buffer, buffer_len, stat), zkr_get,                            \
    (z_, ZOO_CONFIG_NODE, watch, buffer, buffer_len, stat))                    \
  X(G, 0, int, zoo_wgetconfig,                                                 \
    (zhandle_t *zh, watcher_fn watcher, void *watcherCtx, char *buffer,        \
     int *buffer_len, struct Stat *stat),                                      \
    (zh, watcher, watcherCtx, buffer, buffer_len, stat), zkr_wget,             \
    (z_, ZOO_CONFIG_NODE, watcher, watcherCtx, buffer, buffer_len, stat))      \
  X(G, 0, int, zoo_get_children,                                               \
    (zhandle_t *zh, const char *path, int watch,                               \
     struct String_vector *strings),                                           \
    (zh, path, watch, strings), zkr_get_children, (z_, path, watch, strings))  \
  X(G, 0, int, zoo_wget_children,                                              \
    (zhandle_t *zh, const char *path, watcher_fn watcher, void *watcherCtx,    \
     struct String_vector *strings),                                           \
    (zh, path, watcher, watcherCtx, strings), zkr_wget_children,               \
    (z_, path, watcher, watcherCtx, strings))                                  \
  X(G, 0, int, zoo_get_children2,                                              \
    (zhandle_t *zh, const char *path, int watch,                               \
     struct String_vector *strings, struct Stat *stat),                        \
    (zh, path, watch, strings, stat), zkr_get_children2,                       \
    (z_, path, watch, strings, stat))                                          \
  X(G, 0, int, zoo_wget_children2,                                             \
    (zhandle_t *zh, const char *path, watcher_fn watcher, void *watcherCtx,    \
     struct String_vector *strings, struct Stat *stat),                        \
    (zh, path, watcher, watcherCtx, strings, stat), zkr_wget_children2,        \
    (z_, path, watcher, watcherCtx, strings, stat))                            \
  X(G, 0, int, zoo_get_acl,                                                    \
    (zhandle_t *zh, const char *path, struct ACL_vector *acl,                  \
     struct Stat *stat),                                                       \
    (zh, path, acl, stat), zkr_get_acl, (z_, path, acl, stat))                 \
  /* ---- without a handle: the process-wide client library, which the      \
   * member sessions use too; the interposer passes them on ---- */          \
  N(G, , void, zoo_set_debug_level, (ZooLogLevel logLevel), (logLevel))        \
  N(G, , void, zoo_set_log_stream, (FILE *logStream), (logStream))             \
  N(G, return, FILE *, zoo_get_log_stream, (void), ())                         \
  N(G, , void, zoo_deterministic_conn_order, (int yesOrNo), (yesOrNo))         \
  N(G, return, int64_t, zoo_htonll, (int64_t v), (v))                          \
  N(G, , void, zoo_create_op_init,                                             \
    (zoo_op_t *op, const char *path, const char *value, int valuelen,          \
     const struct ACL_vector *acl, int mode, char *path_buffer,                \
     int path_buffer_len),                                                     \
    (op, path, value, valuelen, acl, mode, path_buffer, path_buffer_len))      \
  N(G, , void, zoo_create2_op_init,                                            \
    (zoo_op_t *op, const char *path, const char *value, int valuelen,          \
     const struct ACL_vector *acl, int mode, char *path_buffer,                \
     int path_buffer_len),                                                     \
    (op, path, value, valuelen, acl, mode, path_buffer, path_buffer_len))      \
  N(G, , void, zoo_delete_op_init,                                             \
    (zoo_op_t *op, const char *path, int version), (op, path, version))        \
  N(G, , void, zoo_set_op_init,                                                \
    (zoo_op_t *op, const char *path, const char *buffer, int buflen,           \
     int version, struct Stat *stat),                                          \
    (op, path, buffer, buflen, version, stat))                                 \
  N(G, , void, zoo_check_op_init,                                              \
    (zoo_op_t *op, const char *path, int version), (op, path, version))        \
  /* zkroute's own codes get zkroute's text (compat.h: zkr_strerror). */     \
  N(H, return, const char *, zerror, (int c), (c))
/* clang-format on */

/* Selectors on the gen and tbl columns: ZKR__PL_<gen>(...) keeps its
 * arguments when the interposer's wrapper is generated, ZKR__CO_<gen>(...)
 * when the compat adapter is, ZKR__TBL_<tbl>(...) for a table field. */
#define ZKR__PL_G(...) __VA_ARGS__
#define ZKR__PL_P(...)
#define ZKR__PL_C(...) __VA_ARGS__
#define ZKR__PL_H(...)
#define ZKR__CO_G(...) __VA_ARGS__
#define ZKR__CO_P(...) __VA_ARGS__
#define ZKR__CO_C(...)
#define ZKR__CO_H(...)
#define ZKR__TBL_T(...) __VA_ARGS__
#define ZKR__TBL_0(...)

/* One declaration per function (X and N alike): generated declarations
 * repeat zookeeper.h's, which makes a difference a compile error, and
 * declare those it lacks (zoo_lock_auth, zoo_htonll, zookeeper_interest
 * under THREADED, ...). */
#define ZKR__DECLARE_X(gen, tbl, ret, name, params, ...) ret name params;
#define ZKR__DECLARE_N(gen, rv, ret, name, params, args) ret name params;

#endif
