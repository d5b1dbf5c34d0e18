/* Configuration from the environment, shared by the LD_PRELOAD interposer
 * (zkr__preload_*) and the compat header's zkr_init_env(): the ZKROUTE_*
 * variables read once per process, handles created from them, and the
 * ZKROUTE_STATS records written when such a handle closes or the process
 * exits.  The JSON those records hold is written with the string builder
 * of the statistics (stats.h). */
#ifndef ZKR_ENV_H
#define ZKR_ENV_H

#include <stdarg.h>
#include <stddef.h>

#include "zkroute.h"

/* What the environment says, read once (first use) and never changed. */
typedef struct zkr__env {
  int off;            /* ZKROUTE=off: the interposer passes every call on */
  int verbose;        /* ZKROUTE_VERBOSE=1: one line per handle created */
  zkr_options_t opts; /* ZKROUTE_POLICY and every other ZKROUTE_<OPTION> */
  const char *stats;  /* ZKROUTE_STATS file, NULL when unset */
} zkr__env_t;

/* The environment, read at the first call; every bad value has been
 * reported on stderr (one line each) and replaced by its default. */
const zkr__env_t *zkr__env(void);

/* zkr_init_opts() with opts, plus: the handle's stats go to ZKROUTE_STATS
 * when it closes or the process exits, and ZKROUTE_VERBOSE announces it. */
int zkr__env_create(zkr_t **out, const char *host, watcher_fn fn, int recv_timeout,
                    const clientid_t *clientid, void *context, int flags,
                    const zkr_options_t *opts);

/* Set by the interposer: called by zkr_close() for every handle, after the
 * last callback ran and before the handle's memory is freed. */
extern void (*zkr__env_destroy_hook)(zkr_t *z);

#endif
