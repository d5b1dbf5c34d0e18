/* The function table through which the library reaches libzookeeper_mt.
 * Every call into ZooKeeper goes through zkr__zk, never by name, so that
 * an LD_PRELOAD interposer that defines zookeeper_init and zoo_* itself can
 * point the table at the real functions (dlsym RTLD_NEXT) without the
 * library recursing into the interposer, and so that unit tests can run the
 * router on a fake (tests/harness/fakezk.c).  The default table holds the real
 * functions.  The `srvr` four-letter query is part of the table too, so a
 * fake ensemble also answers who leads, and name resolution too, so a fake
 * DNS can add and remove addresses. */
#ifndef ZKR_ZKAPI_H
#define ZKR_ZKAPI_H

#include <stddef.h>
#include <sys/socket.h>
#include <zookeeper/zookeeper.h>

#include "zkroute/calls.h"

struct zkr__srvr_reply;
struct zkr__host;

/* One field per function of the call list marked T (<zkroute/calls.h>),
 * named and typed as the function itself: zkr__zk->zoo_awget(...).  A
 * table made before a field existed may leave it NULL where the field
 * says so: zoo_set_servers_resolution_delay (zkr__member_* skips it),
 * zoo_awgetconfig (membership does not follow /zookeeper/config).  Watch
 * removal's asynchronous calls take the completion as ZooKeeper declares
 * it (a pointer to one) and call it as the function itself; local removal
 * is made with the synchronous call, which does not wait for a server when
 * local is set (zkr__watch_remove_*).  The context of every zookeeper_init the
 * library makes is the member (zkr__member_t *) the session is for: the
 * interposer's table finds the program's log callback through it. */
#define ZKR__ZK_FIELD(gen, tbl, ret, name, params, ...) ZKR__TBL_##tbl(ret(*name) params;)
#define ZKR__ZK_NONE(...)

typedef struct zkr__zk {
  ZKR_ZOO_CALLS(ZKR__ZK_FIELD, ZKR__ZK_NONE)
  /* srvr of one server (zkr__srvr_fetch): ZOK or a ZKR_ESRVR_*. */
  int (*srvr)(const char *host, int port, int timeout_ms, size_t cap, struct zkr__srvr_reply *out);
  /* Resolves a host name of the connect string into addresses
   * (zkr__resolve_fn of hosts.h; zkr__resolve_addrinfo).  NULL (a table
   * that predates it): names are not resolved, each is one member whose
   * session resolves it itself. */
  int (*resolve)(const char *name, int port, struct zkr__host *out, size_t cap, size_t *n);
} zkr__zk_t;

/* The table in force; never NULL. */
extern const zkr__zk_t *zkr__zk;

/* Replaces the table (NULL: back to the real functions).  Call before any
 * handle exists: handles in use keep calling through whichever table is in
 * force at each call.
 * Before any handle exists (tests, the drop-in's setup).  @locks none. */
void zkr__zkapi_use(const zkr__zk_t *table);

/* The table of the real functions as this library was linked. */
extern const zkr__zk_t zkr__zk_real;

/* zkr__zk->zoo_awget_children2, called in a frame of its own named after
 * it (zkapi.c: LeakSanitizer's suppression of the requests
 * zookeeper_close drops needs a frame named zoo_a* in their stack).
 * @locks none of its own. */
int zkr__zkapi_zoo_awget_children2(zhandle_t *zh, const char *path, watcher_fn watcher,
                                   void *watcherCtx, strings_stat_completion_t completion,
                                   const void *data);

#endif
