/* Dispatch: hands one operation to one member session's zhandle_t.  A read
 * that must be linearizable is preceded by a pipelined sync on the same
 * session (ZooKeeper runs a session's requests in order, so the read sees
 * everything the sync saw, for one client round trip).
 *
 * Sync coalescing (sync_coalesce, on by default): a sync sent at time t
 * covers every read invoked before t.  A read that finds fewer than
 * sync_coalesce_depth (4) syncs in flight on its session sends its own
 * sync+read at once; one that finds that many waits (no thread blocks) in
 * the member's queue, and when the oldest completes, one new sync is sent,
 * followed by every read that waited, pipelined.  Each of them was invoked
 * before the new sync was sent, so each is linearizable
 * (docs/guarantees.md).  With a depth of 1 a read that finds any sync in
 * flight waits for it: at a few concurrent reads per session the reads
 * then fall into step, each waiting out the previous one's sync, and pay
 * two round trips without sharing (docs/benchmarks-log.md section 10.2).
 *
 * Consistency `session`: a read syncs only when its member's session has
 * not shown the handle's high-water mark (the highest zxid in any reply
 * the handle had), when a completion that showed no zxid (a write without
 * a Stat, a read that found no node) came since that session's last sync,
 * or when it never synced on this zhandle.  A session shows a zxid by a
 * reply's Stat (its server had applied it) or by a sync sent on it when
 * the mark was that zxid (the reads after it run after it); a zhandle's
 * server never goes back behind what the session saw (ZooKeeper refuses
 * the reconnection), so what it showed holds for the zhandle's life.
 *
 * Every operation handed over - waiting for a sync included - is on the
 * outstanding list until its completion runs, so a zhandle closed under it
 * (a replaced session, or the handle's close) still gives each one exactly
 * one completion. */
#include <stdlib.h>
#include <string.h>

#include "route/completion.h"
#include "route/dispatch.h"
#include "core/handle.h"
#include "core/latency.h"
#include "route/hedger.h"
#include "core/watch.h"
#include "zk/zkapi.h"

/* ---- the outstanding list ---- */

static void out_add(zkr__op_t *op) {
  zkr_t *z = op->z;
  pthread_mutex_lock(&z->out_mu);
  zkr__queue_push(&z->out_q, &op->out_link);
  op->outstanding = 1;
  zkr__member_t *m = &z->members[op->member];
  if (m->outstanding++ == 0) m->progress_ns = zkr__now_ns();
  pthread_mutex_unlock(&z->out_mu);
}

static void unlink_locked(zkr_t *z, zkr__op_t *op) {
  zkr__queue_remove(&z->out_q, &op->out_link);
  op->outstanding = 0;
  z->members[op->member].outstanding--;
  z->members[op->member].progress_ns = zkr__now_ns();
}

void zkr__dispatch_out_remove(zkr__op_t *op) {
  zkr_t *z = op->z;
  pthread_mutex_lock(&z->out_mu);
  if (op->outstanding) unlink_locked(z, op);
  pthread_mutex_unlock(&z->out_mu);
}

/* The highest zxid the session of zh has shown: its server had applied
 * it.  A new zhandle starts again (a rescued owner session may be on
 * another server). */
static void shown(zkr__member_t *m, zhandle_t *zh, int64_t zxid) {
  pthread_mutex_lock(&m->co_mu);
  if (m->shown_zh != zh) {
    m->shown_zh = zh;
    m->shown_zxid = zxid;
  } else if (zxid > m->shown_zxid) {
    m->shown_zxid = zxid;
  }
  pthread_mutex_unlock(&m->co_mu);
}

static int64_t shown_on(zkr__member_t *m, zhandle_t *zh) {
  pthread_mutex_lock(&m->co_mu);
  int64_t x = m->shown_zh == zh ? m->shown_zxid : -1;
  pthread_mutex_unlock(&m->co_mu);
  return x;
}

