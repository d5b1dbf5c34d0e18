/* The options table's internal side (zkr__options_*): resolution of zero
 * fields to defaults, the switch words, the zones option's syntax. */
/* No locks: pure functions of their arguments; the caller serialises. */
#ifndef ZKR_OPTIONS_H
#define ZKR_OPTIONS_H

#include <stddef.h>

#include "zkroute.h"

int zkr__options_resolve(const zkr_options_t *in, zkr_options_t *out);
/* 1 for an on word (on, 1, yes, true; any case), -1 for an off word, 0
 * for anything else. */
int zkr__options_switch_word(const char *v);
/* Splits the next entry of a zones string at *s ("addr=label" or "label",
 * comma-separated): copies the address part ("" in the positional form)
 * and the label, advances *s.  Returns 1 for an entry, 0 at the end, -1
 * for a syntax error. */
int zkr__options_zones_next(const char **s, char *addr, size_t addr_len, char *label,
                            size_t label_len);

#endif
