/* The default function table: libzookeeper_mt's functions as linked (see
 * zkapi.h for why the library never calls them by name). */
#include "zkapi.h"
#include "resolve.h"
#include "srvr.h"

const zkr__zk_t zkr__zk_real = {
    .init = zookeeper_init,
    .close = zookeeper_close,
    .state = zoo_state,
    .client_id = zoo_client_id,
    .recv_timeout = zoo_recv_timeout,
    .add_auth = zoo_add_auth,
    .acreate_ttl = zoo_acreate_ttl,
    .acreate2_ttl = zoo_acreate2_ttl,
    .adelete = zoo_adelete,
    .aset = zoo_aset,
    .aset_acl = zoo_aset_acl,
    .amulti = zoo_amulti,
    .awexists = zoo_awexists,
    .awget = zoo_awget,
    .awget_children = zoo_awget_children,
    .awget_children2 = zoo_awget_children2,
    .aget_acl = zoo_aget_acl,
    .async = zoo_async,
    .set_resolution_delay = zoo_set_servers_resolution_delay,
    .awgetconfig = zoo_awgetconfig,
    .areconfig = zoo_areconfig,
    .remove_watches = zoo_remove_watches,
    .aremove_watches = zoo_aremove_watches,
    .aremove_all_watches = zoo_aremove_all_watches,
    .connected_host = zookeeper_get_connected_host,
    .srvr = zkr__srvr_fetch,
    .resolve = zkr__resolve_addrinfo,
};

const zkr__zk_t *zkr__zk = &zkr__zk_real;

void zkr__zk_use(const zkr__zk_t *table) {
  zkr__zk = table ? table : &zkr__zk_real;
}
