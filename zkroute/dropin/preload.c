/* The LD_PRELOAD interposer (libzkroute_preload.so; docs/dropin.md): it
 * links the library's convenience library with every zkr_ symbol hidden,
 * and exports zookeeper_init, zookeeper_init2, zookeeper_close,
 * zookeeper_interest, zookeeper_process, zookeeper_get_connected_host,
 * is_unrecoverable, zerror and every zoo_* function of libzookeeper_mt
 * 3.8 (the call list of <zkroute/calls.h>), so an unmodified program
 * linked against libzookeeper_mt gets routed handles.  This file owns the
 * set-up, the registry of routed handles and the entry points with more
 * to do than a zkr_ call (gen H and P in the list); zkr__preload_calls_*
 * generates the others.
 *
 * - The real functions are resolved once with dlsym(RTLD_NEXT) and the
 *   library's function table (zkapi.h) is pointed at them before any handle
 *   exists: the library's own calls never come back here.
 * - A handle created here is a zkr_t disguised as a zhandle_t (zkr_as_zh).
 *   A registry of those handles tells every entry point whether its handle
 *   is routed; any other handle (ZKROUTE=off, a read-only or one-server
 *   handle, and the member sessions libzookeeper_mt's own threads pass to
 *   its exported functions) goes straight to the real function.
 * - The program's global watcher and context live in a pl_handle_t, the
 *   routed handle's context: zoo_set_watcher/zoo_set_context act on it, and
 *   its first callback registers the handle, so a watcher that runs before
 *   zookeeper_init returned (cli_mt's calls zoo_client_id) already finds it.
 * - A handle leaves the registry after its last callback and before its
 *   memory is freed (zkr__env_destroy_hook), so a real zhandle_t allocated
 *   later at the same address is never mistaken for it; the hook also
 *   frees the record when zookeeper_close finishes later on a helper
 *   thread (a close from inside a callback).
 * - A program that runs ZooKeeper's event loop itself (libzookeeper_st, or
 *   calls to zookeeper_interest/zookeeper_process: zkr__preload_detect_*) gets
 *   stock handles only, said in one line.
 * - The registry lock is held across fork() and fresh in the child
 *   (pthread_atfork), so a child's first zookeeper_init never waits for a
 *   thread it does not have.
 * Calls that make no sense on a routed handle return ZUNIMPLEMENTED (or
 * NULL, or nothing); the list and the reasons are in docs/dropin.md. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>

#include "dropin/env.h"
#include "core/handle.h"
#include "core/log.h"
#include "core/watch.h"
#include "dropin/preload.h"
#include "model/srvr.h"
#include "zk/zkapi.h"

static pthread_once_t pl_once = PTHREAD_ONCE_INIT;
static int pl_missing;    /* some real function could not be resolved */
static int pl_libzkroute; /* libzkroute.so is in the process already */
static zkr__zk_t pl_table;

void zkr__preload_absent(const char *name) {
  zkr__log_note("libzookeeper_mt has no %s: cannot continue", name);
  abort();
}

/* ---- routed handles ---- */

typedef struct pl_handle {
  zkr_t *z; /* set at registration */
  _Atomic int registered;
  _Atomic int owned;      /* zookeeper_init returned it: the destroy
                                   hook frees this record */
  _Atomic(watcher_fn) fn; /* the program's global watcher */
  void *_Atomic ctx;      /* the program's context */
  _Atomic(log_callback_fn) log_cb;
  clientid_t no_id; /* zoo_client_id before any session has one */
} pl_handle_t;

/* Writers first: with readers' preference (glibc's default) threads that
 * keep calling zoo_* could hold a fork (reg_prefork) off for ever. */
