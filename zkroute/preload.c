/* The LD_PRELOAD interposer (libzkroute_preload.so; docs/dropin.md).  It is
 * built from the library's own sources plus this file, with every zkr_
 * symbol hidden, and exports zookeeper_init, zookeeper_init2,
 * zookeeper_close, zookeeper_interest, zookeeper_process,
 * zookeeper_get_connected_host, is_unrecoverable, zerror and every zoo_*
 * function of libzookeeper_mt 3.8, so an unmodified program linked against
 * libzookeeper_mt gets routed handles.
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
 *   later at the same address is never mistaken for it.
 * - A program that runs ZooKeeper's event loop itself (libzookeeper_st, or
 *   calls to zookeeper_interest/zookeeper_process: preload_detect.c) gets
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

#include "env.h"
#include "internal.h"
#include "preload.h"
#include "srvr.h"

#define PL_EXPORT __attribute__((visibility("default")))

/* Exported by libzookeeper_mt 3.8 but declared in no installed header, in
 * one that cannot be included on its own, or only without THREADED. */
FILE *zoo_get_log_stream(void);
int64_t zoo_htonll(int64_t v);
int zoo_lock_auth(zhandle_t *zh);
int zoo_unlock_auth(zhandle_t *zh);
int zookeeper_interest(zhandle_t *zh, int *fd, int *interest,
                       struct timeval *tv);
int zookeeper_process(zhandle_t *zh, int events);
void zoo_create2_op_init(zoo_op_t *op, const char *path, const char *value,
                         int valuelen, const struct ACL_vector *acl, int mode,
                         char *path_buffer, int path_buffer_len);

/* Every function defined here, so each has a real counterpart. */
#define PL_FUNCS(X)                                                            \
  X(zookeeper_init) X(zookeeper_init2) X(zookeeper_close)                      \
  X(zookeeper_interest) X(zookeeper_process) X(zookeeper_get_connected_host)   \
  X(zoo_state) X(zoo_client_id) X(zoo_recv_timeout) X(zoo_get_context)         \
  X(zoo_set_context) X(zoo_set_watcher) X(is_unrecoverable) X(zoo_add_auth)    \
  X(zoo_get_log_callback) X(zoo_set_log_callback) X(zoo_set_servers)           \
  X(zoo_set_servers_resolution_delay) X(zoo_cycle_next_server)                 \
  X(zoo_get_current_server) X(zoo_lock_auth) X(zoo_unlock_auth)                \
  X(zoo_acreate) X(zoo_acreate_ttl) X(zoo_acreate2) X(zoo_acreate2_ttl)        \
  X(zoo_adelete) X(zoo_aexists) X(zoo_awexists) X(zoo_aget) X(zoo_awget)       \
  X(zoo_agetconfig) X(zoo_awgetconfig) X(zoo_areconfig) X(zoo_aset)            \
  X(zoo_aget_children) X(zoo_awget_children) X(zoo_aget_children2)             \
  X(zoo_awget_children2) X(zoo_async) X(zoo_aget_acl) X(zoo_aset_acl)          \
  X(zoo_amulti) X(zoo_aremove_watches) X(zoo_aremove_all_watches)              \
  X(zoo_create) X(zoo_create_ttl) X(zoo_create2) X(zoo_create2_ttl)            \
  X(zoo_delete) X(zoo_exists) X(zoo_wexists) X(zoo_get) X(zoo_wget)            \
  X(zoo_getconfig) X(zoo_wgetconfig) X(zoo_reconfig) X(zoo_set) X(zoo_set2)    \
  X(zoo_get_children) X(zoo_wget_children) X(zoo_get_children2)                \
  X(zoo_wget_children2) X(zoo_get_acl) X(zoo_set_acl) X(zoo_multi)             \
  X(zoo_remove_watches) X(zoo_remove_all_watches)                              \
  X(zoo_set_debug_level) X(zoo_set_log_stream) X(zoo_get_log_stream)           \
  X(zoo_deterministic_conn_order) X(zoo_htonll) X(zoo_create_op_init)          \
  X(zoo_create2_op_init) X(zoo_delete_op_init) X(zoo_set_op_init)              \
  X(zoo_check_op_init) X(zerror)

static struct {
#define PL_DECL(n) __typeof__(n) *n;
  PL_FUNCS(PL_DECL)
#undef PL_DECL
} real;

static pthread_once_t pl_once = PTHREAD_ONCE_INIT;
static int pl_missing;     /* some real function could not be resolved */
static int pl_libzkroute;  /* libzkroute.so is in the process already */
static zkr__zk_t pl_table;

/* A real function that this libzookeeper_mt lacks: the program could only
 * reach it through this library, so say which and stop. */
static void pl_absent(const char *name) {
  zkr__env_note("libzookeeper_mt has no %s: cannot continue", name);
  abort();
}
#define REAL(n) (real.n ? real.n : (pl_absent(#n), real.n))