/* Completion's share (zkr__completion_*): op leaves the outstanding list; a
 * reply's Stat shows what its session's server had applied (zkr__completion_*
 * raised the handle's high-water mark with it already), and a completion
 * without one - a write without a Stat (delete, create, multi, set_acl)
 * or that failed or whose outcome is unknown, a read that found no node,
 * an ACL read - makes the next read of every member sync first in `session`
 * consistency (needs_sync): nothing says which zxid it stands for. */
void zkr__dispatch_op_done(zkr__op_t *op, int rc, const struct Stat *stat) {
  zkr__dispatch_out_remove(op);
  /* An ACL read: no zxid records an ACL change (setACL raises aversion,
   * not mzxid). */
  if (rc == ZOK && stat && op->type != ZKR__OP_GET_ACL) {
    /* Only needs_sync reads what a session showed, and only in `session`
     * consistency: the other modes skip the member's lock here. */
    if (op->member >= 0 && op->zh && op->z->opts.consistency == ZKR_CONSISTENCY_SESSION) {
      int64_t x = stat->mzxid > stat->pzxid ? stat->mzxid : stat->pzxid;
      if (stat->czxid > x) x = stat->czxid;
      shown(&op->z->members[op->member], op->zh, x);
    }
  } else if (!zkr__op_has(op, ZKR__OP_F_PROBE)) {
    uint64_t was = atomic_fetch_add(&op->z->write_epoch, 1);
    /* The session that answered is not behind what its own answer stands
     * for: if it had synced after every completion before this one, it
     * needs no sync for this one either (a poller of a missing node keeps
     * reading without syncs). */
    if (op->member >= 0 && op->zh && zkr__latency_server_answered(rc)) {
      zkr__member_t *m = &op->z->members[op->member];
      if (m->synced_zh == op->zh) atomic_compare_exchange_strong(&m->synced_epoch, &was, was + 1);
    }
  }
}

/* After every member session was closed no ZooKeeper completion can run
 * any more; the operations still listed were dropped by zookeeper_close and
 * get their one completion here. */
void zkr__dispatch_complete_abandoned(zkr_t *z) { zkr__dispatch_complete_dropped(z, NULL); }

static void co_unqueue(zkr__op_t *op);
static void co_free_dropped(zkr_t *z, zhandle_t *zh);

/* After zookeeper_close(zh) returned, no completion of zh can come: the
 * operations still listed as sent on zh (all of them when zh is NULL) were
 * dropped (ZOOKEEPER-2894/3868) or were waiting for a sync that will not
 * come, and get their one completion here, as ZCLOSING, which
 * zkr__completion_* turns into what the application must see (ZCLOSING only
 * when the handle itself closes). */
void zkr__dispatch_complete_dropped(zkr_t *z, zhandle_t *zh) {
  zkr__queue_t list = {0};
  pthread_mutex_lock(&z->out_mu);
  ZKR__QUEUE_FOREACH_SAFE(l, n, &z->out_q) {
    zkr__op_t *op = ZKR__OP_OF(l, out_link);
    if (zh && op->zh != zh) continue;
    unlink_locked(z, op);
    zkr__queue_push(&list, &op->out_link); /* oldest first */
  }
  pthread_mutex_unlock(&z->out_mu);
  for (zkr__queue_link_t *l; (l = zkr__queue_pop(&list));) {
    zkr__op_t *op = ZKR__OP_OF(l, out_link);
    co_unqueue(op);
    zkr__completion_error(op, ZCLOSING);
  }
  co_free_dropped(z, zh);
}

/* Takes op off the outstanding list; returns 1 if it was there (the caller
 * then owns its completion). */
static int out_take(zkr__op_t *op) {
  zkr_t *z = op->z;
  pthread_mutex_lock(&z->out_mu);
  int was = op->outstanding;
  if (was) unlink_locked(z, op);
  pthread_mutex_unlock(&z->out_mu);
  return was;
}

/* ---- sending ---- */

/* Linearizable reads, probes, and ordered reads sent on another session
 * than the writes they follow (zkr__router_*) are synced first; in `session`
 * consistency, reads whose member's session has not shown what the
 * handle saw (below).  A watch re-armed after its session was lost is
 * synced too, by zkr__watch_rearm_*. */