#ifdef PTHREAD_RWLOCK_WRITER_NONRECURSIVE_INITIALIZER_NP
static pthread_rwlock_t reg_lock = PTHREAD_RWLOCK_WRITER_NONRECURSIVE_INITIALIZER_NP;
#else
static pthread_rwlock_t reg_lock = PTHREAD_RWLOCK_INITIALIZER;
#endif
static pl_handle_t **reg;
static size_t reg_n, reg_cap, reg_reserved;
static _Atomic size_t reg_count; /* reg_n, readable without the lock */

/* fork(): the registry lock is taken around it, so a child never starts
 * with the lock held by a thread it does not have (its first
 * zookeeper_init would wait for it forever).  The child keeps the
 * registry: the parent's routed handles are as unusable there as stock
 * handles are in a forked child (their threads did not follow). */
static void reg_prefork(void) { pthread_rwlock_wrlock(&reg_lock); }
static void reg_parent(void) { pthread_rwlock_unlock(&reg_lock); }
/* The child's thread has another id than the one that locked, which an
 * rwlock's unlock would not recognise as the writer: a fresh lock. */
static void reg_child(void) {
#ifdef PTHREAD_RWLOCK_WRITER_NONRECURSIVE_INITIALIZER_NP
  pthread_rwlock_t fresh = PTHREAD_RWLOCK_WRITER_NONRECURSIVE_INITIALIZER_NP;
#else
  pthread_rwlock_t fresh = PTHREAD_RWLOCK_INITIALIZER;
#endif
  reg_lock = fresh;
}

/* The routed handle zh is, or NULL.  Every entry point asks; while no
 * routed handle exists it costs one atomic load. */
static pl_handle_t *lookup(const void *zh) {
  if (!zh || atomic_load_explicit(&reg_count, memory_order_acquire) == 0) return NULL;
  pl_handle_t *found = NULL;
  pthread_rwlock_rdlock(&reg_lock);
  for (size_t i = 0; i < reg_n && !found; i++)
    if ((const void *)reg[i]->z == zh) found = reg[i];
  pthread_rwlock_unlock(&reg_lock);
  return found;
}

/* Makes room for one more handle before it is created, so registering it
 * (possibly from its first callback) cannot fail. */
static int reg_reserve(void) {
  pthread_rwlock_wrlock(&reg_lock);
  int ok = 1;
  if (reg_n + reg_reserved + 1 > reg_cap) {
    size_t cap = reg_cap ? 2 * reg_cap : 8;
    pl_handle_t **v = realloc(reg, cap * sizeof *v);
    if (v) {
      reg = v;
      reg_cap = cap;
    } else {
      ok = 0;
    }
  }
  if (ok) reg_reserved++;
  pthread_rwlock_unlock(&reg_lock);
  return ok;
}

static void reg_unreserve(void) {
  pthread_rwlock_wrlock(&reg_lock);
  reg_reserved--;
  pthread_rwlock_unlock(&reg_lock);
}

static void reg_add(pl_handle_t *h, zkr_t *z) {
  pthread_rwlock_wrlock(&reg_lock);
  if (!h->registered) {
    h->z = z;
    reg[reg_n++] = h;
    reg_reserved--;
    atomic_store_explicit(&reg_count, reg_n, memory_order_release);
    h->registered = 1;
  }
  pthread_rwlock_unlock(&reg_lock);
}

/* zkr_close() is about to free z: no callback can run any more. */
static void pl_destroyed(zkr_t *z) {
  pl_handle_t *h = NULL;
  pthread_rwlock_wrlock(&reg_lock);
  for (size_t i = 0; i < reg_n; i++) {
    if (reg[i]->z != z) continue;
    h = reg[i];
    reg[i] = reg[--reg_n];
    atomic_store_explicit(&reg_count, reg_n, memory_order_release);
    break;
  }
  pthread_rwlock_unlock(&reg_lock);
  if (h && h->owned) free(h);
}

/* The routed handle's global watcher: registers the handle at its first
 * event, then hands the event to the program's watcher and context. */
