/* An operation's life after routing: it owns copies of its arguments (so a
 * write deferred by the write gate needs nothing from the caller), hands the
 * request to one member's zhandle_t (a read preceded by a pipelined sync),
 * and receives the reply in a completion trampoline that measures latency,
 * feeds health, releases the in-flight path and the write gate, and calls
 * the application's completion exactly once. */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

_Thread_local int zkr__in_callback;

/* ---- argument copies ---- */

zkr__op_t *zkr__op_new(zkr_t *z, zkr__op_type_t type, const char *path) {
  zkr__op_t *op = calloc(1, sizeof *op);
  if (!op) return NULL;
  op->z = z;
  op->type = type;
  op->member = -1;
  op->pin = -1;
  if (path && !(op->path = strdup(path))) {
    free(op);
    return NULL;
  }
  return op;
}

static void free_acl(struct ACL_vector *v) {
  for (int i = 0; i < v->count; i++) {
    free(v->data[i].id.scheme);
    free(v->data[i].id.id);
  }
  free(v->data);
  v->data = NULL;
  v->count = 0;
}

static int copy_acl(struct ACL_vector *dst, const struct ACL_vector *src) {
  dst->count = 0;
  dst->data = NULL;
  if (src->count < 0 || (src->count > 0 && !src->data)) return ZINVALIDACL;
  if (src->count == 0) return ZOK;
  dst->data = calloc((size_t)src->count, sizeof *dst->data);
  if (!dst->data) return ZKR_ENOMEM;
  for (int i = 0; i < src->count; i++) {
    const struct ACL *a = &src->data[i];
    dst->count = i + 1;
    dst->data[i].perms = a->perms;
    if (!a->id.scheme || !a->id.id) return ZINVALIDACL;
    dst->data[i].id.scheme = strdup(a->id.scheme);
    dst->data[i].id.id = strdup(a->id.id);
    if (!dst->data[i].id.scheme || !dst->data[i].id.id) return ZKR_ENOMEM;
  }
  return ZOK;
}

int zkr__op_copy_acl(zkr__op_t *op, const struct ACL_vector *acl) {
  op->has_acl = acl != NULL;
  return acl ? copy_acl(&op->acl, acl) : ZOK;
}

static char *dup_bytes(const char *p, int len) {
  char *d = malloc(len > 0 ? (size_t)len : 1);
  if (d && len > 0) memcpy(d, p, (size_t)len);
  return d;
}

/* Deep-copies the request part of a multi.  Output pointers (create's path
 * buffer, set's Stat) stay the caller's, as with zoo_amulti. */
int zkr__op_copy_multi(zkr__op_t *op, int count, const zoo_op_t *ops) {
  op->multi_ops = calloc((size_t)(count > 0 ? count : 1), sizeof *op->multi_ops);
  if (!op->multi_ops) return ZKR_ENOMEM;
  op->multi_count = count;
  for (int i = 0; i < count; i++) {
    zoo_op_t *d = &op->multi_ops[i];
    const zoo_op_t *s = &ops[i];
    d->type = s->type;
    const char *path = NULL;
    switch (s->type) {
    case ZOO_CREATE_OP:
      d->create_op = s->create_op;
      d->create_op.path = path = s->create_op.path ? strdup(s->create_op.path) : NULL;
      d->create_op.data = NULL;
      if (s->create_op.data && s->create_op.datalen >= 0 &&
          !(d->create_op.data = dup_bytes(s->create_op.data, s->create_op.datalen)))
        return ZKR_ENOMEM;
      if (s->create_op.acl) {
        struct ACL_vector *a = calloc(1, sizeof *a);
        d->create_op.acl = a;
        if (!a) return ZKR_ENOMEM;
        int rc = copy_acl(a, s->create_op.acl);
        if (rc != ZOK) return rc;
      }
      break;
    case ZOO_DELETE_OP:
      d->delete_op = s->delete_op;
      d->delete_op.path = path = s->delete_op.path ? strdup(s->delete_op.path) : NULL;
      break;
    case ZOO_SETDATA_OP:
      d->set_op = s->set_op;
      d->set_op.path = path = s->set_op.path ? strdup(s->set_op.path) : NULL;
      d->set_op.data = NULL;
      if (s->set_op.data && s->set_op.datalen >= 0 &&
          !(d->set_op.data = dup_bytes(s->set_op.data, s->set_op.datalen)))
        return ZKR_ENOMEM;
      break;
    case ZOO_CHECK_OP:
      d->check_op = s->check_op;
      d->check_op.path = path = s->check_op.path ? strdup(s->check_op.path) : NULL;
      break;
    default:
      return ZBADARGUMENTS;
    }
    if (!path) return ZBADARGUMENTS; /* NULL path, or strdup failed */
  }
  return ZOK;
}

