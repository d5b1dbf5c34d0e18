/* The interposer's generated half (docs/dropin.md): from the call list of
 * <zkroute/calls.h>, the real functions and their dlsym, and every entry
 * point that either hands a routed handle to its zkr_ call or passes the
 * call on to libzookeeper_mt.  The entry points with more to do are
 * written in zkr__preload_* (gen P and H in the list). */
#define _GNU_SOURCE
#include <dlfcn.h>

#include "dropin/preload.h"

zkr__pl_real_t zkr__pl_real;

int zkr__preload_calls_resolve(zkr__zk_t *table) {
  int missing = 0;
#define RESOLVE(name)                                                                              \
  *(void **)&zkr__pl_real.name = dlsym(RTLD_NEXT, #name);                                          \
  if (!zkr__pl_real.name) missing = 1;
#define RESOLVE_X(gen, tbl, ret, name, ...)                                                        \
  RESOLVE(name) ZKR__TBL_##tbl(table->name = zkr__pl_real.name;)
#define RESOLVE_N(gen, rv, ret, name, ...) RESOLVE(name)
  ZKR_ZOO_CALLS(RESOLVE_X, RESOLVE_N)
  return missing;
}

#include "model/strict.h"

#define WRAP(ret, name, params, args, zkr_fn, zargs)                                               \
  PL_EXPORT ret name params {                                                                      \
    zkr_t *z_ = zkr__preload_routed(zh);                                                           \
    if (!z_) return REAL(name) args;                                                               \
    return zkr_fn zargs;                                                                           \
  }
#define WRAP_X(gen, tbl, ...) ZKR__PL_##gen(WRAP(__VA_ARGS__))
/* Without a handle: the process-wide library, which the member sessions
 * use too, so the call acts as the program expects. */
#define PASS(ret, name, params, args, rv)                                                          \
  PL_EXPORT ret name params {                                                                      \
    zkr__preload_init();                                                                           \
    rv REAL(name) args;                                                                            \
  }
#define PASS_N_G(rv, ret, name, params, args) PASS(ret, name, params, args, rv)
#define PASS_N_H(...)
#define PASS_N(gen, ...) PASS_N_##gen(__VA_ARGS__)

ZKR_ZOO_CALLS(WRAP_X, PASS_N)
