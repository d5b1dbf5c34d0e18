/* scripts/read-path/instr.c: the -finstrument-functions hook of scripts/read-path.sh.
 * While instr_on is set, every function entry of the instrumented library is recorded as
 * (thread id, function address); instr_dump() writes the records in order, each address as
 * the object file that holds it and the offset in it (dladdr), for llvm-addr2line.
 * Compiled without -finstrument-functions into readprog (scripts/read-path/readprog.c);
 * not run by hand: `scripts/read-path.sh [REV]` builds and runs both. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "instr.h"

#define CAP (1u << 20)
typedef struct {
  int tid;
  void *fn;
} rec_t;
static rec_t recs[CAP];
static atomic_uint nrec;
atomic_int instr_on;
static __thread int my_tid;

__attribute__((no_instrument_function)) void __cyg_profile_func_enter(void *fn, void *site) {
  (void)site;
  if (!atomic_load_explicit(&instr_on, memory_order_relaxed)) return;
  if (!my_tid) my_tid = (int)syscall(SYS_gettid);
  unsigned i = atomic_fetch_add_explicit(&nrec, 1, memory_order_relaxed);
  if (i < CAP) {
    recs[i].tid = my_tid;
    recs[i].fn = fn;
  }
}

__attribute__((no_instrument_function)) void __cyg_profile_func_exit(void *fn, void *site) {
  (void)fn;
  (void)site;
}

/* One line per record, in order: "SEQ TID OBJECT 0xOFFSET" ("SEQ TID ? ADDRESS" when dladdr
 * does not know the address).  Returns -1 when records were lost (more than CAP). */
__attribute__((no_instrument_function)) int instr_dump(FILE *f) {
  unsigned n = atomic_load(&nrec);
  int lost = n > CAP;
  if (lost) n = CAP;
  for (unsigned i = 0; i < n; i++) {
    Dl_info di;
    if (dladdr(recs[i].fn, &di) && di.dli_fname)
      fprintf(f, "%u %d %s 0x%lx\n", i, recs[i].tid, di.dli_fname,
              (unsigned long)((uintptr_t)recs[i].fn - (uintptr_t)di.dli_fbase));
    else fprintf(f, "%u %d ? %p\n", i, recs[i].tid, recs[i].fn);
  }
  return lost ? -1 : 0;
}

__attribute__((no_instrument_function)) void instr_reset(void) { atomic_store(&nrec, 0); }

__attribute__((no_instrument_function)) int instr_gettid(void) { return (int)syscall(SYS_gettid); }
