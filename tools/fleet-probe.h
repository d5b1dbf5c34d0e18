/* What zkroute-fleet measures from outside the handles: this process's
 * memory, threads and descriptors (/proc/self), a server's counters (the
 * srvr and mntr four-letter words), and a server JVM's CPU time
 * (/proc/PID/stat) and live heap (jcmd).
 * Every call is bounded in time; none keeps state. */
#ifndef ZKR_FLEET_PROBE_H
#define ZKR_FLEET_PROBE_H

#include <stddef.h>
#include <stdint.h>

/* This process: resident set (KiB), threads, open descriptors.  Each is -1
 * when it could not be read. */
typedef struct fleet_self {
  int64_t rss_kib;
  int64_t threads;
  int64_t fds;
} fleet_self_t;

void fleet_self_read(fleet_self_t *out);

/* One server's counters.  -1 when the server did not answer or the field
 * was missing. */
typedef struct fleet_server {
  int64_t received;    /* srvr Received: packets, 4lw queries included */
  int64_t connections; /* srvr Connections: client connections, this
                          query's own included */
  int64_t sessions;    /* mntr zk_global_sessions (ensemble-wide on the
                          leader) */
  int64_t watches;     /* mntr zk_watch_count */
  int leader;          /* srvr Mode: leader (1), else 0 */
} fleet_server_t;

/* Queries srvr then mntr on host:port, each within timeout_ms.  Returns 0
 * when srvr answered (mntr may still be missing: its fields are -1). */
int fleet_server_read(const char *host, int port, int timeout_ms, fleet_server_t *out);

/* Sends a four-letter word and reads the reply to EOF, at most cap - 1
 * bytes (NUL-terminated).  Returns the reply's length, or -1 on connect
 * failure, timeout or a reply larger than the buffer. */
long fleet_4lw(const char *host, int port, const char *cmd, int timeout_ms, char *buf, size_t cap);

/* The server JVM pid's live heap (KiB): `jcmd PID GC.run`, then `jcmd PID
 * GC.heap_info`, whose old generation's "used" figure holds every live
 * object after the full collection (the heap's figure, for collectors
 * without generations).  jcmd is the jcmd binary; NULL skips it (-1).
 * Each jcmd call is killed after timeout_s.  *why says why the heap is
 * missing (static text), or is NULL. */
void fleet_jvm_read(int pid, const char *jcmd, int timeout_s, int64_t *heap_kib, const char **why);

#endif
