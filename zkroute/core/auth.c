/* Credentials (DESIGN.md section 4): every zkr_add_auth is recorded and
 * sent to every member session, and replayed on every session opened
 * later (a re-created carrier, the owner re-attached elsewhere, a member
 * added by membership), before it may join a pool.  The application's
 * completion reports the owner session's answer - what a stock session
 * would report - and never a ZOK no server gave: while the owner is not
 * chosen yet, each member's answer is kept until it is; when the owner's
 * zhandle is replaced before it answered, its replay answers.
 *
 * Threads: replies come on the I/O thread of the member that answered,
 * inside libzookeeper_mt's handle lock (stock runs auth completions under
 * zoo_lock_auth), or on the thread that closes a zhandle (ZCLOSING).  A
 * reply there only queues its answer (ans_mu, never held while calling
 * ZooKeeper) and kicks the monitor, whose turn applies it under auth_mu
 * (zkr__auth_tick): auth_mu is held while calling zoo_add_auth, which
 * takes that handle lock, and taking auth_mu - or the write gate, which a
 * member's admission flushes - inside it would close a lock cycle.  A
 * member is admitted only once every credential was accepted.  auth_mu
 * guards the records and the calls; records live until the handle is
 * destroyed, so a reply can always name its record. */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "core/auth.h"
#include "core/deliver.h"
#include "core/handle.h"
#include "core/hooks.h"
#include "core/kick.h"
#include "core/registry.h"
#include "zk/zkapi.h"

#define NO_ANSWER INT_MIN

/* The zkr_add_auth call of a record, until its completion is handed on. */
typedef struct auth_call {
  zkr_t *z;
  void_completion_t cb;
  const void *data;
  int delivered;
  int refs;  /* sends in flight + the record's reference */
  int got[]; /* per slot (members, then the owner slot): its answer */
} auth_call_t;

struct zkr__auth {
  struct zkr__auth *next;
  char *scheme;
  char *cert;
  int len;
  auth_call_t *call; /* NULL once handed on */
  /* Per slot: the zhandle that holds this credential (zoo_add_auth took
   * it), NULL none yet.  zoo_add_auth refuses a zhandle between two
   * connection attempts (ZINVALIDSTATE, ZOOKEEPER-800): the monitor sends
   * it again (zkr__auth_tick). */
  zhandle_t **held_by;
};

typedef struct auth_reply {
  struct auth_reply *next; /* the answers queue (ans_mu) */
  zkr__member_t *m;
  struct zkr__auth *a;
  auth_call_t *call; /* NULL: nobody waits for this answer */
  int rc;
} auth_reply_t;

/* Under auth_mu. */
static void call_unref(auth_call_t *c) {
  if (--c->refs == 0) free(c);
}

/* Under auth_mu: hands the answer on (the delivery thread runs it). */
static void deliver_locked(struct zkr__auth *a, int rc) {
  auth_call_t *c = a->call;
  if (!c || c->delivered) return;
  c->delivered = 1;
  a->call = NULL;
  zkr__result_t r = {.rc = rc, .value_len = -1};
  zkr__cb_t cb = {.v = c->cb};
  zkr__deliver_result(c->z, ZKR__CB_VOID, cb, c->data, &r);
  call_unref(c);
}

/* On libzookeeper's thread, inside its handle lock: queued only. */
static void auth_done(int rc, const void *data) {
  auth_reply_t *r = (auth_reply_t *)data;
  zkr_t *z = r->m->z;
  r->rc = rc;
  pthread_mutex_lock(&z->ans_mu);
  r->next = z->auth_answers;
  z->auth_answers = r;
  pthread_mutex_unlock(&z->ans_mu);
  zkr__kick_monitor(z);
}

/* One answer applied, under auth_mu. */
static void apply_locked(zkr_t *z, auth_reply_t *r) {
  zkr__member_t *m = r->m;
  int rc = r->rc;
  /* A refused credential keeps the session out of the pools.  Every
   * session gets the same credentials: what one server refuses, the
   * owner's refuses too - the application's session fails authentication
   * (as the zhandle's own AUTH_FAILED event, which follows, reports), and
   * a call still waiting has that answer. */
  int refused = rc == ZAUTHFAILED && !z->closing;
  if (refused) m->auth_refused = 1;
  if (refused) z->auth_failed = 1;
  if (r->call) {
    auth_call_t *c = r->call;
    if (!c->delivered && r->a->call == c) {
      if (z->closing) {
        deliver_locked(r->a, ZCLOSING);
      } else if (z->expired) {
        /* No session will answer any more: stock fails a pending
         * credential with the session (free_completions). */
        deliver_locked(r->a, ZSESSIONEXPIRED);
      } else if (z->auth_failed) {
        /* The session failed authentication already (another member's
         * zhandle said so): nothing is answered ZOK after AUTH_FAILED. */
        deliver_locked(r->a, ZAUTHFAILED);
      } else if (rc != ZCLOSING) {
        /* ZCLOSING with the handle open: zkroute replaced that zhandle,
         * and the replay on its successor answers instead. */
        c->got[m->index] = rc;
        if (z->owner == m->index || refused) deliver_locked(r->a, rc);
      }
    }
    call_unref(c);
  }
  m->auth_pending--;
}

