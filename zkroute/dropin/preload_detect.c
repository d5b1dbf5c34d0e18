/* The interposer's check for programs that run ZooKeeper's event loop
 * themselves (docs/dropin.md, "Single-threaded programs").  A routed
 * handle's member sessions need libzookeeper_mt's I/O threads; a program
 * linked to libzookeeper_st, or one that calls zookeeper_interest() and
 * zookeeper_process() itself, would get member sessions nothing drives.
 * Such a program is passed through to the real library untouched.
 *
 * Two looks, both at the first zookeeper_init: where the real
 * zookeeper_init lives (dladdr) and whether libzookeeper_st is loaded at
 * all; then the imports of every object of the program (the ZooKeeper
 * libraries and zkroute's own excepted): a relocation against an
 * undefined zookeeper_interest or zookeeper_process means the program
 * calls them.  Only memory the loader mapped is read; no file is opened. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <stdio.h>
#include <string.h>

#include "dropin/preload.h"

#if __ELF_NATIVE_CLASS == 64
#define R_SYM(i) ELF64_R_SYM(i)
#else
#define R_SYM(i) ELF32_R_SYM(i)
#endif

static const char *base_name(const char *path) {
  const char *s = strrchr(path, '/');
  return s ? s + 1 : path;
}

/* The ZooKeeper client libraries and zkroute's: their imports are theirs. */
static int skipped(const char *path) {
  const char *b = base_name(path);
  return strncmp(b, "libzookeeper_", 13) == 0 || strncmp(b, "libzkroute", 10) == 0 ||
         strncmp(b, "linux-vdso", 10) == 0 || strncmp(b, "linux-gate", 10) == 0;
}

/* The loader relocates the dynamic section's addresses in place on most
 * targets, not on all: an address below the object's base is still an
 * offset. */
static ElfW(Addr) at(ElfW(Addr) base, ElfW(Addr) ptr) {
  return base && ptr < base ? base + ptr : ptr;
}

typedef struct {
  const ElfW(Sym) * sym;
  const char *str;
  size_t strsz;
} symtab_t;

static int calls_loop(const symtab_t *t, size_t idx) {
  const ElfW(Sym) *s = &t->sym[idx];
  if (idx == 0 || s->st_shndx != SHN_UNDEF || s->st_name >= t->strsz) return 0;
  const char *name = t->str + s->st_name;
  return strcmp(name, "zookeeper_interest") == 0 || strcmp(name, "zookeeper_process") == 0;
}

/* 1 when one of the n relocations at rel (of entry size ent, RELA or REL)
 * is against zookeeper_interest or zookeeper_process. */
static int scan(const symtab_t *t, ElfW(Addr) rel, size_t size, size_t ent) {
  if (!rel || !ent) return 0;
  for (size_t off = 0; off + ent <= size; off += ent) {
    /* r_info sits right after r_offset in both Rel and Rela. */
    const ElfW(Rel) *r = (const ElfW(Rel) *)(rel + off);
    if (calls_loop(t, R_SYM(r->r_info))) return 1;
  }
  return 0;
}

static int object_cb(struct dl_phdr_info *info, size_t size, void *data) {
  (void)size;
  const char **found = data;
  if (info->dlpi_name && info->dlpi_name[0] && skipped(info->dlpi_name)) return 0;
  const ElfW(Dyn) *dyn = NULL;
  for (int i = 0; i < info->dlpi_phnum; i++)
    if (info->dlpi_phdr[i].p_type == PT_DYNAMIC)
      dyn = (const ElfW(Dyn) *)(info->dlpi_addr + info->dlpi_phdr[i].p_vaddr);
  if (!dyn) return 0;
  ElfW(Addr) base = info->dlpi_addr, jmprel = 0, rela = 0, rel = 0;
  size_t pltrelsz = 0, pltrel = 0, relasz = 0, relaent = sizeof(ElfW(Rela)), relsz = 0,
         relent = sizeof(ElfW(Rel));
  symtab_t t = {0};
  for (; dyn->d_tag != DT_NULL; dyn++) {
    switch (dyn->d_tag) {
    case DT_SYMTAB: t.sym = (const ElfW(Sym) *)at(base, dyn->d_un.d_ptr); break;
    case DT_STRTAB: t.str = (const char *)at(base, dyn->d_un.d_ptr); break;
    case DT_STRSZ: t.strsz = dyn->d_un.d_val; break;
    case DT_JMPREL: jmprel = at(base, dyn->d_un.d_ptr); break;
    case DT_PLTRELSZ: pltrelsz = dyn->d_un.d_val; break;
    case DT_PLTREL: pltrel = dyn->d_un.d_val; break;
    case DT_RELA: rela = at(base, dyn->d_un.d_ptr); break;
    case DT_RELASZ: relasz = dyn->d_un.d_val; break;
    case DT_RELAENT: relaent = dyn->d_un.d_val; break;
    case DT_REL: rel = at(base, dyn->d_un.d_ptr); break;
    case DT_RELSZ: relsz = dyn->d_un.d_val; break;
    case DT_RELENT: relent = dyn->d_un.d_val; break;
    default: break;
    }
  }
  if (!t.sym || !t.str) return 0;
  if (scan(&t, jmprel, pltrelsz, pltrel == DT_REL ? relent : relaent) ||
      scan(&t, rela, relasz, relaent) || scan(&t, rel, relsz, relent)) {
    *found = info->dlpi_name && info->dlpi_name[0] ? info->dlpi_name : "the program";
    return 1;
  }
  return 0;
}

const char *zkr__preload_detect_event_loop_reason(void *real_init, char *buf, size_t len) {
  Dl_info di;
  if (real_init && dladdr(real_init, &di) && di.dli_fname &&
      strncmp(base_name(di.dli_fname), "libzookeeper_st", 15) == 0)
    return "the program uses libzookeeper_st (single-threaded): member sessions "
           "would have no I/O thread";
  void *st = dlopen("libzookeeper_st.so.2", RTLD_LAZY | RTLD_NOLOAD);
  if (st) {
    dlclose(st);
    return "libzookeeper_st (single-threaded) is loaded: member sessions would "
           "have no I/O thread";
  }
  const char *who = NULL;
  dl_iterate_phdr(object_cb, &who);
  if (who) {
    snprintf(buf, len,
             "%s calls zookeeper_interest/zookeeper_process (it runs the "
             "single-threaded event loop itself)",
             base_name(who));
    return buf;
  }
  return NULL;
}