static int needs_sync(const zkr__op_t *op, zkr__member_t *m, zhandle_t *zh) {
  int session = op->z->opts.consistency == ZKR_CONSISTENCY_SESSION;
  if (zkr__op_has(op, ZKR__OP_F_PROBE) || (op->resync && !session)) return 1;
  if (zkr__op_has(op, ZKR__OP_F_WRITE) || (op->ordered && !op->resync) || op->type == ZKR__OP_SYNC)
    return 0;
  switch (op->z->opts.consistency) {
  case ZKR_CONSISTENCY_LINEARIZABLE: return 1;
  case ZKR_CONSISTENCY_SESSION:
    /* On a zhandle that never synced, after a completion that showed no
     * zxid, or on a session that has not shown every zxid the handle saw
     * (whichever member served the reads before).  An ordered read that
     * waited in the gate (resync) too: the writes before it that are
     * still in flight are on its own session (the gate moves only once
     * the old one has none), and those that completed are in the mark or
     * the epoch. */
    return m->synced_zh != zh || m->synced_epoch != op->z->write_epoch ||
           shown_on(m, zh) < op->z->hwm_zxid;
  default: return 0;
  }
}

/* ---- sync coalescing ---- */

/* A sync sent before reads, listed on its member's co_syncs until its
 * completion runs or its zhandle closed without running it.  Every read
 * sent behind it holds it (op->sync) until its own completion: a read may
 * count on the sync only if the sync did not fail with its connection
 * (zkr__dispatch_read_again).  refs: one for the listing, one per read. */
struct zkr__sync {
  zkr__member_t *m;
  zhandle_t *zh;
  _Atomic int refs;
  _Atomic int lost; /* failed with its connection (no server answered) */
  int coalesced;    /* counted in co_inflight, runs co_sync_done */
  zkr__queue_link_t link;
};
typedef struct zkr__sync sync_t;

#define SYNC_OF(l) ZKR__QUEUE_DATA(l, sync_t, link)

static void sync_put(sync_t *t) {
  if (atomic_fetch_sub(&t->refs, 1) == 1) free(t);
}

/* op is sent behind t: it holds t until its completion. */
static void sync_hold(zkr__op_t *op, sync_t *t) {
  atomic_fetch_add(&t->refs, 1);
  op->sync = t;
}

/* op was not sent after all: it no longer counts on a sync. */
static void sync_drop(zkr__op_t *op) {
  if (op->sync) sync_put(op->sync);
  op->sync = NULL;
}

static void co_sync_done(int rc, const char *value, const void *data);

/* A pipelined sync's own reply is not waited for; one that failed proves
 * nothing, and the next read of its member syncs again.  One that failed
 * with its connection (no server answered it) marks the reads sent behind
 * it: any of them that a server answers ran on a later connection, after
 * no sync (zkr__dispatch_read_again). */
static void sync_done(int rc, const char *value, const void *data) {
  (void)value;
  sync_t *t = (sync_t *)data;
  zkr__member_t *m = t->m;
  if (!zkr__latency_server_answered(rc)) atomic_store(&t->lost, 1);
  pthread_mutex_lock(&m->co_mu);
  zkr__queue_remove(&m->co_syncs, &t->link);
  pthread_mutex_unlock(&m->co_mu);
  if (rc != ZOK) m->synced_zh = NULL;
  sync_put(t);
}

/* Sends a sync on zh (member m's, under its read lock and co_mu) whose
 * completion runs co_sync_done (coalesced) or sync_done.  Returns the
 * sync, or NULL with *rc the error. */
static sync_t *send_sync(zkr__member_t *m, zhandle_t *zh, const char *path, int coalesced,
                         int *rc) {
  sync_t *t = calloc(1, sizeof *t);
  if (!t) {
    *rc = ZKR_ENOMEM;
    return NULL;
  }
  t->m = m;
  t->zh = zh;
  t->refs = 1;
  t->coalesced = coalesced;
  /* Listed first: the completion may run before zoo_async returns. */
  zkr__queue_push(&m->co_syncs, &t->link);
  *rc = zkr__zk->zoo_async(zh, path, coalesced ? co_sync_done : sync_done, t);
  if (*rc != ZOK) {
    zkr__queue_remove(&m->co_syncs, &t->link);
    free(t);
    return NULL;
  }
  return t;
}