/* The monitor's turn (and the close path's, once no ZooKeeper thread
 * runs): the answers that came, in the order they came; members whose
 * credentials were all accepted are admitted. */
static int send_auth_locked(zkr__member_t *m, struct zkr__auth *a, int attach);

/* Sends every credential that m's current zhandle does not hold; a call
 * still waiting rides along where its answer may count.  Returns 1 when m
 * holds them all now (it may serve again: its requests after them run
 * after them on its session). */
static int resend_missing(zkr__member_t *m) {
  zkr_t *z = m->z;
  pthread_mutex_lock(&z->auth_mu);
  pthread_rwlock_rdlock(&m->zh_lock);
  zhandle_t *zh = m->zh;
  pthread_rwlock_unlock(&m->zh_lock);
  int missing = 0;
  int attach = z->owner < 0 || z->owner == m->index;
  /* Oldest first: the list is newest first. */
  size_t n = 0;
  for (struct zkr__auth *a = z->auths; a; a = a->next) n++;
  struct zkr__auth **v = n ? malloc(n * sizeof *v) : NULL;
  size_t k = 0;
  for (struct zkr__auth *a = z->auths; v && a; a = a->next) v[k++] = a;
  while (v && k-- > 0)
    if (zh && v[k]->held_by[m->index] != zh &&
        send_auth_locked(m, v[k], attach && v[k]->call) != ZOK)
      missing = 1;
  if (!v && n) missing = 1;
  free(v);
  m->auth_missing = missing;
  pthread_mutex_unlock(&z->auth_mu);
  return !missing;
}

/* The session ended (the handle closes, the owner expired, or it failed
 * authentication): no server will answer a call still waiting - when none
 * of its sends got through (every zhandle refused it between two
 * connection attempts), no answer is on its way either.  Stock completes a pending credential then
 * (free_completions): ZCLOSING, ZSESSIONEXPIRED, or ZAUTHFAILED. */
static void end_waiting_calls(zkr_t *z) {
  int rc = zkr__handle_ended_rc(z);
  if (!rc) return;
  pthread_mutex_lock(&z->auth_mu);
  for (struct zkr__auth *a = z->auths; a; a = a->next)
    if (a->call) deliver_locked(a, rc);
  pthread_mutex_unlock(&z->auth_mu);
}

void zkr__auth_tick(zkr_t *z) {
  if (!z->closing && !z->expired) {
    size_t n = z->n;
    int back = 0;
    for (size_t i = 0; i <= n; i++) {
      zkr__member_t *m = i < n ? &z->members[i] : zkr__member_owner_slot(z);
      if (m->auth_missing) back |= resend_missing(m);
    }
    /* A joined member that lacked one (its zhandle refused it while its
     * connection was down) is connected again: the owner's makes the
     * application's session CONNECTED, and what waited for it may go. */
    if (back) {
      zkr__hooks_session_update(z);
      zkr__hooks_gate_flush(z);
    }
  }
  pthread_mutex_lock(&z->ans_mu);
  auth_reply_t *list = z->auth_answers;
  z->auth_answers = NULL;
  pthread_mutex_unlock(&z->ans_mu);
  if (!list) {
    end_waiting_calls(z);
    return;
  }
  auth_reply_t *fifo = NULL;
  while (list) {
    auth_reply_t *n = list->next;
    list->next = fifo;
    fifo = list;
    list = n;
  }
  pthread_mutex_lock(&z->auth_mu);
  int failed = z->auth_failed;
  for (auth_reply_t *r = fifo; r; r = r->next) apply_locked(z, r);
  failed = !failed && z->auth_failed;
  pthread_mutex_unlock(&z->auth_mu);
  if (failed) zkr__hooks_session_update(z);
  while (fifo) {
    auth_reply_t *n = fifo->next;
    zkr__member_maybe_join(fifo->m);
    free(fifo);
    fifo = n;
  }
  end_waiting_calls(z);
}

/* Sends credential a to member m, with a's waiting call attached when
 * attach is set.  Under auth_mu.  Returns ZOK or zoo_add_auth's error. */
static int send_auth_locked(zkr__member_t *m, struct zkr__auth *a, int attach) {
  auth_reply_t *r = malloc(sizeof *r);
  if (!r) return ZKR_ENOMEM;
  r->m = m;
  r->a = a;
  r->call = attach ? a->call : NULL;
  if (r->call) r->call->refs++;
  m->auth_pending++;
  pthread_rwlock_rdlock(&m->zh_lock);
  zhandle_t *zh = m->zh;
  int rc = zh ? zkr__zk->zoo_add_auth(zh, a->scheme, a->cert, a->len, auth_done, r) : ZINVALIDSTATE;
  if (rc == ZOK) a->held_by[m->index] = zh;
  pthread_rwlock_unlock(&m->zh_lock);
  if (rc != ZOK) {
    m->auth_pending--;
    if (r->call) r->call->refs--; /* the record still holds it */
    free(r);
    /* A session without it must not serve until it has it. */
    if (zh) m->auth_missing = 1;
  }
  return rc;
}

