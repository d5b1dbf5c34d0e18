/* What zkroute-fleet measures from outside the handles (fleet-probe.h):
 * /proc/self, the servers' four-letter words and the server JVMs
 * (/proc/PID/stat, jcmd).
 * Every network read and every child process has a
 * deadline, so a stopped server or a hung jcmd costs a timeout, never a
 * hang. */
#define _GNU_SOURCE
#include "fleet-probe.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

static int64_t now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* The number after "key" at the start of a line of text ("Key: 12" or
 * "key\t12"), or -1. */
static int64_t field(const char *text, const char *key) {
  size_t kl = strlen(key);
  for (const char *p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
    if (strncmp(p, key, kl) != 0) continue;
    const char *v = p + kl;
    if (*v != ':' && *v != '\t' && *v != ' ') continue;
    while (*v == ':' || *v == '\t' || *v == ' ') v++;
    char *end;
    long long n = strtoll(v, &end, 10);
    if (end != v) return n;
  }
  return -1;
}

static int64_t status_kib(const char *path, const char *key) {
  char buf[8192];
  FILE *f = fopen(path, "r");
  if (!f) return -1;
  size_t n = fread(buf, 1, sizeof buf - 1, f);
  fclose(f);
  buf[n] = '\0';
  return field(buf, key);
}

void fleet_self_read(fleet_self_t *out) {
  out->rss_kib = status_kib("/proc/self/status", "VmRSS");
  out->threads = status_kib("/proc/self/status", "Threads");
  out->fds = -1;
  DIR *d = opendir("/proc/self/fd");
  if (!d) return;
  int64_t n = 0;
  struct dirent *e;
  while ((e = readdir(d)) != NULL)
    if (e->d_name[0] != '.') n++;
  closedir(d);
  out->fds = n - 1; /* the directory stream's own descriptor */
}

long fleet_4lw(const char *host, int port, const char *cmd, int timeout_ms, char *buf, size_t cap) {
  char serv[16];
  snprintf(serv, sizeof serv, "%d", port);
  struct addrinfo hints = {.ai_socktype = SOCK_STREAM}, *res = NULL;
  if (cap == 0 || getaddrinfo(host, serv, &hints, &res) != 0) return -1;
  int64_t deadline = now_ms() + timeout_ms;
  long len = -1;
  for (struct addrinfo *a = res; a && len < 0; a = a->ai_next) {
    int fd = socket(a->ai_family, a->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, a->ai_protocol);
    if (fd < 0) continue;
    struct pollfd pfd = {.fd = fd};
    size_t got = 0, sent = 0, cl = strlen(cmd);
    int ok = connect(fd, a->ai_addr, a->ai_addrlen) == 0 || errno == EINPROGRESS;
    while (ok) {
      int left = (int)(deadline - now_ms());
      if (left <= 0) break;
      pfd.events = sent < cl ? POLLOUT : POLLIN;
      if (poll(&pfd, 1, left) <= 0) break;
      if (sent < cl) {
        int err = 0;
        socklen_t el = sizeof err;
        if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &el) != 0 || err) break;
        ssize_t w = send(fd, cmd + sent, cl - sent, MSG_NOSIGNAL);
        if (w <= 0) break;
        sent += (size_t)w;
        continue;
      }
      if (got + 1 >= cap) break; /* reply larger than the buffer */
      ssize_t r = recv(fd, buf + got, cap - 1 - got, 0);
      if (r < 0 && (errno == EAGAIN || errno == EINTR)) continue;
      if (r < 0) break;
      if (r == 0) {
        buf[got] = '\0';
        len = (long)got;
        break;
      }
      got += (size_t)r;
    }
    close(fd);
  }
  freeaddrinfo(res);
  return len;
}

/* The reply buffer is the heap's, not thread-local: every thread of the
 * process would carry a thread-local one, the measured handles' threads
 * too (tests/lint/fleet-args.sh). */
#define REPLY_CAP (1 << 16)

int fleet_server_read(const char *host, int port, int timeout_ms, fleet_server_t *out) {
  out->received = out->connections = out->sessions = out->watches = -1;
  out->leader = 0;
  char *buf = malloc(REPLY_CAP);
  if (!buf) return -1;
  int rc = -1;
  if (fleet_4lw(host, port, "srvr", timeout_ms, buf, REPLY_CAP) >= 0) {
    out->received = field(buf, "Received");
    out->connections = field(buf, "Connections");
    out->leader = strstr(buf, "\nMode: leader") != NULL;
    if (out->received >= 0) {
      rc = 0;
      if (fleet_4lw(host, port, "mntr", timeout_ms, buf, REPLY_CAP) >= 0) {
        out->sessions = field(buf, "zk_global_sessions");
        out->watches = field(buf, "zk_watch_count");
      }
    }
  }
  free(buf);
  return rc;
}

