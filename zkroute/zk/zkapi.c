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
