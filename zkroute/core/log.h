/* Log lines of routing state changes (zkr__log_*; docs/operations.md): one
 * key=value line per leader change, ejection, reinstatement, rescue,
 * carrier re-created, watch re-armed or lost and expiry, written through
 * ZooKeeper's own log (log_message, at ZooKeeper's levels, to the log
 * callback of the handle's sessions or else the log stream), with a storm
 * limit per handle that counts what it drops. */
#ifndef ZKR_LOG_H
#define ZKR_LOG_H

#include <stdatomic.h>
#include <stdint.h>
#include <zookeeper/zookeeper.h>

#include "zkroute.h"

struct zkr;

/* The storm limit: a token bucket of ZKR__LOG_BURST lines refilled at
 * ZKR__LOG_RATE lines a second.  Pure: the caller passes the time. */
#define ZKR__LOG_BURST 20
#define ZKR__LOG_RATE 5.0
typedef struct zkr__log_limit {
  double tokens;
  uint64_t last_ns;
  uint64_t dropped; /* lines dropped since the last report of them */
  int started;
} zkr__log_limit_t;

/* 1: a line may go now (it takes a token); 0: it is dropped and counted.
 * When it may go, *report is the count of lines dropped before it that
 * were not reported yet (to report first, with the token of this line),
 * and that count restarts.
 * The logging thread, under z->log's spin flag.  @locks none. */
int zkr__log_limit_take(zkr__log_limit_t *l, uint64_t now_ns, uint64_t *report);
/* Lines dropped and not reported yet, when a token is free to report
 * them now (the token is taken and the count restarts); 0 otherwise.
 * The monitor, under z->log's spin flag.  @locks none. */
uint64_t zkr__log_limit_flush(zkr__log_limit_t *l, uint64_t now_ns);

/* A handle's share: the limit, under a spin lock (a line is rare and the
 * critical section a few instructions), and its counters (zkr_stats). */
typedef struct zkr__log {
  atomic_flag busy;
  zkr__log_limit_t limit;
  _Atomic uint64_t lines, dropped;
} zkr__log_t;

/* One line "event=EVENT handle=N member=HOST:PORT " followed by fmt, at
 * level, if ZooKeeper's log level lets it through and the storm limit
 * does.  member is a member slot (the owner slot names the member whose
 * server holds the owner session), or -1 for none.  The call site's
 * function and line are ZooKeeper's funcName@line, as with its LOG_*
 * macros.  Any thread; it may run the application's log callback, on that
 * thread, with zkroute's locks held, as ZooKeeper does with its own lines:
 * the callback must not call back into the library.
 * Any thread, any lock held.  @locks as zkr__log_emit. */
#define zkr__log_event(z, level, event, member, ...)                                               \
  zkr__log_emit(z, level, __func__, __LINE__, event, member, __VA_ARGS__)
/* Any thread, any lock held.  @locks none of the table (z->log's spin flag, a leaf). */
void zkr__log_emit(struct zkr *z, ZooLogLevel level, const char *func, int line, const char *event,
                   int member, const char *fmt, ...) __attribute__((format(printf, 7, 8)));
/* The monitor's turn: reports lines dropped by the storm limit once it
 * lets a line through again, even when no new event comes.
 * The monitor.  @locks none of the table (z->log's spin flag, a leaf). */
void zkr__log_tick(struct zkr *z, uint64_t now_ns);
/* Fills s->log_lines and s->log_dropped.
 * zkr_stats' caller.  @locks none (atomics). */
void zkr__log_stats(struct zkr *z, zkr_stats_t *s);

/* One line "zkroute: ...\n" on stderr, written with a single write(2) so
 * lines of several threads do not mix: for what concerns no handle's
 * ZooKeeper log (the environment, the drop-in, the metrics endpoint).
 * Any thread, no handle.  @locks none. */
void zkr__log_note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
