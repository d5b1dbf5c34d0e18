/* Internals of the LD_PRELOAD interposer shared by its files: zkr__preload_*
 * (set-up, the registry of routed handles, the entry points written by
 * hand), zkr__preload_calls_* (the real functions and the entry points
 * generated from <zkroute/calls.h>) and zkr__preload_detect_*.  Nothing here is
 * exported. */
#ifndef ZKR_PRELOAD_H
#define ZKR_PRELOAD_H

#include <stddef.h>
#include <stdio.h>
#include <sys/time.h>

#include "zk/zkapi.h"
#include "zkroute.h"

#define PL_EXPORT __attribute__((visibility("default")))

/* Every function of the call list, declared from it: those zookeeper.h
 * declares (a difference is a compile error) and those it lacks. */
ZKR_ZOO_CALLS(ZKR__DECLARE_X, ZKR__DECLARE_N)

/* The real functions, resolved once with dlsym(RTLD_NEXT); a field is NULL
 * when this libzookeeper_mt lacks the function. */
#define PL_REAL_X(gen, tbl, ret, name, ...) __typeof__(name) *name;
#define PL_REAL_N(gen, rv, ret, name, ...) __typeof__(name) *name;
typedef struct {
  ZKR_ZOO_CALLS(PL_REAL_X, PL_REAL_N)
} zkr__pl_real_t;
extern zkr__pl_real_t zkr__pl_real;

/* Resolves every real function and points the table's fields at them (its
 * other fields are left as they are).  Returns 1 when one is missing. */
int zkr__preload_calls_resolve(zkr__zk_t *table);

/* A real function this libzookeeper_mt lacks: the program could only reach
 * it through this library, so say which and stop. */
void zkr__preload_absent(const char *name) __attribute__((noreturn));
#define REAL(n) (zkr__pl_real.n ? zkr__pl_real.n : (zkr__preload_absent(#n), zkr__pl_real.n))

/* The interposer's set-up, once (every entry point calls it first). */
void zkr__preload_init(void);
/* The routed handle zh stands for, or NULL for any other handle (which
 * goes to the real function).  Calls zkr__preload_init. */
zkr_t *zkr__preload_routed(const void *zh);

/* Why the process must keep the stock client because it runs ZooKeeper's
 * event loop itself (zkr__preload_detect_*), or NULL.  real_init is the real
 * zookeeper_init the interposer found; buf holds the text when needed. */
const char *zkr__preload_detect_event_loop_reason(void *real_init, char *buf, size_t len);

#endif