static void pl_watcher(zhandle_t *zh, int type, int state, const char *path, void *ctx) {
  pl_handle_t *h = ctx;
  if (!h->registered) reg_add(h, zkr_from_zh(zh));
  watcher_fn fn = h->fn;
  if (fn) fn(zh, type, state, path, h->ctx);
}

/* ---- set-up: real functions, the library's table ---- */

/* The library creates member sessions through this: ctx is the member
 * (zkr__member_*), whose handle's context is the pl_handle_t holding the log
 * callback that zookeeper_init2 or zoo_set_log_callback gave. */
static zhandle_t *tbl_init(const char *host, watcher_fn fn, int recv_timeout,
                           const clientid_t *clientid, void *ctx, int flags) {
  zkr__member_t *m = ctx;
  pl_handle_t *h = m && m->z ? (pl_handle_t *)m->z->context : NULL;
  log_callback_fn cb = h ? h->log_cb : NULL;
  return zkr__pl_real.zookeeper_init2(host, fn, recv_timeout, clientid, ctx, flags, cb);
}

static void pl_setup(void) {
  pthread_atfork(reg_prefork, reg_parent, reg_child);
  /* The table's ZooKeeper fields become the real functions: the member
   * sessions' calls never come back through the entry points. */
  pl_table = zkr__zk_real;
  pl_missing = zkr__preload_calls_resolve(&pl_table);
  /* zkr_init is hidden in this library: if it resolves, the program linked
   * libzkroute itself and its handles must not be routed twice. */
  pl_libzkroute = dlsym(RTLD_DEFAULT, "zkr_init") != NULL;
  if (pl_missing) return;
  pl_table.zookeeper_init = tbl_init;
  zkr__zkapi_use(&pl_table);
  zkr__env_destroy_hook = pl_destroyed;
}

__attribute__((constructor)) static void pl_ctor(void) { pthread_once(&pl_once, pl_setup); }

void zkr__preload_init(void) { pthread_once(&pl_once, pl_setup); }

static pl_handle_t *routed(const void *zh) {
  zkr__preload_init();
  return lookup(zh);
}

zkr_t *zkr__preload_routed(const void *zh) {
  pl_handle_t *h = routed(zh);
  return h ? h->z : NULL;
}

/* ---- creating and closing ---- */

/* A program that runs ZooKeeper's event loop itself, looked for once, at
 * the first zookeeper_init: by then the program's libraries are loaded. */
static pthread_once_t loop_once = PTHREAD_ONCE_INIT;
static const char *loop_reason;
static char loop_buf[512];

static void loop_check(void) {
  loop_reason = zkr__preload_detect_event_loop_reason(*(void **)&zkr__pl_real.zookeeper_init,
                                                      loop_buf, sizeof loop_buf);
}

/* Why a new handle goes to the stock client, or NULL to route it. */
static const char *pass_reason(const char *host, int flags, int *warn) {
  *warn = 0;
  if (pl_missing) {
    *warn = 1;
    return "libzookeeper_mt lacks functions zkroute needs";
  }
  if (zkr__env()->off) return "ZKROUTE=off";
  pthread_once(&loop_once, loop_check);
  if (loop_reason) {
    /* Said once: every handle of the program goes the same way. */
    static _Atomic int told;
    *warn = !atomic_exchange(&told, 1);
    return loop_reason;
  }
  if (pl_libzkroute) {
    /* Said once: libzkroute creates one session per member through here. */
    static _Atomic int told;
    *warn = !atomic_exchange(&told, 1);
    return "the program is linked with libzkroute itself";
  }
  if (!host) return "no host list";
  /* The members are the addresses: one name may stand for the ensemble. */
  zkr__hostlist_t l;
  int rc = zkr__hosts_parse(host, &l);
  if (rc == ZOK) rc = zkr__hosts_expand(&l, zkr__zk->resolve);
  size_t n = l.n;
  zkr__hosts_free(&l);
  if (rc != ZOK) {
    *warn = 1;
    return zkr_strerror(rc);
  }
  if (n < 2) return "one server: nothing to route between";
  return NULL;
}