static void free_multi(zkr__op_t *op) {
  for (int i = 0; i < op->multi_count; i++) {
    zoo_op_t *d = &op->multi_ops[i];
    switch (d->type) {
    case ZOO_CREATE_OP:
      free((char *)d->create_op.path);
      free((char *)d->create_op.data);
      if (d->create_op.acl) {
        free_acl((struct ACL_vector *)d->create_op.acl);
        free((struct ACL_vector *)d->create_op.acl);
      }
      break;
    case ZOO_DELETE_OP: free((char *)d->delete_op.path); break;
    case ZOO_SETDATA_OP:
      free((char *)d->set_op.path);
      free((char *)d->set_op.data);
      break;
    case ZOO_CHECK_OP: free((char *)d->check_op.path); break;
    }
  }
  free(op->multi_ops);
}

void zkr__op_free(zkr__op_t *op) {
  if (!op) return;
  if (op->watch && !op->watch_reused) zkr__watch_discard(op->watch);
  else if (op->watch) zkr__watch_reuse_done(op->watch, 0, -1, NULL);
  for (int i = 0; i < op->n_inflight; i++) free(op->inflight[i]);
  free(op->inflight);
  free(op->path);
  free(op->value);
  if (op->has_acl) free_acl(&op->acl);
  if (op->multi_ops) free_multi(op);
  free(op);
}

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

static void out_remove(zkr__op_t *op) {
  zkr_t *z = op->z;
  pthread_mutex_lock(&z->out_mu);
  if (op->outstanding) {
    if (op->out_prev) op->out_prev->out_next = op->out_next;
    else z->out_list = op->out_next;
    if (op->out_next) op->out_next->out_prev = op->out_prev;
    op->outstanding = 0;
    z->members[op->member].outstanding--;
    z->members[op->member].progress_ns = zkr__now_ns();
  }
  pthread_mutex_unlock(&z->out_mu);
}

/* After every member session was closed no ZooKeeper completion can run
 * any more; the operations still listed were dropped by zookeeper_close and
 * get their one completion here. */
void zkr__op_complete_abandoned(zkr_t *z) { zkr__op_complete_dropped(z, NULL); }

/* After zookeeper_close(zh) returned, no completion of zh can come: the
 * operations still listed as sent on zh (all of them when zh is NULL) were
 * dropped (ZOOKEEPER-2894/3868) and get their one completion here:
 * ZCLOSING when the handle is closing, else ZCONNECTIONLOSS (a member's
 * session was replaced: outcome unknown). */
void zkr__op_complete_dropped(zkr_t *z, zhandle_t *zh) {
  zkr__op_t *list = NULL;
  pthread_mutex_lock(&z->out_mu);
  for (zkr__op_t *op = z->out_list, *n; op; op = n) {
    n = op->out_next;
    if (zh && op->zh != zh) continue;
    if (op->out_prev) op->out_prev->out_next = op->out_next;
    else z->out_list = op->out_next;
    if (op->out_next) op->out_next->out_prev = op->out_prev;
    op->outstanding = 0;
    z->members[op->member].outstanding--;
    op->out_next = list;
    list = op;
  }
  pthread_mutex_unlock(&z->out_mu);
  while (list) {
    zkr__op_t *n = list->out_next;
    zkr__op_complete_error(list, z->closing ? ZCLOSING : ZCONNECTIONLOSS);
    list = n;
  }
}

/* ---- completion ---- */