/* ---- routed handles ---- */

typedef struct pl_handle {
  zkr_t *z;                     /* set at registration */
  _Atomic int registered;
  _Atomic int owned;            /* zookeeper_init returned it: the destroy
                                   hook frees this record */
  _Atomic(watcher_fn) fn;       /* the program's global watcher */
  void *_Atomic ctx;            /* the program's context */
  _Atomic(log_callback_fn) log_cb;
  clientid_t no_id;             /* zoo_client_id before any session has one */
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
  if (!zh || atomic_load_explicit(&reg_count, memory_order_acquire) == 0)
    return NULL;
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
static void pl_watcher(zhandle_t *zh, int type, int state, const char *path,
                       void *ctx) {
  pl_handle_t *h = ctx;
  if (!h->registered) reg_add(h, zkr_from_zh(zh));
  watcher_fn fn = h->fn;
  if (fn) fn(zh, type, state, path, h->ctx);
}

/* ---- set-up: real functions, the library's table ---- */

/* The library creates member sessions through this: ctx is the member
 * (member.c), whose handle's context is the pl_handle_t holding the log
 * callback that zookeeper_init2 or zoo_set_log_callback gave. */
static zhandle_t *tbl_init(const char *host, watcher_fn fn, int recv_timeout,
                           const clientid_t *clientid, void *ctx, int flags) {
  zkr__member_t *m = ctx;
  pl_handle_t *h = m && m->z ? (pl_handle_t *)m->z->context : NULL;
  log_callback_fn cb = h ? h->log_cb : NULL;
  return real.zookeeper_init2(host, fn, recv_timeout, clientid, ctx, flags, cb);
}

static void pl_setup(void) {
  pthread_atfork(reg_prefork, reg_parent, reg_child);
#define PL_RESOLVE(n)                                                        \
  *(void **)&real.n = dlsym(RTLD_NEXT, #n);                                  \
  if (!real.n) pl_missing = 1;
  PL_FUNCS(PL_RESOLVE)
#undef PL_RESOLVE
  /* zkr_init is hidden in this library: if it resolves, the program linked
   * libzkroute itself and its handles must not be routed twice. */
  pl_libzkroute = dlsym(RTLD_DEFAULT, "zkr_init") != NULL;
  if (pl_missing) return;
  /* Fields added to the table later default to the exported names, which
   * in this library are the entry points below: they pass member sessions
   * (never registered) on to the real functions. */
  pl_table = zkr__zk_real;
  pl_table.init = tbl_init;
  pl_table.close = real.zookeeper_close;
  pl_table.state = real.zoo_state;
  pl_table.client_id = real.zoo_client_id;
  pl_table.recv_timeout = real.zoo_recv_timeout;
  pl_table.add_auth = real.zoo_add_auth;
  pl_table.acreate_ttl = real.zoo_acreate_ttl;
  pl_table.acreate2_ttl = real.zoo_acreate2_ttl;
  pl_table.adelete = real.zoo_adelete;
  pl_table.aset = real.zoo_aset;
  pl_table.aset_acl = real.zoo_aset_acl;
  pl_table.amulti = real.zoo_amulti;
  pl_table.awexists = real.zoo_awexists;
  pl_table.awget = real.zoo_awget;
  pl_table.awget_children = real.zoo_awget_children;
  pl_table.awget_children2 = real.zoo_awget_children2;
  pl_table.aget_acl = real.zoo_aget_acl;
  pl_table.async = real.zoo_async;
  pl_table.awgetconfig = real.zoo_awgetconfig;
  pl_table.areconfig = real.zoo_areconfig;
  pl_table.remove_watches = real.zoo_remove_watches;
  pl_table.aremove_watches = real.zoo_aremove_watches;
  pl_table.aremove_all_watches = real.zoo_aremove_all_watches;
  pl_table.connected_host = real.zookeeper_get_connected_host;
  pl_table.srvr = zkr__srvr_fetch;
  zkr__zk_use(&pl_table);
  zkr__env_destroy_hook = pl_destroyed;
}

__attribute__((constructor)) static void pl_ctor(void) {
  pthread_once(&pl_once, pl_setup);
}

static pl_handle_t *routed(const void *zh) {
  pthread_once(&pl_once, pl_setup);
  return lookup(zh);
}

/* ---- creating and closing ---- */

/* A program that runs ZooKeeper's event loop itself, looked for once, at
 * the first zookeeper_init: by then the program's libraries are loaded. */
static pthread_once_t loop_once = PTHREAD_ONCE_INIT;
static const char *loop_reason;
static char loop_buf[512];

static void loop_check(void) {
  loop_reason = zkr__pl_event_loop_reason(*(void **)&real.zookeeper_init, loop_buf,
                                          sizeof loop_buf);
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

static zhandle_t *do_init(const char *host, watcher_fn fn, int recv_timeout,
                          const clientid_t *clientid, void *context, int flags,
                          log_callback_fn log_cb) {
  pthread_once(&pl_once, pl_setup);
  int warn;
  const char *why = pass_reason(host, flags, &warn);
  if (!why) {
    pl_handle_t *h = calloc(1, sizeof *h);
    if (h && reg_reserve()) {
      h->fn = fn;
      h->ctx = context;
      h->log_cb = log_cb;
      zkr_t *z = NULL;
      int rc = zkr__env_create(&z, host, pl_watcher, recv_timeout, clientid, h,
                               flags, &zkr__env()->opts);
      if (rc == ZOK) {
        reg_add(h, z);
        h->owned = 1;
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
    zkr__env_note("not routing %s: %s; using the stock client", host ? host : "(null)", why);
  return REAL(zookeeper_init2)(host, fn, recv_timeout, clientid, context, flags, log_cb);
}

PL_EXPORT zhandle_t *zookeeper_init(const char *host, watcher_fn fn,
                                    int recv_timeout, const clientid_t *clientid,
                                    void *context, int flags) {
  return do_init(host, fn, recv_timeout, clientid, context, flags, NULL);
}

PL_EXPORT zhandle_t *zookeeper_init2(const char *host, watcher_fn fn,
                                     int recv_timeout, const clientid_t *clientid,
                                     void *context, int flags,
                                     log_callback_fn log_callback) {
  return do_init(host, fn, recv_timeout, clientid, context, flags, log_callback);
}

/* The destroy hook frees the record, also when the close finishes later
 * on a helper thread (a close from inside a callback). */
PL_EXPORT int zookeeper_close(zhandle_t *zh) {
  pl_handle_t *h = routed(zh);
  return h ? zkr_close(h->z) : REAL(zookeeper_close)(zh);
}

/* ---- the session ---- */

PL_EXPORT int zoo_state(zhandle_t *zh) {
  pl_handle_t *h = routed(zh);
  return h ? zkr_state(h->z) : REAL(zoo_state)(zh);
}

/* The owner session's id, one value for the handle's life (every
 * ephemeral node belongs to it); the clientid passed to zookeeper_init, or
 * zeros, until the owner is chosen; never NULL, as with the stock client. */
PL_EXPORT const clientid_t *zoo_client_id(zhandle_t *zh) {
  pl_handle_t *h = routed(zh);
  if (!h) return REAL(zoo_client_id)(zh);
  const clientid_t *id = zkr_client_id(h->z);
  return id ? id : &h->no_id;
}

PL_EXPORT int zoo_recv_timeout(zhandle_t *zh) {
  pl_handle_t *h = routed(zh);
  return h ? zkr_recv_timeout(h->z) : REAL(zoo_recv_timeout)(zh);
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

PL_EXPORT int is_unrecoverable(zhandle_t *zh) {
  pl_handle_t *h = routed(zh);
  return h ? zkr_is_unrecoverable(h->z) : REAL(is_unrecoverable)(zh);
}

PL_EXPORT int zoo_add_auth(zhandle_t *zh, const char *scheme, const char *cert,
                           int certLen, void_completion_t completion,
                           const void *data) {
  pl_handle_t *h = routed(zh);
  return h ? zkr_add_auth(h->z, scheme, cert, certLen, completion, data)
           : REAL(zoo_add_auth)(zh, scheme, cert, certLen, completion, data);
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
    if (m->zh) real.zoo_set_log_callback(m->zh, callback);
    pthread_rwlock_unlock(&m->zh_lock);
  }
}

/* ---- calls that make no sense on a routed handle (docs/dropin.md) ---- */

/* Single-threaded event loop: the routed handle runs its own threads. */
PL_EXPORT int zookeeper_interest(zhandle_t *zh, int *fd, int *interest,
                                 struct timeval *tv) {
  pl_handle_t *h = routed(zh);
  return h ? ZUNIMPLEMENTED : REAL(zookeeper_interest)(zh, fd, interest, tv);
}

PL_EXPORT int zookeeper_process(zhandle_t *zh, int events) {
  pl_handle_t *h = routed(zh);
  return h ? ZUNIMPLEMENTED : REAL(zookeeper_process)(zh, events);
}

/* A membership change of the virtual session (never the member handles'
 * zoo_set_servers: ZOOKEEPER-4699). */
PL_EXPORT int zoo_set_servers(zhandle_t *zh, const char *hosts) {
  pl_handle_t *h = routed(zh);
  return h ? zkr_set_servers(h->z, hosts) : REAL(zoo_set_servers)(zh, hosts);
}

/* Stock's codes (-1, 0 and a window are valid), otherwise ignored: each
 * member session has one address, and the connect string's names are
 * re-resolved every resolve_ms (docs/dropin.md "Host names"). */
PL_EXPORT int zoo_set_servers_resolution_delay(zhandle_t *zh, int delay_ms) {
  pl_handle_t *h = routed(zh);
  if (h) return delay_ms < -1 ? ZBADARGUMENTS : ZOK;
  return REAL(zoo_set_servers_resolution_delay)(zh, delay_ms);
}

PL_EXPORT void zoo_cycle_next_server(zhandle_t *zh) {
  pl_handle_t *h = routed(zh);
  if (!h) REAL(zoo_cycle_next_server)(zh);
}

/* The owner session's server (never a member handle's
 * zoo_get_current_server: ZOOKEEPER-4810). */
PL_EXPORT const char *zoo_get_current_server(zhandle_t *zh) {
  pl_handle_t *h = routed(zh);
  return h ? zkr_get_current_server(h->z) : REAL(zoo_get_current_server)(zh);
}

PL_EXPORT struct sockaddr *zookeeper_get_connected_host(zhandle_t *zh,
                                                        struct sockaddr *addr,
                                                        socklen_t *addr_len) {
  pl_handle_t *h = routed(zh);
  return h ? zkr_get_connected_host(h->z, addr, addr_len)
           : REAL(zookeeper_get_connected_host)(zh, addr, addr_len);
}

PL_EXPORT int zoo_lock_auth(zhandle_t *zh) {
  pl_handle_t *h = routed(zh);
  return h ? zkr_lock_auth(h->z) : REAL(zoo_lock_auth)(zh);
}

PL_EXPORT int zoo_unlock_auth(zhandle_t *zh) {
  pl_handle_t *h = routed(zh);
  return h ? zkr_unlock_auth(h->z) : REAL(zoo_unlock_auth)(zh);
}

PL_EXPORT int zoo_areconfig(zhandle_t *zh, const char *joining,
                            const char *leaving, const char *members,
                            int64_t version, data_completion_t dc,
                            const void *data) {
  pl_handle_t *h = routed(zh);
  return h ? zkr_areconfig(h->z, joining, leaving, members, version, dc, data)
           : REAL(zoo_areconfig)(zh, joining, leaving, members, version, dc, data);
}

PL_EXPORT int zoo_reconfig(zhandle_t *zh, const char *joining,
                           const char *leaving, const char *members,
                           int64_t version, char *buffer, int *buffer_len,
                           struct Stat *stat) {
  pl_handle_t *h = routed(zh);
  return h ? zkr_reconfig(h->z, joining, leaving, members, version, buffer, buffer_len, stat)
           : REAL(zoo_reconfig)(zh, joining, leaving, members, version, buffer,
                                buffer_len, stat);
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
PL_EXPORT int zoo_aremove_watches(zhandle_t *zh, const char *path,
                                  ZooWatcherType wtype, watcher_fn watcher,
                                  void *watcherCtx, int local,
                                  void_completion_t *completion,
                                  const void *data) {
  pl_handle_t *h = routed(zh);
  if (!h)
    return REAL(zoo_aremove_watches)(zh, path, wtype, watcher, watcherCtx, local, completion,
                                     data);
  pl_watcher_name(h, &watcher, &watcherCtx);
  return zkr_aremove_watches(h->z, path, wtype, watcher, watcherCtx, local,
                             (void_completion_t)completion, data);
}

PL_EXPORT int zoo_remove_watches(zhandle_t *zh, const char *path,
                                 ZooWatcherType wtype, watcher_fn watcher,
                                 void *watcherCtx, int local) {
  pl_handle_t *h = routed(zh);
  if (!h) return REAL(zoo_remove_watches)(zh, path, wtype, watcher, watcherCtx, local);
  pl_watcher_name(h, &watcher, &watcherCtx);
  return zkr_remove_watches(h->z, path, wtype, watcher, watcherCtx, local);
}

PL_EXPORT int zoo_aremove_all_watches(zhandle_t *zh, const char *path,
                                      ZooWatcherType wtype, int local,
                                      void_completion_t *completion,
                                      const void *data) {
  pl_handle_t *h = routed(zh);
  return h ? zkr_aremove_all_watches(h->z, path, wtype, local, (void_completion_t)completion,
                                     data)
           : REAL(zoo_aremove_all_watches)(zh, path, wtype, local, completion, data);
}

PL_EXPORT int zoo_remove_all_watches(zhandle_t *zh, const char *path,
                                     ZooWatcherType wtype, int local) {
  pl_handle_t *h = routed(zh);
  return h ? zkr_remove_all_watches(h->z, path, wtype, local)
           : REAL(zoo_remove_all_watches)(zh, path, wtype, local);
}

/* ---- asynchronous calls ---- */

PL_EXPORT int zoo_acreate(zhandle_t *zh, const char *path, const char *value,
                          int valuelen, const struct ACL_vector *acl, int mode,
                          string_completion_t completion, const void *data) {
  pl_handle_t *h = routed(zh);
  return h ? zkr_acreate(h->z, path, value, valuelen, acl, mode, completion, data)
           : REAL(zoo_acreate)(zh, path, value, valuelen, acl, mode, completion, data);
}

PL_EXPORT int zoo_acreate_ttl(zhandle_t *zh, const char *path,
                              const char *value, int valuelen,
                              const struct ACL_vector *acl, int mode,
                              int64_t ttl, string_completion_t completion,
                              const void *data) {
  pl_handle_t *h = routed(zh);
  return h ? zkr_acreate_ttl(h->z, path, value, valuelen, acl, mode, ttl,
                             completion, data)
           : REAL(zoo_acreate_ttl)(zh, path, value, valuelen, acl, mode, ttl,
                                   completion, data);
}

PL_EXPORT int zoo_acreate2(zhandle_t *zh, const char *path, const char *value,
                           int valuelen, const struct ACL_vector *acl, int mode,
                           string_stat_completion_t completion,
                           const void *data) {
  pl_handle_t *h = routed(zh);
  return h ? zkr_acreate2(h->z, path, value, valuelen, acl, mode, completion, data)
           : REAL(zoo_acreate2)(zh, path, value, valuelen, acl, mode, completion, data);
}

PL_EXPORT int zoo_acreate2_ttl(zhandle_t *zh, const char *path,
                               const char *value, int valuelen,
                               const struct ACL_vector *acl, int mode,
                               int64_t ttl, string_stat_completion_t completion,
                               const void *data) {
  pl_handle_t *h = routed(zh);
  return h ? zkr_acreate2_ttl(h->z, path, value, valuelen, acl, mode, ttl,
                              completion, data)
           : REAL(zoo_acreate2_ttl)(zh, path, value, valuelen, acl, mode, ttl,
                                    completion, data);
}

PL_EXPORT int zoo_adelete(zhandle_t *zh, const char *path, int version,
                          void_completion_t completion, const void *data) {
  pl_handle_t *h = routed(zh);
  return h ? zkr_adelete(h->z, path, version, completion, data)
           : REAL(zoo_adelete)(zh, path, version, completion, data);
}

PL_EXPORT int zoo_aexists(zhandle_t *zh, const char *path, int watch,
                          stat_completion_t completion, const void *data) {
  pl_handle_t *h = routed(zh);
  return h ? zkr_aexists(h->z, path, watch, completion, data)
           : REAL(zoo_aexists)(zh, path, watch, completion, data);
}

PL_EXPORT int zoo_awexists(zhandle_t *zh, const char *path, watcher_fn watcher,
                           void *watcherCtx, stat_completion_t completion,
                           const void *data) {
  pl_handle_t *h = routed(zh);
  return h ? zkr_awexists(h->z, path, watcher, watcherCtx, completion, data)
           : REAL(zoo_awexists)(zh, path, watcher, watcherCtx, completion, data);
}

PL_EXPORT int zoo_aget(zhandle_t *zh, const char *path, int watch,
                       data_completion_t completion, const void *data) {
  pl_handle_t *h = routed(zh);
  return h ? zkr_aget(h->z, path, watch, completion, data)
           : REAL(zoo_aget)(zh, path, watch, completion, data);
}

PL_EXPORT int zoo_awget(zhandle_t *zh, const char *path, watcher_fn watcher,
                        void *watcherCtx, data_completion_t completion,
                        const void *data) {
  pl_handle_t *h = routed(zh);
  return h ? zkr_awget(h->z, path, watcher, watcherCtx, completion, data)
           : REAL(zoo_awget)(zh, path, watcher, watcherCtx, completion, data);
}

/* getconfig is a read of ZOO_CONFIG_NODE (docs/dropin.md: not with a
 * chroot). */
PL_EXPORT int zoo_agetconfig(zhandle_t *zh, int watch,
                             data_completion_t completion, const void *data) {
  pl_handle_t *h = routed(zh);
  return h ? zkr_aget(h->z, ZOO_CONFIG_NODE, watch, completion, data)
           : REAL(zoo_agetconfig)(zh, watch, completion, data);
}

PL_EXPORT int zoo_awgetconfig(zhandle_t *zh, watcher_fn watcher,
                              void *watcherCtx, data_completion_t completion,
                              const void *data) {
  pl_handle_t *h = routed(zh);
  return h ? zkr_awget(h->z, ZOO_CONFIG_NODE, watcher, watcherCtx, completion, data)
           : REAL(zoo_awgetconfig)(zh, watcher, watcherCtx, completion, data);
}

PL_EXPORT int zoo_aset(zhandle_t *zh, const char *path, const char *buffer,
                       int buflen, int version, stat_completion_t completion,
                       const void *data) {
  pl_handle_t *h = routed(zh);
  return h ? zkr_aset(h->z, path, buffer, buflen, version, completion, data)
           : REAL(zoo_aset)(zh, path, buffer, buflen, version, completion, data);
}

PL_EXPORT int zoo_aget_children(zhandle_t *zh, const char *path, int watch,
                                strings_completion_t completion,
                                const void *data) {
  pl_handle_t *h = routed(zh);
  return h ? zkr_aget_children(h->z, path, watch, completion, data)
           : REAL(zoo_aget_children)(zh, path, watch, completion, data);
}

PL_EXPORT int zoo_awget_children(zhandle_t *zh, const char *path,
                                 watcher_fn watcher, void *watcherCtx,
                                 strings_completion_t completion,
                                 const void *data) {
  pl_handle_t *h = routed(zh);
  return h ? zkr_awget_children(h->z, path, watcher, watcherCtx, completion, data)
           : REAL(zoo_awget_children)(zh, path, watcher, watcherCtx, completion, data);
}

PL_EXPORT int zoo_aget_children2(zhandle_t *zh, const char *path, int watch,
                                 strings_stat_completion_t completion,
                                 const void *data) {
  pl_handle_t *h = routed(zh);
  return h ? zkr_aget_children2(h->z, path, watch, completion, data)
           : REAL(zoo_aget_children2)(zh, path, watch, completion, data);
}

PL_EXPORT int zoo_awget_children2(zhandle_t *zh, const char *path,
                                  watcher_fn watcher, void *watcherCtx,
                                  strings_stat_completion_t completion,
                                  const void *data) {
  pl_handle_t *h = routed(zh);
  return h ? zkr_awget_children2(h->z, path, watcher, watcherCtx, completion, data)
           : REAL(zoo_awget_children2)(zh, path, watcher, watcherCtx, completion, data);
}

PL_EXPORT int zoo_async(zhandle_t *zh, const char *path,
                        string_completion_t completion, const void *data) {
  pl_handle_t *h = routed(zh);
  return h ? zkr_async(h->z, path, completion, data)
           : REAL(zoo_async)(zh, path, completion, data);
}

PL_EXPORT int zoo_aget_acl(zhandle_t *zh, const char *path,
                           acl_completion_t completion, const void *data) {
  pl_handle_t *h = routed(zh);
  return h ? zkr_aget_acl(h->z, path, completion, data)
           : REAL(zoo_aget_acl)(zh, path, completion, data);
}

PL_EXPORT int zoo_aset_acl(zhandle_t *zh, const char *path, int version,
                           struct ACL_vector *acl, void_completion_t completion,
                           const void *data) {
  pl_handle_t *h = routed(zh);
  return h ? zkr_aset_acl(h->z, path, version, acl, completion, data)
           : REAL(zoo_aset_acl)(zh, path, version, acl, completion, data);
}

PL_EXPORT int zoo_amulti(zhandle_t *zh, int count, const zoo_op_t *ops,
                         zoo_op_result_t *results, void_completion_t completion,
                         const void *data) {
  pl_handle_t *h = routed(zh);
  return h ? zkr_amulti(h->z, count, ops, results, completion, data)
           : REAL(zoo_amulti)(zh, count, ops, results, completion, data);
}

/* ---- synchronous calls ---- */

PL_EXPORT int zoo_create(zhandle_t *zh, const char *path, const char *value,
                         int valuelen, const struct ACL_vector *acl, int mode,
                         char *path_buffer, int path_buffer_len) {
  pl_handle_t *h = routed(zh);
  return h ? zkr_create(h->z, path, value, valuelen, acl, mode, path_buffer,
                        path_buffer_len)
           : REAL(zoo_create)(zh, path, value, valuelen, acl, mode, path_buffer,
                              path_buffer_len);
}

PL_EXPORT int zoo_create_ttl(zhandle_t *zh, const char *path, const char *value,
                             int valuelen, const struct ACL_vector *acl,
                             int mode, int64_t ttl, char *path_buffer,
                             int path_buffer_len) {
  pl_handle_t *h = routed(zh);
  return h ? zkr_create_ttl(h->z, path, value, valuelen, acl, mode, ttl,
                            path_buffer, path_buffer_len)
           : REAL(zoo_create_ttl)(zh, path, value, valuelen, acl, mode, ttl,
                                  path_buffer, path_buffer_len);
}

PL_EXPORT int zoo_create2(zhandle_t *zh, const char *path, const char *value,
                          int valuelen, const struct ACL_vector *acl, int mode,
                          char *path_buffer, int path_buffer_len,
                          struct Stat *stat) {
  pl_handle_t *h = routed(zh);
  return h ? zkr_create2(h->z, path, value, valuelen, acl, mode, path_buffer,
                         path_buffer_len, stat)
           : REAL(zoo_create2)(zh, path, value, valuelen, acl, mode, path_buffer,
                               path_buffer_len, stat);
}

PL_EXPORT int zoo_create2_ttl(zhandle_t *zh, const char *path,
                              const char *value, int valuelen,
                              const struct ACL_vector *acl, int mode,
                              int64_t ttl, char *path_buffer,
                              int path_buffer_len, struct Stat *stat) {
  pl_handle_t *h = routed(zh);
  return h ? zkr_create2_ttl(h->z, path, value, valuelen, acl, mode, ttl,
                             path_buffer, path_buffer_len, stat)
           : REAL(zoo_create2_ttl)(zh, path, value, valuelen, acl, mode, ttl,
                                   path_buffer, path_buffer_len, stat);
}

PL_EXPORT int zoo_delete(zhandle_t *zh, const char *path, int version) {
  pl_handle_t *h = routed(zh);
  return h ? zkr_delete(h->z, path, version) : REAL(zoo_delete)(zh, path, version);
}

PL_EXPORT int zoo_exists(zhandle_t *zh, const char *path, int watch,
                         struct Stat *stat) {
  pl_handle_t *h = routed(zh);
  return h ? zkr_exists(h->z, path, watch, stat)
           : REAL(zoo_exists)(zh, path, watch, stat);
}

PL_EXPORT int zoo_wexists(zhandle_t *zh, const char *path, watcher_fn watcher,
                          void *watcherCtx, struct Stat *stat) {
  pl_handle_t *h = routed(zh);
  return h ? zkr_wexists(h->z, path, watcher, watcherCtx, stat)
           : REAL(zoo_wexists)(zh, path, watcher, watcherCtx, stat);
}

PL_EXPORT int zoo_get(zhandle_t *zh, const char *path, int watch, char *buffer,
                      int *buffer_len, struct Stat *stat) {
  pl_handle_t *h = routed(zh);
  return h ? zkr_get(h->z, path, watch, buffer, buffer_len, stat)
           : REAL(zoo_get)(zh, path, watch, buffer, buffer_len, stat);
}

PL_EXPORT int zoo_wget(zhandle_t *zh, const char *path, watcher_fn watcher,
                       void *watcherCtx, char *buffer, int *buffer_len,
                       struct Stat *stat) {
  pl_handle_t *h = routed(zh);
  return h ? zkr_wget(h->z, path, watcher, watcherCtx, buffer, buffer_len, stat)
           : REAL(zoo_wget)(zh, path, watcher, watcherCtx, buffer, buffer_len, stat);
}

PL_EXPORT int zoo_getconfig(zhandle_t *zh, int watch, char *buffer,
                            int *buffer_len, struct Stat *stat) {
  pl_handle_t *h = routed(zh);
  return h ? zkr_get(h->z, ZOO_CONFIG_NODE, watch, buffer, buffer_len, stat)
           : REAL(zoo_getconfig)(zh, watch, buffer, buffer_len, stat);
}

PL_EXPORT int zoo_wgetconfig(zhandle_t *zh, watcher_fn watcher,
                             void *watcherCtx, char *buffer, int *buffer_len,
                             struct Stat *stat) {
  pl_handle_t *h = routed(zh);
  return h ? zkr_wget(h->z, ZOO_CONFIG_NODE, watcher, watcherCtx, buffer,
                      buffer_len, stat)
           : REAL(zoo_wgetconfig)(zh, watcher, watcherCtx, buffer, buffer_len, stat);
}

PL_EXPORT int zoo_set(zhandle_t *zh, const char *path, const char *buffer,
                      int buflen, int version) {
  pl_handle_t *h = routed(zh);
  return h ? zkr_set(h->z, path, buffer, buflen, version)
           : REAL(zoo_set)(zh, path, buffer, buflen, version);
}

PL_EXPORT int zoo_set2(zhandle_t *zh, const char *path, const char *buffer,
                       int buflen, int version, struct Stat *stat) {
  pl_handle_t *h = routed(zh);
  return h ? zkr_set2(h->z, path, buffer, buflen, version, stat)
           : REAL(zoo_set2)(zh, path, buffer, buflen, version, stat);
}

PL_EXPORT int zoo_get_children(zhandle_t *zh, const char *path, int watch,
                               struct String_vector *strings) {
  pl_handle_t *h = routed(zh);
  return h ? zkr_get_children(h->z, path, watch, strings)
           : REAL(zoo_get_children)(zh, path, watch, strings);
}

PL_EXPORT int zoo_wget_children(zhandle_t *zh, const char *path,
                                watcher_fn watcher, void *watcherCtx,
                                struct String_vector *strings) {
  pl_handle_t *h = routed(zh);
  return h ? zkr_wget_children(h->z, path, watcher, watcherCtx, strings)
           : REAL(zoo_wget_children)(zh, path, watcher, watcherCtx, strings);
}

PL_EXPORT int zoo_get_children2(zhandle_t *zh, const char *path, int watch,
                                struct String_vector *strings,
                                struct Stat *stat) {
  pl_handle_t *h = routed(zh);
  return h ? zkr_get_children2(h->z, path, watch, strings, stat)
           : REAL(zoo_get_children2)(zh, path, watch, strings, stat);
}

PL_EXPORT int zoo_wget_children2(zhandle_t *zh, const char *path,
                                 watcher_fn watcher, void *watcherCtx,
                                 struct String_vector *strings,
                                 struct Stat *stat) {
  pl_handle_t *h = routed(zh);
  return h ? zkr_wget_children2(h->z, path, watcher, watcherCtx, strings, stat)
           : REAL(zoo_wget_children2)(zh, path, watcher, watcherCtx, strings, stat);
}

PL_EXPORT int zoo_get_acl(zhandle_t *zh, const char *path,
                          struct ACL_vector *acl, struct Stat *stat) {
  pl_handle_t *h = routed(zh);
  return h ? zkr_get_acl(h->z, path, acl, stat)
           : REAL(zoo_get_acl)(zh, path, acl, stat);
}

PL_EXPORT int zoo_set_acl(zhandle_t *zh, const char *path, int version,
                          const struct ACL_vector *acl) {
  pl_handle_t *h = routed(zh);
  return h ? zkr_set_acl(h->z, path, version, acl)
           : REAL(zoo_set_acl)(zh, path, version, acl);
}

PL_EXPORT int zoo_multi(zhandle_t *zh, int count, const zoo_op_t *ops,
                        zoo_op_result_t *results) {
  pl_handle_t *h = routed(zh);
  return h ? zkr_multi(h->z, count, ops, results)
           : REAL(zoo_multi)(zh, count, ops, results);
}

/* ---- functions without a handle: the process-wide client library,
 * which the member sessions use too, so they act as the program expects.
 * Defined so that every zoo_* name resolves here (docs/dropin.md). ---- */

PL_EXPORT void zoo_set_debug_level(ZooLogLevel logLevel) {
  pthread_once(&pl_once, pl_setup);
  REAL(zoo_set_debug_level)(logLevel);
}

PL_EXPORT void zoo_set_log_stream(FILE *logStream) {
  pthread_once(&pl_once, pl_setup);
  REAL(zoo_set_log_stream)(logStream);
}

PL_EXPORT FILE *zoo_get_log_stream(void) {
  pthread_once(&pl_once, pl_setup);
  return REAL(zoo_get_log_stream)();
}

PL_EXPORT void zoo_deterministic_conn_order(int yesOrNo) {
  pthread_once(&pl_once, pl_setup);
  REAL(zoo_deterministic_conn_order)(yesOrNo);
}

PL_EXPORT int64_t zoo_htonll(int64_t v) {
  pthread_once(&pl_once, pl_setup);
  return REAL(zoo_htonll)(v);
}

PL_EXPORT void zoo_create_op_init(zoo_op_t *op, const char *path,
                                  const char *value, int valuelen,
                                  const struct ACL_vector *acl, int mode,
                                  char *path_buffer, int path_buffer_len) {
  pthread_once(&pl_once, pl_setup);
  REAL(zoo_create_op_init)(op, path, value, valuelen, acl, mode, path_buffer,
                           path_buffer_len);
}

PL_EXPORT void zoo_create2_op_init(zoo_op_t *op, const char *path,
                                   const char *value, int valuelen,
                                   const struct ACL_vector *acl, int mode,
                                   char *path_buffer, int path_buffer_len) {
  pthread_once(&pl_once, pl_setup);
  REAL(zoo_create2_op_init)(op, path, value, valuelen, acl, mode, path_buffer,
                            path_buffer_len);
}

PL_EXPORT void zoo_delete_op_init(zoo_op_t *op, const char *path, int version) {
  pthread_once(&pl_once, pl_setup);
  REAL(zoo_delete_op_init)(op, path, version);
}

PL_EXPORT void zoo_set_op_init(zoo_op_t *op, const char *path,
                               const char *buffer, int buflen, int version,
                               struct Stat *stat) {
  pthread_once(&pl_once, pl_setup);
  REAL(zoo_set_op_init)(op, path, buffer, buflen, version, stat);
}

PL_EXPORT void zoo_check_op_init(zoo_op_t *op, const char *path, int version) {
  pthread_once(&pl_once, pl_setup);
  REAL(zoo_check_op_init)(op, path, version);
}

/* zkroute's own codes (-1000 and below) get their text; others ZooKeeper's. */
PL_EXPORT const char *zerror(int c) {
  pthread_once(&pl_once, pl_setup);
  if (c <= -1000 && c > -2000 && strncmp(zkr_err_name(c), "ZKR_", 4) == 0)
    return zkr_strerror(c);
  return REAL(zerror)(c);
}