/* Plain reads share syncs; probes (which measure a sync+read), ordered
 * reads and session-mode reads keep their own. */
static int coalescable(const zkr__op_t *op) {
  return op->z->opts.sync_coalesce == 1 && !zkr__op_has(op, ZKR__OP_F_PROBE) && !op->resync &&
         op->z->opts.consistency == ZKR_CONSISTENCY_LINEARIZABLE;
}

/* A coalesced sync (under m's read lock and co_mu).  Returns it, or NULL
 * with *rc the error. */
static sync_t *co_send_sync(zkr__member_t *m, zhandle_t *zh, const char *path, int *rc) {
  sync_t *t = send_sync(m, zh, path, 1, rc);
  if (t) m->syncs++;
  return t;
}

/* zh was closed (NULL: every zhandle of z): the syncs it never answered -
 * libzookeeper_mt's close may drop a completion (ZOOKEEPER-2894 family,
 * docs/robustness.md) - are released here. */
static void co_free_dropped(zkr_t *z, zhandle_t *zh) {
  size_t filled = z->n;
  for (size_t i = 0; z->members && i <= z->cap; i++) {
    if (i >= filled && i != z->cap) continue; /* never filled (or not yet published) */
    zkr__member_t *m = &z->members[i];
    zkr__queue_t gone = {0};
    pthread_mutex_lock(&m->co_mu);
    ZKR__QUEUE_FOREACH_SAFE(l, n, &m->co_syncs) {
      if (zh && SYNC_OF(l)->zh != zh) continue;
      zkr__queue_remove(&m->co_syncs, l);
      zkr__queue_push(&gone, l);
    }
    pthread_mutex_unlock(&m->co_mu);
    for (zkr__queue_link_t *l; (l = zkr__queue_pop(&gone));) sync_put(SYNC_OF(l));
  }
}

static int send_request(zkr__op_t *op, zhandle_t *zh, int with_watch);

/* Under m's read lock and co_mu, zh its co_zh: the reads waiting in co_q
 * go now, behind one new sync, if zh is still the member's (else they stay
 * in batch, and go with zh).  Those refused are put in failed, newest
 * first, for co_fail. */
static void co_send_waiting(zkr__member_t *m, zhandle_t *zh, zkr__queue_t *batch,
                            zkr__queue_t *failed) {
  zkr__queue_move(batch, &m->co_q);
  ZKR__QUEUE_FOREACH(l, batch) ZKR__OP_OF(l, co_link)->co_waiting = 0;
  if (!batch->first || m->zh != zh) return;
  const zkr__op_t *first = ZKR__OP_OF(batch->first, co_link);
  int src;
  sync_t *t2 = co_send_sync(m, zh, first->path ? first->path : "/", &src);
  if (t2) m->co_inflight++;
  /* Failed ones are listed newest first, as they always were. */
  for (zkr__queue_link_t *l; (l = zkr__queue_pop(batch));) {
    zkr__op_t *op = ZKR__OP_OF(l, co_link);
    int with_watch = op->watch && !op->watch_unbound;
    if (t2) sync_hold(op, t2);
    if (!t2 || send_request(op, zh, with_watch) != ZOK) {
      sync_drop(op);
      zkr__queue_push_front(failed, &op->co_link);
    }
  }
}

/* Refused: completed here, once (nothing else has them), with no lock
 * held. */
static void co_fail(zkr__queue_t *failed) {
  for (zkr__queue_link_t *l; (l = zkr__queue_pop(failed));) {
    zkr__op_t *op = ZKR__OP_OF(l, co_link);
    if (out_take(op)) zkr__completion_error(op, ZCONNECTIONLOSS);
  }
}