/* Replies that came from a server (as opposed to the client library giving
 * up): they measure the member's latency. */
int zkr__op_server_answered(int rc) {
  return rc == ZOK || rc == ZNONODE || rc == ZNOAUTH || rc == ZBADVERSION ||
         rc == ZNODEEXISTS || rc == ZNOTEMPTY || rc == ZNOCHILDRENFOREPHEMERALS;
}

static int connection_trouble(int rc) {
  return rc == ZCONNECTIONLOSS || rc == ZOPERATIONTIMEOUT ||
         rc == ZSESSIONEXPIRED || rc == ZSESSIONMOVED;
}

/* Everything but the application's callback: runs first, so that a read
 * the callback issues sees the in-flight set and the gate already updated. */
static int op_finish(zkr__op_t *op, int rc, const struct Stat *stat) {
  zkr_t *z = op->z;
  out_remove(op);
  /* ZCLOSING from a member handle that was replaced while the handle
   * itself stays open: for the application the outcome is unknown. */
  if (rc == ZCLOSING && !z->closing) rc = ZCONNECTIONLOSS;
  if (op->member >= 0) {
    zkr__member_t *m = &z->members[op->member];
    uint64_t now = zkr__now_ns();
    double ms = (double)(now - op->start_ns) / 1e6;
    if (op->probe)
      zkr__pool_probe_result(m, now, ms, rc == ZOK || rc == ZNONODE);
    else if (!op->is_write && op->type != ZKR__OP_SYNC && zkr__op_server_answered(rc))
      zkr__member_sample(m, now, ms);
    /* The hedge delay follows the first requests of hedgeable reads, per
     * member: what a read costs without a hedge. */
    if (op->h_armed && zkr__op_server_answered(rc)) zkr__hedger_sample(z, op->member, ms);
    if (rc != ZOK && !zkr__op_server_answered(rc) && rc != ZCLOSING) m->errors++;
    if (connection_trouble(rc) && op->is_write) zkr__monitor_kick(z);
    int armed = rc == ZOK || (op->type == ZKR__OP_EXISTS && rc == ZNONODE);
    if (op->watch && op->watch_reused) {
      /* It was armed before: the same registration, or a new one if it
       * fired meanwhile. */
      zkr__watch_reuse_done(op->watch, armed, op->member, rc == ZOK ? stat : NULL);
      op->watch = NULL;
    } else if (op->watch) {
      if (armed) zkr__watch_armed(op->watch, op->member, rc == ZOK ? stat : NULL);
      else zkr__watch_discard(op->watch);
      op->watch = NULL;
    }
    if (rc == ZOK && op->type == ZKR__OP_CREATE && (op->mode & ZOO_EPHEMERAL))
      m->ephemerals++;
  } else if (op->watch) {
    if (!op->watch_reused) zkr__watch_discard(op->watch);
    else zkr__watch_reuse_done(op->watch, 0, -1, NULL);
    op->watch = NULL;
  }
  for (int i = 0; i < op->n_inflight; i++)
    zkr__inflight_remove(z->inflight, op->inflight[i]);
  return rc;
}

/* After the application's callback: the write gate is released only now,
 * so that writes it lets go to a new session cannot complete before this
 * one's callback ran (completions stay in issue order). */
static void op_release(zkr__op_t *op) {
  if (op->is_hedge || op->h_armed) {
    zkr__hedger_release(op); /* never gated */
    return;
  }
  if (op->gated && op->member >= 0) zkr__gate_done(op->z);
  zkr__op_free(op);
}

#define CALL_USER(expr)        \
  do {                         \
    zkr__callback_enter(op->z); \
    expr;                      \
    zkr__callback_leave(op->z); \
  } while (0)

/* The start of every completion: `a` is the request that completed, op
 * the operation whose application completion this reply runs, or NULL when
 * the reply is discarded (the other request of a hedged read won; see
 * hedger.c).  Replies are passed to the application straight from
 * ZooKeeper's buffers, during the completion, as for an unhedged read: the
 * loser's buffers are never looked at, and ZooKeeper frees both. */