/* A new zhandle for m: every credential, oldest first, as the first
 * requests after its handshake.  A call still waiting rides along where
 * its answer may count: on the owner's session, or on any while no owner
 * is chosen. */
void zkr__auth_replay(zkr__member_t *m) {
  zkr_t *z = m->z;
  pthread_mutex_lock(&z->auth_mu);
  int attach = z->owner < 0 || z->owner == m->index;
  /* The list is newest first: send from the tail. */
  struct zkr__auth *v[64], **all = v;
  size_t n = 0, cap = 64;
  for (struct zkr__auth *a = z->auths; a; a = a->next) {
    if (n == cap) {
      struct zkr__auth **bigger = malloc(2 * cap * sizeof *bigger);
      if (!bigger) break;
      memcpy(bigger, all, n * sizeof *bigger);
      if (all != v) free(all);
      all = bigger;
      cap *= 2;
    }
    all[n++] = a;
  }
  while (n-- > 0) send_auth_locked(m, all[n], attach && all[n]->call);
  if (all != v) free(all);
  pthread_mutex_unlock(&z->auth_mu);
}

/* The owner was chosen: a call whose owner already answered gets that
 * answer now. */
void zkr__auth_owner_known(zkr_t *z) {
  int o = z->owner;
  if (o < 0) return;
  pthread_mutex_lock(&z->auth_mu);
  for (struct zkr__auth *a = z->auths; a; a = a->next)
    if (a->call && a->call->got[o] != NO_ANSWER) deliver_locked(a, a->call->got[o]);
  pthread_mutex_unlock(&z->auth_mu);
}

void zkr__auth_free_all(zkr_t *z) {
  for (struct zkr__auth *a = z->auths, *n; a; a = n) {
    n = a->next;
    /* Credentials are wiped before their memory goes back to malloc. */
    if (a->cert) memset(a->cert, 0, (size_t)a->len);
    if (a->call) call_unref(a->call);
    free(a->scheme);
    free(a->cert);
    free(a->held_by);
    free(a);
  }
  z->auths = NULL;
}

static int add_auth_held(zkr_t *z, const char *scheme, const char *cert, int certLen,
                         void_completion_t completion, const void *data) {
  if (!scheme || certLen < 0 || (certLen > 0 && !cert)) return ZBADARGUMENTS;
  if (z->expired || z->auth_failed || z->closing) return ZINVALIDSTATE;
  size_t slots = z->cap + 1;
  struct zkr__auth *a = calloc(1, sizeof *a);
  auth_call_t *c = calloc(1, sizeof *c + slots * sizeof c->got[0]);
  if (!a || !c || !(a->scheme = strdup(scheme)) ||
      !(a->cert = malloc(certLen > 0 ? (size_t)certLen : 1)) ||
      !(a->held_by = calloc(slots, sizeof *a->held_by))) {
    if (a) {
      free(a->scheme);
      free(a->cert);
    }
    free(a);
    free(c);
    return ZKR_ENOMEM;
  }
  if (certLen > 0) memcpy(a->cert, cert, (size_t)certLen);
  a->len = certLen;
  c->z = z;
  c->cb = completion;
  c->data = data;
  c->refs = 1; /* the record's */
  for (size_t i = 0; i < slots; i++) c->got[i] = NO_ANSWER;
  a->call = c;
  pthread_mutex_lock(&z->auth_mu);
  a->next = z->auths;
  z->auths = a;
  size_t n = z->n;
  for (size_t i = 0; i < n; i++) send_auth_locked(&z->members[i], a, 1);
  send_auth_locked(zkr__member_owner_slot(z), a, 1);
  /* The owner answered already (a zhandle that refused at once cannot
   * answer; its replay will). */
  int o = z->owner;
  if (o >= 0 && c->got[o] != NO_ANSWER) deliver_locked(a, c->got[o]);
  pthread_mutex_unlock(&z->auth_mu);
  return ZOK;
}

int zkr_add_auth(zkr_t *z, const char *scheme, const char *cert, int certLen,
                 void_completion_t completion, const void *data) {
  ZKR__HELD(z, add_auth_held(z, scheme, cert, certLen, completion, data));
}

/* The credential list's lock, for the application (zoo_lock_auth's
 * mirror): replays and zkr_add_auth wait while it holds it. */
int zkr_lock_auth(zkr_t *z) {
  int slot = zkr__registry_hold(z);
  if (slot < 0) return slot;
  pthread_mutex_lock(&z->auth_mu);
  zkr__registry_unhold(slot);
  return ZOK;
}

int zkr_unlock_auth(zkr_t *z) {
  int slot = zkr__registry_hold(z);
  if (slot < 0) return slot;
  pthread_mutex_unlock(&z->auth_mu);
  zkr__registry_unhold(slot);
  return ZOK;
}
