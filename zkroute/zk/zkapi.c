/* The default function table: libzookeeper_mt's functions as linked (see
 * zkapi.h for why the library never calls them by name). */
#include "zk/zkapi.h"
#include "zk/resolve.h"
#include "model/srvr.h"

#define REAL_FIELD(gen, tbl, ret, name, ...) ZKR__TBL_##tbl(.name = name, )

const zkr__zk_t zkr__zk_real = {
    ZKR_ZOO_CALLS(REAL_FIELD, ZKR__ZK_NONE).srvr = zkr__srvr_fetch,
    .resolve = zkr__resolve_addrinfo,
};

const zkr__zk_t *zkr__zk = &zkr__zk_real;

void zkr__zkapi_use(const zkr__zk_t *table) { zkr__zk = table ? table : &zkr__zk_real; }

/* libzookeeper_mt 3.8.0 as Debian ships it makes zoo_awget_children2 a
 * 5-byte jump into a static function, so its name is in no stack (and
 * dispatch.c's send_request reaches it by a tail call, which leaves no
 * frame of its own either).  zookeeper_close may drop a request in flight
 * without freeing its completion entry, watch registration and path copy
 * (docs/robustness.md); tests/harness/lsan.supp suppresses that by
 * a frame named zoo_a*, which such a request then lacks whenever zkroute
 * sent it on its own - a coalesced sync's waiting reads, sent from the
 * completion thread (dispatch.c), a re-armed child watch, a hedge - rather
 * than under an API call of the application (zkr_compat_zoo_a*,
 * zkr_a*): the soak's daemon d4 exited 1 under ASan with such a leak.
 * This function is that frame: called from other files, never inlined,
 * and its call is no tail call.  It allocates nothing itself, and the
 * library runs no callback inside the call: only the library's memory is
 * matched through it. */
__attribute__((noinline)) int zkr__zkapi_zoo_awget_children2(zhandle_t *zh, const char *path,
                                                             watcher_fn watcher, void *watcherCtx,
                                                             strings_stat_completion_t completion,
                                                             const void *data) {
  int rc = zkr__zk->zoo_awget_children2(zh, path, watcher, watcherCtx, completion, data);
  __asm__ __volatile__("" : : : "memory"); /* the call is not the last thing: no tail call */
  return rc;
}