#define CLAIM(stat_)                                  \
  zkr__op_t *a = (zkr__op_t *)data;                   \
  rc = op_finish(a, rc, (stat_));                     \
  zkr__op_t *op = zkr__hedger_claim(a, rc)

static void done_void(int rc, const void *data) {
  CLAIM(NULL);
  if (op && op->cb.v) CALL_USER(op->cb.v(rc, op->data));
  op_release(a);
}

static void done_stat(int rc, const struct Stat *stat, const void *data) {
  CLAIM(stat);
  if (op && op->cb.stat) CALL_USER(op->cb.stat(rc, rc == ZOK ? stat : NULL, op->data));
  op_release(a);
}

static void done_data(int rc, const char *value, int value_len,
                      const struct Stat *stat, const void *data) {
  CLAIM(stat);
  if (op && op->cb.data)
    CALL_USER(op->cb.data(rc, value, value_len, rc == ZOK ? stat : NULL, op->data));
  op_release(a);
}

/* get_children is sent as get_children2: the Stat lets a child watch be
 * re-armed with a comparison (watch.c); the application gets no Stat. */
static void done_strings(int rc, const struct String_vector *strings,
                         const struct Stat *stat, const void *data) {
  CLAIM(stat);
  if (op && op->cb.strings) CALL_USER(op->cb.strings(rc, strings, op->data));
  op_release(a);
}

static void done_strings_stat(int rc, const struct String_vector *strings,
                              const struct Stat *stat, const void *data) {
  CLAIM(stat);
  if (op && op->cb.strings_stat)
    CALL_USER(op->cb.strings_stat(rc, strings, rc == ZOK ? stat : NULL, op->data));
  op_release(a);
}

static void done_string(int rc, const char *value, const void *data) {
  CLAIM(NULL);
  if (op && op->cb.string) CALL_USER(op->cb.string(rc, value, op->data));
  op_release(a);
}

static void done_string_stat(int rc, const char *value,
                             const struct Stat *stat, const void *data) {
  CLAIM(stat);
  if (op && op->cb.string_stat)
    CALL_USER(op->cb.string_stat(rc, value, rc == ZOK ? stat : NULL, op->data));
  op_release(a);
}

static void done_acl(int rc, struct ACL_vector *acl, struct Stat *stat,
                     const void *data) {
  CLAIM(stat);
  if (op && op->cb.acl) CALL_USER(op->cb.acl(rc, acl, rc == ZOK ? stat : NULL, op->data));
  op_release(a);
}

/* Completes an operation that was accepted (the caller got ZOK) but can no
 * longer be sent: the application still gets its one completion. */
void zkr__op_complete_error(zkr__op_t *op, int rc) {
  switch (op->type) {
  case ZKR__OP_CREATE:
    if (op->create2) done_string_stat(rc, NULL, NULL, op);
    else done_string(rc, NULL, op);
    break;
  case ZKR__OP_DELETE:
  case ZKR__OP_SET_ACL:
  case ZKR__OP_MULTI: done_void(rc, op); break;
  case ZKR__OP_SET:
  case ZKR__OP_EXISTS: done_stat(rc, NULL, op); break;
  case ZKR__OP_GET: done_data(rc, NULL, -1, NULL, op); break;
  case ZKR__OP_GET_CHILDREN: done_strings(rc, NULL, NULL, op); break;
  case ZKR__OP_GET_CHILDREN2: done_strings_stat(rc, NULL, NULL, op); break;
  case ZKR__OP_GET_ACL: done_acl(rc, NULL, NULL, op); break;
  case ZKR__OP_SYNC: done_string(rc, NULL, op); break;
  }
}

/* Runs the application's completion of a read with rc and no result,
 * nothing else: for a hedged read whose held-back error became its outcome
 * (hedger.c) after both requests' own bookkeeping was done. */