/* A coalesced sync completed (on zh's completion thread): the reads that
 * waited go now, behind one new sync, or the member has no sync in
 * flight any more.  Whatever its outcome: a failed sync means a lost
 * connection, and the reads then fail on their own (or run after a
 * reconnect, behind the new sync). */
static void co_sync_done(int rc, const char *value, const void *data) {
  (void)value;
  sync_t *t = (sync_t *)data;
  zkr__member_t *m = t->m;
  zhandle_t *zh = t->zh;
  zkr__queue_t batch = {0}, failed = {0};
  if (!zkr__latency_server_answered(rc)) atomic_store(&t->lost, 1);
  pthread_rwlock_rdlock(&m->zh_lock);
  pthread_mutex_lock(&m->co_mu);
  zkr__queue_remove(&m->co_syncs, &t->link);
  sync_put(t);
  if (m->co_zh == zh) {
    if (m->co_inflight > 0) m->co_inflight--;
    /* Only while zh is still the member's: otherwise the waiting reads go
     * with it (zkr__dispatch_complete_dropped). */
    co_send_waiting(m, zh, &batch, &failed);
  }
  pthread_mutex_unlock(&m->co_mu);
  pthread_rwlock_unlock(&m->zh_lock);
  /* A batch left in `batch` went with its zhandle (see above), as before. */
  co_fail(&failed);
}

/* A watch removal of path is about to be sent on m's zh: the reads with a
 * watch of path that wait there for a sync (co_q) were issued before it.
 * On one stock session they were sent first, so their server set their
 * watches and then the removal took them, and they completed first; sent
 * behind the removal, a read that sets a pair again would set the watch
 * again after the removal, and complete after its ZOK - a pair the
 * application holds as set, which never fires (seed 1932).  They go now,
 * the whole queue in its order, behind a sync of their own (one sync more
 * in flight than sync_coalesce_depth: a read still follows a sync sent
 * after it was invoked). */
void zkr__dispatch_send_watched_before(zkr__member_t *m, zhandle_t *zh, const char *path) {
  zkr__queue_t batch = {0}, failed = {0};
  pthread_rwlock_rdlock(&m->zh_lock);
  pthread_mutex_lock(&m->co_mu);
  int found = 0;
  if (m->co_zh == zh && m->zh == zh) {
    ZKR__QUEUE_FOREACH(l, &m->co_q) {
      const zkr__op_t *op = ZKR__OP_OF(l, co_link);
      if (op->watch && !op->watch_unbound && op->path && strcmp(op->path, path) == 0) found = 1;
    }
  }
  if (found) co_send_waiting(m, zh, &batch, &failed);
  pthread_mutex_unlock(&m->co_mu);
  pthread_rwlock_unlock(&m->zh_lock);
  co_fail(&failed);
}

/* op's zhandle was closed while it waited for a sync: off the queue. */
static void co_unqueue(zkr__op_t *op) {
  if (!op->co_waiting || op->member < 0) return;
  zkr__member_t *m = &op->z->members[op->member];
  pthread_mutex_lock(&m->co_mu);
  if (op->co_waiting) {
    zkr__queue_remove(&m->co_q, &op->co_link);
    op->co_waiting = 0;
  }
  pthread_mutex_unlock(&m->co_mu);
}

/* Under m's read lock, op listed: sends sync+op, or queues op behind the
 * sync in flight.  Returns ZOK (sent or queued) or the error. */
