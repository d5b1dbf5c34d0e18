/* Log lines of routing state changes (docs/operations.md).  The state
 * changes an operator wants to see - leader change, ejection,
 * reinstatement, owner rescue, carrier re-created, watch re-armed or lost,
 * expiry - each call zkr__log_event() where they happen, with one line of
 * key=value pairs.  The line goes through ZooKeeper's own log_message()
 * (zookeeper_log.h, zk_log.c of ZooKeeper 3.8: it adds the time, pid,
 * thread, level and funcName@line, then calls the log callback when one is
 * given and else writes to zoo_get_log_stream()), so it lands where the
 * application sends ZooKeeper's log: the callback of its zookeeper_init2
 * or zoo_set_log_callback (which the interposer gives every member
 * session), else the stream of zoo_set_log_stream (stderr by default).
 * ZooKeeper's logLevel filters it as it filters ZooKeeper's own lines.
 *
 * A storm - a hundred watches re-armed after one carrier is lost, a member
 * flapping - is cut by a token bucket per handle: ZKR__LOG_BURST lines at
 * once, ZKR__LOG_RATE a second after that; the lines dropped are counted
 * (zkr_stats: log.dropped) and reported in one line of their own as soon
 * as the bucket lets a line through again. */
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <unistd.h>

#include "core/handle.h"
#include "core/log.h"
#include "zk/zkapi.h"

/* Exported by libzookeeper_mt and declared in its zookeeper_log.h, which
 * includes <zookeeper.h> by a path the installed headers do not have. */
extern ZOOAPI ZooLogLevel logLevel;
ZOOAPI void log_message(log_callback_fn callback, ZooLogLevel curLevel, int line,
                        const char *funcName, const char *format, ...);

static void refill(zkr__log_limit_t *l, uint64_t now_ns) {
  if (!l->started) {
    l->started = 1;
    l->tokens = ZKR__LOG_BURST;
    l->last_ns = now_ns;
    return;
  }
  if (now_ns <= l->last_ns) return;
  l->tokens += (double)(now_ns - l->last_ns) / 1e9 * ZKR__LOG_RATE;
  if (l->tokens > ZKR__LOG_BURST) l->tokens = ZKR__LOG_BURST;
  l->last_ns = now_ns;
}

int zkr__log_limit_take(zkr__log_limit_t *l, uint64_t now_ns, uint64_t *report) {
  refill(l, now_ns);
  *report = 0;
  if (l->tokens < 1) {
    l->dropped++;
    return 0;
  }
  l->tokens -= 1;
  *report = l->dropped;
  l->dropped = 0;
  return 1;
}

uint64_t zkr__log_limit_flush(zkr__log_limit_t *l, uint64_t now_ns) {
  if (!l->dropped) return 0;
  refill(l, now_ns);
  if (l->tokens < 1) return 0;
  l->tokens -= 1;
  uint64_t n = l->dropped;
  l->dropped = 0;
  return n;
}

static void lock(zkr__log_t *g) {
  while (atomic_flag_test_and_set_explicit(&g->busy, memory_order_acquire)) sched_yield();
}
static void unlock(zkr__log_t *g) { atomic_flag_clear_explicit(&g->busy, memory_order_release); }

/* The log callback of the handle's sessions: the interposer gives every
 * member session the program's (zookeeper_init2, zoo_set_log_callback);
 * NULL means ZooKeeper's log stream.  A session whose lock is busy is
 * passed over rather than waited for: a line may be logged from under the
 * write lock of one. */
static int session_callback(zkr__member_t *m, log_callback_fn *cb) {
  if (pthread_rwlock_tryrdlock(&m->zh_lock) != 0) return 0;
  int found = m->zh != NULL;
  if (found) *cb = zkr__zk->zoo_get_log_callback(m->zh);
  pthread_rwlock_unlock(&m->zh_lock);
  return found;
}

static log_callback_fn callback(zkr_t *z) {
  log_callback_fn cb = NULL;
  if (!zkr__zk->zoo_get_log_callback) return NULL;
  int o = z->owner;
  if (o >= 0 && session_callback(&z->members[o], &cb)) return cb;
  size_t n = z->n;
  for (size_t i = 0; i < n; i++)
    if (session_callback(&z->members[i], &cb)) return cb;
  return NULL;
}

/* The address of slot i: the owner slot's is the member whose server
 * holds the owner session. */
static const char *address(zkr_t *z, int i) {
  if (i < 0 || (size_t)i > z->cap) return "-";
  const zkr__member_t *m = &z->members[i];
  if (m->owner_slot) {
    int h = m->hosted_on;
    return h >= 0 && (size_t)h < z->cap ? z->members[h].address : "-";
  }
  return m->address[0] ? m->address : "-";
}

static void write_line(zkr_t *z, ZooLogLevel level, const char *func, int line, const char *text) {
  log_message(callback(z), level, line, func, "%s", text);
  atomic_fetch_add(&z->log.lines, 1);
}

static void report_dropped(zkr_t *z, uint64_t n) {
  char text[160];
  snprintf(text, sizeof text, "event=log_dropped handle=%u lines=%llu reason=storm_limit",
           z->serial, (unsigned long long)n);
  write_line(z, ZOO_LOG_LEVEL_WARN, "zkr__log_emit", __LINE__, text);
}

void zkr__log_emit(zkr_t *z, ZooLogLevel level, const char *func, int line, const char *event,
                   int member, const char *fmt, ...) {
  if (logLevel < level) return; /* as ZooKeeper's LOG_* macros */
  uint64_t report;
  lock(&z->log);
  int go = zkr__log_limit_take(&z->log.limit, zkr__now_ns(), &report);
  unlock(&z->log);
  if (!go) {
    atomic_fetch_add(&z->log.dropped, 1);
    return;
  }
  if (report) report_dropped(z, report);
  char text[1024];
  int n = snprintf(text, sizeof text, "event=%s handle=%u member=%s ", event, z->serial,
                   address(z, member));
  if (n < 0 || (size_t)n >= sizeof text) return;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(text + n, sizeof text - (size_t)n, fmt, ap);
  va_end(ap);
  write_line(z, level, func, line, text);
}

void zkr__log_tick(zkr_t *z, uint64_t now_ns) {
  if (!atomic_load_explicit(&z->log.dropped, memory_order_relaxed)) return;
  lock(&z->log);
  uint64_t n = zkr__log_limit_flush(&z->log.limit, now_ns);
  unlock(&z->log);
  if (n && logLevel >= ZOO_LOG_LEVEL_WARN) report_dropped(z, n);
}

void zkr__log_stats(zkr_t *z, zkr_stats_t *s) {
  s->log_lines = atomic_load(&z->log.lines);
  s->log_dropped = atomic_load(&z->log.dropped);
}

void zkr__log_note(const char *fmt, ...) {
  char line[1024];
  int n = snprintf(line, sizeof line, "zkroute: ");
  va_list ap;
  va_start(ap, fmt);
  int m = vsnprintf(line + n, sizeof line - (size_t)n - 1, fmt, ap);
  va_end(ap);
  size_t len = (size_t)n + (m < 0 ? 0 : (size_t)m);
  if (len > sizeof line - 2) len = sizeof line - 2;
  line[len++] = '\n';
  ssize_t w = write(2, line, len);
  (void)w; /* nothing sensible to do when stderr is gone */
}
