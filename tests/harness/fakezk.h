/* A fake ZooKeeper behind zkroute's function table (zkroute/zk/zkapi.h), for
 * unit tests that need no server: the test decides every reply, every
 * session event and every watch event, and their order.  Each zhandle the
 * library opens is a fake handle that records the requests it is given;
 * nothing is answered until the test answers it, on the test's own thread
 * (the library must not care which thread a completion comes on).  srvr is
 * answered from a role table the test sets.
 *
 * Timing never decides an outcome here: a test waits for a condition (a
 * request to appear, a callback to have run) with a generous deadline, and
 * fails if the deadline passes. */
#ifndef FAKEZK_H
#define FAKEZK_H

#include <stdint.h>
#include <zookeeper/zookeeper.h>

enum {
  FK_SYNC = 1,
  FK_GET,
  FK_EXISTS,
  FK_CHILDREN, /* get_children and get_children2 (zkroute sends the latter) */
  FK_GETACL,
  FK_CREATE,
  FK_SET,
  FK_DELETE,
  FK_SETACL,
  FK_MULTI,
  FK_AUTH,
  FK_GETCONFIG,
  FK_RECONFIG,
  FK_REMOVE_WATCHES, /* one watcher (mode 0) */
  FK_REMOVE_ALL_WATCHES
};

typedef struct fake_zh fake_zh_t;

typedef struct fake_req {
  int seq; /* arrival order over all handles, from 1 */
  fake_zh_t *h;
  int kind; /* FK_* */
  char path[256];
  int mode;    /* create; the watcher type of a removal */
  int watched; /* a watcher came with the read */
  int answered;
  int taken; /* returned by fake_wait already */
} fake_req_t;

/* Installs the fake table (zkr__zkapi_use) and resets every fake.  Member
 * host names are "fakeN" (N from 1): "fake1:2181,fake2:2181,fake3:2181". */
void fake_install(void);
void fake_uninstall(void);

/* fake_install() with a fake DNS in the table too: a host name of the
 * connect string resolves to the fake servers fake_set_dns() gives it
 * (addrs "fake1,fake3"; NULL or "": the name does not resolve), after
 * delay_ms.  Without it (fake_install) names are not resolved at all. */
void fake_install_dns(void);
void fake_set_dns(const char *name, const char *addrs, int delay_ms);
int fake_dns_calls(void); /* resolutions asked for so far */

/* The log callback every fake session has (zoo_get_log_callback); NULL
 * (the default): ZooKeeper's log stream. */
void fake_set_log_callback(log_callback_fn cb);

/* srvr of fakeN answers this role (ZKR_ROLE_*, from zkroute.h) and zxid;
 * role 0 (the default) answers as an unreachable server. */
void fake_set_role(int n, int role, int64_t zxid);

/* The k-th zhandle (from 0) the library opened to fakeN; waits up to 5 s
 * for it to exist, NULL if it does not. */
fake_zh_t *fake_handle(int n, int k);
int fake_handle_count(int n);
int fake_handle_closed(fake_zh_t *h);
/* The state the handle had when zookeeper_close was called on it. */
int fake_handle_state_at_close(fake_zh_t *h);
/* The clientid passed to zookeeper_init for it (client_id 0: none). */
int64_t fake_handle_resumed(fake_zh_t *h);
int fake_handle_server(fake_zh_t *h); /* N of its host */

/* Session events, delivered now on this thread to the handle's watcher
 * (and, as stock does, to its per-path watchers).  connect assigns the
 * session id (0: the id it resumes, else a fresh one) and makes requests
 * answerable. */
void fake_connect(fake_zh_t *h, int64_t session_id);
void fake_session_event(fake_zh_t *h, int state);
/* zoo_state() of the handle from now on, without an event (a reconnect
 * the watcher has not reported yet). */
void fake_set_state(fake_zh_t *h, int state);
int64_t fake_session_id(fake_zh_t *h);

/* The next unanswered request of kind on h (NULL h: any handle) whose
 * path is path (NULL: any), not returned before; waits up to 5 s.  NULL
 * if none came. */
fake_req_t *fake_wait(fake_zh_t *h, int kind, const char *path);
/* The same without waiting: NULL if there is none now. */
fake_req_t *fake_peek(fake_zh_t *h, int kind, const char *path);
/* How many requests arrived so far (the next one's seq is this + 1). */
int fake_seq_now(void);
/* Requests of h in arrival order (kinds), for order assertions: fills up
 * to cap, returns how many there are. */
int fake_log(fake_zh_t *h, int *kinds, fake_req_t **reqs, int cap);

/* Answers a request: rc and, for reads and writes, a Stat with these
 * zxids/version and this data (value NULL: none).  A read with a watcher
 * that succeeds registers it (exists: also with ZNONODE). */
void fake_reply(fake_req_t *r, int rc, int64_t mzxid, int64_t pzxid, const char *value);
/* The same with the node's czxid (fake_reply: 0): which incarnation of
 * the node the answer saw. */
void fake_reply_cz(fake_req_t *r, int rc, int64_t czxid, int64_t mzxid, int64_t pzxid,
                   const char *value);

/* Fires the registered watchers of path on h for this event type, as the
 * server's watch event would, and unregisters them. */
int fake_fire(fake_zh_t *h, const char *path, int type);
/* Watchers registered on h for path (any kind). */
int fake_watch_count(fake_zh_t *h, const char *path);

/* The next call of kind (on any handle) returns rc instead of accepting
 * the request. */
void fake_fail_next(int kind, int rc);
/* Runs fn(h, arg) inside the next call of kind, on the handle h it was
 * made on, before the call looks at anything else (a failure asked for by
 * fake_fail_next comes after it). */
void fake_hook_next(int kind, void (*fn)(fake_zh_t *h, void *), void *arg);
/* Runs fn(r, arg) inside the next call of kind for path (NULL: any), once
 * the request r is recorded and before the call returns: the library is
 * still inside its zoo_a* call (holding whatever it holds around it), and
 * r may be answered meanwhile - from another thread, since the library
 * may not expect its completion on the thread that sends. */
void fake_hook_sent(int kind, const char *path, void (*fn)(fake_req_t *r, void *), void *arg);

/* Runs fn(arg) inside the next zookeeper_init, before the new handle
 * exists: whatever the library does around opening a session (with what
 * it holds, and what it has not done yet) can be acted on there. */
void fake_hook_init(void (*fn)(void *), void *arg);

/* Runs fn(h, arg) inside the next zookeeper_close (of whichever handle
 * is closed next), before it drops what is outstanding: a request
 * answered there is one whose reply the session had received when the
 * library closed it (its completion runs during the close). */
void fake_hook_close(void (*fn)(fake_zh_t *h, void *), void *arg);

#endif
