/* The registry of live handles.  Every public call looks its handle up here
 * before touching it, so NULL, a handle that zkr_close() already freed, a
 * second zkr_close() and a stray pointer get an error code instead of a
 * use-after-free; and zkr_close() frees the handle only once no call is
 * still inside it.
 *
 * A fixed table of slots in static memory (never freed, so a lookup never
 * reads freed memory), open addressing on a hash of the pointer, no lock:
 * a call costs a probe of atomic loads, usually one, plus an increment and
 * a decrement of its slot's count of calls inside.  A slot is EMPTY (never
 * used: a probe stops there), TOMB (used before: a probe goes on), a live
 * handle's address, or that address | DRAINING while zkr_close() waits for
 * the calls inside to leave; no call may enter then.
 *
 * What it cannot catch: once a handle is freed, malloc may give the same
 * address to a later zkr_init(), and a stale pointer then names that new
 * handle.  docs/robustness.md says so. */
#include <sched.h>
#include <time.h>

#include "core/handle.h"
#include "core/registry.h"
#include "core/selector.h"

#define SLOTS 4096 /* a power of two: live handles per process, at most */
#define EMPTY ((uintptr_t)0)
#define TOMB ((uintptr_t)1)
#define DRAINING ((uintptr_t)2) /* handles are malloc'd: bit 1 is free */

static struct {
  _Atomic uintptr_t ptr;
  _Atomic int inside;
} slots[SLOTS];

static size_t home(uintptr_t p) {
  return (size_t)(((uint64_t)p * 0x9E3779B97F4A7C15ull) >> 52) & (SLOTS - 1);
}

int zkr__registry_add(zkr_t *z) {
  uintptr_t p = (uintptr_t)z;
  for (size_t k = 0, i = home(p); k < SLOTS; k++, i = (i + 1) & (SLOTS - 1)) {
    uintptr_t v = atomic_load(&slots[i].ptr);
    if ((v == EMPTY || v == TOMB) && atomic_compare_exchange_strong(&slots[i].ptr, &v, p))
      return (int)i;
  }
  return -1;
}

int zkr__registry_hold(zkr_t *z) {
  uintptr_t p = (uintptr_t)z;
  if (!z) return ZBADARGUMENTS;
  /* From inside a read selector (zkr__selector_*), which runs in the routing
   * critical section: any call could deadlock on it. */
  if (zkr__in_selector) return ZKR_EINCALLBACK;
  for (size_t k = 0, i = home(p); k < SLOTS; k++, i = (i + 1) & (SLOTS - 1)) {
    uintptr_t v = atomic_load(&slots[i].ptr);
    if (v == EMPTY) break;
    if (v != p) continue;
    /* Sequentially consistent increment, then a second look: either this
     * call sees DRAINING and leaves, or zkr_close() sees it inside and
     * waits for it. */
    atomic_fetch_add(&slots[i].inside, 1);
    if (atomic_load(&slots[i].ptr) == p) return (int)i;
    atomic_fetch_sub(&slots[i].inside, 1);
    break;
  }
  return ZKR_ECLOSED;
}

void zkr__registry_unhold(int slot) { atomic_fetch_sub(&slots[slot].inside, 1); }

/* Called by the close path just before the handle's memory is freed: from
 * then on lookups fail, and the calls still inside (a getter, or a call
 * that found the handle closing) have left. */
void zkr__registry_remove(int slot, zkr_t *z) {
  atomic_store(&slots[slot].ptr, (uintptr_t)z | DRAINING);
  /* Calls leave within microseconds; sleeping after a few yields keeps an
   * overloaded machine (or valgrind's one-thread-at-a-time scheduler) from
   * spending the time the caller needs to leave. */
  for (int spins = 0; atomic_load(&slots[slot].inside) > 0; spins++) {
    if (spins < 100) {
      sched_yield();
    } else {
      struct timespec ts = {0, 100000};
      nanosleep(&ts, NULL);
    }
  }
  atomic_store(&slots[slot].ptr, TOMB);
}