static int co_dispatch(zkr__op_t *op, zkr__member_t *m, zhandle_t *zh, int with_watch) {
  int rc;
  pthread_mutex_lock(&m->co_mu);
  if (m->co_zh != zh) {
    /* A new zhandle: whatever waited for the old one's sync goes with it. */
    m->co_zh = zh;
    m->co_inflight = 0;
    for (zkr__queue_link_t *l; (l = zkr__queue_pop(&m->co_q));)
      ZKR__OP_OF(l, co_link)->co_waiting = 0;
  }
  /* Reads wait only behind a full pipeline; once some wait, the next
   * completion sends them all, so a newcomer joins them. */
  if (!zkr__queue_empty(&m->co_q) || m->co_inflight >= op->z->opts.sync_coalesce_depth) {
    op->co_waiting = 1;
    zkr__queue_push(&m->co_q, &op->co_link);
    m->coalesced++;
    rc = ZOK;
  } else {
    sync_t *t = co_send_sync(m, zh, op->type == ZKR__OP_MULTI ? "/" : op->path, &rc);
    if (t) {
      m->co_inflight++;
      sync_hold(op, t);
      if ((rc = send_request(op, zh, with_watch)) != ZOK) sync_drop(op);
    }
  }
  pthread_mutex_unlock(&m->co_mu);
  return rc;
}

static int send_request(zkr__op_t *op, zhandle_t *zh, int with_watch) {
  const char *p = op->path;
  const struct ACL_vector *acl = zkr__op_has(op, ZKR__OP_F_HAS_ACL) ? &op->acl : NULL;
  watcher_fn wf = with_watch ? zkr__watch_trampoline : NULL;
  void *wc = with_watch ? op->watch : NULL;
  switch (op->type) {
  case ZKR__OP_CREATE:
    if (zkr__op_has(op, ZKR__OP_F_CREATE2))
      return zkr__zk->zoo_acreate2_ttl(zh, p, op->value, op->valuelen, acl, op->mode, op->ttl,
                                       zkr__completion_string_stat, op);
    return zkr__zk->zoo_acreate_ttl(zh, p, op->value, op->valuelen, acl, op->mode, op->ttl,
                                    zkr__completion_string, op);
  case ZKR__OP_DELETE: return zkr__zk->zoo_adelete(zh, p, op->version, zkr__completion_void, op);
  case ZKR__OP_SET:
    return zkr__zk->zoo_aset(zh, p, op->value, op->valuelen, op->version, zkr__completion_stat, op);
  case ZKR__OP_SET_ACL:
    return zkr__zk->zoo_aset_acl(zh, p, op->version, &op->acl, zkr__completion_void, op);
  case ZKR__OP_MULTI:
    return zkr__zk->zoo_amulti(zh, op->multi_count, op->multi_ops, op->multi_results,
                               zkr__completion_void, op);
  case ZKR__OP_EXISTS: return zkr__zk->zoo_awexists(zh, p, wf, wc, zkr__completion_stat, op);
  case ZKR__OP_GET: return zkr__zk->zoo_awget(zh, p, wf, wc, zkr__completion_data, op);
  case ZKR__OP_GET_CHILDREN:
    /* Sent as get_children2: the Stat lets a child watch be re-armed with
     * a comparison (zkr__watch_rearm_*); the application gets no Stat. */
    return zkr__zkapi_zoo_awget_children2(zh, p, wf, wc, zkr__completion_strings, op);
  case ZKR__OP_GET_CHILDREN2:
    return zkr__zkapi_zoo_awget_children2(zh, p, wf, wc, zkr__completion_strings_stat, op);
  case ZKR__OP_GET_ACL: return zkr__zk->zoo_aget_acl(zh, p, zkr__completion_acl, op);
  case ZKR__OP_SYNC: return zkr__zk->zoo_async(zh, p, zkr__completion_string, op);
  case ZKR__OP_RECONFIG:
    if (!zkr__zk->zoo_areconfig) return ZUNIMPLEMENTED;
    return zkr__zk->zoo_areconfig(zh, op->joining, op->leaving, op->members, op->ttl,
                                  zkr__completion_data, op);
  }
  return ZBADARGUMENTS;
}

/* Under m's read lock, op listed: sends op on zh, behind a sync (sync),
 * a coalesced one where it can.  Returns ZOK or the error. */