static void pl_watcher_name(pl_handle_t *h, watcher_fn *fn, void **ctx);
static void pl_alias(void *arg, watcher_fn *fn, void **ctx) { pl_watcher_name(arg, fn, ctx); }

static zhandle_t *do_init(const char *host, watcher_fn fn, int recv_timeout,
                          const clientid_t *clientid, void *context, int flags,
                          log_callback_fn log_cb) {
  zkr__preload_init();
  int warn;
  const char *why = pass_reason(host, flags, &warn);
  if (!why) {
    pl_handle_t *h = calloc(1, sizeof *h);
    if (h && reg_reserve()) {
      h->fn = fn;
      h->ctx = context;
      h->log_cb = log_cb;
      zkr_t *z = NULL;
      int rc = zkr__env_create(&z, host, pl_watcher, recv_timeout, clientid, h, flags,
                               &zkr__env()->opts);
      if (rc == ZOK) {
        reg_add(h, z);
        h->owned = 1;
        /* A watch set with the program's own global pair is the one the
         * library knows as global (pl_watcher, h): one registration with
         * watch=1's, and one call per session event. */
        zkr__watch_set_alias(z, pl_alias, h);
        return zkr_as_zh(z);
      }
      /* zkr_init_opts closed what it had opened; the destroy hook took the
       * handle out of the registry if its watcher had put it there. */
      if (!h->registered) reg_unreserve();
      free(h);
      why = zkr_strerror(rc);
    } else {
      free(h);
      why = "out of memory";
    }
    warn = 1;
  }
  if (warn || zkr__env()->verbose)
    zkr__log_note("not routing %s: %s; using the stock client", host ? host : "(null)", why);
  return REAL(zookeeper_init2)(host, fn, recv_timeout, clientid, context, flags, log_cb);
}

PL_EXPORT zhandle_t *zookeeper_init(const char *host, watcher_fn fn, int recv_timeout,
                                    const clientid_t *clientid, void *context, int flags) {
  return do_init(host, fn, recv_timeout, clientid, context, flags, NULL);
}

PL_EXPORT zhandle_t *zookeeper_init2(const char *host, watcher_fn fn, int recv_timeout,
                                     const clientid_t *clientid, void *context, int flags,
                                     log_callback_fn log_callback) {
  return do_init(host, fn, recv_timeout, clientid, context, flags, log_callback);
}

/* ---- the session ---- */

/* The owner session's id, one value for the handle's life (every
 * ephemeral node belongs to it); the clientid passed to zookeeper_init, or
 * zeros, until the owner is chosen; never NULL, as with the stock client. */
PL_EXPORT const clientid_t *zoo_client_id(zhandle_t *zh) {
  pl_handle_t *h = routed(zh);
  if (!h) return REAL(zoo_client_id)(zh);
  const clientid_t *id = zkr_client_id(h->z);
  return id ? id : &h->no_id;
}

PL_EXPORT const void *zoo_get_context(zhandle_t *zh) {
  pl_handle_t *h = routed(zh);
  return h ? h->ctx : REAL(zoo_get_context)(zh);
}

PL_EXPORT void zoo_set_context(zhandle_t *zh, void *context) {
  pl_handle_t *h = routed(zh);
  if (h) h->ctx = context;
  else REAL(zoo_set_context)(zh, context);
}

PL_EXPORT watcher_fn zoo_set_watcher(zhandle_t *zh, watcher_fn newFn) {
  pl_handle_t *h = routed(zh);
  return h ? atomic_exchange(&h->fn, newFn) : REAL(zoo_set_watcher)(zh, newFn);
}

