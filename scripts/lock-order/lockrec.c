/* The recording behind the lock-order table (core/handle.h), used by
 * scripts/lock-order.sh: an LD_PRELOAD shim over pthread_mutex_* and
 * pthread_rwlock_* that records, per thread, which lock call site was
 * reached while the lock of which other call site was held, and writes
 * the distinct pairs (object file, offset) to $LOCKREC_DIR/out.PID at
 * exit.  trylock calls are held but add no pair (they cannot wait).  A
 * lock a fork's child handler re-initializes instead of unlocking stays
 * "held" in the child: the script leaves out pairs from atfork sites. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
typedef struct {
  uintptr_t a, b;
} pair_t;
#define N 65536
static pair_t tab[N];
static atomic_flag spin = ATOMIC_FLAG_INIT;
static __thread uintptr_t hsite[128];
static __thread const void *hlock[128];
static __thread int nh;
static void add(uintptr_t a, uintptr_t b) {
  size_t h = (a * 31 + b * 17) % N;
  while (atomic_flag_test_and_set(&spin)) {
  }
  for (size_t i = 0; i < N; i++) {
    pair_t *p = &tab[(h + i) % N];
    if (p->a == a && p->b == b) break;
    if (!p->a) {
      p->a = a;
      p->b = b;
      break;
    }
  }
  atomic_flag_clear(&spin);
}
static void acquired(const void *lk, uintptr_t site, int edges) {
  if (edges)
    for (int i = 0; i < nh; i++)
      if (hlock[i] != lk) add(hsite[i], site);
  if (nh < 128) {
    hlock[nh] = lk;
    hsite[nh] = site;
    nh++;
  }
}
static void released(const void *lk) {
  for (int i = nh - 1; i >= 0; i--)
    if (hlock[i] == lk) {
      memmove(&hlock[i], &hlock[i + 1], (nh - i - 1) * sizeof hlock[0]);
      memmove(&hsite[i], &hsite[i + 1], (nh - i - 1) * sizeof hsite[0]);
      nh--;
      return;
    }
}
/* One wrapper per call: the real one, then the bookkeeping.  edges 0:
 * a trylock, which cannot wait, so it orders nothing. */
#define LOCK_WRAPPER(name, type, edges)                                                            \
  int name(type *m) {                                                                              \
    static int (*real)(type *);                                                                    \
    if (!real) real = (int (*)(type *))dlsym(RTLD_NEXT, #name);                                    \
    int rc = real(m);                                                                              \
    if (!rc) acquired(m, (uintptr_t)__builtin_return_address(0), edges);                           \
    return rc;                                                                                     \
  }
#define UNLOCK_WRAPPER(name, type)                                                                 \
  int name(type *m) {                                                                              \
    static int (*real)(type *);                                                                    \
    if (!real) real = (int (*)(type *))dlsym(RTLD_NEXT, #name);                                    \
    released(m);                                                                                   \
    return real(m);                                                                                \
  }
LOCK_WRAPPER(pthread_mutex_lock, pthread_mutex_t, 1)
LOCK_WRAPPER(pthread_mutex_trylock, pthread_mutex_t, 0)
UNLOCK_WRAPPER(pthread_mutex_unlock, pthread_mutex_t)
LOCK_WRAPPER(pthread_rwlock_rdlock, pthread_rwlock_t, 1)
LOCK_WRAPPER(pthread_rwlock_wrlock, pthread_rwlock_t, 1)
LOCK_WRAPPER(pthread_rwlock_tryrdlock, pthread_rwlock_t, 0)
UNLOCK_WRAPPER(pthread_rwlock_unlock, pthread_rwlock_t)
static void site(FILE *f, uintptr_t a) {
  Dl_info di;
  if (dladdr((void *)a, &di) && di.dli_fname)
    fprintf(f, "%s 0x%lx", di.dli_fname, (unsigned long)(a - 1 - (uintptr_t)di.dli_fbase));
  else fprintf(f, "? 0x%lx", (unsigned long)a);
}
__attribute__((destructor)) static void dump(void) {
  const char *dir = getenv("LOCKREC_DIR");
  char path[4096];
  snprintf(path, sizeof path, "%s/out.%d", dir ? dir : "/tmp", (int)getpid());
  FILE *f = fopen(path, "w");
  if (!f) return;
  for (size_t i = 0; i < N; i++)
    if (tab[i].a) {
      site(f, tab[i].a);
      fputs(" -> ", f);
      site(f, tab[i].b);
      fputc('\n', f);
    }
  fclose(f);
}
