/* `zkroute top` (zkroute-top.c): the live per-member table of the zkroute
 * command, from its own handle's Prometheus text or a program's metrics
 * endpoint. */
#ifndef ZKR_TOOL_TOP_H
#define ZKR_TOOL_TOP_H

#include "zkroute.h"

/* Refreshes every second, count times (0: until q, Ctrl-C or SIGTERM),
 * from url ("http://HOST:PORT/metrics") or, when url is NULL, from z.  A
 * table on a terminal, one line per refresh otherwise.  Returns 0, or 1
 * when no scrape ever succeeded (the reason on stderr). */
int tool_top(zkr_t *z, const char *url, int count);

#endif