/* The program's LOG_* macros ask for the handle's callback. */
PL_EXPORT log_callback_fn zoo_get_log_callback(const zhandle_t *zh) {
  pl_handle_t *h = routed(zh);
  return h ? h->log_cb : REAL(zoo_get_log_callback)(zh);
}

/* Applies to every member session now, and to those created later. */
PL_EXPORT void zoo_set_log_callback(zhandle_t *zh, log_callback_fn callback) {
  pl_handle_t *h = routed(zh);
  if (!h) {
    REAL(zoo_set_log_callback)(zh, callback);
    return;
  }
  h->log_cb = callback;
  zkr_t *z = h->z;
  /* The members, then the owner slot (the owner session after a rescue). */
  size_t n = z->n;
  for (size_t i = 0; i <= z->cap; i++) {
    if (i >= n && i != z->cap) continue;
    zkr__member_t *m = &z->members[i];
    pthread_rwlock_rdlock(&m->zh_lock);
    if (m->zh) zkr__pl_real.zoo_set_log_callback(m->zh, callback);
    pthread_rwlock_unlock(&m->zh_lock);
  }
}

/* ---- calls that make no sense on a routed handle (docs/dropin.md) ---- */

/* Single-threaded event loop: the routed handle runs its own threads. */
PL_EXPORT int zookeeper_interest(zhandle_t *zh, int *fd, int *interest, struct timeval *tv) {
  pl_handle_t *h = routed(zh);
  return h ? ZUNIMPLEMENTED : REAL(zookeeper_interest)(zh, fd, interest, tv);
}

PL_EXPORT int zookeeper_process(zhandle_t *zh, int events) {
  pl_handle_t *h = routed(zh);
  return h ? ZUNIMPLEMENTED : REAL(zookeeper_process)(zh, events);
}

PL_EXPORT void zoo_cycle_next_server(zhandle_t *zh) {
  pl_handle_t *h = routed(zh);
  if (!h) REAL(zoo_cycle_next_server)(zh);
}

/* The program's global watcher is known to the library as pl_watcher with
 * the pl_handle_t: a watch set with watch=1 is removed under that name. */
static void pl_watcher_name(pl_handle_t *h, watcher_fn *fn, void **ctx) {
  if (*fn && *fn == h->fn && *ctx == h->ctx) {
    *fn = pl_watcher;
    *ctx = h;
  }
}

/* ZooKeeper declares the completion as a pointer to one and calls it as
 * the function itself; so does this. */
PL_EXPORT int zoo_aremove_watches(zhandle_t *zh, const char *path, ZooWatcherType wtype,
                                  watcher_fn watcher, void *watcherCtx, int local,
                                  void_completion_t *completion, const void *data) {
  pl_handle_t *h = routed(zh);
  if (!h)
    return REAL(zoo_aremove_watches)(zh, path, wtype, watcher, watcherCtx, local, completion, data);
  pl_watcher_name(h, &watcher, &watcherCtx);
  return zkr_aremove_watches(h->z, path, wtype, watcher, watcherCtx, local,
                             (void_completion_t)completion, data);
}

PL_EXPORT int zoo_remove_watches(zhandle_t *zh, const char *path, ZooWatcherType wtype,
                                 watcher_fn watcher, void *watcherCtx, int local) {
  pl_handle_t *h = routed(zh);
  if (!h) return REAL(zoo_remove_watches)(zh, path, wtype, watcher, watcherCtx, local);
  pl_watcher_name(h, &watcher, &watcherCtx);
  return zkr_remove_watches(h->z, path, wtype, watcher, watcherCtx, local);
}

/* ---- without a handle ---- */

/* zkroute's own codes (-1000 and below) get their text; others ZooKeeper's. */
PL_EXPORT const char *zerror(int c) {
  zkr__preload_init();
  if (c <= -1000 && c > -2000 && strncmp(zkr_err_name(c), "ZKR_", 4) == 0) return zkr_strerror(c);
  return REAL(zerror)(c);
}
