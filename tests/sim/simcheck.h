/* The checkers: each judges a recorded history (history.h) and shares no
 * code with zkroute nor with the simulated ensemble.  Every one reports
 * its violations into a check_out_t (check_common.c).
 *
 * - check_lin: linearizability of each key (Wing-Gong search, unknown
 *   outcomes as "maybe applied");
 * - check_order: the handle's writes applied in issue order,
 *   read-your-writes, monotonic reads, completion order of writes and the
 *   zoo_async barrier;
 * - check_once: every completion exactly once, none for a call that failed;
 * - check_watch: watcher calls against a model of the stock client's
 *   tables (once per pair and event, set order, session events to every
 *   watcher, nothing after EXPIRED, no spurious event) and liveness (a
 *   watch whose node changed fires);
 * - check_session: the client id never changes within a handle, no server
 *   answer before CONNECTED, every ephemeral owned by the client id the
 *   application saw;
 * - check_watchdog: no operation left hanging, the run settled, no
 *   livelock, no API misuse;
 * - check_live: no operation fails for want of a connection or a session
 *   before the schedule's first fault (the ensemble healthy). */
#ifndef SIM_CHECK_H
#define SIM_CHECK_H

#include <stddef.h>

#include "history.h"

enum { CK_LIN, CK_ORDER, CK_ONCE, CK_WATCH, CK_SESSION, CK_WATCHDOG, CK_LIVE, CK_COUNT };

#define CHECK_TEXT 6000

typedef struct check_out {
  int violations[CK_COUNT];
  int checked[CK_COUNT];
  int undecided;  /* keys the linearizability search gave up on (budget) */
  int live_later; /* of checked[CK_LIVE]: operations judged in a later span */
  char text[CHECK_TEXT];
  size_t len;
} check_out_t;

void check_init(check_out_t *c);
/* Counts a violation of checker `which` and keeps its message (the first
 * few of each checker). */
void check_fail(check_out_t *c, int which, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
int check_total(const check_out_t *c);
const char *check_name(int which);

void check_lin(const hist_t *h, check_out_t *c);
void check_order(const hist_t *h, check_out_t *c);
void check_once(const hist_t *h, check_out_t *c);
void check_watch(const hist_t *h, check_out_t *c);
void check_session(const hist_t *h, check_out_t *c);
void check_watchdog(const hist_t *h, check_out_t *c);
void check_live(const hist_t *h, check_out_t *c);
/* Every checker above. */
void check_all(const hist_t *h, check_out_t *c);

/* Outcome classes of a write's return code (shared by the checkers). */
int check_maybe(int rc);   /* may have been applied: no answer from the server */
int check_refused(int rc); /* the server refused it: not applied */

#endif
