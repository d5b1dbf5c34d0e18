/* The function table through which the library reaches libzookeeper_mt.
 * Every call into ZooKeeper goes through zkr__zk, never by name, so that
 * an LD_PRELOAD interposer that defines zookeeper_init and zoo_* itself can
 * point the table at the real functions (dlsym RTLD_NEXT) without the
 * library recursing into the interposer, and so that unit tests can run the
 * router on a fake (tests/unit/fakezk.c).  The default table holds the real
 * functions.  The `srvr` four-letter query is part of the table too, so a
 * fake ensemble also answers who leads, and name resolution too, so a fake
 * DNS can add and remove addresses. */
#ifndef ZKR_ZKAPI_H
#define ZKR_ZKAPI_H

#include <stddef.h>
#include <sys/socket.h>
#include <zookeeper/zookeeper.h>

struct zkr__srvr_reply;
struct zkr__host;

typedef struct zkr__zk {
  zhandle_t *(*init)(const char *host, watcher_fn fn, int recv_timeout,
                     const clientid_t *clientid, void *context, int flags);
  int (*close)(zhandle_t *zh);
  /* The handle's own state, as zoo_state: checked right before a close
   * that must not end a connected session (rescue.c). */
  int (*state)(zhandle_t *zh);
  const clientid_t *(*client_id)(zhandle_t *zh);
  int (*recv_timeout)(zhandle_t *zh);
  int (*add_auth)(zhandle_t *zh, const char *scheme, const char *cert,
                  int certLen, void_completion_t completion, const void *data);
  int (*acreate_ttl)(zhandle_t *zh, const char *path, const char *value,
                     int valuelen, const struct ACL_vector *acl, int mode,
                     int64_t ttl, string_completion_t completion,
                     const void *data);
  int (*acreate2_ttl)(zhandle_t *zh, const char *path, const char *value,
                      int valuelen, const struct ACL_vector *acl, int mode,
                      int64_t ttl, string_stat_completion_t completion,
                      const void *data);
  int (*adelete)(zhandle_t *zh, const char *path, int version,
                 void_completion_t completion, const void *data);
  int (*aset)(zhandle_t *zh, const char *path, const char *buffer, int buflen,
              int version, stat_completion_t completion, const void *data);
  int (*aset_acl)(zhandle_t *zh, const char *path, int version,
                  struct ACL_vector *acl, void_completion_t completion,
                  const void *data);
  int (*amulti)(zhandle_t *zh, int count, const zoo_op_t *ops,
                zoo_op_result_t *results, void_completion_t completion,
                const void *data);
  int (*awexists)(zhandle_t *zh, const char *path, watcher_fn watcher,
                  void *watcherCtx, stat_completion_t completion,
                  const void *data);
  int (*awget)(zhandle_t *zh, const char *path, watcher_fn watcher,
               void *watcherCtx, data_completion_t completion,
               const void *data);
  int (*awget_children)(zhandle_t *zh, const char *path, watcher_fn watcher,
                        void *watcherCtx, strings_completion_t completion,
                        const void *data);
  int (*awget_children2)(zhandle_t *zh, const char *path, watcher_fn watcher,
                         void *watcherCtx,
                         strings_stat_completion_t completion,
                         const void *data);
  int (*aget_acl)(zhandle_t *zh, const char *path, acl_completion_t completion,
                  const void *data);
  int (*async)(zhandle_t *zh, const char *path, string_completion_t completion,
               const void *data);
  int (*set_resolution_delay)(zhandle_t *zh, int delay_ms);
  /* NULL (a table that predates it): membership does not follow
   * /zookeeper/config (membership.c). */
  int (*awgetconfig)(zhandle_t *zh, watcher_fn watcher, void *watcherCtx,
                     data_completion_t completion, const void *data);
  int (*areconfig)(zhandle_t *zh, const char *joining, const char *leaving,
                   const char *members, int64_t version, data_completion_t dc,
                   const void *data);
  /* Watch removal (watch_remove.c).  The asynchronous ones take the
   * completion as ZooKeeper declares it (a pointer to one) and call it as
   * the function itself; local removal is made with the synchronous call,
   * which does not wait for a server when local is set. */
  int (*remove_watches)(zhandle_t *zh, const char *path, ZooWatcherType wtype,
                        watcher_fn watcher, void *watcherCtx, int local);
  int (*aremove_watches)(zhandle_t *zh, const char *path, ZooWatcherType wtype,
                         watcher_fn watcher, void *watcherCtx, int local,
                         void_completion_t *completion, const void *data);
  int (*aremove_all_watches)(zhandle_t *zh, const char *path,
                             ZooWatcherType wtype, int local,
                             void_completion_t *completion, const void *data);
  struct sockaddr *(*connected_host)(zhandle_t *zh, struct sockaddr *addr,
                                     socklen_t *addr_len);
  /* srvr of one server (srvr.c's zkr__srvr_fetch): ZOK or a ZKR_ESRVR_*. */
  int (*srvr)(const char *host, int port, int timeout_ms, size_t cap,
              struct zkr__srvr_reply *out);
  /* Resolves a host name of the connect string into addresses
   * (zkr__resolve_fn of hosts.h; resolve.c's getaddrinfo).  NULL (a table
   * that predates it): names are not resolved, each is one member whose
   * session resolves it itself. */
  int (*resolve)(const char *name, int port, struct zkr__host *out, size_t cap,
                 size_t *n);
} zkr__zk_t;

/* The table in force; never NULL. */
extern const zkr__zk_t *zkr__zk;

/* Replaces the table (NULL: back to the real functions).  Call before any
 * handle exists: handles in use keep calling through whichever table is in
 * force at each call. */
void zkr__zk_use(const zkr__zk_t *table);

/* The table of the real functions as this library was linked. */
extern const zkr__zk_t zkr__zk_real;

#endif