static int send_on(zkr__op_t *op, zkr__member_t *m, zhandle_t *zh, int with_watch, int sync) {
  if (sync && coalescable(op)) return co_dispatch(op, m, zh, with_watch);
  int rc = ZOK;
  if (sync) {
    /* The sync's own reply is not waited for: the session runs requests
     * in order, so the read after it sees everything the sync saw. */
    const char *sp = op->type == ZKR__OP_MULTI ? "/" : op->path;
    zkr_t *z = op->z;
    uint64_t epoch = z->write_epoch;
    int64_t mark = z->hwm_zxid;
    pthread_mutex_lock(&m->co_mu);
    sync_t *t = send_sync(m, zh, sp, 0, &rc);
    if (t) sync_hold(op, t);
    pthread_mutex_unlock(&m->co_mu);
    if (!t) return rc;
    if (!zkr__op_has(op, ZKR__OP_F_HEDGE)) m->syncs++;
    m->synced_epoch = epoch;
    m->synced_zh = zh;
    shown(m, zh, mark);
  }
  if ((rc = send_request(op, zh, with_watch)) != ZOK) sync_drop(op);
  return rc;
}

/* Completion's first look at a reply (zkr__completion_*), which takes
 * op's hold on its sync.  A sync that failed with its connection while
 * the read behind it was answered by a server: libzookeeper_mt took the
 * read after the connection was lost and sent it on the next one, with
 * no sync before it, so its server may have answered from behind what
 * the handle already showed (a follower catching up, just restarted).
 * The reply is not handed on: the read goes again, behind a new sync, on
 * the same zhandle.  The watch the first reply registered (a new record's)
 * is taken off the client first - locally: an event the server still
 * sends for it before the second reply is for a change that reply
 * includes, and finds no watcher; the second reply registers the watch
 * again (an event the client collected for the first registration before
 * that is dropped by the record, which the second reply arms only).
 * Returns 1 when op is in flight again, 0 when the reply stands
 * (its sync held, or a read-only member, whose reads are served as they
 * are), -1 when op must complete with ZCONNECTIONLOSS instead (its
 * zhandle was replaced meanwhile, or refused the second send). */
int zkr__dispatch_read_again(zkr__op_t *op, int rc) {
  sync_t *t = op->sync;
  op->sync_held = 0;
  if (!t) return 0;
  op->sync = NULL;
  int lost = atomic_load(&t->lost);
  sync_put(t);
  op->sync_held = !lost && zkr__latency_server_answered(rc);
  if (!lost || !zkr__latency_server_answered(rc) || op->member < 0 || !op->zh) return 0;
  zkr__member_t *m = &op->z->members[op->member];
  int with_watch = op->watch && !op->watch_unbound;
  pthread_rwlock_rdlock(&m->zh_lock);
  int same = m->zh == op->zh;
  if (same && m->state == ZOO_READONLY_STATE) {
    pthread_rwlock_unlock(&m->zh_lock);
    return 0;
  }
  /* On zh's own completion thread: zh cannot be closed under the call.  A
   * record set again (reused) was registered before this read, and stays
   * - unless its event came before this answer: the server read after the
   * change and registered a new watch, whose event for a later change,
   * before the second answer, would call the pair for a change that
   * answer shows (zkr__watch_reuse_again). */
  int registered = rc == ZOK || (op->type == ZKR__OP_EXISTS && rc == ZNONODE);
  if (with_watch && registered &&
      (!zkr__op_has(op, ZKR__OP_F_WATCH_REUSED) || zkr__watch_reuse_again(op->watch, op->zh)))
    zkr__zk->zoo_remove_watches(op->zh, op->path, ZWATCHTYPE_ANY, zkr__watch_trampoline, op->watch,
                                1);
  /* A read that set a record again, whose removal was sent on zh after
   * this read's first request: sent again, it would be read after the
   * removal and complete after the call, setting the pair again where
   * stock answered it first and the removal took the pair (the record
   * still armed, or fired before this answer: its new registration is
   * off the client now).  It fails as a read caught by the connection's
   * loss does instead (the record stays for the removal to take). */
  if (same && with_watch && zkr__op_has(op, ZKR__OP_F_WATCH_REUSED) &&
      zkr__watch_removal_on(op->watch, op->zh)) {
    pthread_rwlock_unlock(&m->zh_lock);
    return -1;
  }
  int sent = same && send_on(op, m, op->zh, with_watch, 1) == ZOK;
  if (sent) m->reads_again++;
  pthread_rwlock_unlock(&m->zh_lock);
  if (sent) return 1;
  /* It fails: an event zh collected for the first registration before it
   * was taken off may still call the record, which must outlive zh. */
  if (with_watch && registered && !zkr__op_has(op, ZKR__OP_F_WATCH_REUSED)) {
    zkr__watch_abandon(op->watch, op->member, op->zh);
    op->watch = NULL;
  }
  return -1;
}

