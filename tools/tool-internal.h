/* The one way from the tools into the library's internals.  The tools use
 * the public headers (<zkroute.h>, <zkroute/...>) for everything else;
 * they need two parts the public API does not offer, linked from
 * libzkroute_pure (Makefile.am):
 *
 * - the host list parser, so that a tool reads HOSTS exactly as the
 *   library does and numbers the members as zkr_stats() does:
 *   zkr__hostlist_t, zkr__host_t, zkr__hosts_parse, zkr__hosts_free,
 *   zkr__hosts_format, ZKR__HOSTS_MAX_MEMBERS and ZKR__HOSTS_MAX_LEN
 *   (zkroute-bench, zkroute-fleet);
 * - the srvr client, which finds the leader and reads each server's
 *   counters around a trial, outside any handle: zkr__srvr_fetch and
 *   zkr__srvr_reply_t (zkroute-bench).
 *
 * Nothing else of the library is theirs: the tools are compiled without
 * the library's folder on the include path, so another private header
 * does not compile, and when the library's files move these two lines are
 * the only ones of the tools that follow. */
#ifndef ZKR_TOOL_INTERNAL_H
#define ZKR_TOOL_INTERNAL_H

#include "../zkroute/model/hosts.h"
#include "../zkroute/model/srvr.h"

#endif
