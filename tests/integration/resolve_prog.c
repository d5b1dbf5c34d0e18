/* A routed handle whose connect string is a host name, driven from stdin
 * by tests/integration/it_dropin.sh, which changes what the name resolves to in
 * between (a private /etc/hosts in a mount namespace of its own):
 *
 *   members N   wait (up to 15 s) until N members are live, then print
 *               "members: A,B,..." (addresses, sorted), or "members:
 *               TIMEOUT A,B" with the last ones seen
 *   rw PATH     create PATH (ephemeral), read it back, delete it; print
 *               "rw: ok" or the first error
 *   owner       print "owner: A", the member whose server holds the
 *               handle's session
 *   quit
 *
 * Usage: resolve_prog HOSTS.  Options: resolve_ms=100 and follow_config
 * off, so that DNS alone decides the members (docs/dropin.md). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "zkroute.h"

static int cmp(const void *a, const void *b) {
  return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Live members, sorted, into buf; returns their count. */
static int live(zkr_t *z, char *buf, size_t len) {
  zkr_stats_t *s;
  const char *v[ZKR_MAX_MEMBERS];
  int n = 0;
  size_t off = 0;
  buf[0] = '\0';
  if (zkr_stats(z, &s) != ZOK) return -1;
  for (int i = 0; i < s->n_members; i++)
    if (!s->members[i].removed) v[n++] = s->members[i].address;
  qsort(v, (size_t)n, sizeof v[0], cmp);
  for (int i = 0; i < n && off < len; i++)
    off += (size_t)snprintf(buf + off, len - off, "%s%s", i ? "," : "", v[i]);
  zkr_stats_free(s);
  return n;
}

static void wait_members(zkr_t *z, int want) {
  char buf[4096];
  struct timespec t0, t;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  for (;;) {
    int n = live(z, buf, sizeof buf);
    if (n == want) {
      printf("members: %s\n", buf);
      return;
    }
    clock_gettime(CLOCK_MONOTONIC, &t);
    if (t.tv_sec - t0.tv_sec > 15) {
      printf("members: TIMEOUT %s\n", buf);
      return;
    }
    nanosleep(&(struct timespec){0, 20000000}, NULL);
  }
}

static void owner(zkr_t *z) {
  zkr_stats_t *s;
  if (zkr_stats(z, &s) != ZOK) return;
  printf("owner: %s\n",
         s->owner >= 0 && s->owner < s->n_members ? s->members[s->owner].address : "none");
  zkr_stats_free(s);
}

static void rw(zkr_t *z, const char *path) {
  char buf[16];
  int len = sizeof buf;
  int rc = zkr_create(z, path, "v", 1, &ZOO_OPEN_ACL_UNSAFE, ZOO_EPHEMERAL, NULL, 0);
  if (rc == ZOK) rc = zkr_get(z, path, 0, buf, &len, NULL);
  if (rc == ZOK && (len != 1 || buf[0] != 'v')) rc = ZDATAINCONSISTENCY;
  if (rc == ZOK) rc = zkr_delete(z, path, -1);
  printf("rw: %s\n", rc == ZOK ? "ok" : zkr_err_name(rc));
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: %s HOSTS\n", argv[0]);
    return 2;
  }
  setvbuf(stdout, NULL, _IOLBF, 0);
  zoo_set_debug_level(ZOO_LOG_LEVEL_ERROR);
  zkr_options_t o = ZKR_OPTIONS_INIT;
  zkr_options_set(&o, "resolve_ms", "100");
  zkr_options_set(&o, "follow_config", "off");
  zkr_t *z;
  int rc = zkr_init_opts(&z, argv[1], NULL, 10000, NULL, NULL, 0, &o);
  if (rc != ZOK) {
    printf("init: %s\n", zkr_err_name(rc));
    return 1;
  }
  char line[512];
  while (fgets(line, sizeof line, stdin)) {
    line[strcspn(line, "\n")] = '\0';
    if (strncmp(line, "members ", 8) == 0) wait_members(z, atoi(line + 8));
    else if (strncmp(line, "rw ", 3) == 0) rw(z, line + 3);
    else if (strcmp(line, "owner") == 0) owner(z);
    else if (strcmp(line, "quit") == 0) break;
    else printf("unknown command: %s\n", line);
  }
  zkr_close(z);
  return 0;
}
