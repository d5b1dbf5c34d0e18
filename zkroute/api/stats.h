/* The statistics writers' internal side (zkr__stats_json_*, zkr__stats_prom_*):
 * both write a zkr_stats() snapshot by expanding the schema of
 * stats_schema.h; the metrics endpoint (zkr__metrics_*) writes the Prometheus
 * text of several handles at once.  Both write into the growable string
 * declared here, which the environment's stats records use too. */
#ifndef ZKR_STATS_H
#define ZKR_STATS_H

#include <stddef.h>

#include "zkroute.h"

/* ---- a growable string for JSON (zkr__stats_json_*) ---- */
typedef struct zkr__sb {
  char *p;
  size_t len, cap;
  int oom; /* an allocation failed: the content is incomplete */
} zkr__sb_t;

/* Any thread.  @locks none. */
void zkr__stats_json_printf(zkr__sb_t *b, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* Appends s as a JSON string literal, quotes included.
 * Any thread.  @locks none. */
void zkr__stats_json_str(zkr__sb_t *b, const char *s);

/* Appends the JSON of s (vs: the virtual session's state) to b.
 * zkr_stats_json's caller.  @locks none. */
void zkr__stats_json_write(zkr__sb_t *b, const zkr_stats_t *s, int vs);

/* One handle's snapshot for the Prometheus writer. */
typedef struct zkr__prom_src {
  unsigned handle; /* the handle label: zkr_t's serial */
  const zkr_stats_t *s;
  int vs; /* the virtual session's state */
} zkr__prom_src_t;

/* Appends the Prometheus text of n handles to b: each metric family once
 * (HELP, TYPE), with every handle's samples under it.
 * The metrics endpoint's thread or zkr_stats_prometheus' caller.  @locks none. */
void zkr__stats_prom_write(zkr__sb_t *b, const zkr__prom_src_t *src, size_t n);

#endif