void zkr__op_call_user_error(zkr__op_t *op, int rc) {
  switch (op->type) {
  case ZKR__OP_EXISTS:
    if (op->cb.stat) CALL_USER(op->cb.stat(rc, NULL, op->data));
    break;
  case ZKR__OP_GET:
    if (op->cb.data) CALL_USER(op->cb.data(rc, NULL, -1, NULL, op->data));
    break;
  case ZKR__OP_GET_CHILDREN:
    if (op->cb.strings) CALL_USER(op->cb.strings(rc, NULL, op->data));
    break;
  case ZKR__OP_GET_CHILDREN2:
    if (op->cb.strings_stat) CALL_USER(op->cb.strings_stat(rc, NULL, NULL, op->data));
    break;
  case ZKR__OP_GET_ACL:
    if (op->cb.acl) CALL_USER(op->cb.acl(rc, NULL, NULL, op->data));
    break;
  default: break; /* never hedged */
  }
}

/* ---- dispatch ---- */

static void pre_sync_done(int rc, const char *value, const void *data) {
  (void)rc;
  (void)value;
  (void)data;
}

static int needs_sync(const zkr__op_t *op) {
  if (op->probe) return 1;
  return !op->is_write && !op->ordered && op->type != ZKR__OP_SYNC &&
         op->z->opts.consistency == ZKR_CONSISTENCY_LINEARIZABLE;
}

static int send_request(zkr__op_t *op, zhandle_t *zh) {
  const char *p = op->path;
  const struct ACL_vector *acl = op->has_acl ? &op->acl : NULL;
  watcher_fn wf = op->watch ? zkr__watch_trampoline : NULL;
  void *wc = op->watch;
  switch (op->type) {
  case ZKR__OP_CREATE:
    if (op->create2)
      return zkr__zk->acreate2_ttl(zh, p, op->value, op->valuelen, acl, op->mode,
                              op->ttl, done_string_stat, op);
    return zkr__zk->acreate_ttl(zh, p, op->value, op->valuelen, acl, op->mode,
                           op->ttl, done_string, op);
  case ZKR__OP_DELETE: return zkr__zk->adelete(zh, p, op->version, done_void, op);
  case ZKR__OP_SET:
    return zkr__zk->aset(zh, p, op->value, op->valuelen, op->version, done_stat, op);
  case ZKR__OP_SET_ACL:
    return zkr__zk->aset_acl(zh, p, op->version, &op->acl, done_void, op);
  case ZKR__OP_MULTI:
    return zkr__zk->amulti(zh, op->multi_count, op->multi_ops, op->multi_results,
                      done_void, op);
  case ZKR__OP_EXISTS: return zkr__zk->awexists(zh, p, wf, wc, done_stat, op);
  case ZKR__OP_GET: return zkr__zk->awget(zh, p, wf, wc, done_data, op);
  case ZKR__OP_GET_CHILDREN:
    return zkr__zk->awget_children2(zh, p, wf, wc, done_strings, op);
  case ZKR__OP_GET_CHILDREN2:
    return zkr__zk->awget_children2(zh, p, wf, wc, done_strings_stat, op);
  case ZKR__OP_GET_ACL: return zkr__zk->aget_acl(zh, p, done_acl, op);
  case ZKR__OP_SYNC: return zkr__zk->async(zh, p, done_string, op);
  }
  return ZBADARGUMENTS;
}

/* Hands op to member m.  Returns ZOK (the completion will run) or the
 * error zoo_a* returned (it will not; op still belongs to the caller). */
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
    /* Listed before ZooKeeper has it: its completion may run at once. */
    out_add(op);
    rc = ZOK;
    if (needs_sync(op)) {
      /* The sync's own reply is not waited for: the session runs requests
       * in order, so the read after it sees everything the sync saw. */
      const char *sp = op->type == ZKR__OP_MULTI ? "/" : op->path;
      rc = zkr__zk->async(zh, sp, pre_sync_done, NULL);
      if (rc == ZOK && !is_hedge) m->syncs++;
    }
    if (rc == ZOK) rc = send_request(op, zh);
  }
  pthread_rwlock_unlock(&m->zh_lock);
  if (rc == ZOK) {
    if (is_write) m->writes++;
    else if (is_read) m->reads++;
    else if (is_hedge) m->hedges++;
    if (hedged) zkr__hedger_sent(op);
  } else {
    if (zh) out_remove(op);
    op->member = -1;
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
