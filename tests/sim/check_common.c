/* What the checkers share: the report buffer and the outcome classes of
 * return codes.  Nothing here knows the model or the library. */
#include "simcheck.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <zookeeper/zookeeper.h>

static const char *names[CK_COUNT] = {"linearizability", "order",    "exactly-once", "watches",
                                      "session",         "watchdog", "liveness"};

const char *check_name(int which) { return names[which]; }

void check_init(check_out_t *c) { memset(c, 0, sizeof *c); }

void check_fail(check_out_t *c, int which, const char *fmt, ...) {
  if (c->violations[which]++ >= 3) return;
  if (c->len + 200 >= sizeof c->text) return;
  int n = snprintf(c->text + c->len, sizeof c->text - c->len, "  [%s] ", names[which]);
  if (n > 0) c->len += (size_t)n;
  va_list ap;
  va_start(ap, fmt);
  n = vsnprintf(c->text + c->len, sizeof c->text - c->len - 2, fmt, ap);
  va_end(ap);
  if (n > 0)
    c->len += (size_t)n < sizeof c->text - c->len - 2 ? (size_t)n : sizeof c->text - c->len - 2;
  c->text[c->len++] = '\n';
  c->text[c->len] = '\0';
}

int check_total(const check_out_t *c) {
  int n = 0;
  for (int i = 0; i < CK_COUNT; i++) n += c->violations[i];
  return n;
}

int check_refused(int rc) {
  return rc == ZNONODE || rc == ZNODEEXISTS || rc == ZBADVERSION || rc == ZNOTEMPTY ||
         rc == ZNOCHILDRENFOREPHEMERALS || rc == ZNOAUTH || rc == ZINVALIDACL ||
         rc == ZBADARGUMENTS || rc == ZRUNTIMEINCONSISTENCY;
}

int check_maybe(int rc) { return rc != ZOK && !check_refused(rc); }

void check_all(const hist_t *h, check_out_t *c) {
  check_lin(h, c);
  check_order(h, c);
  check_once(h, c);
  check_watch(h, c);
  check_session(h, c);
  check_watchdog(h, c);
  check_live(h, c);
}