/* Runs `jcmd PID CMD`, its output (stdout and stderr) into buf.  Returns
 * its exit status, or -1 (could not start, killed at the deadline). */
static int run_jcmd(const char *jcmd, int pid, const char *cmd, int timeout_s, char *buf,
                    size_t cap) {
  int p[2];
  if (pipe2(p, O_CLOEXEC) != 0) return -1;
  char spid[16];
  snprintf(spid, sizeof spid, "%d", pid);
  char *argv[] = {(char *)jcmd, spid, (char *)cmd, NULL};
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, p[1], 1);
  posix_spawn_file_actions_adddup2(&fa, p[1], 2);
  pid_t child;
  int rc = posix_spawnp(&child, jcmd, &fa, NULL, argv, environ);
  posix_spawn_file_actions_destroy(&fa);
  close(p[1]);
  if (rc != 0) {
    close(p[0]);
    return -1;
  }
  size_t got = 0;
  int64_t deadline = now_ms() + (int64_t)timeout_s * 1000;
  int timed_out = 0;
  for (;;) {
    int left = (int)(deadline - now_ms());
    if (left <= 0) {
      timed_out = 1;
      break;
    }
    struct pollfd pfd = {.fd = p[0], .events = POLLIN};
    int n = poll(&pfd, 1, left);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      timed_out = n == 0;
      break;
    }
    char tmp[4096];
    ssize_t r = read(p[0], tmp, sizeof tmp);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) break;
    size_t take = (size_t)r < cap - 1 - got ? (size_t)r : cap - 1 - got;
    memcpy(buf + got, tmp, take);
    got += take;
  }
  buf[got] = '\0';
  close(p[0]);
  if (timed_out) kill(child, SIGKILL);
  int st;
  while (waitpid(child, &st, 0) < 0 && errno == EINTR) {
  }
  if (timed_out || !WIFEXITED(st)) return -1;
  return WEXITSTATUS(st);
}

/* The live heap from GC.heap_info right after a full collection: the
 * "used NK" of the old generation ("tenured generation", "PSOldGen",
 * "ParOldGen"), where a full collection leaves every live object; the young
 * generation holds only what was allocated since (by the jcmd attach
 * itself, too).  Collectors without one ("garbage-first heap", ZGC): the
 * used figure of the heap line. */
static int64_t heap_used_kib(const char *text) {
  int64_t old = -1, heap = -1;
  for (const char *p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
    const char *eol = strchr(p, '\n');
    size_t ll = eol ? (size_t)(eol - p) : strlen(p);
    char line[512];
    if (ll >= sizeof line) continue;
    memcpy(line, p, ll);
    line[ll] = '\0';
    int is_old = strstr(line, "tenured generation") || strstr(line, "OldGen");
    int is_heap = strstr(line, " heap ") && strstr(line, " total ");
    if (!is_old && !is_heap) continue;
    const char *u = strstr(line, "used ");
    if (!u) continue;
    char *end;
    long long v = strtoll(u + 5, &end, 10);
    if (end == u + 5) continue;
    if (*end == 'M') v *= 1024;
    else if (*end == 'G') v *= 1024 * 1024;
    if (is_old) old = v;
    else heap = v;
  }
  return old >= 0 ? old : heap;
}

void fleet_jvm_read(int pid, const char *jcmd, int timeout_s, int64_t *heap_kib, const char **why) {
  *heap_kib = -1;
  *why = NULL;
  if (!jcmd) {
    *why = "jcmd not used";
    return;
  }
  static char buf[1 << 15];
  if (run_jcmd(jcmd, pid, "GC.run", timeout_s, buf, sizeof buf) != 0) {
    *why = "jcmd GC.run failed or timed out";
    return;
  }
  if (run_jcmd(jcmd, pid, "GC.heap_info", timeout_s, buf, sizeof buf) != 0) {
    *why = "jcmd GC.heap_info failed or timed out";
    return;
  }
  *heap_kib = heap_used_kib(buf);
  if (*heap_kib < 0) *why = "GC.heap_info reply not understood";
}
