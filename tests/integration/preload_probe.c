/* Says which library the program's zookeeper_init comes from, and what
 * LD_PRELOAD holds: tests/integration/it_dropin.sh uses it to see whether
 * zkroute-run's interposer was really loaded (relative and spaced
 * library paths, nested runs, set-ID and capability programs, which the
 * loader runs without LD_PRELOAD).  Needs no server.
 *
 * Prints "zookeeper_init: BASENAME" and "LD_PRELOAD entries: N". */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <zookeeper/zookeeper.h>

int main(int argc, char **argv) {
  (void)argv;
  Dl_info di;
  void *f = dlsym(RTLD_DEFAULT, "zookeeper_init");
  const char *name = f && dladdr(f, &di) && di.dli_fname ? di.dli_fname : "?";
  const char *slash = strrchr(name, '/');
  printf("zookeeper_init: %s\n", slash ? slash + 1 : name);
  const char *pl = getenv("LD_PRELOAD");
  int n = 0;
  for (const char *p = pl ? pl : ""; *p;) {
    while (*p == ' ' || *p == ':') p++;
    if (!*p) break;
    n++;
    while (*p && *p != ' ' && *p != ':') p++;
  }
  printf("LD_PRELOAD entries: %d\n", n);
  /* Referenced so that the program links libzookeeper_mt like a client. */
  return argc > 99 ? zoo_state(NULL) : 0; /* never called */
}
