/* Read selectors (zkr__selector_*; docs/selectors.md): the zones option
 * applied to the members, and the application's pick of a read's member. */
#ifndef ZKR_SELECTOR_H
#define ZKR_SELECTOR_H

#include "core/handle.h"

/* Lock notes (table in core/handle.h).  zkr__selector_pick read-holds
 * sel_lock while the application's selector runs (possibly under
 * gate_mu), taking m->health_mu inside it; zkr_set_read_selector
 * write-holds it. */

/* Init.  @locks none. */
int zkr__selector_init(struct zkr *z); /* zones option -> members */
/* Routing, possibly under gate_mu.  @locks sel_lock (read), m->health_mu inside it. */
int zkr__selector_pick(struct zkr *z); /* member, or -1: default policy */
extern _Thread_local int zkr__in_selector;

#endif
