/* The fixture the fake-ZooKeeper unit tests share (fakefix.c): a routed
 * handle on three fake members ("fake1..3", fake1 leading, the monitor
 * polling every 20 ms, hedging and /zookeeper/config off), and the record
 * of what the application saw - completions, watch events and session
 * events - in the order its callbacks ran.  Tests wait for conditions with
 * a generous deadline; timing never decides an outcome. */
#ifndef FAKEFIX_H
#define FAKEFIX_H

#include <stdint.h>

#include "fakezk.h"
#include "zkroute.h"

#define HOSTS "fake1:2181,fake2:2181,fake3:2181"

/* ---- what the application saw, in order ---- */

enum { EV_DONE = 1, EV_WATCH, EV_SESSION };
typedef struct {
  int kind, tag, rc, type, state;
  char path[64];
  int64_t mzxid; /* a completion's Stat (0: none) */
} ev_t;

void ev_reset(void);
void ev_add(int kind, int tag, int rc, int type, int state, const char *path);
int ev_count(void);
ev_t ev_at(int i);
/* Index of the first event of kind (and tag, unless tag < 0) at or after
 * from; -1 after 5 s. */
int ev_find(int from, int kind, int tag);
/* How many events of kind (and tag) there are now. */
int ev_matching(int kind, int tag);

uint64_t now_ms(void);
void sleep_ms(int ms);

#define TAG(p) ((int)(intptr_t)(p))

/* Completions and a watcher that record what they got: the tag is the
 * completion's data (or the watcher's context) as an int. */
void done_void(int rc, const void *d);
void done_stat(int rc, const struct Stat *s, const void *d);
void done_data(int rc, const char *v, int l, const struct Stat *s, const void *d);
void done_string(int rc, const char *v, const void *d);
void done_strings(int rc, const struct String_vector *v, const void *d);
void watcher(zhandle_t *zh, int type, int state, const char *path, void *ctx);

/* ---- the handle ---- */

extern zkr_t *z;
extern fake_zh_t *h[4]; /* h[1..3]: the first zhandle of each member */

/* The options every test starts from (see the first comment). */
void opts_default(zkr_options_t *o);
void wait_state(int state);
int stat_owner(void);
int stat_leader(void);
void wait_leader(int member);
/* fake1 leads; every member connects (unless cid: then the test connects
 * them); the global watcher's context is 100. */
void open3_opts(const zkr_options_t *o, const clientid_t *cid);
/* open3_opts with the defaults (rescue_ms when > 0), then waits for
 * CONNECTED and the application's CONNECTED event. */
void open3_with(int rescue_ms);
void open3(void);
/* For the tests of the rescue: the owner or a carrier is moved after
 * 300 ms away. */
void open3_rescue(void);
/* The same handle under a stepped runtime (zkroute/core/runtime.h): no library
 * thread runs; nothing happens but what the test does and what step()
 * runs (callbacks, the monitor's turn), on the test's thread, so the
 * order of events is the test's alone.  The clock is the test's too. */
void open3_stepped(void);
void open3_stepped_opts(const zkr_options_t *o); /* ... with these options */
uint64_t step(void);                             /* zkr__runtime_step(z) */
void advance_ms(int ms);                         /* the test's clock moves on */
/* After one step of a stepped handle: the request of kind on /n it sent
 * (the test fails when there is none). */
fake_req_t *sent_now(int kind);
/* A stepped handle's pair (watcher, 1) on /n: armed by a get answered at
 * mzxid 5 (tag 11), then set again by a get (tag 12) that goes to the
 * same member, behind a sync not answered yet.  That member's zhandle in
 * *x, the second get and its sync in *g2 and *s2. */
void pair_set_again_behind_a_sync(fake_zh_t **x, fake_req_t **g2, fake_req_t **s2);
/* Closes the handle and uninstalls the fake (the checked fixture). */
void teardown(void);

#endif
