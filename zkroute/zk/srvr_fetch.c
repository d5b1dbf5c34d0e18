/* The `srvr` four-letter command over TCP: connect, send, read the
 * reply into the capped buffer (zkr__srvr_*) and parse it, all within one
 * deadline, so a hung server costs one timeout and a flood of bytes no
 * more than the cap.  Used by the monitor (zkr__poller_*), the CLI and the
 * benchmark. */
#include <errno.h>
#include <netdb.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "model/srvr.h"

static int64_t now_ms(void) {
  struct timespec ts;

  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Waits until fd is ready for events or the deadline passes. */
static int wait_fd(int fd, short events, int64_t deadline) {
  for (;;) {
    struct pollfd pfd = {.fd = fd, .events = events};
    int64_t left = deadline - now_ms();
    int rc;

    if (left <= 0) return ZKR_ESRVR_TIMEOUT;
    rc = poll(&pfd, 1, (int)left);
    if (rc > 0) return ZOK;
    if (rc < 0 && errno != EINTR) return ZKR_ESRVR_CONNECT;
  }
}

/* Connects to one address.  ZKR_ESRVR_CONNECT lets the caller try the next
 * address; ZKR_ESRVR_TIMEOUT means the whole deadline is spent. */
static int connect_addr(const struct addrinfo *ai, int64_t deadline, int *fdp) {
  int fd = socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, ai->ai_protocol);
  int rc = ZOK, err = 0;
  socklen_t err_len = sizeof err;

  if (fd < 0) return ZKR_ESRVR_CONNECT;
  if (connect(fd, ai->ai_addr, ai->ai_addrlen) != 0) {
    /* After EINTR a non-blocking connect goes on in the background, as
     * after EINPROGRESS. */
    if (errno != EINPROGRESS && errno != EINTR) rc = ZKR_ESRVR_CONNECT;
    else if ((rc = wait_fd(fd, POLLOUT, deadline)) == ZOK &&
             (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &err_len) != 0 || err != 0))
      rc = ZKR_ESRVR_CONNECT;
  }
  if (rc == ZOK) *fdp = fd;
  else close(fd);
  return rc;
}

/* Sends the command and reads the reply into b until the server closes. */
static int exchange(int fd, int64_t deadline, zkr__srvr_buf_t *b) {
  static const char cmd[] = "srvr";
  size_t sent = 0;
  char chunk[4096];
  int rc = ZOK;

  while (rc == ZOK && sent < sizeof cmd - 1) {
    /* MSG_NOSIGNAL: a reset peer must not raise SIGPIPE in the
     * application, which zkroute does not own. */
    ssize_t n = send(fd, cmd + sent, sizeof cmd - 1 - sent, MSG_NOSIGNAL);

    if (n > 0) sent += (size_t)n;
    else if (errno == EAGAIN || errno == EWOULDBLOCK) rc = wait_fd(fd, POLLOUT, deadline);
    else if (errno != EINTR) rc = ZKR_ESRVR_CONNECT;
  }
  while (rc == ZOK) {
    ssize_t n = recv(fd, chunk, sizeof chunk, 0);

    if (n == 0) break;
    if (n > 0) rc = zkr__srvr_buf_feed(b, chunk, (size_t)n);
    else if (errno == EAGAIN || errno == EWOULDBLOCK) rc = wait_fd(fd, POLLIN, deadline);
    else if (errno != EINTR) rc = ZKR_ESRVR_CONNECT;
  }
  return rc;
}

int zkr__srvr_fetch(const char *host, int port, int timeout_ms, size_t cap,
                    zkr__srvr_reply_t *out) {
  struct addrinfo hints = {
      .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM, .ai_flags = AI_NUMERICSERV};
  struct addrinfo *res;
  char service[8];
  int64_t deadline;
  int fd = -1, rc = ZKR_ESRVR_CONNECT;
  zkr__srvr_buf_t b;

  if (host == NULL || out == NULL || port < 1 || port > 65535 || timeout_ms <= 0)
    return ZBADARGUMENTS;
  zkr__srvr_reply_clear(out);
  deadline = now_ms() + timeout_ms;
  snprintf(service, sizeof service, "%d", port);
  if (getaddrinfo(host, service, &hints, &res) == 0) {
    for (const struct addrinfo *ai = res; ai && rc == ZKR_ESRVR_CONNECT; ai = ai->ai_next)
      rc = connect_addr(ai, deadline, &fd);
    freeaddrinfo(res);
  }
  if (rc == ZOK) {
    zkr__srvr_buf_init(&b, cap);
    rc = exchange(fd, deadline, &b);
    close(fd);
    if (rc == ZOK) rc = zkr__srvr_parse(b.data, b.len, out);
    zkr__srvr_buf_free(&b);
  }
  if (rc == ZKR_ESRVR_CONNECT || rc == ZKR_ESRVR_TIMEOUT) out->role = ZKR_ROLE_UNREACHABLE;
  return rc;
}
