/* The process's srvr answers (zkr__srvr_cache_*): the handles of one
 * process that poll the same server share its answers, so that N handles
 * to one ensemble cost the servers about one poll per server and period,
 * not N. */
#ifndef ZKR_SRVR_CACHE_H
#define ZKR_SRVR_CACHE_H

#include <stddef.h>
#include <stdint.h>

#include "model/srvr.h"

/* host:port's srvr answer (zkr__zk->srvr: ZOK or a ZKR_ESRVR_*, and *out):
 * one whose request started at or after since (zkr__now_ns), by any handle
 * of the process, or the answer of such a request still in flight (waited
 * for), or else a request of its own, whose answer is kept for the others.
 * since UINT64_MAX always sends one.  *sent: 1 when this call sent it.  Blocks up to
 * timeout_ms (or the request joined, started with its own timeout).
 * Takes the cache's mu (a leaf), never across the request.  Any thread.
 * Called by the monitor's poller.  @locks the srvr cache's mu. */
int zkr__srvr_cache_query(const char *host, int port, int timeout_ms, size_t cap, uint64_t since,
                          zkr__srvr_reply_t *out, int *sent);

/* The cached answer of host:port whose request started at or after since
 * (copied to *out and *rc): 1, or 0 when there is none.  Never blocks nor
 * sends.
 * The monitor.  @locks the srvr cache's mu. */
int zkr__srvr_cache_fresh(const char *host, int port, uint64_t since, zkr__srvr_reply_t *out,
                          int *rc);

#endif
