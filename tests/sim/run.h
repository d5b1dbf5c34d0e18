/* One schedule, start to verdict (run.c): builds the world from a seed,
 * runs the workload under the fault schedule, heals, runs to quiescence,
 * closes, and hands the history to every checker. */
#ifndef SIM_RUN_H
#define SIM_RUN_H

#include <stddef.h>
#include <stdint.h>

#include "simcheck.h"

enum { SIM_STOCK = 0, SIM_ROUTED = 1 };

typedef struct sim_opts {
  uint64_t seed;
  int mode;             /* SIM_STOCK, SIM_ROUTED */
  int bug;              /* SIM_BUG_* (a planted model bug), 0 none */
  int seconds;          /* length of the fault phase (0: 6) */
  int verbose;          /* print the history's marks and the report */
  int session;          /* routed: the library's consistency=session (default linearizable) */
  int idle_park_ms;     /* routed: the handles' idle_park_ms (0: the library's default,
                       longer than a schedule) */
  int io_loss_pct;      /* routed: --io-loss, % of syncs after which a connection is
                       lost before the next request (client.c submit) */
  int slow_calls;       /* routed: --slow-calls, zookeeper_init takes time (client.c) */
  int writes_after_end; /* --writes-after-end: the session checker's rule (check_session.c) */
} sim_opts_t;

typedef struct sim_result {
  int violations;
  int faults;
  int servers;
  uint64_t events, sim_ns;
  int ops, txns;
  uint64_t digest; /* of the whole history: the same seed gives the same digest */
  check_out_t check;
} sim_result_t;

/* Runs one schedule; returns the number of violations. */
int sim_run(const sim_opts_t *o, sim_result_t *r);

#endif