/* Hands op to member m.  Returns ZOK (the completion will run) or the
 * error zoo_a* returned (it will not; op still belongs to the caller and is
 * on no list). */
int zkr__dispatch(zkr__op_t *op, zkr__member_t *m) {
  int rc;
  /* Read before sending: once ZooKeeper has op, its completion may run on
   * another thread and free it before send_request even returns - op->z
   * included (it_history under ASan: a read's completion freed it before
   * a field was set through it). */
  zkr_t *z = op->z;
  int is_write = zkr__op_has(op, ZKR__OP_F_WRITE);
  int is_read = !is_write && op->type != ZKR__OP_SYNC && !zkr__op_has(op, ZKR__OP_F_PROBE) &&
                !zkr__op_has(op, ZKR__OP_F_HEDGE);
  int is_hedge = zkr__op_has(op, ZKR__OP_F_HEDGE);
  /* A hedgeable read is held by its reply and by its entry in the hedge
   * queue (zkr__hedger_*): its completion cannot free it while it is queued. */
  int hedged = op->hedge_ok && z->hedger;
  if (hedged) {
    op->h_armed = 1;
    op->h_refs = 2;
    op->h_attempts = 1;
  }
  pthread_rwlock_rdlock(&m->zh_lock);
  zhandle_t *zh = m->zh;
  if (!zh) {
    rc = ZINVALIDSTATE;
  } else {
    op->member = m->index;
    op->start_ns = zkr__now_ns();
    op->zh = zh;
    /* A watch set again by a pinned read registers on the session that
     * holds it; if that session was replaced meanwhile, the record is
     * being re-armed elsewhere and this read only reads. */
    int with_watch = op->watch && (!zkr__op_has(op, ZKR__OP_F_WATCH_REUSED) ||
                                   zkr__watch_reuse_bound(op->watch, zh));
    op->watch_unbound = op->watch && !with_watch;
    /* Listed before ZooKeeper has it: its completion may run at once. */
    out_add(op);
    rc = ZOK;
    /* A read-only server refuses sync (it has no leader): its reads are
     * served as they are, as stock serves them. */
    int sync = needs_sync(op, m, zh) && m->state != ZOO_READONLY_STATE;
    rc = send_on(op, m, zh, with_watch, sync);
    /* Unlisted while zh cannot be closed (the read lock is held), so a
     * refused request is never also completed as dropped. */
    if (rc != ZOK) zkr__dispatch_out_remove(op);
  }
  pthread_rwlock_unlock(&m->zh_lock);
  if (rc == ZOK) {
    if (is_write) m->writes++;
    else if (is_read) m->reads++;
    else if (is_hedge) m->hedges++;
    if (hedged) zkr__hedger_sent(op);
  } else {
    op->member = -1;
    op->zh = NULL;
    m->errors++;
    op->h_armed = op->h_refs = op->h_attempts = 0;
  }
  return rc;
}

/* Sends a health probe, a sync+exists of "/" on m's own session; its
 * completion goes to zkr__pool_probe_result.  Returns ZOK or the error. */
int zkr__dispatch_probe(zkr__member_t *m) {
  zkr__op_t *op = zkr__op_new(m->z, ZKR__OP_EXISTS, "/");
  if (!op) return ZKR_ENOMEM;
  zkr__op_set(op, ZKR__OP_F_PROBE, 1);
  int rc = zkr__dispatch(op, m);
  if (rc != ZOK) zkr__op_free(op);
  return rc;
}
