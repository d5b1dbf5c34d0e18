/* Dispatch: hands one operation to one member session's zhandle_t.  A read
 * that must be linearizable is preceded by a pipelined sync on the same
 * session (ZooKeeper runs a session's requests in order, so the read sees
 * everything the sync saw, for one client round trip).  Every operation
 * handed over is on the outstanding list until its completion runs, so a
 * zhandle closed under it (a replaced session, or the handle's close) still
 * gives each one exactly one completion. */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* ---- the outstanding list ---- */

static void out_add(zkr__op_t *op) {
  zkr_t *z = op->z;
  pthread_mutex_lock(&z->out_mu);
  op->out_prev = NULL;
  op->out_next = z->out_list;
  if (op->out_next) op->out_next->out_prev = op;
  z->out_list = op;
  op->outstanding = 1;
  zkr__member_t *m = &z->members[op->member];
  if (m->outstanding++ == 0) m->progress_ns = zkr__now_ns();
  pthread_mutex_unlock(&z->out_mu);
}

static void unlink_locked(zkr_t *z, zkr__op_t *op) {
  if (op->out_prev) op->out_prev->out_next = op->out_next;
  else z->out_list = op->out_next;
  if (op->out_next) op->out_next->out_prev = op->out_prev;
  op->outstanding = 0;
  z->members[op->member].outstanding--;
  z->members[op->member].progress_ns = zkr__now_ns();
}

void zkr__out_remove(zkr__op_t *op) {
  zkr_t *z = op->z;
  pthread_mutex_lock(&z->out_mu);
  if (op->outstanding) unlink_locked(z, op);
  pthread_mutex_unlock(&z->out_mu);
}

/* After every member session was closed no ZooKeeper completion can run
 * any more; the operations still listed were dropped by zookeeper_close and
 * get their one completion here. */
void zkr__op_complete_abandoned(zkr_t *z) { zkr__op_complete_dropped(z, NULL); }

/* After zookeeper_close(zh) returned, no completion of zh can come: the
 * operations still listed as sent on zh (all of them when zh is NULL) were
 * dropped (ZOOKEEPER-2894/3868) and get their one completion here, as
 * ZCLOSING, which completion.c turns into what the application must see
 * (ZCLOSING only when the handle itself closes). */
void zkr__op_complete_dropped(zkr_t *z, zhandle_t *zh) {
  zkr__op_t *list = NULL;
  pthread_mutex_lock(&z->out_mu);
  for (zkr__op_t *op = z->out_list, *n; op; op = n) {
    n = op->out_next;
    if (zh && op->zh != zh) continue;
    unlink_locked(z, op);
    op->out_next = list;
    list = op;
  }
  pthread_mutex_unlock(&z->out_mu);
  while (list) {
    zkr__op_t *n = list->out_next;
    zkr__op_complete_error(list, ZCLOSING);
    list = n;
  }
}

/* ---- sending ---- */

static void pre_sync_done(int rc, const char *value, const void *data) {
  (void)rc;
  (void)value;
  (void)data;
}

/* Linearizable reads, probes, and ordered reads sent on another session
 * than the writes they follow (router.c) are synced first.  A watch
 * re-armed after its session was lost is synced too, by watch_rearm.c. */
static int needs_sync(const zkr__op_t *op) {
  if (op->probe || op->resync) return 1;
  return !op->is_write && !op->ordered && op->type != ZKR__OP_SYNC &&
         op->z->opts.consistency == ZKR_CONSISTENCY_LINEARIZABLE;
}

