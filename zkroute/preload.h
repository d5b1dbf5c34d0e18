/* Internals of the LD_PRELOAD interposer (preload.c) shared with its
 * helpers; nothing here is exported. */
#ifndef ZKR_PRELOAD_H
#define ZKR_PRELOAD_H

#include <stddef.h>

/* Why the process must keep the stock client because it runs ZooKeeper's
 * event loop itself (preload_detect.c), or NULL.  real_init is the real
 * zookeeper_init the interposer found; buf holds the text when needed. */
const char *zkr__pl_event_loop_reason(void *real_init, char *buf, size_t len);

#endif
