/* What zkroute-bench and zkroute-fleet share (tool-common.h). */
#include "tool-common.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

char *tool_shell_join(int argc, char **argv) {
  size_t n = 1;
  for (int i = 0; i < argc; i++) n += strlen(argv[i]) * 4 + 3;
  char *s = malloc(n), *p = s;
  if (!s) return NULL;
  for (int i = 0; i < argc; i++) {
    if (i) *p++ = ' ';
    int plain = *argv[i] != '\0';
    for (const char *q = argv[i]; *q; q++)
      if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_=.,/:@%+", *q))
        plain = 0;
    if (plain) {
      p += sprintf(p, "%s", argv[i]);
    } else {
      *p++ = '\'';
      for (const char *q = argv[i]; *q; q++) {
        if (*q == '\'') p += sprintf(p, "'\\''");
        else *p++ = *q;
      }
      *p++ = '\'';
    }
  }
  *p = '\0';
  return s;
}

double tool_loadavg1(void) {
  double l = -1;
  FILE *f = fopen("/proc/loadavg", "r");
  if (f) {
    if (fscanf(f, "%lf", &l) != 1) l = -1;
    fclose(f);
  }
  return l;
}

double tool_pid_cpu_s(int pid) {
  char path[64], buf[2048];
  snprintf(path, sizeof path, "/proc/%d/stat", pid);
  FILE *f = fopen(path, "r");
  if (!f) return -1;
  size_t n = fread(buf, 1, sizeof buf - 1, f);
  fclose(f);
  buf[n] = '\0';
  char *p = strrchr(buf, ')'); /* the command name may hold spaces */
  unsigned long long ut, st;
  if (!p || sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &ut, &st) != 2)
    return -1;
  return (double)(ut + st) / (double)sysconf(_SC_CLK_TCK);
}