static int send_request(zkr__op_t *op, zhandle_t *zh, int with_watch) {
  const char *p = op->path;
  const struct ACL_vector *acl = op->has_acl ? &op->acl : NULL;
  watcher_fn wf = with_watch ? zkr__watch_trampoline : NULL;
  void *wc = with_watch ? op->watch : NULL;
  switch (op->type) {
  case ZKR__OP_CREATE:
    if (op->create2)
      return zkr__zk->acreate2_ttl(zh, p, op->value, op->valuelen, acl, op->mode,
                                   op->ttl, zkr__op_done_string_stat, op);
    return zkr__zk->acreate_ttl(zh, p, op->value, op->valuelen, acl, op->mode,
                                op->ttl, zkr__op_done_string, op);
  case ZKR__OP_DELETE: return zkr__zk->adelete(zh, p, op->version, zkr__op_done_void, op);
  case ZKR__OP_SET:
    return zkr__zk->aset(zh, p, op->value, op->valuelen, op->version, zkr__op_done_stat, op);
  case ZKR__OP_SET_ACL:
    return zkr__zk->aset_acl(zh, p, op->version, &op->acl, zkr__op_done_void, op);
  case ZKR__OP_MULTI:
    return zkr__zk->amulti(zh, op->multi_count, op->multi_ops, op->multi_results,
                           zkr__op_done_void, op);
  case ZKR__OP_EXISTS: return zkr__zk->awexists(zh, p, wf, wc, zkr__op_done_stat, op);
  case ZKR__OP_GET: return zkr__zk->awget(zh, p, wf, wc, zkr__op_done_data, op);
  case ZKR__OP_GET_CHILDREN:
    /* Sent as get_children2: the Stat lets a child watch be re-armed with
     * a comparison (watch_rearm.c); the application gets no Stat. */
    return zkr__zk->awget_children2(zh, p, wf, wc, zkr__op_done_strings, op);
  case ZKR__OP_GET_CHILDREN2:
    return zkr__zk->awget_children2(zh, p, wf, wc, zkr__op_done_strings_stat, op);
  case ZKR__OP_GET_ACL: return zkr__zk->aget_acl(zh, p, zkr__op_done_acl, op);
  case ZKR__OP_SYNC: return zkr__zk->async(zh, p, zkr__op_done_string, op);
  case ZKR__OP_RECONFIG:
    if (!zkr__zk->areconfig) return ZUNIMPLEMENTED;
    return zkr__zk->areconfig(zh, op->joining, op->leaving, op->members, op->ttl,
                              zkr__op_done_data, op);
  }
  return ZBADARGUMENTS;
}

/* Hands op to member m.  Returns ZOK (the completion will run) or the
 * error zoo_a* returned (it will not; op still belongs to the caller and is
 * on no list). */
int zkr__op_dispatch(zkr__op_t *op, zkr__member_t *m) {
  int rc;
  /* Read before sending: once ZooKeeper has op, its completion may run on
   * another thread and free it before send_request even returns. */
  int is_write = op->is_write;
  int is_read = !is_write && op->type != ZKR__OP_SYNC && !op->probe && !op->is_hedge;
  int is_hedge = op->is_hedge;
  /* A hedgeable read is held by its reply and by its entry in the hedge
   * queue (hedger.c): its completion cannot free it while it is queued. */
  int hedged = op->hedge_ok && op->z->hedger;
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
    int with_watch = op->watch && (!op->watch_reused || zkr__watch_reuse_bound(op->watch, zh));
    op->watch_unbound = op->watch && !with_watch;
    /* Listed before ZooKeeper has it: its completion may run at once. */
    out_add(op);
    rc = ZOK;
    /* A read-only server refuses sync (it has no leader): its reads are
     * served as they are, as stock serves them. */
    if (needs_sync(op) && m->state != ZOO_READONLY_STATE) {
      /* The sync's own reply is not waited for: the session runs requests
       * in order, so the read after it sees everything the sync saw. */
      const char *sp = op->type == ZKR__OP_MULTI ? "/" : op->path;
      rc = zkr__zk->async(zh, sp, pre_sync_done, NULL);
      if (rc == ZOK && !is_hedge) m->syncs++;
    }
    if (rc == ZOK) rc = send_request(op, zh, with_watch);
    /* Unlisted while zh cannot be closed (the read lock is held), so a
     * refused request is never also completed as dropped. */
    if (rc != ZOK) zkr__out_remove(op);
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
int zkr__probe(zkr__member_t *m) {
  zkr__op_t *op = zkr__op_new(m->z, ZKR__OP_EXISTS, "/");
  if (!op) return ZKR_ENOMEM;
  op->probe = 1;
  int rc = zkr__op_dispatch(op, m);
  if (rc != ZOK) zkr__op_free(op);
  return rc;
}
