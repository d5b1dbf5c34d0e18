/* The seeded workload (workload.c): tasks that drive one handle through a
 * zkapi-shaped table of calls and record everything in the history. */
#ifndef SIM_WORKLOAD_H
#define SIM_WORKLOAD_H

#include <stdint.h>
#include <zookeeper/zookeeper.h>

#include "history.h"
#include "zk/zkapi.h"

typedef struct wl wl_t;

/* Blocking calls, where the mode has them (zkr_get, zkr_set2, zkr_exists). */
typedef struct wl_blocking {
  int (*get)(zhandle_t *zh, const char *path, char *buf, int *len, struct Stat *st);
  int (*set)(zhandle_t *zh, const char *path, const char *buf, int len, int version,
             struct Stat *st);
  int (*exists)(zhandle_t *zh, const char *path, struct Stat *st);
} wl_blocking_t;

/* Opens the first handle on hosts (zookeeper_init through T) and starts
 * the tasks once its base nodes exist; X is the other client's table (the
 * external writer's, always the stock model). */
wl_t *wl_start(hist_t *h, const zkr__zk_t *T, const zkr__zk_t *X, const char *hosts,
               int timeout_ms);
void wl_set_blocking(wl_t *w, const wl_blocking_t *b);
/* The blocking call being made (its op), taken once by the runtime's wait
 * that it enters (-1 none): every task runs on one C stack, so a blocking
 * call made while another waits nests inside it, and the outer one
 * returns only after the inner one.  Its completion is recorded when its
 * answer came (wl_blocking_answered, from the inner wait), where a thread
 * of a threaded program would have returned, not at that late return. */
int wl_take_blocking_op(void);
void wl_blocking_answered(int op);
/* No new operation from now on. */
void wl_stop(wl_t *w);
/* Every operation issued has completed. */
int wl_idle(wl_t *w);
int wl_connected(wl_t *w);
/* The current handle's session ended (expired, auth failed). */
int wl_ended(wl_t *w);
/* zookeeper_close of the current handle, recorded. */
void wl_close(wl_t *w);
int64_t wl_session(wl_t *w);
void wl_free(wl_t *w);

#endif
